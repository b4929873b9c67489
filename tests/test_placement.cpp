// Rank placement (Megatron-Core RankGenerator semantics), group spans, expert maps and the
// layout in words. Expected groups are worked out by hand from the strides of the order string:
// with "tp-cp-ep-dp-pp" the dense grid is tp, cp, dp, pp (strides 1, tp, tp*cp, tp*cp*dp) and
// the expert grid is etp, ep, edp, pp (strides 1, etp, etp*ep, etp*ep*edp).
#include "moe/placement.h"
#include "test_support.h"

#include <QtTest>

#include <algorithm>
#include <string>
#include <vector>

using namespace moe;

namespace {

/// 8 nodes x 8 H100, 16 experts, TP1 CP1 PP1 DP64 EP8 ETP1, order tp-cp-ep-dp-pp.
Scenario textbook() {
    Scenario s;
    s.cluster = test::h100Nodes(8);
    s.model.layers = 4;
    s.model.dense_layers = 1; // MoE layers 0, 1, 2
    s.model.experts = 16;
    s.model.top_k = 2;
    s.model.expert_ffn_hidden = 1024;
    s.layout.tp = 1;
    s.layout.cp = 1;
    s.layout.pp = 1;
    s.layout.dp = 64;
    s.layout.ep = 8;
    s.layout.etp = 1;
    s.layout.order = {Dim::tp, Dim::cp, Dim::ep, Dim::dp, Dim::pp};
    return s;
}

std::vector<int> range(int first, int count, int stride = 1) {
    std::vector<int> v;
    for (int i = 0; i < count; ++i)
        v.push_back(first + i * stride);
    return v;
}

bool hasLine(const std::vector<std::string>& lines, const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
}

std::string joined(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines)
        s += l + "\n";
    return s;
}

/// A group's span the slow way: walk its members through the hardware graph.
GroupSpan walkedSpan(const std::vector<int>& gpus, const HardwareGraph& graph) {
    GroupSpan s;
    s.gpus = static_cast<int>(gpus.size());
    std::vector<int> domains, nodes, racks;
    for (int gpu : gpus) {
        domains.push_back(graph.domainOf(gpu));
        nodes.push_back(graph.nodeOf(gpu));
        racks.push_back(graph.rackOf(gpu));
    }
    auto distinct = [](std::vector<int> v) {
        std::sort(v.begin(), v.end());
        return static_cast<int>(std::unique(v.begin(), v.end()) - v.begin());
    };
    s.domains = distinct(domains);
    s.nodes = distinct(nodes);
    s.racks = distinct(racks);
    for (int d : domains)
        s.max_gpus_per_domain = std::max(
            s.max_gpus_per_domain, static_cast<int>(std::count(domains.begin(), domains.end(), d)));
    s.link_class = s.domains <= 1 ? LinkClass::scale_up : LinkClass::scale_out;
    return s;
}

bool sameSpan(const GroupSpan& a, const GroupSpan& b) {
    return a.gpus == b.gpus && a.domains == b.domains && a.nodes == b.nodes && a.racks == b.racks &&
           a.max_gpus_per_domain == b.max_gpus_per_domain && a.link_class == b.link_class;
}

std::string spanText(const GroupSpan& s) {
    return std::to_string(s.gpus) + " gpus, " + std::to_string(s.domains) + " domains (" +
           std::to_string(s.max_gpus_per_domain) + " max), " + std::to_string(s.nodes) +
           " nodes, " + std::to_string(s.racks) + " racks";
}

} // namespace

