// The step's price (priceStep): the step cost model at an expert-load sample - each stage at
// its EP groups' pace, DualPipe's pair boundaries, the pipeline's drain, the exposed gradient
// sync and the optimizer - and the names of the step's items.

#include "moe/step_costs.h"

#include "step_costs_detail.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace moe {

/// What one micro-batch's forward and backward on `stage` expose when they run alone: all their
/// transfers - the all-to-alls at the mean load plus the busiest receiver's extra (their tail,
/// charged as imbalance wait), and the TP collectives by the passes' call counts.
AloneTransfers step_costs_detail::aloneTransfers(const StepCostModel& model,
                                                 const StageCosts& stage, const StagePace& pace) {
    AloneTransfers alone;
    const LayerPassCosts& l = model.layer;
    const double tp_calls = static_cast<double>(l.tp_calls_fwd + l.tp_calls_bwd);
    alone.forward.tp_s = tp_calls > 0 ? stage.traffic.tp_s * l.tp_calls_fwd / tp_calls : 0.0;
    alone.backward.tp_s = stage.traffic.tp_s - alone.forward.tp_s;
    const double moe_layers = static_cast<double>(stage.moe_layer_indices.size());
    if (moe_layers > 0 && model.moe.valid) {
        const MoeLayerPrice& mean = model.moe.mean;
        const MoeLayerPrice& hot = pace.hot;
        alone.forward.all_to_all_s = moe_layers * (mean.dispatch_fwd_s + mean.combine_fwd_s);
        alone.forward.imbalance_s =
            moe_layers * (hot.dispatch_fwd_s + hot.combine_fwd_s) - alone.forward.all_to_all_s;
        alone.backward.all_to_all_s = moe_layers * (mean.combine_bwd_s + mean.dispatch_bwd_s);
        alone.backward.imbalance_s =
            moe_layers * (hot.combine_bwd_s + hot.dispatch_bwd_s) - alone.backward.all_to_all_s;
    }
    return alone;
}

/// What one paired micro-batch (a forward and a backward in one DualPipe or combined-1F1B pair)
/// on `stage` exposes: each MoE layer's pair exposure at the stage's pace, and the dense layers'
/// TP exposure (combined 1F1B fuses chunks of one stage). DualPipe (StepCostModel::chunk_pairs):
/// the rank fuses the forward chunk of this stage with the backward chunk of its other stage,
/// and the other way round, so the pair is priced from those chunks' segments
/// (chunkPairExposure), both chunks at this stage's pace; the stage's micro-batch exposes what
/// its forward chunk's transfers expose in the one kind of pair and its backward chunk's in the
/// other. Where the chunks differ (the end stages' embedding, dense layers, LM head and MTP
/// beside MoE layers), the longer chunk's transfers run with nothing to hide behind.
ChunkPairExposure step_costs_detail::chunkPairTransfers(const StepCostModel& model,
                                                        const StageCosts& stage,
                                                        const StagePace& pace) {
    if (pace.has_chunk_pair)
        return pace.chunk_pair;
    const size_t pp = model.stages.size();
    const StageCosts& other = model.stages[pp - 1 - static_cast<size_t>(stage.layers.stage)];
    thread_local std::vector<PairSegment> forward, backward;
    ChunkPairExposure own;
    forwardChunkSegments(model, stage, pace.hot, forward);
    backwardChunkSegments(model, other, pace.hot, backward);
    own.forward = chunkPairExposure(forward, backward).forward;
    forwardChunkSegments(model, other, pace.hot, forward);
    backwardChunkSegments(model, stage, pace.hot, backward);
    own.backward = chunkPairExposure(forward, backward).backward;
    return own;
}

