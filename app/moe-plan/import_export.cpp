#include "import_export.h"

#include "cli.h"

#include "moe/atomic_file.h"
#include "moe/catalog.h"
#include "moe/io/interop.h"
#include "moe/scenario_io.h"

#include <charconv>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
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
    std::map<std::string, std::string> vars;
    std::vector<std::string> overrides;
    std::optional<int64_t> iteration; ///< --iter N
    bool help = false;
};

struct Format {
    const char* name;
    const char* synopsis;
    const char* help;
    int min_positional; ///< after the format name
    int max_positional;
    std::function<int(const Args&, std::ostream&, std::ostream&)> run;
};

/// Parses the options shared by import and export; returns a usage problem or "".
std::string parseArgs(const std::vector<std::string>& in, Args& a) {
    for (std::size_t i = 0; i < in.size(); ++i) {
        const std::string& s = in[i];
        auto value = [&](std::string& into) -> std::string {
            if (i + 1 >= in.size())
                return s + " needs a value";
            into = in[++i];
            return {};
        };
        std::string problem;
        if (s == "--help" || s == "-h") {
            a.help = true;
        } else if (s == "-o" || s == "--output") {
            problem = value(a.output);
        } else if (s == "--cluster") {
            problem = value(a.cluster);
        } else if (s == "--gpu") {
            problem = value(a.gpu);
        } else if (s == "--format") {
            problem = value(a.format);
        } else if (s == "--nic") {
            problem = value(a.nic);
        } else if (s == "--nodes") {
            std::string text;
            problem = value(text);
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), a.nodes);
            if (problem.empty() &&
                (ec != std::errc() || end != text.data() + text.size() || a.nodes < 1))
                problem = "--nodes needs a whole number of at least 1, got '" + text + "'";
        } else if (s == "--iter") {
            std::string text;
            problem = value(text);
            int64_t n = -1;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
            if (problem.empty() && (ec != std::errc() || end != text.data() + text.size() || n < 0))
                problem = "--iter needs a logged iteration number (>= 0), got '" + text + "'";
            a.iteration = n;
        } else if (s == "--var") {
            std::string text;
            problem = value(text);
            const std::size_t eq = text.find('=');
            if (problem.empty() && (eq == std::string::npos || eq == 0))
                problem = "--var needs NAME=VALUE, got '" + text + "'";
            else if (problem.empty())
                a.vars[text.substr(0, eq)] = text.substr(eq + 1);
        } else if (s == "--set") {
            std::string text;
            problem = value(text);
            a.overrides.push_back(text);
        } else if (s.size() > 1 && s[0] == '-' && s != "-") {
            problem = "unknown option '" + s + "'";
        } else {
            a.positional.push_back(s);
        }
        if (!problem.empty())
            return problem;
    }
    return {};
}

std::optional<Scenario> loadScenario(const std::string& path, const std::vector<std::string>& sets,
                                     std::ostream& err) {
    const LoadResult loaded =
        path.empty()
            ? loadScenarioTextWithOverrides(defaultScenarioYaml(), "<built-in default>", ".", sets)
            : loadScenarioWithOverrides(path, sets);
    for (const Diagnostic& d : loaded.diagnostics)
        err << d.format() << "\n";
    return loaded.scenario;
}

// import ---------------------------------------------------------------------------------------

/// The CSV goes to -o (atomically), or to stdout with the summary on stderr.
int writeRoutingCsv(const std::string& csv, const std::string& summary, const std::string& output,
                    const std::string& command, std::ostream& out, std::ostream& err) {
    if (output.empty() || output == "-") {
        err << summary;
        out << csv;
        return kExitOk;
    }
    const std::string problem = writeFileAtomically(output, csv);
    if (!problem.empty()) {
        err << command << ": cannot write " << output << ": " << problem << "\n";
        return kExitBadInput;
    }
    out << summary << "Routing CSV written to " << output
        << " (use it with routing: {model: histogram, histogram_csv: " << output << "})\n";
    return kExitOk;
}

