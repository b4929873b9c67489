// The step cost model's communication and overlap terms: TP, CP and all-to-all transfers, what
// DualPipe's fused pairs hide, the pipeline bubble and the gradient buckets' exposed head and
// tail. The rest of the model is in step_costs.cpp (rates, compute, memory, the MoE layer).

#include "moe/step_costs.h"

#include "step_costs_detail.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace moe {

// ---- communication ------------------------------------------------------------------------------

CollectiveCost tpCollective(const Scenario& s, const GroupShape& tp_group, double tokens,
                            const HardwareRates& r) {
    // Sequence parallelism: each all-gather / reduce-scatter moves the full (tp x local) token
    // activations; the reduce-scatter and the all-gather cost the same.
    const double buffer_bytes =
        tokens * s.layout.tp * s.model.hidden * bytesPerElement(s.model.activation_precision);
    return reduceScatter(tp_group, buffer_bytes, r.scale_up, r.scale_out);
}

double kvChunkBytes(const Scenario& s, double tokens) {
    // Ring attention passes each GPU's KV chunk around the CP ring. Sequence parallelism
    // all-gathers the tp x `tokens` tokens of the CP chunk before attention, so each TP rank
    // holds the KV of all of them for its share of the KV heads (the MLA latent is not split
    // over TP).
    const ModelSpec& m = s.model;
    const double kv_elements_per_token =
        m.attention == AttentionKind::mla
            ? static_cast<double>(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim)
            : 2.0 * m.kv_heads * m.effectiveHeadDim() / static_cast<double>(s.layout.tp);
    return tokens * s.layout.tp * kv_elements_per_token * bytesPerElement(m.activation_precision);
}

AllToAllBytes allToAllBytes(const Scenario& s, const GroupShape& ep_group, double tokens) {
    // Megatron-Core's alltoall dispatcher sends one copy per token slot at the dispatch
    // precision (the combine returns at activation precision), node limit or not. The flex
    // dispatchers (training.moe_dispatcher deepep / hybridep; DeepEP's intranode and internode
    // kernels, deepseek-ai/DeepEP csrc/kernels/legacy) send a token once to each distinct GPU
    // of its own NVLink domain that holds one of its experts: D = expectedDistinctTargets(n, k)
    // of the n GPUs (8 picks over EP8: 5.25 copies, not 8). Across domains a token crosses the
    // fabric once per target node, to the GPU there with the sender's local index, which
    // forwards it over NVLink once to each other GPU of that node holding one of its experts
    // (the same for the sender's own node). Per GPU and token the NVLink leg carries
    // D (n_l - 1)/n_l copies, D the distinct ranks its k picks reach among the H n_l GPUs of
    // the H nodes it reaches (H = R_M N/(N-1), the own node hit as often as any other, R_M
    // capped by node-limited routing, layout.max_nodes_per_token): D = expectedDistinctTargets(
    // H n_l, k). DeepSeek-V3's EP64 over 8 nodes, M = 4: H = 4, D = 7.18, 6.28 copies over
    // NVLink, 3.5 through the NIC.
    const ModelSpec& m = s.model;
    const double h = m.hidden;
    const double dispatch_bytes = h * bytesPerElement(m.dispatch_precision);
    const double combine_bytes = h * bytesPerElement(m.activation_precision);
    AllToAllBytes b;
    b.dispatch = tokens * m.top_k * dispatch_bytes;
    b.combine = tokens * m.top_k * combine_bytes;
    if (s.training.moe_dispatcher == MoeDispatcher::alltoall)
        return b;
    if (ep_group.domains <= 1) {
        const double copies = expectedDistinctTargets(ep_group.size, m.top_k);
        b.dispatch = tokens * copies * dispatch_bytes;
        b.combine = tokens * copies * combine_bytes;
        return b;
    }
    const double copies =
        expectedRemoteNodesPerToken(ep_group.domains, m.top_k, s.layout.max_nodes_per_token);
    b.dispatch_cross = tokens * copies * dispatch_bytes;
    b.combine_cross = tokens * copies * combine_bytes;
    const double nodes = ep_group.domains;
    const double per_node = ep_group.gpus_per_domain;
    const double nodes_reached = copies * nodes / (nodes - 1);
    const double forwarded =
        expectedDistinctTargets(nodes_reached * per_node, m.top_k) * (per_node - 1) / per_node;
    b.dispatch_forward = tokens * forwarded * dispatch_bytes;
    b.combine_forward = tokens * forwarded * combine_bytes;
    return b;
}

