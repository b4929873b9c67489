// moe-plan import / export: the bridges to Megatron-Core, nvidia-smi, NCCL, Calculon, ASTRA-sim
// and draw.io (core/include/moe/io/*), as the formats (commands) of "import" and "export".
#include "cli_commands.h"
#include "cli_format.h"
#include "scenario_input.h"

#include "moe/atomic_file.h"
#include "moe/catalog.h"
#include "moe/io/interop.h"
#include "moe/scenario_io.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <ostream>

namespace moe::cli {

namespace {

namespace fs = std::filesystem;

struct Args {
    std::vector<std::string> positional;
    std::string output;  ///< -o
    std::string cluster; ///< --cluster BASE.yaml
    std::string gpu;     ///< --gpu PRESET
    int nodes = 0;       ///< --nodes N
    std::string format;  ///< --format
    std::string nic;     ///< --nic PRESET
    std::vector<std::string> vars;
    std::vector<std::string> overrides;
    int64_t iteration = -1; ///< --iter N (megatron-tpe); -1: every iteration
};

// import ---------------------------------------------------------------------------------------

/// The request's checks and base scenario; returns the exit status when it cannot run.
int prepareImport(io::ImportFormat format, const Args& a, io::ImportRequest& request,
                  CommandIo& io) {
    const bool routing = format == io::ImportFormat::megatron_tpe;
    if (routing && a.cluster.empty())
        return io.fail(kExitUsage, "the logs do not say how the ranks were laid out: pass "
                                   "--cluster SCENARIO.yaml (the run's model and layout)");
    if (format == io::ImportFormat::megatron && !a.cluster.empty() && !a.gpu.empty())
        return io.fail(kExitUsage, "give --cluster or --gpu, not both");
    if (format == io::ImportFormat::megatron && a.cluster.empty() && a.gpu.empty())
        return io.fail(kExitUsage, "the arguments do not say which cluster: pass --cluster "
                                   "SCENARIO.yaml or --gpu PRESET --nodes N");
    if (format == io::ImportFormat::calculon && a.positional.size() == 2)
        return io.fail(kExitUsage,
                       "give a directory or the three files (model, execution, system)");
    if (!a.gpu.empty() && !builtinCatalog().findGpu(a.gpu))
        return io.fail(kExitUsage,
                       "unknown GPU preset '" + a.gpu + "' (moe-plan catalog lists them)");
    if (!a.nic.empty() && !builtinCatalog().findNic(a.nic))
        return io.fail(kExitUsage,
                       "unknown NIC preset '" + a.nic + "' (moe-plan catalog lists them)");
    request.format = format;
    request.paths = a.positional;
    request.gpu_preset = a.gpu;
    request.nodes = a.nodes;
    request.nic_preset = a.nic;
    for (const std::string& v : a.vars) {
        const size_t eq = v.find('=');
        if (eq == std::string::npos || eq == 0)
            return io.fail(kExitUsage, "--var needs NAME=VALUE, got '" + v + "'");
        request.vars[v.substr(0, eq)] = v.substr(eq + 1);
    }
    if (a.iteration >= 0)
        request.iteration = a.iteration;
    // A routing import's result is a CSV, so --set adjusts the layout the logs are read with.
    if (!routing)
        request.overrides = a.overrides;
    if (a.cluster.empty()) {
        request.base = defaultScenario();
        return kExitOk;
    }
    const std::optional<Scenario> base =
        loadScenarioArg(a.cluster, routing ? a.overrides : std::vector<std::string>{}, io);
    if (!base)
        return kExitBadInput;
    request.base = *base;
    request.base_dir = directoryOf(a.cluster);
    return kExitOk;
}

/// The CSV goes to -o (atomically), or to stdout with the summary on stderr.
int writeRoutingCsv(const std::string& csv, const std::string& summary, const std::string& output,
                    CommandIo& io) {
    if (output.empty() || output == "-") {
        io.err() << summary;
        io.out() << csv;
        return kExitOk;
    }
    if (const std::string problem = writeFileAtomically(output, csv); !problem.empty())
        return io.fail(kExitBadInput, "cannot write " + output + ": " + problem);
    io.out() << summary << "Routing CSV written to " << output
             << " (use it with routing: {model: histogram, histogram_csv: " << output << "})\n";
    return kExitOk;
}

int runImport(io::ImportFormat format, const Args& a, CommandIo& io) {
    io::ImportRequest request;
    if (const int status = prepareImport(format, a, request, io); status != kExitOk)
        return status;
    const io::ImportOutcome result = io::importFiles(request);
    io.report(result.diagnostics);
    if (result.routing_csv)
        return writeRoutingCsv(*result.routing_csv, result.summary, a.output, io);
    if (!result.scenario) {
        io.err() << result.summary;
        return kExitBadInput;
    }
    // The YAML goes to -o, or to stdout with the summary on stderr.
    if (a.output.empty() || a.output == "-") {
        io.err() << result.summary;
        io.out() << toYaml(*result.scenario);
        return kExitOk;
    }
    const std::string problem = saveScenarioFile(*result.scenario, a.output);
    if (!problem.empty())
        return io.fail(kExitBadInput, "cannot write " + a.output + ": " + problem);
    io.out() << result.summary << "Scenario written to " << a.output << "\n";
    return kExitOk;
}

// export ---------------------------------------------------------------------------------------

int runExport(io::ExportFormat format, const Args& a, CommandIo& io) {
    const std::optional<Scenario> scenario =
        loadScenarioArg(a.positional.size() > 1 ? a.positional[1] : std::string(), a.overrides, io);
    if (!scenario)
        return kExitBadInput;
    const io::ExportOutcome result = io::exportScenario(format, *scenario);
    for (const Diagnostic& d : result.diagnostics)
        io.fail(kExitOk, d.message);
    if (result.files.empty())
        return kExitBadInput;
    const std::string& path = a.positional[0];
    if (path == "-" && !result.directory) {
        io.out() << result.files.front().text;
        return kExitOk;
    }
    if (path == "-")
        return io.fail(kExitUsage, "writes a directory of files, not stdout");
    if (const std::string problem = io::writeExport(result, path); !problem.empty())
        return io.fail(kExitBadInput, problem);
    io.out() << "Wrote " << result.summary.substr(0, result.summary.find('\n')) << " to " << path
             << "\n"
             << result.summary.substr(result.summary.find('\n') + 1);
    return kExitOk;
}

// The command line -------------------------------------------------------------------------

void addOutput(CLI::App* c, Args& a) {
    c->add_option("-o,--output", a.output,
                  "write the scenario (atomically); without it (or '-'), YAML to standard output "
                  "and the summary to standard error")
        ->type_name("OUT.yaml");
}

void addCluster(CLI::App* c, Args& a, const char* what) {
    c->add_option("--cluster", a.cluster, what)->type_name("SCENARIO.yaml");
}

void addNodes(CLI::App* c, Args& a, const char* what) {
    c->add_option("--nodes", a.nodes, what)->type_name("N")->check(wholeNumber(1, 1'000'000));
}

void addSet(CLI::App* c, Args& a, const char* what) {
    addSetOption(c, a.overrides, what);
}

CLI::App* addImport(CLI::App& group, CommandTable& table, io::ImportFormat format,
                    const char* description, const std::shared_ptr<Args>& a) {
    return table.add(group, io::toString(format), description,
                     [format, a](CommandIo& io) { return runImport(format, *a, io); });
}

void addImports(CLI::App& app, CommandTable& table) {
    CLI::App* group = table.addGroup(
        app, "import",
        "Reads what other tools describe (a Megatron-LM launch script, a topology dump, a "
        "Calculon configuration) and writes the scenario. Bad input writes nothing (exit 1).");
    auto m = std::make_shared<Args>();
    CLI::App* c = addImport(
        *group, table, io::ImportFormat::megatron,
        "Reads a Megatron-LM / Megatron-Core command line, launch script (argument arrays, "
        "strings, continuations, comments, variables set in the script) or ModelZoo YAML of "
        "'--flag: value' lines and writes the scenario it describes. Every flag is reported as "
        "mapped (with the fields it sets), recognized but not modelled yet, without effect on "
        "the estimate, or unknown. The cluster comes from --cluster (a scenario file; its "
        "routing and economics are kept too) or from a GPU preset's node shape with --nodes "
        "(default: torchrun's --nnodes in the file).",
        m);
    c->add_option("ARGS_FILE", m->positional, "the script, command line or YAML")
        ->required()
        ->expected(1);
    addCluster(c, *m, "the cluster (a scenario file), instead of --gpu");
    c->add_option("--gpu", m->gpu, "a GPU preset whose node shape gives the cluster")
        ->type_name("PRESET");
    addNodes(c, *m, "nodes of the --gpu cluster (default: torchrun's --nnodes)");
    c->add_option("--var", m->vars,
                  "set a shell variable the file uses but does not set (wins over the script's "
                  "own assignment)")
        ->type_name("NAME=VALUE")
        ->allow_extra_args(false);
    addSet(c, *m, "override a field of the result (e.g. model.vocab=129280)");
    addOutput(c, *m);

    const char* topology_help[] = {
        "Reads the output of 'nvidia-smi topo -m' (the GPU/NIC matrix and its NIC legend) and "
        "writes the base scenario (--cluster, else the built-in default) with its node replaced: "
        "GPUs per node, NVLink bandwidth (NV# links x the GPU's NVLink generation), and one rail "
        "per NIC that is next to a GPU (PIX/PXB/PHB). The matrix names neither the GPU model nor "
        "NIC speeds: they stay the base's, or --nic PRESET. The GPU count is kept (nodes = GPUs "
        "/ GPUs per node) unless --nodes N.",
        "Reads NCCL's topology dump (NCCL_TOPO_DUMP_FILE=FILE.xml) and writes the base scenario "
        "with its node replaced, as for nvidia-smi-topo, and more: the GPU preset from the PCI "
        "device id when the catalog has it, the NVLink generation from the compute capability, "
        "NIC speeds (which pick the NIC preset) and, for Grace-Blackwell trays, a rack-wide "
        "NVLink domain."};
    const io::ImportFormat topologies[] = {io::ImportFormat::nvidia_smi_topo,
                                           io::ImportFormat::nccl_topo};
    for (int i = 0; i < 2; ++i) {
        auto t = std::make_shared<Args>();
        c = addImport(*group, table, topologies[i], topology_help[i], t);
        c->add_option("FILE", t->positional, i == 0 ? "the saved output" : "the XML dump")
            ->required()
            ->expected(1)
            ->option_text(i == 0 ? "FILE" : "FILE.xml");
        addCluster(c, *t, "the base scenario (default: the built-in one)");
        addNodes(c, *t, "nodes (default: the base's GPU count / GPUs per node)");
        c->add_option("--nic", t->nic, "the NIC preset of every rail")->type_name("PRESET");
        addSet(c, *t, "override a field of the result");
        addOutput(c, *t);
    }

    auto k = std::make_shared<Args>();
    c = addImport(
        *group, table, io::ImportFormat::calculon,
        "Reads Calculon's application (model), execution and system JSON (DIR/model.json, "
        "execution.json, system.json, or the three files) into a dense scenario: Calculon's "
        "2-matrix MLP of width ff becomes a SwiGLU FFN of 2/3 ff, TP/PP/DP, batch, recompute, "
        "interleaving and optimizer sharding carry over, and the system's TFLOPS, HBM and "
        "network tiers reshape the base cluster (--cluster, else the built-in default), whose "
        "vocabulary, routing and economics are kept.",
        k);
    c->add_option("FILES", k->positional, "a directory, or MODEL.json EXECUTION.json SYSTEM.json")
        ->required()
        ->expected(1, 3)
        ->option_text("DIR | MODEL.json EXECUTION.json SYSTEM.json");
    addCluster(c, *k, "the base scenario (default: the built-in one)");
    addSet(c, *k, "override a field of the result");
    addOutput(c, *k);

    auto r = std::make_shared<Args>();
    c = addImport(
        *group, table, io::ImportFormat::megatron_tpe,
        "Sums Megatron-Core's tokens-per-expert logs (--save-tokens-per-expert-interval: one "
        "{save}/tokens_per_expert/rankN.jsonl per rank, a line per iteration and MoE layer with "
        "each micro-batch's tokens per local expert) into a routing CSV: a header and one row of "
        "token counts per MoE layer, for routing.histogram_csv. DIR is the --save directory, its "
        "tokens_per_expert/ folder, or any folder of rank files. --cluster is the run's "
        "scenario: its layout.order and degrees map each rank to its pipeline stage and EP rank "
        "(Megatron's rank order), its layers and pp map the logged stage-local layers to MoE "
        "layers. Sums over micro-batches, iterations (or only --iter N) and expert-DP replicas; "
        "expert-DP replicas missing a rank file are left out and listed, a MoE layer no replica "
        "logged completely is an error. MTP lines are skipped.",
        r);
    c->add_option("LOGS", r->positional, "the log directory or rank files")
        ->required()
        ->expected(1, -1)
        ->option_text("DIR | rankN.jsonl...");
    addCluster(c, *r, "the run's scenario (its model and layout; required)");
    c->add_option("--iter", r->iteration, "only this logged iteration")
        ->type_name("N")
        ->check(CLI::NonNegativeNumber);
    addSet(c, *r, "adjust the scenario the logs are read with (e.g. layout.pp=4)");
    c->add_option("-o,--output", r->output,
                  "write the CSV (atomically); without it (or '-'), the CSV to standard output "
                  "and the summary to standard error")
        ->type_name("OUT.csv");
}

CLI::App* addExport(CLI::App& group, CommandTable& table, io::ExportFormat format,
                    const char* output, const char* output_help, const char* description,
                    const std::shared_ptr<Args>& a) {
    CLI::App* c = table.add(group, io::toString(format), description,
                            [format, a](CommandIo& io) { return runExport(format, *a, io); });
    c->add_option("OUT", a->positional,
                  std::string(output_help) +
                      "; then the scenario (default: the built-in one, '-' reads standard "
                      "input)")
        ->required()
        ->expected(1, 2)
        ->option_text(std::string(output) + " [SCENARIO.yaml]");
    addSet(c, *a, "what-if override of the scenario");
    return c;
}

void addExports(CLI::App& app, CommandTable& table) {
    CLI::App* group = table.addGroup(
        app, "export",
        "Writes the scenario for the tools people already run: Megatron-Core arguments (or a "
        "NeMo recipe), Calculon, ASTRA-sim, draw.io. Outputs are written atomically.");
    auto m = std::make_shared<Args>();
    CLI::App* c = table.add(
        *group, "megatron",
        "Writes the Megatron-Core argument arrays of the scenario, with '# moe-plan:' "
        "annotations for what Megatron has no argument for, so 'moe-plan import megatron' reads "
        "the same scenario back. --format nemo writes a NeMo 2.0 recipe snippet (Python) "
        "instead.",
        [m](CommandIo& io) {
            return runExport(
                m->format == "nemo" ? io::ExportFormat::nemo : io::ExportFormat::megatron, *m, io);
        });
    c->add_option("OUT", m->positional,
                  "the script ('-' = standard output); then the scenario (default: the built-in "
                  "one)")
        ->required()
        ->expected(1, 2)
        ->option_text("OUT.sh|- [SCENARIO.yaml]");
    c->add_option("--format", m->format,
                  "megatron (the argument arrays, default) or nemo (a NeMo 2.0 recipe snippet)")
        ->type_name("megatron|nemo")
        ->check(cmdline::oneOf({"megatron", "nemo"}));
    addSet(c, *m, "what-if override of the scenario");
    addExport(*group, table, io::ExportFormat::calculon, "DIR", "the directory to write",
              "Writes Calculon's model.json, execution.json and system.json to DIR for 'calculon "
              "llm DIR/model.json DIR/execution.json DIR/system.json OUT.json': the dense part "
              "of the scenario (a MoE layer becomes the MLP one token runs through), its layout "
              "on Calculon's two network tiers, and its hardware with Calculon's own efficiency "
              "calibration. Prints what Calculon cannot express.",
              std::make_shared<Args>());
    addExport(*group, table, io::ExportFormat::astra_sim, "DIR", "the directory to write",
              "Writes ASTRA-sim 2.0's analytical network (network.yml: one Switch dimension for "
              "the NVLink domain, one for the scale-out fabric, with bandwidth in GB/s and "
              "latency in ns), system.json (collective algorithms per dimension, the GPU's "
              "roofline) and remote_memory.json to DIR. The workload itself (Chakra traces) is "
              "not written.",
              std::make_shared<Args>());
    addExport(*group, table, io::ExportFormat::drawio, "OUT.drawio|-",
              "the diagram ('-' = standard output)",
              "Writes the cluster's hardware graph as a draw.io diagram (mxGraph XML): racks and "
              "nodes as containers, GPUs, NICs, NVLink, leaf and spine switches, and every link "
              "as a connector with its bandwidth. Clusters over 512 GPUs draw each node as one "
              "GPU box and one NIC box. moe-planner --export DIR writes the same file as "
              "topology.drawio.",
              std::make_shared<Args>());
}

} // namespace

void addImportExportCommands(CLI::App& app, CommandTable& table) {
    addImports(app, table);
    addExports(app, table);
}

} // namespace moe::cli
