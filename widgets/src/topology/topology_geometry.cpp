#include "topology/topology_geometry.h"

#include "moe/topology.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace moe::widgets::detail {

LevelOfDetail levelOfDetail(double scale) {
    const double tile_px = kTile * scale;
    if (tile_px >= kFullTilePx)
        return LevelOfDetail::full;
    if (tile_px >= kCellTilePx)
        return LevelOfDetail::gpus;
    return LevelOfDetail::racks;
}

ClusterShape clusterShape(const HardwareGraph& graph) {
    ClusterShape shape;
    shape.gpus_per_node = std::max(1, graph.gpus_per_node);
    shape.nodes_per_rack = std::max(1, graph.nodes_per_rack);
    for (int rack = 0; rack < graph.rackCount(); ++rack)
        shape.rack_nodes.push_back(graph.nodesInRack(rack));
    const int nodes = graph.gpuCount() / shape.gpus_per_node;
    shape.nics_per_node = nodes > 0 ? std::max(1, graph.nics / nodes) : 1;
    shape.rack_scale_up_domain = graph.gpus_per_domain > shape.gpus_per_node;
    shape.leaves = graph.leaves;
    shape.spines = graph.spines;
    shape.nic_leaf.assign(graph.nic_leaf.begin(), graph.nic_leaf.begin() + graph.nics);
    return shape;
}

// --- Shapes inside a rack ---------------------------------------------------------------------

QRectF TopologyLayout::slotRect(const QRectF& rack, int slot) const {
    const int col = slot / node_rows;
    const int row = slot % node_rows;
    return {rack.left() + kRackPad + col * (node_w + kNodeGap),
            rack.top() + kRackHeader + row * (node_h + kNodeGap), node_w, node_h};
}

QRectF TopologyLayout::nodeRect(int node) const {
    const int rack = rackOfNode(node);
    return slotRect(rack_rects[static_cast<size_t>(rack)], node - firstNode(rack));
}

QRectF TopologyLayout::gpuRect(int gpu) const {
    const int gpn = shape.gpus_per_node;
    const QRectF node = nodeRect(gpu / gpn);
    const int local = gpu % gpn;
    return {node.left() + kNodePad + local * (kTile + kGap),
            node.top() + kNodeTop + kNodeHeader + kNicH + kLinkGap, kTile, kTile};
}

QRectF TopologyLayout::nicRect(int node, int rail) const {
    const int gpn = shape.gpus_per_node;
    const int nics = shape.nics_per_node;
    const QRectF n = nodeRect(node);
    const double y = n.top() + kNodeTop + kNodeHeader;
    // The GPUs that send through this rail, when rails split the node's GPUs.
    const int first = (rail * gpn + nics - 1) / nics;
    const int last = ((rail + 1) * gpn + nics - 1) / nics - 1;
    double center = 0, width = 0;
    if (first <= last && last < gpn) {
        const double x0 = n.left() + kNodePad + first * (kTile + kGap);
        const double x1 = n.left() + kNodePad + last * (kTile + kGap) + kTile;
        center = (x0 + x1) / 2;
        width = std::min(28.0, (x1 - x0) * 0.7);
    } else {
        const double row = gpn * kTile + (gpn - 1) * kGap;
        const double spacing = row / nics;
        center = n.left() + kNodePad + (rail + 0.5) * spacing;
        width = std::min(28.0, spacing * 0.7);
    }
    return {center - width / 2, y, width, kNicH};
}

QRectF TopologyLayout::barRect(int node) const {
    const int gpn = shape.gpus_per_node;
    const QRectF n = nodeRect(node);
    return {n.left() + kNodePad, n.top() + kNodeTop + kNodeHeader + kNicH + 2 * kLinkGap + kTile,
            gpn * kTile + (gpn - 1) * kGap, kBarH};
}

QRectF TopologyLayout::rackBarRect(int rack) const {
    const QRectF& r = rack_rects[static_cast<size_t>(rack)];
    return {r.left() + kRackPad, r.bottom() - kRackPad - kRackBarH, r.width() - 2 * kRackPad,
            kRackBarH};
}

