#include "moe/scenario_io.h"

#include "embedded.h"
#include "moe/atomic_file.h"
#include "moe/catalog.h"
#include "moe/format.h"
#include "moe/limits.h"
#include "moe/routing_csv.h"
#include "moe/text.h"
#include "moe/validate.h"

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

/// The NIC a scenario gets when it names none (spec: scale_out.nic defaults to cx7-400g).
constexpr const char* kDefaultNicPreset = "cx7-400g";
/// Diagnostics about command-line overrides name this instead of the scenario file.
constexpr const char* kOverrideSource = "--set";

// ---------------------------------------------------------------------------------------------
// Small text helpers

std::string joinPath(const std::string& parent, const std::string& key) {
    return parent.empty() ? key : parent + "." + key;
}

std::string indexPath(const std::string& list, std::size_t index) {
    return list + "[" + std::to_string(index) + "]";
}

template <typename Range> std::string joinNames(const Range& names, const char* separator) {
    std::string text;
    for (const auto& name : names) {
        if (!text.empty())
            text += separator;
        text += name;
    }
    return text;
}

std::string lowerCase(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
        return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    });
    return s;
}

std::string trim(const std::string& s) {
    const std::size_t begin = s.find_first_not_of(" \t\r");
    if (begin == std::string::npos)
        return {};
    const std::size_t end = s.find_last_not_of(" \t\r");
    return s.substr(begin, end - begin + 1);
}

/// Edit distance counting an adjacent swap as one edit ("layuot" is one typo from "layout").
std::size_t editDistance(const std::string& a, const std::string& b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.size()][b.size()];
}

/// The known name a misspelt one most likely meant, or "" when none is close: at most two
/// edits away (one for keys under four letters), or one a prefix of the other
/// ("bandwidth" -> "bandwidth_gbps"). Among equally close names, one with the same first
/// letter wins ("epp" -> "ep", not "pp"), then the earlier one in spec order.
std::string closestName(const std::string& written, const std::vector<std::string>& known) {
    constexpr std::size_t kNoMatch = 1000;
    const std::string a = lowerCase(written);
    // Short keys get one edit, else "x" would "mean" every two-letter key.
    const std::size_t max_edits = std::clamp<std::size_t>(a.size() / 2, 1, 2);
    std::string best;
    std::size_t best_score = kNoMatch;
    for (const std::string& name : known) {
        const std::string b = lowerCase(name);
        const std::size_t distance = editDistance(a, b);
        const bool prefix =
            std::min(a.size(), b.size()) >= 3 && (b.starts_with(a) || a.starts_with(b));
        const std::size_t rank = distance <= max_edits ? distance : (prefix ? 3 : kNoMatch);
        const std::size_t score = rank * 2 + (a.empty() || b.empty() || a[0] != b[0] ? 1 : 0);
        if (rank != kNoMatch && score < best_score) {
            best_score = score;
            best = name;
        }
    }
    return best;
}

std::string shortQuote(const std::string& text) {
    constexpr std::size_t kMax = 40;
    return "'" + visibleText(std::string_view(text).substr(0, kMax)) +
           (text.size() > kMax ? "..." : "") + "'";
}

/// How a value reads in "expected X, got Y".
std::string describe(const YAML::Node& node) {
    if (!node.IsDefined() || node.IsNull())
        return "nothing";
    if (node.IsSequence())
        return "a list";
    if (node.IsMap())
        return "a map";
    return shortQuote(node.Scalar());
}

std::string readWholeFile(const std::string& path, std::string& text) {
    return readFileBounded(path, text);
}

std::string directoryOf(const std::string& path) {
    const fs::path parent = fs::path(path).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
}

// ---------------------------------------------------------------------------------------------
// Strict scalar parsing (YAML's own conversions accept too much, e.g. "8.5" as an int via
// truncation on some paths, and call no attention to which field was wrong)

std::string_view withoutPlus(const std::string& text) {
    std::string_view view = text;
    if (view.size() > 1 && view.front() == '+' && view[1] != '-')
        view.remove_prefix(1);
    return view;
}

std::optional<double> parseFinite(const std::string& text) {
    return parseFiniteNumber(text);
}

enum class WholeParse { ok, not_whole, out_of_range };

