// Group overlays (group_overlay.h): which group each GPU is in, where each group sits and which
// link tiers its traffic crosses, and the legend's words, on small clusters worked out by hand.
//
// The cluster: 4 nodes x 8 H100 (GPUs 8n..8n+7 on node n), 2 nodes per rack (rack = node / 2),
// a fat tree with 2 nodes per leaf (leaf = node / 2, so 2 leaves and one spine). With order
// tp-cp-ep-dp-pp the dense grid is tp, cp, dp, pp (strides 1, tp, tp*cp, tp*cp*dp) and the
// expert grid etp, ep, edp, pp (strides 1, etp, etp*ep, etp*ep*edp); a group's index is the
// rank's other coordinates, leftmost fastest (placement.h).
#include "moe/group_overlay.h"
#include "test_support.h"

#include <QtTest>

#include <string>
#include <vector>

using namespace moe;

namespace {

Scenario smallCluster(int nodes) {
    Scenario s;
    s.cluster = test::h100Nodes(nodes);
    s.cluster.nodes_per_rack = 2;
    s.cluster.nodes_per_leaf = 2;
    s.cluster.fabric_topology = FabricTopology::fat_tree;
    s.layout.order = {Dim::tp, Dim::cp, Dim::ep, Dim::dp, Dim::pp};
    return s;
}

/// TP2 CP1 DP8 PP2 EP4 ETP1 on 32 GPUs (expert DP = 2 * 1 * 8 / 4 = 4).
Scenario twoStages() {
    Scenario s = smallCluster(4);
    s.layout.tp = 2;
    s.layout.cp = 1;
    s.layout.dp = 8;
    s.layout.pp = 2;
    s.layout.ep = 4;
    s.layout.etp = 1;
    return s;
}

std::vector<int> members(const OverlayGroups& g, int group) {
    std::vector<int> out;
    for (size_t gpu = 0; gpu < g.group_of_gpu.size(); ++gpu)
        if (g.group_of_gpu[gpu] == group)
            out.push_back(static_cast<int>(gpu));
    return out;
}

std::vector<int> range(int first, int count, int stride = 1) {
    std::vector<int> v;
    for (int i = 0; i < count; ++i)
        v.push_back(first + i * stride);
    return v;
}

} // namespace

