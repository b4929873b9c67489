// The performance model: one training step of a placed layout, composed from the model's costs
// (model_costs), the collectives' alpha-beta costs (collectives) and the sampled expert load
// (expert_load). Every constant that is not a datasheet figure is an efficiency, defined once
// below with where its value comes from; the same constants serve every scenario.

#include "moe/evaluate.h"

#include "moe/collectives.h"

#include <algorithm>
#include <cmath>
#include <string>

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
// Tokens per expert below which a grouped GEMM stops scaling: efficiency = peak_eff * t/(t+kHalf)
// (a saturation curve; cuBLAS grouped GEMMs reach half their large-size efficiency at ~128 rows).
constexpr double kGemmHalfTokens = 128.0;
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

namespace {

struct HardwareRates {
    double gemm_flops = 0;      ///< achievable FLOP/s of linear layers (compute precision)
    double attention_flops = 0; ///< achievable FLOP/s of the attention core (BF16)
    double hbm_bytes_s = 0;     ///< achievable HBM bytes/s
    LinkParams scale_up;
    LinkParams scale_out;
};

HardwareRates ratesOf(const Scenario& s) {
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

/// Time of a grouped GEMM over `experts` experts holding `tokens` token slots in total:
/// the larger of compute (with the small-GEMM efficiency curve) and weight + activation
/// streaming from HBM (roofline).
double expertGemmTime_s(double tokens, int experts, double flops_per_slot, double weight_bytes,
                        double activation_bytes_per_slot, const HardwareRates& r) {
    if (tokens <= 0 || experts <= 0)
        return 0;
    const double tokens_per_expert = tokens / experts;
    const double size_efficiency =
        tokens_per_expert / (tokens_per_expert + efficiency::kGemmHalfTokens);
    const double compute_s = tokens * flops_per_slot / (r.gemm_flops * size_efficiency);
    const double memory_s =
        (weight_bytes * experts + tokens * activation_bytes_per_slot) / r.hbm_bytes_s;
    return std::max(compute_s, memory_s);
}

/// One segment of a pass in a DualPipe pair (timeline.cpp, emitPair): the transfers a block of
/// compute waits for, then that block.
struct PairSegment {
    double all_to_all_s = 0, tp_s = 0; ///< the transfers
    bool tp_runs_last = false;         ///< the TP collective follows the all-to-all
    double compute_s = 0;
    /// backward: the weight gradients at the end of compute_s, which the pass's next transfers
    /// do not wait for (timeline.cpp, backwardOps, WeightGrads::split)
    double weight_grads_s = 0;
};

/// What a layer's segments of the two passes of a pair expose, run alternately forward[0],
/// backward[0], forward[1], ... (derivation at the overlap in microBatchCost); the backward's
/// last block runs beside the next layer's first forward transfers, which are this layer's.
/// The exposed time is the tail of the transfers, charged to the collective that runs in it.
PairExposure alternatingSegmentsExposure(const PairSegment* forward, const PairSegment* backward,
                                         size_t count) {
    PairExposure exposed;
    const auto charge = [&](double tail_s, const PairSegment& transfer) {
        tail_s = std::max(0.0, tail_s);
        const double last_s = transfer.tp_runs_last ? transfer.tp_s : transfer.all_to_all_s;
        const double last_exposed_s = std::min(tail_s, last_s);
        (transfer.tp_runs_last ? exposed.tp_s : exposed.all_to_all_s) += last_exposed_s;
        (transfer.tp_runs_last ? exposed.all_to_all_s : exposed.tp_s) += tail_s - last_exposed_s;
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

/// Everything one micro-batch costs on one stage (forward + backward, per GPU).
struct MicroBatchCost {
    StepBreakdown items;        ///< exposed seconds per item
    double compute_s = 0;       ///< all compute (for overlap windows)
    double backward_s = 0;      ///< backward compute (DP sync overlaps with it)
    double a2a_dispatch_s = 0;  ///< dispatch all-to-all time before overlap (mean load)
    double a2a_combine_s = 0;   ///< combine all-to-all time before overlap (mean load)
    double a2a_hot_extra_s = 0; ///< extra all-to-all time of the hottest rank
    /// DualPipe: what the layers' transfers add to the compute of an overlapped pair (see the
    /// overlap at the end of microBatchCost), by collective at the mean load, and in all at the
    /// hottest rank's pace.
    PairExposure pair_exposed;
    double pair_exposed_hot_s = 0;
    double tp_raw_s = 0;
    double cp_raw_s = 0;
    // bytes sent per GPU per micro-batch, by collective, split by link class
    double a2a_dispatch_up = 0, a2a_dispatch_out = 0;
    double a2a_combine_up = 0, a2a_combine_out = 0;
    double tp_up = 0, tp_out = 0;
    double cp_up = 0, cp_out = 0;
    int a2a_calls = 0, tp_calls = 0, cp_calls = 0;
    StageTimes times; ///< the same costs per layer and pass, for the timeline
    MoeCostModel moe; ///< the load-dependent formulas' inputs (MoE stages only)
};

double recomputeFactor(Recompute r) {
    // Forward + backward = 3 forward passes; full recompute runs the forward once more.
    return r == Recompute::full ? 4.0 : 3.0;
}

MicroBatchCost microBatchCost(const Scenario& s, const Placement& placement, const ExpertLoad& load,
                              const StageLayers& stage, const HardwareRates& r) {
    const ModelSpec& m = s.model;
    const LayoutSpec& lay = s.layout;
    MicroBatchCost c;
    const double tokens = tokensPerGpuPerMicroBatch(s); // per GPU, per layer
    const double act_bytes = bytesPerElement(m.activation_precision);
    const double weight_bytes = bytesPerElement(m.weight_precision);
    const double passes = recomputeFactor(s.training.recompute);
    const double h = m.hidden;

    const LayerFlops dense = forwardFlopsPerToken(m, false);
    const LayerFlops moe = forwardFlopsPerToken(m, true);

    // Attention of one layer, forward: projections on the GEMM rate, the core on the attention
    // rate, plus the layer's hidden-sized elementwise passes streamed through HBM. Selective
    // recompute (norms, activation functions, MLA up-projection; see model_costs.cpp) re-runs
    // the norms' passes and the MLA up-projection GEMMs in backward, and each MLP's activation.
    const bool selective = s.training.recompute == Recompute::selective;
    const double attention_fwd_s =
        tokens * dense.attention_proj / r.gemm_flops +
        tokens * dense.attention_core / r.attention_flops +
        tokens * h * act_bytes * efficiency::kElementwisePassesPerLayer / r.hbm_bytes_s;
    const double attention_recompute_s =
        selective ? tokens * selectiveRecomputeFlopsPerToken(m) / r.gemm_flops +
                        tokens * h * act_bytes * efficiency::kNormPassesPerLayer / r.hbm_bytes_s
                  : 0.0;
    const double attention_layer_s = attention_fwd_s * passes + attention_recompute_s;
    // SwiGLU elementwise time of an MLP with `ffn` intermediate columns per token on this GPU.
    const auto swiglu_s = [&](double token_count, double ffn) {
        return token_count * ffn * act_bytes * efficiency::kSwigluPasses / r.hbm_bytes_s;
    };
    const double activation_recompute = selective ? 1.0 : 0.0;

    const double dense_ffn_fwd_s = tokens * dense.dense_ffn / r.gemm_flops +
                                   swiglu_s(tokens, m.ffn_hidden / static_cast<double>(lay.tp));
    const double router_fwd_s = tokens * moe.router / r.gemm_flops;
    const double shared_swiglu_s =
        swiglu_s(tokens, m.shared_experts * m.effectiveSharedFfn() / static_cast<double>(lay.tp));
    const double shared_fwd_s = tokens * moe.shared_experts / r.gemm_flops + shared_swiglu_s;

    c.items[StepItem::attention] = attention_layer_s * stage.layers;
    c.items[StepItem::dense_ffn] =
        (dense_ffn_fwd_s * passes +
         activation_recompute * swiglu_s(tokens, m.ffn_hidden / static_cast<double>(lay.tp))) *
        stage.dense_layers;
    c.items[StepItem::router] = router_fwd_s * passes * stage.moe_layers;
    // Shared experts run densely on every token: count them with the dense FFN work.
    c.items[StepItem::dense_ffn] +=
        (shared_fwd_s * passes + activation_recompute * shared_swiglu_s) * stage.moe_layers;
    if (stage.has_lm_head) {
        c.items[StepItem::dense_ffn] += tokens * lmHeadForwardFlopsPerToken(m) / r.gemm_flops * 3.0;
    }
    // The same per layer and pass for the timeline; keep in step with the items above
    // (test_timeline checks that they add up to them).
    c.times.attention_fwd_s = attention_fwd_s;
    c.times.attention_bwd_s = attention_fwd_s * (passes - 1.0) + attention_recompute_s;
    c.times.dense_ffn_fwd_s = dense_ffn_fwd_s;
    c.times.dense_ffn_bwd_s =
        dense_ffn_fwd_s * (passes - 1.0) +
        activation_recompute * swiglu_s(tokens, m.ffn_hidden / static_cast<double>(lay.tp));
    c.times.shared_fwd_s = shared_fwd_s;
    c.times.shared_bwd_s = shared_fwd_s * (passes - 1.0) + activation_recompute * shared_swiglu_s;
    c.times.router_fwd_s = router_fwd_s;
    c.times.router_bwd_s = router_fwd_s * (passes - 1.0);
    if (stage.has_lm_head) {
        c.times.lm_head_fwd_s = tokens * lmHeadForwardFlopsPerToken(m) / r.gemm_flops;
        c.times.lm_head_bwd_s = 2.0 * c.times.lm_head_fwd_s;
    }

    // Tensor parallelism with sequence parallelism: an all-gather before and a reduce-scatter
    // after attention and after each MLP block, forward and backward, each of the full
    // (tp x local) token activations.
    if (lay.tp > 1) {
        const GroupShape tp_shape = shapeOf(placement.spanOf(GroupKind::tp));
        const double buffer_bytes = tokens * lay.tp * h * act_bytes;
        const CollectiveCost one = reduceScatter(tp_shape, buffer_bytes, r.scale_up, r.scale_out);
        const int per_layer = 4; // AG + RS around attention, AG + RS around the MLP
        const double calls = per_layer * stage.layers * (passes - 1.0);
        c.tp_raw_s = one.time_s * calls;
        c.tp_up = one.scale_up_bytes_per_gpu * calls;
        c.tp_out = one.scale_out_bytes_per_gpu * calls;
        c.tp_calls = static_cast<int>(calls);
        c.times.tp_call_s = one.time_s;
        c.times.tp_bytes_per_call = one.scale_up_bytes_per_gpu + one.scale_out_bytes_per_gpu;
        c.times.tp_calls_fwd = per_layer;
        c.times.tp_calls_bwd = static_cast<int>(per_layer * (passes - 2.0));
    }

    // Routed experts: each GPU's EP rank gets load.slots_per_group / ep token slots on average;
    // the busiest rank of an EP group gets imbalance x that, and the whole group waits for it.
    if (m.isMoe() && stage.moe_layers > 0) {
        const int experts_per_rank = std::max(1, m.experts / lay.ep);
        const double ffn_shard = static_cast<double>(m.expert_ffn_hidden) / lay.etp;
        const double flops_per_slot = 2.0 * 3.0 * h * ffn_shard;
        const double expert_weight_bytes = 3.0 * h * ffn_shard * weight_bytes;
        const double activation_bytes_per_slot = act_bytes * (3.0 * h + 3.0 * ffn_shard) +
                                                 act_bytes * h * efficiency::kPermutePassesPerSlot;
        const double mean_slots = load.slots_per_group / lay.ep;

        // Per-layer dispatch/combine bytes each GPU sends: one copy per token slot at the
        // dispatch precision (combine returns at activation precision), split by where the
        // receiving EP rank sits. With node-limited routing (DeepEP), a token crosses the
        // fabric once per target node and is forwarded over NVLink inside it.
        const GroupShape ep_shape = shapeOf(placement.spanOf(GroupKind::ep));
        const double slots_per_gpu = tokens * m.top_k;
        const double dispatch_bytes = slots_per_gpu * h * bytesPerElement(m.dispatch_precision);
        const double combine_bytes = slots_per_gpu * h * act_bytes;
        double dispatch_cross = -1;
        double combine_cross = -1;
        if (lay.max_nodes_per_token > 0 && ep_shape.domains > 1) {
            const double copies =
                expectedRemoteNodesPerToken(ep_shape.domains, m.top_k, lay.max_nodes_per_token);
            dispatch_cross = tokens * copies * h * bytesPerElement(m.dispatch_precision);
            combine_cross = tokens * copies * h * act_bytes;
        }
        MoeCostModel& model = c.moe;
        model.valid = true;
        model.experts_per_rank = experts_per_rank;
        model.flops_per_slot = flops_per_slot;
        model.expert_weight_bytes = expert_weight_bytes;
        model.activation_bytes_per_slot = activation_bytes_per_slot;
        model.gemm_flops = r.gemm_flops;
        model.hbm_bytes_s = r.hbm_bytes_s;
        model.mean_slots = mean_slots;
        model.ep_shape = ep_shape;
        model.scale_up = r.scale_up;
        model.scale_out = r.scale_out;
        model.dispatch_bytes = dispatch_bytes;
        model.combine_bytes = combine_bytes;
        model.dispatch_cross_bytes = dispatch_cross;
        model.combine_cross_bytes = combine_cross;
        model.backward_passes = passes - 1.0;
        model.recompute_s_per_slot = activation_recompute * swiglu_s(1.0, ffn_shard);
        model.forward_pairs = s.training.recompute == Recompute::full ? 2.0 : 1.0;
        model.attention_block_fwd_s = attention_fwd_s + router_fwd_s + shared_fwd_s;
        model.attention_block_bwd_s =
            c.times.attention_bwd_s + c.times.router_bwd_s + c.times.shared_bwd_s;
        model.attention_fwd_s = c.times.attention_fwd_s;
        model.attention_bwd_s = c.times.attention_bwd_s;
        model.tp_fwd_s = tpOperation_s(c.times, c.times.tp_calls_fwd);
        model.tp_bwd_s = tpOperation_s(c.times, c.times.tp_calls_bwd);
        {
            // Per pass at the mean load, in the order the loop below charges them.
            const double full = s.training.recompute == Recompute::full ? 1.0 : 0.0;
            const double d = model.dispatch_s(1.0);
            const double k = model.combine_s(1.0);
            c.times.expert_fwd_s = model.expertForward_s(mean_slots);
            c.times.expert_bwd_s = model.expertBackward_s(mean_slots);
            c.times.dispatch_fwd_s = d;
            c.times.combine_fwd_s = k;
            c.times.combine_bwd_s = k + full * (d + k); // first in backward (+ recomputed pair)
            c.times.dispatch_bwd_s = k;
            const CollectiveCost d_cost =
                allToAll(ep_shape, dispatch_bytes, 1.0, r.scale_up, r.scale_out, dispatch_cross);
            const CollectiveCost k_cost =
                allToAll(ep_shape, combine_bytes, 1.0, r.scale_up, r.scale_out, combine_cross);
            c.times.dispatch_bytes = d_cost.scale_up_bytes_per_gpu + d_cost.scale_out_bytes_per_gpu;
            c.times.combine_bytes = k_cost.scale_up_bytes_per_gpu + k_cost.scale_out_bytes_per_gpu;
        }

        // The stage's EP groups each run at their own busiest rank's pace; the step waits for
        // the worst of them (see ExpertLoad::worstGroupImbalance).
        std::vector<int> stage_moe_layers;
        for (const int layer : stage.layer_indices)
            if (layer >= m.dense_layers)
                stage_moe_layers.push_back(layer - m.dense_layers);
        const double imbalance = load.worstGroupImbalance(stage_moe_layers);
        for (const int layer : stage.layer_indices) {
            if (layer < m.dense_layers)
                continue;
            const double mean_fwd_s =
                expertGemmTime_s(mean_slots, experts_per_rank, flops_per_slot, expert_weight_bytes,
                                 activation_bytes_per_slot, r);
            const double hot_fwd_s =
                expertGemmTime_s(mean_slots * imbalance, experts_per_rank, flops_per_slot,
                                 expert_weight_bytes, activation_bytes_per_slot, r);
            const double recompute_mean_s = activation_recompute * swiglu_s(mean_slots, ffn_shard);
            c.items[StepItem::expert_compute] += mean_fwd_s * passes + recompute_mean_s;
            c.items[StepItem::imbalance_wait] +=
                (hot_fwd_s - mean_fwd_s) * passes + recompute_mean_s * (imbalance - 1.0);

            // Forward: a dispatch (at the dispatch precision) and a combine; backward: the
            // combine's gradient travels the dispatch direction and the dispatch's gradient
            // the combine direction, both at activation precision. Full recompute repeats the
            // forward pair.
            const double fwd_pairs = s.training.recompute == Recompute::full ? 2.0 : 1.0;
            const CollectiveCost d_mean =
                allToAll(ep_shape, dispatch_bytes, 1.0, r.scale_up, r.scale_out, dispatch_cross);
            const CollectiveCost d_hot = allToAll(ep_shape, dispatch_bytes, imbalance, r.scale_up,
                                                  r.scale_out, dispatch_cross);
            const CollectiveCost k_mean =
                allToAll(ep_shape, combine_bytes, 1.0, r.scale_up, r.scale_out, combine_cross);
            const CollectiveCost k_hot = allToAll(ep_shape, combine_bytes, imbalance, r.scale_up,
                                                  r.scale_out, combine_cross);
            const double dispatch_s = fwd_pairs * d_mean.time_s + k_mean.time_s;
            const double combine_s = (fwd_pairs + 1.0) * k_mean.time_s;
            const double hot_s = fwd_pairs * d_hot.time_s + (fwd_pairs + 2.0) * k_hot.time_s;
            c.a2a_dispatch_s += dispatch_s;
            c.a2a_combine_s += combine_s;
            c.a2a_hot_extra_s += hot_s - dispatch_s - combine_s;
            c.a2a_dispatch_up +=
                fwd_pairs * d_mean.scale_up_bytes_per_gpu + k_mean.scale_up_bytes_per_gpu;
            c.a2a_dispatch_out +=
                fwd_pairs * d_mean.scale_out_bytes_per_gpu + k_mean.scale_out_bytes_per_gpu;
            c.a2a_combine_up += (fwd_pairs + 1.0) * k_mean.scale_up_bytes_per_gpu;
            c.a2a_combine_out += (fwd_pairs + 1.0) * k_mean.scale_out_bytes_per_gpu;
            c.a2a_calls += static_cast<int>(2.0 * fwd_pairs + 2.0);

            const PairExposure mean_pair = model.pairExposure(1.0);
            c.pair_exposed.all_to_all_s += mean_pair.all_to_all_s;
            c.pair_exposed.tp_s += mean_pair.tp_s;
            c.pair_exposed_hot_s += model.pairExposed_s(imbalance);
        }
    }

    // Context parallelism (ring attention): each GPU passes its KV chunk around the ring,
    // cp - 1 hops per layer forward and twice that backward (KV and their gradients); it
    // overlaps with the attention core of the other chunks. Sequence parallelism all-gathers
    // the tp x `tokens` tokens of the CP chunk before attention, so each TP rank holds the KV
    // of all of them for its share of the KV heads (the MLA latent is not split over TP).
    if (lay.cp > 1) {
        const GroupShape cp_shape = shapeOf(placement.spanOf(GroupKind::cp));
        const double kv_elements_per_token =
            m.attention == AttentionKind::mla
                ? static_cast<double>(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim)
                : 2.0 * m.kv_heads * m.effectiveHeadDim() / static_cast<double>(lay.tp);
        const double chunk_bytes = tokens * lay.tp * kv_elements_per_token * act_bytes;
        const LinkParams& link = cp_shape.domains > 1 ? r.scale_out : r.scale_up;
        const double hops = (lay.cp - 1) * 3.0 * stage.layers;
        c.cp_raw_s = sendRecvTime_s(chunk_bytes, link) * hops;
        (cp_shape.domains > 1 ? c.cp_out : c.cp_up) = chunk_bytes * hops;
        c.cp_calls = static_cast<int>(hops);
        c.times.cp_hop_s = sendRecvTime_s(chunk_bytes, link);
        c.times.cp_bytes_per_hop = chunk_bytes;
        c.times.cp_hops_fwd = lay.cp - 1;
        c.times.cp_hops_bwd = 2 * (lay.cp - 1);
    }

    c.compute_s = c.items[StepItem::attention] + c.items[StepItem::dense_ffn] +
                  c.items[StepItem::router] + c.items[StepItem::expert_compute];
    c.backward_s = c.compute_s * 2.0 / passes;

    // Overlap. Without DualPipe the all-to-alls and TP collectives are on the critical path, the
    // hottest rank's extra all-to-all time as imbalance wait.
    //
    // DualPipe (DeepSeek-V3 report, figure 4; timeline.cpp, emitPair) fuses the forward of one
    // micro-batch with the backward of another and cuts each pass into segments - the transfers
    // a block of compute waits for, then that block - and alternates the passes' segments:
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
    // With TP > 1 the TP collectives after attention and after the MLP are transfers too
    // (timeline.cpp, forwardOps and backwardOps): the forward's one after attention cuts the
    // router and shared experts (R) off the attention, the backward's one before attention
    // cuts them off the attention's gradient, and the one after the MLP joins the combine.
    // Three segments per pass:
    //     compute:  F attention  | B experts | F R        | B R        | F experts | B attention
    //     transfer: B TP+combine | F TP      | B dispatch | F dispatch | B TP      | F combine+TP
    // A dense layer with TP > 1 has two (F attention | B FFN | F FFN | B attention beside
    // B TP | F TP | B TP | F TP); without TP none, its compute hides nothing.
    // Dispatch, experts and combine all run at the pace of the EP group's hottest rank.
    // The u forwards and u backwards the schedule does not pair (dualPipeUnpairedPasses) run
    // alone, each chain exposing all its transfers. Per micro-batch, over a rank's m forwards:
    //     exposed = ((m - u) * pair exposure + u * transfer total) / m
    // per collective, and the imbalance wait is the sum at the hottest rank's pace less that
    // at the mean load.
    // Left out, both ways: TP and all-to-all transfers on different links (streams) may run at
    // once, which hides more; a pair waits for both its inputs and sends both outputs after its
    // last compute, and the chunks of a pair's two stages differ in layers, which hides less.
    // Ring attention hides behind the attention core.
    const double a2a_total = c.a2a_dispatch_s + c.a2a_combine_s;
    double a2a_exposed = a2a_total;
    double a2a_hot_exposed = a2a_total + c.a2a_hot_extra_s;
    double tp_exposed = c.tp_raw_s;
    if (lay.schedule == PipelineSchedule::dualpipe) {
        if (lay.tp > 1 && stage.dense_layers > 0) {
            const double tp_fwd = tpOperation_s(c.times, c.times.tp_calls_fwd);
            const double tp_bwd = tpOperation_s(c.times, c.times.tp_calls_bwd);
            const PairSegment forward[] = {{0, tp_fwd, true, c.times.attention_fwd_s},
                                           {0, tp_fwd, true, c.times.dense_ffn_fwd_s}};
            const PairSegment backward[] = {
                {0, tp_bwd, true, c.times.dense_ffn_bwd_s, c.times.dense_ffn_fwd_s},
                {0, tp_bwd, true, c.times.attention_bwd_s, c.times.attention_fwd_s}};
            const double dense_tp_s = alternatingSegmentsExposure(forward, backward, 2).tp_s;
            c.pair_exposed.tp_s += dense_tp_s * stage.dense_layers;
            c.pair_exposed_hot_s += dense_tp_s * stage.dense_layers;
        }
        const double forwards = microBatchesPerStep(s);
        const double unpaired = std::min(forwards, dualPipeUnpairedPasses(lay.pp, stage.stage));
        const double paired = forwards - unpaired;
        a2a_exposed = (paired * c.pair_exposed.all_to_all_s + unpaired * a2a_total) / forwards;
        tp_exposed = (paired * c.pair_exposed.tp_s + unpaired * c.tp_raw_s) / forwards;
        const double hot_exposed = (paired * c.pair_exposed_hot_s +
                                    unpaired * (a2a_total + c.a2a_hot_extra_s + c.tp_raw_s)) /
                                   forwards;
        a2a_hot_exposed = hot_exposed - tp_exposed;
    }
    c.items[StepItem::all_to_all] = a2a_exposed;
    c.items.overlapped_s[static_cast<int>(StepItem::all_to_all)] = a2a_total - a2a_exposed;
    c.items[StepItem::imbalance_wait] += a2a_hot_exposed - a2a_exposed;
    c.items[StepItem::tp_comm] = tp_exposed;
    c.items.overlapped_s[static_cast<int>(StepItem::tp_comm)] = c.tp_raw_s - tp_exposed;
    const double cp_exposed = std::max(0.0, c.cp_raw_s - c.items[StepItem::attention]);
    c.items[StepItem::cp_comm] = cp_exposed;
    c.items.overlapped_s[static_cast<int>(StepItem::cp_comm)] = c.cp_raw_s - cp_exposed;
    double total = 0;
    for (const double v : c.items.seconds)
        total += v;
    c.items.total_s = total;
    return c;
}

/// Pipeline bubble for m micro-batches of per-micro-batch time t on pp stages (closed forms;
/// the timeline simulation reproduces them): GPipe and 1F1B (p-1)*t; interleaved (p-1)*t/v;
/// DualPipe (p/2-1)(F&B + B - 3W) with F = t/3, B = 2t/3, W = B/2 and F&B = F + B.
double bubble_s(const LayoutSpec& lay, double t_mb) {
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

struct StageSync {
    double dp_s = 0, edp_s = 0; ///< raw time of the dense / expert gradient sync
    double dp_exposed_s = 0, edp_exposed_s = 0;
    double dp_bytes_up = 0, dp_bytes_out = 0, edp_bytes_up = 0, edp_bytes_out = 0;
    double optimizer_s = 0;
    // dp_s / edp_s split into the gradient reduce-scatter (or all-reduce) and the all-gather.
    double dp_grad_s = 0, dp_gather_s = 0, edp_grad_s = 0, edp_gather_s = 0;
};

/// Gradient sync of one stage. ZeRO >= 1 (Megatron's distributed optimizer): reduce-scatter of
/// the gradients (grad precision) during the last micro-batch's backward, then all-gather of
/// the updated weights (weight precision) under the next step's first forward. ZeRO-0: one
/// all-reduce. Stage s finishes its last backward s micro-batch backwards before stage 0, which
/// is slack its sync can use.
StageSync stageSync(const Scenario& s, const Placement& placement, const StageLayers& stage,
                    const MicroBatchCost& cost, const HardwareRates& r) {
    StageSync sync;
    const StageParams params = paramsPerGpu(s, stage);
    const double grad_bytes = bytesPerElement(s.model.grad_precision);
    const double weight_bytes = bytesPerElement(s.model.weight_precision);
    // The dense and expert syncs share the same NICs and run one after the other, so the
    // second only gets what is left of each window after the first.
    double backward_window_s = cost.backward_s * (1.0 + stage.stage);
    double forward_window_s = cost.compute_s - cost.backward_s;
    const bool sharded = s.training.zero_stage >= 1;

    auto sync_of = [&](GroupKind kind, double param_count, double& time_s, double& exposed_s,
                       double& up, double& out, double& grad_s, double& gather_s) {
        const GroupShape shape = shapeOf(placement.spanOf(kind));
        if (shape.size <= 1 || param_count <= 0)
            return;
        if (sharded) {
            const CollectiveCost rs =
                reduceScatter(shape, param_count * grad_bytes, r.scale_up, r.scale_out);
            const CollectiveCost ag =
                reduceScatter(shape, param_count * weight_bytes, r.scale_up, r.scale_out);
            time_s = rs.time_s + ag.time_s;
            grad_s = rs.time_s;
            gather_s = ag.time_s;
            exposed_s = std::max(0.0, rs.time_s - backward_window_s) +
                        std::max(0.0, ag.time_s - forward_window_s);
            backward_window_s = std::max(0.0, backward_window_s - rs.time_s);
            forward_window_s = std::max(0.0, forward_window_s - ag.time_s);
            up = rs.scale_up_bytes_per_gpu + ag.scale_up_bytes_per_gpu;
            out = rs.scale_out_bytes_per_gpu + ag.scale_out_bytes_per_gpu;
        } else {
            const CollectiveCost ar =
                allReduce(shape, param_count * grad_bytes, r.scale_up, r.scale_out);
            time_s = ar.time_s;
            grad_s = ar.time_s;
            exposed_s = std::max(0.0, ar.time_s - backward_window_s);
            backward_window_s = std::max(0.0, backward_window_s - ar.time_s);
            up = ar.scale_up_bytes_per_gpu;
            out = ar.scale_out_bytes_per_gpu;
        }
    };
    sync_of(GroupKind::dp, params.dense_per_gpu, sync.dp_s, sync.dp_exposed_s, sync.dp_bytes_up,
            sync.dp_bytes_out, sync.dp_grad_s, sync.dp_gather_s);
    sync_of(GroupKind::edp, params.expert_per_gpu, sync.edp_s, sync.edp_exposed_s,
            sync.edp_bytes_up, sync.edp_bytes_out, sync.edp_grad_s, sync.edp_gather_s);

    const double shard_params =
        sharded ? params.dense_per_gpu / std::max(1, s.layout.dp * s.layout.cp) +
                      params.expert_per_gpu / std::max(1, s.layout.expertDp())
                : params.dense_per_gpu + params.expert_per_gpu;
    sync.optimizer_s = shard_params * efficiency::kAdamBytesPerParam / r.hbm_bytes_s;
    return sync;
}

void addWarning(Report& report, DesignWarning::Severity severity, std::string code,
                std::string message, std::vector<int> gpus = {}) {
    report.warnings.push_back({severity, std::move(code), std::move(message), std::move(gpus)});
}

std::string percent(double fraction) {
    return std::to_string(static_cast<int>(std::lround(fraction * 100))) + "%";
}

std::string fixed1(double value) {
    const long tenths = std::lround(value * 10);
    return std::to_string(tenths / 10) + "." + std::to_string(std::labs(tenths % 10));
}

/// Racks over cluster.rack_power_limit_kw: the feed or the cooling cannot carry them.
void addRackPowerWarning(const ClusterSpec& c, Report& report) {
    if (c.rack_power_limit_kw <= 0 || !report.graph || report.graph->rackCount() == 0)
        return;
    const HardwareGraph& graph = *report.graph;
    const std::vector<double> rack_w = rackPowerW(c);
    const double limit_w = c.rack_power_limit_kw * 1000;
    int over = 0, first = -1;
    std::vector<int> gpus;
    for (int rack = 0; rack < static_cast<int>(rack_w.size()); ++rack) {
        if (rack_w[rack] <= limit_w * (1 + 1e-9))
            continue;
        if (over++ == 0)
            first = rack;
        for (int node = graph.rack_first_node[rack]; node < graph.rack_first_node[rack + 1]; ++node)
            for (int local = 0; local < graph.gpus_per_node; ++local)
                gpus.push_back(node * graph.gpus_per_node + local);
    }
    if (over == 0)
        return;
    addWarning(report, DesignWarning::Severity::critical, "rack-power-over",
               (over == 1
                    ? "rack " + std::to_string(first)
                    : std::to_string(over) + " racks (rack " + std::to_string(first) + " first)") +
                   " draw" + (over == 1 ? "s " : " ") + fixed1(rack_w[first] / 1000) + " kW with " +
                   std::to_string(graph.nodesInRack(first)) + " nodes, over the " +
                   fixed1(c.rack_power_limit_kw) +
                   " kW rack limit: move nodes to other racks or lower cluster.nodes_per_rack",
               std::move(gpus));
}

/// Goodput under 90%: failures and checkpoints cost more than a tenth of the run. The defaults
/// give 93-94% at Llama 3's 16,384 GPUs, so this flags larger clusters or slow checkpoint storage.
void addGoodputWarning(const Economics& e, Report& report) {
    constexpr double kLowGoodput = 0.9;
    const ReliabilityFigures& f = e.reliability;
    if (!e.valid || f.goodput >= kLowGoodput)
        return;
    addWarning(report, DesignWarning::Severity::warning, "low-goodput",
               "goodput " + percent(f.goodput) + ": checkpoints take " +
                   percent(f.checkpoint_overhead) + " and failures " + percent(f.failure_overhead) +
                   " of the wall-clock (MTBF " + fixed1(f.mtbf_s / 3600) + " h, a checkpoint " +
                   fixed1(f.checkpoint_write_s / 60) + " min, a recovery " +
                   fixed1(f.recovery_s / 60) +
                   " min); faster checkpoint storage or quicker restarts shorten both");
}

void addDesignWarnings(const Scenario& s, Report& report, const HardwareRates& r) {
    const Placement& placement = *report.placement;
    const ClusterSpec& c = s.cluster;
    const GroupSpan& ep = placement.spanOf(GroupKind::ep);
    using Sev = DesignWarning::Severity;
    if (s.model.isMoe() && ep.domains > 1) {
        addWarning(report, Sev::warning, "ep-crosses-domain",
                   "EP group of " + std::to_string(ep.gpus) + " GPUs spans " +
                       std::to_string(ep.nodes) + " nodes: the all-to-all rides " +
                       std::string(displayName(c.fabric)) + " (" +
                       fixed1(r.scale_out.bandwidth_gbps) + " GB/s per GPU) instead of " +
                       c.gpu.scale_up_fabric + " (" + fixed1(r.scale_up.bandwidth_gbps) + " GB/s)",
                   placement.groupsOf(GroupKind::ep).front().gpus);
    }
    const GroupSpan& tp = placement.spanOf(GroupKind::tp);
    if (tp.gpus > 1 && tp.domains > 1) {
        addWarning(report, Sev::critical, "tp-crosses-domain",
                   "TP group of " + std::to_string(tp.gpus) + " GPUs crosses " +
                       std::to_string(tp.domains) +
                       " scale-up domains: every layer's TP "
                       "collectives go over " +
                       std::string(displayName(c.fabric)),
                   placement.groupsOf(GroupKind::tp).front().gpus);
    }
    if (s.model.isMoe() && report.load.max_imbalance >= 1.5) {
        const int hot = report.load.hottestGpu(placement);
        addWarning(report, Sev::warning, "straggler",
                   "GPU " + std::to_string(hot) + " carries " + fixed1(report.load.max_imbalance) +
                       "x the mean expert load (MoE layer " +
                       std::to_string(report.load.hottest_layer) +
                       "): its EP group waits for it every layer",
                   {hot});
    }
    const MemoryBreakdown& mem = report.memory;
    if (!mem.fits) {
        addWarning(report, Sev::critical, "memory-over",
                   "stage " + std::to_string(mem.stage) + " needs " +
                       fixed1(mem.total_bytes / 1e9) + " GB per GPU, over the " +
                       fixed1(mem.hbm_bytes / 1e9) + " GB of HBM");
    } else if (mem.margin_bytes < 0.05 * mem.hbm_bytes) {
        addWarning(report, Sev::warning, "memory-tight",
                   "stage " + std::to_string(mem.stage) + " uses " + fixed1(mem.total_bytes / 1e9) +
                       " of " + fixed1(mem.hbm_bytes / 1e9) + " GB: within 5% of HBM");
    }
    const double step = report.step_time_s;
    if (step > 0 && report.step[StepItem::bubble] > 0.15 * step) {
        addWarning(
            report, Sev::warning, "bubble",
            "pipeline bubble is " + percent(report.step[StepItem::bubble] / step) +
                " of the step: more micro-batches, interleaving or DualPipe would shrink it");
    }
    if (step > 0 && report.step[StepItem::dp_sync] > 0.05 * step) {
        addWarning(
            report, Sev::warning, "dp-sync-exposed",
            "gradient sync is not hidden: " + percent(report.step[StepItem::dp_sync] / step) +
                " of the step waits for it after the last backward");
    }
    if (report.load.dropped_share > 0) {
        addWarning(report, Sev::warning, "tokens-dropped",
                   percent(report.load.dropped_share) +
                       " of token slots exceed the capacity factor and are dropped");
    }
    addRackPowerWarning(c, report);
    if (s.model.isMoe()) {
        const double per_expert = report.load.slots_per_group / std::max(1, s.model.experts);
        if (per_expert < efficiency::kGemmHalfTokens) {
            addWarning(report, Sev::info, "tiny-expert-gemms",
                       "about " + std::to_string(static_cast<int>(per_expert)) +
                           " tokens per expert per micro-batch: expert GEMMs run below half "
                           "efficiency (memory-bound); a larger micro-batch helps");
        }
    }
}

} // namespace

namespace {

/// Bytes on every link: each group adds its members' per-step bytes, by its own stage; the
/// utilization divides them by what the link carries in one step.
void addLinkTraffic(Report& report, const std::vector<MicroBatchCost>& costs,
                    const std::vector<StageSync>& syncs, const GroupShape& pp_shape,
                    double pp_bytes, double m) {
    const HardwareGraph* graph = report.graph.get();
    const Placement* placement = report.placement.get();
    report.link_bytes.assign(graph->links.size(), 0.0);
    auto load_links = [&](GroupKind kind, auto bytes_of) {
        for (const ParallelGroup& group : placement->groupsOf(kind)) {
            if (group.gpus.size() <= 1)
                continue;
            const int stage = placement->coords[static_cast<size_t>(group.gpus.front())].pp;
            const auto [up, out] = bytes_of(static_cast<size_t>(stage));
            if (up + out > 0)
                addLinkBytes(*graph, group, up, out, report.link_bytes);
        }
    };
    load_links(GroupKind::ep, [&](size_t st) {
        const MicroBatchCost& c = costs[st];
        return std::pair{(c.a2a_dispatch_up + c.a2a_combine_up) * m,
                         (c.a2a_dispatch_out + c.a2a_combine_out) * m};
    });
    load_links(GroupKind::tp, [&](size_t st) {
        return std::pair{costs[st].tp_up * m, costs[st].tp_out * m};
    });
    load_links(GroupKind::cp, [&](size_t st) {
        return std::pair{costs[st].cp_up * m, costs[st].cp_out * m};
    });
    load_links(GroupKind::dp, [&](size_t st) {
        return std::pair{syncs[st].dp_bytes_up, syncs[st].dp_bytes_out};
    });
    load_links(GroupKind::edp, [&](size_t st) {
        return std::pair{syncs[st].edp_bytes_up, syncs[st].edp_bytes_out};
    });
    load_links(GroupKind::pp, [&](size_t) {
        return pp_shape.domains > 1 ? std::pair{0.0, pp_bytes} : std::pair{pp_bytes, 0.0};
    });
    report.link_utilization.resize(report.link_bytes.size());
    for (size_t i = 0; i < report.link_bytes.size(); ++i) {
        const double capacity = graph->links[i].bandwidth_gbps * 1e9 * report.step_time_s;
        report.link_utilization[i] = capacity > 0 ? report.link_bytes[i] / capacity : 0.0;
    }
}

Report evaluateWith(const Scenario& s, uint64_t routing_step, EvaluationCache* cache) {
    Report report;
    const LayoutSpec& lay = s.layout;
    report.gpus = s.cluster.gpuCount();
    report.micro_batches = microBatchesPerStep(s);
    report.params = countParams(s.model);
    std::shared_ptr<const HardwareGraph> graph;
    if (cache && cache->graph && cache->graph_cluster == s.cluster) {
        graph = cache->graph;
    } else {
        graph = std::make_shared<const HardwareGraph>(buildHardwareGraph(s.cluster));
        if (cache) {
            cache->graph = graph;
            cache->graph_cluster = s.cluster;
        }
    }
    auto placement = std::make_shared<Placement>(placeLayout(s, *graph));
    report.graph = graph;
    report.placement = placement;
    report.layout_description = describeLayout(s, *placement);
    if (s.model.isMoe())
        report.load = cache ? sampleExpertLoad(s, *placement, routing_step, cache->loads)
                            : sampleExpertLoad(s, *placement, routing_step);

    const HardwareRates rates = ratesOf(s);
    const std::vector<StageLayers> stages = splitLayers(s.model, lay);
    const double m = report.micro_batches;

    std::vector<MicroBatchCost> costs;
    std::vector<StageSync> syncs;
    costs.reserve(stages.size());
    int slowest = 0;
    for (const StageLayers& stage : stages) {
        costs.push_back(microBatchCost(s, *placement, report.load, stage, rates));
        syncs.push_back(stageSync(s, *placement, stage, costs.back(), rates));
        StageResult result;
        result.layers = stage;
        result.per_micro_batch = costs.back().items;
        result.memory = memoryPerGpu(s, stage);
        result.times = costs.back().times;
        const StageSync& stage_sync = syncs.back();
        result.times.dp_grad_sync_s = stage_sync.dp_grad_s;
        result.times.dp_param_gather_s = stage_sync.dp_gather_s;
        result.times.dp_sync_bytes = stage_sync.dp_bytes_up + stage_sync.dp_bytes_out;
        result.times.edp_grad_sync_s = stage_sync.edp_grad_s;
        result.times.edp_param_gather_s = stage_sync.edp_gather_s;
        result.times.edp_sync_bytes = stage_sync.edp_bytes_up + stage_sync.edp_bytes_out;
        result.times.optimizer_s = stage_sync.optimizer_s;
        if (costs.back().moe.valid)
            report.moe_costs = costs.back().moe;
        report.stages.push_back(std::move(result));
        if (costs.back().items.total_s > costs[static_cast<size_t>(slowest)].items.total_s)
            slowest = stage.stage;
    }
    // A DualPipe rank runs stage r's chunk in one direction and stage pp-1-r's in the other,
    // m/2 micro-batches each: its micro-batch costs the mean of the two, and the slowest rank
    // sets the pace. The slowest stage of that rank stands for it in the traffic tables.
    StepBreakdown per_micro_batch = costs[static_cast<size_t>(slowest)].items;
    if (lay.schedule == PipelineSchedule::dualpipe) {
        double slowest_rank_s = -1;
        for (int stage = 0; stage < lay.pp; ++stage) {
            const StepBreakdown& own = costs[static_cast<size_t>(stage)].items;
            const StepBreakdown& other = costs[static_cast<size_t>(lay.pp - 1 - stage)].items;
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
    const MicroBatchCost& worst = costs[static_cast<size_t>(slowest)];
    const double t_mb = per_micro_batch.total_s;

    // Pipeline point-to-point: each boundary sends a micro-batch's activations forward and
    // their gradients back; the fill and drain put 2(p-1) sends per virtual chunk on the
    // critical path, while steady-state sends overlap with compute.
    const double tokens = tokensPerGpuPerMicroBatch(s);
    const double act_bytes = bytesPerElement(s.model.activation_precision);
    const double pp_message_bytes = tokens * s.model.hidden * act_bytes;
    const GroupShape pp_shape = shapeOf(placement->spanOf(GroupKind::pp));
    const LinkParams& pp_link = pp_shape.domains > 1 ? rates.scale_out : rates.scale_up;
    const double t_send = lay.pp > 1 ? sendRecvTime_s(pp_message_bytes, pp_link) : 0.0;
    report.pp_send_s = t_send;
    report.pp_message_bytes = lay.pp > 1 ? pp_message_bytes : 0.0;
    const double pp_exposed = 2.0 * (lay.pp - 1) * lay.vpp * t_send;

    StepBreakdown& step = report.step;
    for (int i = 0; i < kStepItemCount; ++i) {
        step.seconds[static_cast<size_t>(i)] = per_micro_batch.seconds[static_cast<size_t>(i)] * m;
        step.overlapped_s[static_cast<size_t>(i)] =
            per_micro_batch.overlapped_s[static_cast<size_t>(i)] * m;
    }
    step[StepItem::bubble] = bubble_s(lay, t_mb);
    step[StepItem::pp_comm] = pp_exposed;
    step.overlapped_s[static_cast<int>(StepItem::pp_comm)] =
        std::max(0.0, 2.0 * m * t_send * lay.vpp - pp_exposed);
    double dp_exposed = 0, dp_raw = 0, optimizer = 0;
    for (const StageSync& sync : syncs) {
        dp_exposed = std::max(dp_exposed, sync.dp_exposed_s + sync.edp_exposed_s);
        dp_raw = std::max(dp_raw, sync.dp_s + sync.edp_s);
        optimizer = std::max(optimizer, sync.optimizer_s);
    }
    step[StepItem::dp_sync] = dp_exposed;
    step.overlapped_s[static_cast<int>(StepItem::dp_sync)] = std::max(0.0, dp_raw - dp_exposed);
    step[StepItem::optimizer] = optimizer;
    step.total_s = 0;
    for (const double v : step.seconds)
        step.total_s += v;
    report.step_time_s = step.total_s;

    // Collectives of the slowest stage, per step and per GPU.
    const StageSync& sync = syncs[static_cast<size_t>(slowest)];
    auto add_collective = [&](CollectiveKind kind, std::string name, GroupKind group, int calls,
                              double up, double out, double time_s, double exposed_s) {
        if (up + out <= 0 && time_s <= 0)
            return;
        Collective c;
        c.kind = kind;
        c.name = std::move(name);
        c.group = group;
        c.group_size = placement->spanOf(group).gpus;
        c.calls_per_step = calls;
        c.scale_up_bytes_per_gpu = up;
        c.scale_out_bytes_per_gpu = out;
        c.bytes_per_gpu = up + out;
        c.link_class = out > 0 ? LinkClass::scale_out : LinkClass::scale_up;
        c.time_s = time_s;
        c.exposed_s = exposed_s;
        report.collectives.push_back(std::move(c));
    };
    const double a2a_total = worst.a2a_dispatch_s + worst.a2a_combine_s;
    const double a2a_exposed_share =
        a2a_total > 0 ? worst.items[StepItem::all_to_all] / a2a_total : 0;
    const int mi = report.micro_batches;
    add_collective(CollectiveKind::moe_dispatch, "MoE dispatch all-to-all (fwd+bwd)", GroupKind::ep,
                   worst.a2a_calls / 2 * mi, worst.a2a_dispatch_up * m, worst.a2a_dispatch_out * m,
                   worst.a2a_dispatch_s * m, worst.a2a_dispatch_s * m * a2a_exposed_share);
    add_collective(CollectiveKind::moe_combine, "MoE combine all-to-all (fwd+bwd)", GroupKind::ep,
                   worst.a2a_calls / 2 * mi, worst.a2a_combine_up * m, worst.a2a_combine_out * m,
                   worst.a2a_combine_s * m, worst.a2a_combine_s * m * a2a_exposed_share);
    add_collective(CollectiveKind::tp_collective, "TP all-gather / reduce-scatter", GroupKind::tp,
                   worst.tp_calls * mi, worst.tp_up * m, worst.tp_out * m, worst.tp_raw_s * m,
                   step[StepItem::tp_comm]);
    add_collective(CollectiveKind::cp_exchange, "CP ring KV exchange", GroupKind::cp,
                   worst.cp_calls * mi, worst.cp_up * m, worst.cp_out * m, worst.cp_raw_s * m,
                   step[StepItem::cp_comm]);
    const double pp_bytes = lay.pp > 1 ? 2.0 * m * lay.vpp * pp_message_bytes : 0.0;
    add_collective(CollectiveKind::pp_send_recv, "PP send/recv", GroupKind::pp,
                   lay.pp > 1 ? 2 * mi * lay.vpp : 0, pp_shape.domains > 1 ? 0 : pp_bytes,
                   pp_shape.domains > 1 ? pp_bytes : 0, 2.0 * m * lay.vpp * t_send, pp_exposed);
    add_collective(CollectiveKind::dp_sync, "DP gradient sync (dense)", GroupKind::dp,
                   s.training.zero_stage >= 1 ? 2 : 1, sync.dp_bytes_up, sync.dp_bytes_out,
                   sync.dp_s, sync.dp_exposed_s);
    add_collective(CollectiveKind::edp_sync, "expert-DP gradient sync", GroupKind::edp,
                   s.training.zero_stage >= 1 ? 2 : 1, sync.edp_bytes_up, sync.edp_bytes_out,
                   sync.edp_s, sync.edp_exposed_s);

    // Bytes on every link: each group adds its members' per-step bytes, by its own stage.
    if (!cache || cache->link_traffic)
        addLinkTraffic(report, costs, syncs, pp_shape, pp_bytes, m);

    // Memory: the stage with the least margin.
    report.memory = report.stages.front().memory;
    for (const StageResult& st : report.stages) {
        if (st.memory.margin_bytes < report.memory.margin_bytes)
            report.memory = st.memory;
    }

    // Throughput and totals.
    Throughput& t = report.throughput;
    t.tokens_per_step = static_cast<double>(s.training.global_batch) * s.model.seq_len;
    if (report.step_time_s > 0) {
        t.tokens_per_s = t.tokens_per_step / report.step_time_s;
        t.tokens_per_s_per_gpu = t.tokens_per_s / report.gpus;
        t.model_tflops_per_gpu = modelFlopsPerToken(s.model) * t.tokens_per_s_per_gpu / 1e12;
        t.mfu = t.model_tflops_per_gpu / s.cluster.gpu.bf16_tflops;
        t.time_to_train_s = s.training.total_tokens / t.tokens_per_s;
        t.gpu_hours = t.time_to_train_s * report.gpus / 3600.0;
        t.gpu_hours_per_trillion_tokens = 1e12 / t.tokens_per_s * report.gpus / 3600.0;
        // Energy: GPUs at board power plus per-node overhead, times the facility's PUE.
        const double power_w =
            report.gpus * s.cluster.gpu.power_w + s.cluster.nodes * s.cluster.node_overhead_w;
        t.energy_kwh = power_w * s.cluster.pue * t.time_to_train_s / 3.6e6;
        t.cost_usd =
            t.gpu_hours * s.cluster.gpu_hour_usd + t.energy_kwh * s.cluster.electricity_usd_per_kwh;
    }

    addDesignWarnings(s, report, rates);
    report.economics = computeEconomics(s, report); // last: it reads the throughput and graph
    addGoodputWarning(report.economics, report);
    // Most severe first, so a list cut short still shows what breaks the design.
    std::stable_sort(
        report.warnings.begin(), report.warnings.end(),
        [](const DesignWarning& a, const DesignWarning& b) { return a.severity > b.severity; });
    return report;
}

} // namespace

Report evaluate(const Scenario& s, uint64_t routing_step) {
    return evaluateWith(s, routing_step, nullptr);
}

Report evaluate(const Scenario& s, uint64_t routing_step, EvaluationCache& cache) {
    return evaluateWith(s, routing_step, &cache);
}

double MoeCostModel::expertForward_s(double slots) const {
    HardwareRates r;
    r.gemm_flops = gemm_flops;
    r.hbm_bytes_s = hbm_bytes_s;
    return expertGemmTime_s(slots, experts_per_rank, flops_per_slot, expert_weight_bytes,
                            activation_bytes_per_slot, r);
}

double MoeCostModel::expertBackward_s(double slots) const {
    return expertForward_s(slots) * backward_passes + recompute_s_per_slot * slots;
}

double MoeCostModel::dispatch_s(double recv_factor) const {
    return allToAll(ep_shape, dispatch_bytes, std::max(1.0, recv_factor), scale_up, scale_out,
                    dispatch_cross_bytes)
        .time_s;
}

double MoeCostModel::combine_s(double recv_factor) const {
    return allToAll(ep_shape, combine_bytes, std::max(1.0, recv_factor), scale_up, scale_out,
                    combine_cross_bytes)
        .time_s;
}

// An MoE layer's segments in a fused DualPipe pair, as the timeline cuts them (timeline.cpp,
// forwardOps, backwardOps and emitPair; derivation at the overlap in microBatchCost). The
// backward combine carries the recomputed forward pair under full recompute.
PairExposure MoeCostModel::pairExposure(double factor) const {
    const double slots = mean_slots * std::max(1.0, factor);
    const double dispatch = dispatch_s(factor);
    const double combine = combine_s(factor);
    const double backward_combine = combine + (forward_pairs - 1.0) * (dispatch + combine);
    const double experts_fwd = expertForward_s(slots);
    const double experts_bwd = expertBackward_s(slots);
    if (!(tp_fwd_s > 0)) {
        const PairSegment forward[] = {{combine, 0, false, attention_block_fwd_s},
                                       {dispatch, 0, false, experts_fwd}};
        const PairSegment backward[] = {
            {backward_combine, 0, false, experts_bwd, experts_fwd},
            {combine, 0, false, attention_block_bwd_s, attention_block_fwd_s}};
        return alternatingSegmentsExposure(forward, backward, 2);
    }
    const PairSegment forward[] = {{combine, tp_fwd_s, true, attention_fwd_s},
                                   {0, tp_fwd_s, true, attention_block_fwd_s - attention_fwd_s},
                                   {dispatch, 0, false, experts_fwd}};
    const PairSegment backward[] = {{backward_combine, tp_bwd_s, false, experts_bwd, experts_fwd},
                                    {combine, 0, false, attention_block_bwd_s - attention_bwd_s,
                                     attention_block_fwd_s - attention_fwd_s},
                                    {0, tp_bwd_s, true, attention_bwd_s, attention_fwd_s}};
    return alternatingSegmentsExposure(forward, backward, 3);
}

double tpOperation_s(const StageTimes& times, int calls_per_layer) {
    return times.tp_call_s * calls_per_layer / 2.0;
}

// deepseek-ai/DualPipe's phases 1-3 run 1.5 pp - hr - 1 forwards alone (hr = the rank's
// distance from the nearer end of the pipeline) and the two middle ranks one more, to shrink
// the bubble; the backwards of phases 3 and 5-7 match them (timeline.cpp, dualPipe).
double dualPipeUnpairedPasses(int pp, int stage) {
    const int from_end = std::min(stage, pp - 1 - stage);
    const bool middle = from_end == pp / 2 - 1;
    return 1.5 * pp - 1.0 - from_end + (middle ? 1.0 : 0.0);
}

const char* toString(CollectiveKind k) {
    switch (k) {
    case CollectiveKind::moe_dispatch:
        return "moe-dispatch";
    case CollectiveKind::moe_combine:
        return "moe-combine";
    case CollectiveKind::tp_collective:
        return "tp";
    case CollectiveKind::cp_exchange:
        return "cp";
    case CollectiveKind::pp_send_recv:
        return "pp";
    case CollectiveKind::dp_sync:
        return "dp-sync";
    case CollectiveKind::edp_sync:
        return "expert-dp-sync";
    }
    return "?";
}

const char* toString(StepItem item) {
    switch (item) {
    case StepItem::attention:
        return "attention";
    case StepItem::dense_ffn:
        return "dense FFN & head";
    case StepItem::router:
        return "router";
    case StepItem::expert_compute:
        return "expert compute";
    case StepItem::all_to_all:
        return "all-to-all (exposed)";
    case StepItem::tp_comm:
        return "TP comm (exposed)";
    case StepItem::cp_comm:
        return "CP comm (exposed)";
    case StepItem::pp_comm:
        return "PP transfers";
    case StepItem::bubble:
        return "pipeline bubble";
    case StepItem::dp_sync:
        return "DP sync (exposed)";
    case StepItem::optimizer:
        return "optimizer";
    case StepItem::imbalance_wait:
        return "imbalance wait";
    case StepItem::count:
        break;
    }
    return "?";
}

const char* toString(DesignWarning::Severity s) {
    switch (s) {
    case DesignWarning::Severity::info:
        return "info";
    case DesignWarning::Severity::warning:
        return "warning";
    case DesignWarning::Severity::critical:
        return "critical";
    }
    return "?";
}

} // namespace moe