PairExposure step_costs_detail::pairTransfers(const StepCostModel& model, const StageCosts& stage,
                                              const StagePace& pace) {
    PairExposure pair;
    if (model.chunk_pairs) {
        const ChunkPairExposure own = chunkPairTransfers(model, stage, pace);
        return {own.forward.all_to_all_s + own.backward.all_to_all_s,
                own.forward.tp_s + own.backward.tp_s,
                own.forward.imbalance_s + own.backward.imbalance_s};
    }
    const double moe_layers = static_cast<double>(stage.moe_layer_indices.size());
    if (moe_layers > 0 && model.moe.valid) {
        pair.all_to_all_s = moe_layers * pace.pair.all_to_all_s;
        pair.tp_s = moe_layers * pace.pair.tp_s;
        pair.imbalance_s = moe_layers * pace.pair.imbalance_s;
    }
    pair.tp_s += stage.dense_pair_tp_s;
    return pair;
}

/// The exposed all-to-all and TP time of one micro-batch on `stage` when its EP groups run at
/// `factor` x the mean load. Without paired passes every transfer is on the critical path.
/// DualPipe and combined 1F1B (see alternatingSegmentsExposure): the u forwards and u
/// backwards the schedule does not pair (dualPipeUnpairedPasses, combinedUnpairedPasses) run
/// alone, each chain exposing all its transfers; the others expose what the pair model leaves. Per
/// micro-batch, over a rank's m forwards:
///     exposed = ((m - u) * pair exposure + u * transfer total) / m.
/// Dispatch, experts and combine all run at the pace of the EP group's hottest rank; of each
/// exposed all-to-all, the busiest receiver's extra is its tail, charged as imbalance wait
/// (the simulation's breakdown charges it the same way). The pair boundaries, where a pair
/// waits for its inputs and its own sends, are dualPipePairBoundary's. Left out: TP and
/// all-to-all transfers on different links (streams) may run at once, which hides more.
PairExposure step_costs_detail::transferExposure(const StepCostModel& model,
                                                 const StageCosts& stage, const StagePace& pace) {
    const AloneTransfers passes = aloneTransfers(model, stage, pace);
    const PairExposure alone{passes.forward.all_to_all_s + passes.backward.all_to_all_s,
                             passes.forward.tp_s + passes.backward.tp_s,
                             passes.forward.imbalance_s + passes.backward.imbalance_s};
    if (!model.paired_passes)
        return alone;
    const PairExposure pair = pairTransfers(model, stage, pace);
    const double forwards = model.micro_batches;
    const double unpaired = stage.unpaired;
    const double paired = forwards - unpaired;
    auto mix = [&](double in_pair, double alone_s) {
        return (paired * in_pair + unpaired * alone_s) / forwards;
    };
    return {mix(pair.all_to_all_s, alone.all_to_all_s), mix(pair.tp_s, alone.tp_s),
            mix(pair.imbalance_s, alone.imbalance_s)};
}

StagePace stagePace(const StepCostModel& model, double factor) {
    StagePace pace;
    pace.factor = std::max(1.0, factor);
    if (!model.moe.valid)
        return pace;
    pace.hot = pace.factor > 1.0 ? model.moe.price(pace.factor) : model.moe.mean;
    if (model.paired_passes)
        pace.pair = model.moe.pairExposure(pace.hot);
    return pace;
}

StepBreakdown priceStage(const StepCostModel& model, const StageCosts& stage, double imbalance) {
    return priceStage(model, stage, stagePace(model, imbalance));
}