QRectF TopologyLayout::podHeaderRect(int pod) const {
    const QRectF& r = pods[static_cast<size_t>(pod)].rect;
    return {r.left() + kPodPad, r.top(), r.width() - 2 * kPodPad, pod_header_h};
}

QRectF TopologyLayout::rackHeaderRect(int rack) const {
    const QRectF& r = rack_rects[static_cast<size_t>(rack)];
    return {r.left() + kRackPad, r.top(), r.width() - 2 * kRackPad, kRackHeader};
}

QRectF TopologyLayout::nodeHeaderRect(int node) const {
    const QRectF n = nodeRect(node);
    return {n.left() + kNodePad, n.top() + kNodeTop, n.width() - 2 * kNodePad, kNodeHeader};
}

// --- Link lines -------------------------------------------------------------------------------

QLineF TopologyLayout::gpuNicLine(int gpu, int rail) const {
    const QRectF tile = gpuRect(gpu);
    const QRectF nic = nicRect(gpu / shape.gpus_per_node, rail);
    return {QPointF(tile.center().x(), tile.top()), QPointF(nic.center().x(), nic.bottom())};
}

QLineF TopologyLayout::gpuScaleUpLine(int gpu) const {
    const QRectF tile = gpuRect(gpu);
    const QRectF bar = barRect(gpu / shape.gpus_per_node);
    return {QPointF(tile.center().x(), tile.bottom()), QPointF(tile.center().x(), bar.top())};
}

QLineF TopologyLayout::nodePortLine(int node) const {
    const QRectF bar = barRect(node);
    const double x = nodeRect(node).right() + kNodeGap / 2;
    return {QPointF(bar.right(), bar.center().y()), QPointF(x, bar.center().y())};
}

bool TopologyLayout::hasColumnDrop(int node) const {
    return (node - firstNode(rackOfNode(node))) % node_rows == 0;
}

QLineF TopologyLayout::columnDropLine(int node) const {
    const QRectF bar = barRect(node);
    const double x = nodeRect(node).right() + kNodeGap / 2;
    return {QPointF(x, bar.center().y()), QPointF(x, rackBarRect(rackOfNode(node)).top())};
}

QLineF TopologyLayout::cableLine(int rack, int port) const {
    const QRectF& rr = rack_rects[static_cast<size_t>(rack)];
    const PodGeometry& pod = podOfRack(rack);
    const double ports = std::max<size_t>(1, pod.leaves.size());
    const QRectF& lr = pod.leaf_rects[static_cast<size_t>(port)];
    const double x = rr.left() + kRackPad + (rr.width() - 2 * kRackPad) * (port + 0.5) / ports;
    return {lr.center().x(), lr.bottom(), x, rr.top()};
}

QLineF TopologyLayout::uplinkLine(const PodGeometry& pod, int slot, int spine) const {
    const QRectF& lr = pod.leaf_rects[static_cast<size_t>(slot)];
    const QRectF& sr = spines.rects[static_cast<size_t>(spine)];
    return {lr.center().x(), lr.top(), sr.center().x(), sr.bottom()};
}

QLineF SpineRow::dropLine(int spine) const {
    const QRectF& sr = rects[static_cast<size_t>(spine)];
    return {sr.center().x(), sr.bottom(), sr.center().x(), bus.y1()};
}

// --- Hit tests --------------------------------------------------------------------------------

int TopologyLayout::rackAt(const QPointF& pos) const {
    for (int rack = 0; rack < racks; ++rack)
        if (rack_rects[static_cast<size_t>(rack)].contains(pos))
            return rack;
    return -1;
}

int TopologyLayout::nodeAt(const QPointF& pos) const {
    const int rack = rackAt(pos);
    if (rack < 0)
        return -1;
    for (int node = firstNode(rack); node < endNode(rack); ++node)
        if (nodeRect(node).contains(pos))
            return node;
    return -1;
}

