#include "moe/economics.h"

#include "moe/topology.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace moe {

namespace {

constexpr double kSecondsPerHour = 3600.0;
constexpr double kHoursPerYear = 8766.0; // 365.25 days
constexpr double kSecondsPerDay = 86400.0;

// Electricity price when the scenario gives none: the US average industrial retail price,
// ~8 cents per kWh in 2023-2024 (US EIA, Electric Power Monthly, table 5.6.A). An estimate,
// labelled as such in every report.
constexpr double kDefaultElectricityUsdPerKwh = 0.08;

// A checkpoint holds what restarting needs: the weights at their training precision plus the
// FP32 master weights and the two Adam moments (12 bytes per parameter, as the memory model
// counts them), each parameter once however it is sharded or replicated.
constexpr double kOptimizerBytesPerParam = 12.0;

// Sweeps: the interval from 1/16x to 16x the optimum, the GPU count from 1/8x to 8x.
constexpr int kIntervalPoints = 49;
constexpr double kIntervalSpan = 16.0;
constexpr int kScaleSteps = 3;
// Largest cluster the sweep extrapolates to (the validator's limit).
constexpr double kMaxSweepGpus = 1e6;

bool positive(double v) {
    return std::isfinite(v) && v > 0;
}

/// Capital cost: every item at its (estimated or overridden) unit price. The scale-out fabric
/// is the hardware graph's (its shape): its leaf and spine switches, one cable per NIC to its
/// leaf and, with spines, one uplink cable per 1/oversubscription of a NIC (a leaf's up ports
/// match its down ports divided by the oversubscription).
CapitalCost capitalCost(const ClusterSpec& c, const HardwareShape* hardware) {
    CapitalCost k;
    const double gpus = c.gpuCount();
    const double nics = static_cast<double>(c.nodes) * c.nics_per_node;
    k.racks = hardware ? hardware->racks : c.rackCount();
    if (hardware) {
        k.switches = hardware->leaves + hardware->spines;
        if (hardware->leaves > 0) {
            const double uplinks =
                hardware->spines > 0 ? std::ceil(nics / std::max(1.0, c.oversubscription)) : 0.0;
            k.cables = static_cast<int>(nics + uplinks);
        }
    }
    k.gpus_usd = gpus * c.gpu.price_usd;
    k.servers_usd = c.nodes * c.server_usd;
    k.nics_usd = nics * c.nic.price_usd;
    k.switches_usd = k.switches * c.nic.switch_usd;
    k.cables_usd = k.cables * c.nic.cable_usd;
    k.racks_usd = k.racks * c.rack_usd;
    k.total_usd =
        k.gpus_usd + k.servers_usd + k.nics_usd + k.switches_usd + k.cables_usd + k.racks_usd;
    return k;
}

/// Power at rated figures (training keeps GPUs near their board power); the facility draws
/// PUE times the IT load for cooling and power conversion.
PowerDraw powerDraw(const ClusterSpec& c, const CapitalCost& k) {
    PowerDraw p;
    p.gpus_w = c.gpuCount() * c.gpu.power_w;
    p.nodes_w = c.nodes * c.node_overhead_w;
    p.nics_w = static_cast<double>(c.nodes) * c.nics_per_node * c.nic.power_w;
    p.switches_w = k.switches * c.nic.switch_w;
    p.racks_w = k.racks * c.rack_overhead_w;
    p.it_w = p.gpus_w + p.nodes_w + p.nics_w + p.switches_w + p.racks_w;
    p.facility_w = p.it_w * c.pue;
    // Racks fill in order, so without racks listed by hand the first is the fullest.
    // No nodes, no racks: hottest_rack stays -1.
    if (c.nodes > 0 && c.rack_nodes.empty()) {
        p.hottest_rack = 0;
        p.hottest_rack_w = rackPowerW(c, std::min(c.nodes, std::max(1, c.nodes_per_rack)));
    } else if (c.nodes > 0) {
        const std::vector<double> rack_w = rackPowerW(c);
        const auto hottest = std::max_element(rack_w.begin(), rack_w.end());
        p.hottest_rack = static_cast<int>(hottest - rack_w.begin());
        p.hottest_rack_w = *hottest;
    }
    return p;
}

/// Cluster failure rate: independent exponential failures add their rates, so the cluster's
/// rate is GPUs x per-GPU rate + nodes x per-node rate, and MTBF = 1 / rate. Doubling the
/// cluster halves its MTBF.
void failureRates(const ReliabilitySpec& r, double gpus, double nodes, ReliabilityFigures& f) {
    f.gpu_failures_per_h = gpus * r.gpu_failures_per_million_h / 1e6;
    f.node_failures_per_h = nodes * r.node_failures_per_million_h / 1e6;
    f.failures_per_h = f.gpu_failures_per_h + f.node_failures_per_h;
    f.mtbf_s = f.failures_per_h > 0 ? kSecondsPerHour / f.failures_per_h : 0.0;
}

/// Interval, goodput and the split of lost time for a cluster whose rates, checkpoint and
/// recovery times are already in `f`.
void chooseInterval(double fixed_interval_s, ReliabilityFigures& f) {
    f.young_interval_s = youngInterval_s(f.checkpoint_write_s, f.mtbf_s);
    f.optimal_interval_s = dalyInterval_s(f.checkpoint_write_s, f.mtbf_s);
    f.interval_is_optimal = fixed_interval_s <= 0;
    f.interval_s = f.interval_is_optimal ? f.optimal_interval_s : fixed_interval_s;
    f.goodput = checkpointGoodput(f.interval_s, f.checkpoint_write_s, f.recovery_s, f.mtbf_s);
    // Of the wall-clock W = T/G, checkpoints take T delta / tau, so their share is
    // G delta / tau; the rest of 1 - G is rework and recovery.
    f.checkpoint_overhead =
        f.interval_s > 0 ? f.goodput * f.checkpoint_write_s / f.interval_s : 0.0;
    f.failure_overhead = std::max(0.0, 1.0 - f.goodput - f.checkpoint_overhead);
}

} // namespace

