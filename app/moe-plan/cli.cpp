#include "cli.h"

#include "import_export.h"
#include "report_text.h"
#include "search_text.h"
#include "text_table.h"
#include "timeline_text.h"

#include "moe/atomic_file.h"
#include "moe/catalog.h"
#include "moe/evaluate.h"
#include "moe/json_writer.h"
#include "moe/placement.h"
#include "moe/scenario_io.h"
#include "moe/scenario_text.h"
#include "moe/search.h"
#include "moe/topology.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <ostream>

namespace moe::cli {

namespace {

struct Options {
    std::vector<std::string> files;
    std::vector<std::string> overrides; ///< --set key=value
    bool json = false;
    bool help = false;
    int repeat = 0; ///< bench: evaluations per scenario (0 = automatic)
    TimelineCommand timeline;
    // search
    std::vector<std::string> pins; ///< --pin key=value
    int top = 10;
    int max_pp = 0;
    int threads = 0;
    /// --reserve: the report's memory-tight share unless given
    int reserve_pct = static_cast<int>(std::lround(warning_threshold::kMemoryTightShare * 100));
    std::string write_best;
    std::string output; ///< edit: -o OUT
};

struct Command {
    const char* name;
    const char* synopsis;
    const char* help;
    bool takes_json;
    bool takes_set;
    int min_files;
    int max_files; ///< -1 = any
    std::function<int(const Options&, std::ostream&, std::ostream&)> run;
};

const char* kToolHelp = R"(moe-plan — plan Mixture-of-Experts training layouts from the command line

Usage: moe-plan <command> [options] [FILE...]

Commands:
)";

const char* kToolHelpFooter = R"(
Run 'moe-plan <command> --help' for a command's options.
Exit status: 0 success, 1 bad input (scenario errors), 2 usage error.
)";

std::string directoryOf(const std::string& path) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
}

/// Loads FILE (with --set overrides) or, when no file is given, the built-in default.
std::optional<Scenario> loadOrReport(const std::string* path,
                                     const std::vector<std::string>& overrides, std::ostream& err) {
    if (!path && overrides.empty())
        return defaultScenario();
    const LoadResult result =
        path ? loadScenarioWithOverrides(*path, overrides)
             : loadScenarioTextWithOverrides(defaultScenarioYaml(), "<built-in default>", ".",
                                             overrides);
    for (const Diagnostic& d : result.diagnostics)
        err << d.format() << "\n";
    return result.scenario;
}

int cmdValidate(const Options& options, std::ostream& out, std::ostream& err) {
    int status = kExitOk;
    for (const std::string& file : options.files) {
        const LoadResult result = loadScenarioFile(file);
        for (const Diagnostic& d : result.diagnostics)
            err << d.format() << "\n";
        if (!result.ok()) {
            status = kExitBadInput;
            continue;
        }
        const Scenario& s = *result.scenario;
        out << file << ": ok (" << s.cluster.gpuCount() << " GPUs in " << s.cluster.nodes
            << " nodes, " << s.model.name << ")\n";
    }
    return status;
}

