#include "topology/topology_items.h"

#include "topology/topology_aggregate.h"
#include "topology/topology_link_labels.h"

#include "common/view_export.h"
#include "experiments/experiment_support.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/scenario_document.h"

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

QColor groupColor(GroupKind kind) {
    switch (kind) {
    case GroupKind::ep:
        return collectiveColor(CollectiveKind::moe_dispatch);
    case GroupKind::tp:
    case GroupKind::etp:
        return collectiveColor(CollectiveKind::tp_collective);
    case GroupKind::cp:
        return collectiveColor(CollectiveKind::cp_exchange);
    case GroupKind::pp:
        return collectiveColor(CollectiveKind::pp_send_recv);
    case GroupKind::dp:
        return collectiveColor(CollectiveKind::dp_sync);
    case GroupKind::edp:
        return collectiveColor(CollectiveKind::edp_sync);
    }
    return QColor(Qt::gray);
}

QString groupName(GroupKind kind) {
    return QString::fromLatin1(toString(kind)).toUpper();
}

/// Text drawn at a constant screen size inside a scene rectangle, elided to fit.
void drawScreenText(QPainter* p, double lod, const QRectF& scene_rect, const QString& text,
                    double px, int flags, const QColor& color, bool bold) {
    const QRectF screen(0, 0, scene_rect.width() * lod, scene_rect.height() * lod);
    if (screen.width() < px || screen.height() < px * 0.9)
        return;
    p->save();
    p->translate(scene_rect.topLeft());
    p->scale(1 / lod, 1 / lod);
    QFont font = p->font();
    font.setPixelSize(std::max(1, static_cast<int>(std::lround(px))));
    font.setBold(bold);
    p->setFont(font);
    p->setPen(color);
    const QString shown =
        QFontMetricsF(font).elidedText(text, Qt::ElideRight, screen.width(), Qt::TextSingleLine);
    p->drawText(screen, flags, shown);
    p->restore();
}

bool textFits(const QPainter* p, double lod, const QRectF& scene_rect, const QString& text,
              double px, bool bold) {
    QFont font = p->font();
    font.setPixelSize(std::max(1, static_cast<int>(std::lround(px))));
    font.setBold(bold);
    const QFontMetricsF fm(font);
    return fm.horizontalAdvance(text) + 2 <= scene_rect.width() * lod &&
           fm.height() * 0.8 <= scene_rect.height() * lod;
}

TopologyView::Detail detailFor(double lod) {
    switch (levelOfDetail(lod)) {
    case LevelOfDetail::racks:
        return TopologyView::Detail::racks;
    case LevelOfDetail::gpus:
        return TopologyView::Detail::gpus;
    case LevelOfDetail::full:
        break;
    }
    return TopologyView::Detail::full;
}

/// A cosmetic pen: `px` screen pixels wide whatever the zoom.
QPen screenPen(const QColor& color, double px) {
    QPen pen(color, px);
    pen.setCosmetic(true);
    return pen;
}

void RackItem::paintWholeRack(QPainter* p, double lod) const {
    const TopologyModel& m = *model_;
    const QRectF r = m.layout.rack_rects[static_cast<size_t>(rack_)];
    if (m.overlay_on) {
        // An overlay is about which GPU is in which group: cells even when racks are small.
        p->setPen(screenPen(m.theme.rack_border, 1));
        p->setBrush(m.theme.rack_fill);
        p->drawRect(r);
        for (int gpu = m.layout.firstNode(rack_) * m.layout.shape.gpus_per_node;
             gpu < m.layout.endNode(rack_) * m.layout.shape.gpus_per_node; ++gpu)
            p->fillRect(m.layout.gpuRect(gpu), m.fill[static_cast<size_t>(gpu)]);
        return;
    }
    const int hot = m.rack_hot_gpu[static_cast<size_t>(rack_)];
    const QColor fill = hot >= 0 ? m.fill[static_cast<size_t>(hot)] : m.theme.no_data;
    const bool lit = m.rack_highlighted[static_cast<size_t>(rack_)] != 0;
    p->setPen(lit                  ? screenPen(m.theme.highlight, 3)
              : m.overPower(rack_) ? screenPen(m.theme.danger, 3)
                                   : screenPen(m.theme.rack_border, 1));
    p->setBrush(fill);
    p->drawRect(r);
    // Free slots stay rack-coloured, so a rack short of nodes reads as one at a glance.
    p->setPen(Qt::NoPen);
    p->setBrush(m.theme.rack_fill);
    for (int slot = m.layout.endNode(rack_) - m.layout.firstNode(rack_);
         slot < m.layout.shape.nodes_per_rack; ++slot)
        p->drawRect(m.layout.slotRect(r, slot).adjusted(-kNodeGap / 2, -kNodeGap / 2, kNodeGap / 2,
                                                        kNodeGap / 2));
    const double px = std::clamp(r.width() * lod * 0.22, 7.0, 12.0);
    drawScreenText(p, lod, r, QString::number(rack_), px, Qt::AlignCenter, textOn(fill));
}

void RackItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
    const TopologyModel& m = *model_;
    if (m.rackHidden(rack_))
        return;
    const double lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(p->worldTransform());
    const TopologyView::Detail detail = detailFor(lod);
    if (detail == TopologyView::Detail::racks) {
        paintWholeRack(p, lod);
        return;
    }
    const bool full = detail == TopologyView::Detail::full;
    // GPU cells: the ids when the widest of them fits whole (a cut number would mislead, and
    // some ids without the others would read as a selection).
    const double id_px = std::clamp(kTile * lod * 0.3, 7.0, 10.0);
    const bool gpu_ids =
        !full && m.layout.gpus > 0 &&
        textFits(p, lod, m.layout.gpuRect(0), QString::number(m.layout.gpus - 1), id_px, true);
    paintFrame(p, lod, full);
    for (int node = m.layout.firstNode(rack_); node < m.layout.endNode(rack_); ++node) {
        paintTray(p, node, lod, full);
        paintNics(p, node, full);
        paintScaleUpBar(p, node, lod, full);
        // GPU tiles (axis-aligned cells need no antialiasing when small).
        p->setRenderHint(QPainter::Antialiasing, full);
        const int gpn = m.layout.shape.gpus_per_node;
        for (int gpu = node * gpn; gpu < (node + 1) * gpn; ++gpu) {
            const QRectF tile = m.layout.gpuRect(gpu);
            paintGpuTile(p, gpu, tile, full);
            paintGroupRings(p, gpu, tile, lod, full);
            if (full)
                paintGpuLabel(p, gpu, tile, lod);
            else if (gpu_ids)
                drawScreenText(p, lod, tile, QString::number(gpu), id_px, Qt::AlignCenter,
                               textOn(m.fill[static_cast<size_t>(gpu)]), true);
            paintGpuMarks(p, gpu, tile, lod, full);
        }
    }
    if (m.layout.shape.rack_scale_up_domain)
        paintRackSwitch(p, lod);
}

void RackItem::paintFrame(QPainter* p, double lod, bool full) const {
    const TopologyModel& m = *model_;
    const QRectF rr = m.layout.rack_rects[static_cast<size_t>(rack_)];
    const bool over = m.overPower(rack_);
    p->setPen(over ? screenPen(m.theme.danger, 2.5)
                   : screenPen(m.rack_highlighted[static_cast<size_t>(rack_)] && !full
                                   ? m.theme.highlight
                                   : m.theme.rack_border,
                               1));
    p->setBrush(m.theme.rack_fill);
    p->drawRoundedRect(rr, 6, 6);
    // The caption whole, else its rack number and power (the node count is drawn as slots).
    const QRectF header = m.layout.rackHeaderRect(rack_);
    const double caption_px = std::clamp(kRackHeader * lod * 0.5, 9.0, 14.0);
    const QString mark = over ? QStringLiteral("⚠ ") : QString();
    QString caption = mark + m.rackCaption(rack_);
    if (!textFits(p, lod, header, caption, caption_px, true))
        caption = mark + QStringLiteral("rack %1").arg(rack_) +
                  caption.section(QStringLiteral(" nodes"), 1); // " · 35.2 kW" or ""
    drawScreenText(p, lod, header, caption, caption_px, Qt::AlignLeft | Qt::AlignVCenter,
                   over ? m.theme.danger : m.theme.text, true);
    // Free slots, where a node dragged from another rack can go.
    QPen free_pen = screenPen(m.theme.node_border, 1);
    free_pen.setStyle(Qt::DashLine);
    p->setPen(free_pen);
    p->setBrush(Qt::NoBrush);
    const int held = m.layout.endNode(rack_) - m.layout.firstNode(rack_);
    for (int slot = held; slot < m.layout.shape.nodes_per_rack; ++slot) {
        const QRectF free = m.layout.slotRect(rr, slot);
        p->drawRoundedRect(free, 4, 4);
        if (full)
            drawScreenText(p, lod, free, QStringLiteral("free slot"),
                           std::clamp(kNodeHeader * lod * 0.62, 9.0, 12.0), Qt::AlignCenter,
                           m.theme.muted);
    }
}

