// TopologyView: tooltips, the GPU details and info panel, the status line and exports.
#include "moe_widgets/topology/topology_view.h"

#include "common/view_export.h"
#include "experiments/experiment_support.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/scenario_document.h"
#include "topology/topology_aggregate.h"
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

// --- Text: tooltips and the info panel -------------------------------------------------------

namespace {

// The sections of a GPU's details.

/// The GPU's parallel groups: members, nodes spanned, whether they cross the fabric.
QString groupsHtml(const TopologyModel& m, int gpu) {
    QString html;
    html += QStringLiteral("<p><b>Groups</b><br>");
    for (const GroupKind kind : {GroupKind::tp, GroupKind::cp, GroupKind::ep, GroupKind::etp,
                                 GroupKind::edp, GroupKind::dp, GroupKind::pp}) {
        const ParallelGroup& group = m.placement->groupOf(kind, gpu);
        if (group.gpus.size() <= 1)
            continue;
        const GroupSpan& span = group.span;
        html +=
            QStringLiteral(
                "<span style='color:%1'>■</span> %2 group %3: GPUs %4 — %5 node%6, %7<br>")
                .arg(detail::groupColor(kind).name())
                .arg(detail::groupName(kind))
                .arg(group.index)
                .arg(formatGpuList(group.gpus))
                .arg(span.nodes)
                .arg(span.nodes == 1 ? "" : "s")
                .arg(span.link_class == LinkClass::scale_up ? QStringLiteral("scale-up only")
                                                            : QStringLiteral("crosses the fabric"));
    }
    html += QStringLiteral("</p>");
    return html;
}

/// The experts on the GPU's EP rank, per MoE layer map.
QString expertsHtml(const TopologyModel& m, int gpu) {
    const RankCoords& rc = m.placement->coordsOf(gpu);
    const Scenario& s = m.result->scenario;
    QString html;
    html += QStringLiteral("<p><b>Experts</b> (EP rank %1 of %2)<br>").arg(rc.ep).arg(s.layout.ep);
    auto experts = [](const ExpertMap& map, int rank) {
        QStringList list;
        if (rank >= 0 && rank < static_cast<int>(map.experts_on_rank.size()))
            for (const int e : map.experts_on_rank[static_cast<size_t>(rank)])
                list << QString::number(e);
        return list.isEmpty() ? QStringLiteral("none") : list.join(QStringLiteral(", "));
    };
    std::map<int, std::vector<int>> custom; // map index -> MoE layers
    for (size_t layer = 0; layer < m.placement->layer_map_index.size(); ++layer)
        if (m.placement->layer_map_index[layer] >= 0)
            custom[m.placement->layer_map_index[layer]].push_back(static_cast<int>(layer));
    html += (custom.empty() ? QStringLiteral("every MoE layer: ")
                            : QStringLiteral("other MoE layers: ")) +
            experts(m.placement->default_experts, rc.ep) + QStringLiteral("<br>");
    for (const auto& [index, layers] : custom) {
        QStringList names;
        for (const int layer : layers)
            names << QString::number(layer);
        html += QStringLiteral("MoE layer%1 %2: %3<br>")
                    .arg(layers.size() == 1 ? "" : "s")
                    .arg(names.join(QStringLiteral(", ")))
                    .arg(experts(m.placement->layer_maps[static_cast<size_t>(index)], rc.ep));
    }
    html += QStringLiteral("</p>");
    return html;
}

/// The GPU's load over the MoE layers its stage holds.
QString expertLoadHtml(const TopologyModel& m, int gpu) {
    const ExpertLoad& load = m.report->load;
    const RankCoords& rc = m.placement->coordsOf(gpu);
    QString html;
    const int stage = rc.pp;
    if (stage >= 0 && stage < static_cast<int>(m.layers_of_stage.size())) {
        const auto& layers = m.layers_of_stage[static_cast<size_t>(stage)];
        if (!layers.empty()) {
            double total = 0, peak = -1;
            int peak_layer = layers.front();
            for (const int layer : layers) {
                const double t = load.gpuTokens(*m.placement, gpu, layer);
                total += t;
                if (t > peak) {
                    peak = t;
                    peak_layer = layer;
                }
            }
            const double mean = total / static_cast<double>(layers.size());
            html += QStringLiteral("<p><b>Expert load</b> (routing step %1)<br>"
                                   "MoE layers %2–%3 on this stage<br>"
                                   "%4 token slots per micro-batch per layer on average, "
                                   "%5× the mean GPU<br>peak %6 in MoE layer %7%8</p>")
                        .arg(m.result->routing_step)
                        .arg(layers.front())
                        .arg(layers.back())
                        .arg(formatCount(mean))
                        .arg(m.mean_tokens > 0 ? mean / m.mean_tokens : 0.0, 0, 'f', 2)
                        .arg(formatCount(peak))
                        .arg(peak_layer)
                        .arg(gpu == m.hottest ? QStringLiteral(" — the hottest GPU") : QString());
        }
    }
    return html;
}

/// The memory of the GPU's stage.
QString memoryHtml(const TopologyModel& m, int gpu) {
    QString html;
    if (const StageResult* stage = m.stageResult(gpu)) {
        const MemoryBreakdown& mem = stage->memory;
        html +=
            QStringLiteral("<p><b>Memory</b> (stage %1): %2 of %3, %4 %5<br>"
                           "weights %6 · gradients %7 · optimizer %8<br>"
                           "activations %9 · dispatch buffers %10 · workspace %11</p>")
                .arg(stage->layers.stage)
                .arg(formatBytes(mem.total_bytes))
                .arg(formatBytes(mem.hbm_bytes))
                .arg(mem.margin_bytes >= 0 ? QStringLiteral("headroom") : QStringLiteral("over by"))
                .arg(formatBytes(std::abs(mem.margin_bytes)))
                .arg(formatBytes(mem.weights_bytes))
                .arg(formatBytes(mem.gradients_bytes))
                .arg(formatBytes(mem.optimizer_bytes))
                .arg(formatBytes(mem.activations_bytes))
                .arg(formatBytes(mem.dispatch_buffers_bytes))
                .arg(formatBytes(mem.workspace_bytes));
    }
    return html;
}

/// Traffic on the GPU's own links: scale-up, PCIe to its NIC, the NIC's fabric link.
QString trafficHtml(const TopologyModel& m, int gpu) {
    const auto g = static_cast<size_t>(gpu);
    const Scenario& s = m.result->scenario;
    QString html;
    const int up = m.graph->gpu_scale_up_link[g];
    const int pcie = m.graph->gpu_nic_link[g];
    const int nic = m.graph->vertices[static_cast<size_t>(m.graph->gpu_nic_vertex[g])].index;
    const int fabric = nic < static_cast<int>(m.graph->nic_leaf_link.size())
                           ? m.graph->nic_leaf_link[static_cast<size_t>(nic)]
                           : -1;
    html += QStringLiteral("<p><b>Traffic per step</b><br>");
    if (up >= 0)
        html += QStringLiteral("%1: %2 (%3 of the step)<br>")
                    .arg(QString::fromStdString(s.cluster.gpu.scale_up_fabric))
                    .arg(formatBytes(m.bytes(up)))
                    .arg(formatPercent(m.util(up)));
    html += QStringLiteral("PCIe to NIC: %1 (%2)<br>")
                .arg(formatBytes(m.bytes(pcie)))
                .arg(formatPercent(m.util(pcie)));
    if (fabric >= 0)
        html += QStringLiteral("NIC %1 to leaf: %2 (%3), shared by the GPUs on this rail")
                    .arg(QString::fromStdString(
                        m.graph->vertices[static_cast<size_t>(m.nic_base + nic)].label))
                    .arg(formatBytes(m.bytes(fabric)))
                    .arg(formatPercent(m.util(fabric)));
    html += QStringLiteral("</p>");
    return html;
}

} // namespace

