// What the layout search's files share; private to core/src/search. The search runs in stages:
// candidate generation and pruning per structure (search_candidates.cpp), shards of structures
// on worker threads (search_part.cpp), the merge of the parts (search_merge.cpp), the ranking and
// Pareto front (search_ranking.cpp) and the explanation of the winner (search_explain.cpp).

#pragma once

#include "moe/model_costs.h"
#include "moe/search.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <queue>
#include <string>
#include <vector>

namespace moe::search_detail {

using Evaluated = SearchEvaluated;
using MemoryMiss = SearchMemoryMiss;
/// What one structure contributes.
using Outcome = SearchStructureOutcome;

// ---- candidates (search_candidates.cpp) ------------------------------------------------------

struct Pins {
    std::vector<int> tp, cp, pp, vpp, dp, ep, etp, micro_batch;
    std::vector<RankOrder> order;
    std::vector<PipelineSchedule> schedule;
    std::vector<Recompute> recompute;

    template <typename T> static bool allows(const std::vector<T>& values, const T& v) {
        return values.empty() || std::find(values.begin(), values.end(), v) != values.end();
    }
};

Diagnostics parsePins(const std::vector<std::string>& pins, Pins& out);

/// Degrees that do not depend on the schedule, micro-batch, order or recompute.
struct Structure {
    int tp = 1, cp = 1, pp = 1, dp = 1, ep = 1, etp = 1;
};

/// ep * etp / (tp * cp) of `a` against `b`: negative, zero or positive. It is an EP group's
/// token slots per micro-batch up to the model's factors, so equal values draw the same
/// routing counts for the same micro-batch, whatever the EP degree.
int64_t compareTokenSlots(const Structure& a, const Structure& b);

struct ScheduleChoice {
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    int vpp = 1;
    int first_stage_layers = 0; ///< LayoutSpec's; 0 = the even split
    int last_stage_layers = 0;
    bool operator==(const ScheduleChoice&) const = default;
};

/// The search space of one scenario: its structures, and for each the candidates (schedule,
/// micro-batch, order, recompute) pruned and evaluated.
class Searcher {
public:
    Searcher(const Scenario& input, const SearchOptions& options, const Pins& pins);

    const std::vector<Structure>& structures() const { return structures_; }

    /// TP ranks are innermost, so they share a scale-up domain when TP divides the domain's GPU
    /// count. CP is not held to it: its ring exchange overlaps attention and long-context runs
    /// put it across nodes (test_search_complete has a space where CP 4 across nodes wins).
    bool insideDomain(const Structure& st) const {
        return in_.cluster.gpusPerScaleUpDomain() % st.tp == 0;
    }

    /// Prunes every candidate of one structure by pins, validity, memory and recompute; the
    /// outcome's `evaluated` holds the ones left with their compute floor (floor_s), figures
    /// not yet filled (evaluateCandidate). With `only_count`, counts them as wide_tp (after
    /// pins) without looking further. `cache` belongs to the calling thread.
    Outcome run(const Structure& st, bool only_count, EvaluationCache& cache) const;

    /// Fills `e.figures` by evaluate(); `scratch` is a copy of the input the caller reuses.
    void evaluateCandidate(Evaluated& e, Scenario& scratch, EvaluationCache& cache) const;

    /// EP (MoE only), TP and PP: whether the structures the pins allow (those inside a
    /// scale-up domain with `inside_only`) hold more than one degree, so the result shows the
    /// best layout with another one (explainAlternatives).
    std::array<bool, 3> variedDimensions(bool inside_only) const;

private:
    struct StructureRun;
    double computeFloor_s(StructureRun& run) const;

    void searchMicroBatch(StructureRun& run, int mb) const;
    bool searchRecompute(StructureRun& run, Recompute rc, int mb, bool dominated) const;
    bool isInput(const Scenario& sc) const;
    bool pinsAllow(const Structure& st) const;
    void buildStructures();
    std::vector<ScheduleChoice> schedulesFor(int pp) const;
    std::vector<int> microBatchesFor(int dp) const;

