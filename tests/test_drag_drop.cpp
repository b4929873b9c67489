// Drag-and-drop experiments (issue 7): the layout bar, the expert placement grid, the
// hardware palette and nodes dragged between the topology view's racks, driven with mouse
// press/move/release and keys in the offscreen platform. Each drag must be one undo command that
// undo reverts; a refused drag changes nothing.

#include "moe/edits.h"
#include "moe/evaluate.h"
#include "moe/scenario_io.h"
#include "moe_widgets/document/evaluator.h"
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/document/view_state.h"
#include "moe_widgets/experiments/hardware_palette.h"
#include "moe_widgets/experiments/layout_bar.h"
#include "moe_widgets/experiments/placement_grid.h"
#include "moe_widgets/topology/topology_view.h"
#include "moe_widgets/window/main_window.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QGraphicsView>
#include <QMouseEvent>
#include <QPushButton>
#include <QScrollBar>
#include <QStyle>
#include <QStyleFactory>
#include <QUndoStack>
#include <QtTest>

#include <memory>

using namespace moe;
using namespace moe::widgets;

namespace {

/// Sends a mouse event with the button state a real drag has (QTest::mouseMove carries none).
void sendMouse(QWidget* widget, QEvent::Type type, const QPoint& pos,
               Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
    const Qt::MouseButton button = type == QEvent::MouseMove ? Qt::NoButton : Qt::LeftButton;
    const Qt::MouseButtons buttons =
        type == QEvent::MouseButtonRelease ? Qt::MouseButtons() : Qt::MouseButtons(Qt::LeftButton);
    QMouseEvent event(type, QPointF(pos), QPointF(widget->mapToGlobal(pos)), button, buttons,
                      modifiers);
    QApplication::sendEvent(widget, &event);
}

/// Press at `from`, move in steps to `to`, release there.
void drag(QWidget* widget, const QPoint& from, const QPoint& to,
          Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
    sendMouse(widget, QEvent::MouseButtonPress, from, modifiers);
    constexpr int kSteps = 6;
    for (int i = 1; i <= kSteps; ++i)
        sendMouse(widget, QEvent::MouseMove, from + (to - from) * i / kSteps, modifiers);
    sendMouse(widget, QEvent::MouseButtonRelease, to, modifiers);
}

EvaluationResultPtr evaluated(const Scenario& s) {
    auto result = std::make_shared<EvaluationResult>();
    result->scenario = s;
    result->report = evaluate(s);
    return result;
}

void wheel(QWidget* widget, const QPoint& pos, int delta,
           Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
    QWheelEvent event(QPointF(pos), QPointF(widget->mapToGlobal(pos)), QPoint(), QPoint(0, delta),
                      Qt::NoButton, modifiers, Qt::NoScrollPhase, false);
    QApplication::sendEvent(widget, &event);
}

} // namespace

class TestDragDrop : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void layoutBarDragReordersDimensions();
    void layoutBarCandidatesMatchTheRules();
    void layoutBarRefusesInvalidDegrees();
    void layoutBarWheelAndKeyboard();
    void layoutBarDpChangesNodes();
    void placementDragMovesExpert();
    void placementCtrlDragReplicates();
    void placementKeyboard();
    void placementRefusals();
    void placementPerLayerAndReset();
    void hardwareReplaceAndAdd();
    void hardwareLinkTiers();
    void hardwareKeyboardAndRacks();
    void dropOnTopologyInTheWindow();
    void topologyMovesNodesBetweenRacks();
    void previewCost();
    void renderForInspection();
};

void TestDragDrop::initTestCase() {
    registerMetaTypes();
}

void TestDragDrop::layoutBarDragReordersDimensions() {
    ScenarioDocument doc;
    LayoutBar bar(&doc);
    bar.resize(bar.sizeHint());
    const Scenario before = doc.scenario();
    QCOMPARE(QString::fromStdString(toString(before.layout.order)),
             QStringLiteral("tp-cp-ep-dp-pp"));
    const Report report_before = evaluate(before);
    bar.showResult(evaluated(before));

    // EP (position 3) dragged onto DP's slot (position 4): order tp-cp-dp-ep-pp.
    drag(&bar, bar.chipRect(Dim::ep).center(), bar.chipRect(Dim::dp).center());
    QCOMPARE(QString::fromStdString(toString(doc.scenario().layout.order)),
             QStringLiteral("tp-cp-dp-ep-pp"));
    QCOMPARE(doc.undoStack()->count(), 1);
    QVERIFY(bar.message().isEmpty());
    QCOMPARE(bar.order()[3], Dim::ep); // the bar follows the document

    // The physics follows: the all-to-all leaves NVLink and the step gets slower.
    const Report report_after = evaluate(doc.scenario());
    QCOMPARE(report_before.placement->spanOf(GroupKind::ep).link_class, LinkClass::scale_up);
    QCOMPARE(report_after.placement->spanOf(GroupKind::ep).link_class, LinkClass::scale_out);
    QVERIFY(report_after.step_time_s > report_before.step_time_s);

    doc.undoStack()->undo();
    QVERIFY(doc.scenario() == before);
    QCOMPARE(bar.order()[2], Dim::ep);

    // A click (no movement) is not a drag.
    sendMouse(&bar, QEvent::MouseButtonPress, bar.chipRect(Dim::tp).center());
    sendMouse(&bar, QEvent::MouseButtonRelease, bar.chipRect(Dim::tp).center());
    QVERIFY(doc.scenario() == before);
    QCOMPARE(bar.focusedDim(), Dim::tp);
}