QString TopologyView::toolTipAt(const QPointF& pos) const {
    const TopologyModel& m = *model_;
    if (!m.report)
        return {};
    const double lod = view_->scaleFactor();
    if (m.aggregated && m.layout.aggregated.summary.contains(pos))
        return detail::aggregateToolTip(m);
    const Detail d = detailAt(lod);
    const int gpu = d == Detail::racks ? -1 : gpuAtScenePos(pos);
    if (gpu >= 0) {
        const auto g = static_cast<size_t>(gpu);
        const RankCoords& rc = m.placement->coordsOf(g);
        QString text = QStringLiteral("<b>GPU %1</b> · rack %2 · node %3 · local %4<br>")
                           .arg(gpu)
                           .arg(m.graph->rackOf(gpu))
                           .arg(m.graph->nodeOf(gpu))
                           .arg(gpu % m.layout.shape.gpus_per_node);
        text += QStringLiteral("stage %1 · TP %2 · DP %3 · EP rank %4 · expert-DP %5<br>")
                    .arg(rc.pp)
                    .arg(rc.tp)
                    .arg(rc.dp)
                    .arg(rc.ep)
                    .arg(rc.edp);
        if (m.metric == GpuMetric::expert_load && g < m.peak_layer.size() && m.peak_layer[g] >= 0)
            text += QStringLiteral("busiest MoE layer %1: %2 token slots per micro-batch, %3× the "
                                   "layer's mean<br>")
                        .arg(m.peak_layer[g])
                        .arg(formatCount(m.peak_tokens[g]))
                        .arg(m.raw[g], 0, 'f', 2);
        if (const StageResult* stage = m.stageResult(gpu))
            text += QStringLiteral("memory %1 of %2<br>")
                        .arg(formatBytes(stage->memory.total_bytes))
                        .arg(formatBytes(stage->memory.hbm_bytes));
        const int up = m.graph->gpu_scale_up_link[g];
        const int nic = m.graph->vertices[static_cast<size_t>(m.graph->gpu_nic_vertex[g])].index;
        const int fabric = nic < static_cast<int>(m.graph->nic_leaf_link.size())
                               ? m.graph->nic_leaf_link[static_cast<size_t>(nic)]
                               : -1;
        text += QStringLiteral("scale-up %1 (%2) · NIC %3 (%4)")
                    .arg(formatBytes(m.bytes(up)))
                    .arg(formatPercent(m.util(up)))
                    .arg(formatBytes(m.bytes(fabric)))
                    .arg(formatPercent(m.util(fabric)));
        text += QStringLiteral("<br><i>click for details</i>");
        return text;
    }
    // Something in a node that is not a GPU: a NIC or the scale-up switch.
    if (d == Detail::full) {
        for (int rack = 0; rack < m.layout.racks; ++rack) {
            if (!m.layout.rack_rects[static_cast<size_t>(rack)].contains(pos))
                continue;
            for (int node = m.layout.firstNode(rack); node < m.layout.endNode(rack); ++node) {
                for (int rail = 0; rail < m.layout.shape.nics_per_node; ++rail)
                    if (m.layout.nicRect(node, rail).adjusted(-2, -2, 2, 2).contains(pos)) {
                        const int nic = node * m.layout.shape.nics_per_node + rail;
                        const int link = nic < static_cast<int>(m.graph->nic_leaf_link.size())
                                             ? m.graph->nic_leaf_link[static_cast<size_t>(nic)]
                                             : -1;
                        return QStringLiteral(
                                   "<b>%1</b> (%2)<br>fabric link: %3 per step, %4 of the step")
                            .arg(QString::fromStdString(
                                m.graph->vertices[static_cast<size_t>(m.nic_base + nic)].label))
                            .arg(QString::fromStdString(m.result->scenario.cluster.nic.name))
                            .arg(formatBytes(m.bytes(link)))
                            .arg(formatPercent(m.util(link)));
                    }
                if (m.layout.barRect(node).contains(pos))
                    return QStringLiteral(
                               "<b>%1 switch</b> of %2<br>busiest GPU link %3 of the step")
                        .arg(QString::fromStdString(m.result->scenario.cluster.gpu.scale_up_fabric))
                        .arg(m.layout.shape.rack_scale_up_domain
                                 ? QStringLiteral("rack %1 (reached through these ports)").arg(rack)
                                 : QStringLiteral("node %1").arg(node))
                        .arg(formatPercent(m.node_scale_up_util[static_cast<size_t>(node)]));
            }
        }
    }
    for (const QGraphicsItem* item : scene_->items(pos)) {
        if (const auto* fabric = dynamic_cast<const detail::FabricItem*>(item)) {
            const QString text = fabric->describeAt(pos, lod);
            if (!text.isEmpty())
                return text;
        }
    }
    for (int rack = 0; rack < m.layout.racks; ++rack)
        if (m.layout.rack_rects[static_cast<size_t>(rack)].contains(pos)) {
            const int hot = m.rack_hot_gpu[static_cast<size_t>(rack)];
            QString text = QStringLiteral("<b>%1</b> · nodes %2–%3<br>")
                               .arg(m.rackCaption(rack))
                               .arg(m.layout.firstNode(rack))
                               .arg(m.layout.endNode(rack) - 1);
            if (m.overPower(rack))
                text +=
                    QStringLiteral("<span style='color:%1'>over the %2 kW rack limit</span><br>")
                        .arg(m.theme.danger.name())
                        .arg(m.result->scenario.cluster.rack_power_limit_kw, 0, 'f', 1);
            if (hot >= 0)
                text +=
                    QStringLiteral("hottest GPU %1 (%2)<br>")
                        .arg(hot)
                        .arg(detail::metricText(m).title.mid(10) + QStringLiteral(" ") +
                             (m.metric == GpuMetric::expert_load
                                  ? QString::number(m.raw[static_cast<size_t>(hot)], 'f', 2) + "×"
                                  : formatPercent(m.value[static_cast<size_t>(hot)])));
            text += d == Detail::racks
                        ? QStringLiteral("<i>click or double-click to zoom in</i>")
                        : QStringLiteral("<i>drag a node onto another rack to move it</i>");
            return text;
        }
    return {};
}