    const Scenario& in_;
    const SearchOptions& opt_;
    const Pins& pins_;
    int gpus_ = 1;
    bool moe_ = false;
    int max_pp_ = 1;
    std::vector<RankOrder> orders_;
    std::vector<Structure> structures_;
    ParamCounts params_; ///< the model's, for the memory of every candidate
};

/// Divisors of n in increasing order.
std::vector<int> divisors(int64_t n);
/// The memory of the stage with the least margin.
MemoryBreakdown worstMemory(const Scenario& s);
/// The same from the layout's stages (splitLayers) and the model's countParams.
MemoryBreakdown worstMemory(const Scenario& s, const std::vector<StageLayers>& stages,
                            const ParamCounts& params);
/// Fits in the HBM less the reserve share (SearchOptions::memory_reserve_share).
bool fitsWithReserve(const MemoryBreakdown& m, double reserve_share);
bool startsWith(const std::string& s, const char* prefix);
/// Bytes as GB with three significant digits.
std::string gb(double bytes);
/// The HBM a layout may use, in words: "76.0 GB (80.0 GB of HBM less the 5% reserve)".
std::string usableHbmText(const MemoryBreakdown& m, double reserve_share);

// ---- ranking (search_ranking.cpp) ------------------------------------------------------------

/// GPUs one model replica is split over (the dense layers' model parallelism).
int modelParallelSize(const LayoutSpec& l);

/// The slowest step the result reports (SearchOptions::prune), from the layouts added so far:
/// the max(top_n, 2)-th fastest, the near-tie window's end, the scenario's own `input_step_s` (< 0
/// when it is not a candidate) and, for each dimension in `varied` (variedDimensions), the
/// fastest layout whose degree differs from that of the fastest. +infinity while the layouts
/// cannot tell yet (too few, or one degree only of a varied dimension). Adding layouts only
/// lowers it, so a bound from any of a search's layouts is never below the one from all of
/// them: every layout whose floor is within the merged bound was evaluated by its part.
class ReportedStepBound {
public:
    ReportedStepBound(const SearchOptions& options, double input_step_s,
                      const std::array<bool, 3>& varied);
    void add(const Evaluated& e);
    double bound_s() const;

private:
    size_t ranked_;
    double tie_share_;
    double input_step_s_;
    std::array<bool, 3> varied_;
    std::priority_queue<double> smallest_s_; ///< the `ranked_` fastest steps, slowest on top
    double fastest_s_ = std::numeric_limits<double>::infinity();
    /// EP, TP, PP: each degree's fastest step.
    std::array<std::vector<std::pair<int, double>>, 3> fastest_by_degree_;
};

/// The step time of `input` when it is valid and fits with the reserve, else -1: every part
/// and the merge bound by it (reportedStepBound_s), whichever part holds its layout.
double inputStep_s(const Scenario& input, const SearchOptions& options);

/// Sorts `all` best first by the objective, then reorders the layouts tied with the fastest
/// (SearchOptions::tie_share) by model parallelism.
void rankEvaluated(std::vector<Evaluated>& all, const SearchOptions& options);

/// The Pareto front over step time, memory margin and cross-node bytes: indices into `all`,
/// fastest first.
std::vector<size_t> paretoFrontByStepTime(const std::vector<Evaluated>& all);

// ---- explanation (search_explain.cpp) --------------------------------------------------------

Scenario withLayout(const Scenario& base, const LayoutSpec& l, int micro_batch, Recompute rc);

/// The result's explanation lines: the cluster, then why nothing fits or why the winner wins
/// and what its alternatives lose, then where the scenario's own layout stands.
std::vector<std::string> explainSearch(const Scenario& input, const SearchOptions& options,
                                       const std::vector<Evaluated>& all, const MemoryMiss& closest,
                                       const SearchResult& result);

} // namespace moe::search_detail
