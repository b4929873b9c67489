#pragma once
// evaluate(scenario) -> Report: the performance model. Pure, deterministic, thread-safe; no I/O.
// Every figure is derived in evaluate.cpp and the modules it composes (model_costs, collectives,
// expert_load), each formula documented next to its code.

#include "moe/collectives.h"
#include "moe/economics.h"
#include "moe/expert_load.h"
#include "moe/model_costs.h"
#include "moe/placement.h"
#include "moe/scenario.h"
#include "moe/topology.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace moe {

enum class CollectiveKind {
    moe_dispatch,  ///< all-to-all, forward and backward
    moe_combine,   ///< all-to-all, forward and backward
    tp_collective, ///< TP all-reduce / reduce-scatter + all-gather (sequence parallel)
    cp_exchange,   ///< context-parallel KV exchange
    pp_send_recv,  ///< activations / gradients between adjacent stages
    dp_sync,       ///< gradient sync of dense parameters over DP
    edp_sync,      ///< gradient sync of expert parameters over expert-DP
};
const char* toString(CollectiveKind k);

struct Collective {
    CollectiveKind kind = CollectiveKind::moe_dispatch;
    std::string name;
    GroupKind group = GroupKind::ep;
    int group_size = 1;
    int calls_per_step = 0;                     ///< per GPU of the busiest stage
    double bytes_per_gpu = 0;                   ///< per step, sent by each GPU
    double scale_up_bytes_per_gpu = 0;          ///< of which over NVLink
    double scale_out_bytes_per_gpu = 0;         ///< of which through the NIC
    LinkClass link_class = LinkClass::scale_up; ///< scale_out when any byte leaves the domain
    double time_s = 0;                          ///< per step, if nothing overlapped it
    double exposed_s = 0;                       ///< on the critical path
};

/// Items of the step-time breakdown; they sum to the step time.
enum class StepItem {
    attention,
    dense_ffn,
    router,
    expert_compute,
    all_to_all,
    tp_comm,
    cp_comm,
    pp_comm,
    bubble,
    dp_sync,
    optimizer,
    imbalance_wait,
    count
};
constexpr int kStepItemCount = static_cast<int>(StepItem::count);
const char* toString(StepItem item);

struct StepBreakdown {
    std::array<double, kStepItemCount> seconds{};      ///< exposed time per item
    std::array<double, kStepItemCount> overlapped_s{}; ///< time hidden behind other work
    double total_s = 0;
    double& operator[](StepItem item) { return seconds[static_cast<int>(item)]; }
    double operator[](StepItem item) const { return seconds[static_cast<int>(item)]; }
};

/// What one micro-batch costs one GPU of a pipeline stage, per layer and pass, exactly as
/// StageResult::per_micro_batch charges it (at the mean expert load), plus the stage's per-step
/// gradient sync and optimizer. The step timeline schedules these durations, so the timeline and
/// the report never disagree. Backward durations include recomputation.
struct StageTimes {
    double attention_fwd_s = 0, attention_bwd_s = 0; ///< per layer (every layer)
    double dense_ffn_fwd_s = 0, dense_ffn_bwd_s = 0; ///< per dense layer
    double shared_fwd_s = 0, shared_bwd_s = 0;       ///< shared experts, per MoE layer
    double router_fwd_s = 0, router_bwd_s = 0;       ///< per MoE layer
    double expert_fwd_s = 0, expert_bwd_s = 0;       ///< routed experts per MoE layer, mean load
    double lm_head_fwd_s = 0, lm_head_bwd_s = 0;     ///< the stage holding the LM head
    double tp_call_s = 0;                            ///< one TP all-gather or reduce-scatter
    double tp_bytes_per_call = 0;
    int tp_calls_fwd = 0, tp_calls_bwd = 0; ///< per layer
    double cp_hop_s = 0;                    ///< one ring step of the KV exchange
    double cp_bytes_per_hop = 0;
    int cp_hops_fwd = 0, cp_hops_bwd = 0; ///< per layer; they overlap the attention core
    /// Per MoE layer at the mean load: the forward dispatch and combine, and backward's two
    /// all-to-alls at activation precision: combine_bwd (the combine's gradient, first; full
    /// recompute adds the re-run forward pair to it), then dispatch_bwd after the expert GEMMs.
    double dispatch_fwd_s = 0, combine_fwd_s = 0, dispatch_bwd_s = 0, combine_bwd_s = 0;
    double dispatch_bytes = 0, combine_bytes = 0; ///< per GPU per all-to-all call
    /// Gradient sync per step: reduce-scatter (ZeRO >= 1) or all-reduce (ZeRO-0) of the
    /// gradients, then the all-gather of the updated weights (ZeRO >= 1, else 0).
    double dp_grad_sync_s = 0, dp_param_gather_s = 0, dp_sync_bytes = 0;
    double edp_grad_sync_s = 0, edp_param_gather_s = 0, edp_sync_bytes = 0;
    double optimizer_s = 0;
};

/// One of a layer's two TP operations in a pass (after attention, after the MLP), each half of
/// the pass's `calls_per_layer` TP collectives.
double tpOperation_s(const StageTimes& times, int calls_per_layer);

/// What a DualPipe pair's transfers add to its compute, by the collective exposed.
struct PairExposure {
    double all_to_all_s = 0, tp_s = 0;
    double total_s() const { return all_to_all_s + tp_s; }
};

