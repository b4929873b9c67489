#pragma once
// The numbers on the topology's links: each drawn link or bundle labelled with the core's
// LinkLoad (bytes per step, GB/s, share of bandwidth) where the label fits at the zoom (always
// tried in exports), and the callout of the busiest link and the busiest tier.

#include "topology/topology_model.h"

namespace moe::widgets::detail {

/// Draws `lines` in a small box centred on `at` when it fits in
/// `room_px` screen pixels (font `px`, 0: the labels' size); returns whether it was drawn.
bool drawLinkLabel(QPainter* p, const TopologyModel& m, double lod, const QPointF& at,
                   double room_px, const QStringList& lines, double px = 0);
/// A LinkLoad's label centred on `at` (`above`: standing on it), on one line when it fits in
/// `room_px`, else stacked.
bool drawLoadLabel(QPainter* p, const TopologyModel& m, double lod, const QPointF& at,
                   double room_px, const LinkLoad& load, const QString& prefix, bool above);
/// The labels of the fabric's drawn links: cable bundles, leaf uplinks (or pod trunks).
void paintFabricLabels(QPainter* p, const TopologyModel& m, double lod, const QRectF& exposed);
/// Whether link labels are drawn at this zoom (GPU detail and closer, or an export).
bool linkLabelsShown(const TopologyModel& m, double lod);

/// The busiest link outlined where it is drawn, and the callout naming it and the busiest tier.
class BusiestCalloutItem : public QGraphicsItem {
public:
    explicit BusiestCalloutItem(const TopologyModel* model)
        : model_(model) {
        setZValue(8);
        setAcceptedMouseButtons(Qt::NoButton);
        setAcceptHoverEvents(false);
    }
    QRectF boundingRect() const override { return model_->layout.view_bounds; }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override;
    /// Where the busiest link is drawn in the scene (a line, or a rectangle's diagonal for a
    /// node's NVLink bar); a null line when it is not drawn.
    QLineF busiestGeometry() const;

private:
    const TopologyModel* model_;
};

} // namespace moe::widgets::detail
