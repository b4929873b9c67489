// The main window's menus and their actions: File, Edit, View (panels, GPU colouring, routing
// sample, theme, layout) and Help.
#include "moe_widgets/window/main_window.h"

#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/document/view_state.h"
#include "moe_widgets/window/help_dialogs.h"
#include "moe_widgets/window/interop_dialogs.h"
#include "window/raise_dialog.h"

#include <QAction>
#include <QActionGroup>
#include <QDockWidget>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QToolBar>
#include <QUndoStack>

namespace moe::widgets {

namespace {

// Help pages are windows beside the work, not modal; closed, they go (the shortcuts are read
// from the menus again next time).
template <class Dialog, class... Args> void showHelpPage(QWidget* owner, Args... args) {
    raiseDialog<Dialog>(owner, [&] {
        auto* dialog = new Dialog(args..., owner);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        return dialog;
    });
}

} // namespace

void MainWindow::createMenus() {
    createFileMenu();
    createEditMenu();
    createViewMenu();
    createToolsMenu();
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* manual = help->addAction(tr("&Model and assumptions…"), QKeySequence::HelpContents,
                                      this, [this] { showHelpPage<HelpBrowser>(this); });
    manual->setObjectName(QStringLiteral("modelHelpAction"));
    QAction* keys =
        help->addAction(tr("&Keyboard shortcuts…"), QKeySequence(Qt::CTRL | Qt::Key_Slash), this,
                        [this] { showHelpPage<ShortcutsDialog>(this, menuBar()); });
    keys->setObjectName(QStringLiteral("shortcutsHelpAction"));
    help->addSeparator();
    help->addAction(tr("&About MoE Planner"), this, [this] {
        QMessageBox::about(
            this, tr("About MoE Planner"),
            tr("<b>MoE Planner</b><p>Plans Mixture-of-Experts training clusters: where each "
               "collective lands, how long a step takes and why, whether it fits in memory, "
               "which GPU is the straggler, and what the run costs.</p>"));
    });
}

void MainWindow::createFileMenu() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* from_sample = file->addAction(tr("&New from sample…"), QKeySequence::New, this,
                                           &MainWindow::showNewFromSample);
    from_sample->setObjectName(QStringLiteral("newFromSampleAction"));
    file->addAction(tr("&Open…"), QKeySequence::Open, this, &MainWindow::openDialog);
    recent_menu_ = file->addMenu(tr("Open &recent"));
    file->addAction(tr("Re&load from disk"), QKeySequence(Qt::Key_F5), this, [this] {
        if (!document_->filePath().isEmpty())
            openAfterAsking(document_->filePath());
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
}

void MainWindow::createEditMenu() {
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
}

void MainWindow::createViewMenu() {
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
    createThemeMenu(view_menu_);
    view_menu_->addAction(tr("Reset layout"), this, &MainWindow::resetLayout);
}

void MainWindow::createThemeMenu(QMenu* parent) {
    QMenu* menu = parent->addMenu(tr("&Theme"));
    theme_actions_ = new QActionGroup(this);
    const struct {
        ThemeChoice choice;
        QString label;
        const char* name;
    } themes[] = {
        {ThemeChoice::system, tr("&System (follow the desktop)"), "themeSystemAction"},
        {ThemeChoice::light, tr("&Light"), "themeLightAction"},
        {ThemeChoice::dark, tr("&Dark"), "themeDarkAction"},
    };
    for (const auto& theme : themes) {
        QAction* action = menu->addAction(theme.label);
        action->setObjectName(QLatin1String(theme.name));
        action->setCheckable(true);
        action->setData(static_cast<int>(theme.choice));
        theme_actions_->addAction(action);
        const ThemeChoice choice = theme.choice;
        // A choice made here is kept for the next start; setThemeChoice alone (--dark) is not.
        connect(action, &QAction::triggered, this, [this, choice] {
            setThemeChoice(choice);
            if (options_.use_settings)
                QSettings().setValue(QStringLiteral("theme"), themeChoiceKey(choice));
        });
    }
    setThemeChoice(theme_->choice());
}

void MainWindow::setThemeChoice(ThemeChoice choice) {
    theme_->setChoice(choice);
    if (!theme_actions_)
        return;
    for (QAction* action : theme_actions_->actions())
        action->setChecked(action->data().toInt() == static_cast<int>(choice));
}

} // namespace moe::widgets
