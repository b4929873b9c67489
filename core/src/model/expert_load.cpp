// Expert load: seeded routing samples -> tokens per expert -> tokens per EP rank -> imbalance.
//
// The model, step by step (see expert_load.h and the guide's "Expert load and the straggler"):
//   1. popularity p(e) per MoE layer: by default the spread published for the router's
//      balancing method (one hot expert per layer at the measured MaxVio, see
//      publishedMaxViolation); or uniform / Zipf with a seeded permutation per layer (what-if) /
//      a measured histogram; blended toward uniform by routing.balance. `balancing: perfect`
//      gives every expert exactly slots / E, with no draw (the lower bound);
//   2. slots = tokens one EP group (token stream) routes per micro-batch x top_k;
//   3. per layer and sampled stream, counts ~ Multinomial(slots, p), drawn by conditional
//      binomials down a binary split tree (normal approximation when n*q*(1-q) > 25, exact
//      inversion otherwise); counts are integers summing exactly to slots;
//   4. capacity clipping, then tokens per EP rank (replicas split their expert's tokens evenly);
//   5. imbalance = max / mean over the ranks of a layer.
// Every random number comes from generators implemented here (splitmix64 + xoshiro256**, a
// ziggurat for normals), so a seed gives the same numbers with every compiler and standard
// library; std::*_distribution output is implementation-defined and is not used.
#include "moe/expert_load.h"

#include "expert_load_detail.h"

#include "moe/model_costs.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace moe {

namespace {

// ---- Deterministic, portable random numbers ------------------------------------------------

/// splitmix64's output function: a bijective 64-bit mixer (Steele, Lea, Flood 2014).
uint64_t mix64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/// Folds one more value into a seed; mixing after every value keeps (a, b) and (b, a) apart.
uint64_t combine(uint64_t h, uint64_t v) {
    return mix64(h ^ mix64(v));
}

// Domain tags so the popularity permutation and the routing samples never share a stream.
constexpr uint64_t kPopularityTag = 0x706f70756c6172ULL; // "popular"
constexpr uint64_t kRoutingTag = 0x726f7574696e67ULL;    // "routing"

/// Ziggurat tables: x[i] are the right edges of 128 equal-area (v) layers under the normal
/// density f(x) = exp(-x^2/2), from x[1] = r (the tail's start) up to x[128] = 0; x[0] = v/f(r)
/// is the width of the base layer (a box plus the tail). ratio[i] = x[i+1]/x[i] is the share of
/// layer i that lies under the curve for every height (the fast-accept test).
struct Ziggurat {
    static constexpr int kLayers = 128;
    static constexpr double kR = 3.442619855899;      // tail start for 128 layers
    static constexpr double kV = 9.91256303526217e-3; // area of each layer
    double x[kLayers + 1];
    double ratio[kLayers];

    Ziggurat() {
        double f = std::exp(-0.5 * kR * kR);
        x[0] = kV / f;
        x[1] = kR;
        x[kLayers] = 0.0;
        for (int i = 2; i < kLayers; ++i) {
            x[i] = std::sqrt(-2.0 * std::log(kV / x[i - 1] + f));
            f = std::exp(-0.5 * x[i] * x[i]);
        }
        for (int i = 0; i < kLayers; ++i)
            ratio[i] = x[i + 1] / x[i];
    }
};

const Ziggurat& ziggurat() {
    static const Ziggurat z; // built once, thread-safe
    return z;
}

/// xoshiro256** 1.0 (Blackman & Vigna), seeded through splitmix64 as its authors recommend.
class Rng {
public:
    explicit Rng(uint64_t seed)
        : zig_(&ziggurat()) {
        // splitmix64's outputs 1..4: mix64 adds the golden-ratio increment itself.
        for (uint64_t i = 0; i < 4; ++i)
            s_[i] = mix64(seed + i * 0x9e3779b97f4a7c15ULL);
    }

    uint64_t next() {
        const uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    /// Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    /// Uniform integer in [0, n) for 0 < n <= 2^32, by Lemire's multiply-shift on 32 random
    /// bits (no division; the bias, below n / 2^32, is far too small to matter for shuffling
    /// experts).
    uint64_t below(uint64_t n) { return ((next() >> 32) * n) >> 32; }

    /// Uniform in (0, 1): never 0, so its logarithm is finite.
    double openUniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }

