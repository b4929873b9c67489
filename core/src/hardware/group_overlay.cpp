// Group overlays: the groups of one dimension, their node and rack ranges, the link tiers
// their traffic crosses, and the legend that names them.
#include "moe/group_overlay.h"

#include <algorithm>
#include <map>
#include <set>

namespace moe {

const char* toString(GroupOverlay overlay) {
    switch (overlay) {
    case GroupOverlay::tp:
        return "tp";
    case GroupOverlay::ep:
        return "ep";
    case GroupOverlay::edp:
        return "edp";
    case GroupOverlay::dp:
        return "dp";
    case GroupOverlay::pp:
        return "pp";
    case GroupOverlay::cp:
        return "cp";
    }
    return "unknown";
}

namespace {

GroupKind kindOf(GroupOverlay overlay) {
    switch (overlay) {
    case GroupOverlay::tp:
        return GroupKind::tp;
    case GroupOverlay::ep:
        return GroupKind::ep;
    case GroupOverlay::edp:
        return GroupKind::edp;
    case GroupOverlay::dp:
        return GroupKind::dp;
    case GroupOverlay::pp:
        return GroupKind::pp;
    case GroupOverlay::cp:
        return GroupKind::cp;
    }
    return GroupKind::tp;
}

int leafOf(const HardwareGraph& g, int gpu) {
    const int nic =
        g.vertices[static_cast<size_t>(g.gpu_nic_vertex[static_cast<size_t>(gpu)])].index;
    return nic >= 0 && nic < static_cast<int>(g.nic_leaf.size())
               ? g.nic_leaf[static_cast<size_t>(nic)]
               : -1;
}

/// Node and rack ranges of `gpus` (ascending GPU ids: node and rack ids never decrease).
void fillRanges(const std::vector<int>& gpus, const HardwareGraph& g, GroupSpanInfo& s) {
    s.gpus = static_cast<int>(gpus.size());
    if (gpus.empty())
        return;
    int prev_node = -1, prev_rack = -1, stride = -1;
    bool regular = true;
    for (const int gpu : gpus) {
        const int node = g.nodeOf(gpu), rack = g.rackOf(gpu);
        if (node != prev_node) {
            if (prev_node >= 0) {
                const int d = node - prev_node;
                regular = regular && (stride < 0 || d == stride);
                stride = d;
            }
            ++s.nodes;
        }
        s.racks += rack != prev_rack;
        prev_node = node;
        prev_rack = rack;
    }
    s.first_node = g.nodeOf(gpus.front());
    s.last_node = g.nodeOf(gpus.back());
    s.first_rack = g.rackOf(gpus.front());
    s.last_rack = g.rackOf(gpus.back());
    s.node_stride = s.nodes > 1 && regular ? stride : 0;
}

/// The tiers a collective over `group` uses, by HardwareGraph::route's rules: members in one
/// scale-up domain talk over it (the placement's span: two members share a domain); members in
/// different domains go GPU -> NIC -> leaf, and on to a spine when their NICs hang off
/// different leaves. With at least two domains, some pair in different domains sits on
/// different leaves exactly when the members reach two or more leaves (a third member in
/// another domain differs from one of the two).
LinkTiers collectiveTiers(const ParallelGroup& group, const HardwareGraph& g) {
    LinkTiers t;
    t.scale_up = group.span.max_gpus_per_domain >= 2;
    t.scale_out = group.span.domains >= 2;
    if (t.scale_out) {
        std::set<int> leaves;
        for (const int gpu : group.gpus)
            if (const int leaf = leafOf(g, gpu); leaf >= 0)
                leaves.insert(leaf);
        t.spine = leaves.size() >= 2;
    }
    return t;
}

/// The tiers of the pipeline sends between each GPU of stage `stage` and its peers (the same
/// pipeline, stages stage - 1 and stage + 1): the links route() gives each pair.
LinkTiers sendTiers(const std::vector<int>& gpus, int stage, const Placement& p,
                    const HardwareGraph& g) {
    LinkTiers t;
    for (const int gpu : gpus) {
        const ParallelGroup& pipe = p.groupOf(GroupKind::pp, gpu);
        for (const int peer_stage : {stage - 1, stage + 1}) {
            if (peer_stage < 0 || peer_stage >= static_cast<int>(pipe.gpus.size()))
                continue;
            for (const int link : g.route(gpu, pipe.gpus[static_cast<size_t>(peer_stage)])) {
                if (link < 0)
                    continue;
                switch (g.links[static_cast<size_t>(link)].kind) {
                case LinkKind::scale_up:
                    t.scale_up = true;
                    break;
                case LinkKind::gpu_nic:
                case LinkKind::nic_leaf:
                    t.scale_out = true;
                    break;
                case LinkKind::leaf_spine:
                    t.spine = true;
                    break;
                }
            }
        }
    }
    return t;
}

std::string plural(int n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

/// "node 5", "nodes 8-15", "nodes 0 and 8", "nodes 0, 16, …, 240", "12 nodes in 0-40".
std::string nodeRange(const GroupSpanInfo& s) {
    const auto n = [](int i) { return std::to_string(i); };
    if (s.nodes <= 1)
        return "node " + n(s.first_node);
    if (s.node_stride == 1)
        return "nodes " + n(s.first_node) + "-" + n(s.last_node);
    if (s.nodes == 2)
        return "nodes " + n(s.first_node) + " and " + n(s.last_node);
    if (s.node_stride > 1)
        return "nodes " + n(s.first_node) + ", " + n(s.first_node + s.node_stride) + ", …, " +
               n(s.last_node);
    return plural(s.nodes, "node") + " in " + n(s.first_node) + "-" + n(s.last_node);
}

/// "rack 1", "racks 0-3", "5 racks in 0-9".
std::string rackRange(const GroupSpanInfo& s) {
    if (s.racks <= 1)
        return "rack " + std::to_string(s.first_rack);
    const std::string range = std::to_string(s.first_rack) + "-" + std::to_string(s.last_rack);
    if (s.last_rack - s.first_rack + 1 == s.racks)
        return "racks " + range;
    return plural(s.racks, "rack") + " in " + range;
}

/// "NVLink + InfiniBand leaf + spine", "no traffic".
std::string tierWords(GroupOverlay overlay, const LinkTiers& t, const ClusterSpec& c) {
    std::vector<std::string> parts;
    if (t.scale_up)
        parts.push_back(c.gpu.scale_up_fabric.empty() ? "scale-up" : c.gpu.scale_up_fabric);
    if (t.scale_out)
        parts.push_back(std::string(displayName(c.fabric)) + " leaf");
    if (t.spine)
        parts.emplace_back("spine");
    std::string words;
    for (const auto& part : parts)
        words += (words.empty() ? "" : " + ") + part;
    if (overlay == GroupOverlay::pp)
        return words.empty() ? "no pipeline sends" : "pipeline sends over " + words;
    return words.empty() ? "no traffic" : words;
}

/// "8 GPUs in 1 node, NVLink": a group's shape without where it is.
std::string shapeWords(GroupOverlay overlay, const GroupSpanInfo& s, const ClusterSpec& c) {
    std::string words = plural(s.gpus, "GPU") + " in " + plural(s.nodes, "node");
    if (s.racks > 1)
        words += " over " + plural(s.racks, "rack");
    return words + ", " + tierWords(overlay, s.tiers, c);
}

const char* dimensionName(GroupOverlay overlay) {
    switch (overlay) {
    case GroupOverlay::tp:
        return "TP";
    case GroupOverlay::ep:
        return "EP";
    case GroupOverlay::edp:
        return "Expert DP";
    case GroupOverlay::dp:
        return "DP";
    case GroupOverlay::pp:
        return "PP";
    case GroupOverlay::cp:
        return "CP";
    }
    return "";
}

} // namespace

OverlayGroups overlayGroups(GroupOverlay overlay, const Scenario& scenario,
                            const Placement& placement, const HardwareGraph& graph) {
    OverlayGroups out;
    out.overlay = overlay;
    const int gpus = graph.gpuCount();
    const GroupKind kind = kindOf(overlay);
    if (placement.groupCount(kind) == 0 || placement.gpuCount() != gpus)
        return out;
    std::vector<std::vector<int>> members;
    if (overlay == GroupOverlay::pp) {
        // Stages: the GPUs that share a pp coordinate, in GPU order.
        members.assign(static_cast<size_t>(std::max(1, scenario.layout.pp)), {});
        out.group_of_gpu.assign(static_cast<size_t>(gpus), -1);
        for (int gpu = 0; gpu < gpus; ++gpu) {
            const int stage = placement.coordsOf(gpu).pp;
            if (stage < 0 || stage >= static_cast<int>(members.size()))
                continue;
            members[static_cast<size_t>(stage)].push_back(gpu);
            out.group_of_gpu[static_cast<size_t>(gpu)] = stage;
        }
    } else {
        out.group_of_gpu.assign(static_cast<size_t>(gpus), -1);
        for (const ParallelGroup& group : placement.groupsOf(kind)) {
            members.push_back(group.gpus); // rank order within a group is ascending GPU order
            for (int gpu : group.gpus)
                out.group_of_gpu[static_cast<size_t>(gpu)] = group.index;
        }
    }
    out.spans.resize(members.size());
    out.single_gpu_groups = true;
    for (size_t i = 0; i < members.size(); ++i) {
        GroupSpanInfo& s = out.spans[i];
        s.group = static_cast<int>(i);
        fillRanges(members[i], graph, s);
        s.tiers = overlay == GroupOverlay::pp
                      ? sendTiers(members[i], static_cast<int>(i), placement, graph)
                      : collectiveTiers(placement.groupsOf(kind)[i], graph);
        out.single_gpu_groups = out.single_gpu_groups && s.gpus <= 1;
    }
    if (overlay == GroupOverlay::pp)
        out.single_gpu_groups = false; // a stage is a stage even on one GPU
    return out;
}

std::string groupTitle(GroupOverlay overlay, int group, const LayoutSpec& layout) {
    const std::string g = std::to_string(group);
    if (overlay == GroupOverlay::pp) {
        if (layout.schedule == PipelineSchedule::dualpipe)
            return "DualPipe rank " + g + " (stages " + g + " and " +
                   std::to_string(layout.pp - 1 - group) + ")";
        return "PP stage " + g;
    }
    return std::string(dimensionName(overlay)) + " group " + g;
}

std::string describeGroupSpan(GroupOverlay overlay, const GroupSpanInfo& span,
                              const ClusterSpec& cluster) {
    return nodeRange(span) + " (" + rackRange(span) + "), " + plural(span.gpus, "GPU") + ", " +
           tierWords(overlay, span.tiers, cluster);
}

std::vector<OverlayLegendLine> overlayLegend(const OverlayGroups& groups, const Scenario& scenario,
                                             int listed) {
    std::vector<OverlayLegendLine> lines;
    const GroupOverlay o = groups.overlay;
    const int count = static_cast<int>(groups.spans.size());
    const bool dualpipe = scenario.layout.schedule == PipelineSchedule::dualpipe;
    std::string title = o == GroupOverlay::pp ? (dualpipe ? "DualPipe ranks" : "PP stages")
                                              : std::string(dimensionName(o)) + " groups";
    if (count == 0) {
        lines.push_back({-1, title + ": the layout cannot be placed on the cluster"});
        return lines;
    }
    if (groups.single_gpu_groups) {
        lines.push_back({-1, std::string(dimensionName(o)) +
                                 "=1: every GPU is a group of its own, no traffic"});
        return lines;
    }
    lines.push_back({-1, title + ": " + std::to_string(count) + " of " +
                             plural(groups.spans.front().gpus, "GPU") + " each"});
    const int shown = std::clamp(listed, 0, count);
    for (int i = 0; i < shown; ++i)
        lines.push_back(
            {i, groupTitle(o, i, scenario.layout) + ": " +
                    describeGroupSpan(o, groups.spans[static_cast<size_t>(i)], scenario.cluster)});
    // The rest by shape, in order of first appearance.
    std::vector<std::string> order;
    std::map<std::string, int> counts;
    for (int i = shown; i < count; ++i) {
        const std::string shape =
            shapeWords(o, groups.spans[static_cast<size_t>(i)], scenario.cluster);
        if (counts[shape]++ == 0)
            order.push_back(shape);
    }
    for (const std::string& shape : order)
        lines.push_back({-1, "… " + std::to_string(counts[shape]) + " more, each " + shape});
    return lines;
}

} // namespace moe
