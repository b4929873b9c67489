#include "moe_widgets/charts/memory_chart.h"

#include "charts/chart_support.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/view_state.h"

#include <qcustomplot.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace moe::widgets {

using charts::ChartTheme;
using charts::formatBytes;

namespace {

constexpr double kGB = 1e9;

struct Part {
    const char* name;
    double MemoryBreakdown::*field;
    QRgb rgb;
};

// Dispatch buffers take the all-to-all's colour, as everywhere else; the rest are muted hues
// that do not compete with the step-item palette.
const std::array<Part, 6>& parts() {
    static const std::array<Part, 6> list = {{
        {"weights", &MemoryBreakdown::weights_bytes, 0x4C72B0},
        {"gradients", &MemoryBreakdown::gradients_bytes, 0x8172B3},
        {"optimizer states", &MemoryBreakdown::optimizer_bytes, 0x937860},
        {"activations", &MemoryBreakdown::activations_bytes, 0x55A868},
        {"dispatch buffers", &MemoryBreakdown::dispatch_buffers_bytes,
         stepItemColor(StepItem::all_to_all).rgb()},
        {"workspace", &MemoryBreakdown::workspace_bytes, 0x8C8C8C},
    }};
    return list;
}

/// One stacked bar series per memory part present on any stage, each above the previous.
std::vector<QCPBars*> addPartBars(QCustomPlot* plot, const Report& report, double bar_width,
                                  const ChartTheme& theme, bool for_export) {
    const int n = static_cast<int>(report.stages.size());
    std::vector<QCPBars*> added;
    QCPBars* below = nullptr;
    for (const Part& part : parts()) {
        bool any = false;
        for (const StageResult& s : report.stages)
            any = any || s.memory.*part.field > 0;
        if (!any)
            continue;
        auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
        bars->setName(QString::fromUtf8(part.name));
        bars->setProperty("moe_part", static_cast<int>(&part - parts().data()));
        bars->setWidth(bar_width);
        bars->setBrush(QColor(part.rgb));
        bars->setPen(QPen(theme.background, for_export ? 1.0 : 0.8));
        for (int s = 0; s < n; ++s) {
            const double v = report.stages[static_cast<size_t>(s)].memory.*part.field;
            if (v > 0)
                bars->addData(s, v / kGB);
        }
        if (below != nullptr)
            bars->moveAbove(below);
        below = bars;
        added.push_back(bars);
    }
    return added;
}

/// The HBM capacity: a dashed line across the stages, labelled at its right end.
QCPItemStraightLine* addHbmLine(QCustomPlot* plot, double hbm, int n, const QFont& small,
                                const ChartTheme& theme, bool for_export) {
    auto* line = new QCPItemStraightLine(plot);
    line->point1->setCoords(-1, hbm / kGB);
    line->point2->setCoords(n, hbm / kGB);
    line->setPen(QPen(theme.danger, for_export ? 2.0 : 1.5, Qt::DashLine));
    auto* hbm_label = new QCPItemText(plot);
    hbm_label->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    hbm_label->position->setTypeY(QCPItemPosition::ptPlotCoords);
    hbm_label->position->setAxisRect(plot->axisRect());
    hbm_label->position->setAxes(plot->xAxis, plot->yAxis);
    hbm_label->position->setCoords(1.0, hbm / kGB);
    hbm_label->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    hbm_label->setPadding(QMargins(4, 0, 6, 3));
    hbm_label->setText(MemoryChart::tr("HBM %1").arg(formatBytes(hbm)));
    QFont bold_small = small;
    bold_small.setBold(true);
    hbm_label->setFont(bold_small);
    hbm_label->setColor(theme.danger);
    return line;
}

/// Each stage's total (and margin) above its bar; with no `room`, only the tightest stage's.
void addStageTotals(QCustomPlot* plot, const Report& report, bool room, const QFont& small,
                    const ChartTheme& theme) {
    const int n = static_cast<int>(report.stages.size());
    for (int s = 0; s < n; ++s) {
        const MemoryBreakdown& mem = report.stages[static_cast<size_t>(s)].memory;
        if (!room && s != report.memory.stage)
            continue;
        auto* label = new QCPItemText(plot);
        label->position->setType(QCPItemPosition::ptPlotCoords);
        label->position->setAxes(plot->xAxis, plot->yAxis);
        // Centred over its bar, except the first of many narrow bars: it starts at the bar's left
        // edge so it does not run over the axis' tick labels.
        const bool from_left = n > 8 && s == 0;
        label->position->setCoords(from_left ? s - 0.4 : s, mem.total_bytes / kGB);
        label->setPositionAlignment((from_left ? Qt::AlignLeft : Qt::AlignHCenter) |
                                    Qt::AlignBottom);
        label->setPadding(QMargins(0, 0, 0, 3));
        const bool fits = mem.margin_bytes >= 0;
        const QString total = formatBytes(mem.total_bytes);
        label->setText(
            n <= 8
                ? (fits ? MemoryChart::tr("%1\n%2 free").arg(total, formatBytes(mem.margin_bytes))
                        : MemoryChart::tr("%1\n%2 over").arg(total, formatBytes(-mem.margin_bytes)))
                : total);
        label->setFont(small);
        label->setColor(fits ? theme.text : theme.danger);
        label->setClipToAxisRect(false);
    }
}

/// Each part's size inside its segment where the bar is wide and the segment tall enough.
void addPartLabels(QCustomPlot* plot, const std::vector<QCPBars*>& bar_series, const Report& report,
                   double bar_px, double y_top, const QFont& small) {
    const int n = static_cast<int>(report.stages.size());
    const QFontMetrics fm(small);
    for (QCPBars* bars : bar_series) {
        const Part& part = parts()[static_cast<size_t>(bars->property("moe_part").toInt())];
        for (int s = 0; s < n; ++s) {
            const MemoryBreakdown& mem = report.stages[static_cast<size_t>(s)].memory;
            const double v = mem.*part.field / kGB;
            QString text = QStringLiteral("%1  %2").arg(QString::fromUtf8(part.name),
                                                        formatBytes(mem.*part.field));
            if (n > 2 || fm.horizontalAdvance(text) + 10 > bar_px)
                text = formatBytes(mem.*part.field);
            if (v < 0.055 * y_top || fm.horizontalAdvance(text) + 10 > bar_px)
                continue;
            double stacked = 0;
            for (QCPBars* under = bars->barBelow(); under != nullptr; under = under->barBelow()) {
                const Part& bp = parts()[static_cast<size_t>(under->property("moe_part").toInt())];
                stacked += mem.*bp.field / kGB;
            }
            auto* label = new QCPItemText(plot);
            label->position->setType(QCPItemPosition::ptPlotCoords);
            label->position->setAxes(plot->xAxis, plot->yAxis);
            label->position->setCoords(s, stacked + v / 2);
            label->setText(text);
            label->setFont(small);
            label->setColor(textOn(QColor(part.rgb)));
        }
    }
}

/// "Stage 3" under each bar (a bare number past 8 stages), marked when selected or over HBM.
QSharedPointer<QCPAxisTickerText> stageTicker(const Report& report, int selected_stage) {
    const int n = static_cast<int>(report.stages.size());
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (int s = 0; s < n; ++s) {
        QString text = n <= 8 ? MemoryChart::tr("Stage %1").arg(s) : QString::number(s);
        if (s == selected_stage)
            text = QStringLiteral("● ") + text;
        if (!report.stages[static_cast<size_t>(s)].memory.fits)
            text += QStringLiteral(" ✕");
        ticker->addTick(s, text);
    }
    return ticker;
}

/// How many stages do not fit (or the tightest one's margin), and the memory settings.
QString memorySubtitle(const Report& report, const Scenario& scenario, double hbm) {
    const int n = static_cast<int>(report.stages.size());
    const MemoryBreakdown& worst = report.memory;
    int over = 0;
    for (const StageResult& s : report.stages)
        over += s.memory.fits ? 0 : 1;
    QString sub = over > 0 ? MemoryChart::tr("%1 of %2 stages do not fit in %3 of HBM")
                                 .arg(over)
                                 .arg(n)
                                 .arg(formatBytes(hbm))
                           : MemoryChart::tr("Tightest: stage %1 uses %2 of %3 (%4 free)")
                                 .arg(worst.stage)
                                 .arg(formatBytes(worst.total_bytes), formatBytes(worst.hbm_bytes),
                                      formatBytes(worst.margin_bytes));
    sub += MemoryChart::tr(" · ZeRO-%1, recompute %2, %3 micro-batches")
               .arg(scenario.training.zero_stage)
               .arg(QString::fromUtf8(toString(scenario.training.recompute)))
               .arg(report.micro_batches);
    return sub;
}

} // namespace

