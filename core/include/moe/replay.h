#pragma once
// Replay: a run of sampled training steps. Every step resamples the routing (a new seed derived
// from the scenario's routing seed and the step index, exactly as sampleExpertLoad derives it),
// so the hot GPU moves and the all-to-all volume per GPU changes from step to step, as in a
// real run. Only the routing-dependent part of evaluate's step is recomputed per step: the
// scenario is evaluated once (step 0) and a step costs one sampleExpertLoad plus O(stages +
// MoE layers) arithmetic, or O(GPUs) more with the per-GPU metrics.
//
// The per-step step time uses evaluate's own formulas (MoeCostModel, ExpertLoad's stage
// imbalance, the exposure rule and the bubble's closed forms), so replaying step k gives the
// step time of evaluate(scenario, k); test_replay checks that for several scenarios.

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
    int gpus() const { return static_cast<int>(placement_->coords.size()); }

private:
    void gpuMetrics(const ExpertLoad& load, StepSample& out, GpuStepMetrics& gpus) const;
    /// DualPipe: the stage whose chunk shares a rank with `stage` (itself otherwise).
    size_t partnerOf(size_t stage) const;
    /// Per micro-batch of the rank running `stage`, from its and its partner's times.
    double rankTime_s(size_t stage, double own_s, double partner_s) const;
    struct StageConst {
        std::vector<int> moe_layers; ///< MoE layer indices the stage holds
        double total_s = 0;          ///< per micro-batch at the base load
        double base_wait_s = 0;      ///< imbalance wait in total_s
        double compute_s = 0;        ///< compute, load-independent
        double expert_mean_s = 0;    ///< expert GEMMs fwd+bwd per MoE layer at the mean load
        double unpaired = 0; ///< DualPipe: forwards the rank runs alone (dualPipeUnpairedPasses)
        double dispatch_bytes = 0, combine_bytes = 0; ///< per GPU per all-to-all call
        double memory_share = 0;                      ///< memory total / HBM
    };
    Scenario scenario_;
    std::shared_ptr<const Placement> placement_;
    MoeCostModel cost_;
    std::vector<StageConst> stages_;
    double micro_batches_ = 1;
    double fwd_pairs_ = 1;        ///< forward all-to-all pairs per layer (2 with full recompute)
    double fixed_s_ = 0;          ///< PP transfers + DP sync + optimizer of the step
    double bubble_per_mb_s_ = 0;  ///< bubble / per-micro-batch time (the closed forms are linear)
    bool overlapped_a2a_ = false; ///< DualPipe: fused pairs, and two stages' chunks per rank
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