void TestDragDrop::layoutBarCandidatesMatchTheRules() {
    // Every candidate's verdict is what --set (setScenarioField) says about that degree.
    ScenarioDocument doc;
    LayoutBar bar(&doc);
    for (Dim d : {Dim::tp, Dim::cp, Dim::ep, Dim::dp, Dim::pp}) {
        const auto candidates = bar.candidates(d);
        QVERIFY2(!candidates.isEmpty(), toString(d));
        for (const auto& c : candidates) {
            const std::vector<FieldAssignment> fields = bar.degreeAssignments(d, c.degree);
            QCOMPARE(fields.size(), std::size_t{1});
            const std::string value = std::to_string(std::get<int64_t>(fields.front().value));
            const FieldEditResult direct =
                setScenarioField(doc.scenario(), fields.front().path, value);
            QCOMPARE(c.valid, direct.ok());
            QCOMPARE(c.reason.isEmpty(), c.valid);
        }
    }
    // EP = 8 of 16 experts: 16 is a valid neighbour, 32 does not divide the experts.
    const auto ep = bar.candidates(Dim::ep);
    bool saw16 = false;
    for (const auto& c : ep)
        saw16 |= c.degree == 16 && c.valid;
    QVERIFY(saw16);
}

void TestDragDrop::layoutBarRefusesInvalidDegrees() {
    ScenarioDocument doc;
    LayoutBar bar(&doc);
    const Scenario before = doc.scenario();
    QVERIFY(!bar.setDegree(Dim::ep, 32)); // 16 experts % 32 != 0
    QVERIFY(doc.scenario() == before);
    QCOMPARE(doc.undoStack()->count(), 0);
    QVERIFY2(bar.message().contains(QStringLiteral("layout.ep")), qPrintable(bar.message()));
    // An applied edit clears the refusal.
    QVERIFY(bar.setDegree(Dim::ep, 16));
    QVERIFY(bar.message().isEmpty());
    QCOMPARE(doc.scenario().layout.ep, 16);
    QCOMPARE(doc.scenario().layout.expertDp(), 4);
    QCOMPARE(doc.undoStack()->count(), 1);
}

void TestDragDrop::layoutBarWheelAndKeyboard() {
    ScenarioDocument doc;
    LayoutBar bar(&doc);
    bar.resize(bar.sizeHint());
    bar.show();
    QVERIFY(QTest::qWaitForWindowExposed(&bar));
    const Scenario before = doc.scenario();

    // Wheel up over TP: the next valid TP degree, dp follows the GPU count.
    int next_tp = 0;
    for (const auto& c : bar.candidates(Dim::tp))
        if (c.degree > 1 && c.valid && next_tp == 0)
            next_tp = c.degree;
    QVERIFY(next_tp > 1);
    wheel(&bar, bar.chipRect(Dim::tp).center(), 120);
    QCOMPARE(doc.scenario().layout.tp, next_tp);
    QCOMPARE(doc.scenario().layout.dp, 64 / next_tp);
    QCOMPARE(doc.undoStack()->count(), 1);

    // Keyboard on the focused chip: Down steps back, Ctrl+Right moves it outward.
    bar.setFocus();
    bar.setFocusedDim(Dim::tp);
    QTest::keyClick(&bar, Qt::Key_Down);
    QCOMPARE(doc.scenario().layout.tp, 1);
    QCOMPARE(doc.undoStack()->count(), 2);
    bar.setFocusedDim(Dim::ep);
    QTest::keyClick(&bar, Qt::Key_Right, Qt::ControlModifier);
    QCOMPARE(QString::fromStdString(toString(doc.scenario().layout.order)),
             QStringLiteral("tp-cp-dp-ep-pp"));
    QCOMPARE(bar.focusedDim(), Dim::ep); // the focus travels with the chip
    QTest::keyClick(&bar, Qt::Key_Left, Qt::ControlModifier);
    QVERIFY(doc.scenario().layout.order == before.layout.order);
    QCOMPARE(doc.undoStack()->count(), 4);
    // Left/Right alone only move the focus.
    QTest::keyClick(&bar, Qt::Key_Left);
    QCOMPARE(bar.focusedDim(), Dim::cp);
    QCOMPARE(doc.undoStack()->count(), 4);
    // Shift+Up on EP changes the expert TP.
    bar.setFocusedDim(Dim::ep);
    QTest::keyClick(&bar, Qt::Key_Up, Qt::ShiftModifier);
    QVERIFY(doc.scenario().layout.etp > 1);
    QCOMPARE(doc.scenario().layout.ep, 8);
    // The arrows on a chip step too.
    const int etp = doc.scenario().layout.etp;
    QTest::mouseClick(&bar, Qt::LeftButton, Qt::NoModifier, bar.arrowRect(Dim::ep, true).center());
    QCOMPARE(doc.scenario().layout.ep, 16);
    QCOMPARE(doc.scenario().layout.etp, etp);

    while (doc.undoStack()->canUndo())
        doc.undoStack()->undo();
    QVERIFY(doc.scenario() == before);
}

