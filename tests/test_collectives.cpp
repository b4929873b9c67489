// Collective costs against hand-worked alpha-beta numbers, and the link loads of addLinkBytes
// against a pair-by-pair routing of the same traffic over the hardware graph.
#include "moe/collectives.h"
#include "moe/topology.h"

#include "test_close.h"

#include <QtTest>

#include <cmath>
#include <map>
#include <vector>

using namespace moe;
using moe::test::close;

namespace {

constexpr double GB = 1e9;

GroupShape shape(int size, int per_domain, int domains, int nodes) {
    GroupShape g;
    g.size = size;
    g.gpus_per_domain = per_domain;
    g.domains = domains;
    g.nodes = nodes;
    return g;
}

// H100-like NVLink (achievable) and a 400G NIC.
const LinkParams kUp{360.0, 2.5};
const LinkParams kOut{45.0, 5.0};

ClusterSpec smallCluster(int nodes, FabricTopology topo, int nodes_per_leaf) {
    ClusterSpec c;
    c.nodes = nodes;
    c.gpus_per_node = 4;
    c.nics_per_node = 4;
    c.nodes_per_rack = 1;
    c.scale_up_domain = ScaleUpDomain::node;
    c.fabric_topology = topo;
    c.nodes_per_leaf = nodes_per_leaf;
    c.gpu.scale_up_gbps = 360;
    c.gpu.scale_up_latency_us = 2.5;
    c.nic.bandwidth_gbps = 45;
    c.nic.latency_us = 5;
    return c;
}

ParallelGroup groupOf(std::vector<int> gpus) {
    ParallelGroup g;
    g.kind = GroupKind::ep;
    g.gpus = std::move(gpus);
    return g;
}

bool noNan(const CollectiveCost& c) {
    return !std::isnan(c.time_s) && !std::isnan(c.scale_up_bytes_per_gpu) &&
           !std::isnan(c.scale_out_bytes_per_gpu);
}

} // namespace

class TestCollectives : public QObject {
    Q_OBJECT
private slots:
    void shapeFromSpan();
    void ringAllReduce();
    void hierarchicalAllReduce();
    void reduceScatterAllGather();
    void allToAllOneNode();
    void allToAllTwoNodesSkewed();
    void expectedRemoteNodes();
    void sendRecv();
    void degenerateCases();
    void monotonicity();
    void linkBytesRailOptimized();
    void linkBytesFatTree();
    void linkBytesConservation();
};

void TestCollectives::shapeFromSpan() {
    GroupSpan span;
    span.gpus = 16;
    span.max_gpus_per_domain = 8;
    span.domains = 2;
    span.nodes = 2;
    span.racks = 1;
    span.link_class = LinkClass::scale_out;
    const GroupShape g = shapeOf(span);
    QCOMPARE(g.size, 16);
    QCOMPARE(g.gpus_per_domain, 8);
    QCOMPARE(g.domains, 2);
    QCOMPARE(g.nodes, 2);

    // An empty span (default-constructed) still gives a usable one-GPU shape.
    const GroupShape e = shapeOf(GroupSpan{});
    QCOMPARE(e.size, 1);
    QCOMPARE(e.gpus_per_domain, 1);
    QCOMPARE(e.domains, 1);
    QCOMPARE(e.nodes, 1);
}

void TestCollectives::ringAllReduce() {
    // 1 GB over 8 GPUs in one NVLink domain, 360 GB/s, 2.5 us per step:
    //   bytes sent per GPU = 2*7/8 * 1e9 = 1.75e9
    //   bandwidth term     = 1.75e9 / 360e9 = 0.004861111111 s
    //   latency            = 2*7 * 2.5 us = 35 us
    //   total              = 0.004896111111 s
    const CollectiveCost c = allReduce(shape(8, 8, 1, 1), 1 * GB, kUp, kOut);
    QCLOSE(c.time_s, 0.0048961111111111);
    QCLOSE(c.scale_up_bytes_per_gpu, 1.75e9);
    QCOMPARE(c.scale_out_bytes_per_gpu, 0.0);

    // 2 GPUs: 2*1/2 * 1e9 / 360e9 + 2 * 2.5 us = 0.002777777778 + 0.000005 = 0.002782777778 s.
    QCLOSE(allReduce(shape(2, 2, 1, 1), 1 * GB, kUp, kOut).time_s, 0.0027827777777778);
}

