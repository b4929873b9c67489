// What the layout search's files share; private to core/src/search. The search runs in stages:
// candidate generation and pruning per structure (search_candidates.cpp), shards of structures
// on worker threads (search_part.cpp), the merge of the parts (search_merge.cpp), the ranking and
// Pareto front (search_ranking.cpp) and the explanation of the winner (search_explain.cpp).

#pragma once

#include "moe/model_costs.h"
#include "moe/search.h"

#include <algorithm>
#include <cstdint>
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

    /// Prunes and evaluates every candidate of one structure; with `only_count`, counts them as
    /// wide_tp (after pins) without looking further. `cache` belongs to the calling thread.
    Outcome run(const Structure& st, bool only_count, EvaluationCache& cache) const;

private:
    struct StructureRun;

    void searchMicroBatch(StructureRun& run, int mb) const;
    bool searchRecompute(StructureRun& run, Recompute rc, int mb, bool dominated) const;
    bool isInput(const Scenario& sc) const;
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
};

/// Divisors of n in increasing order.
std::vector<int> divisors(int64_t n);
/// The memory of the stage with the least margin.
MemoryBreakdown worstMemory(const Scenario& s);
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
