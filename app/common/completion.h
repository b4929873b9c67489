#pragma once
// Shell completion scripts (bash, zsh) generated from a program's own option definitions, so
// they cannot drift from what the program accepts. Qt-free and CLI11-free: moe-plan and
// moe-live describe themselves from CLI11, moe-planner from QCommandLineParser.

#include <string>
#include <vector>

namespace moe::cmdline {

/// What the word after an option (or a positional argument) is.
enum class ValueKind { none, any, file, directory };

struct CompletionOption {
    std::vector<std::string> names; ///< "-o", "--output"
    ValueKind value = ValueKind::none;
};

/// A program or one of its commands ("import megatron" is a command of "import").
struct CompletionSpec {
    std::string name;
    std::vector<CompletionOption> options;
    ValueKind positional = ValueKind::none; ///< what its free arguments are
    std::vector<CompletionSpec> commands;
};

/// The kind a value placeholder such as "OUT.yaml", "DIR" or "key=value" implies.
ValueKind valueKindOf(const std::string& placeholder);

/// A bash script defining the completion of `spec.name` (complete -F); needs only bash.
std::string bashCompletion(const CompletionSpec& spec);
/// A zsh completion function file (#compdef); needs only zsh's completion system.
std::string zshCompletion(const CompletionSpec& spec);

} // namespace moe::cmdline