class TestPlacement : public QObject {
    Q_OBJECT
private slots:
    void textbookGroups() {
        const Scenario s = textbook();
        const Placement p = placeLayout(s);

        QCOMPARE(p.groupsOf(GroupKind::tp).size(), size_t(64));
        QCOMPARE(p.groupsOf(GroupKind::cp).size(), size_t(64));
        QCOMPARE(p.groupsOf(GroupKind::pp).size(), size_t(64));
        QCOMPARE(p.groupsOf(GroupKind::dp).size(), size_t(1));
        QCOMPARE(p.groupsOf(GroupKind::ep).size(), size_t(8));
        QCOMPARE(p.groupsOf(GroupKind::edp).size(), size_t(8));
        QCOMPARE(p.groupsOf(GroupKind::etp).size(), size_t(64));

        // EP groups are whole nodes: group n = GPUs 8n..8n+7.
        for (const auto& grp : p.groupsOf(GroupKind::ep)) {
            QCOMPARE(grp.gpus, range(8 * grp.index, 8));
            QCOMPARE(grp.span.gpus, 8);
            QCOMPARE(grp.span.nodes, 1);
            QCOMPARE(grp.span.domains, 1);
            QCOMPARE(grp.span.racks, 1);
            QCOMPARE(grp.span.max_gpus_per_domain, 8);
            QCOMPARE(grp.span.link_class, LinkClass::scale_up);
        }
        // Expert-DP groups take the same local GPU from every node: i, i+8, ..., i+56.
        for (const auto& grp : p.groupsOf(GroupKind::edp)) {
            QCOMPARE(grp.gpus, range(grp.index, 8, 8));
            QCOMPARE(grp.span.nodes, 8);
            QCOMPARE(grp.span.domains, 8);
            QCOMPARE(grp.span.max_gpus_per_domain, 1);
            QCOMPARE(grp.span.link_class, LinkClass::scale_out);
        }
        // The dense DP group is every GPU: 8 nodes, 8 per node.
        const GroupSpan& dp = p.spanOf(GroupKind::dp);
        QCOMPARE(dp.gpus, 64);
        QCOMPARE(dp.nodes, 8);
        QCOMPARE(dp.domains, 8);
        QCOMPARE(dp.max_gpus_per_domain, 8);
        QCOMPARE(dp.link_class, LinkClass::scale_out);
        QCOMPARE(p.groupsOf(GroupKind::dp)[0].gpus, range(0, 64));
        // Degree-1 dimensions: one-GPU groups inside one domain.
        QCOMPARE(p.spanOf(GroupKind::tp).gpus, 1);
        QCOMPARE(p.spanOf(GroupKind::tp).link_class, LinkClass::scale_up);

        // GPU 13 = node 1, local 5: DP rank 13, EP rank 5, expert-DP rank 1.
        QCOMPARE(p.coordsOf(13).dp, 13);
        QCOMPARE(p.coordsOf(13).ep, 5);
        QCOMPARE(p.coordsOf(13).edp, 1);
        QCOMPARE(p.coordsOf(13).tp, 0);
        QCOMPARE(p.coordsOf(13).pp, 0);
        QCOMPARE(p.groupOf(GroupKind::ep, 13).index, 1);
        QCOMPARE(p.groupOf(GroupKind::edp, 13).index, 5);

        // Every GPU is in the group group_of_gpu names, at the position of its coordinate.
        for (int k = 0; k < kGroupKindCount; ++k)
            for (int gpu = 0; gpu < 64; ++gpu) {
                const auto& grp = p.groupOf(static_cast<GroupKind>(k), gpu);
                QVERIFY(std::find(grp.gpus.begin(), grp.gpus.end(), gpu) != grp.gpus.end());
            }
    }

