#pragma once
// Where the topology view draws everything, from the cluster's shape alone: pods, racks, node
// slots, GPU tiles, NICs, scale-up switch bars, leaf and spine switches and the lines of the
// links between them, in scene units (one unit is one screen pixel at 100% zoom), plus the
// level-of-detail rule of the zoom. Pure: no scene, widget, theme, metric, hover or drag state,
// so it is unit-tested on its own (tests/test_topology_geometry.cpp), and anything drawn on top
// of the diagram (group outlines, link labels) places itself with the same functions the items
// paint with.

#include <QLineF>
#include <QPointF>
#include <QPolygonF>
#include <QRectF>

#include <vector>

namespace moe {
struct HardwareGraph;
}

namespace moe::widgets::detail {

// A GPU tile is kTile wide; everything else is sized around it so a node reads like a server
// tray.
constexpr double kTile = 40;
constexpr double kGap = 6; ///< between the GPU tiles of a node
constexpr double kNodePad = 8;
constexpr double kNodeTop = 4;
constexpr double kNodeHeader = 16;
constexpr double kNicH = 12;
constexpr double kLinkGap = 12; ///< NIC row to GPU row, GPU row to the scale-up bar
constexpr double kBarH = 12;    ///< a node's scale-up switch bar
constexpr double kNodeBottom = 8;
constexpr double kRackHeader = 26;
constexpr double kRackPad = 8;
constexpr double kNodeGap = 8;
constexpr double kRackBarH = 16; ///< the rack NVSwitch bar of a rack-wide scale-up domain
constexpr double kPodPad = 14;
constexpr double kPodHeader = 30;
constexpr double kSwitchW = 66;
constexpr double kSwitchH = 24;
constexpr double kSwitchGap = 8;
constexpr double kBundleH = 96; ///< leaf row to rack row: room for the NIC cable bundles
constexpr double kRackGapX = 18;
constexpr double kPodGapX = 48;
constexpr double kPodGapY = 48;
constexpr double kSpineLabelH = 30;
constexpr double kMeshH = 150; ///< spine row to the pods when every uplink is drawn
constexpr double kStubH = 64;  ///< spine row to the pods when pods reach the spines by trunks
constexpr double kTrunkLane = 8;
constexpr double kNewRackMinW = 100; ///< the "+ new rack" drop zone, narrower than a rack

/// The area the pod grid is fitted to (a 16:10 slide less its margins).
constexpr double kFitAreaW = 1270;
constexpr double kFitAreaH = 770;

// Levels of detail by the on-screen width of a GPU tile: labels need ~28 px, a coloured cell
// stays legible down to ~4 px; below that racks are drawn whole.
constexpr double kFullTilePx = 28;
constexpr double kCellTilePx = 4;

/// What is drawn at a zoom: whole racks, GPU cells, or everything (labels, NICs, switches and
/// the links inside nodes).
enum class LevelOfDetail { racks, gpus, full };
/// The level of detail at a view scale (screen pixels per scene unit).
LevelOfDetail levelOfDetail(double scale);

/// The shape of the cluster the diagram is laid out for.
struct ClusterShape {
    int gpus_per_node = 1;
    int nodes_per_rack = 1;      ///< a rack's capacity: racks are drawn with this many slots
    std::vector<int> rack_nodes; ///< nodes each rack holds (racks hold consecutive nodes)
    int nics_per_node = 1;
    bool rack_scale_up_domain = false; ///< one scale-up domain per rack: a rack switch bar
    int leaves = 0;                    ///< leaf switches; 0 without a scale-out fabric
    int spines = 0;
    std::vector<int> nic_leaf;  ///< NIC (node * nics_per_node + rail) -> its leaf, -1 none
    bool new_rack_zone = false; ///< a "+ new rack" drop zone after the last rack (editing)
};

/// The shape of a hardware graph (`new_rack_zone` stays false).
ClusterShape clusterShape(const HardwareGraph& graph);

/// Consecutive racks that share leaf switches, drawn in one frame with their leaves above.
struct PodGeometry {
    QRectF rect;
    int first_rack = 0;
    int racks = 0;
    std::vector<int> leaves;        ///< leaf indices, ascending
    std::vector<QRectF> leaf_rects; ///< one per leaf, in the order of `leaves`
};

/// A pod's uplinks drawn as one line, when pods sit in several rows: from the spine bus down
/// the gutter left of the pod into its leaf row.
struct TrunkGeometry {
    QPolygonF line;
    int pod = 0;
};

/// The spine switches spread over a width, their caption above them and the bus under them
/// where the pods' trunks arrive (empty without trunks).
struct SpineRow {
    std::vector<QRectF> rects;
    QRectF label_rect;
    QLineF bus;
    /// From spine `spine` down to the bus.
    QLineF dropLine(int spine) const;
};

/// The aggregated view of a cluster of several pods (a review slide): pod 0 drawn in full, the
/// other pods as one "x N" summary in the place of `summary_pod`, whose trunk then carries their
/// summed uplinks. With pods in rows the summary stands under pod 0 (the first pod of the second
/// row) and the view is pod 0's column, its spines spread over that width; with pods in one row
/// it takes the rest of the row.
struct AggregatedGeometry {
    int summary_pod = -1; ///< -1 with fewer than two pods: nothing to aggregate
    QRectF summary;
    QRectF bounds; ///< what the view shows (the whole diagram with one pod)
    SpineRow spines;
};

struct TopologyLayout {
    ClusterShape shape;
    int gpus = 0, nodes = 0, racks = 0;
    std::vector<int> rack_first_node; ///< one more entry than racks
    std::vector<int> node_rack;