void TestDragDrop::layoutBarDpChangesNodes() {
    // DP = GPUs / (tp*cp*pp): more replicas mean more nodes. From 8 nodes (dp 64) the nearest
    // node counts (9..15) break global_batch 512 % dp, so the next valid DP is 128 (16 nodes).
    ScenarioDocument doc;
    LayoutBar bar(&doc);
    QVERIFY(bar.stepDegree(Dim::dp, +1));
    QCOMPARE(doc.scenario().cluster.nodes, 16);
    QCOMPARE(doc.scenario().layout.dp, 128);
    QCOMPARE(doc.undoStack()->count(), 1);
    const auto candidates = bar.candidates(Dim::dp);
    bool refused_shown = false;
    for (const auto& c : candidates)
        refused_shown |= !c.valid && c.reason.contains(QStringLiteral("global_batch"));
    QVERIFY(refused_shown);
    doc.undoStack()->undo();
    QCOMPARE(doc.scenario().cluster.nodes, 8);
}

void TestDragDrop::placementDragMovesExpert() {
    ScenarioDocument doc;
    PlacementGrid grid(&doc);
    grid.resize(900, 400);
    grid.showResult(evaluated(doc.scenario()));
    QWidget* canvas = grid.canvas();
    const Scenario before = doc.scenario();
    // Round-robin: expert 0 and 8 on rank 0.
    QCOMPARE(grid.ranksOfExpert()[0], std::vector<int>{0});
    QCOMPARE(grid.expertsOnRank()[0], (std::vector<int>{0, 8}));

    drag(canvas, grid.chipRect(0, 0).center(), grid.columnRect(3).center());
    const auto& placement = doc.scenario().layout.expert_placement;
    QCOMPARE(placement.size(), size_t(1));
    QCOMPARE(placement[0].expert, 0);
    QCOMPARE(placement[0].layer, -1);
    QCOMPARE(placement[0].ep_ranks, std::vector<int>{3});
    QCOMPARE(doc.undoStack()->count(), 1);
    QCOMPARE(grid.expertsOnRank()[3], (std::vector<int>{0, 3, 11}));
    QCOMPARE(grid.selection()->first, 0);
    QCOMPARE(grid.selection()->second, 3);

    // Load follows through the normal evaluation: rank 3 now holds three experts' tokens.
    const Report report = evaluate(doc.scenario());
    const auto& experts = report.placement->expertsForLayer(0).experts_on_rank;
    QCOMPARE(experts[3].size(), size_t(3));
    QCOMPARE(experts[0].size(), size_t(1));

    // Moving it back to its round-robin rank removes the entry (the file stays clean).
    drag(canvas, grid.chipRect(0, 3).center(), grid.columnRect(0).center());
    QVERIFY(doc.scenario().layout.expert_placement.empty());
    QCOMPARE(doc.undoStack()->count(), 2);
    doc.undoStack()->undo();
    doc.undoStack()->undo();
    QVERIFY(doc.scenario() == before);
}

void TestDragDrop::placementCtrlDragReplicates() {
    ScenarioDocument doc;
    PlacementGrid grid(&doc);
    grid.resize(900, 400);
    QWidget* canvas = grid.canvas();
    drag(canvas, grid.chipRect(1, 1).center(), grid.columnRect(5).center(), Qt::ControlModifier);
    const auto& placement = doc.scenario().layout.expert_placement;
    QCOMPARE(placement.size(), size_t(1));
    QCOMPARE(placement[0].ep_ranks, (std::vector<int>{1, 5}));
    QCOMPARE(doc.undoStack()->count(), 1);
    // Both replicas are drawn; the replica's tokens are split evenly by the model.
    QVERIFY(!grid.chipRect(1, 1).isEmpty());
    QVERIFY(!grid.chipRect(1, 5).isEmpty());
    const Report report = evaluate(doc.scenario());
    QCOMPARE(report.placement->expertsForLayer(0).ranks_of_expert[1], (std::vector<int>{1, 5}));
    doc.undoStack()->undo();
    QVERIFY(doc.scenario().layout.expert_placement.empty());
}

void TestDragDrop::placementKeyboard() {
    ScenarioDocument doc;
    PlacementGrid grid(&doc);
    grid.resize(900, 400);
    grid.show();
    QVERIFY(QTest::qWaitForWindowExposed(&grid));
    QWidget* canvas = grid.canvas();
    canvas->setFocus();
    // The first arrow selects the first chip; Down selects the next one on that rank.
    QTest::keyClick(canvas, Qt::Key_Right);
    QCOMPARE(*grid.selection(), std::make_pair(0, 0));
    QTest::keyClick(canvas, Qt::Key_Down);
    QCOMPARE(*grid.selection(), std::make_pair(8, 0));
    // M moves expert 8 to the next rank, R replicates it onto the one after.
    QTest::keyClick(canvas, Qt::Key_M);
    QCOMPARE(grid.ranksOfExpert()[8], std::vector<int>{1});
    QCOMPARE(*grid.selection(), std::make_pair(8, 1));
    QTest::keyClick(canvas, Qt::Key_R);
    QCOMPARE(grid.ranksOfExpert()[8], (std::vector<int>{1, 2}));
    QCOMPARE(*grid.selection(), std::make_pair(8, 2));
    // Delete removes the selected replica; the last copy cannot be removed.
    QTest::keyClick(canvas, Qt::Key_Delete);
    QCOMPARE(grid.ranksOfExpert()[8], std::vector<int>{1});
    const int commands = doc.undoStack()->count();
    QCOMPARE(commands, 3);
    QTest::keyClick(canvas, Qt::Key_Delete);
    QCOMPARE(grid.ranksOfExpert()[8], std::vector<int>{1});
    QCOMPARE(doc.undoStack()->count(), commands);
    QVERIFY(grid.message().contains(QStringLiteral("only copy")));
    // Shift+Left moves toward the previous rank.
    QTest::keyClick(canvas, Qt::Key_Left, Qt::ShiftModifier);
    QCOMPARE(grid.ranksOfExpert()[8], std::vector<int>{0});
    QVERIFY(doc.scenario().layout.expert_placement.empty()); // back to round-robin
}

