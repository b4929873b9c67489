#include "moe/scenario_io.h"

#include "embedded.h"
#include "field_access.h"
#include "moe/atomic_file.h"
#include "moe/catalog.h"
#include "moe/format.h"
#include "moe/limits.h"
#include "moe/routing_csv.h"
#include "moe/schema.h"
#include "moe/text.h"
#include "moe/validate.h"
#include "yaml_values.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <span>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace moe {

namespace {

namespace fs = std::filesystem;

/// Diagnostics about command-line overrides name this instead of the scenario file.
constexpr const char* kOverrideSource = "--set";
// Small helpers

std::string trim(const std::string& s) {
    const std::size_t begin = s.find_first_not_of(" \t\r");
    if (begin == std::string::npos)
        return {};
    const std::size_t end = s.find_last_not_of(" \t\r");
    return s.substr(begin, end - begin + 1);
}

std::string readWholeFile(const std::string& path, std::string& text) {
    return readFileBounded(path, text);
}

std::string directoryOf(const std::string& path) {
    const fs::path parent = fs::path(path).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
}

// ---------------------------------------------------------------------------------------------
// The loader state: diagnostics, where every field was written, which fields went wrong

// ---------------------------------------------------------------------------------------------
// The loader state: diagnostics, where every field was written, which fields went wrong

class Loader : public yaml::ValueSink {
public:
    Loader(const std::string& file, std::string base_dir)
        : base_dir_(std::move(base_dir)) {
        source.file = file;
    }

    SourceMap source;
    Diagnostics diagnostics;

    const std::string& baseDir() const { return base_dir_; }

    void setRoot(const YAML::Node& root) {
        const YAML::Mark mark = root.Mark();
        root_location_ =
            mark.line >= 0 ? SourceLocation{mark.line + 1, mark.column + 1} : SourceLocation{};
    }

    void record(const std::string& field, const YAML::Mark& mark) override {
        // First occurrence wins, so a duplicate key does not move the field's location.
        source.fields.emplace(field, mark.line >= 0 ? SourceLocation{mark.line + 1, mark.column + 1}
                                                    : SourceLocation{});
    }
    bool present(const std::string& field) const { return source.fields.count(field) > 0; }

    void markOverridden(const std::string& field) { overridden_.push_back(field); }
    /// True when `field` was set by a --set override, so messages point at the override, not
    /// at a line of the file that no longer holds that value.
    bool isOverridden(const std::string& field) const {
        return std::any_of(overridden_.begin(), overridden_.end(),
                           [&](const std::string& path) { return isWithin(field, path); });
    }

    /// An error about the value `at` of `field` (its own position when it has one).
    void error(const std::string& field, const YAML::Node& at, std::string message) override {
        const YAML::Mark mark = at.Mark();
        const bool located = at.IsDefined() && !at.IsNull() && mark.line >= 0;
        add(Diagnostic::Severity::error, field,
            located ? SourceLocation{mark.line + 1, mark.column + 1} : source.find(field),
            std::move(message), /*created_by_override=*/at.IsDefined() && mark.line < 0);
    }
    /// A problem located at where `anchor` was written (or its nearest written parent).
    void reportAt(Diagnostic::Severity severity, const std::string& field,
                  const std::string& anchor, std::string message) {
        add(severity, field, anchor.empty() ? root_location_ : source.find(anchor),
            std::move(message));
    }
    void missing(const std::string& parent, const std::string& field,
                 const std::string& why) override {
        reportAt(Diagnostic::Severity::error, field, parent,
                 "missing required field '" + field + "'" + (why.empty() ? "" : " (" + why + ")"));
    }
    void overrideError(const std::string& field, std::string message) {
        Diagnostic d;
        d.file = kOverrideSource;
        d.field = field;
        d.message = std::move(message);
        diagnostics.push_back(std::move(d));
    }

    /// True when `field` or one of its parents could not be read, so rules that depend on it
    /// would only add noise.
    bool failed(const std::string& field) const {
        for (const std::string& bad : failed_) {
            if (isWithin(field, bad))
                return true;
        }
        return false;
    }
    bool anyFailed(std::initializer_list<const char*> fields) const {
        return std::any_of(fields.begin(), fields.end(),
                           [this](const char* field) { return failed(field); });
    }

private:
    static bool isWithin(const std::string& field, const std::string& parent) {
        if (!field.starts_with(parent))
            return false;
        return field.size() == parent.size() || field[parent.size()] == '.' ||
               field[parent.size()] == '[';
    }

