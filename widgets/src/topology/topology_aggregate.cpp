// The aggregated topology: the "x N" summary of the pods after pod 0 (its figures are the
// core's), and the view's switch between the full and the aggregated diagram.
#include "topology/topology_aggregate.h"

#include "moe_widgets/common/palette.h"
#include "topology/topology_graphics_view.h"
#include "topology/topology_link_labels.h"

namespace moe::widgets {
namespace detail {

namespace {

int podNodes(const TopologyLayout& l, const PodGeometry& pod) {
    return l.endNode(pod.first_rack + pod.racks - 1) - l.firstNode(pod.first_rack);
}

/// "pods 1–7" / "pod 1"
QString rangeText(const QString& what, int first, int last) {
    return first == last ? QStringLiteral("%1 %2").arg(what).arg(first)
                         : QStringLiteral("%1s %2–%3").arg(what).arg(first).arg(last);
}

} // namespace

bool TopologyModel::linkHidden(int link) const {
    if (!aggregated || !graph || link < 0 || link >= static_cast<int>(graph->links.size()))
        return false;
    const Link& l = graph->links[static_cast<size_t>(link)];
    const Vertex& a = graph->vertices[static_cast<size_t>(l.a)];
    if (l.kind != LinkKind::leaf_spine)
        return rackHidden(a.rack);
    return a.index >= 0 && a.index < static_cast<int>(layout.leaf_pod.size()) &&
           podHidden(layout.leaf_pod[static_cast<size_t>(a.index)]);
}

void summarizeHiddenPods(TopologyModel& m) {
    m.hidden = {};
    const std::vector<PodGeometry>& pods = m.layout.pods;
    if (pods.size() < 2 || !m.report || !m.graph)
        return;
    TopologyModel::HiddenPods& h = m.hidden;
    h.pods = static_cast<int>(pods.size()) - 1;
    h.first_rack = pods[1].first_rack;
    h.racks = m.layout.racks - h.first_rack;
    h.first_node = m.layout.firstNode(h.first_rack);
    h.nodes = m.layout.nodes - h.first_node;
    h.gpus = h.nodes * m.layout.shape.gpus_per_node;
    h.alike = true;
    for (size_t p = 1; p < pods.size(); ++p) {
        h.leaves += static_cast<int>(pods[p].leaves.size());
        if (p < m.pod_up_util.size())
            h.up_util = std::max(h.up_util, m.pod_up_util[p]);
        h.alike = h.alike && pods[p].racks == pods[0].racks &&
                  podNodes(m.layout, pods[p]) == podNodes(m.layout, pods[0]) &&
                  pods[p].leaves.size() == pods[0].leaves.size();
    }
    h.tiers = tierLoadsOfRacks(*m.report, *m.graph, h.first_rack, m.layout.racks);
}

QStringList aggregateSummaryLines(const TopologyModel& m) {
    const TopologyModel::HiddenPods& h = m.hidden;
    if (h.pods <= 0)
        return {};
    QStringList lines;
    lines << QStringLiteral("× %1 more pod%2%3")
                 .arg(h.pods)
                 .arg(h.pods == 1 ? "" : "s")
                 .arg(h.alike ? QStringLiteral(" like pod 0") : QString());
    QString holds = rangeText(QStringLiteral("pod"), 1, h.pods) + QStringLiteral(" · ") +
                    rangeText(QStringLiteral("rack"), h.first_rack, m.layout.racks - 1) +
                    QStringLiteral(" · ") +
                    rangeText(QStringLiteral("node"), h.first_node, m.layout.nodes - 1) +
                    QStringLiteral(" · %1 GPUs").arg(formatCount(h.gpus));
    if (h.leaves > 0)
        holds += QStringLiteral(" · %1 leaf switches").arg(h.leaves);
    lines << holds;
    lines << QStringLiteral("their traffic per step, summed (bytes · GB/s · % of bandwidth):");
    for (const TierLoad& tier : h.tiers)
        lines << QStringLiteral("%1 · %2 links: %3")
                     .arg(QString::fromStdString(tierName(tier.kind, m.result->scenario.cluster)))
                     .arg(formatCount(tier.load.links))
                     .arg(loadLabel(tier.load));
    return lines;
}

QString aggregateToolTip(const TopologyModel& m) {
    QStringList lines = aggregateSummaryLines(m);
    if (lines.isEmpty())
        return {};
    lines.front() = QStringLiteral("<b>%1</b>").arg(lines.front());
    lines << QStringLiteral("<i>Aggregate off (tool bar) draws every pod</i>");
    return lines.join(QStringLiteral("<br>"));
}

void AggregateItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
    const TopologyModel& m = *model_;
    const QStringList lines = aggregateSummaryLines(m);
    if (!m.aggregated || lines.isEmpty())
        return;
    const double lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(p->worldTransform());
    const QRectF rect = m.layout.aggregated.summary;
    // A stack of frames reads as "several of these".
    const double step = std::min(18.0, rect.height() / 12);
    p->setPen(screenPen(m.theme.pod_border, 1));
    p->setBrush(m.theme.pod_fill);
    for (int k = 2; k >= 0; --k)
        p->drawRoundedRect(rect.adjusted((2 - k) * step, k * step, -k * step, -(2 - k) * step), 10,
                           10);
    const QRectF front = rect.adjusted(0, 2 * step, -2 * step, 0);
    // Screen-constant text, as large as the frame allows up to a slide's reading size.
    const double fit_px = front.height() * lod / (static_cast<double>(lines.size()) * 1.5 + 1.2);
    const double px = std::clamp(fit_px, 8.0, 16.0);
    const double title_px = px * 1.6;
    const double line_h = px * 1.5 / lod;
    const double block_h = title_px * 1.5 / lod + static_cast<double>(lines.size() - 1) * line_h;
    const double pad = front.width() * 0.05;
    double y = front.center().y() - block_h / 2;
    drawScreenText(p, lod,
                   QRectF(front.left() + pad, y, front.width() - 2 * pad, title_px * 1.5 / lod),
                   lines.front(), title_px, Qt::AlignLeft | Qt::AlignVCenter, m.theme.text, true);
    y += title_px * 1.5 / lod;
    for (qsizetype i = 1; i < lines.size(); ++i, y += line_h)
        drawScreenText(p, lod, QRectF(front.left() + pad, y, front.width() - 2 * pad, line_h),
                       lines[i], px, Qt::AlignLeft | Qt::AlignVCenter,
                       i == 2 ? m.theme.muted : m.theme.text, false);
}

} // namespace detail

