// The hardware graph: vertex and link counts, link bandwidths and routes, each derived by hand
// from the fabric rules in core/src/hardware/topology.cpp (64-port leaves and spines, half the leaf
// ports down; rail-optimized leaves take 32 nodes, fat-tree leaves 32 NICs).
#include "moe/link_load.h"
#include "moe/topology.h"
#include "test_support.h"

#include <QtTest>

#include <algorithm>
#include <vector>

using namespace moe;

namespace {

/// GB200 NVL72-like racks: 18 compute trays of 4 GPUs share one NVLink domain.
ClusterSpec gb200Racks(int racks) {
    ClusterSpec c;
    c.gpu.scale_up_fabric = "NVLink";
    c.gpu.scale_up_gbps = 900;
    c.gpu.scale_up_latency_us = 3;
    c.nodes = 18 * racks;
    c.gpus_per_node = 4;
    c.nodes_per_rack = 18;
    c.scale_up_domain = ScaleUpDomain::rack;
    c.nics_per_node = 4;
    c.nic.bandwidth_gbps = 48;
    c.nic.latency_us = 4;
    return c;
}

int countVertices(const HardwareGraph& g, VertexKind k) {
    return static_cast<int>(std::count_if(g.vertices.begin(), g.vertices.end(),
                                          [k](const Vertex& v) { return v.kind == k; }));
}

int countLinks(const HardwareGraph& g, LinkKind k) {
    return static_cast<int>(
        std::count_if(g.links.begin(), g.links.end(), [k](const Link& l) { return l.kind == k; }));
}

std::vector<LinkKind> kinds(const HardwareGraph& g, const std::vector<int>& path) {
    std::vector<LinkKind> out;
    for (int id : path)
        out.push_back(g.links[id].kind);
    return out;
}

/// True when the links of `path` walk from the source GPU to the destination GPU.
bool walks(const HardwareGraph& g, int src, int dst, const std::vector<int>& path) {
    int at = g.gpu_vertex[src];
    for (int id : path) {
        const Link& l = g.links[id];
        if (l.a == at)
            at = l.b;
        else if (l.b == at)
            at = l.a;
        else
            return false;
    }
    return at == g.gpu_vertex[dst];
}

const std::vector<LinkKind> kSameDomain{LinkKind::scale_up, LinkKind::scale_up};
const std::vector<LinkKind> kOneLeaf{LinkKind::gpu_nic, LinkKind::nic_leaf, LinkKind::nic_leaf,
                                     LinkKind::gpu_nic};
const std::vector<LinkKind> kViaSpine{LinkKind::gpu_nic,    LinkKind::nic_leaf,
                                      LinkKind::leaf_spine, LinkKind::leaf_spine,
                                      LinkKind::nic_leaf,   LinkKind::gpu_nic};

} // namespace

