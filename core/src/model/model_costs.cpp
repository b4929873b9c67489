// What the model costs: parameters, FLOPs, the pipeline split and memory per GPU.
//
// Every count is a double: DeepSeek-V3-sized models overflow 32-bit integers and the counts
// feed floating-point time and memory formulas anyway. Degrees read from the layout are
// clamped to >= 1 so that an unvalidated scenario yields finite numbers instead of a crash.

#include "moe/model_costs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace moe {

namespace {

int atLeastOne(int v) {
    return v > 0 ? v : 1;
}

/// ModelSpec::effectiveHeadDim() without its division by zero for an unvalidated heads = 0.
double headDim(const ModelSpec& m) {
    return m.head_dim > 0 ? m.head_dim : double(m.hidden / atLeastOne(m.heads));
}

/// Attention weights of one layer (including MLA's latent norms, which live inside the
/// attention block).
double attentionParams(const ModelSpec& m) {
    const double h = m.hidden;
    const double heads = m.heads;
    if (m.attention == AttentionKind::mla) {
        // DeepSeek-V2/V3 multi-head latent attention (DeepSeek-V2 report, sec. 2.1; HF
        // modeling_deepseek.py): queries and keys/values go through low-rank latents.
        const MlaDims& d = m.mla;
        const double qk_head = d.qk_nope_head_dim + d.qk_rope_head_dim;
        double q = 0;
        double latent_norms = d.kv_lora_rank;
        if (d.q_lora_rank > 0) {
            // W_DQ (h -> q_lora), RMSNorm(q_lora), W_UQ (q_lora -> heads * (nope + rope)).
            q = h * d.q_lora_rank + double(d.q_lora_rank) * heads * qk_head;
            latent_norms += d.q_lora_rank;
        } else {
            // DeepSeek-V2-Lite style: a plain query projection.
            q = h * heads * qk_head;
        }
        // W_DKV plus the shared rope key (h -> kv_lora + rope), RMSNorm(kv_lora),
        // W_UKV (kv_lora -> heads * (nope + v)).
        const double kv = h * (d.kv_lora_rank + d.qk_rope_head_dim) +
                          double(d.kv_lora_rank) * heads * (d.qk_nope_head_dim + d.v_head_dim);
        const double o = heads * d.v_head_dim * h;
        return q + kv + o + latent_norms;
    }
    // Grouped-query attention: full-width Q and O, K and V only for the kv_heads groups.
    const double hd = headDim(m);
    const double q = h * heads * hd;
    const double kv = 2.0 * h * m.kv_heads * hd;
    const double o = heads * hd * h;
    return q + kv + o;
}

double swigluParams(double hidden, double ffn) {
    // SwiGLU: gate and up (h -> f) and down (f -> h), no biases.
    return 3.0 * hidden * ffn;
}

/// The dense FFN: SwiGLU's three h x f matrices, or the GPT MLP's two (h -> f, GeLU, f -> h;
/// Radford et al. 2019, Megatron-LM ParallelMLP). Biases (f + h, Megatron's GPT) are not
/// counted, like every other bias in this model: under 1e-3 of the FFN for h >= 1024.
double denseFfnParams(const ModelSpec& m) {
    return m.mlp == MlpKind::gelu ? 2.0 * double(m.hidden) * m.ffn_hidden
                                  : swigluParams(m.hidden, m.ffn_hidden);
}

} // namespace