bool TopologyView::canAggregate() const {
    return model_->report && model_->layout.pods.size() >= 2;
}

bool TopologyView::aggregated() const {
    return model_->aggregated;
}

void TopologyView::setAggregated(bool on) {
    aggregate_wanted_ = on;
    applyAggregation();
}

void TopologyView::applyAggregation() {
    TopologyModel& m = *model_;
    const bool on = aggregate_wanted_ && canAggregate();
    if (aggregate_button_) {
        aggregate_button_->setEnabled(canAggregate());
        aggregate_button_->setChecked(on);
    }
    if (!m.report || (on == m.aggregated && scene_->sceneRect() == m.shownViewBounds()))
        return;
    m.aggregated = on;
    scene_->setSceneRect(m.shownViewBounds());
    repaintItems();
    fitAll();
}

QString TopologyView::aggregateSummaryText() const {
    return detail::aggregateSummaryLines(*model_).join(QLatin1Char('\n'));
}

QString TopologyView::exportAggregatedTo(const QString& path) {
    if (!canAggregate())
        return QStringLiteral("nothing to aggregate: the cluster has one pod");
    // The page only: the view on screen keeps its zoom and its choice.
    TopologyModel& m = *model_;
    const bool was = m.aggregated;
    m.aggregated = true;
    const QString problem = exportTo(path);
    m.aggregated = was;
    repaintItems();
    return problem;
}

} // namespace moe::widgets