int cmdCatalog(const Options& options, std::ostream& out, std::ostream&) {
    const Catalog& catalog = builtinCatalog();
    if (options.json) {
        JsonWriter json;
        json.beginObject().key("gpus").beginArray();
        for (const GpuSpec& gpu : catalog.gpus) {
            json.beginObject()
                .field("id", gpu.preset)
                .field("name", gpu.name)
                .field("bf16_tflops", gpu.bf16_tflops)
                .field("fp8_tflops", gpu.fp8_tflops)
                .field("hbm_gb", gpu.hbm_gb)
                .field("hbm_tbps", gpu.hbm_tbps)
                .field("scale_up_gbps", gpu.scale_up_gbps)
                .field("scale_up_fabric", gpu.scale_up_fabric)
                .field("power_w", gpu.power_w)
                .field("price_usd", gpu.price_usd)
                .endObject();
        }
        json.endArray().key("nics").beginArray();
        for (const NicSpec& nic : catalog.nics) {
            json.beginObject()
                .field("id", nic.preset)
                .field("name", nic.name)
                .field("speed_gbit", nic.speed_gbit)
                .field("bandwidth_gbps", nic.bandwidth_gbps)
                .field("latency_us", nic.latency_us)
                .endObject();
        }
        json.endArray().endObject();
        out << json.str() << "\n";
        return kExitOk;
    }
    TextTable gpus({"GPU preset", "name", "BF16 TFLOPS", "FP8 TFLOPS", "HBM GB", "HBM TB/s",
                    "scale-up GB/s/dir", "node shape", "power W"},
                   {TextTable::Align::left, TextTable::Align::left});
    for (const GpuSpec& gpu : catalog.gpus) {
        const Catalog::NodeShape* shape = catalog.findNodeShape(gpu.preset);
        std::string node_shape;
        if (shape) {
            node_shape = std::to_string(shape->gpus_per_node) + " GPUs x " +
                         std::to_string(shape->nodes_per_rack) + " per rack, " +
                         toString(shape->scale_up_domain) + " domain";
        }
        gpus.addRow({gpu.preset, gpu.name, formatCount(gpu.bf16_tflops),
                     formatCount(gpu.fp8_tflops), formatCount(gpu.hbm_gb),
                     formatFixed(gpu.hbm_tbps, 2),
                     formatCount(gpu.scale_up_gbps) + " " + gpu.scale_up_fabric, node_shape,
                     formatCount(gpu.power_w)});
    }
    TextTable nics({"NIC preset", "name", "Gb/s", "achievable GB/s/dir", "latency us"},
                   {TextTable::Align::left, TextTable::Align::left});
    for (const NicSpec& nic : catalog.nics) {
        nics.addRow({nic.preset, nic.name, formatCount(nic.speed_gbit),
                     formatFixed(nic.bandwidth_gbps, 0), formatFixed(nic.latency_us, 1)});
    }
    out << gpus.render() << "\n" << nics.render() << "\nSources: " << catalog.sources << "\n";
    return kExitOk;
}

int cmdShow(const Options& options, std::ostream& out, std::ostream& err) {
    const std::string* file = options.files.empty() ? nullptr : &options.files[0];
    const std::optional<Scenario> scenario = loadOrReport(file, options.overrides, err);
    if (!scenario)
        return kExitBadInput;
    const HardwareGraph graph = buildHardwareGraph(scenario->cluster);
    const Placement placement = placeLayout(*scenario, graph);
    out << (options.json ? showJson(*scenario, graph, placement)
                         : showText(*scenario, graph, placement));
    return kExitOk;
}

int cmdEvaluate(const Options& options, std::ostream& out, std::ostream& err) {
    const std::string* file = options.files.empty() ? nullptr : &options.files[0];
    const std::optional<Scenario> scenario = loadOrReport(file, options.overrides, err);
    if (!scenario)
        return kExitBadInput;
    const Report report = evaluate(*scenario);
    out << (options.json ? reportJson(*scenario, report) : reportText(*scenario, report));
    return kExitOk;
}

int cmdCompare(const Options& options, std::ostream& out, std::ostream& err) {
    const std::optional<Scenario> a = loadOrReport(&options.files[0], options.overrides, err);
    const std::optional<Scenario> b = loadOrReport(&options.files[1], options.overrides, err);
    if (!a || !b)
        return kExitBadInput;
    const Report report_a = evaluate(*a);
    const Report report_b = evaluate(*b);
    out << (options.json ? compareJson(*a, report_a, *b, report_b)
                         : compareText(*a, report_a, *b, report_b));
    return kExitOk;
}

