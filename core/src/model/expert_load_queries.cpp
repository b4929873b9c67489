// Queries on a drawn routing sample (ExpertLoad): per-group peaks, the worst group over a
// stage's layers, a GPU's tokens and the hottest GPU. The sample itself is drawn in
// expert_load.cpp.
#include "moe/expert_load.h"

#include "moe/placement.h"

#include <algorithm>
#include <array>
#include <vector>

namespace moe {

std::vector<double> groupPeakRatios(const ExpertLoad& load) {
    std::vector<double> out;
    const int layers = load.moe_layers, groups = load.sampled_groups, ep = load.ep;
    if (layers < 1 || groups < 1 || ep < 1 ||
        load.rank_tokens.size() != static_cast<size_t>(layers) * groups * ep)
        return out;
    out.assign(static_cast<size_t>(layers) * groups, 0.0);
    for (int layer = 0; layer < layers; ++layer) {
        const double* layer_ranks =
            load.rank_tokens.data() + static_cast<size_t>(layer) * groups * ep;
        double layer_total = 0;
        for (int i = 0; i < groups * ep; ++i)
            layer_total += layer_ranks[i];
        const double mean = layer_total / (static_cast<double>(groups) * ep);
        if (mean <= 0.0)
            continue;
        for (int g = 0; g < groups; ++g)
            out[static_cast<size_t>(layer) * groups + g] =
                *std::max_element(layer_ranks + static_cast<size_t>(g) * ep,
                                  layer_ranks + static_cast<size_t>(g + 1) * ep) /
                mean;
    }
    return out;
}

double ExpertLoad::worstGroupImbalance(const std::vector<int>& layers,
                                       const std::vector<double>* peaks) const {
    if (sampled_groups < 1 || ep < 1)
        return 1.0;
    const size_t groups = static_cast<size_t>(sampled_groups);
    std::vector<double> computed;
    if (!peaks || peaks->size() != static_cast<size_t>(std::max(0, moe_layers)) * groups) {
        computed = groupPeakRatios(*this);
        peaks = &computed;
        if (computed.empty())
            return 1.0;
    }
    // Sampled groups are at most kMaxSampledGroups; a hand-built load may have more.
    std::array<double, kMaxSampledGroups> fixed{};
    std::vector<double> more(groups > fixed.size() ? groups : 0, 0.0);
    double* sum_ratio = more.empty() ? fixed.data() : more.data();
    int counted = 0;
    for (const int layer : layers) {
        if (layer < 0 || layer >= moe_layers)
            continue;
        const double* row = peaks->data() + static_cast<size_t>(layer) * groups;
        if (row[0] <= 0.0)
            continue; // no tokens in this layer
        for (size_t g = 0; g < groups; ++g)
            sum_ratio[g] += row[g];
        ++counted;
    }
    if (counted == 0)
        return 1.0;
    return std::max(1.0, *std::max_element(sum_ratio, sum_ratio + groups) / counted);
}

double ExpertLoad::gpuTokens(const Placement& placement, int gpu, int layer) const {
    if (layer < 0 || layer >= moe_layers || sampled_groups < 1 || gpu < 0 ||
        gpu >= placement.gpuCount())
        return 0.0;
    const RankCoords& rc = placement.coordsOf(gpu);
    // Stages that do not hold the layer carry none of its tokens.
    if (layer < static_cast<int>(stage_of_layer.size()) && rc.pp != stage_of_layer[layer])
        return 0.0;
    if (rc.ep < 0 || rc.ep >= ep)
        return 0.0;
    // Token stream = the GPU's expert-DP coordinate; with more streams than sampled groups,
    // stream i reuses sample i % sampled_groups (deterministic, and every sample is shown).
    const int group = (rc.edp >= 0 ? rc.edp : 0) % sampled_groups;
    const size_t i = (static_cast<size_t>(layer) * sampled_groups + group) * ep + rc.ep;
    return i < rank_tokens.size() ? rank_tokens[i] : 0.0;
}

int ExpertLoad::hottestGpu(const Placement& placement) const {
    // The hottest sample lives in (hottest_layer, hottest_group, hottest_rank); the first GPU
    // (lowest id) that maps onto it carries it. Fall back to a scan if none does (e.g. a
    // placement without expert coordinates).
    const int gpus = placement.gpuCount();
    if (gpus == 0)
        return 0;
    const int stage =
        hottest_layer < static_cast<int>(stage_of_layer.size()) ? stage_of_layer[hottest_layer] : 0;
    for (int gpu = 0; gpu < gpus; ++gpu) {
        const RankCoords& rc = placement.coordsOf(gpu);
        if (sampled_groups > 0 && rc.pp == stage && rc.ep == hottest_rank &&
            rc.edp % sampled_groups == hottest_group)
            return gpu;
    }
    int best = 0;
    double best_tokens = -1;
    for (int gpu = 0; gpu < gpus; ++gpu)
        for (int layer = 0; layer < moe_layers; ++layer) {
            const double t = gpuTokens(placement, gpu, layer);
            if (t > best_tokens) {
                best_tokens = t;
                best = gpu;
            }
        }
    return best;
}

} // namespace moe
