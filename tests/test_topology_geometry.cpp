// The topology diagram's layout geometry (widgets/src/topology/topology_geometry.h), without a
// scene or widget: node trays, racks with free slots, pods under their leaves, the spine row,
// link lines, hit tests and the level-of-detail rule, against positions derived by hand from
// the layout constants, and invariants (nothing overlaps, every GPU is found where it is drawn)
// on the samples' clusters.
#include "moe/scenario_io.h"
#include "moe/topology.h"
#include "test_support.h"
#include "topology/topology_geometry.h"

#include <QtTest>

using namespace moe;
using namespace moe::widgets::detail;

namespace {

// A node of 8 GPUs (every shape below uses them):
//   width  = 2 * kNodePad + 8 * kTile + 7 * kGap = 16 + 320 + 42 = 378
//   height = kNodeTop + kNodeHeader + kNicH + 2 * kLinkGap + kTile + kBarH + kNodeBottom
//          = 4 + 16 + 12 + 24 + 40 + 12 + 8 = 116
// A GPU tile sits kNodePad + local * (kTile + kGap) = 8 + 46 * local from the tray's left and
// kNodeTop + kNodeHeader + kNicH + kLinkGap = 44 below its top.
constexpr double kNodeW8 = 378;
constexpr double kNodeH = 116;

ClusterShape shapeOf(int gpus_per_node, int nodes_per_rack, std::vector<int> rack_nodes) {
    ClusterShape shape;
    shape.gpus_per_node = gpus_per_node;
    shape.nodes_per_rack = nodes_per_rack;
    shape.rack_nodes = std::move(rack_nodes);
    return shape;
}

HardwareGraph sampleGraph(const std::string& name) {
    const LoadResult loaded = loadScenarioFile(test::samplePath(name));
    if (!loaded.ok())
        qFatal("cannot load sample %s", name.c_str());
    return buildHardwareGraph(loaded.scenario->cluster);
}

bool contains(const QRectF& outer, const QRectF& inner) {
    return outer.contains(inner);
}

/// Nothing drawn overlaps what it should not, everything sits inside what holds it, and the
/// hit tests find every GPU and node at the centre of its tile or tray.
void checkInvariants(const TopologyLayout& l) {
    for (int rack = 0; rack < l.racks; ++rack) {
        const QRectF& r = l.rack_rects[static_cast<size_t>(rack)];
        QVERIFY2(contains(l.podOfRack(rack).rect, r), qPrintable(QString::number(rack)));
        QVERIFY(contains(l.bounds, r));
        for (int other = rack + 1; other < l.racks; ++other)
            QVERIFY(!r.intersects(l.rack_rects[static_cast<size_t>(other)]));
        for (int slot = 0; slot < l.shape.nodes_per_rack; ++slot) {
            QVERIFY(contains(r, l.slotRect(r, slot)));
            for (int other = slot + 1; other < l.shape.nodes_per_rack; ++other)
                QVERIFY(!l.slotRect(r, slot).intersects(l.slotRect(r, other)));
        }
    }
    for (size_t p = 0; p < l.pods.size(); ++p) {
        for (size_t q = p + 1; q < l.pods.size(); ++q)
            QVERIFY(!l.pods[p].rect.intersects(l.pods[q].rect));
        for (const QRectF& leaf : l.pods[p].leaf_rects)
            QVERIFY(contains(l.pods[p].rect, leaf));
    }
    const int gpn = l.shape.gpus_per_node;
    for (int node = 0; node < l.nodes; ++node) {
        const QRectF tray = l.nodeRect(node);
        QCOMPARE(l.nodeAt(tray.center()), node);
        QVERIFY(contains(tray, l.barRect(node)));
        for (int rail = 0; rail < l.shape.nics_per_node; ++rail)
            QVERIFY(contains(tray, l.nicRect(node, rail)));
        for (int local = 0; local < gpn; ++local) {
            const int gpu = node * gpn + local;
            const QRectF tile = l.gpuRect(gpu);
            QVERIFY(contains(tray, tile));
            QCOMPARE(l.gpuAt(tile.center()), gpu);
            if (local + 1 < gpn)
                QVERIFY(!tile.intersects(l.gpuRect(gpu + 1)));
        }
    }
    if (l.shape.new_rack_zone && l.racks > 0)
        QVERIFY(contains(l.view_bounds, l.new_rack_rect));
}

} // namespace

