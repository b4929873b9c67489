#pragma once
// The topology's aggregated view, for a review slide of a large cluster: pod 0 drawn in full and
// the pods after it as one "x N" summary with their summed traffic (the core's
// tierLoadsOfRacks), where the rest of pod 0's row would be. The live scene keeps every item (so
// hover, selection and zoom-to-GPU keep their indices); the hidden pods' items skip painting and
// the view shows only layout.aggregated.bounds.

#include "topology/topology_model.h"

namespace moe::widgets::detail {

/// The pods after pod 0 in numbers and their summed traffic, into m.hidden (all zero with fewer
/// than two pods). Run after the link aggregates (it reads pod_up_util).
void summarizeHiddenPods(TopologyModel& m);
/// The summary as it is drawn: the title ("× 7 more pods like pod 0"), what they hold, then per
/// link tier their traffic per step summed. Empty with fewer than two pods.
QStringList aggregateSummaryLines(const TopologyModel& m);
/// The summary's tooltip (HTML).
QString aggregateToolTip(const TopologyModel& m);

/// The "x N" summary, drawn over the hidden pods' place when the view is aggregated.
class AggregateItem : public QGraphicsItem {
public:
    explicit AggregateItem(const TopologyModel* model)
        : model_(model) {
        setZValue(2);
        setAcceptedMouseButtons(Qt::NoButton);
    }
    QRectF boundingRect() const override { return model_->layout.aggregated.summary; }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override;

private:
    const TopologyModel* model_;
};

} // namespace moe::widgets::detail
