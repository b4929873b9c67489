#pragma once
// Helpers shared by the topology and heatmap views: writing a painted page to SVG, PNG or PDF
// (format from the suffix) and the number formats their labels and tooltips use.

#include <QColor>
#include <QPalette>
#include <QRectF>
#include <QSizeF>
#include <QString>

#include <functional>

class QPainter;

namespace moe::widgets::detail {

enum class ExportFormat { svg, png, pdf, unknown };
ExportFormat exportFormatOf(const QString& path);

/// Paints `paint(painter, page)` onto a `page_size` page (logical pixels) and writes it to
/// `path`: SVG and PDF stay vector, PNG is rendered at twice the size so slides stay sharp.
/// Returns an empty string or the reason.
QString exportPage(const QString& path, const QSizeF& page_size, const QString& title,
                   const std::function<void(QPainter&, const QRectF&)>& paint);

/// True when the palette's base colour is dark (a dark desktop theme).
bool isDark(const QPalette& palette);

/// Colours that are not data: frames, text, switches. Views pick one per palette; exports use
/// the light one (slides).
struct ViewTheme {
    bool dark = false;
    QColor background, text, muted, pod_fill, pod_border, rack_fill, rack_border, node_fill,
        node_border, switch_fill, switch_text, idle_link, highlight, no_data;
};
ViewTheme viewTheme(bool dark);

QString formatBytes(double bytes); ///< "1.23 GB", "456 MB"
QString formatCount(double value); ///< "1,234" (exact integer part) or "12.5"
QString formatPercent(double fraction);
QString formatSeconds(double seconds); ///< "12.3 s", "45.6 ms", "789 us"
/// "0–7" for a contiguous run, else the first few members and a count.
QString formatGpuList(const std::vector<int>& gpus, int max_items = 8);

} // namespace moe::widgets::detail