class TestTopologyGeometry : public QObject {
    Q_OBJECT
private slots:
    void levelOfDetailFollowsTheTileWidth() {
        // Labels from 28 px tiles (scale 28 / 40 = 0.7), cells from 4 px (scale 0.1).
        QCOMPARE(levelOfDetail(0.7), LevelOfDetail::full);
        QCOMPARE(levelOfDetail(0.69), LevelOfDetail::gpus);
        QCOMPARE(levelOfDetail(0.1), LevelOfDetail::gpus);
        QCOMPARE(levelOfDetail(0.099), LevelOfDetail::racks);
    }

    void oneNodeWithoutFabric() {
        // One rack of one 8-GPU node, no leaves: one pod, no spine row (left 0, top 0).
        //   rack: kRackPad + node + kRackPad = 394 wide; kRackHeader + node + kRackPad = 150 tall
        //   pod: kPodPad + rack + kPodPad = 422 wide; header 30 + rack + kPodPad = 194 tall
        //   (the fit scale min(1270 / 422, 770 / 194) = 3.0 leaves the 30 header as it is)
        const TopologyLayout l = layoutTopology(shapeOf(8, 1, {1}));
        QCOMPARE(l.gpus, 8);
        QCOMPARE(l.pods.size(), size_t(1));
        QVERIFY(l.pods[0].leaves.empty());
        QCOMPARE(l.node_w, kNodeW8);
        QCOMPARE(l.node_h, kNodeH);
        QCOMPARE(l.pods[0].rect, QRectF(0, 0, 422, 194));
        QCOMPARE(l.rack_rects[0], QRectF(14, 30, 394, 150));
        QCOMPARE(l.nodeRect(0), QRectF(22, 56, kNodeW8, kNodeH));
        for (int gpu = 0; gpu < 8; ++gpu)
            QCOMPARE(l.gpuRect(gpu), QRectF(30 + 46 * gpu, 100, 40, 40));
        // One NIC for 8 GPUs: centred over the whole GPU row (x 30 .. 392), 28 wide, 20 below
        // the tray's top.
        QCOMPARE(l.nicRect(0, 0), QRectF(211 - 14, 76, 28, 12));
        // The scale-up bar spans the GPU row, kLinkGap under the tiles.
        QCOMPARE(l.barRect(0), QRectF(30, 152, 362, 12));
        QCOMPARE(l.gpuScaleUpLine(3), QLineF(188, 140, 188, 152));
        QCOMPARE(l.gpuNicLine(3, 0), QLineF(188, 100, 211, 88));
        // The frame: 16 left and right, 12 above, 28 below the pods.
        QCOMPARE(l.bounds, QRectF(-16, -12, 422 + 32, 194 + 28));
        QCOMPARE(l.view_bounds, l.bounds);
        QVERIFY(l.new_rack_rect.isEmpty());
        QVERIFY(l.spines.rects.empty());
        checkInvariants(l);
    }

