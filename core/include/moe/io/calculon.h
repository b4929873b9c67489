#pragma once
// Calculon (github.com/calculon-ai/calculon, Isaev et al., SC'23): its application (model),
// execution and system JSON, both ways, so `calculon llm model.json execution.json system.json
// out.json` can cross-check a plan.
//
// Calculon models a dense transformer with a 2-matrix MLP and multi-head or multi-query
// attention on TP x PP x DP over a two-tier network. What it cannot express is written into
// `notes`: MoE routing (experts become one dense MLP of the FLOPs a token sees), expert and
// context parallelism, GQA and MLA, the vocabulary and output head, DualPipe, per-precision
// numerics.

#include "moe/diagnostics.h"
#include "moe/scenario.h"

#include <optional>
#include <string>
#include <vector>

namespace moe::io {

struct CalculonFiles {
    std::string model_json; ///< Calculon's "application"
    std::string execution_json;
    std::string system_json;
    std::vector<std::string> notes; ///< what Calculon cannot express, in words
};

/// The three JSON files for `scenario`. A scenario Calculon cannot take at all (FP32 weights:
/// the scenario has no FP32 TFLOPS figure) gives an error.
struct CalculonExport {
    std::optional<CalculonFiles> files;
    Diagnostics diagnostics;
};
CalculonExport exportCalculon(const Scenario& scenario);

struct CalculonImportOptions {
    std::string model_label = "model.json";
    std::string execution_label = "execution.json";
    std::string system_label = "system.json";
    std::string base_dir = ".";
    Scenario base; ///< vocabulary, routing, economics, NICs per node come from here
    std::vector<std::string> overrides;
};

struct CalculonImport {
    std::optional<Scenario> scenario;
    Diagnostics diagnostics;
    std::vector<std::string> notes;
};

/// A dense scenario from Calculon's three files (JSON parsed with nlohmann-json): missing keys,
/// wrong types and values Calculon itself refuses are errors naming the file, line and key.
CalculonImport importCalculon(const std::string& model_json, const std::string& execution_json,
                              const std::string& system_json, const CalculonImportOptions& options);

} // namespace moe::io
