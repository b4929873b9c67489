#pragma once
// What a training run really costs: capital and power of the cluster, failures and checkpoints
// at scale, and what-if sweeps over the GPU count and the checkpoint interval. Pure and
// deterministic; evaluate() fills Report::economics with computeEconomics() near its end, so
// every figure here follows from the performance model's throughput and the scenario's
// cluster.costs / cluster.reliability / training.checkpoint_interval_s fields. Formulas are
// documented next to their code in economics.cpp.

#include "moe/scenario.h"
#include "moe/topology.h"

#include <string>
#include <vector>

namespace moe {

/// Purchase price of the cluster, from the catalog's estimates or the scenario's overrides.
struct CapitalCost {
    int switches = 0; ///< leaf + spine switches of the scale-out fabric
    int cables = 0;   ///< NIC-leaf and leaf-spine links
    int racks = 0;
    double gpus_usd = 0;
    double servers_usd = 0; ///< nodes without their GPUs and NICs
    double nics_usd = 0;
    double switches_usd = 0;
    double cables_usd = 0;
    double racks_usd = 0;
    double total_usd = 0;
};

/// Electrical power while training, every component at its rated power.
struct PowerDraw {
    double gpus_w = 0;
    double nodes_w = 0; ///< per-node overhead (CPUs, memory, NVSwitches, fans)
    double nics_w = 0;
    double switches_w = 0;
    double racks_w = 0;    ///< per-rack overhead (NVL72 NVLink switch trays)
    double it_w = 0;       ///< sum of the above
    double facility_w = 0; ///< it_w x PUE
    /// The rack that draws the most IT power (the first of equals; -1 without racks) and its
    /// draw. Each rack's own is rackPowerW(cluster): a list that grows with the cluster.
    int hottest_rack = -1;
    double hottest_rack_w = 0;
};

/// IT power each rack draws: its nodes' GPUs, NICs and node overhead, plus the rack's own
/// overhead. Fabric switches sit in network racks and are not counted here.
std::vector<double> rackPowerW(const ClusterSpec& cluster);
/// The same for one rack of `nodes_in_rack` nodes.
double rackPowerW(const ClusterSpec& cluster, int nodes_in_rack);

/// Failures, checkpoints and the share of wall-clock time that trains the model.
struct ReliabilityFigures {
    double failures_per_h = 0; ///< whole cluster
    double gpu_failures_per_h = 0;
    double node_failures_per_h = 0;
    double mtbf_s = 0;           ///< 1 / failures_per_h; 0 when nothing fails
    double checkpoint_bytes = 0; ///< weights + FP32 master + Adam moments of every parameter
    double checkpoint_write_s = 0;
    double checkpoint_read_s = 0;
    double recovery_s = 0;           ///< detection + restart + checkpoint read, per failure
    double young_interval_s = 0;     ///< sqrt(2 delta M); 0 when nothing fails
    double optimal_interval_s = 0;   ///< Daly's higher-order optimum; 0 when nothing fails
    double interval_s = 0;           ///< the one used: the scenario's, or the optimum
    bool interval_is_optimal = true; ///< training.checkpoint_interval_s was 0
    double goodput = 1;              ///< training time / expected wall-clock time, 0..1
    double checkpoint_overhead = 0;  ///< share of wall-clock spent writing checkpoints
    double failure_overhead = 0;     ///< share lost to rework and recovery
};

/// One point of the checkpoint-interval sweep.
struct IntervalPoint {
    double interval_s = 0;
    double goodput = 0;
    double lost_h_per_day = 0; ///< 24 x (1 - goodput)
};

/// One point of the GPU-count sweep (throughput per GPU held at the evaluated value).
struct ScalePoint {
    int gpus = 0;
    int nodes = 0;
    double mtbf_s = 0;
    double interval_s = 0; ///< Daly optimum at that size (or the scenario's fixed interval)
    double goodput = 0;
    double days = 0;     ///< expected wall-clock to train (0 without total_tokens)
    double cost_usd = 0; ///< for the run (0 without total_tokens)
    double usd_per_trillion_tokens = 0;
};

struct Economics {
    bool valid = false;  ///< false when the report has no throughput
    bool rental = false; ///< priced by cluster.costs.gpu_hour_usd instead of ownership
    bool electricity_estimated = false; ///< the default price, not the scenario's
    double electricity_usd_per_kwh = 0; ///< the price used
    CapitalCost capital;
    PowerDraw power;
    double amortized_usd_per_h = 0; ///< capital / amortization period (0 when renting)
    double rental_usd_per_h = 0;    ///< GPUs x gpu_hour_usd (0 when owning)
    double energy_usd_per_h = 0;
    double usd_per_h = 0; ///< what the cluster costs per hour of wall-clock
    double usd_per_day = 0;
    double usd_per_gpu_hour = 0;
    ReliabilityFigures reliability;

    // The run (0 when training.total_tokens is 0), expected values including lost work.
    double compute_time_s = 0; ///< failure-free, checkpoint-free time to train
    double wall_time_s = 0;    ///< compute_time_s / goodput
    double days = 0;
    double checkpoint_time_s = 0; ///< writing checkpoints
    double lost_time_s = 0;       ///< rework and recovery after failures
    double expected_failures = 0;
    double gpu_hours = 0; ///< GPUs x wall-clock
    double energy_kwh = 0;
    double cost_usd = 0;
    double usd_per_trillion_tokens = 0; ///< at the expected goodput; defined without total_tokens

    std::vector<IntervalPoint> interval_sweep; ///< log-spaced around the optimum
    std::vector<ScalePoint> scale_sweep;       ///< 1/8x .. 8x the GPUs, the evaluated size included
};

/// Young's first-order optimum interval between checkpoints, sqrt(2 delta M) (Young 1974).
double youngInterval_s(double checkpoint_s, double mtbf_s);
/// Daly's higher-order optimum (Daly 2006): for delta < 2M,
/// sqrt(2 delta M) [1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9] - delta, else M.
double dalyInterval_s(double checkpoint_s, double mtbf_s);
/// Training time / expected wall-clock time under exponential failures with mean time M
/// (Daly 2006): tau / (M e^(R/M) (e^((tau+delta)/M) - 1)). M <= 0 means nothing fails:
/// tau / (tau + delta), or 1 when tau is 0 (no checkpoints).
double checkpointGoodput(double interval_s, double checkpoint_s, double recovery_s, double mtbf_s);

/// What the economics take from an evaluation (evaluate() passes its report's figures).
struct EconomicsInput {
    int gpus = 0;
    double parameters = 0; ///< all of the model's, for the checkpoint size
    double tokens_per_s = 0;
    double tokens_per_s_per_gpu = 0;
    double time_to_train_s = 0;
    const HardwareShape* hardware = nullptr; ///< racks, fabric switches and cables (capital)
};

/// The economics of `scenario` at the evaluated throughput.
Economics computeEconomics(const Scenario& scenario, const EconomicsInput& run);

/// What the cost figures count, in words: "owned: capital amortized over N years + energy" or
/// "rented: GPU-hours x $P per GPU-hour" (+ " + energy" when the scenario prices electricity).
std::string costBasisText(const Scenario& scenario, const Economics& economics);

} // namespace moe
