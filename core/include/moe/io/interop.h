#pragma once
// One entry point for every import and export format, shared by `moe-plan import/export` and
// the desktop app's File > Import… / Export…: read the files, call the format's module, say in
// words what was mapped and what the peer cannot express, write the output atomically.

#include "moe/diagnostics.h"
#include "moe/scenario.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace moe::io {

enum class ImportFormat { megatron, nvidia_smi_topo, nccl_topo, calculon, megatron_tpe };
enum class ExportFormat { megatron, nemo, calculon, astra_sim, drawio };

/// "megatron", "nvidia-smi-topo", "nccl-topo", "calculon", "megatron-tpe".
const char* toString(ImportFormat format);
/// "megatron", "nemo", "calculon", "astra-sim", "drawio".
const char* toString(ExportFormat format);
std::optional<ImportFormat> parseImportFormat(const std::string& name);
std::optional<ExportFormat> parseExportFormat(const std::string& name);

struct ImportRequest {
    ImportFormat format = ImportFormat::megatron;
    /// The input: one file; for Calculon a directory or model, execution and system files; for
    /// megatron-tpe directories of rank logs or the rankN.jsonl files.
    std::vector<std::string> paths;
    Scenario base;              ///< the scenario the import starts from (cluster, routing, ...)
    std::string base_dir = "."; ///< resolves the base's relative paths
    std::string gpu_preset;     ///< megatron: the cluster is this preset instead of the base's
    int nodes = 0;              ///< megatron with gpu_preset, topology imports: node count
    std::string nic_preset;     ///< topology imports: the NIC when the dump has no speed
    std::map<std::string, std::string> vars; ///< megatron: shell variables (--var)
    std::vector<std::string> overrides;      ///< --set key=value, applied last
    std::optional<int64_t> iteration;        ///< megatron-tpe: only this logged iteration
};

struct ImportOutcome {
    std::optional<Scenario> scenario; ///< set only when the result is valid
    /// megatron-tpe: the routing CSV the logs sum to (its result instead of a scenario; the
    /// base scenario gives the layout they were written with).
    std::optional<std::string> routing_csv;
    Diagnostics diagnostics; ///< with file and line
    std::string summary;     ///< what was read and mapped, in words
    /// megatron: shell variables a mapped flag needs that neither the file nor vars set.
    std::vector<std::string> unresolved_variables;
};

ImportOutcome importFiles(const ImportRequest& request);

struct ExportedFile {
    std::string name; ///< inside the output directory; empty for a single-file format
    std::string text;
};

struct ExportOutcome {
    std::vector<ExportedFile> files; ///< empty when the scenario cannot be exported
    bool directory = false;          ///< the output path is a directory of files
    Diagnostics diagnostics;
    std::string summary; ///< what was written and what the peer cannot express
};

ExportOutcome exportScenario(ExportFormat format, const Scenario& scenario);

/// Writes the outcome to `path` (a file, or a directory created when missing), each file
/// atomically. Returns "" or the reason.
std::string writeExport(const ExportOutcome& outcome, const std::string& path);

} // namespace moe::io
