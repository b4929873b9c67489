#pragma once
// The QGraphicsView of the topology view: zoom, pan, hover, clicks and node drags, forwarded to
// the TopologyView that owns it.

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
namespace detail {

class TopologyGraphicsView : public QGraphicsView {
public:
    TopologyGraphicsView(TopologyView* owner, QGraphicsScene* scene)
        : QGraphicsView(scene)
        , owner_(owner) {
        setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
        setDragMode(QGraphicsView::ScrollHandDrag);
        setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
        setResizeAnchor(QGraphicsView::AnchorViewCenter);
        // A wide cluster fitted into a taller pane sits at the top, not in the middle.
        setAlignment(Qt::AlignHCenter | Qt::AlignTop);
        setOptimizationFlag(QGraphicsView::DontSavePainterState, false);
        viewport()->setMouseTracking(true);
        viewport()->setCursor(Qt::ArrowCursor);
    }
    bool fit_mode = true;
    double scaleFactor() const { return transform().m11(); }
    void zoomBy(double factor) {
        const double target = std::clamp(scaleFactor() * factor, minScale(), 8.0);
        const double f = target / scaleFactor();
        scale(f, f);
        fit_mode = false;
        owner_->updateInfoPanel();
    }
    double minScale() const {
        const QRectF r = sceneRect();
        if (r.isEmpty())
            return 0.01;
        return 0.5 * std::min(viewport()->width() / r.width(), viewport()->height() / r.height());
    }

protected:
    void wheelEvent(QWheelEvent* e) override {
        zoomBy(std::pow(1.0015, e->angleDelta().y()));
        e->accept();
    }
    void mousePressEvent(QMouseEvent* e) override {
        press_pos_ = e->pos();
        press_node_ = -1;
        dragging_ = false;
        if (e->button() == Qt::MiddleButton) {
            // Pans anywhere, also where the left button would pick up a node.
            viewport()->setCursor(Qt::ClosedHandCursor);
            e->accept();
            return;
        }
        if (e->button() == Qt::LeftButton && owner_->canDragNodes() &&
            owner_->detail() != TopologyView::Detail::racks) {
            const QPointF scene_pos = mapToScene(e->pos());
            press_node_ = owner_->nodeAtScenePos(scene_pos);
            if (press_node_ >= 0) {
                // A press on a node drags it once it moves (a click still selects the GPU);
                // panning starts on empty space only.
                grab_ = scene_pos - owner_->nodeSceneRect(press_node_).topLeft();
                e->accept();
                return;
            }
        }
        QGraphicsView::mousePressEvent(e);
    }
    void mouseReleaseEvent(QMouseEvent* e) override {
        if (e->button() == Qt::MiddleButton) {
            viewport()->setCursor(Qt::ArrowCursor);
            e->accept();
            return;
        }
        if (press_node_ >= 0) {
            const bool dropped = dragging_;
            press_node_ = -1;
            dragging_ = false;
            viewport()->setCursor(Qt::ArrowCursor);
            if (dropped)
                owner_->dropNode(mapToScene(e->pos()));
            else if (e->button() == Qt::LeftButton)
                owner_->onClick(mapToScene(e->pos()));
            e->accept();
            return;
        }
        QGraphicsView::mouseReleaseEvent(e);
        viewport()->setCursor(Qt::ArrowCursor);
        if (e->button() == Qt::LeftButton && (e->pos() - press_pos_).manhattanLength() < 4)
            owner_->onClick(mapToScene(e->pos()));
    }
    void keyPressEvent(QKeyEvent* e) override {
        if (e->key() == Qt::Key_Escape && dragging_) {
            press_node_ = -1;
            dragging_ = false;
            viewport()->setCursor(Qt::ArrowCursor);
            owner_->updateNodeDrag(-1, {}, {});
            e->accept();
            return;
        }
        if ((e->modifiers() & ~Qt::KeypadModifier) == Qt::AltModifier) {
            const int step = e->key() == Qt::Key_Right                          ? 1
                             : e->key() == Qt::Key_Left                         ? -1
                             : e->key() == Qt::Key_N || e->key() == Qt::Key_End ? 0
                                                                                : 2;
            if (step != 2) {
                owner_->moveSelectedNode(step);
                e->accept();
                return;
            }
        }
        QGraphicsView::keyPressEvent(e);
    }
    void mouseMoveEvent(QMouseEvent* e) override {
        if (e->buttons() == Qt::MiddleButton) {
            const QPoint delta = e->pos() - press_pos_;
            press_pos_ = e->pos();
            horizontalScrollBar()->setValue(horizontalScrollBar()->value() - delta.x());
            verticalScrollBar()->setValue(verticalScrollBar()->value() - delta.y());
            fit_mode = false;
            e->accept();
            return;
        }
        if (press_node_ >= 0 && (e->buttons() & Qt::LeftButton)) {
            if (!dragging_ &&
                (e->pos() - press_pos_).manhattanLength() >= QApplication::startDragDistance())
                dragging_ = true;
            if (dragging_) {
                owner_->updateNodeDrag(press_node_, grab_, mapToScene(e->pos()));
                viewport()->setCursor(owner_->model_->drag.target < 0 || owner_->model_->drag.valid
                                          ? Qt::ClosedHandCursor
                                          : Qt::ForbiddenCursor);
            }
            e->accept();
            return;
        }
        QGraphicsView::mouseMoveEvent(e);
        if (e->buttons() == Qt::NoButton) {
            const bool cells = owner_->detail() != TopologyView::Detail::racks;
            owner_->setHoveredGpu(cells ? owner_->gpuAtScenePos(mapToScene(e->pos())) : -1);
        } else {
            fit_mode = false;
        }
    }
    void leaveEvent(QEvent* e) override {
        owner_->setHoveredGpu(-1);
        QGraphicsView::leaveEvent(e);
    }
    void mouseDoubleClickEvent(QMouseEvent* e) override {
        const int gpu = owner_->gpuAtScenePos(mapToScene(e->pos()));
        if (owner_->detail() != TopologyView::Detail::full) {
            // Double-click zooms in on what is under the cursor.
            centerOn(mapToScene(e->pos()));
            zoomBy(std::max(2.0, kFullTilePx / (kTile * scaleFactor())));
            if (gpu >= 0)
                centerOn(owner_->gpuSceneRect(gpu).center());
        }
        e->accept();
    }
    bool viewportEvent(QEvent* e) override {
        if (e->type() == QEvent::ToolTip) {
            auto* help = static_cast<QHelpEvent*>(e);
            const QString text = owner_->toolTipAt(mapToScene(help->pos()));
            if (text.isEmpty())
                QToolTip::hideText();
            else
                QToolTip::showText(help->globalPos(), text, viewport());
            return true;
        }
        return QGraphicsView::viewportEvent(e);
    }
    void resizeEvent(QResizeEvent* e) override {
        QGraphicsView::resizeEvent(e);
        if (fit_mode)
            owner_->fitAll();
    }

private:
    TopologyView* owner_;
    QPoint press_pos_;
    int press_node_ = -1; ///< the node pressed on (a drag once it moves), or -1
    bool dragging_ = false;
    QPointF grab_; ///< scene offset of the press from the node's top left
};

} // namespace detail
} // namespace moe::widgets
