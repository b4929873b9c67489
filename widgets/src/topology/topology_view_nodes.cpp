// TopologyView: node and rack geometry, and moving nodes between racks (drag and keys).
#include "moe_widgets/topology/topology_view.h"

#include "common/view_export.h"
#include "experiments/experiment_support.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/scenario_document.h"
#include "topology/topology_graphics_view.h"
#include "topology/topology_items.h"
#include "topology/topology_legend.h"
#include "topology/topology_model.h"

#include <QApplication>
#include <QComboBox>
#include <QEvent>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLabel>
#include <QLinearGradient>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QStyleOptionGraphicsItem>
#include <QTextBrowser>
#include <QTextDocument>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

namespace moe::widgets {

QRectF TopologyView::nodeSceneRect(int node) const {
    if (!model_->report || node < 0 || node >= model_->layout.nodes)
        return {};
    return model_->layout.nodeRect(node);
}

QRectF TopologyView::rackSceneRect(int rack) const {
    if (!model_->report || rack < 0 || rack >= model_->layout.racks)
        return {};
    return model_->layout.rack_rects[static_cast<size_t>(rack)];
}

QRectF TopologyView::newRackSceneRect() const {
    return model_->report ? model_->layout.new_rack_rect : QRectF();
}

int TopologyView::nodeAtScenePos(const QPointF& pos) const {
    if (!model_->report)
        return -1;
    const int node = model_->layout.nodeAt(pos);
    return node >= 0 && !model_->rackHidden(model_->layout.rackOfNode(node)) ? node : -1;
}

int TopologyView::dropRackAt(const QPointF& pos) const {
    return model_->report ? model_->layout.dropRackAt(pos) : -1;
}

bool TopologyView::canDragNodes() const {
    // Not while aggregated: the hidden racks would be drop targets nobody can see.
    return document_ && model_->report && model_->layout.racks > 0 && !model_->aggregated;
}

namespace {

/// The typed edit of moving one node from rack `from` to rack `to_rack`.
ScenarioDocument::Edit nodeMove(int from, int to_rack) {
    return [from, to_rack](const Scenario& scenario, const std::string&) {
        return moveNodeBetweenRacks(scenario, from, to_rack);
    };
}

/// The undo step's name, and the start of the drag preview.
QString moveTitle(int node, int from, int to_rack, int racks) {
    return to_rack == racks
               ? TopologyView::tr("Move node %1 from rack %2 to a new rack").arg(node).arg(from)
               : TopologyView::tr("Move node %1 from rack %2 to rack %3")
                     .arg(node)
                     .arg(from)
                     .arg(to_rack);
}

} // namespace

QString TopologyView::nodeMovePreview(int node, int to_rack) const {
    const TopologyModel& m = *model_;
    if (!canDragNodes() || node < 0 || node >= m.layout.nodes)
        return {};
    const int from = m.layout.rackOfNode(node);
    const ClusterSpec& cluster = document_->scenario().cluster;
    const std::optional<std::vector<int>> value = rackNodesAfterMove(cluster, from, to_rack);
    if (!value)
        return {};
    const FieldEditResult preview = document_->preview(nodeMove(from, to_rack));
    if (!preview.ok())
        return tr("Refused: %1").arg(experiment::firstError(preview.diagnostics));
    // The rack the node joins, as the edited scenario has it (core computes its power).
    const ClusterSpec& after = preview.scenario->cluster;
    if (after.nodesInRacks() == cluster.nodesInRacks())
        return {}; // the last rack's only node into a new rack
    const bool from_empties = cluster.nodesInRacks()[static_cast<size_t>(from)] == 1;
    const int target = to_rack - (from_empties && to_rack > from ? 1 : 0);
    const std::vector<int> held = after.nodesInRacks();
    const std::vector<double> power = rackPowerW(after);
    QString text = moveTitle(node, from, to_rack, m.layout.racks);
    if (target >= 0 && target < static_cast<int>(held.size())) {
        text += tr(": rack %1 then holds %2 of %3 nodes")
                    .arg(target)
                    .arg(held[static_cast<size_t>(target)])
                    .arg(after.nodes_per_rack);
        if (target < static_cast<int>(power.size())) {
            const double kw = power[static_cast<size_t>(target)] / 1000;
            text += tr(", %1 kW").arg(kw, 0, 'f', 1);
            if (after.rack_power_limit_kw > 0 && kw > after.rack_power_limit_kw)
                text += tr(" (over the %1 kW limit)").arg(after.rack_power_limit_kw, 0, 'f', 1);
        }
    }
    return text;
}

bool TopologyView::moveNode(int node, int to_rack) {
    TopologyModel& m = *model_;
    if (!canDragNodes() || node < 0 || node >= m.layout.nodes || to_rack < 0 ||
        to_rack > m.layout.racks)
        return false;
    const int from = m.layout.rackOfNode(node);
    const ClusterSpec& cluster = document_->scenario().cluster;
    const std::optional<std::vector<int>> value = rackNodesAfterMove(cluster, from, to_rack);
    const FieldEditResult preview =
        value ? document_->preview(nodeMove(from, to_rack)) : FieldEditResult{};
    if (value && preview.ok() && preview.scenario->cluster.nodesInRacks() == cluster.nodesInRacks())
        setMessage(tr("Not applied: node %1 is already alone in the last rack").arg(node));
    else if (!value)
        setMessage(tr("Not applied: node %1 is in rack %2 already").arg(node).arg(from));
    else {
        const QString text = moveTitle(node, from, to_rack, m.layout.racks);
        // Racks hold consecutive nodes: the node that changes racks is the one at the boundary
        // (numbered as now), so a selection in the moved node follows it there and Alt+Right
        // again moves it on.
        const int moved =
            to_rack > from ? m.layout.firstNode(to_rack) - 1 : m.layout.endNode(to_rack);
        const Diagnostics errors = document_->apply(text, nodeMove(from, to_rack));
        if (!hasErrors(errors)) {
            if (m.selected >= 0 && m.selected / m.layout.shape.gpus_per_node == node) {
                const int gpu = moved * m.layout.shape.gpus_per_node +
                                m.selected % m.layout.shape.gpus_per_node;
                if (state_)
                    state_->setSelectedGpu(gpu);
                else
                    m.selected = gpu;
            }
            setMessage({});
            return true;
        }
        setMessage(tr("Not applied: %1").arg(experiment::firstError(errors)));
    }
    return false;
}

bool TopologyView::moveSelectedNode(int step) {
    const TopologyModel& m = *model_;
    if (!canDragNodes())
        return false;
    if (m.selected < 0 || m.selected >= m.layout.gpus) {
        setMessage(tr("Not applied: click a GPU first; Alt+Left, Alt+Right and Alt+N move its "
                      "node between racks"));
        return false;
    }
    const int node = m.selected / m.layout.shape.gpus_per_node;
    const int from = m.layout.rackOfNode(node);
    const int to = step == 0 ? m.layout.racks : from + step;
    if (step != 0 && (to < 0 || to >= m.layout.racks)) {
        setMessage(
            step < 0
                ? tr("Not applied: rack %1 is the first rack").arg(from)
                : tr("Not applied: rack %1 is the last rack (Alt+N opens a new one)").arg(from));
        return false;
    }
    return moveNode(node, to);
}

void TopologyView::updateNodeDrag(int node, const QPointF& grab_offset, const QPointF& scene_pos) {
    TopologyModel& m = *model_;
    auto* ghost = static_cast<detail::NodeDragItem*>(drag_item_);
    // What changes on screen: the old and the new ghost, and the rack highlight.
    QRectF dirty;
    auto touch = [&](int rack) {
        if (rack >= 0 && rack < m.layout.racks)
            dirty |= m.layout.rack_rects[static_cast<size_t>(rack)].adjusted(-8, -8, 8, 8);
        else if (rack == m.layout.racks)
            dirty |= m.layout.new_rack_rect.adjusted(-8, -8, 8, 8);
    };
    if (ghost && m.drag.node >= 0)
        dirty |= ghost->ghostRect().adjusted(-4, -4, 4, 4);
    const int old_target = m.drag.target;
    if (node < 0 || node >= m.layout.nodes) {
        touch(old_target);
        m.drag = {};
    } else {
        if (m.drag.node < 0)
            setMessage({}); // a new drag: the last refusal is stale
        m.drag.node = node;
        m.drag.grab = grab_offset;
        m.drag.pos = scene_pos;
        const int target = dropRackAt(scene_pos);
        if (target != old_target) {
            touch(old_target);
            touch(target);
            m.drag.target = target;
            m.drag.preview = target >= 0 ? nodeMovePreview(node, target) : QString();
            m.drag.valid = !m.drag.preview.isEmpty() && !m.drag.preview.startsWith(tr("Refused"));
            if (m.drag.preview.startsWith(tr("Refused")))
                QToolTip::showText(QCursor::pos(), m.drag.preview, view_->viewport());
            else
                QToolTip::hideText();
        }
        dirty |= ghost ? ghost->ghostRect().adjusted(-4, -4, 4, 4) : QRectF();
    }
    if (ghost)
        ghost->update(dirty.isEmpty() ? ghost->boundingRect() : dirty);
    updateStatus();
}

void TopologyView::dropNode(const QPointF& scene_pos) {
    TopologyModel& m = *model_;
    const int node = m.drag.node;
    const int target = dropRackAt(scene_pos);
    updateNodeDrag(-1, {}, {});
    QToolTip::hideText();
    if (node >= 0 && target >= 0 && target != m.layout.rackOfNode(node))
        moveNode(node, target);
}

void TopologyView::setMessage(const QString& message) {
    if (message == message_)
        return;
    message_ = message;
    updateStatus();
}

} // namespace moe::widgets