/// The load-dependent costs of one MoE layer on one GPU, as evaluate charges them, for any load:
/// the grouped expert GEMMs (roofline with the small-GEMM curve) and the all-to-alls paced by
/// the busiest receiver. The functions are evaluate.cpp's own formulas.
struct MoeCostModel {
    bool valid = false; ///< false for dense models
    int experts_per_rank = 1;
    double flops_per_slot = 0;
    double expert_weight_bytes = 0;
    double activation_bytes_per_slot = 0;
    double gemm_flops = 0;  ///< achievable FLOP/s
    double hbm_bytes_s = 0; ///< achievable HBM bytes/s
    double mean_slots = 0;  ///< token slots per EP rank per micro-batch at the mean load
    GroupShape ep_shape;
    LinkParams scale_up, scale_out;
    double dispatch_bytes = 0, combine_bytes = 0;               ///< per GPU per call
    double dispatch_cross_bytes = -1, combine_cross_bytes = -1; ///< node-limited routing, or -1
    double backward_passes = 2;      ///< backward (+ full recompute) in forward passes
    double recompute_s_per_slot = 0; ///< selective recompute of the experts' activation
    double forward_pairs = 1; ///< forward dispatch + combine pairs per layer (2: full recompute)
    /// Per MoE layer, forward and backward (recomputation included): attention, router and
    /// shared experts, the compute a DualPipe pair runs beside the other pass's all-to-alls.
    double attention_block_fwd_s = 0, attention_block_bwd_s = 0;
    /// The attention alone, forward and backward: with TP > 1 a TP collective separates it
    /// from the router and shared experts.
    double attention_fwd_s = 0, attention_bwd_s = 0;
    /// Per MoE layer and pass, each of the two TP operations (after attention, after the MLP);
    /// 0 without TP.
    double tp_fwd_s = 0, tp_bwd_s = 0;

    /// Forward time of one EP rank's grouped expert GEMMs holding `slots` token slots.
    double expertForward_s(double slots) const;
    /// Backward time of the same, recomputation included.
    double expertBackward_s(double slots) const;
    /// One dispatch all-to-all (dispatch precision) when the busiest receiver gets
    /// recv_factor x the mean bytes (factors below 1 count as 1).
    double dispatch_s(double recv_factor) const;
    /// One all-to-all at activation precision (the combine, and both backward all-to-alls).
    double combine_s(double recv_factor) const;
    /// DualPipe: what one MoE layer's all-to-alls and TP collectives add to a fused forward &
    /// backward pair's compute when the EP group runs at `factor` x the mean load (evaluate.cpp
    /// derives it), by collective.
    PairExposure pairExposure(double factor) const;
    /// The same, all collectives.
    double pairExposed_s(double factor) const { return pairExposure(factor).total_s(); }
};

/// DualPipe: the forwards (and as many backwards) per step that pipeline rank `stage` runs
/// alone rather than fused into overlapped pairs.
double dualPipeUnpairedPasses(int pp, int stage);

struct StageResult {
    StageLayers layers;
    StepBreakdown per_micro_batch; ///< forward + backward of one micro-batch on this stage
    MemoryBreakdown memory;
    StageTimes times; ///< per layer and pass, for the step timeline
};

struct Throughput {
    double tokens_per_step = 0;
    double tokens_per_s = 0;
    double tokens_per_s_per_gpu = 0;
    double model_tflops_per_gpu = 0; ///< model FLOPs (no recompute) per second per GPU
    double mfu = 0;                  ///< versus the BF16 dense peak
    double time_to_train_s = 0;
    double gpu_hours = 0;
    double gpu_hours_per_trillion_tokens = 0;
    double energy_kwh = 0; ///< 0 when power is unknown
    double cost_usd = 0;   ///< 0 when prices are not given
};

struct DesignWarning {
    enum class Severity { info, warning, critical };
    Severity severity = Severity::warning;
    std::string code;      ///< stable id, e.g. "ep-crosses-nodes"
    std::string message;   ///< one line, plain words
    std::vector<int> gpus; ///< what it is about (for highlighting), may be empty
};
const char* toString(DesignWarning::Severity s);

struct Report {
    int gpus = 0;
    int micro_batches = 0;
    ParamCounts params;
    std::shared_ptr<const HardwareGraph> graph;
    std::shared_ptr<const Placement> placement;
    std::vector<std::string> layout_description;

    std::vector<Collective> collectives;
    std::vector<double> link_bytes;       ///< per link id, per step
    std::vector<double> link_utilization; ///< bytes / (bandwidth x step time), 0..1+

    ExpertLoad load;
    std::vector<StageResult> stages;
    StepBreakdown step; ///< the whole step (critical path)
    double step_time_s = 0;
    MemoryBreakdown memory; ///< the stage with the least margin
    Throughput throughput;
    std::vector<DesignWarning> warnings; ///< most severe first
    Economics economics; ///< time, cost, power and failures of the run (economics.h)

    // Inputs of the step timeline (timeline.h) that are not per stage.
    MoeCostModel moe_costs;
    double pp_send_s = 0;        ///< one activation (or gradient) send between adjacent stages
    double pp_message_bytes = 0; ///< its size
};

/// Evaluates a scenario that passed validateScenario. `routing_step` selects the routing
/// resample (0 = default).
Report evaluate(const Scenario& scenario, uint64_t routing_step = 0);

/// State reused across many evaluations on one cluster (the layout search): the hardware graph
/// and recent routing samples. The figures are identical to evaluate(scenario, routing_step).
/// Not thread-safe: one per thread.
struct EvaluationCache {
    std::shared_ptr<const HardwareGraph> graph;
    ClusterSpec graph_cluster; ///< what `graph` was built from
    ExpertLoadCache loads;
    /// false leaves report.link_bytes and link_utilization empty (nothing else depends on
    /// them): the per-link accounting is an eighth of a large cluster's evaluation.
    bool link_traffic = true;
};
Report evaluate(const Scenario& scenario, uint64_t routing_step, EvaluationCache& cache);

} // namespace moe
