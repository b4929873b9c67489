#pragma once
// Field-by-field access to a scenario by dotted path ("layout.ep"), for editors and what-ifs.
// scenarioFields() is the editor's view of the schema table (schema.h): every field with its
// unit, range, choices and a tooltip, so an editor is generated from the table.
// Edits are typed operations (setField, moveNodeBetweenRacks) checked by the loader's rules:
// the value is read by its schema row (schema.h) and the edited scenario validated as a whole,
// so an edit is accepted if and only if a file with that value would load.

#include "moe/diagnostics.h"
#include "moe/scenario.h"
#include "moe/schema.h"

#include <optional>
#include <string>
#include <vector>

namespace moe {

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

/// `scenario` with the field at `path` set to `value` (typed: a whole number, a name, a list),
/// validated as a whole by the loader's rules (validate.h). Every other field that had its
/// default follows the new default as it would in a file that leaves it out (dp derived from
/// the GPU count, kv_heads = heads, a new GPU preset's figures and node shape); every field that
/// was set keeps its value. `base_dir` resolves a relative routing histogram. Unknown paths and
/// values of the wrong type give errors naming the field.
FieldEditResult setField(const Scenario& scenario, const std::string& path, const FieldValue& value,
                         const std::string& base_dir = ".");

/// One field and its typed value, for setFields.
struct FieldAssignment {
    std::string path;
    FieldValue value;
};

/// setField of several fields at once, validated together (fields only valid together, such as a
/// GPU preset with its node shape, change together); later assignments of a path win.
FieldEditResult setFields(const Scenario& scenario, const std::vector<FieldAssignment>& assignments,
                          const std::string& base_dir = ".");

/// setField with the value as typed: read by the field's type as the loader reads a file
/// (`text` fields are taken literally), so an edit is refused with the same message as the file.
/// Paths into list items ("layout.expert_placement[0].expert") go through setFieldAsOverride.
FieldEditResult setScenarioField(const Scenario& scenario, const std::string& path,
                                 const std::string& value, const std::string& base_dir = ".");

/// The `--set` path: the scenario written as YAML, the override applied to that text and the
/// result loaded. Only for what typed edits cannot address (an item inside a list).
FieldEditResult setFieldAsOverride(const Scenario& scenario, const std::string& path,
                                   const std::string& value, const std::string& base_dir = ".");

/// The same layout shape on `gpus` GPUs: more or fewer nodes of the same kind, TP, CP, PP, EP and
/// expert-TP kept, data parallelism (and with it the global batch, at the same sequences per
/// replica) scaled to fill them. What a scale benchmark compares across cluster sizes. Refused
/// with a reason when `gpus` is not whole nodes or not a multiple of TP x CP x PP, when the racks
/// are laid out by hand (cluster.rack_nodes), or when the scaled layout is invalid (EP larger
/// than the scaled DP allows, say).
FieldEditResult scaledDataParallel(const Scenario& scenario, int gpus);

/// The per-rack node counts (cluster.rack_nodes) after one node of `from_rack` moves into
/// `to_rack` (to_rack == rackCount() opens a new rack after the last): the resolved counts with
/// one node less in `from_rack` (dropped when it empties) and one more in `to_rack`. Racks hold
/// consecutive nodes, so which node of a rack moves does not matter: nodes are alike. nullopt
/// when the racks do not exist or are the same; capacity and the rack-wide NVLink rule are left
/// to the validator (moveNodeBetweenRacks explains a refusal).
std::optional<std::vector<int>> rackNodesAfterMove(const ClusterSpec& cluster, int from_rack,
                                                   int to_rack);

/// The typed edit of moving one node between racks: setField of cluster.rack_nodes.
FieldEditResult moveNodeBetweenRacks(const Scenario& scenario, int from_rack, int to_rack);

/// The EP ranks holding each expert in MoE layer `layer` (-1: the map of every layer without
/// entries of its own), as the placement builds them: round-robin (expert e on EP rank
/// e mod ep), then the layout.expert_placement entries for every layer (layer -1), then those for
/// `layer`. Ranks outside 0..ep-1 in an entry are ignored; an entry with none left changes nothing.
std::vector<std::vector<int>> expertRanks(const Scenario& scenario, int layer);

/// layout.expert_placement with expert `expert` of `layer` (-1: every MoE layer) on exactly
/// `ep_ranks` (sorted, duplicates dropped). An entry that only restates what the expert would get
/// without it is left out, so the file stays short and undoing a move by hand gives back the
/// original text.
std::vector<ExpertPlacement> expertPlacementWith(const Scenario& scenario, int layer, int expert,
                                                 std::vector<int> ep_ranks);

/// The typed edits of the placement grid: set the ranks of one expert, or move one of its copies
/// from `from_rank` to `to_rank`. Refused with a reason when the expert or ranks do not exist, the
/// expert is not on `from_rank`, or already on `to_rank`.
FieldEditResult setExpertRanks(const Scenario& scenario, int layer, int expert,
                               std::vector<int> ep_ranks);
FieldEditResult moveExpert(const Scenario& scenario, int layer, int expert, int from_rank,
                           int to_rank);

} // namespace moe
