// The docks of the main window: one per panel, the default arrangement (editor left, diagram
// and heatmap top right, timeline and charts below) and its sizes, and the saved layout.
#include "moe_widgets/window/main_window.h"

#include "moe_widgets/charts/breakdown_chart.h"
#include "moe_widgets/charts/heatmap_view.h"
#include "moe_widgets/charts/memory_chart.h"
#include "moe_widgets/charts/reliability_view.h"
#include "moe_widgets/common/report_view.h"
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/editor/scenario_editor.h"
#include "moe_widgets/experiments/hardware_palette.h"
#include "moe_widgets/experiments/layout_bar.h"
#include "moe_widgets/experiments/placement_grid.h"
#include "moe_widgets/report/compare_view.h"
#include "moe_widgets/report/warnings_view.h"
#include "moe_widgets/report/what_changed_view.h"
#include "moe_widgets/timeline/gantt_view.h"
#include "moe_widgets/topology/topology_view.h"

#include <QDockWidget>
#include <QLayout>
#include <QMenu>
#include <QScreen>
#include <QSettings>
#include <QToolBar>
#include <QUndoStack>
#include <QUndoView>

#include <algorithm>

namespace moe::widgets {

namespace {

/// Bumped when the dock set changes, so an old saved layout is not restored over a new one.
constexpr int kLayoutVersion = 4;
/// The most a panel may ask for, so the window still fits a 1280 x 800 screen.
constexpr QSize kMaxPanelMinimum(400, 200);

} // namespace

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