    void megatronDocstringExample() {
        // Megatron's initialize_model_parallel docstring: 16 GPUs, TP=2, PP=4 (so DP=2):
        // DP groups [g0,g2],[g1,g3],[g4,g6],...; PP groups [g0,g4,g8,g12],[g1,g5,g9,g13],...
        Scenario s = textbook();
        s.cluster = test::h100Nodes(2);
        s.model.experts = 0;
        s.layout.tp = 2;
        s.layout.pp = 4;
        s.layout.dp = 2;
        s.layout.ep = 1;
        const Placement p = placeLayout(s);
        const auto& dp = p.groupsOf(GroupKind::dp);
        QCOMPARE(dp.size(), size_t(8));
        QCOMPARE(dp[0].gpus, (std::vector<int>{0, 2}));
        QCOMPARE(dp[1].gpus, (std::vector<int>{1, 3}));
        QCOMPARE(dp[2].gpus, (std::vector<int>{4, 6}));
        QCOMPARE(dp[7].gpus, (std::vector<int>{13, 15}));
        const auto& pp = p.groupsOf(GroupKind::pp);
        QCOMPARE(pp.size(), size_t(4));
        QCOMPARE(pp[0].gpus, (std::vector<int>{0, 4, 8, 12}));
        QCOMPARE(pp[1].gpus, (std::vector<int>{1, 5, 9, 13}));
        QCOMPARE(pp[2].gpus, (std::vector<int>{2, 6, 10, 14}));
        QCOMPARE(p.groupsOf(GroupKind::tp)[3].gpus, (std::vector<int>{6, 7}));
        // Stages 0-1 on node 0, 2-3 on node 1.
        QCOMPARE(p.spanOf(GroupKind::pp).nodes, 2);
        QCOMPARE(p.spanOf(GroupKind::pp).max_gpus_per_domain, 2);
    }

    void epOuterCrossesNodes() {
        Scenario s = textbook();
        s.layout.order = {Dim::tp, Dim::cp, Dim::dp, Dim::ep, Dim::pp};
        const Placement p = placeLayout(s);
        // Expert grid etp, edp, ep, pp: expert DP is innermost, EP strides over nodes.
        QCOMPARE(p.groupsOf(GroupKind::ep)[0].gpus, range(0, 8, 8));
        const GroupSpan& ep = p.spanOf(GroupKind::ep);
        QCOMPARE(ep.nodes, 8);
        QCOMPARE(ep.domains, 8);
        QCOMPARE(ep.max_gpus_per_domain, 1);
        QCOMPARE(ep.link_class, LinkClass::scale_out);
        for (const auto& grp : p.groupsOf(GroupKind::ep))
            QCOMPARE(grp.span.link_class, LinkClass::scale_out);
        QCOMPARE(p.groupsOf(GroupKind::edp)[3].gpus, range(24, 8));
        QCOMPARE(p.spanOf(GroupKind::edp).link_class, LinkClass::scale_up);
        // The dense grid ignores ep: DP is still every GPU.
        QCOMPARE(p.groupsOf(GroupKind::dp)[0].gpus, range(0, 64));
        QCOMPARE(p.coordsOf(13).ep, 1);
        QCOMPARE(p.coordsOf(13).edp, 5);
    }

    void tpInsideNodes() {
        Scenario s = textbook();
        s.layout.tp = 8;
        s.layout.dp = 8;
        const Placement p = placeLayout(s);
        QCOMPARE(p.groupsOf(GroupKind::tp).size(), size_t(8));
        for (const auto& grp : p.groupsOf(GroupKind::tp)) {
            QCOMPARE(grp.gpus, range(8 * grp.index, 8));
            QCOMPARE(grp.span.nodes, 1);
            QCOMPARE(grp.span.link_class, LinkClass::scale_up);
        }
        QCOMPARE(p.groupsOf(GroupKind::dp)[2].gpus, range(2, 8, 8));
        QCOMPARE(p.spanOf(GroupKind::dp).nodes, 8);
        // TP*CP*DP / (EP*ETP) = 64 / 8 = 8; EP still fills a node.
        QCOMPARE(p.groupsOf(GroupKind::edp).size(), size_t(8));
        QCOMPARE(p.spanOf(GroupKind::ep).nodes, 1);
        const auto lines = describeLayout(s, p);
        QVERIFY2(hasLine(lines, "TP=8 inside nodes so the tensor-parallel all-reduces use NVLink"),
                 joined(lines).c_str());
    }

