#pragma once
// Design warnings: what in a report an architect should act on, each with a stable code, its
// figures as typed fields and a severity. designWarnings() (design_warnings.h) only reads a
// finished report (no physics there); its thresholds are named below, in one place. warningText()
// writes the words from the code and figures: the CLI, the desktop app's warnings panel and the
// design-review report all show that one text.

#include "moe/scenario.h"

#include <string>
#include <variant>
#include <vector>

namespace moe {

/// When a warning is raised. Not physics constants: where a figure becomes worth a line.
namespace warning_threshold {
/// The hottest GPU carries this many times the mean expert load (its EP group waits for it
/// every layer).
inline constexpr double kStragglerImbalance = 1.5;
/// Memory within this share of HBM is tight (the layout search's default reserve too).
inline constexpr double kMemoryTightShare = 0.05;
/// The pipeline bubble takes more than this share of the step.
inline constexpr double kBubbleShare = 0.15;
/// The gradient sync left exposed takes more than this share of the step.
inline constexpr double kExposedSyncShare = 0.05;
/// Goodput below this: failures and checkpoints cost more than a tenth of the run. The
/// defaults give 93-94% at Llama 3's 16,384 GPUs, so this flags larger clusters or slow
/// checkpoint storage.
inline constexpr double kLowGoodput = 0.9;
/// A rack over its power limit by more than this relative rounding slack.
inline constexpr double kRackPowerSlack = 1e-9;
} // namespace warning_threshold

// The figures of each warning.
struct EpCrossesDomain {
    int ep_gpus = 0, ep_nodes = 0;
    std::string fabric, scale_up_fabric;
    double scale_out_gbps = 0, scale_up_gbps = 0; ///< achievable, per GPU
};
struct TpCrossesDomain {
    int tp_gpus = 0, domains = 0;
    std::string fabric;
};
struct Straggler {
    int gpu = -1;
    double imbalance = 1; ///< its load over the mean
    int moe_layer = 0;
};
struct MemoryOver {
    int stage = 0;
    double need_bytes = 0, hbm_bytes = 0;
};
struct MemoryTight {
    int stage = 0;
    double used_bytes = 0, hbm_bytes = 0;
};
struct LargeBubble {
    double share = 0; ///< of the step
};
struct ExposedSync {
    double share = 0; ///< of the step
};
struct TokensDropped {
    double share = 0; ///< of the token slots
};
struct RackPowerOver {
    int racks_over = 0, first_rack = 0, first_rack_nodes = 0;
    double first_rack_kw = 0, limit_kw = 0;
};
struct TinyExpertGemms {
    double tokens_per_expert = 0; ///< per micro-batch
};
struct LowGoodput {
    double goodput = 1, checkpoint_share = 0, failure_share = 0;
    double mtbf_h = 0, checkpoint_min = 0, recovery_min = 0;
};
using WarningFigures =
    std::variant<EpCrossesDomain, TpCrossesDomain, Straggler, MemoryOver, MemoryTight, LargeBubble,
                 ExposedSync, TokensDropped, RackPowerOver, TinyExpertGemms, LowGoodput>;

enum class WarningCode {
    ep_crosses_domain,
    tp_crosses_domain,
    straggler,
    memory_over,
    memory_tight,
    bubble,
    dp_sync_exposed,
    tokens_dropped,
    rack_power_over,
    tiny_expert_gemms,
    low_goodput,
};
/// The stable id, e.g. "ep-crosses-domain" (JSON, views, tests).
const char* toString(WarningCode code);
WarningCode codeOf(const WarningFigures& figures);

struct DesignWarning {
    enum class Severity { info, warning, critical };
    Severity severity = Severity::warning;
    WarningCode code = WarningCode::straggler;
    WarningFigures figures;
    std::vector<int> gpus; ///< what it is about (for highlighting), may be empty
};
const char* toString(DesignWarning::Severity s);

/// The warning in words: one line, plain, with its figures.
std::string warningText(const DesignWarning& warning);

} // namespace moe