MemoryChart::MemoryChart(ScenarioDocument* document, ViewState* state, QWidget* parent)
    : StageChart(document, state, QStringLiteral("memory"), parent) {
    plot_->xAxis->grid()->setVisible(false);
    plot_->xAxis->setSubTicks(false);
    plot_->xAxis->setTickLength(0, 0);
    plot_->yAxis->setSubTicks(false);
}

double MemoryChart::stackedBytes(int stage) const {
    double sum = 0;
    for (const QCPBars* bars : bars_)
        for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
            if (std::lround(it->key) == stage)
                sum += it->value;
    return sum * kGB;
}

double MemoryChart::hbmLineBytes() const {
    return hbm_line_ != nullptr ? hbm_line_->point1->coords().y() * kGB : 0.0;
}

void MemoryChart::rebuild(bool for_export) {
    const ChartTheme theme = for_export ? ChartTheme::light() : ChartTheme::fromPalette(palette());
    hbm_line_ = nullptr;
    stage_count_ = 0;
    if (!clearForRebuild())
        return;
    const Report& report = result_->report;
    const Scenario& scenario = result_->scenario;
    stage_count_ = static_cast<int>(report.stages.size());
    const int n = stage_count_;
    const Fonts fonts = this->fonts(for_export);
    const QFont& base = fonts.base;
    const QFont& title_font = fonts.title;
    const QFont& small = fonts.small;

    const double bar_width = n <= 2 ? 0.5 : 0.66;
    // A lone stage would otherwise fill the page with one block: keep bars to a column's width.
    const double pad = n == 1 ? 1.6 : n == 2 ? 1.0 : 0.6;
    for (QCPBars* bars : addPartBars(plot_, report, bar_width, theme, for_export))
        bars_.push_back(bars);

    double hbm = 0;
    double top = 0;
    for (const StageResult& s : report.stages) {
        hbm = std::max(hbm, s.memory.hbm_bytes);
        top = std::max(top, s.memory.total_bytes);
    }
    if (hbm <= 0)
        hbm = scenario.cluster.gpu.hbm_gb * kGB;
    top = std::max(top, hbm);

    hbm_line_ = addHbmLine(plot_, hbm, n, small, theme, for_export);

    // Each stage's total (and margin) above its bar where bars are wide enough for it; in a
    // narrow chart only the tightest stage's.
    const int width = for_export ? kExportWidth : std::max(320, plot_->width());
    const double plot_width = width - 140.0;
    const double slot_px = plot_width / (n - 1 + 2 * pad);
    const QFontMetrics fm(small);
    const bool room = fm.horizontalAdvance(QStringLiteral("00.0 GB")) + 6 < slot_px;
    addStageTotals(plot_, report, room, small, theme);

    // Each part's size inside its segment where the bar is wide and the segment tall enough.
    const double bar_px = slot_px * bar_width;
    const double y_top = top / kGB * (n <= 8 ? 1.2 : 1.12);
    addPartLabels(plot_, bars_, report, bar_px, y_top, small);

    plot_->xAxis->setTicker(stageTicker(report, selected_stage_));
    plot_->xAxis->setRange(-pad, n - 1 + pad);
    plot_->xAxis->setLabel(n <= 8 ? QString() : tr("pipeline stage"));
    plot_->xAxis->setTickLabelFont(base);
    plot_->xAxis->setLabelFont(small);
    plot_->yAxis->setRange(0, top / kGB * (n <= 8 ? 1.2 : 1.12));
    plot_->yAxis->setLabel(tr("GB per GPU"));
    plot_->yAxis->setLabelFont(small);
    plot_->yAxis->setTickLabelFont(small);

    auto* title = titleElement();
    title->setFont(title_font);
    title->setText(tr("Memory per GPU — %1").arg(QString::fromStdString(scenario.name)));
    const QString sub = memorySubtitle(report, scenario, hbm);
    auto* subtitle = subtitleElement();
    subtitle->setFont(small);
    subtitle->setText(charts::wrapToWidth(sub, small, width - 24));
    title->setText(charts::wrapToWidth(title->text(), title_font, width - 24));

    plot_->legend->setFont(small);
    plot_->legend->setWrap(std::clamp(width / (for_export ? 230 : 150), 1, 6));
    plot_->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true); // re-wraps the items
    plot_->yAxis->setPadding(for_export ? 20 : 6);
    plot_->xAxis->setPadding(for_export ? 8 : 4);
    charts::applyTheme(plot_, theme);
    if (!for_export)
        plot_->replot(); // now, so a grab or screenshot right after shows the new result
}

