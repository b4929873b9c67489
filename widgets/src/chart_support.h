#pragma once
// Private helpers of the Gantt, breakdown and memory charts: number formatting with units, the
// light/dark chart theme, and export of a QCustomPlot to SVG / PNG / PDF.

#include <QColor>
#include <QFont>
#include <QPalette>
#include <QString>

class QCustomPlot;
class QPainter;

namespace moe::widgets::charts {

/// "17.2 s", "641 ms", "40.9 ms", "4.03 ms", "12.0 µs": three significant digits.
QString formatDuration(double seconds);
/// "72.1 GB", "705 MB".
QString formatBytes(double bytes);

struct ChartTheme {
    QColor background;
    QColor text;
    QColor muted;  ///< secondary text, tick labels
    QColor grid;   ///< grid lines
    QColor lane;   ///< alternating row shading
    QColor accent; ///< selection / highlight
    QColor critical;
    QColor danger; ///< over budget
    bool dark = false;

    static ChartTheme light();
    static ChartTheme dark_theme();
    /// Dark when the palette's window is dark.
    static ChartTheme fromPalette(const QPalette& palette);
};

/// Breaks `text` into lines no wider than `width` pixels at `font` (existing newlines kept).
QString wrapToWidth(const QString& text, const QFont& font, int width);

/// Black or white, whichever reads better on `background`.
QColor textOn(const QColor& background);

/// Colours a QCustomPlot's background, axes, grid, legend and text elements.
void applyTheme(QCustomPlot* plot, const ChartTheme& theme);

/// Writes `plot` at width x height to `path` (format from the suffix: .svg vector, .pdf vector,
/// .png raster). Returns an empty string or the reason.
QString exportPlot(QCustomPlot* plot, const QString& path, int width, int height,
                   const QString& title);

/// Checks the written file exists and is not empty; returns an empty string or the reason.
QString checkWritten(const QString& path);

} // namespace moe::widgets::charts
