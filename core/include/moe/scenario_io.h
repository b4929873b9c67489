#pragma once
// Scenario files (YAML): load with every problem reported by file, line, column and field;
// save atomically (temporary file, then rename) so a user's file is never half-written.

#include "moe/diagnostics.h"
#include "moe/scenario.h"
#include "moe/source_map.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace moe {

struct LoadResult {
    std::optional<Scenario> scenario; ///< set only when there are no errors
    Diagnostics diagnostics;
    SourceMap source;
    bool ok() const { return scenario.has_value(); }
};

/// Loads and fully validates a scenario file (syntax, fields, types, ranges, layout rules).
LoadResult loadScenarioFile(const std::string& path);

/// Same, from text; `file_label` names the source in messages, `base_dir` resolves relative
/// paths (routing histograms).
LoadResult loadScenarioText(const std::string& yaml, const std::string& file_label,
                            const std::string& base_dir = ".");

/// The scenario as YAML text in the documented format (presets plus only the fields that
/// differ from them).
std::string toYaml(const Scenario& scenario);

/// Writes `toYaml(scenario)` to a temporary file beside `path` and renames it over `path`.
/// Returns an empty string on success, else the reason.
std::string saveScenarioFile(const Scenario& scenario, const std::string& path);

/// The built-in default scenario (the 8x8 DGX H100, 16-expert textbook case).
const Scenario& defaultScenario();
/// YAML text of the built-in default scenario.
const char* defaultScenarioYaml();

/// A dotted field path as in --set ("layout.expert_placement[0].ep_ranks"): its keys, each with
/// the list index that follows it, and the path written back in canonical form. nullopt when
/// malformed (an empty key, a bad index).
struct FieldPath {
    std::vector<std::pair<std::string, std::optional<std::size_t>>> steps; ///< key, list index
    std::string dotted;
};
std::optional<FieldPath> parseFieldPath(const std::string& path);

/// Applies a "key=value" override such as "layout.ep=16" to YAML text before loading, so
/// overrides go through exactly the same validation as the file. Returns the diagnostics.
LoadResult loadScenarioWithOverrides(const std::string& path,
                                     const std::vector<std::string>& overrides);
/// Same, from text (e.g. the built-in default with --set overrides).
LoadResult loadScenarioTextWithOverrides(const std::string& yaml, const std::string& file_label,
                                         const std::string& base_dir,
                                         const std::vector<std::string>& overrides);

} // namespace moe
