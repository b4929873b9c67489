#pragma once
// A design in a few sentences, generated from the scenario and its evaluation (never from the
// scenario's free-text description): the layout in one paragraph, the settings that differ
// from another design ("EP 8 → 16"), and the verdict against a baseline ("12.0% faster than
// baseline: all-to-all (exposed) −400 ms, ..."). The design-review report's first page and the
// Compare panel's labels use them.

#include "moe/placement.h"
#include "moe/report.h"
#include "moe/scenario.h"

#include <string>
#include <vector>

namespace moe {

/// "GPipe", "1F1B", "interleaved 1F1B", "DualPipe".
const char* displayName(PipelineSchedule schedule);

/// The layout in one paragraph, from the cluster, the degrees and where the placement put each
/// group, e.g. "2048 NVIDIA H800 SXM 80GB GPUs in 256 nodes of 8 (64 racks); TP 1, EP 64 across
/// 8 nodes over NVLink + InfiniBand, PP 16 with DualPipe across 16 nodes over InfiniBand, DP 128
/// across 16 nodes over NVLink + InfiniBand, expert-DP 2 across nodes over InfiniBand; 256
/// experts over EP 64 = 4 per GPU, top-8." Dimensions of degree 1 other than TP, DP and PP are
/// left out; a layout the placement could not place says so.
std::string layoutInWords(const Scenario& scenario, const Placement& placement);

/// One setting that differs between two scenarios, with a short label: "EP" for layout.ep,
/// "schedule" for layout.schedule, the path inside its section otherwise ("nodes",
/// "scale_out.fabric", "global_batch").
struct SettingChange {
    std::string path; ///< "layout.ep"
    std::string label;
    std::string baseline, current; ///< as written in a file
};

/// The settings that differ (diffScenarioFields, without name and description), the layout's
/// first, then in file order.
std::vector<SettingChange> settingChanges(const Scenario& baseline, const Scenario& current);

enum class ChangeStyle {
    arrow,    ///< "EP 8 → 16": what changed
    baseline, ///< "EP=8": the baseline's side
    current,  ///< "EP=16": the current side (a variant's label)
};
/// The changes joined with ", ", at most `max_items` (then "+N more"); "same settings" when
/// there is none. Values longer than 20 characters are left out ("expert_placement changed").
std::string describeChanges(const std::vector<SettingChange>& changes, ChangeStyle style,
                            int max_items = 3);

/// The current design against a baseline: the step time's change and the breakdown items that
/// moved most.
struct BaselineVerdict {
    double baseline_step_s = 0;
    double current_step_s = 0;
    double relative = 0; ///< (current - baseline) / baseline; 0 when the baseline step is 0
    struct Item {
        StepItem item = StepItem::attention;
        double delta_s = 0; ///< current - baseline, exposed seconds per step
    };
    std::vector<Item> top; ///< largest |delta_s| first, non-zero only
};
BaselineVerdict verdictAgainstBaseline(const Report& baseline, const Report& current,
                                       int top_items = 3);
/// "12.0% faster than baseline 'ep8' (EP 8 → 16): all-to-all (exposed) −400 ms, pipeline
/// bubble +120 ms"; "same step time as baseline 'x'" when equal. `changes` may be empty.
std::string describeVerdict(const BaselineVerdict& verdict, const std::string& baseline_name,
                            const std::vector<SettingChange>& changes);

} // namespace moe
