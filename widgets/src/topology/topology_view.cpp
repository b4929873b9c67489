#include "moe_widgets/topology/topology_view.h"

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

// Scene geometry in scene units (one unit is one screen pixel at 100% zoom). A GPU tile is
// kTile wide; everything else is sized around it so a node reads like a server tray.
constexpr double kTile = 40;
constexpr double kGap = 6;
constexpr double kNodePad = 8;
constexpr double kNodeTop = 4;
constexpr double kNodeHeader = 16;
constexpr double kNicH = 12;
constexpr double kLinkGap = 12;
constexpr double kBarH = 12;
constexpr double kNodeBottom = 8;
constexpr double kRackHeader = 26;
constexpr double kRackPad = 8;
constexpr double kNodeGap = 8;
constexpr double kRackBarH = 16;
constexpr double kPodPad = 14;
constexpr double kPodHeader = 30;
constexpr double kSwitchW = 66;
constexpr double kSwitchH = 24;
constexpr double kSwitchGap = 8;
constexpr double kBundleH = 96;
constexpr double kRackGapX = 18;
constexpr double kPodGapX = 48;
constexpr double kPodGapY = 48;
constexpr double kSpineLabelH = 30;
constexpr double kMeshH = 150;
constexpr double kStubH = 64;
constexpr double kTrunkLane = 8;
constexpr double kNewRackMinW = 100; ///< the "+ new rack" drop zone, narrower than a rack

// Levels of detail by the on-screen width of a GPU tile: labels need ~28 px, a coloured cell
// stays legible down to ~4 px; below that racks are drawn whole.
constexpr double kFullTilePx = 28;
constexpr double kCellTilePx = 4;

// Expert load ramp: a GPU's busiest layer at the layer mean (dark) .. twice the mean and
// above (bright). Peaks sit above 1x by construction, so the ramp starts there.
constexpr double kLoadRampLow = 1.0;