int cmdBench(const Options& options, std::ostream& out, std::ostream& err) {
    std::vector<std::pair<std::string, Scenario>> scenarios;
    if (options.files.empty()) {
        const std::optional<Scenario> s = loadOrReport(nullptr, options.overrides, err);
        if (!s)
            return kExitBadInput;
        scenarios.emplace_back("<built-in default>", *s);
    }
    for (const std::string& file : options.files) {
        const std::optional<Scenario> s = loadOrReport(&file, options.overrides, err);
        if (!s)
            return kExitBadInput;
        scenarios.emplace_back(file, *s);
    }
    out << benchText(scenarios, options.repeat);
    return kExitOk;
}

int cmdSearch(const Options& options, std::ostream& out, std::ostream& err) {
    const Diagnostics bad_pins = checkPins(options.pins);
    if (!bad_pins.empty()) {
        for (const Diagnostic& d : bad_pins)
            err << "moe-plan search: " << d.message << "\n";
        return kExitUsage;
    }
    const std::string* file = options.files.empty() ? nullptr : &options.files[0];
    const std::optional<Scenario> scenario = loadOrReport(file, options.overrides, err);
    if (!scenario)
        return kExitBadInput;
    SearchOptions search;
    search.pins = options.pins;
    search.top_n = options.top;
    search.max_pp = options.max_pp;
    search.memory_reserve_share = options.reserve_pct / 100.0;
    search.threads = options.threads;
    const SearchResult result = searchLayouts(*scenario, search);
    if (!result.ok()) {
        err << formatAll(result.diagnostics);
        return kExitBadInput;
    }
    out << (options.json ? searchJson(*scenario, result) : searchText(*scenario, result));
    if (!result.found())
        return kExitBadInput;
    if (!options.write_best.empty()) {
        // The old description would describe the old layout.
        Scenario best = result.ranked.front().scenario;
        best.description = "moe-plan search winner: " + layoutSummary(best);
        // The input file with only the winning layout's values rewritten (its comments kept, a
        // relative histogram path rebased to the output's folder).
        ScenarioSource origin;
        if (file) {
            readFileBounded(*file, origin.text);
            origin.base_dir = directoryOf(*file);
        } else {
            origin.text = defaultScenarioYaml();
        }
        const std::string problem = saveScenarioText(best, origin, options.write_best);
        if (!problem.empty()) {
            err << "moe-plan search: cannot write " << options.write_best << ": " << problem
                << "\n";
            return kExitBadInput;
        }
        // Keep --json output machine-readable: the note goes to stderr there.
        (options.json ? err : out) << "Best layout written to " << options.write_best << "\n";
    }
    return kExitOk;
}

int cmdEdit(const Options& options, std::ostream& out, std::ostream& err) {
    const std::string& file = options.files[0];
    const std::string& target = options.output.empty() ? file : options.output;
    std::string text;
    if (const std::string problem = readFileBounded(file, text); !problem.empty()) {
        err << "moe-plan edit: cannot read " << file << ": " << problem << "\n";
        return kExitBadInput;
    }
    ScenarioTextEdit edit = editScenarioText(text, options.overrides);
    if (!edit.ok()) {
        for (const Diagnostic& d : edit.diagnostics)
            err << d.format() << "\n";
        return kExitBadInput;
    }
    // A relative histogram path must still name the same file from the output's folder.
    const std::string from_dir = directoryOf(file);
    const std::string to_dir = directoryOf(target);
    const LoadResult here = loadScenarioText(edit.text, file, from_dir);
    if (here.ok() && !here.scenario->routing.histogram_csv.empty()) {
        const std::string& csv = here.scenario->routing.histogram_csv;
        const std::string moved = rebaseRelativePath(csv, from_dir, to_dir);
        if (moved != csv)
            edit =
                editScenarioText(edit.text, {"routing.histogram_csv=" + JsonWriter::escape(moved)});
    }
    // The edited file must load: nothing is written otherwise.
    const LoadResult result = loadScenarioText(edit.text, target, to_dir);
    for (const Diagnostic& d : result.diagnostics)
        err << d.format() << "\n";
    if (!result.ok())
        return kExitBadInput;
    if (target == file && edit.text == text)
        return kExitOk;
    if (const std::string problem = writeFileAtomically(target, edit.text); !problem.empty()) {
        err << "moe-plan edit: " << problem << "\n";
        return kExitBadInput;
    }
    out << "wrote " << target << "\n";
    return kExitOk;
}

