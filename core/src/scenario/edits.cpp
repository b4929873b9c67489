#include "moe/edits.h"

#include "field_access.h"
#include "moe/atomic_file.h"
#include "moe/catalog.h"
#include "moe/format.h"
#include "moe/routing_csv.h"
#include "moe/scenario_io.h"
#include "moe/schema.h"
#include "moe/validate.h"
#include "yaml_values.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <type_traits>
#include <utility>

namespace moe {

namespace {

std::string trimmed(const std::string& s) {
    const std::size_t begin = s.find_first_not_of(" \t\r\n");
    if (begin == std::string::npos)
        return {};
    const std::size_t end = s.find_last_not_of(" \t\r\n");
    return s.substr(begin, end - begin + 1);
}

FieldInfo infoOf(const SchemaField& f) {
    FieldInfo info;
    info.path = f.path;
    info.group = f.section;
    info.key = f.key;
    info.kind = f.kind;
    info.unit = f.unit;
    info.min = f.min();
    info.max = f.max();
    info.step = f.step;
    info.decimals = f.decimals;
    info.required = f.required;
    info.choices = f.choices;
    info.tooltip = f.help;
    return info;
}

} // namespace

const std::vector<FieldInfo>& scenarioFields() {
    static const std::vector<FieldInfo> fields = [] {
        std::vector<FieldInfo> out;
        for (const SchemaField& f : scenarioSchema().fields())
            out.push_back(infoOf(f));
        return out;
    }();
    return fields;
}

const FieldInfo* findScenarioField(const std::string& path) {
    const SchemaField* field = scenarioSchema().find(path);
    if (!field)
        return nullptr;
    return &scenarioFields()[static_cast<std::size_t>(field - scenarioSchema().fields().data())];
}

std::optional<std::string> getScenarioField(const Scenario& scenario, const std::string& path) {
    const SchemaField* field = scenarioSchema().find(path);
    if (!field)
        return std::nullopt;
    return fieldText(*field, scenario);
}

namespace {

Diagnostic editError(const std::string& field, std::string message) {
    Diagnostic d;
    d.field = field;
    d.message = std::move(message);
    return d;
}

/// "unknown field 'layout.epp' — did you mean 'layout.ep'?", as the loader says it: the first
/// key of `path` that its map does not have.
std::string unknownFieldMessage(const std::string& path) {
    const ScenarioSchema& schema = scenarioSchema();
    std::string parent;
    std::size_t start = 0;
    for (;;) {
        const std::size_t dot = path.find('.', start);
        const std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
        const std::string child = yaml::joinPath(parent, key);
        if (dot == std::string::npos || !schema.findSection(child)) {
            std::vector<std::string> known;
            for (const SchemaEntry& entry : schema.children(parent))
                known.push_back(entry.key);
            const std::string guess = yaml::closestName(key, known);
            return "unknown field '" + child + "' — " +
                   (guess.empty() ? "expected one of: " + yaml::joinNames(known, ", ")
                                  : "did you mean '" + yaml::joinPath(parent, guess) + "'?");
        }
        parent = child;
        start = dot + 1;
    }
}

/// routing.histogram as loading the file would leave it: read from routing.histogram_csv
/// (relative to `base_dir`) with model: histogram, empty otherwise.
void reloadHistogram(Scenario& s, const std::string& base_dir, Diagnostics& diagnostics) {
    s.routing.histogram.clear();
    if (s.routing.model != PopularityModel::histogram || s.routing.histogram_csv.empty())
        return;
    const std::string shown =
        (std::filesystem::path(base_dir) / s.routing.histogram_csv).lexically_normal().string();
    std::string text;
    if (const std::string problem = readFileBounded(shown, text); !problem.empty()) {
        diagnostics.push_back(
            editError("routing.histogram_csv",
                      "cannot read routing histogram " + yaml::shortQuote(shown) + ": " + problem));
        return;
    }
    RoutingHistogramCsv csv = parseRoutingHistogramCsv(text, shown);
    diagnostics.insert(diagnostics.end(), csv.diagnostics.begin(), csv.diagnostics.end());
    s.routing.histogram = std::move(csv.rows);
}

/// The value typed as text, read as the field's type (the loader's strict readers).
std::optional<FieldValue> parseTyped(const SchemaField& field, const std::string& typed,
                                     Diagnostics& diagnostics) {
    // Free text is taken literally ("a: b", "# x" and "yes" stay text); the rank order and the
    // presets are names.
    if (field.kind == FieldKind::text && field.path != "layout.order")
        return FieldValue(typed);
    const std::string value = trimmed(typed);
    if (value.empty()) {
        diagnostics.push_back(editError(field.path, field.path + ": a value is needed"));
        return std::nullopt;
    }
    YAML::Node node;
    try {
        node = YAML::Load(value);
    } catch (const YAML::Exception& e) {
        diagnostics.push_back(
            editError(field.path, field.path + ": the value is not valid YAML: " + e.msg));
        return std::nullopt;
    }
    yaml::DiagnosticSink sink;
    std::optional<FieldValue> parsed = field.access->parse(sink, node, field.path);
    diagnostics.insert(diagnostics.end(), sink.diagnostics.begin(), sink.diagnostics.end());
    return parsed;
}

} // namespace

FieldEditResult setField(const Scenario& scenario, const std::string& path, const FieldValue& value,
                         const std::string& base_dir) {
    return setFields(scenario, {FieldAssignment{path, value}}, base_dir);
}

FieldEditResult setFields(const Scenario& scenario, const std::vector<FieldAssignment>& assignments,
                          const std::string& base_dir) {
    FieldEditResult result;
    std::vector<const SchemaField*> assigned;
    Scenario next = scenario;
    for (const FieldAssignment& assignment : assignments) {
        const SchemaField* field = scenarioSchema().find(assignment.path);
        if (!field) {
            result.diagnostics.push_back(
                editError(assignment.path, unknownFieldMessage(assignment.path)));
            return result;
        }
        if (std::string problem = field->access->assign(next, assignment.value, assignment.path);
            !problem.empty()) {
            result.diagnostics.push_back(editError(assignment.path, std::move(problem)));
            return result;
        }
        assigned.push_back(field);
    }
    const auto isAssigned = [&](const SchemaField& field) {
        return std::find(assigned.begin(), assigned.end(), &field) != assigned.end();
    };
    const auto assignsUnder = [&](const std::string& prefix) {
        return std::any_of(assigned.begin(), assigned.end(),
                           [&](const SchemaField* f) { return f->path.starts_with(prefix); });
    };
    // Every other field that had its default (a file would leave it out) follows the new
    // default, and every other field keeps its value: exactly what writing the scenario, setting
    // these keys and loading it again would give.
    const Scenario before = baselineFor(scenario);
    std::vector<const SchemaField*> following;
    for (const SchemaField& other : scenarioSchema().fields()) {
        if (isAssigned(other))
            continue;
        if (other.access->equal(scenario, before))
            following.push_back(&other);
        else
            other.access->copy(scenario, next);
    }
    // Defaults depend on fields that may follow defaults themselves (nics_per_node on
    // gpus_per_node on the preset): a chain is at most this deep.
    constexpr int kDefaultChainDepth = 3;
    for (int pass = 0; pass < kDefaultChainDepth; ++pass) {
        const Scenario after = baselineFor(next);
        for (const SchemaField* other : following)
            other->access->copy(after, next);
    }
    if (scenario.layout.dp == before.layout.dp && !derivedDp(next) && !assignsUnder("layout.dp")) {
        const int64_t model_parallel = int64_t{next.layout.tp} * next.layout.cp * next.layout.pp;
        if (model_parallel > 0) {
            result.diagnostics.push_back(editError(
                "layout.dp",
                "layout.dp cannot be derived: tp*cp*pp = " + formatNumber(model_parallel) +
                    " does not divide the " +
                    formatNumber(int64_t{next.cluster.nodes} * next.cluster.gpus_per_node) +
                    " GPUs"));
            return result;
        }
        next.layout.dp = scenario.layout.dp; // the validator names the degree below 1
    }
    if (assignsUnder("model.mla.") && next.model.attention != AttentionKind::mla) {
        result.diagnostics.push_back(
            editError("model.mla", std::string("model.mla is set but model.attention is ") +
                                       toString(next.model.attention) +
                                       "; set attention: mla or remove mla"));
        return result;
    }
    if (assignsUnder("routing."))
        reloadHistogram(next, base_dir, result.diagnostics);
    if (hasErrors(result.diagnostics))
        return result;
    Diagnostics checks = validateScenario(next);
    const bool valid = !hasErrors(checks);
    result.diagnostics.insert(result.diagnostics.end(), checks.begin(), checks.end());
    if (valid)
        result.scenario = std::move(next);
    return result;
}

FieldEditResult setScenarioField(const Scenario& scenario, const std::string& path,
                                 const std::string& value, const std::string& base_dir) {
    const SchemaField* field = scenarioSchema().find(path);
    if (!field && path.find('[') != std::string::npos)
        return setFieldAsOverride(scenario, path, value, base_dir);
    FieldEditResult result;
    if (!field) {
        result.diagnostics.push_back(editError(path, unknownFieldMessage(path)));
        return result;
    }
    const std::optional<FieldValue> typed = parseTyped(*field, value, result.diagnostics);
    if (!typed)
        return result;
    return setField(scenario, path, *typed, base_dir);
}

FieldEditResult setFieldAsOverride(const Scenario& scenario, const std::string& path,
                                   const std::string& value, const std::string& base_dir) {
    const std::string written = trimmed(value);
    FieldEditResult result;
    if (written.empty()) {
        result.diagnostics.push_back(editError(path, path + ": a value is needed"));
        return result;
    }
    LoadResult loaded =
        loadScenarioTextWithOverrides(toYaml(scenario), "", base_dir, {path + "=" + written});
    // Lines and columns point into the generated text, which the user never sees.
    for (Diagnostic& d : loaded.diagnostics) {
        d.file.clear();
        d.line = 0;
        d.column = 0;
    }
    result.scenario = std::move(loaded.scenario);
    result.diagnostics = std::move(loaded.diagnostics);
    return result;
}

std::optional<std::vector<int>> rackNodesAfterMove(const ClusterSpec& cluster, int from_rack,
                                                   int to_rack) {
    std::vector<int> racks = cluster.nodesInRacks();
    const int count = static_cast<int>(racks.size());
    if (from_rack < 0 || from_rack >= count || to_rack < 0 || to_rack > count ||
        from_rack == to_rack)
        return std::nullopt;
    if (to_rack == count)
        racks.push_back(0);
    ++racks[static_cast<std::size_t>(to_rack)];
    if (--racks[static_cast<std::size_t>(from_rack)] == 0)
        racks.erase(racks.begin() + from_rack);
    return racks;
}

FieldEditResult moveNodeBetweenRacks(const Scenario& scenario, int from_rack, int to_rack) {
    const std::optional<std::vector<int>> racks =
        rackNodesAfterMove(scenario.cluster, from_rack, to_rack);
    if (!racks) {
        FieldEditResult result;
        result.diagnostics.push_back(
            editError("cluster.rack_nodes", "no node moves from rack " + formatNumber(from_rack) +
                                                " to rack " + formatNumber(to_rack) +
                                                " (the same rack, or a rack that does not exist)"));
        return result;
    }
    return setField(scenario, "cluster.rack_nodes", FieldValue(*racks));
}

std::vector<std::vector<int>> expertRanks(const Scenario& scenario, int layer) {
    const int experts = std::max(0, scenario.model.experts);
    const int ep = std::max(1, scenario.layout.ep);
    std::vector<std::vector<int>> ranks(static_cast<std::size_t>(experts));
    for (int e = 0; e < experts; ++e)
        ranks[static_cast<std::size_t>(e)] = {e % ep};
    const auto applyEntriesOf = [&](int entry_layer) {
        for (const ExpertPlacement& p : scenario.layout.expert_placement) {
            if (p.layer != entry_layer || p.expert < 0 || p.expert >= experts)
                continue;
            std::vector<int> valid;
            for (int rank : p.ep_ranks)
                if (rank >= 0 && rank < ep)
                    valid.push_back(rank);
            if (!valid.empty())
                ranks[static_cast<std::size_t>(p.expert)] = std::move(valid);
        }
    };
    applyEntriesOf(-1);
    if (layer >= 0)
        applyEntriesOf(layer);
    return ranks;
}

std::vector<ExpertPlacement> expertPlacementWith(const Scenario& scenario, int layer, int expert,
                                                 std::vector<int> ep_ranks) {
    std::sort(ep_ranks.begin(), ep_ranks.end());
    ep_ranks.erase(std::unique(ep_ranks.begin(), ep_ranks.end()), ep_ranks.end());
    Scenario without = scenario;
    std::vector<ExpertPlacement>& entries = without.layout.expert_placement;
    std::erase_if(entries,
                  [&](const ExpertPlacement& p) { return p.expert == expert && p.layer == layer; });
    const std::vector<std::vector<int>> inherited = expertRanks(without, layer);
    if (expert >= 0 && static_cast<std::size_t>(expert) < inherited.size()) {
        std::vector<int> sorted_inherited = inherited[static_cast<std::size_t>(expert)];
        std::sort(sorted_inherited.begin(), sorted_inherited.end());
        if (sorted_inherited == ep_ranks)
            return entries;
    }
    ExpertPlacement entry;
    entry.layer = layer;
    entry.expert = expert;
    entry.ep_ranks = std::move(ep_ranks);
    entries.push_back(std::move(entry));
    return entries;
}

namespace {

/// Why a placement edit of `expert` in `layer` cannot apply, or empty.
std::string placementEditProblem(const Scenario& scenario, int layer, int expert) {
    if (scenario.model.experts <= 0)
        return "the model has no experts (model.experts = 0)";
    if (expert < 0 || expert >= scenario.model.experts)
        return "expert " + formatNumber(expert) +
               " does not exist (model.experts = " + formatNumber(scenario.model.experts) + ")";
    if (layer < -1 || layer >= scenario.model.moeLayers())
        return "MoE layer " + formatNumber(layer) + " does not exist (the model has " +
               formatNumber(scenario.model.moeLayers()) + " MoE layers)";
    return {};
}

FieldEditResult placementRefusal(std::string message) {
    FieldEditResult result;
    result.diagnostics.push_back(editError("layout.expert_placement", std::move(message)));
    return result;
}

} // namespace

FieldEditResult setExpertRanks(const Scenario& scenario, int layer, int expert,
                               std::vector<int> ep_ranks) {
    if (std::string problem = placementEditProblem(scenario, layer, expert); !problem.empty())
        return placementRefusal(std::move(problem));
    if (ep_ranks.empty())
        return placementRefusal("expert " + formatNumber(expert) + " needs at least one EP rank");
    return setField(scenario, "layout.expert_placement",
                    FieldValue(expertPlacementWith(scenario, layer, expert, std::move(ep_ranks))));
}

FieldEditResult moveExpert(const Scenario& scenario, int layer, int expert, int from_rank,
                           int to_rank) {
    if (std::string problem = placementEditProblem(scenario, layer, expert); !problem.empty())
        return placementRefusal(std::move(problem));
    std::vector<int> ranks = expertRanks(scenario, layer)[static_cast<std::size_t>(expert)];
    if (std::find(ranks.begin(), ranks.end(), from_rank) == ranks.end())
        return placementRefusal("expert " + formatNumber(expert) + " is not on EP rank " +
                                formatNumber(from_rank));
    if (std::find(ranks.begin(), ranks.end(), to_rank) != ranks.end())
        return placementRefusal("expert " + formatNumber(expert) + " is already on EP rank " +
                                formatNumber(to_rank));
    std::replace(ranks.begin(), ranks.end(), from_rank, to_rank);
    return setExpertRanks(scenario, layer, expert, std::move(ranks));
}

FieldEditResult scaledDataParallel(const Scenario& scenario, int gpus) {
    const ClusterSpec& c = scenario.cluster;
    const LayoutSpec& l = scenario.layout;
    const auto refuse = [](std::string field, std::string message) {
        FieldEditResult r;
        Diagnostic d;
        d.field = std::move(field);
        d.message = std::move(message);
        r.diagnostics.push_back(std::move(d));
        return r;
    };
    const int64_t model_parallel = int64_t{l.tp} * l.cp * l.pp;
    if (gpus <= 0 || c.gpus_per_node <= 0 || gpus % c.gpus_per_node != 0)
        return refuse("cluster.nodes", std::to_string(gpus) + " GPUs are not whole nodes of " +
                                           std::to_string(c.gpus_per_node));
    if (model_parallel <= 0 || gpus % model_parallel != 0 || l.dp <= 0)
        return refuse("layout.dp", std::to_string(gpus) +
                                       " GPUs are not a multiple of TP x CP x "
                                       "PP = " +
                                       std::to_string(model_parallel));
    if (!c.rack_nodes.empty())
        return refuse("cluster.rack_nodes", "racks laid out by hand do not scale");
    const int64_t dp = gpus / model_parallel;
    // Sequences per replica stay as they are, so every replica runs the same micro-batches.
    const int64_t per_replica = std::max<int64_t>(1, scenario.training.global_batch / l.dp);
    return setFields(scenario, {{"cluster.nodes", int64_t{gpus / c.gpus_per_node}},
                                {"layout.dp", dp},
                                {"training.global_batch", per_replica * dp}});
}

} // namespace moe
