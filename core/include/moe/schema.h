#pragma once
// The scenario format, declared once. Every field of a scenario file has one row in
// scenarioSchema(): its dotted path, the member of Scenario it is stored in, its type, unit and
// range, its default, its help text and the section it belongs to. Everything that knows the
// format is generated from these rows: loading and saving (scenario_io.h), `--set` overrides,
// the editors (the Qt scenario editor, moe-live's what-ifs), typed edits (edits.h), the range
// checks of validateScenario (validate.h) and the format reference (docs/format.md, written by
// `moe-plan schema --markdown`). Rules that tie several fields together stay in validate.cpp.

#include "moe/field_value.h"
#include "moe/scenario.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace moe {

/// What a field's value must satisfy on its own. validateScenario reports a value outside it
/// with the field's name; the editors derive their spin-box bounds from it.
struct Range {
    enum class Kind {
        none,     ///< any value of the type
        at_least, ///< >= min
        positive, ///< > 0 (real: at least 1e-6, so every derived time stays finite)
        size,     ///< whole number in min..max (max: the supported bound, limits.h)
        between,  ///< min..max inclusive
    };
    Kind kind = Kind::none;
    double min = 0;
    double max = 0;

    static Range any() { return {}; }
    static Range atLeast(double min) { return {Kind::at_least, min, 0}; }
    static Range positive() { return {Kind::positive, 0, 0}; }
    static Range size(int64_t min, int64_t max) {
        return {Kind::size, static_cast<double>(min), static_cast<double>(max)};
    }
    static Range between(double min, double max) { return {Kind::between, min, max}; }
};

/// How a row reads and writes its member of Scenario (defined where the table is built).
struct FieldAccess;

struct SchemaField {
    std::string path;    ///< as in the file and in --set: "cluster.scale_up.domain"
    std::string section; ///< top-level section: "scenario", "cluster", "model", ...
    std::string key;     ///< path inside the section: "scale_up.domain"
    FieldKind kind = FieldKind::text;
    std::string unit; ///< "GB/s per GPU per direction"; empty when unitless
    Range range;
    bool required = false;
    /// The default in words when it is not one fixed value ("the GPU preset's"); empty: the
    /// value an otherwise empty scenario loads to.
    std::string default_text;
    std::string help;    ///< one or two sentences: the tooltip, and the reference's meaning
    std::string details; ///< more for the reference only (formats, sources)
    /// Allowed values of a `choice`; suggestions for `text` (layout.order).
    std::vector<std::string> choices;
    double step = 1;  ///< spin-box step for numbers
    int decimals = 0; ///< digits shown for numbers
    /// When set, the range is checked only where this holds (MLA dimensions with MLA).
    bool (*applies)(const Scenario&) = nullptr;
    /// The validator checks the range inside the rule that ties the field to others
    /// (model.top_k and the FFN sizes depend on model.experts), with that rule's message.
    bool range_checked_by_rules = false;
    const FieldAccess* access = nullptr;

    /// Editor bounds, from the range (and the type: unsigned fields start at 0).
    std::optional<double> min() const;
    std::optional<double> max() const;
};

/// A map of fields: "cluster", "cluster.scale_up", ...
struct SchemaSection {
    std::string path;
    bool required = false;
    std::string help;
    std::string default_text; ///< what leaving the whole section out means
};

/// One key of a map in the file: a field or a nested section.
struct SchemaEntry {
    std::string key;
    const SchemaField* field = nullptr;
    const SchemaSection* section = nullptr;
};

class ScenarioSchema {
public:
    /// Fields in file order (a section's fields together, and a section where its first field
    /// is); presets before the fields that refine them.
    ScenarioSchema(std::vector<SchemaSection> sections, std::vector<SchemaField> fields);
    ScenarioSchema(const ScenarioSchema&) = delete;
    ScenarioSchema& operator=(const ScenarioSchema&) = delete;

    const std::vector<SchemaField>& fields() const { return fields_; }
    const std::vector<SchemaSection>& sections() const { return sections_; }
    const SchemaField* find(std::string_view path) const;
    const SchemaSection* findSection(std::string_view path) const;
    /// The keys of the map at `parent` ("" = the top level), in file order.
    const std::vector<SchemaEntry>& children(std::string_view parent) const;

private:
    std::vector<SchemaSection> sections_;
    std::vector<SchemaField> fields_;
    std::map<std::string, std::vector<SchemaEntry>, std::less<>> children_;
    std::map<std::string, std::size_t, std::less<>> field_index_;
    std::map<std::string, std::size_t, std::less<>> section_index_;
};

/// The format every scenario file, editor and front end uses (built once, thread-safe).
const ScenarioSchema& scenarioSchema();

/// The field's value in `scenario`.
FieldValue fieldValue(const SchemaField& field, const Scenario& scenario);
/// The value as it is written in a file: numbers in their shortest exact form, enums by name,
/// lists in flow style ("[3, 5]", "[{expert: 3, ep_ranks: [0, 1]}]").
std::string fieldText(const SchemaField& field, const Scenario& scenario);
/// Stores `value` in the field (no other field changes, no validation); returns "" or why the
/// value does not fit the field's type ("expected one of ...").
std::string assignField(const SchemaField& field, Scenario& scenario, const FieldValue& value);
/// A typed value as it is written in a file and in --set (text unquoted).
std::string formatFieldValue(const FieldValue& value);

/// How the reference names a field's type ("whole number", "one of `a`, `b`"), its range
/// ("1 to 131072", "> 0", "≥ 0"; empty when any value goes) and its default ("required", a
/// value, or words such as "the GPU preset's").
std::string describeType(const SchemaField& field);
std::string describeRange(const SchemaField& field);
std::string describeDefault(const SchemaField& field);

/// The format reference in Markdown (docs/format.md): one table per section with each field's
/// type, unit, range, default and meaning.
std::string schemaMarkdown(const ScenarioSchema& schema = scenarioSchema());

} // namespace moe