class TestTopology : public QObject {
    Q_OBJECT
private slots:
    void railOptimized8x8() {
        ClusterSpec c = test::h100Nodes(8);
        c.nodes_per_rack = 4;
        const HardwareGraph g = buildHardwareGraph(c);
        // 64 GPUs, 8 NVSwitches, 64 NICs, 8 rail leaves (one group of 8 nodes), and
        // ceil(8 leaves * 32 up ports / 64) = 4 spines.
        QCOMPARE(g.gpuCount(), 64);
        QCOMPARE(countVertices(g, VertexKind::gpu), 64);
        QCOMPARE(countVertices(g, VertexKind::scale_up_switch), 8);
        QCOMPARE(countVertices(g, VertexKind::nic), 64);
        QCOMPARE(countVertices(g, VertexKind::leaf_switch), 8);
        QCOMPARE(countVertices(g, VertexKind::spine_switch), 4);
        QCOMPARE(static_cast<int>(g.vertices.size()), 148);
        QCOMPARE(g.scale_up_switches, 8);
        QCOMPARE(g.nics, 64);
        QCOMPARE(g.leaves, 8);
        QCOMPARE(g.spines, 4);
        // Every leaf reaches all 4 spines: 32 uplinks; 64 + 64 + 64 + 32 links in all.
        QCOMPARE(countLinks(g, LinkKind::scale_up), 64);
        QCOMPARE(countLinks(g, LinkKind::gpu_nic), 64);
        QCOMPARE(countLinks(g, LinkKind::nic_leaf), 64);
        QCOMPARE(countLinks(g, LinkKind::leaf_spine), 32);
        QCOMPARE(static_cast<int>(g.links.size()), 224);
        // A rail leaf has 8 downlinks of 48 GB/s = 384 GB/s, spread over 4 uplinks of 96 GB/s.
        for (int leaf = 0; leaf < g.leaves; ++leaf) {
            QCOMPARE(g.leaf_spine_links_count[leaf], 4);
            for (int i = 0; i < 4; ++i)
                QCOMPARE(g.links[g.leaf_spine_links_begin[leaf] + i].bandwidth_gbps, 96.0);
        }
        // GPU 29 = node 3, local GPU 5, in rack 0 (4 nodes per rack); it sends on NIC 5 (rail 5).
        QCOMPARE(g.vertices[g.gpu_vertex[29]].label, std::string("rack0/node3/gpu5"));
        QCOMPARE(g.vertices[g.gpu_vertex[29]].domain, 3);
        QCOMPARE(g.vertices[g.gpu_nic_vertex[29]].label, std::string("node3/nic5"));
        QCOMPARE(g.vertices[g.gpu_nic_vertex[29]].rail, 5);
        const int nic29 = g.vertices[g.gpu_nic_vertex[29]].index;
        QCOMPARE(nic29, 29);
        QCOMPARE(g.nic_leaf[nic29], 5);
        const Link& up = g.links[g.nic_leaf_link[nic29]];
        QCOMPARE(g.vertices[up.b].label, std::string("leaf-rail5-g0"));
        QCOMPARE(up.bandwidth_gbps, 48.0);
        QCOMPARE(up.latency_us, 2.0); // half the NIC latency on each side of the leaf
        const Link& nvl = g.links[g.gpu_scale_up_link[29]];
        QCOMPARE(g.vertices[nvl.b].label, std::string("node3/nvswitch"));
        QCOMPARE(nvl.bandwidth_gbps, 450.0);
        QCOMPARE(nvl.linkClass(), LinkClass::scale_up);
        QCOMPARE(g.links[g.gpu_nic_link[29]].bandwidth_gbps, 64.0);
        QCOMPARE(g.links[g.gpu_nic_link[29]].linkClass(), LinkClass::scale_out);
    }

    void railOptimizedRoutes() {
        const HardwareGraph g = buildHardwareGraph(test::h100Nodes(8));
        QVERIFY(g.route(5, 5).empty());
        // Same node: GPU -> NVSwitch -> GPU.
        const auto same = g.route(0, 7);
        QCOMPARE(kinds(g, same), kSameDomain);
        QCOMPARE(same, (std::vector<int>{g.gpu_scale_up_link[0], g.gpu_scale_up_link[7]}));
        QVERIFY(walks(g, 0, 7, same));
        // GPU 0 (node 0) and GPU 8 (node 1) are both local GPU 0: rail 0, same rail leaf.
        const auto rail = g.route(0, 8);
        QCOMPARE(kinds(g, rail), kOneLeaf);
        QVERIFY(walks(g, 0, 8, rail));
        // GPU 9 is on rail 1: the simple path climbs to a spine (no PXN).
        const auto cross = g.route(0, 9);
        QCOMPARE(kinds(g, cross), kViaSpine);
        QVERIFY(walks(g, 0, 9, cross));
        QCOMPARE(g.links[cross[2]].b, g.links[cross[3]].b);
        // The reverse direction uses the same spine.
        const auto back = g.route(9, 0);
        QCOMPARE(g.links[back[2]].b, g.links[cross[2]].b);
        // Out-of-range GPUs give no route rather than a crash.
        QVERIFY(g.route(0, 64).empty());
        QVERIFY(g.route(-1, 3).empty());
    }

