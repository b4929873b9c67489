#pragma once
// Expert load: how many tokens each expert and each GPU gets in one training step, sampled
// from the routing model (uniform / Zipf / histogram, blended toward uniform by `balance`),
// seeded and reproducible. The hot GPU's extra tokens slow its expert GEMMs and the all-to-all
// into it, and its whole EP group waits for it.

#include "moe/placement.h"
#include "moe/scenario.h"

#include <cstdint>
#include <vector>

namespace moe {

struct ExpertLoad {
    int moe_layers = 0;
    int experts = 0;
    int ep = 1;
    int sampled_groups = 0; ///< EP groups sampled per layer (distinct token streams)
    /// Token slots (tokens x top_k) routed per EP group per micro-batch.
    double slots_per_group = 0;

    /// popularity[layer * experts + e]: routing probability of expert e in that MoE layer.
    std::vector<double> popularity;
    /// tokens_per_expert[layer * experts + e]: token slots expert e receives per micro-batch,
    /// averaged over the sampled groups (the heatmap's expert x layer matrix).
    std::vector<double> tokens_per_expert;
    /// rank_tokens[(layer * sampled_groups + group) * ep + rank]: token slots on that EP rank.
    std::vector<double> rank_tokens;

    /// stage_of_layer[layer]: the pipeline stage that holds that MoE layer (chunk c of the
    /// pp*vpp layer chunks runs on stage c % pp); only its GPUs carry the layer's tokens.
    std::vector<int> stage_of_layer;

    std::vector<double> imbalance_per_layer; ///< max over ranks and groups / mean
    /// Per sampled EP group: its busiest rank / the layer's mean, averaged over the MoE layers
    /// (what that group's own pipeline pays; the step waits for the worst group).
    std::vector<double> imbalance_per_group;
    std::vector<double> dropped_share_per_layer; ///< share of slots over capacity (0 if dropless)
    double max_imbalance = 1.0;
    double mean_imbalance = 1.0; ///< averaged over layers (what the step pays on average)
    double dropped_share = 0.0;
    int hottest_layer = 0;
    int hottest_group = 0;
    int hottest_rank = 0;

    /// Token slots a GPU receives in `layer` per micro-batch (GPU x layer heatmap): the sample
    /// of its EP rank in its token stream (sampled group = its expert-DP coordinate modulo
    /// sampled_groups; the ETP shards of one EP rank all see the rank's tokens); 0 for GPUs of
    /// pipeline stages that do not hold `layer`.
    double gpuTokens(const Placement& placement, int gpu, int layer) const;
    /// The GPU that carries the most tokens in any layer.
    int hottestGpu(const Placement& placement) const;
};

/// Samples one training step's routing. `step` selects the resample (step 0 = the default
/// view; the heatmap's "next step" increments it). Cost is O(moe_layers x sampled_groups x
/// experts), with at most kMaxSampledGroups groups per layer.
ExpertLoad sampleExpertLoad(const Scenario& scenario, const Placement& placement,
                            uint64_t step = 0);

constexpr int kMaxSampledGroups = 64;

} // namespace moe
