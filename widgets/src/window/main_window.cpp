#include "moe_widgets/window/main_window.h"

#include "moe_widgets/document/autosave.h"

#include "common/view_export.h"

#include "moe/io/interop.h"
#include "moe/scenario_io.h"
#include "moe_widgets/charts/breakdown_chart.h"
#include "moe_widgets/charts/heatmap_view.h"
#include "moe_widgets/charts/memory_chart.h"
#include "moe_widgets/charts/reliability_view.h"
#include "moe_widgets/common/report_view.h"
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/document/view_state.h"
#include "moe_widgets/editor/scenario_editor.h"
#include "moe_widgets/experiments/hardware_palette.h"
#include "moe_widgets/experiments/layout_bar.h"
#include "moe_widgets/experiments/placement_grid.h"
#include "moe_widgets/report/compare_view.h"
#include "moe_widgets/report/design_report.h"
#include "moe_widgets/report/warnings_view.h"
#include "moe_widgets/timeline/gantt_view.h"
#include "moe_widgets/topology/topology_view.h"
#include "moe_widgets/window/interop_dialogs.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QLabel>
#include <QLayout>
#include <QLocale>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QStyleFactory>
#include <QTimer>
#include <QToolBar>
#include <QUndoStack>
#include <QUndoView>

#include <algorithm>
#include <cmath>

namespace moe::widgets {

namespace {

constexpr int kMaxRecentFiles = 8;
/// Editors often write a file in several steps; read it once they are done.
constexpr int kReloadDelayMs = 250;
/// Bumped when the dock set changes, so an old saved layout is not restored over a new one.
constexpr int kLayoutVersion = 2;
/// The most a panel may ask for, so the window still fits a 1280 x 800 screen.
constexpr QSize kMaxPanelMinimum(400, 240);

QPalette darkPalette() {
    QPalette p;
    const QColor window(0x2b, 0x2d, 0x31);
    const QColor base(0x1f, 0x21, 0x24);
    const QColor text(0xe6, 0xe8, 0xeb);
    const QColor disabled(0x80, 0x84, 0x8a);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x27, 0x29, 0x2d));
    p.setColor(QPalette::ToolTipBase, QColor(0x35, 0x38, 0x3d));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
    p.setColor(QPalette::Link, QColor(0x6c, 0xb4, 0xff));
    p.setColor(QPalette::Highlight, QColor(0x3d, 0x7e, 0xd6));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Mid, QColor(0x45, 0x48, 0x4e));
    p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
    p.setColor(QPalette::Light, QColor(0x50, 0x54, 0x5a));
    for (const QPalette::ColorRole role :
         {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    return p;
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : MainWindow(Options{}, parent) {}

MainWindow::MainWindow(const Options& options, QWidget* parent)
    : QMainWindow(parent)
    , options_(options)
    , document_(new ScenarioDocument(this))
    , evaluator_(new Evaluator(this))
    , state_(new ViewState(this)) {
    setObjectName(QStringLiteral("mainWindow"));
    if (!options_.recovery_dir.isEmpty())
        autosave_ = new Autosave(document_, options_.recovery_dir, this);
    setWindowIcon(QApplication::style()->standardIcon(QStyle::SP_ComputerIcon));
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowNestedDocks |
                   QMainWindow::AllowTabbedDocks | QMainWindow::GroupedDragging);
    // Every panel is a dock; the (hidden) central widget only satisfies QMainWindow.
    auto* center = new QWidget(this);
    center->setMaximumSize(0, 0);
    setCentralWidget(center);
    center->hide();

    createViews();
    createMenus();
    createStatusBar();
    resize(1600, 1000);
    arrangeDocks();
    default_state_ = saveState(kLayoutVersion);

    watcher_ = new QFileSystemWatcher(this);
    connect(watcher_, &QFileSystemWatcher::fileChanged, this, [this](const QString& path) {
        QTimer::singleShot(kReloadDelayMs, this, [this, path] { onFileChangedOnDisk(path); });
    });

    connect(document_, &ScenarioDocument::scenarioChanged, this, [this] {
        change_timer_.start();
        requestEvaluation();
        updateTitle();
    });
    connect(document_, &ScenarioDocument::modifiedChanged, this, &MainWindow::updateTitle);
    connect(document_, &ScenarioDocument::filePathChanged, this, [this](const QString& path) {
        updateTitle();
        watchFile();
        if (!path.isEmpty())
            addRecentFile(path);
    });
    connect(state_, &ViewState::routingStepChanged, this, [this] {
        change_timer_.start();
        requestEvaluation();
    });
    connect(evaluator_, &Evaluator::resultReady, this, &MainWindow::showResultInViews);

    if (options_.use_settings)
        restoreLayout();
    updateRecentMenu();
    updateTitle();
    // The first result is computed here, before the window shows, so its first paint already
    // has content (the default evaluates in well under a millisecond).
    evaluateNow();
}

MainWindow::~MainWindow() {
    // ~QWidget closes the window, which makes an open editor commit its value into the
    // document; by then this MainWindow is only a QWidget, so nothing of the document may call
    // back into it.
    document_->disconnect(this);
    document_->blockSignals(true);
}

QDockWidget* MainWindow::addDock(QWidget* widget, const QString& id, const QString& title,
                                 Qt::DockWidgetArea area) {
    // A panel's wide toolbar, grid or caption must not make the whole window wider than the
    // screen: cap what it may demand (an explicit minimum overrides the widget's size hint); a
    // panel narrower than its content clips or scrolls it instead.
    const QSize hint = widget->minimumSizeHint();
    widget->setMinimumSize(std::clamp(hint.width(), 0, kMaxPanelMinimum.width()),
                           std::clamp(hint.height(), 0, kMaxPanelMinimum.height()));
    auto* dock = new QDockWidget(title, this);
    dock->setObjectName(id + QStringLiteral("Dock"));
    dock->setWidget(widget);
    dock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable |
                      QDockWidget::DockWidgetFloatable);
    addDockWidget(area, dock);
    docks_.append(dock);
    if (view_menu_)
        view_menu_->insertAction(view_menu_->actions().value(0), dock->toggleViewAction());
    return dock;
}