QString MemoryChart::exportTitle() const {
    return tr("Memory per GPU — %1")
        .arg(result_ ? QString::fromStdString(result_->scenario.name) : QString());
}

QString MemoryChart::toolTipAt(const QPoint& pos) const {
    if (result_ == nullptr)
        return {};
    int index = -1;
    auto* bars = qobject_cast<QCPBars*>(plot_->plottableAt(pos, false, &index));
    if (bars == nullptr || index < 0 || index >= bars->data()->size())
        return {};
    const auto it = bars->data()->at(index);
    const int stage = static_cast<int>(std::lround(it->key));
    if (stage < 0 || stage >= stage_count_)
        return {};
    const MemoryBreakdown& mem = result_->report.stages[static_cast<size_t>(stage)].memory;
    const Part& part = parts()[static_cast<size_t>(bars->property("moe_part").toInt())];
    const double bytes = mem.*part.field;
    QString text = QStringLiteral("<b>Stage %1</b><br>%2: %3 (%4% of %5)")
                       .arg(stage)
                       .arg(QString::fromUtf8(part.name), formatBytes(bytes))
                       .arg(mem.total_bytes > 0 ? bytes / mem.total_bytes * 100 : 0, 0, 'f', 1)
                       .arg(formatBytes(mem.total_bytes));
    text += mem.fits
                ? QStringLiteral("<br>%1 of %2 HBM free")
                      .arg(formatBytes(mem.margin_bytes), formatBytes(mem.hbm_bytes))
                : QStringLiteral("<br><b>Over HBM by %1</b>").arg(formatBytes(-mem.margin_bytes));
    if (part.field == &MemoryBreakdown::activations_bytes)
        text += QStringLiteral("<br>%1 micro-batches in flight at the peak")
                    .arg(inFlightMicroBatches(result_->scenario.layout, stage,
                                              result_->report.micro_batches));
    return text;
}

} // namespace moe::widgets
