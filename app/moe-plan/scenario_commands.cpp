// moe-plan evaluate, compare, validate, show, catalog, bench, timeline and edit.
#include "bench.h"
#include "cli_commands.h"
#include "json_output.h"
#include "report_text.h"
#include "scenario_input.h"
#include "text_table.h"
#include "timeline_text.h"

#include "moe/atomic_file.h"
#include "moe/catalog.h"
#include "moe/evaluate.h"
#include "moe/format.h"
#include "moe/placement.h"
#include "moe/scenario_io.h"
#include "moe/scenario_text.h"
#include "moe/topology.h"

#include <memory>
#include <ostream>

namespace moe::cli {

namespace {

/// The options most commands share.
struct ScenarioOptions {
    std::string file;
    std::vector<std::string> files;
    std::vector<std::string> overrides;
    std::vector<std::string> overrides_b; ///< compare's --set-b: B only, after --set
    bool json = false;
};

int runEvaluate(const ScenarioOptions& o, CommandIo& io) {
    const std::optional<Scenario> scenario = loadScenarioArg(o.file, o.overrides, io);
    if (!scenario)
        return kExitBadInput;
    const Report report = evaluate(*scenario);
    io.out() << (io.json() ? reportJson(*scenario, report) : reportText(*scenario, report));
    return kExitOk;
}

int runCompare(const ScenarioOptions& o, CommandIo& io) {
    const std::optional<Scenario> a = loadScenarioArg(o.files[0], o.overrides, io);
    const std::optional<Scenario> b =
        loadScenarioArg(o.files[1], o.overrides, io, o.overrides_b, "--set-b");
    if (!a || !b)
        return kExitBadInput;
    const Report report_a = evaluate(*a);
    const Report report_b = evaluate(*b);
    io.out() << (io.json() ? compareJson(*a, report_a, *b, report_b)
                           : compareText(*a, report_a, *b, report_b));
    return kExitOk;
}

int runShow(const ScenarioOptions& o, CommandIo& io) {
    const std::optional<Scenario> scenario = loadScenarioArg(o.file, o.overrides, io);
    if (!scenario)
        return kExitBadInput;
    const HardwareGraph graph = buildHardwareGraph(scenario->cluster);
    const Placement placement = placeLayout(*scenario);
    io.out() << (io.json() ? showJson(*scenario, graph, placement)
                           : showText(*scenario, graph, placement));
    return kExitOk;
}

struct Validated {
    std::string file;
    LoadResult result;
};

std::string validateJson(const std::vector<Validated>& all) {
    JsonWriter json;
    beginDocument(json, "validate");
    json.key("files").beginArray();
    for (const Validated& v : all) {
        json.beginObject().field("file", v.file).field("ok", v.result.ok());
        if (v.result.ok()) {
            const Scenario& s = *v.result.scenario;
            writeScenarioIdentity(json, s);
            json.field("gpus", s.cluster.gpuCount())
                .field("nodes", s.cluster.nodes)
                .field("model", s.model.name);
        } else {
            json.key("scenario").null().key("layout").null();
        }
        json.key("diagnostics").beginArray();
        for (const Diagnostic& d : v.result.diagnostics)
            writeDiagnosticJson(json, d);
        json.endArray().endObject();
    }
    json.endArray().endObject();
    return json.str() + "\n";
}

int runValidate(const ScenarioOptions& o, CommandIo& io) {
    std::vector<Validated> all;
    int bad = 0;
    for (const std::string& file : o.files) {
        Validated v{file, {}};
        if (file != "-") {
            v.result = loadScenarioFile(file);
        } else if (ScenarioText in; readScenarioText(file, in).empty()) {
            v.result = loadScenarioText(in.text, in.label, in.base_dir);
        } else {
            Diagnostic d;
            d.file = in.label;
            d.message = readScenarioText(file, in);
            v.result.diagnostics.push_back(d);
        }
        bad += v.result.ok() ? 0 : 1;
        if (!io.json()) {
            io.report(v.result.diagnostics);
            if (v.result.ok()) {
                const Scenario& s = *v.result.scenario;
                io.out() << file << ": ok (" << s.cluster.gpuCount() << " GPUs in "
                         << s.cluster.nodes << " nodes, " << s.model.name << ")\n";
            }
        }
        all.push_back(std::move(v));
    }
    if (io.json())
        io.out() << validateJson(all);
    if (bad == 0)
        return kExitOk;
    // Text mode has printed every problem already.
    if (io.json())
        io.fail(kExitBadInput,
                std::to_string(bad) + " of " + std::to_string(all.size()) + " files have errors");
    return kExitBadInput;
}

/// The entry's datasheet citation (every entry has one: parseCatalog refuses an empty one).
std::string sourceOf(const Catalog& catalog, const std::string& preset) {
    const std::string* source = catalog.sourceOf(preset);
    return source ? *source : std::string();
}

std::string catalogJson(const Catalog& catalog) {
    JsonWriter json;
    beginDocument(json, "catalog");
    json.key("gpus").beginArray();
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
            .field("source", sourceOf(catalog, gpu.preset))
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
            .field("source", sourceOf(catalog, nic.preset))
            .endObject();
    }
    json.endArray().endObject();
    return json.str() + "\n";
}

std::string catalogText(const Catalog& catalog) {
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
        // A GPU without FP8 tensor cores (A100) has fp8_tflops 0: "none", not a zero peak.
        const std::string fp8 = gpu.fp8_tflops > 0 ? formatCount(gpu.fp8_tflops) : "none";
        gpus.addRow({gpu.preset, gpu.name, formatCount(gpu.bf16_tflops), fp8,
                     formatCount(gpu.hbm_gb), formatFixed(gpu.hbm_tbps, 2),
                     formatCount(gpu.scale_up_gbps) + " " + gpu.scale_up_fabric, node_shape,
                     formatCount(gpu.power_w)});
    }
    TextTable nics({"NIC preset", "name", "Gb/s", "achievable GB/s/dir", "latency us"},
                   {TextTable::Align::left, TextTable::Align::left});
    for (const NicSpec& nic : catalog.nics) {
        nics.addRow({nic.preset, nic.name, formatCount(nic.speed_gbit),
                     formatFixed(nic.bandwidth_gbps, 0), formatFixed(nic.latency_us, 1)});
    }
    return gpus.render() + "\n" + nics.render() + "\nSources: " + catalog.sources + "\n";
}

