#include "moe_widgets/report/compare_view.h"

#include "charts/chart_support.h"
#include "common/view_export.h"
#include "moe/design_summary.h"
#include "moe/scenario_io.h"
#include "moe_widgets/charts/heatmap_view.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/evaluator.h"
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/document/view_state.h"
#include "moe_widgets/topology/topology_view.h"

#include <QComboBox>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace moe::widgets {

namespace {

constexpr int kExportWidth = 1600;
constexpr int kExportHeight = 700;
constexpr double kBarWidth = 0.55;

QString sourceName(const EvaluationResultPtr& r) {
    return r ? QString::fromStdString(r->scenario.name) : QString();
}

QTableWidget* makeTable(const QStringList& headers, QWidget* parent) {
    auto* table = new QTableWidget(0, static_cast<int>(headers.size()), parent);
    table->setHorizontalHeaderLabels(headers);
    table->verticalHeader()->setVisible(false);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setAlternatingRowColors(true);
    table->horizontalHeader()->setStretchLastSection(true);
    table->setWordWrap(false);
    return table;
}

QTableWidgetItem* cell(const QString& text, Qt::Alignment align = Qt::AlignLeft) {
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(align | Qt::AlignVCenter);
    return item;
}

/// The two breakdowns' plot: a title row above, the legend in a row below, bars from the top.
QCustomPlot* makeBreakdownPlot(QWidget* parent) {
    auto* plot = new QCustomPlot(parent);
    plot->setMinimumSize(320, 200);
    plot->plotLayout()->insertRow(0);
    auto* title = new QCPTextElement(plot, QString());
    title->setMargins(QMargins(8, 6, 8, 0));
    plot->plotLayout()->addElement(0, 0, title);
    plot->legend->setVisible(true);
    plot->axisRect()->insetLayout()->take(plot->legend);
    plot->axisRect()->insetLayout()->simplify();
    auto* legend_row = new QCPLayoutGrid;
    plot->plotLayout()->addElement(2, 0, legend_row);
    legend_row->addElement(0, 0, plot->legend);
    legend_row->setMargins(QMargins(8, 0, 8, 6));
    plot->plotLayout()->setRowStretchFactor(2, 0.001);
    plot->yAxis->setRangeReversed(true);
    plot->yAxis->grid()->setVisible(false);
    plot->yAxis->setTickLength(0, 0);
    plot->yAxis->setSubTicks(false);
    plot->xAxis->setSubTicks(false);
    return plot;
}

struct SideViews {
    TopologyView* baseline_topology = nullptr;
    HeatmapView* baseline_heatmap = nullptr;
    TopologyView* current_topology = nullptr;
    HeatmapView* current_heatmap = nullptr;
};

/// Topology or heatmap of both designs on `page`, the baseline's left of the current one; a
/// chooser switches both sides at once. One view per side at a time: with the four stacked in a
/// dock each got a quarter of it and their axis labels ran into each other.
SideViews makeSideViews(QWidget* page, ScenarioDocument* document, ViewState* state) {
    auto* grid = new QGridLayout(page);
    grid->setContentsMargins(0, 0, 0, 0);
    auto* shown = new QComboBox(page);
    shown->setObjectName(QStringLiteral("compareSideChooser"));
    shown->addItems({CompareView::tr("Topology"), CompareView::tr("Expert load")});
    auto* chooser_row = new QHBoxLayout;
    chooser_row->addWidget(new QLabel(CompareView::tr("Show"), page));
    chooser_row->addWidget(shown);
    chooser_row->addStretch(1);
    grid->addLayout(chooser_row, 0, 0, 1, 2);
    SideViews v;
    v.baseline_topology = new TopologyView(document, state, page);
    v.baseline_heatmap = new HeatmapView(document, state, page);
    v.current_topology = new TopologyView(document, state, page);
    v.current_heatmap = new HeatmapView(document, state, page);
    v.baseline_topology->setCompact(true);
    v.current_topology->setCompact(true);
    auto* baseline_caption = new QLabel(CompareView::tr("<b>Baseline</b>"), page);
    auto* current_caption = new QLabel(CompareView::tr("<b>Current</b>"), page);
    grid->addWidget(baseline_caption, 1, 0);
    grid->addWidget(current_caption, 1, 1);
    auto* baseline_stack = new QStackedWidget(page);
    auto* current_stack = new QStackedWidget(page);
    baseline_stack->addWidget(v.baseline_topology);
    baseline_stack->addWidget(v.baseline_heatmap);
    current_stack->addWidget(v.current_topology);
    current_stack->addWidget(v.current_heatmap);
    grid->addWidget(baseline_stack, 2, 0);
    grid->addWidget(current_stack, 2, 1);
    grid->setRowStretch(2, 1);
    for (QStackedWidget* stack : {baseline_stack, current_stack}) {
        stack->setMinimumSize(160, 120);
        QObject::connect(shown, &QComboBox::currentIndexChanged, stack,
                         &QStackedWidget::setCurrentIndex);
    }
    return v;
}

} // namespace

