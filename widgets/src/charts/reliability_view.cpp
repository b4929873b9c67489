#include "moe_widgets/charts/reliability_view.h"

#include "charts/chart_support.h"

#include <QEvent>
#include <QHeaderView>
#include <QResizeEvent>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace moe::widgets {

using charts::ChartTheme;

namespace {

constexpr int kExportWidth = 1600;
constexpr int kExportHeight = 900;
constexpr double kMinute = 60.0;

QCPTextElement* textElement(QCustomPlot* plot, int row) {
    return qobject_cast<QCPTextElement*>(plot->plotLayout()->element(row, 0));
}

/// "$4.76M", "$321,339": dollars for a table cell.
QString usd(double v) {
    if (std::fabs(v) >= 1e6)
        return QStringLiteral("$%1M").arg(v / 1e6, 0, 'f', 2);
    return QStringLiteral("$") + QLocale(QLocale::English).toString(v, 'f', 0);
}

QString count(double v) {
    return QLocale(QLocale::English).toString(v, 'f', 0);
}

QString percent(double fraction) {
    return QStringLiteral("%1%").arg(fraction * 100, 0, 'f', 1);
}

/// Durations people plan with: minutes below an hour, hours below two days, then days.
QString longDuration(double seconds) {
    if (seconds <= 0)
        return QStringLiteral("—");
    if (seconds < 120)
        return QStringLiteral("%1 s").arg(seconds, 0, 'f', 1);
    if (seconds < 3600)
        return QStringLiteral("%1 min").arg(seconds / 60, 0, 'f', seconds < 600 ? 1 : 0);
    if (seconds < 2 * 86400)
        return QStringLiteral("%1 h").arg(seconds / 3600, 0, 'f', 2);
    return QStringLiteral("%1 days").arg(seconds / 86400, 0, 'f', 1);
}

QString power(double watts) {
    return watts >= 1e6 ? QStringLiteral("%1 MW").arg(watts / 1e6, 0, 'f', 2)
                        : QStringLiteral("%1 kW").arg(watts / 1e3, 0, 'f', 1);
}

} // namespace

ReliabilityView::ReliabilityView(QWidget* parent)
    : QWidget(parent)
    , plot_(new QCustomPlot)
    , table_(new QTableWidget(0, 2)) {
    setObjectName(QStringLiteral("reliability"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(plot_);
    split->addWidget(table_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split);
    plot_->setMinimumSize(320, 200);

    plot_->plotLayout()->insertRow(0);
    plot_->plotLayout()->insertRow(1);
    auto* title = new QCPTextElement(plot_, QString());
    title->setMargins(QMargins(8, 6, 8, 0));
    plot_->plotLayout()->addElement(0, 0, title);
    auto* subtitle = new QCPTextElement(plot_, QString());
    subtitle->setMargins(QMargins(8, 2, 8, 4));
    plot_->plotLayout()->addElement(1, 0, subtitle);
    plot_->xAxis->setScaleType(QCPAxis::stLogarithmic);
    plot_->legend->setVisible(true);
    // The legend gets a row of its own under the axes: inside them it covered the curve and
    // the Young/Daly optimum in a short dock.
    plot_->axisRect()->insetLayout()->take(plot_->legend);
    plot_->plotLayout()->addElement(3, 0, plot_->legend);
    plot_->plotLayout()->setRowStretchFactor(3, 0.001);
    plot_->legend->setFillOrder(QCPLegend::foColumnsFirst);
    plot_->legend->setMargins(QMargins(4, 0, 4, 2));

    table_->setObjectName(QStringLiteral("reliability-costs"));
    table_->setHorizontalHeaderLabels({tr("Figure"), tr("Value")});
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->verticalHeader()->setVisible(false);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setWordWrap(false);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
}

ReliabilityView::~ReliabilityView() = default;

int ReliabilityView::curvePointCount() const {
    return curve_ != nullptr ? curve_->data()->size() : 0;
}

double ReliabilityView::markedOptimum_s() const {
    return optimum_line_ != nullptr ? optimum_line_->point1->coords().x() * kMinute : 0.0;
}

void ReliabilityView::showResult(const EvaluationResultPtr& result) {
    if (result == nullptr)
        return;
    result_ = result;
    rebuild(false);
    fillTable();
}

void ReliabilityView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    // The title wraps and the ticks thin out to the new width.
    if (result_ != nullptr && event->size().width() != event->oldSize().width())
        rebuild(false);
}

void ReliabilityView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && result_ != nullptr)
        rebuild(false);
}

