#include "moe/schema.h"

#include "field_access.h"
#include "moe/catalog.h"
#include "moe/format.h"
#include "moe/limits.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace moe {

// The scenario the schema's defaults start from, and a GPU preset's node shape (field_access.h).
Scenario initialScenario() {
    Scenario s;
    s.model.ffn_hidden = 0; // only required when some layer is dense
    if (const NicSpec* nic = builtinCatalog().findNic(kDefaultNicPreset))
        s.cluster.nic = *nic;
    return s;
}

void applyNodeShape(const std::string& gpu_preset, ClusterSpec& cluster) {
    if (const Catalog::NodeShape* shape = builtinCatalog().findNodeShape(gpu_preset)) {
        cluster.gpus_per_node = shape->gpus_per_node;
        cluster.nodes_per_rack = shape->nodes_per_rack;
        cluster.scale_up_domain = shape->scale_up_domain;
        cluster.server_usd = shape->server_usd;
        cluster.rack_usd = shape->rack_usd;
        cluster.node_overhead_w = shape->node_overhead_w;
        cluster.rack_overhead_w = shape->rack_overhead_w;
    }
}

// ---------------------------------------------------------------------------------------------
// Value conversions of the accessors (field_access.h)

namespace field_access {

std::string valueText(const FieldValue& value) {
    return std::visit(
        [](const auto& v) -> std::string {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_arithmetic_v<T>)
                return formatNumber(v);
            else if constexpr (std::is_same_v<T, std::string>)
                return yaml::shortQuote(v);
            else if constexpr (std::is_same_v<T, std::vector<int>>)
                return yaml::intListText(v);
            else
                return yaml::placementsText(v);
        },
        value);
}

std::string mismatch(const std::string& path, const std::string& what, const FieldValue& value) {
    return path + ": expected " + what + ", got " + valueText(value);
}

std::string assignTo(double& member, const FieldValue& value, const std::string& path) {
    if (const auto* real = std::get_if<double>(&value))
        member = *real;
    else if (const auto* whole = std::get_if<int64_t>(&value))
        member = static_cast<double>(*whole);
    else if (const auto* whole_unsigned = std::get_if<uint64_t>(&value))
        member = static_cast<double>(*whole_unsigned);
    else
        return mismatch(path, "a number", value);
    return {};
}

std::string assignTo(std::string& member, const FieldValue& value, const std::string& path) {
    if (const auto* text = std::get_if<std::string>(&value)) {
        member = *text;
        return {};
    }
    return mismatch(path, "text", value);
}

std::string checkName(const FieldValue& value, const std::vector<std::string>& names,
                      const std::string& path, std::string& name) {
    const std::string expected = "one of " + yaml::joinNames(names, " | ");
    const auto* text = std::get_if<std::string>(&value);
    if (!text)
        return mismatch(path, expected, value);
    if (std::find(names.begin(), names.end(), *text) == names.end())
        return path + ": expected " + expected + ", got " + yaml::shortQuote(*text);
    name = *text;
    return {};
}

std::optional<FieldValue> parseAs(yaml::ValueSink& sink, const YAML::Node& node,
                                  const std::string& path, RankOrder*) {
    const std::optional<std::string> text =
        yaml::scalarText(sink, node, path, yaml::kRankOrderWhat);
    if (!text)
        return std::nullopt;
    if (!parseRankOrder(*text)) {
        sink.error(path, node,
                   path + ": expected " + yaml::kRankOrderWhat + ", got " +
                       yaml::shortQuote(*text));
        return std::nullopt;
    }
    return FieldValue(*text);
}

std::string assignTo(RankOrder& member, const FieldValue& value, const std::string& path) {
    const auto* text = std::get_if<std::string>(&value);
    if (!text)
        return mismatch(path, yaml::kRankOrderWhat, value);
    const std::optional<RankOrder> order = parseRankOrder(*text);
    if (!order)
        return path + ": expected " + yaml::kRankOrderWhat + ", got " + yaml::shortQuote(*text);
    member = *order;
    return {};
}