void TestCollectives::hierarchicalAllReduce() {
    // 1 GB over 8 nodes x 8 GPUs (n_l = 8, g = 8), NVLink 360 GB/s / 2.5 us, NIC 45 GB/s / 5 us.
    //   reduce-scatter inside: 7/8 * 1e9 / 360e9 = 0.002430555556 s + 7 * 2.5 us = 17.5 us
    //   all-gather inside:     the same                               -> 2 x 0.002448055556
    //   ring across 8 NICs of the 1e9/8 = 125 MB slice:
    //                          2*7/8 * 125e6 / 45e9 = 0.004861111111 s + 14 * 5 us = 70 us
    //   total = 0.004896111111 + 0.004931111111 = 0.009827222222 s
    //   NVLink bytes per GPU = 2 * 0.875e9 = 1.75e9; NIC bytes per GPU = 2*7/8 * 125e6 = 2.1875e8
    const CollectiveCost c = allReduce(shape(64, 8, 8, 8), 1 * GB, kUp, kOut);
    QCLOSE(c.time_s, 0.0098272222222222);
    QCLOSE(c.scale_up_bytes_per_gpu, 1.75e9);
    QCLOSE(c.scale_out_bytes_per_gpu, 2.1875e8);

    // One GPU per domain (n_l = 1): a flat ring over the 8 NICs.
    //   2*7/8 * 1e9 / 45e9 = 0.038888888889 s + 14 * 5 us = 0.038958888889 s, no NVLink bytes.
    const CollectiveCost flat = allReduce(shape(8, 1, 8, 8), 1 * GB, kUp, kOut);
    QCLOSE(flat.time_s, 0.0389588888888889);
    QCOMPARE(flat.scale_up_bytes_per_gpu, 0.0);
    QCLOSE(flat.scale_out_bytes_per_gpu, 1.75e9);

    // The hierarchy pays off: 8x8 hierarchical is ~4x faster than the flat ring over 8 NICs
    // that moves the whole buffer through each NIC.
    QVERIFY(c.time_s < flat.time_s);
}

void TestCollectives::reduceScatterAllGather() {
    // Ring reduce-scatter of 1 GB over 8 GPUs in a domain:
    //   7/8 * 1e9 / 360e9 = 0.002430555556 s + 7 * 2.5 us = 0.002448055556 s; 0.875e9 B sent.
    const CollectiveCost rs = reduceScatter(shape(8, 8, 1, 1), 1 * GB, kUp, kOut);
    QCLOSE(rs.time_s, 0.0024480555555556);
    QCLOSE(rs.scale_up_bytes_per_gpu, 0.875e9);
    QCOMPARE(rs.scale_out_bytes_per_gpu, 0.0);
    // A ring all-reduce is a reduce-scatter plus an all-gather of the same cost.
    QCLOSE(allReduce(shape(8, 8, 1, 1), 1 * GB, kUp, kOut).time_s, 2 * rs.time_s);

    // Across 8 nodes x 8 GPUs: reduce-scatter inside (as above, 0.002448055556 s), then
    // reduce-scatter of the 125 MB slice over 8 NICs:
    //   7/8 * 125e6 / 45e9 = 0.002430555556 s + 7 * 5 us = 0.002465555556 s
    //   total 0.004913611111 s; NVLink 0.875e9 B, NIC 7/8 * 125e6 = 1.09375e8 B per GPU.
    const CollectiveCost h = reduceScatter(shape(64, 8, 8, 8), 1 * GB, kUp, kOut);
    QCLOSE(h.time_s, 0.0049136111111111);
    QCLOSE(h.scale_up_bytes_per_gpu, 0.875e9);
    QCLOSE(h.scale_out_bytes_per_gpu, 1.09375e8);
    // The two phases together send exactly what a flat ring would: (n-1)/n * S = 63/64 GB.
    QCLOSE(h.scale_up_bytes_per_gpu + h.scale_out_bytes_per_gpu, 63.0 / 64.0 * GB);
    // And the hierarchical all-reduce is RS + AG of the same hierarchy (bytes), i.e. twice.
    const CollectiveCost ar = allReduce(shape(64, 8, 8, 8), 1 * GB, kUp, kOut);
    QCLOSE(ar.scale_up_bytes_per_gpu, 2 * h.scale_up_bytes_per_gpu);
    QCLOSE(ar.scale_out_bytes_per_gpu, 2 * h.scale_out_bytes_per_gpu);
    QCLOSE(ar.time_s, 2 * h.time_s);
}

