#include "moe/io/interop.h"

#include "moe/atomic_file.h"
#include "moe/io/astra_sim.h"
#include "moe/io/calculon.h"
#include "moe/io/drawio.h"
#include "moe/io/megatron_args.h"
#include "moe/io/megatron_tpe.h"
#include "moe/io/nccl_topo.h"
#include "moe/io/nvidia_smi_topo.h"

#include <filesystem>

namespace moe::io {

namespace fs = std::filesystem;

namespace {

constexpr std::pair<ImportFormat, const char*> kImportNames[] = {
    {ImportFormat::megatron, "megatron"},
    {ImportFormat::nvidia_smi_topo, "nvidia-smi-topo"},
    {ImportFormat::nccl_topo, "nccl-topo"},
    {ImportFormat::calculon, "calculon"},
    {ImportFormat::megatron_tpe, "megatron-tpe"},
};
constexpr std::pair<ExportFormat, const char*> kExportNames[] = {
    {ExportFormat::megatron, "megatron"}, {ExportFormat::nemo, "nemo"},
    {ExportFormat::calculon, "calculon"}, {ExportFormat::astra_sim, "astra-sim"},
    {ExportFormat::drawio, "drawio"},
};

/// Reads `path` into `text`; on failure adds the error and returns false.
bool readInput(const std::string& path, std::string& text, Diagnostics& diagnostics) {
    const std::string problem = readFileBounded(path, text);
    if (problem.empty())
        return true;
    Diagnostic d;
    d.file = path;
    d.message = "cannot read file: " + problem;
    diagnostics.push_back(std::move(d));
    return false;
}

Diagnostic usage(const std::string& message) {
    Diagnostic d;
    d.message = message;
    return d;
}

std::string lines(const std::vector<std::string>& items, const char* indent = "  ") {
    std::string text;
    for (const std::string& item : items)
        text += indent + item + "\n";
    return text;
}

ImportOutcome importMegatron(const ImportRequest& r) {
    ImportOutcome out;
    std::string text;
    if (!readInput(r.paths.front(), text, out.diagnostics))
        return out;
    MegatronImportOptions o;
    o.file_label = r.paths.front();
    o.base_dir = r.base_dir;
    o.base = r.base;
    o.gpu_preset = r.gpu_preset;
    o.nodes = r.nodes;
    o.vars = r.vars;
    o.overrides = r.overrides;
    MegatronImport result = importMegatronArgs(text, o);
    out.scenario = std::move(result.scenario);
    out.diagnostics = std::move(result.diagnostics);
    out.unresolved_variables = std::move(result.unresolved_variables);
    out.summary = "Imported " + r.paths.front() + "\n" + describeImport(result);
    return out;
}

ImportOutcome importNode(const ImportRequest& r) {
    ImportOutcome out;
    std::string text;
    if (!readInput(r.paths.front(), text, out.diagnostics))
        return out;
    const NodeParse parsed = r.format == ImportFormat::nccl_topo
                                 ? parseNcclTopo(text, r.paths.front())
                                 : parseNvidiaSmiTopo(text, r.paths.front());
    out.diagnostics = parsed.diagnostics;
    if (!parsed.node)
        return out;
    NodeImportOptions o;
    o.file_label = r.paths.front();
    o.base_dir = r.base_dir;
    o.base = r.base;
    o.nodes = r.nodes;
    o.nic_preset = r.nic_preset;
    o.overrides = r.overrides;
    NodeImport result = applyNodeDescription(*parsed.node, o);
    out.scenario = std::move(result.scenario);
    out.diagnostics.insert(out.diagnostics.end(), result.diagnostics.begin(),
                           result.diagnostics.end());
    out.summary = describeNode(*parsed.node) + "Cluster fields:\n" + lines(result.changes);
    return out;
}

ImportOutcome importCalculonFiles(const ImportRequest& r) {
    ImportOutcome out;
    std::vector<std::string> paths = r.paths;
    if (paths.size() == 1) {
        const fs::path dir = paths.front();
        paths = {(dir / "model.json").string(), (dir / "execution.json").string(),
                 (dir / "system.json").string()};
    }
    if (paths.size() != 3) {
        out.diagnostics.push_back(usage("Calculon needs a directory of model.json, "
                                        "execution.json and system.json, or the three files"));
        return out;
    }
    std::string texts[3];
    for (std::size_t i = 0; i < 3; ++i)
        if (!readInput(paths[i], texts[i], out.diagnostics))
            return out;
    CalculonImportOptions o;
    o.model_label = paths[0];
    o.execution_label = paths[1];
    o.system_label = paths[2];
    o.base_dir = r.base_dir;
    o.base = r.base;
    o.overrides = r.overrides;
    CalculonImport result = importCalculon(texts[0], texts[1], texts[2], o);
    out.scenario = std::move(result.scenario);
    out.diagnostics = std::move(result.diagnostics);
    out.summary = "Imported Calculon's " + paths[0] + ", " + paths[1] + ", " + paths[2] + "\n" +
                  lines(result.notes);
    return out;
}

ImportOutcome importMegatronTpeLogs(const ImportRequest& r) {
    ImportOutcome out;
    MegatronTpeOptions o;
    o.iteration = r.iteration;
    MegatronTpeImport result = importMegatronTpe(r.paths, r.base, o);
    out.diagnostics = std::move(result.diagnostics);
    out.summary =
        "Megatron-Core tokens-per-expert logs for " + r.base.name + "\n" + lines(result.notes);
    if (result.ok())
        out.routing_csv = std::move(result.csv);
    return out;
}

} // namespace

const char* toString(ImportFormat format) {
    for (const auto& [f, name] : kImportNames)
        if (f == format)
            return name;
    return "?";
}

const char* toString(ExportFormat format) {
    for (const auto& [f, name] : kExportNames)
        if (f == format)
            return name;
    return "?";
}

std::optional<ImportFormat> parseImportFormat(const std::string& name) {
    for (const auto& [f, n] : kImportNames)
        if (name == n)
            return f;
    return std::nullopt;
}

std::optional<ExportFormat> parseExportFormat(const std::string& name) {
    for (const auto& [f, n] : kExportNames)
        if (name == n)
            return f;
    return std::nullopt;
}

ImportOutcome importFiles(const ImportRequest& request) {
    if (request.paths.empty()) {
        ImportOutcome out;
        out.diagnostics.push_back(usage("no input file"));
        return out;
    }
    switch (request.format) {
    case ImportFormat::megatron:
        return importMegatron(request);
    case ImportFormat::nvidia_smi_topo:
    case ImportFormat::nccl_topo:
        return importNode(request);
    case ImportFormat::calculon:
        return importCalculonFiles(request);
    case ImportFormat::megatron_tpe:
        return importMegatronTpeLogs(request);
    }
    return {};
}

ExportOutcome exportScenario(ExportFormat format, const Scenario& s) {
    ExportOutcome out;
    switch (format) {
    case ExportFormat::megatron:
        out.files = {{"", exportMegatronArgs(s)}};
        out.summary = "the Megatron-Core arguments of " + s.name +
                      " (fields Megatron has no argument for as # moe-plan: annotations)\n";
        break;
    case ExportFormat::nemo:
        out.files = {{"", exportNemoRecipe(s)}};
        out.summary = "a NeMo 2.0 recipe for " + s.name + "\n";
        break;
    case ExportFormat::drawio:
        out.files = {{"", exportDrawio(s)}};
        out.summary = "the draw.io diagram of " + s.name + "'s " +
                      std::to_string(s.cluster.gpuCount()) + " GPUs\n";
        break;
    case ExportFormat::calculon: {
        CalculonExport e = exportCalculon(s);
        out.diagnostics = std::move(e.diagnostics);
        if (!e.files)
            break;
        out.directory = true;
        out.files = {{"model.json", e.files->model_json},
                     {"execution.json", e.files->execution_json},
                     {"system.json", e.files->system_json}};
        out.summary = "Calculon's model.json, execution.json and system.json for " + s.name +
                      " (run: calculon llm model.json execution.json system.json out.json)\n"
                      "What Calculon cannot express:\n" +
                      lines(e.files->notes);
        break;
    }
    case ExportFormat::astra_sim: {
        AstraSimExport e = exportAstraSim(s);
        out.diagnostics = std::move(e.diagnostics);
        if (!e.files)
            break;
        out.directory = true;
        out.files = {{"network.yml", e.files->network_yaml},
                     {"system.json", e.files->system_json},
                     {"remote_memory.json", e.files->remote_memory_json}};
        out.summary = "ASTRA-sim's network.yml, system.json and remote_memory.json for " + s.name +
                      " (run: AstraSim_Analytical_Congestion_Aware --workload-configuration=TRACES "
                      "--system-configuration=system.json --remote-memory-configuration="
                      "remote_memory.json --network-configuration=network.yml)\nWhat ASTRA-sim's "
                      "inputs do not carry:\n" +
                      lines(e.files->notes);
        break;
    }
    }
    return out;
}

std::string writeExport(const ExportOutcome& outcome, const std::string& path) {
    if (!outcome.directory) {
        if (outcome.files.size() != 1)
            return "nothing to write";
        const std::string problem = writeFileAtomically(path, outcome.files.front().text);
        return problem.empty() ? std::string() : "cannot write " + path + ": " + problem;
    }
    std::error_code ec;
    fs::create_directories(path, ec);
    if (ec)
        return "cannot create " + path + ": " + ec.message();
    for (const ExportedFile& f : outcome.files) {
        const std::string file = (fs::path(path) / f.name).string();
        const std::string problem = writeFileAtomically(file, f.text);
        if (!problem.empty())
            return "cannot write " + file + ": " + problem;
    }
    return {};
}

} // namespace moe::io
