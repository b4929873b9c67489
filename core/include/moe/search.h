#pragma once
// Layout search: enumerates the parallel layouts of a scenario's cluster and model (TP, CP, PP
// and virtual stages, DP, EP, expert-TP, the rank orders that change a placement, micro-batch
// size, recomputation, pipeline schedule), prunes invalid and out-of-memory layouts cheaply
// with the reason counted, and those whose compute alone is slower than every layout the result
// reports (a proven lower bound), evaluates the rest with evaluate(), ranks them, keeps the
// Pareto front over step time, memory headroom and cross-node traffic, and explains the winner
// from the figures. Deterministic: the same scenario and options give the same result, whatever the
// thread count.

#include "moe/diagnostics.h"
#include "moe/evaluate.h"
#include "moe/model_costs.h"
#include "moe/progress.h"
#include "moe/scenario.h"
#include "moe/shard.h"
#include "moe/warnings.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace moe {

/// What "best" means. Ties (and the other objectives' ties) fall back to a stable layout key.
enum class SearchObjective {
    step_time,         ///< shortest step = most tokens per second
    memory_headroom,   ///< most HBM left on the tightest GPU
    cross_node_traffic ///< fewest bytes per GPU through the NIC
};
const char* toString(SearchObjective o);
std::optional<SearchObjective> parseSearchObjective(const std::string& s);

struct SearchOptions {
    /// "key=value" constraints: layout.tp, layout.cp, layout.pp, layout.vpp, layout.dp,
    /// layout.ep, layout.etp, layout.order, layout.schedule, training.micro_batch,
    /// training.recompute. Several pins of one key allow any of their values.
    std::vector<std::string> pins;
    int max_pp = 0; ///< deepest pipeline tried; 0 = up to the layer count
    /// Most virtual stages per rank tried with the interleaved schedule; 0 = every count the
    /// layer split allows (evenly, or with the balanced end stages of balancedEndStageLayers).
    int max_vpp = 0;
    /// Largest micro-batch tried; 0 = every divisor of the per-replica batch (pinned values and
    /// the scenario's own are always tried).
    int max_micro_batch = 0;
    /// Context parallelism is for long sequences: CP degrees that leave fewer tokens than this
    /// per CP rank are not tried (unless pinned or the scenario's own).
    int min_tokens_per_cp_rank = 2048;
    int top_n = 10;      ///< ranked candidates kept in the result
    int max_pareto = 20; ///< Pareto-front candidates kept in the result (the count is exact)
    int threads = 0;     ///< 0 = std::thread::hardware_concurrency()
    /// Share of HBM a recommended layout must leave free on its tightest GPU, on top of the
    /// memory model's own workspace allowance: activation and fragmentation estimates are good
    /// to a few percent, and the report warns "memory-tight" inside the same share
    /// (warning_threshold::kMemoryTightShare), so the search does not recommend what the report
    /// would flag. 0 accepts a layout that fills HBM.
    double memory_reserve_share = warning_threshold::kMemoryTightShare;
    /// Step times within this share of the fastest are a tie (far below the model's accuracy);
    /// ties go to the layout with the least model parallelism (TP x CP x PP), the rule of thumb
    /// "as much data parallelism as memory allows": fewer moving parts for the same speed.
    /// Only for the step_time objective; 0 ranks by step time alone.
    double tie_share = 0.005;
    SearchObjective objective = SearchObjective::step_time;
    /// step_time objective: skip the layouts whose compute alone (stepComputeFloor_s) takes
    /// longer than every step the result reports (the ranked ones, the near-tie window, the
    /// scenario's own layout and the best with another EP, TP and PP), counted as `bound`. The
    /// ranking and explanation are exactly those of the unpruned search; the Pareto front is
    /// exact up to that bound and stops there (SearchResult::pareto_bound_s).
    bool prune = true;
    /// Called after each structure (a combination of degrees) with (done, total) of the
    /// shard's structures; returning false stops the search (the result is then `interrupted`)
    /// once the structures already running finish. Calls never overlap, `done` never decreases,
    /// and there is no call after the one that returned false.
    ProgressFn progress;
};

/// The figures of one evaluated layout that the ranking, the Pareto front and tables use, all
/// copied from its Report.
struct SearchFigures {
    double step_time_s = 0;
    double tokens_per_s = 0;
    double tokens_per_s_per_gpu = 0;
    double mfu = 0;
    double memory_bytes = 0; ///< the tightest stage's total per GPU
    double hbm_bytes = 0;
    double margin_bytes = 0;     ///< hbm - memory (negative = does not fit)
    double cross_node_bytes = 0; ///< per GPU per step through the NIC (slowest stage)
    double scale_up_bytes = 0;   ///< per GPU per step over NVLink (slowest stage)
    int micro_batches = 0;
    StepBreakdown step;
    bool fits = true;
};
SearchFigures figuresOf(const Report& report);

