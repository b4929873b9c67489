#include "moe_widgets/charts/breakdown_chart.h"

#include "charts/chart_support.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/view_state.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace moe::widgets {

using charts::ChartTheme;
using charts::formatDuration;

namespace {

constexpr double kBarWidth = 0.62;

QString stageLabel(const StageResult& stage) {
    const auto& idx = stage.layers.layer_indices;
    if (idx.empty())
        return QStringLiteral("Stage %1").arg(stage.layers.stage);
    const auto [lo, hi] = std::minmax_element(idx.begin(), idx.end());
    if (*hi - *lo + 1 == static_cast<int>(idx.size()))
        return QStringLiteral("Stage %1 · layers %2–%3").arg(stage.layers.stage).arg(*lo).arg(*hi);
    return QStringLiteral("Stage %1 · %2 layers").arg(stage.layers.stage).arg(idx.size());
}

/// Legend entries: the step items with time anywhere in the report.
int legendItemCount(const Report& report) {
    int count = 0;
    for (int i = 0; i < kStepItemCount; ++i) {
        bool any = report.step.seconds[static_cast<size_t>(i)] > 0;
        for (const StageResult& stage : report.stages)
            any = any || stage.per_micro_batch.seconds[static_cast<size_t>(i)] > 0;
        count += any ? 1 : 0;
    }
    return count;
}

/// Values per category and item: the step, then each stage's micro-batches (times their count).
std::vector<std::array<double, kStepItemCount>> categoryValues(const Report& report, int n) {
    const double m = report.micro_batches;
    std::vector<std::array<double, kStepItemCount>> values(static_cast<size_t>(n));
    for (int i = 0; i < kStepItemCount; ++i)
        values[0][static_cast<size_t>(i)] = report.step.seconds[static_cast<size_t>(i)];
    for (size_t s = 0; s < report.stages.size(); ++s)
        for (int i = 0; i < kStepItemCount; ++i)
            values[s + 1][static_cast<size_t>(i)] =
                report.stages[s].per_micro_batch.seconds[static_cast<size_t>(i)] * m;
    return values;
}

/// One stacked bar series per step item with time in any category, each above the previous.
std::vector<QCPBars*> addItemBars(QCustomPlot* plot,
                                  const std::vector<std::array<double, kStepItemCount>>& values,
                                  double scale, const ChartTheme& theme, bool for_export) {
    std::vector<QCPBars*> added;
    QCPBars* below = nullptr;
    for (int i = 0; i < kStepItemCount; ++i) {
        bool any = false;
        for (const auto& v : values)
            any = any || v[static_cast<size_t>(i)] > 0;
        if (!any)
            continue;
        auto* bars = new QCPBars(plot->yAxis, plot->xAxis);
        const auto item = static_cast<StepItem>(i);
        bars->setName(QString::fromUtf8(toString(item)));
        bars->setProperty("moe_item", i);
        bars->setWidth(kBarWidth);
        bars->setBrush(stepItemColor(item));
        bars->setPen(QPen(theme.background, for_export ? 1.0 : 0.8));
        for (int c = 0; c < static_cast<int>(values.size()); ++c) {
            const double v = values[static_cast<size_t>(c)][static_cast<size_t>(i)];
            if (v > 0)
                bars->addData(c, v * scale);
        }
        if (below != nullptr)
            bars->moveAbove(below);
        below = bars;
        added.push_back(bars);
    }
    return added;
}

/// Room right of the longest bar for its total ("2.61 s", bold), as a fraction of the bars'
/// range: the axis spans the plot less the stage names and margins, and the label's share of
/// it is added to the range (a flat 12% cut the total off in a narrow dock).
double totalHeadroom(double max_total_s, int plot_width_px, const QFont& small, const QFont& base) {
    QFont bold_small = small;
    bold_small.setBold(true);
    const double total_px =
        QFontMetricsF(bold_small).horizontalAdvance(formatDuration(max_total_s)) + 12;
    const double axis_px = std::max(
        80.0, plot_width_px -
                  QFontMetricsF(base).horizontalAdvance(QStringLiteral("Step (exposed time)")) -
                  40.0);
    return std::clamp(total_px / std::max(1.0, axis_px - total_px), 0.12, 1.0);
}

/// Totals at the bar ends (only the step's when the bars are too thin for text).
void addTotalLabels(QCustomPlot* plot, const std::vector<double>& totals, double scale, bool roomy,
                    const QFont& small, const ChartTheme& theme) {
    for (int c = 0; c < static_cast<int>(totals.size()); ++c) {
        if (c > 0 && !roomy)
            continue;
        auto* label = new QCPItemText(plot);
        label->position->setType(QCPItemPosition::ptPlotCoords);
        label->position->setAxes(plot->xAxis, plot->yAxis);
        label->position->setCoords(totals[static_cast<size_t>(c)] * scale, c);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        label->setPadding(QMargins(6, 0, 0, 0));
        label->setText(formatDuration(totals[static_cast<size_t>(c)]));
        QFont f = small;
        f.setBold(c == 0);
        label->setFont(f);
        label->setColor(theme.text);
        label->setClipToAxisRect(false);
    }
}

/// Shares inside the step bar where they fit: "attention 31%", or just "31%" in a short piece.
void addStepShareLabels(QCustomPlot* plot, const std::array<double, kStepItemCount>& step_values,
                        double step, double scale, double px_per_s, const QFont& small) {
    const QFontMetrics fm(small);
    double at = 0;
    for (int i = 0; i < kStepItemCount; ++i) {
        const double v = step_values[static_cast<size_t>(i)];
        if (v / step >= 0.06) {
            auto* share = new QCPItemText(plot);
            share->position->setType(QCPItemPosition::ptPlotCoords);
            share->position->setAxes(plot->xAxis, plot->yAxis);
            share->position->setCoords((at + v / 2) * scale, 0);
            const QString percent = QStringLiteral("%1%").arg(v / step * 100, 0, 'f', 0);
            const QString named = QStringLiteral("%1 %2").arg(
                QString::fromUtf8(toString(static_cast<StepItem>(i))), percent);
            share->setText(fm.horizontalAdvance(named) + 12 < v * px_per_s ? named : percent);
            share->setFont(small);
            share->setColor(textOn(stepItemColor(static_cast<StepItem>(i))));
        }
        at += v;
    }
}

} // namespace