StepBreakdown priceStage(const StepCostModel& model, const StageCosts& stage,
                         const StagePace& pace) {
    StepBreakdown b = stage.mean;
    const double moe_layers = static_cast<double>(stage.moe_layer_indices.size());
    if (model.moe.valid && moe_layers > 0 && pace.factor > 1.0) {
        // The stage's EP groups each run at their own busiest rank's pace; the step waits for
        // the worst of them (ExpertLoad::worstGroupImbalance): its expert GEMMs' extra, and
        // the transfers at that pace, whose busiest receiver's extra is imbalance wait.
        const double compute_s = moe_layers * (pace.hot.experts_s() - model.moe.mean.experts_s());
        const PairExposure exposed = step_costs_detail::transferExposure(model, stage, pace);
        b[StepItem::all_to_all] = exposed.all_to_all_s;
        b.overlapped_s[static_cast<int>(StepItem::all_to_all)] =
            std::max(0.0, stage.traffic.a2a_s() - exposed.all_to_all_s);
        b[StepItem::tp_comm] = exposed.tp_s;
        b.overlapped_s[static_cast<int>(StepItem::tp_comm)] =
            std::max(0.0, stage.traffic.tp_s - exposed.tp_s);
        b[StepItem::imbalance_wait] = compute_s + exposed.imbalance_s;
        b.total_s = 0;
        for (const double v : b.seconds)
            b.total_s += v;
    }
    return b;
}

/// What one DualPipe pair boundary of a rank exposes beyond the pair model, by item.
struct PairBoundary {
    double pp_s = 0, all_to_all_s = 0, imbalance_s = 0;
};

/// DualPipe: the pipeline sends at each pair boundary of rank `rank`. A pair waits for both its
/// inputs (timeline_builder.cpp, Action::pair), which its neighbour sends when its own previous
/// pair has finished computing: the forward output and the backward gradient, both to this rank,
/// one after the other (two sends, s each). The neighbour's pair in turn waited for this rank's
/// outputs, so over two pairs the rank idles w = max(0, 2s - (T_rank - T_neighbour)) per pair,
/// T being a paired micro-batch's time (compute plus the pair's exposed transfers): balanced
/// ranks in lockstep wait for both sends, a rank slower than its neighbours by more than 2s
/// for none. When the sends share a link (stream) with the all-to-all, the rank's own two
/// sends follow its previous pair's transfers on the stream: they start `lag` after the pair
/// starts (a pair whose transfers outlast its compute leaves the stream that far behind;
/// lag = max(0, transfers - compute)) and take d = 2s - w of the pair's own time, ahead of
/// its first transfer t1 (the backward combine, with TP its TP collective), which its first
/// compute block c1 (the forward attention) would otherwise hide. The rank idles
/// max(0, lag + d - max(c1, lag)) waiting for the sends, and t1 ends exposed for
/// max(0, lag + d + t1 - max(c1, lag + d)) instead of max(0, lag + t1 - max(c1, lag)), its
/// tail (the busiest receiver's extra) as imbalance wait.
PairBoundary dualPipePairBoundary(const StepCostModel& model, const std::vector<StagePace>& paces,
                                  int rank) {
    const int pp = static_cast<int>(model.stages.size());
    const MoeCosts& moe = model.moe;
    auto paired_time = [&](int st) {
        const StageCosts& c = model.stages[static_cast<size_t>(st)];
        const double n = static_cast<double>(c.moe_layer_indices.size());
        const StagePace& pace = paces[static_cast<size_t>(st)];
        double t = c.compute_s + step_costs_detail::pairTransfers(model, c, pace).total_s();
        if (moe.valid && n > 0)
            t += n * (pace.hot.experts_s() - moe.mean.experts_s());
        return t;
    };
    auto rank_time = [&](int r) { return (paired_time(r) + paired_time(pp - 1 - r)) / 2; };
    const double two_sends_s = 2.0 * model.pp_send_s;
    double neighbour_s = 0;
    for (const int r : {rank - 1, rank + 1})
        if (r >= 0 && r < pp)
            neighbour_s = std::max(neighbour_s, rank_time(r));
    PairBoundary b;
    b.pp_s = std::clamp(two_sends_s - (rank_time(rank) - neighbour_s), 0.0, two_sends_s);
    const bool shared_link = moe.valid && (moe.ep_group.domains > 1) == model.pp_scale_out;
    if (!shared_link)
        return b;
    const double d = two_sends_s - b.pp_s;
    for (const int st : {rank, pp - 1 - rank}) { // the rank's two stages, half the pairs each
        const StageCosts& c = model.stages[static_cast<size_t>(st)];
        if (c.moe_layer_indices.empty())
            continue;
        const MoeLayerPrice& hot = paces[static_cast<size_t>(st)].hot;
        const double n = static_cast<double>(c.moe_layer_indices.size());
        const double compute_s = c.compute_s + n * (hot.experts_s() - moe.mean.experts_s());
        const double lag = std::max(0.0, n * hot.transfers_s() - compute_s);
        const double wait = hot.combine_bwd_s - moe.mean.combine_bwd_s;
        const double t1 = hot.combine_bwd_s + moe.tp_bwd_s;
        const double c1 = moe.tp_fwd_s > 0 ? moe.attention_fwd_s : moe.attention_block_fwd_s;
        const double sends_wait = std::max(0.0, lag + d - std::max(c1, lag));
        const double before = std::max(0.0, lag + t1 - std::max(c1, lag));
        const double after = std::max(0.0, lag + d + t1 - std::max(c1, lag + d));
        const double extra_wait = std::min(after, wait) - std::min(before, wait);
        b.pp_s += sends_wait / 2;
        b.imbalance_s += extra_wait / 2;
        b.all_to_all_s += (after - before - extra_wait) / 2;
    }
    return b;
}

