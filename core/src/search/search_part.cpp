// Layout search: one shard of structures, run on worker threads.
//
// Structures (degrees) are spread over worker threads and merged in enumeration order
// (search_merge.cpp); ties are broken by a total order on the layout (search_ranking.cpp), so the
// result does not depend on the thread count.

#include "search_detail.h"

#include "moe/validate.h"

#include <atomic>
#include <chrono>
#include <ctime>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <tuple>

namespace moe {

using namespace search_detail;

namespace {

using Clock = std::chrono::steady_clock;

/// The routing samples every pass of a part shares, on every thread.
using SharedSamples = std::shared_ptr<LockedExpertLoadCache>;

/// Runs `work(i, cache)` for each of `indices` on up to `threads` workers; stops early once
/// `step`, called after each, returns false.
void forEachStructure(const Searcher& searcher, const std::vector<size_t>& indices,
                      unsigned threads, const SharedSamples& samples,
                      const std::function<bool()>& step,
                      const std::function<void(size_t, EvaluationCache&)>& work_on) {
    // Work comes in runs of structures whose EP groups route the same token slots per
    // micro-batch (ep * etp / (tp * cp), the structures' first order): one thread's run draws
    // its routing counts once, where threads taking neighbouring structures would each draw
    // them at the same moment. Runs are cut so that every thread gets several (a pinned
    // search may have a single kind).
    const std::vector<Structure>& all = searcher.structures();
    const size_t longest = std::max<size_t>(1, indices.size() / (4 * std::max(1u, threads)));
    std::vector<size_t> run_begin;
    for (size_t i = 0; i < indices.size(); ++i)
        if (i == 0 || compareTokenSlots(all[indices[i - 1]], all[indices[i]]) != 0 ||
            i - run_begin.back() >= longest)
            run_begin.push_back(i);
    run_begin.push_back(indices.size());
    std::atomic<size_t> next{0};
    std::atomic<bool> stop{false};
    auto work = [&] {
        // The figures need no warnings or copy of the routing sample; the routing samples are
        // shared by every thread's candidates.
        EvaluationCache cache;
        cache.figures_only = true;
        cache.loads.shared = samples;
        for (size_t r = next++; r + 1 < run_begin.size() && !stop; r = next++)
            for (size_t i = run_begin[r]; i < run_begin[r + 1] && !stop; ++i) {
                work_on(indices[i], cache);
                if (!step())
                    stop = true;
            }
    };
    const unsigned n = std::min<unsigned>(
        threads, static_cast<unsigned>(std::max<size_t>(1, run_begin.size() - 1)));
    if (n <= 1) {
        work();
        return;
    }
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < n; ++t)
        pool.emplace_back(work);
    for (std::thread& t : pool)
        t.join();
}

/// The bound pruning of one part (SearchOptions::prune). Evaluates a few seeds first - the
/// candidates with the least compute floors, each varied degree's least, the scenario's own
/// layout - to bound the steps the result will report (ReportedStepBound); then the structures,
/// those with the least floors first, evaluating each candidate whose floor is within the bound
/// so far, which tightens as layouts are added. The bound never drops below the merged one, so
/// what the merge keeps does not depend on the thread count. Candidates left are counted as
/// `bound`. Without pruning, evaluates every candidate. `outcomes[i].evaluated` holds structure
/// i's candidates (Searcher::run).
void evaluateCandidates(const Searcher& searcher, const Scenario& input,
                        const SearchOptions& options, bool found_inside,
                        const std::vector<size_t>& indices, unsigned threads,
                        const SharedSamples& samples, std::vector<Outcome>& outcomes,
                        const std::function<bool()>& step) {
    std::vector<std::vector<char>> done(outcomes.size());
    for (const size_t i : indices)
        done[i].assign(outcomes[i].evaluated.size(), 0);
    const bool prune = options.prune && options.objective == SearchObjective::step_time;
    std::mutex bound_lock;
    ReportedStepBound reported(options, prune ? inputStep_s(input, options) : -1.0,
                               searcher.variedDimensions(found_inside));
    double bound_s = std::numeric_limits<double>::infinity(); // under bound_lock
    std::vector<size_t> order = indices;
    if (prune) {
        struct Ref {
            double floor_s;
            size_t structure, candidate;
        };
        std::vector<Ref> refs;
        std::vector<double> least_floor_s(outcomes.size(), std::numeric_limits<double>::infinity());
        for (const size_t i : indices)
            for (size_t c = 0; c < outcomes[i].evaluated.size(); ++c) {
                const double floor_s = outcomes[i].evaluated[c].floor_s;
                refs.push_back({floor_s, i, c});
                least_floor_s[i] = std::min(least_floor_s[i], floor_s);
            }
        std::sort(refs.begin(), refs.end(), [](const Ref& a, const Ref& b) {
            return std::tie(a.floor_s, a.structure, a.candidate) <
                   std::tie(b.floor_s, b.structure, b.candidate);
        });
        const size_t least = 2 * static_cast<size_t>(std::max(2, options.top_n));
        std::array<std::vector<int>, 3> seeded_degrees;
        EvaluationCache cache;
        cache.figures_only = true;
        cache.loads.shared = samples;
        Scenario scratch = input;
        for (size_t r = 0; r < refs.size(); ++r) {
            Evaluated& e = outcomes[refs[r].structure].evaluated[refs[r].candidate];
            bool seed = r < least || e.is_input;
            const std::array<int, 3> degrees = {e.layout.ep, e.layout.tp, e.layout.pp};
            for (size_t d = 0; d < 3; ++d)
                if (std::find(seeded_degrees[d].begin(), seeded_degrees[d].end(), degrees[d]) ==
                    seeded_degrees[d].end()) {
                    seeded_degrees[d].push_back(degrees[d]);
                    seed = true;
                }
            if (!seed)
                continue;
            searcher.evaluateCandidate(e, scratch, cache);
            done[refs[r].structure][refs[r].candidate] = 1;
            reported.add(e);
        }
        bound_s = reported.bound_s();
        // The most promising structures first, so that the bound tightens early.
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t a, size_t b) { return least_floor_s[a] < least_floor_s[b]; });
    }
    // Each candidate within the bound so far is evaluated; the others are left for the count.
    const auto evaluateStructure = [&](size_t i, EvaluationCache& cache) {
        std::vector<Evaluated>& fitting = outcomes[i].evaluated;
        Scenario scratch = input;
        std::vector<Evaluated> kept;
        for (size_t c = 0; c < fitting.size(); ++c) {
            if (!done[i][c]) {
                double within_s = 0;
                {
                    const std::lock_guard<std::mutex> lock(bound_lock);
                    within_s = bound_s;
                }
                if (fitting[c].floor_s <= within_s) {
                    searcher.evaluateCandidate(fitting[c], scratch, cache);
                    done[i][c] = 1;
                    if (prune) {
                        const std::lock_guard<std::mutex> lock(bound_lock);
                        reported.add(fitting[c]);
                        bound_s = reported.bound_s();
                    }
                }
            }
            if (done[i][c])
                kept.push_back(std::move(fitting[c]));
        }
        // The merge names the bound the pruned ones exceed (it is settled only there).
        outcomes[i].rejected[static_cast<size_t>(RejectReason::bound)].count +=
            static_cast<int64_t>(fitting.size() - kept.size());
        fitting = std::move(kept);
    };
    forEachStructure(searcher, order, threads, samples, step, evaluateStructure);
}

} // namespace

