#include "import_export.h"

#include "cli.h"

#include "moe/catalog.h"
#include "moe/io/astra_sim.h"
#include "moe/io/calculon.h"
#include "moe/io/drawio.h"
#include "moe/io/megatron_args.h"
#include "moe/io/nccl_topo.h"
#include "moe/io/nvidia_smi_topo.h"
#include "moe/scenario_io.h"
#include "moe/text_file.h"

#include <charconv>
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

/// Writes `text` to `path` atomically, or to `out` when path is "-".
bool writeOutput(const std::string& path, const std::string& text, std::ostream& out,
                 std::ostream& err, const char* command) {
    if (path == "-") {
        out << text;
        return true;
    }
    const std::string problem = writeTextFileAtomically(path, text);
    if (!problem.empty()) {
        err << "moe-plan " << command << ": cannot write " << path << ": " << problem << "\n";
        return false;
    }
    return true;
}

/// Saves an imported scenario to -o, or prints it; the summary goes where the YAML does not.
int finishImport(const Scenario& scenario, const std::string& summary, const Args& a,
                 std::ostream& out, std::ostream& err) {
    if (a.output.empty() || a.output == "-") {
        err << summary;
        out << toYaml(scenario);
        return kExitOk;
    }
    const std::string problem = saveScenarioFile(scenario, a.output);
    if (!problem.empty()) {
        err << "moe-plan import: cannot write " << a.output << ": " << problem << "\n";
        return kExitBadInput;
    }
    out << summary << "Scenario written to " << a.output << "\n";
    return kExitOk;
}

bool readInput(const std::string& path, std::string& text, std::ostream& err) {
    const std::string problem = readTextFile(path, text);
    if (!problem.empty())
        err << path << ": error: cannot read file: " << problem << "\n";
    return problem.empty();
}

// import megatron -----------------------------------------------------------------------------

int importMegatron(const Args& a, std::ostream& out, std::ostream& err) {
    const std::string& file = a.positional[0];
    if (!a.cluster.empty() && !a.gpu.empty()) {
        err << "moe-plan import megatron: give --cluster or --gpu, not both\n";
        return kExitUsage;
    }
    if (a.cluster.empty() && a.gpu.empty()) {
        err << "moe-plan import megatron: the arguments do not say which cluster: pass --cluster "
               "SCENARIO.yaml or --gpu PRESET --nodes N\n";
        return kExitUsage;
    }
    if (!a.gpu.empty() && !builtinCatalog().findGpu(a.gpu)) {
        err << "moe-plan import megatron: unknown GPU preset '" << a.gpu
            << "' (moe-plan catalog lists them)\n";
        return kExitUsage;
    }
    io::MegatronImportOptions options;
    options.file_label = file;
    options.vars = a.vars;
    options.overrides = a.overrides;
    options.gpu_preset = a.gpu;
    options.nodes = a.nodes;
    if (!a.cluster.empty()) {
        const std::optional<Scenario> base = loadScenario(a.cluster, {}, err);
        if (!base)
            return kExitBadInput;
        options.base = *base;
        options.base_dir = fs::path(a.cluster).parent_path().string();
        if (options.base_dir.empty())
            options.base_dir = ".";
    } else {
        options.base = defaultScenario();
    }
    std::string text;
    if (!readInput(file, text, err))
        return kExitBadInput;
    const io::MegatronImport result = io::importMegatronArgs(text, options);
    for (const Diagnostic& d : result.diagnostics)
        err << d.format() << "\n";
    if (!result.ok()) {
        err << io::describeImport(result);
        return kExitBadInput;
    }
    return finishImport(*result.scenario, "Imported " + file + "\n" + io::describeImport(result), a,
                        out, err);
}

// import nvidia-smi-topo / nccl-topo --------------------------------------------------------

/// The base scenario of an import: --cluster FILE, else the built-in default.
std::optional<Scenario> baseScenario(const Args& a, std::string& base_dir, std::ostream& err) {
    base_dir = ".";
    if (a.cluster.empty())
        return defaultScenario();
    base_dir = fs::path(a.cluster).parent_path().string();
    if (base_dir.empty())
        base_dir = ".";
    return loadScenario(a.cluster, {}, err);
}