/// The gradient sync and optimizer at the step's two ends, exposed.
struct StepEnds {
    double sync_s = 0, hidden_sync_s = 0, optimizer_s = 0;
    OptimizerPhase phase;
};

/// The step's two ends, with the gradient buckets paced by the stages' busiest EP groups (the
/// DP group waits for its slowest member; `imbalance` per stage). Overlapped weight gathers
/// (DpOverlap::grad_reduce_and_param_gather): the first stage's (DualPipe: rank's) first
/// forward waits for them (bucketGatherHead_s). Overlapped gradient reduction: each bucket
/// starts when the last backward releases it, else all start after the last backward
/// (Megatron without --overlap-grad-reduce reduces them in finalize_model_grads). Times are
/// counted from the first stage's last backward: under 1F1B, GPipe and interleaving stage s
/// finishes its last backward earlier by the slack of the s stages before it still draining
/// one backward (of one chunk) and one send each; DualPipe's ranks all end with their
/// cool-down. Each rank's reduction ends at its exposed sync (bucketSyncTail_s) - slack.
/// Gradient clipping's norm all-reduce spans every GPU, so no rank updates before the last
/// rank's reduction has ended: the step ends at
///     max_r(sync tail_r - slack_r) + norm all-reduce + max_r(update_r + gather_r),
/// gather_r being the rank's weight all-gather when not overlapped (after optimizer.step()).
StepEnds stepEnds(const StepCostModel& model, const std::vector<StagePace>& paces) {
    StepEnds ends;
    if (model.ranks.empty())
        return ends;
    const MoeCosts& moe = model.moe;
    const bool transfers_exposed = model.schedule != PipelineSchedule::dualpipe;
    const bool reduce_overlapped = model.dp_overlap != DpOverlap::none;
    const bool gather_overlapped = model.dp_overlap == DpOverlap::grad_reduce_and_param_gather;
    // Per stage: what its busiest EP group adds to a MoE layer's forward and backward.
    std::vector<double> forward_extra(model.stages.size(), 0.0);
    std::vector<double> backward_extra(model.stages.size(), 0.0);
    if (moe.valid) {
        const MoeLayerPrice& mean = moe.mean;
        for (size_t st = 0; st < model.stages.size(); ++st) {
            if (!(paces[st].factor > 1.0))
                continue;
            const MoeLayerPrice& hot = paces[st].hot;
            forward_extra[st] = hot.expert_fwd_s - mean.expert_fwd_s;
            backward_extra[st] = hot.expert_bwd_s - mean.expert_bwd_s;
            if (transfers_exposed) {
                forward_extra[st] += hot.dispatch_fwd_s + hot.combine_fwd_s - mean.dispatch_fwd_s -
                                     mean.combine_fwd_s;
                backward_extra[st] += hot.combine_bwd_s + hot.dispatch_bwd_s - mean.combine_bwd_s -
                                      mean.dispatch_bwd_s;
            }
        }
    }
    auto forward = [&](const SyncBucket& b) {
        return b.forward_s + (b.moe ? forward_extra[static_cast<size_t>(b.stage)] : 0.0);
    };
    auto backward = [&](const SyncBucket& b) {
        return b.backward_s + (b.moe ? backward_extra[static_cast<size_t>(b.stage)] : 0.0);
    };
    std::vector<double> sync, compute;
    if (gather_overlapped) {
        const std::vector<SyncBucket>& first = model.ranks.front().buckets;
        sync.reserve(first.size());
        compute.reserve(first.size());
        double before = 0;
        for (const SyncBucket& b : first) {
            sync.push_back(b.gather_s);
            compute.push_back(before);
            before += forward(b);
        }
        ends.sync_s = bucketGatherHead_s(sync, compute);
    }
    double barrier = 0, slack = 0, last_after = -1;
    const RankSync* last = nullptr;
    double last_gather = 0;
    for (size_t r = 0; r < model.ranks.size(); ++r) {
        const RankSync& rank = model.ranks[r];
        // Released in reverse order of first use: the first layer's bucket last.
        const size_t n = rank.buckets.size();
        sync.assign(n, 0.0);
        compute.assign(n, 0.0);
        double after = 0, backward_s = 0, gather_s = 0;
        for (size_t j = 0; j < n; ++j) {
            const SyncBucket& b = rank.buckets[j];
            sync[n - 1 - j] = b.grad_s;
            compute[n - 1 - j] = reduce_overlapped ? after : 0.0;
            after += backward(b);
            backward_s += backward(b);
            gather_s += gather_overlapped ? 0.0 : b.gather_s;
        }
        barrier = std::max(barrier, bucketSyncTail_s(sync, compute) - slack);
        if (rank.optimizer_s + gather_s > last_after) {
            last_after = rank.optimizer_s + gather_s;
            last = &rank;
            last_gather = gather_s;
        }
        if (transfers_exposed)
            slack += backward_s / std::max(1, model.layout.vpp) + model.pp_send_s;
    }
    OptimizerPhase& phase = ends.phase;
    phase.grad_sync_s = barrier;
    phase.optimizer_s = model.grad_norm_allreduce_s + last->optimizer_s;
    phase.grad_norm_allreduce_s = model.grad_norm_allreduce_s;
    phase.param_gather_s = last_gather;
    ends.optimizer_s = phase.optimizer_s;
    ends.sync_s += phase.grad_sync_s + phase.param_gather_s;
    ends.hidden_sync_s = std::max(0.0, last->sync_s - ends.sync_s);
    return ends;
}