    void ppOutermostCrossesNodes() {
        Scenario s = textbook();
        s.layout.tp = 8;
        s.layout.pp = 4;
        s.layout.dp = 2;
        const Placement p = placeLayout(s);
        // Dense strides tp 1, dp 8, pp 16: stage k of pipeline 0 sits on node 2k.
        QCOMPARE(p.groupsOf(GroupKind::pp).size(), size_t(16));
        QCOMPARE(p.groupsOf(GroupKind::pp)[0].gpus, (std::vector<int>{0, 16, 32, 48}));
        const GroupSpan& pp = p.spanOf(GroupKind::pp);
        QCOMPARE(pp.nodes, 4);
        QCOMPARE(pp.max_gpus_per_domain, 1);
        QCOMPARE(pp.link_class, LinkClass::scale_out);
        // GPU 50 = 48 + 2: pipeline stage 3, TP rank 2, DP rank 0.
        QCOMPARE(p.coordsOf(50).pp, 3);
        QCOMPARE(p.coordsOf(50).tp, 2);
        QCOMPARE(p.coordsOf(50).dp, 0);
        // Expert grid etp 1, ep 8, edp 2, pp 4 (strides 1, 1, 8, 16): same pipeline stages.
        QCOMPARE(p.groupsOf(GroupKind::edp)[0].gpus, (std::vector<int>{0, 8}));
        QCOMPARE(p.groupsOf(GroupKind::ep)[5].gpus, range(40, 8));
        const auto lines = describeLayout(s, p);
        QVERIFY2(hasLine(lines, "PP=4 across nodes so pipeline sends use InfiniBand"),
                 joined(lines).c_str());
        QVERIFY2(hasLine(lines, "DP=2 for attention and dense layers across nodes so the "
                                "gradient all-reduce uses InfiniBand"),
                 joined(lines).c_str());
    }

    void ppInnermostMixed() {
        // PP=16 fastest: a pipeline covers GPUs 0-15, two nodes; only the stage 7 -> 8 send
        // leaves a node.
        Scenario s = textbook();
        s.model.layers = 32;
        s.layout.pp = 16;
        s.layout.dp = 4;
        s.layout.ep = 4;
        s.layout.order = {Dim::pp, Dim::tp, Dim::cp, Dim::ep, Dim::dp};
        const Placement p = placeLayout(s);
        QCOMPARE(p.groupsOf(GroupKind::pp)[0].gpus, range(0, 16));
        QCOMPARE(p.spanOf(GroupKind::pp).nodes, 2);
        QCOMPARE(p.groupsOf(GroupKind::ep)[0].gpus, range(0, 4, 16));
        const auto lines = describeLayout(s, p);
        QVERIFY2(hasLine(lines, "PP=16 across 2 nodes so 1 of 15 pipeline sends use InfiniBand, "
                                "the rest NVLink"),
                 joined(lines).c_str());
    }

    void expertDefaultRoundRobin() {
        const Scenario s = textbook();
        const Placement p = placeLayout(s);
        const ExpertMap& m = p.default_experts;
        QCOMPARE(m.ranks_of_expert.size(), size_t(16));
        QCOMPARE(m.ranks_of_expert[11], (std::vector<int>{3}));
        QCOMPARE(m.ranks_of_expert[0], (std::vector<int>{0}));
        QCOMPARE(m.experts_on_rank.size(), size_t(8));
        QCOMPARE(m.experts_on_rank[3], (std::vector<int>{3, 11}));
        QVERIFY(p.layer_maps.empty());
        QCOMPARE(p.layer_map_index, (std::vector<int>{-1, -1, -1}));
        QCOMPARE(&p.expertsForLayer(2), &p.default_experts);
    }

