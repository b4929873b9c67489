#include "moe_widgets/timeline/gantt_view.h"

#include "charts/chart_support.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/view_state.h"

#include <QAbstractScrollArea>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QImage>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QScrollBar>
#include <QSvgGenerator>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

namespace moe::widgets {

using charts::ChartTheme;
using charts::formatBytes;
using charts::formatDuration;

// ---------------------------------------------------------------------------------------------
// Time axis

double GanttTimeAxis::mapTimeToX(double time_s) const {
    const double span = span_s();
    return span > 0 ? x0 + (time_s - start_s) / span * width : x0;
}

double GanttTimeAxis::mapXToTime(double x) const {
    return width > 0 ? start_s + (x - x0) / width * span_s() : start_s;
}

GanttTimeAxis GanttTimeAxis::fit(double total_s, double new_x0, double new_width) {
    GanttTimeAxis axis;
    axis.start_s = 0;
    axis.end_s = total_s > 0 && std::isfinite(total_s) ? total_s : 1.0;
    axis.x0 = new_x0;
    axis.width = std::max(1.0, new_width);
    return axis;
}

GanttTimeAxis GanttTimeAxis::zoomed(double factor, double anchor_x, double total_s,
                                    double min_span_s) const {
    if (!(factor > 0) || !std::isfinite(factor) || !(total_s > 0))
        return *this;
    GanttTimeAxis out = *this;
    const double span = span_s();
    const double anchor = mapXToTime(std::clamp(anchor_x, x0, x0 + width));
    const double floor_span = std::clamp(min_span_s, 0.0, total_s);
    const double new_span = std::clamp(span / factor, floor_span, total_s);
    const double at = span > 0 ? (anchor - start_s) / span : 0.0;
    out.start_s = std::clamp(anchor - at * new_span, 0.0, total_s - new_span);
    out.end_s = out.start_s + new_span;
    return out;
}

GanttTimeAxis GanttTimeAxis::panned(double dx, double total_s) const {
    GanttTimeAxis out = *this;
    const double span = total_s > 0 ? std::min(span_s(), total_s) : span_s();
    const double shift = width > 0 ? dx / width * span : 0.0;
    out.start_s = std::clamp(start_s + shift, 0.0, std::max(0.0, total_s - span));
    out.end_s = out.start_s + span;
    return out;
}

GanttTimeAxis GanttTimeAxis::resized(double new_x0, double new_width) const {
    GanttTimeAxis out = *this;
    out.x0 = new_x0;
    out.width = std::max(1.0, new_width);
    return out;
}

double niceTickStep(double span_s, int max_ticks) {
    if (!(span_s > 0) || !std::isfinite(span_s) || max_ticks < 1)
        return 1.0;
    const double raw = span_s / max_ticks;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (const double m : {1.0, 2.0, 5.0, 10.0})
        if (m * magnitude >= raw * (1 - 1e-12))
            return m * magnitude;
    return 10 * magnitude;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Geometry, colours, names

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

int rowHeight(GanttRow::Level level) {
    switch (level) {
    case GanttRow::Level::stage:
        return 32;
    case GanttRow::Level::node:
        return 28;
    case GanttRow::Level::gpu:
        return 26;
    }
    return 26;
}

struct Lanes {
    QRectF compute, comm, sync;
};

Lanes lanesOf(const QRectF& row) {
    const double compute_h =
        row.height() - kTopPad - kLaneGap - kCommLane - kLaneGap - kSyncLane - kBottomPad;
    Lanes l;
    l.compute = QRectF(row.left(), row.top() + kTopPad, row.width(), compute_h);
    l.comm = QRectF(row.left(), l.compute.bottom() + kLaneGap, row.width(), kCommLane);
    l.sync = QRectF(row.left(), l.comm.bottom() + kLaneGap, row.width(), kSyncLane);
    return l;
}

int laneOf(TimelineStream stream) {
    switch (stream) {
    case TimelineStream::compute:
        return 0;
    case TimelineStream::grad_sync:
        return 2;
    default:
        return 1;
    }
}

// Colour categories: the span kinds; folded runs also weigh idle time (drawn as background).
constexpr int kCatIdle = kSpanKindCount;
constexpr int kCatCount = kSpanKindCount + 1;

QColor spanColor(SpanKind kind) {
    switch (kind) {
    case SpanKind::attention:
        return stepItemColor(StepItem::attention);
    case SpanKind::dense_ffn:
    case SpanKind::lm_head:
        return stepItemColor(StepItem::dense_ffn);
    case SpanKind::router:
        return stepItemColor(StepItem::router);
    case SpanKind::expert:
        return stepItemColor(StepItem::expert_compute);
    case SpanKind::weight_grad:
        return QColor(0xA0CBE8); // a lighter attention blue: backward work split off
    case SpanKind::optimizer:
        return stepItemColor(StepItem::optimizer);
    case SpanKind::wait:
        return stepItemColor(StepItem::imbalance_wait);
    case SpanKind::tp:
        return collectiveColor(CollectiveKind::tp_collective);
    case SpanKind::cp:
        return collectiveColor(CollectiveKind::cp_exchange);
    case SpanKind::dispatch:
        return collectiveColor(CollectiveKind::moe_dispatch);
    case SpanKind::combine:
        return collectiveColor(CollectiveKind::moe_combine);
    case SpanKind::pp_send:
        return collectiveColor(CollectiveKind::pp_send_recv);
    case SpanKind::grad_sync:
    case SpanKind::param_gather:
        return collectiveColor(CollectiveKind::dp_sync);
    case SpanKind::count:
        break;
    }
    return QColor(Qt::gray);
}

QString spanName(SpanKind kind) {
    switch (kind) {
    case SpanKind::attention:
        return QStringLiteral("attention");
    case SpanKind::dense_ffn:
        return QStringLiteral("dense FFN / shared experts");
    case SpanKind::router:
        return QStringLiteral("router");
    case SpanKind::expert:
        return QStringLiteral("expert GEMMs");
    case SpanKind::lm_head:
        return QStringLiteral("LM head and loss");
    case SpanKind::weight_grad:
        return QStringLiteral("weight gradients (deferred)");
    case SpanKind::optimizer:
        return QStringLiteral("optimizer step");
    case SpanKind::wait:
        return QStringLiteral("waiting for the hot expert GPU");
    case SpanKind::tp:
        return QStringLiteral("TP all-gather / reduce-scatter");
    case SpanKind::cp:
        return QStringLiteral("CP KV exchange");
    case SpanKind::dispatch:
        return QStringLiteral("dispatch all-to-all");
    case SpanKind::combine:
        return QStringLiteral("combine all-to-all");
    case SpanKind::pp_send:
        return QStringLiteral("PP send");
    case SpanKind::grad_sync:
        return QStringLiteral("gradient reduce-scatter / all-reduce");
    case SpanKind::param_gather:
        return QStringLiteral("weight all-gather");
    case SpanKind::count:
        break;
    }
    return QStringLiteral("?");
}

/// Short names for the legend, where several kinds share a colour.
QString legendName(SpanKind kind) {
    switch (kind) {
    case SpanKind::dense_ffn:
        return QStringLiteral("dense FFN, shared experts");
    case SpanKind::lm_head:
        return QStringLiteral("LM head");
    case SpanKind::weight_grad:
        return QStringLiteral("weight gradients");
    case SpanKind::optimizer:
        return QStringLiteral("optimizer");
    case SpanKind::wait:
        return QStringLiteral("waiting for the hot GPU");
    case SpanKind::tp:
        return QStringLiteral("TP collectives");
    case SpanKind::cp:
        return QStringLiteral("CP exchange");
    case SpanKind::dispatch:
        return QStringLiteral("all-to-all dispatch");
    case SpanKind::combine:
        return QStringLiteral("combine");
    case SpanKind::grad_sync:
        return QStringLiteral("gradient sync");
    case SpanKind::param_gather:
        return QStringLiteral("weight all-gather");
    default:
        return spanName(kind);
    }
}

// The strip along the bottom of compute spans: forward light grey, backward dark slate.
const QColor kForwardStrip(0xC3CBD3);
const QColor kBackwardStrip(0x3B4652);

QString tickLabel(double t, double step, double window_end) {
    const auto decimals = [](double s) {
        return std::clamp(static_cast<int>(-std::floor(std::log10(s) + 1e-9)), 0, 6);
    };
    if (window_end >= 1.0)
        return QString::number(t, 'f', decimals(step)) + QStringLiteral(" s");
    if (window_end >= 1e-3)
        return QString::number(t * 1e3, 'f', decimals(step * 1e3)) + QStringLiteral(" ms");
    return QString::number(t * 1e6, 'f', decimals(step * 1e6)) + QStringLiteral(" µs");
}

QString layoutSummary(const Scenario& s) {
    const LayoutSpec& l = s.layout;
    QString text = QStringLiteral("TP%1 CP%2 PP%3 DP%4 EP%5")
                       .arg(l.tp)
                       .arg(l.cp)
                       .arg(l.pp)
                       .arg(l.dp)
                       .arg(l.ep);
    if (l.etp > 1)
        text += QStringLiteral(" ETP%1").arg(l.etp);
    if (l.schedule == PipelineSchedule::interleaved)
        text += QStringLiteral(" VPP%1").arg(l.vpp);
    return text + QStringLiteral(" · ") + QString::fromUtf8(toString(l.schedule));
}

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
    Folder(RectBatch& painter, RectBatch& overlay, const QRectF& lane, bool strip)
        : painter_(painter)
        , overlay_(overlay)
        , lane_(lane)
        , strip_(strip) {}
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
        const double width = std::max(1.0, run_x1_ - run_x0_);
        double y = lane_.top();
        for (int c = 0; c < kSpanKindCount && total > 0; ++c) {
            const double w = weight_[static_cast<size_t>(c)];
            if (w <= 0)
                continue;
            const double h = lane_.height() * w / total;
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
    bool active_ = false;
    double run_x0_ = 0;
    double run_x1_ = 0;
    double run_t1_ = 0;
    double forward_s_ = 0;
    double backward_s_ = 0;
    std::array<double, kCatCount> weight_{};
};

} // namespace

// ---------------------------------------------------------------------------------------------
// The data one frame draws (screen or export)

struct SpanList {
    const std::vector<Span>* spans = nullptr;
    double max_duration_s = 0;
    double wait_s = 0; ///< GPU rows: time spent waiting for the EP group's hottest GPU
};

struct GanttData {
    std::shared_ptr<const Timeline> timeline;
    std::vector<GanttRow> rows;
    std::vector<char> expanded;
    std::vector<char> highlight;
    /// Per simulated row: the longest span (for culling), and per lane (compute, transfers,
    /// gradient sync; laneOf) the critical path's intervals, merged where they touch.
    std::vector<double> row_max_duration;
    using Intervals = std::vector<std::pair<double, double>>;
    std::vector<std::array<Intervals, 3>> critical;
    struct Hop {
        int from_row = 0;
        int to_row = 0;
        double time_s = 0;
    };
    std::vector<Hop> hops;
    double report_step_s = 0;
    bool moe = false;
    int selected_gpu = -1;
    bool show_critical = true;

