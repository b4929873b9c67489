// The one cost model of a training step: every formula that prices an operation, defined once.
// Every constant that is not a datasheet figure is an efficiency, defined once below with where
// its value comes from; the same constants serve every scenario.

#include "moe/step_costs.h"

#include <algorithm>
#include <cmath>
#include <span>

namespace moe {

namespace efficiency {
// Large BF16 GEMMs reach ~70% of the dense peak on H100 with cuBLAS (about 690 of 989 TFLOPS
// in public GEMM benchmarks); Megatron-LM's best dense runs report 40-47% end-to-end MFU.
constexpr double kGemmBf16 = 0.70;
// FP8 GEMMs with DeepSeek-style fine-grained (1x128 / 128x128) scaling reach a smaller share of
// the doubled FP8 peak: promotion to CUDA cores every 128 elements and the quantization kernels
// cost throughput (DeepSeek-V3 report, section 3.3). ~50% of the FP8 peak = 1.4x BF16 speed.
constexpr double kGemmFp8 = 0.50;
// FlashAttention-3 BF16 reaches ~75% of peak forward and ~50% backward on H100; the
// fwd+bwd blend weighted by FLOPs (bwd = 2x fwd) is ~0.55.
constexpr double kAttentionCore = 0.55;
// Tokens per expert at which a grouped GEMM runs at half its large-size efficiency
// (step_costs.h, kExpertGemmHalfEfficiencyTokens).
constexpr double kGemmHalfTokens = kExpertGemmHalfEfficiencyTokens;
// Memory-bound kernels (norms, SwiGLU, residuals, rotary, permutes, optimizer) stream at ~80%
// of the HBM datasheet bandwidth (STREAM-like copy kernels on H100).
constexpr double kHbm = 0.80;
// NCCL / DeepEP collectives over NVLink reach ~80% of line rate (nccl-tests busBW on H100;
// DeepEP intranode ~155 GB/s of H800's 200 GB/s).
constexpr double kScaleUp = 0.80;
// The catalog's NIC bandwidth is already the achievable rate; collectives across the fabric add
// congestion and protocol overhead: DeepEP internode reaches ~43 of ~48 GB/s on CX7 400G.
constexpr double kScaleOut = 0.90;
// Bytes of memory-bound traffic per token per layer, in units of hidden x activation bytes,
// forward pass: 2 RMSNorms (read + write: 4), 2 residual adds (3 each: 6), rotary and softmax
// bookkeeping (~4), bias/dropout-free Megatron layers otherwise: ~14 hidden-sized passes.
constexpr double kElementwisePassesPerLayer = 14.0;
// Two RMSNorms recomputed by selective recompute: each reads its input and writes its output.
constexpr double kNormPassesPerLayer = 4.0;
// SwiGLU activation: reads gate and up (2 x ffn) and writes one ffn-sized output: 3 passes.
constexpr double kSwigluPasses = 3.0;
// MoE permute/unpermute of each routed copy (gather before experts, scatter-add after): read +
// write, both ways: 4 hidden-sized passes per token slot.
constexpr double kPermutePassesPerSlot = 4.0;
// Overlapping communication with compute is not free: the communication kernels occupy SMs.
// DeepSeek-V3 (report, section 3.2.2) dedicates 20 of the H800's 132 SMs to all-to-all while
// DualPipe overlaps it, so compute runs on the remaining ~85%.
constexpr double kOverlapCommSmShare = 20.0 / 132.0;
// Adam step bytes per parameter of this GPU's optimizer shard: fp32 master, m and v read and
// written (24), fp32 gradient read (4), bf16 weight written (2).
constexpr double kAdamBytesPerParam = 30.0;
} // namespace efficiency

HardwareRates hardwareRates(const Scenario& s) {
    const GpuSpec& gpu = s.cluster.gpu;
    HardwareRates r;
    const bool overlaps_comm = s.layout.schedule == PipelineSchedule::dualpipe;
    const double sm_share = overlaps_comm ? 1.0 - efficiency::kOverlapCommSmShare : 1.0;
    const bool fp8 = s.model.compute_precision == Precision::fp8;
    r.gemm_flops = (fp8 ? gpu.fp8_tflops * 1e12 * efficiency::kGemmFp8
                        : gpu.bf16_tflops * 1e12 * efficiency::kGemmBf16) *
                   sm_share;
    r.attention_flops = gpu.bf16_tflops * 1e12 * efficiency::kAttentionCore * sm_share;
    r.hbm_bytes_s = gpu.hbm_tbps * 1e12 * efficiency::kHbm;
    r.scale_up = {gpu.scale_up_gbps * efficiency::kScaleUp, gpu.scale_up_latency_us};
    r.scale_out = {s.cluster.nic.bandwidth_gbps * efficiency::kScaleOut *
                       static_cast<double>(s.cluster.nics_per_node) / s.cluster.gpus_per_node,
                   s.cluster.nic.latency_us};
    // An oversubscribed fabric gives each GPU only 1/oversubscription of its NIC rate once
    // traffic leaves the leaf, which all-to-all and DP traffic across nodes mostly does.
    r.scale_out.bandwidth_gbps /= std::max(1.0, s.cluster.oversubscription);
    return r;
}

// ---- compute ------------------------------------------------------------------------------------

double attentionForward_s(const ModelSpec& m, double tokens, const HardwareRates& r) {
    // Projections (2 x attention parameters per token) at the GEMM rate, the causal core at the
    // attention rate, and ~14 hidden-sized elementwise passes through HBM.
    const LayerFlops flops = forwardFlopsPerToken(m, false);
    return tokens * flops.attention_proj / r.gemm_flops +
           tokens * flops.attention_core / r.attention_flops +
           tokens * m.hidden * bytesPerElement(m.activation_precision) *
               efficiency::kElementwisePassesPerLayer / r.hbm_bytes_s;
}

double selectiveRecompute_s(const ModelSpec& m, double tokens, const HardwareRates& r) {
    // Selective recompute (norms, activation functions, MLA up-projection; model_costs.cpp)
    // re-runs the MLA up-projection GEMMs and the two norms' passes in backward.
    return tokens * selectiveRecomputeFlopsPerToken(m) / r.gemm_flops +
           tokens * m.hidden * bytesPerElement(m.activation_precision) *
               efficiency::kNormPassesPerLayer / r.hbm_bytes_s;
}

double swiglu_s(const ModelSpec& m, double tokens, double ffn_columns, const HardwareRates& r) {
    // Reads gate and up, writes one ffn-sized output: 3 passes of ffn_columns per token.
    return tokens * ffn_columns * bytesPerElement(m.activation_precision) *
           efficiency::kSwigluPasses / r.hbm_bytes_s;
}

double denseFfnForward_s(const ModelSpec& m, int tp, double tokens, const HardwareRates& r) {
    return tokens * forwardFlopsPerToken(m, false).dense_ffn / r.gemm_flops +
           swiglu_s(m, tokens, m.ffn_hidden / static_cast<double>(tp), r);
}

double routerForward_s(const ModelSpec& m, double tokens, const HardwareRates& r) {
    return tokens * forwardFlopsPerToken(m, true).router / r.gemm_flops;
}

double sharedExpertsForward_s(const ModelSpec& m, int tp, double tokens, const HardwareRates& r) {
    return tokens * forwardFlopsPerToken(m, true).shared_experts / r.gemm_flops +
           swiglu_s(m, tokens, m.shared_experts * m.effectiveSharedFfn() / static_cast<double>(tp),
                    r);
}

double lmHeadForward_s(const ModelSpec& m, double tokens, const HardwareRates& r) {
    return tokens * lmHeadForwardFlopsPerToken(m) / r.gemm_flops;
}

ExpertGemmShape expertGemmShape(const Scenario& s) {
    const ModelSpec& m = s.model;
    const double h = m.hidden;
    const double act_bytes = bytesPerElement(m.activation_precision);
    const double ffn_shard = static_cast<double>(m.expert_ffn_hidden) / s.layout.etp;
    ExpertGemmShape g;
    g.experts_per_rank = std::max(1, m.experts / s.layout.ep);
    // SwiGLU expert: three h x f GEMMs, 2 FLOPs per multiply-add.
    g.flops_per_slot = 2.0 * 3.0 * h * ffn_shard;
    g.weight_bytes = 3.0 * h * ffn_shard * bytesPerElement(m.weight_precision);
    // Per slot: the GEMMs' inputs and outputs (3h + 3f) and the permute passes (4h).
    g.activation_bytes_per_slot =
        act_bytes * (3.0 * h + 3.0 * ffn_shard) + act_bytes * h * efficiency::kPermutePassesPerSlot;
    return g;
}

double expertGemm_s(const ExpertGemmShape& g, double slots, const HardwareRates& r) {
    if (slots <= 0 || g.experts_per_rank <= 0)
        return 0;
    // Efficiency t/(t + 128) for t tokens per expert; memory streams every expert's weights
    // once plus each slot's activations.
    const double tokens_per_expert = slots / g.experts_per_rank;
    const double size_efficiency =
        tokens_per_expert / (tokens_per_expert + efficiency::kGemmHalfTokens);
    const double compute_s = slots * g.flops_per_slot / (r.gemm_flops * size_efficiency);
    const double memory_s =
        (g.weight_bytes * g.experts_per_rank + slots * g.activation_bytes_per_slot) / r.hbm_bytes_s;
    return std::max(compute_s, memory_s);
}

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
    // One copy per token slot at the dispatch precision (the combine returns at activation
    // precision). With node-limited routing (DeepEP), a token crosses the fabric once per
    // target node and is forwarded over NVLink inside it.
    const ModelSpec& m = s.model;
    const double h = m.hidden;
    AllToAllBytes b;
    b.dispatch = tokens * m.top_k * h * bytesPerElement(m.dispatch_precision);
    b.combine = tokens * m.top_k * h * bytesPerElement(m.activation_precision);
    if (s.layout.max_nodes_per_token > 0 && ep_group.domains > 1) {
        const double copies =
            expectedRemoteNodesPerToken(ep_group.domains, m.top_k, s.layout.max_nodes_per_token);
        b.dispatch_cross = tokens * copies * h * bytesPerElement(m.dispatch_precision);
        b.combine_cross = tokens * copies * h * bytesPerElement(m.activation_precision);
    }
    return b;
}