void TestDragDrop::placementRefusals() {
    ScenarioDocument doc;
    PlacementGrid grid(&doc);
    grid.resize(900, 400);
    QWidget* canvas = grid.canvas();
    QVERIFY(grid.replicateExpert(2, 4));
    const Scenario before = doc.scenario();
    const int commands = doc.undoStack()->count();
    // Moving a replica onto a rank that already holds the expert is refused.
    drag(canvas, grid.chipRect(2, 2).center(), grid.columnRect(4).center());
    QVERIFY(doc.scenario() == before);
    QCOMPARE(doc.undoStack()->count(), commands);
    QVERIFY(grid.message().contains(QStringLiteral("already")));
    // A drop outside every column does nothing.
    drag(canvas, grid.chipRect(2, 2).center(), QPoint(canvas->width() + 500, 10));
    QVERIFY(doc.scenario() == before);
    // The rules' own refusals come back from the document (an expert out of range).
    QVERIFY(!grid.moveExpert(99, 0, 1));
    QVERIFY(doc.scenario() == before);
}

void TestDragDrop::placementPerLayerAndReset() {
    ScenarioDocument doc;
    PlacementGrid grid(&doc);
    grid.resize(900, 400);
    grid.setLayer(1);
    QVERIFY(grid.moveExpert(5, 5, 6));
    auto placement = doc.scenario().layout.expert_placement;
    QCOMPARE(placement.size(), size_t(1));
    QCOMPARE(placement[0].layer, 1);
    const Report report = evaluate(doc.scenario());
    QCOMPARE(report.placement->expertsForLayer(1).ranks_of_expert[5], std::vector<int>{6});
    QCOMPARE(report.placement->expertsForLayer(0).ranks_of_expert[5], std::vector<int>{5});
    grid.setLayer(-1);
    QCOMPARE(grid.ranksOfExpert()[5], std::vector<int>{5});
    QVERIFY(grid.replicateExpert(7, 0));
    QCOMPARE(doc.scenario().layout.expert_placement.size(), size_t(2));
    QTest::mouseClick(grid.findChild<QPushButton*>(QStringLiteral("resetPlacementButton")),
                      Qt::LeftButton);
    QVERIFY(doc.scenario().layout.expert_placement.empty());
    QCOMPARE(doc.undoStack()->count(), 3);
    doc.undoStack()->undo();
    QCOMPARE(doc.scenario().layout.expert_placement.size(), size_t(2));
}

void TestDragDrop::hardwareReplaceAndAdd() {
    ScenarioDocument doc;
    HardwarePalette palette(&doc);
    palette.resize(600, 700);
    QWidget* canvas = palette.canvas();
    canvas->resize(canvas->sizeHint());
    const Scenario before = doc.scenario();
    using T = HardwarePalette::Target;

    const int b200 = palette.findItem(QStringLiteral("b200"));
    const int gb200 = palette.findItem(QStringLiteral("gb200"));
    const int h100 = palette.findItem(QStringLiteral("h100-sxm"));
    QVERIFY(b200 >= 0 && gb200 >= 0 && h100 >= 0);
    QCOMPARE(palette.items()[gb200].title, QStringLiteral("GB200 NVL72 rack"));

    // B200 HGX node onto Replace: same node shape, faster GPUs and NVLink 5.
    drag(canvas, palette.itemRect(b200).center(), palette.targetRect(T::replace).center());
    QCOMPARE(doc.scenario().cluster.gpu.preset, std::string("b200"));
    QCOMPARE(doc.scenario().cluster.gpuCount(), 64);
    QCOMPARE(doc.scenario().cluster.gpu.scale_up_gbps, 900.0);
    QCOMPARE(doc.undoStack()->count(), 1);
    QVERIFY(evaluate(doc.scenario()).step_time_s < evaluate(before).step_time_s);
    doc.undoStack()->undo();
    QVERIFY(doc.scenario() == before);

    // A GB200 NVL72 rack keeps 64 GPUs only as a whole rack of 72: dp 72 breaks
    // global_batch 512, so the drop is refused with that reason and nothing changes.
    const QString preview = palette.dropDescription(gb200, T::replace);
    QVERIFY2(preview.startsWith(QStringLiteral("Refused")), qPrintable(preview));
    drag(canvas, palette.itemRect(gb200).center(), palette.targetRect(T::replace).center());
    QVERIFY(doc.scenario() == before);
    QCOMPARE(doc.undoStack()->index(), 0);
    QVERIFY(doc.undoStack()->canRedo()); // the B200 edit is still there to redo: nothing was pushed
    QVERIFY2(palette.message().contains(QStringLiteral("global_batch")),
             qPrintable(palette.message()));
    // With a batch both 64 and 72 GPUs can take (1152), it goes through: 18 trays x 4 GPUs, one
    // NVLink domain.
    QVERIFY(
        !hasErrors(doc.setField(QStringLiteral("training.global_batch"), QStringLiteral("1152"))));
    QVERIFY(palette.drop(gb200, T::replace));
    QCOMPARE(doc.scenario().cluster.gpu.preset, std::string("gb200"));
    QCOMPARE(doc.scenario().cluster.nodes, 18);
    QCOMPARE(doc.scenario().cluster.gpus_per_node, 4);
    QCOMPARE(doc.scenario().cluster.scale_up_domain, ScaleUpDomain::rack);
    QCOMPARE(doc.scenario().cluster.gpusPerScaleUpDomain(), 72);
    doc.undoStack()->undo();
    doc.undoStack()->undo();
    QVERIFY(doc.scenario() == before);

    // Add: another node type is refused (one node type per scenario) ...
    drag(canvas, palette.itemRect(b200).center(), palette.targetRect(T::add).center());
    QVERIFY(doc.scenario() == before);
    QVERIFY(palette.message().contains(QStringLiteral("one node type")));
    // ... the cluster's own type adds the smallest valid number of nodes (dp follows).
    drag(canvas, palette.itemRect(h100).center(), palette.targetRect(T::add).center());
    QCOMPARE(doc.scenario().cluster.nodes, 16);
    QCOMPARE(doc.scenario().layout.dp, 128);
    QCOMPARE(doc.undoStack()->count(), 1);
    QVERIFY(palette.message().isEmpty());
}