void RackItem::paintTray(QPainter* p, int node, double lod, bool full) const {
    const TopologyModel& m = *model_;
    const TopologyLayout& l = m.layout;
    p->setPen(screenPen(m.theme.node_border, 1));
    p->setBrush(m.theme.node_fill);
    p->drawRoundedRect(l.nodeRect(node), 4, 4);
    const double header_px = std::clamp(kNodeHeader * lod * 0.62, 7.0, 12.0);
    if (!full) {
        // GPU cells: the node ids when the widest fits.
        if (textFits(p, lod, l.nodeHeaderRect(node), QStringLiteral("node %1").arg(l.nodes - 1),
                     header_px, false))
            drawScreenText(p, lod, l.nodeHeaderRect(node), QStringLiteral("node %1").arg(node),
                           header_px, Qt::AlignLeft | Qt::AlignVCenter, m.theme.muted);
        return;
    }
    drawScreenText(p, lod, l.nodeHeaderRect(node), QStringLiteral("node %1").arg(node),
                   std::max(header_px, 9.0), Qt::AlignLeft | Qt::AlignVCenter, m.theme.muted);
    // GPU <-> NIC (PCIe) and GPU <-> NVSwitch links, coloured by their utilization.
    const int gpn = l.shape.gpus_per_node;
    for (int gpu = node * gpn; gpu < (node + 1) * gpn; ++gpu) {
        const int nic_vertex = m.graph->gpu_nic_vertex[static_cast<size_t>(gpu)];
        const int rail = m.graph->vertices[static_cast<size_t>(nic_vertex)].rail;
        const int pcie = m.graph->gpu_nic_link[static_cast<size_t>(gpu)];
        p->setPen(QPen(m.linkColor(m.util(pcie), m.bytes(pcie)), 2.5, Qt::SolidLine, Qt::FlatCap));
        p->drawLine(l.gpuNicLine(gpu, rail));
        const int up = m.graph->gpu_scale_up_link[static_cast<size_t>(gpu)];
        if (up >= 0) {
            p->setPen(QPen(m.linkColor(m.util(up), m.bytes(up)), 3.5, Qt::SolidLine, Qt::FlatCap));
            p->drawLine(l.gpuScaleUpLine(gpu));
        }
    }
}

void RackItem::paintNics(QPainter* p, int node, bool full) const {
    // NICs, filled by the utilization of their fabric link.
    const TopologyModel& m = *model_;
    const int nics_per_node = m.layout.shape.nics_per_node;
    for (int rail = 0; rail < nics_per_node; ++rail) {
        const int nic = node * nics_per_node + rail;
        const int link = nic < static_cast<int>(m.graph->nic_leaf_link.size())
                             ? m.graph->nic_leaf_link[static_cast<size_t>(nic)]
                             : -1;
        p->setPen(full ? screenPen(m.theme.switch_fill, 1) : Qt::NoPen);
        p->setBrush(link >= 0 ? m.linkColor(m.util(link), m.bytes(link)) : m.theme.idle_link);
        p->drawRect(m.layout.nicRect(node, rail));
    }
}

void RackItem::paintScaleUpBar(QPainter* p, int node, double lod, bool full) const {
    // The scale-up switch of a node domain (or this node's NVLink ports of a rack domain).
    const TopologyModel& m = *model_;
    const bool rack_domain = m.layout.shape.rack_scale_up_domain;
    if (m.layout.shape.gpus_per_node <= 1 && !rack_domain)
        return;
    const double node_util = m.node_scale_up_util[static_cast<size_t>(node)];
    const QRectF bar = m.layout.barRect(node);
    p->setPen(Qt::NoPen);
    p->setBrush(full ? m.theme.switch_fill : m.linkColor(node_util, node_util > 0 ? 1 : 0));
    p->drawRoundedRect(bar, 2, 2);
    if (!full)
        return;
    const std::string& fabric = m.result->scenario.cluster.gpu.scale_up_fabric;
    QString name = rack_domain      ? QStringLiteral("NVLink ports → rack NVSwitch")
                   : fabric.empty() ? QStringLiteral("scale-up switch")
                                    : QString::fromStdString(fabric) + QStringLiteral(" switch");
    // The node's GPU <-> switch links as one bundle, when the numbers fit on the bar.
    const double px = std::clamp(kBarH * lod * 0.75, 8.0, 11.0);
    const LinkLoad& load = m.node_scale_up_load[static_cast<size_t>(node)];
    if (load.bytes > 0) {
        QFont font = p->font();
        font.setPixelSize(std::max(1, static_cast<int>(std::lround(px))));
        const QString with_load = name + QStringLiteral(" · ") + loadLabel(load);
        if (QFontMetricsF(font).horizontalAdvance(with_load) + 8 <= bar.width() * lod)
            name = with_load;
    }
    drawScreenText(p, lod, bar, name, px, Qt::AlignCenter, m.theme.switch_text);
}