    struct GpuSpans {
        std::vector<Span> spans;
        double max_duration_s = 0;
        double wait_s = 0;
    };
    /// GPU rows' own schedules, simulated rows adjusted to each GPU's load when first drawn.
    mutable std::unordered_map<int, GpuSpans> gpu_spans;

    double total_s() const {
        const double simulated = timeline != nullptr ? timeline->step_time_s : 0.0;
        return std::max(simulated > 0 ? simulated : report_step_s, 1e-9);
    }

    SpanList spansOf(const GanttRow& row) const {
        if (timeline == nullptr || !timeline->ok())
            return {};
        if (row.level == GanttRow::Level::gpu && moe) {
            auto it = gpu_spans.find(row.gpu);
            if (it == gpu_spans.end()) {
                if (gpu_spans.size() > 512)
                    gpu_spans.clear();
                GpuSpans own;
                own.spans = timeline->spansForGpu(row.gpu);
                for (const Span& s : own.spans) {
                    own.max_duration_s = std::max(own.max_duration_s, s.duration_s());
                    if (s.kind == SpanKind::wait)
                        own.wait_s += s.duration_s();
                }
                it = gpu_spans.emplace(row.gpu, std::move(own)).first;
            }
            return {&it->second.spans, it->second.max_duration_s, it->second.wait_s};
        }
        if (row.timeline_row < 0 || row.timeline_row >= static_cast<int>(timeline->rows.size()))
            return {};
        return {&timeline->rows[static_cast<size_t>(row.timeline_row)].spans,
                row_max_duration[static_cast<size_t>(row.timeline_row)]};
    }

    /// Index of the first span that may end after `time_s`.
    static size_t firstSpan(const SpanList& list, double time_s) {
        const auto& spans = *list.spans;
        const double from = time_s - list.max_duration_s;
        return static_cast<size_t>(
            std::partition_point(spans.begin(), spans.end(),
                                 [&](const Span& s) { return s.start_s < from; }) -
            spans.begin());
    }
};

struct GanttFrame {
    const GanttData* data = nullptr;
    const std::vector<char>* expanded = nullptr;
    std::vector<int> visible;
    std::vector<int> row_top; ///< per visible row, plus the total height at the end
    double scale = 1.0;       ///< row heights (exports fill their page)

    int heightOf(const GanttRow& row) const {
        return static_cast<int>(std::lround(rowHeight(row.level) * scale));
    }