int cmdTimeline(const Options& options, std::ostream& out, std::ostream& err) {
    const std::string* file = options.files.empty() ? nullptr : &options.files[0];
    const std::optional<Scenario> scenario = loadOrReport(file, options.overrides, err);
    if (!scenario)
        return kExitBadInput;
    TimelineCommand command = options.timeline;
    command.json = options.json;
    return runTimeline(*scenario, command, out, err);
}

const std::vector<Command>& commands() {
    static const std::vector<Command> table = {
        {"evaluate", "evaluate [FILE] [--set key=value ...] [--json]",
         "Evaluates a scenario (the built-in default when FILE is omitted) and prints the\n"
         "step-time breakdown, traffic per link class, memory per GPU, expert load,\n"
         "throughput and design warnings. --set applies what-if overrides such as\n"
         "--set layout.ep=16 --set cluster.scale_out.nic=cx8-800g.",
         true, true, 0, 1, cmdEvaluate},
        {"compare", "compare A.yaml B.yaml [--set key=value ...] [--json]",
         "Evaluates two scenarios and prints their headline figures side by side with deltas.\n"
         "--set overrides apply to both.",
         true, true, 2, 2, cmdCompare},
        {"validate", "validate FILE...",
         "Checks scenario files and prints every problem as file:line:col: error: message.\n"
         "Exit status 1 when any file has an error.",
         false, false, 1, -1, cmdValidate},
        {"show", "show [FILE] [--set key=value ...] [--json]",
         "Prints the cluster and the placement: GPUs, scale-up domains, the fabric, and each\n"
         "parallel group's size, span and the link class it rides (NVLink or the fabric).",
         true, true, 0, 1, cmdShow},
        {"catalog", "catalog [--json]", "Lists the built-in GPU and NIC presets.", true, false, 0,
         0, cmdCatalog},
        {"bench", "bench [FILE...] [--set key=value ...] [--repeat N]",
         "Times evaluate() (median of repeated runs) on the built-in default or on the given\n"
         "files, and prints the figures.",
         false, true, 0, -1, cmdBench},
        {"timeline",
         "timeline [FILE] [--set key=value ...] [--trace OUT.json] [--csv OUT.csv] [--steps N] "
         "[--json]",
         "Simulates one training step as events on every GPU's compute and communication\n"
         "streams (pipeline schedule, MoE dispatch/experts/combine paced by the EP group's\n"
         "hottest GPU, TP, PP sends, gradient buckets under backward, optimizer) and prints\n"
         "the simulated step's breakdown (as the GPUs the step waits on most see it) beside\n"
         "evaluate()'s closed form with its error, step and per item, where the critical path\n"
         "ends, and p50/p90/p99 of the step time over resampled routing.\n"
         "  --json      the summary as JSON: step_time_s, breakdown and hidden_s (the keys of\n"
         "              evaluate --json), closed_form, error, critical_path, distribution\n"
         "  --trace F   write the Chrome trace event format (Perfetto, chrome://tracing):\n"
         "              one process per node, one thread per GPU stream\n"
         "  --csv F     write the spans as CSV\n"
         "  --gpus L    GPUs to export: 'all' or a list such as 0-7,12 (default: all when\n"
         "              small, else the first and the hottest GPU of each distinct row)\n"
         "  --steps N   routing samples for the distribution (default 20)\n"
         "  --bench     time the simulation instead (median over repeated runs)",
         true, true, 0, 1, cmdTimeline},
        {"edit", "edit FILE --set key=value ... [-o OUT.yaml]",
         "Edits a scenario file as text: each --set rewrites only that value (a missing key is\n"
         "inserted under its section), so comments, order, formatting and explicit defaults\n"
         "stay as written, and an edit that changes nothing leaves the file byte-identical.\n"
         "The result must load (else nothing is written); it replaces FILE atomically, or is\n"
         "written to OUT (a relative routing.histogram_csv is rebased to OUT's folder).",
         false, true, 1, 1, cmdEdit},
        {"search", "search [FILE] [--pin key=value ...] [--top N] [--json] [--write-best OUT.yaml]",
         "Searches the parallel layouts of the scenario's cluster and model (TP, CP, PP and\n"
         "virtual stages, DP, EP, expert-TP, rank order, micro-batch, recompute, schedule),\n"
         "prunes invalid and out-of-memory ones with the reason counted, evaluates the rest\n"
         "and prints them ranked by step time with the breakdown, the Pareto front over step\n"
         "time, memory headroom and cross-node traffic, why the winner wins, and the search\n"
         "speed (candidates per second).\n"
         "  --pin key=value   fix layout.tp, layout.cp, layout.pp, layout.vpp, layout.dp,\n"
         "                    layout.ep, layout.etp, layout.order, layout.schedule,\n"
         "                    training.micro_batch or training.recompute (repeat a key to\n"
         "                    allow several values)\n"
         "  --top N           ranked layouts to print (default 10)\n"
         "  --max-pp N        deepest pipeline to try (default: the layer count)\n"
         "  --reserve PCT     share of HBM a layout must leave free (default 5, the\n"
         "                    report's memory-tight threshold; 0 allows a full GPU)\n"
         "  --threads N       worker threads (default 0 = every core)\n"
         "  --write-best F    save the scenario with the winning layout to F\n"
         "  --set key=value   what-if overrides applied before searching\n"
         "Exit status 1 when no layout is valid.",
         true, true, 0, 1, cmdSearch},
    };
    return table;
}

