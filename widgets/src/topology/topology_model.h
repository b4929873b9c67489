#pragma once
// The topology view's scene model: the result drawn, its layout (topology_geometry.h: where
// everything is, from the cluster's shape alone), the link and GPU metrics drawn on it, the
// theme, and the hover, selection and drag state the items read when they paint. Shared by the
// items, the legend and the view.

#include "common/view_export.h"
#include "moe/group_overlay.h"
#include "moe/link_load.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/topology/topology_view.h"
#include "topology/topology_geometry.h"

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

/// The parallel groups "all" outlines, outermost ring first.
constexpr std::array<GroupKind, 5> kAllHoverKinds = {GroupKind::dp, GroupKind::pp, GroupKind::ep,
                                                     GroupKind::cp, GroupKind::tp};

/// The group kinds a hover choice outlines ("all": kAllHoverKinds, outermost ring first).
std::vector<GroupKind> hoverKinds(TopologyView::HoverGroups groups);
QColor groupColor(GroupKind kind);
QString groupName(GroupKind kind);
/// The overlay chooser's names: "TP", "EP", "Expert DP", "DP", "PP stage" / "DualPipe rank", "CP".
QString overlayName(GroupOverlay overlay, bool dualpipe);
struct TopologyModel;
/// " · EP groups" / " · DualPipe ranks" for the overlay shown, then " · pod 0 of 8 in full" when
/// aggregated; empty for neither.
QString viewTitleSuffix(const TopologyModel& m);
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
    std::vector<int> link_ids;
    LinkLoad load; ///< core: the bundle's bytes, GB/s and share of its summed bandwidth
};

/// A drawn link's label: "4.2 GB · 1.6 GB/s · 21%" (bytes per step, mean rate, share of the
/// bandwidth), from the core's LinkLoad.
QString loadLabel(const LinkLoad& load);

struct TopologyModel {
    EvaluationResultPtr result;
    const Report* report = nullptr;
    const HardwareGraph* graph = nullptr;
    const Placement* placement = nullptr;
    ViewTheme theme = viewTheme(false);
    GpuMetric metric = GpuMetric::expert_load;

    /// Where everything is drawn; rebuilt only when the cluster's shape changes.
    TopologyLayout layout;
    int nic_base = 0, leaf_base = 0, spine_base = 0; ///< graph vertex ids of the first of each

    // Link aggregates.
    std::vector<double> pod_up_util; ///< busiest leaf uplink of each pod
    std::vector<std::vector<Bundle>> rack_bundles;
    std::vector<double> leaf_up_util, leaf_down_util, spine_util;
    std::vector<double> node_scale_up_util, rack_scale_up_util;
    int busiest_link = -1;                    ///< core: busiestLink
    std::vector<LinkLoad> leaf_up_load;       ///< each leaf's spine uplinks as one bundle
    std::vector<LinkLoad> pod_up_load;        ///< each pod's leaf uplinks as one trunk
    std::vector<LinkLoad> node_scale_up_load; ///< each node's GPU <-> NVSwitch links
    std::vector<TierLoad> tiers;              ///< core: tierLoads
    int busiest_tier = -1;                    ///< index into tiers, core: busiestTier
    /// "busiest: node0/nic0 → leaf1 · 1.6 GB/s · 21%", "busiest tier: InfiniBand leaf · 12%";
    /// empty when nothing carries traffic.
    QString busiestLinkCallout() const;
    QString busiestTierCallout() const;
    std::vector<double> rack_power_w;     ///< rackPowerW(scenario.cluster)
    std::vector<uint8_t> rack_over_power; ///< named by the rack-power-over warning