void TestCollectives::allToAllOneNode() {
    // 8 GPUs in one node, each sends 1 GB in total (125 MB per member, itself included):
    //   NVLink bytes = 7/8 GB = 0.875e9; 0.875e9 / 360e9 = 0.002430555556 s
    //   one latency step (all peers at once) 2.5 us -> 0.002433055556 s.
    const CollectiveCost c = allToAll(shape(8, 8, 1, 1), 1 * GB, 1.0, kUp, kOut);
    QCLOSE(c.time_s, 0.0024330555555556);
    QCLOSE(c.scale_up_bytes_per_gpu, 0.875e9);
    QCOMPARE(c.scale_out_bytes_per_gpu, 0.0);
    // A factor below 1 is not a valid "max / mean" and counts as balanced.
    QCLOSE(allToAll(shape(8, 8, 1, 1), 1 * GB, 0.5, kUp, kOut).time_s, c.time_s);
    // A cross-domain override cannot add NIC traffic to a group that never leaves its domain.
    const CollectiveCost o = allToAll(shape(8, 8, 1, 1), 1 * GB, 1.0, kUp, kOut, 0.5 * GB);
    QCOMPARE(o.scale_out_bytes_per_gpu, 0.0);
    QCLOSE(o.time_s, c.time_s);
}

void TestCollectives::allToAllTwoNodesSkewed() {
    // 16 GPUs over 2 nodes of 8, each sends 1 GB (62.5 MB per member), busiest receiver 1.5x:
    //   NVLink share 7/16 GB = 0.4375e9; NIC share 8/16 GB = 0.5e9
    //   NVLink time 1.5 * 0.4375e9 / 360e9 = 0.001822916667 s
    //   NIC time    1.5 * 0.5e9 / 45e9     = 0.016666666667 s   <- sets the pace
    //   latency 2.5 us + 5 us              -> 0.016674166667 s
    const GroupShape g = shape(16, 8, 2, 2);
    const CollectiveCost c = allToAll(g, 1 * GB, 1.5, kUp, kOut);
    QCLOSE(c.time_s, 0.0166741666666667);
    QCLOSE(c.scale_up_bytes_per_gpu, 0.4375e9);
    QCLOSE(c.scale_out_bytes_per_gpu, 0.5e9);

    // Node-limited routing override of the NIC share, 0.25 GB:
    //   1.5 * 0.25e9 / 45e9 = 0.008333333333 s + 7.5 us = 0.008340833333 s.
    const CollectiveCost o = allToAll(g, 1 * GB, 1.5, kUp, kOut, 0.25 * GB);
    QCLOSE(o.time_s, 0.0083408333333333);
    QCLOSE(o.scale_out_bytes_per_gpu, 0.25e9);
    QCLOSE(o.scale_up_bytes_per_gpu, 0.4375e9);
    // A small enough override leaves NVLink as the bottleneck:
    //   max(0.001822916667, 1.5 * 0.01e9 / 45e9 = 0.000333) + 7.5 us = 0.001830416667 s.
    QCLOSE(allToAll(g, 1 * GB, 1.5, kUp, kOut, 0.01 * GB).time_s, 0.0018304166666667);
    // Override 0: no NIC bytes at all, but the group still spans nodes (latency stays).
    const CollectiveCost z = allToAll(g, 1 * GB, 1.5, kUp, kOut, 0.0);
    QCOMPARE(z.scale_out_bytes_per_gpu, 0.0);
    QCLOSE(z.time_s, 0.0018229166666667 + 7.5e-6);
    // With node-limited routing's NVLink forwarding as well: 1.4 GB over NVLink takes
    // 1.5 * 1.4e9 / 360e9 = 0.005833 s, below the NIC's 0.008333 s, which still sets the pace.
    const CollectiveCost fwd = allToAll(g, 1 * GB, 1.5, kUp, kOut, 0.25 * GB, 1.4 * GB);
    QCLOSE(fwd.scale_up_bytes_per_gpu, 1.4e9);
    QCLOSE(fwd.time_s, 0.0083408333333333);
    //   3 GB forwarded: 1.5 * 3e9 / 360e9 = 0.0125 s > 0.00833 s -> 0.0125 + 7.5 us.
    QCLOSE(allToAll(g, 1 * GB, 1.5, kUp, kOut, 0.25 * GB, 3 * GB).time_s, 0.0125075);
    // A group inside one domain ignores the forwarding override (nothing crosses to forward).
    QCLOSE(allToAll(shape(8, 8, 1, 1), 1 * GB, 1.0, kUp, kOut, 0.25 * GB, 3 * GB)
               .scale_up_bytes_per_gpu,
           0.875e9);

    // Skew scales the time, not the reported (mean) bytes: f = 1 gives 0.5e9/45e9 + 7.5 us.
    const CollectiveCost b = allToAll(g, 1 * GB, 1.0, kUp, kOut);
    QCLOSE(b.time_s, 0.0111111111111111 + 7.5e-6);
    QCLOSE(b.scale_out_bytes_per_gpu, c.scale_out_bytes_per_gpu);

    // One GPU per node (no NVLink peers): no NVLink latency, 7/8 over the NIC.
    //   8 GPUs, 1 GB: 0.875e9 / 45e9 = 0.019444444444 s + 5 us = 0.019449444444 s.
    QCLOSE(allToAll(shape(8, 1, 8, 8), 1 * GB, 1.0, kUp, kOut).time_s, 0.0194494444444444);
}