void RackItem::paintGpuTile(QPainter* p, int gpu, const QRectF& tile, bool full) const {
    const QColor fill = model_->fill[static_cast<size_t>(gpu)];
    if (full) {
        p->setPen(screenPen(fill.darker(140), 1));
        p->setBrush(fill);
        p->drawRoundedRect(tile, 4, 4);
    } else {
        p->fillRect(tile, fill);
    }
}

void RackItem::paintGpuLabel(QPainter* p, int gpu, const QRectF& tile, double lod) const {
    const TopologyModel& m = *model_;
    const auto g = static_cast<size_t>(gpu);
    const double tile_px = kTile * lod;
    const QColor ink = textOn(m.fill[g]);
    const double index_px = std::clamp(tile_px * 0.27, 9.0, 14.0);
    // Two lines (id and metric value) when the tile is large enough.
    if (tile_px < 34) {
        drawScreenText(p, lod, tile, QString::number(gpu), index_px, Qt::AlignCenter, ink, true);
        return;
    }
    drawScreenText(p, lod, QRectF(tile.left(), tile.top() + 3, tile.width(), tile.height() / 2),
                   QString::number(gpu), index_px, Qt::AlignHCenter | Qt::AlignBottom, ink, true);
    const int group = m.overlayGroup(gpu);
    if (group >= 0 && !m.overlay_groups.single_gpu_groups) {
        drawScreenText(
            p, lod, QRectF(tile.left(), tile.center().y() + 1, tile.width(), tile.height() / 2 - 3),
            QStringLiteral("#%1").arg(group), std::clamp(kTile * lod * 0.24, 8.0, 12.0),
            Qt::AlignHCenter | Qt::AlignTop, ink);
        return;
    }
    if (g >= m.raw.size() || !std::isfinite(m.raw[g]))
        return;
    const QString text = m.metric == GpuMetric::expert_load
                             ? QString::number(m.raw[g], 'f', 2) + QStringLiteral("×")
                             : formatPercent(m.value[g]);
    drawScreenText(
        p, lod, QRectF(tile.left(), tile.center().y() + 1, tile.width(), tile.height() / 2 - 3),
        text, std::clamp(kTile * lod * 0.24, 8.0, 12.0), Qt::AlignHCenter | Qt::AlignTop, ink);
}

void RackItem::paintRackSwitch(QPainter* p, double lod) const {
    // Each node's NVLink ports run down beside its column of nodes to the rack switch.
    const TopologyModel& m = *model_;
    const TopologyLayout& l = m.layout;
    const QRectF bar = l.rackBarRect(rack_);
    const double u = m.rack_scale_up_util[static_cast<size_t>(rack_)];
    p->setPen(QPen(m.linkColor(u, u > 0 ? 1 : 0), 2));
    for (int node = l.firstNode(rack_); node < l.endNode(rack_); ++node) {
        p->drawLine(l.nodePortLine(node));
        if (l.hasColumnDrop(node))
            p->drawLine(l.columnDropLine(node));
    }
    p->setPen(Qt::NoPen);
    p->setBrush(m.theme.switch_fill);
    p->drawRoundedRect(bar, 3, 3);
    drawScreenText(
        p, lod, bar, QStringLiteral("rack NVSwitch · %1 GPUs").arg(m.graph->gpus_per_domain),
        std::clamp(kRackBarH * lod * 0.65, 8.0, 12.0), Qt::AlignCenter, m.theme.switch_text);
}