int TopologyLayout::gpuAt(const QPointF& pos) const {
    const int node = nodeAt(pos);
    if (node < 0)
        return -1;
    const QRectF nr = nodeRect(node);
    const int local =
        static_cast<int>(std::floor((pos.x() - nr.left() - kNodePad + kGap / 2) / (kTile + kGap)));
    if (local < 0 || local >= shape.gpus_per_node)
        return -1;
    const int gpu = node * shape.gpus_per_node + local;
    return gpuRect(gpu).adjusted(-kGap / 2, -kGap / 2, kGap / 2, kGap / 2).contains(pos) ? gpu : -1;
}

int TopologyLayout::dropRackAt(const QPointF& pos) const {
    const double margin = kRackGapX / 2;
    for (int rack = 0; rack < racks; ++rack)
        if (rack_rects[static_cast<size_t>(rack)]
                .adjusted(-margin, -margin, margin, margin)
                .contains(pos))
            return rack;
    if (new_rack_rect.adjusted(-margin, -margin, margin, margin).contains(pos))
        return racks;
    return -1;
}

// --- Layout -----------------------------------------------------------------------------------

namespace {

/// Racks: where each starts and which rack holds each node.
void countRacks(TopologyLayout& l) {
    const ClusterShape& s = l.shape;
    l.racks = static_cast<int>(s.rack_nodes.size());
    l.rack_first_node.assign(1, 0);
    l.node_rack.clear();
    for (int rack = 0; rack < l.racks; ++rack) {
        const int held = s.rack_nodes[static_cast<size_t>(rack)];
        l.rack_first_node.push_back(l.rack_first_node.back() + held);
        l.node_rack.insert(l.node_rack.end(), static_cast<size_t>(held), rack);
    }
    l.nodes = l.rack_first_node.back();
    l.gpus = l.nodes * s.gpus_per_node;
    l.node_w = 2 * kNodePad + s.gpus_per_node * kTile + (s.gpus_per_node - 1) * kGap;
    l.node_h = kNodeTop + kNodeHeader + kNicH + 2 * kLinkGap + kTile + kBarH + kNodeBottom;
}

/// Pods: consecutive racks that share a leaf switch (a leaf group is a run of nodes).
void groupRacksIntoPods(TopologyLayout& l) {
    const ClusterShape& s = l.shape;
    std::vector<std::set<int>> rack_leaves(static_cast<size_t>(l.racks));
    for (size_t nic = 0; nic < s.nic_leaf.size(); ++nic) {
        const int leaf = s.nic_leaf[nic];
        const int node = static_cast<int>(nic) / s.nics_per_node;
        if (leaf >= 0 && node < l.nodes)
            rack_leaves[static_cast<size_t>(l.rackOfNode(node))].insert(leaf);
    }
    l.pods.clear();
    l.rack_pod.assign(static_cast<size_t>(l.racks), 0);
    std::set<int> pod_leaves;
    for (int rack = 0; rack < l.racks; ++rack) {
        const auto& leaves = rack_leaves[static_cast<size_t>(rack)];
        const bool shares = std::any_of(leaves.begin(), leaves.end(),
                                        [&](int leaf) { return pod_leaves.count(leaf) > 0; });
        if (l.pods.empty() || !shares) {
            if (!l.pods.empty())
                l.pods.back().leaves.assign(pod_leaves.begin(), pod_leaves.end());
            pod_leaves.clear();
            PodGeometry pod;
            pod.first_rack = rack;
            l.pods.push_back(pod);
        }
        ++l.pods.back().racks;
        pod_leaves.insert(leaves.begin(), leaves.end());
        l.rack_pod[static_cast<size_t>(rack)] = static_cast<int>(l.pods.size()) - 1;
    }
    if (!l.pods.empty())
        l.pods.back().leaves.assign(pod_leaves.begin(), pod_leaves.end());
    l.leaf_pod.assign(static_cast<size_t>(s.leaves), 0);
    l.leaf_slot.assign(static_cast<size_t>(s.leaves), 0);
    for (size_t p = 0; p < l.pods.size(); ++p)
        for (size_t slot = 0; slot < l.pods[p].leaves.size(); ++slot) {
            l.leaf_pod[static_cast<size_t>(l.pods[p].leaves[slot])] = static_cast<int>(p);
            l.leaf_slot[static_cast<size_t>(l.pods[p].leaves[slot])] = static_cast<int>(slot);
        }
}

/// A rack frame holding its node slots in `node_cols` columns.
void setRackShape(TopologyLayout& l, int node_cols) {
    const int slot_count = l.shape.nodes_per_rack;
    l.node_cols = node_cols;
    l.node_rows = (slot_count + node_cols - 1) / node_cols;
    l.rack_w = node_cols * l.node_w + (node_cols - 1) * kNodeGap + 2 * kRackPad;
    l.rack_h = kRackHeader + l.node_rows * l.node_h + (l.node_rows - 1) * kNodeGap + kRackPad +
               (l.shape.rack_scale_up_domain ? kRackBarH + kNodeGap : 0);
}

/// The sizes of the grid of pods, for the current rack shape and caption heights.
class PodGrid {
public:
    explicit PodGrid(const TopologyLayout& l)
        : l_(l)
        , fabric_(l.shape.leaves > 0)
        , spines_(l.shape.spines > 0)
        , pod_count_(static_cast<int>(l.pods.size())) {
        for (const PodGeometry& pod : l.pods) {
            max_leaves_ = std::max(max_leaves_, pod.leaves.size());
            max_racks_ = std::max(max_racks_, pod.racks);
        }
        leaves_w_ = static_cast<double>(max_leaves_) * kSwitchW +
                    (static_cast<double>(max_leaves_) - 1) * kSwitchGap;
    }
    bool fabric() const { return fabric_; }
    bool spines() const { return spines_; }
    int podCount() const { return pod_count_; }
    /// A pod's width inside its padding: its racks, or its leaves when they are wider.
    double innerWidth() const {
        return std::max(max_racks_ * l_.rack_w + (max_racks_ - 1) * kRackGapX, leaves_w_);
    }
    /// Pods in several rows reach the spines through trunks in the gutters left of each pod,
    /// one lane per row.
    double gapFor(int rows) const {
        return rows > 1 && spines_ ? std::max(kPodGapX, 24 + rows * kTrunkLane) : kPodGapX;
    }
    double podHeight(double header) const {
        return header + (fabric_ ? kSwitchH + kBundleH : 0) + l_.rack_h + kPodPad;
    }
    /// The spine row above the pods.
    double topHeight(double spine_label, int rows) const {
        return spines_ ? spine_label + kSwitchH + (rows == 1 ? kMeshH : kStubH) : 0;
    }
    /// The number of pod columns that fits the slide area best, and its scale.
    double bestFit(int& best_cols) const {
        const double pod_w = innerWidth() + 2 * kPodPad;
        double best = 0;
        for (int c = 1; c <= pod_count_; ++c) {
            const int rows = (pod_count_ + c - 1) / c;
            const double w =
                c * pod_w + (c - 1) * gapFor(rows) + (rows > 1 && spines_ ? gapFor(rows) : 0);
            const double h = topHeight(l_.spine_label_h, rows) + rows * podHeight(l_.pod_header_h) +
                             (rows - 1) * kPodGapY;
            const double scale = std::min(kFitAreaW / w, kFitAreaH / h);
            if (scale > best * 1.02) {
                best = scale;
                best_cols = c;
            }
        }
        return best;
    }

private:
    const TopologyLayout& l_;
    bool fabric_, spines_;
    int pod_count_;
    size_t max_leaves_ = 0;
    int max_racks_ = 0;
    double leaves_w_ = 0;
};

/// Chooses how racks fold their nodes and how many pod columns there are; sizes the captions
/// so they stay readable at the scale that fits. Returns the pod columns.
int fitPodGrid(TopologyLayout& l, const PodGrid& grid) {
    l.pod_header_h = kPodHeader;
    l.spine_label_h = kSpineLabelH;
    // Tall racks (many nodes) fold their nodes into columns when that fits the slide better.
    int node_cols = 1;
    double best_scale = 0;
    for (const int c : {1, 2, 4}) {
        if (c > 1 && c > l.shape.nodes_per_rack / 4)
            break;
        setRackShape(l, c);
        int cols = 1;
        const double scale = grid.bestFit(cols);
        if (scale > best_scale * 1.1) {
            best_scale = scale;
            node_cols = c;
        }
    }
    setRackShape(l, node_cols);
    // Twice: captions are sized so they stay readable at the scale the first pass fits.
    int cols = 1;
    for (int pass = 0; pass < 2; ++pass) {
        const double fit_scale = grid.bestFit(cols);
        l.pod_header_h = std::max(kPodHeader, 13 / fit_scale);
        l.spine_label_h = std::max(kSpineLabelH, 15 / fit_scale);
    }
    return cols;
}

/// Pod `p` at `origin` (its top left): leaves spread over the pod, each above the racks it
/// mostly serves, the racks centred under them, and its trunk to the spine bus.
void placePod(TopologyLayout& l, const PodGrid& grid, int p, const QPointF& origin, int row,
              double bus_y) {
    const double inner_w = grid.innerWidth();
    PodGeometry& pod = l.pods[static_cast<size_t>(p)];
    pod.rect =
        QRectF(origin.x(), origin.y(), inner_w + 2 * kPodPad, grid.podHeight(l.pod_header_h));
    const double inner_left = pod.rect.left() + kPodPad;
    const double leaf_y = pod.rect.top() + l.pod_header_h;
    const double slot_w = pod.leaves.empty() ? 0 : inner_w / static_cast<double>(pod.leaves.size());
    const double leaf_w = std::min(kSwitchW, slot_w - kSwitchGap);
    pod.leaf_rects.clear();
    for (size_t slot = 0; slot < pod.leaves.size(); ++slot)
        pod.leaf_rects.emplace_back(inner_left + (static_cast<double>(slot) + 0.5) * slot_w -
                                        leaf_w / 2,
                                    leaf_y, leaf_w, kSwitchH);
    const double rack_y = leaf_y + (grid.fabric() ? kSwitchH + kBundleH : 0);
    const double rw = pod.racks * l.rack_w + (pod.racks - 1) * kRackGapX;
    for (int k = 0; k < pod.racks; ++k)
        l.rack_rects[static_cast<size_t>(pod.first_rack + k)] =
            QRectF(inner_left + (inner_w - rw) / 2 + k * (l.rack_w + kRackGapX), rack_y, l.rack_w,
                   l.rack_h);
    if (grid.spines() && !l.mesh && !pod.leaf_rects.empty()) {
        const double x = pod.rect.left() - 12 - row * kTrunkLane;
        const double y = pod.leaf_rects.front().center().y();
        QPolygonF trunk;
        trunk << QPointF(x, bus_y) << QPointF(x, y) << QPointF(pod.leaf_rects.front().left(), y);
        l.trunks.push_back({trunk, p});
    }
}

/// The spines spread over [left, right], their caption, and the bus from the leftmost of
/// `trunks` to `right`.
SpineRow spineRow(const TopologyLayout& l, double left, double right, double bus_y,
                  const std::vector<const TrunkGeometry*>& trunks) {
    SpineRow row;
    const int spines = l.shape.spines;
    if (spines <= 0)
        return row;
    const double spacing = (right - left) / spines;
    const double w = std::min(kSwitchW, spacing - 6);
    const double width = w >= 10 ? w : std::max(1.0, spacing * 0.8);
    for (int s = 0; s < spines; ++s)
        row.rects.emplace_back(left + (s + 0.5) * spacing - width / 2, l.spine_label_h, width,
                               kSwitchH);
    row.label_rect = QRectF(left, 0, right - left, l.spine_label_h - 4);
    if (trunks.empty())
        return row;
    double bus_left = right;
    for (const TrunkGeometry* trunk : trunks)
        bus_left = std::min(bus_left, trunk->line.front().x());
    row.bus = QLineF(bus_left, bus_y, right, bus_y);
    return row;
}

/// The aggregated view (AggregatedGeometry): the summary's place, the part shown, its spines.
void placeAggregated(TopologyLayout& l, int cols, double left, double bus_y) {
    AggregatedGeometry& a = l.aggregated;
    a = {};
    a.bounds = l.bounds;
    a.spines = l.spines;
    const int pods = static_cast<int>(l.pods.size());
    if (pods < 2)
        return;
    if (pods <= cols) { // one row: the summary takes the rest of it
        a.summary_pod = 1;
        a.summary = l.pods[1].rect;
        for (int p = 2; p < pods; ++p)
            a.summary = a.summary.united(l.pods[static_cast<size_t>(p)].rect);
        a.bounds.setBottom(a.summary.bottom() + 28);
        return;
    }
    a.summary_pod = cols; // the first pod of the second row, under pod 0
    a.summary = l.pods[static_cast<size_t>(cols)].rect;
    const double right = l.pods[0].rect.right();
    a.bounds = QRectF(l.bounds.topLeft(), QPointF(right + 16, a.summary.bottom() + 28));
    std::vector<const TrunkGeometry*> trunks;
    for (const TrunkGeometry& trunk : l.trunks)
        if (trunk.pod == 0 || trunk.pod == cols)
            trunks.push_back(&trunk);
    a.spines = spineRow(l, left, right, bus_y, trunks);
}

} // namespace