    // What the last edit changed, against the previous state; under the editor, where edits
    // are made.
    what_changed_ = new WhatChangedView(document_, this);
    addDock(what_changed_, QStringLiteral("whatChanged"), tr("What changed"),
            Qt::LeftDockWidgetArea);
    connect(this, &MainWindow::resultShown, what_changed_, &WhatChangedView::showResult);

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

namespace {

/// The docks the default arrangement places, looked up once by view id; a missing one is null
/// (a window may be built without some view), and the slots fall back to what is there.
struct DockSlots {
    QDockWidget* editor;
    QDockWidget* history;
    QDockWidget* topology;
    QDockWidget* heatmap;
    QDockWidget* gantt;
    QDockWidget* breakdown;
    QDockWidget* memory;
    QDockWidget* warnings;
    QDockWidget* reliability;
    QDockWidget* compare;
    QDockWidget* placement;
    QDockWidget* hardware;
    QDockWidget* what_changed;
    QDockWidget* charts = nullptr; ///< the first chart dock; the other charts are its tabs
    QDockWidget* top = nullptr;    ///< top right: the diagram, else the heatmap
    QDockWidget* bottom = nullptr; ///< bottom right: the timeline, else the charts
};

DockSlots dockSlots(const MainWindow& window) {
    const auto dock = [&window](const char* id) { return window.dockFor(QLatin1String(id)); };
    DockSlots d{.editor = dock("editor"),
                .history = dock("history"),
                .topology = dock("topology"),
                .heatmap = dock("heatmap"),
                .gantt = dock("gantt"),
                .breakdown = dock("breakdown"),
                .memory = dock("memory"),
                .warnings = dock("warnings"),
                .reliability = dock("reliability"),
                .compare = dock("compare"),
                .placement = dock("placement"),
                .hardware = dock("hardware"),
                .what_changed = dock("whatChanged")};
    d.charts = d.breakdown ? d.breakdown : d.memory ? d.memory : d.warnings;
    d.top = d.topology ? d.topology : d.heatmap;
    d.bottom = d.gantt ? d.gantt : d.charts;
    return d;
}

} // namespace

void MainWindow::arrangeDocks() {
    // Left column: the editor (history behind it), What changed (warnings behind it) below it.
    // Top right: the diagram and the heatmap side by side. Bottom: the timeline, then the charts
    // as tabs.
    const DockSlots d = dockSlots(*this);
    // Everything nests in one dock area: with two areas around the hidden central widget, Qt
    // splits the width between them evenly and ignores resizeDocks().
    if (d.editor && (d.top || d.bottom))
        splitDockWidget(d.editor, d.top ? d.top : d.bottom, Qt::Horizontal);
    if (d.top && d.bottom)
        splitDockWidget(d.top, d.bottom, Qt::Vertical);
    // Under the editor (before its tabs: a tabbed dock cannot be split).
    if (d.editor && d.what_changed)
        splitDockWidget(d.editor, d.what_changed, Qt::Vertical);
    if (d.topology && d.heatmap)
        splitDockWidget(d.topology, d.heatmap, Qt::Horizontal);
    if (d.gantt && d.charts)
        splitDockWidget(d.gantt, d.charts, Qt::Horizontal);
    for (QDockWidget* tab : {d.memory, d.reliability, d.compare}) {
        if (tab && d.charts && tab != d.charts)
            tabifyDockWidget(d.charts, tab);
    }
    if (d.charts)
        d.charts->raise();
    // Warnings are text like What changed: behind it under the editor, where a list has the
    // height it needs (the chart tabs are too narrow for five titles at 1280 pixels).
    if (d.warnings && d.warnings != d.charts) {
        if (d.what_changed)
            tabifyDockWidget(d.what_changed, d.warnings);
        if (d.what_changed)
            d.what_changed->raise();
        else if (d.charts)
            tabifyDockWidget(d.charts, d.warnings);
    }
    if (d.editor && d.history) {
        tabifyDockWidget(d.editor, d.history);
        d.editor->raise();
    }
    // The experiment docks sit behind the panels they change: placement with the heatmap,
    // hardware with the editor.
    if (d.placement && d.heatmap) {
        tabifyDockWidget(d.heatmap, d.placement);
        d.heatmap->raise();
    }
    if (d.hardware && d.editor) {
        tabifyDockWidget(d.editor, d.hardware);
        d.editor->raise();
    }
}

void MainWindow::sizeDocks() {
    // Sizes only take once the window has its geometry, so this runs on the first show.
    const DockSlots d = dockSlots(*this);
    const int width = this->width();
    const int editor_width = std::clamp(width / 4, 300, 420);
    if (d.editor)
        resizeDocks({d.editor}, {editor_width}, Qt::Horizontal);
    const int rest = width - editor_width;
    if (d.topology && d.heatmap)
        resizeDocks({d.topology, d.heatmap}, {rest * 55 / 100, rest * 45 / 100}, Qt::Horizontal);
    if (d.gantt && d.charts)
        resizeDocks({d.gantt, d.charts}, {rest * 58 / 100, rest * 42 / 100}, Qt::Horizontal);
    // Heights split what the column has (the window less menus, toolbar and status bar): asking
    // for the window's whole height grows a 1280x800 window past its screen.
    if (d.top && d.bottom) {
        const int column = d.top->height() + d.bottom->height();
        resizeDocks({d.top, d.bottom}, {column * 56 / 100, column * 44 / 100}, Qt::Vertical);
    }
    if (d.editor && d.what_changed) {
        const int column = d.editor->height() + d.what_changed->height();
        const int panel = std::clamp(column * 30 / 100, 160, 260);
        resizeDocks({d.editor, d.what_changed}, {column - panel, panel}, Qt::Vertical);
    }
}

void MainWindow::rememberDefaultLayout() {
    default_state_ = saveState(kLayoutVersion);
}

void MainWindow::resetLayout() {
    restoreState(default_state_, kLayoutVersion);
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    if (shown_)
        return;
    shown_ = true;
    if (!layout_restored_) {
        layout()->activate();
        sizeDocks();
        rememberDefaultLayout();
    }
}

void MainWindow::restoreLayout() {
    QSettings settings;
    const QByteArray geometry = settings.value(QStringLiteral("geometry")).toByteArray();
    if (!geometry.isEmpty()) {
        restoreGeometry(geometry);
        // Saved on a larger monitor: shrink to this screen rather than hide docks off its edge.
        const QSize room = screen() ? screen()->availableSize() : size();
        if (width() > room.width() || height() > room.height())
            resize(size().boundedTo(room));
    }
    const QByteArray state = settings.value(QStringLiteral("windowState")).toByteArray();
    if (!state.isEmpty())
        layout_restored_ = restoreState(state, kLayoutVersion);
    // View > Theme; "darkPalette" is the setting of the old Dark palette on/off item.
    const QString before_themes = settings.value(QStringLiteral("darkPalette"), false).toBool()
                                      ? themeChoiceKey(ThemeChoice::dark)
                                      : themeChoiceKey(ThemeChoice::system);
    setThemeChoice(
        themeChoiceFromKey(settings.value(QStringLiteral("theme"), before_themes).toString()));
}

void MainWindow::saveLayout() {
    if (!options_.use_settings)
        return;
    QSettings settings;
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    settings.setValue(QStringLiteral("windowState"), saveState(kLayoutVersion));
}

} // namespace moe::widgets