    /// Standard normal by the ziggurat method (Marsaglia & Tsang 2000, in Doornik's 2005
    /// ZIGNOR form with 128 boxes): about 99% of draws cost one 64-bit random number, a table
    /// look-up and a compare, several times cheaper than Box-Muller or the polar method, which
    /// matters because normals are the inner loop. Only +,*,/,sqrt,exp,log are used, so results
    /// agree across platforms up to those functions' last-bit rounding.
    double normal() {
        const uint64_t bits = next();
        // Top 53 bits -> u in [-1, 1); the low 7 bits (independent of those) pick the layer.
        const double u = 2.0 * (static_cast<double>(bits >> 11) * 0x1.0p-53) - 1.0;
        const int i = static_cast<int>(bits & 0x7f);
        if (std::abs(u) < zig_->ratio[i])
            return u * zig_->x[i]; // inside the layer's part that lies under the curve
        return normalSlow(u, i);
    }

private:
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    double normalSlow(double u, int i);
    const Ziggurat* zig_;
    uint64_t s_[4]{};
};

/// The ziggurat's rare cases (about 1% of draws): the tail or a wedge, else a fresh try.
double Rng::normalSlow(double u, int i) {
    const Ziggurat& z = *zig_;
    for (;;) {
        if (i == 0) {
            // Base layer beyond r: Marsaglia's tail algorithm, x = r - log(U1)/r accepted
            // when -2 log(U2) >= (log(U1)/r)^2.
            double t = 0, y = 0;
            do {
                t = std::log(openUniform()) / Ziggurat::kR;
                y = std::log(openUniform());
            } while (-2.0 * y < t * t);
            return u < 0 ? t - Ziggurat::kR : Ziggurat::kR - t;
        }
        // The wedge between the curve and the layer's box: accept under the curve.
        const double xv = u * z.x[i];
        const double f0 = std::exp(-0.5 * (z.x[i] * z.x[i] - xv * xv));
        const double f1 = std::exp(-0.5 * (z.x[i + 1] * z.x[i + 1] - xv * xv));
        if (f1 + uniform() * (f0 - f1) < 1.0)
            return xv;
        const uint64_t bits = next();
        u = 2.0 * (static_cast<double>(bits >> 11) * 0x1.0p-53) - 1.0;
        i = static_cast<int>(bits & 0x7f);
        if (std::abs(u) < z.ratio[i])
            return u * z.x[i];
    }
}

/// Above this variance n*q*(1-q) a binomial is drawn from its normal approximation. At 25 the
/// standard deviation is 5 tokens: the normal's skew error (~(1-2q)/(6 sd)) is a fraction of a
/// token, far below the sampling noise the model cares about, and the exact path below costs
/// O(mean) steps, which stays small (mean <= 2 * variance for q <= 1/2).
constexpr double kNormalApproxVariance = 25.0;

/// Exact Binomial(n, q) for q <= 1/2 and n*q*(1-q) <= kNormalApproxVariance, by inversion of
/// the CDF: P(0) = (1-q)^n, P(k+1) = P(k) * (n-k)/(k+1) * q/(1-q). Then n*q <= 50, so
/// P(0) >= e^-70 (no underflow) and the search takes n*q + 1 steps on average.
[[gnu::noinline]] int64_t exactBinomial(int64_t n, double q, Rng& rng) {
    const double ratio = q / (1.0 - q);
    double pk = std::exp(static_cast<double>(n) * std::log1p(-q));
    double cdf = pk;
    const double u = rng.uniform();
    int64_t k = 0;
    while (u > cdf && k < n) {
        pk *= ratio * static_cast<double>(n - k) / static_cast<double>(k + 1);
        ++k;
        cdf += pk;
        if (pk <= 0.0) // rounding left the CDF just below u; the tail beyond is empty
            break;
    }
    return k;
}

/// One draw of Binomial(n, q).
inline int64_t binomial(int64_t n, double q, Rng& rng) {
    if (n <= 0 || q <= 0.0)
        return 0;
    if (q >= 1.0)
        return n;
    const double nd = static_cast<double>(n);
    const double mean = nd * q;
    const double variance = mean * (1.0 - q);
    if (variance > kNormalApproxVariance) {
        // Normal approximation with continuity correction: x = floor(mean + sd*z + 1/2),
        // clamped to the support [0, n]. After the clamp x >= 0, so truncation is the floor.
        const double x = mean + std::sqrt(variance) * rng.normal() + 0.5;
        return static_cast<int64_t>(std::clamp(x, 0.0, nd));
    }
    // Bin(n, q) = n - Bin(n, 1 - q): the exact search runs on the smaller side.
    if (q > 0.5)
        return n - exactBinomial(n, 1.0 - q, rng);
    return exactBinomial(n, q, rng);
}

// ---- Popularity ----------------------------------------------------------------------------

/// The popularity a published MaxVio v implies: MaxVio gives only the hottest expert's load,
/// (1 + v) / E; the other E - 1 experts share the rest evenly, (1 - (1 + v)/E) / (E - 1) each.
/// Of all popularities with that maximum this one has the smallest variance (unequal shares
/// among the rest only add spread), so it adds no imbalance the measurement does not state. Which
/// expert is hot is a seeded draw per layer (from the seed and the layer, like Zipf's ranks), so
/// different layers load different EP ranks. v is clamped to [0, E - 1].
void publishedSpread(const RoutingSpec& routing, double max_violation, int layer, int experts,
                     double* p) {
    const double e = static_cast<double>(experts);
    const double v = std::clamp(max_violation, 0.0, e - 1.0);
    const double hot = (1.0 + v) / e;
    const double rest = experts > 1 ? (1.0 - hot) / (e - 1.0) : 1.0;
    std::fill(p, p + experts, rest);
    Rng rng(combine(combine(routing.seed, kPopularityTag), static_cast<uint64_t>(layer)));
    p[rng.below(static_cast<uint64_t>(experts))] = experts > 1 ? hot : 1.0;
}

/// Writes the routing probabilities of one MoE layer into p[0..E).
/// `zipf_weights[r]` = (1/(r+1)^alpha) / sum, shared by all layers; `perm` is scratch of size E.
void layerPopularity(const RoutingSpec& routing, int layer, int experts,
                     const std::vector<double>& zipf_weights, std::vector<int>& perm, double* p) {
    const double uniform = 1.0 / experts;
    // A perfectly balanced router leaves no spread, whatever popularity is written.
    const PopularityModel model =
        routing.balancing == BalancingMethod::perfect ? PopularityModel::uniform : routing.model;
    switch (model) {
    case PopularityModel::published:
        // Validation refuses `none` here (no published spread); uniform if it slips through.
        publishedSpread(routing, publishedMaxViolation(routing.balancing).value_or(0.0), layer,
                        experts, p);
        break;
    case PopularityModel::uniform:
        std::fill(p, p + experts, uniform);
        break;
    case PopularityModel::zipf: {
        // Zipf: the expert of popularity rank r (0 = hottest) gets p ∝ 1/(r+1)^alpha. Which
        // expert holds which rank is a seeded shuffle per layer, mixed from (seed, layer) only:
        // popularity is a property of the trained model, so it stays put while steps resample
        // tokens, and different layers have different hot experts, as measured in real MoEs.
        for (int e = 0; e < experts; ++e)
            perm[e] = e;
        Rng rng(combine(combine(routing.seed, kPopularityTag), static_cast<uint64_t>(layer)));
        for (int i = experts - 1; i > 0; --i) // Fisher-Yates
            std::swap(perm[i], perm[rng.below(static_cast<uint64_t>(i) + 1)]);
        for (int r = 0; r < experts; ++r)
            p[perm[r]] = zipf_weights[r];
        break;
    }
    case PopularityModel::histogram: {
        // Measured counts: row `layer` (or the single row shared by all layers), normalized.
        // Validation guarantees the shape; anything else still gives a distribution: missing
        // columns and negative weights count as 0, and an all-zero row falls back to uniform.
        const auto& rows = routing.histogram;
        double total = 0;
        if (!rows.empty()) {
            const auto& row =
                rows.size() == 1 ? rows[0] : rows[static_cast<size_t>(layer) % rows.size()];
            for (int e = 0; e < experts; ++e) {
                const double w = e < static_cast<int>(row.size()) ? row[e] : 0.0;
                p[e] = std::isfinite(w) && w > 0.0 ? w : 0.0;
                total += p[e];
            }
        }
        if (total > 0.0) {
            for (int e = 0; e < experts; ++e)
                p[e] /= total;
        } else {
            std::fill(p, p + experts, uniform);
        }
        break;
    }
    }
    // Balancing (auxiliary loss or DeepSeek's loss-free bias) pulls the router toward uniform:
    // p = (1 - balance) * p + balance / E.
    const double b = std::clamp(routing.balance, 0.0, 1.0);
    if (b > 0.0)
        for (int e = 0; e < experts; ++e)
            p[e] = (1.0 - b) * p[e] + b * uniform;
}

/// The multinomial is drawn by splitting, not expert by expert: a balanced binary tree over
/// the experts, each inner node sending Binomial(n, mass(left half) / mass(node)) of its n
/// slots to its left child and the rest to its right one. That is the conditional-binomial
/// method with a different conditioning order, exact in distribution and still E - 1 draws,
/// but a node depends only on its parent: the chain of dependent draws is log2(E) long instead
/// of E, so the CPU overlaps the draws of one level (a sequential chain is latency-bound on
/// each draw's sqrt and rounding).
/// Nodes are in breadth-first order (node 0 = all experts, parents before children); an inner
/// node's children are `left` and `left + 1`; a leaf (left < 0) is expert `lo`.
struct SplitTree {
    std::vector<int> lo, hi, left;

