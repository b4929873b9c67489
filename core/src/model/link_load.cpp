// Link loads: report.linkBytes() summed over links, as rates and shares of bandwidth.
#include "moe/link_load.h"

#include <algorithm>

namespace moe {

LinkLoad linkLoad(const Report& report, const HardwareGraph& graph, const std::vector<int>& links) {
    LinkLoad load;
    for (const int link : links) {
        if (link < 0 || link >= static_cast<int>(graph.links.size()))
            continue;
        ++load.links;
        load.bandwidth_gbps += graph.links[static_cast<size_t>(link)].bandwidth_gbps;
        if (link < static_cast<int>(report.linkBytes().size()))
            load.bytes += report.linkBytes()[static_cast<size_t>(link)];
    }
    // The mean rate over the step, and its share of the summed bandwidth: for one link the
    // same ratio evaluate() writes to report.linkUtilization().
    load.gbps = report.step_time_s > 0 ? load.bytes / report.step_time_s / 1e9 : 0.0;
    load.utilization = load.bandwidth_gbps > 0 ? load.gbps / load.bandwidth_gbps : 0.0;
    return load;
}

LinkLoad linkLoad(const Report& report, const HardwareGraph& graph, int link) {
    return linkLoad(report, graph, std::vector<int>{link});
}

namespace {

/// The tiers of the links `counted` marks (one flag per link).
std::vector<TierLoad> tierLoadsOf(const Report& report, const HardwareGraph& graph,
                                  const std::vector<char>& counted) {
    constexpr LinkKind kinds[] = {LinkKind::scale_up, LinkKind::gpu_nic, LinkKind::nic_leaf,
                                  LinkKind::leaf_spine};
    std::vector<TierLoad> tiers;
    for (const LinkKind kind : kinds) {
        std::vector<int> links;
        TierLoad tier;
        tier.kind = kind;
        double busiest = 0;
        for (size_t id = 0; id < graph.links.size(); ++id) {
            if (graph.links[id].kind != kind || !counted[id])
                continue;
            links.push_back(static_cast<int>(id));
            const double u =
                id < report.linkUtilization().size() ? report.linkUtilization()[id] : 0.0;
            if (u > busiest) {
                busiest = u;
                tier.busiest_link = static_cast<int>(id);
            }
        }
        if (links.empty())
            continue;
        tier.load = linkLoad(report, graph, links);
        tiers.push_back(tier);
    }
    return tiers;
}

} // namespace

std::vector<TierLoad> tierLoads(const Report& report, const HardwareGraph& graph) {
    return tierLoadsOf(report, graph, std::vector<char>(graph.links.size(), 1));
}

std::vector<TierLoad> tierLoadsOfRacks(const Report& report, const HardwareGraph& graph,
                                       int first_rack, int end_rack) {
    auto inRange = [&](int rack) { return rack >= first_rack && rack < end_rack; };
    // A leaf belongs to the racks when every NIC cabled to it sits in them: 1 = yes so far,
    // 0 = no NIC seen yet, -1 = a NIC outside.
    std::vector<int> leaf_inside(static_cast<size_t>(graph.leaves), 0);
    for (const Link& link : graph.links) {
        if (link.kind != LinkKind::nic_leaf)
            continue;
        const int leaf = graph.vertices[static_cast<size_t>(link.b)].index;
        if (leaf < 0 || leaf >= graph.leaves)
            continue;
        int& inside = leaf_inside[static_cast<size_t>(leaf)];
        if (!inRange(graph.vertices[static_cast<size_t>(link.a)].rack))
            inside = -1;
        else if (inside == 0)
            inside = 1;
    }
    std::vector<char> counted(graph.links.size(), 0);
    for (size_t id = 0; id < graph.links.size(); ++id) {
        const Link& link = graph.links[id];
        // Every link but a leaf's uplink starts at a GPU or a NIC, which knows its rack.
        const Vertex& a = graph.vertices[static_cast<size_t>(link.a)];
        counted[id] = link.kind == LinkKind::leaf_spine
                          ? a.index >= 0 && a.index < graph.leaves &&
                                leaf_inside[static_cast<size_t>(a.index)] == 1
                          : inRange(a.rack);
    }
    return tierLoadsOf(report, graph, counted);
}

int busiestTier(const std::vector<TierLoad>& tiers) {
    int best = -1;
    for (size_t i = 0; i < tiers.size(); ++i)
        if (tiers[i].load.bytes > 0 &&
            (best < 0 ||
             tiers[i].load.utilization > tiers[static_cast<size_t>(best)].load.utilization))
            best = static_cast<int>(i);
    return best;
}

int busiestLink(const Report& report) {
    int best = -1;
    double busiest = 0;
    for (size_t id = 0; id < report.linkUtilization().size(); ++id)
        if (report.linkUtilization()[id] > busiest) {
            busiest = report.linkUtilization()[id];
            best = static_cast<int>(id);
        }
    return best;
}

std::string tierName(LinkKind kind, const ClusterSpec& cluster) {
    switch (kind) {
    case LinkKind::scale_up:
        return cluster.gpu.scale_up_fabric.empty() ? "scale-up" : cluster.gpu.scale_up_fabric;
    case LinkKind::gpu_nic:
        return "PCIe";
    case LinkKind::nic_leaf:
        return std::string(displayName(cluster.fabric)) + " leaf";
    case LinkKind::leaf_spine:
        return std::string(displayName(cluster.fabric)) + " spine";
    }
    return "link";
}

std::string linkName(const HardwareGraph& graph, int link) {
    if (link < 0 || link >= static_cast<int>(graph.links.size()))
        return {};
    const Link& l = graph.links[static_cast<size_t>(link)];
    return graph.vertices[static_cast<size_t>(l.a)].label + " → " +
           graph.vertices[static_cast<size_t>(l.b)].label;
}

} // namespace moe
