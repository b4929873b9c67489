#include "yaml_values.h"

#include "moe/format.h"
#include "moe/limits.h"
#include "moe/text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace moe::yaml {

void DiagnosticSink::error(const std::string& field, const YAML::Node& at, std::string message) {
    (void)at; // the text the user typed has no lines worth pointing at
    Diagnostic d;
    d.field = field;
    d.message = std::move(message);
    diagnostics.push_back(std::move(d));
}

void DiagnosticSink::missing(const std::string& parent, const std::string& field,
                             const std::string& why) {
    (void)parent;
    error(field, YAML::Node(),
          "missing required field '" + field + "'" + (why.empty() ? "" : " (" + why + ")"));
}

std::string joinPath(const std::string& parent, const std::string& key) {
    return parent.empty() ? key : parent + "." + key;
}

std::string indexPath(const std::string& list, std::size_t index) {
    return list + "[" + std::to_string(index) + "]";
}

std::string joinNames(const std::vector<std::string>& names, const char* separator) {
    std::string text;
    for (const std::string& name : names) {
        if (!text.empty())
            text += separator;
        text += name;
    }
    return text;
}

namespace {

std::string lowerCase(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
        return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    });
    return s;
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

std::string_view withoutPlus(const std::string& text) {
    std::string_view view = text;
    if (view.size() > 1 && view.front() == '+' && view[1] != '-')
        view.remove_prefix(1);
    return view;
}

/// Integers first as integers (exact to the last digit), then as whole-valued reals.
template <typename Int> WholeParse parseWholeAs(const std::string& text, Int& out) {
    const std::string_view view = withoutPlus(text);
    Int value = 0;
    const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
    if (end == view.data() + view.size() && error == std::errc()) {
        out = value;
        return WholeParse::ok;
    }
    if (end == view.data() + view.size() && error == std::errc::result_out_of_range)
        return WholeParse::out_of_range;
    const std::optional<double> real = parseFiniteNumber(text);
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

} // namespace