    explicit SplitTree(int experts) {
        const size_t nodes = experts > 0 ? 2 * static_cast<size_t>(experts) - 1 : 0;
        lo.reserve(nodes);
        hi.reserve(nodes);
        left.reserve(nodes);
        if (experts <= 0)
            return;
        lo.push_back(0);
        hi.push_back(experts);
        left.push_back(-1);
        for (size_t i = 0; i < lo.size(); ++i) {
            if (hi[i] - lo[i] < 2)
                continue;
            const int mid = lo[i] + (hi[i] - lo[i]) / 2;
            left[i] = static_cast<int>(lo.size());
            lo.push_back(lo[i]);
            hi.push_back(mid);
            left.push_back(-1);
            lo.push_back(mid);
            hi.push_back(hi[i]);
            left.push_back(-1);
        }
    }
    int size() const { return static_cast<int>(lo.size()); }
};

} // namespace

namespace expert_load_detail {

/// The pipeline stage holding each MoE layer: chunk c (chunkFirstLayers) runs on stage c % pp.
std::vector<int> stageOfMoeLayers(const ModelSpec& model, const LayoutSpec& layout) {
    const int moe_layers = std::max(0, model.moeLayers());
    std::vector<int> stage(static_cast<size_t>(moe_layers), 0);
    const int pp = std::max(1, layout.pp);
    const std::vector<int> chunk_first = chunkFirstLayers(model, layout);
    const int chunks = static_cast<int>(chunk_first.size()) - 1;
    int chunk = 0;
    for (int m = 0; m < moe_layers; ++m) {
        const int layer = model.dense_layers + m;
        while (layer >= chunk_first[static_cast<size_t>(chunk) + 1] && chunk + 1 < chunks)
            ++chunk;
        stage[static_cast<size_t>(m)] = chunk % pp;
    }
    return stage;
}

SampleShape sampleShape(const Scenario& scenario) {
    const ModelSpec& model = scenario.model;
    const LayoutSpec& layout = scenario.layout;
    SampleShape shape;
    // Distinct token streams per layer: the EP groups of the stage holding it that see
    // different tokens. There are etp * edp EP groups per stage, but the etp shards of one EP
    // rank process the same tokens (Megatron all-gathers dispatched tokens over the ETP group),
    // so the streams are the expert-DP replicas: edp = TP*CP*DP / (EP*ETP). Sampling more than
    // kMaxSampledGroups of them adds nothing visible and would cost time.
    const int ep = std::max(1, layout.ep);
    const int64_t dense_inner =
        int64_t{std::max(1, layout.tp)} * std::max(1, layout.cp) * std::max(1, layout.dp);
    const int64_t streams64 = dense_inner / (int64_t{ep} * std::max(1, layout.etp));
    // = min(layout.expertDp(), kMaxSampledGroups), computed so that no degree divides by 0.
    shape.groups = static_cast<int>(std::clamp<int64_t>(streams64, 1, kMaxSampledGroups));

    // Token slots per stream per micro-batch: each of the EP*ETP GPUs of a stream contributes
    // tokensPerGpuPerMicroBatch = micro_batch * seq_len / (cp * tp) tokens, each routed to top_k
    // experts: slots = ep * etp * tokens_per_gpu * top_k. (With ETP = 1 this is
    // ep * tokens_per_gpu * top_k; the etp factor keeps the stage's slots = dp * mbs * seq * k.)
    const double tokens_per_gpu = tokensPerGpuPerMicroBatch(scenario);
    const double slots_real = static_cast<double>(ep) * std::max(1, layout.etp) * tokens_per_gpu *
                              std::max(0, model.top_k);
    shape.slots =
        std::isfinite(slots_real) && slots_real > 0 ? std::llround(slots_real) : int64_t{0};
    return shape;
}

} // namespace expert_load_detail