BreakdownChart::BreakdownChart(ScenarioDocument* document, ViewState* state, QWidget* parent)
    : StageChart(document, state, QStringLiteral("breakdown"), parent) {
    connect(plot_, &QCustomPlot::afterLayout, this, &BreakdownChart::checkLabelRoom);
    plot_->yAxis->setRangeReversed(true);
    plot_->yAxis->grid()->setVisible(false);
    plot_->yAxis->setTickLength(0, 0);
    plot_->yAxis->setSubTicks(false);
    plot_->xAxis->setSubTicks(false);
}

QString BreakdownChart::categoryLabel(int category) const {
    return category >= 0 && category < categoryCount() ? labels_[static_cast<size_t>(category)]
                                                       : QString();
}

double BreakdownChart::stackedSeconds(int category) const {
    double sum = 0;
    for (const QCPBars* bars : bars_) {
        for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
            if (std::lround(it->key) == category)
                sum += it->value;
    }
    return scale_ > 0 ? sum / scale_ : sum;
}

void BreakdownChart::rebuild(bool for_export) {
    const ChartTheme theme = for_export ? ChartTheme::light() : ChartTheme::fromPalette(palette());
    labels_.clear();
    if (!clearForRebuild())
        return;
    const Report& report = result_->report;
    const Scenario& scenario = result_->scenario;
    const Fonts fonts = this->fonts(for_export);
    const QFont& base = fonts.base;
    const QFont& title_font = fonts.title;
    const QFont& small = fonts.small;

    // Seconds for long steps, milliseconds for short ones.
    scale_ = report.step_time_s >= 2.0 ? 1.0 : 1000.0;
    const QString unit = scale_ == 1.0 ? QStringLiteral("s") : QStringLiteral("ms");

    labels_.push_back(QStringLiteral("Step (exposed time)"));
    for (const StageResult& stage : report.stages)
        labels_.push_back(stageLabel(stage));
    const int n = static_cast<int>(labels_.size());
    // How much room a bar gets: in a small dock, labels are shortened and thinned out.
    const int width = for_export ? kExportWidth : std::max(320, plot_->width());
    const int height = for_export ? kExportHeight : std::max(220, plot_->height());
    const double slack = std::max(0.0, (5.0 - n) / 2.0);
    const QFontMetrics fm(small);
    QStringList hidden;
    const auto add_hidden = [&](StepItem item, const QString& name) {
        const double v = report.step.overlapped_s[static_cast<size_t>(item)];
        if (v > 0)
            hidden << QStringLiteral("%1 %2").arg(name, formatDuration(v));
    };
    add_hidden(StepItem::all_to_all, tr("all-to-all"));
    add_hidden(StepItem::cp_comm, tr("CP exchange"));
    add_hidden(StepItem::pp_comm, tr("PP transfers"));
    add_hidden(StepItem::dp_sync, tr("gradient sync"));
    QString sub = tr("Stages: time per micro-batch × %1 micro-batches. The step adds the "
                     "pipeline bubble, PP transfers, exposed gradient sync and optimizer: the "
                     "time the GPUs the step waits on spend on each, as the step timeline "
                     "measures it.")
                      .arg(report.micro_batches);
    if (!hidden.isEmpty())
        sub += QStringLiteral("\n") + tr("Hidden behind compute (not in the bars): ") +
               hidden.join(QStringLiteral(" · "));
    // A short dock keeps the bars: one elided line of explanation (all of it in the tooltip
    // over the chart), a shorter title.
    explanation_ = sub;
    const bool compact = !for_export && height < 520;
    if (compact)
        sub = fm.elidedText(hidden.isEmpty() ? sub.section(QLatin1Char('.'), 0, 0)
                                             : tr("Hidden behind compute: ") +
                                                   hidden.join(QStringLiteral(" · ")),
                            Qt::ElideRight, width - 24);
    // Vertical room left for the bars: less the title, the subtitle, the axis and the legend.
    const int sub_lines =
        static_cast<int>(charts::wrapToWidth(sub, small, width - 24).count(QLatin1Char('\n'))) + 1;
    const int legend_columns = std::clamp(width / (for_export ? 230 : 150), 1, 8);
    const int legend_rows = (static_cast<int>(legendItemCount(report)) + legend_columns - 1) /
                            std::max(1, legend_columns);
    const double chrome = QFontMetrics(title_font).height() + 16 + sub_lines * fm.lineSpacing() +
                          8 + legend_rows * (fm.height() + 4) + 2.5 * fm.height() + 24;
    const double category_px = (height - chrome) / (n + 2 * slack);
    const bool roomy = category_px >= fm.height() + 2;

    const auto values = categoryValues(report, n);

    for (QCPBars* bars : addItemBars(plot_, values, scale_, theme, for_export))
        bars_.push_back(bars);

    std::vector<double> totals;
    for (const auto& row : values)
        totals.push_back(std::accumulate(row.begin(), row.end(), 0.0));
    const double max_total = *std::max_element(totals.begin(), totals.end());

    addTotalLabels(plot_, totals, scale_, roomy, small, theme);
    const double step = report.step_time_s;
    const double range_s =
        std::max(1e-12, max_total * (1 + totalHeadroom(max_total, width, small, base)));
    // Pixels per second of the bars, roughly (the axis rect is the plot less its labels).
    const double px_per_s = (width - 330.0) / range_s;
    if (step > 0 && category_px >= fm.height())
        addStepShareLabels(plot_, values[0], step, scale_, px_per_s, small);

    roomy_ = roomy;
    label_height_px_ = fm.height();
    setStageLabels(labelEvery(category_px));
    // At least five bar slots, so a single-stage scenario gets two bars, not two slabs.
    plot_->yAxis->setRange(-0.6 - slack, n - 0.4 + slack);
    plot_->yAxis->setTickLabelFont(base);
    plot_->xAxis->setRange(0, range_s * scale_);
    plot_->xAxis->setLabel(scale_ == 1.0 ? tr("seconds per training step")
                                         : tr("milliseconds per training step"));
    plot_->xAxis->setLabelFont(small);
    plot_->xAxis->setTickLabelFont(small);
    Q_UNUSED(unit);

    auto* title = titleElement();
    title->setFont(title_font);
    title->setText(tr("Step-time breakdown — %1 · step %2")
                       .arg(QString::fromStdString(scenario.name), formatDuration(step)));
    if (compact)
        title->setText(fm.elidedText(
            tr("Step %1 · %2").arg(formatDuration(step), QString::fromStdString(scenario.name)),
            Qt::ElideRight, width - 24));
    auto* subtitle = subtitleElement();
    subtitle->setFont(small);
    subtitle->setText(charts::wrapToWidth(sub, small, width - 24));
    title->setText(charts::wrapToWidth(title->text(), title_font, width - 24));

    plot_->legend->setFont(small);
    plot_->legend->setWrap(legend_columns);
    plot_->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true); // re-wraps the items
    plot_->yAxis->setPadding(for_export ? 24 : 8);
    plot_->xAxis->setPadding(for_export ? 10 : 4);
    charts::applyTheme(plot_, theme);
    plot_->yAxis->setBasePen(Qt::NoPen);
    if (for_export)
        return;
    plot_->replot(); // now, so a grab or screenshot right after shows the new result
}