int runBench(const ScenarioOptions& o, int repeat, bool scaling, bool search, CommandIo& io) {
    std::vector<BenchInput> inputs;
    if (o.files.empty()) {
        const std::optional<Scenario> s = loadScenarioArg("", o.overrides, io);
        if (!s)
            return kExitBadInput;
        inputs.push_back({"<built-in default>", *s, "", 0});
    }
    for (const std::string& file : o.files) {
        const std::optional<Scenario> s = loadScenarioArg(file, o.overrides, io);
        if (!s)
            return kExitBadInput;
        inputs.push_back({file, *s, "", 0});
    }
    if (scaling)
        inputs = scalingInputs(inputs);
    std::vector<BenchRow> rows;
    std::vector<SearchBenchRow> searches;
    if (search)
        searches = benchSearch(inputs, repeat);
    else
        rows = benchEvaluate(inputs, repeat);
    io.out() << (io.json() ? benchJson(rows, searches, inputs)
                           : (search ? searchBenchText(searches) : benchText(rows)) +
                                 refusedText(inputs));
    return kExitOk;
}

struct EditOptions {
    std::string file;
    std::vector<std::string> overrides;
    std::string output;
};

int runEdit(const EditOptions& o, CommandIo& io) {
    // '-' reads standard input and writes standard output (there is no file to replace).
    const std::string& target = o.output.empty() ? o.file : o.output;
    ScenarioText source;
    if (const std::string problem = readScenarioText(o.file, source); !problem.empty())
        return io.fail(kExitBadInput, "cannot read " + o.file + ": " + problem);
    ScenarioTextEdit edit = editScenarioText(source.text, o.overrides);
    if (!edit.ok()) {
        io.report(edit.diagnostics);
        return kExitBadInput;
    }
    // A relative histogram path must still name the same file from the output's folder.
    const std::string from_dir = directoryOf(o.file);
    const std::string to_dir = directoryOf(target);
    const LoadResult here = loadScenarioText(edit.text, source.label, from_dir);
    if (here.ok() && !here.scenario->routing.histogram_csv.empty()) {
        const std::string& csv = here.scenario->routing.histogram_csv;
        const std::string moved = rebaseRelativePath(csv, from_dir, to_dir);
        if (moved != csv)
            edit =
                editScenarioText(edit.text, {"routing.histogram_csv=" + JsonWriter::escape(moved)});
    }
    // The edited file must load: nothing is written otherwise.
    const LoadResult result =
        loadScenarioText(edit.text, target == "-" ? source.label : target, to_dir);
    io.report(result.diagnostics);
    if (!result.ok())
        return kExitBadInput;
    if (target == o.file && target != "-" && edit.text == source.text)
        return kExitOk;
    if (const std::string problem = writeOutput(target, edit.text, io.out()); !problem.empty())
        return io.fail(kExitBadInput, problem);
    if (target != "-")
        io.out() << "wrote " << target << "\n";
    return kExitOk;
}

