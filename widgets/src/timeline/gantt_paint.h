#pragma once
// Painting the step timeline, private to timeline/: the time axis, its grid, the rows (labels,
// spans, micro-batch labels, critical path) and the legend. The canvas paints the screen with
// them and the export its page, so both look the same.

#include "timeline/gantt_data.h"

#include <QColor>
#include <QFont>
#include <QPainter>
#include <QRect>
#include <QString>

#include <vector>

namespace moe::widgets::gantt {

void paintAxis(QPainter& p, const QRect& rect, const GanttTimeAxis& axis, const GanttData& d,
               const charts::ChartTheme& theme, const QFont& font);
void paintGrid(QPainter& p, const QRect& rect, const GanttTimeAxis& axis, const GanttData& d,
               const charts::ChartTheme& theme);

/// Where the screen and a slide draw rows differently.
struct RowStyle {
    /// The ▸/▾ of rows that open: the screen's tree; a slide cannot open them.
    bool tree_marks = true;
    /// Narrowest width and height a transfer (all-to-all, TP, CP, PP, gradient sync) is drawn
    /// with, in logical pixels: on a slide a 0.3 ms all-to-all is a tenth of a pixel and would
    /// vanish; 0 keeps the time's own size (a folded band at least 1 px wide).
    double min_transfer_px = 0;
};

/// Rows (labels and bodies) from content offset `scroll_y`, inside `rect` (labels on its left).
void paintRows(QPainter& p, const QRect& rect, int scroll_y, int label_width,
               const GanttTimeAxis& axis, const GanttFrame& f, const charts::ChartTheme& theme,
               const QFont& font, const QFont& small_font, const RowStyle& style = {});

struct LegendEntry {
    enum class Shape { box, strip, band, critical };
    Shape shape = Shape::box;
    QColor color;
    QColor color2;
    QString text;
};

std::vector<LegendEntry> legendEntries(const GanttData& d, const charts::ChartTheme& theme);

/// Lays the legend out in rows within `rect`'s width; paints it when `p` is given. Returns its
/// height.
int layoutLegend(QPainter* p, const QRect& rect, const std::vector<LegendEntry>& entries,
                 const charts::ChartTheme& theme, const QFont& font);

} // namespace moe::widgets::gantt