using namespace expert_load_detail;

double tokenSlotsPerGroup(const Scenario& scenario) {
    return scenario.model.isMoe() ? static_cast<double>(sampleShape(scenario).slots) : 0.0;
}

namespace {

/// Zipf popularity by rank, normalized once here, not per layer.
std::vector<double> zipfWeights(const RoutingSpec& routing, int experts) {
    std::vector<double> zipf_weights;
    if (routing.model != PopularityModel::zipf)
        return zipf_weights;
    zipf_weights.resize(static_cast<size_t>(experts));
    const double alpha = std::max(0.0, routing.zipf_alpha);
    double total = 0;
    for (int r = 0; r < experts; ++r) {
        zipf_weights[r] = 1.0 / std::pow(static_cast<double>(r + 1), alpha);
        total += zipf_weights[r];
    }
    for (double& w : zipf_weights)
        w /= total;
    return zipf_weights;
}

/// The layer's expert map, flattened: expert e's valid EP ranks are
/// holder_rank[holder_begin[e] .. holder_begin[e+1]), each taking inv_replicas[e] of its
/// tokens. Rebuilt only when the map changes (layers without entries share one map).
struct FlatExpertMap {
    std::vector<int> holder_begin;
    std::vector<int> holder_rank;
    std::vector<double> inv_replicas;
    const ExpertMap* flattened = nullptr;
    bool round_robin = false; ///< expert e on rank e % ep alone (the default map)