int runImport(io::ImportFormat format, const Args& a, std::ostream& out, std::ostream& err) {
    const std::string command = std::string("moe-plan import ") + io::toString(format);
    const bool megatron = format == io::ImportFormat::megatron;
    const bool topology =
        format == io::ImportFormat::nvidia_smi_topo || format == io::ImportFormat::nccl_topo;
    const bool routing = format == io::ImportFormat::megatron_tpe;
    if (routing && a.cluster.empty()) {
        err << command
            << ": the logs do not say how the ranks were laid out: pass --cluster SCENARIO.yaml "
               "(the run's model and layout)\n";
        return kExitUsage;
    }
    if (routing && a.nodes > 0) {
        err << command << ": --nodes is not for megatron-tpe (the layout comes from --cluster)\n";
        return kExitUsage;
    }
    if (!routing && a.iteration) {
        err << command << ": --iter is for megatron-tpe imports\n";
        return kExitUsage;
    }
    if (megatron && !a.cluster.empty() && !a.gpu.empty()) {
        err << command << ": give --cluster or --gpu, not both\n";
        return kExitUsage;
    }
    if (megatron && a.cluster.empty() && a.gpu.empty()) {
        err << command
            << ": the arguments do not say which cluster: pass --cluster SCENARIO.yaml "
               "or --gpu PRESET --nodes N\n";
        return kExitUsage;
    }
    if (!megatron && (!a.gpu.empty() || !a.vars.empty())) {
        err << command << ": --gpu and --var are for megatron imports\n";
        return kExitUsage;
    }
    if (!topology && !a.nic.empty()) {
        err << command << ": --nic is for topology imports\n";
        return kExitUsage;
    }
    if (format == io::ImportFormat::calculon && a.positional.size() == 2) {
        err << command << ": give a directory or the three files (model, execution, system)\n";
        return kExitUsage;
    }
    if (!a.gpu.empty() && !builtinCatalog().findGpu(a.gpu)) {
        err << command << ": unknown GPU preset '" << a.gpu << "' (moe-plan catalog lists them)\n";
        return kExitUsage;
    }
    if (!a.nic.empty() && !builtinCatalog().findNic(a.nic)) {
        err << command << ": unknown NIC preset '" << a.nic << "' (moe-plan catalog lists them)\n";
        return kExitUsage;
    }
    io::ImportRequest request;
    request.format = format;
    request.paths = a.positional;
    request.gpu_preset = a.gpu;
    request.nodes = a.nodes;
    request.nic_preset = a.nic;
    request.vars = a.vars;
    request.iteration = a.iteration;
    // A routing import's result is a CSV, so --set adjusts the layout the logs are read with.
    if (!routing)
        request.overrides = a.overrides;
    if (a.cluster.empty()) {
        request.base = defaultScenario();
    } else {
        const std::optional<Scenario> base =
            loadScenario(a.cluster, routing ? a.overrides : std::vector<std::string>{}, err);
        if (!base)
            return kExitBadInput;
        request.base = *base;
        request.base_dir = fs::path(a.cluster).parent_path().string();
        if (request.base_dir.empty())
            request.base_dir = ".";
    }
    const io::ImportOutcome result = io::importFiles(request);
    for (const Diagnostic& d : result.diagnostics)
        err << d.format() << "\n";
    if (result.routing_csv)
        return writeRoutingCsv(*result.routing_csv, result.summary, a.output, command, out, err);
    if (!result.scenario) {
        err << result.summary;
        return kExitBadInput;
    }
    // The YAML goes to -o, or to stdout with the summary on stderr.
    if (a.output.empty() || a.output == "-") {
        err << result.summary;
        out << toYaml(*result.scenario);
        return kExitOk;
    }
    const std::string problem = saveScenarioFile(*result.scenario, a.output);
    if (!problem.empty()) {
        err << command << ": cannot write " << a.output << ": " << problem << "\n";
        return kExitBadInput;
    }
    out << result.summary << "Scenario written to " << a.output << "\n";
    return kExitOk;
}

// export ---------------------------------------------------------------------------------------