/// The parallel groups "all" outlines, outermost ring first.
constexpr std::array<GroupKind, 5> kAllHoverKinds = {GroupKind::dp, GroupKind::pp, GroupKind::ep,
                                                     GroupKind::cp, GroupKind::tp};

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
                    double px, int flags, const QColor& color, bool bold = false) {
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

struct Bundle {
    int leaf = 0;
    int links = 0;
    double max_util = 0;
    double bytes = 0;
    double bandwidth_gbps = 0;
    int port = 0; ///< slot of the leaf among its pod's leaves
};

struct Pod {
    QRectF rect;
    int first_rack = 0;
    int racks = 0;
    std::vector<int> leaves; ///< leaf indices, ascending
    std::vector<QRectF> leaf_rects;
};

struct TopologyModel {
    EvaluationResultPtr result;
    const Report* report = nullptr;
    const HardwareGraph* graph = nullptr;
    const Placement* placement = nullptr;
    ViewTheme theme = viewTheme(false);
    GpuMetric metric = GpuMetric::expert_load;

    // Shape. `npr` is a rack's capacity: racks are drawn with that many slots and may hold fewer
    // nodes (graph->rack_first_node says which).
    int gpus = 0, gpn = 1, npr = 1, nodes = 0, racks = 0, nics_per_node = 1;
    bool rack_domain = false;
    int nic_base = 0, leaf_base = 0, spine_base = 0;
    double node_w = 0, node_h = 0, rack_w = 0, rack_h = 0;
    int node_cols = 1, node_rows = 1; ///< nodes of a rack, column-major (tall racks fold)
    std::vector<QRectF> rack_rects;
    QRectF new_rack_rect; ///< the "+ new rack" drop zone after the last rack
    QRectF view_bounds;   ///< bounds and the drop zone (the scene; exports leave the zone out)
    std::vector<int> rack_pod;
    std::vector<Pod> pods;
    std::vector<int> leaf_pod, leaf_slot;
    std::vector<QRectF> spine_rects;
    QRectF spine_label_rect;
    double pod_header_h = kPodHeader;
    double spine_label_h = kSpineLabelH;
    struct Trunk {
        QPolygonF line; ///< from the spine bus down the gutter into the pod's leaf row
        int pod = 0;
    };
    std::vector<Trunk> trunks;
    QLineF bus; ///< under the spines, where the trunks arrive
    std::vector<double> pod_up_util;
    bool mesh = false; ///< every leaf->spine link drawn (pods in one row)
    QRectF bounds;

    // Link aggregates.
    std::vector<std::vector<Bundle>> rack_bundles;
    std::vector<double> leaf_up_util, leaf_down_util, spine_util;
    std::vector<double> node_scale_up_util, rack_scale_up_util;
    int busiest_link = -1;
    std::vector<double> rack_power_w;     ///< report.economics.power.rack_w
    std::vector<uint8_t> rack_over_power; ///< named by the rack-power-over warning

    // GPU metric.
    std::vector<double> value; ///< colour ramp input (0..1), NaN = not applicable
    std::vector<double> raw;   ///< the metric in its own unit
    std::vector<QColor> fill;
    std::vector<int> rack_hot_gpu;
    std::vector<std::vector<int>> layers_of_stage; ///< MoE layers each stage holds
    std::vector<int> stage_index;                  ///< stage -> index into report->stages
    double mean_tokens = 0;                        ///< token slots per GPU and MoE layer, averaged
    std::vector<int> peak_layer;                   ///< per GPU: its busiest MoE layer (expert load)
    std::vector<double> peak_tokens;               ///< per GPU: token slots in that layer
    int hottest = -1;                              ///< by expert load

    // Interaction.
    int hovered = -1;
    int selected = -1;
    std::vector<uint8_t> hover_mask; ///< bit per GroupKind
    std::vector<uint8_t> highlighted;
    std::vector<uint8_t> rack_highlighted;
    bool any_highlight = false;
    QString highlight_label;
    bool exporting = false;
    bool editable = false; ///< a document to edit: nodes can be dragged between racks
    struct NodeDrag {
        int node = -1;      ///< -1 = no drag
        QPointF pos;        ///< cursor, scene
        QPointF grab;       ///< cursor - the node's top left at the press
        int target = -1;    ///< rack under the cursor (racks = the new-rack zone), -1 none
        bool valid = false; ///< the preview of dropping there applies
        QString preview;    ///< what the drop does, or why it is refused
    } drag;

    double util(int link) const {
        if (!report || link < 0 || link >= static_cast<int>(report->link_utilization.size()))
            return 0;
        const double u = report->link_utilization[static_cast<size_t>(link)];
        return std::isfinite(u) ? u : 1.0;
    }
    double bytes(int link) const {
        if (!report || link < 0 || link >= static_cast<int>(report->link_bytes.size()))
            return 0;
        return report->link_bytes[static_cast<size_t>(link)];
    }
    QColor linkColor(double u, double link_bytes) const {
        return link_bytes > 0 ? widgets::linkColor(u, theme.dark) : theme.idle_link;
    }
    int rackOfNode(int node) const { return graph->node_rack[static_cast<size_t>(node)]; }
    int firstNode(int rack) const { return graph->rack_first_node[static_cast<size_t>(rack)]; }
    /// One past the last node of `rack`.
    int endNode(int rack) const { return graph->rack_first_node[static_cast<size_t>(rack) + 1]; }
    /// Slot `slot` of a rack frame (slots run down the columns).
    QRectF slotRect(const QRectF& rack, int slot) const {
        const int col = slot / node_rows;
        const int row = slot % node_rows;
        return {rack.left() + kRackPad + col * (node_w + kNodeGap),
                rack.top() + kRackHeader + row * (node_h + kNodeGap), node_w, node_h};
    }
    QRectF nodeRect(int node) const {
        const int rack = rackOfNode(node);
        return slotRect(rack_rects[static_cast<size_t>(rack)], node - firstNode(rack));
    }
    bool overPower(int rack) const {
        return rack >= 0 && rack < static_cast<int>(rack_over_power.size()) &&
               rack_over_power[static_cast<size_t>(rack)] != 0;
    }
    /// "rack 1 · 3 of 4 nodes · 26.4 kW"
    QString rackCaption(int rack) const {
        QString text = QStringLiteral("rack %1 · %2 of %3 nodes")
                           .arg(rack)
                           .arg(endNode(rack) - firstNode(rack))
                           .arg(npr);
        if (rack < static_cast<int>(rack_power_w.size()) &&
            rack_power_w[static_cast<size_t>(rack)] > 0)
            text += QStringLiteral(" · %1 kW")
                        .arg(rack_power_w[static_cast<size_t>(rack)] / 1000, 0, 'f', 1);
        return text;
    }
    QRectF gpuRect(int gpu) const {
        const QRectF node = nodeRect(gpu / gpn);
        const int local = gpu % gpn;
        return {node.left() + kNodePad + local * (kTile + kGap),
                node.top() + kNodeTop + kNodeHeader + kNicH + kLinkGap, kTile, kTile};
    }
    /// NIC `rail` of `node`: above the GPUs that send through it.
    QRectF nicRect(int node, int rail) const {
        const QRectF n = nodeRect(node);
        const double y = n.top() + kNodeTop + kNodeHeader;
        const int first = (rail * gpn + nics_per_node - 1) / nics_per_node;
        const int last = ((rail + 1) * gpn + nics_per_node - 1) / nics_per_node - 1;
        double center = 0, width = 0;
        if (first <= last && last < gpn) {
            const double x0 = n.left() + kNodePad + first * (kTile + kGap);
            const double x1 = n.left() + kNodePad + last * (kTile + kGap) + kTile;
            center = (x0 + x1) / 2;
            width = std::min(28.0, (x1 - x0) * 0.7);
        } else {
            const double row = gpn * kTile + (gpn - 1) * kGap;
            const double spacing = row / nics_per_node;
            center = n.left() + kNodePad + (rail + 0.5) * spacing;
            width = std::min(28.0, spacing * 0.7);
        }
        return {center - width / 2, y, width, kNicH};
    }
    QRectF barRect(int node) const {
        const QRectF n = nodeRect(node);
        return {n.left() + kNodePad,
                n.top() + kNodeTop + kNodeHeader + kNicH + 2 * kLinkGap + kTile,
                gpn * kTile + (gpn - 1) * kGap, kBarH};
    }
    QRectF rackBarRect(int rack) const {
        const QRectF& r = rack_rects[static_cast<size_t>(rack)];
        return {r.left() + kRackPad, r.bottom() - kRackPad - kRackBarH, r.width() - 2 * kRackPad,
                kRackBarH};
    }
    int stageOf(int gpu) const {
        return placement && gpu >= 0 && gpu < static_cast<int>(placement->coords.size())
                   ? placement->coords[static_cast<size_t>(gpu)].pp
                   : 0;
    }
    const StageResult* stageResult(int gpu) const {
        const int stage = stageOf(gpu);
        if (!report || stage < 0 || stage >= static_cast<int>(stage_index.size()))
            return nullptr;
        const int index = stage_index[static_cast<size_t>(stage)];
        return index >= 0 ? &report->stages[static_cast<size_t>(index)] : nullptr;
    }
};

TopologyView::Detail detailFor(double lod) {
    const double tile_px = kTile * lod;
    if (tile_px >= kFullTilePx)
        return TopologyView::Detail::full;
    if (tile_px >= kCellTilePx)
        return TopologyView::Detail::gpus;
    return TopologyView::Detail::racks;
}

/// A cosmetic pen: `px` screen pixels wide whatever the zoom.
QPen screenPen(const QColor& color, double px) {
    QPen pen(color, px);
    pen.setCosmetic(true);
    return pen;
}

// --- Items ----------------------------------------------------------------------------------

/// A pod: the racks that share leaf switches, with its frame and caption.
class PodItem : public QGraphicsItem {
public:
    PodItem(const TopologyModel* model, int pod)
        : model_(model)
        , pod_(pod) {
        setZValue(0);
        setCacheMode(QGraphicsItem::DeviceCoordinateCache);
    }
    QRectF boundingRect() const override { return model_->pods[static_cast<size_t>(pod_)].rect; }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override {
        const TopologyModel& m = *model_;
        const Pod& pod = m.pods[static_cast<size_t>(pod_)];
        const double lod =
            QStyleOptionGraphicsItem::levelOfDetailFromTransform(p->worldTransform());
        p->setPen(screenPen(m.theme.pod_border, 1));
        p->setBrush(m.theme.pod_fill);
        p->drawRoundedRect(pod.rect, 10, 10);
        const int last_rack = pod.first_rack + pod.racks - 1;
        const int first_node = m.firstNode(pod.first_rack);
        const int last_node = m.endNode(last_rack) - 1;
        QString caption = pod.racks == 1
                              ? QStringLiteral("rack %1").arg(pod.first_rack)
                              : QStringLiteral("racks %1–%2").arg(pod.first_rack).arg(last_rack);
        caption += QStringLiteral(" · nodes %1–%2").arg(first_node).arg(last_node);
        if (!pod.leaves.empty())
            caption += QStringLiteral(" · %1 leaf switch%2")
                           .arg(pod.leaves.size())
                           .arg(pod.leaves.size() == 1 ? "" : "es");
        const QString title = m.pods.size() > 1 ? QStringLiteral("Pod %1").arg(pod_) : QString();
        const QRectF header(pod.rect.left() + kPodPad, pod.rect.top(),
                            pod.rect.width() - 2 * kPodPad, m.pod_header_h);
        const double px = std::clamp(m.pod_header_h * lod * 0.5, 9.0, 15.0);
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
        return model_->rack_rects[static_cast<size_t>(rack_)].adjusted(-4, -4, 4, 4);
    }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override;

private:
    void paintWholeRack(QPainter* p, double lod) const;
    void paintGroupRings(QPainter* p, int gpu, const QRectF& tile, double lod, bool full) const;
    void paintGpuMarks(QPainter* p, int gpu, const QRectF& tile, double lod, bool full) const;
    const TopologyModel* model_;
    int rack_;
};

void RackItem::paintWholeRack(QPainter* p, double lod) const {
    const TopologyModel& m = *model_;
    const QRectF r = m.rack_rects[static_cast<size_t>(rack_)];
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
    for (int slot = m.endNode(rack_) - m.firstNode(rack_); slot < m.npr; ++slot)
        p->drawRect(
            m.slotRect(r, slot).adjusted(-kNodeGap / 2, -kNodeGap / 2, kNodeGap / 2, kNodeGap / 2));
    const double px = std::clamp(r.width() * lod * 0.22, 7.0, 12.0);
    drawScreenText(p, lod, r, QString::number(rack_), px, Qt::AlignCenter, textOn(fill));
}

void RackItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
    const TopologyModel& m = *model_;
    const double lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(p->worldTransform());
    const TopologyView::Detail detail = detailFor(lod);
    if (detail == TopologyView::Detail::racks) {
        paintWholeRack(p, lod);
        return;
    }
    const bool full = detail == TopologyView::Detail::full;
    const QRectF rr = m.rack_rects[static_cast<size_t>(rack_)];
    const bool over = m.overPower(rack_);
    p->setPen(over ? screenPen(m.theme.danger, 2.5)
                   : screenPen(m.rack_highlighted[static_cast<size_t>(rack_)] && !full
                                   ? m.theme.highlight
                                   : m.theme.rack_border,
                               1));
    p->setBrush(m.theme.rack_fill);
    p->drawRoundedRect(rr, 6, 6);
    const int first_node = m.firstNode(rack_);
    const int last_node = m.endNode(rack_) - 1;
    drawScreenText(p, lod,
                   QRectF(rr.left() + kRackPad, rr.top(), rr.width() - 2 * kRackPad, kRackHeader),
                   (over ? QStringLiteral("⚠ ") : QString()) + m.rackCaption(rack_),
                   std::clamp(kRackHeader * lod * 0.5, 9.0, 14.0), Qt::AlignLeft | Qt::AlignVCenter,
                   over ? m.theme.danger : m.theme.text, true);
    // Free slots, where a node dragged from another rack can go.
    QPen free_pen = screenPen(m.theme.node_border, 1);
    free_pen.setStyle(Qt::DashLine);
    p->setPen(free_pen);
    p->setBrush(Qt::NoBrush);
    for (int slot = last_node + 1 - first_node; slot < m.npr; ++slot) {
        const QRectF free = m.slotRect(rr, slot);
        p->drawRoundedRect(free, 4, 4);
        if (full)
            drawScreenText(p, lod, free, QStringLiteral("free slot"),
                           std::clamp(kNodeHeader * lod * 0.62, 9.0, 12.0), Qt::AlignCenter,
                           m.theme.muted);
    }

    for (int node = first_node; node <= last_node; ++node) {
        const QRectF nr = m.nodeRect(node);
        p->setPen(screenPen(m.theme.node_border, 1));
        p->setBrush(m.theme.node_fill);
        p->drawRoundedRect(nr, 4, 4);
        const int first_gpu = node * m.gpn;
        const QRectF bar = m.barRect(node);
        if (full) {
            drawScreenText(p, lod,
                           QRectF(nr.left() + kNodePad, nr.top() + kNodeTop,
                                  nr.width() - 2 * kNodePad, kNodeHeader),
                           QStringLiteral("node %1").arg(node),
                           std::clamp(kNodeHeader * lod * 0.62, 9.0, 12.0),
                           Qt::AlignLeft | Qt::AlignVCenter, m.theme.muted);
            // GPU <-> NIC (PCIe) and GPU <-> NVSwitch links, coloured by their utilization.
            for (int local = 0; local < m.gpn; ++local) {
                const int gpu = first_gpu + local;
                const QRectF tile = m.gpuRect(gpu);
                const int nic_vertex = m.graph->gpu_nic_vertex[static_cast<size_t>(gpu)];
                const int rail = m.graph->vertices[static_cast<size_t>(nic_vertex)].rail;
                const QRectF nic = m.nicRect(node, rail);
                const int pcie = m.graph->gpu_nic_link[static_cast<size_t>(gpu)];
                p->setPen(QPen(m.linkColor(m.util(pcie), m.bytes(pcie)), 2.5, Qt::SolidLine,
                               Qt::FlatCap));
                p->drawLine(QPointF(tile.center().x(), tile.top()),
                            QPointF(nic.center().x(), nic.bottom()));
                const int up = m.graph->gpu_scale_up_link[static_cast<size_t>(gpu)];
                if (up >= 0) {
                    p->setPen(QPen(m.linkColor(m.util(up), m.bytes(up)), 3.5, Qt::SolidLine,
                                   Qt::FlatCap));
                    p->drawLine(QPointF(tile.center().x(), tile.bottom()),
                                QPointF(tile.center().x(), bar.top()));
                }
            }
        }
        // NICs, filled by the utilization of their fabric link.
        for (int rail = 0; rail < m.nics_per_node; ++rail) {
            const int nic = node * m.nics_per_node + rail;
            const int link = nic < static_cast<int>(m.graph->nic_leaf_link.size())
                                 ? m.graph->nic_leaf_link[static_cast<size_t>(nic)]
                                 : -1;
            const QRectF rect = m.nicRect(node, rail);
            p->setPen(full ? screenPen(m.theme.switch_fill, 1) : Qt::NoPen);
            p->setBrush(link >= 0 ? m.linkColor(m.util(link), m.bytes(link)) : m.theme.idle_link);
            p->drawRect(rect);
        }
        // The scale-up switch of a node domain (or this node's NVLink ports of a rack domain).
        const bool has_switch = m.gpn > 1 || m.rack_domain;
        if (has_switch) {
            const QColor bar_fill =
                full ? m.theme.switch_fill
                     : m.linkColor(m.node_scale_up_util[static_cast<size_t>(node)],
                                   m.node_scale_up_util[static_cast<size_t>(node)] > 0 ? 1 : 0);
            p->setPen(Qt::NoPen);
            p->setBrush(bar_fill);
            p->drawRoundedRect(bar, 2, 2);
            if (full)
                drawScreenText(
                    p, lod, bar,
                    m.rack_domain ? QStringLiteral("NVLink ports → rack NVSwitch")
                    : m.result->scenario.cluster.gpu.scale_up_fabric.empty()
                        ? QStringLiteral("scale-up switch")
                        : QString::fromStdString(m.result->scenario.cluster.gpu.scale_up_fabric) +
                              QStringLiteral(" switch"),
                    std::clamp(kBarH * lod * 0.75, 8.0, 11.0), Qt::AlignCenter,
                    m.theme.switch_text);
        }
        // GPU tiles (axis-aligned cells need no antialiasing when small).
        p->setRenderHint(QPainter::Antialiasing, full);
        for (int local = 0; local < m.gpn; ++local) {
            const int gpu = first_gpu + local;
            const QRectF tile = m.gpuRect(gpu);
            const QColor fill = m.fill[static_cast<size_t>(gpu)];
            if (full) {
                p->setPen(screenPen(fill.darker(140), 1));
                p->setBrush(fill);
                p->drawRoundedRect(tile, 4, 4);
            } else {
                p->fillRect(tile, fill);
            }
            paintGroupRings(p, gpu, tile, lod, full);
            if (full) {
                const double tile_px = kTile * lod;
                const QColor ink = textOn(fill);
                const double index_px = std::clamp(tile_px * 0.27, 9.0, 14.0);
                // Two lines (id and metric value) when the tile is large enough.
                if (tile_px >= 34) {
                    drawScreenText(
                        p, lod,
                        QRectF(tile.left(), tile.top() + 3, tile.width(), tile.height() / 2),
                        QString::number(gpu), index_px, Qt::AlignHCenter | Qt::AlignBottom, ink,
                        true);
                    const auto g = static_cast<size_t>(gpu);
                    if (g < m.raw.size()) {
                        QString text;
                        const double raw = m.raw[g];
                        if (std::isfinite(raw)) {
                            switch (m.metric) {
                            case GpuMetric::expert_load:
                                text = QString::number(raw, 'f', 2) + QStringLiteral("×");
                                break;
                            case GpuMetric::memory_use:
                            case GpuMetric::idle_time:
                            case GpuMetric::traffic:
                                text = formatPercent(m.value[g]);
                                break;
                            }
                        }
                        if (!text.isEmpty())
                            drawScreenText(p, lod,
                                           QRectF(tile.left(), tile.center().y() + 1, tile.width(),
                                                  tile.height() / 2 - 3),
                                           text, std::clamp(kTile * lod * 0.24, 8.0, 12.0),
                                           Qt::AlignHCenter | Qt::AlignTop, textOn(m.fill[g]));
                    }
                } else {
                    drawScreenText(p, lod, tile, QString::number(gpu), index_px, Qt::AlignCenter,
                                   ink, true);
                }
            }
            paintGpuMarks(p, gpu, tile, lod, full);
        }
    }
    if (m.rack_domain) {
        const QRectF bar = m.rackBarRect(rack_);
        const double u = m.rack_scale_up_util[static_cast<size_t>(rack_)];
        // Each node's NVLink ports run down beside its column of nodes to the rack switch.
        p->setPen(QPen(m.linkColor(u, u > 0 ? 1 : 0), 2));
        for (int node = first_node; node <= last_node; ++node) {
            const QRectF nb = m.barRect(node);
            const double x = m.nodeRect(node).right() + kNodeGap / 2;
            p->drawLine(QPointF(nb.right(), nb.center().y()), QPointF(x, nb.center().y()));
            if ((node - first_node) % m.node_rows == 0)
                p->drawLine(QPointF(x, nb.center().y()), QPointF(x, bar.top()));
        }
        p->setPen(Qt::NoPen);
        p->setBrush(m.theme.switch_fill);
        p->drawRoundedRect(bar, 3, 3);
        drawScreenText(
            p, lod, bar, QStringLiteral("rack NVSwitch · %1 GPUs").arg(m.graph->gpus_per_domain),
            std::clamp(kRackBarH * lod * 0.65, 8.0, 12.0), Qt::AlignCenter, m.theme.switch_text);
    }
}