void addEvaluate(CLI::App& app, CommandTable& table) {
    auto o = std::make_shared<ScenarioOptions>();
    CLI::App* c = table.add(
        app, "evaluate",
        "Evaluates a scenario (the built-in default when FILE is omitted) and prints the step-time "
        "breakdown, traffic per link class, memory per GPU, expert load, throughput, time, cost "
        "and reliability, and design warnings.",
        [o](CommandIo& io) { return runEvaluate(*o, io); });
    addScenarioArgument(c, o->file);
    addSetOption(c, o->overrides);
    addJsonFlag(c, o->json, "the report");
}

void addCompare(CLI::App& app, CommandTable& table) {
    auto o = std::make_shared<ScenarioOptions>();
    CLI::App* c = table.add(app, "compare",
                            "Evaluates two scenarios and prints their headline figures side by "
                            "side with deltas and verdicts, the step-time items that moved, "
                            "then the scenario fields that differ.",
                            [o](CommandIo& io) { return runCompare(*o, io); });
    c->add_option("FILES", o->files, "the two scenario files ('-' reads standard input)")
        ->expected(2)
        ->required()
        ->option_text("A.yaml B.yaml");
    addSetOption(c, o->overrides, "what-if override applied to both, e.g. --set layout.ep=16");
    addSetOption(c, o->overrides_b,
                 "what-if override applied to B only, after --set: compare a file with its own "
                 "what-if, e.g. compare a.yaml a.yaml --set-b layout.ep=16",
                 "--set-b");
    addJsonFlag(c, o->json, "the comparison");
}

void addValidate(CLI::App& app, CommandTable& table) {
    auto o = std::make_shared<ScenarioOptions>();
    CLI::App* c = table.add(app, "validate",
                            "Checks scenario files and prints every problem as file:line:col: "
                            "error: message. Exit status 1 when any file has an error.",
                            [o](CommandIo& io) { return runValidate(*o, io); });
    c->add_option("FILE", o->files, "scenario files ('-' reads standard input)")->required();
    addJsonFlag(c, o->json, "each file's result and diagnostics");
}

void addShow(CLI::App& app, CommandTable& table) {
    auto o = std::make_shared<ScenarioOptions>();
    CLI::App* c = table.add(app, "show",
                            "Prints the cluster and the placement: GPUs, scale-up domains, the "
                            "fabric, and each parallel group's size, span and the link class it "
                            "rides (NVLink or the fabric).",
                            [o](CommandIo& io) { return runShow(*o, io); });
    addScenarioArgument(c, o->file);
    addSetOption(c, o->overrides);
    addJsonFlag(c, o->json, "the cluster and groups");
}

void addCatalog(CLI::App& app, CommandTable& table) {
    auto o = std::make_shared<ScenarioOptions>();
    // The lambda owns the options: --json is bound to o->json, which is written while parsing.
    CLI::App* c =
        table.add(app, "catalog", "Lists the built-in GPU and NIC presets.", [o](CommandIo& io) {
            const Catalog& catalog = builtinCatalog();
            io.out() << (o->json ? catalogJson(catalog) : catalogText(catalog));
            return kExitOk;
        });
    addJsonFlag(c, o->json, "the presets");
}

