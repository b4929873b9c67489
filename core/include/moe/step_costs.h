#pragma once
// The one cost model of a training step. buildStepCostModel() prepares, once per scenario and
// layout, what every operation of one micro-batch costs one GPU (per layer and pass, at the mean
// expert load) and everything else that does not depend on routing; priceStep() turns that model
// and an expert-load sample into the step's items. evaluate() (evaluate.h), the step timeline
// (timeline.h) and replay (replay.h) all price through these two functions, so no formula exists
// twice. Each formula is a small named function below, documented in step_costs.cpp next to its
// code and unit-tested in test_step_costs against hand-derived values.
//
// Accounting (docs/model.md, "One cost model"): the step is m micro-batches of the slowest pipeline
// stage (DualPipe: rank) - its compute and the transfers its compute waits for - plus the
// pipeline bubble, the pipeline sends and gradient sync left exposed, and the optimizer. This is
// what the simulated step's breakdown (Timeline::breakdown) measures on the simulation, and the
// closed form reproduces it item by item.

#include "moe/collectives.h"
#include "moe/expert_load.h"
#include "moe/model_costs.h"
#include "moe/placement.h"
#include "moe/scenario.h"

#include <array>
#include <memory>
#include <vector>

namespace moe {

/// Items of the step-time breakdown; they sum to the step time.
enum class StepItem {
    attention,
    dense_ffn,
    router,
    expert_compute,
    all_to_all,
    tp_comm,
    cp_comm,
    pp_comm,
    bubble,
    dp_sync,
    optimizer,
    imbalance_wait,
    count
};
constexpr int kStepItemCount = static_cast<int>(StepItem::count);
/// Words for people ("all-to-all (exposed)").
const char* toString(StepItem item);
/// Stable machine key ("all_to_all"): the JSON breakdown's keys.
const char* keyOf(StepItem item);
/// Brief words for sentences ("all-to-all", "imbalance"): what-changed summaries.
const char* briefName(StepItem item);

struct StepBreakdown {
    std::array<double, kStepItemCount> seconds{};      ///< exposed time per item
    std::array<double, kStepItemCount> overlapped_s{}; ///< time hidden behind other work
    double total_s = 0;
    double& operator[](StepItem item) { return seconds[static_cast<int>(item)]; }
    double operator[](StepItem item) const { return seconds[static_cast<int>(item)]; }
};

// ---- achievable rates ---------------------------------------------------------------------------

/// Achievable rates of the scenario's hardware: datasheet figures times the efficiencies
/// defined once in step_costs.cpp.
struct HardwareRates {
    double gemm_flops = 0; ///< sustained FLOP/s of large, well-shaped GEMMs (compute precision)
    double bf16_gemm_flops = 0; ///< the same in BF16 (router and output head stay BF16)
    /// Weight-gradient GEMMs at the compute precision (below gemm_flops for FP8 blockwise)
    double weight_grad_gemm_flops = 0;
    double attention_flops = 0;     ///< achievable FLOP/s of the fused attention forward (BF16)
    double attention_bwd_flops = 0; ///< the same for its backward
    double hbm_bytes_s = 0;         ///< achievable HBM bytes/s
    /// SMs the GEMMs' output tiles spread over (the GPU's, less those overlapped communication
    /// occupies); 0 = unknown, no tile or wave quantization.
    int gemm_sms = 0;
    double gemm_input_bytes = 2;  ///< per element of A and B (compute precision)
    double gemm_output_bytes = 2; ///< per element of C (activation precision)
    /// FP8 quantization traffic per forward-pass equivalent, bytes per element of A's rows
    /// (m x k) and of the output gradient (m x n), by recipe (step_costs.cpp); 0 for BF16.
    double quantize_input_bytes = 0;
    double quantize_output_bytes = 0;
    LinkParams scale_up;
    LinkParams scale_out;
};
HardwareRates hardwareRates(const Scenario& scenario);

// ---- GEMMs -------------------------------------------------------------------------------------

/// Output tile of one thread block (rows of C along m, columns along n): cuBLAS's largest and
/// most efficient tile (step_costs.cpp, where the source is).
inline constexpr double kGemmTileRows = 128;
inline constexpr double kGemmTileCols = 256;

/// C[m x n] = A[m x k] . B[k x n]. m may be fractional (a mean over experts).
struct GemmShape {
    double m = 0, n = 0, k = 0;
};
/// Share of the SMs' tile work that is useful: m n split_k / (waves x SMs x tile area), where
/// tiles = ceil(m / rows) x ceil(n / cols), split_k = floor(SMs / tiles) when there are fewer
/// tiles than SMs (else 1) and waves = ceil(tiles x split_k / SMs). Covers tile quantization
/// (padded tiles) and wave quantization (a last, partly filled wave). 1 with `sms` <= 0.
double gemmTileEfficiency(const GemmShape& shape, int sms);
/// Roofline time of a GEMM: the larger of compute (2 m n k FLOPs at the sustained rate x the
/// tile efficiency) and memory (A, B and C streamed once through HBM).
double gemm_s(const GemmShape& shape, const HardwareRates& r);
/// Roofline time of `batch` equal GEMMs in one strided-batched kernel: their tiles share the
/// waves, in whichever operand order (C or C^T) fills the tiles better.
double batchedGemm_s(const GemmShape& shape, double batch, const HardwareRates& r);
/// FP8 quantization passes of `groups` GEMMs of `shape` per forward-pass equivalent:
/// groups m (k quantize_input_bytes + n quantize_output_bytes) / HBM rate; 0 for BF16.
double quantize_s(const GemmShape& shape, double groups, const HardwareRates& r);
/// The rates with the GEMMs in BF16 (the router and output head under FP8 training).
HardwareRates bf16GemmRates(const HardwareRates& r);
/// The rates of the weight-gradient GEMMs (gemm_flops = weight_grad_gemm_flops).
HardwareRates weightGradRates(const HardwareRates& r);
/// Whether weight-gradient GEMMs run at the forward GEMMs' rate (every recipe but blockwise FP8),
/// so a backward priced as a multiple of the forward already holds them at the right rate.
inline bool weightGradsAtForwardRate(const HardwareRates& r) {
    return r.weight_grad_gemm_flops == r.gemm_flops;
}
/// Weight-gradient GEMMs at their own rate, and what that rate adds to (or saves from) a
/// backward that priced them at the forward GEMMs' rate.
struct WeightGradCost {
    double own_rate_s = 0;
    double over_forward_rate_s = 0;
};
/// `gemms_at(rates)` prices the GEMMs whose weight gradients these are; evaluated once when the
/// two rates agree (the evaluate hot path), twice otherwise.
template <class GemmsAt>
WeightGradCost weightGradCost(const HardwareRates& r, const GemmsAt& gemms_at) {
    const double at_forward_rate_s = gemms_at(r);
    if (weightGradsAtForwardRate(r))
        return {at_forward_rate_s, 0.0};
    const double own_rate_s = gemms_at(weightGradRates(r));
    return {own_rate_s, own_rate_s - at_forward_rate_s};
}
/// Roofline time of `groups` GEMMs run as one grouped kernel, `shape.m` rows per group on
/// average: each group's rows padded to max(one tile, m + half a tile), columns to whole
/// tiles, no wave quantization (persistent grouped kernels); every group's A, B and C stream.
double groupedGemm_s(const GemmShape& shape, double groups, const HardwareRates& r);

// ---- compute, per GPU, one layer, one forward pass of `tokens` tokens --------------------------
// `tokens` is the GPU's sequence-parallel share; with TP each GEMM runs on all tp x tokens rows
// and 1/tp of the columns (column-parallel) or of the reduction (row-parallel).

/// Attention's GEMMs: the QKV (or MLA down and up) projections and the output projection.
double attentionForward_s(const ModelSpec& model, int tp, double tokens, const HardwareRates& r);
/// Elements of the s x s score matrices one GPU's heads compute per micro-batch and layer:
/// tokens x heads x seq_len (the full square).
double attentionScoreElements(const ModelSpec& model, double tokens);
/// Core attention forward. flash: the causal half of QK^T and AV at the attention rate, in one
/// kernel. unfused: the score and context GEMMs batched over sequences and heads, over the full
/// square (roofline: writing and reading the scores is their memory side), plus the softmax's
/// and (dropout > 0) the dropout's passes over the scores through HBM.
double attentionCoreForward_s(const ModelSpec& model, AttentionKernel kernel, int cp, double tokens,
                              const HardwareRates& r);
/// FlashAttention's backward runs five GEMMs of the forward's size (QK^T recomputed, then dV,
/// dP, dQ, dK) to the forward's two: 2.5x its FLOPs.
inline constexpr double kFlashBackwardFlopsPerForward = 2.5;
/// FlashAttention-3's backward pre- and postprocess kernels, memory-bound: O and dO read, the
/// FP32 dQ accumulator zeroed and read back, dQ written.
double flashBackwardPrePost_s(const ModelSpec& model, double tokens, const HardwareRates& r);
/// Core attention backward (recompute not included). flash: 2.5x the forward's FLOPs at the
/// backward kernel's rate, plus its pre- and postprocess kernels. unfused: four batched
/// GEMMs (gradients of P, V, Q, K) and the dropout's and softmax's backward passes.
double attentionCoreBackward_s(const ModelSpec& model, AttentionKernel kernel, int cp,
                               double tokens, const HardwareRates& r);
/// One layer's forward element-wise passes outside attention's core and the MLP's activation:
/// two norms, two residual adds (bias and dropout fused), rotary on Q and K, dropout masks.
/// `hidden_replicas`: how many TP ranks' tokens each GPU runs the hidden-sized passes on
/// (tpReplicas: 1 with sequence parallelism, tp without).
double layerElementwiseForward_s(const ModelSpec& model, double tokens, double hidden_replicas,
                                 const HardwareRates& r);
/// What selective recompute runs again in backward per layer: the MLA up-projections and the
/// two norms (0 for other recompute modes is the caller's business).
double selectiveRecompute_s(const ModelSpec& model, int tp, double tokens, double hidden_replicas,
                            const HardwareRates& r);
/// SwiGLU's elementwise passes over `ffn_columns` intermediate columns per token.
double swiglu_s(const ModelSpec& model, double tokens, double ffn_columns, const HardwareRates& r);
/// The dense MLP's activation (SwiGLU or GeLU, model.mlp) on one GPU's tokens x ffn elements.
double mlpActivation_s(const ModelSpec& model, double tokens, const HardwareRates& r);
/// A dense FFN sharded over `tp`: its GEMMs (SwiGLU: gate and up fused, then down; GeLU: up,
/// then down) and its activation.
double denseFfnForward_s(const ModelSpec& model, int tp, double tokens, const HardwareRates& r);
/// Its weight gradients: the GEMMs' work again (the activation has no weights).
double denseFfnWeightGrads_s(const ModelSpec& model, int tp, double tokens, const HardwareRates& r);
/// The router's GEMM (hidden x experts) on the GPU's own tokens.
double routerForward_s(const ModelSpec& model, double tokens, const HardwareRates& r);
/// The shared experts of a MoE layer sharded over `tp`: GEMMs and activation.
double sharedExpertsForward_s(const ModelSpec& model, int tp, double tokens,
                              const HardwareRates& r);
/// Their weight gradients: the GEMMs' work again.
double sharedExpertsWeightGrads_s(const ModelSpec& model, int tp, double tokens,
                                  const HardwareRates& r);
/// The output head (vocab x hidden), vocabulary-parallel over `tp`.
double lmHeadForward_s(const ModelSpec& model, int tp, double tokens, const HardwareRates& r);
/// The input embedding's row gather per micro-batch (memory-bound), and its backward: the
/// rows' gradients scatter-added into the table's gradient.
double embeddingForward_s(const ModelSpec& model, double tokens, const HardwareRates& r);
double embeddingBackward_s(const ModelSpec& model, double tokens, const HardwareRates& r);
/// A multi-token-prediction module's projection M_k: 2h -> h (DeepSeek-V3 report eq. 21).
double mtpProjectionForward_s(const ModelSpec& model, int tp, double tokens,
                              const HardwareRates& r);

/// Tokens per expert below which the design warnings flag tiny expert GEMMs: fewer than one
/// output tile's rows, so groupedGemm_s pads each expert to at least t + 64 rows and at 128
/// tokens a third of the grouped GEMM's work is already padding.
inline constexpr double kTinyExpertGemmTokens = kGemmTileRows;

/// One EP rank's routed experts as grouped GEMMs (SwiGLU: gate and up fused h -> 2f, then
/// down f -> h, f = the expert's ETP shard).
struct ExpertGemmShape {
    int experts_per_rank = 1;
    double hidden = 0, ffn_shard = 0;
    double flops_per_slot = 0;         ///< forward FLOPs per token slot
    double weight_bytes = 0;           ///< per expert (its ETP shard)
    double permute_bytes_per_slot = 0; ///< the permute and unpermute passes per token slot
};
ExpertGemmShape expertGemmShape(const Scenario& scenario);
/// Forward time of the grouped GEMMs holding `slots` token slots (slots / experts_per_rank
/// rows per expert; groupedGemm_s, so few tokens per expert come out memory-bound by
/// roofline), plus the permute passes through HBM.
double expertGemm_s(const ExpertGemmShape& shape, double slots, const HardwareRates& r);

// ---- optimizer ----------------------------------------------------------------------------------

/// HBM bytes the optimizer step moves per parameter of a GPU's optimizer shard: the update
/// (master weight and moments read and written, gradient read, weight written) and gradient
/// clipping's norm (the gradient read once more).
double optimizerBytesPerParam(const Scenario& scenario);
/// Gradient clipping's all-reduce of the squared norm (one FP32 value) over every GPU of the
/// distributed optimizer: latency-bound.
double gradNormAllReduce_s(const Scenario& scenario, const HardwareRates& r);

// ---- communication ------------------------------------------------------------------------------

/// One TP all-gather or reduce-scatter of a layer's (tp x tokens) activations.
CollectiveCost tpCollective(const Scenario& scenario, const GroupShape& tp_group, double tokens,
                            const HardwareRates& r);
/// Bytes of one ring step of the context-parallel KV exchange.
double kvChunkBytes(const Scenario& scenario, double tokens);
/// Per GPU and per all-to-all call of a MoE layer: the dispatch (dispatch precision) and the
/// combine (activation precision), and with node-limited routing (DeepEP) the bytes that cross
/// the fabric (-1 without it).
struct AllToAllBytes {
    double dispatch = 0, combine = 0;
    double dispatch_cross = -1, combine_cross = -1;
    /// With a flex dispatcher across domains: one copy per target node through the NIC, and the
    /// NVLink forwarding inside the target nodes (-1 otherwise: the default shares).
    double dispatch_forward = -1, combine_forward = -1;
};
AllToAllBytes allToAllBytes(const Scenario& scenario, const GroupShape& ep_group, double tokens);

// ---- overlap ------------------------------------------------------------------------------------

/// What a DualPipe pair's transfers add to its compute, by the collective exposed.
struct PairExposure {
    double all_to_all_s = 0, tp_s = 0;
    /// Of the exposed all-to-all, what the busiest receiver adds over the mean load: the tail
    /// of each transfer (the imbalance wait's share of the transfers).
    double imbalance_s = 0;
    double total_s() const { return all_to_all_s + tp_s + imbalance_s; }
};

/// What one micro-batch's forward and its backward expose when each runs alone, unpaired: all
/// their transfers.
struct AloneTransfers {
    PairExposure forward, backward;
};

/// One segment of a pass in a DualPipe pair (timeline_builder.cpp, emitPair): the transfers a block
/// of compute waits for, then that block.
struct PairSegment {
    double all_to_all_s = 0, tp_s = 0; ///< the transfers
    bool tp_runs_last = false;         ///< the TP collective follows the all-to-all
    double compute_s = 0;
    /// backward: the weight gradients at the end of compute_s, which the pass's next transfers
    /// do not wait for (timeline_builder.cpp, backwardOps, WeightGrads::split)
    double weight_grads_s = 0;
    double all_to_all_wait_s = 0; ///< of all_to_all_s, the busiest receiver's extra (its tail)
};
/// What a layer's segments of the two passes of a pair expose when run alternately forward[0],
/// backward[0], forward[1], ... (derivation in step_costs.cpp).
PairExposure alternatingSegmentsExposure(const PairSegment* forward, const PairSegment* backward,
                                         size_t count);
/// What one fused pair of two whole chunks exposes, by the pass whose transfers it waits for:
/// their segments run forward[0], backward[0], forward[1], ... and the longer chunk's rest
/// alone (timeline_builder.cpp, emitPair); each compute block waits for its transfer, each
/// transfer for the transfer stream and its pass's previous compute (a backward one for the
/// input gradients only).
struct ChunkPairExposure {
    PairExposure forward, backward;
};
ChunkPairExposure chunkPairExposure(const std::vector<PairSegment>& forward,
                                    const std::vector<PairSegment>& backward);

/// DualPipe: the forwards (and as many backwards) per step that pipeline rank `stage` runs
/// alone rather than fused into overlapped pairs.
double dualPipeUnpairedPasses(int pp, int stage);
/// Combined 1F1B (training.ep_overlap): the micro-batches' worth of chunk passes pipeline rank
/// `stage` runs alone, its warm-up forwards (and as many cool-down backwards) over vpp.
double combinedUnpairedPasses(int pp, int vpp, int micro_batches, int stage);
/// Whether the step's passes run in overlapped forward & backward pairs (DualPipe, or
/// combined 1F1B), each one's transfers under the other's compute.
bool pairsPasses(const Scenario& scenario);

/// A pass's compute split by what it waits for: the forward's share of forward + backward, and
/// the share of the backward's weight-gradient GEMMs (which nothing downstream waits for, so
/// zero-bubble schedules defer them). 1/3 and 1/3: a model of GEMMs alone (backward = 2x
/// forward, half of it dW). Measured on a stage by stagePassShares.
struct PassShares {
    double forward = 1.0 / 3.0, weight = 1.0 / 3.0;
};

/// A micro-batch's time t split into one chunk's forward F = forward t, full backward
/// B = (1 - forward) t and its weight-gradient part W = weight t, for the bubbles of GPipe
/// and DualPipe and DualPipe's phases. The default is the 1:2 forward:backward of a model of GEMMs
/// alone, W half of B.
struct PassSplit {
    double forward_s = 0, backward_s = 0, weight_s = 0;
};
PassSplit passSplit(double t_mb, const PassShares& shares = {});

/// Pipeline bubble of a schedule for per-micro-batch time t_mb (closed forms, every stage
/// alike); DualPipe's depends on how t splits into F, B and W. With stages that differ,
/// priceStep uses the per-stage forms below (gpipeBubble_s, oneFOneBBubble_s) and DualPipe's
/// walk (dualPipeBubble_s).
double pipelineBubble_s(const LayoutSpec& layout, double t_mb, const PassShares& shares = {});

/// GPipe's bubble with each stage's own forward and backward time per micro-batch: every
/// forward runs first, m alike jobs through the stages in order, then every backward back
/// through them, so the step is sum_s (F_s + B_s) + (m - 1)(max F + max B); the bubble is that
/// less m t of stage `pace_stage`. (p - 1) t when all stages are alike; it grows with m when
/// the slowest forward and the slowest backward sit on different stages.
double gpipeBubble_s(const std::vector<double>& forward_s, const std::vector<double>& backward_s,
                     int micro_batches, int pace_stage);

/// 1F1B's bubble with each stage's own time per micro-batch t_s (forward, backward and the
/// transfers they expose): when the last stage is the slowest, the fill and drain pass
/// through the other stages once, sum_{s<last} t_s; otherwise (p - 1) max t, the all-alike
/// closed form. Derivation beside the code.
double oneFOneBBubble_s(const std::vector<double>& stage_s);

/// One pipeline stage's chunk as a DualPipe rank's compute stream runs it: each pass's compute
/// plus the transfers it exposes.
struct DualPipeChunkTimes {
    double forward_s = 0;  ///< a forward run alone
    double backward_s = 0; ///< a full backward run alone (input and weight gradients)
    double weight_s = 0;   ///< of which the weight gradients a zero-bubble backward defers
    /// In a fused pair: the forward's part and the backward's part (a rank's pair runs one
    /// stage's forward chunk with its other stage's backward chunk).
    double pair_forward_s = 0, pair_backward_s = 0;
};
/// DualPipe's bubble with each stage's own chunk times (dualpipe_walk.cpp): the step of
/// `micro_batches` walked through deepseek-ai/DualPipe's schedule, chunk by chunk, less rank
/// `rank`'s work, without the sends between stages. With every chunk alike and W = F it is
/// the closed form (p/2 - 1)(F&B + B - 3W). Its cost does not grow with micro_batches.
/// Returns -1 when the schedule cannot run (odd pp or micro-batches, fewer than 2 pp).
double dualPipeBubble_s(const std::vector<DualPipeChunkTimes>& stages, int micro_batches, int rank);

/// Gradient buckets synced one after another on one stream as the last backward releases them
/// (Megatron's overlapped gradient reduce): bucket j, taking sync_s[j], is released when
/// compute_after_s[j] of backward compute is still to run. Returns how long the last bucket
/// ends after the backward: max over j of (sync of buckets j.. - compute after j); at least
/// the last bucket.
double bucketSyncTail_s(const std::vector<double>& sync_s,
                        const std::vector<double>& compute_after_s);
/// The weights' all-gather at the step's start, bucket by bucket in the order of first use:
/// bucket j (gather_s[j]) must arrive before its layer's first forward, which follows
/// compute_before_s[j] of forward compute. Returns how long the first forward pass waits in
/// all: max over j of (gathers up to j - compute before j); at least the first bucket.
double bucketGatherHead_s(const std::vector<double>& gather_s,
                          const std::vector<double>& compute_before_s);

// ---- the model ----------------------------------------------------------------------------------

/// What one micro-batch's operations of one layer cost one GPU, per pass (backward includes
/// recomputation), at the mean expert load. The same on every stage, so computed once.
struct LayerPassCosts {
    double attention_fwd_s = 0, attention_bwd_s = 0; ///< every layer
    double dense_ffn_fwd_s = 0, dense_ffn_bwd_s = 0; ///< dense layers
    double shared_fwd_s = 0, shared_bwd_s = 0;       ///< shared experts, MoE layers
    double router_fwd_s = 0, router_bwd_s = 0;       ///< MoE layers
    double lm_head_fwd_s = 0, lm_head_bwd_s = 0;     ///< the stage holding the LM head
    double embedding_fwd_s = 0, embedding_bwd_s = 0; ///< the first stage (layer 0)
    /// The model.mtp_layers multi-token-prediction modules, with the LM head on the last stage.
    double mtp_fwd_s = 0, mtp_bwd_s = 0;
    /// The weight-gradient part of each backward above: the GEMMs that compute dW from the
    /// layer's input and its output gradient, the forward GEMMs' work again (attention: the
    /// projections only; the core has no weights). The rest of a backward (input gradients,
    /// the attention core, element-wise work, recomputation) is what later layers wait for.
    /// An embedding's whole backward is its weight gradient (the rows' scatter-add).
    double attention_wgrad_s = 0, dense_ffn_wgrad_s = 0, shared_wgrad_s = 0, router_wgrad_s = 0;
    double lm_head_wgrad_s = 0, embedding_wgrad_s = 0, mtp_wgrad_s = 0;
    /// What the model's ends add to a layer's pass: the embedding before layer 0, the LM head
    /// and the MTP modules after the last layer.
    double endsFwd_s(bool first_layer, bool last_layer) const {
        return (first_layer ? embedding_fwd_s : 0.0) +
               (last_layer ? lm_head_fwd_s + mtp_fwd_s : 0.0);
    }
    double endsBwd_s(bool first_layer, bool last_layer) const {
        return (first_layer ? embedding_bwd_s : 0.0) +
               (last_layer ? lm_head_bwd_s + mtp_bwd_s : 0.0);
    }
    double endsWgrad_s(bool first_layer, bool last_layer) const {
        return (first_layer ? embedding_wgrad_s : 0.0) +
               (last_layer ? lm_head_wgrad_s + mtp_wgrad_s : 0.0);
    }
    /// TP with sequence parallelism: one all-gather or reduce-scatter, and calls per layer
    /// (two around attention, two around the MLP; per pass).
    CollectiveCost tp_call;
    int tp_calls_fwd = 0, tp_calls_bwd = 0;
    /// One of a layer's two TP operations per pass (after attention, after the MLP): half of
    /// the pass's calls.
    double tpOperationFwd_s() const { return tp_call.time_s * tp_calls_fwd / 2.0; }
    double tpOperationBwd_s() const { return tp_call.time_s * tp_calls_bwd / 2.0; }
    /// CP ring attention: one hop of the KV exchange, hops per layer and pass.
    double cp_hop_s = 0, cp_hop_bytes = 0;
    bool cp_scale_out = false;
    int cp_hops_fwd = 0, cp_hops_bwd = 0;
};

/// One MoE layer's routing-dependent operations at one load factor (the EP group's busiest rank
/// over the mean), per GPU and micro-batch: the expert GEMMs at the busiest rank's slots and
/// the all-to-alls paced by the busiest receiver.
struct MoeLayerPrice {
    double expert_fwd_s = 0, expert_bwd_s = 0;
    double expert_wgrad_s = 0; ///< of expert_bwd_s: the weight-gradient grouped GEMMs
    /// Forward: dispatch then combine; backward: combine's gradient first (with full recompute
    /// plus the re-run forward pair), then dispatch's gradient after the expert GEMMs.
    double dispatch_fwd_s = 0, combine_fwd_s = 0, combine_bwd_s = 0, dispatch_bwd_s = 0;
    double transfers_s() const {
        return dispatch_fwd_s + combine_fwd_s + combine_bwd_s + dispatch_bwd_s;
    }
    double experts_s() const { return expert_fwd_s + expert_bwd_s; }
};

/// The routed experts of a MoE layer, load-independent: the GEMM shape and the all-to-all.
struct MoeCosts {
    bool valid = false; ///< false for dense models
    ExpertGemmShape gemm;
    HardwareRates rates;             ///< the rates the GEMMs run at
    double mean_slots = 0;           ///< token slots per EP rank per micro-batch at the mean load
    double backward_passes = 2;      ///< backward (+ full recompute) in forward passes
    double recompute_s_per_slot = 0; ///< selective recompute of the experts' activation
    double forward_pairs = 1;        ///< forward dispatch + combine pairs (2: full recompute)
    GroupShape ep_group;
    LinkParams scale_up, scale_out;
    AllToAllBytes bytes;
    CollectiveCost dispatch_call, combine_call; ///< one call each at the mean load
    /// Per MoE layer and pass, the compute a DualPipe pair runs beside the other pass's
    /// transfers: attention alone, and attention + router + shared experts.
    double attention_fwd_s = 0, attention_bwd_s = 0;
    double attention_block_fwd_s = 0, attention_block_bwd_s = 0;
    double attention_wgrad_s = 0, attention_block_wgrad_s = 0; ///< of the backwards: dW
    double tp_fwd_s = 0, tp_bwd_s = 0; ///< one TP operation per pass (0 without TP)