// ---- overlap ------------------------------------------------------------------------------------

// The exposed part of a segment's transfers is their end: the one that runs last first, and of
// the all-to-all its end, where the busiest receiver's extra is (imbalance).
void step_costs_detail::chargeExposedTail(PairExposure& exposed, double tail_s,
                                          const PairSegment& transfer) {
    tail_s = std::max(0.0, tail_s);
    const double last_s = transfer.tp_runs_last ? transfer.tp_s : transfer.all_to_all_s;
    const double last_exposed_s = std::min(tail_s, last_s);
    const double a2a_exposed_s = transfer.tp_runs_last ? tail_s - last_exposed_s : last_exposed_s;
    exposed.tp_s += tail_s - a2a_exposed_s;
    const double wait_s = std::min(a2a_exposed_s, transfer.all_to_all_wait_s);
    exposed.imbalance_s += wait_s;
    exposed.all_to_all_s += a2a_exposed_s - wait_s;
}

// DualPipe (DeepSeek-V3 report, figure 4; timeline_builder.cpp, emitPair) fuses the forward of one
// micro-batch with the backward of another and cuts each pass into segments - the transfers a
// block of compute waits for, then that block - and alternates the passes' segments:
// F1 B1 F2 B2 ... Without TP an MoE layer has two segments per pass:
//     compute:  F attention | B experts  | F experts  | B attention
//     transfer: B combine   | F dispatch | B dispatch | F combine
// The transfer beside one compute segment feeds the next one (B combine -> B experts,
// F dispatch -> F experts, B dispatch -> B attention, F combine -> the next layer's
// F attention), and each compute segment feeds the transfer beside the next (F attention
// -> F dispatch, ...). Compute runs in order, transfers share a stream, so a pair takes the
// sum over its segments of when the next compute can start. A forward transfer starts with
// the backward block beside it (the forward block before is done, the backward transfer
// before has arrived): that block of compute c hides transfer t, exposing max(0, t - c).
// A backward transfer t_b only waits for the input gradients of the backward block before
// it (its forward-sized weight gradients w run after them; timeline_builder.cpp, backwardOps) and
// for the forward transfer t_f beside that block: from the block's start (input gradients
// i, block i + w) it ends at max(i, t_f) + t_b, the forward block c_f beside it at
// max(i + w, t_f) + c_f, exposing max(0, max(i, t_f) + t_b - max(i + w, t_f) - c_f): the
// weight gradients hide t_b as far as t_f leaves the stream free. The pair exposes the sum
// on top of its compute, even when the all-to-all total is far below the compute total.
// The backward's last block runs beside the next layer's first forward transfers, which are
// this layer's. The exposed time is the tail of the transfers, charged to the collective that
// runs in it.
PairExposure alternatingSegmentsExposure(const PairSegment* forward, const PairSegment* backward,
                                         size_t count) {
    PairExposure exposed;
    const auto charge = [&](double tail_s, const PairSegment& transfer) {
        step_costs_detail::chargeExposedTail(exposed, tail_s, transfer);
    };
    const auto transfer_s = [](const PairSegment& seg) { return seg.all_to_all_s + seg.tp_s; };
    for (size_t k = 0; k < count; ++k) {
        // Backward transfers beside forward[k], from the start of the backward block before it.
        const PairSegment& before = backward[(k + count - 1) % count];
        const double input_grads_s = before.compute_s - before.weight_grads_s;
        const double forward_starts_s = std::max(before.compute_s, transfer_s(forward[k]));
        const double transfer_starts_s = std::max(input_grads_s, transfer_s(forward[k]));
        charge(transfer_starts_s + transfer_s(backward[k]) - forward_starts_s -
                   forward[k].compute_s,
               backward[k]);
        // Forward transfers beside backward[k]: they start with it.
        const PairSegment& next = forward[(k + 1) % count];
        charge(transfer_s(next) - backward[k].compute_s, next);
    }
    return exposed;
}

// deepseek-ai/DualPipe's phases 1-3 run 1.5 pp - hr - 1 forwards alone (hr = the rank's
// distance from the nearer end of the pipeline) and the two middle ranks one more, to shrink
// the bubble; the backwards of phases 3 and 5-7 match them (timeline_schedules.cpp, dualPipe).
double dualPipeUnpairedPasses(int pp, int stage) {
    const int from_end = std::min(stage, pp - 1 - stage);
    const bool middle = from_end == pp / 2 - 1;
    return 1.5 * pp - 1.0 - from_end + (middle ? 1.0 : 0.0);
}