int importNode(const Args& a, std::ostream& out, std::ostream& err,
               io::NodeParse (*parse)(const std::string&, const std::string&)) {
    if (!a.gpu.empty()) {
        err << "moe-plan import: --gpu is for megatron imports; a topology import keeps the "
               "base scenario's GPU unless the dump names a catalog GPU\n";
        return kExitUsage;
    }
    if (!a.nic.empty() && !builtinCatalog().findNic(a.nic)) {
        err << "moe-plan import: unknown NIC preset '" << a.nic
            << "' (moe-plan catalog lists them)\n";
        return kExitUsage;
    }
    const std::string& file = a.positional[0];
    std::string text;
    if (!readInput(file, text, err))
        return kExitBadInput;
    const io::NodeParse parsed = parse(text, file);
    for (const Diagnostic& d : parsed.diagnostics)
        err << d.format() << "\n";
    if (!parsed.node)
        return kExitBadInput;
    io::NodeImportOptions options;
    options.file_label = file;
    std::optional<Scenario> base = baseScenario(a, options.base_dir, err);
    if (!base)
        return kExitBadInput;
    options.base = *base;
    options.nodes = a.nodes;
    options.nic_preset = a.nic;
    options.overrides = a.overrides;
    const io::NodeImport result = io::applyNodeDescription(*parsed.node, options);
    for (const Diagnostic& d : result.diagnostics)
        err << d.format() << "\n";
    std::string summary = io::describeNode(*parsed.node) + "Cluster fields:\n";
    for (const std::string& change : result.changes)
        summary += "  " + change + "\n";
    if (!result.scenario) {
        err << summary;
        return kExitBadInput;
    }
    return finishImport(*result.scenario, summary, a, out, err);
}

int importNvidiaSmi(const Args& a, std::ostream& out, std::ostream& err) {
    return importNode(a, out, err, io::parseNvidiaSmiTopo);
}

int importNccl(const Args& a, std::ostream& out, std::ostream& err) {
    return importNode(a, out, err, io::parseNcclTopo);
}

// import / export calculon -------------------------------------------------------------------

/// Calculon's three files: DIR/{model,execution,system}.json, or the three paths in that order.
std::vector<std::string> calculonPaths(const std::vector<std::string>& positional) {
    if (positional.size() == 3)
        return positional;
    const fs::path dir = positional[0];
    return {(dir / "model.json").string(), (dir / "execution.json").string(),
            (dir / "system.json").string()};
}

int importCalculon(const Args& a, std::ostream& out, std::ostream& err) {
    if (a.positional.size() == 2) {
        err << "moe-plan import calculon: give a directory or the three files (model, execution, "
               "system)\n";
        return kExitUsage;
    }
    const std::vector<std::string> paths = calculonPaths(a.positional);
    std::string texts[3];
    for (int i = 0; i < 3; ++i)
        if (!readInput(paths[static_cast<std::size_t>(i)], texts[i], err))
            return kExitBadInput;
    io::CalculonImportOptions options;
    options.model_label = paths[0];
    options.execution_label = paths[1];
    options.system_label = paths[2];
    const std::optional<Scenario> base = baseScenario(a, options.base_dir, err);
    if (!base)
        return kExitBadInput;
    options.base = *base;
    options.overrides = a.overrides;
    const io::CalculonImport result = io::importCalculon(texts[0], texts[1], texts[2], options);
    for (const Diagnostic& d : result.diagnostics)
        err << d.format() << "\n";
    std::string summary =
        "Imported Calculon's " + paths[0] + ", " + paths[1] + ", " + paths[2] + "\n";
    for (const std::string& n : result.notes)
        summary += "  " + n + "\n";
    if (!result.scenario) {
        err << summary;
        return kExitBadInput;
    }
    return finishImport(*result.scenario, summary, a, out, err);
}

/// Writes each (name, text) into DIR (created when missing), atomically.
bool writeDirectory(const std::string& dir,
                    const std::vector<std::pair<std::string, std::string>>& files,
                    std::ostream& err) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        err << "moe-plan export: cannot create " << dir << ": " << ec.message() << "\n";
        return false;
    }
    for (const auto& [name, text] : files) {
        const std::string path = (fs::path(dir) / name).string();
        const std::string problem = writeTextFileAtomically(path, text);
        if (!problem.empty()) {
            err << "moe-plan export: cannot write " << path << ": " << problem << "\n";
            return false;
        }
    }
    return true;
}

