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
#include <mutex>
#include <thread>

namespace moe {

using namespace search_detail;

namespace {

using Clock = std::chrono::steady_clock;

/// Runs `indices` of `structures` on up to `threads` workers; stops early once `stop` is set.
void runStructures(const Searcher& searcher, const std::vector<size_t>& indices, bool only_count,
                   unsigned threads, std::vector<Outcome>& outcomes,
                   const std::function<bool()>& step) {
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
    const auto samples = std::make_shared<LockedExpertLoadCache>();
    auto work = [&] {
        // The figures need no warnings or copy of the routing sample; the routing samples are
        // shared by every thread's candidates.
        EvaluationCache cache;
        cache.keep_load = false;
        cache.loads.shared = samples;
        for (size_t r = next++; r + 1 < run_begin.size() && !stop; r = next++)
            for (size_t i = run_begin[r]; i < run_begin[r + 1] && !stop; ++i) {
                outcomes[indices[i]] = searcher.run(all[indices[i]], only_count, cache);
                if (!step())
                    stop = true;
            }
    };
    const unsigned n =
        only_count ? 1u
                   : std::min<unsigned>(
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
    runStructures(searcher, inside, false, threads, searched, step);
    part.found_inside = std::any_of(inside.begin(), inside.end(),
                                    [&](size_t i) { return !searched[i].evaluated.empty(); });
    // Wide structures are counted always (cheap), and searched when this shard found nothing
    // narrower: the merge knows whether any shard did.
    const std::function<bool()> quiet = [&] { return go_on.load(); };
    if (go_on)
        runStructures(searcher, wide, true, 1, counted, part.found_inside ? step : quiet);
    if (go_on && !part.found_inside)
        runStructures(searcher, wide, false, threads, searched, step);
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
