// Replay: evaluate's step time with the routing sample as the only variable.
//
// What depends on routing in evaluate (evaluate.cpp, microBatchCost and evaluate()):
//   - per pipeline stage, the imbalance wait: the stage's EP groups run at the pace of their
//     busiest rank, the factor f = ExpertLoad::worstGroupImbalance(stage's MoE layers), and
//     each of the stage's n MoE layers is charged
//        compute: fe(mean_slots * f) - fe(mean_slots), fe(x) = expert forward + backward at x
//                 (MoeCostModel::expertForward_s + expertBackward_s; this equals evaluate's
//                 (hot_fwd - mean_fwd) * passes + recompute_per_slot * mean_slots * (f - 1)),
//        all-to-all: hot_extra = fp * d(f) + (fp + 2) * k(f) - fp * d(1) - k(1) - (fp + 1) * k(1)
//                 (fp forward pairs, d/k = MoeCostModel::dispatch_s/combine_s), all exposed;
//                 under DualPipe only the u unpaired passes of the m expose it, the fused pairs
//                 their segment pairs' extra exposure (MoeCostModel::pairExposed_s):
//                 ((m - u) * (pairExposed(f) - pairExposed(1)) + u * hot_extra) / m per layer;
//   - the step: m x (slowest stage's per-micro-batch time; DualPipe: slowest rank's, the mean of
//     its two stages) + bubble(that time) + the rest (PP transfers, DP sync, optimizer), which
//     does not depend on routing. Every bubble closed form in evaluate is proportional to the
//     per-micro-batch time t ((p-1)t, (p-1)t/v, (p/2-1)(2t/3)), so bubble(t) = bubble(t0) * t /
//     t0 with t0 the step-0 report's.
// Everything else (the load-independent items, compute windows, bytes per call) is read from
// the step-0 report once. test_replay compares replayed steps with evaluate(scenario, step).

#include "moe/replay.h"

#include "moe/placement.h"

#include <algorithm>
#include <cmath>