int runExport(io::ExportFormat format, const Args& a, std::ostream& out, std::ostream& err) {
    const std::string command = std::string("moe-plan export ") + io::toString(format);
    const std::optional<Scenario> scenario =
        loadScenario(a.positional.size() > 1 ? a.positional[1] : std::string(), a.overrides, err);
    if (!scenario)
        return kExitBadInput;
    const io::ExportOutcome result = io::exportScenario(format, *scenario);
    for (const Diagnostic& d : result.diagnostics)
        err << command << ": " << d.message << "\n";
    if (result.files.empty())
        return kExitBadInput;
    const std::string& path = a.positional[0];
    if (path == "-" && !result.directory) {
        out << result.files.front().text;
        return kExitOk;
    }
    if (path == "-") {
        err << command << ": writes a directory of files, not stdout\n";
        return kExitUsage;
    }
    const std::string problem = io::writeExport(result, path);
    if (!problem.empty()) {
        err << command << ": " << problem << "\n";
        return kExitBadInput;
    }
    out << "Wrote " << result.summary.substr(0, result.summary.find('\n')) << " to " << path << "\n"
        << result.summary.substr(result.summary.find('\n') + 1);
    return kExitOk;
}

int exportMegatron(const Args& a, std::ostream& out, std::ostream& err) {
    if (!a.format.empty() && a.format != "megatron" && a.format != "nemo") {
        err << "moe-plan export megatron: --format is megatron (the argument arrays) or nemo "
               "(a NeMo 2.0 recipe snippet), got '"
            << a.format << "'\n";
        return kExitUsage;
    }
    return runExport(a.format == "nemo" ? io::ExportFormat::nemo : io::ExportFormat::megatron, a,
                     out, err);
}

auto importAs(io::ImportFormat format) {
    return [format](const Args& a, std::ostream& out, std::ostream& err) {
        return runImport(format, a, out, err);
    };
}

auto exportAs(io::ExportFormat format) {
    return [format](const Args& a, std::ostream& out, std::ostream& err) {
        return runExport(format, a, out, err);
    };
}