void TestDragDrop::hardwareLinkTiers() {
    ScenarioDocument doc;
    HardwarePalette palette(&doc);
    QWidget* canvas = palette.canvas();
    canvas->resize(canvas->sizeHint());
    using T = HardwarePalette::Target;
    const Scenario before = doc.scenario();
    const int cx8 = palette.findItem(QStringLiteral("cx8-800g"));
    QVERIFY(cx8 >= 0);
    int nvlink900 = -1;
    for (int i = 0; i < palette.items().size(); ++i)
        if (palette.items()[i].kind == HardwarePalette::ItemKind::scale_up_link &&
            palette.items()[i].scale_up_gbps == 900)
            nvlink900 = i;
    QVERIFY(nvlink900 >= 0);

    // A NIC on the scale-up tier makes no sense: refused, unchanged.
    drag(canvas, palette.itemRect(cx8).center(), palette.targetRect(T::scale_up).center());
    QVERIFY(doc.scenario() == before);
    QVERIFY(palette.message().contains(QStringLiteral("scale-out")));

    drag(canvas, palette.itemRect(cx8).center(), palette.targetRect(T::scale_out).center());
    QCOMPARE(doc.scenario().cluster.nic.preset, std::string("cx8-800g"));
    QCOMPARE(doc.scenario().cluster.nic.bandwidth_gbps, 96.0);
    drag(canvas, palette.itemRect(nvlink900).center(), palette.targetRect(T::scale_up).center());
    QCOMPARE(doc.scenario().cluster.gpu.scale_up_gbps, 900.0);
    QCOMPARE(doc.scenario().cluster.gpu.preset, std::string("h100-sxm"));
    QCOMPARE(doc.undoStack()->count(), 2);
    doc.undoStack()->undo();
    doc.undoStack()->undo();
    QVERIFY(doc.scenario() == before);
}

void TestDragDrop::hardwareKeyboardAndRacks() {
    ScenarioDocument doc;
    HardwarePalette palette(&doc);
    using T = HardwarePalette::Target;
    palette.setKeyboardChoice(palette.findItem(QStringLiteral("h200-sxm")), T::replace);
    QTest::mouseClick(palette.findChild<QPushButton*>(QStringLiteral("hardwareApplyButton")),
                      Qt::LeftButton);
    QCOMPARE(doc.scenario().cluster.gpu.preset, std::string("h200-sxm"));
    QCOMPARE(doc.undoStack()->count(), 1);

    // Re-racking: 4 nodes per rack (2 racks) -> 5 (a partial second rack is fine when the
    // NVLink domain is the node).
    QCOMPARE(doc.scenario().cluster.nodes_per_rack, 4);
    QWidget* canvas = palette.canvas();
    QTest::keyClick(canvas, Qt::Key_Up);
    QCOMPARE(doc.scenario().cluster.nodes_per_rack, 5);
    QCOMPARE(doc.scenario().cluster.rackCount(), 2);
    QCOMPARE(doc.undoStack()->count(), 2);
    QTest::keyClick(canvas, Qt::Key_Down);
    QCOMPARE(doc.scenario().cluster.nodes_per_rack, 4);
}