void RackItem::paintGroupRings(QPainter* p, int gpu, const QRectF& tile, double lod,
                               bool full) const {
    const TopologyModel& m = *model_;
    const auto g = static_cast<size_t>(gpu);
    if (m.exporting || m.hover_mask.empty() || !m.hover_mask[g] || !m.placement)
        return;
    // The groups of the hovered GPU this GPU shares, the largest outermost, so a small group
    // inside a large one (EP inside DP) keeps its ring instead of being covered.
    std::vector<std::pair<size_t, GroupKind>> rings;
    for (const GroupKind kind : {GroupKind::dp, GroupKind::pp, GroupKind::edp, GroupKind::ep,
                                 GroupKind::cp, GroupKind::etp, GroupKind::tp}) {
        if (m.hover_mask[g] & static_cast<uint8_t>(1u << static_cast<int>(kind)))
            rings.emplace_back(m.placement->groupOf(kind, m.hovered).gpus.size(), kind);
    }
    std::stable_sort(rings.begin(), rings.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    p->setBrush(Qt::NoBrush);
    if (full) {
        for (size_t ring = 0; ring < rings.size(); ++ring) {
            const double inset = 1.4 + static_cast<double>(ring) * 3.0;
            const QRectF r = tile.adjusted(inset, inset, -inset, -inset);
            p->setPen(QPen(m.theme.dark ? QColor(0, 0, 0, 160) : QColor(255, 255, 255, 190), 3.4));
            p->drawRoundedRect(r, 3, 3);
            p->setPen(QPen(groupColor(rings[ring].second), 2.0));
            p->drawRoundedRect(r, 3, 3);
        }
        return;
    }
    // Cells: nested screen-pixel rings as many as the cell holds, the smallest groups kept
    // when it holds fewer than the GPU has.
    const double tile_px = tile.width() * lod;
    const auto fit = static_cast<size_t>(std::max(1.0, std::floor((tile_px / 2 - 1) / 2.5)));
    const size_t first = rings.size() > fit ? rings.size() - fit : 0;
    for (size_t ring = first; ring < rings.size(); ++ring) {
        const double inset = (1 + static_cast<double>(ring - first) * 2.5) / lod;
        p->setPen(screenPen(groupColor(rings[ring].second), 2));
        p->drawRect(tile.adjusted(inset, inset, -inset, -inset));
    }
}

void RackItem::paintGpuMarks(QPainter* p, int gpu, const QRectF& tile, double lod,
                             bool full) const {
    const TopologyModel& m = *model_;
    const auto g = static_cast<size_t>(gpu);
    if (!m.highlighted.empty() && m.highlighted[g]) {
        p->setBrush(Qt::NoBrush);
        p->setPen(full ? QPen(m.theme.highlight, 3.5) : screenPen(m.theme.highlight, 2.5));
        const double out = full ? 3.0 : 1.5 / lod;
        p->drawRoundedRect(tile.adjusted(-out, -out, out, out), 4, 4);
    }
    if (!m.exporting && (gpu == m.selected || gpu == m.hovered)) {
        p->setBrush(Qt::NoBrush);
        p->setPen(full ? QPen(m.theme.text, gpu == m.selected ? 3.0 : 2.0)
                       : screenPen(m.theme.text, gpu == m.selected ? 2.5 : 1.5));
        const double out = full ? 1.0 : 0.5 / lod;
        p->drawRoundedRect(tile.adjusted(-out, -out, out, out), 4, 4);
    }
    if (gpu == m.hottest && m.metric == GpuMetric::expert_load) {
        // A small flag in the corner marks the GPU that carries the most tokens in any layer.
        const double s = full ? 11.0 : std::max(tile.width() * 0.45, 3 / lod);
        QPainterPath flag;
        flag.moveTo(tile.right() - s, tile.top());
        flag.lineTo(tile.right(), tile.top());
        flag.lineTo(tile.right(), tile.top() + s);
        flag.closeSubpath();
        p->setPen(full ? QPen(Qt::white, 1) : Qt::NoPen);
        p->setBrush(QColor(0xD62728));
        p->drawPath(flag);
        if (!full) {
            // Cells are a few pixels wide: ring the hottest one so it can be found.
            p->setBrush(Qt::NoBrush);
            p->setPen(screenPen(QColor(0xD62728), 2));
            const double out = 2.5 / lod;
            p->drawRect(tile.adjusted(-out, -out, out, out));
        }
    }
}

/// Lines grouped by colour so each colour is one drawLines call.
class LineBatch {
public:
    void add(const QColor& color, const QLineF& line) { lines_[color.rgba()].push_back(line); }
    void draw(QPainter* p, double width_px, int alpha) const {
        for (const auto& [rgba, lines] : lines_) {
            QColor c = QColor::fromRgba(rgba);
            c.setAlpha(alpha);
            p->setPen(screenPen(c, width_px));
            p->drawLines(lines.data(), static_cast<int>(lines.size()));
        }
    }

private:
    std::map<QRgb, std::vector<QLineF>> lines_;
};

/// Quantized so that thousands of links share a few dozen colours (and pens).
QColor quantizedLinkColor(const TopologyModel& m, double u, double bytes) {
    if (bytes <= 0)
        return m.theme.idle_link;
    return linkColor(std::round(std::clamp(u, 0.0, 1.0) * 40) / 40, m.theme.dark);
}

void FabricItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
    const TopologyModel& m = *model_;
    const HardwareGraph& g = *m.graph;
    const double lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(p->worldTransform());
    const QRectF exposed = option->exposedRect.isEmpty() ? m.layout.bounds : option->exposedRect;
    const bool full = detailFor(lod) == TopologyView::Detail::full;
    const bool spines = layer_ == Layer::spines;

    if (spines && !m.spineRow().rects.empty()) {
        double max_up = 0;
        for (const double u : m.leaf_up_util)
            max_up = std::max(max_up, u);
        drawScreenText(p, lod, m.spineRow().label_rect,
                       QStringLiteral("Spine layer · %1 switches · %2 leaf uplinks · busiest %3")
                           .arg(g.spines)
                           .arg(std::accumulate(g.leaf_spine_links_count.begin(),
                                                g.leaf_spine_links_count.end(), 0))
                           .arg(formatPercent(max_up)),
                       std::clamp(m.layout.spine_label_h * lod * 0.45, 10.0, 15.0),
                       Qt::AlignLeft | Qt::AlignVCenter, m.theme.muted);
    }

    // Leaf <-> spine.
    LineBatch uplinks;
    int uplink_count = 0;
    for (size_t pod = 0; spines && pod < m.layout.pods.size(); ++pod) {
        const PodGeometry& pd = m.layout.pods[pod];
        for (size_t slot = 0; !m.podHidden(static_cast<int>(pod)) && slot < pd.leaves.size();
             ++slot) {
            const int leaf = pd.leaves[slot];
            const int begin = g.leaf_spine_links_begin[static_cast<size_t>(leaf)];
            const int count = g.leaf_spine_links_count[static_cast<size_t>(leaf)];
            if (m.layout.mesh) {
                for (int k = 0; k < count; ++k) {
                    const int link = begin + k;
                    const int spine = g.links[static_cast<size_t>(link)].b - m.spine_base;
                    const QLineF line = m.layout.uplinkLine(pd, static_cast<int>(slot), spine);
                    if (!exposed.intersects(
                            QRectF(line.p1(), line.p2()).normalized().adjusted(-2, -2, 2, 2)))
                        continue;
                    uplinks.add(quantizedLinkColor(m, m.util(link), m.bytes(link)), line);
                    ++uplink_count;
                }
            }
        }
    }
    uplinks.draw(p, uplink_count > 400 ? 1.0 : 1.8, uplink_count > 400 ? 150 : 255);

    // Pods in several rows: each pod's uplinks as one trunk to the spine bus, coloured by the
    // busiest of them.
    if (!spines && !m.layout.trunks.empty()) {
        LineBatch trunks;
        for (const auto& trunk : m.layout.trunks) {
            // Aggregated: the summary's trunk carries the summed pods' uplinks, the others hide.
            if (m.podHidden(trunk.pod) && trunk.pod != m.layout.aggregated.summary_pod)
                continue;
            const double u = m.podHidden(trunk.pod) ? m.hidden.up_util
                                                    : m.pod_up_util[static_cast<size_t>(trunk.pod)];
            const QColor color = quantizedLinkColor(m, u, u > 0 ? 1 : 0);
            for (int i = 0; i + 1 < trunk.line.size(); ++i)
                trunks.add(color, QLineF(trunk.line[i], trunk.line[i + 1]));
        }
        LineBatch bus;
        bus.add(m.theme.switch_fill, m.spineRow().bus);
        for (int spine = 0; spine < static_cast<int>(m.spineRow().rects.size()); ++spine)
            bus.add(m.theme.switch_fill, m.spineRow().dropLine(spine));
        bus.draw(p, full ? 3.0 : 2.0, 255);
        trunks.draw(p, full ? 3.0 : 2.0, 255);
    }

    // NIC <-> leaf, one line per rack and leaf, from the leaf to the rack's port for it.
    LineBatch cables;
    for (int rack = 0; !spines && rack < m.layout.racks; ++rack) {
        if (m.rackHidden(rack))
            continue;
        for (const Bundle& b : m.rack_bundles[static_cast<size_t>(rack)]) {
            const QLineF line = m.layout.cableLine(rack, b.port);
            if (!exposed.intersects(
                    QRectF(line.p1(), line.p2()).normalized().adjusted(-2, -2, 2, 2)))
                continue;
            cables.add(quantizedLinkColor(m, b.max_util, b.bytes), line);
        }
    }
    cables.draw(p, full ? 2.2 : 1.4, 230);
    if (!spines)
        paintFabricLabels(p, m, lod, exposed);

    // Switch boxes on top of their links.
    const QFont base = p->font();
    auto drawSwitch = [&](const QRectF& r, const QString& label) {
        if (!exposed.intersects(r))
            return;
        p->setPen(Qt::NoPen);
        p->setBrush(m.theme.switch_fill);
        p->drawRoundedRect(r, std::min(4.0, r.width() / 4), std::min(4.0, r.height() / 4));
        const double px = std::clamp(r.height() * lod * 0.48, 8.0, 12.0);
        // "spine 12" too wide for its box: "12" reads better than "sp…".
        const QString shown =
            textFits(p, lod, r, label, px, false) ? label : label.section(QLatin1Char(' '), -1);
        drawScreenText(p, lod, r, shown, px, Qt::AlignCenter, m.theme.switch_text);
    };
    for (size_t s = 0; spines && s < m.spineRow().rects.size(); ++s)
        drawSwitch(m.spineRow().rects[s], QStringLiteral("spine %1").arg(s));
    const bool rail = m.result->scenario.cluster.fabric_topology == FabricTopology::rail_optimized;
    for (size_t pod = 0; pod < m.layout.pods.size(); ++pod) {
        const PodGeometry& pd = m.layout.pods[pod];
        for (size_t slot = 0;
             !spines && !m.podHidden(static_cast<int>(pod)) && slot < pd.leaves.size(); ++slot) {
            const int leaf = pd.leaves[slot];
            const Vertex& v = g.vertices[static_cast<size_t>(m.leaf_base + leaf)];
            drawSwitch(pd.leaf_rects[slot], rail ? QStringLiteral("rail %1").arg(v.rail)
                                                 : QStringLiteral("leaf %1").arg(leaf));
        }
    }
    p->setFont(base);
}