// ---- overlap ------------------------------------------------------------------------------------

// DualPipe (DeepSeek-V3 report, figure 4; timeline.cpp, emitPair) fuses the forward of one
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
// it (its forward-sized weight gradients w run after them; timeline.cpp, backwardOps) and
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
        tail_s = std::max(0.0, tail_s);
        const double last_s = transfer.tp_runs_last ? transfer.tp_s : transfer.all_to_all_s;
        const double last_exposed_s = std::min(tail_s, last_s);
        const double a2a_exposed_s =
            transfer.tp_runs_last ? tail_s - last_exposed_s : last_exposed_s;
        exposed.tp_s += tail_s - a2a_exposed_s;
        // The exposed part of the all-to-all is its end, where the busiest receiver's extra is.
        const double wait_s = std::min(a2a_exposed_s, transfer.all_to_all_wait_s);
        exposed.imbalance_s += wait_s;
        exposed.all_to_all_s += a2a_exposed_s - wait_s;
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
// the bubble; the backwards of phases 3 and 5-7 match them (timeline.cpp, dualPipe).
double dualPipeUnpairedPasses(int pp, int stage) {
    const int from_end = std::min(stage, pp - 1 - stage);
    const bool middle = from_end == pp / 2 - 1;
    return 1.5 * pp - 1.0 - from_end + (middle ? 1.0 : 0.0);
}

