#include "moe/io/megatron_tpe.h"

#include "moe/atomic_file.h"
#include "moe/model_costs.h"
#include "moe/placement.h"
#include "moe/topology.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

namespace moe::io {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

/// A broken log repeats its mistake on every line; past this many errors the rest add nothing.
constexpr std::size_t kMaxErrors = 20;
/// Ranks listed by name in a message before the rest are counted.
constexpr std::size_t kMaxListed = 8;

struct RankFile {
    int rank = 0;
    std::string path;
};

/// The sums of one (rank, local layer) over the lines read.
struct LayerLog {
    std::vector<uint64_t> tokens; ///< per local expert
    int64_t micro_batches = 0;
    std::set<int64_t> iterations;
};

struct Reading {
    std::map<std::pair<int, int>, LayerLog> logs; ///< (rank, local layer)
    int64_t decoder_lines = 0;
    int64_t mtp_lines = 0;
    int64_t other_iteration_lines = 0;
    int64_t min_entries_per_line = std::numeric_limits<int64_t>::max();
    int64_t max_entries_per_line = 0;
};

void addError(Diagnostics& diagnostics, const std::string& file, int line, int column,
              std::string message) {
    if (diagnostics.size() == kMaxErrors) {
        Diagnostic d;
        d.file = file;
        d.message = "too many errors; the rest of the logs were not checked";
        diagnostics.push_back(std::move(d));
    }
    if (diagnostics.size() > kMaxErrors)
        return;
    Diagnostic d;
    d.file = file;
    d.line = line;
    d.column = column;
    d.message = std::move(message);
    diagnostics.push_back(std::move(d));
}

void addError(Diagnostics& diagnostics, std::string message) {
    addError(diagnostics, "", 0, 0, std::move(message));
}

std::string listed(const std::vector<int>& numbers) {
    std::string text;
    for (std::size_t i = 0; i < numbers.size() && i < kMaxListed; ++i)
        text += (i ? ", " : "") + std::to_string(numbers[i]);
    if (numbers.size() > kMaxListed)
        text += " and " + std::to_string(numbers.size() - kMaxListed) + " more";
    return text;
}

/// "rank 7" or "ranks 1, 3".
std::string ranksText(const std::vector<int>& ranks) {
    return (ranks.size() == 1 ? "rank " : "ranks ") + listed(ranks);
}

/// "rank12.jsonl" -> 12.
std::optional<int> rankOfFileName(const fs::path& path) {
    const std::string name = path.filename().string();
    if (!name.starts_with("rank") || !name.ends_with(".jsonl") || name.size() <= 10)
        return std::nullopt;
    const std::string digits = name.substr(4, name.size() - 10);
    if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
        }))
        return std::nullopt;
    return std::stoi(digits);
}

/// The rank files named by `paths`, sorted by rank. A directory contributes its
/// tokens_per_expert/ folder when it has one (Megatron's --save directory), else its own
/// rank*.jsonl files.
std::vector<RankFile> findRankFiles(const std::vector<std::string>& paths,
                                    Diagnostics& diagnostics) {
    std::vector<RankFile> files;
    for (const std::string& path : paths) {
        std::error_code ec;
        if (!fs::is_directory(path, ec)) {
            const std::optional<int> rank = rankOfFileName(path);
            if (!rank)
                addError(diagnostics, path, 0, 0,
                         "cannot tell the rank of this file: Megatron names its tokens-per-expert "
                         "logs rankN.jsonl");
            else
                files.push_back({*rank, path});
            continue;
        }
        fs::path dir = path;
        if (fs::is_directory(dir / "tokens_per_expert", ec))
            dir /= "tokens_per_expert";
        std::size_t found = 0;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
            const std::optional<int> rank = rankOfFileName(it->path());
            std::error_code kind;
            if (rank && !it->is_directory(kind)) {
                files.push_back({*rank, it->path().string()});
                ++found;
            }
        }
        if (ec)
            addError(diagnostics, dir.string(), 0, 0, "cannot list the folder: " + ec.message());
        else if (found == 0)
            addError(diagnostics, dir.string(), 0, 0,
                     "no rankN.jsonl files here (Megatron writes them to "
                     "{save}/tokens_per_expert/ with --save-tokens-per-expert-interval)");
    }
    std::sort(files.begin(), files.end(),
              [](const RankFile& a, const RankFile& b) { return a.rank < b.rank; });
    for (std::size_t i = 1; i < files.size(); ++i)
        if (files[i].rank == files[i - 1].rank)
            addError(diagnostics, files[i].path, 0, 0,
                     "rank " + std::to_string(files[i].rank) + " is given twice (also " +
                         files[i - 1].path + ")");
    return files;
}