class TestGroupOverlay : public QObject {
    Q_OBJECT
private slots:
    void groupsAndSpansByHand() {
        const Scenario s = twoStages();
        const HardwareGraph g = buildHardwareGraph(s.cluster);
        QCOMPARE(g.leaves, 2);
        QCOMPARE(g.spines, 1);
        const Placement p = placeLayout(s);

        // TP: strides 1, so TP group k = GPUs 2k, 2k+1 (16 groups), inside one node: NVLink.
        const OverlayGroups tp = overlayGroups(GroupOverlay::tp, s, p, g);
        QCOMPARE(tp.spans.size(), size_t(16));
        QCOMPARE(members(tp, 5), (std::vector<int>{10, 11}));
        QCOMPARE(describeGroupSpan(GroupOverlay::tp, tp.spans[5], s.cluster),
                 std::string("node 1 (rack 0), 2 GPUs, NVLink"));

        // DP: stride tp = 2; group index = tp + 2 * pp, so DP group 2 (tp 0, pp 1) = GPUs 16,
        // 18, ..., 30: nodes 2-3, both in rack 1 and under leaf 1; four members per node share
        // NVLink, the two nodes talk through leaf 1 only (no spine).
        const OverlayGroups dp = overlayGroups(GroupOverlay::dp, s, p, g);
        QCOMPARE(dp.spans.size(), size_t(4));
        QCOMPARE(members(dp, 2), range(16, 8, 2));
        QCOMPARE(describeGroupSpan(GroupOverlay::dp, dp.spans[2], s.cluster),
                 std::string("nodes 2-3 (rack 1), 8 GPUs, NVLink + InfiniBand leaf"));
        QCOMPARE(dp.spans[2].node_stride, 1);

        // EP: rank = ep + 4 * edp + 16 * pp; group index = edp + 4 * pp, so EP group k = GPUs
        // 4k..4k+3: EP group 3 = GPUs 12-15 on node 1.
        const OverlayGroups ep = overlayGroups(GroupOverlay::ep, s, p, g);
        QCOMPARE(ep.spans.size(), size_t(8));
        QCOMPARE(members(ep, 3), range(12, 4));
        QCOMPARE(describeGroupSpan(GroupOverlay::ep, ep.spans[3], s.cluster),
                 std::string("node 1 (rack 0), 4 GPUs, NVLink"));

        // Expert DP: group index = ep + 4 * pp, members ep + 16 pp + 4 e: group 5 (ep 1, pp 1)
        // = GPUs 17, 21 (node 2), 25, 29 (node 3).
        const OverlayGroups edp = overlayGroups(GroupOverlay::edp, s, p, g);
        QCOMPARE(edp.spans.size(), size_t(8));
        QCOMPARE(members(edp, 5), (std::vector<int>{17, 21, 25, 29}));
        QCOMPARE(describeGroupSpan(GroupOverlay::edp, edp.spans[5], s.cluster),
                 std::string("nodes 2-3 (rack 1), 4 GPUs, NVLink + InfiniBand leaf"));

        // PP stages: pp stride 16, so stage 0 = GPUs 0-15 (nodes 0-1, leaf 0); GPU g sends to
        // g + 16 on nodes 2-3 (leaf 1): GPU -> NIC -> leaf 0 -> spine -> leaf 1, no NVLink.
        const OverlayGroups pp = overlayGroups(GroupOverlay::pp, s, p, g);
        QCOMPARE(pp.spans.size(), size_t(2));
        QCOMPARE(members(pp, 0), range(0, 16));
        QCOMPARE(members(pp, 1), range(16, 16));
        const LinkTiers sends{false, true, true};
        QVERIFY(pp.spans[0].tiers == sends);
        QCOMPARE(describeGroupSpan(GroupOverlay::pp, pp.spans[1], s.cluster),
                 std::string("nodes 2-3 (rack 1), 16 GPUs, pipeline sends over InfiniBand leaf "
                             "+ spine"));

        // The same on a rail-optimized fabric: 2 leaf groups x 8 rails = 16 leaves, GPU local
        // index i sends on rail i. DP group 2 has GPU 16 (node 2, rail 0) and GPU 26 (node 3,
        // rail 2): different leaves, so route() climbs to the spine (no PXN in the model).
        Scenario rail = s;
        rail.cluster.fabric_topology = FabricTopology::rail_optimized;
        const HardwareGraph rg = buildHardwareGraph(rail.cluster);
        QCOMPARE(rg.leaves, 16);
        const OverlayGroups rail_dp = overlayGroups(GroupOverlay::dp, rail, placeLayout(rail), rg);
        QCOMPARE(describeGroupSpan(GroupOverlay::dp, rail_dp.spans[2], rail.cluster),
                 std::string("nodes 2-3 (rack 1), 8 GPUs, NVLink + InfiniBand leaf + spine"));

        // CP = 1: 32 groups of one GPU.
        const OverlayGroups cp = overlayGroups(GroupOverlay::cp, s, p, g);
        QCOMPARE(cp.spans.size(), size_t(32));
        QVERIFY(cp.single_gpu_groups);
        QCOMPARE(overlayLegend(cp, s, 8).size(), size_t(1));
        QCOMPARE(overlayLegend(cp, s, 8)[0].text,
                 std::string("CP=1: every GPU is a group of its own, no traffic"));
    }

    void spineAndStridedNodes() {
        // TP2 DP16 PP1: DP group 0 = GPUs 0, 2, ..., 30 on all 4 nodes, racks 0-1, leaves 0
        // and 1: NVLink inside nodes, the leaves and the spine between them.
        Scenario s = smallCluster(4);
        s.layout.tp = 2;
        s.layout.dp = 16;
        s.layout.ep = 4;
        HardwareGraph g = buildHardwareGraph(s.cluster);
        Placement p = placeLayout(s);
        const OverlayGroups dp = overlayGroups(GroupOverlay::dp, s, p, g);
        QCOMPARE(members(dp, 0), range(0, 16, 2));
        QCOMPARE(describeGroupSpan(GroupOverlay::dp, dp.spans[0], s.cluster),
                 std::string("nodes 0-3 (racks 0-1), 16 GPUs, NVLink + InfiniBand leaf + spine"));

        // 8 nodes, TP8 PP2 DP4, order tp-cp-ep-pp-dp: dp stride = 8 * 2 = 16 GPUs = 2 nodes, so
        // DP group 0 = GPUs 0, 16, 32, 48 on nodes 0, 2, 4, 6 (racks 0-3, leaves 0-3): one
        // member per node, so no NVLink.
        s = smallCluster(8);
        s.layout.tp = 8;
        s.layout.pp = 2;
        s.layout.dp = 4;
        s.layout.ep = 1;
        s.layout.order = {Dim::tp, Dim::cp, Dim::ep, Dim::pp, Dim::dp};
        g = buildHardwareGraph(s.cluster);
        p = placeLayout(s);
        const OverlayGroups strided = overlayGroups(GroupOverlay::dp, s, p, g);
        QCOMPARE(members(strided, 0), range(0, 4, 16));
        QCOMPARE(strided.spans[0].node_stride, 2);
        QCOMPARE(describeGroupSpan(GroupOverlay::dp, strided.spans[0], s.cluster),
                 std::string("nodes 0, 2, …, 6 (racks 0-3), 4 GPUs, InfiniBand leaf + spine"));
    }

