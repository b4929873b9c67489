#include "moe/compare.h"

#include "moe/edits.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace moe {

const std::vector<HeadlineFigure>& headlineFigures() {
    using F = FigureFormat;
    static const std::vector<HeadlineFigure> list = {
        {"step time", F::seconds, [](const Report& r) { return r.step_time_s; }, true},
        {"tokens/s", F::count, [](const Report& r) { return r.throughput.tokens_per_s; }, false},
        {"tokens/s per GPU", F::count,
         [](const Report& r) { return r.throughput.tokens_per_s_per_gpu; }, false},
        {"TFLOPS per GPU", F::tflops,
         [](const Report& r) { return r.throughput.model_tflops_per_gpu; }, false},
        {"MFU", F::percent, [](const Report& r) { return r.throughput.mfu; }, false},
        {"memory per GPU", F::bytes, [](const Report& r) { return r.memory.total_bytes; }, true},
        {"exposed all-to-all", F::seconds,
         [](const Report& r) { return r.step[StepItem::all_to_all]; }, true},
        {"pipeline bubble", F::seconds, [](const Report& r) { return r.step[StepItem::bubble]; },
         true},
        {"exposed DP sync", F::seconds, [](const Report& r) { return r.step[StepItem::dp_sync]; },
         true},
        {"imbalance wait", F::seconds,
         [](const Report& r) { return r.step[StepItem::imbalance_wait]; }, true},
        {"max expert imbalance", F::ratio, [](const Report& r) { return r.load.max_imbalance; },
         true},
        {"time to train", F::seconds, [](const Report& r) { return r.throughput.time_to_train_s; },
         true},
        {"GPU-hours", F::count, [](const Report& r) { return r.throughput.gpu_hours; }, true},
        // Time, cost and reliability (economics.h): expected values with failures and checkpoints.
        {"time to train with failures", F::seconds,
         [](const Report& r) { return r.economics.wall_time_s; }, true},
        {"goodput", F::percent, [](const Report& r) { return r.economics.reliability.goodput; },
         false},
        {"cluster MTBF", F::seconds, [](const Report& r) { return r.economics.reliability.mtbf_s; },
         false},
        {"cost of the run", F::usd, [](const Report& r) { return r.economics.cost_usd; }, true},
        {"cost per trillion tokens", F::usd,
         [](const Report& r) { return r.economics.usd_per_trillion_tokens; }, true},
        {"energy (MWh)", F::count, [](const Report& r) { return r.economics.energy_kwh / 1000; },
         true},
        {"capital", F::usd, [](const Report& r) { return r.economics.capital.total_usd; }, true},
    };
    return list;
}

const char* toString(Verdict v) {
    switch (v) {
    case Verdict::better:
        return "better";
    case Verdict::worse:
        return "worse";
    case Verdict::same:
        break;
    }
    return "same";
}

std::vector<FieldDifference> diffScenarioFields(const Scenario& baseline, const Scenario& current) {
    std::vector<FieldDifference> out;
    for (const FieldInfo& field : scenarioFields()) {
        const std::optional<std::string> a = getScenarioField(baseline, field.path);
        const std::optional<std::string> b = getScenarioField(current, field.path);
        if (a != b)
            out.push_back({field.path, a.value_or(""), b.value_or("")});
    }
    return out;
}

Comparison compareDesigns(const Scenario& baseline, const Report& baseline_report,
                          const Scenario& current, const Report& current_report) {
    Comparison c;
    for (const HeadlineFigure& h : headlineFigures()) {
        FigureDelta d;
        d.figure = &h;
        d.baseline = h.get(baseline_report);
        d.current = h.get(current_report);
        d.delta = d.current - d.baseline;
        // Relative to the baseline's magnitude, so a drop of a positive figure is negative.
        if (d.baseline != 0)
            d.relative = d.delta / std::fabs(d.baseline);
        else
            d.relative = d.current == 0 ? 0 : std::numeric_limits<double>::quiet_NaN();
        const bool lower = d.current<d.baseline, higher = d.current> d.baseline;
        if (lower || higher)
            d.verdict = (h.lower_is_better ? lower : higher) ? Verdict::better : Verdict::worse;
        c.figures.push_back(d);
    }
    c.baseline_step_s = baseline_report.step.seconds;
    c.current_step_s = current_report.step.seconds;
    c.fields = diffScenarioFields(baseline, current);
    return c;
}

StepChange compareSteps(const Report& before, const Report& after) {
    StepChange change;
    change.before_s = before.step_time_s;
    change.after_s = after.step_time_s;
    change.delta_s = after.step_time_s - before.step_time_s;
    const double noise_s =
        1e-9 * std::max(std::fabs(before.step_time_s), std::fabs(after.step_time_s));
    for (int i = 0; i < kStepItemCount; ++i) {
        const auto item = static_cast<StepItem>(i);
        StepItemChange c{item, before.step[item], after.step[item],
                         after.step[item] - before.step[item]};
        if (std::fabs(c.delta_s) > noise_s)
            change.items.push_back(c);
    }
    // Stable, so equal magnitudes keep StepItem order and the list is the same on every run.
    std::stable_sort(change.items.begin(), change.items.end(),
                     [](const StepItemChange& a, const StepItemChange& b) {
                         return std::fabs(a.delta_s) > std::fabs(b.delta_s);
                     });
    return change;
}

std::string formatSecondsDelta(double delta_s, UnitStyle style) {
    if (delta_s == 0)
        return formatSeconds(0, style);
    return (delta_s > 0 ? "+" : "-") + formatSeconds(std::fabs(delta_s), style);
}

std::string stepChangeSummary(const StepChange& change, int top_items, UnitStyle style) {
    const char* arrow = style == UnitStyle::ascii ? " -> " : " → ";
    std::string out = "Step " + formatSeconds(change.before_s, style) + arrow +
                      formatSeconds(change.after_s, style) + " (" +
                      formatSecondsDelta(change.delta_s, style) + ")";
    if (top_items <= 0)
        return out;
    out += ": ";
    if (change.items.empty())
        return out + "no item moved";
    const size_t shown = std::min(change.items.size(), static_cast<size_t>(top_items));
    for (size_t i = 0; i < shown; ++i) {
        const StepItemChange& c = change.items[i];
        out += (i ? ", " : "") + std::string(briefName(c.item)) + " " +
               formatSecondsDelta(c.delta_s, style);
    }
    return out;
}

} // namespace moe