/// nlohmann-json's message without its "[json.exception...] parse error at line 1, column 9: "
/// prefix: the diagnostic already says where, in the file's own lines.
std::string withoutPosition(const std::string& message) {
    const std::size_t column = message.find(", column ");
    const std::size_t colon = message.find(": ", column == std::string::npos ? 0 : column);
    return colon == std::string::npos ? message : message.substr(colon + 2);
}

/// Column of `"key"` in the raw line (1-based), to point at the field a message is about.
int columnOf(std::string_view line, const char* key) {
    const std::size_t at = line.find("\"" + std::string(key) + "\"");
    return at == std::string_view::npos ? 0 : static_cast<int>(at) + 1;
}

std::optional<int64_t> wholeNumber(const json& object, const char* key) {
    const auto it = object.find(key);
    if (it == object.end() || !it->is_number_integer())
        return std::nullopt;
    if (it->is_number_unsigned())
        return it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                   ? std::nullopt
                   : std::optional<int64_t>(static_cast<int64_t>(it->get<uint64_t>()));
    return it->get<int64_t>();
}

/// The scenario's layout as the logs need it.
struct Layout {
    int world = 0;
    int experts = 0;
    int ep = 1;
    int edp = 1;
    int local_experts = 0;
    int dense_layers = 0;
    int moe_layers = 0;
    std::vector<StageLayers> stages;
    std::vector<RankCoords> coords; ///< per global rank
    std::vector<int> rank_at;       ///< (stage, expert-DP, EP) at expert-TP 0 -> rank

    int rankAt(int stage, int edp_index, int ep_index) const {
        return rank_at[static_cast<std::size_t>((stage * edp + edp_index) * ep + ep_index)];
    }
};

std::optional<Layout> layoutOf(const Scenario& s, Diagnostics& diagnostics) {
    const LayoutSpec& l = s.layout;
    if (!s.model.isMoe()) {
        addError(diagnostics, "the scenario's model has no experts (model.experts = 0)");
        return std::nullopt;
    }
    // Megatron keys the records by the chunk-local layer index only, so with virtual stages
    // the chunks' layers are summed into one record (see the header).
    if (l.vpp > 1) {
        addError(diagnostics,
                 "the scenario has virtual pipeline stages (layout.vpp = " + std::to_string(l.vpp) +
                     "): Megatron's log keys each record by the layer's index inside its chunk "
                     "only, so the chunks' layers are summed together and cannot be told apart");
        return std::nullopt;
    }
    if (l.pp > 1 && s.model.layers % l.pp != 0) {
        addError(diagnostics,
                 "model.layers = " + std::to_string(s.model.layers) +
                     " does not divide over layout.pp = " + std::to_string(l.pp) +
                     ": Megatron then needs --decoder-first/last-pipeline-num-layers, which the "
                     "scenario does not model, so local layer numbers cannot be mapped");
        return std::nullopt;
    }
    const int64_t dense_ranks = int64_t(l.tp) * l.cp * l.dp;
    if (dense_ranks * l.pp != s.cluster.gpuCount() || l.ep < 1 || l.etp < 1 ||
        dense_ranks % (int64_t(l.ep) * l.etp) != 0 || s.model.experts % l.ep != 0) {
        addError(diagnostics, "the scenario's layout does not cover its GPUs or experts (moe-plan "
                              "validate says why)");
        return std::nullopt;
    }
    Layout out;
    out.world = s.cluster.gpuCount();
    out.experts = s.model.experts;
    out.ep = l.ep;
    out.edp = l.expertDp();
    out.local_experts = s.model.experts / l.ep;
    out.dense_layers = s.model.dense_layers;
    out.moe_layers = s.model.moeLayers();
    out.stages = splitLayers(s.model, l);
    const Placement placement = placeLayout(s);
    out.coords.resize(static_cast<std::size_t>(placement.gpuCount()));
    for (int gpu = 0; gpu < placement.gpuCount(); ++gpu)
        out.coords[static_cast<std::size_t>(gpu)] = placement.coordsOf(gpu);
    out.rank_at.assign(static_cast<std::size_t>(l.pp) * out.edp * out.ep, -1);
    for (int r = 0; r < out.world; ++r) {
        const RankCoords& c = out.coords[static_cast<std::size_t>(r)];
        if (c.etp == 0)
            out.rank_at[static_cast<std::size_t>((c.pp * out.edp + c.edp) * out.ep + c.ep)] = r;
    }
    return out;
}