    void expertOverrides() {
        Scenario s = textbook();
        s.layout.expert_placement = {
            {-1, 3, {3, 4}}, // every MoE layer: hot expert 3 replicated on EP ranks 3 and 4
            {2, 0, {7}},     // layer 2: expert 0 moves to rank 7
            {1, 0, {7}},     // layer 1: the same move, so layers 1 and 2 share a map
            {0, 5, {1}},     // layer 0: expert 5 moves to rank 1
            {-1, 40, {0}},   // out of range (a validation error): ignored
        };
        const Placement p = placeLayout(s);
        const ExpertMap& base = p.default_experts;
        QCOMPARE(base.ranks_of_expert[3], (std::vector<int>{3, 4}));
        QCOMPARE(base.experts_on_rank[3], (std::vector<int>{3, 11}));
        QCOMPARE(base.experts_on_rank[4], (std::vector<int>{3, 4, 12}));

        QCOMPARE(p.layer_maps.size(), size_t(2));
        QCOMPARE(p.layer_map_index, (std::vector<int>{0, 1, 1}));
        const ExpertMap& l0 = p.expertsForLayer(0);
        QCOMPARE(l0.ranks_of_expert[5], (std::vector<int>{1}));
        QCOMPARE(l0.ranks_of_expert[3], (std::vector<int>{3, 4})); // all-layer entry kept
        QCOMPARE(l0.experts_on_rank[1], (std::vector<int>{1, 5, 9}));
        QCOMPARE(l0.experts_on_rank[5], (std::vector<int>{13}));
        const ExpertMap& l2 = p.expertsForLayer(2);
        QCOMPARE(l2.ranks_of_expert[0], (std::vector<int>{7}));
        QCOMPARE(l2.experts_on_rank[7], (std::vector<int>{0, 7, 15}));
        QCOMPARE(l2.experts_on_rank[0], (std::vector<int>{8}));
        QCOMPARE(&p.expertsForLayer(1), &l2);
        QCOMPARE(&p.expertsForLayer(99), &p.default_experts);
        QCOMPARE(&p.expertsForLayer(-1), &p.default_experts);

        const auto lines = describeLayout(s, p);
        QVERIFY2(hasLine(lines, "Expert placement: 5 entries override the round-robin default, "
                                "3 MoE layers with a map of their own"),
                 joined(lines).c_str());
    }

    void describeTextbook() {
        const Scenario s = textbook();
        const auto lines = describeLayout(s, placeLayout(s));
        const std::string all = joined(lines);
        QVERIFY2(hasLine(lines, "EP=8 inside nodes so the all-to-all rides NVLink, DP=8 across "
                                "nodes so the gradient all-reduce uses InfiniBand"),
                 all.c_str());
        QVERIFY2(hasLine(lines, "TP=1, CP=1: no tensor or context parallelism"), all.c_str());
        QVERIFY2(hasLine(lines, "DP=64 for attention and dense layers across 8 nodes (gradient "
                                "all-reduce: NVLink inside a node, InfiniBand across)"),
                 all.c_str());
        QVERIFY2(hasLine(lines, "PP=1: no pipeline parallelism"), all.c_str());
        QVERIFY2(hasLine(lines, "16 experts per MoE layer, 2 on each EP rank; each expert is "
                                "replicated 8 times"),
                 all.c_str());
        QCOMPARE(lines.size(), size_t(5));
    }

    void describeCrossing() {
        Scenario s = textbook();
        s.layout.order = {Dim::tp, Dim::cp, Dim::dp, Dim::ep, Dim::pp};
        auto lines = describeLayout(s, placeLayout(s));
        QVERIFY2(hasLine(lines, "EP=8 across nodes so the all-to-all rides InfiniBand, DP=8 "
                                "inside nodes so the gradient all-reduce uses NVLink"),
                 joined(lines).c_str());

        s.cluster.fabric = Fabric::ethernet;
        lines = describeLayout(s, placeLayout(s));
        QVERIFY2(hasLine(lines, "EP=8 across nodes so the all-to-all rides Ethernet, DP=8 "
                                "inside nodes so the gradient all-reduce uses NVLink"),
                 joined(lines).c_str());

        // EP=16 fills two nodes: the all-to-all is part NVLink, part InfiniBand.
        s = textbook();
        s.layout.ep = 16;
        const Placement p = placeLayout(s);
        QCOMPARE(p.spanOf(GroupKind::ep).nodes, 2);
        QCOMPARE(p.spanOf(GroupKind::ep).max_gpus_per_domain, 8);
        lines = describeLayout(s, p);
        QVERIFY2(hasLine(lines, "EP=16 across 2 nodes so the all-to-all rides NVLink inside a "
                                "node and InfiniBand across, DP=4 across nodes so the gradient "
                                "all-reduce uses InfiniBand"),
                 joined(lines).c_str());
    }