void TestDragDrop::dropOnTopologyInTheWindow() {
    // In the main window: a node tile released over the topology view replaces the hardware;
    // the window's experiments are wired to the document and receive the results.
    MainWindow::Options options;
    options.use_settings = false;
    options.watch_file = false;
    MainWindow window(options);
    window.resize(1600, 1000);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.layoutBar() && window.placementGrid() && window.hardwarePalette());
    QDockWidget* hardware = window.dockFor(QStringLiteral("hardware"));
    QVERIFY(hardware);
    hardware->raise();
    QDockWidget* topology = window.dockFor(QStringLiteral("topology"));
    QVERIFY(topology && topology->isVisible());
    QCoreApplication::processEvents();
    HardwarePalette* palette = window.hardwarePalette();
    QWidget* canvas = palette->canvas();
    QVERIFY(canvas->isVisible());
    const int b200 = palette->findItem(QStringLiteral("b200"));
    const QPoint over_topology =
        canvas->mapFromGlobal(topology->widget()->mapToGlobal(topology->widget()->rect().center()));
    drag(canvas, palette->itemRect(b200).center(), over_topology);
    QCOMPARE(window.document()->scenario().cluster.gpu.preset, std::string("b200"));
    QCOMPARE(window.document()->undoStack()->count(), 1);
    // The layout bar in the window edits the same document.
    LayoutBar* bar = window.layoutBar();
    drag(bar, bar->chipRect(Dim::ep).center(), bar->chipRect(Dim::dp).center());
    QCOMPARE(QString::fromStdString(toString(window.document()->scenario().layout.order)),
             QStringLiteral("tp-cp-dp-ep-pp"));
    window.evaluateNow();
    QVERIFY(window.currentResult()->scenario == window.document()->scenario());
}