/// Adds `add` to `into` cell by cell; false (nothing half-added) if a sum would overflow.
bool addCounts(std::vector<uint64_t>& into, std::size_t offset, const std::vector<uint64_t>& add) {
    for (std::size_t i = 0; i < add.size(); ++i)
        if (into[offset + i] > std::numeric_limits<uint64_t>::max() - add[i])
            return false;
    for (std::size_t i = 0; i < add.size(); ++i)
        into[offset + i] += add[i];
    return true;
}

/// Which lines count: one iteration (--iter), the iterations every log shares, or all.
struct IterationFilter {
    std::optional<int64_t> only;
    std::optional<std::set<int64_t>> among;
    bool keeps(int64_t iteration) const {
        return (!only || iteration == *only) && (!among || among->count(iteration) > 0);
    }
};

/// The counts of one line's "tpe": per local expert, summed over its micro-batch entries.
std::optional<std::vector<uint64_t>> sumMicroBatches(const json& tpe, int local_experts,
                                                     const std::string& where,
                                                     std::string& problem) {
    if (!tpe.is_array()) {
        problem = "\"tpe\" must be a list of micro-batches, each a list of token counts";
        return std::nullopt;
    }
    std::vector<uint64_t> sums(static_cast<std::size_t>(local_experts), 0);
    for (std::size_t mb = 0; mb < tpe.size(); ++mb) {
        const json& entry = tpe[mb];
        if (!entry.is_array() || entry.size() != sums.size()) {
            problem = "micro-batch " + std::to_string(mb) + " of \"tpe\" has " +
                      (entry.is_array() ? std::to_string(entry.size()) + " counts"
                                        : "no list of counts") +
                      ", but " + where + " holds " + std::to_string(local_experts) +
                      " experts (model.experts / layout.ep)";
            return std::nullopt;
        }
        for (std::size_t e = 0; e < sums.size(); ++e) {
            const json& count = entry[e];
            if (!count.is_number_unsigned()) {
                problem = "micro-batch " + std::to_string(mb) + " of \"tpe\" has " + count.dump() +
                          " where a token count (a whole number >= 0) belongs";
                return std::nullopt;
            }
            const uint64_t tokens = count.get<uint64_t>();
            if (sums[e] > std::numeric_limits<uint64_t>::max() - tokens) {
                problem = "the token counts of \"tpe\" overflow a 64-bit sum";
                return std::nullopt;
            }
            sums[e] += tokens;
        }
    }
    return sums;
}

