#pragma once
// Expert load: how many tokens each expert and each GPU gets in one training step, sampled
// from the routing model (the spread published for the router's balancing method by default;
// uniform / Zipf / histogram on request; blended toward uniform by `balance`),
// seeded and reproducible. The hot GPU's extra tokens slow its expert GEMMs and the all-to-all
// into it, and its whole EP group waits for it.

#include "moe/placement.h"
#include "moe/scenario.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace moe {

struct ExpertLoad {
    int moe_layers = 0;
    int experts = 0;
    int ep = 1;
    int sampled_groups = 0; ///< EP groups sampled per layer (distinct token streams)
    /// Token slots (tokens x top_k) routed per EP group per micro-batch.
    double slots_per_group = 0;

    /// popularity[layer * experts + e]: routing probability of expert e in that MoE layer.
    std::vector<double> popularity;
    /// tokens_per_expert[layer * experts + e]: token slots expert e receives per micro-batch,
    /// averaged over the sampled groups (the heatmap's expert x layer matrix).
    std::vector<double> tokens_per_expert;
    /// rank_tokens[(layer * sampled_groups + group) * ep + rank]: token slots on that EP rank.
    std::vector<double> rank_tokens;

    /// stage_of_layer[layer]: the pipeline stage that holds that MoE layer (chunk c of the
    /// pp*vpp layer chunks runs on stage c % pp); only its GPUs carry the layer's tokens.
    std::vector<int> stage_of_layer;

    std::vector<double> imbalance_per_layer; ///< max over ranks and groups / mean
    /// Per sampled EP group: its busiest rank / the layer's mean, averaged over the MoE layers
    /// (what that group's own pipeline pays; the step waits for the worst group).
    std::vector<double> imbalance_per_group;
    std::vector<double> dropped_share_per_layer; ///< share of slots over capacity (0 if dropless)
    double max_imbalance = 1.0;
    double mean_imbalance = 1.0; ///< averaged over layers (what the step pays on average)
    double dropped_share = 0.0;
    int hottest_layer = 0;
    int hottest_group = 0;
    int hottest_rank = 0;

    /// Token slots a GPU receives in `layer` per micro-batch (GPU x layer heatmap): the sample
    /// of its EP rank in its token stream (sampled group = its expert-DP coordinate modulo
    /// sampled_groups; the ETP shards of one EP rank all see the rank's tokens); 0 for GPUs of
    /// pipeline stages that do not hold `layer`.
    double gpuTokens(const Placement& placement, int gpu, int layer) const;
    /// The GPU that carries the most tokens in any layer.
    int hottestGpu(const Placement& placement) const;
    /// What a pipeline stage holding `moe_layers` (MoE layer indices) pays for imbalance: every
    /// layer's all-to-all synchronizes one EP group, so a group runs each layer at the pace of
    /// its own busiest rank, and groups meet only at the gradient sync, so the step waits for the
    /// group whose busiest ranks add up to the most. Returns that group's mean over the layers of
    /// busiest rank / layer mean (>= 1; 1 without layers or samples). Because expert time is
    /// affine in the token count, charging every layer this factor gives the same stage time as
    /// charging each layer that group's own ratio.
    /// `peaks`, when given, is groupPeakRatios(*this) computed beforehand (a cached sample's).
    double worstGroupImbalance(const std::vector<int>& moe_layers,
                               const std::vector<double>* peaks = nullptr) const;
};

class ExpertLoadCache;

/// The expert-load spread published for a balancing method, as MaxVio = hottest expert's load /
/// mean - 1 over a large sample (Wang et al. 2024, arXiv 2408.15664, Table 2): aux_loss 0.52,
/// aux_free 0.04, perfect 0; none has no published figure (nullopt). routing.model = published
/// samples from the popularity with this maximum and the least spread (expert_load.cpp).
std::optional<double> publishedMaxViolation(BalancingMethod method);

/// Token slots routed per EP group (token stream) per micro-batch: each of its EP x ETP GPUs
/// feeds tokensPerGpuPerMicroBatch tokens to top_k experts (ExpertLoad::slots_per_group of
/// every sample; 0 for dense models).
double tokenSlotsPerGroup(const Scenario& scenario);

/// Samples one training step's routing. `step` selects the resample (step 0 = the default
/// view; the heatmap's "next step" increments it). Cost is O(moe_layers x sampled_groups x
/// experts), with at most kMaxSampledGroups groups per layer.
ExpertLoad sampleExpertLoad(const Scenario& scenario, const Placement& placement,
                            uint64_t step = 0);
/// The same, reusing `cache`'s sample when one with the same inputs is there (identical result).
ExpertLoad sampleExpertLoad(const Scenario& scenario, const Placement& placement, uint64_t step,
                            ExpertLoadCache& cache);
/// [layer * sampled_groups + group]: that group's busiest rank / the layer's mean over all its
/// ranks (0 for a layer without tokens); empty when rank_tokens is not layers x groups x ep.
std::vector<double> groupPeakRatios(const ExpertLoad& load);