double rackPowerW(const ClusterSpec& c, int nodes_in_rack) {
    const double node_w =
        c.gpus_per_node * c.gpu.power_w + c.nics_per_node * c.nic.power_w + c.node_overhead_w;
    return nodes_in_rack * node_w + c.rack_overhead_w;
}

std::vector<double> rackPowerW(const ClusterSpec& c) {
    std::vector<double> racks;
    for (const int nodes : c.nodesInRacks())
        racks.push_back(rackPowerW(c, nodes));
    return racks;
}

double youngInterval_s(double checkpoint_s, double mtbf_s) {
    if (!(mtbf_s > 0) || !(checkpoint_s >= 0))
        return 0;
    return std::sqrt(2 * checkpoint_s * mtbf_s);
}

double dalyInterval_s(double checkpoint_s, double mtbf_s) {
    if (!(mtbf_s > 0) || !(checkpoint_s >= 0))
        return 0;
    if (checkpoint_s >= 2 * mtbf_s)
        return mtbf_s;
    const double x = checkpoint_s / (2 * mtbf_s);
    return std::sqrt(2 * checkpoint_s * mtbf_s) * (1 + std::sqrt(x) / 3 + x / 9) - checkpoint_s;
}

double checkpointGoodput(double interval_s, double checkpoint_s, double recovery_s, double mtbf_s) {
    if (!(interval_s > 0))
        return mtbf_s > 0 ? 0.0 : 1.0; // failures without checkpoints never finish
    if (!(mtbf_s > 0))
        return interval_s / (interval_s + checkpoint_s);
    // Daly's expected wall-clock per segment of tau training seconds, with exponential failures
    // striking during work, checkpoints and recovery alike: M e^(R/M) (e^((tau+delta)/M) - 1).
    // expm1 keeps it exact when M is much longer than a segment.
    const double per_segment =
        mtbf_s * std::exp(recovery_s / mtbf_s) * std::expm1((interval_s + checkpoint_s) / mtbf_s);
    const double goodput = interval_s / per_segment;
    return std::isfinite(goodput) ? std::clamp(goodput, 0.0, 1.0) : 0.0;
}

