#include "moe_widgets/window/main_window.h"

#include "common/view_export.h"

#include "moe_widgets/common/report_view.h"
#include "moe_widgets/document/autosave.h"
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/document/view_state.h"
#include "moe_widgets/report/warnings_view.h"
#include "moe_widgets/report/what_changed_view.h"

#include <QApplication>
#include <QCloseEvent>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QScreen>
#include <QStatusBar>
#include <QStyle>

namespace moe::widgets {

MainWindow::MainWindow(QWidget* parent)
    : MainWindow(Options{}, parent) {}

MainWindow::MainWindow(const Options& options, QWidget* parent)
    : QMainWindow(parent)
    , options_(options)
    , document_(new ScenarioDocument(this))
    , evaluator_(new Evaluator(this))
    , state_(new ViewState(this))
    , theme_(new ThemeController(this)) {
    setObjectName(QStringLiteral("mainWindow"));
    setAcceptDrops(true); // a scenario file dropped anywhere on the window opens
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
    // 1600x1000 unless the screen is smaller (a 1280x800 laptop): a window larger than its
    // screen hides the right-hand docks and the status line's end. Applied again after the docks
    // are placed: splitting them by their size hints grows the window (1280x800 -> 1280x945).
    const QSize preferred(1600, 1000);
    const QSize initial = screen() ? preferred.boundedTo(screen()->availableSize()) : preferred;
    resize(initial);
    arrangeDocks();
    resize(initial);
    rememberDefaultLayout();
    createFileWatcher();

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

void MainWindow::createStatusBar() {
    // Left: what the last edit changed (old -> new step and the items that moved most).
    change_label_ = new WhatChangedLine(what_changed_, this);
    statusBar()->addWidget(change_label_, 1);
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
    // After an edit the what-changed line leads with the new step time: the step figure would
    // repeat it, and its room lets the line name the items that moved on a 1280-pixel screen.
    connect(what_changed_, &WhatChangedView::summaryChanged, step_label_,
            [this](const QString& summary) { step_label_->setVisible(summary.isEmpty()); });
    throughput_label_ =
        make(QStringLiteral("throughputLabel"), tr("Tokens per second, whole cluster and per GPU"));
    mfu_label_ = make(QStringLiteral("mfuLabel"),
                      tr("Model FLOPs utilization versus the GPUs' dense BF16 peak"));
    memory_label_ =
        make(QStringLiteral("memoryLabel"), tr("HBM left on the GPU with the least margin"));
    economics_label_ = make(QStringLiteral("economicsLabel"),
                            tr("Goodput (training time / wall-clock with failures and "
                               "checkpoints) and the expected cost of the run; details in the "
                               "Time and cost panel"));
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
