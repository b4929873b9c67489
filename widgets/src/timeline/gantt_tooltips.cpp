// The step timeline's tooltips: who a row label stands for, and the span under the cursor with
// its micro-batch pass and whether it lies on the critical path.
#include "timeline/gantt_canvas.h"

#include <QScrollBar>

#include <algorithm>
#include <array>

namespace moe::widgets {

using charts::formatBytes;
using charts::formatDuration;
using namespace gantt;

namespace {

QString timesText(double a, double b) {
    return QStringLiteral("%1 → %2 (%3)")
        .arg(formatDuration(a), formatDuration(b), formatDuration(b - a));
}

QString describeSpan(const Span& s) {
    QString text = QStringLiteral("<span style=\"background:%1\">&nbsp;&nbsp;&nbsp;</span> "
                                  "<b>%2</b>")
                       .arg(spanColor(s.kind).name(), spanName(s.kind));
    if (s.microbatch >= 0)
        text += QStringLiteral(" · %1 · micro-batch %2")
                    .arg(s.backward ? QStringLiteral("backward") : QStringLiteral("forward"))
                    .arg(s.microbatch + 1);
    if (s.layer >= 0)
        text += QStringLiteral(" · layer %1").arg(s.layer);
    text += QStringLiteral("<br>&nbsp;&nbsp;&nbsp;&nbsp;") + timesText(s.start_s, s.end_s);
    if (s.bytes > 0)
        text += QStringLiteral(" · %1 per GPU · %2")
                    .arg(formatBytes(s.bytes), QString::fromUtf8(toString(s.stream)));
    return text;
}

/// Nearest span of `lane` within `reach_s` of time `t` (the shortest where several cover it).
const Span* nearestSpan(const SpanList& list, int lane, double t, double reach_s) {
    const Span* hit = nullptr;
    double best = reach_s;
    const auto& spans = *list.spans;
    for (size_t i = GanttData::firstSpan(list, t - reach_s); i < spans.size(); ++i) {
        const Span& s = spans[i];
        if (s.start_s > t + reach_s)
            break;
        if (laneOf(s.stream) != lane)
            continue;
        const double distance = t < s.start_s ? s.start_s - t : t > s.end_s ? t - s.end_s : 0.0;
        if (distance < best ||
            (distance == 0 && hit != nullptr && best == 0 && s.duration_s() < hit->duration_s())) {
            best = distance;
            hit = &s;
        }
    }
    return hit;
}

/// The idle gap of the compute lane around time `t`.
QString computeIdleText(const std::vector<Span>& spans, double t, double step_time_s) {
    double prev = 0, next = step_time_s;
    for (const Span& s : spans) {
        if (laneOf(s.stream) != 0)
            continue;
        if (s.end_s <= t)
            prev = std::max(prev, s.end_s);
        else if (s.start_s >= t) {
            next = std::min(next, s.start_s);
            break;
        }
    }
    return QStringLiteral("Compute idle %1<br>waiting for input: a neighbour "
                          "stage's send or the all-to-all")
        .arg(timesText(prev, next));
}

/// The whole micro-batch pass of `hit` on this row (compute and transfers), by kind.
QString passBreakdown(const std::vector<Span>& spans, const Span& hit) {
    std::array<double, kSpanKindCount> by_kind{};
    double first = hit.start_s, last = hit.end_s;
    for (const Span& s : spans)
        if (s.microbatch == hit.microbatch && s.backward == hit.backward && laneOf(s.stream) != 2) {
            by_kind[static_cast<size_t>(s.kind)] += s.duration_s();
            first = std::min(first, s.start_s);
            last = std::max(last, s.end_s);
        }
    QString text = QStringLiteral("<br><br><b>%1 of micro-batch %2</b> on this row: %3"
                                  "<table cellspacing=0 cellpadding=1>")
                       .arg(hit.backward ? QStringLiteral("Backward") : QStringLiteral("Forward"))
                       .arg(hit.microbatch + 1)
                       .arg(timesText(first, last));
    for (int c = 0; c < kSpanKindCount; ++c) {
        if (by_kind[static_cast<size_t>(c)] <= 0)
            continue;
        const auto kind = static_cast<SpanKind>(c);
        text += QStringLiteral("<tr><td><span style=\"background:%1\">&nbsp;&nbsp;&nbsp;"
                               "</span></td><td>%2</td><td align=right>&nbsp;%3</td></tr>")
                    .arg(spanColor(kind).name(), spanName(kind),
                         formatDuration(by_kind[static_cast<size_t>(c)]));
    }
    return text + QStringLiteral("</table>");
}

bool onCriticalPath(const GanttData& d, const GanttRow& row, const Span& hit) {
    if (row.timeline_row < 0 || row.timeline_row >= static_cast<int>(d.critical.size()))
        return false;
    const auto& intervals =
        d.critical[static_cast<size_t>(row.timeline_row)][static_cast<size_t>(laneOf(hit.stream))];
    const auto it = std::partition_point(
        intervals.begin(), intervals.end(),
        [&](const std::pair<double, double>& iv) { return iv.second < hit.start_s + 1e-12; });
    return it != intervals.end() && it->first <= hit.start_s + 1e-12;
}

} // namespace

QString GanttCanvas::toolTip(const QPoint& pos) const {
    if (pos.y() < kAxisHeight || !message.isEmpty())
        return {};
    const int content_y = pos.y() - kAxisHeight + verticalScrollBar()->value();
    const int k = frame.rowAtY(content_y);
    if (k < 0)
        return {};
    const int index = frame.visible[static_cast<size_t>(k)];
    const GanttRow& row = data.rows[static_cast<size_t>(index)];
    if (pos.x() < kLabelWidth)
        return labelToolTip(row, index);
    return spanToolTip(row, k, pos, content_y);
}

QString GanttCanvas::labelToolTip(const GanttRow& row, int index) const {
    QString text = QStringLiteral("<b>%1</b>").arg(whoOf(row));
    if (data.moe)
        text += QStringLiteral("<br>Expert tokens: %1× the mean of its EP group%2")
                    .arg(row.expert_ratio, 0, 'f', 2)
                    .arg(row.hottest ? QStringLiteral(" — holds the hottest GPU") : QString());
    if (row.level != GanttRow::Level::gpu) {
        text += QStringLiteral("<br>Shows the simulated schedule of its token stream");
        text += QStringLiteral("<br><i>Click to %1</i>")
                    .arg(data.expanded[static_cast<size_t>(index)] != 0 ? QStringLiteral("collapse")
                                                                        : QStringLiteral("expand"));
    } else {
        text += QStringLiteral("<br><i>Click to select this GPU in every view</i>");
    }
    return text;
}

QString GanttCanvas::spanToolTip(const GanttRow& row, int visible_index, const QPoint& pos,
                                 int content_y) const {
    const SpanList list = data.spansOf(row);
    if (list.spans == nullptr)
        return {};
    const double t = axis.mapXToTime(pos.x());
    const double px = axis.span_s() / std::max(1.0, axis.width); // seconds per pixel
    const Lanes lanes = lanesOf(
        QRectF(0, frame.row_top[static_cast<size_t>(visible_index)], 1, frame.heightOf(row)));
    const int lane = content_y >= lanes.sync.top() - 0.5   ? 2
                     : content_y >= lanes.comm.top() - 0.5 ? 1
                                                           : 0;
    // Nearest span of the lane within a pixel or two of the cursor.
    const Span* hit = nearestSpan(list, lane, t, 3 * px);
    QString text = QStringLiteral("<b>%1</b><br>").arg(whoOf(row));
    if (hit == nullptr) {
        if (lane != 0 || t < 0 || data.timeline == nullptr || t > data.timeline->step_time_s)
            return {};
        return text + computeIdleText(*list.spans, t, data.timeline->step_time_s);
    }
    text += describeSpan(*hit);
    if (hit->microbatch >= 0)
        text += passBreakdown(*list.spans, *hit);
    if (onCriticalPath(data, row, *hit))
        text += QStringLiteral("<br><b>On the critical path</b>");
    if (hit->duration_s() < 2 * px)
        text += QStringLiteral("<br><i>Zoom in (Ctrl+wheel, +) to see each span</i>");
    return text;
}

} // namespace moe::widgets
