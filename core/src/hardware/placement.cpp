// Rank placement after Megatron-Core's RankGenerator, group spans, expert maps, and the layout
// explained in words.
#include "moe/placement.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <tuple>

namespace moe {

const char* toString(GroupKind k) {
    switch (k) {
    case GroupKind::tp:
        return "tp";
    case GroupKind::cp:
        return "cp";
    case GroupKind::dp:
        return "dp";
    case GroupKind::pp:
        return "pp";
    case GroupKind::ep:
        return "ep";
    case GroupKind::etp:
        return "etp";
    case GroupKind::edp:
        return "edp";
    }
    return "unknown";
}

const ExpertMap& Placement::expertsForLayer(int moe_layer) const {
    if (moe_layer >= 0 && moe_layer < static_cast<int>(layer_map_index.size())) {
        const int m = layer_map_index[moe_layer];
        if (m >= 0 && m < static_cast<int>(layer_maps.size()))
            return layer_maps[m];
    }
    return default_experts;
}

const ParallelGroup& Placement::groupOf(GroupKind k, int gpu) const {
    static const ParallelGroup empty;
    const int ki = static_cast<int>(k);
    if (ki < 0 || ki >= static_cast<int>(group_of_gpu.size()) || gpu < 0 ||
        gpu >= static_cast<int>(group_of_gpu[ki].size()))
        return empty;
    const int gi = group_of_gpu[ki][gpu];
    if (gi < 0 || gi >= static_cast<int>(groups[ki].size()))
        return empty;
    return groups[ki][gi];
}

namespace {

int idx(GroupKind k) {
    return static_cast<int>(k);
}

/// One of the two grids: its dimensions in rank order (leftmost fastest) with their sizes.
struct Grid {
    int dims = 0;
    std::array<GroupKind, kDimCount> kind{};
    std::array<int, kDimCount> size{};
    std::array<bool, kDimCount> owns_groups{}; ///< the expert grid's pp belongs to the dense grid
    int64_t total = 1;