void addBench(CLI::App& app, CommandTable& table) {
    auto o = std::make_shared<ScenarioOptions>();
    auto repeat = std::make_shared<int>(0);
    auto scaling = std::make_shared<bool>(false);
    auto search = std::make_shared<bool>(false);
    CLI::App* c =
        table.add(app, "bench",
                  "Times evaluate() (median of repeated runs on one core), or with --search the "
                  "layout search, "
                  "on the built-in default or on the given files, and prints the figures.",
                  [o, repeat, scaling, search](CommandIo& io) {
                      return runBench(*o, *repeat, *scaling, *search, io);
                  });
    c->add_option("FILE", o->files, "scenario files; the built-in default when omitted");
    addSetOption(c, o->overrides);
    c->add_option("--repeat", *repeat,
                  "evaluations per scenario (default: about 0.5 s worth; with --search, searches: "
                  "3)")
        ->type_name("N")
        ->check(wholeNumber(1, 1'000'000));
    c->add_flag("--scaling", *scaling,
                "time each scenario's layout shape on 64, 512, 2048, 16384 and 65536 GPUs "
                "(data parallelism and the batch scaled; sizes it does not fit are listed)");
    c->add_flag("--search", *search,
                "time the layout search (moe-plan search, one thread, CPU median) instead of "
                "evaluate(), with its candidates, evaluations and layouts pruned by bound");
    addJsonFlag(c, o->json, "the timings");
}

void addTimeline(CLI::App& app, CommandTable& table) {
    auto o = std::make_shared<ScenarioOptions>();
    auto t = std::make_shared<TimelineCommand>();
    CLI::App* c = table.add(
        app, "timeline",
        "Simulates one training step as events on every GPU's compute and communication streams "
        "(pipeline schedule, MoE dispatch/experts/combine paced by the EP group's hottest GPU, "
        "TP, PP sends, gradient buckets under backward, optimizer) and prints the simulated "
        "step's breakdown (as the GPUs the step waits on most see it) beside evaluate()'s closed "
        "form with its error, step and per item, where the critical path ends, and p50/p90/p99 "
        "of the step time over resampled routing.",
        [o, t](CommandIo& io) {
            const std::optional<Scenario> scenario = loadScenarioArg(o->file, o->overrides, io);
            if (!scenario)
                return kExitBadInput;
            return runTimeline(*scenario, *t, io);
        });
    addScenarioArgument(c, o->file);
    addSetOption(c, o->overrides);
    c->add_option("--trace", t->trace_path,
                  "write the Chrome trace event format (Perfetto, chrome://tracing): one process "
                  "per node, one thread per GPU stream ('-' = standard output)")
        ->type_name("OUT.json");
    c->add_option("--csv", t->csv_path, "write the spans as CSV ('-' = standard output)")
        ->type_name("OUT.csv");
    c->add_option("--gpus", t->gpus,
                  "GPUs to export: 'all' or a list such as 0-7,12 (default: all when small, else "
                  "the first and the hottest GPU of each distinct row)")
        ->type_name("LIST");
    c->add_option("--steps", t->steps, "routing samples for the distribution (default 20)")
        ->type_name("N")
        ->check(wholeNumber(1, 100'000));
    c->add_flag("--bench", t->bench, "time the simulation instead (median over repeated runs)");
    addJsonFlag(c, o->json,
                "the summary (step_time_s, breakdown and hidden_s as in evaluate --json, "
                "closed_form, error, critical_path, distribution)");
}

void addEdit(CLI::App& app, CommandTable& table) {
    auto o = std::make_shared<EditOptions>();
    CLI::App* c = table.add(
        app, "edit",
        "Edits a scenario file as text: each --set rewrites only that value (a missing key is "
        "inserted under its section), so comments, order, formatting and explicit defaults stay "
        "as written, and an edit that changes nothing leaves the file byte-identical. The result "
        "must load (else nothing is written); it replaces FILE atomically, or is written to OUT "
        "(a relative routing.histogram_csv is rebased to OUT's folder).",
        [o](CommandIo& io) { return runEdit(*o, io); });
    c->add_option("FILE", o->file, "the scenario file ('-' reads standard input)")->required();
    addSetOption(c, o->overrides, "the value to write, e.g. --set layout.ep=16");
    c->add_option("-o,--output", o->output,
                  "write the result here instead of replacing FILE ('-' = standard output)")
        ->type_name("OUT.yaml");
}

} // namespace

void addScenarioCommands(CLI::App& app, CommandTable& table) {
    addEvaluate(app, table);
    addCompare(app, table);
    addValidate(app, table);
    addShow(app, table);
    addCatalog(app, table);
    addBench(app, table);
    addTimeline(app, table);
    addEdit(app, table);
}

} // namespace moe::cli
