#pragma once
// Megatron-LM / Megatron-Core training arguments, both ways.
//
// Import reads a file that holds a Megatron command line or a launch script (argument arrays
// `MODEL_ARGS=( ... )`, strings `ARGS=" ... "`, line continuations, comments, shell variables
// set in the script) or a Megatron-MoE-ModelZoo style YAML of `--flag: value` lines, and maps
// every flag the scenario can describe onto it. Each flag is reported as mapped, recognized but
// not modelled yet, recognized without effect on the estimate, or unknown; nothing is silently
// dropped. Export writes the matching argument block (or a NeMo 2.0 recipe snippet) so a search
// winner can be launched; what Megatron cannot express is written as `# moe-plan: key=value`
// annotations that import reads back, so export then import gives the same scenario.

#include "moe/diagnostics.h"
#include "moe/scenario.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace moe::io {

/// One flag as written: "--num-layers 61" (also "--num-layers=61" and "--num-layers: 61").
struct MegatronFlag {
    std::string name;                    ///< "--num-layers"
    std::vector<std::string> values;     ///< the words after it on its logical line, expanded
    std::vector<std::string> unresolved; ///< shell variables its values use that are not set
    int line = 0;                        ///< 1-based line of the flag
    bool yaml_form = false;              ///< written "--flag: value" (a boolean may say false)
};

/// A `# moe-plan: key=value` line (a scenario field Megatron has no argument for).
struct MegatronAnnotation {
    std::string assignment; ///< "layout.schedule=dualpipe"
    int line = 0;
};

struct MegatronArgs {
    std::vector<MegatronFlag> flags; ///< in file order
    std::vector<MegatronAnnotation> annotations;
};

/// Reads the flags of `text`. `vars` set shell variables (they win over the script's own
/// assignments, as an environment would over `${X:-default}`). Flags are read where they are
/// written (array bodies, flag strings, command lines), not where the arrays are used, and
/// conditional blocks are not evaluated: every flag in the file counts.
MegatronArgs readMegatronArgs(const std::string& text,
                              const std::map<std::string, std::string>& vars = {});

/// What became of a flag.
enum class FlagStatus {
    mapped,       ///< sets scenario fields (or matches an assumption of the model)
    not_modelled, ///< changes performance or memory, but the scenario cannot express it yet
    no_effect, ///< hyperparameters, data, logging, checkpoints, launcher: no effect on the estimate
    unknown,   ///< not a flag this importer knows
};
const char* toString(FlagStatus status);

struct FlagReport {
    std::string flag;  ///< "--num-layers"
    std::string value; ///< values joined by spaces ("" for a switch)
    int line = 0;
    FlagStatus status = FlagStatus::unknown;
    std::string note; ///< mapped: the fields it sets; not_modelled: what the scenario lacks
};

struct MegatronImportOptions {
    std::string file_label = "<arguments>"; ///< names the file in messages
    std::string base_dir = ".";             ///< resolves the base scenario's relative paths
    /// The cluster, routing, economics and optimizer of the result come from this scenario; the
    /// model, training batch and layout come from the arguments.
    Scenario base;
    /// Non-empty: the cluster is this GPU preset with its catalog node shape instead of the
    /// base's cluster, with `nodes` nodes (0 = torchrun's --nnodes from the arguments).
    std::string gpu_preset;
    int nodes = 0;
    std::map<std::string, std::string> vars; ///< --var NAME=VALUE
    std::vector<std::string> overrides;      ///< --set key=value, applied last
};

struct MegatronImport {
    std::optional<Scenario> scenario; ///< set only when the result is a valid scenario
    Diagnostics diagnostics;          ///< errors point at the flag's line in the file
    std::vector<FlagReport> flags;    ///< every flag, in file order
    /// Fields the arguments did not set, with their value and where it came from.
    std::vector<std::string> defaults;
    std::vector<std::string> annotations; ///< `# moe-plan:` assignments applied
    /// Shell variables a mapped flag uses that neither the file nor `vars` set.
    std::vector<std::string> unresolved_variables;
    bool ok() const { return scenario.has_value(); }
};

MegatronImport importMegatronArgs(const std::string& text, const MegatronImportOptions& options);

/// The import in words: flags by status (mapped with their fields, not-modelled and unknown ones
/// each with its line), defaults and annotations.
std::string describeImport(const MegatronImport& result);

/// The Megatron-Core argument arrays for `scenario` (bash), with `# moe-plan:` annotations for
/// the fields Megatron cannot express.
std::string exportMegatronArgs(const Scenario& scenario);

/// A NeMo 2.0 recipe snippet (Python, nemo_run) with the same model, parallelism and batch.
std::string exportNemoRecipe(const Scenario& scenario);

} // namespace moe::io