    void unevenRacksUnderOneLeaf() {
        // Racks of 4 slots holding 4, 3 and 1 nodes, every NIC on leaf 0: one pod of three
        // racks. Rack: 394 wide, kRackHeader + 4 * 116 + 3 * kNodeGap + kRackPad = 522 tall.
        // Pod inside: 3 * 394 + 2 * kRackGapX = 1218 wide; 1246 with its padding; header 30,
        // leaf row kSwitchH + kBundleH = 120, so racks start at 150 and the pod is 30 + 120 +
        // 522 + 14 = 686 tall (the fit scale 1270 / 1246 = 1.02 keeps the header at 30).
        ClusterShape shape = shapeOf(8, 4, {4, 3, 1});
        shape.leaves = 1;
        shape.nic_leaf.assign(8, 0);
        shape.new_rack_zone = true;
        const TopologyLayout l = layoutTopology(shape);
        QCOMPARE(l.nodes, 8);
        QCOMPARE(l.pods.size(), size_t(1));
        QCOMPARE(l.pods[0].racks, 3);
        QCOMPARE(l.pods[0].rect, QRectF(0, 0, 1246, 686));
        QCOMPARE(l.rack_h, 522.0);
        // Rack k at kPodPad + k * (394 + 18).
        QCOMPARE(l.rack_rects[0], QRectF(14, 150, 394, 522));
        QCOMPARE(l.rack_rects[1], QRectF(426, 150, 394, 522));
        QCOMPARE(l.rack_rects[2], QRectF(838, 150, 394, 522));
        // Nodes 4-6 in rack 1 and node 7 alone in rack 2; node k of a rack is slot k, one
        // tray height + kNodeGap (124) below the last, under the 26 rack header.
        QCOMPARE(l.rackOfNode(5), 1);
        QCOMPARE(l.firstNode(2), 7);
        QCOMPARE(l.nodeRect(5), QRectF(434, 300, kNodeW8, kNodeH));
        QCOMPARE(l.nodeRect(7), QRectF(846, 176, kNodeW8, kNodeH));
        QCOMPARE(l.gpuRect(5 * 8 + 3), QRectF(434 + 8 + 3 * 46, 344, 40, 40));
        // Rack 1's free slot 3 is drawn but holds no node.
        const QRectF free_slot = l.slotRect(l.rack_rects[1], 3);
        QCOMPARE(free_slot, QRectF(434, 548, kNodeW8, kNodeH));
        QCOMPARE(l.nodeAt(free_slot.center()), -1);
        QCOMPARE(l.gpuAt(free_slot.center()), -1);
        // The leaf is centred over the pod's inside: 14 + 1218 / 2 - 33 = 590; its cable to rack
        // 1 runs from its bottom (54) to the middle of the rack's top, 426 + 8 + 378 / 2 = 623.
        QCOMPARE(l.pods[0].leaf_rects[0], QRectF(590, 30, 66, 24));
        QCOMPARE(l.cableLine(1, 0), QLineF(623, 54, 623, 150));
        // Drops: half the 18 gap counts as the rack on either side; the "+ new rack" zone sits
        // a gap after the last rack, clamp(0.4 * 378, 100, 394) = 151.2 wide.
        QCOMPARE(l.dropRackAt(QPointF(416, 400)), 0);
        QCOMPARE(l.dropRackAt(QPointF(418, 400)), 1);
        QCOMPARE(l.new_rack_rect, QRectF(1250, 150, 151.2, 522));
        QCOMPARE(l.dropRackAt(l.new_rack_rect.center()), 3);
        QCOMPARE(l.dropRackAt(QPointF(700, 20)), -1); // above the racks, in the pod header
        QCOMPARE(l.bounds, QRectF(-16, -12, 1246 + 32, 686 + 28));
        // The scene reaches the zone and its margin: 1250 + 151.2 + 16 = 1417.2 at the right.
        QCOMPARE(l.view_bounds, QRectF(-16, -12, 1417.2 + 16, 714));
        checkInvariants(l);
    }

    void rackWideScaleUpDomainHasARackSwitch() {
        // Two 4-GPU trays in a rack-wide scale-up domain: a rack switch bar (kRackBarH) and a
        // kNodeGap above it under the trays: 26 + 2 * 116 + 8 + 8 + 16 + 8 = 298 tall. Each
        // tray's ports run to the gutter right of it; the column's first tray drops to the bar.
        ClusterShape shape = shapeOf(4, 2, {2});
        shape.rack_scale_up_domain = true;
        const TopologyLayout l = layoutTopology(shape);
        QCOMPARE(l.rack_h, 298.0);
        const QRectF rack = l.rack_rects[0];
        QCOMPARE(l.rackBarRect(0),
                 QRectF(rack.left() + 8, rack.bottom() - 24, rack.width() - 16, 16));
        QVERIFY(l.rackBarRect(0).top() > l.nodeRect(1).bottom());
        const double gutter = l.nodeRect(0).right() + 4;
        QCOMPARE(l.nodePortLine(1).p2(), QPointF(gutter, l.barRect(1).center().y()));
        QVERIFY(l.hasColumnDrop(0));
        QVERIFY(!l.hasColumnDrop(1));
        QCOMPARE(l.columnDropLine(0).p2(), QPointF(gutter, l.rackBarRect(0).top()));
        checkInvariants(l);
    }