int BreakdownChart::labelEvery(double px_per_category) const {
    // A label needs a text line (plus a little air); thinner bars get every k-th stage.
    return std::max(
        1, static_cast<int>(std::ceil(label_height_px_ * 1.15 / std::max(1e-3, px_per_category))));
}

void BreakdownChart::setStageLabels(int every) {
    label_every_ = every;
    labelled_.clear();
    const int n = categoryCount();
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    const int selected = selected_stage_ >= 0 && selected_stage_ + 1 < n ? selected_stage_ + 1 : -1;
    for (int c = 0; c < n; ++c) {
        // The step always; stages on multiples of `every`; the selected stage instead of its
        // neighbours.
        const bool near_selected = selected > 0 && c != selected && std::abs(c - selected) < every;
        if (c > 0 && c != selected && (c % every != 0 || near_selected))
            continue;
        QString text = roomy_ || c == 0 ? labels_[static_cast<size_t>(c)]
                                        : QStringLiteral("Stage %1").arg(c - 1);
        if (c == selected)
            text = QStringLiteral("● ") + text;
        ticker->addTick(c, text);
        labelled_ << c;
    }
    plot_->yAxis->setTicker(ticker);
}

void BreakdownChart::checkLabelRoom() {
    // The room estimated before layout is close, not exact (and a hidden dock lays out later):
    // after every layout, thin by the laid-out axis and replot if that changes the labels.
    const QCPRange range = plot_->yAxis->range();
    const int height_px = plot_->axisRect()->height();
    if (labels_.empty() || height_px <= 0 || range.size() <= 0)
        return;
    const int every = labelEvery(height_px / range.size());
    if (every != label_every_) {
        setStageLabels(every);
        plot_->replot(QCustomPlot::rpQueuedReplot);
    }
}

