// moe-plan sweep: a grid of overrides evaluated point by point (all of it, or one shard of a
// cluster job), and the merge of the shards' rows.
#include "cli_commands.h"
#include "cli_format.h"
#include "progress.h"
#include "scenario_input.h"
#include "sweep_rows.h"
#include "text_table.h"

#include "moe/atomic_file.h"
#include "moe/format.h"
#include "moe/limits.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <queue>
#include <sstream>

namespace moe::cli {

namespace {

struct SweepCommand {
    std::string file;
    std::vector<std::string> grids;
    std::vector<std::string> pins;
    std::string format = "jsonl";
    std::string output = "-";
    std::string shard;
    std::vector<std::string> merge;
    int threads = 0;
};

/// Rows go to standard output as they come, or to a file written atomically at the end.
class RowSink {
public:
    RowSink(const SweepCommand& c, CommandIo& io)
        : c_(c)
        , io_(io) {}

    /// False (with the problem reported) when a row cannot be converted.
    bool add(const std::string& row) {
        std::string text = row, problem;
        if (c_.format == "csv")
            text = csv_.add(row, problem);
        if (!problem.empty()) {
            io_.fail(kExitBadInput, problem);
            return false;
        }
        if (c_.output == "-")
            io_.out() << text;
        else
            buffer_ += text;
        return true;
    }

    int finish(int64_t rows) {
        if (c_.output == "-") {
            io_.out().flush();
            return kExitOk;
        }
        if (const std::string problem = writeFileAtomically(c_.output, buffer_); !problem.empty())
            return io_.fail(kExitBadInput, problem);
        io_.note(std::to_string(rows) + " rows written to " + c_.output, true);
        return kExitOk;
    }

private:
    const SweepCommand& c_;
    CommandIo& io_;
    CsvRows csv_;
    std::string buffer_;
};

int runGrid(const SweepCommand& c, CommandIo& io) {
    Shard shard;
    if (!c.shard.empty()) {
        std::string problem;
        const std::optional<Shard> parsed = parseShard(c.shard, problem);
        if (!parsed)
            return io.fail(kExitUsage, "--shard " + problem);
        shard = *parsed;
    }
    SweepGrid grid;
    if (const Diagnostics problems = makeSweepGrid(c.grids, c.pins, grid); !problems.empty()) {
        for (const Diagnostic& d : problems)
            io.fail(kExitUsage, d.message);
        return kExitUsage;
    }
    ScenarioText base;
    if (const std::string problem = readScenarioText(c.file, base); !problem.empty())
        return io.fail(kExitBadInput, "cannot read " + base.label + ": " + problem);
    // The base itself must load: a typo there would make every point invalid.
    if (const LoadResult loaded = loadScenarioText(base.text, base.label, base.base_dir);
        !loaded.ok()) {
        io.report(loaded.diagnostics);
        return kExitBadInput;
    }
    const std::string study = sweepStudy(base.text, grid);
    const int64_t points = grid.points();
    RowSink sink(c, io);
    bool sink_ok = true;
    SweepOptions options;
    options.shard = shard;
    options.threads = c.threads;
    SweepRun run;
    {
        ProgressLine progress(io.err(), "sweep" + (c.shard.empty() ? "" : " " + c.shard), "points");
        options.progress = progress.callback();
        run = runSweep(
            base.text, base.label, base.base_dir, grid, options,
            [&](const SweepPoint& p) { return sweepRowJson(p, study, points); },
            [&](const std::string& row) { sink_ok = sink_ok && sink.add(row); });
    }
    if (run.interrupted)
        return io.fail(kExitInterrupted,
                       "interrupted after " + std::to_string(run.points) + " of " +
                           std::to_string(shard.size(points)) + " points" +
                           (c.output == "-" ? "" : "; " + c.output + " not written"));
    if (!sink_ok)
        return kExitBadInput;
    std::ostringstream done;
    done << "sweep: " << run.points << " points in "
         << formatSeconds(run.elapsed_s, UnitStyle::ascii) << " on " << run.threads << " thread"
         << (run.threads == 1 ? "" : "s");
    if (run.invalid > 0)
        done << "; " << run.invalid << " invalid (\"ok\": false, with their errors)";
    io.note(done.str(), true);
    return sink.finish(run.points);
}

/// One part of a merge: its rows in point order, read a line at a time.
struct PartReader {
    std::string path;
    std::ifstream in;
    std::string row;
    int64_t point = -1;
};

/// Reads the next row of `part`; false at the end. A problem (unreadable row, another study,
/// rows out of order) is reported and ends the merge.
bool nextRow(PartReader& part, std::string& study, int64_t& points, std::string& problem) {
    std::string line;
    while (std::getline(part.in, line)) {
        if (line.size() > static_cast<size_t>(limits::kMaxInputFileBytes)) {
            problem = part.path + ": a row longer than 16 MB";
            return false;
        }
        if (line.empty())
            continue;
        std::string row_study;
        int64_t point = 0, row_points = 0;
        if (!sweepRowKey(line, row_study, point, row_points)) {
            problem = part.path + ": not a row of moe-plan sweep: " + line.substr(0, 60);
            return false;
        }
        if (study.empty()) {
            study = row_study;
            points = row_points;
        }
        if (row_study != study || row_points != points) {
            problem = part.path + ": rows of another study (other scenario, grid or version)";
            return false;
        }
        if (point <= part.point) {
            problem = part.path + ": rows out of point order (" + std::to_string(point) +
                      " after " + std::to_string(part.point) + ")";
            return false;
        }
        part.point = point;
        part.row = line + "\n";
        return true;
    }
    return false;
}

int runMerge(const SweepCommand& c, CommandIo& io) {
    std::vector<std::unique_ptr<PartReader>> parts;
    for (const std::string& path : c.merge) {
        // Not a FIFO or a device: a part is a file a shard wrote.
        if (std::error_code ec; !std::filesystem::is_regular_file(path, ec))
            return io.fail(kExitBadInput, "cannot read " + path + ": not a regular file");
        auto part = std::make_unique<PartReader>();
        part->path = path;
        part->in.open(path, std::ios::binary);
        if (!part->in)
            return io.fail(kExitBadInput, "cannot read " + path);
        parts.push_back(std::move(part));
    }
    // The parts are each in point order: a k-way merge keeps one row per part in memory.
    using Head = std::pair<int64_t, size_t>; // point, part
    std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
    std::string study, problem;
    int64_t points = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
        if (nextRow(*parts[i], study, points, problem))
            heads.push({parts[i]->point, i});
        if (!problem.empty())
            return io.fail(kExitBadInput, problem);
    }
    RowSink sink(c, io);
    int64_t expected = 0, missing = 0, first_missing = -1;
    while (!heads.empty()) {
        const auto [point, i] = heads.top();
        heads.pop();
        if (point < expected)
            return io.fail(kExitBadInput, "point " + std::to_string(point) +
                                              " is in two parts: merge each shard once");
        if (point > expected && first_missing < 0)
            first_missing = expected;
        missing += point - expected;
        // After a gap the rest is only read to count what is missing.
        if (missing == 0 && !sink.add(parts[i]->row))
            return kExitBadInput;
        expected = point + 1;
        if (nextRow(*parts[i], study, points, problem))
            heads.push({parts[i]->point, i});
        if (!problem.empty())
            return io.fail(kExitBadInput, problem);
    }
    if (expected < points && first_missing < 0)
        first_missing = expected;
    missing += std::max<int64_t>(0, points - expected);
    if (missing > 0)
        return io.fail(kExitBadInput, std::to_string(missing) + " of " + std::to_string(points) +
                                          " points are missing (the first is point " +
                                          std::to_string(first_missing) +
                                          "): merge every shard of the study" +
                                          (c.output == "-" ? "" : "; nothing written"));
    return sink.finish(expected);
}

int runSweepCommand(const SweepCommand& c, CommandIo& io) {
    if (c.merge.empty() && c.grids.empty() && c.pins.empty())
        return io.fail(kExitUsage, "give --grid key=v1,v2,... (or --merge PART...)");
    if (!c.merge.empty()) {
        if (!c.grids.empty() || !c.pins.empty() || !c.shard.empty() || !c.file.empty())
            return io.fail(kExitUsage, "--merge takes only the parts (and --format, -o)");
        return runMerge(c, io);
    }
    return runGrid(c, io);
}

} // namespace