QDockWidget* MainWindow::addView(ReportView* view, Qt::DockWidgetArea area) {
    views_.append(view);
    QDockWidget* dock = addDock(view->widget(), view->viewId(), view->viewTitle(), area);
    if (current_)
        view->showResult(current_);
    return dock;
}

QDockWidget* MainWindow::dockFor(const QString& view_id) const {
    const QString name = view_id + QStringLiteral("Dock");
    for (QDockWidget* dock : docks_) {
        if (dock->objectName() == name)
            return dock;
    }
    return nullptr;
}

void MainWindow::createViews() {
    editor_ = new ScenarioEditor(document_, state_, this);
    addDock(editor_, QStringLiteral("editor"), tr("Scenario"), Qt::LeftDockWidgetArea);

    addView(new TopologyView(document_, state_, this), Qt::LeftDockWidgetArea);
    addView(new HeatmapView(document_, state_, this), Qt::LeftDockWidgetArea);
    addView(new GanttView(document_, state_, this), Qt::LeftDockWidgetArea);
    addView(new BreakdownChart(document_, state_, this), Qt::LeftDockWidgetArea);
    addView(new MemoryChart(document_, state_, this), Qt::LeftDockWidgetArea);
    addView(new ReliabilityView(this), Qt::LeftDockWidgetArea);
    warnings_ = new WarningsView(document_, state_, this);
    addView(warnings_, Qt::LeftDockWidgetArea);
    connect(warnings_, &WarningsView::fieldActivated, this, [this](const QString& path) {
        if (QDockWidget* dock = dockFor(QStringLiteral("editor"))) {
            dock->show();
            dock->raise();
        }
        editor_->revealField(path);
    });

    compare_ = new CompareView(document_, state_, this);
    addView(compare_, Qt::LeftDockWidgetArea);

    history_ = new QUndoView(document_->undoStack(), this);
    history_->setEmptyLabel(tr("<opened>"));
    addDock(history_, QStringLiteral("history"), tr("Edit history"), Qt::LeftDockWidgetArea);

    // Drag-and-drop experiments: the layout bar above everything, the expert placement grid
    // and the hardware palette as docks. They edit through the document and show each result.
    layout_bar_ = new LayoutBar(document_, this);
    layout_toolbar_ = new QToolBar(tr("Parallel layout"), this);
    layout_toolbar_->setObjectName(QStringLiteral("layoutToolBar"));
    layout_toolbar_->setMovable(true);
    layout_toolbar_->addWidget(layout_bar_);
    addToolBar(Qt::TopToolBarArea, layout_toolbar_);
    placement_grid_ = new PlacementGrid(document_, this);
    addDock(placement_grid_, QStringLiteral("placement"), tr("Experts on GPUs"),
            Qt::LeftDockWidgetArea);
    hardware_palette_ = new HardwarePalette(document_, this);
    addDock(hardware_palette_, QStringLiteral("hardware"), tr("Hardware palette"),
            Qt::LeftDockWidgetArea);
    connect(this, &MainWindow::resultShown, layout_bar_, &LayoutBar::showResult);
    connect(this, &MainWindow::resultShown, placement_grid_, &PlacementGrid::showResult);
    connect(this, &MainWindow::resultShown, hardware_palette_, &HardwarePalette::showResult);
}