SearchPart searchPart(const Scenario& input, const SearchOptions& options, SearchShard shard) {
    const auto t0 = Clock::now();
    const std::clock_t cpu0 = std::clock();
    SearchPart part;
    part.shard = shard;
    Pins pins;
    part.diagnostics = parsePins(options.pins, pins);
    // The search replaces the layout, micro-batch and recompute, so errors there are what it
    // fixes; anything else (cluster, model, a non-positive batch) it cannot.
    for (Diagnostic& d : validateScenario(input)) {
        if (d.severity != Diagnostic::Severity::error || startsWith(d.field, "layout.") ||
            d.field == "training.micro_batch" ||
            (d.field == "training.global_batch" && input.training.global_batch >= 1))
            continue;
        part.diagnostics.push_back(std::move(d));
    }
    if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) {
        Diagnostic d;
        d.message = "shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count) +
                    ": needs 0 <= index < count";
        part.diagnostics.push_back(d);
    }
    if (hasErrors(part.diagnostics))
        return part;

    const Searcher searcher(input, options, pins);
    const std::vector<Structure>& structures = searcher.structures();
    part.structures = static_cast<int64_t>(structures.size());
    // Phase 1: TP inside a scale-up domain. Phase 2, only when nothing there fits: the rest,
    // whose TP collectives (several per layer) would cross the fabric.
    std::vector<size_t> inside, wide;
    for (size_t i = static_cast<size_t>(shard.index); i < structures.size();
         i += static_cast<size_t>(shard.count))
        (searcher.insideDomain(structures[i]) ? inside : wide).push_back(i);
    unsigned threads = options.threads > 0 ? static_cast<unsigned>(options.threads)
                                           : std::max(1u, std::thread::hardware_concurrency());
    threads = std::max<unsigned>(
        1, std::min<unsigned>(
               threads, static_cast<unsigned>(std::max<size_t>(1, inside.size() + wide.size()))));
    part.threads = static_cast<int>(threads);
    const int64_t total = static_cast<int64_t>(inside.size() + wide.size());
    // Progress is reported under a lock, so a caller sees `done` only grow (workers finish
    // structures in any order) and is never called again once it asked to stop.
    std::mutex progress_lock;
    int64_t done = 0;
    std::atomic<bool> go_on{true};
    const std::function<bool()> step = [&] {
        const std::lock_guard<std::mutex> lock(progress_lock);
        ++done;
        if (go_on && options.progress && !options.progress(std::min(done, total), total))
            go_on = false;
        return go_on.load();
    };
    std::vector<Outcome> searched(structures.size()), counted(structures.size());
    const std::function<bool()> quiet = [&] { return go_on.load(); };
    const auto search = [&](std::vector<Outcome>& into, bool only_count) {
        return [&into, only_count, &searcher, &structures](size_t i, EvaluationCache& cache) {
            into[i] = searcher.run(structures[i], only_count, cache);
        };
    };
    const auto samples = std::make_shared<LockedExpertLoadCache>();
    forEachStructure(searcher, inside, threads, samples, quiet, search(searched, false));
    part.found_inside = std::any_of(inside.begin(), inside.end(),
                                    [&](size_t i) { return !searched[i].evaluated.empty(); });
    // Wide structures are counted always (cheap), and searched when this shard found nothing
    // narrower: the merge knows whether any shard did.
    if (go_on)
        forEachStructure(searcher, wide, 1, samples, part.found_inside ? step : quiet,
                         search(counted, true));
    std::vector<size_t> searching = inside;
    if (go_on && !part.found_inside) {
        forEachStructure(searcher, wide, threads, samples, quiet, search(searched, false));
        searching.insert(searching.end(), wide.begin(), wide.end());
    }
    if (go_on)
        evaluateCandidates(searcher, input, options, part.found_inside, searching, threads, samples,
                           searched, step);
    if (!go_on) {
        part.interrupted = true;
        return part;
    }
    for (size_t i = static_cast<size_t>(shard.index); i < structures.size();
         i += static_cast<size_t>(shard.count)) {
        const bool in = searcher.insideDomain(structures[i]);
        if (in || !part.found_inside) {
            Outcome o = std::move(searched[i]);
            o.structure = static_cast<int64_t>(i);
            o.inside_domain = in;
            part.outcomes.push_back(std::move(o));
        }
        if (!in) {
            Outcome o = std::move(counted[i]);
            o.structure = static_cast<int64_t>(i);
            o.inside_domain = false;
            o.counted_only = true;
            part.outcomes.push_back(std::move(o));
        }
    }
    part.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
    part.cpu_s = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    return part;
}

} // namespace moe