    void tiersAgreeWithRoutes() {
        // The tiers of every group are the link kinds route() gives its member pairs.
        const Scenario s = twoStages();
        const HardwareGraph g = buildHardwareGraph(s.cluster);
        const Placement p = placeLayout(s);
        for (const GroupOverlay o :
             {GroupOverlay::tp, GroupOverlay::dp, GroupOverlay::ep, GroupOverlay::edp}) {
            const OverlayGroups groups = overlayGroups(o, s, p, g);
            for (size_t i = 0; i < groups.spans.size(); ++i) {
                LinkTiers routed;
                const std::vector<int> gpus = members(groups, static_cast<int>(i));
                for (const int a : gpus)
                    for (const int b : gpus)
                        for (const int link : g.route(a, b)) {
                            const LinkKind k = g.links[static_cast<size_t>(link)].kind;
                            routed.scale_up |= k == LinkKind::scale_up;
                            routed.scale_out |= k == LinkKind::gpu_nic || k == LinkKind::nic_leaf;
                            routed.spine |= k == LinkKind::leaf_spine;
                        }
                QVERIFY2(routed == groups.spans[i].tiers, toString(o));
            }
        }
    }

    void legendListsThenSummarises() {
        Scenario s = twoStages();
        s.layout.schedule = PipelineSchedule::dualpipe;
        const HardwareGraph g = buildHardwareGraph(s.cluster);
        const Placement p = placeLayout(s);
        // 16 TP groups, 2 listed, the other 14 all 2 GPUs in 1 node over NVLink.
        const auto tp = overlayLegend(overlayGroups(GroupOverlay::tp, s, p, g), s, 2);
        QCOMPARE(tp.size(), size_t(4));
        QCOMPARE(tp[0].text, std::string("TP groups: 16 of 2 GPUs each"));
        QCOMPARE(tp[1].group, 0);
        QCOMPARE(tp[1].text, std::string("TP group 0: node 0 (rack 0), 2 GPUs, NVLink"));
        QCOMPARE(tp[2].group, 1);
        QCOMPARE(tp[3].group, -1);
        QCOMPARE(tp[3].text, std::string("… 14 more, each 2 GPUs in 1 node, NVLink"));
        // DualPipe: rank 0 runs stage 0 of one direction and stage pp - 1 = 1 of the other.
        const auto pp = overlayLegend(overlayGroups(GroupOverlay::pp, s, p, g), s, 8);
        QCOMPARE(pp.size(), size_t(3));
        QCOMPARE(pp[0].text, std::string("DualPipe ranks: 2 of 16 GPUs each"));
        QCOMPARE(pp[1].text, std::string("DualPipe rank 0 (stages 0 and 1): nodes 0-1 (rack 0), "
                                         "16 GPUs, pipeline sends over InfiniBand leaf + spine"));
        // Listing none: the 8 EP groups in one shape line.
        const auto ep = overlayLegend(overlayGroups(GroupOverlay::ep, s, p, g), s, 0);
        QCOMPARE(ep.size(), size_t(2));
        QCOMPARE(ep[1].text, std::string("… 8 more, each 4 GPUs in 1 node, NVLink"));
    }

    void unplaceableLayoutIsEmpty() {
        // EP 3 does not divide TP x CP x DP = 16: no expert grid, so no EP groups.
        Scenario s = twoStages();
        s.layout.ep = 3;
        const HardwareGraph g = buildHardwareGraph(s.cluster);
        const Placement p = placeLayout(s);
        const OverlayGroups ep = overlayGroups(GroupOverlay::ep, s, p, g);
        QVERIFY(ep.spans.empty());
        QCOMPARE(overlayLegend(ep, s, 4).size(), size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestGroupOverlay)
#include "test_group_overlay.moc"