    void fatTreeOversubscription() {
        ClusterSpec c = test::h100Nodes(8);
        c.fabric_topology = FabricTopology::fat_tree;
        const HardwareGraph full = buildHardwareGraph(c);
        // 32 / 8 NICs = 4 nodes per leaf: 2 leaves, ceil(2 * 32 / 64) = 1 spine.
        QCOMPARE(full.leaves, 2);
        QCOMPARE(full.spines, 1);
        QCOMPARE(static_cast<int>(full.vertices.size()), 64 + 8 + 64 + 2 + 1);
        QCOMPARE(static_cast<int>(full.links.size()), 64 + 64 + 64 + 2);
        QCOMPARE(full.nic_leaf[31], 0); // NIC 31 = node 3
        QCOMPARE(full.nic_leaf[32], 1); // NIC 32 = node 4
        QCOMPARE(full.vertices[full.links[full.nic_leaf_link[32]].b].label, std::string("leaf1"));
        // A leaf's 32 NICs x 48 GB/s = 1536 GB/s leave on one uplink to the one spine.
        QCOMPARE(full.leaf_spine_links_count[0], 1);
        QCOMPARE(full.links[full.leaf_spine_links_begin[0]].bandwidth_gbps, 1536.0);

        c.oversubscription = 2;
        const HardwareGraph half = buildHardwareGraph(c);
        QCOMPARE(half.links.size(), full.links.size());
        QCOMPARE(half.links[half.leaf_spine_links_begin[0]].bandwidth_gbps, 768.0);
        QCOMPARE(half.links[half.leaf_spine_links_begin[1]].bandwidth_gbps, 768.0);

        // Nodes 0 and 1 share leaf 0 whatever the NIC: no spine, even across "rails".
        QCOMPARE(kinds(half, half.route(0, 9)), kOneLeaf);
        QVERIFY(walks(half, 0, 9, half.route(0, 9)));
        // Node 4 hangs off leaf 1.
        QCOMPARE(kinds(half, half.route(0, 32)), kViaSpine);
        QVERIFY(walks(half, 0, 32, half.route(0, 32)));

        // Two nodes per leaf: 4 leaves, ceil(4 * 32 / 64) = 2 spines, every leaf on both;
        // 16 NICs x 48 / 2 (oversubscription) / 2 uplinks = 192 GB/s each.
        c.nodes_per_leaf = 2;
        const HardwareGraph small = buildHardwareGraph(c);
        QCOMPARE(small.leaves, 4);
        QCOMPARE(small.spines, 2);
        QCOMPARE(countLinks(small, LinkKind::leaf_spine), 8);
        QCOMPARE(small.links[small.leaf_spine_links_begin[3]].bandwidth_gbps, 192.0);
    }

    void rackDomainOneRack() {
        const HardwareGraph g = buildHardwareGraph(gb200Racks(1));
        // 72 GPUs share one NVSwitch domain; 4 rails x 1 group = 4 leaves, 2 spines.
        QCOMPARE(g.gpuCount(), 72);
        QCOMPARE(g.gpus_per_domain, 72);
        QCOMPARE(g.scale_up_switches, 1);
        QCOMPARE(g.leaves, 4);
        QCOMPARE(g.spines, 2);
        QCOMPARE(static_cast<int>(g.vertices.size()), 72 + 1 + 72 + 4 + 2);
        QCOMPARE(static_cast<int>(g.links.size()), 72 + 72 + 72 + 4 * 2);
        const int sw = g.links[g.gpu_scale_up_link[0]].b;
        QCOMPARE(g.vertices[sw].label, std::string("rack0/nvswitch"));
        for (int gpu = 0; gpu < 72; ++gpu)
            QCOMPARE(g.links[g.gpu_scale_up_link[gpu]].b, sw);
        QCOMPARE(g.links[g.gpu_scale_up_link[0]].bandwidth_gbps, 900.0);
        // GPU 0 (node 0) and GPU 71 (node 17) talk over NVLink.
        QCOMPARE(kinds(g, g.route(0, 71)), kSameDomain);
        QVERIFY(walks(g, 0, 71, g.route(0, 71)));
        // 18 nodes x 48 GB/s per rail leaf over 2 uplinks = 432 GB/s each.
        QCOMPARE(g.links[g.leaf_spine_links_begin[0]].bandwidth_gbps, 432.0);
    }

