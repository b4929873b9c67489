// Layout search: the merge of the parts - the structures' outcomes back in enumeration order,
// the ranking, the Pareto front, the scenario's own layout and the explanation.

#include "search_detail.h"

#include "moe/format.h"
#include "moe/validate.h"

#include <chrono>
#include <ctime>

namespace moe {

using namespace search_detail;

namespace {

using Clock = std::chrono::steady_clock;

/// The outcome that counts for each structure, in enumeration order; an error names what the
/// parts miss or repeat.
std::vector<const Outcome*> outcomesInOrder(const std::vector<SearchPart>& parts,
                                            Diagnostics& problems, bool& found_inside) {
    const int64_t n = parts.empty() ? 0 : parts.front().structures;
    std::vector<const Outcome*> searched(static_cast<size_t>(n)), counted(static_cast<size_t>(n));
    std::vector<bool> inside(static_cast<size_t>(n), false);
    found_inside = false;
    auto problem = [&](const std::string& message) {
        Diagnostic d;
        d.message = message;
        problems.push_back(d);
    };
    for (const SearchPart& p : parts) {
        found_inside = found_inside || p.found_inside;
        if (p.structures != n) {
            problem("the parts come from different searches (" + std::to_string(n) + " and " +
                    std::to_string(p.structures) + " structures)");
            return {};
        }
        for (const Outcome& o : p.outcomes) {
            if (o.structure < 0 || o.structure >= n) {
                problem("structure #" + std::to_string(o.structure) + " is out of range");
                return {};
            }
            const auto i = static_cast<size_t>(o.structure);
            const Outcome*& slot = o.counted_only ? counted[i] : searched[i];
            if (slot != nullptr) {
                problem("structure #" + std::to_string(o.structure) +
                        " is in two parts: merge each shard once");
                return {};
            }
            slot = &o;
            inside[i] = o.inside_domain;
        }
    }
    std::vector<const Outcome*> out;
    int64_t missing = 0, first_missing = -1;
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
        const Outcome* o = inside[i] || !found_inside ? searched[i] : counted[i];
        if (o == nullptr && ++missing == 1)
            first_missing = static_cast<int64_t>(i);
        out.push_back(o);
    }
    if (missing > 0)
        problem("the parts miss " + std::to_string(missing) + " of " + std::to_string(n) +
                " structures (the first is #" + std::to_string(first_missing) +
                "): merge every shard of the same search");
    return missing > 0 ? std::vector<const Outcome*>{} : out;
}

} // namespace