    /// `created_by_override`: the node has no position in the file, so when an override path
    /// runs through `field` ("layout.x" for --set layout.x.y=1) the override made it.
    void add(Diagnostic::Severity severity, const std::string& field, SourceLocation location,
             std::string message, bool created_by_override = false) {
        Diagnostic d;
        d.severity = severity;
        d.field = field;
        d.message = std::move(message);
        const bool from_override =
            std::any_of(overridden_.begin(), overridden_.end(), [&](const std::string& path) {
                return isWithin(field, path) || (created_by_override && isWithin(path, field));
            });
        if (from_override) {
            d.file = kOverrideSource;
        } else {
            d.file = source.file;
            d.line = location.line;
            d.column = location.column;
        }
        if (severity == Diagnostic::Severity::error)
            failed_.insert(field);
        diagnostics.push_back(std::move(d));
    }

    std::string base_dir_;
    SourceLocation root_location_;
    std::vector<std::string> overridden_;
    std::set<std::string> failed_;
};

// ---------------------------------------------------------------------------------------------
// Reading and writing maps through the schema (schema.h): the table says which keys a map has,
// which are required and how each value is read and written.

void readMap(Loader& l, const YAML::Node& node, const std::string& path, Scenario& s) {
    if (!yaml::expectMap(l, node, path))
        return;
    const ScenarioSchema& schema = scenarioSchema();
    yaml::MapEntries entries(l, node, path);
    std::vector<std::string> known;
    for (const SchemaEntry& entry : schema.children(path)) {
        known.push_back(entry.key);
        const std::string child = yaml::joinPath(path, entry.key);
        const YAML::Node* value = entries.take(entry.key);
        const bool required = entry.field ? entry.field->required : entry.section->required;
        if (!value) {
            if (required)
                l.missing(path, child, "");
        } else if (entry.section) {
            readMap(l, *value, child, s);
        } else {
            entry.field->access->read(l, *value, child, s);
        }
    }
    entries.reportUnknown(known);
}

bool anyWritten(const std::string& path, const Scenario& value, const Scenario& base) {
    const std::vector<SchemaEntry>& entries = scenarioSchema().children(path);
    return std::any_of(entries.begin(), entries.end(), [&](const SchemaEntry& entry) {
        if (entry.section)
            return entry.section->required || anyWritten(entry.section->path, value, base);
        return entry.field->required || !entry.field->access->equal(value, base);
    });
}

/// Writes the fields that are required or differ from `base` (what loading would default to).
void emitMap(YAML::Emitter& out, const std::string& path, const Scenario& value,
             const Scenario& base) {
    out << YAML::BeginMap;
    for (const SchemaEntry& entry : scenarioSchema().children(path)) {
        if (entry.section) {
            if (entry.section->required || anyWritten(entry.section->path, value, base)) {
                out << YAML::Key << entry.key << YAML::Value;
                emitMap(out, entry.section->path, value, base);
            }
        } else if (entry.field->required || !entry.field->access->equal(value, base)) {
            out << YAML::Key << entry.key << YAML::Value;
            entry.field->access->emit(out, value);
        }
    }
    out << YAML::EndMap;
}

// ---------------------------------------------------------------------------------------------
// Defaults that depend on other fields, rules about which fields go together, the histogram

void deriveDp(Loader& l, Scenario& s) {
    if (l.present("layout.dp") ||
        l.anyFailed({"cluster.gpu", "cluster.nodes", "cluster.gpus_per_node", "layout.tp",
                     "layout.cp", "layout.pp"}))
        return;
    if (const std::optional<int> dp = derivedDp(s)) {
        s.layout.dp = *dp;
        return;
    }
    const int64_t model_parallel = static_cast<int64_t>(s.layout.tp) * s.layout.cp * s.layout.pp;
    if (model_parallel <= 0)
        return; // validation reports the degree that is below 1
    l.reportAt(Diagnostic::Severity::error, "layout.dp", "layout",
               "layout.dp cannot be derived: tp*cp*pp = " + formatNumber(model_parallel) +
                   " does not divide the " +
                   formatNumber(static_cast<int64_t>(s.cluster.nodes) * s.cluster.gpus_per_node) +
                   " GPUs");
}

void loadHistogram(Loader& l, Scenario& s) {
    const fs::path csv = fs::path(l.baseDir()) / s.routing.histogram_csv;
    const std::string shown = csv.lexically_normal().string();
    std::string text;
    const std::string problem = readWholeFile(shown, text);
    if (!problem.empty()) {
        l.reportAt(Diagnostic::Severity::error, "routing.histogram_csv", "routing.histogram_csv",
                   "cannot read routing histogram " + yaml::shortQuote(shown) + ": " + problem);
        return;
    }
    RoutingHistogramCsv csv_rows = parseRoutingHistogramCsv(text, shown);
    l.diagnostics.insert(l.diagnostics.end(), csv_rows.diagnostics.begin(),
                         csv_rows.diagnostics.end());
    s.routing.histogram = std::move(csv_rows.rows);
}

void finishScenario(Loader& l, Scenario& s) {
    if (!l.present("model.kv_heads"))
        s.model.kv_heads = s.model.heads;
    if (!l.present("cluster.scale_out.nics_per_node"))
        s.cluster.nics_per_node = s.cluster.gpus_per_node;
    deriveDp(l, s);

    if (!l.anyFailed({"model", "model.experts", "model.dense_layers"})) {
        const bool moe = s.model.experts > 0;
        if (!moe && !l.present("model.ffn_hidden"))
            l.missing("model", "model.ffn_hidden", "needed because model.experts = 0");
        else if (s.model.dense_layers > 0 && !l.present("model.ffn_hidden"))
            l.missing("model", "model.ffn_hidden",
                      "needed because model.dense_layers = " + formatNumber(s.model.dense_layers));
        const std::string why = "needed because model.experts = " + formatNumber(s.model.experts);
        for (const char* field : {"model.top_k", "model.expert_ffn_hidden"}) {
            if (moe && !l.present(field))
                l.missing("model", field, why);
        }
    }
    if (l.present("model.mla") && !l.failed("model.attention") &&
        s.model.attention != AttentionKind::mla)
        l.reportAt(Diagnostic::Severity::error, "model.mla", "model.mla",
                   std::string("model.mla is set but model.attention is ") +
                       toString(s.model.attention) + "; set attention: mla or remove mla");

    if (l.anyFailed({"routing", "routing.model", "routing.histogram_csv"}))
        return;
    const bool histogram = s.routing.model == PopularityModel::histogram;
    if (histogram && !l.present("routing.histogram_csv"))
        l.missing("routing", "routing.histogram_csv", "needed because routing.model is histogram");
    else if (histogram)
        loadHistogram(l, s);
    else if (!s.routing.histogram_csv.empty())
        l.reportAt(Diagnostic::Severity::warning, "routing.histogram_csv", "routing.histogram_csv",
                   std::string("routing.histogram_csv is ignored because routing.model is ") +
                       toString(s.routing.model));
}

// ---------------------------------------------------------------------------------------------
// Loading entry points

bool parseYaml(Loader& l, const std::string& text, YAML::Node& root) {
    try {
        root = YAML::Load(text);
        return true;
    } catch (const YAML::Exception& e) {
        Diagnostic d;
        d.file = l.source.file;
        d.line = e.mark.line >= 0 ? e.mark.line + 1 : 0;
        d.column = e.mark.column >= 0 ? e.mark.column + 1 : 0;
        d.message = "YAML syntax error: " + e.msg;
        l.diagnostics.push_back(std::move(d));
        return false;
    }
}

/// File order reads best: override problems first (they are not in the file), then the
/// scenario file top to bottom, then other files (histogram CSVs) in the order found.
void sortByPosition(Diagnostics& diagnostics, const std::string& scenario_file) {
    auto key = [&](const Diagnostic& d) {
        const int group = d.file == kOverrideSource ? 0 : d.file == scenario_file ? 1 : 2;
        return group == 1 ? std::tuple(group, d.line, d.column) : std::tuple(group, 0, 0);
    };
    std::stable_sort(diagnostics.begin(), diagnostics.end(),
                     [&](const Diagnostic& a, const Diagnostic& b) { return key(a) < key(b); });
}

LoadResult finishResult(Loader& l, std::optional<Scenario> scenario) {
    LoadResult result;
    sortByPosition(l.diagnostics, l.source.file);
    result.diagnostics = std::move(l.diagnostics);
    result.source = std::move(l.source);
    if (scenario && !hasErrors(result.diagnostics)) {
        Diagnostics checks = validateScenario(*scenario, &result.source);
        for (Diagnostic& d : checks) {
            if (l.isOverridden(d.field)) {
                d.file = kOverrideSource;
                d.line = 0;
                d.column = 0;
            }
        }
        const bool valid = !hasErrors(checks);
        result.diagnostics.insert(result.diagnostics.end(), std::make_move_iterator(checks.begin()),
                                  std::make_move_iterator(checks.end()));
        if (valid)
            result.scenario = std::move(scenario);
    }
    return result;
}

LoadResult convert(Loader& l, const YAML::Node& root) {
    Scenario s = initialScenario();
    l.setRoot(root);
    readMap(l, root, "", s);
    finishScenario(l, s);
    return finishResult(l, std::move(s));
}

/// Sets the node at a dotted path ("layout.ep=16"), creating maps on the way.
void applyOverride(Loader& l, YAML::Node& root, const std::string& assignment) {
    const std::size_t equals = assignment.find('=');
    const std::optional<FieldPath> path = equals == std::string::npos
                                              ? std::nullopt
                                              : parseFieldPath(trim(assignment.substr(0, equals)));
    if (!path) {
        l.overrideError("", "malformed override " + yaml::shortQuote(assignment) +
                                ": expected field=value, e.g. layout.ep=16");
        return;
    }
    YAML::Node value;
    try {
        value = YAML::Load(assignment.substr(equals + 1));
    } catch (const YAML::Exception& e) {
        l.overrideError(path->dotted, "override " + yaml::shortQuote(assignment) +
                                          ": the value is not valid YAML: " + e.msg);
        return;
    }
    if (root.IsNull())
        root.reset(YAML::Node(YAML::NodeType::Map));
    // yaml-cpp nodes are handles: reset() moves the handle, assignment would overwrite the node.
    YAML::Node current;
    current.reset(root);
    std::string walked;
    for (std::size_t i = 0; i < path->steps.size(); ++i) {
        const auto& [key, index] = path->steps[i];
        // A key just created by current[key] is undefined until something is assigned to it.
        if (!current.IsDefined() || current.IsNull())
            current = YAML::Node(YAML::NodeType::Map);
        if (!current.IsMap()) {
            l.overrideError(path->dotted, "override " + yaml::shortQuote(assignment) + ": " +
                                              yaml::MapEntries::describeParent(walked) +
                                              " is not a map");
            return;
        }
        walked = yaml::joinPath(walked, key);
        YAML::Node next;
        next.reset(current[key]);
        if (index) {
            if (!next.IsSequence() || *index >= next.size()) {
                l.overrideError(path->dotted, "override " + yaml::shortQuote(assignment) + ": " +
                                                  walked + " has no item [" +
                                                  std::to_string(*index) + "]");
                return;
            }
            walked = yaml::indexPath(walked, *index);
            YAML::Node item;
            item.reset(next[*index]);
            next.reset(item);
        }
        if (i + 1 == path->steps.size())
            next = value;
        else
            current.reset(next);
    }
    l.markOverridden(path->dotted);
}

} // namespace