    void rackDomainTwoRacks() {
        const HardwareGraph g = buildHardwareGraph(gb200Racks(2));
        // 36 nodes: rail groups of 32 and 4 nodes, so 4 rails x 2 groups = 8 leaves, 4 spines.
        QCOMPARE(g.gpuCount(), 144);
        QCOMPARE(g.scale_up_switches, 2);
        QCOMPARE(g.leaves, 8);
        QCOMPARE(g.spines, 4);
        QCOMPARE(g.domainOf(71), 0);
        QCOMPARE(g.domainOf(72), 1);
        QCOMPARE(g.rackOf(72), 1);
        QCOMPARE(g.vertices[g.links[g.gpu_scale_up_link[72]].b].label,
                 std::string("rack1/nvswitch"));
        // Group-0 leaves carry 32 nodes, group-1 leaves 4: 32 * 48 / 4 and 4 * 48 / 4 GB/s.
        QCOMPARE(g.links[g.leaf_spine_links_begin[0]].bandwidth_gbps, 384.0);
        QCOMPARE(g.links[g.leaf_spine_links_begin[4]].bandwidth_gbps, 48.0);
        QCOMPARE(g.vertices[g.links[g.leaf_spine_links_begin[4]].a].label,
                 std::string("leaf-rail0-g1"));
        // GPU 72 = node 18, rail 0, group 0: same rail leaf as GPU 0.
        QCOMPARE(kinds(g, g.route(0, 72)), kOneLeaf);
        // GPU 128 = node 32, rail 0, group 1: another leaf, through a spine.
        QCOMPARE(kinds(g, g.route(0, 128)), kViaSpine);
        QVERIFY(walks(g, 0, 128, g.route(0, 128)));
    }

    // cluster.rack_nodes: racks hold consecutive nodes in the listed counts; the rest of the
    // nodes fill further racks of nodes_per_rack.
    void unevenRacks() {
        ClusterSpec c = test::h100Nodes(8);
        c.nodes_per_rack = 4;
        c.rack_nodes = {3, 1};
        QCOMPARE(c.nodesInRacks(), (std::vector<int>{3, 1, 4}));
        QCOMPARE(c.rackCount(), 3);
        const HardwareGraph g = buildHardwareGraph(c);
        QCOMPARE(g.rackCount(), 3);
        QCOMPARE(g.rack_first_node, (std::vector<int>{0, 3, 4, 8}));
        QCOMPARE(g.nodesInRack(1), 1);
        QCOMPARE(g.rackOf(3 * 8 - 1), 0); // last GPU of node 2
        QCOMPARE(g.rackOf(3 * 8), 1);     // node 3 is rack 1 alone
        QCOMPARE(g.rackOf(4 * 8), 2);
        QCOMPARE(g.vertices[g.gpu_vertex[4 * 8]].label, std::string("rack2/node4/gpu0"));
        // Rack membership does not move a node on the fabric: same leaves, same routes.
        ClusterSpec even = c;
        even.rack_nodes.clear();
        const HardwareGraph e = buildHardwareGraph(even);
        QCOMPARE(g.links.size(), e.links.size());
        QCOMPARE(kinds(g, g.route(0, 63)), kinds(e, e.route(0, 63)));
        QCOMPARE(e.rack_first_node, (std::vector<int>{0, 4, 8}));
        QCOMPARE(c.describeRacks(), std::string("3 racks (3 + 1 + 4 nodes, up to 4 each)"));
        QCOMPARE(even.describeRacks(), std::string("2 racks of 4 nodes"));
        // Default fill: the last rack is partial.
        c.rack_nodes.clear();
        c.nodes = 6;
        QCOMPARE(c.nodesInRacks(), (std::vector<int>{4, 2}));
        c.nodes = 2051;
        c.nodes_per_rack = 8;
        QCOMPARE(c.describeRacks(), std::string("257 racks (256 x 8 + 3 nodes, up to 8 each)"));
        c.nodes = 1;
        QCOMPARE(c.describeRacks(), std::string("1 rack of 1 node (room for 8)"));
        c.nodes = 12;
        c.nodes_per_rack = 4;
        c.rack_nodes = {3, 3, 3, 3};
        QCOMPARE(c.describeRacks(), std::string("4 racks of 3 nodes (room for 4)"));
    }

    void singleNodeHasNoFabric() {
        const HardwareGraph g = buildHardwareGraph(test::h100Nodes(1));
        QCOMPARE(g.gpuCount(), 8);
        QCOMPARE(g.leaves, 0);
        QCOMPARE(g.spines, 0);
        QCOMPARE(static_cast<int>(g.vertices.size()), 8 + 1 + 8);
        QCOMPARE(static_cast<int>(g.links.size()), 8 + 8);
        QCOMPARE(static_cast<int>(g.nic_leaf_link.size()), 8);
        for (int nic = 0; nic < 8; ++nic) {
            QCOMPARE(g.nic_leaf_link[nic], -1);
            QCOMPARE(g.nic_leaf[nic], -1);
        }
        QCOMPARE(kinds(g, g.route(0, 7)), kSameDomain);
    }

