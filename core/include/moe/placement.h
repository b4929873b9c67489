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

#include <array>
#include <cstdint>
#include <memory>
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

/// Where one parallel dimension sits in its grid: its members are `stride` ranks apart.
struct GroupAxis {
    bool placed = false; ///< false when its grid does not cover the GPUs (a validation error)
    int size = 1;
    int64_t stride = 1;
};

/// What a group's span needs of the hardware: GPUs per node, per scale-up domain and per rack
/// (racks of equal size), or each node's rack when racks differ (cluster.rack_nodes).
struct SpanGeometry {
    int gpus_per_node = 1;
    int gpus_per_domain = 1;
    int gpus_per_rack = 0; ///< 0 when racks differ in size: node_rack holds each node's rack
    std::vector<int> node_rack;
    int rackOf(int gpu) const;
};

/// The span of the group whose members are first, first + stride, ..., counted without
/// listing them (closed form per window of consecutive GPUs).
GroupSpan strideSpan(int64_t first, int64_t stride, int members, const SpanGeometry& geometry);

struct Placement {
    /// Ranks map to GPUs by arithmetic on the axes, so coordinates, group indices and members
    /// cost O(1) per GPU and nothing per cluster: evaluate never lists the groups. groupsOf
    /// lists them on first use (for the views and tests).
    int gpu_count = 0;
    std::array<GroupAxis, kGroupKindCount> axes{};
    SpanGeometry geometry;
    /// Widest span of any group of each kind; groups that sit on the hardware alike (the same
    /// offset within the hardware's period) are priced once.
    std::vector<GroupSpan> worst_span;

    ExpertMap default_experts;         ///< round-robin: expert e on EP rank e % ep
    std::vector<ExpertMap> layer_maps; ///< maps that differ from the default
    std::vector<int> layer_map_index;  ///< MoE layer -> index into layer_maps, -1 = default

    int gpuCount() const { return gpu_count; }
    /// False when the dense grid does not cover the GPUs: there are no groups.
    bool placed() const { return axis(GroupKind::tp).placed; }
    /// False when EP x ETP does not divide TP x CP x DP: the expert layers have no groups.
    bool expertsPlaced() const { return axis(GroupKind::ep).placed; }
    const GroupAxis& axis(GroupKind k) const { return axes[static_cast<size_t>(k)]; }
    /// Coordinates of the rank on `gpu` in both grids (zeros for a grid that is not placed).
    RankCoords coordsOf(int gpu) const;
    /// Groups of kind `k` (0 when not placed; a dimension of degree 1 has one-GPU groups).
    int groupCount(GroupKind k) const;
    /// Index of the group of kind `k` holding `gpu`, -1 when none does.
    int groupIndexOf(GroupKind k, int gpu) const;
    /// The GPU at `position` (its coordinate along `k`) in group `group` of kind `k`.
    int memberGpu(GroupKind k, int group, int position) const;
    /// The members of group `group` of kind `k`, in rank order; `out` is reused.
    void membersOf(GroupKind k, int group, std::vector<int>& out) const;
    std::vector<int> membersOf(GroupKind k, int group) const;
    GroupSpan groupSpan(GroupKind k, int group) const;

    /// Every group of kind `k`, listed on first use (thread-safe); empty when not placed.
    const std::vector<ParallelGroup>& groupsOf(GroupKind k) const;
    const GroupSpan& spanOf(GroupKind k) const { return worst_span[static_cast<int>(k)]; }
    const ExpertMap& expertsForLayer(int moe_layer) const;
    /// The group of kind `k` that `gpu` belongs to (an empty group when none does).
    const ParallelGroup& groupOf(GroupKind k, int gpu) const;

    struct GroupLists; ///< the lists groupsOf fills, shared by copies of this placement
    std::shared_ptr<GroupLists> group_lists;
};

/// Places a validated scenario (see validateScenario) on its cluster. The hardware graph is not
/// needed: spans come from the cluster's shape (hardwareShape), so placing costs nothing per GPU
/// when racks are alike.
Placement placeLayout(const Scenario& scenario);

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