std::string assignTo(std::vector<int>& member, const FieldValue& value, const std::string& path) {
    if (const auto* list = std::get_if<std::vector<int>>(&value)) {
        member = *list;
        return {};
    }
    return mismatch(path, "a list of whole numbers", value);
}

std::string assignTo(std::vector<ExpertPlacement>& member, const FieldValue& value,
                     const std::string& path) {
    if (const auto* list = std::get_if<std::vector<ExpertPlacement>>(&value)) {
        member = *list;
        return {};
    }
    return mismatch(path, "a list of {expert, ep_ranks, layer} entries", value);
}

} // namespace field_access

// ---------------------------------------------------------------------------------------------
// ScenarioSchema

namespace {
/// Editors step "> 0" reals from this (their smallest shown value), not from 0.
constexpr double kEditorPositiveMin = 0.001;
} // namespace

std::optional<double> SchemaField::min() const {
    switch (range.kind) {
    case Range::Kind::none:
        break;
    case Range::Kind::positive:
        return kind == FieldKind::integer ? 1.0 : kEditorPositiveMin;
    case Range::Kind::at_least:
    case Range::Kind::size:
    case Range::Kind::between:
        return range.min;
    }
    if (kind == FieldKind::integer && access &&
        std::holds_alternative<uint64_t>(access->get(Scenario{})))
        return 0.0;
    return std::nullopt;
}

std::optional<double> SchemaField::max() const {
    if (range.kind == Range::Kind::size || range.kind == Range::Kind::between)
        return range.max;
    return std::nullopt;
}

ScenarioSchema::ScenarioSchema(std::vector<SchemaSection> sections, std::vector<SchemaField> fields)
    : sections_(std::move(sections))
    , fields_(std::move(fields)) {
    for (std::size_t i = 0; i < sections_.size(); ++i)
        section_index_.emplace(sections_[i].path, i);
    for (std::size_t i = 0; i < fields_.size(); ++i) {
        const SchemaField& field = fields_[i];
        if (!field_index_.emplace(field.path, i).second)
            throw std::logic_error("schema: field declared twice: " + field.path);
        // Every section on the way to the field is a key of its parent, where first reached.
        std::string parent;
        std::size_t start = 0;
        for (;;) {
            const std::size_t dot = field.path.find('.', start);
            const std::string key = field.path.substr(start, dot - start);
            std::vector<SchemaEntry>& keys = children_[parent];
            const std::string path = parent.empty() ? key : parent + "." + key;
            if (dot == std::string::npos) {
                keys.push_back({key, &field, nullptr});
                break;
            }
            const SchemaSection* section = findSection(path);
            if (!section)
                throw std::logic_error("schema: undeclared section " + path);
            if (std::none_of(keys.begin(), keys.end(),
                             [&](const SchemaEntry& e) { return e.section == section; }))
                keys.push_back({key, nullptr, section});
            parent = path;
            start = dot + 1;
        }
    }
}

const SchemaField* ScenarioSchema::find(std::string_view path) const {
    const auto it = field_index_.find(path);
    return it == field_index_.end() ? nullptr : &fields_[it->second];
}

const SchemaSection* ScenarioSchema::findSection(std::string_view path) const {
    const auto it = section_index_.find(path);
    return it == section_index_.end() ? nullptr : &sections_[it->second];
}

const std::vector<SchemaEntry>& ScenarioSchema::children(std::string_view parent) const {
    static const std::vector<SchemaEntry> none;
    const auto it = children_.find(parent);
    return it == children_.end() ? none : it->second;
}

FieldValue fieldValue(const SchemaField& field, const Scenario& scenario) {
    return field.access->get(scenario);
}

std::string assignField(const SchemaField& field, Scenario& scenario, const FieldValue& value) {
    return field.access->assign(scenario, value, field.path);
}

std::string formatFieldValue(const FieldValue& value) {
    if (const auto* text = std::get_if<std::string>(&value))
        return *text;
    return field_access::valueText(value);
}

std::string fieldText(const SchemaField& field, const Scenario& scenario) {
    return field.access->text(scenario);
}

} // namespace moe
