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
// FP8 GEMMs by scaling recipe (model.precision.fp8_recipe), as shares of the dense FP8 peak.
// Per-tensor scales (delayed, tensorwise) are two scalars the epilogue applies, so the main loop
// is the BF16 one at twice the rate: the same share as BF16. (A secondary cuBLASLt FP8
// measurement at 8192-cubed reached ~1,610 TFLOPS on an 8-GPU Hopper node whose model the
// report does not state: 0.81 of H100's 1,979, above this.)
constexpr double kGemmFp8PerTensor = kGemmBf16;
// DeepSeek-V3's blockwise recipe (1x128 activation tiles, 128x128 weight blocks) promotes the
// partial sums to FP32 CUDA-core registers every 128 elements of k (report, section 3.3.2),
// which costs tensor-core throughput. DeepGEMM's first README (deepseek-ai/DeepGEMM a6d97a1,
// H800, operands already FP8) measures its contiguous grouped GEMMs - the DeepSeek-V3 expert
// shapes, k = 7168 and 2048 - at 1297, 1099, 1288 and 1093 TFLOPS: mean 1194 = 0.60 of 1979.
constexpr double kGemmFp8Blockwise = 0.60;
// The same recipe's weight-gradient GEMMs quantize both operands in 1x128 tiles along k (the
// tokens), so both scales change every 128 elements of the reduction, and they accumulate into
// the FP32 gradient. DeepGEMM's wgrad kernels (deepseek-ai/DeepGEMM PR #95, 2025-05-06, H800)
// run its dense table's k = 4096 shapes at 920, 986, 878, 994, 942 and 920 TFLOPS: mean 940 =
// 0.475 of 1979 (k = 8192: 1014-1092). The PR puts them ~20% ahead of the CUTLASS kernels
// DeepSeek used before; the public kernel is taken.
constexpr double kGemmFp8BlockwiseWeightGrad = 0.475;
// MXFP8's 1x32 E8M0 block scales are applied by Blackwell's tensor cores ("native hardware
// acceleration on Blackwell GPUs (SM 10.0+)", Transformer Engine docs, MXFP8), so no promotion
// leaves the tensor core: the same share as BF16. ASSUMED: no published B200 MXFP8 GEMM
// throughput was found to check it against.
constexpr double kGemmMxfp8 = kGemmBf16;
// The fused (flash) attention kernel, forward and backward apart, as shares of the BF16 dense
// peak in FlashAttention's own FLOP convention (forward: the causal half of QK^T and PV;
// backward: 2.5x that, kFlashBackwardFlopsPerForward). FlashAttention-3 on H100 SXM, head dim
// 128, sequence 4096: forward 590 TFLOPS (pytorch/benchmark commit ff65cb6, "flash_v3"
// column, (4, 16, 4096, 128)) = 0.60 of 989; backward 542 TFLOPS (Shah et al.,
// "FlashAttention-3", arXiv 2407.08608, figure "Attention backward speed, head dim 128
// (H100 80GB SXM5)", 4k) = 0.55. Not fitted to the calibration cases.
constexpr double kAttentionForward = 0.60;
constexpr double kAttentionBackward = 0.55;
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
// Element-wise work is priced by the bytes its kernels read and write (elementwiseForward_s
// itemizes them per layer); these are the per-kernel counts, in elements of the activation
// precision unless the name says bytes. They follow the tensors Korthikanti et al. 2022
// ("Reducing Activation Recomputation in Large Transformer Models", arXiv 2205.05198, sec. 4.1)
// list per layer, and Megatron-LM's kernels (transformer.py at 6985e58, the SC21 commit).
// A LayerNorm/RMSNorm reads its input and writes its output.
constexpr double kNormPasses = 2.0;
// A residual add reads the branch and the residual and writes the sum; the branch's bias and
// dropout fuse into it (Megatron's bias_dropout_add), so biases cost no pass of their own.
constexpr double kResidualPasses = 3.0;
// A dropout mask is one byte per element (PyTorch's fused dropout keeps a bool mask): written
// forward, read backward.
constexpr double kDropoutMaskBytes = 1.0;
// Rotary embedding reads and writes the query and key heads (Transformer Engine's fused RoPE).
constexpr double kRotaryPasses = 2.0;
// Two RMSNorms recomputed by selective recompute: each reads its input and writes its output.
constexpr double kNormPassesPerLayer = 2.0 * kNormPasses;
// SwiGLU activation: reads gate and up (2 x ffn) and writes one ffn-sized output: 3 passes.
constexpr double kSwigluPasses = 3.0;
// GeLU (Megatron's fused bias_gelu): reads the ffn-sized pre-activation and writes its output.
constexpr double kGeluPasses = 2.0;
// Unfused attention's passes over the s x s scores (Megatron-LM 6985e58, ParallelAttention and
// FusedScaleMaskSoftmax; the baddbmm write and the bmm read are the GEMMs' own traffic): the
// fused scale-mask-softmax reads the scores and writes the probabilities forward, and backward
// reads the probabilities and their gradient and writes the scores' gradient. The causal
// kernel (ScaledUpperTriangMaskedSoftmax) reads no mask.
constexpr double kSoftmaxForwardPasses = 2.0;
constexpr double kSoftmaxBackwardPasses = 3.0;
// Dropout on the probabilities (torch.nn.Dropout): forward reads them and writes the result
// and the mask; backward reads the gradient and the mask and writes the gradient.
constexpr double kDropoutPasses = 2.0;
// MoE permute/unpermute of each routed copy (gather before experts, scatter-add after): read +
// write, both ways: 4 hidden-sized passes per token slot.
constexpr double kPermutePassesPerSlot = 4.0;
// Overlapping communication with compute is not free: the communication kernels occupy SMs.
// DeepSeek-V3 (report, section 3.2.2) dedicates 20 of the H800's 132 SMs to all-to-all while
// DualPipe overlaps it, so compute runs on the remaining ~85%. Combined 1F1B overlaps the
// same transfers the same way (training.ep_overlap), at the same share.
constexpr double kOverlapCommSmShare = 20.0 / 132.0;
// Quantization passes of FP8 GEMMs, in bytes of HBM traffic per element over one training step
// (forward and backward), for the GEMM's input activation X (m x k) and for the gradient of its
// output dY (m x n). The GEMMs write their outputs in BF16 with the scales applied in the
// epilogue, so there is no separate dequantize pass. Weights are quantized once per optimizer
// step (cached across micro-batches) and not charged here.
// - delayed: Transformer Engine's fused cast-transpose reads the BF16 tensor once (2 B) and
//   writes the FP8 tensor and its transpose for the weight gradient (1 + 1 B): 4 B, for X and dY.
// - tensorwise (current scaling): "FP8 Current Scaling requires two tensor reads per
//   quantization: one to compute amax, one to cast" (TE docs, FP8 Delayed Scaling): 6 B.
// - blockwise: X is cast to 1x128 tiles in forward (read 2, write 1 + a 4-byte FP32 scale per
//   128: 3.03 B); backward reads it, dequantizes, transposes and re-quantizes it into 128x1
//   tiles (DeepSeek-V3 report, section 3.5: read 1.03, write 1.03): 5.09 B in all. dY is cast
//   both ways from BF16 (read 2, write 2 x 1.03): 4.06 B.
// - mxfp8: TE quantizes row-wise and column-wise 1x32 blocks (an E8M0 byte per 32) in one pass:
//   read 2, write 2 x (1 + 1/32) = 4.06 B, for X and dY.
struct QuantizeBytes {
    double input_per_element, output_grad_per_element;
};
constexpr double kFp8BlockScaleBytes = 4.0 / 128.0;
constexpr double kMxScaleBytes = 1.0 / 32.0;
constexpr QuantizeBytes kQuantizeDelayed{2.0 + 2.0, 2.0 + 2.0};
constexpr QuantizeBytes kQuantizeTensorwise{2.0 + 2.0 + 2.0, 2.0 + 2.0 + 2.0};
constexpr QuantizeBytes kQuantizeBlockwise{(2.0 + 1.0 + kFp8BlockScaleBytes) +
                                               2.0 * (1.0 + kFp8BlockScaleBytes),
                                           2.0 + 2.0 * (1.0 + kFp8BlockScaleBytes)};