/// Reads one rank file's lines into `reading`.
void readRankFile(const RankFile& file, const Layout& layout, const IterationFilter& filter,
                  Reading& reading, std::set<int64_t>& iterations_seen, Diagnostics& diagnostics) {
    const RankCoords& coords = layout.coords[static_cast<std::size_t>(file.rank)];
    const StageLayers& stage = layout.stages[static_cast<std::size_t>(coords.pp)];
    const std::string where = "rank " + std::to_string(file.rank) + " (EP rank " +
                              std::to_string(coords.ep) + " of pipeline stage " +
                              std::to_string(coords.pp) + ")";
    const std::string problem = readFileLines(file.path, [&](int line, std::string_view text) {
        if (diagnostics.size() > kMaxErrors)
            return;
        if (text.ends_with('\r'))
            text.remove_suffix(1);
        if (text.find_first_not_of(" \t") == std::string_view::npos)
            return;
        const auto error = [&](const char* key, std::string message) {
            addError(diagnostics, file.path, line, key ? columnOf(text, key) : 0,
                     std::move(message));
        };
        json object;
        try {
            object = json::parse(text);
        } catch (const json::parse_error& e) {
            addError(diagnostics, file.path, line,
                     static_cast<int>(std::clamp<std::size_t>(e.byte, 1, text.size())),
                     "not valid JSON: " + withoutPosition(e.what()));
            return;
        }
        if (!object.is_object()) {
            error(nullptr, "expected a JSON object per line");
            return;
        }
        const auto block = object.find("block");
        if (block != object.end() && *block == "mtp") {
            ++reading.mtp_lines;
            return;
        }
        if (block == object.end() || *block != "decoder") {
            error("block", "\"block\" must be \"decoder\" or \"mtp\"");
            return;
        }
        const std::optional<int64_t> iteration = wholeNumber(object, "iter");
        if (!iteration || *iteration < 0) {
            error("iter", "\"iter\" must be a whole number >= 0");
            return;
        }
        iterations_seen.insert(*iteration);
        if (!filter.keeps(*iteration)) {
            ++reading.other_iteration_lines;
            return;
        }
        const std::optional<int64_t> layer = wholeNumber(object, "layer");
        if (!layer || *layer < 0) {
            error("layer", "\"layer\" must be a whole number >= 0 (N of decoder.layers.N)");
            return;
        }
        if (*layer >= stage.layers) {
            error("layer", "layer " + std::to_string(*layer) + " is not in pipeline stage " +
                               std::to_string(coords.pp) + ", which holds " +
                               std::to_string(stage.layers) +
                               " layers in the scenario's layout (local 0.." +
                               std::to_string(stage.layers - 1) + ")");
            return;
        }
        const int global = stage.layer_indices[static_cast<std::size_t>(*layer)];
        if (global < layout.dense_layers) {
            error("layer", "layer " + std::to_string(*layer) + " of pipeline stage " +
                               std::to_string(coords.pp) + " is layer " + std::to_string(global) +
                               ", dense in the scenario (model.dense_layers = " +
                               std::to_string(layout.dense_layers) + "), but it has expert counts");
            return;
        }
        const auto tpe = object.find("tpe");
        std::string tpe_problem = "\"tpe\" is missing";
        const std::optional<std::vector<uint64_t>> sums =
            tpe == object.end() ? std::nullopt
                                : sumMicroBatches(*tpe, layout.local_experts, where, tpe_problem);
        if (!sums) {
            error("tpe", tpe_problem);
            return;
        }
        LayerLog& log = reading.logs[{file.rank, static_cast<int>(*layer)}];
        if (!log.iterations.insert(*iteration).second) {
            error("iter", "iteration " + std::to_string(*iteration) + " of layer " +
                              std::to_string(*layer) +
                              " is logged twice in this file (was the iteration run again?); "
                              "keep one of the lines");
            return;
        }
        log.tokens.resize(sums->size(), 0);
        if (!addCounts(log.tokens, 0, *sums)) {
            error("tpe",
                  "the token counts of layer " + std::to_string(*layer) + " overflow a 64-bit sum");
            return;
        }
        const auto entries = static_cast<int64_t>(tpe->size());
        log.micro_batches += entries;
        ++reading.decoder_lines;
        reading.min_entries_per_line = std::min(reading.min_entries_per_line, entries);
        reading.max_entries_per_line = std::max(reading.max_entries_per_line, entries);
    });
    if (!problem.empty())
        addError(diagnostics, file.path, 0, 0, "cannot read file: " + problem);
}