std::string costBasisText(const Scenario& s, const Economics& e) {
    char price[64];
    if (e.rental) {
        std::snprintf(price, sizeof price, "%.2f", s.cluster.gpu_hour_usd);
        return std::string("rented: GPU-hours x $") + price + " per GPU-hour" +
               (e.electricity_usd_per_kwh > 0 ? " + energy" : "");
    }
    std::snprintf(price, sizeof price, "%g", s.cluster.amortization_years);
    return std::string("owned: capital amortized over ") + price + " years + energy";
}

Economics computeEconomics(const Scenario& s, const EconomicsInput& r) {
    Economics e;
    const ClusterSpec& c = s.cluster;
    if (!positive(r.tokens_per_s) || r.gpus <= 0)
        return e;
    e.valid = true;

    // Cost per hour. Renting: the GPU-hour price covers the hardware, plus energy only when the
    // scenario prices it. Owning: the capital written off linearly over the amortization
    // period, plus the facility's energy. These are the run's only energy and cost figures.
    e.capital = capitalCost(c, r.hardware);
    e.power = powerDraw(c, e.capital);
    e.rental = c.gpu_hour_usd > 0;
    e.electricity_estimated = c.electricity_usd_per_kwh <= 0 && !e.rental;
    e.electricity_usd_per_kwh = c.electricity_usd_per_kwh > 0
                                    ? c.electricity_usd_per_kwh
                                    : (e.rental ? 0.0 : kDefaultElectricityUsdPerKwh);
    e.energy_usd_per_h = e.power.facility_w / 1000 * e.electricity_usd_per_kwh;
    if (e.rental)
        e.rental_usd_per_h = r.gpus * c.gpu_hour_usd;
    else
        e.amortized_usd_per_h = e.capital.total_usd / (c.amortization_years * kHoursPerYear);
    e.usd_per_h = e.rental_usd_per_h + e.amortized_usd_per_h + e.energy_usd_per_h;
    e.usd_per_day = e.usd_per_h * 24;
    e.usd_per_gpu_hour = e.usd_per_h / r.gpus;

    // Failures and checkpoints. Every node writes its share of the checkpoint in parallel, and
    // reads it back at the same rate after a failure.
    ReliabilityFigures& f = e.reliability;
    const ReliabilitySpec& rel = c.reliability;
    failureRates(rel, r.gpus, c.nodes, f);
    f.checkpoint_bytes =
        r.parameters * (bytesPerElement(s.model.weight_precision) + kOptimizerBytesPerParam);
    const double storage_bytes_s = c.nodes * rel.checkpoint_write_gbps_per_node * 1e9;
    f.checkpoint_write_s = f.checkpoint_bytes / storage_bytes_s;
    f.checkpoint_read_s = f.checkpoint_write_s;
    f.recovery_s = rel.detection_s + rel.restart_s + f.checkpoint_read_s;
    chooseInterval(s.training.checkpoint_interval_s, f);

    // The run: failure-free time T from the performance model, expected wall-clock W = T / G.
    // Checkpoints take T delta / tau of it, and the expected failures W / M cost the rest.
    const double goodput = std::max(f.goodput, 1e-9);
    e.usd_per_trillion_tokens = 1e12 / r.tokens_per_s / goodput / kSecondsPerHour * e.usd_per_h;
    if (positive(r.time_to_train_s)) {
        e.compute_time_s = r.time_to_train_s;
        e.wall_time_s = e.compute_time_s / goodput;
        e.days = e.wall_time_s / kSecondsPerDay;
        e.checkpoint_time_s =
            f.interval_s > 0 ? e.compute_time_s * f.checkpoint_write_s / f.interval_s : 0.0;
        e.lost_time_s = std::max(0.0, e.wall_time_s - e.compute_time_s - e.checkpoint_time_s);
        e.expected_failures = f.mtbf_s > 0 ? e.wall_time_s / f.mtbf_s : 0.0;
        e.gpu_hours = r.gpus * e.wall_time_s / kSecondsPerHour;
        e.energy_kwh = e.power.facility_w / 1000 * e.wall_time_s / kSecondsPerHour;
        e.cost_usd = e.usd_per_h * e.wall_time_s / kSecondsPerHour;
    }

    // Checkpoint interval vs goodput and lost time: log-spaced around the optimum (around 10x
    // the write time when nothing fails and there is no optimum).
    const double centre = f.optimal_interval_s > 0 ? f.optimal_interval_s
                          : f.interval_s > 0       ? f.interval_s
                                                   : 10 * f.checkpoint_write_s;
    if (positive(centre)) {
        // The log spacing is the same for every report: worked out once.
        static const std::array<double, kIntervalPoints> spacing = [] {
            std::array<double, kIntervalPoints> factors{};
            for (int i = 0; i < kIntervalPoints; ++i) {
                const double exponent = 2.0 * i / (kIntervalPoints - 1) - 1.0; // -1 .. 1
                factors[static_cast<size_t>(i)] = std::pow(kIntervalSpan, exponent);
            }
            return factors;
        }();
        e.interval_sweep.reserve(kIntervalPoints);
        for (const double factor : spacing) {
            IntervalPoint p;
            p.interval_s = centre * factor;
            p.goodput =
                checkpointGoodput(p.interval_s, f.checkpoint_write_s, f.recovery_s, f.mtbf_s);
            p.lost_h_per_day = 24 * (1 - p.goodput);
            e.interval_sweep.push_back(p);
        }
    }

    // GPU count: whole multiples (and fractions) of the cluster, tokens/s per GPU held at the
    // evaluated value (perfect weak scaling; the performance model is not re-run). The failure
    // rate and the storage bandwidth scale with the nodes, the hourly cost with the cluster.
    for (int k = -kScaleSteps; k <= kScaleSteps; ++k) {
        const double factor = std::ldexp(1.0, k);
        const double nodes = c.nodes * factor;
        if (nodes < 1 || nodes != std::floor(nodes) || nodes * c.gpus_per_node > kMaxSweepGpus)
            continue;
        ScalePoint p;
        p.nodes = static_cast<int>(nodes);
        p.gpus = p.nodes * c.gpus_per_node;
        ReliabilityFigures g;
        failureRates(rel, p.gpus, p.nodes, g);
        g.checkpoint_write_s =
            f.checkpoint_bytes / (nodes * rel.checkpoint_write_gbps_per_node * 1e9);
        g.checkpoint_read_s = g.checkpoint_write_s;
        g.recovery_s = rel.detection_s + rel.restart_s + g.checkpoint_read_s;
        chooseInterval(s.training.checkpoint_interval_s, g);
        p.mtbf_s = g.mtbf_s;
        p.interval_s = g.interval_s;
        p.goodput = g.goodput;
        const double tokens_per_s = r.tokens_per_s_per_gpu * p.gpus * std::max(g.goodput, 1e-9);
        const double usd_per_h = e.usd_per_h * factor;
        p.usd_per_trillion_tokens = 1e12 / tokens_per_s / kSecondsPerHour * usd_per_h;
        if (s.training.total_tokens > 0) {
            const double wall_s = s.training.total_tokens / tokens_per_s;
            p.days = wall_s / kSecondsPerDay;
            p.cost_usd = usd_per_h * wall_s / kSecondsPerHour;
        }
        e.scale_sweep.push_back(p);
    }
    return e;
}

} // namespace moe
