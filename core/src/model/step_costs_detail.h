// Helpers shared by the step cost model's files (step_costs.cpp, step_cost_model.cpp,
// step_price.cpp); private to core/src/model. Declarations only, so that step_costs.cpp can
// include it without an include cycle.

#pragma once

#include <vector>

namespace moe {
struct HardwareRates;
struct Scenario;
struct AloneTransfers;
struct ChunkPairExposure;
struct MoeLayerPrice;
struct PairSegment;
struct PairExposure;
struct StageCosts;
struct StagePace;
struct StepCostModel;
} // namespace moe

namespace moe::step_costs_detail {

/// The optimizer's step on `shard_params` parameters of this GPU's shard, gradient norm
/// included (step_costs.cpp, optimizerBytesPerParam).
double optimizerStep_s(const Scenario& s, double shard_params, const HardwareRates& r);

/// What a micro-batch's forward and backward on a stage expose when each runs alone (all their
/// transfers), and what a pair of them exposes (step_price.cpp).
AloneTransfers aloneTransfers(const StepCostModel& model, const StageCosts& stage,
                              const StagePace& pace);
PairExposure pairTransfers(const StepCostModel& model, const StageCosts& stage,
                           const StagePace& pace);
/// DualPipe (StepCostModel::chunk_pairs): what `stage`'s forward chunk exposes in the pair
/// that fuses it with the backward of the rank's other stage, and what its backward chunk
/// exposes in the other pair; pairTransfers is their sum.
ChunkPairExposure chunkPairTransfers(const StepCostModel& model, const StageCosts& stage,
                                     const StagePace& pace);

/// Charges `tail_s` of a segment's transfers to `exposed`, the transfer that runs last first
/// (step_costs_communication.cpp).
void chargeExposedTail(PairExposure& exposed, double tail_s, const PairSegment& transfer);

/// A stage's forward and backward chunk as the segments a DualPipe pair alternates, its MoE
/// layers at the pace `hot` (step_pair_chunks.cpp). Written into `out`, reused.
void forwardChunkSegments(const StepCostModel& model, const StageCosts& stage,
                          const MoeLayerPrice& hot, std::vector<PairSegment>& out);
void backwardChunkSegments(const StepCostModel& model, const StageCosts& stage,
                           const MoeLayerPrice& hot, std::vector<PairSegment>& out);

/// The exposed all-to-all and TP time of one micro-batch on `stage` at `pace`
/// (step_price.cpp).
PairExposure transferExposure(const StepCostModel& model, const StageCosts& stage,
                              const StagePace& pace);

} // namespace moe::step_costs_detail