struct SearchCandidate {
    Scenario scenario; ///< the input scenario with this layout, micro-batch and recompute
    SearchFigures figures;
    int rank = 0;          ///< 1-based place in the whole ranking; 0 = not ranked (input only)
    bool is_input = false; ///< the scenario's own layout
};

/// Why a candidate was not evaluated. Each enumerated candidate is counted once, under the
/// first check that rejects it: pins, the wide-TP rule, validation (divisibility, batch,
/// pipeline, other), memory, recompute, then the bound (SearchOptions::prune).
enum class RejectReason {
    pin,          ///< excluded by a pin
    divisibility, ///< degrees vs GPUs, heads, KV heads, FFN sizes, experts, sequence length
    batch,        ///< global batch not divisible by DP x micro-batch
    pipeline,     ///< schedule rules: virtual stages, DualPipe, interleaving, stages vs layers
    other,        ///< any other validation error
    memory,       ///< does not fit in HBM (minus the reserve) on some stage
    recompute,    ///< heavier recomputation while a lighter one fits (never faster)
    /// TP wider than a scale-up domain (their per-layer collectives would ride the
    /// fabric) while layouts inside a domain fit: searched only when none does.
    wide_tp,
    /// Its compute alone (stepComputeFloor_s) takes longer than every step the result reports
    /// (SearchOptions::prune), so it cannot rank among them.
    bound,
    count
};
constexpr int kRejectReasonCount = static_cast<int>(RejectReason::count);
const char* toString(RejectReason r); ///< short id, e.g. "memory"
const char* describe(RejectReason r); ///< plain words for tables

struct RejectionCount {
    int64_t count = 0;
    std::string example; ///< the first diagnostic or figure that caused it, "" if none
};

struct SearchResult {
    /// Bad pins or an input scenario whose non-layout parts are invalid; the search did not
    /// run when this holds an error.
    Diagnostics diagnostics;
    /// Best first, at most top_n: by the objective, except that near-ties with the fastest
    /// (SearchOptions::tie_share) go first to the least model parallelism.
    std::vector<SearchCandidate> ranked;
    /// Not dominated in (step time, memory headroom, cross-node bytes); by step time, at most
    /// max_pareto of them.
    std::vector<SearchCandidate> pareto;
    int64_t pareto_total = 0;
    /// When the search pruned by bound: the front holds only the layouts up to this step time
    /// (exact there: every faster layout was evaluated); 0 = nothing pruned, the whole front.
    double pareto_bound_s = 0;
    /// The scenario's own layout, evaluated even when it is invalid for memory (then
    /// figures.fits is false and rank 0); empty when its layout fails validation.
    std::optional<SearchCandidate> input;
    std::array<RejectionCount, kRejectReasonCount> rejected{};
    int64_t candidates = 0; ///< enumerated (evaluated + every rejection)
    int64_t evaluated = 0;  ///< went through evaluate() and were ranked
    double elapsed_s = 0;
    double cpu_s = 0;            ///< process CPU time of the search (all threads)
    double evaluated_per_s = 0;  ///< full evaluations per second
    double candidates_per_s = 0; ///< enumerated candidates (pruned or evaluated) per second
    int threads = 1;
    /// Why the winner wins, generated from the figures; why nothing fits when nothing does.
    std::vector<std::string> explanation;
    bool interrupted = false; ///< SearchOptions::progress stopped it; nothing else is set

    bool ok() const { return !hasErrors(diagnostics); }
    bool found() const { return !ranked.empty(); }
    int64_t rejectedCount(RejectReason r) const { return rejected[static_cast<size_t>(r)].count; }
};

// ---- A search split over machines ------------------------------------------------------------
//
// The layouts are grouped by structure (TP, CP, PP, DP, EP and expert-TP degrees); a shard takes
// every count-th structure in enumeration order, starting at its index, and records what each
// gave. mergeSearchParts puts the structures back in enumeration order and ranks, fronts and
// explains them with the same code as an unsharded search, which is itself one part merged:
// the union of the parts is exactly the unsharded result (tests/test_search checks it). The only
// rule that spans structures, "TP wider than a scale-up domain only when nothing narrower
// fits", is settled at the merge: a shard that found nothing narrower records both outcomes of
// its wide structures (searched, and only counted as wide_tp).

/// A layout the search evaluated.
struct SearchEvaluated {
    /// The input's layout with the candidate's degrees, order and schedule; the input's expert
    /// placements are kept only with the input's EP (they name its EP ranks).
    LayoutSpec layout;
    int micro_batch = 1;
    Recompute recompute = Recompute::none;
    SearchFigures figures;
    bool is_input = false;
    /// stepComputeFloor_s: the step cannot be shorter; the search prunes by it.
    double floor_s = 0;
};