void TestCollectives::expectedRemoteNodes() {
    // Distinct targets of k uniform picks: 8 picks over 8 ranks, 8 (1 - (7/8)^8) = 5.25113;
    // over 32 ranks (DeepSeek-V3's 4 nodes of 8), (31/32)^8 = 0.775681 -> 32 x 0.224319 = 7.178;
    // 2 picks over 4: 4 (1 - 9/16) = 1.75; fractional targets allowed: 1 pick over 2.5 = 1.
    QCLOSE(expectedDistinctTargets(8, 8), 8 * 0.656391084194183);
    QCLOSE(expectedDistinctTargets(32, 8), 32 * (1 - std::pow(31.0 / 32.0, 8)));
    QVERIFY(std::abs(expectedDistinctTargets(32, 8) - 7.178) < 1e-3);
    QCLOSE(expectedDistinctTargets(4, 2), 1.75);
    QCLOSE(expectedDistinctTargets(2.5, 1), 1.0);
    QCOMPARE(expectedDistinctTargets(0, 8), 0.0);
    QCOMPARE(expectedDistinctTargets(8, 0), 0.0);
    // N = 8, k = 8, no limit: 7 * (1 - (7/8)^8); (7/8)^8 = 0.343608915805817
    //   -> 7 * 0.656391084194183 = 4.594737589359283 remote nodes per token.
    QCLOSE(expectedRemoteNodesPerToken(8, 8, 0), 4.5947375893592834);
    // Node-limited to M = 4 of 8 nodes: the own node is one of the 4 with probability 4/8,
    //   4 * 7/8 = 3.5 remote nodes (below the unlimited 4.59).
    QCLOSE(expectedRemoteNodesPerToken(8, 8, 4), 3.5);
    // M >= N is no limit.
    QCLOSE(expectedRemoteNodesPerToken(8, 8, 8), 4.5947375893592834);
    QCLOSE(expectedRemoteNodesPerToken(8, 8, 64), 4.5947375893592834);
    // k = 1: 7/8 of tokens go to another node; a limit of 4 nodes does not bind.
    QCLOSE(expectedRemoteNodesPerToken(8, 1, 0), 0.875);
    QCLOSE(expectedRemoteNodesPerToken(8, 1, 4), 0.875);
    // N = 2, k = 8: 1 - (1/2)^8 = 0.99609375 (the other node is almost always hit).
    QCLOSE(expectedRemoteNodesPerToken(2, 8, 0), 0.99609375);
    QCLOSE(expectedRemoteNodesPerToken(2, 8, 4), 0.99609375);
    // DeepSeek-V3's EP64 over 8 nodes, top-8, M = 4: 3.5 copies cross the fabric instead of
    // the 7 of 8 picks = 7 that plain top-8 over 8 nodes would average (8 * 7/8).
    QVERIFY(expectedRemoteNodesPerToken(8, 8, 4) < 8 * 7.0 / 8.0);
    // Never more remote nodes than picks or than other nodes.
    for (int n = 1; n <= 64; n *= 2)
        for (int k = 1; k <= 16; ++k) {
            const double r = expectedRemoteNodesPerToken(n, k, 0);
            QVERIFY(r >= 0 && r <= k && r <= n - 1);
            QVERIFY(expectedRemoteNodesPerToken(n, k, 4) <= r + 1e-12);
        }
    // Degenerate: one node, no nodes, no picks.
    QCOMPARE(expectedRemoteNodesPerToken(1, 8, 0), 0.0);
    QCOMPARE(expectedRemoteNodesPerToken(0, 8, 4), 0.0);
    QCOMPARE(expectedRemoteNodesPerToken(8, 0, 0), 0.0);
}