void RackItem::paintGroupRings(QPainter* p, int gpu, const QRectF& tile, double lod,
                               bool full) const {
    const TopologyModel& m = *model_;
    const auto g = static_cast<size_t>(gpu);
    if (m.exporting == false && !m.hover_mask.empty() && m.hover_mask[g]) {
        // One ring per group kind of the hovered GPU that this GPU shares, outermost first.
        int ring = 0;
        for (const GroupKind kind : kAllHoverKinds) {
            const uint8_t bit = static_cast<uint8_t>(1u << static_cast<int>(kind));
            if (!(m.hover_mask[g] & bit))
                continue;
            if (full) {
                const double inset = 1.4 + ring * 3.0;
                const QRectF r = tile.adjusted(inset, inset, -inset, -inset);
                p->setBrush(Qt::NoBrush);
                p->setPen(
                    QPen(m.theme.dark ? QColor(0, 0, 0, 160) : QColor(255, 255, 255, 190), 3.4));
                p->drawRoundedRect(r, 3, 3);
                p->setPen(QPen(groupColor(kind), 2.0));
                p->drawRoundedRect(r, 3, 3);
                ++ring;
            } else {
                p->setBrush(Qt::NoBrush);
                p->setPen(screenPen(groupColor(kind), 2));
                p->drawRect(tile.adjusted(1 / lod, 1 / lod, -1 / lod, -1 / lod));
                break;
            }
        }
        // Expert-group kinds outside "all" (ETP, EDP) when chosen alone.
        for (const GroupKind kind : {GroupKind::etp, GroupKind::edp}) {
            const uint8_t bit = static_cast<uint8_t>(1u << static_cast<int>(kind));
            if (m.hover_mask[g] & bit) {
                p->setBrush(Qt::NoBrush);
                p->setPen(full ? QPen(groupColor(kind), 2.6) : screenPen(groupColor(kind), 2));
                p->drawRoundedRect(tile.adjusted(1.6, 1.6, -1.6, -1.6), 3, 3);
            }
        }
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
        return m.view_bounds.adjusted(-m.node_w, -m.node_h, m.node_w, m.node_h);
    }
    void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override {
        const TopologyModel& m = *model_;
        if (!m.editable || m.exporting || m.new_rack_rect.isEmpty())
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
        const bool on_zone = dragging && d.target == m.racks;
        QPen zone_pen = screenPen(on_zone ? verdict : m.theme.node_border, on_zone ? 2.5 : 1);
        zone_pen.setStyle(Qt::DashLine);
        p->setPen(zone_pen);
        p->setBrush(on_zone ? QBrush(tinted(verdict)) : QBrush(Qt::NoBrush));
        p->drawRoundedRect(m.new_rack_rect, 6, 6);
        drawScreenText(p, lod, m.new_rack_rect, QStringLiteral("+ new rack"),
                       std::clamp(kRackHeader * lod * 0.5, 9.0, 14.0), Qt::AlignCenter,
                       dragging ? m.theme.text : m.theme.muted, dragging);
        if (!dragging)
            return;
        if (d.target >= 0 && d.target < m.racks) {
            const QRectF& r = m.rack_rects[static_cast<size_t>(d.target)];
            p->setPen(screenPen(verdict, 3));
            p->setBrush(tinted(verdict));
            p->drawRoundedRect(r.adjusted(-3, -3, 3, 3), 8, 8);
            const int held = m.endNode(d.target) - m.firstNode(d.target);
            if (d.valid && held < m.npr) {
                // The free slot the rack fills.
                QPen slot_pen = screenPen(verdict, 2);
                slot_pen.setStyle(Qt::DashLine);
                p->setPen(slot_pen);
                p->setBrush(tinted(verdict));
                p->drawRoundedRect(m.slotRect(r, held), 4, 4);
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
        return {m.drag.pos - m.drag.grab, QSizeF(m.node_w, m.node_h)};
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
    QRectF boundingRect() const override { return model_->bounds; }
    void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) override;
    QString describeAt(const QPointF& pos, double lod) const;

private:
    const TopologyModel* model_;
    Layer layer_;
};

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
    const QRectF exposed = option->exposedRect.isEmpty() ? m.bounds : option->exposedRect;
    const bool full = detailFor(lod) == TopologyView::Detail::full;
    const bool spines = layer_ == Layer::spines;

    if (spines && !m.spine_rects.empty()) {
        double max_up = 0;
        for (const double u : m.leaf_up_util)
            max_up = std::max(max_up, u);
        drawScreenText(p, lod, m.spine_label_rect,
                       QStringLiteral("Spine layer · %1 switches · %2 leaf uplinks · busiest %3")
                           .arg(g.spines)
                           .arg(std::accumulate(g.leaf_spine_links_count.begin(),
                                                g.leaf_spine_links_count.end(), 0))
                           .arg(formatPercent(max_up)),
                       std::clamp(m.spine_label_h * lod * 0.45, 10.0, 15.0),
                       Qt::AlignLeft | Qt::AlignVCenter, m.theme.muted);
    }

    // Leaf <-> spine.
    LineBatch uplinks;
    int uplink_count = 0;
    for (size_t pod = 0; spines && pod < m.pods.size(); ++pod) {
        const Pod& pd = m.pods[pod];
        for (size_t slot = 0; slot < pd.leaves.size(); ++slot) {
            const int leaf = pd.leaves[slot];
            const QRectF& lr = pd.leaf_rects[slot];
            const int begin = g.leaf_spine_links_begin[static_cast<size_t>(leaf)];
            const int count = g.leaf_spine_links_count[static_cast<size_t>(leaf)];
            if (m.mesh) {
                for (int k = 0; k < count; ++k) {
                    const int link = begin + k;
                    const int spine = g.links[static_cast<size_t>(link)].b - m.spine_base;
                    const QRectF& sr = m.spine_rects[static_cast<size_t>(spine)];
                    const QLineF line(lr.center().x(), lr.top(), sr.center().x(), sr.bottom());
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
    if (!spines && !m.trunks.empty()) {
        LineBatch trunks;
        for (const auto& trunk : m.trunks) {
            const double u = m.pod_up_util[static_cast<size_t>(trunk.pod)];
            const QColor color = quantizedLinkColor(m, u, u > 0 ? 1 : 0);
            for (int i = 0; i + 1 < trunk.line.size(); ++i)
                trunks.add(color, QLineF(trunk.line[i], trunk.line[i + 1]));
        }
        LineBatch bus;
        bus.add(m.theme.switch_fill, m.bus);
        for (const QRectF& sr : m.spine_rects)
            bus.add(m.theme.switch_fill,
                    QLineF(sr.center().x(), sr.bottom(), sr.center().x(), m.bus.y1()));
        bus.draw(p, full ? 3.0 : 2.0, 255);
        trunks.draw(p, full ? 3.0 : 2.0, 255);
    }

    // NIC <-> leaf, one line per rack and leaf, from the leaf to the rack's port for it.
    LineBatch cables;
    for (int rack = 0; !spines && rack < m.racks; ++rack) {
        const QRectF& rr = m.rack_rects[static_cast<size_t>(rack)];
        const Pod& pd = m.pods[static_cast<size_t>(m.rack_pod[static_cast<size_t>(rack)])];
        const double ports = std::max<size_t>(1, pd.leaves.size());
        for (const Bundle& b : m.rack_bundles[static_cast<size_t>(rack)]) {
            const QRectF& lr = pd.leaf_rects[static_cast<size_t>(b.port)];
            const double x =
                rr.left() + kRackPad + (rr.width() - 2 * kRackPad) * (b.port + 0.5) / ports;
            const QLineF line(lr.center().x(), lr.bottom(), x, rr.top());
            if (!exposed.intersects(
                    QRectF(line.p1(), line.p2()).normalized().adjusted(-2, -2, 2, 2)))
                continue;
            cables.add(quantizedLinkColor(m, b.max_util, b.bytes), line);
        }
    }
    cables.draw(p, full ? 2.2 : 1.4, 230);

    // Switch boxes on top of their links.
    const QFont base = p->font();
    auto drawSwitch = [&](const QRectF& r, const QString& label) {
        if (!exposed.intersects(r))
            return;
        p->setPen(Qt::NoPen);
        p->setBrush(m.theme.switch_fill);
        p->drawRoundedRect(r, std::min(4.0, r.width() / 4), std::min(4.0, r.height() / 4));
        drawScreenText(p, lod, r, label, std::clamp(r.height() * lod * 0.48, 8.0, 12.0),
                       Qt::AlignCenter, m.theme.switch_text);
    };
    for (size_t s = 0; spines && s < m.spine_rects.size(); ++s)
        drawSwitch(m.spine_rects[s], QStringLiteral("spine %1").arg(s));
    const bool rail = m.result->scenario.cluster.fabric_topology == FabricTopology::rail_optimized;
    for (const Pod& pd : m.pods)
        for (size_t slot = 0; !spines && slot < pd.leaves.size(); ++slot) {
            const int leaf = pd.leaves[slot];
            const Vertex& v = g.vertices[static_cast<size_t>(m.leaf_base + leaf)];
            drawSwitch(pd.leaf_rects[slot], rail ? QStringLiteral("rail %1").arg(v.rail)
                                                 : QStringLiteral("leaf %1").arg(leaf));
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
    for (size_t s = 0; s < m.spine_rects.size(); ++s)
        if (m.spine_rects[s].contains(pos))
            return QStringLiteral("<b>spine %1</b><br>busiest link %2 of the step")
                .arg(s)
                .arg(formatPercent(m.spine_util[s]));
    for (const Pod& pd : m.pods)
        for (size_t slot = 0; slot < pd.leaves.size(); ++slot)
            if (pd.leaf_rects[slot].contains(pos)) {
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
    for (const auto& trunk : m.trunks)
        for (int i = 0; i + 1 < trunk.line.size(); ++i)
            if (distanceToSegment(pos, QLineF(trunk.line[i], trunk.line[i + 1])) <= tolerance) {
                const Pod& pd = m.pods[static_cast<size_t>(trunk.pod)];
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
    for (int rack = 0; rack < m.racks; ++rack) {
        const QRectF& rr = m.rack_rects[static_cast<size_t>(rack)];
        const Pod& pd = m.pods[static_cast<size_t>(m.rack_pod[static_cast<size_t>(rack)])];
        if (pos.y() > rr.top() + tolerance || pos.x() < pd.rect.left() || pos.x() > pd.rect.right())
            continue;
        const double ports = std::max<size_t>(1, pd.leaves.size());
        for (const Bundle& b : m.rack_bundles[static_cast<size_t>(rack)]) {
            const QRectF& lr = pd.leaf_rects[static_cast<size_t>(b.port)];
            const double x =
                rr.left() + kRackPad + (rr.width() - 2 * kRackPad) * (b.port + 0.5) / ports;
            if (distanceToSegment(pos, QLineF(lr.center().x(), lr.bottom(), x, rr.top())) <=
                tolerance) {
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
    if (m.mesh) {
        for (const Pod& pd : m.pods)
            for (size_t slot = 0; slot < pd.leaves.size(); ++slot) {
                const int leaf = pd.leaves[slot];
                const QRectF& lr = pd.leaf_rects[slot];
                const int begin = g.leaf_spine_links_begin[static_cast<size_t>(leaf)];
                const int count = g.leaf_spine_links_count[static_cast<size_t>(leaf)];
                for (int k = 0; k < count; ++k) {
                    const Link& link = g.links[static_cast<size_t>(begin + k)];
                    const QRectF& sr = m.spine_rects[static_cast<size_t>(link.b - m.spine_base)];
                    if (distanceToSegment(pos, QLineF(lr.center().x(), lr.top(), sr.center().x(),
                                                      sr.bottom())) <= tolerance)
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

// --- The graphics view ------------------------------------------------------------------------

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

// --- Legend -----------------------------------------------------------------------------------

struct MetricText {
    QString title, subtitle, low, mid, high;
};

MetricText metricText(const TopologyModel& m) {
    switch (m.metric) {
    case GpuMetric::expert_load:
        if (m.report && m.report->load.moe_layers == 0)
            return {QStringLiteral("GPU fill: expert load"),
                    QStringLiteral("the model has no MoE layers: GPUs stay grey"),
                    QStringLiteral("1×"), QStringLiteral("1.5×"), QStringLiteral("≥ 2×")};
        return {QStringLiteral("GPU fill: expert load"),
                QStringLiteral("token slots in the GPU's busiest MoE layer vs that layer's mean"),
                QStringLiteral("1×"), QStringLiteral("1.5×"), QStringLiteral("≥ 2×")};
    case GpuMetric::memory_use: {
        const double hbm = m.result ? m.result->scenario.cluster.gpu.hbm_gb : 0;
        return {QStringLiteral("GPU fill: memory use"),
                QStringLiteral("share of HBM (%1 GB) the stage needs").arg(hbm, 0, 'f', 0),
                QStringLiteral("0%"), QStringLiteral("50%"), QStringLiteral("≥ 100%")};
    }
    case GpuMetric::idle_time:
        return {QStringLiteral("GPU fill: idle time"),
                QStringLiteral("share of the step spent waiting (bubble, slower stages, hot rank)"),
                QStringLiteral("0%"), QStringLiteral("50%"), QStringLiteral("100%")};
    case GpuMetric::traffic:
        return {QStringLiteral("GPU fill: traffic"),
                QStringLiteral("busiest link of the GPU, share of the step"), QStringLiteral("0%"),
                QStringLiteral("50%"), QStringLiteral("≥ 100%")};
    }
    return {};
}

QFont pixelFont(const QFont& base, double px, bool bold = false) {
    QFont f = base;
    f.setPixelSize(static_cast<int>(std::lround(px)));
    f.setBold(bold);
    return f;
}

/// A ramp of the shared utilization colours (as links draw them when `links`) with three tick
/// labels under it; returns its height.
double drawRamp(QPainter& p, const QRectF& area, const ViewTheme& theme, const QString& low,
                const QString& mid, const QString& high, double px, bool links = false) {
    const QRectF bar(area.left(), area.top(), area.width(), 12);
    QLinearGradient gradient(bar.topLeft(), bar.topRight());
    for (int i = 0; i <= 8; ++i)
        gradient.setColorAt(i / 8.0,
                            links ? linkColor(i / 8.0, theme.dark) : utilizationColor(i / 8.0));
    p.setPen(QPen(theme.node_border, 1));
    p.setBrush(gradient);
    p.drawRect(bar);
    p.setFont(pixelFont(p.font(), px));
    p.setPen(theme.muted);
    const QRectF labels(bar.left(), bar.bottom() + 2, bar.width(), px * 1.5);
    p.drawText(labels, Qt::AlignLeft | Qt::AlignTop, low);
    const QFontMetricsF metrics(p.font());
    // The middle label only when it cannot touch the ends.
    if (metrics.horizontalAdvance(mid) +
            2 * std::max(metrics.horizontalAdvance(low), metrics.horizontalAdvance(high)) + 24 <=
        labels.width())
        p.drawText(labels, Qt::AlignHCenter | Qt::AlignTop, mid);
    p.drawText(labels, Qt::AlignRight | Qt::AlignTop, high);
    return bar.height() + 2 + px * 1.5;
}

/// Draws the legend in `area`; `full` adds the symbols, the layout in words and key figures
/// (exports). Returns the height used.
double paintLegend(QPainter& p, const QRectF& area, const TopologyModel& m, bool full,
                   TopologyView::HoverGroups hover_groups) {
    const ViewTheme& t = m.theme;
    const double title_px = full ? 14 : 12;
    const double text_px = full ? 12 : 11;
    double y = area.top();
    auto text = [&](const QString& s, double px, const QColor& color, bool bold = false,
                    bool wrap = false) {
        p.setFont(pixelFont(p.font(), px, bold));
        p.setPen(color);
        const QRectF r(area.left(), y, area.width(), 1000);
        const int flags = Qt::AlignLeft | Qt::AlignTop | (wrap ? Qt::TextWordWrap : 0);
        const QRectF used = p.boundingRect(r, flags, s);
        p.drawText(r, flags, s);
        y += used.height() + 2;
    };
    const MetricText mt = metricText(m);
    text(mt.title, title_px, t.text, true);
    text(mt.subtitle, text_px, t.muted, false, true);
    y += 2;
    y += drawRamp(p, QRectF(area.left(), y, area.width(), 30), t, mt.low, mt.mid, mt.high, text_px);
    y += full ? 12 : 8;
    text(QStringLiteral("Links: utilization"), title_px, t.text, true);
    text(QStringLiteral("bytes ÷ (bandwidth × step time)"), text_px, t.muted, false, true);
    y += 2;
    y += drawRamp(p, QRectF(area.left(), y, area.width(), 30), t, QStringLiteral("0%"),
                  QStringLiteral("50%"), QStringLiteral("≥ 100%"), text_px, true);
    y += 4;
    // No traffic, hottest GPU.
    p.setFont(pixelFont(p.font(), text_px));
    p.setPen(QPen(t.idle_link, 3));
    p.drawLine(QPointF(area.left(), y + text_px * 0.6),
               QPointF(area.left() + 22, y + text_px * 0.6));
    p.setPen(t.muted);
    p.drawText(QRectF(area.left() + 28, y, area.width() - 28, text_px * 1.4),
               Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("no traffic"));
    if (m.metric == GpuMetric::expert_load && m.hottest >= 0) {
        // Beside "no traffic" when there is room, else on the next line.
        const bool beside = area.width() >= 230;
        if (!beside)
            y += text_px * 1.4 + 2;
        const double x = beside ? area.left() + area.width() / 2 : area.left() + 5;
        QPainterPath flag;
        flag.moveTo(x, y + 1);
        flag.lineTo(x + 12, y + 1);
        flag.lineTo(x + 12, y + 13);
        flag.closeSubpath();
        p.setPen(Qt::NoPen);
        p.setBrush(QColor(0xD62728));
        p.drawPath(flag);
        p.setPen(t.muted);
        p.drawText(QRectF(x + 18, y, area.right() - x - 18, text_px * 1.4),
                   Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("hottest GPU"));
    }
    y += text_px * 1.4 + 4;

    if (m.any_highlight) {
        p.setPen(QPen(t.highlight, 3));
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRectF(area.left() + 1, y + 1, 18, text_px));
        p.setPen(t.text);
        p.setFont(pixelFont(p.font(), text_px));
        const QString label =
            m.highlight_label.isEmpty() ? QStringLiteral("highlighted GPUs") : m.highlight_label;
        const QRectF r(area.left() + 28, y, area.width() - 28, 1000);
        const QRectF used = p.boundingRect(r, Qt::AlignLeft | Qt::TextWordWrap, label);
        p.drawText(r, Qt::AlignLeft | Qt::TextWordWrap, label);
        y += std::max(used.height(), text_px * 1.4) + 4;
    }

    if (!full) {
        // Hover group colours, one row.
        std::vector<GroupKind> kinds;
        switch (hover_groups) {
        case TopologyView::HoverGroups::all:
            kinds.assign(kAllHoverKinds.rbegin(), kAllHoverKinds.rend());
            break;
        case TopologyView::HoverGroups::ep:
            kinds = {GroupKind::ep};
            break;
        case TopologyView::HoverGroups::tp:
            kinds = {GroupKind::tp};
            break;
        case TopologyView::HoverGroups::cp:
            kinds = {GroupKind::cp};
            break;
        case TopologyView::HoverGroups::dp:
            kinds = {GroupKind::dp};
            break;
        case TopologyView::HoverGroups::pp:
            kinds = {GroupKind::pp};
            break;
        case TopologyView::HoverGroups::etp:
            kinds = {GroupKind::etp};
            break;
        case TopologyView::HoverGroups::edp:
            kinds = {GroupKind::edp};
            break;
        }
        p.setFont(pixelFont(p.font(), text_px));
        double x = area.left();
        p.setPen(t.muted);
        const QString lead = QStringLiteral("hover:");
        p.drawText(QRectF(x, y, 50, text_px * 1.4), Qt::AlignLeft | Qt::AlignVCenter, lead);
        x += QFontMetricsF(p.font()).horizontalAdvance(lead) + 6;
        for (const GroupKind kind : kinds) {
            const QString name = groupName(kind);
            const double item_w = 20 + QFontMetricsF(p.font()).horizontalAdvance(name);
            if (x + item_w > area.right()) { // wrap
                x = area.left();
                y += text_px * 1.4;
            }
            p.setPen(QPen(groupColor(kind), 2.5));
            p.setBrush(Qt::NoBrush);
            p.drawRoundedRect(QRectF(x + 1, y + 2, 12, text_px - 2), 2, 2);
            p.setPen(t.text);
            p.drawText(QRectF(x + 16, y, 40, text_px * 1.4), Qt::AlignLeft | Qt::AlignVCenter,
                       name);
            x += item_w + 8;
        }
        y += text_px * 1.4;
        return y - area.top();
    }

    // Symbols.
    y += 8;
    text(QStringLiteral("Symbols"), title_px, t.text, true);
    auto symbol = [&](const std::function<void(const QRectF&)>& draw, const QString& label) {
        const QRectF icon(area.left(), y, 26, 16);
        draw(icon);
        p.setFont(pixelFont(p.font(), text_px));
        p.setPen(t.muted);
        p.drawText(QRectF(area.left() + 34, y - 1, area.width() - 34, 18),
                   Qt::AlignLeft | Qt::AlignVCenter, label);
        y += 21;
    };
    symbol(
        [&](const QRectF& r) {
            p.setPen(QPen(utilizationColor(0.5).darker(140), 1));
            p.setBrush(utilizationColor(0.5));
            p.drawRoundedRect(r.adjusted(5, 0, -5, 0), 3, 3);
        },
        QStringLiteral("GPU (number = global GPU id)"));
    symbol(
        [&](const QRectF& r) {
            p.setPen(QPen(t.switch_fill, 1));
            p.setBrush(utilizationColor(0.2));
            p.drawRect(r.adjusted(3, 4, -3, -4));
        },
        QStringLiteral("NIC, filled by its fabric link"));
    symbol(
        [&](const QRectF& r) {
            p.setPen(Qt::NoPen);
            p.setBrush(t.switch_fill);
            p.drawRoundedRect(r.adjusted(0, 4, 0, -4), 2, 2);
        },
        QString::fromStdString(m.result->scenario.cluster.gpu.scale_up_fabric) +
            QStringLiteral(" switch (scale-up domain)"));
    symbol(
        [&](const QRectF& r) {
            p.setPen(Qt::NoPen);
            p.setBrush(t.switch_fill);
            p.drawRoundedRect(r.adjusted(0, 1, 0, -1), 3, 3);
        },
        QStringLiteral("leaf / spine switch"));

    // The layout in words and key figures: what a reviewer asks first.
    const Report& r = *m.report;
    y += 8;
    text(QStringLiteral("Key figures"), title_px, t.text, true);
    QStringList figures;
    figures << QStringLiteral("step time %1 · %2 tokens/s · MFU %3")
                   .arg(formatSeconds(r.step_time_s))
                   .arg(formatCount(r.throughput.tokens_per_s))
                   .arg(formatPercent(r.throughput.mfu));
    if (m.hottest >= 0 && r.load.moe_layers > 0)
        figures << QStringLiteral("hottest GPU %1: %2× the mean in its hottest layer")
                       .arg(m.hottest)
                       .arg(r.load.max_imbalance, 0, 'f', 2);
    if (m.busiest_link >= 0) {
        const Link& link = m.graph->links[static_cast<size_t>(m.busiest_link)];
        figures << QStringLiteral("busiest link %1 → %2 (%3): %4 of the step")
                       .arg(QString::fromStdString(
                           m.graph->vertices[static_cast<size_t>(link.a)].label))
                       .arg(QString::fromStdString(
                           m.graph->vertices[static_cast<size_t>(link.b)].label))
                       .arg(QString::fromLatin1(toString(link.kind)).replace('_', '-'))
                       .arg(formatPercent(m.util(m.busiest_link)));
    }
    for (const QString& f : figures)
        text(QStringLiteral("• ") + f, text_px, t.muted, false, true);
    if (!r.layout_description.empty()) {
        y += 8;
        text(QStringLiteral("Layout"), title_px, t.text, true);
        for (const std::string& line : r.layout_description) {
            if (y > area.bottom() - text_px * 3)
                break;
            text(QStringLiteral("• ") + QString::fromStdString(line), text_px, t.muted, false,
                 true);
        }
    }
    return y - area.top();
}

/// The legend beside the diagram (not over it, so it never hides a rack).
class LegendWidget : public QWidget {
public:
    LegendWidget(const TopologyModel* model, const TopologyView::HoverGroups* hover,
                 QWidget* parent)
        : QWidget(parent)
        , model_(model)
        , hover_(hover) {
        setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    }
    QSize sizeHint() const override { return {260, heightFor(std::max(200, width()))}; }
    int heightFor(int w) const {
        if (!model_->report)
            return 0;
        QImage scratch(1, 1, QImage::Format_ARGB32_Premultiplied);
        QPainter dry(&scratch);
        dry.setFont(font());
        return static_cast<int>(std::ceil(
                   paintLegend(dry, QRectF(10, 10, w - 20, 1000), *model_, false, *hover_))) +
               20;
    }
    void refresh() {
        setFixedHeight(heightFor(std::max(200, width())));
        update();
    }

protected:
    void resizeEvent(QResizeEvent*) override {
        const int h = heightFor(std::max(200, width()));
        if (h != height())
            setFixedHeight(h);
    }
    void paintEvent(QPaintEvent*) override {
        if (!model_->report)
            return;
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        p.fillRect(rect(), model_->theme.background);
        p.setPen(QPen(model_->theme.pod_border, 1));
        p.drawLine(0, 0, width(), 0);
        paintLegend(p, QRectF(10, 10, width() - 20, height() - 20), *model_, false, *hover_);
    }

private:
    const TopologyModel* model_;
    const TopologyView::HoverGroups* hover_;
};

} // namespace detail

using detail::formatBytes;
using detail::formatCount;
using detail::formatGpuList;
using detail::formatPercent;
using detail::formatSeconds;
using detail::TopologyModel;

// --- TopologyView -----------------------------------------------------------------------------

TopologyView::TopologyView(ScenarioDocument* document, ViewState* state, QWidget* parent)
    : QWidget(parent)
    , document_(document)
    , state_(state)
    , model_(std::make_unique<TopologyModel>()) {
    setObjectName(QStringLiteral("TopologyView"));
    scene_ = new QGraphicsScene(this);
    scene_->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
    view_ = new detail::TopologyGraphicsView(this, scene_);

    metric_box_ = new QComboBox(this);
    metric_box_->addItem(tr("Expert load"), static_cast<int>(GpuMetric::expert_load));
    metric_box_->addItem(tr("Memory use"), static_cast<int>(GpuMetric::memory_use));
    metric_box_->addItem(tr("Idle time"), static_cast<int>(GpuMetric::idle_time));
    metric_box_->addItem(tr("Traffic"), static_cast<int>(GpuMetric::traffic));
    metric_box_->setToolTip(tr("What the GPU fill shows"));
    groups_box_ = new QComboBox(this);
    groups_box_->addItem(tr("All groups"), static_cast<int>(HoverGroups::all));
    groups_box_->addItem(tr("EP"), static_cast<int>(HoverGroups::ep));
    groups_box_->addItem(tr("TP"), static_cast<int>(HoverGroups::tp));
    groups_box_->addItem(tr("CP"), static_cast<int>(HoverGroups::cp));
    groups_box_->addItem(tr("DP"), static_cast<int>(HoverGroups::dp));
    groups_box_->addItem(tr("PP"), static_cast<int>(HoverGroups::pp));
    groups_box_->addItem(tr("Expert TP"), static_cast<int>(HoverGroups::etp));
    groups_box_->addItem(tr("Expert DP"), static_cast<int>(HoverGroups::edp));
    groups_box_->setToolTip(tr("Which parallel groups of the GPU under the mouse are outlined"));
    auto* fit = new QToolButton(this);
    fit->setText(tr("Fit"));
    fit->setToolTip(tr("Show the whole cluster"));
    auto* zoom_in = new QToolButton(this);
    zoom_in->setText(QStringLiteral("+"));
    zoom_in->setToolTip(tr("Zoom in (mouse wheel)"));
    auto* zoom_out = new QToolButton(this);
    zoom_out->setText(QStringLiteral("−"));
    zoom_out->setToolTip(tr("Zoom out (mouse wheel)"));
    auto* legend = new QToolButton(this);
    legend->setText(tr("Legend"));
    legend->setCheckable(true);
    legend->setChecked(true);
    status_ = new QLabel(this);
    status_->setTextFormat(Qt::RichText);
    status_->setMinimumWidth(50);
    status_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 4, 6, 2);
    bar->addWidget(new QLabel(tr("Fill"), this));
    bar->addWidget(metric_box_);
    bar->addSpacing(12);
    bar->addWidget(new QLabel(tr("Hover"), this));
    bar->addWidget(groups_box_);
    bar->addSpacing(12);
    bar->addWidget(status_, 1);
    bar->addWidget(zoom_out);
    bar->addWidget(zoom_in);
    bar->addWidget(fit);
    bar->addWidget(legend);

    auto* side = new QWidget(this);
    info_ = new QTextBrowser(side);
    info_->setOpenLinks(false);
    info_->setFrameShape(QFrame::NoFrame);
    // The legend scrolls when the dock is shorter than it, instead of being cut off.
    auto* legend_scroll = new QScrollArea(side);
    legend_scroll->setFrameShape(QFrame::NoFrame);
    legend_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    legend_scroll->setWidgetResizable(true);
    legend_ = new detail::LegendWidget(model_.get(), &hover_groups_, legend_scroll);
    legend_scroll->setWidget(legend_);
    auto* side_layout = new QVBoxLayout(side);
    side_layout->setContentsMargins(0, 0, 0, 0);
    side_layout->setSpacing(0);
    side_layout->addWidget(info_, 2);
    side_layout->addWidget(legend_scroll, 3);
    side->setMinimumWidth(150);
    splitter_ = new QSplitter(Qt::Horizontal, this);
    splitter_->addWidget(view_);
    splitter_->addWidget(side);
    splitter_->setCollapsible(0, false);
    splitter_->setStretchFactor(0, 4);
    splitter_->setStretchFactor(1, 1);
    splitter_->setSizes({900, 280});

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(bar);
    layout->addWidget(splitter_, 1);

    connect(fit, &QToolButton::clicked, this, &TopologyView::fitAll);
    connect(zoom_in, &QToolButton::clicked, this, [this] { view_->zoomBy(1.5); });
    connect(zoom_out, &QToolButton::clicked, this, [this] { view_->zoomBy(1 / 1.5); });
    connect(legend, &QToolButton::toggled, this,
            [legend_scroll](bool on) { legend_scroll->setVisible(on); });
    connect(groups_box_, &QComboBox::activated, this, [this](int index) {
        setHoverGroups(static_cast<HoverGroups>(groups_box_->itemData(index).toInt()));
    });
    connect(metric_box_, &QComboBox::activated, this, [this](int index) {
        const auto metric = static_cast<GpuMetric>(metric_box_->itemData(index).toInt());
        if (state_)
            state_->setGpuMetric(metric);
        else {
            model_->metric = metric;
            updateColors();
        }
    });
    if (state_) {
        model_->metric = state_->gpuMetric();
        model_->selected = state_->selectedGpu();
        connect(state_, &ViewState::gpuMetricChanged, this, [this](GpuMetric metric) {
            model_->metric = metric;
            metric_box_->setCurrentIndex(metric_box_->findData(static_cast<int>(metric)));
            updateColors();
            updateInfoPanel();
        });
        connect(state_, &ViewState::highlightChanged, this, &TopologyView::updateHighlight);
        connect(state_, &ViewState::selectedGpuChanged, this, [this](int gpu) {
            model_->selected = gpu;
            updateInfoPanel();
            repaintItems();
        });
    }
    if (document_)
        connect(document_, &ScenarioDocument::scenarioChanged, this, [this] {
            if (!message_.isEmpty())
                setMessage({}); // a refusal is stale once the scenario changed
        });
    metric_box_->setCurrentIndex(metric_box_->findData(static_cast<int>(model_->metric)));
    applyTheme();
    updateInfoPanel();
}

TopologyView::~TopologyView() {
    // Items point into the model: remove them before it goes.
    scene_->clear();
}

QGraphicsView* TopologyView::graphicsView() const {
    return view_;
}

TopologyView::Detail TopologyView::detailAt(double scale) {
    return detail::detailFor(scale);
}

TopologyView::Detail TopologyView::detail() const {
    return detailAt(view_->scaleFactor());
}

int TopologyView::sceneItemCount() const {
    return static_cast<int>(scene_->items().size());
}

bool TopologyView::event(QEvent* event) {
    if ((event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange) && view_)
        applyTheme();
    return QWidget::event(event);
}

void TopologyView::applyTheme() {
    model_->theme = detail::viewTheme(detail::isDark(palette()));
    view_->setBackgroundBrush(model_->theme.background);
    if (model_->report)
        updateColors();
    repaintItems();
}

namespace {

/// The hardware the scene is laid out for, then "|" and the nodes of each rack (a node moved
/// between racks changes only that part).
QString shapeKey(const Scenario& s, const HardwareGraph& g) {
    QString racks;
    for (int rack = 0; rack < g.rackCount(); ++rack)
        racks += QString::number(g.nodesInRack(rack)) + QLatin1Char(',');
    return QStringLiteral("%1/%2/%3/%4/%5/%6/%7/%8|%9")
        .arg(g.gpuCount())
        .arg(g.gpus_per_node)
        .arg(g.nodes_per_rack)
        .arg(g.gpus_per_domain)
        .arg(g.nics)
        .arg(g.leaves)
        .arg(g.spines)
        .arg(static_cast<int>(s.cluster.fabric_topology))
        .arg(racks);
}

} // namespace

void TopologyView::showResult(const EvaluationResultPtr& result) {
    TopologyModel& m = *model_;
    if (!result || !result->report.graph || !result->report.placement) {
        m = TopologyModel{};
        m.theme = detail::viewTheme(detail::isDark(palette()));
        scene_->clear();
        shape_key_.clear();
        updateInfoPanel();
        return;
    }
    m.result = result;
    m.report = &result->report;
    m.graph = result->report.graph.get();
    m.placement = result->report.placement.get();
    if (state_) {
        m.metric = state_->gpuMetric();
        m.selected = state_->selectedGpu();
    }
    if (m.selected >= m.graph->gpuCount())
        m.selected = -1;
    if (m.hovered >= m.graph->gpuCount())
        m.hovered = -1;
    m.editable = document_ != nullptr;
    const QString key = shapeKey(result->scenario, *m.graph);
    if (key != shape_key_) {
        // A node moved between racks: the user is working where they are zoomed, so the view
        // stays there (unless it was showing the whole cluster, which it keeps doing).
        const bool same_hardware =
            key.section(QLatin1Char('|'), 0, 0) == shape_key_.section(QLatin1Char('|'), 0, 0);
        shape_key_ = key;
        rebuildScene(same_hardware && !view_->fit_mode);
    }
    m.rack_power_w = result->report.economics.power.rack_w;
    m.rack_over_power.assign(static_cast<size_t>(m.racks), 0);
    for (const DesignWarning& w : result->report.warnings)
        if (w.code == WarningCode::rack_power_over)
            for (const int gpu : w.gpus)
                if (gpu >= 0 && gpu < m.gpus)
                    m.rack_over_power[static_cast<size_t>(m.graph->rackOf(gpu))] = 1;

    // Link aggregates (every result: traffic changes with any edit).
    const HardwareGraph& g = *m.graph;
    m.rack_bundles.assign(static_cast<size_t>(m.racks), {});
    for (int nic = 0; nic < g.nics; ++nic) {
        const int link = g.nic_leaf_link[static_cast<size_t>(nic)];
        if (link < 0)
            continue;
        const int rack = m.rackOfNode(nic / m.nics_per_node);
        const int leaf = g.nic_leaf[static_cast<size_t>(nic)];
        auto& bundles = m.rack_bundles[static_cast<size_t>(rack)];
        auto it = std::find_if(bundles.begin(), bundles.end(),
                               [leaf](const detail::Bundle& b) { return b.leaf == leaf; });
        if (it == bundles.end()) {
            detail::Bundle b;
            b.leaf = leaf;
            b.port = m.leaf_slot[static_cast<size_t>(leaf)];
            bundles.push_back(b);
            it = bundles.end() - 1;
        }
        ++it->links;
        it->max_util = std::max(it->max_util, m.util(link));
        it->bytes += m.bytes(link);
        it->bandwidth_gbps = g.links[static_cast<size_t>(link)].bandwidth_gbps;
    }
    m.leaf_up_util.assign(static_cast<size_t>(g.leaves), 0);
    m.leaf_down_util.assign(static_cast<size_t>(g.leaves), 0);
    m.spine_util.assign(static_cast<size_t>(g.spines), 0);
    m.node_scale_up_util.assign(static_cast<size_t>(m.nodes), 0);
    m.rack_scale_up_util.assign(static_cast<size_t>(m.racks), 0);
    m.busiest_link = -1;
    double busiest = 0;
    for (size_t id = 0; id < g.links.size(); ++id) {
        const Link& link = g.links[id];
        const double u = m.util(static_cast<int>(id));
        if (u > busiest) {
            busiest = u;
            m.busiest_link = static_cast<int>(id);
        }
        switch (link.kind) {
        case LinkKind::scale_up: {
            const int node = link.a / m.gpn;
            m.node_scale_up_util[static_cast<size_t>(node)] =
                std::max(m.node_scale_up_util[static_cast<size_t>(node)], u);
            double& rack_util = m.rack_scale_up_util[static_cast<size_t>(m.rackOfNode(node))];
            rack_util = std::max(rack_util, u);
            break;
        }
        case LinkKind::nic_leaf: {
            const auto leaf = static_cast<size_t>(link.b - m.leaf_base);
            m.leaf_down_util[leaf] = std::max(m.leaf_down_util[leaf], u);
            break;
        }
        case LinkKind::leaf_spine: {
            const auto leaf = static_cast<size_t>(link.a - m.leaf_base);
            const auto spine = static_cast<size_t>(link.b - m.spine_base);
            m.leaf_up_util[leaf] = std::max(m.leaf_up_util[leaf], u);
            m.spine_util[spine] = std::max(m.spine_util[spine], u);
            break;
        }
        case LinkKind::gpu_nic:
            break;
        }
    }

    m.pod_up_util.assign(m.pods.size(), 0);
    for (size_t p = 0; p < m.pods.size(); ++p)
        for (const int leaf : m.pods[p].leaves)
            m.pod_up_util[p] =
                std::max(m.pod_up_util[p], m.leaf_up_util[static_cast<size_t>(leaf)]);

    // Stage lookups and the MoE layers each stage holds.
    const int pp = std::max(1, result->scenario.layout.pp);
    m.stage_index.assign(static_cast<size_t>(pp), -1);
    for (size_t i = 0; i < m.report->stages.size(); ++i) {
        const int stage = m.report->stages[i].layers.stage;
        if (stage >= 0 && stage < pp)
            m.stage_index[static_cast<size_t>(stage)] = static_cast<int>(i);
    }
    const ExpertLoad& load = m.report->load;
    m.layers_of_stage.assign(static_cast<size_t>(pp), {});
    for (int layer = 0; layer < load.moe_layers; ++layer) {
        if (layer < static_cast<int>(load.stage_of_layer.size())) {
            const int stage = load.stage_of_layer[static_cast<size_t>(layer)];
            if (stage >= 0 && stage < pp)
                m.layers_of_stage[static_cast<size_t>(stage)].push_back(layer);
        } else {
            for (auto& layers : m.layers_of_stage)
                layers.push_back(layer);
        }
    }
    m.hottest = load.moe_layers > 0 ? load.hottestGpu(*m.placement) : -1;

    updateColors();
    updateHoverMask();
    updateHighlight();
    updateInfoPanel();
    repaintItems();
}

void TopologyView::rebuildScene(bool keep_view) {
    TopologyModel& m = *model_;
    const HardwareGraph& g = *m.graph;
    const QPointF view_center = view_->mapToScene(view_->viewport()->rect().center());
    scene_->clear();
    drag_item_ = nullptr;
    m.drag = {};
    m.gpus = g.gpuCount();
    m.gpn = std::max(1, g.gpus_per_node);
    m.npr = std::max(1, g.nodes_per_rack);
    m.nodes = m.gpus / m.gpn;
    m.racks = g.rackCount();
    m.nics_per_node = m.nodes > 0 ? std::max(1, g.nics / m.nodes) : 1;
    m.rack_domain = g.gpus_per_domain > m.gpn;
    m.nic_base = m.gpus + g.scale_up_switches;
    m.leaf_base = m.nic_base + g.nics;
    m.spine_base = m.leaf_base + g.leaves;
    m.node_w = 2 * detail::kNodePad + m.gpn * detail::kTile + (m.gpn - 1) * detail::kGap;
    m.node_h = detail::kNodeTop + detail::kNodeHeader + detail::kNicH + 2 * detail::kLinkGap +
               detail::kTile + detail::kBarH + detail::kNodeBottom;
    auto setRackShape = [&m](int node_cols) {
        m.node_cols = node_cols;
        m.node_rows = (m.npr + node_cols - 1) / node_cols;
        m.rack_w = node_cols * m.node_w + (node_cols - 1) * detail::kNodeGap + 2 * detail::kRackPad;
        m.rack_h = detail::kRackHeader + m.node_rows * m.node_h +
                   (m.node_rows - 1) * detail::kNodeGap + detail::kRackPad +
                   (m.rack_domain ? detail::kRackBarH + detail::kNodeGap : 0);
    };

    // Pods: consecutive racks that share a leaf switch (a leaf group is a run of nodes).
    std::vector<std::set<int>> rack_leaves(static_cast<size_t>(m.racks));
    for (int nic = 0; nic < g.nics; ++nic) {
        const int leaf = g.nic_leaf[static_cast<size_t>(nic)];
        if (leaf >= 0)
            rack_leaves[static_cast<size_t>(m.rackOfNode(nic / m.nics_per_node))].insert(leaf);
    }
    m.pods.clear();
    m.rack_pod.assign(static_cast<size_t>(m.racks), 0);
    std::set<int> pod_leaves;
    for (int rack = 0; rack < m.racks; ++rack) {
        const auto& leaves = rack_leaves[static_cast<size_t>(rack)];
        const bool shares = std::any_of(leaves.begin(), leaves.end(),
                                        [&](int leaf) { return pod_leaves.count(leaf) > 0; });
        if (m.pods.empty() || !shares) {
            if (!m.pods.empty())
                m.pods.back().leaves.assign(pod_leaves.begin(), pod_leaves.end());
            pod_leaves.clear();
            detail::Pod pod;
            pod.first_rack = rack;
            m.pods.push_back(pod);
        }
        ++m.pods.back().racks;
        pod_leaves.insert(leaves.begin(), leaves.end());
        m.rack_pod[static_cast<size_t>(rack)] = static_cast<int>(m.pods.size()) - 1;
    }
    if (!m.pods.empty())
        m.pods.back().leaves.assign(pod_leaves.begin(), pod_leaves.end());
    m.leaf_pod.assign(static_cast<size_t>(g.leaves), 0);
    m.leaf_slot.assign(static_cast<size_t>(g.leaves), 0);
    for (size_t p = 0; p < m.pods.size(); ++p)
        for (size_t slot = 0; slot < m.pods[p].leaves.size(); ++slot) {
            m.leaf_pod[static_cast<size_t>(m.pods[p].leaves[slot])] = static_cast<int>(p);
            m.leaf_slot[static_cast<size_t>(m.pods[p].leaves[slot])] = static_cast<int>(slot);
        }

    // Pod sizes (all alike but the last) and the grid of pods that fills a 16:10 area best.
    size_t max_leaves = 0;
    int max_racks = 0;
    for (const auto& pod : m.pods) {
        max_leaves = std::max(max_leaves, pod.leaves.size());
        max_racks = std::max(max_racks, pod.racks);
    }
    const bool fabric = g.leaves > 0;
    const bool spines = g.spines > 0;
    const int pod_count = static_cast<int>(m.pods.size());
    const double leaves_w = static_cast<double>(max_leaves) * detail::kSwitchW +
                            (static_cast<double>(max_leaves) - 1) * detail::kSwitchGap;
    auto innerWidth = [&] {
        return std::max(max_racks * m.rack_w + (max_racks - 1) * detail::kRackGapX, leaves_w);
    };
    // Pods in several rows reach the spines through trunks in the gutters left of each pod,
    // one lane per row.
    auto gapFor = [&](int rows) {
        return rows > 1 && spines ? std::max(detail::kPodGapX, 24 + rows * detail::kTrunkLane)
                                  : detail::kPodGapX;
    };
    auto podHeight = [&](double header) {
        return header + (fabric ? detail::kSwitchH + detail::kBundleH : 0) + m.rack_h +
               detail::kPodPad;
    };
    auto topHeight = [&](double spine_label, int rows) {
        return spines
                   ? spine_label + detail::kSwitchH + (rows == 1 ? detail::kMeshH : detail::kStubH)
                   : 0;
    };
    // The grid of pods that fits a 1270 x 770 slide area best, and its scale.
    auto bestGrid = [&](int& best_cols) {
        const double pod_w = innerWidth() + 2 * detail::kPodPad;
        double best = 0;
        for (int c = 1; c <= pod_count; ++c) {
            const int rows = (pod_count + c - 1) / c;
            const double w =
                c * pod_w + (c - 1) * gapFor(rows) + (rows > 1 && spines ? gapFor(rows) : 0);
            const double h = topHeight(m.spine_label_h, rows) + rows * podHeight(m.pod_header_h) +
                             (rows - 1) * detail::kPodGapY;
            const double scale = std::min(1270 / w, 770 / h);
            if (scale > best * 1.02) {
                best = scale;
                best_cols = c;
            }
        }
        return best;
    };
    int cols = 1;
    m.pod_header_h = detail::kPodHeader;
    m.spine_label_h = detail::kSpineLabelH;
    // Tall racks (many nodes) fold their nodes into columns when that fits the slide better.
    int node_cols = 1;
    double best_scale = 0;
    for (const int c : {1, 2, 4}) {
        if (c > 1 && c > m.npr / 4)
            break;
        setRackShape(c);
        int grid = 1;
        const double scale = bestGrid(grid);
        if (scale > best_scale * 1.1) {
            best_scale = scale;
            node_cols = c;
        }
    }
    setRackShape(node_cols);
    // Twice: captions are sized so they stay readable at the scale the first pass fits.
    for (int pass = 0; pass < 2; ++pass) {
        const double fit_scale = bestGrid(cols);
        m.pod_header_h = std::max(detail::kPodHeader, 13 / fit_scale);
        m.spine_label_h = std::max(detail::kSpineLabelH, 15 / fit_scale);
    }
    const double inner_w = innerWidth();
    const double pod_w = inner_w + 2 * detail::kPodPad;
    const int rows = (pod_count + cols - 1) / cols;
    m.mesh = spines && rows == 1;
    const double gap_x = gapFor(rows);
    const double left = m.mesh || !spines ? 0 : gap_x; // room for the first column's trunks
    const double pod_h = podHeight(m.pod_header_h);
    const double total_w = left + cols * pod_w + (cols - 1) * gap_x;
    const double top = topHeight(m.spine_label_h, rows);
    m.rack_rects.assign(static_cast<size_t>(m.racks), QRectF());
    m.trunks.clear();
    const double bus_y = m.spine_label_h + detail::kSwitchH + 14;
    for (int p = 0; p < pod_count; ++p) {
        detail::Pod& pod = m.pods[static_cast<size_t>(p)];
        const int row = p / cols;
        const int col = p % cols;
        pod.rect = QRectF(left + col * (pod_w + gap_x), top + row * (pod_h + detail::kPodGapY),
                          pod_w, pod_h);
        const double inner_left = pod.rect.left() + detail::kPodPad;
        const double leaf_y = pod.rect.top() + m.pod_header_h;
        // Leaves spread over the pod, each above the racks it mostly serves.
        const double slot_w =
            pod.leaves.empty() ? 0 : inner_w / static_cast<double>(pod.leaves.size());
        const double leaf_w = std::min(detail::kSwitchW, slot_w - detail::kSwitchGap);
        pod.leaf_rects.clear();
        for (size_t slot = 0; slot < pod.leaves.size(); ++slot)
            pod.leaf_rects.emplace_back(inner_left + (static_cast<double>(slot) + 0.5) * slot_w -
                                            leaf_w / 2,
                                        leaf_y, leaf_w, detail::kSwitchH);
        const double rack_y = leaf_y + (fabric ? detail::kSwitchH + detail::kBundleH : 0);
        const double rw = pod.racks * m.rack_w + (pod.racks - 1) * detail::kRackGapX;
        for (int k = 0; k < pod.racks; ++k)
            m.rack_rects[static_cast<size_t>(pod.first_rack + k)] =
                QRectF(inner_left + (inner_w - rw) / 2 + k * (m.rack_w + detail::kRackGapX), rack_y,
                       m.rack_w, m.rack_h);
        if (spines && !m.mesh && !pod.leaf_rects.empty()) {
            const double x = pod.rect.left() - 12 - row * detail::kTrunkLane;
            const double y = pod.leaf_rects.front().center().y();
            QPolygonF trunk;
            trunk << QPointF(x, bus_y) << QPointF(x, y)
                  << QPointF(pod.leaf_rects.front().left(), y);
            m.trunks.push_back({trunk, p});
        }
    }
    m.spine_rects.clear();
    if (spines) {
        const double spacing = (total_w - left) / g.spines;
        const double w = std::min(detail::kSwitchW, spacing - 6);
        const double width = w >= 10 ? w : std::max(1.0, spacing * 0.8);
        for (int s = 0; s < g.spines; ++s)
            m.spine_rects.emplace_back(left + (s + 0.5) * spacing - width / 2, m.spine_label_h,
                                       width, detail::kSwitchH);
        m.spine_label_rect = QRectF(left, 0, total_w - left, m.spine_label_h - 4);
        m.bus = m.trunks.empty() ? QLineF()
                                 : QLineF(m.trunks.back().line.front().x(), bus_y, total_w, bus_y);
        for (const auto& trunk : m.trunks)
            m.bus.setP1(QPointF(std::min(m.bus.x1(), trunk.line.front().x()), bus_y));
    }
    const double bottom = top + rows * pod_h + (rows - 1) * detail::kPodGapY;
    m.bounds = QRectF(-16, -12, total_w + 32, bottom + 28);
    m.new_rack_rect = QRectF();
    m.view_bounds = m.bounds;
    if (m.editable && m.racks > 0) {
        const QRectF& last = m.rack_rects.back();
        m.new_rack_rect =
            QRectF(last.right() + detail::kRackGapX, last.top(),
                   std::clamp(m.node_w * 0.4, detail::kNewRackMinW, m.rack_w), last.height());
        m.view_bounds = m.bounds.united(m.new_rack_rect.adjusted(-16, -12, 16, 28));
    }

    for (int p = 0; p < pod_count; ++p)
        scene_->addItem(new detail::PodItem(model_.get(), p));
    scene_->addItem(new detail::FabricItem(model_.get(), detail::FabricItem::Layer::spines));
    scene_->addItem(new detail::FabricItem(model_.get(), detail::FabricItem::Layer::leaves));
    for (int rack = 0; rack < m.racks; ++rack)
        scene_->addItem(new detail::RackItem(model_.get(), rack));
    if (m.editable) {
        drag_item_ = new detail::NodeDragItem(model_.get());
        scene_->addItem(drag_item_);
    }
    scene_->setSceneRect(m.view_bounds);
    if (keep_view) {
        view_->centerOn(view_center);
        return;
    }
    view_->fit_mode = true;
    fitAll();
}

void TopologyView::updateColors() {
    TopologyModel& m = *model_;
    if (!m.report)
        return;
    const int gpus = m.gpus;
    m.value.assign(static_cast<size_t>(gpus), std::numeric_limits<double>::quiet_NaN());
    m.raw.assign(static_cast<size_t>(gpus), std::numeric_limits<double>::quiet_NaN());
    const Report& r = *m.report;
    const ExpertLoad& load = r.load;
    switch (m.metric) {
    case GpuMetric::expert_load: {
        // Each GPU's busiest MoE layer against that layer's mean GPU: the straggler factor
        // the GPU imposes on its EP group at its worst. (Averaged over layers, loads even out
        // and the diagram would hide the hot spots the heatmap shows.)
        const int layers = load.moe_layers;
        std::vector<double> layer_sum(static_cast<size_t>(layers), 0.0);
        std::vector<int> layer_count(static_cast<size_t>(layers), 0);
        std::vector<double> tokens(
            static_cast<size_t>(gpus) * static_cast<size_t>(std::max(1, layers)), 0.0);
        double sum = 0;
        int cells = 0;
        for (int gpu = 0; gpu < gpus; ++gpu) {
            const int stage = m.stageOf(gpu);
            if (stage < 0 || stage >= static_cast<int>(m.layers_of_stage.size()))
                continue;
            for (const int layer : m.layers_of_stage[static_cast<size_t>(stage)]) {
                const double t = load.gpuTokens(*m.placement, gpu, layer);
                tokens[static_cast<size_t>(gpu) * static_cast<size_t>(layers) +
                       static_cast<size_t>(layer)] = t;
                layer_sum[static_cast<size_t>(layer)] += t;
                ++layer_count[static_cast<size_t>(layer)];
                sum += t;
                ++cells;
            }
        }
        m.mean_tokens = cells > 0 ? sum / cells : 0;
        m.peak_layer.assign(static_cast<size_t>(gpus), -1);
        m.peak_tokens.assign(static_cast<size_t>(gpus), 0.0);
        for (int gpu = 0; gpu < gpus; ++gpu) {
            const int stage = m.stageOf(gpu);
            if (stage < 0 || stage >= static_cast<int>(m.layers_of_stage.size()))
                continue;
            double peak = -1;
            for (const int layer : m.layers_of_stage[static_cast<size_t>(stage)]) {
                const auto l = static_cast<size_t>(layer);
                const double mean = layer_count[l] > 0 ? layer_sum[l] / layer_count[l] : 0;
                const double t = tokens[static_cast<size_t>(gpu) * static_cast<size_t>(layers) + l];
                const double ratio = mean > 0 ? t / mean : 0;
                if (ratio > peak) {
                    peak = ratio;
                    m.peak_layer[static_cast<size_t>(gpu)] = layer;
                    m.peak_tokens[static_cast<size_t>(gpu)] = t;
                }
            }
            if (peak >= 0) {
                m.raw[static_cast<size_t>(gpu)] = peak;
                m.value[static_cast<size_t>(gpu)] = peak - detail::kLoadRampLow;
            }
        }
        break;
    }
    case GpuMetric::memory_use:
        for (int gpu = 0; gpu < gpus; ++gpu)
            if (const StageResult* stage = m.stageResult(gpu);
                stage && stage->memory.hbm_bytes > 0) {
                m.raw[static_cast<size_t>(gpu)] = stage->memory.total_bytes;
                m.value[static_cast<size_t>(gpu)] =
                    stage->memory.total_bytes / stage->memory.hbm_bytes;
            }
        break;
    case GpuMetric::idle_time: {
        // The report's own times, summed: the bubble, waiting for the slowest stage's
        // micro-batches, and waiting for the hot EP rank inside this stage.
        double slowest = 0;
        for (const StageResult& stage : r.stages)
            slowest = std::max(slowest, stage.per_micro_batch.total_s);
        for (int gpu = 0; gpu < gpus; ++gpu)
            if (const StageResult* stage = m.stageResult(gpu); stage && r.step_time_s > 0) {
                const double idle =
                    r.step[StepItem::bubble] +
                    r.micro_batches * (slowest - stage->per_micro_batch.total_s) +
                    r.micro_batches * stage->per_micro_batch[StepItem::imbalance_wait];
                m.raw[static_cast<size_t>(gpu)] = idle;
                m.value[static_cast<size_t>(gpu)] = idle / r.step_time_s;
            }
        break;
    }
    case GpuMetric::traffic:
        for (int gpu = 0; gpu < gpus; ++gpu) {
            const auto g = static_cast<size_t>(gpu);
            double u =
                std::max(m.util(m.graph->gpu_scale_up_link[g]), m.util(m.graph->gpu_nic_link[g]));
            const int nic =
                m.graph->vertices[static_cast<size_t>(m.graph->gpu_nic_vertex[g])].index;
            if (nic < static_cast<int>(m.graph->nic_leaf_link.size()))
                u = std::max(u, m.util(m.graph->nic_leaf_link[static_cast<size_t>(nic)]));
            m.raw[g] = u;
            m.value[g] = u;
        }
        break;
    }
    m.fill.resize(static_cast<size_t>(gpus));
    for (int gpu = 0; gpu < gpus; ++gpu) {
        const double v = m.value[static_cast<size_t>(gpu)];
        m.fill[static_cast<size_t>(gpu)] = std::isfinite(v) ? utilizationColor(v) : m.theme.no_data;
    }
    m.rack_hot_gpu.assign(static_cast<size_t>(m.racks), -1);
    for (int gpu = 0; gpu < gpus; ++gpu) {
        const double v = m.value[static_cast<size_t>(gpu)];
        if (!std::isfinite(v))
            continue;
        int& hot = m.rack_hot_gpu[static_cast<size_t>(m.graph->rackOf(gpu))];
        if (hot < 0 || v > m.value[static_cast<size_t>(hot)])
            hot = gpu;
    }
    repaintItems();
}

void TopologyView::updateHoverMask() {
    TopologyModel& m = *model_;
    m.hover_mask.assign(static_cast<size_t>(m.gpus), 0);
    if (!m.placement || m.hovered < 0 || m.hovered >= m.gpus)
        return;
    std::vector<GroupKind> kinds;
    switch (hover_groups_) {
    case HoverGroups::all:
        kinds.assign(detail::kAllHoverKinds.begin(), detail::kAllHoverKinds.end());
        break;
    case HoverGroups::ep:
        kinds = {GroupKind::ep};
        break;
    case HoverGroups::tp:
        kinds = {GroupKind::tp};
        break;
    case HoverGroups::cp:
        kinds = {GroupKind::cp};
        break;
    case HoverGroups::dp:
        kinds = {GroupKind::dp};
        break;
    case HoverGroups::pp:
        kinds = {GroupKind::pp};
        break;
    case HoverGroups::etp:
        kinds = {GroupKind::etp};
        break;
    case HoverGroups::edp:
        kinds = {GroupKind::edp};
        break;
    }
    for (const GroupKind kind : kinds) {
        const ParallelGroup& group = m.placement->groupOf(kind, m.hovered);
        if (group.gpus.size() <= 1)
            continue;
        const auto bit = static_cast<uint8_t>(1u << static_cast<int>(kind));
        for (const int gpu : group.gpus)
            if (gpu >= 0 && gpu < m.gpus)
                m.hover_mask[static_cast<size_t>(gpu)] |= bit;
    }
}

void TopologyView::updateHighlight() {
    TopologyModel& m = *model_;
    m.highlighted.assign(static_cast<size_t>(m.gpus), 0);
    m.rack_highlighted.assign(static_cast<size_t>(m.racks), 0);
    m.any_highlight = false;
    m.highlight_label.clear();
    if (state_) {
        for (const int gpu : state_->highlightedGpus())
            if (gpu >= 0 && gpu < m.gpus) {
                m.highlighted[static_cast<size_t>(gpu)] = 1;
                m.rack_highlighted[static_cast<size_t>(m.graph->rackOf(gpu))] = 1;
                m.any_highlight = true;
            }
        m.highlight_label = state_->highlightLabel();
    }
    repaintItems();
    legend_->refresh();
}

void TopologyView::setHoveredGpu(int gpu) {
    TopologyModel& m = *model_;
    if (gpu >= m.gpus)
        gpu = -1;
    if (gpu == m.hovered)
        return;
    m.hovered = gpu;
    updateHoverMask();
    repaintItems();
    updateInfoPanel();
    emit hoveredGpuChanged(gpu);
}

void TopologyView::setHoverGroups(HoverGroups groups) {
    hover_groups_ = groups;
    groups_box_->setCurrentIndex(groups_box_->findData(static_cast<int>(groups)));
    updateHoverMask();
    repaintItems();
    legend_->refresh();
}

int TopologyView::hoveredGpu() const {
    return model_->hovered;
}

QVector<int> TopologyView::hoverGroupMembers(GroupKind kind) const {
    QVector<int> members;
    const auto bit = static_cast<uint8_t>(1u << static_cast<int>(kind));
    for (size_t gpu = 0; gpu < model_->hover_mask.size(); ++gpu)
        if (model_->hover_mask[gpu] & bit)
            members.push_back(static_cast<int>(gpu));
    return members;
}

QColor TopologyView::gpuFill(int gpu) const {
    return gpu >= 0 && gpu < static_cast<int>(model_->fill.size())
               ? model_->fill[static_cast<size_t>(gpu)]
               : QColor();
}

double TopologyView::gpuMetricValue(int gpu) const {
    return gpu >= 0 && gpu < static_cast<int>(model_->value.size())
               ? model_->value[static_cast<size_t>(gpu)]
               : std::numeric_limits<double>::quiet_NaN();
}

QRectF TopologyView::gpuSceneRect(int gpu) const {
    if (!model_->report || gpu < 0 || gpu >= model_->gpus)
        return {};
    return model_->gpuRect(gpu);
}

int TopologyView::gpuAtScenePos(const QPointF& pos) const {
    const TopologyModel& m = *model_;
    if (!m.report)
        return -1;
    for (int rack = 0; rack < m.racks; ++rack) {
        const QRectF& rr = m.rack_rects[static_cast<size_t>(rack)];
        if (!rr.contains(pos))
            continue;
        int node = -1;
        for (int n = m.firstNode(rack); n < m.endNode(rack); ++n)
            if (m.nodeRect(n).contains(pos))
                node = n;
        if (node < 0)
            return -1;
        const QRectF nr = m.nodeRect(node);
        const int local = static_cast<int>(
            std::floor((pos.x() - nr.left() - detail::kNodePad + detail::kGap / 2) /
                       (detail::kTile + detail::kGap)));
        if (local < 0 || local >= m.gpn)
            return -1;
        const int gpu = node * m.gpn + local;
        // Forgiving by half a gap, so the cursor never flickers between tiles.
        return m.gpuRect(gpu)
                       .adjusted(-detail::kGap / 2, -detail::kGap / 2, detail::kGap / 2,
                                 detail::kGap / 2)
                       .contains(pos)
                   ? gpu
                   : -1;
    }
    return -1;
}

void TopologyView::repaintItems() {
    // QGraphicsScene::update() would leave the items' cached pixmaps as they were.
    for (QGraphicsItem* item : scene_->items())
        item->update();
}

void TopologyView::fitAll() {
    if (model_->view_bounds.isEmpty())
        return;
    view_->resetTransform();
    view_->fitInView(model_->view_bounds, Qt::KeepAspectRatio);
    view_->fit_mode = true;
    updateInfoPanel();
}

void TopologyView::zoomToGpu(int gpu, double tile_px) {
    const QRectF tile = gpuSceneRect(gpu);
    if (tile.isEmpty())
        return;
    view_->resetTransform();
    const double s = tile_px / detail::kTile;
    view_->scale(s, s);
    view_->centerOn(tile.center());
    view_->fit_mode = false;
    updateInfoPanel();
}

void TopologyView::onClick(const QPointF& scene_pos) {
    const int gpu = detail() == Detail::racks ? -1 : gpuAtScenePos(scene_pos);
    if (detail() == Detail::racks) {
        // A click on a rack zooms in to it.
        for (int rack = 0; rack < model_->racks; ++rack)
            if (model_->rack_rects[static_cast<size_t>(rack)].contains(scene_pos)) {
                zoomToGpu(model_->firstNode(rack) * model_->gpn, 20);
                view_->centerOn(model_->rack_rects[static_cast<size_t>(rack)].center());
                return;
            }
        return;
    }
    if (state_)
        state_->setSelectedGpu(gpu);
    else {
        model_->selected = gpu;
        updateInfoPanel();
        repaintItems();
    }
}

// --- Moving nodes between racks ---------------------------------------------------------------

QRectF TopologyView::nodeSceneRect(int node) const {
    if (!model_->report || node < 0 || node >= model_->nodes)
        return {};
    return model_->nodeRect(node);
}

QRectF TopologyView::rackSceneRect(int rack) const {
    if (!model_->report || rack < 0 || rack >= model_->racks)
        return {};
    return model_->rack_rects[static_cast<size_t>(rack)];
}

QRectF TopologyView::newRackSceneRect() const {
    return model_->report ? model_->new_rack_rect : QRectF();
}

int TopologyView::nodeAtScenePos(const QPointF& pos) const {
    const TopologyModel& m = *model_;
    if (!m.report)
        return -1;
    for (int rack = 0; rack < m.racks; ++rack) {
        if (!m.rack_rects[static_cast<size_t>(rack)].contains(pos))
            continue;
        for (int node = m.firstNode(rack); node < m.endNode(rack); ++node)
            if (m.nodeRect(node).contains(pos))
                return node;
        return -1;
    }
    return -1;
}

int TopologyView::dropRackAt(const QPointF& pos) const {
    const TopologyModel& m = *model_;
    if (!m.report)
        return -1;
    // Half the gap between racks counts as the rack, so a drop never falls through a seam.
    const double margin = detail::kRackGapX / 2;
    for (int rack = 0; rack < m.racks; ++rack)
        if (m.rack_rects[static_cast<size_t>(rack)]
                .adjusted(-margin, -margin, margin, margin)
                .contains(pos))
            return rack;
    if (m.new_rack_rect.adjusted(-margin, -margin, margin, margin).contains(pos))
        return m.racks;
    return -1;
}

bool TopologyView::canDragNodes() const {
    return document_ && model_->report && model_->racks > 0;
}

namespace {

QString rackNodesAssignment(const std::vector<int>& racks) {
    return QStringLiteral("cluster.rack_nodes=") +
           QString::fromStdString(formatFieldValue(FieldValue(racks)));
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
    if (!canDragNodes() || node < 0 || node >= m.nodes)
        return {};
    const int from = m.rackOfNode(node);
    const ClusterSpec& cluster = document_->scenario().cluster;
    const std::optional<std::vector<int>> value = rackNodesAfterMove(cluster, from, to_rack);
    if (!value)
        return {};
    const FieldEditResult preview = document_->previewFields({rackNodesAssignment(*value)});
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
    QString text = moveTitle(node, from, to_rack, m.racks);
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
    if (!canDragNodes() || node < 0 || node >= m.nodes || to_rack < 0 || to_rack > m.racks)
        return false;
    const int from = m.rackOfNode(node);
    const ClusterSpec& cluster = document_->scenario().cluster;
    const std::optional<std::vector<int>> value = rackNodesAfterMove(cluster, from, to_rack);
    const FieldEditResult preview =
        value ? document_->previewFields({rackNodesAssignment(*value)}) : FieldEditResult{};
    if (value && preview.ok() && preview.scenario->cluster.nodesInRacks() == cluster.nodesInRacks())
        setMessage(tr("Not applied: node %1 is already alone in the last rack").arg(node));
    else if (!value)
        setMessage(tr("Not applied: node %1 is in rack %2 already").arg(node).arg(from));
    else {
        const QString text = moveTitle(node, from, to_rack, m.racks);
        // Racks hold consecutive nodes: the node that changes racks is the one at the boundary
        // (numbered as now), so a selection in the moved node follows it there and Alt+Right
        // again moves it on.
        const int moved = to_rack > from ? m.firstNode(to_rack) - 1 : m.endNode(to_rack);
        const Diagnostics errors = document_->setFields(text, {rackNodesAssignment(*value)});
        if (!hasErrors(errors)) {
            if (m.selected >= 0 && m.selected / m.gpn == node) {
                const int gpu = moved * m.gpn + m.selected % m.gpn;
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
    if (m.selected < 0 || m.selected >= m.gpus) {
        setMessage(tr("Not applied: click a GPU first; Alt+Left, Alt+Right and Alt+N move its "
                      "node between racks"));
        return false;
    }
    const int node = m.selected / m.gpn;
    const int from = m.rackOfNode(node);
    const int to = step == 0 ? m.racks : from + step;
    if (step != 0 && (to < 0 || to >= m.racks)) {
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
        if (rack >= 0 && rack < m.racks)
            dirty |= m.rack_rects[static_cast<size_t>(rack)].adjusted(-8, -8, 8, 8);
        else if (rack == m.racks)
            dirty |= m.new_rack_rect.adjusted(-8, -8, 8, 8);
    };
    if (ghost && m.drag.node >= 0)
        dirty |= ghost->ghostRect().adjusted(-4, -4, 4, 4);
    const int old_target = m.drag.target;
    if (node < 0 || node >= m.nodes) {
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
    if (node >= 0 && target >= 0 && target != m.rackOfNode(node))
        moveNode(node, target);
}

void TopologyView::setMessage(const QString& message) {
    if (message == message_)
        return;
    message_ = message;
    updateStatus();
}

// --- Text: tooltips and the info panel -------------------------------------------------------

QString TopologyView::toolTipAt(const QPointF& pos) const {
    const TopologyModel& m = *model_;
    if (!m.report)
        return {};
    const double lod = view_->scaleFactor();
    const Detail d = detailAt(lod);
    const int gpu = d == Detail::racks ? -1 : gpuAtScenePos(pos);
    if (gpu >= 0) {
        const auto g = static_cast<size_t>(gpu);
        const RankCoords& rc = m.placement->coords[g];
        QString text = QStringLiteral("<b>GPU %1</b> · rack %2 · node %3 · local %4<br>")
                           .arg(gpu)
                           .arg(m.graph->rackOf(gpu))
                           .arg(m.graph->nodeOf(gpu))
                           .arg(gpu % m.gpn);
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
        for (int rack = 0; rack < m.racks; ++rack) {
            if (!m.rack_rects[static_cast<size_t>(rack)].contains(pos))
                continue;
            for (int node = m.firstNode(rack); node < m.endNode(rack); ++node) {
                for (int rail = 0; rail < m.nics_per_node; ++rail)
                    if (m.nicRect(node, rail).adjusted(-2, -2, 2, 2).contains(pos)) {
                        const int nic = node * m.nics_per_node + rail;
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
                if (m.barRect(node).contains(pos))
                    return QStringLiteral(
                               "<b>%1 switch</b> of %2<br>busiest GPU link %3 of the step")
                        .arg(QString::fromStdString(m.result->scenario.cluster.gpu.scale_up_fabric))
                        .arg(m.rack_domain
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
    for (int rack = 0; rack < m.racks; ++rack)
        if (m.rack_rects[static_cast<size_t>(rack)].contains(pos)) {
            const int hot = m.rack_hot_gpu[static_cast<size_t>(rack)];
            QString text = QStringLiteral("<b>%1</b> · nodes %2–%3<br>")
                               .arg(m.rackCaption(rack))
                               .arg(m.firstNode(rack))
                               .arg(m.endNode(rack) - 1);
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
    if (!m.report || gpu < 0 || gpu >= m.gpus)
        return {};
    const auto g = static_cast<size_t>(gpu);
    const Report& r = *m.report;
    const Scenario& s = m.result->scenario;
    const RankCoords& rc = m.placement->coords[g];
    QString html;
    html += QStringLiteral("<h3 style='margin:0'>GPU %1</h3>").arg(gpu);
    html +=
        QStringLiteral("<p style='margin-top:2px'>%1 · rack %2 · node %3 · GPU %4 of the node<br>"
                       "pipeline stage %5</p>")
            .arg(QString::fromStdString(s.cluster.gpu.name).toHtmlEscaped())
            .arg(m.graph->rackOf(gpu))
            .arg(m.graph->nodeOf(gpu))
            .arg(gpu % m.gpn)
            .arg(rc.pp);

    // Parallel groups.
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

    // Experts.
    const ExpertLoad& load = r.load;
    if (s.model.isMoe() && rc.ep >= 0) {
        html +=
            QStringLiteral("<p><b>Experts</b> (EP rank %1 of %2)<br>").arg(rc.ep).arg(s.layout.ep);
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

        // Load over the MoE layers this GPU's stage holds.
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
                html +=
                    QStringLiteral("<p><b>Expert load</b> (routing step %1)<br>"
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
    }

    // Memory of its stage.
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

    // Traffic on its own links.
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
                           .arg(m.gpus)
                           .arg(QString::fromStdString(s.cluster.gpu.name).toHtmlEscaped())
                           .arg(m.nodes)
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
               QStringLiteral("Cluster topology — %1").arg(QString::fromStdString(s.name)));
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
                   .arg(m.gpus)
                   .arg(QString::fromStdString(s.cluster.gpu.name))
                   .arg(m.nodes)
                   .arg(m.gpn)
                   .arg(m.racks)
                   .arg(QString::fromStdString(s.cluster.gpu.scale_up_fabric))
                   .arg(m.rack_domain ? QStringLiteral("rack") : QStringLiteral("node"))
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
    const QRectF bounds = m.bounds;
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
    const QString error =
        detail::exportPage(path, QSizeF(1600, 900),
                           QStringLiteral("Cluster topology — %1")
                               .arg(QString::fromStdString(m.result->scenario.name)),
                           [this](QPainter& p, const QRectF& page) { paintExportPage(p, page); });
    m.exporting = false;
    m.theme = screen;
    updateColors();
    return error;
}

} // namespace moe::widgets