    explicit FlatExpertMap(int experts)
        : holder_begin(static_cast<size_t>(experts) + 1)
        , inv_replicas(static_cast<size_t>(experts)) {
        holder_rank.reserve(static_cast<size_t>(experts) * 2);
    }

    void update(const ExpertMap& map, int experts, int ep) {
        if (&map == flattened)
            return;
        flattened = &map;
        // A map that does not cover the experts (a scenario that failed validation) places
        // nothing rather than reading past its end.
        const bool map_ok = static_cast<int>(map.ranks_of_expert.size()) == experts;
        holder_rank.clear();
        round_robin = map_ok;
        for (int e = 0; e < experts; ++e) {
            holder_begin[e] = static_cast<int>(holder_rank.size());
            if (map_ok)
                for (int r : map.ranks_of_expert[e])
                    if (r >= 0 && r < ep)
                        holder_rank.push_back(r);
            const int n = static_cast<int>(holder_rank.size()) - holder_begin[e];
            inv_replicas[e] = n > 0 ? 1.0 / n : 0.0;
            round_robin = round_robin && n == 1 && holder_rank.back() == e % ep;
        }
        holder_begin[experts] = static_cast<int>(holder_rank.size());
    }
};

/// One token stream's slots per expert: a draw's counts (kept or just drawn), or with
/// perfect balance the expected shares slots * p(e).
struct StreamCounts {
    const int32_t* kept = nullptr;
    const int64_t* drawn = nullptr;
    const double* popularity = nullptr;
    double slots = 0;
    double routed(int e) const {
        return popularity ? slots * popularity[e]
               : kept     ? static_cast<double>(kept[e])
                          : static_cast<double>(drawn[e]);
    }
};

/// The default map (expert e on EP rank e % ep alone) without drops: rank r adds its experts
/// r, r + ep, ... in order, in loops without a branch per expert; `routed(e)` is expert e's
/// slots.
template <typename Routed>
void spreadRoundRobin(int experts, int ep, double* ranks, double* per_expert, double inv_groups,
                      Routed routed) {
    for (int base = 0; base < experts; base += ep) {
        const int n = std::min(ep, experts - base);
        for (int r = 0; r < n; ++r)
            ranks[r] += routed(base + r);
    }
    if (per_expert)
        for (int e = 0; e < experts; ++e)
            per_expert[e] += routed(e) * inv_groups;
}

/// Adds a stream's slots to its EP ranks' tokens (`ranks`) and, with `per_expert`, its share
/// of the experts' mean over streams; returns the slots dropped. `capacity` < 0: dropless.
double spreadOverRanks(const StreamCounts& counts, int experts, int ep,
                       const FlatExpertMap& holders, double capacity, double* ranks,
                       double* per_expert, double inv_groups) {
    if (holders.round_robin && capacity < 0 && !counts.popularity) {
        // Each rank adds its experts in the same order as the general loop below.
        if (counts.kept)
            spreadRoundRobin(experts, ep, ranks, per_expert, inv_groups,
                             [kept = counts.kept](int e) { return static_cast<double>(kept[e]); });
        else
            spreadRoundRobin(
                experts, ep, ranks, per_expert, inv_groups,
                [drawn = counts.drawn](int e) { return static_cast<double>(drawn[e]); });
        return 0.0;
    }
    double dropped = 0;
    for (int e = 0; e < experts; ++e) {
        const double routed = counts.routed(e);
        if (per_expert)
            per_expert[e] += routed * inv_groups;
        // A dropped slot is neither sent nor computed: ranks carry min(count, capacity).
        const double kept = capacity >= 0 ? std::min(routed, capacity) : routed;
        dropped += routed - kept;
        // Replicas split their expert's tokens evenly: rank tokens = sum over its experts of
        // count(e) / replicas(e).
        const double share = kept * holders.inv_replicas[e];
        for (int h = holders.holder_begin[e]; h < holders.holder_begin[e + 1]; ++h)
            ranks[holders.holder_rank[h]] += share;
    }
    return dropped;
}

/// The multinomial draw of one layer's slots over its experts, with its scratch allocated once.
struct MultinomialSplit {
    const SplitTree tree;
    const int nodes;
    std::vector<double> mass;    ///< popularity of the node's experts
    std::vector<double> split_q; ///< share its left child gets
    std::vector<int64_t> node_slots;
    std::vector<int64_t> counts; ///< per expert: the draw's slots