namespace {
/// The F/B/W shares of the pipeline rank that holds `stage`: its own, and under DualPipe the
/// compute-weighted mean of the two stages whose chunks the rank runs.
PassShares rankPassShares(const StepCostModel& model, int stage) {
    const StageCosts& own = model.stages[static_cast<size_t>(stage)];
    if (model.schedule != PipelineSchedule::dualpipe)
        return own.shares;
    const StageCosts& other = model.stages[model.stages.size() - 1 - static_cast<size_t>(stage)];
    const double total = own.compute_s + other.compute_s;
    if (!(total > 0))
        return own.shares;
    const double a = own.compute_s / total, b = other.compute_s / total;
    return {a * own.shares.forward + b * other.shares.forward,
            a * own.shares.weight + b * other.shares.weight};
}

/// A DualPipe rank's exposed transfers per micro-batch by kind of pass: the mean of the two
/// stages whose chunks it runs, m/2 micro-batches each, as its micro-batch time is.
PassTransfers rankPassTransfers(const StepCostModel& model, const std::vector<StagePace>& paces,
                                int stage) {
    PassTransfers t;
    const int pp = static_cast<int>(model.stages.size());
    for (const int st : {stage, pp - 1 - stage}) {
        const StageCosts& c = model.stages[static_cast<size_t>(st)];
        const StagePace& pace = paces[static_cast<size_t>(st)];
        const AloneTransfers alone = step_costs_detail::aloneTransfers(model, c, pace);
        t.alone_forward_s += alone.forward.total_s() / 2;
        t.alone_backward_s += alone.backward.total_s() / 2;
        t.pair_s += step_costs_detail::pairTransfers(model, c, pace).total_s() / 2;
    }
    return t;
}

/// Each stage's chunk times at its pace, for DualPipe's walked bubble: its compute (the
/// busiest EP group's expert GEMMs included) split by its pass shares, plus what each pass
/// exposes alone (aloneTransfers) and in its pair (chunkPairTransfers).
std::vector<DualPipeChunkTimes> dualPipeChunkTimes(const StepCostModel& model,
                                                   const std::vector<StagePace>& paces) {
    std::vector<DualPipeChunkTimes> chunks(model.stages.size());
    for (size_t st = 0; st < model.stages.size(); ++st) {
        const StageCosts& c = model.stages[st];
        const StagePace& pace = paces[st];
        double compute_s = c.compute_s;
        if (model.moe.valid)
            compute_s += static_cast<double>(c.moe_layer_indices.size()) *
                         (pace.hot.experts_s() - model.moe.mean.experts_s());
        const double forward_s = compute_s * c.shares.forward;
        const double backward_s = compute_s - forward_s;
        const AloneTransfers alone = step_costs_detail::aloneTransfers(model, c, pace);
        const ChunkPairExposure paired = step_costs_detail::chunkPairTransfers(model, c, pace);
        DualPipeChunkTimes& t = chunks[st];
        t.forward_s = forward_s + alone.forward.total_s();
        t.backward_s = backward_s + alone.backward.total_s();
        t.weight_s = compute_s * c.shares.weight;
        t.pair_forward_s = forward_s + paired.forward.total_s();
        t.pair_backward_s = backward_s + paired.backward.total_s();
    }
    return chunks;
}

/// The step's pipeline bubble. GPipe, 1F1B and DualPipe take each stage's own micro-batch time
/// where their order allows it (gpipeBubble_s, oneFOneBBubble_s, dualPipeBubble_s); the rest
/// the closed form on the pacing stage's t (pipelineBubble_s).
double stepBubble_s(const StepCostModel& model, const StepPrice& price,
                    const std::vector<StagePace>& paces, int slowest) {
    const LayoutSpec& lay = model.layout;
    const size_t stages = model.stages.size();
    const int m = static_cast<int>(std::lround(model.micro_batches));
    if (model.chunk_pairs) {
        const double walked_s = dualPipeBubble_s(dualPipeChunkTimes(model, paces), m, slowest);
        if (walked_s >= 0)
            return walked_s;
    } else if (lay.pp > 1 && (lay.schedule == PipelineSchedule::gpipe ||
                              lay.schedule == PipelineSchedule::one_f_one_b)) {
        // Each stage's own time per micro-batch, its exposed transfers included.
        std::vector<double> stage_s(stages);
        for (size_t st = 0; st < stages; ++st)
            stage_s[st] = price.stage_per_micro_batch[st].total_s;
        if (lay.schedule == PipelineSchedule::one_f_one_b)
            return oneFOneBBubble_s(stage_s);
        std::vector<double> forward_s(stages), backward_s(stages);
        for (size_t st = 0; st < stages; ++st) {
            const PassSplit pass = passSplit(stage_s[st], model.stages[st].shares);
            forward_s[st] = pass.forward_s;
            backward_s[st] = pass.backward_s;
        }
        return gpipeBubble_s(forward_s, backward_s, m, slowest);
    }
    return pipelineBubble_s(lay, price.per_micro_batch.total_s, rankPassShares(model, slowest));
}
} // namespace

