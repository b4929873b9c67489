#pragma once
// Scenario arguments and output paths: a file, '-' for standard input or output, or (for an
// optional scenario) the built-in default. Standard input is read with the same 16 MB bound as
// files (limits::kMaxInputFileBytes) and refused beyond it.

#include "command_io.h"

#include "moe/scenario.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace moe::cli {

/// The text of a scenario argument, where it came from and where its relative paths start.
struct ScenarioText {
    std::string text;
    std::string label;    ///< the file name, "<stdin>" or "<built-in default>"
    std::string base_dir; ///< resolves a relative routing.histogram_csv
};

/// Reads `path` ('-' = standard input, read once and kept for a second '-'; "" = the built-in
/// default). Returns the reason on failure.
std::string readScenarioText(const std::string& path, ScenarioText& into);

/// Loads a scenario argument with --set overrides; problems are reported through `io`.
/// `own_overrides` (compare's --set-b) are applied after `overrides`, so they win, and their
/// problems name `own_label` instead of "--set".
std::optional<Scenario> loadScenarioArg(const std::string& path,
                                        const std::vector<std::string>& overrides, CommandIo& io,
                                        const std::vector<std::string>& own_overrides = {},
                                        const std::string& own_label = "--set");

/// Writes `text` to `path` atomically, or to standard output for '-'. Returns the reason on
/// failure.
std::string writeOutput(const std::string& path, std::string_view text, std::ostream& out);

/// The folder of a path ("." for a bare name or '-').
std::string directoryOf(const std::string& path);

} // namespace moe::cli