ParamCounts countParams(const ModelSpec& model) {
    ParamCounts p;
    const double h = model.hidden;
    p.embedding = double(model.vocab) * h;
    p.lm_head = double(model.vocab) * h;
    p.attention_per_layer = attentionParams(model);
    p.norms_per_layer = 2.0 * h; // pre-attention and pre-FFN RMSNorm
    p.dense_ffn_per_layer = denseFfnParams(model);
    if (model.isMoe()) {
        p.router_per_layer = h * model.experts;
        p.routed_expert = swigluParams(h, model.expert_ffn_hidden);
        p.shared_experts_per_layer =
            double(model.shared_experts) * swigluParams(h, model.effectiveSharedFfn());
    }

    const double moe_layers = model.moeLayers();
    const double dense_layers = double(model.layers) - moe_layers;
    const double final_norm = h;
    const double common = p.attention_per_layer + p.norms_per_layer;
    const double dense_layer = common + p.dense_ffn_per_layer;
    const double moe_shared = common + p.router_per_layer + p.shared_experts_per_layer;

    p.routed_experts_total = moe_layers * model.experts * p.routed_expert;
    p.dense_total =
        dense_layers * dense_layer + moe_layers * moe_shared + p.embedding + p.lm_head + final_norm;
    p.total = p.dense_total + p.routed_experts_total;
    // A token touches every non-expert weight (the embedding row lookup counted in full, as
    // DeepSeek's "37B activated" does) and top_k routed experts per MoE layer.
    p.active_per_token = p.dense_total + moe_layers * model.top_k * p.routed_expert;
    return p;
}

LayerFlops forwardFlopsPerToken(const ModelSpec& model, bool moe_layer) {
    const ParamCounts p = countParams(model);
    LayerFlops f;
    // One multiply-add = 2 FLOPs per weight a token passes through.
    f.attention_proj = 2.0 * p.attention_per_layer;
    // Core attention per query token against s keys: QK^T costs 2*s*heads*qk_dim, AV costs
    // 2*s*heads*v_dim; the causal mask skips half of both on average.
    double qk_dim = headDim(model);
    double v_dim = qk_dim;
    if (model.attention == AttentionKind::mla) {
        qk_dim = model.mla.qk_nope_head_dim + model.mla.qk_rope_head_dim;
        v_dim = model.mla.v_head_dim;
    }
    const double s = model.seq_len;
    f.attention_core = 0.5 * (2.0 * s * model.heads * qk_dim + 2.0 * s * model.heads * v_dim);
    if (moe_layer && model.isMoe()) {
        f.router = 2.0 * p.router_per_layer;
        f.routed_experts = 2.0 * model.top_k * p.routed_expert;
        f.shared_experts = 2.0 * p.shared_experts_per_layer;
    } else {
        f.dense_ffn = 2.0 * p.dense_ffn_per_layer;
    }
    return f;
}

double lmHeadForwardFlopsPerToken(const ModelSpec& model) {
    return 2.0 * double(model.vocab) * model.hidden;
}

double selectiveRecomputeFlopsPerToken(const ModelSpec& model) {
    if (model.attention != AttentionKind::mla)
        return 0.0;
    // 2 FLOPs per multiply-add over the up-projection weights: q_lora -> heads*(nope+rope) and
    // kv_lora -> heads*(nope+v). Without a q latent (q_lora_rank 0) only the kv side recomputes.
    const MlaDims& d = model.mla;
    const double heads = model.heads;
    const double q_up = double(d.q_lora_rank) * heads * (d.qk_nope_head_dim + d.qk_rope_head_dim);
    const double kv_up = double(d.kv_lora_rank) * heads * (d.qk_nope_head_dim + d.v_head_dim);
    return 2.0 * (q_up + kv_up);
}

double modelFlopsPerToken(const ModelSpec& model) {
    // Forward + backward (2x forward: gradients w.r.t. inputs and weights) = 3x forward.
    // Recompute is deliberately excluded: MFU counts model FLOPs, not hardware FLOPs.
    const double moe_layers = model.moeLayers();
    const double dense_layers = double(model.layers) - moe_layers;
    const double forward = dense_layers * forwardFlopsPerToken(model, false).total() +
                           moe_layers * forwardFlopsPerToken(model, true).total() +
                           lmHeadForwardFlopsPerToken(model);
    return 3.0 * forward;
}