StepPrice priceStep(const StepCostModel& model, const ExpertLoad& load,
                    const std::vector<double>* group_peaks) {
    StepPrice price;
    const LayoutSpec& lay = model.layout;
    const double m = model.micro_batches;
    const size_t stages = model.stages.size();
    price.stage_imbalance.assign(stages, 1.0);
    price.stage_per_micro_batch.reserve(stages);
    int slowest = 0;
    std::vector<StagePace> paces(stages);
    // Every stage reads the same per-group peaks: computed once, not once per stage.
    std::vector<double> own_peaks;
    if (!group_peaks && model.moe.valid) {
        own_peaks = groupPeakRatios(load);
        group_peaks = &own_peaks;
    }
    for (size_t i = 0; i < stages; ++i) {
        const StageCosts& stage = model.stages[i];
        if (model.moe.valid && !stage.moe_layer_indices.empty())
            price.stage_imbalance[i] =
                load.worstGroupImbalance(stage.moe_layer_indices, group_peaks);
        paces[i] = stagePace(model, price.stage_imbalance[i]);
        if (model.chunk_pairs) {
            paces[i].chunk_pair = step_costs_detail::chunkPairTransfers(model, stage, paces[i]);
            paces[i].has_chunk_pair = true;
        }
        price.stage_per_micro_batch.push_back(priceStage(model, stage, paces[i]));
        if (price.stage_per_micro_batch.back().total_s >
            price.stage_per_micro_batch[static_cast<size_t>(slowest)].total_s)
            slowest = static_cast<int>(i);
    }
    // A DualPipe rank runs stage r's chunk in one direction and stage pp-1-r's in the other,
    // m/2 micro-batches each: its micro-batch costs the mean of the two, and the slowest rank
    // sets the pace. The slowest stage of that rank stands for it in the traffic tables.
    StepBreakdown per_micro_batch = price.stage_per_micro_batch[static_cast<size_t>(slowest)];
    if (lay.schedule == PipelineSchedule::dualpipe) {
        double slowest_rank_s = -1;
        for (int stage = 0; stage < lay.pp; ++stage) {
            const StepBreakdown& own = price.stage_per_micro_batch[static_cast<size_t>(stage)];
            const StepBreakdown& other =
                price.stage_per_micro_batch[static_cast<size_t>(lay.pp - 1 - stage)];
            if ((own.total_s + other.total_s) / 2 <= slowest_rank_s || own.total_s < other.total_s)
                continue;
            slowest_rank_s = (own.total_s + other.total_s) / 2;
            slowest = stage;
            for (size_t i = 0; i < own.seconds.size(); ++i) {
                per_micro_batch.seconds[i] = (own.seconds[i] + other.seconds[i]) / 2;
                per_micro_batch.overlapped_s[i] = (own.overlapped_s[i] + other.overlapped_s[i]) / 2;
            }
            per_micro_batch.total_s = slowest_rank_s;
        }
    }
    price.slowest_stage = slowest;
    price.per_micro_batch = per_micro_batch;
    const double t_mb = per_micro_batch.total_s;

    StepBreakdown& step = price.step;
    for (int i = 0; i < kStepItemCount; ++i) {
        step.seconds[static_cast<size_t>(i)] = per_micro_batch.seconds[static_cast<size_t>(i)] * m;
        step.overlapped_s[static_cast<size_t>(i)] =
            per_micro_batch.overlapped_s[static_cast<size_t>(i)] * m;
    }
    step[StepItem::bubble] = stepBubble_s(model, price, paces, slowest);

    // Pipeline sends. The fill and drain put 2(p-1) sends per virtual chunk on the critical
    // path. 1F1B's and interleaving's steady state hides the others: a stage's next input was
    // sent a whole micro-batch earlier. DualPipe's pairs add what dualPipePairSends_s finds.
    const double sends_s = 2.0 * m * lay.vpp * model.pp_send_s;
    double pp_exposed_s = lay.pp > 1 ? 2.0 * (lay.pp - 1) * lay.vpp * model.pp_send_s : 0.0;
    if (lay.schedule == PipelineSchedule::dualpipe && lay.pp > 1) {
        const double pairs = m - model.stages[static_cast<size_t>(slowest)].unpaired;
        const PairBoundary b = dualPipePairBoundary(model, paces, slowest);
        pp_exposed_s += pairs * b.pp_s;
        step[StepItem::all_to_all] += pairs * b.all_to_all_s;
        step[StepItem::imbalance_wait] += pairs * b.imbalance_s;
        step.overlapped_s[static_cast<int>(StepItem::all_to_all)] =
            std::max(0.0, step.overlapped_s[static_cast<int>(StepItem::all_to_all)] -
                              pairs * b.all_to_all_s);
    }
    pp_exposed_s = std::min(pp_exposed_s, sends_s);
    step[StepItem::pp_comm] = pp_exposed_s;
    step.overlapped_s[static_cast<int>(StepItem::pp_comm)] = sends_s - pp_exposed_s;

    const StepEnds ends = stepEnds(model, paces);
    step[StepItem::dp_sync] = ends.sync_s;
    step.overlapped_s[static_cast<int>(StepItem::dp_sync)] = ends.hidden_sync_s;
    step[StepItem::optimizer] = ends.optimizer_s;
    price.optimizer_phase = ends.phase;
    step.total_s = 0;
    for (const double v : step.seconds)
        step.total_s += v;
    price.step_time_s = step.total_s;
    // The phases end where the optimizer phase begins: its exposed gradient sync and weight
    // gather belong to the "opt" row, not to the rank's idle time.
    if (lay.schedule == PipelineSchedule::dualpipe && lay.pp > 1)
        price.dualpipe_phases = dualPipePhases(lay.pp, model.micro_batches, slowest, t_mb,
                                               step.total_s - price.optimizer_phase.total_s(),
                                               rankPassShares(model, slowest),
                                               rankPassTransfers(model, paces, slowest));
    return price;
}

