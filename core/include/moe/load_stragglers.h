#pragma once
// Expert load as a ratio to its layer's mean, and the stragglers: the EP ranks whose token
// slots most exceed their layer's mean, with the step time each one costs.
//
// The layer mean is the mean over every sampled (EP group, EP rank) of that layer, i.e. over all
// GPUs holding the layer (each GPU carries the sample of its token stream): the same mean as
// ExpertLoad::imbalance_per_layer, so the hottest cell's ratio is that layer's imbalance.

#include "moe/report.h"

#include <vector>

namespace moe {

/// Mean token slots per EP rank and micro-batch in `layer`, over every sampled group and rank
/// (0 outside the sample).
double layerMeanSlots(const ExpertLoad& load, int layer);

/// gpuTokens(placement, gpu, layer) / layerMeanSlots(load, layer); NaN when the GPU's pipeline
/// stage does not hold the layer or the layer has no tokens.
double gpuLoadRatio(const ExpertLoad& load, const Placement& placement, int gpu, int layer);

struct LoadStraggler {
    int layer = 0;     ///< MoE layer index
    int group = 0;     ///< sampled EP group (token stream)
    int rank = 0;      ///< EP rank in that group
    int stage = 0;     ///< pipeline stage holding the layer
    int gpu = -1;      ///< the first GPU (lowest id) carrying this sample
    int node = -1;     ///< that GPU's node
    int gpus = 0;      ///< GPUs carrying this sample (ETP shards, token streams sharing the sample)
    double tokens = 0; ///< token slots per micro-batch ("slots" is a Qt macro)
    double ratio = 1;  ///< slots / layerMeanSlots
    /// The imbalance wait this rank adds to its EP group per step: in its layer the group runs
    /// at its pace, so over the m micro-batches its group waits m x (expert GEMMs + all-to-alls
    /// at this ratio - the same at the mean), MoeCosts::price (transfers counted whole, as
    /// outside DualPipe's pairs). What the step pays only if its group sets the pace.
    double wait_s = 0;
    double step_cost_s = 0; ///< what the step would save with this rank at the layer mean
};

/// The `n` samples (layer, group, rank) with the highest ratio above 1, hottest first (ties:
/// lower layer, group, rank first). A straggler's cost is priceStep's step time with the
/// report's load minus the same with this one rank brought down to its layer's mean, its
/// excess slots spread evenly over the other ranks of its EP group (the router would send
/// those tokens to the group's other experts; the layer mean is unchanged). The step waits for
/// the worst EP group of each stage (ExpertLoad::worstGroupImbalance), so a straggler outside
/// the slowest stage's worst group costs nothing, and one in it costs the difference between
/// its group and the next-worst (ties with other groups: nothing). Empty for dense models or a
/// report without a cost model. O(layers x groups x ranks + n x priceStep).
std::vector<LoadStraggler> topStragglers(const Report& report, int n = 10);

} // namespace moe