    void sharedNicsAndLoneGpus() {
        // 2 NICs for 8 GPUs: local GPUs 0-3 send on NIC 0, 4-7 on NIC 1.
        ClusterSpec c = test::h100Nodes(4);
        c.nics_per_node = 2;
        const HardwareGraph g = buildHardwareGraph(c);
        QCOMPARE(g.vertices[g.gpu_nic_vertex[3]].index, 0);
        QCOMPARE(g.vertices[g.gpu_nic_vertex[4]].index, 1);
        QCOMPARE(g.vertices[g.gpu_nic_vertex[13]].index, 3); // node 1, local 5
        QCOMPARE(g.vertices[g.gpu_nic_vertex[13]].label, std::string("node1/nic1"));
        // 2 rail leaves of 4 nodes each, 1 spine: uplink 4 * 48 = 192 GB/s.
        QCOMPARE(g.leaves, 2);
        QCOMPARE(g.spines, 1);
        QCOMPARE(static_cast<int>(g.vertices.size()), 32 + 4 + 8 + 2 + 1);
        QCOMPARE(static_cast<int>(g.links.size()), 32 + 32 + 8 + 2);
        QCOMPARE(g.links[g.leaf_spine_links_begin[1]].bandwidth_gbps, 192.0);

        // One GPU per node: no NVSwitch, no scale-up link.
        ClusterSpec lone = test::h100Nodes(4);
        lone.gpus_per_node = 1;
        lone.nics_per_node = 1;
        const HardwareGraph l = buildHardwareGraph(lone);
        QCOMPARE(l.scale_up_switches, 0);
        QCOMPARE(l.gpu_scale_up_link[2], -1);
        QCOMPARE(countLinks(l, LinkKind::scale_up), 0);
        QCOMPARE(kinds(l, l.route(0, 3)), kOneLeaf);
    }

    // hardwareShape is the graph's sizes without the graph: evaluate() and the placement read
    // it instead of building the graph, so it must agree with the graph on every cluster.
    void shapeMatchesTheGraph() {
        std::vector<ClusterSpec> clusters = {test::h100Nodes(1), test::h100Nodes(8),
                                             test::h100Nodes(10), gb200Racks(2), gb200Racks(3)};
        ClusterSpec c = test::h100Nodes(8);
        c.rack_nodes = {3, 1}; // 3 + 1 + 4
        clusters.push_back(c);
        c = test::h100Nodes(8);
        c.rack_nodes = {6}; // over capacity: widens it
        clusters.push_back(c);
        c = test::h100Nodes(4);
        c.nics_per_node = 2;
        c.fabric_topology = FabricTopology::fat_tree;
        clusters.push_back(c);
        c = test::h100Nodes(5); // lone GPUs in a rack domain: the last domain has one GPU
        c.gpus_per_node = 1;
        c.nics_per_node = 1;
        c.nodes_per_rack = 4;
        c.scale_up_domain = ScaleUpDomain::rack;
        clusters.push_back(c);
        c = gb200Racks(2);
        c.nodes = 20; // a partial second rack and domain
        clusters.push_back(c);
        c = test::h100Nodes(200);
        c.nodes_per_leaf = 3;
        clusters.push_back(c);
        c = test::h100Nodes(0);
        clusters.push_back(c);
        c = test::h100Nodes(2);
        c.gpus_per_node = 0;
        c.nics_per_node = -3;
        clusters.push_back(c);
        for (size_t i = 0; i < clusters.size(); ++i) {
            const HardwareGraph g = buildHardwareGraph(clusters[i]);
            const HardwareShape h = hardwareShape(clusters[i]);
            const std::string at = "cluster " + std::to_string(i);
            bool alike = g.rackCount() > 0;
            for (int r = 0; r < g.rackCount(); ++r)
                alike = alike && g.nodesInRack(r) == g.nodes_per_rack;
            QVERIFY2(h.gpus == g.gpuCount(), at.c_str());
            QVERIFY2(h.nodes == static_cast<int>(g.node_rack.size()), at.c_str());
            QVERIFY2(h.gpus_per_node == g.gpus_per_node, at.c_str());
            QVERIFY2(h.gpus_per_domain == g.gpus_per_domain, at.c_str());
            QVERIFY2(h.nodes_per_rack == g.nodes_per_rack, at.c_str());
            QVERIFY2(h.racks == g.rackCount(), at.c_str());
            QVERIFY2(h.racks_alike == alike, at.c_str());
            QVERIFY2(h.scale_up_switches == countVertices(g, VertexKind::scale_up_switch),
                     at.c_str());
            QVERIFY2(h.scale_up_switches == g.scale_up_switches, at.c_str());
            QVERIFY2(h.nics == countVertices(g, VertexKind::nic), at.c_str());
            QVERIFY2(h.leaves == countVertices(g, VertexKind::leaf_switch), at.c_str());
            QVERIFY2(h.spines == countVertices(g, VertexKind::spine_switch), at.c_str());
        }
        // By hand: 5 lone GPUs in racks of 4 form domains of 4 and 1; only the first has a
        // switch. 20 GB200 trays in racks of 18: domains of 72 and 8 GPUs, two switches.
        QCOMPARE(hardwareShape(clusters[8]).scale_up_switches, 1);
        QCOMPARE(hardwareShape(clusters[9]).scale_up_switches, 2);
        QCOMPARE(hardwareShape(clusters[9]).racks, 2);
        QVERIFY(!hardwareShape(clusters[9]).racks_alike);
    }