void MainWindow::arrangeDocks() {
    // Left column: the editor (history behind it). Top right: the diagram and the heatmap side
    // by side. Bottom: the timeline, then the charts and warnings as tabs.
    QDockWidget* editor = dockFor(QStringLiteral("editor"));
    QDockWidget* history = dockFor(QStringLiteral("history"));
    QDockWidget* topology = dockFor(QStringLiteral("topology"));
    QDockWidget* heatmap = dockFor(QStringLiteral("heatmap"));
    QDockWidget* gantt = dockFor(QStringLiteral("gantt"));
    QDockWidget* breakdown = dockFor(QStringLiteral("breakdown"));
    QDockWidget* memory = dockFor(QStringLiteral("memory"));
    QDockWidget* warnings = dockFor(QStringLiteral("warnings"));
    QDockWidget* reliability = dockFor(QStringLiteral("reliability"));

    // Everything nests in one dock area: with two areas around the hidden central widget, Qt
    // splits the width between them evenly and ignores resizeDocks().
    QDockWidget* charts = breakdown ? breakdown : memory ? memory : warnings;
    QDockWidget* top = topology ? topology : heatmap;
    QDockWidget* bottom = gantt ? gantt : charts;
    if (editor && (top || bottom))
        splitDockWidget(editor, top ? top : bottom, Qt::Horizontal);
    if (top && bottom)
        splitDockWidget(top, bottom, Qt::Vertical);
    if (topology && heatmap)
        splitDockWidget(topology, heatmap, Qt::Horizontal);
    if (gantt && charts)
        splitDockWidget(gantt, charts, Qt::Horizontal);
    for (QDockWidget* tab : {memory, reliability, warnings}) {
        if (tab && charts && tab != charts)
            tabifyDockWidget(charts, tab);
    }
    if (QDockWidget* compare = dockFor(QStringLiteral("compare"));
        compare && charts && compare != charts)
        tabifyDockWidget(charts, compare);
    if (charts)
        charts->raise();
    if (editor && history) {
        tabifyDockWidget(editor, history);
        editor->raise();
    }
    // The experiment docks sit behind the panels they change: placement with the heatmap,
    // hardware with the editor.
    if (QDockWidget* placement = dockFor(QStringLiteral("placement")); placement && heatmap) {
        tabifyDockWidget(heatmap, placement);
        heatmap->raise();
    }
    if (QDockWidget* hardware = dockFor(QStringLiteral("hardware")); hardware && editor) {
        tabifyDockWidget(editor, hardware);
        editor->raise();
    }
}

