#pragma once
// What the model itself costs: parameter counts, FLOPs per token, how layers split over
// pipeline stages, and memory per GPU. Pure functions of the scenario; formulas and sources
// are documented next to each in model_costs.cpp.

#include "moe/scenario.h"

#include <vector>

namespace moe {

struct ParamCounts {
    double embedding = 0;                ///< vocab * hidden
    double lm_head = 0;                  ///< vocab * hidden (untied output projection)
    double attention_per_layer = 0;      ///< GQA: q,k,v,o; MLA: its low-rank projections
    double norms_per_layer = 0;          ///< two RMSNorm weight vectors
    double dense_ffn_per_layer = 0;      ///< SwiGLU: 3 * hidden * ffn_hidden; GeLU: 2 * ...
    double router_per_layer = 0;         ///< hidden * experts
    double routed_expert = 0;            ///< one routed expert: 3 * hidden * expert_ffn_hidden
    double shared_experts_per_layer = 0; ///< shared_experts * 3 * hidden * shared_ffn
    double total = 0;                    ///< every parameter
    double active_per_token = 0;         ///< parameters one token uses (top-k experts only)
    double dense_total = 0;              ///< total minus routed experts (replicated over DP)
    double routed_experts_total = 0;     ///< all routed experts of all MoE layers
};
ParamCounts countParams(const ModelSpec& model);

/// Forward FLOPs per token in one transformer layer, by component. Backward is 2x forward.
struct LayerFlops {
    double attention_proj = 0; ///< 2 * attention parameters
    double attention_core = 0; ///< QK^T and AV, halved for the causal mask
    double dense_ffn = 0;      ///< dense layers only
    double router = 0;         ///< MoE layers only
    double routed_experts = 0; ///< top_k experts per token
    double shared_experts = 0;
    double total() const {
        return attention_proj + attention_core + dense_ffn + router + routed_experts +
               shared_experts;
    }
};
LayerFlops forwardFlopsPerToken(const ModelSpec& model, bool moe_layer);
double lmHeadForwardFlopsPerToken(const ModelSpec& model);
/// Forward FLOPs per token and layer that selective recompute runs again in backward: MLA's
/// up-projections of the query and key/value latents (0 for GQA, whose selective recompute is
/// only memory-bound norms and activations).
double selectiveRecomputeFlopsPerToken(const ModelSpec& model);
/// Model FLOPs per trained token (forward + backward = 3x forward, no recompute), for MFU.
double modelFlopsPerToken(const ModelSpec& model);

/// The layers one pipeline stage holds (across its virtual stages).
struct StageLayers {
    int stage = 0;
    int first_layer = 0; ///< of its first chunk
    int layers = 0;
    int dense_layers = 0;
    int moe_layers = 0;
    bool has_embedding = false;     ///< first stage
    bool has_lm_head = false;       ///< last stage
    std::vector<int> layer_indices; ///< global indices of the layers held, in execution order
};
/// The first layer of each of the pp*vpp chunks, and the layer count as the last entry
/// (chunk c holds [first[c], first[c + 1]) and runs on stage c % pp). Without
/// layout.first_stage_layers / last_stage_layers the layers split over the chunks as evenly as
/// possible, earlier chunks taking the remainder (the last stage also carries the LM head).
/// With them (Megatron-Core's uneven pipeline, transformer_block.py get_num_layers_to_build):
/// the first / last stage hold the given counts, the stages between them share the rest evenly
/// (earlier stages take a remainder validation refuses), and each stage's count splits over
/// its vpp chunks as evenly as possible, earlier chunks taking the remainder.
std::vector<int> chunkFirstLayers(const ModelSpec& model, const LayoutSpec& layout);
/// The layers of each stage, from chunkFirstLayers.
/// Without `with_indices`, layer_indices stay empty (what memoryPerGpu needs: the counts).
std::vector<StageLayers> splitLayers(const ModelSpec& model, const LayoutSpec& layout,
                                     bool with_indices = true);

/// Parameters one GPU of a stage holds: dense ones (attention, norms, dense FFN, shared
/// experts, router, embedding/LM head where present) sharded over TP and replicated over DP,
/// and routed experts sharded over EP*ETP and replicated over expert-DP.
struct StageParams {
    double dense_per_gpu = 0;
    double expert_per_gpu = 0;
};
StageParams paramsPerGpu(const Scenario& scenario, const StageLayers& stage);

/// Optimizer state per parameter of a GPU's optimizer shard: the FP32 master weight and Adam's
/// two moments at training.optimizer_states (4 + 2 x 4 = 12 bytes in FP32, 8 with BF16 moments).
double optimizerStateBytesPerParam(const TrainingSpec& training);

/// Memory one GPU of a pipeline stage needs, by part (bytes).
struct MemoryBreakdown {
    int stage = 0;
    double weights_bytes = 0;
    double gradients_bytes = 0;
    double optimizer_bytes = 0;
    double activations_bytes = 0;
    double dispatch_buffers_bytes = 0;
    double workspace_bytes = 0;
    double total_bytes = 0;
    double hbm_bytes = 0;
    double margin_bytes = 0; ///< hbm - total (negative = does not fit)
    bool fits = true;
};
/// Micro-batches whose activations a stage keeps at its peak, by schedule (1F1B: pp - stage,
/// GPipe: all, interleaved: more, DualPipe: pp + 1 on the ends).
int inFlightMicroBatches(const LayoutSpec& layout, int stage, int micro_batches);
MemoryBreakdown memoryPerGpu(const Scenario& scenario, const StageLayers& stage);
/// The same with the model's countParams already at hand (a caller pricing many stages).
MemoryBreakdown memoryPerGpu(const Scenario& scenario, const StageLayers& stage,
                             const ParamCounts& params);

/// Micro-batches per optimizer step per pipeline replica: global_batch / (dp * micro_batch).
int microBatchesPerStep(const Scenario& scenario);
/// Tokens one GPU feeds into one layer per micro-batch: micro_batch * seq_len / (cp * tp)
/// (sequence parallelism shards tokens over TP).
double tokensPerGpuPerMicroBatch(const Scenario& scenario);

/// Without sequence parallelism (training.tp_activations: replicated) every TP rank runs the
/// norms, residual adds and dropouts on all tp x tokens of its group (Korthikanti et al. 2022,
/// sec. 4.2.2: these parts are "replicated across the tensor parallel group"): tp; else 1.
double tpReplicas(const Scenario& s);

} // namespace moe