void TestCollectives::sendRecv() {
    // 100 MB over a 45 GB/s NIC with 5 us latency: 0.1e9 / 45e9 = 0.002222222222 + 5 us.
    QCLOSE(sendRecvTime_s(0.1 * GB, kOut), 0.0022272222222222);
    // Over NVLink: 0.1e9 / 360e9 = 0.000277777778 + 2.5 us = 0.000280277778 s.
    QCLOSE(sendRecvTime_s(0.1 * GB, kUp), 0.0002802777777778);
    QCOMPARE(sendRecvTime_s(0, kOut), 0.0);
}

void TestCollectives::degenerateCases() {
    const GroupShape one = shape(1, 1, 1, 1);
    for (const CollectiveCost& c :
         {allReduce(one, GB, kUp, kOut), reduceScatter(one, GB, kUp, kOut),
          allToAll(one, GB, 2.0, kUp, kOut), allToAll(one, GB, 2.0, kUp, kOut, GB)}) {
        QCOMPARE(c.time_s, 0.0);
        QCOMPARE(c.scale_up_bytes_per_gpu, 0.0);
        QCOMPARE(c.scale_out_bytes_per_gpu, 0.0);
    }
    // Zero (or negative) bytes: nothing is launched, not even a latency.
    const GroupShape big = shape(64, 8, 8, 8);
    for (double bytes : {0.0, -5.0}) {
        for (const CollectiveCost& c :
             {allReduce(big, bytes, kUp, kOut), reduceScatter(big, bytes, kUp, kOut),
              allToAll(big, bytes, 1.5, kUp, kOut)}) {
            QCOMPARE(c.time_s, 0.0);
            QCOMPARE(c.scale_up_bytes_per_gpu, 0.0);
            QCOMPARE(c.scale_out_bytes_per_gpu, 0.0);
        }
    }
    // Zero bandwidth with zero bytes: 0, not 0/0.
    const LinkParams dead{0.0, 0.0};
    QCOMPARE(allReduce(big, 0.0, dead, dead).time_s, 0.0);
    QCOMPARE(sendRecvTime_s(0.0, dead), 0.0);
    // Zero bandwidth with bytes to move: infinitely slow, never NaN.
    const CollectiveCost inf = allReduce(big, GB, kUp, dead);
    QVERIFY(noNan(inf));
    QVERIFY(std::isinf(inf.time_s));
    QVERIFY(std::isinf(sendRecvTime_s(GB, dead)));
    // A skew factor of NaN counts as balanced.
    const CollectiveCost nanf = allToAll(shape(16, 8, 2, 2), GB, std::nan(""), kUp, kOut);
    QVERIFY(noNan(nanf));
    QCLOSE(nanf.time_s, allToAll(shape(16, 8, 2, 2), GB, 1.0, kUp, kOut).time_s);
    // Inconsistent shapes are repaired, not trusted: 8 GPUs "per domain" in a group of 4 is a
    // 4-GPU single-domain ring (2*3/4 * 1e9 / 360e9 + 6 * 2.5 us = 0.004181666667 s).
    QCLOSE(allReduce(shape(4, 8, 3, 1), GB, kUp, kOut).time_s, 0.0041816666666667);
    QCOMPARE(allReduce(shape(4, 8, 3, 1), GB, kUp, kOut).scale_out_bytes_per_gpu, 0.0);
    QVERIFY(noNan(allReduce(shape(0, 0, 0, 0), GB, kUp, kOut)));
    QCOMPARE(allReduce(shape(0, 0, 0, 0), GB, kUp, kOut).time_s, 0.0);
}

