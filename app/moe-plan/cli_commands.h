#pragma once
// moe-plan's commands are CLI11 subcommands; each module adds its own with what runs it. The
// help, the usage in errors, the manual page, docs/cli.md and the shell completion all come
// from these definitions (app/common/cli_format.h).

#include "command_io.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace moe::cli {

/// Runs a parsed command; returns the exit status.
using Runner = std::function<int(CommandIo&)>;

class CommandTable {
public:
    /// Adds command `name` below `parent`, run by `run` when the parse selects it.
    CLI::App* add(CLI::App& parent, const std::string& name, const std::string& description,
                  Runner run);
    /// Adds a group of commands ("import"), which runs nothing itself.
    CLI::App* addGroup(CLI::App& parent, const std::string& name, const std::string& description);
    /// The runner of a command; nullptr for a group.
    const Runner* runnerOf(const CLI::App* command) const;

private:
    std::vector<std::pair<const CLI::App*, Runner>> runners_;
};

/// [FILE]: a scenario file, '-' for standard input, the built-in default when omitted.
CLI::Option* addScenarioArgument(CLI::App* command, std::string& file);
/// --set key=value ... : what-if overrides with the file's own validation (`name` gives another
/// option the same parsing, e.g. compare's --set-b).
CLI::Option* addSetOption(CLI::App* command, std::vector<std::string>& overrides,
                          const std::string& description = "", const std::string& name = "--set");
/// --json: the result as JSON on standard output (and problems as JSON on standard error).
CLI::Option* addJsonFlag(CLI::App* command, bool& json, const std::string& what);

/// Accepts whole numbers from `min` to `max` ("--top needs a whole number of at least 1, got
/// 'x'").
CLI::Validator wholeNumber(int64_t min, int64_t max = std::numeric_limits<int64_t>::max());

void addScenarioCommands(CLI::App& app, CommandTable& table); ///< evaluate ... timeline, edit
void addSearchCommand(CLI::App& app, CommandTable& table);
void addSweepCommand(CLI::App& app, CommandTable& table);
void addSchemaCommand(CLI::App& app, CommandTable& table); ///< the scenario format
void addImportExportCommands(CLI::App& app, CommandTable& table);
void addCalibrateCommand(CLI::App& app, CommandTable& table); ///< published reference runs

} // namespace moe::cli