const std::vector<Format>& importFormats() {
    static const std::vector<Format> formats = {
        {"megatron",
         "import megatron ARGS_FILE (--cluster SCENARIO.yaml | --gpu PRESET [--nodes N]) "
         "[--var NAME=VALUE ...] [--set key=value ...] [-o OUT.yaml]",
         "Reads a Megatron-LM / Megatron-Core command line, launch script (argument arrays,\n"
         "strings, continuations, comments, variables set in the script) or ModelZoo YAML of\n"
         "'--flag: value' lines and writes the scenario it describes. Every flag is reported as\n"
         "mapped (with the fields it sets), recognized but not modelled yet, without effect on\n"
         "the estimate, or unknown. The cluster comes from --cluster (a scenario file; its\n"
         "routing and economics are kept too) or from a GPU preset's node shape with --nodes\n"
         "(default: torchrun's --nnodes in the file).\n"
         "  --var NAME=VALUE   set a shell variable the file uses but does not set (wins over\n"
         "                     the script's own assignment)\n"
         "  --set key=value    override a field of the result (e.g. model.vocab=129280)\n"
         "  -o OUT.yaml        write the scenario (atomically); without it, YAML to stdout",
         1, 1, importAs(io::ImportFormat::megatron)},
        {"nvidia-smi-topo",
         "import nvidia-smi-topo FILE [--cluster SCENARIO.yaml] [--nodes N] [--nic PRESET] "
         "[--set key=value ...] [-o OUT.yaml]",
         "Reads the output of 'nvidia-smi topo -m' (the GPU/NIC matrix and its NIC legend) and\n"
         "writes the base scenario (--cluster, else the built-in default) with its node\n"
         "replaced: GPUs per node, NVLink bandwidth (NV# links x the GPU's NVLink generation),\n"
         "and one rail per NIC that is next to a GPU (PIX/PXB/PHB). The matrix names neither\n"
         "the GPU model nor NIC speeds: they stay the base's, or --nic PRESET. The GPU count is\n"
         "kept (nodes = GPUs / GPUs per node) unless --nodes N.",
         1, 1, importAs(io::ImportFormat::nvidia_smi_topo)},
        {"nccl-topo",
         "import nccl-topo FILE.xml [--cluster SCENARIO.yaml] [--nodes N] [--nic PRESET] "
         "[--set key=value ...] [-o OUT.yaml]",
         "Reads NCCL's topology dump (NCCL_TOPO_DUMP_FILE=FILE.xml) and writes the base\n"
         "scenario with its node replaced, as for nvidia-smi-topo, and more: the GPU preset\n"
         "from the PCI device id when the catalog has it, the NVLink generation from the\n"
         "compute capability, NIC speeds (which pick the NIC preset) and, for Grace-Blackwell\n"
         "trays, a rack-wide NVLink domain.",
         1, 1, importAs(io::ImportFormat::nccl_topo)},
        {"calculon",
         "import calculon DIR | MODEL.json EXECUTION.json SYSTEM.json [--cluster SCENARIO.yaml] "
         "[--set key=value ...] [-o OUT.yaml]",
         "Reads Calculon's application (model), execution and system JSON (DIR/model.json,\n"
         "execution.json, system.json, or the three files) into a dense scenario: Calculon's\n"
         "2-matrix MLP of width ff becomes a SwiGLU FFN of 2/3 ff, TP/PP/DP, batch, recompute,\n"
         "interleaving and optimizer sharding carry over, and the system's TFLOPS, HBM and\n"
         "network tiers reshape the base cluster (--cluster, else the built-in default), whose\n"
         "vocabulary, routing and economics are kept.",
         1, 3, importAs(io::ImportFormat::calculon)},
        {"megatron-tpe",
         "import megatron-tpe DIR | rankN.jsonl... --cluster SCENARIO.yaml [--iter N] "
         "[--set key=value ...] [-o OUT.csv]",
         "Sums Megatron-Core's tokens-per-expert logs (--save-tokens-per-expert-interval: one\n"
         "{save}/tokens_per_expert/rankN.jsonl per rank, a line per iteration and MoE layer with\n"
         "each micro-batch's tokens per local expert) into a routing CSV: a header and one row\n"
         "of token counts per MoE layer, for routing.histogram_csv. DIR is the --save directory,\n"
         "its tokens_per_expert/ folder, or any folder of rank files. --cluster is the run's\n"
         "scenario: its layout.order and degrees map each rank to its pipeline stage and EP\n"
         "rank (Megatron's rank order), its layers and pp map the logged stage-local layers to\n"
         "MoE layers. Sums over micro-batches, iterations (or only --iter N) and expert-DP\n"
         "replicas; expert-DP replicas missing a rank file are left out and listed, a MoE layer\n"
         "no replica logged completely is an error. MTP lines are skipped.\n"
         "  --set key=value    adjust the scenario the logs are read with (e.g. layout.pp=4)\n"
         "  -o OUT.csv         write the CSV (atomically); without it, the CSV to stdout",
         1, INT_MAX, importAs(io::ImportFormat::megatron_tpe)},
    };
    return formats;
}