QString TopologyView::gpuDetailsHtml(int gpu) const {
    const TopologyModel& m = *model_;
    if (!m.report || gpu < 0 || gpu >= m.layout.gpus)
        return {};
    const Scenario& s = m.result->scenario;
    const RankCoords& rc = m.placement->coordsOf(gpu);
    QString html;
    html += QStringLiteral("<h3 style='margin:0'>GPU %1</h3>").arg(gpu);
    html +=
        QStringLiteral("<p style='margin-top:2px'>%1 · rack %2 · node %3 · GPU %4 of the node<br>"
                       "pipeline stage %5</p>")
            .arg(QString::fromStdString(s.cluster.gpu.name).toHtmlEscaped())
            .arg(m.graph->rackOf(gpu))
            .arg(m.graph->nodeOf(gpu))
            .arg(gpu % m.layout.shape.gpus_per_node)
            .arg(rc.pp);

    html += groupsHtml(m, gpu);
    if (s.model.isMoe() && rc.ep >= 0)
        html += expertsHtml(m, gpu) + expertLoadHtml(m, gpu);
    html += memoryHtml(m, gpu);
    html += trafficHtml(m, gpu);
    return html;
}

void TopologyView::updateInfoPanel() {
    const TopologyModel& m = *model_;
    if (!m.report) {
        info_->setHtml(tr("<p>No result yet.</p>"));
        status_->clear();
        return;
    }
    const int gpu = m.selected >= 0 ? m.selected : -1;
    if (gpu >= 0) {
        info_->setHtml(gpuDetailsHtml(gpu));
    } else {
        const Scenario& s = m.result->scenario;
        QString html = QStringLiteral("<h3 style='margin:0'>%1</h3><p>%2 × %3 · %4 nodes in %5<br>"
                                      "%6 %7, %8 leaves, %9 spines</p>")
                           .arg(QString::fromStdString(s.name).toHtmlEscaped())
                           .arg(m.layout.gpus)
                           .arg(QString::fromStdString(s.cluster.gpu.name).toHtmlEscaped())
                           .arg(m.layout.nodes)
                           .arg(QString::fromStdString(s.cluster.describeRacks()).toHtmlEscaped())
                           .arg(QString::fromLatin1(toString(s.cluster.fabric)))
                           .arg(QString::fromLatin1(toString(s.cluster.fabric_topology)))
                           .arg(m.graph->leaves)
                           .arg(m.graph->spines);
        html +=
            QStringLiteral("<p><i>Click a GPU to see its experts, memory, load and traffic. Hover "
                           "a GPU to outline its parallel groups. Wheel zooms, drag on empty space "
                           "(or with the middle button) pans, double-click zooms in. Drag a node "
                           "onto another rack (or \"+ new "
                           "rack\") to move it; Alt+Left / Alt+Right move the selected GPU's node "
                           "to the previous / next rack, Alt+N into a new rack.</i></p>");
        if (!m.report->layout_description.empty()) {
            html += QStringLiteral("<p><b>Layout</b><br>");
            for (const std::string& line : m.report->layout_description)
                html += QString::fromStdString(line).toHtmlEscaped() + QStringLiteral("<br>");
            html += QStringLiteral("</p>");
        }
        info_->setHtml(html);
    }
    updateStatus();
    legend_->refresh();
}