TopologyLayout layoutTopology(const ClusterShape& shape) {
    TopologyLayout l;
    l.shape = shape;
    countRacks(l);
    groupRacksIntoPods(l);
    const PodGrid grid(l);
    const int cols = fitPodGrid(l, grid);
    const int pod_count = grid.podCount();
    const double pod_w = grid.innerWidth() + 2 * kPodPad;
    const int rows = (pod_count + cols - 1) / cols;
    l.mesh = grid.spines() && rows == 1;
    const double gap_x = grid.gapFor(rows);
    const double left = l.mesh || !grid.spines() ? 0 : gap_x; // the first column's trunks
    const double pod_h = grid.podHeight(l.pod_header_h);
    const double total_w = left + cols * pod_w + (cols - 1) * gap_x;
    const double top = grid.topHeight(l.spine_label_h, rows);
    const double bus_y = l.spine_label_h + kSwitchH + 14;
    l.rack_rects.assign(static_cast<size_t>(l.racks), QRectF());
    l.trunks.clear();
    for (int p = 0; p < pod_count; ++p) {
        const int row = p / cols;
        const int col = p % cols;
        placePod(l, grid, p, QPointF(left + col * (pod_w + gap_x), top + row * (pod_h + kPodGapY)),
                 row, bus_y);
    }
    std::vector<const TrunkGeometry*> trunks;
    for (const TrunkGeometry& trunk : l.trunks)
        trunks.push_back(&trunk);
    l.spines = spineRow(l, left, total_w, bus_y, trunks);
    const double bottom = top + rows * pod_h + (rows - 1) * kPodGapY;
    l.bounds = QRectF(-16, -12, total_w + 32, bottom + 28);
    l.new_rack_rect = QRectF();
    l.view_bounds = l.bounds;
    if (shape.new_rack_zone && l.racks > 0) {
        const QRectF& last = l.rack_rects.back();
        l.new_rack_rect = QRectF(last.right() + kRackGapX, last.top(),
                                 std::clamp(l.node_w * 0.4, kNewRackMinW, l.rack_w), last.height());
        l.view_bounds = l.bounds.united(l.new_rack_rect.adjusted(-16, -12, 16, 28));
    }
    placeAggregated(l, cols, left, bus_y);
    return l;
}

} // namespace moe::widgets::detail