/// Whole numbers may also be written as whole-valued floats ("1e3", "8.0"); "8.5" is refused.
template <typename Int> WholeParse parseWhole(const std::string& text, Int& out) {
    const std::string_view view = withoutPlus(text);
    Int value = 0;
    const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
    if (end == view.data() + view.size() && error == std::errc()) {
        out = value;
        return WholeParse::ok;
    }
    if (end == view.data() + view.size() && error == std::errc::result_out_of_range)
        return WholeParse::out_of_range;
    const std::optional<double> real = parseFinite(text);
    if (!real || std::trunc(*real) != *real)
        return WholeParse::not_whole;
    // 2^digits is exact in a double, unlike the type's maximum.
    const double limit = std::ldexp(1.0, std::numeric_limits<Int>::digits);
    const double lowest = std::is_signed_v<Int> ? -limit : 0.0;
    if (*real < lowest || *real >= limit)
        return WholeParse::out_of_range;
    out = static_cast<Int>(*real);
    return WholeParse::ok;
}

// ---------------------------------------------------------------------------------------------
// The loader state: diagnostics, where every field was written, which fields went wrong

class Loader {
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

    void record(const std::string& field, const YAML::Mark& mark) {
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
    void error(const std::string& field, const YAML::Node& at, std::string message) {
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
    void missing(const std::string& parent, const std::string& field, const std::string& why) {
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

/// The scalar text of `node`, or nullopt after reporting "expected <what>".
std::optional<std::string> scalarText(Loader& l, const YAML::Node& node, const std::string& path,
                                      const std::string& what) {
    if (node.IsScalar())
        return node.Scalar();
    l.error(path, node, path + ": expected " + what + ", got " + describe(node));
    return std::nullopt;
}

std::optional<std::string> pickName(Loader& l, const YAML::Node& node, const std::string& path,
                                    const std::vector<std::string>& names) {
    const std::string expected = "one of " + joinNames(names, " | ");
    const std::optional<std::string> text = scalarText(l, node, path, expected);
    if (!text)
        return std::nullopt;
    if (std::find(names.begin(), names.end(), *text) != names.end())
        return text;
    l.error(path, node, path + ": expected " + expected + ", got " + shortQuote(*text));
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Value readers and writers, one overload per C++ type found in the scenario

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
constexpr auto allValues(PipelineSchedule) {
    return std::array{PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b,
                      PipelineSchedule::interleaved, PipelineSchedule::dualpipe};
}
constexpr auto allValues(PopularityModel) {
    return std::array{PopularityModel::uniform, PopularityModel::zipf, PopularityModel::histogram};
}

template <typename Int>
requires std::is_integral_v<Int>
void parseValue(Loader& l, const YAML::Node& node, const std::string& path, Int& out) {
    const char* what = std::is_signed_v<Int> ? "a whole number" : "a non-negative whole number";
    const std::optional<std::string> text = scalarText(l, node, path, what);
    if (!text)
        return;
    switch (parseWhole(*text, out)) {
    case WholeParse::ok:
        return;
    case WholeParse::not_whole:
        l.error(path, node, path + ": expected " + what + ", got " + shortQuote(*text));
        return;
    case WholeParse::out_of_range:
        l.error(path, node,
                path + ": expected a whole number from " +
                    formatNumber(std::numeric_limits<Int>::min()) + " to " +
                    formatNumber(std::numeric_limits<Int>::max()) + ", got " + shortQuote(*text));
        return;
    }
}

void parseValue(Loader& l, const YAML::Node& node, const std::string& path, double& out) {
    const std::optional<std::string> text = scalarText(l, node, path, "a number");
    if (!text)
        return;
    if (const std::optional<double> value = parseFinite(*text))
        out = *value;
    else
        l.error(path, node, path + ": expected a number, got " + shortQuote(*text));
}

void parseValue(Loader& l, const YAML::Node& node, const std::string& path, std::string& out) {
    // An empty value ("description:") is an empty text, not an error.
    if (node.IsNull()) {
        out.clear();
        return;
    }
    if (const std::optional<std::string> text = scalarText(l, node, path, "text"))
        out = *text;
}

template <typename Enum>
requires std::is_enum_v<Enum>
void parseValue(Loader& l, const YAML::Node& node, const std::string& path, Enum& out) {
    std::vector<std::string> names;
    for (const Enum value : allValues(Enum{}))
        names.emplace_back(toString(value));
    if (const std::optional<std::string> name = pickName(l, node, path, names)) {
        const auto index = std::find(names.begin(), names.end(), *name) - names.begin();
        out = allValues(Enum{})[static_cast<std::size_t>(index)];
    }
}

void parseValue(Loader& l, const YAML::Node& node, const std::string& path, RankOrder& out) {
    const std::string what = "tp, cp, ep, dp and pp each once, joined by '-' (like tp-cp-ep-dp-pp)";
    const std::optional<std::string> text = scalarText(l, node, path, what);
    if (!text)
        return;
    if (const std::optional<RankOrder> order = parseRankOrder(*text))
        out = *order;
    else
        l.error(path, node, path + ": expected " + what + ", got " + shortQuote(*text));
}

void parseValue(Loader& l, const YAML::Node& node, const std::string& path, std::vector<int>& out) {
    if (!node.IsSequence()) {
        l.error(path, node, path + ": expected a list of whole numbers, got " + describe(node));
        return;
    }
    out.assign(node.size(), 0);
    for (std::size_t i = 0; i < node.size(); ++i) {
        const std::string item = indexPath(path, i);
        l.record(item, node[i].Mark());
        parseValue(l, node[i], item, out[i]);
    }
}

void parseValue(Loader& l, const YAML::Node& node, const std::string& path,
                std::vector<ExpertPlacement>& out);

template <typename Number>
requires std::is_arithmetic_v<Number>
void emitValue(YAML::Emitter& out, Number value) {
    out << formatNumber(value);
}
void emitValue(YAML::Emitter& out, const std::string& value) {
    out << value;
}
template <typename Enum>
requires std::is_enum_v<Enum>
void emitValue(YAML::Emitter& out, Enum value) {
    out << toString(value);
}
void emitValue(YAML::Emitter& out, const RankOrder& order) {
    out << toString(order);
}
void emitValue(YAML::Emitter& out, const std::vector<int>& values) {
    out << YAML::Flow << YAML::BeginSeq;
    for (const int value : values)
        out << formatNumber(value);
    out << YAML::EndSeq;
}
void emitValue(YAML::Emitter& out, const std::vector<ExpertPlacement>& placements);

// ---------------------------------------------------------------------------------------------
// Field tables: one row per key of the format, in the documented order. Each row knows how to
// read its value into the scenario, write it back, and tell whether it differs from a default,
// so loading and saving cannot drift apart.

enum class Need { optional, required };

template <typename T> struct FieldDef {
    const char* key;
    Need need;
    void (*read)(Loader&, const YAML::Node&, const std::string&, T&);
    void (*emit)(YAML::Emitter&, const T&);
    bool (*differs)(const T&, const T&);
    /// A nested map instead of a value.
    const FieldDef* children = nullptr;
    std::size_t child_count = 0;

    bool isSection() const { return children != nullptr; }
    std::span<const FieldDef> childFields() const { return {children, child_count}; }
};

/// The member reached by following a chain of member pointers: follow<&A::b, &B::c>(a) = a.b.c
template <auto Member, auto... Rest, typename Object>
constexpr decltype(auto) follow(Object& object) {
    if constexpr (sizeof...(Rest) == 0)
        return (object.*Member);
    else
        return follow<Rest...>(object.*Member);
}

template <typename> struct MemberClass;
template <typename Class, typename Value> struct MemberClass<Value Class::*> {
    using type = Class;
};

/// A value field stored at the end of a member-pointer chain.
template <auto... Members> constexpr auto field(const char* key, Need need = Need::optional) {
    using Root =
        typename MemberClass<std::tuple_element_t<0, std::tuple<decltype(Members)...>>>::type;
    return FieldDef<Root>{
        key,
        need,
        [](Loader& l, const YAML::Node& node, const std::string& path, Root& root) {
            parseValue(l, node, path, follow<Members...>(root));
        },
        [](YAML::Emitter& out, const Root& root) { emitValue(out, follow<Members...>(root)); },
        [](const Root& a, const Root& b) {
            return !(follow<Members...>(a) == follow<Members...>(b));
        },
    };
}

template <typename T, std::size_t N>
constexpr FieldDef<T> section(const char* key, const FieldDef<T> (&children)[N],
                              Need need = Need::optional) {
    return FieldDef<T>{key, need, nullptr, nullptr, nullptr, children, N};
}

/// A field whose reading needs more than a type conversion (catalog look-ups, choices).
template <typename T>
constexpr FieldDef<T> withReader(FieldDef<T> def,
                                 void (*read)(Loader&, const YAML::Node&, const std::string&, T&)) {
    def.read = read;
    return def;
}

template <typename Spec> std::string knownPresets(const std::vector<Spec>& specs) {
    std::vector<std::string> ids;
    for (const Spec& spec : specs)
        ids.push_back(spec.preset);
    return joinNames(ids, ", ");
}

void readGpuPreset(Loader& l, const YAML::Node& node, const std::string& path, Scenario& s) {
    const std::optional<std::string> id = scalarText(l, node, path, "a GPU preset name");
    if (!id)
        return;
    const Catalog& catalog = builtinCatalog();
    const GpuSpec* gpu = catalog.findGpu(*id);
    if (!gpu) {
        l.error(path, node,
                "unknown GPU preset " + shortQuote(*id) +
                    " — known: " + knownPresets(catalog.gpus));
        return;
    }
    // Every later cluster field (overrides, node shape, scale-up) refines this preset.
    s.cluster.gpu = *gpu;
    if (const Catalog::NodeShape* shape = catalog.findNodeShape(*id)) {
        s.cluster.gpus_per_node = shape->gpus_per_node;
        s.cluster.nodes_per_rack = shape->nodes_per_rack;
        s.cluster.scale_up_domain = shape->scale_up_domain;
        s.cluster.server_usd = shape->server_usd;
        s.cluster.rack_usd = shape->rack_usd;
        s.cluster.node_overhead_w = shape->node_overhead_w;
        s.cluster.rack_overhead_w = shape->rack_overhead_w;
    }
}

void readNicPreset(Loader& l, const YAML::Node& node, const std::string& path, Scenario& s) {
    const std::optional<std::string> id = scalarText(l, node, path, "a NIC preset name");
    if (!id)
        return;
    const Catalog& catalog = builtinCatalog();
    if (const NicSpec* nic = catalog.findNic(*id)) {
        s.cluster.nic = *nic;
        return;
    }
    l.error(path, node,
            "unknown NIC preset " + shortQuote(*id) + " — known: " + knownPresets(catalog.nics));
}

void readOptimizer(Loader& l, const YAML::Node& node, const std::string& path, Scenario& s) {
    if (const std::optional<std::string> name = pickName(l, node, path, {"adam", "adamw"}))
        s.training.optimizer = *name;
}

constexpr auto kCluster = &Scenario::cluster;
constexpr auto kGpu = &ClusterSpec::gpu;
constexpr auto kNic = &ClusterSpec::nic;
constexpr auto kModel = &Scenario::model;
constexpr auto kMla = &ModelSpec::mla;
constexpr auto kTraining = &Scenario::training;
constexpr auto kLayout = &Scenario::layout;
constexpr auto kRouting = &Scenario::routing;
constexpr auto kReliability = &ClusterSpec::reliability;

constexpr FieldDef<Scenario> kGpuOverrideFields[] = {
    field<kCluster, kGpu, &GpuSpec::name>("name"),
    field<kCluster, kGpu, &GpuSpec::bf16_tflops>("bf16_tflops"),
    field<kCluster, kGpu, &GpuSpec::fp8_tflops>("fp8_tflops"),
    field<kCluster, kGpu, &GpuSpec::hbm_gb>("hbm_gb"),
    field<kCluster, kGpu, &GpuSpec::hbm_tbps>("hbm_tbps"),
    field<kCluster, kGpu, &GpuSpec::power_w>("power_w"),
    field<kCluster, kGpu, &GpuSpec::price_usd>("price_usd"),
};

constexpr FieldDef<Scenario> kScaleUpFields[] = {
    field<kCluster, &ClusterSpec::scale_up_domain>("domain"),
    field<kCluster, kGpu, &GpuSpec::scale_up_gbps>("bandwidth_gbps"),
    field<kCluster, kGpu, &GpuSpec::scale_up_latency_us>("latency_us"),
    field<kCluster, kGpu, &GpuSpec::scale_up_fabric>("name"),
};

constexpr FieldDef<Scenario> kScaleOutFields[] = {
    // First, so bandwidth and latency below refine the chosen NIC.
    withReader(field<kCluster, kNic, &NicSpec::preset>("nic"), readNicPreset),
    field<kCluster, &ClusterSpec::nics_per_node>("nics_per_node"),
    field<kCluster, kNic, &NicSpec::bandwidth_gbps>("bandwidth_gbps"),
    field<kCluster, kNic, &NicSpec::latency_us>("latency_us"),
    field<kCluster, &ClusterSpec::fabric>("fabric"),
    field<kCluster, &ClusterSpec::fabric_topology>("topology"),
    field<kCluster, &ClusterSpec::oversubscription>("oversubscription"),
    field<kCluster, &ClusterSpec::nodes_per_leaf>("nodes_per_leaf"),
};

constexpr FieldDef<Scenario> kCostFields[] = {
    field<kCluster, &ClusterSpec::gpu_hour_usd>("gpu_hour_usd"),
    field<kCluster, &ClusterSpec::electricity_usd_per_kwh>("electricity_usd_per_kwh"),
    field<kCluster, &ClusterSpec::pue>("pue"),
    field<kCluster, &ClusterSpec::node_overhead_w>("node_overhead_w"),
    field<kCluster, &ClusterSpec::rack_overhead_w>("rack_overhead_w"),
    field<kCluster, &ClusterSpec::server_usd>("server_usd"),
    field<kCluster, &ClusterSpec::rack_usd>("rack_usd"),
    field<kCluster, kNic, &NicSpec::switch_usd>("switch_usd"),
    field<kCluster, kNic, &NicSpec::switch_w>("switch_w"),
    field<kCluster, kNic, &NicSpec::cable_usd>("cable_usd"),
    field<kCluster, &ClusterSpec::amortization_years>("amortization_years"),
};

constexpr FieldDef<Scenario> kReliabilityFields[] = {
    field<kCluster, kReliability, &ReliabilitySpec::gpu_failures_per_million_h>(
        "gpu_failures_per_million_h"),
    field<kCluster, kReliability, &ReliabilitySpec::node_failures_per_million_h>(
        "node_failures_per_million_h"),
    field<kCluster, kReliability, &ReliabilitySpec::checkpoint_write_gbps_per_node>(
        "checkpoint_write_gbps_per_node"),
    field<kCluster, kReliability, &ReliabilitySpec::detection_s>("detection_s"),
    field<kCluster, kReliability, &ReliabilitySpec::restart_s>("restart_s"),
};

constexpr FieldDef<Scenario> kClusterFields[] = {
    // First, so every other cluster field refines the preset and its node shape.
    withReader(field<kCluster, kGpu, &GpuSpec::preset>("gpu", Need::required), readGpuPreset),
    section("gpu_overrides", kGpuOverrideFields),
    field<kCluster, &ClusterSpec::nodes>("nodes", Need::required),
    field<kCluster, &ClusterSpec::gpus_per_node>("gpus_per_node"),
    field<kCluster, &ClusterSpec::nodes_per_rack>("nodes_per_rack"),
    field<kCluster, &ClusterSpec::rack_nodes>("rack_nodes"),
    field<kCluster, &ClusterSpec::rack_power_limit_kw>("rack_power_limit_kw"),
    section("scale_up", kScaleUpFields),
    section("scale_out", kScaleOutFields),
    section("costs", kCostFields),
    section("reliability", kReliabilityFields),
};

constexpr FieldDef<Scenario> kMlaFields[] = {
    field<kModel, kMla, &MlaDims::q_lora_rank>("q_lora_rank"),
    field<kModel, kMla, &MlaDims::kv_lora_rank>("kv_lora_rank"),
    field<kModel, kMla, &MlaDims::qk_nope_head_dim>("qk_nope_head_dim"),
    field<kModel, kMla, &MlaDims::qk_rope_head_dim>("qk_rope_head_dim"),
    field<kModel, kMla, &MlaDims::v_head_dim>("v_head_dim"),
};

constexpr FieldDef<Scenario> kPrecisionFields[] = {
    field<kModel, &ModelSpec::weight_precision>("weights"),
    field<kModel, &ModelSpec::activation_precision>("activations"),
    field<kModel, &ModelSpec::dispatch_precision>("dispatch"),
    field<kModel, &ModelSpec::compute_precision>("compute"),
    field<kModel, &ModelSpec::grad_precision>("grads"),
};

constexpr FieldDef<Scenario> kModelFields[] = {
    field<kModel, &ModelSpec::name>("name"),
    field<kModel, &ModelSpec::layers>("layers", Need::required),
    field<kModel, &ModelSpec::dense_layers>("dense_layers"),
    field<kModel, &ModelSpec::hidden>("hidden", Need::required),
    field<kModel, &ModelSpec::heads>("heads", Need::required),
    field<kModel, &ModelSpec::kv_heads>("kv_heads"),
    field<kModel, &ModelSpec::head_dim>("head_dim"),
    field<kModel, &ModelSpec::attention>("attention"),
    section("mla", kMlaFields),
    field<kModel, &ModelSpec::seq_len>("seq_len", Need::required),
    field<kModel, &ModelSpec::vocab>("vocab", Need::required),
    field<kModel, &ModelSpec::ffn_hidden>("ffn_hidden"),
    field<kModel, &ModelSpec::experts>("experts"),
    field<kModel, &ModelSpec::top_k>("top_k"),
    field<kModel, &ModelSpec::expert_ffn_hidden>("expert_ffn_hidden"),
    field<kModel, &ModelSpec::shared_experts>("shared_experts"),
    field<kModel, &ModelSpec::shared_expert_ffn_hidden>("shared_expert_ffn_hidden"),
    field<kModel, &ModelSpec::capacity_factor>("capacity_factor"),
    section("precision", kPrecisionFields),
};

constexpr FieldDef<Scenario> kTrainingFields[] = {
    field<kTraining, &TrainingSpec::global_batch>("global_batch", Need::required),
    field<kTraining, &TrainingSpec::micro_batch>("micro_batch"),
    field<kTraining, &TrainingSpec::total_tokens>("total_tokens"),
    withReader(field<kTraining, &TrainingSpec::optimizer>("optimizer"), readOptimizer),
    field<kTraining, &TrainingSpec::zero_stage>("zero_stage"),
    field<kTraining, &TrainingSpec::recompute>("recompute"),
    field<kTraining, &TrainingSpec::checkpoint_interval_s>("checkpoint_interval_s"),
};

constexpr FieldDef<Scenario> kLayoutFields[] = {
    field<kLayout, &LayoutSpec::tp>("tp"),
    field<kLayout, &LayoutSpec::cp>("cp"),
    field<kLayout, &LayoutSpec::pp>("pp"),
    field<kLayout, &LayoutSpec::vpp>("vpp"),
    field<kLayout, &LayoutSpec::dp>("dp"),
    field<kLayout, &LayoutSpec::ep>("ep"),
    field<kLayout, &LayoutSpec::etp>("etp"),
    field<kLayout, &LayoutSpec::order>("order"),
    field<kLayout, &LayoutSpec::schedule>("schedule"),
    field<kLayout, &LayoutSpec::max_nodes_per_token>("max_nodes_per_token"),
    field<kLayout, &LayoutSpec::expert_placement>("expert_placement"),
};

constexpr FieldDef<Scenario> kRoutingFields[] = {
    field<kRouting, &RoutingSpec::model>("model"),
    field<kRouting, &RoutingSpec::zipf_alpha>("zipf_alpha"),
    field<kRouting, &RoutingSpec::histogram_csv>("histogram_csv"),
    field<kRouting, &RoutingSpec::balance>("balance"),
    field<kRouting, &RoutingSpec::seed>("seed"),
};

constexpr FieldDef<Scenario> kScenarioFields[] = {
    field<&Scenario::name>("name", Need::required),
    field<&Scenario::description>("description"),
    section("cluster", kClusterFields, Need::required),
    section("model", kModelFields, Need::required),
    section("training", kTrainingFields, Need::required),
    section("layout", kLayoutFields),
    section("routing", kRoutingFields),
};

constexpr FieldDef<ExpertPlacement> kPlacementFields[] = {
    field<&ExpertPlacement::expert>("expert", Need::required),
    field<&ExpertPlacement::ep_ranks>("ep_ranks", Need::required),
    field<&ExpertPlacement::layer>("layer"),
};

// ---------------------------------------------------------------------------------------------
// Reading and writing maps through the tables

/// The keys of one YAML map, remembering which ones a table consumed.
class MapEntries {
public:
    MapEntries(Loader& l, const YAML::Node& map, const std::string& path) {
        if (!map.IsMap())
            return;
        for (auto it = map.begin(); it != map.end(); ++it) {
            if (!it->first.IsScalar()) {
                l.error(path, it->first,
                        describeParent(path) + ": a field name must be plain text");
                continue;
            }
            const std::string& key = it->first.Scalar();
            const std::string child = joinPath(path, key);
            // A hash index keeps a map of thousands of keys linear, not quadratic.
            const auto [earlier, fresh] = index_.try_emplace(key, entries_.size());
            if (!fresh) {
                l.error(child, it->first,
                        "duplicate field '" + child + "' (first written on line " +
                            std::to_string(entries_[earlier->second].key_node.Mark().line + 1) +
                            ")");
                continue;
            }
            l.record(child, it->first.Mark());
            entries_.push_back({key, it->first, it->second, false});
        }
    }

    const YAML::Node* take(const std::string& key) {
        const auto it = index_.find(key);
        if (it == index_.end())
            return nullptr;
        Entry& entry = entries_[it->second];
        entry.used = true;
        return &entry.value;
    }

    template <typename T>
    void reportUnknown(Loader& l, const std::string& path, std::span<const FieldDef<T>> fields) {
        std::vector<std::string> known;
        for (const FieldDef<T>& def : fields)
            known.emplace_back(def.key);
        // The first few are listed with a suggestion each; a file with thousands of stray keys
        // gets one closing count instead of thousands of lines.
        int unknown = 0;
        const Entry* first_unlisted = nullptr;
        for (const Entry& entry : entries_) {
            if (entry.used)
                continue;
            if (++unknown > limits::kMaxListedUnknownKeys) {
                if (!first_unlisted)
                    first_unlisted = &entry;
                continue;
            }
            const std::string child = joinPath(path, entry.key);
            const std::string guess = closestName(entry.key, known);
            l.error(child, entry.key_node,
                    "unknown field '" + child + "' — " +
                        (guess.empty() ? "expected one of: " + joinNames(known, ", ")
                                       : "did you mean '" + joinPath(path, guess) + "'?"));
        }
        if (first_unlisted) {
            const int rest = unknown - limits::kMaxListedUnknownKeys;
            l.error(joinPath(path, first_unlisted->key), first_unlisted->key_node,
                    "and " + std::to_string(rest) + " more unknown field" + (rest == 1 ? "" : "s") +
                        " in " + describeParent(path) + " (only the first " +
                        std::to_string(limits::kMaxListedUnknownKeys) + " are listed)");
        }
    }

    static std::string describeParent(const std::string& path) {
        return path.empty() ? std::string("the scenario") : path;
    }

private:
    struct Entry {
        std::string key;
        YAML::Node key_node;
        YAML::Node value;
        bool used = false;
    };
    std::vector<Entry> entries_;
    std::unordered_map<std::string, std::size_t> index_; ///< key -> its entry
};

template <typename T>
void readMap(Loader& l, const YAML::Node& node, const std::string& path,
             std::span<const FieldDef<T>> fields, T& target) {
    // An empty section ("layout:") is an empty map: its defaults apply.
    if (!node.IsMap() && !node.IsNull()) {
        l.error(path, node,
                MapEntries::describeParent(path) + ": expected a map of fields, got " +
                    describe(node));
        return;
    }
    MapEntries entries(l, node, path);
    for (const FieldDef<T>& def : fields) {
        const std::string child = joinPath(path, def.key);
        const YAML::Node* value = entries.take(def.key);
        if (!value) {
            if (def.need == Need::required)
                l.missing(path, child, "");
        } else if (def.isSection()) {
            readMap(l, *value, child, def.childFields(), target);
        } else {
            def.read(l, *value, child, target);
        }
    }
    entries.reportUnknown(l, path, fields);
}

void parseValue(Loader& l, const YAML::Node& node, const std::string& path,
                std::vector<ExpertPlacement>& out) {
    if (!node.IsSequence()) {
        l.error(path, node,
                path + ": expected a list of {expert, ep_ranks, layer} entries, got " +
                    describe(node));
        return;
    }
    out.assign(node.size(), ExpertPlacement{});
    for (std::size_t i = 0; i < node.size(); ++i) {
        const std::string item = indexPath(path, i);
        l.record(item, node[i].Mark());
        readMap<ExpertPlacement>(l, node[i], item, kPlacementFields, out[i]);
    }
}

template <typename T>
bool anyWritten(std::span<const FieldDef<T>> fields, const T& value, const T& base) {
    return std::any_of(fields.begin(), fields.end(), [&](const FieldDef<T>& def) {
        if (def.need == Need::required)
            return true;
        return def.isSection() ? anyWritten(def.childFields(), value, base)
                               : def.differs(value, base);
    });
}

/// Writes the fields that are required or differ from `base` (what loading would default to).
template <typename T>
void emitMap(YAML::Emitter& out, std::span<const FieldDef<T>> fields, const T& value,
             const T& base) {
    out << YAML::BeginMap;
    for (const FieldDef<T>& def : fields) {
        if (def.isSection()) {
            if (def.need == Need::required || anyWritten(def.childFields(), value, base)) {
                out << YAML::Key << def.key << YAML::Value;
                emitMap(out, def.childFields(), value, base);
            }
        } else if (def.need == Need::required || def.differs(value, base)) {
            out << YAML::Key << def.key << YAML::Value;
            def.emit(out, value);
        }
    }
    out << YAML::EndMap;
}

void emitValue(YAML::Emitter& out, const std::vector<ExpertPlacement>& placements) {
    out << YAML::BeginSeq;
    for (const ExpertPlacement& placement : placements)
        emitMap<ExpertPlacement>(out, kPlacementFields, placement, ExpertPlacement{});
    out << YAML::EndSeq;
}

// ---------------------------------------------------------------------------------------------
// Defaults that depend on other fields, rules about which fields go together, the histogram

/// What a file with only the required fields loads to, before presets are resolved.
Scenario initialScenario() {
    Scenario s;
    s.model.ffn_hidden = 0; // only required when some layer is dense
    if (const NicSpec* nic = builtinCatalog().findNic(kDefaultNicPreset))
        s.cluster.nic = *nic;
    return s;
}

/// dp = GPUs / (tp*cp*pp) when that divides; nullopt when it does not (or degrees are < 1).
std::optional<int> derivedDp(const Scenario& s) {
    const int64_t gpus = static_cast<int64_t>(s.cluster.nodes) * s.cluster.gpus_per_node;
    const int64_t model_parallel = static_cast<int64_t>(s.layout.tp) * s.layout.cp * s.layout.pp;
    if (model_parallel <= 0 || gpus < 0 || gpus % model_parallel != 0 ||
        gpus / model_parallel > std::numeric_limits<int>::max())
        return std::nullopt;
    return static_cast<int>(gpus / model_parallel);
}

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
                   "cannot read routing histogram " + shortQuote(shown) + ": " + problem);
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
    readMap<Scenario>(l, root, "", kScenarioFields, s);
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
        l.overrideError("", "malformed override " + shortQuote(assignment) +
                                ": expected field=value, e.g. layout.ep=16");
        return;
    }
    YAML::Node value;
    try {
        value = YAML::Load(assignment.substr(equals + 1));
    } catch (const YAML::Exception& e) {
        l.overrideError(path->dotted, "override " + shortQuote(assignment) +
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
            l.overrideError(path->dotted, "override " + shortQuote(assignment) + ": " +
                                              MapEntries::describeParent(walked) + " is not a map");
            return;
        }
        walked = joinPath(walked, key);
        YAML::Node next;
        next.reset(current[key]);
        if (index) {
            if (!next.IsSequence() || *index >= next.size()) {
                l.overrideError(path->dotted, "override " + shortQuote(assignment) + ": " + walked +
                                                  " has no item [" + std::to_string(*index) + "]");
                return;
            }
            walked = indexPath(walked, *index);
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
        path.dotted = joinPath(path.dotted, step) +
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

namespace {

/// The scenario a file with only presets and required fields would load to, given the other
/// fields of `s` that defaults depend on; toYaml leaves out every field equal to it.
Scenario baselineFor(const Scenario& s) {
    const Catalog& catalog = builtinCatalog();
    Scenario base = initialScenario();
    if (const GpuSpec* gpu = catalog.findGpu(s.cluster.gpu.preset))
        base.cluster.gpu = *gpu;
    if (const Catalog::NodeShape* shape = catalog.findNodeShape(s.cluster.gpu.preset)) {
        base.cluster.gpus_per_node = shape->gpus_per_node;
        base.cluster.nodes_per_rack = shape->nodes_per_rack;
        base.cluster.scale_up_domain = shape->scale_up_domain;
        base.cluster.server_usd = shape->server_usd;
        base.cluster.rack_usd = shape->rack_usd;
        base.cluster.node_overhead_w = shape->node_overhead_w;
        base.cluster.rack_overhead_w = shape->rack_overhead_w;
    }
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
    emitMap<Scenario>(out, kScenarioFields, scenario, baselineFor(scenario));
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