void MainWindow::sizeDocks() {
    // Sizes only take once the window has its geometry, so this runs on the first show.
    QDockWidget* editor = dockFor(QStringLiteral("editor"));
    QDockWidget* topology = dockFor(QStringLiteral("topology"));
    QDockWidget* heatmap = dockFor(QStringLiteral("heatmap"));
    QDockWidget* gantt = dockFor(QStringLiteral("gantt"));
    QDockWidget* breakdown = dockFor(QStringLiteral("breakdown"));
    QDockWidget* memory = dockFor(QStringLiteral("memory"));
    QDockWidget* warnings = dockFor(QStringLiteral("warnings"));
    QDockWidget* charts = breakdown ? breakdown : memory ? memory : warnings;
    const int width = this->width();
    const int editor_width = std::clamp(width / 4, 300, 420);
    if (editor)
        resizeDocks({editor}, {editor_width}, Qt::Horizontal);
    const int rest = width - editor_width;
    if (topology && heatmap)
        resizeDocks({topology, heatmap}, {rest * 55 / 100, rest * 45 / 100}, Qt::Horizontal);
    if (gantt && charts)
        resizeDocks({gantt, charts}, {rest * 58 / 100, rest * 42 / 100}, Qt::Horizontal);
    QDockWidget* top = topology ? topology : heatmap;
    QDockWidget* bottom = gantt ? gantt : charts;
    if (top && bottom)
        resizeDocks({top, bottom}, {height() * 56 / 100, height() * 44 / 100}, Qt::Vertical);
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    if (shown_)
        return;
    shown_ = true;
    if (!layout_restored_) {
        layout()->activate();
        sizeDocks();
        default_state_ = saveState(kLayoutVersion);
    }
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QMenu* samples = file->addMenu(tr("&New from sample"));
    samples->addAction(tr("Built-in default (8 x DGX H100, 16 experts)"), this,
                       [this] { newFromSample({}); });
    samples->addSeparator();
    for (const QString& path : sampleFiles())
        samples->addAction(QFileInfo(path).completeBaseName(), this,
                           [this, path] { newFromSample(path); });
    file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::openDialog);
    recent_menu_ = file->addMenu(tr("Open &recent"));
    file->addAction(tr("Re&load from disk"), QKeySequence(Qt::Key_F5), this, [this] {
        if (!document_->filePath().isEmpty() && maybeSave())
            openFile(document_->filePath());
    });
    file->addSeparator();
    file->addAction(tr("&Save"), QKeySequence::Save, this, &MainWindow::saveDocument);
    file->addAction(tr("Save &as…"), QKeySequence::SaveAs, this, &MainWindow::saveDocumentAs);
    file->addAction(tr("&Export all views…"), QKeySequence(Qt::CTRL | Qt::Key_E), this,
                    &MainWindow::exportDialog);
    file->addAction(tr("Export &report…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R), this,
                    &MainWindow::exportReportDialog);
    file->addSeparator();
    file->addAction(tr("&Import…"), QKeySequence(Qt::CTRL | Qt::Key_I), this,
                    [this] { showImportDialog(this, *document_); });
    file->addAction(tr("Export for other &tools…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E),
                    this, [this] {
                        showExportDialog(this, document_->scenario(),
                                         QFileInfo(document_->filePath()).absolutePath());
                    });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = document_->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = document_->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    edit->addAction(tr("Edit &history"), this, [this] {
        if (QDockWidget* dock = dockFor(QStringLiteral("history"))) {
            dock->show();
            dock->raise();
        }
    });

    view_menu_ = menuBar()->addMenu(tr("&View"));
    for (QDockWidget* dock : docks_)
        view_menu_->addAction(dock->toggleViewAction());
    if (layout_toolbar_)
        view_menu_->addAction(layout_toolbar_->toggleViewAction());
    view_menu_->addSeparator();
    QMenu* metric = view_menu_->addMenu(tr("Colour GPUs by"));
    auto* metrics = new QActionGroup(this);
    const std::pair<GpuMetric, QString> choices[] = {
        {GpuMetric::expert_load, tr("Expert load")},
        {GpuMetric::memory_use, tr("Memory use")},
        {GpuMetric::idle_time, tr("Idle time")},
        {GpuMetric::traffic, tr("Traffic")},
    };
    for (const auto& [value, label] : choices) {
        QAction* action = metric->addAction(label);
        action->setCheckable(true);
        action->setChecked(state_->gpuMetric() == value);
        action->setData(static_cast<int>(value));
        metrics->addAction(action);
        const GpuMetric chosen = value;
        connect(action, &QAction::triggered, this,
                [this, chosen] { state_->setGpuMetric(chosen); });
    }
    connect(state_, &ViewState::gpuMetricChanged, this, [metrics](GpuMetric value) {
        for (QAction* action : metrics->actions())
            action->setChecked(action->data().toInt() == static_cast<int>(value));
    });
    view_menu_->addAction(tr("Next routing sample"), QKeySequence(Qt::CTRL | Qt::Key_T), state_,
                          &ViewState::nextRoutingStep);
    view_menu_->addAction(tr("Clear highlight"), QKeySequence(Qt::Key_Escape), state_,
                          &ViewState::clearHighlight);
    view_menu_->addSeparator();
    QAction* dark = view_menu_->addAction(tr("Dark palette"));
    dark->setCheckable(true);
    dark->setObjectName(QStringLiteral("darkPaletteAction"));
    connect(dark, &QAction::toggled, this, &MainWindow::setDarkPalette);
    view_menu_->addAction(tr("Reset layout"), this,
                          [this] { restoreState(default_state_, kLayoutVersion); });

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About MoE Planner"), this, [this] {
        QMessageBox::about(
            this, tr("About MoE Planner"),
            tr("<b>MoE Planner</b><p>Plans Mixture-of-Experts training clusters: where each "
               "collective lands, how long a step takes and why, whether it fits in memory, "
               "which GPU is the straggler, and what the run costs.</p>"));
    });
}

