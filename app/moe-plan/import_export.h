#pragma once
// moe-plan import / export: the bridges to Megatron-Core, nvidia-smi, NCCL, Calculon, ASTRA-sim
// and draw.io (core/include/moe/io/*). Kept apart from cli.cpp, which only dispatches here.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace moe::cli {

/// Runs `import ...` or `export ...` (args[0] is the command); nullopt for any other command.
std::optional<int> runImportExport(const std::vector<std::string>& args, std::ostream& out,
                                   std::ostream& err);

/// The synopsis lines of both commands for the tool's help.
std::string importExportSynopses();

/// `moe-plan help import|export` (or `import --help`); nullopt for another command.
std::optional<std::string> importExportHelp(const std::string& command);

} // namespace moe::cli