QString formatFigure(FigureFormat format, double value) {
    switch (format) {
    case FigureFormat::seconds: {
        // Run times are planned in days and hours, steps in seconds and milliseconds.
        const double a = std::fabs(value);
        if (a >= 2 * 86400.0)
            return QString::number(value / 86400, 'f', 1) + QStringLiteral(" days");
        if (a >= 2 * 3600.0)
            return QString::number(value / 3600, 'f', 1) + QStringLiteral(" h");
        if (a >= 120)
            return QString::number(value / 60, 'f', 1) + QStringLiteral(" min");
        return detail::formatSeconds(value);
    }
    case FigureFormat::percent:
        return QString::number(value * 100, 'f', 1) + QStringLiteral("%");
    case FigureFormat::bytes:
        return detail::formatBytes(value);
    case FigureFormat::tflops:
        return QString::number(value, 'f', 0);
    case FigureFormat::ratio:
        return QString::number(value, 'f', 2) + QStringLiteral("x");
    case FigureFormat::usd:
        return QStringLiteral("$") + detail::formatCount(value);
    case FigureFormat::count:
        break;
    }
    return detail::formatCount(value);
}

QString formatFigureDelta(FigureFormat format, double delta) {
    if (delta == 0)
        return QStringLiteral("0");
    const QString sign = delta > 0 ? QStringLiteral("+") : QStringLiteral("−");
    const double a = std::fabs(delta);
    // A change of a percentage is in percentage points, not a percentage of it.
    if (format == FigureFormat::percent)
        return sign + QString::number(a * 100, 'f', 1) + QStringLiteral(" pp");
    return sign + formatFigure(format, a);
}

QString formatRelative(double relative) {
    if (std::isnan(relative))
        return QStringLiteral("n/a");
    if (relative == 0)
        return QStringLiteral("0.0%");
    return QString::asprintf("%+.1f%%", relative * 100).replace('-', QStringLiteral("−"));
}

QColor verdictColor(Verdict verdict, const QPalette& palette) {
    const bool dark = detail::isDark(palette);
    switch (verdict) {
    case Verdict::better:
        return dark ? QColor(0x56, 0xd3, 0x64) : QColor(0x1a, 0x7f, 0x37);
    case Verdict::worse:
        return dark ? QColor(0xff, 0x7b, 0x72) : QColor(0xc0, 0x1f, 0x2a);
    case Verdict::same:
        break;
    }
    return palette.color(QPalette::Text);
}