void MainWindow::createStatusBar() {
    auto make = [this](const QString& name, const QString& tip) {
        auto* label = new QLabel(this);
        label->setObjectName(name);
        label->setToolTip(tip);
        label->setContentsMargins(8, 0, 8, 0);
        // Its text must not set the window's minimum width (the figures would clip on a small
        // screen, the tooltip and the panels still have them).
        label->setMinimumWidth(40);
        statusBar()->addPermanentWidget(label);
        return label;
    };
    step_label_ = make(QStringLiteral("stepLabel"),
                       tr("Training step time (slowest stage x micro-batches + pipeline bubble + "
                          "exposed sends and gradient sync + optimizer; the step timeline's "
                          "simulation breaks it down the same way)"));
    throughput_label_ =
        make(QStringLiteral("throughputLabel"), tr("Tokens per second, whole cluster and per GPU"));
    mfu_label_ = make(QStringLiteral("mfuLabel"),
                      tr("Model FLOPs utilization versus the GPUs' dense BF16 peak"));
    memory_label_ =
        make(QStringLiteral("memoryLabel"), tr("HBM left on the GPU with the least margin"));
    economics_label_ = make(QStringLiteral("economicsLabel"),
                            tr("Goodput (training time / wall-clock with failures and "
                               "checkpoints) and the expected cost of the run; details in the "
                               "Time, cost and reliability panel"));
    timing_label_ = make(QStringLiteral("timingLabel"),
                         tr("Time of the last evaluation (model) and from the edit to all views "
                            "updated"));
}

void MainWindow::requestEvaluation() {
    evaluator_->request(document_->scenario(), state_->routingStep());
}

void MainWindow::evaluateNow() {
    change_timer_.start();
    evaluator_->evaluateNow(document_->scenario(), state_->routingStep());
}

void MainWindow::showResultInViews(const EvaluationResultPtr& result) {
    if (!result)
        return;
    current_ = result;
    for (ReportView* view : std::as_const(views_)) {
        QElapsedTimer timer;
        timer.start();
        view->showResult(result);
        view_ms_.insert(view->viewId(), static_cast<double>(timer.nsecsElapsed()) / 1e6);
    }
    if (change_timer_.isValid())
        last_update_ms_ = static_cast<double>(change_timer_.nsecsElapsed()) / 1e6;
    updateStatus(result);
    emit resultShown(result);
}

void MainWindow::updateStatus(const EvaluationResultPtr& result) {
    const Report& r = result->report;
    step_label_->setText(tr("Step %1").arg(detail::formatSeconds(r.step_time_s)));
    throughput_label_->setText(tr("%1 tokens/s · %2 per GPU")
                                   .arg(detail::formatCompact(r.throughput.tokens_per_s))
                                   .arg(detail::formatCompact(r.throughput.tokens_per_s_per_gpu)));
    mfu_label_->setText(tr("MFU %1 %").arg(r.throughput.mfu * 100, 0, 'f', 1));
    const double margin_gb = r.memory.margin_bytes / 1e9;
    if (r.memory.fits) {
        memory_label_->setText(tr("Memory headroom %1 GB").arg(margin_gb, 0, 'f', 1));
        memory_label_->setStyleSheet({});
    } else {
        memory_label_->setText(tr("Does not fit: %1 GB over HBM (stage %2)")
                                   .arg(-margin_gb, 0, 'f', 1)
                                   .arg(r.memory.stage));
        memory_label_->setStyleSheet(QStringLiteral("color: #d63b2f; font-weight: bold;"));
    }
    const Economics& econ = r.economics;
    const double run_usd = econ.cost_usd > 0 ? econ.cost_usd : econ.usd_per_trillion_tokens;
    economics_label_->setText(
        econ.valid
            ? tr("Goodput %1 % · %2 %3")
                  .arg(econ.reliability.goodput * 100, 0, 'f', 1)
                  .arg(run_usd >= 1e6 ? QStringLiteral("$%1M").arg(run_usd / 1e6, 0, 'f', 2)
                                      : QStringLiteral("$") + QLocale().toString(run_usd, 'f', 0))
                  .arg(econ.cost_usd > 0 ? tr("per run") : tr("per trillion tokens"))
            : QString());
    timing_label_->setText(tr("model %1 ms · views %2 ms")
                               .arg(result->evaluate_ms, 0, 'f', 2)
                               .arg(last_update_ms_, 0, 'f', 1));
}

QString MainWindow::statusSummary() const {
    return QStringList{step_label_->text(), throughput_label_->text(), mfu_label_->text(),
                       memory_label_->text()}
        .join(QStringLiteral(" | "));
}

