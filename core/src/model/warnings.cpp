// Design warnings: their codes, the figures they carry and the one text function every front
// end shows. What raises them is design_warnings.cpp.

#include "moe/warnings.h"

#include <cmath>

namespace moe {

namespace {

std::string percent(double fraction) {
    return std::to_string(static_cast<int>(std::lround(fraction * 100))) + "%";
}

std::string fixed1(double value) {
    const long tenths = std::lround(value * 10);
    return std::to_string(tenths / 10) + "." + std::to_string(std::labs(tenths % 10));
}

template <class... F> struct Overloaded : F... { using F::operator()...; };
template <class... F> Overloaded(F...) -> Overloaded<F...>;

} // namespace

std::string warningText(const DesignWarning& w) {
    return std::visit(
        Overloaded{
            [](const EpCrossesDomain& f) {
                return "EP group of " + std::to_string(f.ep_gpus) + " GPUs spans " +
                       std::to_string(f.ep_nodes) + " nodes: the all-to-all rides " + f.fabric +
                       " (" + fixed1(f.scale_out_gbps) + " GB/s per GPU) instead of " +
                       f.scale_up_fabric + " (" + fixed1(f.scale_up_gbps) + " GB/s)";
            },
            [](const TpCrossesDomain& f) {
                return "TP group of " + std::to_string(f.tp_gpus) + " GPUs crosses " +
                       std::to_string(f.domains) +
                       " scale-up domains: every layer's TP collectives go over " + f.fabric;
            },
            [](const Straggler& f) {
                return "GPU " + std::to_string(f.gpu) + " carries " + fixed1(f.imbalance) +
                       "x the mean expert load (MoE layer " + std::to_string(f.moe_layer) +
                       "): its EP group waits for it every layer";
            },
            [](const MemoryOver& f) {
                return "stage " + std::to_string(f.stage) + " needs " + fixed1(f.need_bytes / 1e9) +
                       " GB per GPU, over the " + fixed1(f.hbm_bytes / 1e9) + " GB of HBM";
            },
            [](const MemoryTight& f) {
                return "stage " + std::to_string(f.stage) + " uses " + fixed1(f.used_bytes / 1e9) +
                       " of " + fixed1(f.hbm_bytes / 1e9) + " GB: within " +
                       percent(warning_threshold::kMemoryTightShare) + " of HBM";
            },
            [](const LargeBubble& f) {
                return "pipeline bubble is " + percent(f.share) +
                       " of the step: more micro-batches, interleaving or DualPipe would "
                       "shrink it";
            },
            [](const ExposedSync& f) {
                return "gradient sync is not hidden: " + percent(f.share) +
                       " of the step waits for it (the last buckets' reduce after the last "
                       "backward, the weights' all-gather before the first forward)";
            },
            [](const TokensDropped& f) {
                return percent(f.share) +
                       " of token slots exceed the capacity factor and are dropped";
            },
            [](const RackPowerOver& f) {
                return (f.racks_over == 1 ? "rack " + std::to_string(f.first_rack)
                                          : std::to_string(f.racks_over) + " racks (rack " +
                                                std::to_string(f.first_rack) + " first)") +
                       " draw" + (f.racks_over == 1 ? "s " : " ") + fixed1(f.first_rack_kw) +
                       " kW with " + std::to_string(f.first_rack_nodes) + " nodes, over the " +
                       fixed1(f.limit_kw) +
                       " kW rack limit: move nodes to other racks or lower cluster.nodes_per_rack";
            },
            [](const TinyExpertGemms& f) {
                return "about " + std::to_string(static_cast<int>(f.tokens_per_expert)) +
                       " tokens per expert per micro-batch, less than one 128-row GEMM tile: "
                       "padding wastes over a third of the expert GEMMs' work (fewer tokens "
                       "still make them memory-bound); a larger micro-batch helps";
            },
            [](const LowGoodput& f) {
                return "goodput " + percent(f.goodput) + ": checkpoints take " +
                       percent(f.checkpoint_share) + " and failures " + percent(f.failure_share) +
                       " of the wall-clock (MTBF " + fixed1(f.mtbf_h) + " h, a checkpoint " +
                       fixed1(f.checkpoint_min) + " min, a recovery " + fixed1(f.recovery_min) +
                       " min); faster checkpoint storage or quicker restarts shorten both";
            },
        },
        w.figures);
}

WarningCode codeOf(const WarningFigures& figures) {
    return std::visit(Overloaded{
                          [](const EpCrossesDomain&) { return WarningCode::ep_crosses_domain; },
                          [](const TpCrossesDomain&) { return WarningCode::tp_crosses_domain; },
                          [](const Straggler&) { return WarningCode::straggler; },
                          [](const MemoryOver&) { return WarningCode::memory_over; },
                          [](const MemoryTight&) { return WarningCode::memory_tight; },
                          [](const LargeBubble&) { return WarningCode::bubble; },
                          [](const ExposedSync&) { return WarningCode::dp_sync_exposed; },
                          [](const TokensDropped&) { return WarningCode::tokens_dropped; },
                          [](const RackPowerOver&) { return WarningCode::rack_power_over; },
                          [](const TinyExpertGemms&) { return WarningCode::tiny_expert_gemms; },
                          [](const LowGoodput&) { return WarningCode::low_goodput; },
                      },
                      figures);
}

const char* toString(WarningCode code) {
    switch (code) {
    case WarningCode::ep_crosses_domain:
        return "ep-crosses-domain";
    case WarningCode::tp_crosses_domain:
        return "tp-crosses-domain";
    case WarningCode::straggler:
        return "straggler";
    case WarningCode::memory_over:
        return "memory-over";
    case WarningCode::memory_tight:
        return "memory-tight";
    case WarningCode::bubble:
        return "bubble";
    case WarningCode::dp_sync_exposed:
        return "dp-sync-exposed";
    case WarningCode::tokens_dropped:
        return "tokens-dropped";
    case WarningCode::rack_power_over:
        return "rack-power-over";
    case WarningCode::tiny_expert_gemms:
        return "tiny-expert-gemms";
    case WarningCode::low_goodput:
        return "low-goodput";
    }
    return "?";
}

const char* toString(DesignWarning::Severity s) {
    switch (s) {
    case DesignWarning::Severity::info:
        return "info";
    case DesignWarning::Severity::warning:
        return "warning";
    case DesignWarning::Severity::critical:
        return "critical";
    }
    return "?";
}

} // namespace moe