void TestCollectives::monotonicity() {
    const std::vector<GroupShape> shapes = {shape(8, 8, 1, 1),    shape(64, 8, 8, 8),
                                            shape(8, 1, 8, 8),    shape(16, 8, 2, 2),
                                            shape(72, 72, 1, 18), shape(256, 4, 64, 64)};
    const std::vector<double> sizes = {1e3, 1e6, 1e9};
    const std::vector<double> scales = {0.25, 0.5, 1, 2, 4, 8};
    auto all = [](const GroupShape& g, double s, const LinkParams& u, const LinkParams& o) {
        return std::vector<double>{allReduce(g, s, u, o).time_s, reduceScatter(g, s, u, o).time_s,
                                   allToAll(g, s, 1.3, u, o).time_s,
                                   allToAll(g, s, 1.3, u, o, s / 4).time_s};
    };
    for (const GroupShape& g : shapes)
        for (double s : sizes) {
            std::vector<double> prev_up, prev_out;
            for (double k : scales) {
                // More bandwidth on one link class never makes any collective slower.
                const auto t_up =
                    all(g, s, LinkParams{kUp.bandwidth_gbps * k, kUp.latency_us}, kOut);
                const auto t_out =
                    all(g, s, kUp, LinkParams{kOut.bandwidth_gbps * k, kOut.latency_us});
                for (size_t i = 0; i < t_up.size(); ++i) {
                    QVERIFY(std::isfinite(t_up[i]) && t_up[i] > 0);
                    if (!prev_up.empty()) {
                        QVERIFY(t_up[i] <= prev_up[i]);
                        QVERIFY(t_out[i] <= prev_out[i]);
                    }
                }
                prev_up = t_up;
                prev_out = t_out;
            }
            // More bytes, more latency or more skew never makes anything faster.
            const auto base = all(g, s, kUp, kOut);
            const auto more = all(g, 2 * s, kUp, kOut);
            const auto slow = all(g, s, LinkParams{kUp.bandwidth_gbps, 10}, LinkParams{45, 20});
            for (size_t i = 0; i < base.size(); ++i) {
                QVERIFY(more[i] >= base[i]);
                QVERIFY(slow[i] >= base[i]);
            }
            QVERIFY(allToAll(g, s, 2.0, kUp, kOut).time_s >= allToAll(g, s, 1.0, kUp, kOut).time_s);
        }
}

void TestCollectives::linkBytesRailOptimized() {
    // 2 nodes x 4 GPUs, 4 NICs per node, rail-optimized: one rail group of 4 rail leaves
    // (leaf r holds NIC r of both nodes), 2 spines, each leaf with 2 uplinks.
    const HardwareGraph graph =
        buildHardwareGraph(smallCluster(2, FabricTopology::rail_optimized, 0));
    QCOMPARE(graph.gpuCount(), 8);
    QCOMPARE(graph.leaves, 4);
    QCOMPARE(graph.spines, 2);
    for (int leaf = 0; leaf < 4; ++leaf)
        QCOMPARE(graph.leaf_spine_links_count[leaf], 2);

    const double U = 7e8, O = 8e8;
    auto kindSum = [&](const std::vector<double>& bytes, LinkKind kind) {
        double s = 0;
        for (size_t l = 0; l < graph.links.size(); ++l)
            if (graph.links[l].kind == kind)
                s += bytes[l];
        return s;
    };

    // EP group of all 8 GPUs. GPU 0 (node 0, rail leaf 0) has 4 remote peers, GPUs 4-7, on rail
    // leaves 0, 1, 2, 3: 3/4 of its NIC bytes climb to the spines. Each leaf has 2 such members,
    // so it sends 2 * 3/4 * O = 1.5 O up, 0.75 O on each of its 2 uplinks.
    {
        std::vector<double> bytes; // empty: addLinkBytes sizes it
        addLinkBytes(graph, groupOf({0, 1, 2, 3, 4, 5, 6, 7}), U, O, bytes);
        QCOMPARE(bytes.size(), graph.links.size());
        for (int gpu = 0; gpu < 8; ++gpu) {
            QCOMPARE(bytes[graph.gpu_scale_up_link[gpu]], U);
            QCOMPARE(bytes[graph.gpu_nic_link[gpu]], O);
        }
        for (int nic = 0; nic < graph.nics; ++nic)
            QCOMPARE(bytes[graph.nic_leaf_link[nic]], O);
        for (int leaf = 0; leaf < 4; ++leaf)
            for (int j = 0; j < 2; ++j)
                QCLOSE(bytes[graph.leaf_spine_links_begin[leaf] + j], 0.75 * O);
        QCLOSE(kindSum(bytes, LinkKind::leaf_spine), 8 * 0.75 * O);
        QCLOSE(kindSum(bytes, LinkKind::scale_up), 8 * U);
    }
    // A DP pair on the same rail (GPU 0 and GPU 4): the NIC traffic stays under rail leaf 0.
    {
        std::vector<double> bytes(graph.links.size(), 0.0);
        addLinkBytes(graph, groupOf({0, 4}), 0, O, bytes);
        QCOMPARE(bytes[graph.gpu_nic_link[0]], O);
        QCOMPARE(bytes[graph.gpu_nic_link[4]], O);
        QCOMPARE(kindSum(bytes, LinkKind::nic_leaf), 2 * O);
        QCOMPARE(kindSum(bytes, LinkKind::leaf_spine), 0.0);
        QCOMPARE(kindSum(bytes, LinkKind::scale_up), 0.0); // no NVLink bytes were given
    }
    // Across rails (GPU 0 on rail 0, GPU 5 on rail 1): everything crosses the spines, O/2 per
    // uplink of leaves 0 and 1; leaves 2 and 3 stay idle. Loads accumulate over calls.
    {
        std::vector<double> bytes(graph.links.size(), 1.0);
        addLinkBytes(graph, groupOf({0, 5}), 0, O, bytes);
        addLinkBytes(graph, groupOf({0, 5}), 0, O, bytes);
        for (int leaf = 0; leaf < 4; ++leaf)
            for (int j = 0; j < 2; ++j)
                QCOMPARE(bytes[graph.leaf_spine_links_begin[leaf] + j], leaf < 2 ? 1.0 + O : 1.0);
        QCOMPARE(bytes[graph.gpu_nic_link[5]], 1.0 + 2 * O);
    }
    // GPUs outside the graph are ignored; nothing at all is a no-op.
    {
        std::vector<double> bytes(graph.links.size(), 0.0);
        addLinkBytes(graph, groupOf({0, 1, 99, -1}), U, O, bytes);
        QCOMPARE(kindSum(bytes, LinkKind::scale_up), 2 * U);
        QCOMPARE(kindSum(bytes, LinkKind::leaf_spine), 0.0); // GPUs 0 and 1 share a domain
        std::vector<double> none(graph.links.size(), 0.0);
        addLinkBytes(graph, groupOf({0, 1, 2, 3, 4, 5, 6, 7}), 0, 0, none);
        for (double b : none)
            QCOMPARE(b, 0.0);
    }
}