double distanceToSegment(const QPointF& p, const QLineF& line) {
    const QPointF d = line.p2() - line.p1();
    const double len2 = d.x() * d.x() + d.y() * d.y();
    double t = len2 > 0 ? ((p - line.p1()).x() * d.x() + (p - line.p1()).y() * d.y()) / len2 : 0;
    t = std::clamp(t, 0.0, 1.0);
    const QPointF q = line.p1() + t * d;
    return std::hypot(p.x() - q.x(), p.y() - q.y());
}

QString FabricItem::describeAt(const QPointF& pos, double lod) const {
    const TopologyModel& m = *model_;
    const HardwareGraph& g = *m.graph;
    const double step_s = m.report->step_time_s;
    for (size_t s = 0; s < m.spineRow().rects.size(); ++s)
        if (m.spineRow().rects[s].contains(pos))
            return QStringLiteral("<b>spine %1</b><br>busiest link %2 of the step")
                .arg(s)
                .arg(formatPercent(m.spine_util[s]));
    for (const PodGeometry& pd : m.layout.pods)
        for (size_t slot = 0; slot < pd.leaves.size(); ++slot)
            if (pd.leaf_rects[slot].contains(pos) &&
                !m.podHidden(m.layout.leaf_pod[static_cast<size_t>(pd.leaves[slot])])) {
                const int leaf = pd.leaves[slot];
                const Vertex& v = g.vertices[static_cast<size_t>(m.leaf_base + leaf)];
                const int up = g.leaf_spine_links_count[static_cast<size_t>(leaf)];
                double up_gbps = 0;
                for (int k = 0; k < up; ++k)
                    up_gbps += g.links[static_cast<size_t>(
                                           g.leaf_spine_links_begin[static_cast<size_t>(leaf)] + k)]
                                   .bandwidth_gbps;
                return QStringLiteral(
                           "<b>%1</b><br>%2 uplinks, %3 GB/s in total; busiest uplink %4<br>"
                           "busiest NIC downlink %5")
                    .arg(QString::fromStdString(v.label))
                    .arg(up)
                    .arg(up_gbps, 0, 'f', 0)
                    .arg(formatPercent(m.leaf_up_util[static_cast<size_t>(leaf)]))
                    .arg(formatPercent(m.leaf_down_util[static_cast<size_t>(leaf)]));
            }
    const double tolerance = 4 / lod;
    for (const auto& trunk : m.layout.trunks)
        for (int i = 0; i + 1 < trunk.line.size(); ++i)
            if (distanceToSegment(pos, QLineF(trunk.line[i], trunk.line[i + 1])) <= tolerance) {
                if (m.podHidden(trunk.pod)) {
                    if (trunk.pod == m.layout.aggregated.summary_pod)
                        return aggregateToolTip(m);
                    continue;
                }
                const PodGeometry& pd = m.layout.pods[static_cast<size_t>(trunk.pod)];
                int links = 0;
                for (const int leaf : pd.leaves)
                    links += g.leaf_spine_links_count[static_cast<size_t>(leaf)];
                return QStringLiteral(
                           "<b>pod %1 uplinks</b><br>%2 leaf→spine links from %3 leaves; "
                           "busiest %4 of the step")
                    .arg(trunk.pod)
                    .arg(links)
                    .arg(pd.leaves.size())
                    .arg(formatPercent(m.pod_up_util[static_cast<size_t>(trunk.pod)]));
            }
    for (int rack = 0; rack < m.layout.racks; ++rack) {
        const QRectF& rr = m.layout.rack_rects[static_cast<size_t>(rack)];
        const PodGeometry& pd = m.layout.podOfRack(rack);
        if (m.rackHidden(rack) || pos.y() > rr.top() + tolerance || pos.x() < pd.rect.left() ||
            pos.x() > pd.rect.right())
            continue;
        for (const Bundle& b : m.rack_bundles[static_cast<size_t>(rack)]) {
            if (distanceToSegment(pos, m.layout.cableLine(rack, b.port)) <= tolerance) {
                const Vertex& v = g.vertices[static_cast<size_t>(m.leaf_base + b.leaf)];
                return QStringLiteral(
                           "<b>rack %1 → %2</b><br>%3 NIC cable%4 × %5 GB/s<br>%6 per step; "
                           "busiest cable %7 of the step (%8)")
                    .arg(rack)
                    .arg(QString::fromStdString(v.label))
                    .arg(b.links)
                    .arg(b.links == 1 ? "" : "s")
                    .arg(b.bandwidth_gbps, 0, 'f', 0)
                    .arg(formatBytes(b.bytes))
                    .arg(formatPercent(b.max_util))
                    .arg(formatSeconds(b.max_util * step_s));
            }
        }
    }
    if (m.layout.mesh) {
        for (const PodGeometry& pd : m.layout.pods)
            for (size_t slot = 0; slot < pd.leaves.size(); ++slot) {
                const int leaf = pd.leaves[slot];
                const int begin = g.leaf_spine_links_begin[static_cast<size_t>(leaf)];
                const int count = g.leaf_spine_links_count[static_cast<size_t>(leaf)];
                for (int k = 0; k < count && !m.linkHidden(begin + k); ++k) {
                    const Link& link = g.links[static_cast<size_t>(begin + k)];
                    const QLineF line =
                        m.layout.uplinkLine(pd, static_cast<int>(slot), link.b - m.spine_base);
                    if (distanceToSegment(pos, line) <= tolerance)
                        return QStringLiteral(
                                   "<b>%1 → %2</b><br>%3 GB/s · %4 per step · %5 of the step")
                            .arg(QString::fromStdString(
                                g.vertices[static_cast<size_t>(link.a)].label))
                            .arg(QString::fromStdString(
                                g.vertices[static_cast<size_t>(link.b)].label))
                            .arg(link.bandwidth_gbps, 0, 'f', 0)
                            .arg(formatBytes(m.bytes(begin + k)))
                            .arg(formatPercent(m.util(begin + k)));
                }
            }
    }
    return {};
}

} // namespace detail
} // namespace moe::widgets