std::vector<int> chunkFirstLayers(const ModelSpec& model, const LayoutSpec& layout) {
    const int pp = atLeastOne(layout.pp);
    const int vpp = atLeastOne(layout.vpp);
    const int chunks = pp * vpp;
    const int layers = std::max(0, model.layers);
    // Layers per stage: the given first / last counts, the rest spread over the stages between.
    const bool uneven = pp > 1 && (layout.first_stage_layers > 0 || layout.last_stage_layers > 0);
    std::vector<int> per_chunk(static_cast<size_t>(chunks), 0);
    if (!uneven) {
        for (int c = 0; c < chunks; ++c)
            per_chunk[static_cast<size_t>(c)] = layers / chunks + (c < layers % chunks ? 1 : 0);
    } else {
        std::vector<int> per_stage(static_cast<size_t>(pp), 0);
        int rest = layers, middle = pp;
        if (layout.first_stage_layers > 0) {
            per_stage.front() = std::min(layout.first_stage_layers, rest);
            rest -= per_stage.front();
            --middle;
        }
        if (layout.last_stage_layers > 0) {
            per_stage.back() = std::min(layout.last_stage_layers, rest);
            rest -= per_stage.back();
            --middle;
        }
        const int first_middle = layout.first_stage_layers > 0 ? 1 : 0;
        for (int i = 0; i < middle; ++i)
            per_stage[static_cast<size_t>(first_middle + i)] =
                rest / middle + (i < rest % middle ? 1 : 0);
        for (int c = 0; c < chunks; ++c) {
            const int n = per_stage[static_cast<size_t>(c % pp)];
            const int j = c / pp; // the stage's j-th virtual chunk
            per_chunk[static_cast<size_t>(c)] = n / vpp + (j < n % vpp ? 1 : 0);
        }
    }
    std::vector<int> first{0};
    first.reserve(static_cast<size_t>(chunks) + 1);
    for (const int n : per_chunk)
        first.push_back(first.back() + n);
    return first;
}

std::vector<StageLayers> splitLayers(const ModelSpec& model, const LayoutSpec& layout,
                                     bool with_indices) {
    const int pp = atLeastOne(layout.pp);
    const int layers = std::max(0, model.layers);
    const std::vector<int> chunk_first = chunkFirstLayers(model, layout);
    const int chunks = static_cast<int>(chunk_first.size()) - 1;
    // Layers below this index use the dense FFN; a dense model is dense throughout.
    const int dense_below = model.isMoe() ? std::clamp(model.dense_layers, 0, layers) : layers;

    std::vector<StageLayers> stages(pp);
    for (int s = 0; s < pp; ++s) {
        stages[s].stage = s;
        stages[s].has_embedding = (s == 0);
        stages[s].has_lm_head = (s == (chunks - 1) % pp);
    }
    if (with_indices) {
        for (int c = 0; c < chunks; ++c)
            stages[c % pp].layers +=
                chunk_first[static_cast<size_t>(c) + 1] - chunk_first[static_cast<size_t>(c)];
        for (StageLayers& st : stages) {
            st.layer_indices.reserve(static_cast<size_t>(st.layers));
            st.layers = 0;
        }
    }
    for (int c = 0; c < chunks; ++c) {
        const int first = chunk_first[static_cast<size_t>(c)];
        const int n = chunk_first[static_cast<size_t>(c) + 1] - first;
        StageLayers& st = stages[c % pp];
        if (c < pp)
            st.first_layer = first;
        st.layers += n;
        for (int layer = first; with_indices && layer < first + n; ++layer)
            st.layer_indices.push_back(layer);
        const int dense = std::clamp(dense_below - first, 0, n);
        st.dense_layers += dense;
        st.moe_layers += n - dense;
    }
    return stages;
}

int microBatchesPerStep(const Scenario& scenario) {
    const int64_t per_step =
        int64_t(atLeastOne(scenario.layout.dp)) * atLeastOne(scenario.training.micro_batch);
    // Validation bounds the count (limits::kMaxMicroBatchesPerStep); the clamp keeps an
    // unvalidated scenario from wrapping the int.
    return int(std::clamp<int64_t>(scenario.training.global_batch / per_step, 1,
                                   std::numeric_limits<int>::max()));
}

double tokensPerGpuPerMicroBatch(const Scenario& scenario) {
    return double(scenario.training.micro_batch) * scenario.model.seq_len /
           (double(atLeastOne(scenario.layout.cp)) * atLeastOne(scenario.layout.tp));
}

