#pragma once
// The one place for what every view shares: writing a page to SVG, PNG or PDF (format from the
// suffix), the colours that are not data (light and dark), and the number formats of labels and
// tooltips. chart_support.h adds what only the QCustomPlot views need.

#include <QColor>
#include <QIODevice>
#include <QPalette>
#include <QRectF>
#include <QSizeF>
#include <QString>

#include <functional>

class QPainter;

namespace moe::widgets::detail {

enum class ExportFormat { svg, png, pdf, unknown };
ExportFormat exportFormatOf(const QString& path);
/// PNG "quality" for QImageWriter: Qt maps it to zlib level (100 - q) * 9 / 91, so 80 is level
/// 1 (default: 6). zlib dominated exporting 2x slides; at level 1 the eight default views took
/// 1.8 s instead of 2.5 s for files a quarter larger. PNG stays lossless either way.
constexpr int kPngQuality = 80;
/// Checks the written file exists and is not empty; returns an empty string or the reason.
QString checkWritten(const QString& path);

/// Writes `path` atomically (QSaveFile: a temporary file beside it, renamed over it only when
/// every step succeeded, so a full disk or a failed render leaves the old file intact).
/// `produce(device)` renders into the open device and returns "" or the reason it failed; a
/// failed write to the device, an empty result or a failed commit are reported too, with the
/// system's reason. Returns "" or the reason.
QString saveAtomically(const QString& path, const std::function<QString(QIODevice&)>& produce);

/// Text for an SVG/XML <title> or attribute (QSvgGenerator writes its title verbatim).
QString xmlText(const QString& text);

/// Paints `paint(painter, page)` onto a `page_size` page (logical pixels) and writes it to
/// `path`: SVG and PDF stay vector, PNG is rendered at twice the size so slides stay sharp.
/// Returns an empty string or the reason.
QString exportPage(const QString& path, const QSizeF& page_size, const QString& title,
                   const std::function<void(QPainter&, const QRectF&)>& paint);

/// True when the palette's base colour is dark (a dark desktop theme).
bool isDark(const QPalette& palette);

/// Colours that are not data: frames, text, grid, switches. Views pick one per palette.
struct ViewTheme {
    bool dark = false;
    QColor background, text, muted, pod_fill, pod_border, rack_fill, rack_border, node_fill,
        node_border, switch_fill, switch_text, idle_link, highlight, no_data;
    QColor grid;     ///< chart grid lines
    QColor lane;     ///< alternating row shading
    QColor accent;   ///< selection
    QColor critical; ///< the critical path (magenta: no data series uses it)
    QColor danger;   ///< over budget

    static ViewTheme light();
    static ViewTheme dark_theme();
    /// Dark when the palette is (isDark).
    static ViewTheme fromPalette(const QPalette& palette);
};
ViewTheme viewTheme(bool dark);

/// Three significant digits with a unit, no exponent: "72.1 GB", "705 MB", "12.0 kB".
QString formatBytes(double bytes);
QString formatCount(double value); ///< "1,234" (exact integer part) or "12.5"
/// Short rates and counts for tight spaces (status bar, chips): "1.23M", "45.6K", "789".
QString formatCompact(double value);
QString formatPercent(double fraction);
/// Three significant digits: "17.2 s", "641 ms", "4.03 ms", "12.0 µs".
QString formatSeconds(double seconds);
/// "0–7" for a contiguous run, else the first few members and a count.
QString formatGpuList(const std::vector<int>& gpus, int max_items = 8);

} // namespace moe::widgets::detail
