#pragma once
// Private to the scenario format: how one row of the schema reads and writes its member of
// Scenario. access<&Scenario::layout, &LayoutSpec::ep>() gives the operations for layout.ep from
// the member's C++ type alone, so a row of the table names its member once and nothing else.

#include "moe/field_value.h"
#include "moe/format.h"
#include "yaml_values.h"

#include <array>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>

namespace moe {

struct FieldAccess {
    /// The kind the member's C++ type gives (enums: choice; RankOrder: text; vectors: list).
    FieldKind kind;
    /// The enum's names, in the reference's order; empty for other types.
    std::vector<std::string> (*names)();
    /// The node as this field's type (strict; errors by path), or nullopt.
    std::optional<FieldValue> (*parse)(yaml::ValueSink&, const YAML::Node&, const std::string&);
    /// Stores `value`; returns "" or why it cannot be stored ("expected one of ...").
    std::string (*assign)(Scenario&, const FieldValue&, const std::string& path);
    /// What loading the file does with the node: parse and assign, except that a preset also
    /// brings its figures (which the fields after it refine).
    void (*read)(yaml::ValueSink&, const YAML::Node&, const std::string& path, Scenario&);
    FieldValue (*get)(const Scenario&);
    std::string (*text)(const Scenario&);
    void (*emit)(YAML::Emitter&, const Scenario&);
    bool (*equal)(const Scenario&, const Scenario&);
    void (*copy)(const Scenario& from, Scenario& to);
};

namespace field_access {

// ---------------------------------------------------------------------------------------------
// The names of every enum of the format, in the order the reference lists them

constexpr auto allValues(Precision) {
    return std::array{Precision::fp32, Precision::bf16, Precision::fp16, Precision::fp8};
}
constexpr auto allValues(ScaleUpDomain) {
    return std::array{ScaleUpDomain::node, ScaleUpDomain::rack};
}
constexpr auto allValues(Fabric) {
    return std::array{Fabric::infiniband, Fabric::ethernet};
}
constexpr auto allValues(FabricTopology) {
    return std::array{FabricTopology::fat_tree, FabricTopology::rail_optimized};
}
constexpr auto allValues(AttentionKind) {
    return std::array{AttentionKind::gqa, AttentionKind::mla};
}
constexpr auto allValues(Recompute) {
    return std::array{Recompute::none, Recompute::selective, Recompute::full};
}
constexpr auto allValues(MlpKind) {
    return std::array{MlpKind::swiglu, MlpKind::gelu};
}
constexpr auto allValues(AttentionKernel) {
    return std::array{AttentionKernel::flash, AttentionKernel::unfused};
}
constexpr auto allValues(TpActivations) {
    return std::array{TpActivations::sequence_parallel, TpActivations::replicated};
}
constexpr auto allValues(Fp8Recipe) {
    return std::array{Fp8Recipe::delayed, Fp8Recipe::tensorwise, Fp8Recipe::blockwise,
                      Fp8Recipe::mxfp8};
}
constexpr auto allValues(DpOverlap) {
    return std::array{DpOverlap::none, DpOverlap::grad_reduce,
                      DpOverlap::grad_reduce_and_param_gather};
}
constexpr auto allValues(EpOverlap) {
    return std::array{EpOverlap::none, EpOverlap::combined_1f1b};
}
constexpr auto allValues(MoeDispatcher) {
    return std::array{MoeDispatcher::alltoall, MoeDispatcher::deepep, MoeDispatcher::hybridep};
}
constexpr auto allValues(PipelineSchedule) {
    return std::array{PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b,
                      PipelineSchedule::interleaved, PipelineSchedule::dualpipe};
}
constexpr auto allValues(PopularityModel) {
    return std::array{PopularityModel::published, PopularityModel::uniform, PopularityModel::zipf,
                      PopularityModel::histogram};
}
constexpr auto allValues(BalancingMethod) {
    return std::array{BalancingMethod::aux_loss, BalancingMethod::aux_free, BalancingMethod::none,
                      BalancingMethod::perfect};
}

template <typename Enum> std::vector<std::string> namesOf() {
    std::vector<std::string> names;
    for (const Enum value : allValues(Enum{}))
        names.emplace_back(toString(value));
    return names;
}

/// "expected <what>, got <value>" for a value of the wrong type.
std::string mismatch(const std::string& path, const std::string& what, const FieldValue& value);
/// Text of a value for messages.
std::string valueText(const FieldValue& value);

// ---------------------------------------------------------------------------------------------
// One overload set per C++ type found in the scenario: parse a node, assign a value, read back

template <typename Int>
requires std::is_integral_v<Int> std::optional<FieldValue>
parseAs(yaml::ValueSink& sink, const YAML::Node& node, const std::string& path, Int*) {
    if constexpr (std::is_unsigned_v<Int>) {
        static_assert(sizeof(Int) == sizeof(uint64_t), "only 64-bit unsigned fields");
        if (const std::optional<uint64_t> value = yaml::readUnsigned(sink, node, path))
            return FieldValue(*value);
    } else if (const std::optional<int64_t> value =
                   yaml::readInteger(sink, node, path, std::numeric_limits<Int>::min(),
                                     std::numeric_limits<Int>::max())) {
        return FieldValue(*value);
    }
    return std::nullopt;
}

template <typename Int>
requires std::is_integral_v<Int> std::string assignTo(Int& member, const FieldValue& value,
                                                      const std::string& path) {
    if (const auto* whole = std::get_if<int64_t>(&value)) {
        if (std::is_unsigned_v<Int>
                ? *whole < 0
                : *whole < static_cast<int64_t>(std::numeric_limits<Int>::min()) ||
                      *whole > static_cast<int64_t>(std::numeric_limits<Int>::max()))
            return yaml::outOfRangeMessage(
                path, std::is_unsigned_v<Int> ? 0 : std::numeric_limits<Int>::min(),
                static_cast<uint64_t>(std::numeric_limits<Int>::max()), formatNumber(*whole));
        member = static_cast<Int>(*whole);
        return {};
    }
    if (const auto* whole = std::get_if<uint64_t>(&value)) {
        if (*whole > static_cast<uint64_t>(std::numeric_limits<Int>::max()))
            return yaml::outOfRangeMessage(
                path, std::is_unsigned_v<Int> ? 0 : std::numeric_limits<Int>::min(),
                static_cast<uint64_t>(std::numeric_limits<Int>::max()), formatNumber(*whole));
        member = static_cast<Int>(*whole);
        return {};
    }
    return mismatch(path, "a whole number", value);
}

inline std::optional<FieldValue> parseAs(yaml::ValueSink& sink, const YAML::Node& node,
                                         const std::string& path, double*) {
    if (const std::optional<double> value = yaml::readReal(sink, node, path))
        return FieldValue(*value);
    return std::nullopt;
}
std::string assignTo(double& member, const FieldValue& value, const std::string& path);

inline std::optional<FieldValue> parseAs(yaml::ValueSink& sink, const YAML::Node& node,
                                         const std::string& path, std::string*) {
    if (std::optional<std::string> text = yaml::readText(sink, node, path))
        return FieldValue(std::move(*text));
    return std::nullopt;
}
std::string assignTo(std::string& member, const FieldValue& value, const std::string& path);

/// The name among `names`, or the "expected one of" message.
std::string checkName(const FieldValue& value, const std::vector<std::string>& names,
                      const std::string& path, std::string& name);

template <typename Enum>
requires std::is_enum_v<Enum> std::optional<FieldValue>
parseAs(yaml::ValueSink& sink, const YAML::Node& node, const std::string& path, Enum*) {
    if (std::optional<std::string> name = yaml::pickName(sink, node, path, namesOf<Enum>()))
        return FieldValue(std::move(*name));
    return std::nullopt;
}

template <typename Enum>
requires std::is_enum_v<Enum> std::string assignTo(Enum& member, const FieldValue& value,
                                                   const std::string& path) {
    const std::vector<std::string> names = namesOf<Enum>();
    std::string name;
    if (std::string problem = checkName(value, names, path, name); !problem.empty())
        return problem;
    for (const Enum candidate : allValues(Enum{}))
        if (name == toString(candidate))
            member = candidate;
    return {};
}

std::optional<FieldValue> parseAs(yaml::ValueSink& sink, const YAML::Node& node,
                                  const std::string& path, RankOrder*);
std::string assignTo(RankOrder& member, const FieldValue& value, const std::string& path);

inline std::optional<FieldValue> parseAs(yaml::ValueSink& sink, const YAML::Node& node,
                                         const std::string& path, std::vector<int>*) {
    if (std::optional<std::vector<int>> list = yaml::readIntList(sink, node, path))
        return FieldValue(std::move(*list));
    return std::nullopt;
}
std::string assignTo(std::vector<int>& member, const FieldValue& value, const std::string& path);

inline std::optional<FieldValue> parseAs(yaml::ValueSink& sink, const YAML::Node& node,
                                         const std::string& path, std::vector<ExpertPlacement>*) {
    if (std::optional<std::vector<ExpertPlacement>> list = yaml::readPlacements(sink, node, path))
        return FieldValue(std::move(*list));
    return std::nullopt;
}
std::string assignTo(std::vector<ExpertPlacement>& member, const FieldValue& value,
                     const std::string& path);

template <typename T> FieldValue valueOf(const T& member) {
    if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>)
        return static_cast<uint64_t>(member);
    else if constexpr (std::is_integral_v<T>)
        return static_cast<int64_t>(member);
    else if constexpr (std::is_enum_v<T>)
        return std::string(toString(member));
    else if constexpr (std::is_same_v<T, RankOrder>)
        return toString(member);
    else
        return member;
}

template <typename T> std::string textOf(const T& member) {
    if constexpr (std::is_arithmetic_v<T>)
        return formatNumber(member);
    else if constexpr (std::is_enum_v<T>)
        return toString(member);
    else if constexpr (std::is_same_v<T, RankOrder>)
        return toString(member);
    else if constexpr (std::is_same_v<T, std::vector<int>>)
        return yaml::intListText(member);
    else if constexpr (std::is_same_v<T, std::vector<ExpertPlacement>>)
        return yaml::placementsText(member);
    else
        return member;
}

template <typename T> void emitOf(YAML::Emitter& out, const T& member) {
    if constexpr (std::is_same_v<T, std::vector<int>>) {
        out << YAML::Flow << YAML::BeginSeq;
        for (const int value : member)
            out << formatNumber(value);
        out << YAML::EndSeq;
    } else if constexpr (std::is_same_v<T, std::vector<ExpertPlacement>>) {
        yaml::emitPlacements(out, member);
    } else {
        out << textOf(member);
    }
}

// ---------------------------------------------------------------------------------------------
// Member-pointer chains: follow<&A::b, &B::c>(a) = a.b.c

template <auto Member, auto... Rest, typename Object>
constexpr decltype(auto) follow(Object& object) {
    if constexpr (sizeof...(Rest) == 0)
        return (object.*Member);
    else
        return follow<Rest...>(object.*Member);
}

} // namespace field_access