void MainWindow::updateTitle() {
    setWindowTitle(tr("%1[*] — MoE Planner").arg(document_->displayName()));
    setWindowModified(document_->isModified());
}

// ---------------------------------------------------------------------------------------------
// Files

QStringList MainWindow::sampleFiles() {
    QStringList dirs;
    const QString env = qEnvironmentVariable("MOE_SAMPLES_DIR");
    if (!env.isEmpty())
        dirs << env;
    dirs << QCoreApplication::applicationDirPath() +
                QStringLiteral("/../share/moe-planner/sample_clusters");
#if defined(MOE_WIDGETS_SAMPLES_DIR) && defined(MOE_WIDGETS_BUILD_DIR)
    // The source tree's samples only for a program run from its build tree: an installed copy
    // never looks there, even when the source tree is still on the machine.
    const QString build_dir = QDir(QStringLiteral(MOE_WIDGETS_BUILD_DIR)).canonicalPath();
    const QString app_dir = QDir(QCoreApplication::applicationDirPath()).canonicalPath();
    if (!build_dir.isEmpty() && app_dir.startsWith(build_dir + QLatin1Char('/')))
        dirs << QStringLiteral(MOE_WIDGETS_SAMPLES_DIR);
#endif
    for (const QString& dir : dirs) {
        QDir d(dir);
        const QStringList names = d.entryList({QStringLiteral("*.yaml")}, QDir::Files, QDir::Name);
        if (names.isEmpty())
            continue;
        QStringList paths;
        for (const QString& name : names)
            paths << d.absoluteFilePath(name);
        return paths;
    }
    return {};
}

bool MainWindow::openFile(const QString& path) {
    const Diagnostics diagnostics = document_->open(path);
    if (hasErrors(diagnostics)) {
        warnings_->setLoadProblems(diagnostics, path);
        if (QDockWidget* dock = dockFor(QStringLiteral("warnings"))) {
            dock->show();
            dock->raise();
        }
        int errors = 0;
        for (const Diagnostic& d : diagnostics)
            errors += d.severity == Diagnostic::Severity::error;
        statusBar()->showMessage(
            tr("%1 was not opened: %n problem(s), listed under Warnings", nullptr, errors)
                .arg(QFileInfo(path).fileName()),
            10000);
        return false;
    }
    warnings_->clearLoadProblems();
    statusBar()->showMessage(tr("Opened %1").arg(QDir::toNativeSeparators(path)), 5000);
    return true;
}

void MainWindow::openDialog() {
    if (!maybeSave())
        return;
    QString start = QFileInfo(document_->filePath()).absolutePath();
    if (document_->filePath().isEmpty() && !sampleFiles().isEmpty())
        start = QFileInfo(sampleFiles().front()).absolutePath();
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open scenario"), start, tr("Scenarios (*.yaml *.yml);;All files (*)"));
    if (!path.isEmpty())
        openFile(path);
}

void MainWindow::newFromSample(const QString& path) {
    if (!maybeSave())
        return;
    if (path.isEmpty()) {
        document_->reset(defaultScenario());
    } else {
        const LoadResult loaded = loadScenarioFile(path.toStdString());
        if (!loaded.ok()) {
            warnings_->setLoadProblems(loaded.diagnostics, path);
            return;
        }
        // A new, unsaved scenario: Save asks where to put it, so the sample stays as shipped.
        document_->reset(*loaded.scenario);
    }
    warnings_->clearLoadProblems();
}

bool MainWindow::saveDocument() {
    if (document_->filePath().isEmpty())
        return saveDocumentAs();
    const QString problem = document_->save();
    if (!problem.isEmpty()) {
        QMessageBox::warning(this, tr("Save failed"), problem);
        return false;
    }
    statusBar()->showMessage(tr("Saved %1").arg(document_->filePath()), 4000);
    return true;
}

bool MainWindow::saveDocumentAs() {
    QString suggestion = document_->filePath();
    if (suggestion.isEmpty())
        suggestion = QDir::current().filePath(QString::fromStdString(document_->scenario().name) +
                                              QStringLiteral(".yaml"));
    const QString path = QFileDialog::getSaveFileName(this, tr("Save scenario as"), suggestion,
                                                      tr("Scenarios (*.yaml *.yml)"));
    if (path.isEmpty())
        return false;
    const QString problem = document_->saveAs(path);
    if (!problem.isEmpty()) {
        QMessageBox::warning(this, tr("Save failed"), problem);
        return false;
    }
    statusBar()->showMessage(tr("Saved %1").arg(path), 4000);
    return true;
}

