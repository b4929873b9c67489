#pragma once
// What the links of the hardware graph carry in one step, as the topology diagram labels them:
// bytes per step, the mean rate over the step (GB/s) and the share of the bandwidth it uses, for
// one link, for a bundle of links drawn as one line, and for each link tier; the busiest link
// and the busiest tier. Read from report.linkBytes() (evaluate's traffic per link and step).

#include "moe/report.h"
#include "moe/topology.h"

#include <string>
#include <vector>

namespace moe {

/// The traffic of a set of links (one link, or a bundle drawn as one line).
struct LinkLoad {
    int links = 0;
    double bytes = 0;          ///< per step, summed over the links
    double gbps = 0;           ///< bytes / step time: the mean rate over the step, GB/s
    double bandwidth_gbps = 0; ///< the links' summed bandwidth, GB/s per direction
    double utilization = 0;    ///< gbps / bandwidth_gbps (one link: report.linkUtilization())
};

/// The load of `links` (ids into graph.links; ids out of range are skipped).
LinkLoad linkLoad(const Report& report, const HardwareGraph& graph, const std::vector<int>& links);
LinkLoad linkLoad(const Report& report, const HardwareGraph& graph, int link);

/// One tier of links (every link of one LinkKind).
struct TierLoad {
    LinkKind kind = LinkKind::scale_up;
    LinkLoad load;         ///< all its links: utilization = the tier's mean share of bandwidth
    int busiest_link = -1; ///< its link of highest utilization, -1 when none carries traffic
};
/// The tiers that have links, in LinkKind order.
std::vector<TierLoad> tierLoads(const Report& report, const HardwareGraph& graph);
/// The tiers of the links of racks [first_rack, end_rack): the links that start at their GPUs
/// and NICs, and the spine uplinks of the leaves whose NICs all sit in them (a pod's leaves).
/// What a diagram that draws those racks as one "x N" summary sums for them.
std::vector<TierLoad> tierLoadsOfRacks(const Report& report, const HardwareGraph& graph,
                                       int first_rack, int end_rack);
/// Index into `tiers` of the tier with the highest mean utilization, -1 when none carries
/// traffic.
int busiestTier(const std::vector<TierLoad>& tiers);
/// The link of highest utilization (the first of equals), -1 when no link carries traffic.
int busiestLink(const Report& report);

/// A tier in words: "NVLink", "PCIe", "InfiniBand leaf", "InfiniBand spine".
std::string tierName(LinkKind kind, const ClusterSpec& cluster);
/// A link by its ends: "node3/nic1 → leaf1", "rack0/node3/gpu2 → node3/nvswitch".
std::string linkName(const HardwareGraph& graph, int link);

} // namespace moe
