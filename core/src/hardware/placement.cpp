// Rank placement after Megatron-Core's RankGenerator, group spans, expert maps, and the layout
// explained in words.
#include "moe/placement.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>
#include <numeric>
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

int SpanGeometry::rackOf(int gpu) const {
    if (gpus_per_rack > 0)
        return gpu / gpus_per_rack;
    const int node = gpu / std::max(1, gpus_per_node);
    return node >= 0 && node < static_cast<int>(node_rack.size()) ? node_rack[node] : 0;
}

namespace {

/// How many windows of `width` consecutive GPUs the members first, first + stride, ... (count
/// of them) touch, and the most members in one window.
struct WindowCount {
    int windows = 0;
    int most = 0;
};

int64_t floorDiv(int64_t a, int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

WindowCount countWindows(int64_t first, int64_t stride, int64_t count, int64_t width) {
    if (count <= 1 || width <= 1)
        return {static_cast<int>(count), count > 0 ? 1 : 0};
    // Members at least a window apart never share one; closer members leave no window between
    // the first and the last untouched.
    if (stride >= width)
        return {static_cast<int>(count), 1};
    const int64_t first_window = first / width;
    const int64_t last_window = (first + (count - 1) * stride) / width;
    auto membersIn = [&](int64_t w) { // positions c with w * width <= first + c * stride < ...
        const int64_t lo = std::max<int64_t>(0, -floorDiv(first - w * width, stride));
        const int64_t hi = std::min(count - 1, floorDiv((w + 1) * width - 1 - first, stride));
        return std::max<int64_t>(0, hi - lo + 1);
    };
    // A window's first member sits at an offset that repeats every stride / gcd(stride, width)
    // windows, so that many windows after the first (which may start mid-group) hold every
    // count an inner window can; the last may end mid-group.
    const int64_t repeat = stride / std::gcd(stride, width);
    int64_t most = membersIn(last_window);
    for (int64_t w = first_window; w <= std::min(last_window, first_window + repeat); ++w)
        most = std::max(most, membersIn(w));
    return {static_cast<int>(last_window - first_window + 1), static_cast<int>(most)};
}

} // namespace

GroupSpan strideSpan(int64_t first, int64_t stride, int members, const SpanGeometry& g) {
    GroupSpan s;
    s.gpus = members;
    if (members <= 1) { // a dimension of degree 1: one GPU spans one of everything
        s.domains = s.nodes = s.racks = s.max_gpus_per_domain = 1;
        return s;
    }
    const WindowCount domains = countWindows(first, stride, members, g.gpus_per_domain);
    s.domains = domains.windows;
    s.max_gpus_per_domain = domains.most;
    s.nodes = countWindows(first, stride, members, g.gpus_per_node).windows;
    if (g.gpus_per_rack > 0) {
        s.racks = countWindows(first, stride, members, g.gpus_per_rack).windows;
    } else { // racks of different sizes: racks hold consecutive nodes, so count the changes
        int prev = -1;
        for (int c = 0; c < members; ++c) {
            const int rack = g.rackOf(static_cast<int>(first + c * stride));
            s.racks += rack != prev;
            prev = rack;
        }
    }
    s.link_class = s.domains <= 1 ? LinkClass::scale_up : LinkClass::scale_out;
    return s;
}

RankCoords Placement::coordsOf(int gpu) const {
    RankCoords rc;
    if (gpu < 0 || gpu >= gpu_count)
        return rc;
    auto coord = [&](GroupKind k) {
        const GroupAxis& a = axis(k);
        return a.placed ? static_cast<int>(gpu / a.stride % a.size) : 0;
    };
    rc.tp = coord(GroupKind::tp);
    rc.cp = coord(GroupKind::cp);
    rc.dp = coord(GroupKind::dp);
    rc.pp = coord(GroupKind::pp);
    rc.etp = coord(GroupKind::etp);
    rc.ep = coord(GroupKind::ep);
    rc.edp = coord(GroupKind::edp);
    return rc;
}

int Placement::groupCount(GroupKind k) const {
    const GroupAxis& a = axis(k);
    return a.placed ? gpu_count / a.size : 0;
}

// Group index: the rank's coordinates with dimension k left out, mixed radix, leftmost fastest
// (Megatron's generate_masked_orthogonal_rank_groups enumerates the same way): the ranks below
// the axis' stride, then the blocks of stride x size ranks above it.
int Placement::groupIndexOf(GroupKind k, int gpu) const {
    const GroupAxis& a = axis(k);
    if (!a.placed || gpu < 0 || gpu >= gpu_count)
        return -1;
    return static_cast<int>(gpu % a.stride + gpu / (a.stride * a.size) * a.stride);
}

int Placement::memberGpu(GroupKind k, int group, int position) const {
    const GroupAxis& a = axis(k);
    return static_cast<int>(group % a.stride + group / a.stride * a.stride * a.size +
                            position * a.stride);
}

void Placement::membersOf(GroupKind k, int group, std::vector<int>& out) const {
    out.clear();
    if (group < 0 || group >= groupCount(k))
        return;
    const int size = axis(k).size;
    for (int c = 0; c < size; ++c)
        out.push_back(memberGpu(k, group, c));
}

std::vector<int> Placement::membersOf(GroupKind k, int group) const {
    std::vector<int> out;
    membersOf(k, group, out);
    return out;
}

GroupSpan Placement::groupSpan(GroupKind k, int group) const {
    if (group < 0 || group >= groupCount(k))
        return {};
    const GroupAxis& a = axis(k);
    return strideSpan(memberGpu(k, group, 0), a.stride, a.size, geometry);
}

struct Placement::GroupLists {
    std::array<std::once_flag, kGroupKindCount> once;
    std::array<std::vector<ParallelGroup>, kGroupKindCount> lists;
};

const std::vector<ParallelGroup>& Placement::groupsOf(GroupKind k) const {
    static const std::vector<ParallelGroup> none;
    if (!group_lists)
        return none;
    const size_t ki = static_cast<size_t>(k);
    std::call_once(group_lists->once[ki], [&] {
        std::vector<ParallelGroup>& list = group_lists->lists[ki];
        list.resize(static_cast<size_t>(groupCount(k)));
        for (int gi = 0; gi < static_cast<int>(list.size()); ++gi) {
            list[gi].kind = k;
            list[gi].index = gi;
            membersOf(k, gi, list[gi].gpus);
            list[gi].span = groupSpan(k, gi);
        }
    });
    return group_lists->lists[ki];
}

const ParallelGroup& Placement::groupOf(GroupKind k, int gpu) const {
    static const ParallelGroup empty;
    const int gi = groupIndexOf(k, gpu);
    if (gi < 0)
        return empty;
    return groupsOf(k)[static_cast<size_t>(gi)];
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

/// The axes of every dimension of `grid` that owns groups: a dimension's stride is the product
/// of the sizes to its left (leftmost fastest).
void placeAxes(const Grid& grid, Placement& p) {
    int64_t stride = 1;
    for (int i = 0; i < grid.dims; ++i) {
        if (grid.owns_groups[i])
            p.axes[static_cast<size_t>(idx(grid.kind[i]))] = {true, grid.size[i], stride};
        stride *= grid.size[i];
    }
}

/// The widest span of the groups of kind `k`. A group's span depends only on where its first
/// member sits within the hardware's period (GPUs per rack when racks are alike; the whole
/// cluster otherwise), so the groups are visited in order and only a first member at an offset
/// not seen before is priced: at most a rack's worth of groups, however large the cluster. The
/// first of equally wide groups wins, as a pass over every group would pick it.
GroupSpan worstSpan(const Placement& p, GroupKind k) {
    const GroupAxis& a = p.axis(k);
    const SpanGeometry& g = p.geometry;
    const int64_t gpus = p.gpuCount();
    int64_t period = gpus;
    if (g.gpus_per_rack > 0)
        period = std::min(gpus, std::lcm(std::lcm<int64_t>(g.gpus_per_node, g.gpus_per_domain),
                                         static_cast<int64_t>(g.gpus_per_rack)));
    const int64_t block = a.stride * a.size; // first members: low + block * high, low < stride
    const int64_t highs = std::min(gpus / block, period / std::gcd(block, period));
    const int64_t lows = std::min(a.stride, period);
    std::vector<char> seen(static_cast<size_t>(period), 0);
    int64_t unseen = period;
    GroupSpan worst;
    for (int64_t high = 0; high < highs && unseen > 0; ++high) {
        for (int64_t low = 0; low < lows && unseen > 0; ++low) {
            const int64_t first = low + block * high;
            char& offset_seen = seen[static_cast<size_t>(first % period)];
            if (offset_seen)
                continue;
            offset_seen = 1;
            --unseen;
            const GroupSpan s = strideSpan(first, a.stride, a.size, g);
            if (std::tie(s.domains, s.nodes, s.racks) >
                std::tie(worst.domains, worst.nodes, worst.racks))
                worst = s;
        }
    }
    return worst;
}

/// The graph's racks without the graph (hardwareShape): O(1) when racks are alike, otherwise
/// each node's rack, laid out as buildHardwareGraph lays them.
SpanGeometry spanGeometry(const ClusterSpec& cluster, const HardwareShape& shape) {
    SpanGeometry g;
    g.gpus_per_node = std::max(1, shape.gpus_per_node);
    g.gpus_per_domain = std::max(1, shape.gpus_per_domain);
    if (shape.racks_alike) {
        g.gpus_per_rack = g.gpus_per_node * std::max(1, shape.nodes_per_rack);
        return g;
    }
    g.node_rack.reserve(static_cast<size_t>(shape.nodes));
    int rack = 0;
    for (const int in_rack : cluster.nodesInRacks())
        g.node_rack.insert(g.node_rack.end(), static_cast<size_t>(in_rack), rack++);
    return g;
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

Placement placeLayout(const Scenario& scenario) {
    Placement p;
    const HardwareShape shape = hardwareShape(scenario.cluster);
    p.gpu_count = shape.gpus;
    p.geometry = spanGeometry(scenario.cluster, shape);
    p.worst_span.assign(kGroupKindCount, GroupSpan{});
    p.group_lists = std::make_shared<Placement::GroupLists>();

    // A grid that does not cover the GPUs exactly (a validation error) gets no groups rather
    // than groups that point at GPUs that do not exist.
    const Grid dense = denseGrid(scenario.layout);
    if (dense.valid() && dense.total == p.gpu_count)
        placeAxes(dense, p);
    const Grid expert = expertGrid(scenario.layout);
    if (expert.valid() && expert.total == p.gpu_count)
        placeAxes(expert, p);
    for (int k = 0; k < kGroupKindCount; ++k)
        if (p.axes[static_cast<size_t>(k)].placed)
            p.worst_span[static_cast<size_t>(k)] = worstSpan(p, static_cast<GroupKind>(k));
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
void describePipeline(const LayoutSpec& l, const Placement& placement, const FabricWords& w,
                      std::vector<std::string>& lines) {
    if (l.pp <= 1) {
        lines.push_back("PP=1: no pipeline parallelism");
        return;
    }
    // Members climb in GPU order, so the sends that leave a domain are the widest group's
    // domains less one.
    const GroupSpan& s = placement.spanOf(GroupKind::pp);
    const int crossing = std::max(0, s.domains - 1);
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
    if (!placement.expertsPlaced()) {
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
    if (!placement.placed()) {
        lines.push_back("The layout does not cover the cluster's GPUs, so it cannot be placed");
        return lines;
    }
    const bool moe = scenario.model.isMoe();
    describeTensorParallel(l, placement, w, lines);
    describeDataParallel(l, moe, placement, w, lines);
    describePipeline(l, placement, w, lines);
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