/// Pipeline bubble for m micro-batches of per-micro-batch time t on pp stages (closed forms;
/// the timeline simulation reproduces them): GPipe and 1F1B (p-1)*t; interleaved (p-1)*t/v;
/// DualPipe (p/2-1)(F&B + B - 3W) with F = t/3, B = 2t/3, W = B/2 and F&B = F + B.
double pipelineBubble_s(const LayoutSpec& lay, double t_mb) {
    const double p = lay.pp;
    if (p <= 1)
        return 0;
    switch (lay.schedule) {
    case PipelineSchedule::interleaved:
        return (p - 1) * t_mb / lay.vpp;
    case PipelineSchedule::dualpipe: {
        const double f = t_mb / 3.0, b = 2.0 * t_mb / 3.0, w = b / 2.0;
        return std::max(0.0, (p / 2.0 - 1.0) * ((f + b) + b - 3.0 * w));
    }
    case PipelineSchedule::gpipe:
    case PipelineSchedule::one_f_one_b:
        return (p - 1) * t_mb;
    }
    return (p - 1) * t_mb;
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

// ---- MoE layer ----------------------------------------------------------------------------------

double MoeCosts::expertForward_s(double slots) const {
    HardwareRates r;
    r.gemm_flops = gemm_flops;
    r.hbm_bytes_s = hbm_bytes_s;
    return expertGemm_s(gemm, slots, r);
}

double MoeCosts::expertBackward_s(double slots) const {
    return expertForward_s(slots) * backward_passes + recompute_s_per_slot * slots;
}

double MoeCosts::dispatch_s(double factor) const {
    return allToAll(ep_group, bytes.dispatch, std::max(1.0, factor), scale_up, scale_out,
                    bytes.dispatch_cross)
        .time_s;
}

double MoeCosts::combine_s(double factor) const {
    return allToAll(ep_group, bytes.combine, std::max(1.0, factor), scale_up, scale_out,
                    bytes.combine_cross)
        .time_s;
}

MoeLayerPrice MoeCosts::price(double factor) const {
    // The busiest EP rank holds factor x the mean slots and the busiest receiver gets factor x
    // the mean bytes; the whole group runs at its pace. Backward: the combine's gradient
    // travels the dispatch direction and the dispatch's gradient the combine direction, both at
    // activation precision; full recompute repeats the forward pair before them.
    MoeLayerPrice p;
    const double slots = mean_slots * std::max(1.0, factor);
    p.expert_fwd_s = expertForward_s(slots);
    p.expert_bwd_s = expertBackward_s(slots);
    const double d = dispatch_s(factor), k = combine_s(factor);
    p.dispatch_fwd_s = d;
    p.combine_fwd_s = k;
    p.combine_bwd_s = k + (forward_pairs - 1.0) * (d + k);
    p.dispatch_bwd_s = k;
    return p;
}

// An MoE layer's segments in a fused DualPipe pair, as the timeline cuts them (timeline.cpp,
// forwardOps, backwardOps and emitPair; derivation at alternatingSegmentsExposure). The
// backward combine carries the recomputed forward pair under full recompute. With TP > 1 the
// TP collectives after attention and after the MLP are transfers too: the forward's one after
// attention cuts the router and shared experts (R) off the attention, the backward's one
// before attention cuts them off the attention's gradient, and the one after the MLP joins the
// combine. Three segments per pass:
//     compute:  F attention  | B experts | F R        | B R        | F experts | B attention
//     transfer: B TP+combine | F TP      | B dispatch | F dispatch | B TP      | F combine+TP
PairExposure MoeCosts::pairExposure(const MoeLayerPrice& p) const {
    const double combine_fwd_wait = p.combine_fwd_s - mean.combine_fwd_s;
    const double dispatch_fwd_wait = p.dispatch_fwd_s - mean.dispatch_fwd_s;
    const double combine_bwd_wait = p.combine_bwd_s - mean.combine_bwd_s;
    const double dispatch_bwd_wait = p.dispatch_bwd_s - mean.dispatch_bwd_s;
    if (!(tp_fwd_s > 0)) {
        const PairSegment forward[] = {
            {p.combine_fwd_s, 0, false, attention_block_fwd_s, 0, combine_fwd_wait},
            {p.dispatch_fwd_s, 0, false, p.expert_fwd_s, 0, dispatch_fwd_wait}};
        const PairSegment backward[] = {
            {p.combine_bwd_s, 0, false, p.expert_bwd_s, p.expert_fwd_s, combine_bwd_wait},
            {p.dispatch_bwd_s, 0, false, attention_block_bwd_s, attention_block_fwd_s,
             dispatch_bwd_wait}};
        return alternatingSegmentsExposure(forward, backward, 2);
    }
    const PairSegment forward[] = {
        {p.combine_fwd_s, tp_fwd_s, true, attention_fwd_s, 0, combine_fwd_wait},
        {0, tp_fwd_s, true, attention_block_fwd_s - attention_fwd_s},
        {p.dispatch_fwd_s, 0, false, p.expert_fwd_s, 0, dispatch_fwd_wait}};
    const PairSegment backward[] = {
        {p.combine_bwd_s, tp_bwd_s, false, p.expert_bwd_s, p.expert_fwd_s, combine_bwd_wait},
        {p.dispatch_bwd_s, 0, false, attention_block_bwd_s - attention_bwd_s,
         attention_block_fwd_s - attention_fwd_s, dispatch_bwd_wait},
        {0, tp_bwd_s, true, attention_bwd_s, attention_fwd_s}};
    return alternatingSegmentsExposure(forward, backward, 3);
}

// ---- building the model -------------------------------------------------------------------------

namespace {

double recomputeFactor(Recompute r) {
    // Forward + backward = 3 forward passes; full recompute runs the forward once more.
    return r == Recompute::full ? 4.0 : 3.0;
}

LayerPassCosts layerPassCosts(const Scenario& s, const Placement& placement, double tokens,
                              const HardwareRates& r) {
    const ModelSpec& m = s.model;
    const int tp = s.layout.tp;
    const double passes = recomputeFactor(s.training.recompute);
    const bool selective = s.training.recompute == Recompute::selective;
    // Selective recompute re-runs each MLP's activation in backward.
    const double activation_recompute = selective ? 1.0 : 0.0;
    LayerPassCosts c;
    c.attention_fwd_s = attentionForward_s(m, tokens, r);
    c.attention_bwd_s =
        c.attention_fwd_s * (passes - 1.0) + (selective ? selectiveRecompute_s(m, tokens, r) : 0.0);
    c.dense_ffn_fwd_s = denseFfnForward_s(m, tp, tokens, r);
    c.dense_ffn_bwd_s = c.dense_ffn_fwd_s * (passes - 1.0) +
                        activation_recompute * swiglu_s(m, tokens, m.ffn_hidden / double(tp), r);
    c.shared_fwd_s = sharedExpertsForward_s(m, tp, tokens, r);
    c.shared_bwd_s =
        c.shared_fwd_s * (passes - 1.0) +
        activation_recompute *
            swiglu_s(m, tokens, m.shared_experts * m.effectiveSharedFfn() / double(tp), r);
    c.router_fwd_s = routerForward_s(m, tokens, r);
    c.router_bwd_s = c.router_fwd_s * (passes - 1.0);
    // The LM head is not recomputed: backward is 2x forward.
    c.lm_head_fwd_s = lmHeadForward_s(m, tokens, r);
    c.lm_head_bwd_s = 2.0 * c.lm_head_fwd_s;
    if (tp > 1) {
        // An all-gather before and a reduce-scatter after attention and after each MLP block,
        // forward and backward (backward runs them again under full recompute).
        c.tp_call = tpCollective(s, shapeOf(placement.spanOf(GroupKind::tp)), tokens, r);
        c.tp_calls_fwd = 4;
        c.tp_calls_bwd = static_cast<int>(4 * (passes - 2.0));
    }
    if (s.layout.cp > 1) {
        // cp - 1 ring steps per layer forward (KV) and twice that backward (KV and their
        // gradients).
        const GroupShape cp_group = shapeOf(placement.spanOf(GroupKind::cp));
        c.cp_scale_out = cp_group.domains > 1;
        c.cp_hop_bytes = kvChunkBytes(s, tokens);
        c.cp_hop_s = sendRecvTime_s(c.cp_hop_bytes, c.cp_scale_out ? r.scale_out : r.scale_up);
        c.cp_hops_fwd = s.layout.cp - 1;
        c.cp_hops_bwd = 2 * (s.layout.cp - 1);
    }
    return c;
}

MoeCosts moeCosts(const Scenario& s, const Placement& placement, double tokens,
                  const LayerPassCosts& layer, const HardwareRates& r) {
    const ModelSpec& m = s.model;
    MoeCosts c;
    if (!m.isMoe())
        return c;
    const double passes = recomputeFactor(s.training.recompute);
    c.valid = true;
    c.gemm = expertGemmShape(s);
    c.gemm_flops = r.gemm_flops;
    c.hbm_bytes_s = r.hbm_bytes_s;
    // Each GPU's EP rank gets slots_per_group / ep token slots on average.
    c.mean_slots = tokenSlotsPerGroup(s) / s.layout.ep;
    c.backward_passes = passes - 1.0;
    c.recompute_s_per_slot =
        s.training.recompute == Recompute::selective
            ? swiglu_s(m, 1.0, static_cast<double>(m.expert_ffn_hidden) / s.layout.etp, r)
            : 0.0;
    c.forward_pairs = s.training.recompute == Recompute::full ? 2.0 : 1.0;
    c.ep_group = shapeOf(placement.spanOf(GroupKind::ep));
    c.scale_up = r.scale_up;
    c.scale_out = r.scale_out;
    c.bytes = allToAllBytes(s, c.ep_group, tokens);
    c.dispatch_call = allToAll(c.ep_group, c.bytes.dispatch, 1.0, r.scale_up, r.scale_out,
                               c.bytes.dispatch_cross);
    c.combine_call =
        allToAll(c.ep_group, c.bytes.combine, 1.0, r.scale_up, r.scale_out, c.bytes.combine_cross);
    c.attention_fwd_s = layer.attention_fwd_s;
    c.attention_bwd_s = layer.attention_bwd_s;
    c.attention_block_fwd_s = layer.attention_fwd_s + layer.router_fwd_s + layer.shared_fwd_s;
    c.attention_block_bwd_s = layer.attention_bwd_s + layer.router_bwd_s + layer.shared_bwd_s;
    c.tp_fwd_s = layer.tpOperationFwd_s();
    c.tp_bwd_s = layer.tpOperationBwd_s();
    c.mean = c.price(1.0);
    return c;
}

/// Gradient sync of one stage per step: ZeRO >= 1 (Megatron's distributed optimizer)
/// reduce-scatters the gradients (grad precision) and all-gathers the updated weights (weight
/// precision); ZeRO-0 all-reduces the gradients. The dense parameters sync over DP, the
/// expert parameters over expert-DP. When each runs, and what of it is exposed, is the
/// buckets' business (bucketSyncTail_s, bucketGatherHead_s). The optimizer then updates this
/// GPU's shard (every parameter it holds without ZeRO).
StageSync stageSync(const Scenario& s, const Placement& placement, const StageLayers& stage,
                    const HardwareRates& r) {
    StageSync sync;
    const StageParams params = paramsPerGpu(s, stage);
    const double grad_bytes = bytesPerElement(s.model.grad_precision);
    const double weight_bytes = bytesPerElement(s.model.weight_precision);
    const bool sharded = s.training.zero_stage >= 1;
    auto sync_of = [&](GroupKind kind, double param_count, double& up, double& out, double& grad_s,
                       double& gather_s) {
        const GroupShape shape = shapeOf(placement.spanOf(kind));
        if (shape.size <= 1 || param_count <= 0)
            return;
        if (sharded) {
            const CollectiveCost rs =
                reduceScatter(shape, param_count * grad_bytes, r.scale_up, r.scale_out);
            const CollectiveCost ag =
                reduceScatter(shape, param_count * weight_bytes, r.scale_up, r.scale_out);
            grad_s = rs.time_s;
            gather_s = ag.time_s;
            up = rs.scale_up_bytes_per_gpu + ag.scale_up_bytes_per_gpu;
            out = rs.scale_out_bytes_per_gpu + ag.scale_out_bytes_per_gpu;
        } else {
            const CollectiveCost ar =
                allReduce(shape, param_count * grad_bytes, r.scale_up, r.scale_out);
            grad_s = ar.time_s;
            up = ar.scale_up_bytes_per_gpu;
            out = ar.scale_out_bytes_per_gpu;
        }
    };
    sync_of(GroupKind::dp, params.dense_per_gpu, sync.dp_bytes_up, sync.dp_bytes_out,
            sync.dp_grad_s, sync.dp_gather_s);
    sync_of(GroupKind::edp, params.expert_per_gpu, sync.edp_bytes_up, sync.edp_bytes_out,
            sync.edp_grad_s, sync.edp_gather_s);

    // Adam step bytes per parameter of this GPU's optimizer shard.
    const double shard_params =
        sharded ? params.dense_per_gpu / std::max(1, s.layout.dp * s.layout.cp) +
                      params.expert_per_gpu / std::max(1, s.layout.expertDp())
                : params.dense_per_gpu + params.expert_per_gpu;
    sync.optimizer_s = shard_params * efficiency::kAdamBytesPerParam / r.hbm_bytes_s;
    return sync;
}

/// The exposed all-to-all and TP time of one micro-batch on `stage` when its EP groups run at
/// `factor` x the mean load. Without DualPipe every transfer is on the critical path. DualPipe
/// (see alternatingSegmentsExposure): the u forwards and u backwards the schedule does not pair
/// (dualPipeUnpairedPasses) run alone, each chain exposing all its transfers; the others expose
/// what the pair model leaves. Per micro-batch, over a rank's m forwards:
///     exposed = ((m - u) * pair exposure + u * transfer total) / m.
/// Dispatch, experts and combine all run at the pace of the EP group's hottest rank; of each
/// exposed all-to-all, the busiest receiver's extra is its tail, charged as imbalance wait
/// (the simulation's breakdown charges it the same way). The pair boundaries, where a pair
/// waits for its inputs and its own sends, are dualPipePairBoundary's. Left out, both ways: TP
/// and all-to-all transfers on different links (streams) may run at once, which hides more;
/// the chunks of a pair's two stages differ in layers, which hides less.
PairExposure transferExposure(const StepCostModel& model, const StageCosts& stage,
                              const StagePace& pace) {
    const double moe_layers = static_cast<double>(stage.moe_layer_indices.size());
    const bool moe = moe_layers > 0 && model.moe.valid;
    // Everything exposed: the all-to-alls at the mean load, plus the busiest receiver's extra.
    PairExposure alone;
    alone.tp_s = stage.traffic.tp_s;
    if (moe) {
        const double mean_s = model.moe.mean.transfers_s();
        alone.all_to_all_s = moe_layers * mean_s;
        alone.imbalance_s = moe_layers * (pace.hot.transfers_s() - mean_s);
    }
    if (model.schedule != PipelineSchedule::dualpipe)
        return alone;
    PairExposure pair;
    if (moe) {
        pair.all_to_all_s = moe_layers * pace.pair.all_to_all_s;
        pair.tp_s = moe_layers * pace.pair.tp_s;
        pair.imbalance_s = moe_layers * pace.pair.imbalance_s;
    }
    pair.tp_s += stage.dense_pair_tp_s;
    const double forwards = model.micro_batches;
    const double unpaired = stage.unpaired;
    const double paired = forwards - unpaired;
    auto mix = [&](double in_pair, double alone_s) {
        return (paired * in_pair + unpaired * alone_s) / forwards;
    };
    return {mix(pair.all_to_all_s, alone.all_to_all_s), mix(pair.tp_s, alone.tp_s),
            mix(pair.imbalance_s, alone.imbalance_s)};
}

StageCosts stageCosts(const Scenario& s, const Placement& placement, const StepCostModel& model,
                      const ParamCounts& pc, const StageLayers& layers) {
    const LayerPassCosts& l = model.layer;
    const MoeCosts& moe = model.moe;
    StageCosts c;
    c.layers = layers;
    for (const int layer : layers.layer_indices)
        if (s.model.isMoe() && layer >= s.model.dense_layers)
            c.moe_layer_indices.push_back(layer - s.model.dense_layers);
    const double moe_layers = static_cast<double>(c.moe_layer_indices.size());

    // Compute per micro-batch: every layer's attention, the dense layers' FFN, the MoE layers'
    // router, shared experts (counted with the dense FFN work: they run densely on every token)
    // and routed experts at the mean load, and the LM head where present.
    StepBreakdown& b = c.mean;
    b[StepItem::attention] = (l.attention_fwd_s + l.attention_bwd_s) * layers.layers;
    b[StepItem::dense_ffn] = (l.dense_ffn_fwd_s + l.dense_ffn_bwd_s) * layers.dense_layers +
                             (l.shared_fwd_s + l.shared_bwd_s) * moe_layers;
    if (layers.has_lm_head)
        b[StepItem::dense_ffn] += l.lm_head_fwd_s + l.lm_head_bwd_s;
    b[StepItem::router] = (l.router_fwd_s + l.router_bwd_s) * moe_layers;
    if (moe.valid && moe_layers > 0)
        b[StepItem::expert_compute] = moe_layers * moe.mean.experts_s();
    c.compute_s = b[StepItem::attention] + b[StepItem::dense_ffn] + b[StepItem::router] +
                  b[StepItem::expert_compute];
    c.backward_s = c.compute_s * 2.0 / recomputeFactor(s.training.recompute);

    // Traffic per micro-batch. All-to-all per MoE layer: fp forward dispatches and one backward
    // (the combine's gradient) in the dispatch direction, fp + 1 combines in the other.
    StageTraffic& t = c.traffic;
    if (moe.valid && moe_layers > 0) {
        const double fp = moe.forward_pairs;
        const CollectiveCost& d = moe.dispatch_call;
        const CollectiveCost& k = moe.combine_call;
        t.a2a_dispatch_s = moe_layers * (fp * d.time_s + k.time_s);
        t.a2a_combine_s = moe_layers * (fp + 1.0) * k.time_s;
        t.a2a_dispatch_up = moe_layers * (fp * d.scale_up_bytes_per_gpu + k.scale_up_bytes_per_gpu);
        t.a2a_dispatch_out =
            moe_layers * (fp * d.scale_out_bytes_per_gpu + k.scale_out_bytes_per_gpu);
        t.a2a_combine_up = moe_layers * (fp + 1.0) * k.scale_up_bytes_per_gpu;
        t.a2a_combine_out = moe_layers * (fp + 1.0) * k.scale_out_bytes_per_gpu;
        t.a2a_calls = static_cast<int>(moe_layers * (2.0 * fp + 2.0));
    }
    const double tp_calls = static_cast<double>(l.tp_calls_fwd + l.tp_calls_bwd) * layers.layers;
    t.tp_s = l.tp_call.time_s * tp_calls;
    t.tp_up = l.tp_call.scale_up_bytes_per_gpu * tp_calls;
    t.tp_out = l.tp_call.scale_out_bytes_per_gpu * tp_calls;
    t.tp_calls = static_cast<int>(tp_calls);
    const double cp_hops = static_cast<double>(l.cp_hops_fwd + l.cp_hops_bwd) * layers.layers;
    t.cp_s = l.cp_hop_s * cp_hops;
    (l.cp_scale_out ? t.cp_out : t.cp_up) = l.cp_hop_bytes * cp_hops;
    t.cp_calls = static_cast<int>(cp_hops);

    if (model.schedule == PipelineSchedule::dualpipe) {
        c.unpaired =
            std::min(model.micro_batches, dualPipeUnpairedPasses(s.layout.pp, layers.stage));
        if (l.tp_calls_fwd > 0 && layers.dense_layers > 0) {
            // A dense layer with TP > 1 has two segments per pass (F attention | B FFN | F FFN
            // | B attention beside B TP | F TP | B TP | F TP); without TP none, its compute
            // hides nothing.
            const double tp_fwd = l.tpOperationFwd_s(), tp_bwd = l.tpOperationBwd_s();
            const PairSegment forward[] = {{0, tp_fwd, true, l.attention_fwd_s},
                                           {0, tp_fwd, true, l.dense_ffn_fwd_s}};
            const PairSegment backward[] = {
                {0, tp_bwd, true, l.dense_ffn_bwd_s, l.dense_ffn_fwd_s},
                {0, tp_bwd, true, l.attention_bwd_s, l.attention_fwd_s}};
            c.dense_pair_tp_s =
                alternatingSegmentsExposure(forward, backward, 2).tp_s * layers.dense_layers;
        }
    }
    const PairExposure exposed = transferExposure(model, c, stagePace(model, 1.0));
    b[StepItem::all_to_all] = exposed.all_to_all_s;
    b.overlapped_s[static_cast<int>(StepItem::all_to_all)] =
        std::max(0.0, t.a2a_s() - exposed.all_to_all_s);
    b[StepItem::tp_comm] = exposed.tp_s;
    b.overlapped_s[static_cast<int>(StepItem::tp_comm)] = std::max(0.0, t.tp_s - exposed.tp_s);
    // Ring attention hides behind the attention core.
    const double cp_exposed = std::max(0.0, t.cp_s - b[StepItem::attention]);
    b[StepItem::cp_comm] = cp_exposed;
    b.overlapped_s[static_cast<int>(StepItem::cp_comm)] = t.cp_s - cp_exposed;
    b.total_s = 0;
    for (const double v : b.seconds)
        b.total_s += v;
    c.sync = stageSync(s, placement, layers, model.rates);

    // Gradient buckets: a layer's dense parameters are its attention and norms, its router and
    // shared experts (MoE) or dense FFN, and the embedding (first layer) or LM head (last).
    auto dense_params = [&](int layer) {
        const bool is_moe = s.model.isMoe() && layer >= s.model.dense_layers;
        double w =
            pc.attention_per_layer + pc.norms_per_layer +
            (is_moe ? pc.router_per_layer + pc.shared_experts_per_layer : pc.dense_ffn_per_layer);
        if (layer == 0)
            w += pc.embedding;
        if (layer == s.model.layers - 1)
            w += pc.lm_head;
        return w;
    };
    double stage_dense = 0;
    for (const int layer : layers.layer_indices)
        stage_dense += dense_params(layer);
    c.layer_dense_share.reserve(layers.layer_indices.size());
    c.layer_expert_share.reserve(layers.layer_indices.size());
    for (const int layer : layers.layer_indices) {
        const bool is_moe = s.model.isMoe() && layer >= s.model.dense_layers;
        c.layer_dense_share.push_back(stage_dense > 0 ? dense_params(layer) / stage_dense : 0.0);
        c.layer_expert_share.push_back(is_moe && moe_layers > 0 ? 1.0 / moe_layers : 0.0);
    }
    return c;
}

/// One layer's forward and backward for one micro-batch at the mean load: its compute and,
/// outside DualPipe (whose pairs hide them), the transfers the compute waits for. The gradient
/// buckets are released and needed at this pace.
struct LayerPass {
    double forward_s = 0, backward_s = 0;
};
LayerPass layerPass(const Scenario& s, const StepCostModel& model, int layer) {
    const LayerPassCosts& l = model.layer;
    const bool moe = model.moe.valid && s.model.isMoe() && layer >= s.model.dense_layers;
    const bool transfers_exposed = model.schedule != PipelineSchedule::dualpipe;
    LayerPass p;
    p.forward_s = l.attention_fwd_s;
    p.backward_s = l.attention_bwd_s;
    if (moe) {
        const MoeLayerPrice& e = model.moe.mean;
        p.forward_s += l.router_fwd_s + l.shared_fwd_s + e.expert_fwd_s;
        p.backward_s += l.router_bwd_s + l.shared_bwd_s + e.expert_bwd_s;
        if (transfers_exposed) {
            p.forward_s += e.dispatch_fwd_s + e.combine_fwd_s;
            p.backward_s += e.combine_bwd_s + e.dispatch_bwd_s;
        }
    } else {
        p.forward_s += l.dense_ffn_fwd_s;
        p.backward_s += l.dense_ffn_bwd_s;
    }
    if (transfers_exposed) {
        p.forward_s += 2 * l.tpOperationFwd_s();
        p.backward_s += 2 * l.tpOperationBwd_s();
    }
    if (layer == s.model.layers - 1) {
        p.forward_s += l.lm_head_fwd_s;
        p.backward_s += l.lm_head_bwd_s;
    }
    return p;
}

/// Pipeline rank `rank`'s gradient buckets: one per layer, its share of the stage's dense and
/// expert parameters (StageCosts::layer_dense_share). DualPipe: the rank holds the chunks of
/// stages r and pp-1-r, and the first forward needs the lower stage's first.
RankSync rankSync(const Scenario& s, const StepCostModel& model, int rank) {
    const int pp = static_cast<int>(model.stages.size());
    const bool dual = model.schedule == PipelineSchedule::dualpipe;
    const int low = dual ? std::min(rank, pp - 1 - rank) : rank;
    const int high = dual ? std::max(rank, pp - 1 - rank) : rank;
    RankSync rs;
    const int stages[] = {low, high};
    size_t layers = 0;
    for (const int st : std::span(stages, low == high ? 1 : 2))
        layers += model.stages[static_cast<size_t>(st)].layers.layer_indices.size();
    rs.buckets.reserve(layers);
    for (const int st : std::span(stages, low == high ? 1 : 2)) {
        const StageCosts& stage = model.stages[static_cast<size_t>(st)];
        const StageSync& sync = stage.sync;
        for (size_t i = 0; i < stage.layers.layer_indices.size(); ++i) {
            const int layer = stage.layers.layer_indices[i];
            const double dense = stage.layer_dense_share[i], expert = stage.layer_expert_share[i];
            const LayerPass pass = layerPass(s, model, layer);
            rs.buckets.push_back(
                {st, model.moe.valid && s.model.isMoe() && layer >= s.model.dense_layers,
                 sync.dp_grad_s * dense + sync.edp_grad_s * expert,
                 sync.dp_gather_s * dense + sync.edp_gather_s * expert, pass.forward_s,
                 pass.backward_s});
        }
        rs.optimizer_s += sync.optimizer_s;
        rs.sync_s += sync.dp_s() + sync.edp_s();
    }
    return rs;
}

} // namespace

StepCostModel buildStepCostModel(const Scenario& s, const Placement& placement) {
    StepCostModel model;
    const LayoutSpec& lay = s.layout;
    model.schedule = lay.schedule;
    model.layout = lay;
    model.micro_batches = microBatchesPerStep(s);
    model.tokens = tokensPerGpuPerMicroBatch(s);
    model.rates = hardwareRates(s);
    model.layer = layerPassCosts(s, placement, model.tokens, model.rates);
    model.moe = moeCosts(s, placement, model.tokens, model.layer, model.rates);
    const ParamCounts params = countParams(s.model);
    for (const StageLayers& layers : splitLayers(s.model, lay))
        model.stages.push_back(stageCosts(s, placement, model, params, layers));

    // Pipeline point-to-point: a micro-batch's activations forward and their gradients back.
    if (lay.pp > 1) {
        const GroupShape pp_group = shapeOf(placement.spanOf(GroupKind::pp));
        model.pp_scale_out = pp_group.domains > 1;
        model.pp_message_bytes =
            model.tokens * s.model.hidden * bytesPerElement(s.model.activation_precision);
        model.pp_send_s =
            sendRecvTime_s(model.pp_message_bytes,
                           model.pp_scale_out ? model.rates.scale_out : model.rates.scale_up);
    }
    for (int rank = 0; rank < static_cast<int>(model.stages.size()); ++rank)
        model.ranks.push_back(rankSync(s, model, rank));
    return model;
}

StagePace stagePace(const StepCostModel& model, double factor) {
    StagePace pace;
    pace.factor = std::max(1.0, factor);
    if (!model.moe.valid)
        return pace;
    pace.hot = pace.factor > 1.0 ? model.moe.price(pace.factor) : model.moe.mean;
    if (model.schedule == PipelineSchedule::dualpipe)
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
        const PairExposure exposed = transferExposure(model, stage, pace);
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
/// inputs (timeline.cpp, Action::pair), which its neighbour sends when its own previous pair
/// has finished computing: the forward output and the backward gradient, both to this rank, one
/// after the other (two sends, s each). The neighbour's pair in turn waited for this rank's
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
        double t = c.compute_s + c.dense_pair_tp_s;
        if (moe.valid && n > 0)
            t += n * (pace.hot.experts_s() - moe.mean.experts_s() + pace.pair.total_s());
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
};

/// The step's two ends, with the gradient buckets paced by the stages' busiest EP groups (the
/// DP group waits for its slowest member; `imbalance` per stage). The first stage's (DualPipe:
/// rank's) first forward waits for its weights' all-gather (bucketGatherHead_s). After the last
/// backward, each rank's exposed sync (bucketSyncTail_s) and optimizer end past the first
/// stage's last backward by tail + optimizer - slack: under 1F1B, GPipe and interleaving stage
/// s finishes its last backward while the s stages before it still drain one backward (of one
/// chunk) and one send each; DualPipe's ranks all end with their cool-down. The rank reaching
/// furthest ends the step; what its optimizer does not cover of that is exposed sync.
StepEnds stepEnds(const StepCostModel& model, const std::vector<StagePace>& paces) {
    StepEnds ends;
    if (model.ranks.empty())
        return ends;
    const MoeCosts& moe = model.moe;
    const bool transfers_exposed = model.schedule != PipelineSchedule::dualpipe;
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
    {
        const std::vector<SyncBucket>& first = model.ranks.front().buckets;
        double before = 0;
        for (const SyncBucket& b : first) {
            sync.push_back(b.gather_s);
            compute.push_back(before);
            before += forward(b);
        }
        ends.sync_s = bucketGatherHead_s(sync, compute);
    }
    double reach = 0, slack = 0;
    const RankSync* last = nullptr;
    for (size_t r = 0; r < model.ranks.size(); ++r) {
        const RankSync& rank = model.ranks[r];
        // Released in reverse order of first use: the first layer's bucket last.
        const size_t n = rank.buckets.size();
        sync.assign(n, 0.0);
        compute.assign(n, 0.0);
        double after = 0, backward_s = 0;
        for (size_t j = 0; j < n; ++j) {
            const SyncBucket& b = rank.buckets[j];
            sync[n - 1 - j] = b.grad_s;
            compute[n - 1 - j] = after;
            after += backward(b);
            backward_s += backward(b);
        }
        const double tail = bucketSyncTail_s(sync, compute) + rank.optimizer_s - slack;
        if (!last || tail > reach) {
            reach = tail;
            last = &rank;
        }
        if (transfers_exposed)
            slack += backward_s / std::max(1, model.layout.vpp) + model.pp_send_s;
    }
    reach = std::max(0.0, reach);
    ends.optimizer_s = std::min(last->optimizer_s, reach);
    ends.sync_s += reach - ends.optimizer_s;
    ends.hidden_sync_s = std::max(0.0, last->sync_s - ends.sync_s);
    return ends;
}

StepPrice priceStep(const StepCostModel& model, const ExpertLoad& load) {
    StepPrice price;
    const LayoutSpec& lay = model.layout;
    const double m = model.micro_batches;
    const size_t stages = model.stages.size();
    price.stage_imbalance.assign(stages, 1.0);
    price.stage_per_micro_batch.reserve(stages);
    int slowest = 0;
    std::vector<StagePace> paces(stages);
    for (size_t i = 0; i < stages; ++i) {
        const StageCosts& stage = model.stages[i];
        if (model.moe.valid && !stage.moe_layer_indices.empty())
            price.stage_imbalance[i] = load.worstGroupImbalance(stage.moe_layer_indices);
        paces[i] = stagePace(model, price.stage_imbalance[i]);
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
    step[StepItem::bubble] = pipelineBubble_s(lay, t_mb);

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
    step.total_s = 0;
    for (const double v : step.seconds)
        step.total_s += v;
    price.step_time_s = step.total_s;
    return price;
}

namespace {
/// Each item's stable key (JSON) and its words (tables and charts), in StepItem order.
struct StepItemName {
    const char* key;
    const char* words;
};
constexpr StepItemName kStepItemNames[kStepItemCount] = {
    {"attention", "attention"},
    {"dense_ffn", "dense FFN & head"},
    {"router", "router"},
    {"expert_compute", "expert compute"},
    {"all_to_all", "all-to-all (exposed)"},
    {"tp_collectives", "TP comm (exposed)"},
    {"cp_collectives", "CP comm (exposed)"},
    {"pp_transfers", "PP transfers"},
    {"pipeline_bubble", "pipeline bubble"},
    {"dp_sync", "DP sync (exposed)"},
    {"optimizer", "optimizer"},
    {"imbalance_wait", "imbalance wait"},
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

} // namespace moe
