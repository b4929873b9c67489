#pragma once
// moe-plan timeline: the simulated step's summary, trace and CSV exports, and its benchmark.
// Only formatting and file writing here; the simulation is core/timeline.h.

#include "command_io.h"

#include "moe/evaluate.h"
#include "moe/scenario.h"
#include "moe/timeline.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace moe::cli {

struct TimelineCommand {
    std::string trace_path; ///< --trace: Chrome trace event JSON
    std::string csv_path;   ///< --csv: one line per span
    std::string gpus;       ///< --gpus: "all" or a list such as "0-7,12"; empty = automatic
    int steps = 20;         ///< --steps: routing samples for the step-time distribution
    bool bench = false;     ///< --bench: time the simulation instead of exporting
};

/// Runs the command on a loaded scenario; returns the exit status. '-' for --trace or --csv
/// writes that data to standard output instead of the summary.
int runTimeline(const Scenario& scenario, const TimelineCommand& command, CommandIo& io);

/// The summary: the simulated step's breakdown beside evaluate()'s closed form with the error
/// per item, where the critical path ends, the hottest GPU's wait, the distribution.
std::string timelineText(const Scenario& scenario, const Report& report, const Timeline& timeline,
                         const StepTimeDistribution& distribution);
/// The same as JSON: "step_time_s", "breakdown" and "hidden_s" of the simulated step (the keys
/// of `evaluate --json`), "closed_form" with evaluate()'s, "error" (closed form - simulated).
std::string timelineJson(const Scenario& scenario, const Report& report, const Timeline& timeline,
                         const StepTimeDistribution& distribution);

/// Parses "all" or "0-7,12" against the GPU count; an empty result with `error` set on failure.
std::vector<int> parseGpuList(const std::string& text, int gpus, std::string& error);

} // namespace moe::cli
