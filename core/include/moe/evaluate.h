#pragma once
// evaluate(scenario) -> Report: the performance model. Pure, deterministic, thread-safe; no I/O.
// The step is priced by the one cost model (step_costs.h: buildStepCostModel + priceStep); this
// module adds the report around it (collectives, link traffic, memory, throughput, economics
// and design warnings). The Report itself is report.h.

#include "moe/expert_load.h"
#include "moe/report.h"
#include "moe/scenario.h"
#include "moe/topology.h"

#include <cstdint>
#include <memory>

namespace moe {

/// Evaluates a scenario that passed validateScenario. `routing_step` selects the routing
/// resample (0 = default).
Report evaluate(const Scenario& scenario, uint64_t routing_step = 0);

/// State reused across many evaluations on one cluster (the layout search): the hardware graph
/// and recent routing samples. The figures are identical to evaluate(scenario, routing_step).
/// Not thread-safe: one per thread.
using GraphOnDemand = OnDemand<HardwareGraph>;

struct EvaluationCache {
    std::shared_ptr<const GraphOnDemand> graph; ///< built only if some report's graph() is read
    ClusterSpec graph_cluster;                  ///< what `graph` is built from
    HardwareShape hardware;                     ///< hardwareShape(graph_cluster)
    ExpertLoadCache loads;
    /// Recent placements and what they were placed from, newest first: a search evaluates
    /// many candidates (micro-batch, recompute, schedule, interleaving, for each allowed rank
    /// order) on one set of degrees, and placing a 131,072-GPU layout costs more than pricing it.
    struct PlacedLayout {
        std::shared_ptr<const GraphOnDemand> graph; ///< the cluster it was placed on
        LayoutSpec layout;                          ///< schedule, vpp and routing limits cleared
        int experts = 0;
        int moe_layers = 0;
        std::shared_ptr<const Placement> placement;
    };
    std::vector<PlacedLayout> placements;
    static constexpr size_t kRecentPlacements = 4; ///< the orders a search tries, usually
    /// true leaves report.load and report.warnings empty (the warnings read the load), and the
    /// layout's description and economics: the step is priced from the cached routing sample
    /// without copying it, for callers that read only the figures (the layout search).
    bool figures_only = false;
};
Report evaluate(const Scenario& scenario, uint64_t routing_step, EvaluationCache& cache);

} // namespace moe
