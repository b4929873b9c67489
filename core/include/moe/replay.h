#pragma once
// Replay: a run of sampled training steps. Every step resamples the routing (a new seed derived
// from the scenario's routing seed and the step index, exactly as sampleExpertLoad derives it),
// so the hot GPU moves and the all-to-all volume per GPU changes from step to step, as in a
// real run. Only the routing-dependent part of evaluate's step is recomputed per step: the
// scenario is evaluated once (step 0) and a step costs one sampleExpertLoad plus O(stages +
// MoE layers) arithmetic, or O(GPUs) more with the per-GPU metrics.
//
// The per-step step time is the one pricing function's (priceStep on the report's cost model,
// step_costs.h), so replaying step k gives the step time of evaluate(scenario, k); test_replay
// checks that for several scenarios.

#include "moe/evaluate.h"
#include "moe/expert_load.h"
#include "moe/scenario.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace moe {

/// Per-GPU figures of one sampled step (index = GPU id). Float: they feed colour maps.
struct GpuStepMetrics {
    /// Token slots the GPU's experts process per micro-batch, summed over the MoE layers of its
    /// pipeline stage.
    std::vector<float> tokens;
    /// `tokens` over its mean (the stage's MoE layers x mean slots per EP rank): 1 = even load.
    std::vector<float> load_factor;
    /// The GPU's busiest MoE layer: max over its stage's layers of gpuLoadRatio (token slots /
    /// the layer's mean over every GPU holding it), what the load colour scale shows; 0 for a
    /// stage without MoE layers.
    std::vector<float> peak_ratio;
    /// Bytes the GPU receives in the MoE all-to-alls per step (see ReplayModel::sample).
    std::vector<float> a2a_recv_bytes;
    /// Seconds per step the GPU runs none of its own compute (see ReplayModel::sample).
    std::vector<float> idle_s;
    /// Memory the GPU's pipeline stage needs / HBM (routing-independent).
    std::vector<float> memory_share;
};

/// The routing-dependent figures of one step.
struct StepSample {
    uint64_t step = 0;
    double step_time_s = 0;
    StepBreakdown breakdown;                 ///< the step by item (priceStep)
    double imbalance_wait_s = 0;             ///< the step's imbalance wait (worst stage x m)
    double max_imbalance = 1.0;              ///< ExpertLoad::max_imbalance
    double mean_imbalance = 1.0;             ///< ExpertLoad::mean_imbalance
    std::vector<double> imbalance_per_layer; ///< ExpertLoad::imbalance_per_layer
    std::vector<double> stage_imbalance;     ///< per stage: the factor its EP groups pay
    int slowest_stage = 0;                   ///< the stage that sets the step
    int hottest_gpu = -1;                    ///< highest load factor (per-GPU metrics only)
    double dropped_share = 0;                ///< ExpertLoad::dropped_share
};

/// evaluate()'s step with the routing as a parameter: built once from a scenario and its
/// step-0 report, then any routing sample gives that step's time and per-GPU figures.
/// Immutable after construction, so sample() may run on several threads.
class ReplayModel {
public:
    /// `base` = evaluate(scenario) at any routing step. The model copies what it needs and
    /// shares the report's placement, so `base` may be destroyed afterwards.
    ReplayModel(const Scenario& scenario, const Report& base);

    /// Step `step`: samples its routing (sampleExpertLoad(scenario, placement, step)) and
    /// derives its step time; fills `gpus` when given.
    StepSample sample(uint64_t step, GpuStepMetrics* gpus = nullptr) const;
    /// The same for a given routing sample (its `step` field is left 0).
    StepSample fromLoad(const ExpertLoad& load, GpuStepMetrics* gpus = nullptr) const;

    const Scenario& scenario() const { return scenario_; }
    const Placement& placement() const { return *placement_; }
    int gpus() const { return placement_->gpuCount(); }

private:
    void gpuMetrics(const ExpertLoad& load, StepSample& out, GpuStepMetrics& gpus) const;
    Scenario scenario_;
    std::shared_ptr<const Placement> placement_;
    std::shared_ptr<const StepCostModel> costs_;
    std::vector<double> memory_share_; ///< per stage: memory total / HBM
    bool is_moe_ = false;
    double base_step_s_ = 0;
};

/// A running replay: steps 0, 1, 2, ... with their step times and running percentiles.
class Replay {
public:
    explicit Replay(std::shared_ptr<const ReplayModel> model);

    /// Samples the next step (0 first) and appends it to the history.
    const StepSample& advance(GpuStepMetrics* gpus = nullptr);
    /// Forgets the history; the next advance() is step 0 again.
    void reset();

    uint64_t stepsDone() const { return static_cast<uint64_t>(step_time_s_.size()); }
    const StepSample& last() const { return last_; }
    /// Per step done: its step time and the running p50 / p99 of the steps up to it.
    const std::vector<double>& stepTimes() const { return step_time_s_; }
    const std::vector<double>& p50() const { return p50_s_; }
    const std::vector<double>& p99() const { return p99_s_; }
    const ReplayModel& model() const { return *model_; }

private:
    std::shared_ptr<const ReplayModel> model_;
    StepSample last_;
    std::vector<double> step_time_s_, p50_s_, p99_s_;
    std::vector<double> sorted_s_; ///< the step times so far, ascending
};

/// Nearest-rank percentile of ascending `sorted` (q in [0, 1]): the smallest value with at least
/// q of the values at or below it, sorted[ceil(q * n) - 1]; 0 for no values.
double nearestRankPercentile(const std::vector<double>& sorted, double q);

} // namespace moe