Reading readRankFiles(const std::vector<RankFile>& files, const Layout& layout,
                      const IterationFilter& filter, std::set<int64_t>& iterations_seen,
                      Diagnostics& diagnostics) {
    Reading reading;
    for (const RankFile& file : files)
        readRankFile(file, layout, filter, reading, iterations_seen, diagnostics);
    return reading;
}

std::string iterationsText(const std::set<int64_t>& iterations) {
    if (iterations.size() > kMaxListed)
        return std::to_string(*iterations.begin()) + ".." + std::to_string(*iterations.rbegin()) +
               " (" + std::to_string(iterations.size()) + " iterations)";
    std::string text;
    for (int64_t i : iterations)
        text += (text.empty() ? "" : ", ") + std::to_string(i);
    return text;
}

std::string csvOf(const std::vector<std::vector<uint64_t>>& counts, int experts) {
    std::string text;
    for (int e = 0; e < experts; ++e)
        text += (e ? ",expert_" : "expert_") + std::to_string(e);
    text += "\n";
    for (const std::vector<uint64_t>& row : counts) {
        for (std::size_t e = 0; e < row.size(); ++e)
            text += (e ? "," : "") + std::to_string(row[e]);
        text += "\n";
    }
    return text;
}

/// The rank files the sums use: expert-TP rank 0 of each (stage, expert-DP, EP) position. Files
/// of expert-TP ranks > 0 log the same counts and go to `repeating`; a rank outside the layout
/// is an error.
std::vector<RankFile> selectRankFiles(const std::vector<RankFile>& files, const Layout& layout,
                                      std::vector<int>& repeating, Diagnostics& diagnostics) {
    std::vector<RankFile> used;
    for (const RankFile& f : files) {
        if (f.rank >= layout.world)
            addError(diagnostics, f.path, 0, 0,
                     "rank " + std::to_string(f.rank) + " is not in the scenario's layout of " +
                         std::to_string(layout.world) + " ranks (tp x cp x dp x pp)");
        else if (layout.coords[static_cast<std::size_t>(f.rank)].etp != 0)
            repeating.push_back(f.rank);
        else
            used.push_back(f);
    }
    return used;
}

/// The iterations read, for the summary: those kept, and all that any file logged.
struct IterationsRead {
    IterationFilter filter;
    std::set<int64_t> logged;
};

/// Pass 1 reads everything (or --iter's lines). Ranks stop mid-run at different points, so if
/// the logs disagree on which iterations they hold, pass 2 keeps the shared ones: summing an
/// iteration that only some EP ranks logged would skew their experts against the others.
std::optional<Reading> readSharedIterations(const std::vector<RankFile>& used, const Layout& layout,
                                            const MegatronTpeOptions& options, IterationsRead& read,
                                            MegatronTpeImport& out) {
    Diagnostics& diagnostics = out.diagnostics;
    read.filter = IterationFilter{options.iteration, std::nullopt};
    std::set<int64_t> iterations_seen;
    Reading reading = readRankFiles(used, layout, read.filter, iterations_seen, diagnostics);
    if (hasErrors(diagnostics))
        return std::nullopt;
    if (reading.logs.empty()) {
        addError(diagnostics,
                 options.iteration
                     ? "no decoder line of iteration " + std::to_string(*options.iteration) +
                           " (the logs hold iterations " + iterationsText(iterations_seen) + ")"
                     : std::string("the rank files hold no decoder lines"));
        return std::nullopt;
    }
    std::set<int64_t> shared = reading.logs.begin()->second.iterations;
    std::set<int64_t>& logged = read.logged;
    for (const auto& [key, log] : reading.logs) {
        std::set<int64_t> both;
        std::set_intersection(shared.begin(), shared.end(), log.iterations.begin(),
                              log.iterations.end(), std::inserter(both, both.end()));
        shared = std::move(both);
        logged.insert(log.iterations.begin(), log.iterations.end());
    }
    if (shared.empty()) {
        addError(diagnostics, "no iteration is logged by every rank file and layer (they hold " +
                                  iterationsText(logged) + " between them)");
        return std::nullopt;
    }
    if (shared != logged) {
        std::set<int64_t> dropped;
        std::set_difference(logged.begin(), logged.end(), shared.begin(), shared.end(),
                            std::inserter(dropped, dropped.end()));
        out.notes.push_back("Left out iterations " + iterationsText(dropped) +
                            ": not every rank file logged them for every layer");
        read.filter.among = shared;
        reading = readRankFiles(used, layout, read.filter, iterations_seen, diagnostics);
    }
    return reading;
}