    void add(GroupKind k, int s, bool owns) {
        kind[dims] = k;
        size[dims] = s;
        owns_groups[dims] = owns;
        total *= s;
        ++dims;
    }
    bool valid() const {
        for (int i = 0; i < dims; ++i)
            if (size[i] < 1)
                return false;
        return true;
    }
};

/// Dense grid: the order with ep left out (Megatron builds it with ep = 1).
Grid denseGrid(const LayoutSpec& l) {
    Grid g;
    for (Dim d : l.order) {
        switch (d) {
        case Dim::tp:
            g.add(GroupKind::tp, l.tp, true);
            break;
        case Dim::cp:
            g.add(GroupKind::cp, l.cp, true);
            break;
        case Dim::dp:
            g.add(GroupKind::dp, l.dp, true);
            break;
        case Dim::pp:
            g.add(GroupKind::pp, l.pp, true);
            break;
        case Dim::ep:
            break;
        }
    }
    return g;
}

/// Expert grid: the same order with tp -> etp, cp -> size 1 (left out), dp -> edp.
Grid expertGrid(const LayoutSpec& l) {
    Grid g;
    const int64_t dense_inner = static_cast<int64_t>(l.tp) * l.cp * l.dp;
    const int64_t ep_etp = static_cast<int64_t>(l.ep) * l.etp;
    const int edp =
        ep_etp > 0 && dense_inner % ep_etp == 0 ? static_cast<int>(dense_inner / ep_etp) : 0;
    for (Dim d : l.order) {
        switch (d) {
        case Dim::tp:
            g.add(GroupKind::etp, l.etp, true);
            break;
        case Dim::ep:
            g.add(GroupKind::ep, l.ep, true);
            break;
        case Dim::dp:
            g.add(GroupKind::edp, edp, true);
            break;
        case Dim::pp:
            g.add(GroupKind::pp, l.pp, false);
            break;
        case Dim::cp:
            break;
        }
    }
    return g;
}

GroupSpan spanOf(const std::vector<int>& gpus, const HardwareGraph& graph) {
    GroupSpan s;
    s.gpus = static_cast<int>(gpus.size());
    if (s.gpus == 1) { // a dimension of degree 1: one GPU spans one of everything
        s.domains = s.nodes = s.racks = s.max_gpus_per_domain = 1;
        s.link_class = LinkClass::scale_up;
        return s;
    }
    // Members come in increasing GPU order (base + c * stride), and domain, node and rack ids
    // never decrease with the GPU index, so counting changes between neighbours counts distinct
    // ids and runs of equal domains are the members sharing a domain.
    int prev_domain = -1, prev_node = -1, prev_rack = -1, run = 0;
    for (int gpu : gpus) {
        const int d = graph.domainOf(gpu), n = graph.nodeOf(gpu), r = graph.rackOf(gpu);
        if (d != prev_domain) {
            ++s.domains;
            run = 0;
        }
        s.nodes += n != prev_node;
        s.racks += r != prev_rack;
        s.max_gpus_per_domain = std::max(s.max_gpus_per_domain, ++run);
        prev_domain = d;
        prev_node = n;
        prev_rack = r;
    }
    s.link_class = s.domains <= 1 ? LinkClass::scale_up : LinkClass::scale_out;
    return s;
}

/// Fills groups, group_of_gpu and coordinates for every dimension of `grid` that owns groups.
void buildGroups(const Grid& grid, bool dense, const HardwareGraph& graph, Placement& p) {
    const int world = static_cast<int>(grid.total);
    for (int i = 0; i < grid.dims; ++i) {
        if (!grid.owns_groups[i])
            continue;
        const int k = idx(grid.kind[i]);
        const int size = grid.size[i];
        // Group index: the rank's coordinates with dimension i removed, mixed radix, leftmost
        // fastest (Megatron's generate_masked_orthogonal_rank_groups enumerates the same way).
        std::array<int, kDimCount> other_stride{};
        int64_t o = 1;
        for (int j = 0; j < grid.dims; ++j) {
            if (j == i)
                continue;
            other_stride[j] = static_cast<int>(o);
            o *= grid.size[j];
        }
        auto& groups = p.groups[k];
        groups.resize(static_cast<size_t>(world / size));
        for (int gi = 0; gi < static_cast<int>(groups.size()); ++gi) {
            groups[gi].kind = grid.kind[i];
            groups[gi].index = gi;
            groups[gi].gpus.resize(size);
        }
        auto& of = p.group_of_gpu[k];
        // The rank's coordinates as mixed-radix digits, advanced by one per rank: no division
        // in a loop that runs once per GPU and dimension.
        std::array<int, kDimCount> digit{};
        for (int r = 0; r < world; ++r) {
            int gi = 0;
            for (int j = 0; j < grid.dims; ++j) // other_stride[i] is 0: i is left out
                gi += digit[j] * other_stride[j];
            const int c = digit[i];
            for (int j = 0; j < grid.dims && ++digit[j] == grid.size[j]; ++j)
                digit[j] = 0;
            groups[gi].gpus[c] = r;
            of[r] = gi;
            RankCoords& rc = p.coords[r];
            switch (grid.kind[i]) {
            case GroupKind::tp:
                rc.tp = c;
                break;
            case GroupKind::cp:
                rc.cp = c;
                break;
            case GroupKind::dp:
                rc.dp = c;
                break;
            case GroupKind::pp:
                if (dense)
                    rc.pp = c;
                break;
            case GroupKind::ep:
                rc.ep = c;
                break;
            case GroupKind::etp:
                rc.etp = c;
                break;
            case GroupKind::edp:
                rc.edp = c;
                break;
            }
        }
        GroupSpan worst;
        for (auto& group : groups) {
            group.span = spanOf(group.gpus, graph);
            const GroupSpan& s = group.span;
            if (std::tie(s.domains, s.nodes, s.racks) >
                std::tie(worst.domains, worst.nodes, worst.racks))
                worst = s;
        }
        p.worst_span[k] = worst;
    }
}

/// Recomputes experts_on_rank from ranks_of_expert.
void invert(ExpertMap& m, int ep) {
    m.experts_on_rank.assign(static_cast<size_t>(ep), {});
    for (int e = 0; e < static_cast<int>(m.ranks_of_expert.size()); ++e)
        for (int r : m.ranks_of_expert[e])
            m.experts_on_rank[r].push_back(e);
}

/// Applies one placement entry; entries out of range are validation errors and are skipped.
void apply(ExpertMap& m, const ExpertPlacement& entry, int ep) {
    if (entry.expert < 0 || entry.expert >= static_cast<int>(m.ranks_of_expert.size()))
        return;
    std::vector<int> ranks;
    for (int r : entry.ep_ranks)
        if (r >= 0 && r < ep && std::find(ranks.begin(), ranks.end(), r) == ranks.end())
            ranks.push_back(r);
    if (!ranks.empty())
        m.ranks_of_expert[entry.expert] = std::move(ranks);
}

void placeExperts(const Scenario& sc, Placement& p) {
    const int experts = sc.model.experts;
    const int ep = sc.layout.ep;
    const int moe_layers = std::max(0, sc.model.moeLayers());
    p.layer_map_index.assign(static_cast<size_t>(moe_layers), -1);
    if (experts <= 0 || ep < 1)
        return;
    // The default map is round-robin with the all-layer entries (layer -1) applied: it is the
    // map of every MoE layer that has no entry of its own.
    ExpertMap& base = p.default_experts;
    base.ranks_of_expert.resize(static_cast<size_t>(experts));
    for (int e = 0; e < experts; ++e)
        base.ranks_of_expert[e] = {e % ep};
    for (const auto& entry : sc.layout.expert_placement)
        if (entry.layer < 0)
            apply(base, entry, ep);
    invert(base, ep);

    std::vector<int> layers;
    for (const auto& entry : sc.layout.expert_placement)
        if (entry.layer >= 0 && entry.layer < moe_layers)
            layers.push_back(entry.layer);
    std::sort(layers.begin(), layers.end());
    layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
    for (int layer : layers) {
        ExpertMap m;
        m.ranks_of_expert = base.ranks_of_expert;
        for (const auto& entry : sc.layout.expert_placement)
            if (entry.layer == layer)
                apply(m, entry, ep);
        if (m.ranks_of_expert == base.ranks_of_expert)
            continue;
        // Layers whose entries produce the same placement share one map.
        int found = -1;
        for (int i = 0; i < static_cast<int>(p.layer_maps.size()); ++i)
            if (p.layer_maps[i].ranks_of_expert == m.ranks_of_expert)
                found = i;
        if (found < 0) {
            invert(m, ep);
            p.layer_maps.push_back(std::move(m));
            found = static_cast<int>(p.layer_maps.size()) - 1;
        }
        p.layer_map_index[layer] = found;
    }
}

} // namespace

Placement placeLayout(const Scenario& scenario, const HardwareGraph& graph) {
    Placement p;
    const int gpus = graph.gpuCount();
    p.coords.assign(static_cast<size_t>(gpus), RankCoords{});
    p.groups.assign(kGroupKindCount, {});
    p.worst_span.assign(kGroupKindCount, GroupSpan{});
    p.group_of_gpu.assign(kGroupKindCount, std::vector<int>(static_cast<size_t>(gpus), -1));

    // A grid that does not cover the GPUs exactly (a validation error) gets no groups rather
    // than groups that point at GPUs that do not exist.
    const Grid dense = denseGrid(scenario.layout);
    if (dense.valid() && dense.total == gpus)
        buildGroups(dense, true, graph, p);
    const Grid expert = expertGrid(scenario.layout);
    if (expert.valid() && expert.total == gpus)
        buildGroups(expert, false, graph, p);
    placeExperts(scenario, p);
    return p;
}

FabricWords fabricWords(const ClusterSpec& c) {
    FabricWords w;
    w.scale_up = c.gpu.scale_up_fabric.empty() ? "the scale-up links" : c.gpu.scale_up_fabric;
    w.scale_out = displayName(c.fabric);
    w.rack_domain = c.scale_up_domain == ScaleUpDomain::rack;
    w.domain = w.rack_domain ? "rack" : "node";
    return w;
}

namespace {

/// Where a group sits: "inside nodes", "inside racks", "across nodes" (one member per node),
/// "across 8 nodes".
std::string where(const GroupSpan& s, const FabricWords& w) {
    if (s.nodes <= 1)
        return "inside nodes";
    if (s.domains <= 1)
        return "inside racks";
    const int units = w.rack_domain ? s.racks : s.nodes;
    const std::string plural = w.domain + "s";
    if (units == s.gpus)
        return "across " + plural;
    return "across " + std::to_string(units) + " " + plural;
}

/// Which links carry a collective over the group.
std::string carriedBy(const GroupSpan& s, const FabricWords& w) {
    if (s.domains <= 1)
        return w.scale_up;
    if (s.max_gpus_per_domain <= 1)
        return w.scale_out;
    return w.scale_up + " inside a " + w.domain + " and " + w.scale_out + " across";
}

std::string deg(const char* name, int d) {
    return std::string(name) + "=" + std::to_string(d);
}

/// Tensor and context parallelism.
void describeTensorParallel(const LayoutSpec& l, const Placement& placement, const FabricWords& w,
                            std::vector<std::string>& lines) {
    if (l.tp == 1 && l.cp == 1) {
        lines.push_back("TP=1, CP=1: no tensor or context parallelism");
        return;
    }
    const GroupSpan& tp = placement.spanOf(GroupKind::tp);
    const GroupSpan& cp = placement.spanOf(GroupKind::cp);
    if (l.tp > 1)
        lines.push_back(deg("TP", l.tp) + " " + where(tp, w) +
                        " so the tensor-parallel all-reduces use " + carriedBy(tp, w));
    if (l.cp > 1)
        lines.push_back(deg("CP", l.cp) + " " + where(cp, w) +
                        " so the context-parallel exchanges use " + carriedBy(cp, w));
}

/// Data parallelism of the dense part.
void describeDataParallel(const LayoutSpec& l, bool moe, const Placement& placement,
                          const FabricWords& w, std::vector<std::string>& lines) {
    const std::string dense_part = moe ? " for attention and dense layers" : "";
    if (l.dp <= 1) {
        lines.push_back("DP=1" + dense_part + ": one copy of the weights, no gradient all-reduce");
        return;
    }
    const GroupSpan& s = placement.spanOf(GroupKind::dp);
    std::string line = deg("DP", l.dp) + dense_part + " " + where(s, w);
    if (s.domains > 1 && s.max_gpus_per_domain > 1)
        line += " (gradient all-reduce: " + w.scale_up + " inside a " + w.domain + ", " +
                w.scale_out + " across)";
    else
        line += " so the gradient all-reduce uses " + carriedBy(s, w);
    lines.push_back(line);
}

/// Pipeline: count the stage-to-stage sends of the widest group that leave a domain.
void describePipeline(const LayoutSpec& l, const ClusterSpec& c, const Placement& placement,
                      const FabricWords& w, std::vector<std::string>& lines) {
    if (l.pp <= 1) {
        lines.push_back("PP=1: no pipeline parallelism");
        return;
    }
    const GroupSpan& s = placement.spanOf(GroupKind::pp);
    const int gpd = std::max(1, c.gpusPerScaleUpDomain());
    int crossing = 0;
    for (const auto& g : placement.groupsOf(GroupKind::pp)) {
        if (g.span.domains != s.domains || g.span.nodes != s.nodes)
            continue;
        for (size_t i = 0; i + 1 < g.gpus.size(); ++i)
            crossing += g.gpus[i] / gpd != g.gpus[i + 1] / gpd;
        break;
    }
    const int sends = l.pp - 1;
    std::string line = deg("PP", l.pp) + " " + where(s, w);
    if (crossing == 0)
        line += " so pipeline sends use " + w.scale_up;
    else if (crossing == sends)
        line += " so pipeline sends use " + w.scale_out;
    else
        line += " so " + std::to_string(crossing) + " of " + std::to_string(sends) +
                " pipeline sends use " + w.scale_out + ", the rest " + w.scale_up;
    lines.push_back(line);
}

/// Expert layers: EP all-to-all and the expert gradient all-reduce over expert DP, and expert
/// TP. False when the expert grid cannot be placed.
bool describeExpertGroups(const LayoutSpec& l, const Placement& placement, const FabricWords& w,
                          std::vector<std::string>& lines) {
    if (placement.groupsOf(GroupKind::ep).empty()) {
        lines.push_back(deg("EP", l.ep) + " x " + deg("ETP", l.etp) +
                        " does not divide TP x CP x DP = " +
                        std::to_string(static_cast<int64_t>(l.tp) * l.cp * l.dp) +
                        ", so the expert layers cannot be placed");
        return false;
    }
    auto span = [&](GroupKind k) { return placement.spanOf(k); };
    const int edp = l.expertDp();
    std::string line;
    if (l.ep <= 1)
        line = "EP=1 so there is no all-to-all";
    else
        line = deg("EP", l.ep) + " " + where(span(GroupKind::ep), w) + " so the all-to-all rides " +
               carriedBy(span(GroupKind::ep), w);
    if (edp <= 1)
        line += ", DP=1 for experts so expert gradients need no all-reduce";
    else
        line += ", " + deg("DP", edp) + " " + where(span(GroupKind::edp), w) +
                " so the gradient all-reduce uses " + carriedBy(span(GroupKind::edp), w);
    lines.push_back(line);
    if (l.etp > 1)
        lines.push_back(deg("ETP", l.etp) + " " + where(span(GroupKind::etp), w) +
                        " so the expert tensor-parallel all-reduces use " +
                        carriedBy(span(GroupKind::etp), w));
    return true;
}

/// Expert placement and replication.
void describeExpertPlacement(const LayoutSpec& l, int experts, const Placement& placement,
                             std::vector<std::string>& lines) {
    const int edp = l.expertDp();
    std::string line = std::to_string(experts) + " experts per MoE layer";
    if (l.ep > 0 && experts % l.ep == 0)
        line += ", " + std::to_string(experts / l.ep) + " on each EP rank";
    if (l.etp > 1)
        line += "; each expert is split over ETP=" + std::to_string(l.etp) + " GPUs and" +
                (edp > 1 ? " replicated " + std::to_string(edp) + " times" : " has one copy");
    else
        line += edp > 1 ? "; each expert is replicated " + std::to_string(edp) + " times"
                        : "; each expert has one copy";
    lines.push_back(line);
    if (!l.expert_placement.empty()) {
        line = "Expert placement: " + std::to_string(l.expert_placement.size()) +
               (l.expert_placement.size() == 1 ? " entry overrides" : " entries override") +
               " the round-robin default";
        const int layered = static_cast<int>(std::count_if(placement.layer_map_index.begin(),
                                                           placement.layer_map_index.end(),
                                                           [](int m) { return m >= 0; }));
        if (layered > 0)
            line += ", " + std::to_string(layered) + " MoE layer" + (layered == 1 ? "" : "s") +
                    " with a map of " + (layered == 1 ? "its" : "their") + " own";
        lines.push_back(line);
    }
}

} // namespace

std::vector<std::string> describeLayout(const Scenario& scenario, const Placement& placement) {
    const LayoutSpec& l = scenario.layout;
    const ClusterSpec& c = scenario.cluster;
    const FabricWords w = fabricWords(c);

    std::vector<std::string> lines;
    if (placement.groups.size() != kGroupKindCount || placement.groupsOf(GroupKind::tp).empty()) {
        lines.push_back("The layout does not cover the cluster's GPUs, so it cannot be placed");
        return lines;
    }
    const bool moe = scenario.model.isMoe();
    describeTensorParallel(l, placement, w, lines);
    describeDataParallel(l, moe, placement, w, lines);
    describePipeline(l, c, placement, w, lines);
    if (moe && describeExpertGroups(l, placement, w, lines))
        describeExpertPlacement(l, scenario.model.experts, placement, lines);
    return lines;
}

std::string spanPlaceWords(const GroupSpan& span, const ClusterSpec& cluster) {
    return where(span, fabricWords(cluster));
}

std::string spanLinkWords(const GroupSpan& span, const ClusterSpec& cluster) {
    const FabricWords w = fabricWords(cluster);
    if (span.domains > 1 && span.max_gpus_per_domain > 1)
        return w.scale_up + " + " + w.scale_out;
    return carriedBy(span, w);
}

} // namespace moe
