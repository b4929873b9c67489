#pragma once
// Group overlays: which group of one parallel dimension each GPU belongs to, and where each
// group sits on the hardware in words ("nodes 8-15 (rack 1), 64 GPUs, NVLink + InfiniBand
// leaf"), for the topology view's overlay, its legend and its exports. The membership is the
// placement's (placement.h); this adds the node and rack ranges and the link tiers a group's
// traffic crosses, worked out from the hardware graph's routing rules (HardwareGraph::route).

#include "moe/placement.h"

#include <array>
#include <string>
#include <vector>

namespace moe {

/// What an overlay colours by. tp, cp, ep, edp, dp: the groups of that dimension (the GPUs that
/// run its collectives together, placement.groups). pp: the pipeline stage, i.e. the GPUs with
/// the same pp coordinate (with DualPipe, the pipeline rank, which runs stage s of one direction
/// and stage pp-1-s of the other).
enum class GroupOverlay { tp, ep, edp, dp, pp, cp };
inline constexpr std::array<GroupOverlay, 6> kGroupOverlays = {GroupOverlay::tp,  GroupOverlay::ep,
                                                               GroupOverlay::edp, GroupOverlay::dp,
                                                               GroupOverlay::pp,  GroupOverlay::cp};
/// "tp", "ep", "edp", "dp", "pp", "cp" (the names of the exported files, topology-<name>.svg).
const char* toString(GroupOverlay overlay);

/// The link tiers a group's traffic crosses.
struct LinkTiers {
    bool scale_up = false;  ///< GPU <-> scale-up switch (two members share a domain)
    bool scale_out = false; ///< GPU -> NIC -> leaf (two members in different domains)
    bool spine = false; ///< leaf -> spine (two members in different domains on different leaves)
    bool operator==(const LinkTiers&) const = default;
};

/// Where one group sits.
struct GroupSpanInfo {
    int group = 0;
    int gpus = 0;
    int nodes = 0, first_node = 0, last_node = 0;
    /// Distance between consecutive nodes of the group when it is the same for all (1 =
    /// contiguous); 0 when irregular or one node.
    int node_stride = 0;
    int racks = 0, first_rack = 0, last_rack = 0;
    LinkTiers tiers; ///< pp: the tiers of the stage's sends to its neighbouring stages
};

struct OverlayGroups {
    GroupOverlay overlay = GroupOverlay::tp;
    std::vector<int> group_of_gpu;    ///< GPU -> index into spans; -1 when it cannot be placed
    std::vector<GroupSpanInfo> spans; ///< one per group, by index
    bool single_gpu_groups = false;   ///< every group is one GPU (a dimension of degree 1)
};

/// The groups of `overlay` and their spans. Empty when the layout cannot be placed.
OverlayGroups overlayGroups(GroupOverlay overlay, const Scenario& scenario,
                            const Placement& placement, const HardwareGraph& graph);

/// "EP group 3", "Expert DP group 3", "PP stage 3", "DualPipe rank 3 (stages 3 and 12)".
std::string groupTitle(GroupOverlay overlay, int group, const LayoutSpec& layout);
/// "nodes 8-15 (rack 1), 64 GPUs, NVLink + InfiniBand leaf".
std::string describeGroupSpan(GroupOverlay overlay, const GroupSpanInfo& span,
                              const ClusterSpec& cluster);

/// One line of an overlay's legend: a group (`group` >= 0, its colour swatch) or a summary.
struct OverlayLegendLine {
    int group = -1;
    std::string text;
};
/// The legend of an overlay: its title line, the first `listed` groups ("EP group 3: nodes
/// 8-15 ..."), then the rest summarised by shape ("… 248 more, each 8 GPUs in 1 node, NVLink"),
/// one line per distinct shape (GPUs, nodes, racks, tiers), in order of first appearance.
std::vector<OverlayLegendLine> overlayLegend(const OverlayGroups& groups, const Scenario& scenario,
                                             int listed);

} // namespace moe