/// What summing found besides the counts.
struct LayerSums {
    int64_t micro_batches = 0;
    std::vector<std::string> partial; ///< MoE layers summed over fewer than all replicas
};

/// Sums each MoE layer into out.counts over the expert-DP replicas whose EP ranks all logged
/// it; a layer no replica logged completely is an error.
LayerSums sumMoeLayers(const Layout& layout, const Reading& reading, MegatronTpeImport& out) {
    Diagnostics& diagnostics = out.diagnostics;
    LayerSums sums;
    out.counts.assign(static_cast<std::size_t>(layout.moe_layers),
                      std::vector<uint64_t>(static_cast<std::size_t>(layout.experts), 0));
    for (const StageLayers& stage : layout.stages) {
        for (int local = 0; local < stage.layers; ++local) {
            const int global = stage.layer_indices[static_cast<std::size_t>(local)];
            const int moe_layer = global - layout.dense_layers;
            if (moe_layer < 0)
                continue;
            std::vector<uint64_t>& row = out.counts[static_cast<std::size_t>(moe_layer)];
            std::vector<int> missing;
            int replicas = 0;
            for (int g = 0; g < layout.edp; ++g) {
                std::vector<const LayerLog*> logs;
                for (int e = 0; e < layout.ep; ++e) {
                    const int rank = layout.rankAt(stage.stage, g, e);
                    const auto it = reading.logs.find({rank, local});
                    if (it == reading.logs.end())
                        missing.push_back(rank);
                    else
                        logs.push_back(&it->second);
                }
                if (logs.size() != static_cast<std::size_t>(layout.ep))
                    continue;
                for (int e = 0; e < layout.ep; ++e) {
                    const LayerLog& log = *logs[static_cast<std::size_t>(e)];
                    if (!addCounts(row, static_cast<std::size_t>(e * layout.local_experts),
                                   log.tokens)) {
                        addError(diagnostics, "the token counts of MoE layer " +
                                                  std::to_string(moe_layer) +
                                                  " overflow a 64-bit sum");
                        return sums;
                    }
                    sums.micro_batches += log.micro_batches;
                }
                ++replicas;
            }
            const std::string name = "MoE layer " + std::to_string(moe_layer) + " (layer " +
                                     std::to_string(global) + ", local layer " +
                                     std::to_string(local) + " of pipeline stage " +
                                     std::to_string(stage.stage) + ")";
            if (replicas == 0)
                addError(diagnostics, name +
                                          ": no expert-data-parallel replica has the logs of all "
                                          "its EP ranks; missing: " +
                                          ranksText(missing));
            else if (replicas < layout.edp)
                sums.partial.push_back(name + ": " + std::to_string(replicas) + " of " +
                                       std::to_string(layout.edp) + " replicas (no log from " +
                                       ranksText(missing) + ")");
        }
    }
    return sums;
}

