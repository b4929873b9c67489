#pragma once
// Calibration against published training runs (issue 15): built-in reference cases, each with
// its source, the scenario that reproduces the run and how the prediction is measured so it is
// like-for-like with the published figure. runCalibration() evaluates them and reports the
// signed error per case and the mean and max |error| per group. It changes no physics: it is
// the yardstick the calibrated constants will be judged by. Deterministic (each scenario's
// routing seed is fixed), no I/O.
//
// Sources and the per-row settings are collected, with quotes, in docs/model.md ("Calibration
// status") and next to each case in core/src/model/calibration.cpp.

#include "moe/scenario.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace moe {

/// What a case compares.
enum class CalibrationMetric {
    /// Megatron's achieved TFLOP/s per GPU: megatronFlopsPerStep / (step time x GPUs). Counts
    /// the recompute forward, as the published figure does.
    megatron_tflops_per_gpu,
    step_time_s, ///< the whole optimizer step, seconds
    bubble_s,    ///< pipeline bubble of the step (report's exposed bubble), seconds
    /// The optimizer phase (Report::optimizer_phase): from the pipeline's last backward to the
    /// step's end, the exposed gradient sync, the optimizer and an unoverlapped weight gather.
    optimizer_phase_s,
    /// Training tokens per second per GPU: global batch x sequence / (step time x GPUs)
    tokens_per_s_per_gpu,
    /// DualPipe phase segments of the pacing rank (DualPipePhases), seconds per step: unpaired
    /// forwards, unpaired backwards less deferred W, deferred W, paired 1F1B, and idle.
    dualpipe_forward_s,
    dualpipe_input_backward_s,
    dualpipe_weight_backward_s,
    dualpipe_paired_s,
    dualpipe_idle_s,
    /// A DeepEP benchmark's bandwidth, GB/s: the bytes its test script counts (deepEpMetricBytes)
    /// over the planner's time for one dispatch or combine call of 4096 tokens (MoeCosts).
    deepep_dispatch_gbps,
    deepep_combine_gbps,
    not_comparable, ///< the planner has no output that maps to the figure (see `note`)
};

struct CalibrationCase {
    std::string id;     ///< "sc21-1.7b", "deepseek-v3-step": what --case selects
    std::string group;  ///< cases summarised together: "sc21", "gpt3-175b", "deepseek-v3", "deepep"
    std::string title;  ///< one line for people
    std::string source; ///< paper or repository, table or line
    CalibrationMetric metric = CalibrationMetric::not_comparable;
    std::string unit; ///< of `published`: "TFLOP/s", "s", "GB/s"
    double published = 0;
    /// The run as a scenario; nullopt when the planner cannot express it (`note` says why).
    std::optional<Scenario> scenario;
    /// Why the case is not compared (not expressible, not comparable); empty when it is.
    std::string note;
};

/// Every built-in case, in report order: SC21 Table 1, GPT-3 175B, DeepSeek-V3 Table 4, DeepEP.
/// Built once (thread-safe).
const std::vector<CalibrationCase>& calibrationCases();

struct CalibrationResult {
    const CalibrationCase* reference = nullptr; ///< into calibrationCases()
    bool compared = false;                      ///< false: `note` of the case says why
    double predicted = 0;                       ///< in the case's unit
    double error_percent = 0;                   ///< signed: (predicted - published) / published
};

struct CalibrationGroupSummary {
    std::string group;
    int compared = 0; ///< cases with a prediction
    int cases = 0;    ///< all cases of the group
    double mean_abs_error_percent = 0;
    double max_abs_error_percent = 0;
    /// Issue 15's done-when for the group (calibrationTarget), 0 = no bound of that kind.
    double target_mean_abs_percent = 0;
    double target_max_abs_percent = 0;
    bool hasTarget() const { return target_mean_abs_percent > 0 || target_max_abs_percent > 0; }
    /// Every case compared and within the bounds; false for a group without a target.
    bool meetsTarget() const;
};

/// The accuracy a group must reach (issue 15, "Done when"): SC21 mean |error| <= 5% and max
/// <= 12%; each DeepSeek-V3 figure within 15%; the perfectly balanced DeepSeek-V3 step within
/// 15%. Groups without a stated target get {0, 0}.
struct CalibrationTarget {
    double mean_abs_percent = 0;
    double max_abs_percent = 0;
};
CalibrationTarget calibrationTarget(const std::string& group);

struct CalibrationRun {
    std::vector<CalibrationResult> results;
    std::vector<CalibrationGroupSummary> summary; ///< per group, in case order
    /// Groups with a target, and how many of them meet it.
    int targetGroups() const;
    int targetsMet() const;
};

/// Evaluates every case (or only the case `only_id`; unknown ids give an empty run).
CalibrationRun runCalibration(const std::string& only_id = "");

/// Megatron-LM's FLOPs per iteration (Narayanan et al., SC21, eq. 3), recompute included:
/// 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) for batch B, sequence s, layers l, hidden h, vocab V.
double megatronFlopsPerStep(double batch, double seq, double layers, double hidden, double vocab);

/// DeepEP's FP8 element with its scales: one byte plus an FP32 scale per 128 (its tests'
/// fp8_factor (1 + 4/128) / 2 of a BF16 element).
constexpr double kDeepEpFp8BytesPerElement = 1.0 + 4.0 / 128.0;

/// The bytes per GPU and call that DeepEP's benchmark scripts divide by the kernel's time, in
/// expectation: intranode (ep <= gpus_per_node) the tokens received over NVLink, one per
/// distinct rank a token reaches; internode the RDMA leg's tokens, one per distinct node
/// including the sender's own (node-limited routing to `max_nodes`). Times hidden and the
/// element size.
double deepEpMetricBytes(int ep, int gpus_per_node, int max_nodes, int top_k, double tokens,
                         double hidden, double bytes_per_element);

/// (predicted - published) / published x 100.
double signedErrorPercent(double predicted, double published);

/// Mean and max of |error| over the compared results of `group`.
CalibrationGroupSummary summarizeGroup(const std::string& group,
                                       const std::vector<CalibrationResult>& results);

const char* toString(CalibrationMetric metric);

} // namespace moe
