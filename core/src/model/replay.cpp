// Replay: evaluate's step time with the routing sample as the only variable. The scenario's
// cost model (StepCostModel, built once by evaluate) holds everything that does not depend on
// routing; each step samples the routing and prices it with priceStep, the function evaluate
// itself uses, so a replayed step costs one sampleExpertLoad plus O(stages + MoE layers)
// arithmetic. test_replay compares replayed steps with evaluate(scenario, step).

#include "moe/replay.h"

#include "moe/load_stragglers.h"
#include "moe/placement.h"

#include <algorithm>
#include <cmath>

namespace moe {

ReplayModel::ReplayModel(const Scenario& scenario, const Report& base)
    : scenario_(scenario)
    , placement_(base.placement)
    , costs_(base.costs)
    , is_moe_(scenario.model.isMoe() && base.costs && base.costs->moe.valid)
    , base_step_s_(base.step_time_s) {
    if (!placement_)
        placement_ = std::make_shared<Placement>();
    if (!costs_)
        costs_ = std::make_shared<StepCostModel>();
    for (const StageResult& st : base.stages)
        memory_share_.push_back(
            st.memory.hbm_bytes > 0 ? st.memory.total_bytes / st.memory.hbm_bytes : 0);
}

StepSample ReplayModel::sample(uint64_t step, GpuStepMetrics* gpus) const {
    if (!is_moe_) {
        StepSample s = fromLoad(ExpertLoad{}, gpus);
        s.step = step;
        return s;
    }
    StepSample s = fromLoad(sampleExpertLoad(scenario_, *placement_, step), gpus);
    s.step = step;
    return s;
}

StepSample ReplayModel::fromLoad(const ExpertLoad& load, GpuStepMetrics* gpus) const {
    StepSample out;
    out.max_imbalance = load.max_imbalance;
    out.mean_imbalance = load.mean_imbalance;
    out.imbalance_per_layer = load.imbalance_per_layer;
    out.dropped_share = load.dropped_share;
    if (costs_->stages.empty()) { // nothing to replay
        out.step_time_s = base_step_s_;
    } else {
        const StepPrice price = priceStep(*costs_, load);
        out.step_time_s = price.step_time_s;
        out.breakdown = price.step;
        out.imbalance_wait_s = price.step[StepItem::imbalance_wait];
        out.stage_imbalance = price.stage_imbalance;
        out.slowest_stage = price.slowest_stage;
    }
    if (gpus)
        gpuMetrics(load, out, *gpus);
    return out;
}

void ReplayModel::gpuMetrics(const ExpertLoad& load, StepSample& out, GpuStepMetrics& g) const {
    const Placement& p = *placement_;
    const auto n_gpus = static_cast<size_t>(p.gpuCount());
    g.tokens.assign(n_gpus, 0.0f);
    g.load_factor.assign(n_gpus, 0.0f);
    g.peak_ratio.assign(n_gpus, 0.0f);
    g.a2a_recv_bytes.assign(n_gpus, 0.0f);
    g.idle_s.assign(n_gpus, 0.0f);
    g.memory_share.assign(n_gpus, 0.0f);
    const int groups = load.sampled_groups;
    const int ep = load.ep;
    const bool sampled =
        is_moe_ && groups > 0 && ep > 0 &&
        load.rank_tokens.size() == static_cast<size_t>(load.moe_layers) * groups * ep;
    // Per (stage, sampled group, EP rank): token slots summed over the stage's MoE layers and
    // expert time fwd+bwd at each layer's own load.
    const size_t per_stage = sampled ? static_cast<size_t>(groups) * ep : 0;
    const std::vector<StageCosts>& stages = costs_->stages;
    const MoeCosts& moe = costs_->moe;
    std::vector<double> tokens(stages.size() * per_stage, 0.0);
    std::vector<double> expert_s(stages.size() * per_stage, 0.0);
    std::vector<double> peak(stages.size() * per_stage, 0.0);
    for (size_t st = 0; sampled && st < stages.size(); ++st) {
        double* tok = tokens.data() + st * per_stage;
        double* exp_s = expert_s.data() + st * per_stage;
        double* top = peak.data() + st * per_stage;
        for (const int layer : stages[st].moe_layer_indices) {
            if (layer < 0 || layer >= load.moe_layers)
                continue;
            const double* ranks = load.rank_tokens.data() + static_cast<size_t>(layer) * per_stage;
            const double layer_mean = layerMeanSlots(load, layer);
            for (size_t i = 0; i < per_stage; ++i) {
                if (layer_mean > 0)
                    top[i] = std::max(top[i], ranks[i] / layer_mean);
                tok[i] += ranks[i];
                exp_s[i] += moe.expertForward_s(ranks[i]) + moe.expertBackward_s(ranks[i]);
            }
        }
    }
    const double m = costs_->micro_batches;
    const double mean = moe.mean_slots;
    const double fp = moe.forward_pairs;
    const double expert_mean_s = is_moe_ ? moe.mean.experts_s() : 0.0;
    const double dispatch_bytes =
        moe.dispatch_call.scale_up_bytes_per_gpu + moe.dispatch_call.scale_out_bytes_per_gpu;
    const double combine_bytes =
        moe.combine_call.scale_up_bytes_per_gpu + moe.combine_call.scale_out_bytes_per_gpu;
    float hottest = -1.0f;
    for (size_t gpu = 0; gpu < n_gpus; ++gpu) {
        const RankCoords& rc = p.coordsOf(gpu);
        if (rc.pp < 0 || rc.pp >= static_cast<int>(stages.size()))
            continue;
        const StageCosts& c = stages[static_cast<size_t>(rc.pp)];
        if (static_cast<size_t>(rc.pp) < memory_share_.size())
            g.memory_share[gpu] = static_cast<float>(memory_share_[static_cast<size_t>(rc.pp)]);
        const double n = static_cast<double>(c.moe_layer_indices.size());
        double tok = 0, exp_s = n * expert_mean_s;
        if (sampled && rc.ep >= 0 && rc.ep < ep) {
            // Token stream = expert-DP coordinate modulo the sampled groups
            // (ExpertLoad::gpuTokens).
            const size_t i = static_cast<size_t>(rc.pp) * per_stage +
                             static_cast<size_t>((rc.edp >= 0 ? rc.edp : 0) % groups) * ep +
                             static_cast<size_t>(rc.ep);
            tok = tokens[i];
            exp_s = expert_s[i];
            g.peak_ratio[gpu] = static_cast<float>(peak[i]);
        }
        const double mean_tok = n * mean;
        g.tokens[gpu] = static_cast<float>(tok);
        g.load_factor[gpu] = mean_tok > 0 ? static_cast<float>(tok / mean_tok) : 0.0f;
        // Received per step: the expert-bound calls (fp forward dispatches at the dispatch
        // precision, the combine's gradient) carry this GPU's own token slots, i.e. tok / mean
        // times the mean call; the token-bound calls (fp + 1: forward combines, the dispatch's
        // gradient) return the results for the GPU's own tokens, which routing does not change.
        if (mean > 0)
            g.a2a_recv_bytes[gpu] =
                static_cast<float>(m * ((tok / mean) * (fp * dispatch_bytes + combine_bytes) +
                                        n * (fp + 1.0) * combine_bytes));
        // Idle: the step minus the GPU's own compute, its stage's load-independent compute with
        // the expert GEMMs at its own tokens in every layer.
        const double busy = m * (c.compute_s - n * expert_mean_s + exp_s);
        g.idle_s[gpu] = static_cast<float>(std::max(0.0, out.step_time_s - busy));
        if (g.load_factor[gpu] > hottest) {
            hottest = g.load_factor[gpu];
            out.hottest_gpu = static_cast<int>(gpu);
        }
    }
}

double nearestRankPercentile(const std::vector<double>& sorted, double q) {
    if (sorted.empty())
        return 0.0;
    const double n = static_cast<double>(sorted.size());
    const auto rank = static_cast<size_t>(std::ceil(std::clamp(q, 0.0, 1.0) * n - 1e-9));
    return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

Replay::Replay(std::shared_ptr<const ReplayModel> model)
    : model_(std::move(model)) {}

const StepSample& Replay::advance(GpuStepMetrics* gpus) {
    last_ = model_->sample(stepsDone(), gpus);
    step_time_s_.push_back(last_.step_time_s);
    sorted_s_.insert(std::upper_bound(sorted_s_.begin(), sorted_s_.end(), last_.step_time_s),
                     last_.step_time_s);
    p50_s_.push_back(nearestRankPercentile(sorted_s_, 0.50));
    p99_s_.push_back(nearestRankPercentile(sorted_s_, 0.99));
    return last_;
}

void Replay::reset() {
    last_ = StepSample{};
    step_time_s_.clear();
    p50_s_.clear();
    p99_s_.clear();
    sorted_s_.clear();
}

} // namespace moe