    // Aggregated view (a review slide of a large cluster): pod 0 drawn in full, the pods after
    // it as one "x N" summary with their summed traffic (layout.aggregated).
    bool aggregated = false; ///< on only while the layout has two pods or more
    struct HiddenPods {
        int pods = 0, racks = 0, nodes = 0, gpus = 0, leaves = 0;
        int first_rack = 0, first_node = 0;
        bool alike = false;          ///< each has pod 0's racks, nodes per rack and leaves
        std::vector<TierLoad> tiers; ///< core: tierLoadsOfRacks over their racks
        double up_util = 0;          ///< the busiest of their leaf uplinks (colours the trunk)
    } hidden;                        ///< the pods the summary stands for (whether shown or not)
    bool podHidden(int pod) const { return aggregated && pod >= 1; }
    bool rackHidden(int rack) const {
        return aggregated && rack >= 0 && rack < static_cast<int>(layout.rack_pod.size()) &&
               layout.rack_pod[static_cast<size_t>(rack)] >= 1;
    }
    /// Whether a link is drawn in a hidden pod (its GPU's or NIC's rack, or its leaf's pod).
    bool linkHidden(int link) const;
    /// What exports show and fitting fits: the diagram, or its aggregated part.
    QRectF shownBounds() const { return aggregated ? layout.aggregated.bounds : layout.bounds; }
    QRectF shownViewBounds() const {
        return aggregated ? layout.aggregated.bounds : layout.view_bounds;
    }
    /// The spines as drawn: over the whole diagram, or over the aggregated view's width.
    const SpineRow& spineRow() const {
        return aggregated ? layout.aggregated.spines : layout.spines;
    }

    // GPU metric.
    std::vector<double> value; ///< colour ramp input (0..1), NaN = not applicable
    std::vector<double> raw;   ///< the metric in its own unit
    std::vector<QColor> fill;
    std::vector<int> rack_hot_gpu;
    std::vector<std::vector<int>> layers_of_stage; ///< MoE layers each stage holds
    std::vector<int> stage_index;                  ///< stage -> index into report->stages
    double load_scale_high = kLoadScaleMinHigh;    ///< expert load: the shared scale's hot end
    double mean_tokens = 0;                        ///< token slots per GPU and MoE layer, averaged
    std::vector<int> peak_layer;                   ///< per GPU: its busiest MoE layer (expert load)
    std::vector<double> peak_tokens;               ///< per GPU: token slots in that layer
    int hottest = -1;                              ///< by expert load

    // Group overlay: GPUs coloured by their group of one dimension instead of the metric.
    bool overlay_on = false;
    GroupOverlay overlay = GroupOverlay::ep;
    OverlayGroups overlay_groups;                  ///< the core's groups and spans
    std::vector<OverlayLegendLine> overlay_legend; ///< the core's legend lines
    /// The group of `gpu` in the overlay shown, -1 for none.
    int overlayGroup(int gpu) const {
        return overlay_on && gpu >= 0 && gpu < static_cast<int>(overlay_groups.group_of_gpu.size())
                   ? overlay_groups.group_of_gpu[static_cast<size_t>(gpu)]
                   : -1;
    }

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
        if (!report || link < 0 || link >= static_cast<int>(report->linkUtilization().size()))
            return 0;
        const double u = report->linkUtilization()[static_cast<size_t>(link)];
        return std::isfinite(u) ? u : 1.0;
    }
    double bytes(int link) const {
        if (!report || link < 0 || link >= static_cast<int>(report->linkBytes().size()))
            return 0;
        return report->linkBytes()[static_cast<size_t>(link)];
    }
    QColor linkColor(double u, double link_bytes) const {
        return link_bytes > 0 ? widgets::linkColor(u, theme.dark) : theme.idle_link;
    }
    bool overPower(int rack) const {
        return rack >= 0 && rack < static_cast<int>(rack_over_power.size()) &&
               rack_over_power[static_cast<size_t>(rack)] != 0;
    }
    /// "rack 1 · 3 of 4 nodes · 26.4 kW"
    QString rackCaption(int rack) const {
        QString text = QStringLiteral("rack %1 · %2 of %3 nodes")
                           .arg(rack)
                           .arg(layout.endNode(rack) - layout.firstNode(rack))
                           .arg(layout.shape.nodes_per_rack);
        if (rack < static_cast<int>(rack_power_w.size()) &&
            rack_power_w[static_cast<size_t>(rack)] > 0)
            text += QStringLiteral(" · %1 kW")
                        .arg(rack_power_w[static_cast<size_t>(rack)] / 1000, 0, 'f', 1);
        return text;
    }
    int stageOf(int gpu) const {
        return placement && gpu >= 0 && gpu < placement->gpuCount() ? placement->coordsOf(gpu).pp
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

/// Whether `text` at `px` screen pixels fits whole in a scene rectangle at the zoom `lod`.
bool textFits(const QPainter* p, double lod, const QRectF& scene_rect, const QString& text,
              double px, bool bold);
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