int inFlightMicroBatches(const LayoutSpec& layout, int stage, int micro_batches) {
    const int pp = atLeastOne(layout.pp);
    const int vpp = atLeastOne(layout.vpp);
    const int m = std::max(0, micro_batches);
    stage = std::clamp(stage, 0, pp - 1);
    switch (layout.schedule) {
    case PipelineSchedule::gpipe:
        // All forwards before any backward (Huang et al. 2019).
        return m;
    case PipelineSchedule::interleaved:
        if (vpp > 1) {
            // Megatron-LM forward_backward_pipelining_with_interleaving: warm-up runs
            // (pp - stage - 1) * 2 + (vpp - 1) * pp chunk forwards, then the steady state
            // adds one more forward before the first backward frees one. Each chunk holds
            // 1/vpp of the stage's layers, so divide by vpp (rounded up, pessimistically).
            // On stage 0 this is pp + (pp - 1) / vpp micro-batches, the factor
            // (1 + (pp - 1) / (pp * vpp)) of Korthikanti et al. 2022, sec. 4.2.3.
            const int64_t warmup_plus_one = int64_t(pp - stage - 1) * 2 + int64_t(vpp - 1) * pp + 1;
            const int64_t chunk_mbs = std::min<int64_t>(int64_t(m) * vpp, warmup_plus_one);
            return int((chunk_mbs + vpp - 1) / vpp);
        }
        [[fallthrough]]; // one virtual stage is plain 1F1B
    case PipelineSchedule::one_f_one_b:
        // PipeDream-Flush / Megatron 1F1B (Narayanan et al. 2021): stage i starts
        // pp - i forwards before its first backward.
        return std::min(m, pp - stage);
    case PipelineSchedule::dualpipe:
        // DeepSeek-V3 technical report, Table 2: DualPipe holds PP + 1 micro-batches of
        // activations (vs PP for 1F1B). Applied to every stage, which is exact at the ends
        // and conservative in the middle.
        return std::min(m, pp + 1);
    }
    return m;
}

// Memory per GPU. Sources and choices:
// - Weights at the weight precision; main gradients at the grad precision (Megatron keeps FP32
//   main grads); Adam/AdamW keep an FP32 master copy and two FP32 moments = 12 B/param.
// - Sharding: attention, dense FFN and shared experts over TP; RMSNorm weights and the router
//   are replicated over TP (as in Megatron-Core); embedding (stage 0) and LM head (last stage)
//   are vocab-parallel over TP; routed experts are split over EP * ETP.
// - ZeRO (Megatron distributed optimizer): stage >= 1 divides optimizer states, >= 2 also
//   gradients, 3 also weights, by the number of replicas: DP * CP for dense parameters (the
//   distributed optimizer shards over the data-parallel group including context parallel) and
//   expert-DP for expert parameters.
// - DualPipe keeps two copies of the stage parameters (DeepSeek-V3 report, Table 2), so weights
//   and their gradients double; the optimizer keeps one master copy.
// - Activations per layer per micro-batch follow Korthikanti et al. 2022 (with sequence
//   parallelism, 2-byte activations): attention block 11*s*b*h + layernorms 4*s*b*h = 15*s*b*h,
//   MLP 19*s*b*h for an FFN of 4h, and the 5*a*s^2*b score term (softmax output 2, dropout
//   mask 1, dropout output 2 bytes per score). Flash attention never stores the s x s scores,
//   so that term counts only with training.attention_kernel: unfused, and selective recompute
//   (Korthikanti's: exactly this part) drops it again. The hidden dropout masks (1 byte per
//   element) are counted whatever model.dropout, a conservative 2 sbh units per layer.
//   Korthikanti's parts, in s*b*h units: attention = norm inputs 4, QKV input 2, Q and K 4,
//   V 2, output-projection input 2, dropout mask 1; MLP (4h) = fc1 input 2, activation input
//   8, activation output (fc2 input) 8, dropout mask 1. The MLP part scales with ffn/(4h);
//   an MoE layer stores it for each of its top_k routed experts (each token is processed k
//   times) and for each shared expert. Everything divides by TP (sequence parallel) and CP
//   (sequence sharded), and scales with activation bytes / 2.
//   Selective recompute is Megatron-Core's recompute modules "layernorm", "activation" and,
//   for MLA, "mla_up_proj" (the DeepSeek-V3 choice, report section 3.3.2): the norm outputs
//   (QKV input), the activation outputs and MLA's up-projected Q, K, V are recomputed in
//   backward instead of stored; MLA then stores its latents (q_lora + kv_lora + rope dims).
//   FP8 training caches the inputs of linear layers in FP8 (DeepSeek-V3 section 3.3.3;
//   Transformer Engine does the same): those parts take half the bytes.
//   Without sequence parallelism (training.tp_activations: replicated) the parts TP does not
//   split stay whole on every TP rank: norm inputs, QKV and fc1 inputs, dropout masks (10 sbh
//   in Korthikanti's eq. 2), and a full-recompute layer input is 2*s*b*h.
//   Full recompute stores only each layer's input, 2*s*b*h/TP, plus one layer's full
//   activations while it is recomputed in backward.
// - The last stage also holds FP32 logits for the cross-entropy, 4*s*b*vocab/(TP*CP) bytes, for
//   the micro-batch being processed only.
// - Dispatch buffers: one MoE layer's dispatch (tokens * top_k * h at the dispatch precision)
//   and combine (same count, BF16) in flight. Mean routing; skew adds to it.
// - Workspace: a fixed 3 GB (CUDA context ~0.5 GB, cuBLAS/cuDNN workspaces, NCCL buffers for
//   the TP/EP/DP/PP communicators) plus 5% of HBM for caching-allocator fragmentation.
double tpReplicas(const Scenario& s) {
    return s.training.tp_activations == TpActivations::replicated ? s.layout.tp : 1.0;
}

