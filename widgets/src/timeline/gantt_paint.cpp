#include "timeline/gantt_paint.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

namespace moe::widgets::gantt {

using charts::ChartTheme;

namespace {

// Colour categories: the span kinds; folded runs also weigh idle time (drawn as background).
constexpr int kCatIdle = kSpanKindCount;
constexpr int kCatCount = kSpanKindCount + 1;

/// Draws spans of one lane left to right. Runs of spans too narrow to see fold into one band:
/// its colours split its height by what the time was spent on and the idle share stays
/// background, so a zoomed-out row still shows its mix and how busy it was.
/// Rectangles collected by colour and drawn one colour at a time: a row alternates colours
/// span by span, and an SVG/PDF export would otherwise restate the fill for every rectangle.
class RectBatch {
public:
    void add(const QColor& color, const QRectF& rect) {
        const QRgb rgb = color.rgba();
        for (auto& [c, rects] : batches_)
            if (c == rgb) {
                rects.push_back(rect);
                return;
            }
        batches_.push_back({rgb, {rect}});
    }
    void flush(QPainter& painter) {
        painter.save();
        painter.setPen(Qt::NoPen);
        for (auto& [rgb, rects] : batches_) {
            painter.setBrush(QColor::fromRgba(rgb));
            painter.drawRects(rects.data(), static_cast<int>(rects.size()));
        }
        painter.restore();
        batches_.clear();
    }

private:
    std::vector<std::pair<QRgb, std::vector<QRectF>>> batches_;
};

class Folder {
public:
    /// `min_px`: the narrowest width and height a span or band of this lane is drawn with.
    Folder(RectBatch& painter, RectBatch& overlay, const QRectF& lane, bool strip,
           double min_px = 0)
        : painter_(painter)
        , overlay_(overlay)
        , lane_(lane)
        , strip_(strip)
        , min_px_(min_px) {}
    ~Folder() {
        flush();
        flushStrip();
    }

    void add(double x0, double x1, const Span& span) {
        if (x1 - x0 >= kMinSpanPx) {
            flush();
            painter_.add(spanColor(span.kind), QRectF(x0, lane_.top(), x1 - x0, lane_.height()));
            if (span.kind != SpanKind::wait && span.microbatch >= 0)
                strip(x0, x1, span.backward);
            return;
        }
        if (active_ && x0 > run_x1_ + 1.0)
            flush();
        if (!active_) {
            active_ = true;
            run_x0_ = x0;
            run_x1_ = x1;
            run_t1_ = span.start_s;
        }
        weight_[kCatIdle] += std::max(0.0, span.start_s - run_t1_);
        run_t1_ = std::max(run_t1_, span.end_s);
        run_x1_ = std::max(run_x1_, x1);
        weight_[static_cast<size_t>(span.kind)] += span.duration_s();
        (span.backward ? backward_s_ : forward_s_) += span.duration_s();
    }

    void flush() {
        if (!active_)
            return;
        active_ = false;
        double total = 0;
        for (const double w : weight_)
            total += w;
        const double width = std::max({1.0, min_px_, run_x1_ - run_x0_});
        double y = lane_.top();
        for (int c = 0; c < kSpanKindCount && total > 0; ++c) {
            const double w = weight_[static_cast<size_t>(c)];
            if (w <= 0)
                continue;
            // Height = share of the run's time, but never below min_px_ (within the lane).
            const double h =
                std::min(std::max(lane_.height() * w / total, std::min(min_px_, lane_.height())),
                         lane_.bottom() - y);
            if (h <= 0)
                break;
            painter_.add(spanColor(static_cast<SpanKind>(c)), QRectF(run_x0_, y, width, h));
            y += h;
        }
        if (forward_s_ + backward_s_ > 0)
            strip(run_x0_, run_x0_ + width, backward_s_ > forward_s_);
        weight_.fill(0);
        forward_s_ = backward_s_ = 0;
    }

private:
    /// The phase strip, merged over neighbours of the same phase (one rectangle per pass
    /// rather than per span keeps vector exports small).
    void strip(double x0, double x1, bool backward) {
        if (!strip_)
            return;
        if (strip_active_ && backward == strip_backward_ && x0 <= strip_x1_ + 1.0) {
            strip_x1_ = std::max(strip_x1_, x1);
            return;
        }
        flushStrip();
        strip_active_ = true;
        strip_backward_ = backward;
        strip_x0_ = x0;
        strip_x1_ = x1;
    }
    void flushStrip() {
        if (!strip_active_)
            return;
        strip_active_ = false;
        overlay_.add(strip_backward_ ? kBackwardStrip : kForwardStrip,
                     QRectF(strip_x0_, lane_.bottom() - 2, strip_x1_ - strip_x0_, 2));
    }