void TestCollectives::linkBytesFatTree() {
    // 4 nodes x 4 GPUs, fat tree with 2 nodes per leaf: leaf 0 = nodes 0-1, leaf 1 = nodes 2-3,
    // one spine, one uplink per leaf.
    const HardwareGraph graph = buildHardwareGraph(smallCluster(4, FabricTopology::fat_tree, 2));
    QCOMPARE(graph.leaves, 2);
    QCOMPARE(graph.spines, 1);
    QCOMPARE(graph.leaf_spine_links_count[0], 1);
    QCOMPARE(graph.leaf_spine_links_count[1], 1);

    // EP group of 2 GPUs per node on all 4 nodes: {0,1, 4,5, 8,9, 12,13}. GPU 0 has 6 remote
    // peers (4,5 under its own leaf; 8,9,12,13 under leaf 1), so 4/6 of its NIC bytes go up.
    // Leaf 0 has 4 members: 4 * 2/3 * O = 8/3 O on its single uplink; leaf 1 the same.
    const double O = 6e8;
    std::vector<double> bytes;
    addLinkBytes(graph, groupOf({0, 1, 4, 5, 8, 9, 12, 13}), 0, O, bytes);
    QCLOSE(bytes[graph.leaf_spine_links_begin[0]], 8.0 / 3.0 * O);
    QCLOSE(bytes[graph.leaf_spine_links_begin[1]], 8.0 / 3.0 * O);
    // Fat tree: a node's 4 NICs share its leaf; GPUs 2, 3 are not members and carry nothing.
    QCOMPARE(bytes[graph.gpu_nic_link[0]], O);
    QCOMPARE(bytes[graph.gpu_nic_link[2]], 0.0);
}