int exportCalculon(const Args& a, std::ostream& out, std::ostream& err) {
    const std::optional<Scenario> scenario =
        loadScenario(a.positional.size() > 1 ? a.positional[1] : std::string(), a.overrides, err);
    if (!scenario)
        return kExitBadInput;
    const io::CalculonExport result = io::exportCalculon(*scenario);
    for (const Diagnostic& d : result.diagnostics)
        err << "moe-plan export calculon: " << d.message << "\n";
    if (!result.files)
        return kExitBadInput;
    const std::string& dir = a.positional[0];
    if (!writeDirectory(dir,
                        {{"model.json", result.files->model_json},
                         {"execution.json", result.files->execution_json},
                         {"system.json", result.files->system_json}},
                        err))
        return kExitBadInput;
    out << "Wrote Calculon's model.json, execution.json and system.json for " << scenario->name
        << " to " << dir << "\nRun: calculon llm " << (fs::path(dir) / "model.json").string() << " "
        << (fs::path(dir) / "execution.json").string() << " "
        << (fs::path(dir) / "system.json").string() << " -\nWhat Calculon cannot express:\n";
    for (const std::string& n : result.files->notes)
        out << "  " << n << "\n";
    return kExitOk;
}

// export astra-sim / drawio --------------------------------------------------------------------

int exportAstraSim(const Args& a, std::ostream& out, std::ostream& err) {
    const std::optional<Scenario> scenario =
        loadScenario(a.positional.size() > 1 ? a.positional[1] : std::string(), a.overrides, err);
    if (!scenario)
        return kExitBadInput;
    const io::AstraSimExport result = io::exportAstraSim(*scenario);
    for (const Diagnostic& d : result.diagnostics)
        err << "moe-plan export astra-sim: " << d.message << "\n";
    if (!result.files)
        return kExitBadInput;
    const std::string& dir = a.positional[0];
    if (!writeDirectory(dir,
                        {{"network.yml", result.files->network_yaml},
                         {"system.json", result.files->system_json},
                         {"remote_memory.json", result.files->remote_memory_json}},
                        err))
        return kExitBadInput;
    const fs::path d = dir;
    out << "Wrote ASTRA-sim's network.yml, system.json and remote_memory.json for "
        << scenario->name << " to " << dir
        << "\nRun (with Chakra traces of the workload):\n  AstraSim_Analytical_Congestion_Aware "
           "--workload-configuration=TRACE_PREFIX --system-configuration="
        << (d / "system.json").string()
        << " --remote-memory-configuration=" << (d / "remote_memory.json").string()
        << " --network-configuration=" << (d / "network.yml").string()
        << "\nWhat ASTRA-sim's inputs do not carry:\n";
    for (const std::string& n : result.files->notes)
        out << "  " << n << "\n";
    return kExitOk;
}

int exportDrawio(const Args& a, std::ostream& out, std::ostream& err) {
    const std::optional<Scenario> scenario =
        loadScenario(a.positional.size() > 1 ? a.positional[1] : std::string(), a.overrides, err);
    if (!scenario)
        return kExitBadInput;
    if (!writeOutput(a.positional[0], io::exportDrawio(*scenario), out, err, "export"))
        return kExitBadInput;
    if (a.positional[0] != "-")
        out << "Wrote the draw.io diagram of " << scenario->name << "'s "
            << scenario->cluster.gpuCount() << " GPUs to " << a.positional[0] << "\n";
    return kExitOk;
}

// export megatron -----------------------------------------------------------------------------