void addSweepCommand(CLI::App& app, CommandTable& table) {
    auto o = std::make_shared<SweepCommand>();
    CLI::App* c = table.add(
        app, "sweep",
        "Evaluates the scenario at every point of a grid: the cross product of the --grid axes "
        "(the last varies fastest), each point applied as --set overrides with the file's own "
        "validation, on every core. Writes one row per point, in point order, with its "
        "overrides, the effective scenario and layout, and the headline figures (step time, "
        "throughput, MFU, memory, time, cost, energy, the step breakdown), or \"ok\": false and "
        "the errors for a point whose scenario is invalid.\n\n"
        "Split over machines: task I of a job array of N runs the same command with --shard "
        "I/N (a deterministic 1/N of the points) and -o part-I.jsonl; 'moe-plan sweep --merge "
        "part-*.jsonl' then writes exactly the rows of the unsharded sweep.",
        [o](CommandIo& io) { return runSweepCommand(*o, io); });
    c->add_option("FILE", o->file,
                  "the base scenario ('-' reads standard input); the built-in default when "
                  "omitted");
    c->add_option("--grid", o->grids,
                  "an axis: a field and its values, e.g. layout.ep=1,2,4,8 or "
                  "cluster.nodes=8..64:8 (A..B, A..B:STEP); a value may be a list such as "
                  "[3,3,3]")
        ->type_name("key=v1,v2,...")
        ->allow_extra_args(false);
    c->add_option("--pin", o->pins,
                  "a field with one value for every point, listed in each row's overrides")
        ->type_name("key=value")
        ->allow_extra_args(false);
    c->add_option("--format", o->format, "jsonl (one JSON object per line) or csv")
        ->type_name("jsonl|csv")
        ->check(cmdline::oneOf({"jsonl", "csv"}));
    c->add_option("-o,--output", o->output,
                  "write the rows here, atomically when complete (default '-': standard output, "
                  "row by row)")
        ->type_name("OUT.jsonl");
    c->add_option("--shard", o->shard, "evaluate only the I-th of N deterministic parts")
        ->type_name("I/N");
    c->add_option("--threads", o->threads, "worker threads (default 0 = every core)")
        ->type_name("N")
        ->check(wholeNumber(0, 4096));
    c->add_option("--merge", o->merge,
                  "join the JSONL parts of a sharded sweep into the rows of the whole sweep "
                  "(every point exactly once); give it last")
        ->type_name("PART.jsonl");
}

} // namespace moe::cli