namespace {

/// Ticks at intervals people schedule by, labelled in their own units; a narrow panel keeps the
/// decades only (1 min, 10 min, 1 h, 10 h, ...) so the labels do not run together.
QSharedPointer<QCPAxisTickerText> checkpointTicker(bool narrow) {
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    const struct {
        double minutes;
        const char* text;
        bool decade;
    } ticks[] = {{0.5, "30 s", false},    {1, "1 min", true},      {2, "2 min", false},
                 {5, "5 min", false},     {10, "10 min", true},    {20, "20 min", false},
                 {60, "1 h", true},       {120, "2 h", false},     {300, "5 h", false},
                 {600, "10 h", true},     {1440, "1 day", true},   {2880, "2 days", false},
                 {7200, "5 days", false}, {14400, "10 days", true}};
    for (const auto& tick : ticks)
        if (tick.decade || !narrow)
            ticker->addTick(tick.minutes, QString::fromLatin1(tick.text));
    return ticker;
}

} // namespace

void ReliabilityView::rebuild(bool for_export) {
    const ChartTheme theme = for_export ? ChartTheme::light() : ChartTheme::fromPalette(palette());
    plot_->clearPlottables();
    plot_->clearItems();
    curve_ = nullptr;
    optimum_line_ = nullptr;
    if (result_ == nullptr) {
        plot_->replot();
        return;
    }
    const Economics& e = result_->report.economics;
    const ReliabilityFigures& f = e.reliability;

    QFont base = font();
    if (for_export) {
        base.setFamily(QStringLiteral("DejaVu Sans"));
        base.setPixelSize(15);
    }
    QFont title_font = base;
    title_font.setBold(true);
    if (for_export)
        title_font.setPixelSize(24);
    else
        title_font.setPointSizeF(base.pointSizeF() * 1.15);
    QFont small = base;
    if (for_export)
        small.setPixelSize(14);

    // Goodput against the interval between checkpoints, in minutes on a log axis.
    curve_ = plot_->addGraph();
    curve_->setName(tr("goodput")); // the axis and the table say what it is
    curve_->setPen(QPen(theme.accent, for_export ? 3.0 : 2.0));
    double lo = 100, hi = 0;
    for (const IntervalPoint& p : e.interval_sweep) {
        curve_->addData(p.interval_s / kMinute, p.goodput * 100);
        lo = std::min(lo, p.goodput * 100);
        hi = std::max(hi, p.goodput * 100);
    }

    // The optimum (Young/Daly) as a dashed vertical line with the point on the curve; a fixed
    // interval from the scenario as a second point.
    const double optimum = f.optimal_interval_s;
    if (optimum > 0) {
        optimum_line_ = new QCPItemStraightLine(plot_);
        optimum_line_->point1->setCoords(optimum / kMinute, 0);
        optimum_line_->point2->setCoords(optimum / kMinute, 1);
        optimum_line_->setPen(QPen(theme.critical, for_export ? 2.0 : 1.5, Qt::DashLine));
        const double g = checkpointGoodput(optimum, f.checkpoint_write_s, f.recovery_s, f.mtbf_s);
        auto* mark = plot_->addGraph();
        mark->setName(tr("Young/Daly optimum"));
        mark->setLineStyle(QCPGraph::lsNone);
        mark->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, theme.critical,
                                              theme.critical, for_export ? 12 : 9));
        mark->addData(optimum / kMinute, g * 100);
        auto* label = new QCPItemText(plot_);
        label->position->setType(QCPItemPosition::ptPlotCoords);
        label->position->setCoords(optimum / kMinute, g * 100);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        label->setPadding(QMargins(8, 0, 0, 6));
        label->setText(tr("every %1: %2").arg(longDuration(optimum), percent(g)));
        label->setFont(small);
        label->setColor(theme.text);
    }
    if (!f.interval_is_optimal && f.interval_s > 0) {
        auto* chosen = plot_->addGraph();
        chosen->setName(tr("scenario's interval"));
        chosen->setLineStyle(QCPGraph::lsNone);
        chosen->setScatterStyle(
            QCPScatterStyle(QCPScatterStyle::ssDiamond, theme.text, theme.background, 11));
        chosen->addData(f.interval_s / kMinute, f.goodput * 100);
    }

    if (!e.interval_sweep.empty()) {
        plot_->xAxis->setRange(e.interval_sweep.front().interval_s / kMinute,
                               e.interval_sweep.back().interval_s / kMinute);
        const double margin = std::max(0.5, (hi - lo) * 0.15);
        plot_->yAxis->setRange(std::max(0.0, lo - margin), std::min(100.0, hi + margin));
    }
    plot_->xAxis->setTicker(checkpointTicker(!for_export && width() < 560));
    plot_->xAxis->setLabel(tr("training time between checkpoints (log scale)"));
    plot_->yAxis->setLabel(tr("goodput (%)"));
    for (QCPAxis* axis : {plot_->xAxis, plot_->yAxis}) {
        axis->setLabelFont(small);
        axis->setTickLabelFont(small);
    }

    const int width = for_export ? kExportWidth : std::max(320, plot_->width());
    auto* title = textElement(plot_, 0);
    title->setFont(title_font);
    title->setText(charts::wrapToWidth(tr("Goodput vs checkpoint interval — %1")
                                           .arg(QString::fromStdString(result_->scenario.name)),
                                       title_font, width - 24));
    QString sub =
        f.mtbf_s > 0 ? tr("Cluster MTBF %1 · checkpoint %2 written in %3 · recovery %4 per failure")
                           .arg(longDuration(f.mtbf_s), charts::formatBytes(f.checkpoint_bytes),
                                longDuration(f.checkpoint_write_s), longDuration(f.recovery_s))
                     : tr("No failures modelled: checkpoints only cost their write time");
    if (e.days > 0)
        sub += tr(" · %1 days to train at %2 goodput, %3")
                   .arg(e.days, 0, 'f', 1)
                   .arg(percent(f.goodput), usd(e.cost_usd));
    auto* subtitle = textElement(plot_, 1);
    subtitle->setFont(small);
    subtitle->setText(charts::wrapToWidth(sub, small, width - 24));
    plot_->legend->setFont(small);
    charts::applyTheme(plot_, theme);
    if (!for_export)
        plot_->replot();
}