std::optional<FieldPath> parseFieldPath(const std::string& key) {
    FieldPath path;
    std::size_t start = 0;
    while (start <= key.size()) {
        const std::size_t dot = std::min(key.find('.', start), key.size());
        std::string step = key.substr(start, dot - start);
        std::optional<std::size_t> index;
        const std::size_t bracket = step.find('[');
        if (bracket != std::string::npos) {
            std::size_t value = 0;
            const char* first = step.data() + bracket + 1;
            const char* last = step.data() + step.size() - 1;
            const auto [end, error] = std::from_chars(first, last, value);
            if (step.back() != ']' || error != std::errc() || end != last)
                return std::nullopt;
            index = value;
            step.resize(bracket);
        }
        if (step.empty())
            return std::nullopt;
        path.dotted = yaml::joinPath(path.dotted, step) +
                      (index ? "[" + std::to_string(*index) + "]" : std::string());
        path.steps.emplace_back(std::move(step), index);
        start = dot + 1;
    }
    return path;
}

LoadResult loadScenarioTextWithOverrides(const std::string& yaml, const std::string& file_label,
                                         const std::string& base_dir,
                                         const std::vector<std::string>& overrides) {
    Loader l(file_label, base_dir);
    YAML::Node root;
    if (!parseYaml(l, yaml, root))
        return finishResult(l, std::nullopt);
    for (const std::string& assignment : overrides)
        applyOverride(l, root, assignment);
    return convert(l, root);
}