/// The summary: what was read and summed first, then what was left out or looks off.
void addSummaryNotes(MegatronTpeImport& out, const Scenario& scenario, const Layout& layout,
                     const MegatronTpeOptions& options, const std::vector<RankFile>& used,
                     const std::vector<int>& repeating, const Reading& reading,
                     const IterationsRead& read, const LayerSums& sums) {
    std::vector<int> read_ranks;
    for (const RankFile& f : used)
        read_ranks.push_back(f.rank);
    const LayoutSpec& l = scenario.layout;
    out.notes.insert(out.notes.begin(),
                     {"Read " + std::to_string(used.size()) + " rank files (" +
                          ranksText(read_ranks) + ") of the layout's " +
                          std::to_string(layout.world) + " ranks: PP=" + std::to_string(l.pp) +
                          ", EP=" + std::to_string(l.ep) + ", expert-TP=" + std::to_string(l.etp) +
                          ", expert-DP=" + std::to_string(layout.edp) + ", order " +
                          toString(l.order),
                      "Summed " + std::to_string(reading.decoder_lines) + " lines: iterations " +
                          iterationsText(read.filter.among ? *read.filter.among : read.logged) +
                          ", " + std::to_string(sums.micro_batches) + " micro-batch entries, " +
                          std::to_string(layout.moe_layers) + " MoE layers x " +
                          std::to_string(layout.experts) + " experts"});
    if (!sums.partial.empty()) {
        std::string text = "Expert-DP replicas left out for lack of rank files (ratios assume the "
                           "replicas see alike data):";
        for (std::size_t i = 0; i < sums.partial.size() && i < kMaxListed; ++i)
            text += "\n    " + sums.partial[i];
        if (sums.partial.size() > kMaxListed)
            text += "\n    and " + std::to_string(sums.partial.size() - kMaxListed) +
                    " more MoE layers";
        out.notes.push_back(text);
    }
    if (!repeating.empty())
        out.notes.push_back("Skipped " + std::to_string(repeating.size()) +
                            " files of expert-TP ranks > 0 (" + ranksText(repeating) +
                            "): they log the same counts as expert-TP rank 0");
    if (reading.mtp_lines > 0)
        out.notes.push_back("Skipped " + std::to_string(reading.mtp_lines) +
                            " MTP lines: the scenario has no multi-token-prediction layers");
    if (options.iteration && reading.other_iteration_lines > 0)
        out.notes.push_back("Skipped " + std::to_string(reading.other_iteration_lines) +
                            " lines of other iterations (--iter " +
                            std::to_string(*options.iteration) + ")");
    const int64_t per_step = microBatchesPerStep(scenario);
    if (reading.min_entries_per_line != per_step || reading.max_entries_per_line != per_step)
        out.notes.push_back(
            "Lines hold " + std::to_string(reading.min_entries_per_line) +
            (reading.max_entries_per_line != reading.min_entries_per_line
                 ? " to " + std::to_string(reading.max_entries_per_line)
                 : std::string()) +
            " micro-batch entries; the scenario's batch gives " + std::to_string(per_step) +
            " per step (global_batch / (dp x micro_batch)): the run's batch differs, or "
            "activation recompute ran the forward again (Megatron's hook logs that too). The "
            "counts are summed as logged; each row's ratios are what the routing uses.");
}

} // namespace

MegatronTpeImport importMegatronTpe(const std::vector<std::string>& paths, const Scenario& scenario,
                                    const MegatronTpeOptions& options) {
    MegatronTpeImport out;
    Diagnostics& diagnostics = out.diagnostics;
    const std::optional<Layout> layout = layoutOf(scenario, diagnostics);
    if (!layout)
        return out;
    std::vector<int> repeating; // expert-TP ranks > 0
    const std::vector<RankFile> used =
        selectRankFiles(findRankFiles(paths, diagnostics), *layout, repeating, diagnostics);
    if (hasErrors(diagnostics))
        return out;
    IterationsRead read;
    const std::optional<Reading> reading = readSharedIterations(used, *layout, options, read, out);
    if (!reading)
        return out;
    const LayerSums sums = sumMoeLayers(*layout, *reading, out);
    if (hasErrors(diagnostics)) {
        out.counts.clear();
        return out;
    }
    out.csv = csvOf(out.counts, layout->experts);
    addSummaryNotes(out, scenario, *layout, options, used, repeating, *reading, read, sums);
    return out;
}

} // namespace moe::io