void ReliabilityView::fillTable() {
    table_->setRowCount(0);
    if (result_ == nullptr)
        return;
    const Scenario& s = result_->scenario;
    const Economics& e = result_->report.economics;
    const ReliabilityFigures& f = e.reliability;
    auto row = [this](const QString& name, const QString& value, const QString& tip = {}) {
        const int r = table_->rowCount();
        table_->insertRow(r);
        auto* a = new QTableWidgetItem(name);
        auto* b = new QTableWidgetItem(value);
        a->setToolTip(tip);
        b->setToolTip(tip);
        table_->setItem(r, 0, a);
        table_->setItem(r, 1, b);
    };
    if (!e.valid) {
        row(tr("Economics"), tr("no throughput to price"));
        return;
    }
    if (e.days > 0)
        row(tr("Days to train (expected)"),
            tr("%1 (%2 without failures)")
                .arg(e.days, 0, 'f', 1)
                .arg(e.compute_time_s / 86400, 0, 'f', 1),
            tr("Failure-free time / goodput"));
    row(tr("Goodput"),
        tr("%1 (checkpoints %2, failures %3)")
            .arg(percent(f.goodput), percent(f.checkpoint_overhead), percent(f.failure_overhead)));
    row(tr("Cluster MTBF"), f.mtbf_s > 0 ? longDuration(f.mtbf_s) : tr("never fails"),
        tr("1 / (GPUs x GPU failure rate + nodes x node failure rate)"));
    if (e.expected_failures > 0)
        row(tr("Expected failures"), QString::number(e.expected_failures, 'f', 1));
    row(tr("Checkpoint every"),
        f.interval_s > 0
            ? longDuration(f.interval_s) +
                  (f.interval_is_optimal ? tr(" (Young/Daly optimum)") : tr(" (fixed)"))
            : tr("never"));
    if (e.days > 0) {
        row(tr("Cost of the run"), usd(e.cost_usd));
        row(tr("Energy"), tr("%1 MWh").arg(count(e.energy_kwh / 1000)));
        row(tr("GPU-hours (expected)"), count(e.gpu_hours));
    }
    row(tr("Cost per trillion tokens"), usd(e.usd_per_trillion_tokens));
    row(tr("Cost per day"),
        tr("%1 ($%2 per GPU-hour)").arg(usd(e.usd_per_day)).arg(e.usd_per_gpu_hour, 0, 'f', 2));
    row(tr("Cost basis"), QString::fromStdString(costBasisText(s, e)),
        tr("What the cost figures count. Prices are the catalog's estimates unless the "
           "scenario overrides them"));
    row(tr("Power (facility)"),
        tr("%1 at PUE %2").arg(power(e.power.facility_w)).arg(s.cluster.pue, 0, 'f', 2));
    row(tr("Electricity"), e.electricity_usd_per_kwh > 0
                               ? tr("$%1 per kWh%2")
                                     .arg(e.electricity_usd_per_kwh, 0, 'f', 3)
                                     .arg(e.electricity_estimated ? tr(" (estimate)") : QString())
                               : tr("included in the GPU-hour price"));
    row(tr("Capital"), usd(e.capital.total_usd),
        tr("GPUs %1, servers %2, NICs %3, %4 switches %5, %6 cables %7, %8 racks %9")
            .arg(usd(e.capital.gpus_usd), usd(e.capital.servers_usd), usd(e.capital.nics_usd))
            .arg(e.capital.switches)
            .arg(usd(e.capital.switches_usd))
            .arg(e.capital.cables)
            .arg(usd(e.capital.cables_usd))
            .arg(e.capital.racks)
            .arg(usd(e.capital.racks_usd)));
    table_->resizeColumnToContents(0);
}

QString ReliabilityView::exportTo(const QString& path) {
    if (result_ == nullptr)
        return tr("nothing to export: no evaluation yet");
    rebuild(true);
    const QString error =
        charts::exportPlot(plot_, path, kExportWidth, kExportHeight,
                           tr("Goodput vs checkpoint interval — %1")
                               .arg(QString::fromStdString(result_->scenario.name)));
    rebuild(false);
    return error;
}

} // namespace moe::widgets
