// The step cost model's assembly (buildStepCostModel): once per scenario and layout, what every
// operation of one micro-batch costs per layer and pass at the mean expert load, each stage's
// compute, traffic and gradient sync, and each pipeline rank's gradient buckets. The formulas it
// uses are in step_costs.cpp and step_costs_communication.cpp.

#include "moe/step_costs.h"

#include "step_costs_detail.h"

#include <algorithm>
#include <cmath>
#include <span>

namespace moe {

using step_costs_detail::optimizerStep_s;
using step_costs_detail::transferExposure;

namespace {

double recomputeFactor(Recompute r) {
    // Forward + backward = 3 forward passes; full recompute runs the forward once more.
    return r == Recompute::full ? 4.0 : 3.0;
}

/// A layer's passes without its TP and CP transfers (addLayerTransfers).
LayerPassCosts layerComputeCosts(const Scenario& s, double tokens, const HardwareRates& r) {
    const ModelSpec& m = s.model;
    const int tp = s.layout.tp;
    const double passes = recomputeFactor(s.training.recompute);
    const bool selective = s.training.recompute == Recompute::selective;
    // Selective recompute re-runs each MLP's activation in backward.
    const double activation_recompute = selective ? 1.0 : 0.0;
    LayerPassCosts c;
    // The projections and element-wise passes cost 2x their forward backward (the transposed
    // GEMMs; the element-wise backward kernels read about twice what the forward ones do). The
    // core's backward is priced on its own (attentionCoreBackward_s); full recompute runs the
    // whole forward again, and selective recompute re-runs an unfused core (Korthikanti et
    // al.'s selective recompute drops exactly its s x s activations, model_costs.cpp).
    const AttentionKernel kernel = s.training.attention_kernel;
    const double replicas = tpReplicas(s);
    const int cp = s.layout.cp;
    const double core_fwd_s = attentionCoreForward_s(m, kernel, cp, tokens, r);
    const double core_bwd_s = attentionCoreBackward_s(m, kernel, cp, tokens, r);
    const double rest_fwd_s =
        attentionForward_s(m, tp, tokens, r) + layerElementwiseForward_s(m, tokens, replicas, r);
    const bool core_recomputed = selective && kernel == AttentionKernel::unfused;
    // Each backward holds its weight gradients at the forward GEMMs' rate; they run at the
    // weight gradients' own rate, so the difference is added (weightGradCost).
    const WeightGradCost attention_wgrad = weightGradCost(
        r, [&](const HardwareRates& x) { return attentionForward_s(m, tp, tokens, x); });
    c.attention_fwd_s = rest_fwd_s + core_fwd_s;
    c.attention_wgrad_s = attention_wgrad.own_rate_s;
    c.attention_bwd_s = rest_fwd_s * (passes - 1.0) + core_bwd_s +
                        core_fwd_s * (passes - 3.0 + (core_recomputed ? 1.0 : 0.0)) +
                        (selective ? selectiveRecompute_s(m, tp, tokens, replicas, r) : 0.0) +
                        attention_wgrad.over_forward_rate_s;
    const WeightGradCost dense_wgrad = weightGradCost(
        r, [&](const HardwareRates& x) { return denseFfnWeightGrads_s(m, tp, tokens, x); });
    c.dense_ffn_fwd_s = denseFfnForward_s(m, tp, tokens, r);
    c.dense_ffn_wgrad_s = dense_wgrad.own_rate_s;
    c.dense_ffn_bwd_s = c.dense_ffn_fwd_s * (passes - 1.0) +
                        activation_recompute * mlpActivation_s(m, tokens, r) +
                        dense_wgrad.over_forward_rate_s;
    const WeightGradCost shared_wgrad = weightGradCost(
        r, [&](const HardwareRates& x) { return sharedExpertsWeightGrads_s(m, tp, tokens, x); });
    c.shared_fwd_s = sharedExpertsForward_s(m, tp, tokens, r);
    c.shared_wgrad_s = shared_wgrad.own_rate_s;
    c.shared_bwd_s =
        c.shared_fwd_s * (passes - 1.0) +
        activation_recompute * swiglu_s(m, tokens, m.shared_experts * m.effectiveSharedFfn(), r) +
        shared_wgrad.over_forward_rate_s;
    c.router_fwd_s = routerForward_s(m, tokens, r);
    c.router_bwd_s = c.router_fwd_s * (passes - 1.0);
    c.router_wgrad_s = c.router_fwd_s; // the gating GEMM is all of the router's forward
    // The LM head is not recomputed: backward is 2x forward.
    c.lm_head_fwd_s = lmHeadForward_s(m, tp, tokens, r);
    c.lm_head_bwd_s = 2.0 * c.lm_head_fwd_s;
    c.lm_head_wgrad_s = c.lm_head_fwd_s;
    c.embedding_fwd_s = embeddingForward_s(m, tokens, r);
    c.embedding_bwd_s = embeddingBackward_s(m, tokens, r);
    c.embedding_wgrad_s = c.embedding_bwd_s;
    return c;
}

/// The TP and CP transfers of a layer's passes, from where `placement` puts their groups.
void addLayerTransfers(LayerPassCosts& c, const Scenario& s, const Placement& placement,
                       double tokens, const HardwareRates& r) {
    const int tp = s.layout.tp;
    const double passes = recomputeFactor(s.training.recompute);
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
}

/// A MoE layer's expert compute and attention blocks; its all-to-all (addMoeTransfers) left at
/// zero, as a one-GPU EP group has it.
MoeCosts moeComputeCosts(const Scenario& s, const LayerPassCosts& layer, const HardwareRates& r) {
    const ModelSpec& m = s.model;
    MoeCosts c;
    if (!m.isMoe())
        return c;
    const double passes = recomputeFactor(s.training.recompute);
    c.valid = true;
    c.gemm = expertGemmShape(s);
    c.rates = r;
    // Each GPU's EP rank gets slots_per_group / ep token slots on average.
    c.mean_slots = tokenSlotsPerGroup(s) / s.layout.ep;
    c.backward_passes = passes - 1.0;
    c.recompute_s_per_slot =
        s.training.recompute == Recompute::selective
            ? swiglu_s(m, 1.0, static_cast<double>(m.expert_ffn_hidden) / s.layout.etp, r)
            : 0.0;
    c.forward_pairs = s.training.recompute == Recompute::full ? 2.0 : 1.0;
    c.scale_up = r.scale_up;
    c.scale_out = r.scale_out;
    c.attention_fwd_s = layer.attention_fwd_s;
    c.attention_bwd_s = layer.attention_bwd_s;
    c.attention_block_fwd_s = layer.attention_fwd_s + layer.router_fwd_s + layer.shared_fwd_s;
    c.attention_block_bwd_s = layer.attention_bwd_s + layer.router_bwd_s + layer.shared_bwd_s;
    c.attention_wgrad_s = layer.attention_wgrad_s;
    c.attention_block_wgrad_s =
        layer.attention_wgrad_s + layer.router_wgrad_s + layer.shared_wgrad_s;
    c.mean = c.price(1.0);
    return c;
}

/// A MoE layer's all-to-all over the EP group `placement` makes, and the TP transfers around
/// its blocks (`layer`'s, with addLayerTransfers); the mean price with them.
void addMoeTransfers(MoeCosts& c, const Scenario& s, const Placement& placement, double tokens,
                     const LayerPassCosts& layer) {
    if (!c.valid)
        return;
    c.ep_group = shapeOf(placement.spanOf(GroupKind::ep));
    c.bytes = allToAllBytes(s, c.ep_group, tokens);
    c.dispatch_call = c.dispatch(1.0);
    c.combine_call = c.combine(1.0);
    c.tp_fwd_s = layer.tpOperationFwd_s();
    c.tp_bwd_s = layer.tpOperationBwd_s();
    c.mean = c.price(1.0);
}

/// DeepSeek-V3 report sec. 2.2: each of the model.mtp_layers multi-token-prediction modules
/// embeds the next token (the shared embedding), projects [RMSNorm(h); RMSNorm(Emb)] from 2h to
/// h (M_k), runs one transformer block and the shared output head, on the last stage (where the
/// main model's last hidden states are). The block is priced like the model's last layer (a MoE
/// layer in DeepSeek-V3, whose released weights hold the MTP module as a MoE layer) at the mean
/// expert load, compute only: its all-to-all and the norms are left out. Backward: the block's
/// backward under the run's recompute, 2x forward for the projection and head (not
/// recomputed), the embedding's scatter-add.
void setMtpCosts(const Scenario& s, StepCostModel& model) {
    const ModelSpec& m = s.model;
    LayerPassCosts& l = model.layer;
    if (m.mtp_layers <= 0)
        return;
    const double tokens = model.tokens;
    const double projection_s = mtpProjectionForward_s(m, s.layout.tp, tokens, model.rates);
    const bool moe_block = model.moe.valid && m.isMoe() && m.layers - 1 >= m.dense_layers;
    double block_fwd_s = l.attention_fwd_s, block_bwd_s = l.attention_bwd_s;
    double block_wgrad_s = l.attention_wgrad_s;
    if (moe_block) {
        const MoeLayerPrice& e = model.moe.mean;
        block_fwd_s += l.router_fwd_s + l.shared_fwd_s + e.expert_fwd_s;
        block_bwd_s += l.router_bwd_s + l.shared_bwd_s + e.expert_bwd_s;
        block_wgrad_s += l.router_wgrad_s + l.shared_wgrad_s + e.expert_wgrad_s;
    } else {
        block_fwd_s += l.dense_ffn_fwd_s;
        block_bwd_s += l.dense_ffn_bwd_s;
        block_wgrad_s += l.dense_ffn_wgrad_s;
    }
    l.mtp_fwd_s = m.mtp_layers * (l.embedding_fwd_s + projection_s + block_fwd_s + l.lm_head_fwd_s);
    l.mtp_bwd_s =
        m.mtp_layers * (l.embedding_bwd_s + 2.0 * projection_s + block_bwd_s + l.lm_head_bwd_s);
    l.mtp_wgrad_s =
        m.mtp_layers * (l.embedding_wgrad_s + projection_s + block_wgrad_s + l.lm_head_wgrad_s);
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

    // The parameters of this GPU's optimizer shard.
    const double shard_params =
        sharded ? params.dense_per_gpu / std::max(1, s.layout.dp * s.layout.cp) +
                      params.expert_per_gpu / std::max(1, s.layout.expertDp())
                : params.dense_per_gpu + params.expert_per_gpu;
    sync.optimizer_s = optimizerStep_s(s, shard_params, r);
    return sync;
}

/// A stage's forward and weight-gradient shares of its compute per micro-batch, from its
/// operations: forward = F / (F + B), weight = W / (F + B) with W the dW GEMMs of the backward.
PassShares stagePassShares(const LayerPassCosts& l, const MoeCosts& moe, const StageLayers& layers,
                           double moe_layers) {
    const double n = layers.layers, dense = layers.dense_layers;
    const bool first = layers.has_embedding, last = layers.has_lm_head;
    double fwd = l.attention_fwd_s * n + l.dense_ffn_fwd_s * dense +
                 (l.shared_fwd_s + l.router_fwd_s) * moe_layers + l.endsFwd_s(first, last);
    double bwd = l.attention_bwd_s * n + l.dense_ffn_bwd_s * dense +
                 (l.shared_bwd_s + l.router_bwd_s) * moe_layers + l.endsBwd_s(first, last);
    double wgrad = l.attention_wgrad_s * n + l.dense_ffn_wgrad_s * dense +
                   (l.shared_wgrad_s + l.router_wgrad_s) * moe_layers + l.endsWgrad_s(first, last);
    if (moe.valid) {
        fwd += moe.mean.expert_fwd_s * moe_layers;
        bwd += moe.mean.expert_bwd_s * moe_layers;
        wgrad += moe.mean.expert_wgrad_s * moe_layers;
    }
    const double total = fwd + bwd;
    if (!(total > 0))
        return {};
    return {fwd / total, wgrad / total};
}

StageCosts stageCosts(const Scenario& s, const Placement& placement, const StepCostModel& model,
                      const ParamCounts& pc, StageLayers&& stage_layers) {
    const LayerPassCosts& l = model.layer;
    const MoeCosts& moe = model.moe;
    StageCosts c;
    c.layers = std::move(stage_layers);
    const StageLayers& layers = c.layers;
    c.moe_layer_indices.reserve(static_cast<size_t>(layers.moe_layers));
    for (const int layer : layers.layer_indices)
        if (s.model.isMoe() && layer >= s.model.dense_layers)
            c.moe_layer_indices.push_back(layer - s.model.dense_layers);
    const double moe_layers = static_cast<double>(c.moe_layer_indices.size());

    StepBreakdown& b = c.mean;
    b = stageMeanCompute(l, moe, layers, moe_layers);
    c.compute_s = computeItems_s(b);
    c.shares = stagePassShares(l, moe, layers, moe_layers);

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

    if (model.paired_passes) {
        const int m = static_cast<int>(model.micro_batches);
        c.unpaired =
            model.schedule == PipelineSchedule::dualpipe
                ? std::min(model.micro_batches, dualPipeUnpairedPasses(s.layout.pp, layers.stage))
                : combinedUnpairedPasses(s.layout.pp, s.layout.vpp, m, layers.stage);
        if (l.tp_calls_fwd > 0 && layers.dense_layers > 0) {
            // A dense layer with TP > 1 has two segments per pass (F attention | B FFN | F FFN
            // | B attention beside B TP | F TP | B TP | F TP); without TP none, its compute
            // hides nothing.
            const double tp_fwd = l.tpOperationFwd_s(), tp_bwd = l.tpOperationBwd_s();
            const PairSegment forward[] = {{0, tp_fwd, true, l.attention_fwd_s},
                                           {0, tp_fwd, true, l.dense_ffn_fwd_s}};
            const PairSegment backward[] = {
                {0, tp_bwd, true, l.dense_ffn_bwd_s, l.dense_ffn_wgrad_s},
                {0, tp_bwd, true, l.attention_bwd_s, l.attention_wgrad_s}};
            c.dense_pair_tp_s =
                alternatingSegmentsExposure(forward, backward, 2).tp_s * layers.dense_layers;
        }
    }
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
    for (const int layer : layers.layer_indices)
        c.layer_dense_share.push_back(stage_dense > 0 ? dense_params(layer) / stage_dense : 0.0);
    c.moe_layer_expert_share = moe_layers > 0 ? 1.0 / moe_layers : 0.0;
    return c;
}

/// A stage's exposed transfers per micro-batch at the mean load, in its mean breakdown. After
/// every stage exists: a DualPipe pair's exposure depends on the rank's other stage.
void exposeMeanTransfers(const StepCostModel& model, StageCosts& c) {
    StepBreakdown& b = c.mean;
    const StageTraffic& t = c.traffic;
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
    p.forward_s += l.endsFwd_s(layer == 0, layer == s.model.layers - 1);
    p.backward_s += l.endsBwd_s(layer == 0, layer == s.model.layers - 1);
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
            const bool moe_layer = s.model.isMoe() && layer >= s.model.dense_layers;
            const double dense = stage.layer_dense_share[i];
            const double expert = moe_layer ? stage.moe_layer_expert_share : 0.0;
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

StepBreakdown stageMeanCompute(const LayerPassCosts& l, const MoeCosts& moe,
                               const StageLayers& layers, double moe_layers) {
    // Compute per micro-batch: every layer's attention, the dense layers' FFN, the MoE layers'
    // router, shared experts (counted with the dense FFN work: they run densely on every token)
    // and routed experts at the mean load, and the LM head where present.
    StepBreakdown b;
    b[StepItem::attention] = (l.attention_fwd_s + l.attention_bwd_s) * layers.layers;
    b[StepItem::dense_ffn] = (l.dense_ffn_fwd_s + l.dense_ffn_bwd_s) * layers.dense_layers +
                             (l.shared_fwd_s + l.shared_bwd_s) * moe_layers;
    b[StepItem::dense_ffn] += l.endsFwd_s(layers.has_embedding, layers.has_lm_head) +
                              l.endsBwd_s(layers.has_embedding, layers.has_lm_head);
    b[StepItem::router] = (l.router_fwd_s + l.router_bwd_s) * moe_layers;
    if (moe.valid && moe_layers > 0)
        b[StepItem::expert_compute] = moe_layers * moe.mean.experts_s();
    return b;
}

double stepComputeFloor_s(const std::vector<double>& stage_compute_s, double micro_batches,
                          bool dualpipe) {
    // priceStep: step = m x the pacing rank's micro-batch + bubble + exposed sends, gradient
    // sync and optimizer, every term >= 0. The pacing rank's micro-batch is its slowest stage
    // (DualPipe: the mean of the rank's two stages r and pp-1-r, the slowest pair), and a
    // stage's micro-batch (priceStage) is its compute at the mean load plus the imbalance
    // extra and exposed transfers, both >= 0. So m x the busiest rank's mean-load compute
    // bounds the step from below, whatever the expert load, placement or transfers.
    const size_t n = stage_compute_s.size();
    double busiest_s = 0;
    for (size_t i = 0; i < n; ++i)
        busiest_s =
            std::max(busiest_s, dualpipe ? (stage_compute_s[i] + stage_compute_s[n - 1 - i]) / 2
                                         : stage_compute_s[i]);
    return micro_batches * busiest_s;
}

double stepComputeFloor_s(const StepCostModel& model) {
    std::vector<double> compute_s;
    compute_s.reserve(model.stages.size());
    for (const StageCosts& stage : model.stages)
        compute_s.push_back(stage.compute_s);
    return stepComputeFloor_s(compute_s, model.micro_batches,
                              model.layout.schedule == PipelineSchedule::dualpipe);
}

StepCostModel buildComputeCostModel(const Scenario& s) {
    StepCostModel model;
    const LayoutSpec& lay = s.layout;
    model.schedule = lay.schedule;
    model.paired_passes = pairsPasses(s);
    model.layout = lay;
    model.micro_batches = microBatchesPerStep(s);
    model.tokens = tokensPerGpuPerMicroBatch(s);
    model.rates = hardwareRates(s);
    model.dp_overlap = s.training.dp_overlap;
    model.layer = layerComputeCosts(s, model.tokens, model.rates);
    model.moe = moeComputeCosts(s, model.layer, model.rates);
    // The MTP block is priced at compute only (setMtpCosts): transfers do not change it.
    setMtpCosts(s, model);
    return model;
}

StepCostModel buildStepCostModel(const Scenario& s, const Placement& placement) {
    StepCostModel model = buildComputeCostModel(s);
    const LayoutSpec& lay = s.layout;
    model.grad_norm_allreduce_s = gradNormAllReduce_s(s, model.rates);
    addLayerTransfers(model.layer, s, placement, model.tokens, model.rates);
    addMoeTransfers(model.moe, s, placement, model.tokens, model.layer);
    const ParamCounts params = countParams(s.model);
    std::vector<StageLayers> stage_layers = splitLayers(s.model, lay);
    model.stages.reserve(stage_layers.size());
    model.dense_layers = s.model.isMoe() ? s.model.dense_layers : s.model.layers;
    model.chunk_pairs = lay.schedule == PipelineSchedule::dualpipe && lay.pp > 1;
    for (StageLayers& layers : stage_layers)
        model.stages.push_back(stageCosts(s, placement, model, params, std::move(layers)));
    for (StageCosts& stage : model.stages)
        exposeMeanTransfers(model, stage);

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
    model.ranks.reserve(model.stages.size());
    for (int rank = 0; rank < static_cast<int>(model.stages.size()); ++rank)
        model.ranks.push_back(rankSync(s, model, rank));
    return model;
}

} // namespace moe
