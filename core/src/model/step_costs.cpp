// The one cost model of a training step: every formula that prices an operation, defined once.
// This file: the hardware's achievable rates, the compute and memory terms (GEMMs, attention,
// element-wise passes, the optimizer) and the MoE layer's price at a given expert load. The
// communication and overlap terms are in step_costs_communication.cpp, the model's assembly per
// scenario in step_cost_model.cpp, the step's price from a load sample in step_price.cpp.
// Every constant that is not a datasheet figure is an efficiency, defined once below with where
// its value comes from; the same constants serve every scenario.

#include "moe/step_costs.h"

#include "step_costs_detail.h"

#include <algorithm>
#include <cmath>

namespace moe {

namespace efficiency {
// Sustained share of the dense peak that large, well-shaped BF16 GEMMs reach: ~70% on H100 with
// cuBLAS (about 690 of 989 TFLOPS in public GEMM benchmarks; Megatron-LM's best dense runs report
// 40-47% end-to-end MFU). Such benchmarks (8192-cubed) fill their waves (2048 tiles of 128 x 256
// on 132 SMs: 16 waves, 97% useful), so tile and wave quantization (gemmTileEfficiency) comes on
// top of this constant rather than inside it. Not fitted to the calibration cases.
constexpr double kGemmBf16 = 0.70;
// FP8 GEMMs with DeepSeek-style fine-grained (1x128 / 128x128) scaling reach a smaller share of
// the doubled FP8 peak: promotion to CUDA cores every 128 elements and the quantization kernels
// cost throughput (DeepSeek-V3 report, section 3.3). ~50% of the FP8 peak = 1.4x BF16 speed.
constexpr double kGemmFp8 = 0.50;
// FlashAttention-3 BF16 reaches ~75% of peak forward and ~50% backward on H100; the
// fwd+bwd blend weighted by FLOPs (bwd = 2x fwd) is ~0.55.
constexpr double kAttentionCore = 0.55;
// Memory-bound kernels (norms, SwiGLU, residuals, rotary, permutes, optimizer) and the memory
// side of the GEMM roofline stream at ~80% of the HBM datasheet bandwidth (STREAM-like copy
// kernels on H100; a secondary measurement with Nsight Compute on H100 SXM: coalesced matrix
// loads 2.8 of 3.35 TB/s = 84%, weight loads 78%; mikamirai.com, "GPU Memory Bandwidth: What
// Your Profiler Isn't Telling You").
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
    // The SMs the communication kernels hold are not there for GEMM tiles either.
    r.gemm_sms = static_cast<int>(std::lround(gpu.sm_count * sm_share));
    r.gemm_input_bytes = bytesPerElement(s.model.compute_precision);
    r.gemm_output_bytes = bytesPerElement(s.model.activation_precision);
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

// ---- GEMMs --------------------------------------------------------------------------------------

// A GEMM runs as output tiles, one per thread block, in waves over the SMs (NVIDIA, "Matrix
// Multiplication Background User's Guide", DU-09799-001: sec. 2.3, cuBLAS's tiles up to 256 x 128
// are the most efficient; sec. 3.1 tile quantization, sec. 3.2 wave quantization, worked on
// A100's 108 SMs). Every tile costs a full tile's work and the last wave runs partly empty, so
// the useful share of the SMs' work is the output area over the tiles the waves could hold.
// With fewer tiles than SMs, libraries split the reduction (k) over the idle SMs instead of
// leaving them empty (split-K; CUTLASS discussion #396 on trading tile size against
// quantization with split-K slices; Modular's split-K matmul for small-M shapes that leave
// most CUs idle): floor(SMs / tiles) slices of each tile's k loop run side by side.
double gemmTileEfficiency(const GemmShape& g, int sms) {
    if (sms <= 0 || g.m <= 0 || g.n <= 0)
        return 1.0;
    const double tiles = std::ceil(g.m / kGemmTileRows) * std::ceil(g.n / kGemmTileCols);
    const double split_k = tiles < sms ? std::floor(sms / tiles) : 1.0;
    const double waves = std::ceil(tiles * split_k / sms);
    return g.m * g.n * split_k / (waves * sms * kGemmTileRows * kGemmTileCols);
}

namespace {
double streamed_s(const GemmShape& g, double groups, const HardwareRates& r) {
    return groups *
           ((g.m * g.k + g.k * g.n) * r.gemm_input_bytes + g.m * g.n * r.gemm_output_bytes) /
           r.hbm_bytes_s;
}
} // namespace

// Roofline: compute at the sustained rate scaled by the tile efficiency, or streaming A, B and
// C once through HBM, whichever is longer. Monotone in m, n and k: compute is waves / split_k x
// a tile's k-long work, which never shrinks as tiles are added, and bytes only grow.
double gemm_s(const GemmShape& g, const HardwareRates& r) {
    if (g.m <= 0 || g.n <= 0 || g.k <= 0)
        return 0;
    const double flops = 2.0 * g.m * g.n * g.k;
    const double compute_s = flops / (r.gemm_flops * gemmTileEfficiency(g, r.gemm_sms));
    return std::max(compute_s, streamed_s(g, 1.0, r));
}

// A grouped GEMM pads each group's rows to whole tiles on its own (DeepGEMM's contiguous layout
// aligns every expert's rows to the tile). The groups' row counts spread around their mean, so
// a group pads by half a tile on average, and never to less than one tile: rows = max(tile,
// mean + tile/2). Persistent grouped kernels hand the groups' tiles to the SMs as they free up,
// so no wave is left partly empty beyond the last, which is ignored. Linear in the rows above
// half a tile, so a busy rank's extra slots cost the same whichever layer they fall in.
double groupedGemm_s(const GemmShape& g, double groups, const HardwareRates& r) {
    if (g.m <= 0 || g.n <= 0 || g.k <= 0 || groups <= 0)
        return 0;
    const double padded_rows = std::max(kGemmTileRows, g.m + kGemmTileRows / 2);
    const double padded_cols = std::ceil(g.n / kGemmTileCols) * kGemmTileCols;
    const double compute_s = 2.0 * groups * padded_rows * padded_cols * g.k / r.gemm_flops;
    return std::max(compute_s, streamed_s(g, groups, r));
}

// ---- compute ------------------------------------------------------------------------------------

namespace {

// Column-parallel over TP: all tp x tokens rows, out_features / tp columns.
double columnParallel_s(double tokens, int tp, double in_features, double out_features,
                        const HardwareRates& r) {
    return gemm_s({tokens * tp, out_features / tp, in_features}, r);
}

// Row-parallel over TP: the reduction (in_features) is split.
double rowParallel_s(double tokens, int tp, double in_features, double out_features,
                     const HardwareRates& r) {
    return gemm_s({tokens * tp, out_features, in_features / tp}, r);
}

// The SwiGLU MLP's GEMMs: gate and up fused (h -> 2f), then down (f -> h).
double swigluGemms_s(double hidden, double ffn, int tp, double tokens, const HardwareRates& r) {
    return columnParallel_s(tokens, tp, hidden, 2.0 * ffn, r) +
           rowParallel_s(tokens, tp, ffn, hidden, r);
}

double valueHeadDim(const ModelSpec& m) {
    return m.attention == AttentionKind::mla ? m.mla.v_head_dim : m.effectiveHeadDim();
}

} // namespace

double attentionForward_s(const ModelSpec& m, int tp, double tokens, const HardwareRates& r) {
    // The output projection (heads x v_dim -> h, row-parallel); every other attention weight
    // (GQA: the fused QKV; MLA: its down and up projections, lumped into one GEMM from h with
    // the same FLOPs) column-parallel. Then the causal core at the attention rate and ~14
    // hidden-sized elementwise passes through HBM.
    const double h = m.hidden;
    const LayerFlops flops = forwardFlopsPerToken(m, false);
    const double out_in_features = double(m.heads) * valueHeadDim(m);
    const double in_proj_params = flops.attention_proj / 2.0 - out_in_features * h;
    return columnParallel_s(tokens, tp, h, in_proj_params / h, r) +
           rowParallel_s(tokens, tp, out_in_features, h, r) +
           tokens * flops.attention_core / r.attention_flops +
           tokens * h * bytesPerElement(m.activation_precision) *
               efficiency::kElementwisePassesPerLayer / r.hbm_bytes_s;
}

double selectiveRecompute_s(const ModelSpec& m, int tp, double tokens, const HardwareRates& r) {
    // Selective recompute (norms, activation functions, MLA up-projection; model_costs.cpp)
    // re-runs the MLA up-projection GEMMs (q_lora -> heads x (nope + rope), kv_lora -> heads x
    // (nope + v), column-parallel) and the two norms' passes in backward.
    double gemms_s = 0;
    if (m.attention == AttentionKind::mla) {
        const MlaDims& d = m.mla;
        const double heads = m.heads;
        gemms_s = columnParallel_s(tokens, tp, d.q_lora_rank,
                                   heads * (d.qk_nope_head_dim + d.qk_rope_head_dim), r) +
                  columnParallel_s(tokens, tp, d.kv_lora_rank,
                                   heads * (d.qk_nope_head_dim + d.v_head_dim), r);
    }
    return gemms_s + tokens * m.hidden * bytesPerElement(m.activation_precision) *
                         efficiency::kNormPassesPerLayer / r.hbm_bytes_s;
}

double swiglu_s(const ModelSpec& m, double tokens, double ffn_columns, const HardwareRates& r) {
    // Reads gate and up, writes one ffn-sized output: 3 passes of ffn_columns per token.
    return tokens * ffn_columns * bytesPerElement(m.activation_precision) *
           efficiency::kSwigluPasses / r.hbm_bytes_s;
}

double denseFfnForward_s(const ModelSpec& m, int tp, double tokens, const HardwareRates& r) {
    return swigluGemms_s(m.hidden, m.ffn_hidden, tp, tokens, r) +
           swiglu_s(m, tokens, m.ffn_hidden / static_cast<double>(tp), r);
}

double routerForward_s(const ModelSpec& m, double tokens, const HardwareRates& r) {
    return gemm_s({tokens, double(m.experts), double(m.hidden)}, r);
}

double sharedExpertsForward_s(const ModelSpec& m, int tp, double tokens, const HardwareRates& r) {
    const double ffn = m.shared_experts * m.effectiveSharedFfn();
    if (!(ffn > 0))
        return 0;
    return swigluGemms_s(m.hidden, ffn, tp, tokens, r) +
           swiglu_s(m, tokens, ffn / static_cast<double>(tp), r);
}

double lmHeadForward_s(const ModelSpec& m, int tp, double tokens, const HardwareRates& r) {
    return columnParallel_s(tokens, tp, m.hidden, double(m.vocab), r);
}

double embeddingForward_s(const ModelSpec& m, double tokens, const HardwareRates& r) {
    // A row gather: each token's h-wide row read from the table and written out (2 passes of
    // tokens x h activations through HBM); no FLOPs. Vocab-parallel over TP, every TP rank
    // gathers its rows of the tokens it holds, so the bytes per GPU are the GPU's own tokens'.
    return 2.0 * tokens * m.hidden * bytesPerElement(m.activation_precision) / r.hbm_bytes_s;
}

double embeddingBackward_s(const ModelSpec& m, double tokens, const HardwareRates& r) {
    // The rows' gradients scatter-added into the table's gradient: read the incoming gradient
    // (activation precision), read-modify-write the rows of the gradient (grad precision).
    return tokens * m.hidden *
           (bytesPerElement(m.activation_precision) + 2.0 * bytesPerElement(m.grad_precision)) /
           r.hbm_bytes_s;
}

double mtpProjectionForward_s(const ModelSpec& m, int tp, double tokens, const HardwareRates& r) {
    // DeepSeek-V3 report sec. 2.2, eq. (21): the concatenation [RMSNorm(h); RMSNorm(Emb)] of
    // width 2h projected by M_k (h x 2h) back to h, column-parallel over TP like the others.
    return columnParallel_s(tokens, tp, 2.0 * m.hidden, m.hidden, r);
}

ExpertGemmShape expertGemmShape(const Scenario& s) {
    const ModelSpec& m = s.model;
    const double h = m.hidden;
    const double ffn_shard = static_cast<double>(m.expert_ffn_hidden) / s.layout.etp;
    ExpertGemmShape g;
    g.experts_per_rank = std::max(1, m.experts / s.layout.ep);
    g.hidden = h;
    g.ffn_shard = ffn_shard;
    // SwiGLU expert: three h x f GEMMs, 2 FLOPs per multiply-add.
    g.flops_per_slot = 2.0 * 3.0 * h * ffn_shard;
    g.weight_bytes = 3.0 * h * ffn_shard * bytesPerElement(m.weight_precision);
    g.permute_bytes_per_slot =
        bytesPerElement(m.activation_precision) * h * efficiency::kPermutePassesPerSlot;
    return g;
}

double expertGemm_s(const ExpertGemmShape& g, double slots, const HardwareRates& r) {
    if (slots <= 0 || g.experts_per_rank <= 0)
        return 0;
    // Each expert's tokens are one group of the grouped GEMMs (groupedGemm_s) and every
    // expert's weights stream once, so few tokens per expert come out memory-bound by the
    // roofline. The permute and unpermute are separate memory-bound kernels.
    const double experts = g.experts_per_rank;
    const double tokens_per_expert = slots / experts;
    return groupedGemm_s({tokens_per_expert, 2.0 * g.ffn_shard, g.hidden}, experts, r) +
           groupedGemm_s({tokens_per_expert, g.hidden, g.ffn_shard}, experts, r) +
           slots * g.permute_bytes_per_slot / r.hbm_bytes_s;
}

// ---- memory / optimizer -------------------------------------------------------------------------

// Memory-bound: each parameter of this GPU's optimizer shard streams kAdamBytesPerParam bytes.
double step_costs_detail::optimizerStep_s(double shard_params, const HardwareRates& r) {
    return shard_params * efficiency::kAdamBytesPerParam / r.hbm_bytes_s;
}

// ---- MoE layer ----------------------------------------------------------------------------------

double MoeCosts::expertForward_s(double slots) const {
    return expertGemm_s(gemm, slots, rates);
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

// An MoE layer's segments in a fused DualPipe pair, as the timeline cuts them
// (timeline_builder.cpp, forwardOps, backwardOps and emitPair; derivation at
// alternatingSegmentsExposure). The backward combine carries the recomputed forward pair under full
// recompute. With TP > 1 the TP collectives after attention and after the MLP are transfers too:
// the forward's one after attention cuts the router and shared experts (R) off the attention, the
// backward's one before attention cuts them off the attention's gradient, and the one after the MLP
// joins the combine. Three segments per pass:
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

} // namespace moe