double optimizerStateBytesPerParam(const TrainingSpec& training) {
    // Megatron-LM's precision-aware optimizer keeps the main (master) parameters in FP32 and
    // the moments at --exp-avg-dtype / --exp-avg-sq-dtype; DeepSeek-V3 tracks both moments in
    // BF16 with FP32 master weights (technical report, section 3.3.3).
    constexpr double kMasterWeightBytes = 4.0;
    return kMasterWeightBytes + 2.0 * bytesPerElement(training.optimizer_states);
}

namespace {
constexpr double kWorkspaceFixedBytes = 3e9;
constexpr double kWorkspaceHbmShare = 0.05;
constexpr double kKorthikantiBytesPerElement = 2.0;

/// Stored activation bytes per layer per token-hidden element (s*b*h units), by block.
struct ActivationUnits {
    double attention = 0;  ///< attention block including its norms
    double mlp_per_4h = 0; ///< one MLP pass with a 4h intermediate
    /// Without sequence parallelism: what the other TP ranks' tokens add per layer to the parts
    /// TP does not split (Korthikanti et al. 2022, eq. 2: sbh(10 + 24/t + 5as/(ht)) against
    /// sbh(34/t + ...) with sequence parallelism; the 10 = norm inputs 4, QKV and fc1 inputs
    /// 2 + 2, dropout masks 1 + 1).
    double replicated = 0;
};

/// `replicas`: tpReplicas (tp without sequence parallelism, else 1).
ActivationUnits activationUnits(const ModelSpec& m, Recompute recompute, bool unfused,
                                double replicas) {
    const bool selective = recompute == Recompute::selective;
    const double linear_input = m.compute_precision == Precision::fp8 ? 0.5 : 1.0;
    ActivationUnits u;
    const double norm_inputs = 4.0;
    const double qkv_input = selective ? 0.0 : 2.0 * linear_input;
    double q_k_v = 4.0 + 2.0;
    if (selective && m.attention == AttentionKind::mla) {
        const double latent_dims = m.mla.q_lora_rank + m.mla.kv_lora_rank + m.mla.qk_rope_head_dim;
        q_k_v = 2.0 * latent_dims / std::max(1, m.hidden);
    }
    const double projection_input = 2.0 * linear_input;
    const double dropout_mask = 1.0; // counted whatever model.dropout: conservative
    // Korthikanti's 5as/h per s*b*h: the scores' softmax output, dropout mask and output.
    const double score_bytes = m.dropout > 0 ? 5.0 : 2.0;
    const double scores = unfused && !selective
                              ? score_bytes * double(m.heads) * m.seq_len / std::max(1, m.hidden)
                              : 0.0;
    u.attention = norm_inputs + qkv_input + q_k_v + projection_input + dropout_mask + scores;
    const double fc1_input = 2.0 * linear_input;
    const double activation_input = 8.0;
    const double activation_output = selective ? 0.0 : 8.0 * linear_input;
    u.mlp_per_4h = fc1_input + activation_input + activation_output + dropout_mask;
    u.replicated = (replicas - 1.0) * (norm_inputs + qkv_input + fc1_input + 2.0 * dropout_mask);
    return u;
}
} // namespace