/// The operations of the field stored at the end of a member-pointer chain from Scenario.
template <auto... Members> constexpr FieldAccess memberAccess() {
    using namespace field_access;
    using Member = std::remove_cvref_t<decltype(follow<Members...>(std::declval<Scenario&>()))>;
    FieldAccess a{};
    if constexpr (std::is_enum_v<Member>) {
        a.kind = FieldKind::choice;
        a.names = [] { return namesOf<Member>(); };
    } else {
        a.kind = std::is_integral_v<Member>            ? FieldKind::integer
                 : std::is_floating_point_v<Member>    ? FieldKind::number
                 : std::is_same_v<Member, std::string> ? FieldKind::text
                 : std::is_same_v<Member, RankOrder>   ? FieldKind::text
                                                       : FieldKind::list;
        a.names = [] { return std::vector<std::string>{}; };
    }
    a.parse = [](yaml::ValueSink& sink, const YAML::Node& node, const std::string& path) {
        return parseAs(sink, node, path, static_cast<Member*>(nullptr));
    };
    a.assign = [](Scenario& s, const FieldValue& value, const std::string& path) {
        return assignTo(follow<Members...>(s), value, path);
    };
    a.read = [](yaml::ValueSink& sink, const YAML::Node& node, const std::string& path,
                Scenario& s) {
        const std::optional<FieldValue> value =
            parseAs(sink, node, path, static_cast<Member*>(nullptr));
        if (!value)
            return;
        if (std::string problem = assignTo(follow<Members...>(s), *value, path); !problem.empty())
            sink.error(path, node, std::move(problem));
    };
    a.get = [](const Scenario& s) { return valueOf(follow<Members...>(s)); };
    a.text = [](const Scenario& s) { return textOf(follow<Members...>(s)); };
    a.emit = [](YAML::Emitter& out, const Scenario& s) { emitOf(out, follow<Members...>(s)); };
    a.equal = [](const Scenario& x, const Scenario& y) {
        return follow<Members...>(x) == follow<Members...>(y);
    };
    a.copy = [](const Scenario& from, Scenario& to) {
        follow<Members...>(to) = follow<Members...>(from);
    };
    return a;
}

template <auto... Members> inline constexpr FieldAccess kMember = memberAccess<Members...>();

/// What a file with only the required fields loads to, before presets are resolved: the value
/// of every field the reference gives as its default.
Scenario initialScenario();
/// The NIC a scenario gets when it names none.
inline constexpr const char* kDefaultNicPreset = "cx7-400g";
/// layout.dp's default: GPUs / (tp*cp*pp) when that divides; nullopt when it does not (or a
/// degree is below 1).
std::optional<int> derivedDp(const Scenario& s);
/// The scenario a file with only presets and required fields would load to, given the other
/// fields of `s` that defaults depend on (dp, kv_heads, nics_per_node, the presets' figures):
/// toYaml leaves out every field equal to it, and a typed edit lets every field that equals it
/// follow it.
Scenario baselineFor(const Scenario& s);
/// The catalog's node shape of a GPU preset (GPUs per node, rack, server and rack estimates).
void applyNodeShape(const std::string& gpu_preset, ClusterSpec& cluster);

} // namespace moe