const std::vector<Format>& exportFormats() {
    static const std::vector<Format> formats = {
        {"megatron",
         "export megatron OUT.sh|- [SCENARIO.yaml] [--format nemo] [--set key=value ...]",
         "Writes the Megatron-Core argument arrays of the scenario (the built-in default without\n"
         "SCENARIO.yaml), with '# moe-plan:' annotations for what Megatron has no argument for,\n"
         "so 'moe-plan import megatron' reads the same scenario back. --format nemo writes a\n"
         "NeMo 2.0 recipe snippet (Python) instead. '-' writes to stdout.",
         1, 2, exportMegatron},
        {"calculon", "export calculon DIR [SCENARIO.yaml] [--set key=value ...]",
         "Writes Calculon's model.json, execution.json and system.json to DIR for\n"
         "'calculon llm DIR/model.json DIR/execution.json DIR/system.json OUT.json': the dense\n"
         "part of the scenario (a MoE layer becomes the MLP one token runs through), its\n"
         "layout on Calculon's two network tiers, and its hardware with Calculon's own\n"
         "efficiency calibration. Prints what Calculon cannot express.",
         1, 2, exportAs(io::ExportFormat::calculon)},
        {"astra-sim", "export astra-sim DIR [SCENARIO.yaml] [--set key=value ...]",
         "Writes ASTRA-sim 2.0's analytical network (network.yml: one Switch dimension for the\n"
         "NVLink domain, one for the scale-out fabric, with bandwidth in GB/s and latency in ns),\n"
         "system.json (collective algorithms per dimension, the GPU's roofline) and\n"
         "remote_memory.json to DIR. The workload itself (Chakra traces) is not written.",
         1, 2, exportAs(io::ExportFormat::astra_sim)},
        {"drawio", "export drawio OUT.drawio|- [SCENARIO.yaml] [--set key=value ...]",
         "Writes the cluster's hardware graph as a draw.io diagram (mxGraph XML): racks and\n"
         "nodes as containers, GPUs, NICs, NVLink, leaf and spine switches, and every link as a\n"
         "connector with its bandwidth. Clusters over 512 GPUs draw each node as one GPU box and\n"
         "one NIC box. moe-planner --export DIR writes the same file as topology.drawio.",
         1, 2, exportAs(io::ExportFormat::drawio)},
    };
    return formats;
}

std::string commandHelp(const std::string& command) {
    const std::vector<Format>& formats = command == "import" ? importFormats() : exportFormats();
    std::string text = "Usage:\n";
    for (const Format& f : formats)
        text += "  moe-plan " + std::string(f.synopsis) + "\n";
    for (const Format& f : formats)
        text += "\n" + std::string(command) + " " + f.name + ":\n" + f.help + "\n";
    text += "\nExit status: 0 success, 1 bad input (nothing is written), 2 usage error.\n";
    return text;
}

} // namespace

std::optional<int> runImportExport(const std::vector<std::string>& args, std::ostream& out,
                                   std::ostream& err) {
    if (args.empty() || (args[0] != "import" && args[0] != "export"))
        return std::nullopt;
    const std::string& command = args[0];
    const std::vector<Format>& formats = command == "import" ? importFormats() : exportFormats();
    Args a;
    const std::string problem = parseArgs({args.begin() + 1, args.end()}, a);
    if (a.help) {
        out << commandHelp(command);
        return kExitOk;
    }
    if (!problem.empty()) {
        err << "moe-plan " << command << ": " << problem << "\n" << commandHelp(command);
        return kExitUsage;
    }
    if (a.positional.empty()) {
        err << "moe-plan " << command << ": which format?\n" << commandHelp(command);
        return kExitUsage;
    }
    const std::string name = a.positional.front();
    a.positional.erase(a.positional.begin());
    for (const Format& f : formats) {
        if (name != f.name)
            continue;
        const int n = static_cast<int>(a.positional.size());
        if (n < f.min_positional || n > f.max_positional) {
            err << "moe-plan " << command << " " << name
                << ": wrong number of files\nUsage: moe-plan " << f.synopsis << "\n";
            return kExitUsage;
        }
        return f.run(a, out, err);
    }
    std::string known;
    for (const Format& f : formats)
        known += (known.empty() ? "" : ", ") + std::string(f.name);
    err << "moe-plan " << command << ": unknown format '" << name << "' (known: " << known << ")\n";
    return kExitUsage;
}

std::string importExportSynopses() {
    std::string text;
    for (const Format& f : importFormats())
        text += "  " + std::string(f.synopsis) + "\n";
    for (const Format& f : exportFormats())
        text += "  " + std::string(f.synopsis) + "\n";
    return text;
}

std::optional<std::string> importExportHelp(const std::string& command) {
    if (command != "import" && command != "export")
        return std::nullopt;
    return commandHelp(command);
}

} // namespace moe::cli