    void badInputDoesNotCrash() {
        ClusterSpec c = test::h100Nodes(0);
        QCOMPARE(buildHardwareGraph(c).gpuCount(), 0);
        c = test::h100Nodes(2);
        c.gpus_per_node = 0;
        c.nics_per_node = -3;
        c.oversubscription = 0.5;
        const HardwareGraph g = buildHardwareGraph(c);
        QCOMPARE(g.gpuCount(), 2);
        QCOMPARE(kinds(g, g.route(0, 1)), kOneLeaf);
    }

    void hundredThousandGpus() {
        const HardwareGraph g = buildHardwareGraph(test::h100Nodes(12500));
        // 12500 nodes in ceil(12500 / 32) = 391 rail groups x 8 rails = 3128 leaves;
        // ceil(3128 * 32 / 64) = 1564 spines; each leaf takes a window of 32 spines.
        QCOMPARE(g.gpuCount(), 100000);
        QCOMPARE(g.scale_up_switches, 12500);
        QCOMPARE(g.nics, 100000);
        QCOMPARE(g.leaves, 3128);
        QCOMPARE(g.spines, 1564);
        QCOMPARE(static_cast<int>(g.vertices.size()), 100000 + 12500 + 100000 + 3128 + 1564);
        QCOMPARE(countLinks(g, LinkKind::leaf_spine), 3128 * 32);
        QCOMPARE(static_cast<int>(g.links.size()), 3 * 100000 + 3128 * 32);
        // 100096 uplinks over 1564 spines: exactly 64 per spine, a full 64-port spine.
        std::vector<int> per_spine(g.spines, 0);
        const int spine_base = static_cast<int>(g.vertices.size()) - g.spines;
        for (const Link& l : g.links)
            if (l.kind == LinkKind::leaf_spine)
                ++per_spine[l.b - spine_base];
        QCOMPARE(*std::min_element(per_spine.begin(), per_spine.end()), 64);
        QCOMPARE(*std::max_element(per_spine.begin(), per_spine.end()), 64);
        // The last group has 12500 - 390 * 32 = 20 nodes: 20 * 48 / 32 = 30 GB/s per uplink.
        QCOMPARE(g.links[g.leaf_spine_links_begin[3127]].bandwidth_gbps, 30.0);
        QCOMPARE(g.vertices[spine_base + 1563].label, std::string("spine1563"));
        // Leaf 0 reaches spines 0-31 and leaf 3127 spines 1532-1563: no common spine, so the
        // route charges both leaves' uplinks (third tier taken as non-blocking).
        QCOMPARE(g.nic_leaf[99999], 3127);
        const auto far = g.route(0, 99999);
        QCOMPARE(kinds(g, far), kViaSpine);
        QVERIFY(g.links[far[2]].b != g.links[far[3]].b);
        // Leaf 49 (group 6, rail 1) starts its window at 49 * 32 % 1564 = 4: it shares spines
        // 4-31 with leaf 0, and the route picks one of them.
        QCOMPARE(g.links[g.leaf_spine_links_begin[49]].b - spine_base, 4);
        const int gpu_on_leaf_49 = (6 * 32) * 8 + 1; // group 6, node 192, local GPU 1 = rail 1
        QCOMPARE(g.nic_leaf[g.vertices[g.gpu_nic_vertex[gpu_on_leaf_49]].index], 49);
        const auto near = g.route(0, gpu_on_leaf_49);
        QCOMPARE(kinds(g, near), kViaSpine);
        QVERIFY(walks(g, 0, gpu_on_leaf_49, near));
        const int spine = g.links[near[2]].b - spine_base;
        QVERIFY(spine >= 4 && spine <= 31);
    }
    void linkLoadsAndTheBusiest() {
        // A hand-made graph: one NVLink link of 450 GB/s and two NIC->leaf cables of 50 GB/s;
        // the step takes 2 s and carries 90 GB, 40 GB and 20 GB over them.
        HardwareGraph g;
        g.vertices.resize(4);
        g.vertices[0].label = "node0/gpu0";
        g.vertices[1].label = "node0/nvswitch";
        g.vertices[2].label = "node0/nic1";
        g.vertices[3].label = "leaf1";
        g.links = {{0, 1, LinkKind::scale_up, 450, 1},
                   {2, 3, LinkKind::nic_leaf, 50, 1},
                   {2, 3, LinkKind::nic_leaf, 50, 1}};
        Report r;
        r.step_time_s = 2;
        // Utilization = bytes / (bandwidth x 2 s), as evaluate writes it.
        r.link_traffic = OnDemand<LinkTraffic>::of({{90e9, 40e9, 20e9}, {0.1, 0.4, 0.2}});
        // One cable: 40 GB / 2 s = 20 GB/s, 20 / 50 = 40%.
        const LinkLoad one = linkLoad(r, g, 1);
        QCOMPARE(one.links, 1);
        QCOMPARE(one.bytes, 40e9);
        QCOMPARE(one.gbps, 20.0);
        QCOMPARE(one.bandwidth_gbps, 50.0);
        QCOMPARE(one.utilization, 0.4);
        // The two cables as one bundle: 60 GB / 2 s = 30 GB/s of 100 GB/s = 30%; a bad id is
        // skipped.
        const LinkLoad bundle = linkLoad(r, g, std::vector<int>{1, 2, 7, -1});
        QCOMPARE(bundle.links, 2);
        QCOMPARE(bundle.gbps, 30.0);
        QCOMPARE(bundle.bandwidth_gbps, 100.0);
        QCOMPARE(bundle.utilization, 0.3);
        // Tiers: NVLink 45 GB/s of 450 = 10%; the leaf tier 30% (its busiest cable is link 1).
        const std::vector<TierLoad> tiers = tierLoads(r, g);
        QCOMPARE(static_cast<int>(tiers.size()), 2);
        QCOMPARE(tiers[0].kind, LinkKind::scale_up);
        QCOMPARE(tiers[0].load.utilization, 0.1);
        QCOMPARE(tiers[1].kind, LinkKind::nic_leaf);
        QCOMPARE(tiers[1].busiest_link, 1);
        QCOMPARE(busiestTier(tiers), 1);
        QCOMPARE(busiestLink(r), 1);
        ClusterSpec c;
        c.gpu.scale_up_fabric = "NVLink";
        QCOMPARE(tierName(LinkKind::nic_leaf, c), std::string("InfiniBand leaf"));
        QCOMPARE(tierName(LinkKind::scale_up, c), std::string("NVLink"));
        QCOMPARE(linkName(g, 1), std::string("node0/nic1 → leaf1"));
        QCOMPARE(linkName(g, 9), std::string());
        // No step time or no traffic: zero rates, no busiest.
        Report idle;
        idle.link_traffic = OnDemand<LinkTraffic>::of({{0, 0, 0}, {0, 0, 0}});
        QCOMPARE(linkLoad(idle, g, 1).gbps, 0.0);
        QCOMPARE(busiestLink(idle), -1);
        QCOMPARE(busiestTier(tierLoads(idle, g)), -1);
    }