    bool strip_active_ = false;
    bool strip_backward_ = false;
    double strip_x0_ = 0;
    double strip_x1_ = 0;
    RectBatch& painter_;
    RectBatch& overlay_;
    QRectF lane_;
    bool strip_;
    double min_px_;
    bool active_ = false;
    double run_x0_ = 0;
    double run_x1_ = 0;
    double run_t1_ = 0;
    double forward_s_ = 0;
    double backward_s_ = 0;
    std::array<double, kCatCount> weight_{};
};

/// A micro-batch pass of the compute lane, for its label.
struct PassBlock {
    int mb = -1;
    bool backward = false;
    double x0 = 0, x1 = 0;
};

/// Paints the spans of `list` inside the axis' window into their lanes (narrow runs folded) and
/// returns the compute lane's micro-batch passes wide enough for a label.
std::vector<PassBlock> paintSpans(QPainter& p, const SpanList& list, const Lanes& lanes,
                                  const GanttTimeAxis& axis, double min_transfer_px) {
    const double t0 = axis.start_s;
    const double t1 = axis.end_s;
    const auto& spans = *list.spans;
    std::vector<PassBlock> blocks;
    PassBlock current;
    // Only passes wide enough for a label are kept (measuring text is the expensive part).
    const auto close_block = [&] {
        if (current.mb >= 0 && current.x1 - current.x0 >= 16)
            blocks.push_back(current);
        current = PassBlock{};
    };
    RectBatch base;
    RectBatch overlay;
    {
        Folder compute(base, overlay, lanes.compute, true);
        Folder comm(base, overlay, lanes.comm, false, min_transfer_px);
        Folder sync(base, overlay, lanes.sync, false, min_transfer_px);
        for (size_t i = GanttData::firstSpan(list, t0); i < spans.size(); ++i) {
            const Span& s = spans[i];
            if (s.start_s > t1)
                break;
            if (s.end_s < t0)
                continue;
            const double x0 = axis.mapTimeToX(s.start_s);
            const double x1 = axis.mapTimeToX(s.end_s);
            switch (laneOf(s.stream)) {
            case 0:
                compute.add(x0, x1, s);
                // A pass of one micro-batch runs on, through its waits, until another starts.
                if (s.kind == SpanKind::wait ||
                    (s.microbatch == current.mb && s.backward == current.backward)) {
                    current.x1 = std::max(current.x1, x1);
                } else {
                    close_block();
                    if (s.microbatch >= 0)
                        current = PassBlock{s.microbatch, s.backward, x0, x1};
                }
                break;
            case 1:
                comm.add(x0, x1, s);
                break;
            default:
                sync.add(x0, x1, s);
                break;
            }
        }
        close_block();
    } // the folders flush into the batches here
    base.flush(p);
    overlay.flush(p);
    return blocks;
}

/// Micro-batch labels ("F3", "B3") centred on the passes where they fit.
void paintPassLabels(QPainter& p, const std::vector<PassBlock>& blocks, const QRectF& compute,
                     const ChartTheme& theme, const QFont& small_font) {
    p.setFont(small_font);
    const QFontMetricsF fm(small_font);
    if (compute.height() < fm.height() - 3)
        return;
    for (const PassBlock& b : blocks) {
        const QString text = blockText(b.mb, b.backward);
        const double tw = fm.horizontalAdvance(text);
        const double w = b.x1 - b.x0;
        if (w < tw + 10)
            continue;
        const QRectF box(b.x0 + (w - tw) / 2.0 - 2,
                         compute.top() + (compute.height() - fm.height()) / 2.0 + 1, tw + 4,
                         fm.height() - 1);
        QColor back = theme.background;
        back.setAlpha(210);
        p.fillRect(box, back);
        p.setPen(theme.text);
        p.drawText(box, Qt::AlignCenter, text);
    }
}

/// The critical path: one outline around the row's lanes for each stretch of time the path
/// runs through this row (its compute, its transfers and its gradient sync alike: the
/// tooltip names the span), so the spans inside stay readable.
/// Only stage rows carry it: node and GPU rows of the same token stream share the simulated
/// row, and repeating it on each would read as if each of them set the step time.
void paintCriticalOutline(QPainter& p, const GanttRow& row, const Lanes& lanes,
                          const GanttTimeAxis& axis, const GanttData& d, const ChartTheme& theme) {
    if (!d.show_critical || row.level != GanttRow::Level::stage || row.timeline_row < 0 ||
        row.timeline_row >= static_cast<int>(d.critical.size()))
        return;
    const double t0 = axis.start_s;
    const double t1 = axis.end_s;
    std::vector<std::pair<double, double>> visible;
    for (const auto& intervals : d.critical[static_cast<size_t>(row.timeline_row)]) {
        const auto first = std::partition_point(
            intervals.begin(), intervals.end(),
            [&](const std::pair<double, double>& iv) { return iv.second < t0; });
        for (auto it = first; it != intervals.end() && it->first <= t1; ++it)
            visible.push_back(*it);
    }
    std::sort(visible.begin(), visible.end());
    p.save();
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setBrush(Qt::NoBrush);
    const double top = lanes.compute.top() - 2.5;
    const double bottom = lanes.sync.bottom() + 1.5;
    double run_x0 = -1, run_x1 = -1;
    const auto outline = [&] {
        if (run_x0 < 0)
            return;
        const QRectF box(run_x0, top, std::max(1.0, run_x1 - run_x0), bottom - top);
        p.setPen(criticalHaloPen(theme, false));
        p.drawRect(box);
        p.setPen(criticalPen(theme, false));
        p.drawRect(box);
    };
    for (const auto& [a, b] : visible) {
        const double x0 = axis.mapTimeToX(a);
        const double x1 = axis.mapTimeToX(b);
        if (run_x0 >= 0 && x0 <= run_x1 + 1.0) {
            run_x1 = std::max(run_x1, x1);
            continue;
        }
        outline();
        run_x0 = x0;
        run_x1 = x1;
    }
    outline();
    p.restore();
}

void paintRowBody(QPainter& p, const GanttRow& row, const QRectF& rect, const GanttTimeAxis& axis,
                  const GanttData& d, const ChartTheme& theme, const QFont& small_font,
                  const RowStyle& style) {
    const SpanList list = d.spansOf(row);
    if (list.spans == nullptr)
        return;
    const Lanes lanes = lanesOf(rect);
    const std::vector<PassBlock> blocks = paintSpans(p, list, lanes, axis, style.min_transfer_px);
    paintPassLabels(p, blocks, lanes.compute, theme, small_font);
    paintCriticalOutline(p, row, lanes, axis, d, theme);
}

void paintTriangle(QPainter& p, const QPointF& centre, bool expanded, const QColor& color) {
    QPolygonF shape;
    if (expanded)
        shape << centre + QPointF(-4, -2) << centre + QPointF(4, -2) << centre + QPointF(0, 3);
    else
        shape << centre + QPointF(-2, -4) << centre + QPointF(3, 0) << centre + QPointF(-2, 4);
    p.save();
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setPen(Qt::NoPen);
    p.setBrush(color);
    p.drawPolygon(shape);
    p.restore();
}

} // namespace

void paintAxis(QPainter& p, const QRect& rect, const GanttTimeAxis& axis, const GanttData& d,
               const ChartTheme& theme, const QFont& font) {
    p.save();
    p.fillRect(rect, theme.background);
    p.setFont(font);
    const QFontMetrics fm(font);
    const int max_ticks = std::max(2, static_cast<int>(axis.width / 95));
    const double step = niceTickStep(axis.span_s(), max_ticks);
    p.setPen(QPen(theme.muted, 1));
    p.drawLine(QPointF(axis.x0, rect.bottom() + 0.5),
               QPointF(axis.x0 + axis.width, rect.bottom() + 0.5));
    for (double t = std::ceil(axis.start_s / step - 1e-9) * step; t <= axis.end_s + step * 1e-9;
         t += step) {
        const double x = std::round(axis.mapTimeToX(t)) + 0.5;
        p.setPen(QPen(theme.muted, 1));
        p.drawLine(QPointF(x, rect.bottom() - 4), QPointF(x, rect.bottom()));
        const QString label = tickLabel(t, step, axis.end_s);
        const int w = fm.horizontalAdvance(label);
        const double lx = std::clamp(x - w / 2.0, axis.x0 - 4.0, axis.x0 + axis.width - w + 10.0);
        p.setPen(theme.text);
        p.drawText(QPointF(lx, rect.bottom() - 8), label);
    }
    // Where the simulated step ends.
    if (d.timeline != nullptr && d.timeline->ok()) {
        const double x = axis.mapTimeToX(d.timeline->step_time_s);
        if (x >= axis.x0 - 1 && x <= axis.x0 + axis.width + 1)
            p.fillRect(QRectF(x - 1, rect.top() + 4, 2, rect.height() - 4), theme.text);
    }
    p.restore();
}

void paintGrid(QPainter& p, const QRect& rect, const GanttTimeAxis& axis, const GanttData& d,
               const ChartTheme& theme) {
    const int max_ticks = std::max(2, static_cast<int>(axis.width / 95));
    const double step = niceTickStep(axis.span_s(), max_ticks);
    p.setPen(QPen(theme.grid, 1, Qt::DotLine));
    for (double t = std::ceil(axis.start_s / step - 1e-9) * step; t <= axis.end_s + step * 1e-9;
         t += step) {
        const double x = std::round(axis.mapTimeToX(t)) + 0.5;
        p.drawLine(QPointF(x, rect.top()), QPointF(x, rect.bottom()));
    }
    if (d.timeline == nullptr || !d.timeline->ok())
        return;
    const double end_x = axis.mapTimeToX(d.timeline->step_time_s);
    if (end_x >= axis.x0 && end_x <= axis.x0 + axis.width + 1) {
        p.setPen(QPen(theme.text, 1.5));
        p.drawLine(QPointF(end_x, rect.top()), QPointF(end_x, rect.bottom()));
    }
}

/// The critical path's style: an outline in the text colour around the spans it runs through
/// (no fill, so no span colour can be mistaken for it) and a dashed connector where it moves

void paintRows(QPainter& p, const QRect& rect, int scroll_y, int label_width,
               const GanttTimeAxis& axis, const GanttFrame& f, const ChartTheme& theme,
               const QFont& font, const QFont& small_font, const RowStyle& style) {
    const GanttData& d = *f.data;
    p.save();
    p.setClipRect(rect);
    const QRect body(rect.left() + label_width, rect.top(), rect.width() - label_width,
                     rect.height());
    p.fillRect(rect, theme.background);
    const int first = std::max(0, f.rowAtY(scroll_y));
    std::map<int, double> row_mid; ///< simulated row -> centre of the stage row showing it
    for (size_t k = static_cast<size_t>(first); k < f.visible.size(); ++k) {
        const int top = rect.top() + f.row_top[k] - scroll_y;
        if (top > rect.bottom())
            break;
        const int index = f.visible[k];
        const GanttRow& row = d.rows[static_cast<size_t>(index)];
        const int h = f.heightOf(row);
        const QRect full(rect.left(), top, rect.width(), h);
        if (k % 2 == 1)
            p.fillRect(full, theme.lane);
        const bool highlighted = index < static_cast<int>(d.highlight.size()) &&
                                 d.highlight[static_cast<size_t>(index)] != 0;
        const bool selected = row.level == GanttRow::Level::gpu && row.gpu == d.selected_gpu;
        QColor tint = theme.accent;
        tint.setAlpha(selected ? 60 : 34);
        if (selected || highlighted)
            p.fillRect(full, tint);
        if (row.level == GanttRow::Level::stage) {
            p.setPen(QPen(theme.grid, 1));
            p.drawLine(QPointF(rect.left(), top + 0.5), QPointF(rect.right(), top + 0.5));
            if (row.timeline_row >= 0)
                row_mid.emplace(row.timeline_row, top + h / 2.0);
        }
        p.save();
        p.setClipRect(body.intersected(full));
        paintRowBody(p, row, QRectF(body.left(), top, body.width(), h), axis, d, theme, small_font,
                     style);
        p.restore();

        // Label column.
        const QRect label(rect.left(), top, label_width, h);
        p.fillRect(label, k % 2 == 1 ? theme.lane : theme.background);
        if (selected || highlighted) {
            p.fillRect(label, tint);
            p.fillRect(QRect(label.left(), top, 3, h), theme.accent);
        }
        const int indent = 8 + static_cast<int>(row.level) * kIndent;
        if (style.tree_marks && row.level != GanttRow::Level::gpu) {
            const bool open = (*f.expanded)[static_cast<size_t>(index)] != 0;
            paintTriangle(p, QPointF(label.left() + indent + 3, top + h / 2.0), open, theme.muted);
        }
        QFont row_font = row.level == GanttRow::Level::stage ? font : small_font;
        row_font.setBold(row.level == GanttRow::Level::stage || selected);
        QString right;
        if (d.moe && row.level == GanttRow::Level::gpu && d.timeline != nullptr &&
            d.timeline->step_time_s > 0) {
            const SpanList own = d.spansOf(row);
            right =
                QStringLiteral("%1%").arg(own.wait_s / d.timeline->step_time_s * 100, 0, 'f', 1);
        }
        const QFontMetrics rfm(small_font);
        const int right_w = right.isEmpty() ? 0 : rfm.horizontalAdvance(right) + 8;
        const int mark_w = style.tree_marks ? 12 : 0; // room for the ▸/▾
        const QRect text_rect(label.left() + indent + mark_w, top,
                              label_width - indent - mark_w - 4 - right_w, h);
        p.setFont(row_font);
        p.setPen(theme.text);
        p.drawText(text_rect, Qt::AlignVCenter | Qt::AlignLeft,
                   QFontMetrics(row_font).elidedText(row.label, Qt::ElideRight, text_rect.width()));
        if (!right.isEmpty()) {
            p.setFont(small_font);
            p.setPen(row.hottest ? theme.danger : theme.muted);
            p.drawText(QRect(label.right() - right_w - 4, top, right_w, h),
                       Qt::AlignVCenter | Qt::AlignRight, right);
        }
    }
    // The critical path's hops between the stage rows it passes through: dashed connectors
    // from one row's outline to the other's, at the time it moves.
    if (d.show_critical && !d.hops.empty()) {
        p.setClipRect(body);
        for (const GanttData::Hop& hop : d.hops) {
            const double x = axis.mapTimeToX(hop.time_s);
            if (x < body.left() || x > body.right())
                continue;
            const auto a = row_mid.find(hop.from_row);
            const auto b = row_mid.find(hop.to_row);
            if (a == row_mid.end() || b == row_mid.end())
                continue;
            for (const QPen& pen : {criticalHaloPen(theme, true), criticalPen(theme, true)}) {
                p.setPen(pen);
                p.drawLine(QPointF(x, a->second), QPointF(x, b->second));
            }
        }
    }
    p.setClipping(false);
    p.setPen(QPen(theme.grid, 1));
    p.drawLine(QPointF(rect.left() + label_width - 0.5, rect.top()),
               QPointF(rect.left() + label_width - 0.5, rect.bottom()));
    p.restore();
}

std::vector<LegendEntry> legendEntries(const GanttData& d, const ChartTheme& theme) {
    std::vector<LegendEntry> entries;
    if (d.timeline == nullptr || !d.timeline->ok())
        return entries;
    std::array<bool, kSpanKindCount> used{};
    for (const TimelineRow& row : d.timeline->rows)
        for (const Span& s : row.spans)
            used[static_cast<size_t>(s.kind)] = true;
    // A GPU that is not its EP group's hottest waits for it.
    if (d.moe && !d.timeline->expert_share.empty())
        used[static_cast<size_t>(SpanKind::wait)] = true;
    // One entry per colour, the kinds sharing it named together.
    std::vector<std::pair<QRgb, QString>> groups;
    const auto add = [&](SpanKind kind) {
        if (!used[static_cast<size_t>(kind)])
            return;
        const QRgb rgb = spanColor(kind).rgb();
        for (auto& [c, text] : groups)
            if (c == rgb) {
                text += QStringLiteral(", ") + legendName(kind);
                return;
            }
        groups.emplace_back(rgb, legendName(kind));
    };
    for (const SpanKind k :
         {SpanKind::attention, SpanKind::dense_ffn, SpanKind::lm_head, SpanKind::router,
          SpanKind::expert, SpanKind::weight_grad, SpanKind::wait, SpanKind::optimizer})
        add(k);
    for (const auto& [rgb, text] : groups)
        entries.push_back({LegendEntry::Shape::box, QColor(rgb), {}, text});
    entries.push_back({LegendEntry::Shape::strip, kForwardStrip, kBackwardStrip,
                       QStringLiteral("forward / backward strip")});
    groups.clear();
    for (const SpanKind k : {SpanKind::dispatch, SpanKind::combine, SpanKind::tp, SpanKind::cp,
                             SpanKind::pp_send, SpanKind::grad_sync, SpanKind::param_gather})
        add(k);
    for (const auto& [rgb, text] : groups)
        entries.push_back({LegendEntry::Shape::band, QColor(rgb), {}, text});
    entries.push_back({LegendEntry::Shape::critical,
                       theme.critical,
                       {},
                       QStringLiteral("critical path (outlined; dashed: to another stage)")});
    return entries;
}

/// Lays the legend out in rows within `rect`'s width; paints it when `p` is given. Returns its
/// height.
int layoutLegend(QPainter* p, const QRect& rect, const std::vector<LegendEntry>& entries,
                 const ChartTheme& theme, const QFont& font) {
    const QFontMetrics fm(font);
    const int line_h = fm.height() + 8;
    int x = rect.left();
    int y = rect.top();
    if (p != nullptr)
        p->setFont(font);
    for (const LegendEntry& e : entries) {
        const int w = 22 + fm.horizontalAdvance(e.text) + 22;
        if (x > rect.left() && x + w > rect.right()) {
            x = rect.left();
            y += line_h;
        }
        if (p != nullptr) {
            const QRect swatch(x, y + (line_h - 12) / 2, 16, 12);
            switch (e.shape) {
            case LegendEntry::Shape::box:
                p->fillRect(swatch, e.color);
                break;
            case LegendEntry::Shape::strip:
                p->fillRect(QRect(swatch.left(), swatch.top(), 8, 4), e.color);
                p->fillRect(QRect(swatch.left() + 8, swatch.top(), 8, 4), e.color2);
                break;
            case LegendEntry::Shape::band:
                p->fillRect(QRect(swatch.left(), swatch.top() + 6, 16, 5), e.color);
                break;
            case LegendEntry::Shape::critical:
                p->save();
                p->setPen(criticalPen(theme, false));
                p->setBrush(Qt::NoBrush);
                p->drawRect(QRectF(swatch.left() + 0.5, swatch.top() + 0.5, 9, 11));
                p->setPen(criticalPen(theme, true));
                p->drawLine(QPointF(swatch.left() + 14.5, swatch.top()),
                            QPointF(swatch.left() + 14.5, swatch.bottom() + 1));
                p->restore();
                break;
            }
            p->setPen(theme.text);
            p->drawText(QRect(x + 22, y, w - 22, line_h), Qt::AlignVCenter | Qt::AlignLeft, e.text);
        }
        x += w;
    }
    return y + line_h - rect.top();
}

} // namespace moe::widgets::gantt
