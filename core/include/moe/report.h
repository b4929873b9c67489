#pragma once
// The Report: everything evaluate() (evaluate.h) computes about one scenario, as plain data that
// the front ends render: collectives, link traffic, expert load, the priced step, memory,
// throughput, economics and design warnings.

#include "moe/collectives.h"
#include "moe/economics.h"
#include "moe/expert_load.h"
#include "moe/model_costs.h"
#include "moe/on_demand.h"
#include "moe/placement.h"
#include "moe/step_costs.h"
#include "moe/topology.h"
#include "moe/warnings.h"

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
    // The run's energy and cost are Economics' (economics.h): one figure each, with failures,
    // checkpoints and the cost basis.
};

/// Bytes on every link of the hardware graph in one step, and what share of the link's
/// bandwidth they use.
struct LinkTraffic {
    std::vector<double> bytes;       ///< per link id, per step (the busier direction)
    std::vector<double> utilization; ///< bytes / (bandwidth x step time), 0..1+
};

struct Report {
    int gpus = 0;
    int micro_batches = 0;
    ParamCounts params;
    HardwareShape hardware; ///< the cluster's sizes (the graph's, without building it)
    std::shared_ptr<const Placement> placement;
    std::vector<std::string> layout_description;

    std::vector<Collective> collectives;

    /// The per-GPU and per-link detail is built when a view or an export first asks for it,
    /// not by evaluate(): it is all that grows with the cluster (a 65,536-GPU graph has 200,000
    /// vertices). Both are shared by copies of the report.
    std::shared_ptr<const OnDemand<HardwareGraph>> hardware_graph;
    std::shared_ptr<const OnDemand<LinkTraffic>> link_traffic;
    /// The hardware graph (null for a report evaluate() did not make).
    std::shared_ptr<const HardwareGraph> graph() const {
        return hardware_graph
                   ? std::shared_ptr<const HardwareGraph>(hardware_graph, &hardware_graph->get())
                   : nullptr;
    }
    /// Per link id of graph(); empty for a report evaluate() did not make.
    const std::vector<double>& linkBytes() const { return linkTraffic().bytes; }
    const std::vector<double>& linkUtilization() const { return linkTraffic().utilization; }
    const LinkTraffic& linkTraffic() const {
        static const LinkTraffic none;
        return link_traffic ? link_traffic->get() : none;
    }

    ExpertLoad load;
    std::vector<StageResult> stages;
    StepBreakdown step; ///< the whole step (critical path)
    double step_time_s = 0;
    /// After the pipeline's last backward: exposed gradient sync, optimizer, weight gather.
    OptimizerPhase optimizer_phase;
    MemoryBreakdown memory; ///< the stage with the least margin
    Throughput throughput;
    std::vector<DesignWarning> warnings; ///< most severe first (warnings.h)
    Economics economics; ///< time, cost, power and failures of the run (economics.h)

    /// The cost model the report was priced with (step_costs.h): the step timeline and replay
    /// price their steps with it.
    std::shared_ptr<const StepCostModel> costs;
    int slowest_stage = 0;          ///< the stage that sets the pace (StepPrice::slowest_stage)
    DualPipePhases dualpipe_phases; ///< StepPrice::dualpipe_phases
};

} // namespace moe