// Megatron-Core's combined 1F1B (pipeline_parallel/combined_1f1b.py) fuses the interleaved
// schedule's steady-state forward and backward into one step; its warm-up runs
// min((pp - r - 1) * 2 + (vpp - 1) * pp + 1, m vpp) chunk forwards alone, one more than the
// plain schedule's so that no pair holds both passes of one micro-batch (all of them when
// m = pp; schedules.py, get_pp_rank_microbatches: "num_warmup_microbatches += 1"), and the
// cool-down as many backwards. Without a pipeline the first forward and the last backward run
// alone.
double combinedUnpairedPasses(int pp, int vpp, int micro_batches, int stage) {
    if (pp <= 1)
        return std::min(1, micro_batches);
    const int total = micro_batches * vpp;
    const int warmup =
        micro_batches == pp ? total : std::min((pp - stage - 1) * 2 + (vpp - 1) * pp + 1, total);
    return static_cast<double>(warmup) / vpp;
}

bool pairsPasses(const Scenario& s) {
    return s.layout.schedule == PipelineSchedule::dualpipe ||
           s.training.ep_overlap == EpOverlap::combined_1f1b;
}

/// Pipeline bubble for m micro-batches of per-micro-batch time t on pp stages (closed forms;
/// the timeline simulation reproduces them): GPipe and 1F1B (p-1)*t; interleaved (p-1)*t/v;
/// DualPipe (p/2-1)(F&B + B - 3W) (DeepSeek-V3 report, table 2) with F, B and W the stage's
/// shares of t (stagePassShares) and F&B = F + B. The less of the backward is weight
/// gradients, the less the deferred W steps fill the bubble: attention's core, the
/// element-wise work and recomputation all sit in B.
PassSplit passSplit(double t_mb, const PassShares& shares) {
    return {t_mb * shares.forward, t_mb * (1.0 - shares.forward), t_mb * shares.weight};
}

// deepseek-ai/DualPipe, DualPipe.step, for rank r at distance hr = min(r, pp-1-r) from the
// nearer end (timeline_schedules.cpp follows the same phases): phases 1-3 and the middle ranks'
// unoverlapped first step-4 forward run u = dualPipeUnpairedPasses forwards alone, and as many
// backwards run alone (phases 3 and 5-7); the rank's W steps (phases 3, 7 and 8: 2(pp/2-hr-1)
// + hr + 1 = pp - 1 - hr) run the weight gradients its zero-bubble backwards deferred; the
// other m - u forwards run paired with a backward. A pass alone exposes all its transfers (X_f
// forward, X_b backward), a pair what the pair model leaves (X_p); t holds their mix over the
// rank's m micro-batches (transferExposure), so its compute is
//     c = t - ((m - u) X_p + u (X_f + X_b)) / m,
// split into F, B and W by passSplit. Then
//     1F = u (F + X_f),  1B = u (B + X_b) - n_W W,  1W = n_W W,  1F1B = (m - u)(F + B + X_p),
// which sum to m t; the step before the optimizer less m t is the rank's idle time.
DualPipePhases dualPipePhases(int pp, int micro_batches, int rank, double t_mb,
                              double before_optimizer_s, const PassShares& shares,
                              const PassTransfers& transfers) {
    DualPipePhases ph;
    if (pp < 2)
        return ph;
    const int from_end = std::min(rank, pp - 1 - rank);
    ph.valid = true;
    ph.rank = rank;
    ph.alone = std::min(micro_batches, static_cast<int>(dualPipeUnpairedPasses(pp, rank)));
    ph.deferred_w = pp - 1 - from_end;
    const double m = micro_batches, u = ph.alone;
    const double alone_s = transfers.alone_forward_s + transfers.alone_backward_s;
    const double mixed_s = m > 0 ? ((m - u) * transfers.pair_s + u * alone_s) / m : 0.0;
    const PassSplit pass = passSplit(std::max(0.0, t_mb - mixed_s), shares);
    ph.forward_s = u * (pass.forward_s + transfers.alone_forward_s);
    ph.weight_backward_s = ph.deferred_w * pass.weight_s;
    ph.input_backward_s = u * (pass.backward_s + transfers.alone_backward_s) - ph.weight_backward_s;
    ph.paired_s = (m - u) * (pass.forward_s + pass.backward_s + transfers.pair_s);
    ph.idle_s = std::max(0.0, before_optimizer_s - m * t_mb);
    return ph;
}

