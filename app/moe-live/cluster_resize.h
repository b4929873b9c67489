#pragma once
// Resizing the cluster with the layout and batch following it, so a new GPU count stays a
// valid scenario: what --gpus and the "nodes" / "GPUs per node" what-ifs do. Pure (moe_core
// only), so test_moe_live checks it without a window.

#include "moe/edits.h"
#include "moe/scenario.h"

#include <string>
#include <vector>

namespace moe::live {

struct ClusterResize {
    /// --set overrides that make the change in one edit; empty when dp or the global batch
    /// does not scale to a whole number.
    std::vector<std::string> overrides;
    /// What the change does: "16 nodes: dp 64 -> 128, global batch 512 -> 1024".
    std::string summary;
    /// The resized scenario, validated as a whole, or why it is refused (the arithmetic's
    /// reason or the validator's).
    FieldEditResult edit;
};

/// `scenario` on `nodes` nodes of `gpus_per_node` GPUs, with layout.dp and
/// training.global_batch scaled by the GPU-count ratio: the batch per DP rank stays as it was,
/// so micro-batches per step and the per-GPU work do not change. A new node count also empties
/// cluster.rack_nodes (when set), so the racks refill instead of listing the old nodes. Goes
/// through the --set override path; `base_dir` resolves a relative routing histogram.
ClusterResize resizeCluster(const Scenario& scenario, int nodes, int gpus_per_node,
                            const std::string& base_dir = ".");

} // namespace moe::live