void TestDragDrop::topologyMovesNodesBetweenRacks() {
    // The default cluster (8 nodes) in racks of up to 5: rack 0 full (5), rack 1 with 3 nodes
    // and two free slots. A 40 kW rack limit that a full rack of H100 nodes exceeds.
    ScenarioDocument doc;
    QVERIFY(!hasErrors(
        doc.setFields(QStringLiteral("racks"), {{"cluster.nodes_per_rack", int64_t{5}},
                                                {"cluster.rack_power_limit_kw", 40.0}})));
    doc.undoStack()->clear();
    const Scenario before = doc.scenario();
    QCOMPARE(before.cluster.nodesInRacks(), (std::vector<int>{5, 3}));
    ViewState state;
    TopologyView view(&doc, &state);
    view.resize(1400, 900);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const auto refresh = [&] { view.showResult(evaluated(doc.scenario())); };
    refresh();
    QGraphicsView* gv = view.graphicsView();
    QWidget* viewport = gv->viewport();
    QVERIFY(view.detail() != TopologyView::Detail::racks); // nodes are drawn: they can be dragged
    const auto at = [&](const QRectF& scene_rect) { return gv->mapFromScene(scene_rect.center()); };
    QCOMPARE(view.nodeAtScenePos(view.nodeSceneRect(6).center()), 6);
    QVERIFY(view.rackSceneRect(1).contains(view.nodeSceneRect(5)));
    QVERIFY(!view.newRackSceneRect().isEmpty());
    QVERIFY(view.newRackSceneRect().left() > view.rackSceneRect(1).right());

    // The rack caption: nodes held of the capacity, IT power, and the rack over the limit.
    const QPointF rack0_header = view.rackSceneRect(0).topLeft() + QPointF(12, 10);
    const QString tip0 = view.toolTipAt(rack0_header);
    QVERIFY2(tip0.contains(QStringLiteral("rack 0 · 5 of 5 nodes · ")) &&
                 tip0.contains(QStringLiteral(" kW")) &&
                 tip0.contains(QStringLiteral("over the 40.0 kW rack limit")),
             qPrintable(tip0));
    const QString tip1 = view.toolTipAt(view.rackSceneRect(1).topLeft() + QPointF(12, 10));
    QVERIFY2(tip1.contains(QStringLiteral("rack 1 · 3 of 5 nodes")) && !tip1.contains("over the"),
             qPrintable(tip1));

    // Node 1 dragged from rack 0 onto rack 1: racks of 4 and 4, one undo step.
    QVERIFY2(view.nodeMovePreview(1, 1).startsWith(
                 QStringLiteral("Move node 1 from rack 0 to "
                                "rack 1: rack 1 then holds 4 of 5 nodes")),
             qPrintable(view.nodeMovePreview(1, 1)));
    drag(viewport, at(view.nodeSceneRect(1)), at(view.rackSceneRect(1)));
    QCOMPARE(doc.scenario().cluster.nodesInRacks(), (std::vector<int>{4, 4}));
    QCOMPARE(doc.undoStack()->count(), 1);
    QCOMPARE(doc.undoStack()->undoText(), QStringLiteral("Move node 1 from rack 0 to rack 1"));
    QVERIFY(view.message().isEmpty());
    const Scenario dragged = doc.scenario();
    refresh(); // the scene is rebuilt for the new racks
    QCOMPARE(view.nodeAtScenePos(view.nodeSceneRect(4).center()), 4);
    QVERIFY(view.rackSceneRect(1).contains(view.nodeSceneRect(4)));
    doc.undoStack()->undo();
    QVERIFY(doc.scenario() == before);
    refresh();

    // Mid-drag: the ghost and the verdict on the rack under the cursor (MOE_DRAG_PNG_DIR keeps
    // pictures of them); Escape cancels.
    const QString dir = qEnvironmentVariable("MOE_DRAG_PNG_DIR");
    if (!dir.isEmpty())
        QDir().mkpath(dir);
    sendMouse(viewport, QEvent::MouseButtonPress, at(view.nodeSceneRect(6)));
    for (const QRectF& over : {view.rackSceneRect(0), view.newRackSceneRect()}) {
        sendMouse(viewport, QEvent::MouseMove, at(over) + QPoint(-5, 20));
        const QImage image = view.grab().toImage();
        QVERIFY(!image.isNull());
        if (!dir.isEmpty())
            image.save(dir + (over == view.newRackSceneRect()
                                  ? QStringLiteral("/topology_drag_new_rack.png")
                                  : QStringLiteral("/topology_drag_refused.png")));
    }
    QTest::keyClick(gv, Qt::Key_Escape);
    sendMouse(viewport, QEvent::MouseButtonRelease, at(view.newRackSceneRect()));
    QVERIFY(doc.scenario() == before);
    QCOMPARE(doc.undoStack()->index(), 0);

    // Rack 1's node onto the full rack 0: refused with the reason, nothing changes.
    const QString refused = view.nodeMovePreview(6, 0);
    QVERIFY2(refused.startsWith(QStringLiteral("Refused: ")) &&
                 refused.contains(QStringLiteral("more than a rack holds")),
             qPrintable(refused));
    drag(viewport, at(view.nodeSceneRect(6)), at(view.rackSceneRect(0)));
    QVERIFY(doc.scenario() == before);
    QCOMPARE(doc.undoStack()->index(), 0);
    QVERIFY2(view.message().contains(QStringLiteral("more than a rack holds")),
             qPrintable(view.message()));

    // Onto "+ new rack": a third rack with the one node.
    drag(viewport, at(view.nodeSceneRect(2)), at(view.newRackSceneRect()));
    QCOMPARE(doc.scenario().cluster.nodesInRacks(), (std::vector<int>{4, 3, 1}));
    QCOMPARE(doc.undoStack()->index(), 1);
    QVERIFY(view.message().isEmpty());
    refresh();
    QVERIFY(!view.rackSceneRect(2).isEmpty());
    QVERIFY(view.rackSceneRect(2).contains(view.nodeSceneRect(7)));
    doc.undoStack()->undo();
    QVERIFY(doc.scenario() == before);
    refresh();

    // A click (no movement) on a node still selects its GPU; Alt+Right moves the selected GPU's
    // node to the next rack, as the drag did, and the selection follows it.
    QTest::mouseClick(viewport, Qt::LeftButton, {}, at(view.gpuSceneRect(4 * 8 + 3)));
    QCOMPARE(state.selectedGpu(), 4 * 8 + 3);
    QVERIFY(doc.scenario() == before);
    QTest::keyClick(gv, Qt::Key_Right, Qt::AltModifier);
    QVERIFY(doc.scenario() == dragged);
    QCOMPARE(doc.undoStack()->index(), 1);
    refresh();
    QVERIFY(view.rackSceneRect(1).contains(view.gpuSceneRect(state.selectedGpu())));
    // Alt+Right again: there is no rack after rack 1 (Alt+N opens one).
    QTest::keyClick(gv, Qt::Key_Right, Qt::AltModifier);
    QVERIFY(doc.scenario() == dragged);
    QVERIFY2(view.message().contains(QStringLiteral("Alt+N")), qPrintable(view.message()));
    QTest::keyClick(gv, Qt::Key_N, Qt::AltModifier);
    QCOMPARE(doc.scenario().cluster.nodesInRacks(), (std::vector<int>{4, 3, 1}));
    QCOMPARE(doc.undoStack()->index(), 2);
    refresh();
    QVERIFY(view.rackSceneRect(2).contains(view.gpuSceneRect(state.selectedGpu())));
    QTest::keyClick(gv, Qt::Key_Left, Qt::AltModifier);
    QCOMPARE(doc.scenario().cluster.nodesInRacks(), (std::vector<int>{4, 4}));
    doc.undoStack()->undo();
    doc.undoStack()->undo();
    doc.undoStack()->undo();
    QVERIFY(doc.scenario() == before);

    // A GB200 NVL72 rack is one NVLink domain: every move is refused with that reason.
    LoadResult gb200 = loadScenarioFile(MOE_SAMPLES_DIR "/gb200-nvl72-deepseek-v3.yaml");
    QVERIFY(gb200.ok());
    doc.reset(*gb200.scenario);
    refresh();
    view.zoomToGpu(60, 40);
    const QString nvlink = view.nodeMovePreview(15, 1);
    QVERIFY2(nvlink.startsWith(QStringLiteral("Refused: ")) &&
                 nvlink.contains(QStringLiteral("NVLink domain")),
             qPrintable(nvlink));
    QVERIFY(!view.moveNode(15, 1));
    QVERIFY(view.message().contains(QStringLiteral("NVLink domain")));
    QCOMPARE(doc.undoStack()->count(), 0);
    if (!dir.isEmpty())
        view.grab().toImage().save(dir + QStringLiteral("/topology_gb200_refused.png"));

    // The middle button pans anywhere, also over a node (where the left button picks it up).
    QScrollBar* scroll = gv->horizontalScrollBar();
    const int scrolled = scroll->value();
    const QPoint over_node = at(view.nodeSceneRect(15));
    const auto middle = [&](QEvent::Type type, const QPoint& pos) {
        QMouseEvent event(type, QPointF(pos), QPointF(viewport->mapToGlobal(pos)),
                          type == QEvent::MouseMove ? Qt::NoButton : Qt::MiddleButton,
                          type == QEvent::MouseButtonRelease ? Qt::MouseButtons()
                                                             : Qt::MouseButtons(Qt::MiddleButton),
                          Qt::NoModifier);
        QApplication::sendEvent(viewport, &event);
    };
    middle(QEvent::MouseButtonPress, over_node);
    middle(QEvent::MouseMove, over_node - QPoint(60, 0));
    middle(QEvent::MouseButtonRelease, over_node - QPoint(60, 0));
    QCOMPARE(scroll->value(), scrolled + 60);
    QCOMPARE(doc.undoStack()->count(), 0);
}