double pipelineBubble_s(const LayoutSpec& lay, double t_mb, const PassShares& shares) {
    const double p = lay.pp;
    if (p <= 1)
        return 0;
    switch (lay.schedule) {
    case PipelineSchedule::interleaved:
        return (p - 1) * t_mb / lay.vpp;
    case PipelineSchedule::dualpipe: {
        const PassSplit pass = passSplit(t_mb, shares);
        const double f = pass.forward_s, b = pass.backward_s, w = pass.weight_s;
        return std::max(0.0, (p / 2.0 - 1.0) * ((f + b) + b - 3.0 * w));
    }
    case PipelineSchedule::gpipe:
    case PipelineSchedule::one_f_one_b:
        return (p - 1) * t_mb;
    }
    return (p - 1) * t_mb;
}

// The forwards are a flow shop of m alike jobs: stage s ends its last forward at
// sum_{u<=s} F_u + (m - 1) max_{u<=s} F_u, the last stage at sum F + (m - 1) max F. Every other
// stage has ended its forwards by the time the first backward reaches it (its prefix sum and
// maximum are no larger), so the backwards are the same flow shop in reverse from there:
// sum B + (m - 1) max B more. Worked examples in test_step_costs.
double gpipeBubble_s(const std::vector<double>& forward_s, const std::vector<double>& backward_s,
                     int micro_batches, int pace_stage) {
    if (forward_s.size() <= 1 || micro_batches < 1)
        return 0;
    double step_s = 0, max_forward_s = 0, max_backward_s = 0;
    for (size_t s = 0; s < forward_s.size(); ++s) {
        step_s += forward_s[s] + backward_s[s];
        max_forward_s = std::max(max_forward_s, forward_s[s]);
        max_backward_s = std::max(max_backward_s, backward_s[s]);
    }
    const double m = micro_batches;
    step_s += (m - 1) * (max_forward_s + max_backward_s);
    const size_t pace = static_cast<size_t>(pace_stage);
    return std::max(0.0, step_s - m * (forward_s[pace] + backward_s[pace]));
}

// Megatron's 1F1B order: stage s runs p - 1 - s warm-up forwards, then alternates forward and
// backward, then drains its backwards. Let the last stage be the slowest (t_last >= t_s for all
// s). Its first forward starts once micro-batch 0 has passed the stages before it,
// sum_{s<last} F_s. From then it never waits: its forward j + 1 leaves stage s after that
// stage's backward j + s + 1 - p, which the last stage finished (p - 1 - s) t_last earlier
// than it needs forward j + 1, while the way back and forth through stages s..last-1 takes
// sum_{s<=u<last} t_u, no more. After its last backward, that backward passes the stages
// before it, sum_{s<last} B_s, each already free (their previous backward ended B_s <= t_last
// earlier). So the step is m t_last + sum_{s<last} t_s: the bubble is the other stages' t
// once. Any other slowest stage keeps the all-alike (p - 1) t. Worked examples in
// test_step_costs.
double oneFOneBBubble_s(const std::vector<double>& stage_s) {
    if (stage_s.size() <= 1)
        return 0;
    const double slowest_s = *std::max_element(stage_s.begin(), stage_s.end());
    if (stage_s.back() < slowest_s)
        return static_cast<double>(stage_s.size() - 1) * slowest_s;
    return std::accumulate(stage_s.begin(), stage_s.end() - 1, 0.0);
}

// Bucket j is released at -compute_after_s[j] (0 = the end of the backward) and the stream
// runs the buckets in order: finish_j = max(finish_{j-1}, release_j) + sync_j, so the last ends
// at max over j of (release_j + sync of buckets j..). Worked example in test_step_costs.
double bucketSyncTail_s(const std::vector<double>& sync_s,
                        const std::vector<double>& compute_after_s) {
    double tail = 0, suffix = 0;
    for (size_t j = sync_s.size(); j-- > 0;) {
        suffix += sync_s[j];
        tail = std::max(tail, suffix - compute_after_s[j]);
    }
    return tail;
}

// The gathers run back to back from the step's start: bucket j arrives at the sum of gathers
// up to j; layer j's first forward starts at max(the previous layer's end, that arrival). The
// forward pass ends later than its compute alone by max over j of (arrival_j - compute before
// j).
double bucketGatherHead_s(const std::vector<double>& gather_s,
                          const std::vector<double>& compute_before_s) {
    double head = 0, prefix = 0;
    for (size_t j = 0; j < gather_s.size(); ++j) {
        prefix += gather_s[j];
        head = std::max(head, prefix - compute_before_s[j]);
    }
    return head;
}

} // namespace moe
