#pragma once
// Private helpers of the QCustomPlot views (Gantt, breakdown, memory, heatmap and the panels
// built like them): theming a plot and exporting it. Number formats, themes and file checks
// live in view_export.h, shared with the painted views; the names below are kept for the
// chart code that spells them this way.

#include "common/view_export.h"

#include <QColor>
#include <QFont>
#include <QString>

class QCustomPlot;

namespace moe::widgets::charts {

using ChartTheme = detail::ViewTheme;
using detail::checkWritten;
using detail::formatBytes;
/// "17.2 s", "641 ms", "40.9 ms", "4.03 ms", "12.0 µs": three significant digits.
inline QString formatDuration(double seconds) {
    return detail::formatSeconds(seconds);
}

/// Breaks `text` into lines no wider than `width` pixels at `font` (existing newlines kept).
QString wrapToWidth(const QString& text, const QFont& font, int width);

/// Colours a QCustomPlot's background, axes, grid, legend and text elements.
void applyTheme(QCustomPlot* plot, const ChartTheme& theme);

/// Writes `plot` at width x height to `path` (format from the suffix: .svg and .pdf vector,
/// .png raster at twice the size, sharp on projectors). Returns an empty string or the reason.
QString exportPlot(QCustomPlot* plot, const QString& path, int width, int height,
                   const QString& title);

} // namespace moe::widgets::charts