void TopologyView::updateStatus() {
    const TopologyModel& m = *model_;
    if (!m.report) {
        status_->clear();
        return;
    }
    // Status: zoom level and the hovered GPU's groups.
    const Detail d = detail();
    QString status = d == Detail::racks  ? tr("racks (zoom in for GPUs)")
                     : d == Detail::gpus ? tr("GPUs (zoom in for labels and links)")
                                         : tr("full detail");
    if (m.hovered >= 0) {
        QStringList groups;
        for (const GroupKind kind : detail::kAllHoverKinds) {
            const ParallelGroup& group = m.placement->groupOf(kind, m.hovered);
            if (group.gpus.size() > 1)
                groups << QStringLiteral("<span style='color:%1'>■</span> %2 %3")
                              .arg(detail::groupColor(kind).name())
                              .arg(detail::groupName(kind))
                              .arg(formatGpuList(group.gpus, 4));
        }
        status = QStringLiteral("<b>GPU %1</b> %2")
                     .arg(m.hovered)
                     .arg(groups.join(QStringLiteral(" · ")));
    }
    // A node drag and a refused move say what they do, over the zoom and hover.
    const QColor refusal = experiment::refusalColor(palette());
    if (m.drag.node >= 0)
        status = m.drag.preview.isEmpty()
                     ? tr("Drag node %1 onto another rack or \"+ new rack\"").arg(m.drag.node)
                     : QStringLiteral("<span style='color:%1'>%2</span>")
                           .arg(m.drag.valid ? m.theme.accent.name() : refusal.name())
                           .arg(m.drag.preview.toHtmlEscaped());
    else if (!message_.isEmpty())
        status = QStringLiteral("<span style='color:%1'>%2</span>")
                     .arg(refusal.name())
                     .arg(message_.toHtmlEscaped());
    status_->setText(status);
    status_->setToolTip(m.drag.node >= 0 ? m.drag.preview : message_);
}