constexpr QuantizeBytes kQuantizeMxfp8{2.0 + 2.0 * (1.0 + kMxScaleBytes),
                                       2.0 + 2.0 * (1.0 + kMxScaleBytes)};
} // namespace efficiency

namespace {
struct Fp8Mode {
    double gemm_share, weight_grad_share;
    efficiency::QuantizeBytes quantize;
};
Fp8Mode fp8Mode(Fp8Recipe recipe) {
    using namespace efficiency;
    switch (recipe) {
    case Fp8Recipe::delayed:
        return {kGemmFp8PerTensor, kGemmFp8PerTensor, kQuantizeDelayed};
    case Fp8Recipe::tensorwise:
        return {kGemmFp8PerTensor, kGemmFp8PerTensor, kQuantizeTensorwise};
    case Fp8Recipe::blockwise:
        return {kGemmFp8Blockwise, kGemmFp8BlockwiseWeightGrad, kQuantizeBlockwise};
    case Fp8Recipe::mxfp8:
        return {kGemmMxfp8, kGemmMxfp8, kQuantizeMxfp8};
    }
    return {kGemmFp8PerTensor, kGemmFp8PerTensor, kQuantizeDelayed};
}
} // namespace

HardwareRates hardwareRates(const Scenario& s) {
    const GpuSpec& gpu = s.cluster.gpu;
    HardwareRates r;
    const bool overlaps_comm = pairsPasses(s);
    const double sm_share = overlaps_comm ? 1.0 - efficiency::kOverlapCommSmShare : 1.0;
    r.bf16_gemm_flops = gpu.bf16_tflops * 1e12 * efficiency::kGemmBf16 * sm_share;
    r.gemm_flops = r.bf16_gemm_flops;
    r.weight_grad_gemm_flops = r.bf16_gemm_flops;
    if (s.model.compute_precision == Precision::fp8) {
        const Fp8Mode mode = fp8Mode(s.model.fp8_recipe);
        r.gemm_flops = gpu.fp8_tflops * 1e12 * mode.gemm_share * sm_share;
        r.weight_grad_gemm_flops = gpu.fp8_tflops * 1e12 * mode.weight_grad_share * sm_share;
        // Spread over the step's three forward-pass equivalents (forward + a backward of two),
        // because the backward is priced as a multiple of the forward.
        r.quantize_input_bytes = mode.quantize.input_per_element / 3.0;
        r.quantize_output_bytes = mode.quantize.output_grad_per_element / 3.0;
    }
    // The SMs the communication kernels hold are not there for GEMM tiles either.
    r.gemm_sms = static_cast<int>(std::lround(gpu.sm_count * sm_share));
    r.gemm_input_bytes = bytesPerElement(s.model.compute_precision);
    r.gemm_output_bytes = bytesPerElement(s.model.activation_precision);
    r.attention_flops = gpu.bf16_tflops * 1e12 * efficiency::kAttentionForward * sm_share;
    r.attention_bwd_flops = gpu.bf16_tflops * 1e12 * efficiency::kAttentionBackward * sm_share;
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
namespace {
double tileEfficiency(double m, double n, double batch, int sms) {
    if (sms <= 0 || m <= 0 || n <= 0 || batch <= 0)
        return 1.0;
    const double tiles = batch * std::ceil(m / kGemmTileRows) * std::ceil(n / kGemmTileCols);
    const double split_k = tiles < sms ? std::floor(sms / tiles) : 1.0;
    const double waves = std::ceil(tiles * split_k / sms);
    return batch * m * n * split_k / (waves * sms * kGemmTileRows * kGemmTileCols);
}
} // namespace

double gemmTileEfficiency(const GemmShape& g, int sms) {
    return tileEfficiency(g.m, g.n, 1.0, sms);
}

namespace {
double streamed_s(const GemmShape& g, double groups, const HardwareRates& r) {
    return groups *
           ((g.m * g.k + g.k * g.n) * r.gemm_input_bytes + g.m * g.n * r.gemm_output_bytes) /
           r.hbm_bytes_s;
}
} // namespace

// FP8 quantization passes of the GEMM's activations (its rows of A and of the output gradient),
// memory-bound; 0 for BF16 GEMMs. Per forward-pass equivalent (hardwareRates).
double quantize_s(const GemmShape& g, double groups, const HardwareRates& r) {
    return groups * g.m * (g.k * r.quantize_input_bytes + g.n * r.quantize_output_bytes) /
           r.hbm_bytes_s;
}

// Roofline: compute at the sustained rate scaled by the tile efficiency, or streaming A, B and
// C once through HBM, whichever is longer. Monotone in m, n and k: compute is waves / split_k x
// a tile's k-long work, which never shrinks as tiles are added, and bytes only grow.
double gemm_s(const GemmShape& g, const HardwareRates& r) {
    if (g.m <= 0 || g.n <= 0 || g.k <= 0)
        return 0;
    const double flops = 2.0 * g.m * g.n * g.k;
    const double compute_s = flops / (r.gemm_flops * gemmTileEfficiency(g, r.gemm_sms));
    return std::max(compute_s, streamed_s(g, 1.0, r)) + quantize_s(g, 1.0, r);
}

// A strided-batched GEMM (cuBLAS gemmStridedBatched, as torch.baddbmm/bmm run): `batch` equal
// GEMMs whose tiles share the waves. A GEMM can run as C or as its transpose C^T = B^T A^T,
// and the library's heuristics pick the operand order whose tiles fit; for attention's
// head-dim-wide outputs (64-128 columns) the transposed order fills the 128-row side of the
// tile rather than a quarter of its 256 columns. Roofline as gemm_s, every GEMM's A, B and C
// streamed once.
double batchedGemm_s(const GemmShape& g, double batch, const HardwareRates& r) {
    if (g.m <= 0 || g.n <= 0 || g.k <= 0 || batch <= 0)
        return 0;
    const double tiles = std::max(tileEfficiency(g.m, g.n, batch, r.gemm_sms),
                                  tileEfficiency(g.n, g.m, batch, r.gemm_sms));
    const double compute_s = 2.0 * batch * g.m * g.n * g.k / (r.gemm_flops * tiles);
    return std::max(compute_s, streamed_s(g, batch, r));
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
    return std::max(compute_s, streamed_s(g, groups, r)) + quantize_s(g, groups, r);
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

// The dense MLP's GEMMs: SwiGLU's gate and up fused (h -> 2f) then down (f -> h), or the GPT
// MLP's h -> f then f -> h.
double mlpGemms_s(MlpKind kind, double hidden, double ffn, int tp, double tokens,
                  const HardwareRates& r) {
    const double up_columns = kind == MlpKind::gelu ? ffn : 2.0 * ffn;
    return columnParallel_s(tokens, tp, hidden, up_columns, r) +
           rowParallel_s(tokens, tp, ffn, hidden, r);
}

double valueHeadDim(const ModelSpec& m) {
    return m.attention == AttentionKind::mla ? m.mla.v_head_dim : m.effectiveHeadDim();
}

double queryKeyHeadDim(const ModelSpec& m) {
    return m.attention == AttentionKind::mla ? m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim
                                             : m.effectiveHeadDim();
}

/// The unfused core's batched GEMMs, one per sequence and head of this GPU: q = s / cp queries
/// against s keys each (context parallelism splits the queries; the ring brings every key),
/// batch = sequences x heads / tp = tokens x heads / q (tokens = sequences x s / (tp x cp)).
struct ScoreGemms {
    double batch = 0, queries = 0, keys = 0, qk_dim = 0, v_dim = 0;
};

ScoreGemms scoreGemms(const ModelSpec& m, double tokens, int cp) {
    ScoreGemms g;
    g.keys = m.seq_len;
    g.queries = g.keys / std::max(1, cp);
    g.batch = tokens * m.heads / g.queries;
    g.qk_dim = queryKeyHeadDim(m);
    g.v_dim = valueHeadDim(m);
    return g;
}

double elementwise_s(double elements, double passes, double extra_bytes, const ModelSpec& m,
                     const HardwareRates& r) {
    return elements * (passes * bytesPerElement(m.activation_precision) + extra_bytes) /
           r.hbm_bytes_s;
}

} // namespace

double attentionScoreElements(const ModelSpec& m, double tokens) {
    // This GPU's heads (heads / tp) over every query of its sequences (tp x tokens) against
    // every key (s): tokens x heads x s, the full square whatever the mask.
    return tokens * m.heads * double(m.seq_len);
}

double attentionCoreForward_s(const ModelSpec& m, AttentionKernel kernel, int cp, double tokens,
                              const HardwareRates& r) {
    if (kernel == AttentionKernel::flash)
        // One fused kernel at the attention rate over the causal half (forwardFlopsPerToken);
        // dropout, when set, runs inside it (FlashAttention's fused dropout).
        return tokens * forwardFlopsPerToken(m, false).attention_core / r.attention_flops;
    // Megatron-LM 6985e58 ParallelAttention: baddbmm QK^T writes the scores, the fused
    // scale-mask-softmax, dropout, then bmm with V reads them.
    const ScoreGemms g = scoreGemms(m, tokens, cp);
    const double elements = attentionScoreElements(m, tokens);
    const bool dropout = m.dropout > 0;
    return batchedGemm_s({g.queries, g.keys, g.qk_dim}, g.batch, r) +
           batchedGemm_s({g.queries, g.v_dim, g.keys}, g.batch, r) +
           elementwise_s(elements, efficiency::kSoftmaxForwardPasses, 0, m, r) +
           (dropout ? elementwise_s(elements, efficiency::kDropoutPasses,
                                    efficiency::kDropoutMaskBytes, m, r)
                    : 0.0);
}

// FlashAttention-3's backward runs two memory-bound kernels around the main one
// (Dao-AILab/flash-attention, hopper/flash_bwd_launch_template.h): the preprocess
// (hopper/flash_bwd_preprocess_kernel.h, FlashAttnBwdPreprocess) reads O and dO to form each
// row's dot(dO, O) and zeroes the FP32 accumulator the main kernel adds dQ into
// (Clear_dQaccum); the postprocess (hopper/flash_bwd_postprocess_kernel.h,
// FlashAttnBwdPostprocessConvertdQ) reads that accumulator and writes dQ in the activation
// precision. Per token and head of this GPU: 2 x v_dim activations read, qk_dim FP32 written
// and read, qk_dim activations written. The per-row statistics (dPsum, LSE) are negligible.
double flashBackwardPrePost_s(const ModelSpec& m, double tokens, const HardwareRates& r) {
    constexpr double kAccumulatorBytes = 4.0;
    const double act = bytesPerElement(m.activation_precision);
    const double per_head_bytes =
        2.0 * valueHeadDim(m) * act + queryKeyHeadDim(m) * (2.0 * kAccumulatorBytes + act);
    return tokens * m.heads * per_head_bytes / r.hbm_bytes_s;
}

double attentionCoreBackward_s(const ModelSpec& m, AttentionKernel kernel, int cp, double tokens,
                               const HardwareRates& r) {
    if (kernel == AttentionKernel::flash)
        // The backward kernel recomputes QK^T and the softmax from the saved statistics, then
        // runs the four gradient GEMMs (dV, dP, dQ, dK): five GEMMs of the forward's two,
        // 2.5x its FLOPs (FlashAttention's benchmark convention), at the backward's rate; and
        // its two memory-bound kernels around it (flashBackwardPrePost_s).
        return kFlashBackwardFlopsPerForward * tokens *
                   forwardFlopsPerToken(m, false).attention_core / r.attention_bwd_flops +
               flashBackwardPrePost_s(m, tokens, r);
    // Gradients of the probabilities (dO V^T, writes the square) and of V (P^T dO), dropout's
    // and softmax's backward, then the gradients of Q (dS K) and K (dS^T Q).
    const ScoreGemms g = scoreGemms(m, tokens, cp);
    const double elements = attentionScoreElements(m, tokens);
    const bool dropout = m.dropout > 0;
    return batchedGemm_s({g.queries, g.keys, g.v_dim}, g.batch, r) +
           batchedGemm_s({g.keys, g.v_dim, g.queries}, g.batch, r) +
           (dropout ? elementwise_s(elements, efficiency::kDropoutPasses,
                                    efficiency::kDropoutMaskBytes, m, r)
                    : 0.0) +
           elementwise_s(elements, efficiency::kSoftmaxBackwardPasses, 0, m, r) +
           batchedGemm_s({g.queries, g.qk_dim, g.keys}, g.batch, r) +
           batchedGemm_s({g.keys, g.qk_dim, g.queries}, g.batch, r);
}

double layerElementwiseForward_s(const ModelSpec& m, double tokens, double hidden_replicas,
                                 const HardwareRates& r) {
    // Per token, in hidden-sized elements: two norms, two residual adds (biases and dropout
    // fused in), rotary on this GPU's query and key heads (MLA: the rope parts only, its key
    // rope shared by every head), and with dropout each residual dropout's one-byte mask.
    const double h = m.hidden;
    const double rotary_elements =
        m.attention == AttentionKind::mla
            ? double(m.heads) * m.mla.qk_rope_head_dim + m.mla.qk_rope_head_dim
            : double(m.heads + m.kv_heads) * m.effectiveHeadDim();
    const double passes = 2.0 * efficiency::kNormPasses + 2.0 * efficiency::kResidualPasses;
    const double mask_bytes = m.dropout > 0 ? 2.0 * efficiency::kDropoutMaskBytes : 0.0;
    return elementwise_s(hidden_replicas * tokens * h, passes, mask_bytes, m, r) +
           elementwise_s(tokens * rotary_elements, efficiency::kRotaryPasses, 0, m, r);
}

namespace {
// MLA's up-projections, column-parallel: the query latent to every head's nope and rope parts
// (W_UQ; none without a query latent) and the key-value latent to every head's nope key and
// value (W_UKV).
double mlaUpProjections_s(const ModelSpec& m, int tp, double tokens, const HardwareRates& r) {
    const MlaDims& d = m.mla;
    const double heads = m.heads;
    return columnParallel_s(tokens, tp, d.q_lora_rank,
                            heads * (d.qk_nope_head_dim + d.qk_rope_head_dim), r) +
           columnParallel_s(tokens, tp, d.kv_lora_rank, heads * (d.qk_nope_head_dim + d.v_head_dim),
                            r);
}

// MLA's projections from the hidden state, each its own GEMM as in Megatron-Core
// (multi_latent_attention.py: linear_q_down_proj, linear_kv_down_proj, linear_q_up_proj,
// linear_kv_up_proj) and HF modeling_deepseek.py (q_a_proj, kv_a_proj_with_mqa, q_b_proj,
// kv_b_proj): every one has its own tile shape and, under FP8, quantizes its own input and
// output gradient. Without a query latent the queries come from one h -> heads x (nope + rope)
// GEMM.
double mlaInputProjections_s(const ModelSpec& m, int tp, double tokens, const HardwareRates& r) {
    const MlaDims& d = m.mla;
    const double h = m.hidden;
    const double qk_head = d.qk_nope_head_dim + d.qk_rope_head_dim;
    const double query_s = d.q_lora_rank > 0
                               ? columnParallel_s(tokens, tp, h, d.q_lora_rank, r)
                               : columnParallel_s(tokens, tp, h, double(m.heads) * qk_head, r);
    return query_s +
           columnParallel_s(tokens, tp, h, double(d.kv_lora_rank) + d.qk_rope_head_dim, r) +
           mlaUpProjections_s(m, tp, tokens, r);
}
} // namespace

double attentionForward_s(const ModelSpec& m, int tp, double tokens, const HardwareRates& r) {
    // The output projection (heads x v_dim -> h, row-parallel); the input projections
    // column-parallel: GQA's fused QKV, or MLA's four GEMMs. The core and the layer's
    // element-wise passes are priced apart (attentionCoreForward_s, layerElementwiseForward_s).
    const double h = m.hidden;
    const double out_in_features = double(m.heads) * valueHeadDim(m);
    const double output_s = rowParallel_s(tokens, tp, out_in_features, h, r);
    if (m.attention == AttentionKind::mla)
        return mlaInputProjections_s(m, tp, tokens, r) + output_s;
    const double qkv_columns = double(m.heads + 2 * m.kv_heads) * m.effectiveHeadDim();
    return columnParallel_s(tokens, tp, h, qkv_columns, r) + output_s;
}

double selectiveRecompute_s(const ModelSpec& m, int tp, double tokens, double hidden_replicas,
                            const HardwareRates& r) {
    // Selective recompute (norms, activation functions, MLA up-projection; model_costs.cpp)
    // re-runs the MLA up-projection GEMMs and the two norms' passes in backward.
    const double gemms_s =
        m.attention == AttentionKind::mla ? mlaUpProjections_s(m, tp, tokens, r) : 0.0;
    return gemms_s + elementwise_s(hidden_replicas * tokens * m.hidden,
                                   efficiency::kNormPassesPerLayer, 0, m, r);
}

double swiglu_s(const ModelSpec& m, double tokens, double ffn_columns, const HardwareRates& r) {
    // Reads gate and up, writes one ffn-sized output: 3 passes of ffn_columns per token.
    return elementwise_s(tokens * ffn_columns, efficiency::kSwigluPasses, 0, m, r);
}

double mlpActivation_s(const ModelSpec& m, double tokens, const HardwareRates& r) {
    // With sequence parallelism the MLP runs on all tp x tokens rows and ffn / tp columns:
    // tokens x ffn elements per GPU.
    if (m.mlp == MlpKind::gelu)
        return elementwise_s(tokens * m.ffn_hidden, efficiency::kGeluPasses, 0, m, r);
    return swiglu_s(m, tokens, m.ffn_hidden, r);
}

double denseFfnWeightGrads_s(const ModelSpec& m, int tp, double tokens, const HardwareRates& r) {
    return mlpGemms_s(m.mlp, m.hidden, m.ffn_hidden, tp, tokens, r);
}

double denseFfnForward_s(const ModelSpec& m, int tp, double tokens, const HardwareRates& r) {
    return denseFfnWeightGrads_s(m, tp, tokens, r) + mlpActivation_s(m, tokens, r);
}

// The gating GEMM and the output head stay in BF16 under FP8 training ("we maintain the original
// precision (e.g., BF16 or FP32) for the following components: the embedding module, the output
// head, MoE gating modules, normalization operators, and attention operators", DeepSeek-V3
// report, section 3.3; Megatron's output layer is not a Transformer Engine FP8 module).
HardwareRates bf16GemmRates(const HardwareRates& r) {
    HardwareRates bf16 = r;
    bf16.gemm_flops = bf16.weight_grad_gemm_flops = r.bf16_gemm_flops;
    bf16.gemm_input_bytes = bytesPerElement(Precision::bf16);
    bf16.quantize_input_bytes = bf16.quantize_output_bytes = 0;
    return bf16;
}

HardwareRates weightGradRates(const HardwareRates& r) {
    HardwareRates wgrad = r;
    wgrad.gemm_flops = r.weight_grad_gemm_flops;
    return wgrad;
}

double routerForward_s(const ModelSpec& m, double tokens, const HardwareRates& r) {
    return gemm_s({tokens, double(m.experts), double(m.hidden)}, bf16GemmRates(r));
}

double sharedExpertsWeightGrads_s(const ModelSpec& m, int tp, double tokens,
                                  const HardwareRates& r) {
    const double ffn = m.shared_experts * m.effectiveSharedFfn();
    return ffn > 0 ? mlpGemms_s(MlpKind::swiglu, m.hidden, ffn, tp, tokens, r) : 0.0;
}

double sharedExpertsForward_s(const ModelSpec& m, int tp, double tokens, const HardwareRates& r) {
    const double ffn = m.shared_experts * m.effectiveSharedFfn();
    if (!(ffn > 0))
        return 0;
    return sharedExpertsWeightGrads_s(m, tp, tokens, r) + swiglu_s(m, tokens, ffn, r);
}

double lmHeadForward_s(const ModelSpec& m, int tp, double tokens, const HardwareRates& r) {
    return columnParallel_s(tokens, tp, m.hidden, double(m.vocab), bf16GemmRates(r));
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

// Megatron-LM's distributed optimizer (docs/user-guide/features/dist_optimizer.md) steps Adam on
// the FP32 main parameters of this GPU's shard, then copies them into the (BF16) parameter
// buffer: per parameter it reads and writes the master weight and both moments (2 x the state
// bytes), reads the main gradient and writes the weight. Gradient clipping first takes the
// global L2 norm of the gradients (megatron/core/optimizer/clip_grads.py, get_grad_norm_fp32:
// a multi-tensor L2 norm over the local gradients): one more read of each gradient. Scaling the
// gradients when the norm exceeds the threshold (only then) is left out. Memory-bound: every
// byte at the sustained HBM rate. FP32 moments: 2 x 12 + 4 + 4 + 2 = 34 bytes per parameter.
double optimizerBytesPerParam(const Scenario& s) {
    const double grad_bytes = bytesPerElement(s.model.grad_precision);
    return 2.0 * optimizerStateBytesPerParam(s.training) + 2.0 * grad_bytes +
           bytesPerElement(s.model.weight_precision);
}

double step_costs_detail::optimizerStep_s(const Scenario& s, double shard_params,
                                          const HardwareRates& r) {
    return shard_params * optimizerBytesPerParam(s) / r.hbm_bytes_s;
}

// The squared norms of every GPU's gradient shards are summed by one all-reduce over the
// distributed optimizer's ranks, all GPUs (clip_grads.py: all_reduce over
// grad_stats_parallel_group, which for the distributed optimizer is "all ranks in the
// distributed optimizer instance", distrib_optimizer.py). One FP32 value: the latency terms of
// the all-reduce (collectives.cpp, hierarchical ring over the scale-up domains) are all of it.
// NCCL may pick a tree for so small a message, with fewer steps, so this is an upper bound; the
// host then reads the norm back (.item()), which keeps it on the critical path.
double gradNormAllReduce_s(const Scenario& s, const HardwareRates& r) {
    constexpr double kNormBytes = 4.0;
    const int gpus = s.cluster.gpuCount();
    GroupShape world;
    world.size = gpus;
    world.gpus_per_domain = std::min(gpus, s.cluster.gpusPerScaleUpDomain());
    world.domains = (gpus + world.gpus_per_domain - 1) / std::max(1, world.gpus_per_domain);
    world.nodes = s.cluster.nodes;
    return allReduce(world, kNormBytes, r.scale_up, r.scale_out).time_s;
}

// ---- MoE layer ----------------------------------------------------------------------------------

double MoeCosts::expertForward_s(double slots) const {
    return expertGemm_s(gemm, slots, rates);
}

namespace {
// dW of each expert's GEMMs: the forward's FLOPs and weight bytes again, at the weight
// gradients' rate; the permutes belong to the input-gradient side.
double weightGradsOfForward(double forward_at_wgrad_rate_s, double slots, const MoeCosts& moe) {
    return std::max(0.0, forward_at_wgrad_rate_s -
                             slots * moe.gemm.permute_bytes_per_slot / moe.rates.hbm_bytes_s);
}

// The backward is the forward's work backward_passes times over (input gradients, weight
// gradients, a full recompute's forward) with its weight-gradient share at that rate instead.
double backwardOf(const MoeCosts& moe, double forward_s, double wgrad_s, double slots) {
    return forward_s * moe.backward_passes + moe.recompute_s_per_slot * slots +
           (wgrad_s - weightGradsOfForward(forward_s, slots, moe));
}
} // namespace

double MoeCosts::expertWeightGrads_s(double slots, double forward_s) const {
    const double at_own_rate_s = weightGradsAtForwardRate(rates)
                                     ? forward_s
                                     : expertGemm_s(gemm, slots, weightGradRates(rates));
    return weightGradsOfForward(at_own_rate_s, slots, *this);
}

double MoeCosts::expertBackward_s(double slots) const {
    const double forward_s = expertForward_s(slots);
    return backwardOf(*this, forward_s, expertWeightGrads_s(slots, forward_s), slots);
}

CollectiveCost MoeCosts::dispatch(double factor) const {
    return allToAll(ep_group, bytes.dispatch, std::max(1.0, factor), scale_up, scale_out,
                    bytes.dispatch_cross, bytes.dispatch_forward);
}

CollectiveCost MoeCosts::combine(double factor) const {
    return allToAll(ep_group, bytes.combine, std::max(1.0, factor), scale_up, scale_out,
                    bytes.combine_cross, bytes.combine_forward);
}

double MoeCosts::dispatch_s(double factor) const {
    return dispatch(factor).time_s;
}

double MoeCosts::combine_s(double factor) const {
    return combine(factor).time_s;
}

MoeLayerPrice MoeCosts::price(double factor) const {
    // The busiest EP rank holds factor x the mean slots and the busiest receiver gets factor x
    // the mean bytes; the whole group runs at its pace. Backward: the combine's gradient
    // travels the dispatch direction and the dispatch's gradient the combine direction, both at
    // activation precision; full recompute repeats the forward pair before them.
    MoeLayerPrice p;
    const double slots = mean_slots * std::max(1.0, factor);
    p.expert_fwd_s = expertForward_s(slots);
    p.expert_wgrad_s = expertWeightGrads_s(slots, p.expert_fwd_s);
    p.expert_bwd_s = backwardOf(*this, p.expert_fwd_s, p.expert_wgrad_s, slots);
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
            {p.combine_bwd_s, 0, false, p.expert_bwd_s, p.expert_wgrad_s, combine_bwd_wait},
            {p.dispatch_bwd_s, 0, false, attention_block_bwd_s, attention_block_wgrad_s,
             dispatch_bwd_wait}};
        return alternatingSegmentsExposure(forward, backward, 2);
    }
    const PairSegment forward[] = {
        {p.combine_fwd_s, tp_fwd_s, true, attention_fwd_s, 0, combine_fwd_wait},
        {0, tp_fwd_s, true, attention_block_fwd_s - attention_fwd_s},
        {p.dispatch_fwd_s, 0, false, p.expert_fwd_s, 0, dispatch_fwd_wait}};
    const PairSegment backward[] = {
        {p.combine_bwd_s, tp_bwd_s, false, p.expert_bwd_s, p.expert_wgrad_s, combine_bwd_wait},
        {p.dispatch_bwd_s, 0, false, attention_block_bwd_s - attention_bwd_s,
         attention_block_wgrad_s - attention_wgrad_s, dispatch_bwd_wait},
        {0, tp_bwd_s, true, attention_bwd_s, attention_wgrad_s}};
    return alternatingSegmentsExposure(forward, backward, 3);
}

} // namespace moe
