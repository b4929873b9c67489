#pragma once
// evaluate(scenario) -> Report: the performance model. Pure, deterministic, thread-safe; no I/O.
// Every figure is derived in evaluate.cpp and the modules it composes (model_costs, collectives,
// expert_load), each formula documented next to its code.

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

struct StageResult {
    StageLayers layers;
    StepBreakdown per_micro_batch; ///< forward + backward of one micro-batch on this stage
    MemoryBreakdown memory;
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
    std::vector<DesignWarning> warnings;
};

/// Evaluates a scenario that passed validateScenario. `routing_step` selects the routing
/// resample (0 = default).
Report evaluate(const Scenario& scenario, uint64_t routing_step = 0);

} // namespace moe