void TestDragDrop::previewCost() {
    // What a degree preview costs (each candidate is a --set round trip through the YAML).
    ScenarioDocument doc;
    LayoutBar bar(&doc);
    QElapsedTimer timer;
    timer.start();
    int count = 0;
    for (Dim d : {Dim::tp, Dim::cp, Dim::ep, Dim::dp, Dim::pp})
        count += static_cast<int>(bar.candidates(d).size());
    const double all_ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    qInfo("candidates of all five chips: %d shown, %.1f ms", count, all_ms);
    timer.restart();
    constexpr int kPreviews = 50;
    for (int i = 0; i < kPreviews; ++i)
        (void)doc.previewFields({{"layout.order", std::string("tp-cp-dp-ep-pp")}});
    qInfo("one preview (setFields without applying): %.2f ms",
          static_cast<double>(timer.nsecsElapsed()) / 1e6 / kPreviews);
}

void TestDragDrop::renderForInspection() {
    // Renders the three widgets on the light and the dark palette; MOE_DRAG_PNG_DIR keeps them.
    const QString dir = qEnvironmentVariable("MOE_DRAG_PNG_DIR");
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    const QPalette light = QApplication::style()->standardPalette();
    QPalette dark = light;
    dark.setColor(QPalette::Window, QColor(0x2b, 0x2d, 0x31));
    dark.setColor(QPalette::WindowText, QColor(0xe6, 0xe8, 0xeb));
    dark.setColor(QPalette::Base, QColor(0x1f, 0x21, 0x24));
    dark.setColor(QPalette::AlternateBase, QColor(0x27, 0x29, 0x2d));
    dark.setColor(QPalette::Text, QColor(0xe6, 0xe8, 0xeb));
    dark.setColor(QPalette::Button, QColor(0x2b, 0x2d, 0x31));
    dark.setColor(QPalette::ButtonText, QColor(0xe6, 0xe8, 0xeb));
    dark.setColor(QPalette::Mid, QColor(0x45, 0x48, 0x4e));
    dark.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x80, 0x84, 0x8a));
    dark.setColor(QPalette::Disabled, QPalette::Text, QColor(0x80, 0x84, 0x8a));

    for (const auto& [name, pal] :
         {std::pair{QStringLiteral("light"), light}, std::pair{QStringLiteral("dark"), dark}}) {
        QApplication::setPalette(pal);
        ScenarioDocument doc;
        LoadResult loaded = loadScenarioFile(MOE_SAMPLES_DIR "/dgx-h100-8x8-moe16.yaml");
        QVERIFY(loaded.ok());
        doc.reset(*loaded.scenario);
        QVERIFY(!hasErrors(doc.setField(QStringLiteral("routing.model"), QStringLiteral("zipf"))));
        LayoutBar bar(&doc);
        PlacementGrid grid(&doc);
        HardwarePalette palette(&doc);
        grid.replicateExpert(3, 6);
        bar.setDegree(Dim::ep, 32); // a refusal, to see it rendered
        const EvaluationResultPtr result = evaluated(doc.scenario());
        bar.showResult(result);
        grid.showResult(result);
        palette.showResult(result);
        bar.resize(1400, bar.sizeHint().height());
        grid.resize(880, 330);
        palette.resize(560, 760);
        const QImage images[] = {bar.grab().toImage(), grid.grab().toImage(),
                                 palette.grab().toImage()};
        for (const QImage& image : images)
            QVERIFY(!image.isNull());
        if (!dir.isEmpty()) {
            QDir().mkpath(dir);
            images[0].save(dir + QStringLiteral("/layout_bar_%1.png").arg(name));
            images[1].save(dir + QStringLiteral("/placement_grid_%1.png").arg(name));
            images[2].save(dir + QStringLiteral("/hardware_palette_%1.png").arg(name));
        }
    }
    // A large grid: DeepSeek-V3 on 2048 H800 (EP 64, 256 experts, 4 a rank).
    QApplication::setPalette(light);
    ScenarioDocument big;
    LoadResult loaded = loadScenarioFile(MOE_SAMPLES_DIR "/deepseek-v3-2048xh800.yaml");
    QVERIFY(loaded.ok());
    big.reset(*loaded.scenario);
    PlacementGrid grid(&big);
    grid.showResult(evaluated(big.scenario()));
    grid.resize(1200, 300);
    QCOMPARE(grid.expertsOnRank().size(), size_t(big.scenario().layout.ep));
    QVERIFY(grid.moveExpert(0, 0, 63));
    const QImage image = grid.canvas()->grab().toImage();
    QVERIFY(!image.isNull());
    if (!dir.isEmpty())
        image.save(dir + QStringLiteral("/placement_grid_deepseek.png"));
}

QTEST_MAIN(TestDragDrop)
#include "test_drag_drop.moc"
