#pragma once
// Field-by-field access to a scenario by dotted path ("layout.ep"), for editors and what-ifs.
// Every field of the documented format has one row in scenarioFields() with its unit, range,
// choices and a tooltip, so an editor can be generated from the table instead of hand-written.
// setScenarioField applies a value with exactly the semantics of `--set`: the scenario is
// written as YAML, the override applied to that text and the result loaded and validated, so an
// edit is accepted if and only if a file with that value would load.

#include "moe/diagnostics.h"
#include "moe/scenario.h"

#include <optional>
#include <string>
#include <vector>

namespace moe {

enum class FieldKind {
    integer, ///< whole number
    number,  ///< real number
    text,    ///< free text (choices, if any, are suggestions)
    choice,  ///< one of `choices`
    list,    ///< a YAML list in flow style (layout.expert_placement)
};

struct FieldInfo {
    std::string path;  ///< dotted path as in the file and in --set: "cluster.scale_up.domain"
    std::string group; ///< top-level section: "scenario", "cluster", "model", "training", ...
    std::string key;   ///< path inside the group: "scale_up.domain"
    FieldKind kind = FieldKind::text;
    std::string unit; ///< "GB/s per GPU per direction"; empty when unitless
    std::optional<double> min;
    std::optional<double> max;
    double step = 1;  ///< spin-box step for numbers
    int decimals = 0; ///< digits shown for numbers
    bool required = false;
    /// Allowed values for `choice`; suggestions for `text` (layout.order).
    std::vector<std::string> choices;
    std::string tooltip; ///< one or two sentences: meaning and default
};

/// Every field of the format, in file order (groups scenario, cluster, model, training,
/// layout, routing).
const std::vector<FieldInfo>& scenarioFields();
/// The row of `path`, or nullptr.
const FieldInfo* findScenarioField(const std::string& path);

/// The field's current value as it would be written in a file (numbers in their shortest exact
/// form, enums by name, lists in flow style); nullopt for an unknown path. Fields that follow a
/// preset (gpu_overrides.*, scale_up.*) give the resolved value.
std::optional<std::string> getScenarioField(const Scenario& scenario, const std::string& path);

struct FieldEditResult {
    std::optional<Scenario> scenario; ///< set only when the edited scenario is valid
    Diagnostics diagnostics;          ///< errors (nothing applied) and warnings
    bool ok() const { return scenario.has_value(); }
};

/// `scenario` with `path` set to `value` (text as typed; `text` fields are taken literally),
/// validated as a whole. Fields whose default depends on others follow them as they would in a
/// file that leaves them out (dp derived from the GPU count, kv_heads = heads, a new GPU preset's
/// node shape). `base_dir` resolves a relative routing histogram. Unknown paths and invalid
/// values give errors naming the field.
FieldEditResult setScenarioField(const Scenario& scenario, const std::string& path,
                                 const std::string& value, const std::string& base_dir = ".");

/// The value of cluster.rack_nodes after one node of `from_rack` moves into `to_rack`
/// (to_rack == rackCount() opens a new rack after the last): the resolved per-rack counts with
/// one node less in `from_rack` (dropped when it empties) and one more in `to_rack`, as flow YAML
/// ("[3, 5]"). Racks hold consecutive nodes, so which node of a rack moves does not matter: nodes
/// are alike. nullopt when the racks do not exist or are the same; capacity and the rack-wide
/// NVLink rule are left to setScenarioField, which explains a refusal.
std::optional<std::string> rackNodesAfterMove(const ClusterSpec& cluster, int from_rack,
                                              int to_rack);

} // namespace moe
