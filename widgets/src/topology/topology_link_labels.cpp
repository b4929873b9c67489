// Link labels and the busiest-link callout of the topology view; every figure is the core's
// (link_load.h), the view only places the text.
#include "topology/topology_link_labels.h"

#include "moe_widgets/common/palette.h"

namespace moe::widgets::detail {

QString loadLabel(const LinkLoad& load) {
    return QStringLiteral("%1 · %2 GB/s · %3")
        .arg(formatBytes(load.bytes))
        .arg(load.gbps, 0, 'f', load.gbps < 10 ? 1 : 0)
        .arg(formatPercent(load.utilization));
}

QString TopologyModel::busiestLinkCallout() const {
    if (!report || !graph || busiest_link < 0)
        return {};
    const LinkLoad load = linkLoad(*report, *graph, busiest_link);
    return QStringLiteral("busiest link: %1 · %2 GB/s · %3")
        .arg(QString::fromStdString(linkName(*graph, busiest_link)))
        .arg(load.gbps, 0, 'f', load.gbps < 10 ? 1 : 0)
        .arg(formatPercent(load.utilization));
}

QString TopologyModel::busiestTierCallout() const {
    if (!result || busiest_tier < 0 || busiest_tier >= static_cast<int>(tiers.size()))
        return {};
    const TierLoad& tier = tiers[static_cast<size_t>(busiest_tier)];
    return QStringLiteral("busiest tier: %1 · %2 of its bandwidth on average")
        .arg(QString::fromStdString(tierName(tier.kind, result->scenario.cluster)))
        .arg(formatPercent(tier.load.utilization));
}

namespace {

double labelPx(const TopologyModel& m, double lod) {
    return m.exporting ? 7.5 : std::clamp(lod * 9, 8.0, 10.5);
}

} // namespace

bool linkLabelsShown(const TopologyModel& m, double lod) {
    return m.exporting || detailFor(lod) != TopologyView::Detail::racks;
}

bool drawLinkLabel(QPainter* p, const TopologyModel& m, double lod, const QPointF& at,
                   double room_px, const QStringList& lines, double px) {
    QFont font = p->font();
    font.setPixelSize(std::max(1, static_cast<int>(std::lround(px > 0 ? px : labelPx(m, lod)))));
    const QFontMetricsF fm(font);
    double w = 0;
    for (const QString& line : lines)
        w = std::max(w, fm.horizontalAdvance(line) + 6);
    const double h = fm.height() * static_cast<double>(lines.size()) + 2;
    if (w > room_px)
        return false;
    p->save();
    p->translate(at);
    p->scale(1 / lod, 1 / lod);
    const QRectF box(-w / 2, -h / 2, w, h);
    QColor back = m.theme.background;
    back.setAlpha(225);
    p->setPen(Qt::NoPen);
    p->setBrush(back);
    p->drawRoundedRect(box, 3, 3);
    p->setFont(font);
    p->setPen(m.theme.text);
    p->drawText(box, Qt::AlignCenter, lines.join(QLatin1Char('\n')));
    p->restore();
    return true;
}

bool drawLoadLabel(QPainter* p, const TopologyModel& m, double lod, const QPointF& at,
                   double room_px, const LinkLoad& load, const QString& prefix, bool above) {
    // One line where it fits, else bytes, rate and share stacked.
    const QString one = prefix + loadLabel(load);
    QFont font = p->font();
    const double px = labelPx(m, lod);
    font.setPixelSize(std::max(1, static_cast<int>(std::lround(px))));
    const QFontMetricsF fm(font);
    QStringList lines{one};
    double shown_px = px;
    if (fm.horizontalAdvance(one) + 6 > room_px) {
        shown_px = px * 0.88; // a stack is narrow text in a narrow gap: a little smaller
        font.setPixelSize(std::max(1, static_cast<int>(std::lround(shown_px))));
        lines =
            QStringList{prefix + formatBytes(load.bytes),
                        QStringLiteral("%1 GB/s").arg(load.gbps, 0, 'f', load.gbps < 10 ? 1 : 0),
                        formatPercent(load.utilization)};
    }
    // `above`: the box's bottom edge sits at `at`.
    const double h = (QFontMetricsF(font).height() * static_cast<double>(lines.size()) + 2) / lod;
    return drawLinkLabel(p, m, lod, above ? at - QPointF(0, h / 2) : at, room_px, lines, shown_px);
}

void paintFabricLabels(QPainter* p, const TopologyModel& m, double lod, const QRectF& exposed) {
    if (!linkLabelsShown(m, lod))
        return;
    const QFont base = p->font();
    // NIC cables per rack and leaf: a tag on each cable where it enters its rack (the ports
    // of a rack are a fixed pitch apart).
    for (int rack = 0; rack < m.layout.racks; ++rack) {
        if (m.rackHidden(rack))
            continue;
        const auto& bundles = m.rack_bundles[static_cast<size_t>(rack)];
        const QRectF& rr = m.layout.rack_rects[static_cast<size_t>(rack)];
        const double pitch =
            (rr.width() - 2 * kRackPad) / static_cast<double>(std::max<size_t>(1, bundles.size()));
        for (const Bundle& b : bundles) {
            const QLineF line = m.layout.cableLine(rack, b.port);
            const QPointF at = line.p2() - QPointF(0, 2);
            if (!exposed.contains(at) || b.load.bytes <= 0)
                continue;
            drawLoadLabel(p, m, lod, at, pitch * lod * 0.95, b.load, QString(), true);
        }
    }
    // Each leaf's spine uplinks as one bundle, where they enter the pod (all of a pod's uplinks
    // in its trunk).
    for (size_t pod = 0; m.layout.mesh && pod < m.layout.pods.size(); ++pod) {
        if (m.podHidden(static_cast<int>(pod)))
            continue;
        const PodGeometry& pd = m.layout.pods[pod];
        const double pitch = pd.leaf_rects.size() > 1
                                 ? pd.leaf_rects[1].center().x() - pd.leaf_rects[0].center().x()
                                 : pd.rect.width();
        for (size_t slot = 0; slot < pd.leaves.size(); ++slot) {
            const LinkLoad& load = m.leaf_up_load[static_cast<size_t>(pd.leaves[slot])];
            const QPointF at(pd.leaf_rects[slot].center().x(), pd.rect.top() - 3);
            if (load.bytes > 0 && exposed.contains(at))
                drawLoadLabel(p, m, lod, at, pitch * lod * 0.95, load, QStringLiteral("↑ "), true);
        }
    }
    // Pods in rows reach the spines by one trunk each: its label at the right of the pod's
    // header (the caption is on the left), where the trunk leaves the pod.
    for (const auto& trunk : m.layout.trunks) {
        if (m.podHidden(trunk.pod))
            continue; // the summary sums them
        const LinkLoad& load = m.pod_up_load[static_cast<size_t>(trunk.pod)];
        const QRectF header = m.layout.podHeaderRect(trunk.pod);
        if (load.bytes <= 0 || !exposed.intersects(header))
            continue;
        const QString text = QStringLiteral("uplinks to the spines: ") + loadLabel(load);
        QFont font = p->font();
        font.setPixelSize(std::max(1, static_cast<int>(std::lround(labelPx(m, lod)))));
        const double w = (QFontMetricsF(font).horizontalAdvance(text) + 6) / lod;
        drawLinkLabel(p, m, lod, QPointF(header.right() - w / 2 - 6, header.center().y()),
                      header.width() * lod * 0.45, QStringList{text});
    }
    p->setFont(base);
}

QLineF BusiestCalloutItem::busiestGeometry() const {
    const TopologyModel& m = *model_;
    if (!m.graph || m.busiest_link < 0 || m.linkHidden(m.busiest_link))
        return {};
    const HardwareGraph& g = *m.graph;
    const Link& link = g.links[static_cast<size_t>(m.busiest_link)];
    switch (link.kind) {
    case LinkKind::scale_up: {
        const QRectF bar = m.layout.barRect(link.a / m.layout.shape.gpus_per_node);
        return {bar.topLeft(), bar.bottomRight()};
    }
    case LinkKind::gpu_nic: {
        const int gpu = link.a;
        const int rail = g.vertices[static_cast<size_t>(link.b)].rail;
        return m.layout.gpuNicLine(gpu, rail);
    }
    case LinkKind::nic_leaf:
        for (int rack = 0; rack < m.layout.racks; ++rack)
            for (const Bundle& b : m.rack_bundles[static_cast<size_t>(rack)])
                if (std::find(b.link_ids.begin(), b.link_ids.end(), m.busiest_link) !=
                    b.link_ids.end())
                    return m.layout.cableLine(rack, b.port);
        return {};
    case LinkKind::leaf_spine: {
        const int leaf = link.a - m.leaf_base;
        for (const PodGeometry& pd : m.layout.pods)
            for (size_t slot = 0; slot < pd.leaves.size(); ++slot)
                if (pd.leaves[slot] == leaf) {
                    if (m.layout.mesh)
                        return m.layout.uplinkLine(pd, static_cast<int>(slot),
                                                   link.b - m.spine_base);
                    for (const auto& trunk : m.layout.trunks)
                        if (&m.layout.pods[static_cast<size_t>(trunk.pod)] == &pd &&
                            trunk.line.size() >= 2)
                            return {trunk.line[0], trunk.line[1]};
                }
        return {};
    }
    }
    return {};
}

void BusiestCalloutItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
    const TopologyModel& m = *model_;
    const QString link_text = m.busiestLinkCallout();
    if (link_text.isEmpty())
        return;
    const double lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(p->worldTransform());
    const QLineF where = busiestGeometry();
    QColor halo = m.theme.critical;
    if (!where.isNull()) {
        halo.setAlpha(200);
        if (m.graph->links[static_cast<size_t>(m.busiest_link)].kind == LinkKind::scale_up) {
            p->setPen(screenPen(halo, 2.5));
            p->setBrush(Qt::NoBrush);
            p->drawRect(QRectF(where.p1(), where.p2()).adjusted(-2, -2, 2, 2));
        } else {
            QPen pen = screenPen(halo, 5);
            pen.setCapStyle(Qt::RoundCap);
            p->setPen(pen);
            p->drawLine(where);
        }
    }
    // The callout: two lines (four when narrow) in a box beside the link (or at the diagram's top
    // left), at a constant screen size.
    const QString tier_text = m.busiestTierCallout();
    QFont font = p->font();
    font.setPixelSize(m.exporting ? 9 : 11);
    const QFontMetricsF fm(font);
    const QRectF bounds = m.shownBounds();
    QStringList lines{link_text};
    if (!tier_text.isEmpty())
        lines << tier_text;
    const auto widest = [&fm](const QStringList& texts) {
        double most = 0;
        for (const QString& text : texts)
            most = std::max(most, fm.horizontalAdvance(text));
        return most + 12;
    };
    // Wider than the diagram on screen (a small cluster at fit zoom): each line breaks after its
    // name ("busiest link: a -> b" over "10 GB/s · 21%") instead of running off the view.
    if (widest(lines) > bounds.width() * lod) {
        QStringList broken;
        for (const QString& line : lines) {
            const qsizetype at = line.indexOf(QStringLiteral(" · "));
            broken << line.left(at);
            if (at >= 0)
                broken << line.mid(at + 3);
        }
        lines = broken;
    }
    const double w = widest(lines);
    const double h = fm.height() * static_cast<double>(lines.size()) + 8;
    // A busiest link in the summed pods: the callout points at their summary.
    const bool in_summary = where.isNull() && m.linkHidden(m.busiest_link);
    QPointF anchor = in_summary       ? m.layout.aggregated.summary.center()
                     : where.isNull() ? bounds.topLeft()
                                      : where.center();
    // Screen size of the box in scene units, kept inside the diagram.
    const QSizeF box_scene(w / lod, h / lod);
    QPointF top_left = anchor + QPointF(12 / lod, -box_scene.height() - 12 / lod);
    top_left.setX(std::clamp(top_left.x(), bounds.left(),
                             std::max(bounds.left(), bounds.right() - box_scene.width())));
    top_left.setY(std::clamp(top_left.y(), bounds.top(),
                             std::max(bounds.top(), bounds.bottom() - box_scene.height())));
    if (!where.isNull() || in_summary) {
        p->setPen(screenPen(halo, 1.2));
        p->drawLine(anchor, top_left + QPointF(0, box_scene.height()));
    }
    p->save();
    p->translate(top_left);
    p->scale(1 / lod, 1 / lod);
    QColor back = m.theme.background;
    back.setAlpha(235);
    p->setPen(screenPen(m.theme.critical, 1.2));
    p->setBrush(back);
    p->drawRoundedRect(QRectF(0, 0, w, h), 4, 4);
    p->setFont(font);
    p->setPen(m.theme.text);
    for (qsizetype i = 0; i < lines.size(); ++i)
        p->drawText(QRectF(6, 4 + fm.height() * static_cast<double>(i), w - 12, fm.height()),
                    Qt::AlignLeft | Qt::AlignVCenter, lines[i]);
    p->restore();
}

} // namespace moe::widgets::detail