std::string closestName(const std::string& written, const std::vector<std::string>& known) {
    // At most two edits away (one for keys under four letters, else "x" would "mean" every
    // two-letter key), or one a prefix of the other ("bandwidth" -> "bandwidth_gbps"). Among
    // equally close names, one with the same first letter wins ("epp" -> "ep", not "pp"), then
    // the earlier one in file order.
    constexpr std::size_t kNoMatch = 1000;
    const std::string a = lowerCase(written);
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

std::string describe(const YAML::Node& node) {
    if (!node.IsDefined() || node.IsNull())
        return "nothing";
    if (node.IsSequence())
        return "a list";
    if (node.IsMap())
        return "a map";
    return shortQuote(node.Scalar());
}

std::optional<std::string> scalarText(ValueSink& sink, const YAML::Node& node,
                                      const std::string& path, const std::string& what) {
    if (node.IsScalar())
        return node.Scalar();
    sink.error(path, node, path + ": expected " + what + ", got " + describe(node));
    return std::nullopt;
}

std::optional<std::string> pickName(ValueSink& sink, const YAML::Node& node,
                                    const std::string& path,
                                    const std::vector<std::string>& names) {
    const std::string expected = "one of " + joinNames(names, " | ");
    const std::optional<std::string> text = scalarText(sink, node, path, expected);
    if (!text)
        return std::nullopt;
    if (std::find(names.begin(), names.end(), *text) != names.end())
        return text;
    sink.error(path, node, path + ": expected " + expected + ", got " + shortQuote(*text));
    return std::nullopt;
}

WholeParse parseWhole(const std::string& text, int64_t& out, int64_t lowest, int64_t highest) {
    int64_t value = 0;
    const WholeParse parsed = parseWholeAs(text, value);
    if (parsed != WholeParse::ok)
        return parsed;
    if (value < lowest || value > highest)
        return WholeParse::out_of_range;
    out = value;
    return WholeParse::ok;
}

WholeParse parseWhole(const std::string& text, uint64_t& out) {
    return parseWholeAs(text, out);
}

std::string outOfRangeMessage(const std::string& path, int64_t lowest, uint64_t highest,
                              const std::string& text) {
    return path + ": expected a whole number from " + formatNumber(lowest) + " to " +
           formatNumber(highest) + ", got " + shortQuote(text);
}

std::optional<int64_t> readInteger(ValueSink& sink, const YAML::Node& node, const std::string& path,
                                   int64_t lowest, int64_t highest) {
    const std::optional<std::string> text = scalarText(sink, node, path, "a whole number");
    if (!text)
        return std::nullopt;
    int64_t value = 0;
    switch (parseWhole(*text, value, lowest, highest)) {
    case WholeParse::ok:
        return value;
    case WholeParse::not_whole:
        sink.error(path, node, path + ": expected a whole number, got " + shortQuote(*text));
        return std::nullopt;
    case WholeParse::out_of_range:
        sink.error(path, node,
                   outOfRangeMessage(path, lowest, static_cast<uint64_t>(highest), *text));
        return std::nullopt;
    }
    return std::nullopt;
}

std::optional<uint64_t> readUnsigned(ValueSink& sink, const YAML::Node& node,
                                     const std::string& path) {
    const char* what = "a non-negative whole number";
    const std::optional<std::string> text = scalarText(sink, node, path, what);
    if (!text)
        return std::nullopt;
    uint64_t value = 0;
    switch (parseWhole(*text, value)) {
    case WholeParse::ok:
        return value;
    case WholeParse::not_whole:
        sink.error(path, node, path + ": expected " + what + ", got " + shortQuote(*text));
        return std::nullopt;
    case WholeParse::out_of_range:
        sink.error(path, node,
                   outOfRangeMessage(path, 0, std::numeric_limits<uint64_t>::max(), *text));
        return std::nullopt;
    }
    return std::nullopt;
}

std::optional<double> readReal(ValueSink& sink, const YAML::Node& node, const std::string& path) {
    const std::optional<std::string> text = scalarText(sink, node, path, "a number");
    if (!text)
        return std::nullopt;
    if (const std::optional<double> value = parseFiniteNumber(*text))
        return value;
    sink.error(path, node, path + ": expected a number, got " + shortQuote(*text));
    return std::nullopt;
}

std::optional<std::string> readText(ValueSink& sink, const YAML::Node& node,
                                    const std::string& path) {
    // An empty value ("description:") is an empty text, not an error.
    if (node.IsNull())
        return std::string();
    return scalarText(sink, node, path, "text");
}

std::optional<std::vector<int>> readIntList(ValueSink& sink, const YAML::Node& node,
                                            const std::string& path) {
    if (!node.IsSequence()) {
        sink.error(path, node, path + ": expected a list of whole numbers, got " + describe(node));
        return std::nullopt;
    }
    std::vector<int> values(node.size(), 0);
    bool ok = true;
    for (std::size_t i = 0; i < node.size(); ++i) {
        const std::string item = indexPath(path, i);
        sink.record(item, node[i].Mark());
        const std::optional<int64_t> value = readInteger(
            sink, node[i], item, std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
        if (value)
            values[i] = static_cast<int>(*value);
        ok = ok && value.has_value();
    }
    if (!ok)
        return std::nullopt;
    return values;
}

namespace {

/// One key of a placement entry: {expert, ep_ranks, layer}, in the order they are written.
struct PlacementKey {
    const char* key;
    bool required;
};
constexpr PlacementKey kPlacementKeys[] = {{"expert", true}, {"ep_ranks", true}, {"layer", false}};

bool readPlacement(ValueSink& sink, const YAML::Node& node, const std::string& path,
                   ExpertPlacement& out) {
    if (!expectMap(sink, node, path))
        return false;
    MapEntries entries(sink, node, path);
    bool ok = true;
    std::vector<std::string> known;
    for (const PlacementKey& def : kPlacementKeys) {
        known.emplace_back(def.key);
        const std::string child = joinPath(path, def.key);
        const YAML::Node* value = entries.take(def.key);
        if (!value) {
            if (def.required) {
                sink.missing(path, child, "");
                ok = false;
            }
            continue;
        }
        if (std::string_view(def.key) == "ep_ranks") {
            const std::optional<std::vector<int>> ranks = readIntList(sink, *value, child);
            if (ranks)
                out.ep_ranks = *ranks;
            ok = ok && ranks.has_value();
            continue;
        }
        const std::optional<int64_t> number = readInteger(
            sink, *value, child, std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
        if (number)
            (std::string_view(def.key) == "expert" ? out.expert : out.layer) =
                static_cast<int>(*number);
        ok = ok && number.has_value();
    }
    entries.reportUnknown(known);
    return ok;
}

} // namespace

std::optional<std::vector<ExpertPlacement>> readPlacements(ValueSink& sink, const YAML::Node& node,
                                                           const std::string& path) {
    if (!node.IsSequence()) {
        sink.error(path, node,
                   path + ": expected a list of {expert, ep_ranks, layer} entries, got " +
                       describe(node));
        return std::nullopt;
    }
    std::vector<ExpertPlacement> placements(node.size());
    bool ok = true;
    for (std::size_t i = 0; i < node.size(); ++i) {
        const std::string item = indexPath(path, i);
        sink.record(item, node[i].Mark());
        ok = readPlacement(sink, node[i], item, placements[i]) && ok;
    }
    if (!ok)
        return std::nullopt;
    return placements;
}

const char* const kRankOrderWhat =
    "tp, cp, ep, dp and pp each once, joined by '-' (like tp-cp-ep-dp-pp)";

void emitPlacements(YAML::Emitter& out, const std::vector<ExpertPlacement>& placements) {
    out << YAML::BeginSeq;
    for (const ExpertPlacement& p : placements) {
        out << YAML::BeginMap;
        out << YAML::Key << "expert" << YAML::Value << formatNumber(p.expert);
        out << YAML::Key << "ep_ranks" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const int rank : p.ep_ranks)
            out << formatNumber(rank);
        out << YAML::EndSeq;
        if (p.layer != ExpertPlacement{}.layer)
            out << YAML::Key << "layer" << YAML::Value << formatNumber(p.layer);
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
}

std::string intListText(const std::vector<int>& values) {
    std::string text = "[";
    for (std::size_t i = 0; i < values.size(); ++i)
        text += (i ? ", " : "") + formatNumber(values[i]);
    return text + "]";
}

std::string placementsText(const std::vector<ExpertPlacement>& placements) {
    std::string text = "[";
    for (std::size_t i = 0; i < placements.size(); ++i) {
        const ExpertPlacement& p = placements[i];
        text += i ? ", " : "";
        text += "{expert: " + formatNumber(p.expert) + ", ep_ranks: " + intListText(p.ep_ranks);
        if (p.layer >= 0)
            text += ", layer: " + formatNumber(p.layer);
        text += "}";
    }
    return text + "]";
}

MapEntries::MapEntries(ValueSink& sink, const YAML::Node& map, const std::string& path)
    : sink_(sink)
    , path_(path) {
    if (!map.IsMap())
        return;
    for (auto it = map.begin(); it != map.end(); ++it) {
        if (!it->first.IsScalar()) {
            sink.error(path, it->first, describeParent(path) + ": a field name must be plain text");
            continue;
        }
        const std::string& key = it->first.Scalar();
        const std::string child = joinPath(path, key);
        // A hash index keeps a map of thousands of keys linear, not quadratic.
        const auto [earlier, fresh] = index_.try_emplace(key, entries_.size());
        if (!fresh) {
            sink.error(child, it->first,
                       "duplicate field '" + child + "' (first written on line " +
                           std::to_string(entries_[earlier->second].key_node.Mark().line + 1) +
                           ")");
            continue;
        }
        sink.record(child, it->first.Mark());
        entries_.push_back({key, it->first, it->second, false});
    }
}

const YAML::Node* MapEntries::take(const std::string& key) {
    const auto it = index_.find(key);
    if (it == index_.end())
        return nullptr;
    Entry& entry = entries_[it->second];
    entry.used = true;
    return &entry.value;
}

void MapEntries::reportUnknown(const std::vector<std::string>& known) const {
    // The first few are listed with a suggestion each; a file with thousands of stray keys gets
    // one closing count instead of thousands of lines.
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
        const std::string child = joinPath(path_, entry.key);
        const std::string guess = closestName(entry.key, known);
        sink_.error(child, entry.key_node,
                    "unknown field '" + child + "' — " +
                        (guess.empty() ? "expected one of: " + joinNames(known, ", ")
                                       : "did you mean '" + joinPath(path_, guess) + "'?"));
    }
    if (first_unlisted) {
        const int rest = unknown - limits::kMaxListedUnknownKeys;
        sink_.error(joinPath(path_, first_unlisted->key), first_unlisted->key_node,
                    "and " + std::to_string(rest) + " more unknown field" + (rest == 1 ? "" : "s") +
                        " in " + describeParent(path_) + " (only the first " +
                        std::to_string(limits::kMaxListedUnknownKeys) + " are listed)");
    }
}

std::string MapEntries::describeParent(const std::string& path) {
    return path.empty() ? std::string("the scenario") : path;
}

bool expectMap(ValueSink& sink, const YAML::Node& node, const std::string& path) {
    // An empty section ("layout:") is an empty map: its defaults apply.
    if (node.IsMap() || node.IsNull())
        return true;
    sink.error(path, node,
               MapEntries::describeParent(path) + ": expected a map of fields, got " +
                   describe(node));
    return false;
}

} // namespace moe::yaml