    /// The rows of the expanded tree.
    void build(const GanttData& d, const std::vector<char>& open) {
        data = &d;
        expanded = &open;
        visible.clear();
        for (size_t i = 0; i < d.rows.size();) {
            visible.push_back(static_cast<int>(i));
            const bool group = d.rows[i].level != GanttRow::Level::gpu;
            i = group && open[i] == 0 ? static_cast<size_t>(d.rows[i].subtree_end) : i + 1;
        }
        layout();
    }
    void layout() {
        row_top.resize(visible.size() + 1);
        int y = 0;
        for (size_t i = 0; i < visible.size(); ++i) {
            row_top[i] = y;
            y += heightOf(data->rows[static_cast<size_t>(visible[i])]);
        }
        row_top[visible.size()] = y;
    }
    int totalHeight() const { return row_top.empty() ? 0 : row_top.back(); }
    /// Visible index at content y, or -1.
    int rowAtY(int y) const {
        if (visible.empty() || y < 0 || y >= totalHeight())
            return -1;
        const auto it = std::upper_bound(row_top.begin(), row_top.end() - 1, y);
        return static_cast<int>(it - row_top.begin()) - 1;
    }
};

namespace {

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
/// to another stage's row.
QPen criticalPen(const ChartTheme& theme, bool connector) {
    QPen pen(theme.text, connector ? 1.5 : 2.0, connector ? Qt::DashLine : Qt::SolidLine);
    pen.setJoinStyle(Qt::MiterJoin);
    return pen;
}

QString blockText(int microbatch, bool backward) {
    return QStringLiteral("%1%2")
        .arg(backward ? QLatin1Char('B') : QLatin1Char('F'))
        .arg(microbatch + 1);
}

void paintRowBody(QPainter& p, const GanttRow& row, const QRectF& rect, const GanttTimeAxis& axis,
                  const GanttData& d, const ChartTheme& theme, const QFont& small_font) {
    const SpanList list = d.spansOf(row);
    if (list.spans == nullptr)
        return;
    const Lanes lanes = lanesOf(rect);
    const double t0 = axis.start_s;
    const double t1 = axis.end_s;
    const auto& spans = *list.spans;

    // Micro-batch blocks of the compute lane, for labels.
    struct Block {
        int mb = -1;
        bool backward = false;
        double x0 = 0, x1 = 0;
    };
    std::vector<Block> blocks;
    Block current;
    // Only passes wide enough for a label are kept (measuring text is the expensive part).
    const auto close_block = [&] {
        if (current.mb >= 0 && current.x1 - current.x0 >= 16)
            blocks.push_back(current);
        current = Block{};
    };
    RectBatch base;
    RectBatch overlay;
    {
        Folder compute(base, overlay, lanes.compute, true);
        Folder comm(base, overlay, lanes.comm, false);
        Folder sync(base, overlay, lanes.sync, false);
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
                        current = Block{s.microbatch, s.backward, x0, x1};
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

    // Micro-batch labels where they fit.
    p.setFont(small_font);
    const QFontMetricsF fm(small_font);
    if (lanes.compute.height() >= fm.height() - 3) {
        for (const Block& b : blocks) {
            const QString text = blockText(b.mb, b.backward);
            const double tw = fm.horizontalAdvance(text);
            const double w = b.x1 - b.x0;
            if (w < tw + 10)
                continue;
            const QRectF box(b.x0 + (w - tw) / 2.0 - 2,
                             lanes.compute.top() + (lanes.compute.height() - fm.height()) / 2.0 + 1,
                             tw + 4, fm.height() - 1);
            QColor back = theme.background;
            back.setAlpha(210);
            p.fillRect(box, back);
            p.setPen(theme.text);
            p.drawText(box, Qt::AlignCenter, text);
        }
    }

    // The critical path: one outline around the row's lanes for each stretch of time the path
    // runs through this row (its compute, its transfers and its gradient sync alike: the
    // tooltip names the span), so the spans inside stay readable.
    // Only stage rows carry it: node and GPU rows of the same token stream share the simulated
    // row, and repeating it on each would read as if each of them set the step time.
    if (d.show_critical && row.level == GanttRow::Level::stage && row.timeline_row >= 0 &&
        row.timeline_row < static_cast<int>(d.critical.size())) {
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
        p.setPen(criticalPen(theme, false));
        p.setBrush(Qt::NoBrush);
        const double top = lanes.compute.top() - 2.5;
        const double bottom = lanes.sync.bottom() + 1.5;
        double run_x0 = -1, run_x1 = -1;
        const auto outline = [&] {
            if (run_x0 >= 0)
                p.drawRect(QRectF(run_x0, top, std::max(1.0, run_x1 - run_x0), bottom - top));
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

/// Rows (labels and bodies) from content offset `scroll_y`, inside `rect` (labels on its left).
void paintRows(QPainter& p, const QRect& rect, int scroll_y, int label_width,
               const GanttTimeAxis& axis, const GanttFrame& f, const ChartTheme& theme,
               const QFont& font, const QFont& small_font) {
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
        paintRowBody(p, row, QRectF(body.left(), top, body.width(), h), axis, d, theme, small_font);
        p.restore();

        // Label column.
        const QRect label(rect.left(), top, label_width, h);
        p.fillRect(label, k % 2 == 1 ? theme.lane : theme.background);
        if (selected || highlighted) {
            p.fillRect(label, tint);
            p.fillRect(QRect(label.left(), top, 3, h), theme.accent);
        }
        const int indent = 8 + static_cast<int>(row.level) * kIndent;
        if (row.level != GanttRow::Level::gpu) {
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
        const QRect text_rect(label.left() + indent + 12, top, label_width - indent - 16 - right_w,
                              h);
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
        p.setPen(criticalPen(theme, true));
        for (const GanttData::Hop& hop : d.hops) {
            const double x = axis.mapTimeToX(hop.time_s);
            if (x < body.left() || x > body.right())
                continue;
            const auto a = row_mid.find(hop.from_row);
            const auto b = row_mid.find(hop.to_row);
            if (a == row_mid.end() || b == row_mid.end())
                continue;
            p.drawLine(QPointF(x, a->second), QPointF(x, b->second));
        }
    }
    p.setClipping(false);
    p.setPen(QPen(theme.grid, 1));
    p.drawLine(QPointF(rect.left() + label_width - 0.5, rect.top()),
               QPointF(rect.left() + label_width - 0.5, rect.bottom()));
    p.restore();
}

struct LegendEntry {
    enum class Shape { box, strip, band, critical };
    Shape shape = Shape::box;
    QColor color;
    QColor color2;
    QString text;
};

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
                       theme.text,
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

QString whoOf(const GanttRow& row) {
    // A DualPipe rank runs two stages' chunks: it is named as its row label names it.
    const bool dual = row.partner_stage >= 0;
    const QString stage =
        dual ? QStringLiteral("Rank %1 (stages %1 + %2)").arg(row.stage).arg(row.partner_stage)
             : QStringLiteral("Stage %1").arg(row.stage);
    switch (row.level) {
    case GanttRow::Level::stage:
        return dual ? QStringLiteral("Rank %1 (stages %1 + %2, %3 GPUs)")
                          .arg(row.stage)
                          .arg(row.partner_stage)
                          .arg(row.gpus.size())
                    : QStringLiteral("Stage %1 (%2 GPUs)").arg(row.stage).arg(row.gpus.size());
    case GanttRow::Level::node:
        return QStringLiteral("%1, node %2 (%3 GPUs)")
            .arg(stage)
            .arg(row.node)
            .arg(row.gpus.size());
    case GanttRow::Level::gpu:
        break;
    }
    return QStringLiteral("%1, node %2, GPU %3").arg(stage).arg(row.node).arg(row.gpu);
}

} // namespace

// ---------------------------------------------------------------------------------------------
// The canvas: rows, axis and labels in a scroll area; time is zoomed and panned by hand.

class GanttCanvas : public QAbstractScrollArea {
public:
    explicit GanttCanvas(QWidget* parent)
        : QAbstractScrollArea(parent) {
        setFrameShape(QFrame::NoFrame);
        setFocusPolicy(Qt::StrongFocus);
        viewport()->setMouseTracking(true);
        horizontalScrollBar()->setRange(0, 0);
        connect(horizontalScrollBar(), &QScrollBar::valueChanged, this, [this](int value) {
            if (syncing_)
                return;
            const double total = data.total_s();
            const double span = axis.span_s();
            axis.start_s = std::clamp(value / kBarScale * total, 0.0, std::max(0.0, total - span));
            axis.end_s = axis.start_s + span;
            fitted = false;
            viewport()->update();
        });
        connect(verticalScrollBar(), &QScrollBar::valueChanged, viewport(),
                qOverload<>(&QWidget::update));
    }

    static constexpr double kBarScale = 10000.0;

    GanttData data;
    GanttFrame frame;
    GanttTimeAxis axis;
    bool fitted = true;
    QString message; ///< shown instead of rows (no result, or the simulation failed)
    ViewState* state = nullptr;

    double minSpan() const { return std::max(1e-7, data.total_s() * 1e-6); }
    int chartWidth() const { return std::max(1, viewport()->width() - kLabelWidth - kRightMargin); }

    void relayout() {
        frame.build(data, data.expanded);
        updateBars();
        viewport()->update();
    }

    void updateBars() {
        QScrollBar* v = verticalScrollBar();
        const int page = std::max(1, viewport()->height() - kAxisHeight);
        v->setRange(0, std::max(0, frame.totalHeight() - page));
        v->setPageStep(page);
        v->setSingleStep(20);
        syncHorizontal();
    }

    void syncHorizontal() {
        syncing_ = true;
        QScrollBar* h = horizontalScrollBar();
        const double total = data.total_s();
        const int page = static_cast<int>(std::round(axis.span_s() / total * kBarScale));
        h->setRange(0, std::max(0, static_cast<int>(kBarScale) - page));
        h->setPageStep(std::max(1, page));
        h->setSingleStep(std::max(1, page / 10));
        h->setValue(static_cast<int>(std::round(axis.start_s / total * kBarScale)));
        syncing_ = false;
    }

    void setAxis(const GanttTimeAxis& a) {
        axis = a;
        syncHorizontal();
        viewport()->update();
    }

    void fit() {
        axis = GanttTimeAxis::fit(data.total_s(), kLabelWidth, chartWidth());
        fitted = true;
        syncHorizontal();
        viewport()->update();
    }

    void zoom(double factor, double anchor_x) {
        setAxis(axis.zoomed(factor, anchor_x, data.total_s(), minSpan()));
        fitted = axis.start_s <= 0 && axis.end_s >= data.total_s();
    }

    void pan(double dx) {
        setAxis(axis.panned(dx, data.total_s()));
        fitted = axis.start_s <= 0 && axis.end_s >= data.total_s();
    }

    void toggle(int row) {
        if (row < 0 || row >= static_cast<int>(data.rows.size()) ||
            data.rows[static_cast<size_t>(row)].level == GanttRow::Level::gpu)
            return;
        auto& open = data.expanded[static_cast<size_t>(row)];
        open = open != 0 ? 0 : 1;
        relayout();
    }

    QString toolTip(const QPoint& pos) const;

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(viewport());
        const ChartTheme theme = ChartTheme::fromPalette(palette());
        const QRect all = viewport()->rect();
        p.fillRect(all, theme.background);
        if (!message.isEmpty() || frame.visible.empty()) {
            p.setPen(theme.muted);
            p.drawText(all.adjusted(16, 16, -16, -16), Qt::AlignCenter | Qt::TextWordWrap,
                       message.isEmpty() ? QStringLiteral("No evaluation yet") : message);
            return;
        }
        QFont small = font();
        small.setPointSizeF(std::max(7.0, font().pointSizeF() * 0.9));
        const QRect rows_rect(0, kAxisHeight, all.width(), all.height() - kAxisHeight);
        paintRows(p, rows_rect, verticalScrollBar()->value(), kLabelWidth, axis, frame, theme,
                  font(), small);
        p.save();
        p.setClipRect(
            QRect(kLabelWidth, kAxisHeight, chartWidth() + kRightMargin, rows_rect.height()));
        paintGrid(p,
                  QRect(kLabelWidth, kAxisHeight, chartWidth(),
                        std::min(rows_rect.height(), frame.totalHeight())),
                  axis, data, theme);
        p.restore();
        paintAxis(p, QRect(0, 0, all.width(), kAxisHeight), axis, data, theme, small);
        if (data.moe) {
            p.setPen(theme.muted);
            p.setFont(small);
            p.drawText(QRect(8, 0, kLabelWidth - 16, kAxisHeight - 2),
                       Qt::AlignVCenter | Qt::AlignRight, QStringLiteral("waiting for hot GPU"));
        }
    }

    void resizeEvent(QResizeEvent* event) override {
        QAbstractScrollArea::resizeEvent(event);
        axis = fitted ? GanttTimeAxis::fit(data.total_s(), kLabelWidth, chartWidth())
                      : axis.resized(kLabelWidth, chartWidth());
        updateBars();
    }

    void wheelEvent(QWheelEvent* event) override {
        const QPoint delta = event->angleDelta();
        if (event->modifiers() & Qt::ControlModifier) {
            zoom(std::pow(1.0015, delta.y()), event->position().x());
            event->accept();
            return;
        }
        if ((event->modifiers() & Qt::ShiftModifier) || delta.x() != 0) {
            const int dd = delta.x() != 0 ? delta.x() : delta.y();
            pan(-dd / 120.0 * chartWidth() / 8.0);
            event->accept();
            return;
        }
        QAbstractScrollArea::wheelEvent(event);
    }

    void mousePressEvent(QMouseEvent* event) override {
        const QPoint pos = event->position().toPoint();
        const int k = frame.rowAtY(pos.y() - kAxisHeight + verticalScrollBar()->value());
        if (event->button() == Qt::LeftButton && pos.y() >= kAxisHeight && k >= 0 &&
            pos.x() < kLabelWidth) {
            const int row = frame.visible[static_cast<size_t>(k)];
            const GanttRow& r = data.rows[static_cast<size_t>(row)];
            if (r.level != GanttRow::Level::gpu)
                toggle(row);
            else if (state != nullptr)
                state->setSelectedGpu(r.gpu);
            return;
        }
        if (event->button() == Qt::LeftButton || event->button() == Qt::MiddleButton) {
            dragging_ = true;
            drag_origin_ = pos;
            drag_axis_ = axis;
            drag_scroll_ = verticalScrollBar()->value();
            viewport()->setCursor(Qt::ClosedHandCursor);
        }
    }

    void mouseMoveEvent(QMouseEvent* event) override {
        if (!dragging_)
            return;
        const QPoint delta = event->position().toPoint() - drag_origin_;
        setAxis(drag_axis_.panned(-delta.x(), data.total_s()));
        fitted = axis.start_s <= 0 && axis.end_s >= data.total_s();
        verticalScrollBar()->setValue(drag_scroll_ - delta.y());
    }

    void mouseReleaseEvent(QMouseEvent*) override {
        dragging_ = false;
        viewport()->unsetCursor();
    }

    void mouseDoubleClickEvent(QMouseEvent* event) override {
        if (event->position().x() >= kLabelWidth)
            fit();
    }

    void keyPressEvent(QKeyEvent* event) override {
        const double mid = kLabelWidth + chartWidth() / 2.0;
        switch (event->key()) {
        case Qt::Key_Plus:
        case Qt::Key_Equal:
            zoom(1.5, mid);
            return;
        case Qt::Key_Minus:
            zoom(1 / 1.5, mid);
            return;
        case Qt::Key_0:
            fit();
            return;
        case Qt::Key_Left:
            pan(-chartWidth() / 8.0);
            return;
        case Qt::Key_Right:
            pan(chartWidth() / 8.0);
            return;
        default:
            QAbstractScrollArea::keyPressEvent(event);
        }
    }

    bool viewportEvent(QEvent* event) override {
        if (event->type() == QEvent::ToolTip) {
            auto* help = static_cast<QHelpEvent*>(event);
            const QString text = toolTip(help->pos());
            if (text.isEmpty())
                QToolTip::hideText();
            else
                QToolTip::showText(help->globalPos(), text, viewport());
            return true;
        }
        return QAbstractScrollArea::viewportEvent(event);
    }

private:
    bool syncing_ = false;
    bool dragging_ = false;
    QPoint drag_origin_;
    GanttTimeAxis drag_axis_;
    int drag_scroll_ = 0;
};

QString GanttCanvas::toolTip(const QPoint& pos) const {
    if (pos.y() < kAxisHeight || !message.isEmpty())
        return {};
    const int content_y = pos.y() - kAxisHeight + verticalScrollBar()->value();
    const int k = frame.rowAtY(content_y);
    if (k < 0)
        return {};
    const int index = frame.visible[static_cast<size_t>(k)];
    const GanttRow& row = data.rows[static_cast<size_t>(index)];
    const QString who = whoOf(row);
    if (pos.x() < kLabelWidth) {
        QString text = QStringLiteral("<b>%1</b>").arg(who);
        if (data.moe)
            text += QStringLiteral("<br>Expert tokens: %1× the mean of its EP group%2")
                        .arg(row.expert_ratio, 0, 'f', 2)
                        .arg(row.hottest ? QStringLiteral(" — holds the hottest GPU") : QString());
        if (row.level != GanttRow::Level::gpu) {
            text += QStringLiteral("<br>Shows the simulated schedule of its token stream");
            text +=
                QStringLiteral("<br><i>Click to %1</i>")
                    .arg(data.expanded[static_cast<size_t>(index)] != 0 ? QStringLiteral("collapse")
                                                                        : QStringLiteral("expand"));
        } else {
            text += QStringLiteral("<br><i>Click to select this GPU in every view</i>");
        }
        return text;
    }
    const SpanList list = data.spansOf(row);
    if (list.spans == nullptr)
        return {};
    const double t = axis.mapXToTime(pos.x());
    const double px = axis.span_s() / std::max(1.0, axis.width); // seconds per pixel
    const Lanes lanes =
        lanesOf(QRectF(0, frame.row_top[static_cast<size_t>(k)], 1, frame.heightOf(row)));
    const int lane = content_y >= lanes.sync.top() - 0.5   ? 2
                     : content_y >= lanes.comm.top() - 0.5 ? 1
                                                           : 0;
    const auto times = [](double a, double b) {
        return QStringLiteral("%1 → %2 (%3)")
            .arg(formatDuration(a), formatDuration(b), formatDuration(b - a));
    };
    const auto describe = [&](const Span& s) {
        QString text = QStringLiteral("<span style=\"background:%1\">&nbsp;&nbsp;&nbsp;</span> "
                                      "<b>%2</b>")
                           .arg(spanColor(s.kind).name(), spanName(s.kind));
        if (s.microbatch >= 0)
            text += QStringLiteral(" · %1 · micro-batch %2")
                        .arg(s.backward ? QStringLiteral("backward") : QStringLiteral("forward"))
                        .arg(s.microbatch + 1);
        if (s.layer >= 0)
            text += QStringLiteral(" · layer %1").arg(s.layer);
        text += QStringLiteral("<br>&nbsp;&nbsp;&nbsp;&nbsp;") + times(s.start_s, s.end_s);
        if (s.bytes > 0)
            text += QStringLiteral(" · %1 per GPU · %2")
                        .arg(formatBytes(s.bytes), QString::fromUtf8(toString(s.stream)));
        return text;
    };

    // Nearest span of the lane within a pixel or two of the cursor.
    const Span* hit = nullptr;
    double best = 3 * px;
    const auto& spans = *list.spans;
    for (size_t i = GanttData::firstSpan(list, t - 3 * px); i < spans.size(); ++i) {
        const Span& s = spans[i];
        if (s.start_s > t + 3 * px)
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
    QString text = QStringLiteral("<b>%1</b><br>").arg(who);
    if (hit == nullptr) {
        if (lane != 0 || t < 0 || data.timeline == nullptr || t > data.timeline->step_time_s)
            return {};
        double prev = 0, next = data.timeline->step_time_s;
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
        return text + QStringLiteral("Compute idle %1<br>waiting for input: a neighbour "
                                     "stage's send or the all-to-all")
                          .arg(times(prev, next));
    }
    text += describe(*hit);
    // The whole micro-batch pass on this row, by kind.
    if (hit->microbatch >= 0) {
        std::array<double, kSpanKindCount> by_kind{};
        double first = hit->start_s, last = hit->end_s;
        for (const Span& s : spans)
            if (s.microbatch == hit->microbatch && s.backward == hit->backward &&
                laneOf(s.stream) != 2) {
                by_kind[static_cast<size_t>(s.kind)] += s.duration_s();
                first = std::min(first, s.start_s);
                last = std::max(last, s.end_s);
            }
        text += QStringLiteral("<br><br><b>%1 of micro-batch %2</b> on this row: %3"
                               "<table cellspacing=0 cellpadding=1>")
                    .arg(hit->backward ? QStringLiteral("Backward") : QStringLiteral("Forward"))
                    .arg(hit->microbatch + 1)
                    .arg(times(first, last));
        for (int c = 0; c < kSpanKindCount; ++c) {
            if (by_kind[static_cast<size_t>(c)] <= 0)
                continue;
            const auto kind = static_cast<SpanKind>(c);
            text += QStringLiteral("<tr><td><span style=\"background:%1\">&nbsp;&nbsp;&nbsp;"
                                   "</span></td><td>%2</td><td align=right>&nbsp;%3</td></tr>")
                        .arg(spanColor(kind).name(), spanName(kind),
                             formatDuration(by_kind[static_cast<size_t>(c)]));
        }
        text += QStringLiteral("</table>");
    }
    if (row.timeline_row >= 0 && row.timeline_row < static_cast<int>(data.critical.size())) {
        const auto& intervals = data.critical[static_cast<size_t>(row.timeline_row)]
                                             [static_cast<size_t>(laneOf(hit->stream))];
        const auto it = std::partition_point(
            intervals.begin(), intervals.end(),
            [&](const std::pair<double, double>& iv) { return iv.second < hit->start_s + 1e-12; });
        if (it != intervals.end() && it->first <= hit->start_s + 1e-12)
            text += QStringLiteral("<br><b>On the critical path</b>");
    }
    if (hit->duration_s() < 2 * px)
        text += QStringLiteral("<br><i>Zoom in (Ctrl+wheel, +) to see each span</i>");
    return text;
}

/// The legend under the chart, laid out and painted like the export's.
class GanttLegend : public QWidget {
public:
    explicit GanttLegend(QWidget* parent)
        : QWidget(parent) {
        setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    }
    void setEntries(std::vector<LegendEntry> entries) {
        entries_ = std::move(entries);
        updateGeometry();
        update();
    }
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override {
        if (entries_.empty())
            return 0;
        return layoutLegend(nullptr, QRect(8, 2, width - 16, 0), entries_,
                            ChartTheme::fromPalette(palette()), font()) +
               4;
    }
    QSize sizeHint() const override { return {400, heightForWidth(std::max(400, width()))}; }
    QSize minimumSizeHint() const override { return {100, heightForWidth(std::max(100, width()))}; }

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        const ChartTheme theme = ChartTheme::fromPalette(palette());
        p.fillRect(rect(), theme.background);
        layoutLegend(&p, QRect(8, 2, width() - 16, height()), entries_, theme, font());
    }
    void resizeEvent(QResizeEvent* event) override {
        QWidget::resizeEvent(event);
        if (height() != heightForWidth(width()))
            updateGeometry();
    }

private:
    std::vector<LegendEntry> entries_;
};

// ---------------------------------------------------------------------------------------------
// GanttView

GanttView::GanttView(ScenarioDocument* document, ViewState* state, QWidget* parent)
    : QWidget(parent)
    , document_(document)
    , state_(state)
    , canvas_(new GanttCanvas(this))
    , caption_(new QLabel(this))
    , legend_(new GanttLegend(this))
    , critical_button_(new QToolButton(this)) {
    setObjectName(QStringLiteral("gantt"));
    canvas_->state = state;
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    auto* bar = new QHBoxLayout();
    bar->setContentsMargins(6, 4, 6, 0);
    const auto button = [&](const QString& text, const QString& tip, auto slot) {
        auto* b = new QToolButton(this);
        b->setText(text);
        b->setToolTip(tip);
        b->setAutoRaise(true);
        connect(b, &QToolButton::clicked, this, slot);
        bar->addWidget(b);
        return b;
    };
    button(tr("Fit"), tr("Show the whole step (0, or double-click)"), [this] { fitTime(); });
    button(tr("−"), tr("Zoom out on time (−, Ctrl+wheel)"),
           [this] { zoomTime(1 / 1.5, kLabelWidth + canvas_->chartWidth() / 2.0); });
    button(tr("+"), tr("Zoom in on time (+, Ctrl+wheel); drag or Shift+wheel to pan"),
           [this] { zoomTime(1.5, kLabelWidth + canvas_->chartWidth() / 2.0); });
    button(tr("Expand all"), tr("A row per GPU"), [this] { expandAll(); });
    button(tr("Collapse all"), tr("A row per pipeline stage"), [this] { collapseAll(); });
    critical_button_->setText(tr("Critical path"));
    critical_button_->setToolTip(tr("Mark the chain of work that sets the step time"));
    critical_button_->setCheckable(true);
    critical_button_->setChecked(true);
    critical_button_->setAutoRaise(true);
    connect(critical_button_, &QToolButton::toggled, this,
            [this](bool on) { setShowCriticalPath(on); });
    bar->addWidget(critical_button_);
    bar->addSpacing(12);
    caption_->setObjectName(QStringLiteral("ganttCaption"));
    caption_->setTextFormat(Qt::PlainText);
    caption_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    bar->addWidget(caption_, 1);
    layout->addLayout(bar);
    layout->addWidget(canvas_, 1);
    layout->addWidget(legend_);
    canvas_->message = tr("No evaluation yet");

    if (state_ != nullptr) {
        connect(state_, &ViewState::highlightChanged, this, &GanttView::applyHighlight);
        connect(state_, &ViewState::selectedGpuChanged, this, [this](int gpu) {
            canvas_->data.selected_gpu = gpu;
            if (gpu >= 0)
                revealGpu(gpu);
            canvas_->viewport()->update();
        });
    }
}

GanttView::~GanttView() = default;

const Timeline* GanttView::timeline() const {
    return canvas_->data.timeline.get();
}
const std::vector<GanttRow>& GanttView::rows() const {
    return canvas_->data.rows;
}
const std::vector<int>& GanttView::visibleRows() const {
    return canvas_->frame.visible;
}
const GanttTimeAxis& GanttView::timeAxis() const {
    return canvas_->axis;
}
QWidget* GanttView::canvas() const {
    return canvas_->viewport();
}
QString GanttView::toolTipAt(const QPoint& canvas_pos) const {
    return canvas_->toolTip(canvas_pos);
}

bool GanttView::isExpanded(int row) const {
    return row >= 0 && row < static_cast<int>(canvas_->data.expanded.size()) &&
           canvas_->data.expanded[static_cast<size_t>(row)] != 0;
}

void GanttView::setExpanded(int row, bool expanded) {
    if (row < 0 || row >= static_cast<int>(canvas_->data.expanded.size()))
        return;
    canvas_->data.expanded[static_cast<size_t>(row)] = expanded ? 1 : 0;
    canvas_->relayout();
}

void GanttView::expandAll() {
    std::fill(canvas_->data.expanded.begin(), canvas_->data.expanded.end(), 1);
    canvas_->relayout();
}

void GanttView::collapseAll() {
    std::fill(canvas_->data.expanded.begin(), canvas_->data.expanded.end(), 0);
    canvas_->relayout();
}

int GanttView::revealGpu(int gpu) {
    auto& rows = canvas_->data.rows;
    int found = -1;
    for (size_t r = 0; r < rows.size(); ++r) {
        const GanttRow& row = rows[r];
        const bool holds = std::find(row.gpus.begin(), row.gpus.end(), gpu) != row.gpus.end();
        if (!holds) {
            if (row.level != GanttRow::Level::gpu)
                r = static_cast<size_t>(row.subtree_end) - 1; // skip its subtree
            continue;
        }
        if (row.level == GanttRow::Level::gpu) {
            found = static_cast<int>(r);
            break;
        }
        canvas_->data.expanded[r] = 1;
    }
    canvas_->relayout();
    if (found >= 0) {
        const auto& visible = canvas_->frame.visible;
        const auto it = std::find(visible.begin(), visible.end(), found);
        if (it != visible.end()) {
            const int y = canvas_->frame.row_top[static_cast<size_t>(it - visible.begin())];
            canvas_->verticalScrollBar()->setValue(
                std::max(0, y - canvas_->viewport()->height() / 3));
        }
    }
    return found;
}

void GanttView::zoomTime(double factor, double anchor_x) {
    canvas_->zoom(factor, anchor_x);
}
void GanttView::fitTime() {
    canvas_->fit();
}

void GanttView::setShowCriticalPath(bool show) {
    canvas_->data.show_critical = show;
    if (critical_button_->isChecked() != show)
        critical_button_->setChecked(show);
    canvas_->viewport()->update();
}

void GanttView::applyHighlight() {
    GanttData& d = canvas_->data;
    d.highlight.assign(d.rows.size(), 0);
    if (state_ != nullptr && !state_->highlightedGpus().isEmpty()) {
        const std::set<int> on(state_->highlightedGpus().begin(), state_->highlightedGpus().end());
        for (size_t r = 0; r < d.rows.size(); ++r)
            for (const int g : d.rows[r].gpus)
                if (on.count(g) != 0) {
                    d.highlight[r] = 1;
                    break;
                }
    }
    canvas_->viewport()->update();
}

void GanttView::showResult(const EvaluationResultPtr& result) {
    if (result == nullptr)
        return;
    GanttData& d = canvas_->data;
    const bool same_shape =
        result_ != nullptr && result_->report.gpus == result->report.gpus &&
        result_->report.stages.size() == result->report.stages.size() &&
        result_->scenario.cluster.gpus_per_node == result->scenario.cluster.gpus_per_node;
    // Keep what the user opened when only numbers changed (a live edit).
    std::set<std::tuple<int, int, int>> keep;
    if (same_shape)
        for (size_t r = 0; r < d.rows.size(); ++r)
            if (d.expanded[r] != 0)
                keep.emplace(static_cast<int>(d.rows[r].level), d.rows[r].stage, d.rows[r].node);
    result_ = result;
    d.timeline =
        result->timeline != nullptr
            ? result->timeline
            : std::make_shared<const Timeline>(simulateTimeline(result->scenario, result->report));
    d.report_step_s = result->report.step_time_s;
    d.moe = result->scenario.model.isMoe();
    d.gpu_spans.clear();
    const Timeline& tl = *d.timeline;

    // Per simulated row: the longest span (culling), the critical intervals, and the hops.
    d.row_max_duration.assign(tl.rows.size(), 0.0);
    for (size_t r = 0; r < tl.rows.size(); ++r)
        for (const Span& s : tl.rows[r].spans)
            d.row_max_duration[r] = std::max(d.row_max_duration[r], s.duration_s());
    d.critical.assign(tl.rows.size(), {});
    d.hops.clear();
    int previous_row = -1;
    for (const CriticalStep& step : tl.critical_path) {
        if (step.row < 0 || step.row >= static_cast<int>(tl.rows.size()) || step.span < 0 ||
            step.span >= static_cast<int>(tl.rows[static_cast<size_t>(step.row)].spans.size()))
            continue;
        const Span& s =
            tl.rows[static_cast<size_t>(step.row)].spans[static_cast<size_t>(step.span)];
        auto& intervals =
            d.critical[static_cast<size_t>(step.row)][static_cast<size_t>(laneOf(s.stream))];
        if (!intervals.empty() && s.start_s <= intervals.back().second + 1e-12)
            intervals.back().second = std::max(intervals.back().second, s.end_s);
        else
            intervals.emplace_back(s.start_s, s.end_s);
        if (previous_row >= 0 && previous_row != step.row)
            d.hops.push_back({previous_row, step.row, s.start_s});
        previous_row = step.row;
    }
    for (auto& lanes : d.critical)
        for (auto& intervals : lanes)
            std::sort(intervals.begin(), intervals.end());

    canvas_->message =
        tl.ok() ? QString()
                : tr("The step could not be simulated: %1").arg(QString::fromStdString(tl.error));
    rebuildRows();
    if (same_shape)
        for (size_t r = 0; r < d.rows.size(); ++r)
            d.expanded[r] =
                keep.count({static_cast<int>(d.rows[r].level), d.rows[r].stage, d.rows[r].node})
                    ? 1
                    : 0;
    if (state_ != nullptr)
        d.selected_gpu = state_->selectedGpu();
    applyHighlight();
    canvas_->relayout();
    if (canvas_->fitted || !same_shape)
        canvas_->fit();
    else
        canvas_->setAxis(
            canvas_->axis.zoomed(1.0, canvas_->axis.x0, d.total_s(), canvas_->minSpan()));
    updateCaption();
    legend_->setEntries(legendEntries(d, ChartTheme::fromPalette(palette())));
    layout()->activate(); // the legend's height follows its entries before the next paint
}

void GanttView::rebuildRows() {
    GanttData& d = canvas_->data;
    auto& rows = d.rows;
    rows.clear();
    const Report& report = result_->report;
    const Scenario& scenario = result_->scenario;
    const Timeline& tl = *d.timeline;
    const Placement* placement = report.placement.get();
    const int gpus = report.gpus;
    const int stages = std::max(1, static_cast<int>(report.stages.size()));
    const int per_node = std::max(1, report.graph != nullptr ? report.graph->gpus_per_node
                                                             : scenario.cluster.gpus_per_node);
    const int hottest = d.moe && placement != nullptr ? report.load.hottestGpu(*placement) : -1;

    // Expert tokens of each GPU over its stage's MoE layers, relative to the EP-group mean.
    std::vector<int> stage_of(static_cast<size_t>(std::max(0, gpus)), 0);
    std::vector<double> ratio(static_cast<size_t>(std::max(0, gpus)), 1.0);
    const ExpertLoad& load = report.load;
    const double mean_rank = load.ep > 0 ? load.slots_per_group / load.ep : 0.0;
    std::vector<std::vector<int>> moe_layers(static_cast<size_t>(stages));
    for (size_t s = 0; s < report.stages.size(); ++s)
        for (const int layer : report.stages[s].layers.layer_indices) {
            const int moe_layer = layer - scenario.model.dense_layers;
            if (d.moe && moe_layer >= 0 && moe_layer < load.moe_layers)
                moe_layers[s].push_back(moe_layer);
        }
    // A DualPipe rank runs stage s's chunk in one direction and stage pp-1-s's in the other:
    // its row shows both, and its GPUs' load covers both chunks' MoE layers.
    const bool dual = scenario.layout.schedule == PipelineSchedule::dualpipe && stages > 1;
    const auto partnerOf = [&](int stage) { return dual ? stages - 1 - stage : stage; };
    if (dual)
        for (int s = 0; s < stages / 2; ++s) {
            auto& mine = moe_layers[static_cast<size_t>(s)];
            auto& theirs = moe_layers[static_cast<size_t>(partnerOf(s))];
            const std::vector<int> own = mine;
            mine.insert(mine.end(), theirs.begin(), theirs.end());
            theirs.insert(theirs.begin(), own.begin(), own.end());
        }
    for (int g = 0; g < gpus; ++g) {
        const int s = placement != nullptr && g < static_cast<int>(placement->coords.size())
                          ? std::clamp(placement->coords[static_cast<size_t>(g)].pp, 0, stages - 1)
                          : 0;
        stage_of[static_cast<size_t>(g)] = s;
        const auto& layers = moe_layers[static_cast<size_t>(s)];
        if (placement == nullptr || layers.empty() || mean_rank <= 0)
            continue;
        double own = 0;
        for (const int layer : layers)
            own += load.gpuTokens(*placement, g, layer);
        ratio[static_cast<size_t>(g)] = own / (mean_rank * static_cast<double>(layers.size()));
    }

    // The simulated row a stage row shows: its token stream with the most critical-path time.
    std::vector<int> stage_row(static_cast<size_t>(stages), -1);
    if (tl.ok()) {
        std::vector<double> critical_s(tl.rows.size(), 0.0);
        for (size_t r = 0; r < tl.rows.size(); ++r)
            for (const auto& intervals : d.critical[r])
                for (const auto& [a, b] : intervals)
                    critical_s[r] += b - a;
        for (size_t r = 0; r < tl.rows.size(); ++r) {
            const int s = tl.rows[r].stage;
            if (s < 0 || s >= stages)
                continue;
            int& best = stage_row[static_cast<size_t>(s)];
            if (best < 0 || critical_s[r] > critical_s[static_cast<size_t>(best)])
                best = static_cast<int>(r);
        }
    }

    std::vector<std::vector<int>> members(static_cast<size_t>(stages));
    for (int g = 0; g < gpus; ++g)
        members[static_cast<size_t>(stage_of[static_cast<size_t>(g)])].push_back(g);
    const auto mean_ratio = [&](const std::vector<int>& list) {
        double sum = 0;
        for (const int g : list)
            sum += ratio[static_cast<size_t>(g)];
        return list.empty() ? 1.0 : sum / static_cast<double>(list.size());
    };
    const auto holds_hottest = [&](const std::vector<int>& list) {
        return std::find(list.begin(), list.end(), hottest) != list.end();
    };
    const auto range_text = [](const std::vector<int>& list) {
        if (list.size() == 1)
            return QStringLiteral("GPU %1").arg(list.front());
        const bool contiguous = list.back() - list.front() + 1 == static_cast<int>(list.size());
        return contiguous ? QStringLiteral("GPUs %1–%2").arg(list.front()).arg(list.back())
                          : QStringLiteral("%1 GPUs").arg(list.size());
    };
    const auto row_of_gpu = [&](int g) { return tl.ok() ? tl.rowOfGpu(g) : -1; };

    for (int s = 0; s < stages; ++s) {
        const std::vector<int>& list = members[static_cast<size_t>(s)];
        const size_t stage_index = rows.size();
        GanttRow stage;
        stage.level = GanttRow::Level::stage;
        stage.stage = s;
        stage.partner_stage = dual ? partnerOf(s) : -1;
        stage.gpus = list;
        stage.timeline_row = stage_row[static_cast<size_t>(s)];
        stage.expert_ratio = mean_ratio(list);
        stage.hottest = holds_hottest(list);
        if (dual) {
            // Both chunks' layer ranges would not fit the label column; the stages name them.
            stage.label = QStringLiteral("Rank %1 · stages %1 + %2").arg(s).arg(partnerOf(s));
        } else {
            QString layers;
            if (s < static_cast<int>(report.stages.size())) {
                const auto& idx = report.stages[static_cast<size_t>(s)].layers.layer_indices;
                if (!idx.empty()) {
                    const auto [lo, hi] = std::minmax_element(idx.begin(), idx.end());
                    layers = *hi - *lo + 1 == static_cast<int>(idx.size())
                                 ? QStringLiteral(" · layers %1–%2").arg(*lo).arg(*hi)
                                 : QStringLiteral(" · %1 layers").arg(idx.size());
                }
            }
            stage.label = QStringLiteral("Stage %1%2").arg(s).arg(layers);
        }
        rows.push_back(std::move(stage));
        for (size_t i = 0; i < list.size();) {
            const int node = list[i] / per_node;
            std::vector<int> in_node;
            while (i < list.size() && list[i] / per_node == node)
                in_node.push_back(list[i++]);
            GanttRow node_row;
            node_row.level = GanttRow::Level::node;
            node_row.stage = s;
            node_row.partner_stage = rows[stage_index].partner_stage;
            node_row.node = node;
            node_row.timeline_row = row_of_gpu(in_node.front());
            node_row.expert_ratio = mean_ratio(in_node);
            node_row.hottest = holds_hottest(in_node);
            node_row.label = QStringLiteral("Node %1 · %2").arg(node).arg(range_text(in_node));
            node_row.gpus = in_node;
            const size_t node_index = rows.size();
            rows.push_back(std::move(node_row));
            for (const int g : in_node) {
                GanttRow gpu_row;
                gpu_row.level = GanttRow::Level::gpu;
                gpu_row.stage = s;
                gpu_row.partner_stage = rows[stage_index].partner_stage;
                gpu_row.node = node;
                gpu_row.gpu = g;
                gpu_row.gpus = {g};
                gpu_row.timeline_row = row_of_gpu(g);
                gpu_row.expert_ratio = ratio[static_cast<size_t>(g)];
                gpu_row.hottest = g == hottest;
                gpu_row.label = g == hottest ? QStringLiteral("GPU %1 · hottest").arg(g)
                                             : QStringLiteral("GPU %1").arg(g);
                gpu_row.subtree_end = static_cast<int>(rows.size()) + 1;
                rows.push_back(std::move(gpu_row));
            }
            rows[node_index].subtree_end = static_cast<int>(rows.size());
        }
        rows[stage_index].subtree_end = static_cast<int>(rows.size());
    }

    // Opened by default: the stage holding the hottest GPU (else the first) down to its nodes,
    // and the node holding it down to its GPUs, so the hot GPU and its waiting peers show.
    d.expanded.assign(rows.size(), 0);
    d.highlight.assign(rows.size(), 0);
    const auto pick = [&](size_t from, size_t to, GanttRow::Level level) {
        int chosen = -1;
        for (size_t r = from; r < to; ++r) {
            if (rows[r].level != level)
                continue;
            if (chosen < 0 || (rows[r].hottest && !rows[static_cast<size_t>(chosen)].hottest))
                chosen = static_cast<int>(r);
        }
        return chosen;
    };
    const int open_stage = pick(0, rows.size(), GanttRow::Level::stage);
    if (open_stage >= 0) {
        d.expanded[static_cast<size_t>(open_stage)] = 1;
        const int open_node =
            pick(static_cast<size_t>(open_stage) + 1,
                 static_cast<size_t>(rows[static_cast<size_t>(open_stage)].subtree_end),
                 GanttRow::Level::node);
        if (open_node >= 0)
            d.expanded[static_cast<size_t>(open_node)] = 1;
    }
}

void GanttView::updateCaption() {
    const GanttData& d = canvas_->data;
    if (d.timeline == nullptr || !d.timeline->ok()) {
        caption_->setText(canvas_->message);
        return;
    }
    const Timeline& tl = *d.timeline;
    // One step time: the simulated one, which the chart draws. Its breakdown and evaluate()'s
    // are the same accounting; how close the closed form comes is in the tooltip.
    QString text = tr("Simulated step %1").arg(formatDuration(tl.step_time_s));
    const auto count = [](int n, const QString& one, const QString& many) {
        return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many);
    };
    text += QStringLiteral(" · %1 × %2 · %3")
                .arg(count(tl.stages, tr("stage"), tr("stages")),
                     count(tl.lanes, tr("token stream"), tr("token streams")),
                     count(tl.micro_batches, tr("micro-batch"), tr("micro-batches")));
    caption_->setText(text);
    QString tip =
        text + QStringLiteral("\n") +
        tr("%1 spans simulated").arg(QLocale().toString(static_cast<qulonglong>(tl.spanCount())));
    if (d.report_step_s > 0 && tl.step_time_s > 0)
        tip += QStringLiteral("\n") +
               tr("evaluate()'s closed form: %1 (%2% from the simulation); both break the step "
                  "down the same way")
                   .arg(formatDuration(d.report_step_s))
                   .arg((d.report_step_s / tl.step_time_s - 1) * 100, 0, 'f', 1);
    caption_->setToolTip(tip);
}

QString GanttView::exportTo(const QString& path) {
    if (result_ == nullptr)
        return tr("nothing to export: no evaluation yet");
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != QLatin1String("svg") && suffix != QLatin1String("png") &&
        suffix != QLatin1String("pdf"))
        return tr("unknown export format \"%1\" (use .svg, .png or .pdf)").arg(suffix);

    const ChartTheme theme = ChartTheme::light();
    const GanttData& d = canvas_->data;
    constexpr int kWidth = 1600;
    constexpr int kMargin = 32;
    constexpr int kExportLabelWidth = 260;
    QFont base = font();
    base.setFamily(QStringLiteral("DejaVu Sans"));
    base.setPixelSize(14);
    QFont small = base;
    small.setPixelSize(12);
    QFont title_font = base;
    title_font.setPixelSize(24);
    title_font.setBold(true);
    QFont subtitle_font = base;
    subtitle_font.setPixelSize(15);

    // The rows as on screen when they fit a slide; otherwise every stage, and under the stage of
    // the hottest GPU only that GPU's node and its GPUs (the hot GPU beside its waiting peers).
    std::vector<char> open = d.expanded;
    GanttFrame frame;
    frame.build(d, open);
    if (frame.totalHeight() > 900) {
        frame.visible.clear();
        for (size_t r = 0; r < d.rows.size(); ++r) {
            const GanttRow& row = d.rows[r];
            open[r] = row.hottest && row.level != GanttRow::Level::gpu ? 1 : 0;
            if (row.level == GanttRow::Level::stage) {
                frame.visible.push_back(static_cast<int>(r));
            } else if (row.level == GanttRow::Level::node && row.hottest) {
                for (int c = static_cast<int>(r); c < row.subtree_end; ++c)
                    frame.visible.push_back(c);
            }
        }
        frame.layout();
    }
    const std::vector<LegendEntry> legend = legendEntries(d, theme);
    const int chart_w = kWidth - 2 * kMargin;
    const int legend_h = layoutLegend(nullptr, QRect(kMargin, 0, chart_w, 0), legend, theme, base);
    const int header_h = 100;
    const int footer_h = 28;
    const int chrome_h = kMargin + header_h + kAxisHeight + 18 + legend_h + footer_h + kMargin;
    // Short charts open more groups while they fit (stages first, then nodes), then grow their
    // rows (up to 1.5x) to fill the slide instead of leaving it blank.
    if (canvas_->message.isEmpty() && chrome_h + frame.totalHeight() < 900) {
        for (size_t k = 0; k < frame.visible.size(); ++k) {
            const auto r = static_cast<size_t>(frame.visible[k]);
            if (d.rows[r].level == GanttRow::Level::gpu || open[r] != 0)
                continue;
            open[r] = 1;
            GanttFrame bigger;
            bigger.build(d, open);
            if (chrome_h + bigger.totalHeight() <= 900)
                frame = std::move(bigger);
            else
                open[r] = 0;
        }
        frame.expanded = &open;
    }
    if (canvas_->message.isEmpty() && frame.totalHeight() > 0 &&
        chrome_h + frame.totalHeight() < 900) {
        frame.scale = std::min(1.5, (900.0 - chrome_h) / frame.totalHeight());
        frame.layout();
    }
    const int rows_h = canvas_->message.isEmpty() ? frame.totalHeight() : 200;
    const int height = std::max(900, chrome_h + rows_h);

    const auto paint = [&](QPainter& p) {
        p.setRenderHint(QPainter::TextAntialiasing, true);
        p.fillRect(QRect(0, 0, kWidth, height), theme.background);
        const Scenario& sc = result_->scenario;
        const Report& rep = result_->report;
        p.setPen(theme.text);
        p.setFont(title_font);
        p.drawText(QRect(kMargin, kMargin, chart_w, 32), Qt::AlignLeft | Qt::AlignTop,
                   tr("Step timeline — %1").arg(QString::fromStdString(sc.name)));
        p.setFont(subtitle_font);
        p.drawText(QRect(kMargin, kMargin + 38, chart_w, 22), Qt::AlignLeft | Qt::AlignTop,
                   tr("%1 × %2 · %3 · %4 micro-batches per step · MFU %5%")
                       .arg(rep.gpus)
                       .arg(QString::fromStdString(sc.cluster.gpu.name))
                       .arg(layoutSummary(sc))
                       .arg(rep.micro_batches)
                       .arg(rep.throughput.mfu * 100, 0, 'f', 1));
        p.setFont(small);
        p.setPen(theme.muted);
        p.drawText(QRect(kMargin, kMargin + 64, chart_w, 20), Qt::AlignLeft | Qt::AlignTop,
                   caption_->text());

        const int chart_top = kMargin + header_h;
        const GanttTimeAxis axis =
            (canvas_->fitted ? GanttTimeAxis::fit(d.total_s(), 0, 1) : canvas_->axis)
                .resized(kMargin + kExportLabelWidth, chart_w - kExportLabelWidth - 10);
        const QRect rows_rect(kMargin, chart_top + kAxisHeight, chart_w, rows_h);
        if (!canvas_->message.isEmpty()) {
            p.setPen(theme.danger);
            p.setFont(base);
            p.drawText(rows_rect, Qt::AlignCenter | Qt::TextWordWrap, canvas_->message);
        } else {
            if (d.moe) {
                p.setFont(small);
                p.setPen(theme.muted);
                p.drawText(QRect(kMargin + 8, chart_top, kExportLabelWidth - 16, kAxisHeight - 2),
                           Qt::AlignVCenter | Qt::AlignRight, tr("waiting for hot GPU"));
            }
            paintAxis(p,
                      QRect(kMargin + kExportLabelWidth, chart_top, chart_w - kExportLabelWidth,
                            kAxisHeight),
                      axis, d, theme, small);
            paintRows(p, rows_rect, 0, kExportLabelWidth, axis, frame, theme, base, small);
            p.save();
            const QRect grid(kMargin + kExportLabelWidth, rows_rect.top(),
                             chart_w - kExportLabelWidth, rows_h);
            p.setClipRect(grid);
            paintGrid(p, grid, axis, d, theme);
            p.restore();
        }
        p.setPen(QPen(theme.grid, 1));
        p.drawLine(QPoint(kMargin, rows_rect.bottom() + 1),
                   QPoint(kMargin + chart_w, rows_rect.bottom() + 1));
        layoutLegend(&p, QRect(kMargin, rows_rect.bottom() + 18, chart_w, legend_h), legend, theme,
                     base);
        p.setFont(small);
        p.setPen(theme.muted);
        p.drawText(QRect(kMargin, height - kMargin - 18, chart_w, 18), Qt::AlignLeft,
                   tr("Rows: pipeline stage › node › GPU. Under each row: the communication lane "
                      "(all-to-all, TP, CP, PP) and the gradient-sync lane. Folded bands: colours "
                      "= what the time went to, height = how busy."));
        p.drawText(QRect(kMargin, height - kMargin - 18, chart_w, 18), Qt::AlignRight,
                   QStringLiteral("MoE Planner"));
    };

    const QString title =
        tr("Step timeline — %1").arg(QString::fromStdString(result_->scenario.name));
    return detail::saveAtomically(path, [&](QIODevice& device) -> QString {
        const QString failed = tr("could not write %1").arg(path);
        if (suffix == QLatin1String("png")) {
            QImage image(kWidth, height, QImage::Format_ARGB32_Premultiplied);
            image.fill(theme.background);
            {
                QPainter p(&image);
                paint(p);
            }
            return image.save(&device, "PNG", detail::kPngQuality) ? QString() : failed;
        }
        if (suffix == QLatin1String("svg")) {
            QSvgGenerator generator;
            generator.setOutputDevice(&device);
            generator.setSize(QSize(kWidth, height));
            generator.setViewBox(QRect(0, 0, kWidth, height));
            generator.setTitle(detail::xmlText(title));
            generator.setDescription(QStringLiteral("MoE Planner"));
            QPainter p;
            if (!p.begin(&generator))
                return failed;
            paint(p);
            return p.end() ? QString() : failed;
        }
        QPdfWriter writer(&device);
        writer.setResolution(72);
        writer.setPageSize(QPageSize(QSizeF(kWidth, height), QPageSize::Point));
        writer.setPageMargins(QMarginsF(0, 0, 0, 0));
        writer.setTitle(title);
        writer.setCreator(QStringLiteral("MoE Planner"));
        QPainter p;
        if (!p.begin(&writer))
            return failed;
        paint(p);
        return p.end() ? QString() : failed;
    });
}

} // namespace moe::widgets
