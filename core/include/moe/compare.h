#pragma once
// Comparing two designs: the headline figures both the CLI (`moe-plan compare`) and the desktop
// app's Compare panel and design-review report show, each with its delta and whether the change
// is an improvement, the step breakdowns side by side, and which scenario fields differ. One
// definition, so every front end reports the same figures with the same verdicts.

#include "moe/evaluate.h"
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
    usd,     ///< US dollars (written as a count: the CLI's compare table has no unit column)
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

} // namespace moe