namespace moe {

namespace {

double computeItems_s(const StepBreakdown& items) {
    // evaluate's compute items: attention + dense FFN + router + expert compute.
    return items[StepItem::attention] + items[StepItem::dense_ffn] + items[StepItem::router] +
           items[StepItem::expert_compute];
}

} // namespace

ReplayModel::ReplayModel(const Scenario& scenario, const Report& base)
    : scenario_(scenario)
    , placement_(base.placement)
    , cost_(base.moe_costs)
    , micro_batches_(std::max(1, base.micro_batches))
    , fwd_pairs_(scenario.training.recompute == Recompute::full ? 2.0 : 1.0)
    , overlapped_a2a_(scenario.layout.schedule == PipelineSchedule::dualpipe)
    , is_moe_(scenario.model.isMoe() && base.moe_costs.valid)
    , base_step_s_(base.step_time_s) {
    if (!placement_)
        placement_ = std::make_shared<Placement>();
    const int dense_layers = scenario.model.dense_layers;
    const double mean_fe =
        cost_.expertForward_s(cost_.mean_slots) + cost_.expertBackward_s(cost_.mean_slots);
    double t0 = 0;
    for (const StageResult& st : base.stages) {
        StageConst c;
        for (const int layer : st.layers.layer_indices)
            if (scenario.model.isMoe() && layer >= dense_layers)
                c.moe_layers.push_back(layer - dense_layers);
        const StepBreakdown& items = st.per_micro_batch;
        c.total_s = items.total_s;
        c.base_wait_s = items[StepItem::imbalance_wait];
        c.compute_s = computeItems_s(items);
        c.expert_mean_s = is_moe_ ? mean_fe : 0.0;
        c.dispatch_bytes = st.times.dispatch_bytes;
        c.combine_bytes = st.times.combine_bytes;
        c.memory_share = st.memory.hbm_bytes > 0 ? st.memory.total_bytes / st.memory.hbm_bytes : 0;
        if (overlapped_a2a_)
            c.unpaired = std::min(
                micro_batches_,
                dualPipeUnpairedPasses(static_cast<int>(base.stages.size()), st.layers.stage));
        stages_.push_back(std::move(c));
    }
    for (size_t i = 0; i < stages_.size(); ++i)
        t0 = std::max(t0, rankTime_s(i, stages_[i].total_s, stages_[partnerOf(i)].total_s));
    const double bubble0 = base.step[StepItem::bubble];
    bubble_per_mb_s_ = t0 > 0 ? bubble0 / t0 : 0.0;
    // Whatever is neither m x t nor the bubble is routing-independent.
    fixed_s_ = base.step_time_s - micro_batches_ * t0 - bubble0;
}

size_t ReplayModel::partnerOf(size_t stage) const {
    return overlapped_a2a_ ? stages_.size() - 1 - stage : stage;
}

double ReplayModel::rankTime_s(size_t stage, double own_s, double partner_s) const {
    // A DualPipe rank runs its stage's chunk and its partner's, half the micro-batches each.
    return partnerOf(stage) == stage ? own_s : (own_s + partner_s) / 2;
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
    out.stage_imbalance.assign(stages_.size(), 1.0);

    const double mean = cost_.mean_slots;
    const double fp = fwd_pairs_;
    const double m = micro_batches_;
    std::vector<double> stage_t(stages_.size()), stage_wait(stages_.size(), 0.0);
    for (size_t i = 0; i < stages_.size(); ++i) {
        const StageConst& c = stages_[i];
        double wait = 0;
        if (is_moe_ && !c.moe_layers.empty()) {
            const double f = load.worstGroupImbalance(c.moe_layers);
            out.stage_imbalance[i] = f;
            const double n = static_cast<double>(c.moe_layers.size());
            const double hot_fe =
                cost_.expertForward_s(mean * f) + cost_.expertBackward_s(mean * f);
            const double compute_wait = n * (hot_fe - c.expert_mean_s);
            const double d1 = cost_.dispatch_s(1.0), k1 = cost_.combine_s(1.0);
            const double hot_extra =
                n * (fp * cost_.dispatch_s(f) + (fp + 2.0) * cost_.combine_s(f) - fp * d1 - k1 -
                     (fp + 1.0) * k1);
            const double a2a_wait =
                overlapped_a2a_
                    ? ((m - c.unpaired) * n * (cost_.pairExposed_s(f) - cost_.pairExposed_s(1.0)) +
                       c.unpaired * hot_extra) /
                          m
                    : hot_extra;
            wait = compute_wait + a2a_wait;
        }
        stage_t[i] = is_moe_ ? c.total_s - c.base_wait_s + wait : c.total_s;
        stage_wait[i] = wait;
    }
    double worst_t = -1, worst_wait = 0;
    for (size_t i = 0; i < stages_.size(); ++i) {
        const size_t partner = partnerOf(i);
        const double t = rankTime_s(i, stage_t[i], stage_t[partner]);
        if (t > worst_t && stage_t[i] >= stage_t[partner]) {
            worst_t = t;
            worst_wait = rankTime_s(i, stage_wait[i], stage_wait[partner]);
            out.slowest_stage = static_cast<int>(i);
        }
    }
    if (worst_t < 0) { // no stages: nothing to replay
        out.step_time_s = base_step_s_;
    } else {
        out.step_time_s = fixed_s_ + micro_batches_ * worst_t + bubble_per_mb_s_ * worst_t;
        out.imbalance_wait_s = micro_batches_ * worst_wait;
    }
    if (gpus)
        gpuMetrics(load, out, *gpus);
    return out;
}

void ReplayModel::gpuMetrics(const ExpertLoad& load, StepSample& out, GpuStepMetrics& g) const {
    const Placement& p = *placement_;
    const size_t n_gpus = p.coords.size();
    g.tokens.assign(n_gpus, 0.0f);
    g.load_factor.assign(n_gpus, 0.0f);
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
    std::vector<double> tokens(stages_.size() * per_stage, 0.0);
    std::vector<double> expert_s(stages_.size() * per_stage, 0.0);
    for (size_t st = 0; sampled && st < stages_.size(); ++st) {
        double* tok = tokens.data() + st * per_stage;
        double* exp_s = expert_s.data() + st * per_stage;
        for (const int layer : stages_[st].moe_layers) {
            if (layer < 0 || layer >= load.moe_layers)
                continue;
            const double* ranks = load.rank_tokens.data() + static_cast<size_t>(layer) * per_stage;
            for (size_t i = 0; i < per_stage; ++i) {
                tok[i] += ranks[i];
                exp_s[i] += cost_.expertForward_s(ranks[i]) + cost_.expertBackward_s(ranks[i]);
            }
        }
    }
    const double m = micro_batches_;
    const double mean = cost_.mean_slots;
    const double fp = fwd_pairs_;
    float hottest = -1.0f;
    for (size_t gpu = 0; gpu < n_gpus; ++gpu) {
        const RankCoords& rc = p.coords[gpu];
        if (rc.pp < 0 || rc.pp >= static_cast<int>(stages_.size()))
            continue;
        const StageConst& c = stages_[static_cast<size_t>(rc.pp)];
        g.memory_share[gpu] = static_cast<float>(c.memory_share);
        const double n = static_cast<double>(c.moe_layers.size());
        double tok = 0, exp_s = n * c.expert_mean_s;
        if (sampled && rc.ep >= 0 && rc.ep < ep) {
            // Token stream = expert-DP coordinate modulo the sampled groups
            // (ExpertLoad::gpuTokens).
            const size_t i = static_cast<size_t>(rc.pp) * per_stage +
                             static_cast<size_t>((rc.edp >= 0 ? rc.edp : 0) % groups) * ep +
                             static_cast<size_t>(rc.ep);
            tok = tokens[i];
            exp_s = expert_s[i];
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
                static_cast<float>(m * ((tok / mean) * (fp * c.dispatch_bytes + c.combine_bytes) +
                                        n * (fp + 1.0) * c.combine_bytes));
        // Idle: the step minus the GPU's own compute, its stage's load-independent compute with
        // the expert GEMMs at its own tokens in every layer.
        const double busy = m * (c.compute_s - n * c.expert_mean_s + exp_s);
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
