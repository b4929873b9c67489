#pragma once
// The step timeline's look, private to timeline/: row and lane geometry, span colours and names,
// tick labels and the critical path's pen. Shared by the canvas, its tooltips and the export.

#include "charts/chart_support.h"
#include "moe_widgets/timeline/gantt_view.h"

#include <QColor>
#include <QPen>
#include <QRectF>
#include <QString>

namespace moe::widgets::gantt {

constexpr int kLabelWidth = 220;
constexpr int kAxisHeight = 26;
constexpr int kRightMargin = 14;
constexpr int kTopPad = 4; ///< room for the critical path's outline above the spans
constexpr int kCommLane = 5;
constexpr int kSyncLane = 3;
constexpr int kLaneGap = 1;
constexpr int kBottomPad = 2;
constexpr double kMinSpanPx = 3.0; ///< narrower spans fold (below this they read as noise)
constexpr int kIndent = 14;

int rowHeight(GanttRow::Level level);

/// A row's three lanes, top to bottom: compute, transfers, gradient sync.
struct Lanes {
    QRectF compute, comm, sync;
};

Lanes lanesOf(const QRectF& row);

/// 0 compute, 1 transfers, 2 gradient sync (the lanes of Lanes, and GanttData::critical's index).
inline int laneOf(TimelineStream stream) {
    switch (stream) {
    case TimelineStream::compute:
        return 0;
    case TimelineStream::grad_sync:
        return 2;
    default:
        return 1;
    }
}

QColor spanColor(SpanKind kind);
QString spanName(SpanKind kind);
/// Short names for the legend, where several kinds share a colour.
QString legendName(SpanKind kind);

// The strip along the bottom of compute spans: forward light grey, backward dark slate.
inline const QColor kForwardStrip(0xC3CBD3);
inline const QColor kBackwardStrip(0x3B4652);

/// An axis tick's label at time `t`, in the unit the window's end reads best in.
QString tickLabel(double t, double step, double window_end);
/// "TP8 CP1 PP16 DP16 EP64 · dualpipe": the layout in the export's subtitle.
QString layoutSummary(const Scenario& s);

/// The critical path's style: an outline in the critical-path colour (magenta, which no span
/// uses; the text colour read as the dark backward strip) around the spans it runs through (no
/// fill, so no span colour can be mistaken for it) and a dashed connector where it moves to
/// another stage's row. Drawn over a halo in the background colour (criticalHaloPen) that
/// parts it from the spans beneath.
QPen criticalPen(const charts::ChartTheme& theme, bool connector);
QPen criticalHaloPen(const charts::ChartTheme& theme, bool connector);

/// "F3", "B3": a micro-batch pass's label.
QString blockText(int microbatch, bool backward);

/// Who a row stands for, as its tooltips name it.
QString whoOf(const GanttRow& row);

} // namespace moe::widgets::gantt