CompareView::CompareView(ScenarioDocument* document, ViewState* state, QWidget* parent)
    : QWidget(parent)
    , document_(document)
    , state_(state)
    , side_document_(new ScenarioDocument(this))
    , side_state_(new ViewState(this)) {
    setObjectName(QStringLiteral("compare"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);

    auto* bar = new QHBoxLayout;
    auto* pin = new QPushButton(tr("Pin as baseline"), this);
    pin->setObjectName(QStringLiteral("pinBaselineButton"));
    pin->setToolTip(tr("Compare every later edit with the design as it is now"));
    connect(pin, &QPushButton::clicked, this, &CompareView::pinCurrent);
    auto* open = new QPushButton(tr("Open baseline…"), this);
    open->setToolTip(tr("Compare with another scenario file"));
    connect(open, &QPushButton::clicked, this, &CompareView::openBaselineDialog);
    auto* keep = new QPushButton(tr("Keep variant"), this);
    keep->setObjectName(QStringLiteral("keepVariantButton"));
    keep->setToolTip(tr("Add the current scenario to the list of variants"));
    connect(keep, &QPushButton::clicked, this, &CompareView::keepVariant);
    baseline_label_ = new QLabel(this);
    baseline_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    bar->addWidget(pin);
    bar->addWidget(open);
    bar->addWidget(keep);
    bar->addStretch(1);
    layout->addLayout(bar);
    // Under the buttons, wrapped: beside them a 1280-pixel window cut it off.
    baseline_label_->setWordWrap(true);
    layout->addWidget(baseline_label_);

    tabs_ = new QTabWidget(this);
    layout->addWidget(tabs_, 1);

    // Figures and the field diff.
    auto* split = new QSplitter(Qt::Vertical, this);
    figures_ =
        makeTable({tr("Figure"), tr("Baseline"), tr("Current"), tr("Change"), tr("%")}, split);
    figures_->setObjectName(QStringLiteral("compareFigures"));
    figures_->horizontalHeader()->setStretchLastSection(false);
    figures_->horizontalHeader()->setSectionResizeMode(figure_column, QHeaderView::Stretch);
    auto* field_box = new QWidget(split);
    auto* field_layout = new QVBoxLayout(field_box);
    field_layout->setContentsMargins(0, 4, 0, 0);
    fields_label_ = new QLabel(field_box);
    fields_ = makeTable({tr("Scenario field"), tr("Baseline"), tr("Current")}, field_box);
    fields_->setObjectName(QStringLiteral("compareFields"));
    field_layout->addWidget(fields_label_);
    field_layout->addWidget(fields_, 1);
    split->addWidget(figures_);
    split->addWidget(field_box);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    tabs_->addTab(split, tr("Figures"));

    // The breakdowns side by side.
    plot_ = makeBreakdownPlot(this);
    tabs_->addTab(plot_, tr("Breakdown"));

    // Topology and heatmap of both: the baseline's next to the current ones. The baseline
    // views get a private document and state, so nothing done in them edits the open scenario.
    side_page_ = new QWidget(this);
    const SideViews side = makeSideViews(side_page_, side_document_, side_state_);
    baseline_topology_ = side.baseline_topology;
    baseline_heatmap_ = side.baseline_heatmap;
    current_topology_ = side.current_topology;
    current_heatmap_ = side.current_heatmap;
    tabs_->addTab(side_page_, tr("Topology && heatmap"));
    connect(tabs_, &QTabWidget::currentChanged, this, [this] { updateSideViews(); });

    // Kept variants.
    auto* variants_page = new QWidget(this);
    auto* vlayout = new QVBoxLayout(variants_page);
    vlayout->setContentsMargins(0, 0, 0, 0);
    variants_table_ = makeTable({tr("Rank"), tr("Variant"), tr("Step time"), tr("Tokens/s"),
                                 tr("Memory per GPU"), tr("Fits"), tr("Layout")},
                                variants_page);
    variants_table_->setObjectName(QStringLiteral("variantTable"));
    variants_table_->setSelectionMode(QAbstractItemView::SingleSelection);
    auto* vbar = new QHBoxLayout;
    variant_baseline_button_ = new QPushButton(tr("Make baseline"), variants_page);
    variant_load_button_ = new QPushButton(tr("Load into document"), variants_page);
    variant_load_button_->setToolTip(tr("Replace the scenario with this variant (one undo step)"));
    variant_remove_button_ = new QPushButton(tr("Remove"), variants_page);
    connect(variant_baseline_button_, &QPushButton::clicked, this,
            [this] { makeVariantBaseline(selectedVariant()); });
    connect(variant_load_button_, &QPushButton::clicked, this,
            [this] { loadVariant(selectedVariant()); });
    connect(variant_remove_button_, &QPushButton::clicked, this,
            [this] { removeVariant(selectedVariant()); });
    connect(variants_table_, &QTableWidget::itemSelectionChanged, this, [this] {
        const bool any = selectedVariant() >= 0;
        variant_baseline_button_->setEnabled(any);
        variant_load_button_->setEnabled(any);
        variant_remove_button_->setEnabled(any);
    });
    connect(variants_table_, &QTableWidget::cellDoubleClicked, this,
            [this](int row, int) { makeVariantBaseline(row); });
    vbar->addWidget(variant_baseline_button_);
    vbar->addWidget(variant_load_button_);
    vbar->addWidget(variant_remove_button_);
    vbar->addStretch(1);
    vlayout->addWidget(variants_table_, 1);
    vlayout->addLayout(vbar);
    tabs_->addTab(variants_page, tr("Variants"));

    rebuild();
    rebuildVariants();
}

CompareView::~CompareView() = default;

void CompareView::showResult(const EvaluationResultPtr& result) {
    if (result == nullptr)
        return;
    current_ = result;
    side_dirty_ = true;
    rebuild();
}

void CompareView::setBaseline(const EvaluationResultPtr& baseline) {
    pending_baseline_ = 0; // chosen now: a file still being evaluated no longer counts
    baseline_ = baseline;
    side_dirty_ = true;
    rebuild();
    emit baselineChanged();
}

void CompareView::clearBaseline() {
    setBaseline(nullptr);
}

void CompareView::pinCurrent() {
    if (current_ != nullptr)
        setBaseline(current_);
}

QString CompareView::openBaselineFile(const QString& path) {
    const LoadResult loaded = loadScenarioFile(path.toStdString());
    if (!loaded.ok())
        return QString::fromStdString(formatAll(loaded.diagnostics));
    if (baseline_evaluator_ == nullptr) {
        baseline_evaluator_ = new Evaluator(this);
        connect(baseline_evaluator_, &Evaluator::resultReady, this,
                &CompareView::baselineEvaluated);
    }
    pending_baseline_ = baseline_evaluator_->request(*loaded.scenario);
    baseline_label_->setText(
        tr("Evaluating baseline <b>%1</b>…")
            .arg(QString::fromStdString(loaded.scenario->name).toHtmlEscaped()));
    return {};
}

void CompareView::baselineEvaluated(const EvaluationResultPtr& result) {
    if (result != nullptr && result->generation == pending_baseline_)
        setBaseline(result);
}

void CompareView::openBaselineDialog() {
    QString start;
    if (document_ != nullptr && !document_->filePath().isEmpty())
        start = QFileInfo(document_->filePath()).absolutePath();
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open baseline scenario"), start, tr("Scenarios (*.yaml *.yml);;All files (*)"));
    if (path.isEmpty())
        return;
    const QString problem = openBaselineFile(path);
    if (!problem.isEmpty())
        QMessageBox::warning(this, tr("Baseline not opened"), problem);
}

EvaluationResultPtr CompareView::variant(int rank) const {
    return rank >= 0 && rank < variantCount() ? variants_[static_cast<size_t>(rank)] : nullptr;
}

void CompareView::keepVariant() {
    if (current_ == nullptr)
        return;
    variants_.push_back(current_);
    // Ranked by step time; stable, so equal designs keep the order they were kept in.
    std::stable_sort(variants_.begin(), variants_.end(),
                     [](const EvaluationResultPtr& a, const EvaluationResultPtr& b) {
                         return a->report.step_time_s < b->report.step_time_s;
                     });
    rebuildVariants();
}

void CompareView::removeVariant(int rank) {
    if (rank < 0 || rank >= variantCount())
        return;
    variants_.erase(variants_.begin() + rank);
    rebuildVariants();
}

void CompareView::makeVariantBaseline(int rank) {
    if (const EvaluationResultPtr v = variant(rank))
        setBaseline(v);
}

bool CompareView::loadVariant(int rank) {
    const EvaluationResultPtr v = variant(rank);
    if (v == nullptr || document_ == nullptr)
        return false;
    const Scenario scenario = v->scenario;
    const Diagnostics problems =
        document_->edit(tr("Load variant %1").arg(QString::fromStdString(scenario.name)),
                        [&scenario](Scenario& s) { s = scenario; });
    return !hasErrors(problems);
}

int CompareView::selectedVariant() const {
    const QList<QTableWidgetItem*> items = variants_table_->selectedItems();
    return items.isEmpty() ? -1 : items.front()->row();
}

void CompareView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        rebuild();
}

