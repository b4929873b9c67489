#pragma once
// Comparing two designs: the headline figures both the CLI (`moe-plan compare`) and the desktop
// app's Compare panel and design-review report show, each with its delta and whether the change
// is an improvement, the step breakdowns side by side, and which scenario fields differ. One
// definition, so every front end reports the same figures with the same verdicts.

#include "moe/evaluate.h"
#include "moe/format.h"
#include "moe/scenario.h"

#include <array>
#include <string>
#include <vector>

namespace moe {

/// How a headline figure is written; each front end maps it to its own formatter.
enum class FigureFormat {
    seconds, ///< a duration ("1.23 s", "456 ms")
    count,   ///< a plain count or rate with thousands separators ("123,456")
    percent, ///< a fraction shown as a percentage (0.42 -> "42.0%")
    bytes,   ///< decimal bytes ("72.1 GB")
    tflops,  ///< TFLOP/s, no decimals
    ratio,   ///< a factor ("1.23x")
    usd,     ///< US dollars, the one currency of economics.h; written "$1,234"
};

struct HeadlineFigure {
    const char* name; ///< "step time", as printed; also the JSON "name"
    FigureFormat format;
    double (*get)(const Report&);
    bool lower_is_better;
};

/// The compared figures, in display order. Add a row here and every front end shows it.
const std::vector<HeadlineFigure>& headlineFigures();

enum class Verdict { same, better, worse };
const char* toString(Verdict v);

struct FigureDelta {
    const HeadlineFigure* figure = nullptr;
    double baseline = 0;
    double current = 0;
    double delta = 0; ///< current - baseline
    /// delta / |baseline|; 0 when both are 0, NaN when only the baseline is 0 (no finite ratio).
    double relative = 0;
    Verdict verdict = Verdict::same; ///< of the current design against the baseline
};

/// One scenario field whose value differs, as it would be written in a file.
struct FieldDifference {
    std::string path; ///< dotted path, as in --set: "layout.ep"
    std::string baseline;
    std::string current;
};

struct Comparison {
    std::vector<FigureDelta> figures; ///< one per headlineFigures() row, same order
    /// Exposed seconds per StepItem (the step-time breakdown) of each design.
    std::array<double, kStepItemCount> baseline_step_s{};
    std::array<double, kStepItemCount> current_step_s{};
    std::vector<FieldDifference> fields; ///< in scenarioFields() order
};

/// delta = current - baseline; the verdict follows each figure's direction with an exact
/// comparison, so a design compared with itself is "same" everywhere (evaluate is deterministic).
Comparison compareDesigns(const Scenario& baseline, const Report& baseline_report,
                          const Scenario& current, const Report& current_report);

/// Every field of scenarioFields() whose written value differs between the two scenarios.
std::vector<FieldDifference> diffScenarioFields(const Scenario& baseline, const Scenario& current);

// ---- what changed the step ----------------------------------------------------------------------

/// One item of the step-time breakdown (StepItem) whose exposed time moved.
struct StepItemChange {
    StepItem item = StepItem::attention;
    double before_s = 0;
    double after_s = 0;
    double delta_s = 0; ///< after_s - before_s
};

/// Why the step time moved between two reports (an edit's previous and current state, or the
/// two files of `moe-plan compare`): old and new step time and the breakdown items that moved.
struct StepChange {
    double before_s = 0; ///< Report::step_time_s of the earlier report
    double after_s = 0;
    double delta_s = 0; ///< after_s - before_s
    /// Items whose exposed seconds differ, largest |delta_s| first (ties in StepItem order).
    /// The items sum to the step time, so these deltas sum to delta_s.
    std::vector<StepItemChange> items;
};

/// Compares the step breakdowns of two reports. An item counts as moved when its |delta| is
/// above rounding noise: 1e-9 of the larger step time (evaluate is deterministic, so an
/// unchanged item compares equal; the floor only drops sums reassociated by a different layout).
StepChange compareSteps(const Report& before, const Report& after);

/// A signed duration: "+473 ms", "-1.20 s"; exactly zero is "0 s" (symbols) or "0" (ascii).
std::string formatSecondsDelta(double delta_s, UnitStyle style = UnitStyle::symbols);

/// One line for a status bar or a terminal: "Step 14.5 s → 15.2 s (+710 ms): all-to-all
/// +473 ms, imbalance +229 ms", with at most `top_items` items ("->" in the ascii style); "no
/// item moved" when none did; with `top_items` 0 only "Step 14.5 s → 15.2 s (+710 ms)".
std::string stepChangeSummary(const StepChange& change, int top_items,
                              UnitStyle style = UnitStyle::symbols);

} // namespace moe
