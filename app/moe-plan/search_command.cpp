// moe-plan search: the layout search, whole or as one shard of a cluster job, and the merge of
// the shards' parts.
#include "cli_commands.h"
#include "progress.h"
#include "scenario_input.h"
#include "search_parts.h"
#include "search_text.h"

#include "moe/atomic_file.h"
#include "moe/limits.h"
#include "moe/scenario_io.h"
#include "moe/scenario_text.h"
#include "moe/search.h"

#include <cmath>
#include <memory>
#include <ostream>

namespace moe::cli {

namespace {

struct SearchCommand {
    std::string file;
    std::vector<std::string> overrides;
    std::vector<std::string> pins;
    int top = 10;
    int max_pp = 0;
    int threads = 0;
    /// --reserve: the report's memory-tight share unless given
    int reserve_pct = static_cast<int>(std::lround(warning_threshold::kMemoryTightShare * 100));
    std::string write_best;
    std::string shard; ///< "I/N"
    std::string part_output = "-";
    std::vector<std::string> merge;
    bool json = false;
    bool no_prune = false;
};

SearchOptions optionsOf(const SearchCommand& c) {
    SearchOptions o;
    o.pins = c.pins;
    o.top_n = c.top;
    o.max_pp = c.max_pp;
    o.memory_reserve_share = c.reserve_pct / 100.0;
    o.threads = c.threads;
    o.prune = !c.no_prune;
    return o;
}

/// Saves the winner as the input file with only the layout's values rewritten (comments kept,
/// a relative histogram path rebased to the output's folder).
int writeBest(const SearchCommand& c, const SearchResult& result, CommandIo& io) {
    Scenario best = result.ranked.front().scenario;
    // The old description would describe the old layout.
    best.description = "moe-plan search winner: " + layoutSummary(best);
    ScenarioSource origin;
    ScenarioText source;
    if (const std::string problem = readScenarioText(c.file, source); !problem.empty())
        return io.fail(kExitBadInput, "cannot read " + source.label + ": " + problem);
    origin.text = source.text;
    origin.base_dir = source.base_dir;
    const std::string problem = c.write_best == "-"
                                    ? std::string("--write-best needs a file, not '-'")
                                    : saveScenarioText(best, origin, c.write_best);
    if (!problem.empty())
        return io.fail(kExitBadInput, "cannot write " + c.write_best + ": " + problem);
    // Keep --json output machine-readable: the note goes to stderr there.
    io.note("Best layout written to " + c.write_best);
    return kExitOk;
}

int runShard(const SearchCommand& c, const Scenario& scenario, const SearchOptions& options,
             CommandIo& io) {
    std::string problem;
    const std::optional<Shard> shard = parseShard(c.shard, problem);
    if (!shard)
        return io.fail(kExitUsage, "--shard " + problem);
    SearchPart part;
    {
        ProgressLine progress(io.err(), "search " + c.shard, "structures");
        SearchOptions with_progress = options;
        with_progress.progress = progress.callback();
        part = searchPart(scenario, with_progress, *shard);
    }
    if (part.interrupted)
        return io.fail(kExitInterrupted, "interrupted; nothing written");
    if (hasErrors(part.diagnostics)) {
        io.report(part.diagnostics);
        return kExitBadInput;
    }
    const std::string text = searchPartJson(scenario, part, searchFingerprint(scenario, options));
    if (problem = writeOutput(c.part_output, text, io.out()); !problem.empty())
        return io.fail(kExitBadInput, problem);
    int64_t evaluated = 0;
    for (const SearchStructureOutcome& o : part.outcomes)
        evaluated += static_cast<int64_t>(o.evaluated.size());
    io.note("Shard " + c.shard + ": " + std::to_string(part.outcomes.size()) +
                " structure outcomes, " + std::to_string(evaluated) + " layouts evaluated" +
                (c.part_output == "-" ? "" : ", written to " + c.part_output),
            true);
    return kExitOk;
}

int mergeParts(const SearchCommand& c, const Scenario& scenario, const SearchOptions& options,
               SearchResult& result, CommandIo& io) {
    const std::string fingerprint = searchFingerprint(scenario, options);
    std::vector<SearchPart> parts;
    for (const std::string& path : c.merge) {
        std::string text;
        if (const std::string problem = readFileBounded(path, text, limits::kMaxSearchPartBytes);
            !problem.empty())
            return io.fail(kExitBadInput, "cannot read " + path + ": " + problem);
        SearchPart part;
        if (const std::string problem = readSearchPart(text, scenario, fingerprint, part);
            !problem.empty())
            return io.fail(kExitBadInput, path + ": " + problem);
        parts.push_back(std::move(part));
    }
    result = mergeSearchParts(scenario, options, parts);
    return kExitOk;
}

int runSearch(const SearchCommand& c, CommandIo& io) {
    if (const Diagnostics bad_pins = checkPins(c.pins); !bad_pins.empty()) {
        for (const Diagnostic& d : bad_pins)
            io.fail(kExitUsage, d.message);
        return kExitUsage;
    }
    if (!c.shard.empty() && !c.merge.empty())
        return io.fail(kExitUsage, "--shard runs one part and --merge joins them: give one");
    if (!c.shard.empty() && !c.write_best.empty())
        return io.fail(kExitUsage, "--write-best needs the whole search: use it with --merge");
    const std::optional<Scenario> scenario = loadScenarioArg(c.file, c.overrides, io);
    if (!scenario)
        return kExitBadInput;
    const SearchOptions options = optionsOf(c);
    if (!c.shard.empty())
        return runShard(c, *scenario, options, io);
    SearchResult result;
    if (!c.merge.empty()) {
        if (const int status = mergeParts(c, *scenario, options, result, io); status != kExitOk)
            return status;
    } else {
        ProgressLine progress(io.err(), "search", "structures");
        SearchOptions with_progress = options;
        with_progress.progress = progress.callback();
        result = searchLayouts(*scenario, with_progress);
    }
    if (result.interrupted)
        return io.fail(kExitInterrupted, "interrupted; nothing written");
    if (!result.ok()) {
        io.report(result.diagnostics);
        return kExitBadInput;
    }
    io.out() << (io.json() ? searchJson(*scenario, result) : searchText(*scenario, result));
    if (!result.found())
        return kExitBadInput;
    return c.write_best.empty() ? kExitOk : writeBest(c, result, io);
}

} // namespace

void addSearchCommand(CLI::App& app, CommandTable& table) {
    auto o = std::make_shared<SearchCommand>();
    CLI::App* c = table.add(
        app, "search",
        "Searches the parallel layouts of the scenario's cluster and model (TP, CP, PP and "
        "virtual stages, DP, EP, expert-TP, rank order, micro-batch, recompute, schedule), prunes "
        "invalid and out-of-memory ones with the reason counted, evaluates the rest on every core "
        "and prints them ranked by step time with the breakdown, the Pareto front over step "
        "time, memory headroom and cross-node traffic, why the winner wins, and the search speed "
        "(candidates per second).\n\n"
        "Split over machines: each task of a job array runs the same command with --shard I/N "
        "(it writes a part, a deterministic 1/N of the layouts' structures), then the same "
        "command with --merge and every part prints exactly the unsharded result.",
        [o](CommandIo& io) { return runSearch(*o, io); });
    c->footer("Exit status 1 when no layout is valid.");
    addScenarioArgument(c, o->file);
    c->add_option("--pin", o->pins,
                  "fix layout.tp, layout.cp, layout.pp, layout.vpp, layout.dp, layout.ep, "
                  "layout.etp, layout.order, layout.schedule, training.micro_batch or "
                  "training.recompute (repeat a key to allow several values)")
        ->type_name("key=value")
        ->allow_extra_args(false);
    c->add_option("--top", o->top, "ranked layouts to print (default 10)")
        ->type_name("N")
        ->check(wholeNumber(1, 1'000'000));
    c->add_option("--max-pp", o->max_pp, "deepest pipeline to try (default: the layer count)")
        ->type_name("N")
        ->check(wholeNumber(0, 1'000'000));
    c->add_option("--reserve", o->reserve_pct,
                  "share of HBM a layout must leave free, in percent (default 5, the report's "
                  "memory-tight threshold; 0 allows a full GPU)")
        ->type_name("PCT")
        ->check(wholeNumber(0, 50));
    c->add_option("--threads", o->threads, "worker threads (default 0 = every core)")
        ->type_name("N")
        ->check(wholeNumber(0, 4096));
    c->add_flag("--no-prune", o->no_prune,
                "evaluate every layout that fits, also those whose compute alone is slower than "
                "every layout the result reports: the same ranking, the whole Pareto front, "
                "slower");
    c->add_option("--write-best", o->write_best, "save the scenario with the winning layout")
        ->type_name("OUT.yaml");
    addSetOption(c, o->overrides, "what-if override applied before searching");
    c->add_option("--shard", o->shard,
                  "search the I-th of N deterministic parts and write it as JSON (for "
                  "--merge) instead of the result")
        ->type_name("I/N");
    c->add_option("-o,--output", o->part_output, "with --shard: where the part goes (default '-')")
        ->type_name("PART.json");
    c->add_option("--merge", o->merge,
                  "rank the parts written by --shard (all of them, same FILE and options) as "
                  "one search; give it last")
        ->type_name("PART.json");
    addJsonFlag(c, o->json, "the result");
}

} // namespace moe::cli
