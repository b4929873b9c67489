#pragma once
// Editing scenario files as text, so that saving keeps the file: comments, key order,
// formatting, explicit defaults and blank lines stay as the user wrote them, only the values that
// changed are rewritten, and a missing key is inserted under its section with the file's
// indentation. A save that changes nothing gives the same bytes. Backs `moe-plan edit`, Save and
// Save As in the desktop app, and `moe-plan search --write-best`.
//
// yaml-cpp keeps no comments, so the text is never re-emitted: each value's span is found from
// the parsed node's position (YAML::Mark) and only that span is replaced.

#include "moe/diagnostics.h"
#include "moe/scenario.h"

#include <string>
#include <vector>

namespace moe {

struct ScenarioTextEdit {
    std::string text;        ///< the edited text (the input when nothing could be applied)
    Diagnostics diagnostics; ///< errors about assignments that could not be applied
    bool ok() const { return !hasErrors(diagnostics); }
};

/// Applies "key=value" assignments ("layout.ep=16", "cluster.rack_nodes=[4, 4]") to YAML text:
/// the value (YAML, as after --set) replaces the written one in place, or is inserted under its
/// parent section when the key is missing. Paths may index lists ("layout.expert_placement[0]
/// .ep_ranks"). The result is not validated; load it to check it.
ScenarioTextEdit editScenarioText(const std::string& text,
                                  const std::vector<std::string>& assignments);

/// A scenario file's text with where it lives, so relative paths inside it can be resolved.
struct ScenarioSource {
    std::string text;
    std::string base_dir = "."; ///< directory of the file (relative paths resolve against it)
};

/// routing.histogram_csv as it must be written in a file in `to_dir` to name the same file as
/// `path` written in a file in `from_dir`: absolute paths and paths in a file that stays in its
/// directory are unchanged.
std::string rebaseRelativePath(const std::string& path, const std::string& from_dir,
                               const std::string& to_dir);

struct ScenarioTextResult {
    std::string text;
    /// True when the origin's text was edited (comments and layout kept); false when the
    /// scenario could not be expressed as edits of it and was written afresh by toYaml().
    bool preserved = false;
};

/// Text of a file in `to_dir` that loads to `target`: `origin` with only the changed values
/// rewritten (and relative paths rebased from origin.base_dir to `to_dir`), or toYaml(target)
/// when `origin` is empty or cannot express it.
ScenarioTextResult scenarioTextFor(const Scenario& target, const ScenarioSource& origin,
                                   const std::string& to_dir);

/// scenarioTextFor() written atomically to `path` (its directory is `to_dir`). Returns "" or the
/// reason.
std::string saveScenarioText(const Scenario& target, const ScenarioSource& origin,
                             const std::string& path);

} // namespace moe
