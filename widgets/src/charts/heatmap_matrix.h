#pragma once
// The expert-load heatmap's matrix (private to HeatmapView): token slots and their ratio to the
// layer mean per cell, from the core (gpuTokens, gpuLoadRatio, layerMeanSlots).

#include "moe/expert_load.h"
#include "moe/placement.h"
#include "moe/scenario.h"

#include <QString>

#include <utility>
#include <vector>

namespace moe::widgets::charts {

/// The matrix shown, row-major (MoE layer rows). GPU mode is the stage view: row = MoE layer,
/// column k = the k-th GPU (by id) of the pipeline stage holding that layer, so every cell is a
/// GPU that holds its layer (with PP=1, column k is GPU k). Ratios are the core's (× the layer
/// mean over every GPU holding it); NaN only where a stage has fewer GPUs than the widest.
struct LoadMatrix {
    int columns = 0;
    std::vector<double> cells;  ///< token slots per micro-batch
    std::vector<double> ratios; ///< cells / layer mean
    std::vector<int> gpu;       ///< GPU mode: the GPU of each cell (-1: none)
    std::vector<double> row_mean;
    /// The MoE layer of each row: in order, except that GPU mode groups them by the stage
    /// holding them (interleaved and DualPipe stages hold non-adjacent layers).
    std::vector<int> row_layer;
    double max_ratio = 1;
};

/// The stage holding MoE layer `layer` (0 when the sample does not say).
int stageOfLayer(const ExpertLoad& load, int layer);

/// GPU mode (`gpus`): the stage view; expert mode: `experts` columns of tokens_per_expert.
LoadMatrix loadMatrix(const ExpertLoad& load, const Placement& placement, bool gpus, int experts);

/// (column, row) of the largest finite cell, (-1, -1) when there is none.
std::pair<int, int> busiestCell(const std::vector<double>& cells, int columns, int rows);

/// "aux_loss balancing, zipf α 1.2, balance 0.3, seed 7": the routing model behind the sample.
QString routingText(const RoutingSpec& routing);

} // namespace moe::widgets::charts