    explicit MultinomialSplit(int experts)
        : tree(experts)
        , nodes(tree.size())
        , mass(static_cast<size_t>(nodes))
        , split_q(static_cast<size_t>(nodes))
        , node_slots(static_cast<size_t>(nodes))
        , counts(static_cast<size_t>(experts)) {}

    /// Split probabilities, per layer so the per-group loop has no division:
    /// q(node) = mass(left) / mass(node). Masses are summed bottom-up, so a half with no
    /// weight has mass exactly 0 and gets exactly no slots (q = 0 or 1), which differences
    /// of rounded prefix sums could miss.
    void setPopularity(const double* p) {
        for (int i = nodes - 1; i >= 0; --i) {
            const int l = tree.left[i];
            if (l < 0) {
                mass[i] = p[tree.lo[i]];
                continue;
            }
            mass[i] = mass[l] + mass[l + 1];
            split_q[i] = mass[l] <= 0.0 ? 0.0 : mass[l + 1] <= 0.0 ? 1.0 : mass[l] / mass[i];
        }
    }

    /// Multinomial(slots, p) by conditional binomials down the split tree (see SplitTree):
    /// counts are non-negative integers summing exactly to slots, E - 1 draws. (A layer with no
    /// mass at all, which the popularity models never produce, would send every slot to the
    /// last expert.)
    void draw(int64_t slots, Rng& rng) {
        node_slots[0] = slots;
        for (int i = 0; i < nodes; ++i) {
            const int l = tree.left[i];
            if (l < 0) {
                counts[tree.lo[i]] = node_slots[i];
                continue;
            }
            const int64_t x = binomial(node_slots[i], split_q[i], rng);
            node_slots[l] = x;
            node_slots[l + 1] = node_slots[i] - x;
        }
    }
};

/// One layer's slots summed over its sampled groups.
struct LayerTally {
    double dropped = 0, sum = 0, max = 0;
    int max_group = 0, max_rank = 0;
    /// Stream `group`'s ranks: added to the layer's sum, the busiest kept; `peak` gets the
    /// stream's busiest rank's tokens.
    void add(const double* ranks, int ep, int group, double& peak) {
        peak = ranks[0];
        for (int r = 0; r < ep; ++r) {
            sum += ranks[r];
            peak = std::max(peak, ranks[r]);
            if (ranks[r] > max) {
                max = ranks[r];
                max_group = group;
                max_rank = r;
            }
        }
    }
};

/// One MoE layer's routing at a time: its popularity and, per token stream, the multinomial
/// split of the stream's slots over the experts. A stream's seed depends on the routing seed,
/// the step, the layer and the stream only.
class LayerDrawer {
public:
    LayerDrawer(const RoutingSpec& routing, int experts, uint64_t step)
        : routing_(routing)
        , experts_(experts)
        , zipf_weights_(zipfWeights(routing, experts))
        , perm_(static_cast<size_t>(experts))
        , split_(experts)
        , step_seed_(combine(combine(routing.seed, kRoutingTag), step)) {}