    void deepSeekClusterOf2048Gpus() {
        // 256 nodes of 8 H800 in racks of 4, 8 rails, rail-optimized: 32 nodes per rail leaf,
        // so 8 leaf groups = 8 pods of 8 racks under 8 leaves each; 64 leaves x 32 up ports on
        // 64-port spines = 32 spines.
        const HardwareGraph graph = sampleGraph("deepseek-v3-2048xh800.yaml");
        const TopologyLayout l = layoutTopology(clusterShape(graph));
        QCOMPARE(l.gpus, 2048);
        QCOMPARE(l.racks, 64);
        QCOMPARE(l.pods.size(), size_t(8));
        QCOMPARE(l.pods[3].first_rack, 24);
        QCOMPARE(l.pods[3].leaves, (std::vector<int>{24, 25, 26, 27, 28, 29, 30, 31}));
        QCOMPARE(l.spines.rects.size(), size_t(32));
        QCOMPARE(l.node_cols, 1); // 2 columns only from 8 slots up
        // Pod inside: 8 racks, 8 * 394 + 7 * 18 = 3278 (wider than 8 leaves, 584); 3306 padded.
        // Pod height: header H + 120 + 522 + 14 = H + 656. Grid of 8 pods in c columns, rows
        // r = ceil(8 / c), trunk gutters max(48, 24 + 8 r) wide (one more left of column 0):
        //   c = 1: 3394 wide, 118 + 8 (30 + 656) + 7 * 48 = 5942 tall: scale 0.130
        //   c = 2: 2 * 3306 + 56 + 56 = 6724 wide, 3006 tall: scale 1270 / 6724 = 0.189 (best)
        //   c = 3: 10062 wide: 0.126;  c >= 4: wider still.
        // Captions readable at that scale: header H = 13 / 0.189 = 87412 / 1270 = 68.83 and
        // spine label S = 15 / 0.189 = 100860 / 1270 = 79.42; the second pass keeps c = 2.
        const double header = 87412.0 / 1270;
        const double spine_label = 100860.0 / 1270;
        QCOMPARE(l.pod_header_h, header);
        QCOMPARE(l.spine_label_h, spine_label);
        QVERIFY(!l.mesh);
        // Spine row: S + kSwitchH + kStubH = S + 88 tall; pods from x = 56 (the gutter).
        const double top = spine_label + 88;
        const double pod_h = header + 656;
        QCOMPARE(l.pods[3].rect, QRectF(56 + 3306 + 56, top + pod_h + 48, 3306, pod_h));
        // Bounds: 6724 + 32 wide; S + 88 + 4 pods + 3 gaps of 48, + 28 + 12 of frame, tall.
        QCOMPARE(l.bounds, QRectF(-16, -12, 6724 + 32, top + 4 * pod_h + 3 * 48 + 28));
        // GPU 1487: node 185 (local 7), rack 46 (slot 1), the 7th rack of pod 5 (row 2, col 1).
        // x: 3418 + kPodPad + 6 * 412 = 5904 (rack) + 8 (slot) + 8 + 7 * 46 = 6242.
        // y: pod top + H + 120 (leaf row) + 26 + 124 (slot 1) + 44 (in the tray).
        const double pod5_top = top + 2 * (pod_h + 48);
        QCOMPARE(l.gpuRect(1487), QRectF(6242, pod5_top + header + 120 + 150 + 44, 40, 40));
        // 32 spines over 6668 (the width right of the gutter): 208.375 apart, 66 wide.
        QCOMPARE(l.spines.rects[5], QRectF(56 + 5.5 * 208.375 - 33, spine_label, 66, 24));
        // Pod 5's trunk in lane 2 of the gutter: 3418 - 12 - 2 * 8 = 3390, from the bus
        // (S + 24 + 14) down to its leaf row.
        QCOMPARE(l.trunks[5].line.front(), QPointF(3390, spine_label + 38));
        QCOMPARE(l.trunks[5].line.back().x(), l.pods[5].leaf_rects.front().left());
        // Aggregated: the summary takes pod 2's place, under pod 0; the view is column 0 (the
        // gutter and pod 0: 56 + 3306, + 16 of frame each side) down to 28 under the summary;
        // its 32 spines spread over pod 0's width, 3306 / 32 = 103.3125 apart, still 66 wide;
        // the bus runs from the summary's trunk (lane 1: 56 - 12 - 8 = 36) to pod 0's right.
        const AggregatedGeometry& a = l.aggregated;
        QCOMPARE(a.summary_pod, 2);
        QCOMPARE(a.summary, l.pods[2].rect);
        QCOMPARE(a.bounds, QRectF(-16, -12, 16 + 56 + 3306 + 16, 12 + top + 2 * pod_h + 48 + 28));
        QCOMPARE(a.spines.rects.size(), size_t(32));
        QCOMPARE(a.spines.rects[5], QRectF(56 + 5.5 * 103.3125 - 33, spine_label, 66, 24));
        QCOMPARE(a.spines.bus, QLineF(36, spine_label + 38, 56 + 3306, spine_label + 38));
        checkInvariants(l);
    }