    void rackDomain() {
        // Two GB200 NVL72-like racks: 144 GPUs, 72 per NVLink domain.
        Scenario s = textbook();
        s.cluster.nodes = 36;
        s.cluster.gpus_per_node = 4;
        s.cluster.nics_per_node = 4;
        s.cluster.nodes_per_rack = 18;
        s.cluster.scale_up_domain = ScaleUpDomain::rack;
        s.model.experts = 72;
        s.layout.dp = 144;
        s.layout.ep = 36; // expert DP = 144 / 36 = 4
        const Placement p = placeLayout(s);
        // EP group 0 = GPUs 0-35: nodes 0-8 of rack 0, one NVLink domain.
        const GroupSpan& ep = p.spanOf(GroupKind::ep);
        QCOMPARE(ep.nodes, 9);
        QCOMPARE(ep.racks, 1);
        QCOMPARE(ep.domains, 1);
        QCOMPARE(ep.link_class, LinkClass::scale_up);
        // Expert-DP group 0 = {0, 36, 72, 108}: two in each rack.
        QCOMPARE(p.groupsOf(GroupKind::edp)[0].gpus, (std::vector<int>{0, 36, 72, 108}));
        QCOMPARE(p.spanOf(GroupKind::edp).domains, 2);
        QCOMPARE(p.spanOf(GroupKind::edp).max_gpus_per_domain, 2);
        const auto lines = describeLayout(s, p);
        QVERIFY2(hasLine(lines, "EP=36 inside racks so the all-to-all rides NVLink, DP=4 across "
                                "2 racks so the gradient all-reduce uses NVLink inside a rack "
                                "and InfiniBand across"),
                 joined(lines).c_str());
    }