namespace {
/// The per-GPU parameter split of one stage, with the per-layer figures memoryPerGpu also needs.
struct StageParamSplit {
    StageParams params;
    double dense_layer = 0;          ///< one dense layer's parameters on this GPU
    double moe_layer_non_expert = 0; ///< one MoE layer's non-expert parameters on this GPU
    double expert_shards = 1;        ///< EP * ETP
};

StageParamSplit splitStageParams(const Scenario& scenario, const StageLayers& stage,
                                 const ParamCounts& p) {
    const ModelSpec& m = scenario.model;
    const LayoutSpec& l = scenario.layout;
    const int tp = atLeastOne(l.tp);
    const bool moe = m.isMoe();
    const int moe_layers = moe ? stage.moe_layers : 0;
    const int dense_layers = stage.layers - moe_layers;

    StageParamSplit split;
    split.expert_shards = double(atLeastOne(l.ep)) * atLeastOne(l.etp);
    // Attention, dense FFN and shared experts shard over TP; norms and the router replicate
    // (Megatron-Core keeps the router weight whole on every TP rank).
    const double sharded_per_layer = p.attention_per_layer / tp;
    const double replicated_per_layer = p.norms_per_layer;
    split.dense_layer = sharded_per_layer + replicated_per_layer + p.dense_ffn_per_layer / tp;
    split.moe_layer_non_expert = sharded_per_layer + replicated_per_layer + p.router_per_layer +
                                 p.shared_experts_per_layer / tp;
    double dense_params =
        dense_layers * split.dense_layer + moe_layers * split.moe_layer_non_expert;
    if (stage.has_embedding)
        dense_params += p.embedding / tp;
    if (stage.has_lm_head)
        dense_params += p.lm_head / tp + m.hidden; // + final norm
    split.params.dense_per_gpu = dense_params;
    split.params.expert_per_gpu =
        moe ? double(moe_layers) * m.experts * p.routed_expert / split.expert_shards : 0.0;
    return split;
}
} // namespace

StageParams paramsPerGpu(const Scenario& scenario, const StageLayers& stage) {
    return splitStageParams(scenario, stage, countParams(scenario.model)).params;
}

MemoryBreakdown memoryPerGpu(const Scenario& scenario, const StageLayers& stage) {
    return memoryPerGpu(scenario, stage, countParams(scenario.model));
}