    double node_w = 0, node_h = 0, rack_w = 0, rack_h = 0;
    int node_cols = 1, node_rows = 1; ///< node slots of a rack, column-major (tall racks fold)
    std::vector<QRectF> rack_rects;
    QRectF new_rack_rect; ///< the "+ new rack" drop zone after the last rack, or empty
    QRectF bounds;        ///< the diagram (what exports show)
    QRectF view_bounds;   ///< the diagram and the drop zone (the scene)

    std::vector<PodGeometry> pods;
    std::vector<int> rack_pod;
    std::vector<int> leaf_pod, leaf_slot; ///< per leaf: its pod and slot among the pod's leaves
    double pod_header_h = kPodHeader;     ///< grows so pod captions stay readable when fitted
    double spine_label_h = kSpineLabelH;
    SpineRow spines;
    bool mesh = false; ///< every leaf->spine link drawn (pods in one row), else trunks
    std::vector<TrunkGeometry> trunks;
    AggregatedGeometry aggregated;

    int rackOfNode(int node) const { return node_rack[static_cast<size_t>(node)]; }
    int firstNode(int rack) const { return rack_first_node[static_cast<size_t>(rack)]; }
    /// One past the last node of `rack`.
    int endNode(int rack) const { return rack_first_node[static_cast<size_t>(rack) + 1]; }
    const PodGeometry& podOfRack(int rack) const {
        return pods[static_cast<size_t>(rack_pod[static_cast<size_t>(rack)])];
    }

    /// Slot `slot` of the rack frame `rack` (slots run down the columns).
    QRectF slotRect(const QRectF& rack, int slot) const;
    QRectF nodeRect(int node) const;
    QRectF gpuRect(int gpu) const;
    /// NIC `rail` of `node`: above the GPUs that send through it.
    QRectF nicRect(int node, int rail) const;
    /// The node's scale-up switch bar under its GPUs.
    QRectF barRect(int node) const;
    /// The rack NVSwitch bar at the bottom of a rack of a rack-wide scale-up domain.
    QRectF rackBarRect(int rack) const;
    QRectF podHeaderRect(int pod) const;
    QRectF rackHeaderRect(int rack) const;
    QRectF nodeHeaderRect(int node) const;

    /// GPU to its NIC (PCIe), from the tile's top to the NIC's bottom.
    QLineF gpuNicLine(int gpu, int rail) const;
    /// GPU to its node's scale-up bar.
    QLineF gpuScaleUpLine(int gpu) const;
    /// A node's NVLink ports to the rack NVSwitch: along the node, then (first node of each
    /// column) down the column's gutter to the rack bar.
    QLineF nodePortLine(int node) const;
    bool hasColumnDrop(int node) const;
    QLineF columnDropLine(int node) const;
    /// The cable bundle from the leaf in `port` (slot among the pod's leaves) to its rack.
    QLineF cableLine(int rack, int port) const;
    /// A leaf<->spine link (drawn when `mesh`).
    QLineF uplinkLine(const PodGeometry& pod, int slot, int spine) const;

    /// Hit tests: the rack, node and GPU at `pos` (-1 for none). A GPU is found within half a
    /// gap of its tile, so the cursor never flickers between tiles.
    int rackAt(const QPointF& pos) const;
    int nodeAt(const QPointF& pos) const;
    int gpuAt(const QPointF& pos) const;
    /// The rack a node dropped at `pos` goes to (`racks` = the new-rack zone), or -1; half the
    /// gap between racks counts as the rack, so a drop never falls through a seam.
    int dropRackAt(const QPointF& pos) const;
};

/// Lays the cluster out: node trays of GPU tiles, racks of node slots (folded into columns when
/// that fits a slide better), pods of racks under their leaves in the grid of pods that fits a
/// 16:10 slide best, and the spines above them.
TopologyLayout layoutTopology(const ClusterShape& shape);

} // namespace moe::widgets::detail
