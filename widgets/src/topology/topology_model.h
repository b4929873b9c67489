#pragma once
// The topology view's scene model: the geometry of pods, racks, nodes, GPUs, NICs and switches
// (scene units), the link and GPU metrics drawn on it, the theme, and the hover, selection and
// drag state the items read when they paint. Shared by the items, the legend and the view.

#include "common/view_export.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/topology/topology_view.h"

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

QColor groupColor(GroupKind kind);
QString groupName(GroupKind kind);
/// Text drawn at a constant screen size inside a scene rectangle, elided to fit.
void drawScreenText(QPainter* p, double lod, const QRectF& scene_rect, const QString& text,
                    double px, int flags, const QColor& color, bool bold = false);

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

TopologyView::Detail detailFor(double lod);
/// A cosmetic pen: `px` screen pixels wide whatever the zoom.
QPen screenPen(const QColor& color, double px);

} // namespace detail

// The view's files use these unqualified.
using detail::formatBytes;
using detail::formatCount;
using detail::formatGpuList;
using detail::formatPercent;
using detail::formatSeconds;
using detail::TopologyModel;

} // namespace moe::widgets