    /// Moves to `layer`, writing its popularity (experts values summing to 1) into `p`.
    void setLayer(int layer, double* p) {
        layerPopularity(routing_, layer, experts_, zipf_weights_, perm_, p);
        split_.setPopularity(p);
        layer_seed_ = combine(step_seed_, static_cast<uint64_t>(layer));
    }
    /// Stream `group`'s counts per expert (valid until the next draw).
    const int64_t* draw(int group, int64_t slots) {
        Rng rng(combine(layer_seed_, static_cast<uint64_t>(group)));
        split_.draw(slots, rng);
        return split_.counts.data();
    }

private:
    const RoutingSpec& routing_;
    const int experts_;
    const std::vector<double> zipf_weights_;
    std::vector<int> perm_;
    MultinomialSplit split_;
    const uint64_t step_seed_;
    uint64_t layer_seed_ = 0;
};

/// The sample's totals from its per-layer figures: the worst and mean imbalance, and the
/// share of all slots dropped.
void summarize(ExpertLoad& load, double max_ratio, double dropped_slots) {
    double sum_ratio = 0;
    for (double r : load.imbalance_per_layer)
        sum_ratio += r;
    load.max_imbalance = max_ratio;
    load.mean_imbalance = sum_ratio / load.moe_layers;
    const double all_slots = load.slots_per_group * load.sampled_groups * load.moe_layers;
    load.dropped_share = all_slots > 0 ? dropped_slots / all_slots : 0.0;
}

/// Per-group imbalance: each sampled group's busiest rank against the layer mean, averaged
/// over layers, a layer without tokens counting as balanced (`peaks`: groupPeakRatios(load)).
void groupImbalance(ExpertLoad& load, const std::vector<double>& peaks) {
    const size_t groups = static_cast<size_t>(load.sampled_groups);
    load.imbalance_per_group.assign(groups, 0.0);
    for (size_t i = 0; i < peaks.size(); ++i)
        load.imbalance_per_group[i % groups] += (peaks[i] > 0 ? peaks[i] : 1.0) / load.moe_layers;
}

} // namespace

ExpertLoad sampleExpertLoad(const Scenario& scenario, const Placement& placement, uint64_t step) {
    ExpertLoad load;
    drawExpertLoad(scenario, placement, step, load);
    return load;
}

