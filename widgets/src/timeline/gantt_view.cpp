#include "moe_widgets/timeline/gantt_view.h"

#include "moe_widgets/document/view_state.h"
#include "timeline/gantt_canvas.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QScrollBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace moe::widgets {

using charts::ChartTheme;
using charts::formatDuration;
using namespace gantt;

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
    // The colour key takes five rows in a narrow dock; hidden, the rows get its height (the bars'
    // tooltips still name every span).
    QToolButton* key = button(tr("Legend"), tr("Show or hide the colour key"),
                              [this](bool on) { legend_->setVisible(on); });
    key->setObjectName(QStringLiteral("ganttLegendButton"));
    key->setCheckable(true);
    key->setChecked(true);
    bar->addStretch(1);
    // The caption has a line of its own: beside the buttons a 1280-pixel window cut it short.
    caption_->setObjectName(QStringLiteral("ganttCaption"));
    caption_->setTextFormat(Qt::PlainText);
    caption_->setWordWrap(true);
    caption_->setContentsMargins(8, 0, 6, 0);
    layout->addLayout(bar);
    layout->addWidget(caption_);
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

} // namespace moe::widgets