/// A sample as the cache keeps it: immutable, with its groupPeakRatios.
struct SharedExpertLoad {
    ExpertLoad load;
    std::vector<double> group_peaks;
};
/// The cache's sample itself, drawn and kept if it is not there: no copy (a DeepSeek-V3 sample
/// is megabytes, and the layout search prices ~100,000 layouts from ~1,000 samples). Its
/// stage_of_layer is that of the scenario that drew it; everything else matches
/// sampleExpertLoad, except that without `detail` the per-rank and per-expert arrays
/// (rank_tokens, tokens_per_expert, popularity) are dropped: pricing reads only the group peaks
/// and the per-layer figures, and a 16,384-GPU DeepSeek-V3 sample shrinks from ~2 MB to ~50 KB,
/// so a search's samples stay in the cache instead of being drawn again.
std::shared_ptr<const SharedExpertLoad> sharedExpertLoad(const Scenario& scenario,
                                                         const Placement& placement, uint64_t step,
                                                         ExpertLoadCache& cache,
                                                         bool detail = true);

/// Keeps recent samples for evaluations that differ only in what the sample does not read: the
/// rank order, the pipeline split, recompute, the schedule, the hardware. The layout search
/// evaluates thousands of such layouts; sampling DeepSeek-V3's 58 layers x 64 groups x 256
/// experts is a third of an evaluation. Not thread-safe: one cache per thread, unless the
/// threads share their samples through `shared`.
struct LockedExpertLoadCache;
namespace expert_load_detail {
struct RoutingDraws;
}
class ExpertLoadCache {
public:
    struct Key {
        // Compared in this order: the numbers that differ most between a search's layouts first.
        int64_t token_slots = 0; ///< not "slots": Qt defines that word as a macro
        int ep = 1;
        int groups = 1;
        uint64_t step = 0;
        int experts = 0;
        int moe_layers = 0;
        double capacity_factor = 0;
        bool detail = true; ///< the per-rank and per-expert arrays are kept (sharedExpertLoad)
        RoutingSpec routing;
        std::vector<ExpertPlacement> expert_placement;
        bool operator==(const Key&) const = default;
    };
    std::shared_ptr<const SharedExpertLoad> find(const Key& key) const;
    void store(Key key, std::shared_ptr<const SharedExpertLoad> sample);
    /// What a sample's multinomial counts depend on: layouts that differ only in the EP degree,
    /// the expert placement or the capacity factor draw the same counts (the layout search
    /// meets ~5 EP degrees per token count, and the counts are most of a sample's cost).
    struct DrawKey {
        int64_t token_slots = 0;
        int groups = 1;
        uint64_t step = 0;
        int experts = 0;
        int moe_layers = 0;
        RoutingSpec routing;
        bool operator==(const DrawKey&) const = default;
    };
    using Draws = std::shared_ptr<const expert_load_detail::RoutingDraws>;
    Draws findDraws(const DrawKey& key) const;
    void storeDraws(DrawKey key, Draws draws);
    int64_t hits = 0;
    int64_t misses = 0;
    /// When set, samples are found in and kept there instead (under its lock), so one
    /// thread's draw serves the others: the layout search's workers read each other's samples
    /// and routing counts. hits and misses stay this cache's own.
    std::shared_ptr<LockedExpertLoadCache> shared;

private:
    /// The oldest samples go first once the kept ones exceed this (a DeepSeek-V3 search needs
    /// ~180 samples, ~40 MB; a huge cluster's samples are capped by size, not count).
    static constexpr size_t kBudgetBytes = size_t{48} << 20;
    std::deque<std::pair<Key, std::shared_ptr<const SharedExpertLoad>>> entries_;
    /// hashOf(entries_[i].first): find() scans these 8 bytes an entry (a search keeps ~1,000
    /// samples, each key ~200 bytes with its routing) and compares keys only on a match.
    std::deque<uint64_t> hashes_;
    static uint64_t hashOf(const Key& key);
    size_t bytes_ = 0;
    /// Kept counts: 3.8 MB each for DeepSeek-V3's 58 layers x 64 streams x 256 experts. A
    /// layout search walks ~40 micro-batch sizes per structure, each its own counts, before
    /// the next EP degree reads them again: the 16,384-GPU DeepSeek-V3 search draws 248 distinct
    /// counts 924 times with 64 MB, ~250 times with 256 MB (3.5 s -> 2.8 s, RSS +80 MB).
    static constexpr size_t kDrawBudgetBytes = size_t{256} << 20;
    std::deque<std::pair<DrawKey, Draws>> draws_;
    size_t draw_bytes_ = 0;
};

/// One ExpertLoadCache for several threads.
struct LockedExpertLoadCache {
    std::mutex mutex;
    ExpertLoadCache cache;
};

constexpr int kMaxSampledGroups = 64;

} // namespace moe