void CompareView::rebuild() {
    if (hasComparison())
        comparison_ = compareDesigns(baseline_->scenario, baseline_->report, current_->scenario,
                                     current_->report);
    else
        comparison_ = {};
    if (baseline_ == nullptr)
        baseline_label_->setText(
            tr("No baseline: pin the current design or open a file to compare with."));
    else
        baseline_label_->setText(tr("Baseline: <b>%1</b> · step %2")
                                     .arg(sourceName(baseline_).toHtmlEscaped(),
                                          detail::formatSeconds(baseline_->report.step_time_s)));
    rebuildFigures();
    rebuildFields();
    rebuildPlot(false);
    rebuildVariants(); // named by what differs from the baseline or the current design
    updateSideViews();
}

void CompareView::rebuildFigures() {
    const auto& list = headlineFigures();
    figures_->setRowCount(static_cast<int>(list.size()));
    const QPalette pal = palette();
    for (int row = 0; row < static_cast<int>(list.size()); ++row) {
        const HeadlineFigure& h = list[static_cast<size_t>(row)];
        auto* name = cell(QString::fromUtf8(h.name));
        name->setToolTip(h.lower_is_better ? tr("Lower is better") : tr("Higher is better"));
        figures_->setItem(row, figure_column, name);
        const Report* current = current_ ? &current_->report : nullptr;
        figures_->setItem(
            row, current_column,
            cell(current ? formatFigure(h.format, h.get(*current)) : QString(), Qt::AlignRight));
        if (!hasComparison()) {
            for (int c : {baseline_column, delta_column, relative_column})
                figures_->setItem(row, c, cell(QString(), Qt::AlignRight));
            continue;
        }
        const FigureDelta& d = comparison_.figures[static_cast<size_t>(row)];
        figures_->setItem(row, baseline_column,
                          cell(formatFigure(h.format, d.baseline), Qt::AlignRight));
        auto* delta = cell(formatFigureDelta(h.format, d.delta), Qt::AlignRight);
        auto* relative = cell(formatRelative(d.relative), Qt::AlignRight);
        delta->setData(Qt::UserRole, d.delta);
        relative->setData(Qt::UserRole, d.relative);
        const QColor colour = verdictColor(d.verdict, pal);
        const QString verdict = d.verdict == Verdict::better  ? tr("better")
                                : d.verdict == Verdict::worse ? tr("worse")
                                                              : tr("unchanged");
        for (QTableWidgetItem* item : {delta, relative}) {
            item->setForeground(colour);
            item->setToolTip(verdict);
            if (d.verdict != Verdict::same) {
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
            }
        }
        figures_->setItem(row, delta_column, delta);
        figures_->setItem(row, relative_column, relative);
    }
    figures_->resizeColumnsToContents();
}