    /// Forward time of one EP rank's grouped expert GEMMs holding `slots` token slots.
    double expertForward_s(double slots) const;
    /// Backward time of the same, recomputation included.
    double expertBackward_s(double slots) const;
    /// Of that backward, the weight-gradient grouped GEMMs (the forward's GEMMs again, without
    /// the permutes). `forward_s` is expertForward_s(slots), reused when the rates agree.
    double expertWeightGrads_s(double slots, double forward_s) const;
    /// One dispatch all-to-all when the busiest receiver gets `factor` x the mean bytes
    /// (factors below 1 count as 1).
    CollectiveCost dispatch(double factor) const;
    double dispatch_s(double factor) const;
    /// One all-to-all at activation precision (the combine, and both backward all-to-alls).
    CollectiveCost combine(double factor) const;
    double combine_s(double factor) const;
    /// The layer's routing-dependent operations at `factor`.
    MoeLayerPrice price(double factor) const;
    MoeLayerPrice mean; ///< price(1): at the mean load
    /// DualPipe: what the layer's transfers add to a fused forward & backward pair's compute
    /// when its operations cost `hot` (price(factor)), by collective.
    PairExposure pairExposure(const MoeLayerPrice& hot) const;
    PairExposure pairExposure(double factor) const { return pairExposure(price(factor)); }
};

/// A stage's MoE layers at the pace of its busiest EP group (priceStep computes one per stage).
struct StagePace {
    double factor = 1; ///< busiest rank over the mean (>= 1)
    MoeLayerPrice hot; ///< one MoE layer's operations at that pace
    PairExposure pair; ///< DualPipe: one MoE layer's pair exposure at that pace
    /// DualPipe (StepCostModel::chunk_pairs): what the stage's chunks expose in their pairs at
    /// this pace, once priceStep has computed it for the stage (every use reads it from here).
    bool has_chunk_pair = false;
    ChunkPairExposure chunk_pair;
};

/// Gradient sync of one stage per step (ZeRO >= 1: reduce-scatter of the gradients, then
/// all-gather of the updated weights; ZeRO-0: one all-reduce), and the optimizer.
struct StageSync {
    double dp_grad_s = 0, dp_gather_s = 0, edp_grad_s = 0, edp_gather_s = 0;
    double dp_bytes_up = 0, dp_bytes_out = 0, edp_bytes_up = 0, edp_bytes_out = 0;
    double optimizer_s = 0;
    double dp_s() const { return dp_grad_s + dp_gather_s; }
    double edp_s() const { return edp_grad_s + edp_gather_s; }
};

/// What one GPU of a stage sends per micro-batch, by collective and link class, with the time
/// the transfers take when nothing hides them and the calls.
struct StageTraffic {
    double a2a_dispatch_s = 0, a2a_combine_s = 0; ///< by direction (the backward's included)
    double a2a_dispatch_up = 0, a2a_dispatch_out = 0, a2a_combine_up = 0, a2a_combine_out = 0;
    double tp_s = 0, tp_up = 0, tp_out = 0;
    double cp_s = 0, cp_up = 0, cp_out = 0;
    int a2a_calls = 0, tp_calls = 0, cp_calls = 0;
    double a2a_s() const { return a2a_dispatch_s + a2a_combine_s; }
};

/// One pipeline stage, load-independent.
struct StageCosts {
    StageLayers layers;
    std::vector<int> moe_layer_indices; ///< MoE layer indices (0-based among MoE layers)
    /// Per micro-batch at the mean load: compute items (attention, dense FFN & head, router,
    /// expert compute) and the exposed transfers (all-to-all, TP, CP); imbalance wait 0.
    StepBreakdown mean;
    double compute_s = 0; ///< all compute per micro-batch
    PassShares shares;    ///< how that compute splits into F, B and W
    /// Paired passes (DualPipe, combined 1F1B): the micro-batches the rank runs alone
    /// (dualPipeUnpairedPasses, combinedUnpairedPasses).
    double unpaired = 0;
    double dense_pair_tp_s = 0; ///< paired passes: TP exposure of the dense layers per pair
    StageTraffic traffic;
    StageSync sync;
    /// Gradient buckets: each layer (in layers.layer_indices order) is one, holding its share
    /// of the stage's dense parameters and, a MoE layer, an equal share of its expert ones.
    std::vector<double> layer_dense_share;
    double moe_layer_expert_share = 0; ///< 1 / the stage's MoE layers (0 without any)
};

/// A stage's compute per micro-batch at the mean expert load, by item (attention, dense FFN &
/// head, router, expert compute; the rest 0): what StageCosts::mean holds before its transfers.
/// `moe_layers` is the stage's MoE layer count.
StepBreakdown stageMeanCompute(const LayerPassCosts& layer, const MoeCosts& moe,
                               const StageLayers& stage, double moe_layers);
/// The sum of a breakdown's compute items (attention, dense FFN & head, router, expert
/// compute): StageCosts::compute_s of a stageMeanCompute.
inline double computeItems_s(const StepBreakdown& b) {
    return b[StepItem::attention] + b[StepItem::dense_ffn] + b[StepItem::router] +
           b[StepItem::expert_compute];
}

/// A lower bound on the step time from compute alone: micro_batches x the busiest pipeline
/// rank's compute per micro-batch at the mean expert load (`stage_compute_s`, per stage; under
/// DualPipe a rank runs stages r and pp-1-r, m/2 micro-batches each). No expert load, transfer,
/// bubble, gradient sync or optimizer can make priceStep's step shorter (the proof is at the
/// definition); the layout search prunes by it.
double stepComputeFloor_s(const std::vector<double>& stage_compute_s, double micro_batches,
                          bool dualpipe);

/// One layer's gradient bucket: its share of its stage's dense and expert sync, and the layer's
/// forward and backward for one micro-batch at the mean load (compute and, outside DualPipe,
/// the transfers it waits for), which set when the bucket is needed and released.
struct SyncBucket {
    int stage = 0;
    bool moe = false;
    double grad_s = 0, gather_s = 0;
    double forward_s = 0, backward_s = 0;
};

/// A pipeline rank's gradient buckets and optimizer: a stage, or under DualPipe the two stages
/// whose chunks the rank runs (and whose parameters it holds).
struct RankSync {
    /// In the order the first forward needs them: layer order, the lower stage first. The
    /// last backward releases them in the reverse order.
    std::vector<SyncBucket> buckets;
    double optimizer_s = 0; ///< the update of its shards (gradient norm included)
    double sync_s = 0;      ///< every bucket's sync and gather
};

/// Everything about a step that does not depend on routing. Prepared once per scenario and
/// layout (buildStepCostModel); immutable, so shared by evaluate's report, the timeline and
/// replay.
struct StepCostModel {
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    bool paired_passes = false; ///< pairsPasses: DualPipe or combined 1F1B
    LayoutSpec layout;
    double micro_batches = 1;
    double tokens = 0; ///< per GPU per layer per micro-batch
    HardwareRates rates;
    LayerPassCosts layer;
    MoeCosts moe;
    std::vector<StageCosts> stages;
    std::vector<RankSync> ranks; ///< per pipeline rank (stage; DualPipe: rank r runs r, pp-1-r)
    double pp_send_s = 0;        ///< one activation (or gradient) send between adjacent stages
    double pp_message_bytes = 0; ///< its size (0 without PP)
    bool pp_scale_out = false;   ///< the pipeline sends leave the scale-up domain
    DpOverlap dp_overlap = DpOverlap::grad_reduce_and_param_gather;
    double grad_norm_allreduce_s = 0; ///< once per step, every rank (gradNormAllReduce_s)
    int dense_layers = 0; ///< the first dense_layers layers use the dense FFN (all when dense)
    /// DualPipe: a pair exposes what its two chunks' segments leave
    /// (chunkPairExposure), the chunks of a rank's two stages alternating as they are fused.
    bool chunk_pairs = false;
};
StepCostModel buildStepCostModel(const Scenario& scenario, const Placement& placement);
/// The compute half of buildStepCostModel, without placing the layout: the rates, tokens and
/// micro-batches, every layer's compute and the MoE layers' expert compute at the mean load
/// (no transfers, no stages). Enough for stageMeanCompute and stepComputeFloor_s.
StepCostModel buildComputeCostModel(const Scenario& scenario);
/// stepComputeFloor_s of a built model's stages.
double stepComputeFloor_s(const StepCostModel& model);
/// The pace of a stage whose busiest EP group carries `factor` x the mean load.
StagePace stagePace(const StepCostModel& model, double factor);

/// The step priced for one expert-load sample.
/// The optimizer phase: what runs after the pipeline's last backward until the step ends, by
/// part, exposed (each part as far as the drain of the other pipeline ranks does not hide it):
/// the gradient reduction not yet done, the optimizer (gradient norm, its all-reduce and the
/// update), and the ZeRO weights' all-gather when it is not overlapped with the next forward.
struct OptimizerPhase {
    double grad_sync_s = 0;
    double optimizer_s = 0;           ///< gradient norm, its all-reduce and the update
    double grad_norm_allreduce_s = 0; ///< of which the norm's all-reduce
    double param_gather_s = 0;
    double total_s() const { return grad_sync_s + optimizer_s + param_gather_s; }
};

/// One DualPipe rank's step in segments (docs/model.md, "DualPipe phases"): what its compute
/// stream runs alone and paired, from deepseek-ai/DualPipe's phase counts, the rank's
/// micro-batch compute split as the bubble's closed form splits it (F = t/3, B = 2t/3, W = B/2
/// by default) and the transfers each kind of pass exposes. The segments plus idle_s and the
/// optimizer make the step.
struct DualPipePhases {
    bool valid = false;           ///< DualPipe with pp >= 2 only
    int rank = 0;                 ///< the rank that sets the step's pace
    int alone = 0;                ///< forwards (and backwards) the rank runs unpaired
    int deferred_w = 0;           ///< zero-bubble backwards whose weight gradients run later, alone
    double forward_s = 0;         ///< unpaired forward chunks (ISCA Table 4 "1F", as read)
    double input_backward_s = 0;  ///< unpaired backward chunks less their deferred W ("1B")
    double weight_backward_s = 0; ///< the deferred weight-gradient chunks ("1W")
    double paired_s = 0;          ///< the overlapped forward & backward pairs ("1F1B")
    /// The rest of the step before the optimizer: the pipeline bubble, exposed pipeline sends
    /// and gradient sync ("bubble").
    double idle_s = 0;
};

/// A rank's exposed transfers per micro-batch by how its passes run: an unpaired forward and an
/// unpaired backward expose all of theirs, a pair what the pair model leaves.
struct PassTransfers {
    double alone_forward_s = 0, alone_backward_s = 0, pair_s = 0;
};

/// Rank `rank`'s phases for m micro-batches of time t_mb; before_optimizer_s is the step less
/// its optimizer (the rank's idle time is what m t_mb leaves of it). t_mb holds the transfers
/// the rank's passes expose, mixed over paired and unpaired ones as `transfers` says; each
/// phase takes its own passes' share.
DualPipePhases dualPipePhases(int pp, int micro_batches, int rank, double t_mb,
                              double before_optimizer_s, const PassShares& shares = {},
                              const PassTransfers& transfers = {});

struct StepPrice {
    std::vector<StepBreakdown> stage_per_micro_batch; ///< per stage, at the sample's load
    std::vector<double> stage_imbalance;              ///< the factor each stage's EP groups pay
    /// The stage that sets the pace (DualPipe: the rank's slower stage); its rank's per
    /// micro-batch items, x micro-batches, make the step's compute and transfer items.
    int slowest_stage = 0;
    StepBreakdown per_micro_batch; ///< of the slowest stage (DualPipe: mean of the rank's two)
    StepBreakdown step;
    double step_time_s = 0;
    OptimizerPhase optimizer_phase;
    DualPipePhases dualpipe_phases;
};
/// The one pricing function: the model plus an expert-load sample give every item of the step.
/// `group_peaks`, when given, is groupPeakRatios(load) computed beforehand.
StepPrice priceStep(const StepCostModel& model, const ExpertLoad& load,
                    const std::vector<double>* group_peaks = nullptr);
/// One stage's per-micro-batch items when its EP groups pay `imbalance` (>= 1).
StepBreakdown priceStage(const StepCostModel& model, const StageCosts& stage, double imbalance);
StepBreakdown priceStage(const StepCostModel& model, const StageCosts& stage,
                         const StagePace& pace);

} // namespace moe
