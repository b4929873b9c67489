#pragma once
// The scene items of the topology view: pods, racks (nodes, GPUs, NICs), the node-drag overlay
// and the switch fabric. They paint from the shared TopologyModel at the zoom's level of detail.

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

namespace moe::widgets {
namespace detail {

/// A pod: the racks that share leaf switches, with its frame and caption.
class PodItem : public QGraphicsItem {
public:
    PodItem(const TopologyModel* model, int pod)
        : model_(model)
        , pod_(pod) {
        setZValue(0);
        setCacheMode(QGraphicsItem::DeviceCoordinateCache);
    }
    QRectF boundingRect() const override {
        return model_->layout.pods[static_cast<size_t>(pod_)].rect;
    }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override {
        const TopologyModel& m = *model_;
        if (m.podHidden(pod_))
            return;
        const PodGeometry& pod = m.layout.pods[static_cast<size_t>(pod_)];
        const double lod =
            QStyleOptionGraphicsItem::levelOfDetailFromTransform(p->worldTransform());
        p->setPen(screenPen(m.theme.pod_border, 1));
        p->setBrush(m.theme.pod_fill);
        p->drawRoundedRect(pod.rect, 10, 10);
        const int last_rack = pod.first_rack + pod.racks - 1;
        const int first_node = m.layout.firstNode(pod.first_rack);
        const int last_node = m.layout.endNode(last_rack) - 1;
        QString caption = pod.racks == 1
                              ? QStringLiteral("rack %1").arg(pod.first_rack)
                              : QStringLiteral("racks %1–%2").arg(pod.first_rack).arg(last_rack);
        caption += QStringLiteral(" · nodes %1–%2").arg(first_node).arg(last_node);
        if (!pod.leaves.empty())
            caption += QStringLiteral(" · %1 leaf switch%2")
                           .arg(pod.leaves.size())
                           .arg(pod.leaves.size() == 1 ? "" : "es");
        const QString title =
            m.layout.pods.size() > 1 ? QStringLiteral("Pod %1").arg(pod_) : QString();
        const QRectF header = m.layout.podHeaderRect(pod_);
        const double px = std::clamp(m.layout.pod_header_h * lod * 0.5, 9.0, 15.0);
        drawScreenText(p, lod, header, title.isEmpty() ? caption : title + " · " + caption, px,
                       Qt::AlignLeft | Qt::AlignVCenter, m.theme.muted, false);
    }

private:
    const TopologyModel* model_;
    int pod_;
};

/// One rack with its nodes, GPUs, NICs, scale-up switches and the links inside nodes, painted
/// at the level of detail of the zoom.
class RackItem : public QGraphicsItem {
public:
    RackItem(const TopologyModel* model, int rack)
        : model_(model)
        , rack_(rack) {
        setZValue(2);
        // A rack at GPU-cell detail is hundreds of tiles: panning blits the cached pixmap
        // instead of repainting them (a zoom or a colour change re-renders it once).
        setCacheMode(QGraphicsItem::DeviceCoordinateCache);
    }
    QRectF boundingRect() const override {
        // Room for outlines drawn just outside the tiles of edge GPUs.
        return model_->layout.rack_rects[static_cast<size_t>(rack_)].adjusted(-4, -4, 4, 4);
    }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override;

private:
    // Layers, bottom to top: the frame with its caption and free slots; per node its tray
    // (with the links inside it at full detail), NICs, scale-up bar and GPU tiles with their
    // group rings, labels and marks; the rack switch of a rack-wide scale-up domain.
    void paintWholeRack(QPainter* p, double lod) const;
    void paintFrame(QPainter* p, double lod, bool full) const;
    void paintTray(QPainter* p, int node, double lod, bool full) const;
    void paintNics(QPainter* p, int node, bool full) const;
    void paintScaleUpBar(QPainter* p, int node, double lod, bool full) const;
    void paintGpuTile(QPainter* p, int gpu, const QRectF& tile, bool full) const;
    void paintGpuLabel(QPainter* p, int gpu, const QRectF& tile, double lod) const;
    void paintRackSwitch(QPainter* p, double lod) const;
    void paintGroupRings(QPainter* p, int gpu, const QRectF& tile, double lod, bool full) const;
    void paintGpuMarks(QPainter* p, int gpu, const QRectF& tile, double lod, bool full) const;
    const TopologyModel* model_;
    int rack_;
};

/// The "+ new rack" drop zone after the last rack and, while a node is dragged, the rack it
/// would go to (accent: the move applies; danger: refused) and the node's ghost under the cursor.
class NodeDragItem : public QGraphicsItem {
public:
    explicit NodeDragItem(const TopologyModel* model)
        : model_(model) {
        setZValue(10);
        setAcceptedMouseButtons(Qt::NoButton);
    }
    QRectF boundingRect() const override {
        const TopologyModel& m = *model_;
        // The ghost follows the cursor a little past the diagram.
        return m.layout.view_bounds.adjusted(-m.layout.node_w, -m.layout.node_h, m.layout.node_w,
                                             m.layout.node_h);
    }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override {
        const TopologyModel& m = *model_;
        if (!m.editable || m.exporting || m.aggregated || m.layout.new_rack_rect.isEmpty())
            return;
        const double lod =
            QStyleOptionGraphicsItem::levelOfDetailFromTransform(p->worldTransform());
        const TopologyModel::NodeDrag& d = m.drag;
        const bool dragging = d.node >= 0;
        const QColor verdict = d.valid ? m.theme.accent : m.theme.danger;
        auto tinted = [](QColor c) {
            c.setAlpha(40);
            return c;
        };
        const bool on_zone = dragging && d.target == m.layout.racks;
        QPen zone_pen = screenPen(on_zone ? verdict : m.theme.node_border, on_zone ? 2.5 : 1);
        zone_pen.setStyle(Qt::DashLine);
        p->setPen(zone_pen);
        p->setBrush(on_zone ? QBrush(tinted(verdict)) : QBrush(Qt::NoBrush));
        p->drawRoundedRect(m.layout.new_rack_rect, 6, 6);
        drawScreenText(p, lod, m.layout.new_rack_rect, QStringLiteral("+ new rack"),
                       std::clamp(kRackHeader * lod * 0.5, 9.0, 14.0), Qt::AlignCenter,
                       dragging ? m.theme.text : m.theme.muted, dragging);
        if (!dragging)
            return;
        if (d.target >= 0 && d.target < m.layout.racks) {
            const QRectF& r = m.layout.rack_rects[static_cast<size_t>(d.target)];
            p->setPen(screenPen(verdict, 3));
            p->setBrush(tinted(verdict));
            p->drawRoundedRect(r.adjusted(-3, -3, 3, 3), 8, 8);
            const int held = m.layout.endNode(d.target) - m.layout.firstNode(d.target);
            if (d.valid && held < m.layout.shape.nodes_per_rack) {
                // The free slot the rack fills.
                QPen slot_pen = screenPen(verdict, 2);
                slot_pen.setStyle(Qt::DashLine);
                p->setPen(slot_pen);
                p->setBrush(tinted(verdict));
                p->drawRoundedRect(m.layout.slotRect(r, held), 4, 4);
            }
        }
        const QRectF ghost = ghostRect();
        QColor fill = m.theme.node_fill;
        fill.setAlpha(190);
        p->setPen(screenPen(m.theme.text, 1.5));
        p->setBrush(fill);
        p->drawRoundedRect(ghost, 4, 4);
        drawScreenText(p, lod, ghost, QStringLiteral("node %1").arg(d.node),
                       std::clamp(kNodeHeader * lod * 0.8, 9.0, 14.0), Qt::AlignCenter,
                       m.theme.text, true);
    }
    QRectF ghostRect() const {
        const TopologyModel& m = *model_;
        return {m.drag.pos - m.drag.grab, QSizeF(m.layout.node_w, m.layout.node_h)};
    }

private:
    const TopologyModel* model_;
};

/// Spine and leaf switches with their links: leaf<->spine (every link when the pods sit in
/// one row, else a stub per leaf) and NIC<->leaf cables bundled per rack and leaf, batched by
/// colour, so no link needs an item of its own. Two layers: the spines and their uplinks sit
/// under the pods (the pod caption stays readable where uplinks enter a pod), the leaves and
/// their cables above.
class FabricItem : public QGraphicsItem {
public:
    enum class Layer { spines, leaves };
    FabricItem(const TopologyModel* model, Layer layer)
        : model_(model)
        , layer_(layer) {
        setZValue(layer == Layer::spines ? -1 : 1);
        setFlag(QGraphicsItem::ItemUsesExtendedStyleOption);
    }
    QRectF boundingRect() const override { return model_->layout.bounds; }
    void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) override;
    QString describeAt(const QPointF& pos, double lod) const;

private:
    const TopologyModel* model_;
    Layer layer_;
};

} // namespace detail
} // namespace moe::widgets