    void tierLoadsOfARackRange() {
        // Two racks. Vertices: 0 gpu (rack 0), 1 gpu (rack 1), 2 nvswitch (rack 0), 3 nvswitch
        // (rack 1), 4 nic (rack 0), 5 nic (rack 1), 6 leaf0 (cabled to rack 0 only), 7 leaf1
        // (cabled to both racks), 8 spine.
        HardwareGraph g;
        g.leaves = 2;
        g.vertices.resize(9);
        const int racks[] = {0, 1, 0, 1, 0, 1, -1, -1, -1};
        for (int v = 0; v < 9; ++v)
            g.vertices[static_cast<size_t>(v)].rack = racks[v];
        g.vertices[6].kind = g.vertices[7].kind = VertexKind::leaf_switch;
        g.vertices[6].index = 0;
        g.vertices[7].index = 1;
        g.links = {{0, 2, LinkKind::scale_up, 100, 1},    // 0: rack 0, 10 GB
                   {1, 3, LinkKind::scale_up, 100, 1},    // 1: rack 1, 20 GB
                   {4, 6, LinkKind::nic_leaf, 50, 1},     // 2: rack 0, 4 GB
                   {4, 7, LinkKind::nic_leaf, 50, 1},     // 3: rack 0, 6 GB
                   {5, 7, LinkKind::nic_leaf, 50, 1},     // 4: rack 1, 8 GB
                   {6, 8, LinkKind::leaf_spine, 200, 1},  // 5: leaf0, 30 GB
                   {7, 8, LinkKind::leaf_spine, 200, 1}}; // 6: leaf1, 40 GB
        Report r;
        r.step_time_s = 1;
        r.link_traffic = OnDemand<LinkTraffic>::of(
            {{10e9, 20e9, 4e9, 6e9, 8e9, 30e9, 40e9}, {0.1, 0.2, 0.08, 0.12, 0.16, 0.15, 0.2}});
        // Rack 0 alone: NVLink 10 GB of 100 GB/s = 10%; its two cables 4 + 6 = 10 GB of
        // 100 GB/s = 10%; leaf0's uplink (30 GB of 200 GB/s = 15%) but not leaf1's, whose
        // other cable reaches rack 1.
        const std::vector<TierLoad> rack0 = tierLoadsOfRacks(r, g, 0, 1);
        QCOMPARE(static_cast<int>(rack0.size()), 3);
        QCOMPARE(rack0[0].load.bytes, 10e9);
        QCOMPARE(rack0[1].kind, LinkKind::nic_leaf);
        QCOMPARE(rack0[1].load.links, 2);
        QCOMPARE(rack0[1].load.bytes, 10e9);
        QCOMPARE(rack0[1].load.utilization, 0.1);
        QCOMPARE(rack0[1].busiest_link, 3);
        QCOMPARE(rack0[2].kind, LinkKind::leaf_spine);
        QCOMPARE(rack0[2].load.bytes, 30e9);
        QCOMPARE(rack0[2].load.utilization, 0.15);
        // Rack 1 alone: 20 GB NVLink, 8 GB cable, no uplink (neither leaf is its own).
        const std::vector<TierLoad> rack1 = tierLoadsOfRacks(r, g, 1, 2);
        QCOMPARE(static_cast<int>(rack1.size()), 2);
        QCOMPARE(rack1[0].load.bytes, 20e9);
        QCOMPARE(rack1[1].load.bytes, 8e9);
        // Both racks: every link, the same as tierLoads.
        const std::vector<TierLoad> both = tierLoadsOfRacks(r, g, 0, 2);
        const std::vector<TierLoad> all = tierLoads(r, g);
        QCOMPARE(both.size(), all.size());
        for (size_t t = 0; t < all.size(); ++t)
            QCOMPARE(both[t].load.bytes, all[t].load.bytes);
        QCOMPARE(both[2].load.bytes, 70e9);
        // No rack: nothing.
        QVERIFY(tierLoadsOfRacks(r, g, 2, 2).empty());
    }
};

QTEST_GUILESS_MAIN(TestTopology)
#include "test_topology.moc"