LoadResult loadScenarioText(const std::string& yaml, const std::string& file_label,
                            const std::string& base_dir) {
    return loadScenarioTextWithOverrides(yaml, file_label, base_dir, {});
}

LoadResult loadScenarioWithOverrides(const std::string& path,
                                     const std::vector<std::string>& overrides) {
    std::string text;
    const std::string problem = readWholeFile(path, text);
    if (!problem.empty()) {
        Loader l(path, directoryOf(path));
        l.reportAt(Diagnostic::Severity::error, "", "", "cannot read file: " + problem);
        return finishResult(l, std::nullopt);
    }
    return loadScenarioTextWithOverrides(text, path, directoryOf(path), overrides);
}

LoadResult loadScenarioFile(const std::string& path) {
    return loadScenarioWithOverrides(path, {});
}

std::optional<int> derivedDp(const Scenario& s) {
    const int64_t gpus = static_cast<int64_t>(s.cluster.nodes) * s.cluster.gpus_per_node;
    const int64_t model_parallel = static_cast<int64_t>(s.layout.tp) * s.layout.cp * s.layout.pp;
    if (model_parallel <= 0 || gpus < 0 || gpus % model_parallel != 0 ||
        gpus / model_parallel > std::numeric_limits<int>::max())
        return std::nullopt;
    return static_cast<int>(gpus / model_parallel);
}