void CompareView::rebuildFields() {
    fields_->setRowCount(static_cast<int>(comparison_.fields.size()));
    for (int row = 0; row < static_cast<int>(comparison_.fields.size()); ++row) {
        const FieldDifference& f = comparison_.fields[static_cast<size_t>(row)];
        fields_->setItem(row, 0, cell(QString::fromStdString(f.path)));
        fields_->setItem(row, 1, cell(QString::fromStdString(f.baseline)));
        fields_->setItem(row, 2, cell(QString::fromStdString(f.current)));
    }
    fields_->resizeColumnsToContents();
    if (!hasComparison())
        fields_label_->setText(tr("Scenario fields that differ: no baseline yet"));
    else if (comparison_.fields.empty())
        fields_label_->setText(tr("Scenario fields that differ: none (same scenario)"));
    else
        fields_label_->setText(tr("Scenario fields that differ: %n", nullptr,
                                  static_cast<int>(comparison_.fields.size())));
}

void CompareView::rebuildPlot(bool for_export) {
    const charts::ChartTheme theme =
        for_export ? charts::ChartTheme::light() : charts::ChartTheme::fromPalette(palette());
    plot_->clearPlottables();
    plot_->clearItems();
    QFont base = font();
    if (for_export) {
        base.setFamily(QStringLiteral("DejaVu Sans"));
        base.setPixelSize(16);
    }
    QFont title_font = base;
    title_font.setBold(true);
    if (for_export)
        title_font.setPixelSize(24);
    auto* title = qobject_cast<QCPTextElement*>(plot_->plotLayout()->element(0, 0));
    if (current_ == nullptr) {
        title->setText(tr("No evaluation yet"));
        title->setFont(title_font);
        charts::applyTheme(plot_, theme);
        if (!for_export)
            plot_->replot();
        return;
    }
    // Without a baseline the current bar stands alone, so the panel (and an export of every
    // view) still shows something useful.
    std::vector<const EvaluationResult*> rows;
    if (baseline_ != nullptr)
        rows.push_back(baseline_.get());
    rows.push_back(current_.get());
    double max_step = 0;
    for (const EvaluationResult* r : rows)
        max_step = std::max(max_step, r->report.step_time_s);
    const double scale = max_step >= 2.0 ? 1.0 : 1000.0;
    QCPBars* below = nullptr;
    for (int i = 0; i < kStepItemCount; ++i) {
        bool any = false;
        for (const EvaluationResult* r : rows)
            any = any || r->report.step.seconds[static_cast<size_t>(i)] > 0;
        if (!any)
            continue;
        const auto item = static_cast<StepItem>(i);
        auto* bars = new QCPBars(plot_->yAxis, plot_->xAxis);
        bars->setName(QString::fromUtf8(toString(item)));
        bars->setWidth(kBarWidth);
        bars->setBrush(stepItemColor(item));
        bars->setPen(QPen(theme.background, 1));
        for (size_t c = 0; c < rows.size(); ++c) {
            const double v = rows[c]->report.step.seconds[static_cast<size_t>(i)];
            if (v > 0)
                bars->addData(static_cast<double>(c), v * scale);
        }
        if (below != nullptr)
            bars->moveAbove(below);
        below = bars;
    }
    for (size_t c = 0; c < rows.size(); ++c) {
        auto* label = new QCPItemText(plot_);
        label->position->setType(QCPItemPosition::ptPlotCoords);
        label->position->setAxes(plot_->xAxis, plot_->yAxis);
        label->position->setCoords(rows[c]->report.step_time_s * scale, static_cast<double>(c));
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        label->setPadding(QMargins(6, 0, 0, 0));
        QString text = detail::formatSeconds(rows[c]->report.step_time_s);
        if (c == 1 && !comparison_.figures.empty())
            text += QStringLiteral("  (%1)").arg(formatRelative(comparison_.figures[0].relative));
        label->setText(text);
        QFont f = base;
        f.setBold(true);
        label->setFont(f);
        label->setColor(theme.text);
        label->setClipToAxisRect(false);
    }
    // The two bars are named by what differs ("EP=8" / "EP=16"): designs of one scenario
    // share its name.
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    QString current_name = sourceName(current_);
    if (baseline_ != nullptr) {
        const std::vector<SettingChange> changes =
            settingChanges(baseline_->scenario, current_->scenario);
        QString baseline_name = sourceName(baseline_);
        if (!changes.empty()) {
            baseline_name =
                QString::fromStdString(describeChanges(changes, ChangeStyle::baseline, 2));
            current_name =
                QString::fromStdString(describeChanges(changes, ChangeStyle::current, 2));
        }
        ticker->addTick(0, tr("Baseline: %1").arg(baseline_name));
    }
    ticker->addTick(static_cast<double>(rows.size() - 1), tr("Current: %1").arg(current_name));
    plot_->yAxis->setTicker(ticker);
    plot_->yAxis->setTickLabelFont(base);
    plot_->yAxis->setRange(-0.7, 1.7);
    plot_->xAxis->setRange(0, std::max(1e-9, max_step * scale * 1.25));
    plot_->xAxis->setLabel(scale == 1.0 ? tr("seconds per training step")
                                        : tr("milliseconds per training step"));
    plot_->xAxis->setLabelFont(base);
    plot_->xAxis->setTickLabelFont(base);
    title->setFont(title_font);
    title->setText(baseline_ != nullptr ? tr("Step-time breakdown, baseline vs current")
                                        : tr("Step-time breakdown (pin a baseline to compare)"));
    plot_->legend->setFont(base);
    const int width = for_export ? kExportWidth : std::max(320, plot_->width());
    plot_->legend->setWrap(std::clamp(width / (for_export ? 230 : 170), 1, 8));
    plot_->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    plot_->yAxis->setPadding(for_export ? 24 : 8);
    charts::applyTheme(plot_, theme);
    plot_->yAxis->setBasePen(Qt::NoPen);
    if (!for_export)
        plot_->replot();
}