QVector<int> BreakdownChart::labelledCategories() const {
    return labelled_;
}

QString BreakdownChart::exportTitle() const {
    return tr("Step-time breakdown — %1")
        .arg(result_ ? QString::fromStdString(result_->scenario.name) : QString());
}

QString BreakdownChart::toolTipAt(const QPoint& pos) const {
    if (result_ == nullptr)
        return {};
    int index = -1;
    auto* bars = qobject_cast<QCPBars*>(plot_->plottableAt(pos, false, &index));
    if (bars == nullptr || index < 0 || index >= bars->data()->size())
        return plot_->axisRect()->rect().contains(pos) ? QString() : explanation_;
    const auto it = bars->data()->at(index);
    const int category = static_cast<int>(std::lround(it->key));
    const auto item = static_cast<StepItem>(bars->property("moe_item").toInt());
    const double seconds = it->value / scale_;
    const double total = stackedSeconds(category);
    QString text = QStringLiteral("<b>%1</b><br>%2: %3 (%4% of %5)")
                       .arg(categoryLabel(category), QString::fromUtf8(toString(item)),
                            formatDuration(seconds))
                       .arg(total > 0 ? seconds / total * 100 : 0, 0, 'f', 1)
                       .arg(formatDuration(total));
    const Report& report = result_->report;
    if (category > 0 && report.micro_batches > 0)
        text += QStringLiteral("<br>%1 per micro-batch × %2")
                    .arg(formatDuration(seconds / report.micro_batches))
                    .arg(report.micro_batches);
    const double hidden = category == 0
                              ? report.step.overlapped_s[static_cast<size_t>(item)]
                              : report.stages[static_cast<size_t>(category - 1)]
                                        .per_micro_batch.overlapped_s[static_cast<size_t>(item)] *
                                    report.micro_batches;
    if (hidden > 0)
        text += QStringLiteral("<br>%1 more hidden behind compute").arg(formatDuration(hidden));
    return text;
}

} // namespace moe::widgets
