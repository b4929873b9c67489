#pragma once
// Maps ranks to GPUs from the degrees and the rank order, lists every parallel group with its
// span over the hardware, and places experts on EP ranks.
//
// Rank order follows Megatron-Core's RankGenerator: the order string (e.g. "tp-cp-ep-dp-pp",
// leftmost fastest) defines two grids over the same GPUs ("parallel folding"):
//   dense grid  (attention, dense FFN): tp, cp, dp, pp   (ep is left out)
//   expert grid (MoE layers):          etp, ep, edp, pp  (tp -> etp, cp -> 1, dp -> edp)
// Rank r runs on GPU r, and GPUs are numbered node-major, so the leftmost dimensions share a node.

#include "moe/scenario.h"
#include "moe/topology.h"

#include <string>
#include <vector>

namespace moe {

enum class GroupKind { tp, cp, dp, pp, ep, etp, edp };
constexpr int kGroupKindCount = 7;
const char* toString(GroupKind k);

/// Coordinates of one rank in both grids.
struct RankCoords {
    int tp = 0, cp = 0, dp = 0, pp = 0; ///< dense grid
    int etp = 0, ep = 0, edp = 0;       ///< expert grid (pp is shared)
};

/// How a group of GPUs sits on the hardware.
struct GroupSpan {
    int gpus = 0;
    int max_gpus_per_domain = 0; ///< most members that share one scale-up domain
    int domains = 0;             ///< scale-up domains touched
    int nodes = 0;
    int racks = 0;
    /// scale_up when the whole group is inside one domain; otherwise its traffic also rides the
    /// scale-out fabric.
    LinkClass link_class = LinkClass::scale_up;
};

struct ParallelGroup {
    GroupKind kind = GroupKind::tp;
    int index = 0;
    std::vector<int> gpus; ///< in rank order inside the group
    GroupSpan span;
};

/// Which experts live on which EP rank (one map per distinct placement).
struct ExpertMap {
    std::vector<std::vector<int>> ranks_of_expert; ///< expert -> EP ranks holding a replica
    std::vector<std::vector<int>> experts_on_rank; ///< EP rank -> experts it holds
};

struct Placement {
    std::vector<RankCoords> coords; ///< per GPU
    /// groups[kind] lists every group of that kind; a dimension of degree 1 has one-GPU groups.
    std::vector<std::vector<ParallelGroup>> groups;
    /// Widest span of any group of each kind (groups of a kind are usually alike).
    std::vector<GroupSpan> worst_span;
    /// group_of_gpu[kind][gpu] = index into groups[kind].
    std::vector<std::vector<int>> group_of_gpu;

    ExpertMap default_experts;         ///< round-robin: expert e on EP rank e % ep
    std::vector<ExpertMap> layer_maps; ///< maps that differ from the default
    std::vector<int> layer_map_index;  ///< MoE layer -> index into layer_maps, -1 = default

    const std::vector<ParallelGroup>& groupsOf(GroupKind k) const {
        return groups[static_cast<int>(k)];
    }
    const GroupSpan& spanOf(GroupKind k) const { return worst_span[static_cast<int>(k)]; }
    const ExpertMap& expertsForLayer(int moe_layer) const;
    /// The group of kind `k` that `gpu` belongs to.
    const ParallelGroup& groupOf(GroupKind k, int gpu) const;
};

/// Places a validated scenario (see validateScenario) on its hardware graph.
Placement placeLayout(const Scenario& scenario, const HardwareGraph& graph);

/// The layout in words, one sentence per line, e.g. "EP=8 inside nodes so the all-to-all rides
/// NVLink, DP=8 across nodes so the gradient all-reduce uses InfiniBand".
std::vector<std::string> describeLayout(const Scenario& scenario, const Placement& placement);
/// The cluster's links in words: "NVLink", "InfiniBand", and its scale-up domain ("node" or
/// "rack"), for the sentences describeLayout and the search's explanations write.
struct FabricWords {
    std::string scale_up, scale_out, domain;
    bool rack_domain = false;
};
FabricWords fabricWords(const ClusterSpec& cluster);

/// Where a group of this span sits, in describeLayout's words: "inside nodes", "inside racks",
/// "across nodes" (one member per node), "across 8 nodes".
std::string spanPlaceWords(const GroupSpan& span, const ClusterSpec& cluster);
/// The links its collectives ride, briefly: "NVLink", "InfiniBand", "NVLink + InfiniBand".
std::string spanLinkWords(const GroupSpan& span, const ClusterSpec& cluster);

} // namespace moe