MemoryBreakdown memoryPerGpu(const Scenario& scenario, const StageLayers& stage,
                             const ParamCounts& p) {
    const ModelSpec& m = scenario.model;
    const LayoutSpec& l = scenario.layout;
    const TrainingSpec& t = scenario.training;
    const int tp = atLeastOne(l.tp);
    const int cp = atLeastOne(l.cp);
    const double dense_replicas = double(atLeastOne(l.dp)) * cp;
    // layout.expertDp() with every degree clamped to >= 1 (it divides by ep * etp).
    const double expert_replicas =
        atLeastOne(tp * cp * atLeastOne(l.dp) / (atLeastOne(l.ep) * atLeastOne(l.etp)));
    const bool moe = m.isMoe();
    const int moe_layers = moe ? stage.moe_layers : 0;
    const int dense_layers = stage.layers - moe_layers;

    MemoryBreakdown mem;
    mem.stage = stage.stage;

    const StageParamSplit split = splitStageParams(scenario, stage, p);
    const double dense_layer = split.dense_layer;
    const double moe_layer_non_expert = split.moe_layer_non_expert;
    const double expert_shards = split.expert_shards;
    const double dense_params = split.params.dense_per_gpu;
    const double expert_params = split.params.expert_per_gpu;

    const double copies = l.schedule == PipelineSchedule::dualpipe ? 2.0 : 1.0;
    const int zero = t.zero_stage;
    auto zeroShare = [&](double dense, double expert, int from_stage) {
        if (zero >= from_stage)
            return dense / dense_replicas + expert / expert_replicas;
        return dense + expert;
    };

    const double wbytes = bytesPerElement(m.weight_precision);
    mem.weights_bytes = copies * zeroShare(dense_params, expert_params, 3) * wbytes;
    if (zero >= 3) {
        // ZeRO-3 gathers one layer's full (TP/EP-sharded) weights at a time to compute it.
        const double gathered =
            stage.layers > 0
                ? std::max(dense_layers > 0 ? dense_layer : 0.0,
                           moe_layers > 0
                               ? moe_layer_non_expert + m.experts * p.routed_expert / expert_shards
                               : 0.0)
                : 0.0;
        mem.weights_bytes += gathered * wbytes;
    }
    mem.gradients_bytes =
        copies * zeroShare(dense_params, expert_params, 2) * bytesPerElement(m.grad_precision);
    mem.optimizer_bytes =
        zeroShare(dense_params, expert_params, 1) * optimizerStateBytesPerParam(t);

    // Activations.
    const double act_scale = bytesPerElement(m.activation_precision) / kKorthikantiBytesPerElement;
    const double sbh = double(m.seq_len) * t.micro_batch * m.hidden / (double(tp) * cp);
    const double four_h = 4.0 * m.hidden;
    const bool unfused = t.attention_kernel == AttentionKernel::unfused;
    const double replicas = tpReplicas(scenario);
    const ActivationUnits stored = activationUnits(m, t.recompute, unfused, replicas);
    const ActivationUnits whole = activationUnits(m, Recompute::none, unfused, replicas);
    const auto layer_units = [&](const ActivationUnits& u, bool moe_layer) {
        if (!moe_layer)
            return u.attention + u.replicated + u.mlp_per_4h * m.ffn_hidden / four_h;
        return u.attention + u.replicated + u.mlp_per_4h * m.top_k * m.expert_ffn_hidden / four_h +
               u.mlp_per_4h * m.shared_experts * m.effectiveSharedFfn() / four_h;
    };
    const double dense_layer_units = layer_units(stored, false);
    const double moe_layer_units = moe ? layer_units(stored, true) : 0.0;
    const int in_flight = inFlightMicroBatches(l, stage.stage, microBatchesPerStep(scenario));
    double per_micro_batch = 0;
    if (t.recompute == Recompute::full) {
        const double input_units = 2.0 * replicas; // a layer's input, whole without SP
        per_micro_batch = input_units * sbh * act_scale * stage.layers;
        const double largest = std::max(dense_layers > 0 ? layer_units(whole, false) : 0.0,
                                        moe_layers > 0 ? layer_units(whole, true) : 0.0);
        mem.activations_bytes = largest * sbh * act_scale; // the layer being recomputed
    } else {
        per_micro_batch =
            (dense_layers * dense_layer_units + moe_layers * moe_layer_units) * sbh * act_scale;
    }
    mem.activations_bytes += in_flight * per_micro_batch;
    if (stage.has_lm_head) {
        const double fp32_logits = 4.0 * double(m.seq_len) * t.micro_batch * m.vocab / (tp * cp);
        mem.activations_bytes += fp32_logits;
    }

    if (moe_layers > 0) {
        const double slots = tokensPerGpuPerMicroBatch(scenario) * m.top_k * m.hidden;
        const double combine_bytes = bytesPerElement(Precision::bf16);
        mem.dispatch_buffers_bytes =
            slots * (bytesPerElement(m.dispatch_precision) + combine_bytes);
    }

    mem.hbm_bytes = scenario.cluster.gpu.hbm_gb * 1e9;
    mem.workspace_bytes = kWorkspaceFixedBytes + kWorkspaceHbmShare * mem.hbm_bytes;
    mem.total_bytes = mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes +
                      mem.activations_bytes + mem.dispatch_buffers_bytes + mem.workspace_bytes;
    mem.margin_bytes = mem.hbm_bytes - mem.total_bytes;
    mem.fits = mem.margin_bytes >= 0;
    return mem;
}

} // namespace moe