namespace {

/// The outcomes in enumeration order, added up: candidates, rejections (each reason's first
/// example), the closest memory miss and every evaluated layout.
std::vector<Evaluated> mergeOutcomes(const std::vector<const Outcome*>& outcomes,
                                     SearchResult& result, MemoryMiss& closest) {
    std::vector<Evaluated> all;
    for (const Outcome* o : outcomes) {
        result.candidates += o->candidates;
        for (int r = 0; r < kRejectReasonCount; ++r) {
            RejectionCount& into = result.rejected[static_cast<size_t>(r)];
            into.count += o->rejected[static_cast<size_t>(r)].count;
            if (into.example.empty())
                into.example = o->rejected[static_cast<size_t>(r)].example;
        }
        if (o->closest.set && (!closest.set || o->closest.over_bytes < closest.over_bytes))
            closest = o->closest;
        for (const Evaluated& e : o->evaluated)
            all.push_back(e);
    }
    return all;
}

SearchCandidate candidateOf(const Scenario& input, const Evaluated& e, int rank) {
    SearchCandidate c;
    c.scenario = withLayout(input, e.layout, e.micro_batch, e.recompute);
    c.figures = e.figures;
    c.rank = rank;
    c.is_input = e.is_input;
    return c;
}

/// SearchOptions::prune: drops the evaluated layouts whose compute floor exceeds the steps the
/// result reports (parts bound by their own layouts, never below this), counting them as
/// `bound`; returns the bound, or 0 when nothing was pruned.
double pruneByBound(const Scenario& input, const SearchOptions& options, bool found_inside,
                    std::vector<Evaluated>& all, SearchResult& result) {
    if (!options.prune || options.objective != SearchObjective::step_time)
        return 0;
    Pins pins;
    parsePins(options.pins, pins);
    ReportedStepBound bound(options, inputStep_s(input, options),
                            Searcher(input, options, pins).variedDimensions(found_inside));
    for (const Evaluated& e : all)
        bound.add(e);
    const double bound_s = bound.bound_s();
    const auto beyond = std::stable_partition(
        all.begin(), all.end(), [&](const Evaluated& e) { return e.floor_s <= bound_s; });
    RejectionCount& pruned = result.rejected[static_cast<size_t>(RejectReason::bound)];
    pruned.count += static_cast<int64_t>(all.end() - beyond);
    all.erase(beyond, all.end());
    if (pruned.count == 0)
        return 0;
    pruned.example = "compute alone takes longer than " + formatSeconds(bound_s) +
                     " per step, the slowest step the result reports (the ranked layouts, the "
                     "near-tie window, the scenario's own layout, the best with another EP, TP "
                     "and PP)";
    return bound_s;
}

/// Parts run side by side on their machines: the slowest sets the elapsed time.
void addPartTimes(const std::vector<SearchPart>& parts, SearchResult& result) {
    double slowest_s = 0;
    for (const SearchPart& p : parts) {
        slowest_s = std::max(slowest_s, p.elapsed_s);
        result.cpu_s += p.cpu_s;
        result.threads = std::max(result.threads, p.threads);
    }
    result.elapsed_s += slowest_s;
    if (result.elapsed_s > 0) {
        result.evaluated_per_s = static_cast<double>(result.evaluated) / result.elapsed_s;
        result.candidates_per_s = static_cast<double>(result.candidates) / result.elapsed_s;
    }
}

} // namespace

SearchResult mergeSearchParts(const Scenario& input, const SearchOptions& options,
                              const std::vector<SearchPart>& parts) {
    const auto t0 = Clock::now();
    const std::clock_t cpu0 = std::clock();
    SearchResult result;
    for (const SearchPart& p : parts) {
        if (hasErrors(p.diagnostics)) {
            result.diagnostics = p.diagnostics;
            return result;
        }
        result.interrupted = result.interrupted || p.interrupted;
    }
    if (result.interrupted)
        return result;
    bool found_inside = false;
    const std::vector<const Outcome*> outcomes =
        outcomesInOrder(parts, result.diagnostics, found_inside);
    if (hasErrors(result.diagnostics))
        return result;

    MemoryMiss closest;
    std::vector<Evaluated> all = mergeOutcomes(outcomes, result, closest);
    const double bound_s = pruneByBound(input, options, found_inside, all, result);
    result.evaluated = static_cast<int64_t>(all.size());
    rankEvaluated(all, options);
    const size_t top = static_cast<size_t>(std::max(0, options.top_n));
    for (size_t i = 0; i < all.size() && i < top; ++i)
        result.ranked.push_back(candidateOf(input, all[i], static_cast<int>(i) + 1));
    std::vector<size_t> front = paretoFrontByStepTime(all);
    // Beyond the bound, layouts were pruned that may belong to the front.
    if (bound_s > 0) {
        std::erase_if(front, [&](size_t i) { return all[i].figures.step_time_s > bound_s; });
        result.pareto_bound_s = bound_s;
    }
    result.pareto_total = static_cast<int64_t>(front.size());
    for (size_t i = 0; i < front.size() && i < static_cast<size_t>(options.max_pareto); ++i)
        result.pareto.push_back(candidateOf(input, all[front[i]], static_cast<int>(front[i]) + 1));

    // The scenario's own layout, ranked or not.
    if (!hasErrors(validateScenario(input))) {
        SearchCandidate c;
        c.scenario = input;
        c.figures = figuresOf(evaluate(input));
        c.is_input = true;
        for (size_t i = 0; i < all.size(); ++i)
            if (all[i].is_input)
                c.rank = static_cast<int>(i) + 1;
        result.input = std::move(c);
    }

    result.explanation = explainSearch(input, options, all, closest, result);
    result.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
    result.cpu_s = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    addPartTimes(parts, result);
    return result;
}

} // namespace moe