    void aggregatedViewOfOnePodAndOfPodRows() {
        // One pod (both racks under one leaf): nothing to aggregate, the whole diagram shows.
        ClusterShape one = shapeOf(8, 4, {4, 4});
        one.leaves = 1;
        one.nic_leaf.assign(8, 0);
        const TopologyLayout single = layoutTopology(one);
        QCOMPARE(single.pods.size(), size_t(1));
        QCOMPARE(single.aggregated.summary_pod, -1);
        QCOMPARE(single.aggregated.bounds, single.bounds);
        // Three one-node pods under their own leaves, no spines: pods 0 and 1 side by side,
        // pod 2 under pod 0, so the summary stands there and the view is column 0.
        ClusterShape three = shapeOf(8, 1, {1, 1, 1});
        three.leaves = 3;
        three.nic_leaf = {0, 1, 2};
        const TopologyLayout rows = layoutTopology(three);
        QCOMPARE(rows.pods.size(), size_t(3));
        QCOMPARE(rows.aggregated.summary_pod, 2);
        QCOMPARE(rows.aggregated.summary, rows.pods[2].rect);
        QVERIFY(rows.aggregated.bounds.contains(rows.pods[0].rect));
        QVERIFY(rows.aggregated.bounds.contains(rows.aggregated.summary));
        QVERIFY(!rows.aggregated.bounds.intersects(rows.pods[1].rect));
        // Two such pods fit one row: the summary takes the rest of it (pod 1's place).
        ClusterShape two = shapeOf(8, 1, {1, 1});
        two.leaves = 2;
        two.nic_leaf = {0, 1};
        const TopologyLayout row = layoutTopology(two);
        QCOMPARE(row.aggregated.summary_pod, 1);
        QCOMPARE(row.aggregated.summary, row.pods[1].rect);
        QCOMPARE(row.aggregated.bounds.width(), row.bounds.width());
        // Five in rows of three: the summary under pod 0 (pod 3's place).
        ClusterShape five = shapeOf(8, 1, {1, 1, 1, 1, 1});
        five.leaves = 5;
        five.nic_leaf = {0, 1, 2, 3, 4};
        const TopologyLayout wide = layoutTopology(five);
        QCOMPARE(wide.aggregated.summary_pod, 3);
        QCOMPARE(wide.aggregated.summary, wide.pods[3].rect);
    }

    void gb200RacksOfSixteenTrays() {
        // GB200 NVL72 as the sample models it: 16 active trays of 4 GPUs per rack (the other
        // 2 are spares) in one scale-up domain, 32 racks. Tall racks fold
        // into columns when that fits a slide better; whichever way, nothing overlaps.
        const HardwareGraph graph = sampleGraph("gb200-nvl72-deepseek-v3.yaml");
        const TopologyLayout l = layoutTopology(clusterShape(graph));
        QVERIFY(l.shape.rack_scale_up_domain);
        QCOMPARE(l.shape.nodes_per_rack, 16);
        QCOMPARE(l.racks, 32);
        QCOMPARE(l.node_rows, (16 + l.node_cols - 1) / l.node_cols);
        for (int rack = 0; rack < l.racks; ++rack)
            for (int node = l.firstNode(rack); node < l.endNode(rack); ++node)
                QVERIFY(l.rackBarRect(rack).top() > l.nodeRect(node).bottom());
        checkInvariants(l);
    }
};

QTEST_APPLESS_MAIN(TestTopologyGeometry)
#include "test_topology_geometry.moc"