bool MainWindow::maybeSave() {
    if (!document_->isModified())
        return true;
    const auto answer = QMessageBox::warning(
        this, tr("Unsaved changes"),
        tr("%1 has unsaved changes. Save them?").arg(document_->displayName()),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Save)
        return saveDocument();
    return answer == QMessageBox::Discard;
}

void MainWindow::watchFile() {
    if (!watcher_)
        return;
    if (!watcher_->files().isEmpty())
        watcher_->removePaths(watcher_->files());
    if (options_.watch_file && !document_->filePath().isEmpty() &&
        QFileInfo::exists(document_->filePath()))
        watcher_->addPath(document_->filePath());
}

void MainWindow::onFileChangedOnDisk(const QString& path) {
    if (path != document_->filePath() || asking_reload_)
        return;
    // A save by rename replaces the file, and the watcher forgets a replaced file.
    watchFile();
    if (!QFileInfo::exists(path))
        return;
    const LoadResult loaded = loadScenarioFile(path.toStdString());
    if (loaded.ok() && *loaded.scenario == document_->scenario())
        return; // our own save, or a change that makes no difference
    if (!loaded.ok()) {
        warnings_->setLoadProblems(loaded.diagnostics, path);
        statusBar()->showMessage(tr("%1 changed on disk but does not load; see Warnings")
                                     .arg(QFileInfo(path).fileName()),
                                 10000);
        return;
    }
    if (document_->isModified()) {
        asking_reload_ = true;
        const auto answer =
            QMessageBox::question(this, tr("File changed on disk"),
                                  tr("%1 changed on disk. Reload it and lose your unsaved edits?")
                                      .arg(QFileInfo(path).fileName()),
                                  QMessageBox::Yes | QMessageBox::No, QMessageBox::No);
        asking_reload_ = false;
        if (answer != QMessageBox::Yes)
            return;
    }
    if (openFile(path))
        statusBar()->showMessage(
            tr("Reloaded %1 (changed on disk)").arg(QFileInfo(path).fileName()), 5000);
}

void MainWindow::addRecentFile(const QString& path) {
    if (!options_.use_settings)
        return;
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recentFiles")).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecentFiles)
        recent.removeLast();
    settings.setValue(QStringLiteral("recentFiles"), recent);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
    if (!recent_menu_)
        return;
    recent_menu_->clear();
    const QStringList recent = options_.use_settings
                                   ? QSettings().value(QStringLiteral("recentFiles")).toStringList()
                                   : QStringList();
    for (const QString& path : recent) {
        recent_menu_->addAction(QDir::toNativeSeparators(path), this, [this, path] {
            if (maybeSave())
                openFile(path);
        });
    }
    recent_menu_->setEnabled(!recent.isEmpty());
}

// ---------------------------------------------------------------------------------------------
// Export, layout, theme

QStringList MainWindow::exportViews(const QString& directory, const QStringList& formats) {
    QStringList problems;
    if (!QDir().mkpath(directory)) {
        // mkpath gives no reason; the usual one is a path component that is a file.
        QString blocker = directory;
        while (!blocker.isEmpty() && !QFileInfo::exists(blocker))
            blocker = QFileInfo(blocker).path();
        const bool file_in_the_way = !blocker.isEmpty() && !QFileInfo(blocker).isDir();
        return {file_in_the_way ? tr("cannot create directory %1: %2 is a file, not a directory")
                                      .arg(directory, blocker)
                                : tr("cannot create directory %1").arg(directory)};
    }
    for (ReportView* view : std::as_const(views_)) {
        for (const QString& format : formats) {
            const QString path = QDir(directory).filePath(view->viewId() + '.' + format);
            const QString problem = view->exportTo(path);
            if (!problem.isEmpty())
                problems << QStringLiteral("%1: %2").arg(path, problem);
        }
    }
    // The topology also as an editable draw.io diagram (the hardware graph, not the view).
    const std::string drawio =
        io::writeExport(io::exportScenario(io::ExportFormat::drawio, document_->scenario()),
                        QDir(directory).filePath(QStringLiteral("topology.drawio")).toStdString());
    if (!drawio.empty())
        problems << QString::fromStdString(drawio);
    return problems;
}

void MainWindow::exportDialog() {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export every view to"));
    if (dir.isEmpty())
        return;
    const QStringList problems = exportViews(dir, {"svg", "png", "pdf"});
    if (problems.isEmpty())
        statusBar()->showMessage(tr("Exported %1 views to %2").arg(views_.size()).arg(dir), 6000);
    else
        QMessageBox::warning(this, tr("Export"), problems.join('\n'));
}