    void spansByClassMatchEveryGroupWalked() {
        // The placement prices one group per offset within the hardware's period; every
        // group walked member by member must agree, and the widest span must be the first
        // widest group's. Clusters: nodes of 8 and of 4 GPUs, rack domains, racks of different
        // sizes and a partial last rack; every order and many degrees.
        struct Hardware {
            int nodes, gpus_per_node, nodes_per_rack;
            ScaleUpDomain domain;
            std::vector<int> rack_nodes;
        };
        const std::vector<Hardware> hardware = {
            {12, 8, 4, ScaleUpDomain::node, {}}, {18, 4, 9, ScaleUpDomain::rack, {}},
            {16, 4, 6, ScaleUpDomain::rack, {}}, {10, 6, 3, ScaleUpDomain::node, {2, 5}},
            {24, 2, 4, ScaleUpDomain::node, {}}, {8, 8, 8, ScaleUpDomain::rack, {}},
        };
        const std::vector<RankOrder> orders = {
            {Dim::tp, Dim::cp, Dim::ep, Dim::dp, Dim::pp},
            {Dim::tp, Dim::cp, Dim::ep, Dim::pp, Dim::dp},
            {Dim::tp, Dim::pp, Dim::cp, Dim::ep, Dim::dp},
            {Dim::pp, Dim::dp, Dim::ep, Dim::cp, Dim::tp},
        };
        int layouts = 0;
        for (const Hardware& h : hardware) {
            Scenario s = textbook();
            s.cluster.nodes = h.nodes;
            s.cluster.gpus_per_node = h.gpus_per_node;
            s.cluster.nics_per_node = h.gpus_per_node;
            s.cluster.nodes_per_rack = h.nodes_per_rack;
            s.cluster.scale_up_domain = h.domain;
            s.cluster.rack_nodes = h.rack_nodes;
            const HardwareGraph graph = buildHardwareGraph(s.cluster);
            const int gpus = s.cluster.gpuCount();
            for (int tp : test::divisorsOf(gpus))
                for (int pp : test::divisorsOf(gpus / tp))
                    for (int cp : {1, 2}) {
                        if ((gpus / tp / pp) % cp != 0)
                            continue;
                        const int dp = gpus / tp / pp / cp;
                        for (int ep : test::divisorsOf(dp * cp)) {
                            if (ep % 2 == 1 && ep > 3)
                                continue; // fewer cases: the even EPs and 1, 3
                            for (const RankOrder& order : orders) {
                                s.layout.tp = tp;
                                s.layout.pp = pp;
                                s.layout.cp = cp;
                                s.layout.dp = dp;
                                s.layout.ep = ep;
                                s.layout.etp = tp;
                                s.layout.order = order;
                                const Placement p = placeLayout(s);
                                ++layouts;
                                for (int k = 0; k < kGroupKindCount; ++k) {
                                    const auto kind = static_cast<GroupKind>(k);
                                    GroupSpan worst;
                                    for (const ParallelGroup& g : p.groupsOf(kind)) {
                                        const GroupSpan walked = walkedSpan(g.gpus, graph);
                                        if (!sameSpan(g.span, walked))
                                            QFAIL(("group " + std::to_string(g.index) + " of " +
                                                   toString(kind) + ": " + spanText(g.span) +
                                                   ", walked " + spanText(walked))
                                                      .c_str());
                                        if (std::tie(walked.domains, walked.nodes, walked.racks) >
                                            std::tie(worst.domains, worst.nodes, worst.racks))
                                            worst = walked;
                                    }
                                    if (!sameSpan(p.spanOf(kind), worst))
                                        QFAIL((std::string("widest ") + toString(kind) + " on " +
                                               std::to_string(gpus) + " GPUs, TP" +
                                               std::to_string(tp) + " PP" + std::to_string(pp) +
                                               " EP" + std::to_string(ep) + ": " +
                                               spanText(p.spanOf(kind)) + ", walked " +
                                               spanText(worst))
                                                  .c_str());
                                }
                            }
                        }
                    }
        }
        QVERIFY(layouts > 500);
    }

    void layoutThatDoesNotFit() {
        Scenario s = textbook();
        s.layout.dp = 32; // 32 ranks on 64 GPUs: a validation error
        const Placement p = placeLayout(s);
        QVERIFY(p.groupsOf(GroupKind::tp).empty());
        QVERIFY(p.groupsOf(GroupKind::ep).empty());
        QCOMPARE(p.worst_span.size(), size_t(kGroupKindCount));
        QVERIFY(p.groupOf(GroupKind::dp, 3).gpus.empty());
        QVERIFY(p.groupOf(GroupKind::dp, 1000).gpus.empty());
        const auto lines = describeLayout(s, p);
        QCOMPARE(lines.size(), size_t(1));

        // EP*ETP that does not divide TP*CP*DP: the dense grid is still placed.
        s = textbook();
        s.layout.ep = 7;
        const Placement q = placeLayout(s);
        QCOMPARE(q.groupsOf(GroupKind::dp).size(), size_t(1));
        QVERIFY(q.groupsOf(GroupKind::ep).empty());
        QVERIFY(hasLine(describeLayout(s, q), "EP=7 x ETP=1 does not divide TP x CP x DP = 64, "
                                              "so the expert layers cannot be placed"));
    }
};

QTEST_GUILESS_MAIN(TestPlacement)
#include "test_placement.moc"