QString TopologyView::infoPanelText() const {
    return info_->toPlainText();
}

// --- Export ----------------------------------------------------------------------------------

void TopologyView::paintExportPage(QPainter& p, const QRectF& page) {
    TopologyModel& m = *model_;
    const Scenario& s = m.result->scenario;
    const Report& r = *m.report;
    p.fillRect(page, m.theme.background);
    p.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    const double margin = 32;
    QFont font = QApplication::font();
    font.setFamily(QStringLiteral("DejaVu Sans"));
    p.setFont(font);

    p.setPen(m.theme.text);
    p.setFont(detail::pixelFont(font, 26, true));
    p.drawText(QRectF(margin, 20, page.width() - 2 * margin, 34), Qt::AlignLeft | Qt::AlignVCenter,
               QStringLiteral("Cluster topology — %1%2")
                   .arg(QString::fromStdString(s.name), detail::viewTitleSuffix(m)));
    p.setFont(detail::pixelFont(font, 14));
    p.setPen(m.theme.muted);
    const QString fabric = m.graph->leaves > 0
                               ? QStringLiteral(" · %1 %2: %3 leaves, %4 spines")
                                     .arg(QString::fromLatin1(displayName(s.cluster.fabric)))
                                     .arg(QString::fromLatin1(toString(s.cluster.fabric_topology)))
                                     .arg(m.graph->leaves)
                                     .arg(m.graph->spines)
                               : QString();
    p.drawText(QRectF(margin, 56, page.width() - 2 * margin, 20), Qt::AlignLeft | Qt::AlignVCenter,
               QStringLiteral("%1 × %2 · %3 nodes × %4 GPUs · %5 racks · %6 per %7%8")
                   .arg(m.layout.gpus)
                   .arg(QString::fromStdString(s.cluster.gpu.name))
                   .arg(m.layout.nodes)
                   .arg(m.layout.shape.gpus_per_node)
                   .arg(m.layout.racks)
                   .arg(QString::fromStdString(s.cluster.gpu.scale_up_fabric))
                   .arg(m.layout.shape.rack_scale_up_domain ? QStringLiteral("rack")
                                                            : QStringLiteral("node"))
                   .arg(fabric));
    const LayoutSpec& l = s.layout;
    p.drawText(
        QRectF(margin, 76, page.width() - 2 * margin, 20), Qt::AlignLeft | Qt::AlignVCenter,
        QStringLiteral("TP %1 · CP %2 · PP %3 · DP %4 · EP %5 · expert-DP %6 · %7 · step %8 · "
                       "routing step %9")
            .arg(l.tp)
            .arg(l.cp)
            .arg(l.pp)
            .arg(l.dp)
            .arg(l.ep)
            .arg(l.expertDp())
            .arg(QString::fromStdString(toString(l.order)))
            .arg(formatSeconds(r.step_time_s))
            .arg(m.result->routing_step));
    p.setPen(QPen(m.theme.pod_border, 1));
    p.drawLine(QPointF(margin, 104), QPointF(page.width() - margin, 104));

    // The diagram as large as the page allows, the legend beside it; the pair is centred.
    const double legend_w = 300;
    const double gap = 40;
    const double top = 122;
    const QRectF area(margin, top, page.width() - 2 * margin - legend_w - gap,
                      page.height() - top - margin);
    const QRectF bounds = m.shownBounds();
    const double scale = std::min(area.width() / bounds.width(), area.height() / bounds.height());
    const QSizeF size = bounds.size() * scale;
    const double left = margin + (page.width() - 2 * margin - (size.width() + gap + legend_w)) / 2;
    const QRectF target(left, top, size.width(), size.height());
    const QRectF legend(target.right() + gap, top, legend_w, page.height() - top - margin);
    // Pages are vector (SVG, PDF) and sharper than the screen: the items paint afresh, not
    // from their on-screen render caches.
    std::vector<std::pair<QGraphicsItem*, QGraphicsItem::CacheMode>> caches;
    for (QGraphicsItem* item : scene_->items()) {
        caches.emplace_back(item, item->cacheMode());
        item->setCacheMode(QGraphicsItem::NoCache);
    }
    scene_->render(&p, target, bounds, Qt::KeepAspectRatio);
    for (const auto& [item, mode] : caches)
        item->setCacheMode(mode);
    p.setFont(font);
    detail::paintLegend(p, legend, m, true, hover_groups_);
}

QString TopologyView::exportTo(const QString& path) {
    TopologyModel& m = *model_;
    if (!m.report)
        return QStringLiteral("nothing to export: no result yet");
    // Slides are light whatever the desktop theme; hover and selection are left out.
    const detail::ViewTheme screen = m.theme;
    m.theme = detail::viewTheme(false);
    m.exporting = true;
    updateColors();
    const QString error = detail::exportPage(
        path, QSizeF(1600, 900),
        QStringLiteral("Cluster topology — %1%2")
            .arg(QString::fromStdString(m.result->scenario.name), detail::viewTitleSuffix(m)),
        [this](QPainter& p, const QRectF& page) { paintExportPage(p, page); });
    m.exporting = false;
    m.theme = screen;
    updateColors();
    return error;
}

} // namespace moe::widgets