/// The rejected layout closest to fitting in memory (for "why nothing fits").
struct SearchMemoryMiss {
    double over_bytes = 0; ///< beyond the usable HBM
    LayoutSpec layout;
    int micro_batch = 1;
    Recompute recompute = Recompute::none;
    MemoryBreakdown memory;
    bool set = false;
};

/// What one structure contributed.
struct SearchStructureOutcome {
    int64_t structure = 0;     ///< index in the search's enumeration order
    bool inside_domain = true; ///< TP fits in a scale-up domain (searched first)
    bool counted_only = false; ///< a wide structure counted as wide_tp without searching it
    std::array<RejectionCount, kRejectReasonCount> rejected{};
    std::vector<SearchEvaluated> evaluated;
    SearchMemoryMiss closest;
    int64_t candidates = 0;
};

using SearchShard = Shard;

struct SearchPart {
    SearchShard shard;
    int64_t structures = 0; ///< in the whole search, for the merge's completeness check
    /// Some structure of this shard inside a scale-up domain has a layout that fits.
    bool found_inside = false;
    /// This shard's structures in enumeration order; a wide structure appears twice (searched,
    /// then counted_only) when this shard found nothing inside.
    std::vector<SearchStructureOutcome> outcomes;
    Diagnostics diagnostics; ///< bad pins or input, as in SearchResult
    double elapsed_s = 0;
    double cpu_s = 0;
    int threads = 1;
    bool interrupted = false;
};

/// Searches the structures of one shard (all of them for {0, 1}).
SearchPart searchPart(const Scenario& scenario, const SearchOptions& options,
                      SearchShard shard = {});
/// Ranks the parts' layouts as one search. The parts must come from the same scenario and
/// options and cover every structure exactly once (else the result holds an error saying which
/// are missing or repeated). Times add up (cpu_s) or take the slowest part (elapsed_s).
SearchResult mergeSearchParts(const Scenario& scenario, const SearchOptions& options,
                              const std::vector<SearchPart>& parts);

/// Why ranked candidate `index` (0-based into result.ranked) places where it does: for the
/// winner, result.explanation; for the others, its figures, how it differs from the winner and
/// what it loses (as the explanation words its alternatives), its layout, collectives and memory.
/// `options` are the search's. Empty when `index` is out of range. Evaluates two layouts.
std::vector<std::string> explainRanked(const SearchResult& result, const SearchOptions& options,
                                       size_t index);

/// A layout's step time grouped into the parts a layout decision moves: the columns of
/// moe-plan search's table and of the app's search dialog.
struct SearchStepColumns {
    double compute_s = 0;    ///< attention + dense FFN + router + expert compute + optimizer
    double all_to_all_s = 0; ///< MoE dispatch and combine
    double tp_cp_s = 0;      ///< TP and CP collectives
    double pipeline_s = 0;   ///< pipeline bubble and sends
    double dp_sync_s = 0;    ///< gradient synchronisation
    double imbalance_s = 0;  ///< waiting for the hottest EP rank
};
SearchStepColumns stepColumnsOf(const SearchFigures& figures);

/// The first and last pipeline stages' layer counts for an interleaved pipeline of `pp` ranks
/// and `vpp` virtual stages whose `layers` do not split evenly over pp*vpp: the middle stages
/// get m = ceil(layers / pp) layers each (the fewest that keep the end stages no heavier than
/// them), and the end stages share the rest, the last one the lighter (it also holds the output
/// head), each with at least vpp layers. If that leaves an end stage fewer than vpp layers, m
/// steps down until it does not. Empty when the layers split evenly, when pp < 2, or when no
/// split gives every virtual stage a layer. DeepSeek-V3: 61 layers, pp 16 -> {3, 2} (the
/// published split), pp 8 vpp 2 -> {7, 6}.
std::optional<std::pair<int, int>> balancedEndStageLayers(int layers, int pp, int vpp);

/// Checks pins without searching: one diagnostic per unknown key or unreadable value.
Diagnostics checkPins(const std::vector<std::string>& pins);

/// Searches the layouts of `scenario`'s cluster and model. Its own layout fields (degrees,
/// order, schedule and end-stage layer counts, micro-batch, recompute) are what the search varies;
/// everything else is kept. Expert placement overrides are kept only for candidates with the
/// scenario's EP.
SearchResult searchLayouts(const Scenario& scenario, const SearchOptions& options = {});

/// The candidate's layout in one line: "TP=1 CP=1 PP=1 DP=64 EP=8 ETP=1 eDP=8, tp-cp-ep-dp-pp,
/// 1f1b, micro-batch 1, recompute none"; uneven end stages after the pipeline degree, as in
/// "PP=16 first-stage-layers=3 last-stage-layers=2".
std::string layoutSummary(const Scenario& scenario);

} // namespace moe
