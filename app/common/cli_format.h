#pragma once
// One definition of a CLI11 program's commands gives its help, its usage lines in errors, the
// manual page (help2man reads --help-all), docs/cli.md (checked against --help by a test) and its
// shell completion. Shared by moe-plan and moe-live.

#include "completion.h"
#include "version.h"

#include <CLI/CLI.hpp>

#include <string>

namespace moe::cmdline {

/// "evaluate [FILE] [--set key=value ...] [--json]": the command's path below the program, its
/// positionals, then its options in definition order (help, version and hidden ones left out).
/// Repeatable options end in " ...", optional ones are bracketed.
std::string synopsis(const CLI::App& app);

/// "moe-plan evaluate": the program and the command path.
std::string commandPath(const CLI::App& app);

/// The help of a program or command: usage, description, arguments, options, footer.
/// `commands` lists every runnable command's synopsis (for the program's own help).
std::string helpText(const CLI::App& app);

/// The usage line and where to read more, for the end of an error message.
std::string usageHint(const CLI::App& app);

/// A CLI11 parse error in the words of this project's other messages ("--set needs a value").
std::string describeParseError(const CLI::ParseError& error);

/// The problem with arguments CLI11 left over (allow_extras is on so this can name them):
/// "unknown option '--frob'" or "unexpected argument 'x'"; empty when none are left.
std::string leftoverProblem(const CLI::App& app);

/// The deepest command the parse selected (the program itself when none).
const CLI::App& selectedCommand(const CLI::App& app);

/// Every command that runs something (the leaves of the tree), depth first.
std::vector<const CLI::App*> leafCommands(const CLI::App& app);

/// The completion model of a CLI11 program.
CompletionSpec completionSpec(const CLI::App& app);

/// Accepts one of `choices` ("--format needs one of jsonl, csv, got 'x'").
CLI::Validator oneOf(std::vector<std::string> choices);

/// Wraps `text` (paragraphs kept) to `width` columns with `indent` before each line.
std::string wrap(const std::string& text, int indent, int width = 100);

} // namespace moe::cmdline