Scenario baselineFor(const Scenario& s) {
    const Catalog& catalog = builtinCatalog();
    Scenario base = initialScenario();
    if (const GpuSpec* gpu = catalog.findGpu(s.cluster.gpu.preset))
        base.cluster.gpu = *gpu;
    applyNodeShape(s.cluster.gpu.preset, base.cluster);
    // The NIC's numbers compare against its own preset, while its id compares against the
    // default id, so "nic:" is written only when it is not the default NIC.
    if (const NicSpec* nic = catalog.findNic(s.cluster.nic.preset))
        base.cluster.nic = *nic;
    base.cluster.nic.preset = kDefaultNicPreset;
    base.cluster.nics_per_node = s.cluster.gpus_per_node;
    base.model.kv_heads = s.model.heads;
    // MLA dimensions mean nothing (and may not be written) unless attention is MLA.
    if (s.model.attention != AttentionKind::mla)
        base.model.mla = s.model.mla;
    // When dp cannot be derived it must be written; a baseline that differs forces that.
    base.layout.dp = derivedDp(s).value_or(s.layout.dp == 0 ? 1 : 0);
    return base;
}

namespace {

/// A blank line before each top-level section, which the emitter cannot do inside a map.
std::string separateSections(const std::string& yaml) {
    std::string text;
    bool seen_key = false;
    std::size_t start = 0;
    while (start < yaml.size()) {
        std::size_t end = yaml.find('\n', start);
        end = end == std::string::npos ? yaml.size() : end + 1;
        const char first = yaml[start];
        const bool top_level_key = first != ' ' && first != '#' && first != '-' && first != '\n';
        const std::string_view line(yaml.data() + start, end - start);
        const bool section = top_level_key && line.find(':') == line.size() - 2;
        if (section && seen_key)
            text += '\n';
        seen_key = seen_key || top_level_key;
        text.append(line);
        start = end;
    }
    return text;
}

} // namespace

std::string toYaml(const Scenario& scenario) {
    YAML::Emitter out;
    out << YAML::Comment("MoE Planner scenario. Fields equal to their preset or default are "
                         "left out.");
    emitMap(out, "", scenario, baselineFor(scenario));
    std::string text = separateSections(out.c_str());
    text += '\n';
    return text;
}

std::string saveScenarioFile(const Scenario& scenario, const std::string& path) {
    return writeFileAtomically(path, toYaml(scenario));
}

const char* defaultScenarioYaml() {
    return embedded::kDefaultScenarioYaml;
}

const Scenario& defaultScenario() {
    // test_scenario_io checks that the embedded default loads without diagnostics.
    static const Scenario scenario =
        loadScenarioText(defaultScenarioYaml(), "<built-in default>").scenario.value_or(Scenario{});
    return scenario;
}

} // namespace moe