QString CompareView::exportTo(const QString& path) {
    if (current_ == nullptr)
        return tr("nothing to export: no evaluation yet");
    rebuildPlot(true);
    const QString error = charts::exportPlot(plot_, path, kExportWidth, kExportHeight,
                                             tr("Step-time breakdown, baseline vs current"));
    rebuildPlot(false);
    return error;
}

void CompareView::updateSideViews() {
    // Four more views cost time on every edit: they follow only while their tab is shown.
    if (!side_dirty_ || tabs_->currentWidget() != side_page_)
        return;
    side_dirty_ = false;
    if (baseline_ != nullptr) {
        baseline_topology_->showResult(baseline_);
        baseline_heatmap_->showResult(baseline_);
    }
    if (current_ != nullptr) {
        current_topology_->showResult(current_);
        current_heatmap_->showResult(current_);
    }
}

void CompareView::rebuildVariants() {
    variants_table_->setRowCount(variantCount());
    for (int row = 0; row < variantCount(); ++row) {
        const EvaluationResult& v = *variants_[static_cast<size_t>(row)];
        const Report& r = v.report;
        const LayoutSpec& l = v.scenario.layout;
        variants_table_->setItem(row, 0, cell(QString::number(row + 1), Qt::AlignRight));
        // A variant is named by what differs from the baseline (or, without one, from the
        // design being edited): kept variants of one scenario share its name.
        const EvaluationResultPtr& reference = baseline_ != nullptr ? baseline_ : current_;
        QString name = QString::fromStdString(v.scenario.name);
        if (reference != nullptr) {
            const std::vector<SettingChange> changes =
                settingChanges(reference->scenario, v.scenario);
            name = QString::fromStdString(describeChanges(changes, ChangeStyle::current, 3));
            if (changes.empty())
                name = baseline_ != nullptr ? tr("as the baseline") : tr("as the current design");
        }
        auto* name_cell = cell(name);
        name_cell->setToolTip(QString::fromStdString(v.scenario.name));
        variants_table_->setItem(row, 1, name_cell);
        variants_table_->setItem(row, 2,
                                 cell(detail::formatSeconds(r.step_time_s), Qt::AlignRight));
        variants_table_->setItem(
            row, 3, cell(detail::formatCount(r.throughput.tokens_per_s), Qt::AlignRight));
        variants_table_->setItem(row, 4,
                                 cell(detail::formatBytes(r.memory.total_bytes), Qt::AlignRight));
        auto* fits = cell(r.memory.fits ? tr("yes") : tr("no"));
        if (!r.memory.fits)
            fits->setForeground(verdictColor(Verdict::worse, palette()));
        variants_table_->setItem(row, 5, fits);
        variants_table_->setItem(row, 6,
                                 cell(QStringLiteral("TP=%1 CP=%2 PP=%3 DP=%4 EP=%5 · %6")
                                          .arg(l.tp)
                                          .arg(l.cp)
                                          .arg(l.pp)
                                          .arg(l.dp)
                                          .arg(l.ep)
                                          .arg(QString::fromStdString(toString(l.order)))));
    }
    variants_table_->resizeColumnsToContents();
    const bool any = selectedVariant() >= 0;
    variant_baseline_button_->setEnabled(any);
    variant_load_button_->setEnabled(any);
    variant_remove_button_->setEnabled(any);
}

} // namespace moe::widgets