// Cross-check against the graph's own routes: every member sends equal shares of its NIC bytes
// to each remote peer (and of its NVLink bytes to each domain peer); routing each (src, dst)
// pair loads every link on the path once as sent and once as received, so per link kind the
// routed total is twice addLinkBytes' per-direction total. Per leaf, what its members send up
// must equal what its members receive from other leaves, and all NIC bytes sent are received.
void TestCollectives::linkBytesConservation() {
    struct Case {
        ClusterSpec cluster;
        std::vector<int> gpus;
    };
    std::vector<int> all8 = {0, 1, 2, 3, 4, 5, 6, 7};
    std::vector<int> mixed = {0, 1, 4, 5, 8, 9, 12, 13};
    std::vector<int> uneven = {0, 1, 2, 5, 10, 11, 15};
    const std::vector<Case> cases = {
        {smallCluster(2, FabricTopology::rail_optimized, 0), all8},
        {smallCluster(4, FabricTopology::fat_tree, 2), mixed},
        {smallCluster(4, FabricTopology::rail_optimized, 2), mixed},
        {smallCluster(4, FabricTopology::rail_optimized, 2), uneven},
        {smallCluster(4, FabricTopology::fat_tree, 1), uneven},
    };
    const double S = 1.6e9; // all-to-all bytes sent per GPU
    for (const Case& tc : cases) {
        const HardwareGraph graph = buildHardwareGraph(tc.cluster);
        const int n = static_cast<int>(tc.gpus.size());
        // Uniform all-to-all: every member sends S/n to every other member.
        std::vector<double> routed(graph.links.size(), 0.0);
        std::vector<double> ours(graph.links.size(), 0.0);
        double nic_sent = 0;
        std::map<int, double> leaf_up_sent, leaf_down_received;
        auto leafOf = [&](int gpu) {
            return graph.nic_leaf[graph.vertices[graph.gpu_nic_vertex[gpu]].index];
        };
        for (int src : tc.gpus) {
            for (int dst : tc.gpus) {
                if (dst == src)
                    continue;
                for (int l : graph.route(src, dst))
                    routed[l] += S / n;
                if (graph.domainOf(dst) != graph.domainOf(src)) {
                    nic_sent += S / n;
                    if (leafOf(dst) != leafOf(src)) {
                        leaf_up_sent[leafOf(src)] += S / n;
                        leaf_down_received[leafOf(dst)] += S / n;
                    }
                }
            }
        }
        // addLinkBytes takes one byte count for all members, which is exact when every member
        // has the same number of remote peers; the uneven group only checks the pair sums.
        bool symmetric = true;
        int remote0 = -1;
        for (int src : tc.gpus) {
            int remote = 0;
            for (int dst : tc.gpus)
                remote += graph.domainOf(dst) != graph.domainOf(src);
            symmetric = symmetric && (remote0 < 0 || remote == remote0);
            remote0 = remote;
        }
        // What a leaf sends up comes down at the other leaves, and vice versa.
        for (const auto& [leaf, sent] : leaf_up_sent)
            QCLOSE(leaf_down_received[leaf], sent);

        if (!symmetric)
            continue;
        const GroupShape g = [&] {
            std::map<int, int> per_domain;
            for (int gpu : tc.gpus)
                ++per_domain[graph.domainOf(gpu)];
            int most = 0;
            for (const auto& [d, c] : per_domain)
                most = std::max(most, c);
            return shape(n, most, static_cast<int>(per_domain.size()), 0);
        }();
        const CollectiveCost c = allToAll(g, S, 1.0, kUp, kOut);
        addLinkBytes(graph, groupOf(tc.gpus), c.scale_up_bytes_per_gpu, c.scale_out_bytes_per_gpu,
                     ours);
        std::map<LinkKind, double> routed_sum, ours_sum;
        for (size_t l = 0; l < graph.links.size(); ++l) {
            routed_sum[graph.links[l].kind] += routed[l];
            ours_sum[graph.links[l].kind] += ours[l];
        }
        // Sum over GPU-NIC links == sum of NIC bytes sent == received.
        QCLOSE(ours_sum[LinkKind::gpu_nic], nic_sent);
        QCLOSE(ours_sum[LinkKind::gpu_nic], c.scale_out_bytes_per_gpu * n);
        for (LinkKind k :
             {LinkKind::scale_up, LinkKind::gpu_nic, LinkKind::nic_leaf, LinkKind::leaf_spine})
            QVERIFY2(close(routed_sum[k], 2 * ours_sum[k]),
                     qPrintable(QString("%1: routed %2 vs 2 x %3")
                                    .arg(toString(k))
                                    .arg(routed_sum[k], 0, 'g', 12)
                                    .arg(ours_sum[k], 0, 'g', 12)));
        // Per leaf: the uplinks carry what the leaf sends up, which equals what it receives.
        for (int leaf = 0; leaf < graph.leaves; ++leaf) {
            double up = 0;
            for (int j = 0; j < graph.leaf_spine_links_count[leaf]; ++j)
                up += ours[graph.leaf_spine_links_begin[leaf] + j];
            QCLOSE(up, leaf_up_sent[leaf]);
            QCLOSE(up, leaf_down_received[leaf]);
        }
    }
}

QTEST_GUILESS_MAIN(TestCollectives)
#include "test_collectives.moc"