QString MainWindow::exportReport(const QString& path) {
    DesignReportInput input;
    input.current = current_;
    input.baseline = compare_ ? compare_->baseline() : nullptr;
    input.source_file = document_->filePath();
    return writeDesignReport(path, input);
}

void MainWindow::exportReportDialog() {
    QString suggestion = QFileInfo(document_->filePath()).absolutePath();
    if (document_->filePath().isEmpty())
        suggestion = QDir::currentPath();
    suggestion = QDir(suggestion)
                     .filePath(QString::fromStdString(document_->scenario().name) +
                               QStringLiteral("-review.pdf"));
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export design-review report"), suggestion,
        tr("PDF report (*.pdf);;HTML report with embedded SVG (*.html)"));
    if (path.isEmpty())
        return;
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const QString problem = exportReport(path);
    QApplication::restoreOverrideCursor();
    if (problem.isEmpty())
        statusBar()->showMessage(tr("Wrote the report to %1").arg(QDir::toNativeSeparators(path)),
                                 6000);
    else
        QMessageBox::warning(this, tr("Export report"), problem);
}

void MainWindow::setDarkPalette(bool dark) {
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(dark ? darkPalette() : QApplication::style()->standardPalette());
    if (options_.use_settings)
        QSettings().setValue(QStringLiteral("darkPalette"), dark);
}

void MainWindow::restoreLayout() {
    QSettings settings;
    const QByteArray geometry = settings.value(QStringLiteral("geometry")).toByteArray();
    if (!geometry.isEmpty())
        restoreGeometry(geometry);
    const QByteArray state = settings.value(QStringLiteral("windowState")).toByteArray();
    if (!state.isEmpty())
        layout_restored_ = restoreState(state, kLayoutVersion);
    if (settings.value(QStringLiteral("darkPalette"), false).toBool()) {
        if (auto* action = findChild<QAction*>(QStringLiteral("darkPaletteAction")))
            action->setChecked(true);
    }
}

void MainWindow::saveLayout() {
    if (!options_.use_settings)
        return;
    QSettings settings;
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    settings.setValue(QStringLiteral("windowState"), saveState(kLayoutVersion));
}

namespace {
QString editCount(int edits) {
    return edits == 1 ? MainWindow::tr("1 unsaved edit")
                      : MainWindow::tr("%1 unsaved edits").arg(edits);
}
} // namespace

bool MainWindow::offerRecovery(bool without_asking) {
    if (!autosave_)
        return false;
    const std::vector<RecoveryEntry> left = Autosave::orphans(options_.recovery_dir);
    if (left.empty())
        return false;
    const RecoveryEntry& newest = left.front();
    const QString name = newest.file_path.isEmpty() ? tr("an unsaved scenario")
                                                    : QFileInfo(newest.file_path).fileName();
    bool restore = without_asking;
    if (!without_asking) {
        const auto answer = QMessageBox::question(
            this, tr("Restore unsaved edits?"),
            tr("MoE Planner did not close cleanly. Restore the unsaved edits to %1 (%2, last "
               "kept %3)?")
                .arg(name, editCount(newest.edits),
                     QLocale().toString(newest.saved_at.toLocalTime(), QLocale::ShortFormat)),
            QMessageBox::Yes | QMessageBox::Discard, QMessageBox::Yes);
        restore = answer == QMessageBox::Yes;
    }
    bool restored = false;
    if (restore) {
        QFile file(newest.path);
        if (file.open(QIODevice::ReadOnly)) {
            const QByteArray text = file.readAll();
            const Diagnostics problems =
                document_->restore(text.toStdString(), newest.file_path, newest.edits);
            restored = !hasErrors(problems);
            if (!restored)
                warnings_->setLoadProblems(problems, newest.path);
        }
    }
    // Restored edits now live in this session's recovery file; declined ones are gone.
    for (const RecoveryEntry& entry : left) {
        if (entry.path != newest.path || restored || !restore)
            QFile::remove(entry.path);
    }
    if (restored) {
        autosave_->writeNow();
        evaluateNow();
        statusBar()->showMessage(tr("Restored %1 to %2").arg(editCount(newest.edits), name), 8000);
    }
    return restored;
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    // A clean close: whatever was saved or discarded needs no recovery.
    if (autosave_)
        autosave_->remove();
    saveLayout();
    event->accept();
}

} // namespace moe::widgets