int exportMegatron(const Args& a, std::ostream& out, std::ostream& err) {
    if (!a.format.empty() && a.format != "megatron" && a.format != "nemo") {
        err << "moe-plan export megatron: --format is megatron (the argument arrays) or nemo "
               "(a NeMo 2.0 recipe snippet), got '"
            << a.format << "'\n";
        return kExitUsage;
    }
    const std::optional<Scenario> scenario =
        loadScenario(a.positional.size() > 1 ? a.positional[1] : std::string(), a.overrides, err);
    if (!scenario)
        return kExitBadInput;
    const std::string text =
        a.format == "nemo" ? io::exportNemoRecipe(*scenario) : io::exportMegatronArgs(*scenario);
    if (!writeOutput(a.positional[0], text, out, err, "export"))
        return kExitBadInput;
    if (a.positional[0] != "-")
        out << "Wrote "
            << (a.format == "nemo" ? "the NeMo 2.0 recipe" : "the Megatron-Core arguments")
            << " for " << scenario->name << " to " << a.positional[0] << "\n";
    return kExitOk;
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
         1, 1, importMegatron},
        {"nvidia-smi-topo",
         "import nvidia-smi-topo FILE [--cluster SCENARIO.yaml] [--nodes N] [--nic PRESET] "
         "[--set key=value ...] [-o OUT.yaml]",
         "Reads the output of 'nvidia-smi topo -m' (the GPU/NIC matrix and its NIC legend) and\n"
         "writes the base scenario (--cluster, else the built-in default) with its node\n"
         "replaced: GPUs per node, NVLink bandwidth (NV# links x the GPU's NVLink generation),\n"
         "and one rail per NIC that is next to a GPU (PIX/PXB/PHB). The matrix names neither\n"
         "the GPU model nor NIC speeds: they stay the base's, or --nic PRESET. The GPU count is\n"
         "kept (nodes = GPUs / GPUs per node) unless --nodes N.",
         1, 1, importNvidiaSmi},
        {"nccl-topo",
         "import nccl-topo FILE.xml [--cluster SCENARIO.yaml] [--nodes N] [--nic PRESET] "
         "[--set key=value ...] [-o OUT.yaml]",
         "Reads NCCL's topology dump (NCCL_TOPO_DUMP_FILE=FILE.xml) and writes the base\n"
         "scenario with its node replaced, as for nvidia-smi-topo, and more: the GPU preset\n"
         "from the PCI device id when the catalog has it, the NVLink generation from the\n"
         "compute capability, NIC speeds (which pick the NIC preset) and, for Grace-Blackwell\n"
         "trays, a rack-wide NVLink domain.",
         1, 1, importNccl},
        {"calculon",
         "import calculon DIR | MODEL.json EXECUTION.json SYSTEM.json [--cluster SCENARIO.yaml] "
         "[--set key=value ...] [-o OUT.yaml]",
         "Reads Calculon's application (model), execution and system JSON (DIR/model.json,\n"
         "execution.json, system.json, or the three files) into a dense scenario: Calculon's\n"
         "2-matrix MLP of width ff becomes a SwiGLU FFN of 2/3 ff, TP/PP/DP, batch, recompute,\n"
         "interleaving and optimizer sharding carry over, and the system's TFLOPS, HBM and\n"
         "network tiers reshape the base cluster (--cluster, else the built-in default), whose\n"
         "vocabulary, routing and economics are kept.",
         1, 3, importCalculon},
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
         1, 2, exportCalculon},
        {"astra-sim", "export astra-sim DIR [SCENARIO.yaml] [--set key=value ...]",
         "Writes ASTRA-sim 2.0's analytical network (network.yml: one Switch dimension for the\n"
         "NVLink domain, one for the scale-out fabric, with bandwidth in GB/s and latency in ns),\n"
         "system.json (collective algorithms per dimension, the GPU's roofline) and\n"
         "remote_memory.json to DIR. The workload itself (Chakra traces) is not written.",
         1, 2, exportAstraSim},
        {"drawio", "export drawio OUT.drawio|- [SCENARIO.yaml] [--set key=value ...]",
         "Writes the cluster's hardware graph as a draw.io diagram (mxGraph XML): racks and\n"
         "nodes as containers, GPUs, NICs, NVLink, leaf and spine switches, and every link as a\n"
         "connector with its bandwidth. Clusters over 512 GPUs draw each node as one GPU box and\n"
         "one NIC box. moe-planner --export DIR writes the same file as topology.drawio.",
         1, 2, exportDrawio},
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
