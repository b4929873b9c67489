#pragma once
// Private to the scenario format: reading YAML values strictly (yaml-cpp's own conversions
// accept too much, e.g. "8.5" as an int on some paths, and say nothing about which field was
// wrong), writing them back, and the keys of one YAML map. Shared by the loader, the writer,
// typed edits parsing typed text, and the schema's field accessors.

#include "moe/diagnostics.h"
#include "moe/scenario.h"

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace moe::yaml {

/// Where value errors go: the loader (with the file's lines) or an edit (without).
class ValueSink {
public:
    virtual ~ValueSink() = default;
    /// An error about the value `at` of `field`.
    virtual void error(const std::string& field, const YAML::Node& at, std::string message) = 0;
    /// A required key `field` is not in the map at `parent`; `why` says what requires it.
    virtual void missing(const std::string& parent, const std::string& field,
                         const std::string& why) = 0;
    /// Where `field` was written (list items; map keys are recorded by MapEntries).
    virtual void record(const std::string& field, const YAML::Mark& mark) {
        (void)field;
        (void)mark;
    }
};

/// Collects errors without positions (typed edits of values typed as text).
class DiagnosticSink : public ValueSink {
public:
    Diagnostics diagnostics;
    void error(const std::string& field, const YAML::Node& at, std::string message) override;
    void missing(const std::string& parent, const std::string& field,
                 const std::string& why) override;
};

std::string joinPath(const std::string& parent, const std::string& key);
std::string indexPath(const std::string& list, std::size_t index);
std::string joinNames(const std::vector<std::string>& names, const char* separator);
/// 'text' (at most 40 characters, control characters made visible).
std::string shortQuote(const std::string& text);
/// How a value reads in "expected X, got Y": "nothing", "a list", "a map", 'text'.
std::string describe(const YAML::Node& node);
/// The known name a misspelt one most likely meant, or "" when none is close (did-you-mean).
std::string closestName(const std::string& written, const std::vector<std::string>& known);

/// The scalar text of `node`, or nullopt after reporting "expected <what>".
std::optional<std::string> scalarText(ValueSink& sink, const YAML::Node& node,
                                      const std::string& path, const std::string& what);
/// One of `names`, or nullopt after reporting "expected one of a | b, got 'x'".
std::optional<std::string> pickName(ValueSink& sink, const YAML::Node& node,
                                    const std::string& path, const std::vector<std::string>& names);

enum class WholeParse { ok, not_whole, out_of_range };
/// Whole numbers may also be written as whole-valued floats ("1e3", "8.0"); "8.5" is refused.
WholeParse parseWhole(const std::string& text, int64_t& out, int64_t lowest, int64_t highest);
WholeParse parseWhole(const std::string& text, uint64_t& out);

// Readers of the scenario's value types; each reports its own errors by path and returns
// nullopt when the value is not usable.
std::optional<int64_t> readInteger(ValueSink& sink, const YAML::Node& node, const std::string& path,
                                   int64_t lowest, int64_t highest);
std::optional<uint64_t> readUnsigned(ValueSink& sink, const YAML::Node& node,
                                     const std::string& path);
std::optional<double> readReal(ValueSink& sink, const YAML::Node& node, const std::string& path);
std::optional<std::string> readText(ValueSink& sink, const YAML::Node& node,
                                    const std::string& path);
std::optional<std::vector<int>> readIntList(ValueSink& sink, const YAML::Node& node,
                                            const std::string& path);
std::optional<std::vector<ExpertPlacement>> readPlacements(ValueSink& sink, const YAML::Node& node,
                                                           const std::string& path);
/// "expected a whole number from MIN to MAX, got 'x'".
std::string outOfRangeMessage(const std::string& path, int64_t lowest, uint64_t highest,
                              const std::string& text);

/// How layout.order is described in messages.
extern const char* const kRankOrderWhat;

void emitPlacements(YAML::Emitter& out, const std::vector<ExpertPlacement>& placements);
/// Flow-style text of the lists, as in a file: "[3, 5]", "[{expert: 3, ep_ranks: [0, 1]}]".
std::string intListText(const std::vector<int>& values);
std::string placementsText(const std::vector<ExpertPlacement>& placements);

/// The keys of one YAML map, remembering which ones a reader consumed, so that the others are
/// reported as unknown (with a did-you-mean) and duplicates as errors.
class MapEntries {
public:
    MapEntries(ValueSink& sink, const YAML::Node& map, const std::string& path);
    /// The value of `key`, marking it consumed; nullptr when the map does not have it.
    const YAML::Node* take(const std::string& key);
    /// Every key not taken, as "unknown field" errors against the `known` keys.
    void reportUnknown(const std::vector<std::string>& known) const;
    static std::string describeParent(const std::string& path);

private:
    struct Entry {
        std::string key;
        YAML::Node key_node;
        YAML::Node value;
        bool used = false;
    };
    ValueSink& sink_;
    std::string path_;
    std::vector<Entry> entries_;
    std::unordered_map<std::string, std::size_t> index_; ///< key -> its entry
};

/// False (after reporting "expected a map of fields") when `node` is neither a map nor empty.
bool expectMap(ValueSink& sink, const YAML::Node& node, const std::string& path);

} // namespace moe::yaml
