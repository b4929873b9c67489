// Load ratios and the top stragglers with their step cost (load_stragglers.h).
#include "moe/load_stragglers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace moe {

namespace {
bool sampleIsWhole(const ExpertLoad& load) {
    return load.moe_layers > 0 && load.sampled_groups > 0 && load.ep > 0 &&
           load.rank_tokens.size() ==
               static_cast<size_t>(load.moe_layers) * load.sampled_groups * load.ep;
}
} // namespace

double layerMeanSlots(const ExpertLoad& load, int layer) {
    if (!sampleIsWhole(load) || layer < 0 || layer >= load.moe_layers)
        return 0.0;
    const size_t cells = static_cast<size_t>(load.sampled_groups) * load.ep;
    const double* first = load.rank_tokens.data() + static_cast<size_t>(layer) * cells;
    return std::accumulate(first, first + cells, 0.0) / static_cast<double>(cells);
}

double gpuLoadRatio(const ExpertLoad& load, const Placement& placement, int gpu, int layer) {
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    if (gpu < 0 || gpu >= placement.gpuCount() || layer < 0 || layer >= load.moe_layers)
        return kNaN;
    if (layer < static_cast<int>(load.stage_of_layer.size()) &&
        placement.coordsOf(gpu).pp != load.stage_of_layer[static_cast<size_t>(layer)])
        return kNaN;
    const double mean = layerMeanSlots(load, layer);
    return mean > 0 ? load.gpuTokens(placement, gpu, layer) / mean : kNaN;
}

std::vector<LoadStraggler> topStragglers(const Report& report, int n) {
    std::vector<LoadStraggler> out;
    const ExpertLoad& load = report.load;
    if (n <= 0 || !report.costs || !report.placement || !sampleIsWhole(load))
        return out;
    const int groups = load.sampled_groups;
    const int ep = load.ep;
    const size_t cells = static_cast<size_t>(groups) * ep;

    // Every sample above its layer's mean, by ratio.
    struct Candidate {
        double ratio;
        size_t index; ///< into rank_tokens: (layer * groups + group) * ep + rank
    };
    std::vector<double> mean(static_cast<size_t>(load.moe_layers));
    std::vector<Candidate> candidates;
    for (int layer = 0; layer < load.moe_layers; ++layer) {
        mean[static_cast<size_t>(layer)] = layerMeanSlots(load, layer);
        const double m = mean[static_cast<size_t>(layer)];
        for (size_t i = static_cast<size_t>(layer) * cells; m > 0 && i < (layer + 1) * cells; ++i)
            if (load.rank_tokens[i] > m)
                candidates.push_back({load.rank_tokens[i] / m, i});
    }
    const size_t keep = std::min(candidates.size(), static_cast<size_t>(n));
    std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(keep),
                      candidates.end(), [](const Candidate& a, const Candidate& b) {
                          return a.ratio != b.ratio ? a.ratio > b.ratio : a.index < b.index;
                      });

    const double step_s = priceStep(*report.costs, load).step_time_s;
    const MoeCosts& moe = report.costs->moe;
    const double mean_s = moe.mean.experts_s() + moe.mean.transfers_s();
    ExpertLoad fixed = load; // one copy; each straggler's group is changed and restored
    const Placement& placement = *report.placement;
    for (size_t k = 0; k < keep; ++k) {
        const size_t i = candidates[k].index;
        LoadStraggler s;
        s.layer = static_cast<int>(i / cells);
        s.group = static_cast<int>(i % cells) / ep;
        s.rank = static_cast<int>(i % static_cast<size_t>(ep));
        s.stage = s.layer < static_cast<int>(load.stage_of_layer.size())
                      ? load.stage_of_layer[static_cast<size_t>(s.layer)]
                      : -1;
        s.tokens = load.rank_tokens[i];
        s.ratio = candidates[k].ratio;
        for (int gpu = 0; gpu < placement.gpuCount(); ++gpu) {
            const RankCoords rc = placement.coordsOf(gpu);
            if ((s.stage < 0 || rc.pp == s.stage) && rc.ep == s.rank &&
                (rc.edp >= 0 ? rc.edp : 0) % groups == s.group) {
                if (s.gpu < 0)
                    s.gpu = static_cast<int>(gpu);
                ++s.gpus;
            }
        }
        if (moe.valid) {
            const MoeLayerPrice hot = moe.price(s.ratio);
            s.wait_s = report.costs->micro_batches * (hot.experts_s() + hot.transfers_s() - mean_s);
        }
        if (s.gpu >= 0 && report.hardware.gpus > 0)
            s.node = report.hardware.nodeOf(s.gpu);
        // This rank at the layer mean, its excess spread over the group's other ranks.
        const double m = mean[static_cast<size_t>(s.layer)];
        double* ranks = fixed.rank_tokens.data() + (i - static_cast<size_t>(s.rank));
        const std::vector<double> saved(ranks, ranks + ep);
        const double spread = ep > 1 ? (s.tokens - m) / (ep - 1) : 0.0;
        for (int r = 0; r < ep; ++r)
            ranks[r] = r == s.rank ? m : ranks[r] + spread;
        s.step_cost_s = std::max(0.0, step_s - priceStep(*report.costs, fixed).step_time_s);
        std::copy(saved.begin(), saved.end(), ranks);
        out.push_back(s);
    }
    return out;
}

} // namespace moe