namespace {
/// Each item's stable key (JSON), its words (tables and charts) and its brief words (sentences
/// such as "all-to-all +473 ms, imbalance +229 ms"), in StepItem order.
struct StepItemName {
    const char* key;
    const char* words;
    const char* brief;
};
constexpr StepItemName kStepItemNames[kStepItemCount] = {
    {"attention", "attention", "attention"},
    {"dense_ffn", "dense FFN & head", "dense FFN"},
    {"router", "router", "router"},
    {"expert_compute", "expert compute", "expert compute"},
    {"all_to_all", "all-to-all (exposed)", "all-to-all"},
    {"tp_collectives", "TP comm (exposed)", "TP comm"},
    {"cp_collectives", "CP comm (exposed)", "CP comm"},
    {"pp_transfers", "PP transfers", "PP transfers"},
    {"pipeline_bubble", "pipeline bubble", "bubble"},
    {"dp_sync", "DP sync (exposed)", "DP sync"},
    {"optimizer", "optimizer", "optimizer"},
    {"imbalance_wait", "imbalance wait", "imbalance"},
};
const StepItemName* nameOf(StepItem item) {
    const int i = static_cast<int>(item);
    return i >= 0 && i < kStepItemCount ? &kStepItemNames[i] : nullptr;
}
} // namespace

const char* toString(StepItem item) {
    const StepItemName* name = nameOf(item);
    return name ? name->words : "?";
}

const char* keyOf(StepItem item) {
    const StepItemName* name = nameOf(item);
    return name ? name->key : "?";
}

const char* briefName(StepItem item) {
    const StepItemName* name = nameOf(item);
    return name ? name->brief : "?";
}

} // namespace moe