namespace expert_load_detail {

bool drawsRouting(const Scenario& scenario) {
    const SampleShape shape = sampleShape(scenario);
    return scenario.model.isMoe() && scenario.model.moeLayers() > 0 &&
           scenario.routing.balancing != BalancingMethod::perfect &&
           shape.slots <= std::numeric_limits<int32_t>::max();
}

void drawRoutingCounts(const Scenario& scenario, uint64_t step, RoutingDraws& draws) {
    const SampleShape shape = sampleShape(scenario);
    draws.layers = scenario.model.moeLayers();
    draws.groups = shape.groups;
    draws.experts = scenario.model.experts;
    draws.counts.resize(static_cast<size_t>(draws.layers) * draws.groups * draws.experts);
    LayerDrawer drawer(scenario.routing, draws.experts, step);
    std::vector<double> popularity(static_cast<size_t>(draws.experts));
    for (int layer = 0; layer < draws.layers; ++layer) {
        drawer.setLayer(layer, popularity.data());
        for (int g = 0; g < draws.groups; ++g)
            std::copy_n(drawer.draw(g, shape.slots), draws.experts,
                        draws.counts.begin() +
                            static_cast<std::ptrdiff_t>(
                                (static_cast<size_t>(layer) * draws.groups + g) * draws.experts));
    }
}

void drawExpertLoad(const Scenario& scenario, const Placement& placement, uint64_t step,
                    ExpertLoad& load, const RoutingDraws* draws, bool detail,
                    std::vector<double>* group_peaks) {
    const ModelSpec& model = scenario.model;
    const LayoutSpec& layout = scenario.layout;
    if (!model.isMoe() || model.moeLayers() <= 0 || layout.ep < 1)
        return;

    const int layers = model.moeLayers();
    const int experts = model.experts;
    const int ep = layout.ep;
    load.moe_layers = layers;
    load.experts = experts;
    load.ep = ep;

    const SampleShape shape = sampleShape(scenario);
    const int groups = shape.groups;
    load.sampled_groups = groups;
    const int64_t slots = shape.slots;
    load.slots_per_group = static_cast<double>(slots);

    // Capacity per expert (Megatron's token-drop rule): ceil(C * slots / E) token slots; slots
    // beyond it are dropped (not computed, not sent). Replicas of an expert share its capacity:
    // dropping happens at the router, before the replicas split the tokens. C = 0 is dropless.
    const double c = model.capacity_factor;
    const bool dropping = c > 0.0;
    const double capacity =
        dropping ? std::ceil(c * static_cast<double>(slots) / experts - 1e-9) : 0.0;

    const size_t pe = static_cast<size_t>(layers) * experts;
    std::vector<double> layer_popularity;
    if (detail) {
        load.popularity.assign(pe, 0.0);
        load.tokens_per_expert.assign(pe, 0.0);
    } else {
        layer_popularity.resize(static_cast<size_t>(experts));
    }
    // Without detail one stream's ranks at a time: a DeepSeek-V3 sample at EP = 256 would
    // otherwise write and read back 7.6 MB of per-rank tokens.
    std::vector<double> stream_ranks;
    if (detail)
        load.rank_tokens.assign(static_cast<size_t>(layers) * groups * ep, 0.0);
    else
        stream_ranks.resize(static_cast<size_t>(ep));
    std::vector<double> peaks(static_cast<size_t>(layers) * groups, 0.0); // groupPeakRatios
    load.imbalance_per_layer.assign(static_cast<size_t>(layers), 1.0);
    load.dropped_share_per_layer.assign(static_cast<size_t>(layers), 0.0);
    load.stage_of_layer = stageOfMoeLayers(model, layout);

    // Scratch, allocated once.
    LayerDrawer drawer(scenario.routing, experts, step);
    FlatExpertMap holders(experts);
    const double inv_groups = 1.0 / groups;

    const bool perfect = scenario.routing.balancing == BalancingMethod::perfect;
    double total_dropped = 0;
    double best_ratio = 1.0;
    double hottest_tokens = -1;

    for (int layer = 0; layer < layers; ++layer) {
        double* p = detail ? load.popularity.data() + static_cast<size_t>(layer) * experts
                           : layer_popularity.data();
        drawer.setLayer(layer, p);
        holders.update(placement.expertsForLayer(layer), experts, ep);
        double* per_expert =
            detail ? load.tokens_per_expert.data() + static_cast<size_t>(layer) * experts : nullptr;
        LayerTally tally;

        for (int g = 0; g < groups; ++g) {
            const int32_t* kept_counts = nullptr;
            const int64_t* drawn_counts = nullptr;
            if (!perfect && draws) // perfect balance routes the expected shares (below)
                kept_counts = draws->at(layer, g);
            else if (!perfect)
                drawn_counts = drawer.draw(g, slots);
            double* ranks =
                detail ? load.rank_tokens.data() + (static_cast<size_t>(layer) * groups + g) * ep
                       : stream_ranks.data();
            if (!detail)
                std::fill(stream_ranks.begin(), stream_ranks.end(), 0.0);
            const StreamCounts counts{kept_counts, drawn_counts, perfect ? p : nullptr,
                                      static_cast<double>(slots)};
            tally.dropped +=
                spreadOverRanks(counts, experts, ep, holders, dropping ? capacity : -1.0, ranks,
                                per_expert, inv_groups);
            tally.add(ranks, ep, g, peaks[static_cast<size_t>(layer) * groups + g]);
        }

        // Imbalance = max over (groups, ranks) / mean over all ranks of the layer: the EP group
        // waits for its slowest rank, and the step for its slowest group.
        const double mean = tally.sum / (static_cast<double>(groups) * ep);
        const double ratio = mean > 0.0 ? tally.max / mean : 1.0;
        for (int g = 0; g < groups; ++g) {
            double& peak = peaks[static_cast<size_t>(layer) * groups + g];
            peak = mean > 0.0 ? peak / mean : 0.0;
        }
        load.imbalance_per_layer[layer] = ratio;
        const double layer_slots = static_cast<double>(slots) * groups;
        load.dropped_share_per_layer[layer] = layer_slots > 0 ? tally.dropped / layer_slots : 0.0;
        total_dropped += tally.dropped;
        best_ratio = std::max(best_ratio, ratio);
        // The hottest rank is the one with the most tokens (what its compute time follows);
        // without drops every layer has the same mean, so it also has the largest ratio.
        if (tally.max > hottest_tokens) {
            hottest_tokens = tally.max;
            load.hottest_layer = layer;
            load.hottest_group = tally.max_group;
            load.hottest_rank = tally.max_rank;
        }
    }

    groupImbalance(load, peaks);
    if (group_peaks)
        *group_peaks = std::move(peaks);
    summarize(load, best_ratio, total_dropped);
}

} // namespace expert_load_detail

} // namespace moe