std::string toolHelp() {
    std::string text = kToolHelp;
    for (const Command& c : commands())
        text += "  " + std::string(c.synopsis) + "\n";
    return text + importExportSynopses() + kToolHelpFooter;
}

std::string commandHelp(const Command& c) {
    return std::string("Usage: moe-plan ") + c.synopsis + "\n\n" + c.help + "\n";
}

/// Parses a command's arguments; returns an error text for a usage error.
std::optional<std::string> parseOptions(const Command& c, const std::vector<std::string>& args,
                                        Options& options) {
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--help" || a == "-h") {
            options.help = true;
        } else if (a == "--json" && c.takes_json) {
            options.json = true;
        } else if (a == "--set" && c.takes_set) {
            if (i + 1 >= args.size())
                return a + " needs a value";
            options.overrides.push_back(args[++i]);
        } else if (a.rfind("--set=", 0) == 0 && c.takes_set) {
            options.overrides.push_back(a.substr(6));
        } else if (a == "--repeat" && std::string(c.name) == "bench") {
            if (i + 1 >= args.size())
                return a + " needs a value";
            // stoi alone would take "3x" as 3.
            const std::string& value = args[++i];
            size_t used = 0;
            try {
                options.repeat = std::stoi(value, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used == 0 || used != value.size())
                return "--repeat needs a whole number";
            if (options.repeat < 1)
                return "--repeat needs a positive number";
        } else if (std::string(c.name) == "search" &&
                   (a == "--pin" || a == "--top" || a == "--max-pp" || a == "--threads" ||
                    a == "--reserve" || a == "--write-best")) {
            if (i + 1 >= args.size())
                return a + " needs a value";
            const std::string& value = args[++i];
            if (a == "--pin") {
                options.pins.push_back(value);
            } else if (a == "--write-best") {
                options.write_best = value;
            } else {
                size_t used = 0;
                int number = -1;
                try {
                    number = std::stoi(value, &used);
                } catch (const std::exception&) {
                    used = 0;
                }
                const int min = a == "--top" ? 1 : 0;
                if (used == 0 || used != value.size() || number < min)
                    return a + " needs a whole number" + (min > 0 ? " of at least 1" : " >= 0");
                if (a == "--reserve" && number > 50)
                    return "--reserve needs a percentage from 0 to 50";
                (a == "--top"       ? options.top
                 : a == "--max-pp"  ? options.max_pp
                 : a == "--reserve" ? options.reserve_pct
                                    : options.threads) = number;
            }
        } else if (std::string(c.name) == "timeline" &&
                   (a == "--trace" || a == "--csv" || a == "--gpus" || a == "--steps")) {
            if (i + 1 >= args.size())
                return a + " needs a value";
            const std::string& value = args[++i];
            if (a == "--trace") {
                options.timeline.trace_path = value;
            } else if (a == "--csv") {
                options.timeline.csv_path = value;
            } else if (a == "--gpus") {
                options.timeline.gpus = value;
            } else {
                size_t used = 0;
                int number = 0;
                try {
                    number = std::stoi(value, &used);
                } catch (const std::exception&) {
                    used = 0;
                }
                if (used == 0 || used != value.size() || number < 1)
                    return "--steps needs a whole number of at least 1";
                options.timeline.steps = number;
            }
        } else if ((a == "-o" || a == "--output") && std::string(c.name) == "edit") {
            if (i + 1 >= args.size())
                return a + " needs a value";
            options.output = args[++i];
        } else if (a == "--bench" && std::string(c.name) == "timeline") {
            options.timeline.bench = true;
        } else if (a.size() > 1 && a[0] == '-') {
            return "unknown option '" + a + "' for '" + c.name + "'";
        } else {
            options.files.push_back(a);
        }
    }
    if (options.help)
        return std::nullopt;
    const int n = static_cast<int>(options.files.size());
    if (n < c.min_files)
        return std::string("'") + c.name + "' needs " +
               (c.min_files == c.max_files ? std::to_string(c.min_files)
                                           : "at least " + std::to_string(c.min_files)) +
               " file" + (c.min_files == 1 ? "" : "s");
    if (c.max_files >= 0 && n > c.max_files)
        return std::string("'") + c.name + "' takes at most " + std::to_string(c.max_files) +
               " file" + (c.max_files == 1 ? "" : "s");
    return std::nullopt;
}

} // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    if (args.empty()) {
        err << toolHelp();
        return kExitUsage;
    }
    const std::string& name = args[0];
    if (name == "--help" || name == "-h" || name == "help") {
        if (name == "help" && args.size() > 1) {
            if (const std::optional<std::string> help = importExportHelp(args[1])) {
                out << *help;
                return kExitOk;
            }
            for (const Command& c : commands()) {
                if (args[1] == c.name) {
                    out << commandHelp(c);
                    return kExitOk;
                }
            }
            err << "moe-plan: unknown command '" << args[1] << "'\n" << toolHelp();
            return kExitUsage;
        }
        out << toolHelp();
        return kExitOk;
    }
    if (const std::optional<int> status = runImportExport(args, out, err))
        return *status;
    for (const Command& c : commands()) {
        if (name != c.name)
            continue;
        Options options;
        const std::vector<std::string> rest(args.begin() + 1, args.end());
        if (const auto problem = parseOptions(c, rest, options)) {
            err << "moe-plan " << c.name << ": " << *problem << "\n" << commandHelp(c);
            return kExitUsage;
        }
        if (options.help) {
            out << commandHelp(c);
            return kExitOk;
        }
        return c.run(options, out, err);
    }
    err << "moe-plan: unknown command '" << name << "'\n" << toolHelp();
    return kExitUsage;
}

} // namespace moe::cli
