// The simulation's input from the performance model: per lane and layer, the durations of every
// operation (evaluate()'s step cost model at the lane's routing sample), the pipeline split,
// the streams the groups' transfers use and the gradient buckets.

#include "moe/model_costs.h"
#include "moe/timeline.h"

#include <algorithm>

namespace moe {

namespace {

TimelineStream streamOf(const Placement& placement, GroupKind kind) {
    return placement.spanOf(kind).link_class == LinkClass::scale_out ? TimelineStream::scale_out
                                                                     : TimelineStream::scale_up;
}

/// A layer's attention, CP, TP, model ends and dense FFN (or shared expert and router) times.
void setDenseCosts(LayerCosts& k, const LayerPassCosts& t, double comm, bool first_layer,
                   bool last_layer) {
    k.attention_fwd_s = t.attention_fwd_s;
    k.attention_bwd_s = t.attention_bwd_s;
    k.attention_wgrad_s = t.attention_wgrad_s;
    k.cp_fwd_s = comm * t.cp_hop_s * t.cp_hops_fwd;
    k.cp_bwd_s = comm * t.cp_hop_s * t.cp_hops_bwd;
    k.cp_fwd_bytes = t.cp_hop_bytes * t.cp_hops_fwd;
    k.cp_bwd_bytes = t.cp_hop_bytes * t.cp_hops_bwd;
    // Two TP operations per pass and layer, each half of the layer's calls.
    const double tp_call_bytes =
        t.tp_call.scale_up_bytes_per_gpu + t.tp_call.scale_out_bytes_per_gpu;
    k.tp_fwd_s = comm * t.tpOperationFwd_s();
    k.tp_bwd_s = comm * t.tpOperationBwd_s();
    k.tp_fwd_bytes = tp_call_bytes * t.tp_calls_fwd / 2.0;
    k.tp_bwd_bytes = tp_call_bytes * t.tp_calls_bwd / 2.0;
    // The model's ends (embedding, LM head, MTP modules) run as the layer's "head" span.
    k.lm_head_fwd_s = t.endsFwd_s(first_layer, last_layer);
    k.lm_head_bwd_s = t.endsBwd_s(first_layer, last_layer);
    k.lm_head_wgrad_s = t.endsWgrad_s(first_layer, last_layer);
    if (!k.moe) {
        k.ffn_fwd_s = t.dense_ffn_fwd_s;
        k.ffn_bwd_s = t.dense_ffn_bwd_s;
        k.ffn_wgrad_s = t.dense_ffn_wgrad_s;
    } else {
        k.ffn_fwd_s = t.shared_fwd_s;
        k.ffn_bwd_s = t.shared_bwd_s;
        k.ffn_wgrad_s = t.shared_wgrad_s;
        k.router_fwd_s = t.router_fwd_s;
        k.router_bwd_s = t.router_bwd_s;
        k.router_wgrad_s = t.router_wgrad_s;
    }
}

/// The layer's gradient bucket: its shares of the stage's dense and expert gradient sync.
void setGradientBucket(LayerCosts& k, const StageCosts& st, size_t i, double comm) {
    const double dense_share = st.layer_dense_share[i];
    const double expert_share = k.moe ? st.moe_layer_expert_share : 0.0;
    const StageSync& sync = st.sync;
    k.grad_sync_s = comm * (sync.dp_grad_s * dense_share + sync.edp_grad_s * expert_share);
    k.param_gather_s = comm * (sync.dp_gather_s * dense_share + sync.edp_gather_s * expert_share);
    k.sync_bytes = (sync.dp_bytes_up + sync.dp_bytes_out) * dense_share +
                   (sync.edp_bytes_up + sync.edp_bytes_out) * expert_share;
}

/// Prices the MoE layers of each lane at its own routing sample.
class MoeLanePricing {
public:
    MoeLanePricing(const ExpertLoad& load, const MoeCosts& mc, int moe_layers, int groups, int ep,
                   bool uniform_load, double comm)
        : load_(load)
        , mc_(mc)
        , mean_price_(mc.mean)
        , groups_(groups)
        , ep_(ep)
        , uniform_load_(uniform_load)
        , comm_(comm) {
        // Mean token slots per EP rank of each MoE layer (over every sampled group), the
        // reference of the imbalance factors, as in sampleExpertLoad.
        layer_mean_.assign(static_cast<size_t>(moe_layers), 0.0);
        for (int lm = 0; lm < moe_layers; ++lm) {
            double sum = 0;
            const size_t begin = static_cast<size_t>(lm) * groups * ep;
            for (size_t i = begin; i < begin + static_cast<size_t>(groups) * ep; ++i)
                sum += i < load.rank_tokens.size() ? load.rank_tokens[i] : 0.0;
            layer_mean_[static_cast<size_t>(lm)] = sum / (static_cast<double>(groups) * ep);
        }
    }

    /// Expert, dispatch and combine times of MoE layer `lm` on `lane`, and the per-GPU shares
    /// of the lane's pace in `in`.
    void price(LayerCosts& k, int lane, int lm, TimelineInput& in) const {
        // The lane's pace: its hottest EP rank, at evaluate's imbalance definition
        // (max / mean over every group and rank of the layer).
        const double mean = layer_mean_[static_cast<size_t>(lm)];
        double factor = 1.0;
        if (!uniform_load_ && mean > 0) {
            double hottest = 0;
            for (int r = 0; r < ep_; ++r)
                hottest = std::max(hottest, tokens(lm, lane, r));
            factor = hottest / mean;
        }
        const MoeLayerPrice p = mc_.price(factor);
        k.expert_fwd_s = p.expert_fwd_s;
        k.expert_bwd_s = p.expert_bwd_s;
        k.expert_wgrad_s = p.expert_wgrad_s;
        k.dispatch_fwd_s = comm_ * p.dispatch_fwd_s;
        k.combine_fwd_s = comm_ * p.combine_fwd_s;
        k.combine_bwd_s = comm_ * p.combine_bwd_s;
        k.dispatch_bwd_s = comm_ * p.dispatch_bwd_s;
        k.dispatch_fwd_wait_s = comm_ * (p.dispatch_fwd_s - mean_price_.dispatch_fwd_s);
        k.combine_fwd_wait_s = comm_ * (p.combine_fwd_s - mean_price_.combine_fwd_s);
        k.combine_bwd_wait_s = comm_ * (p.combine_bwd_s - mean_price_.combine_bwd_s);
        k.dispatch_bwd_wait_s = comm_ * (p.dispatch_bwd_s - mean_price_.dispatch_bwd_s);
        k.dispatch_bytes =
            mc_.dispatch_call.scale_up_bytes_per_gpu + mc_.dispatch_call.scale_out_bytes_per_gpu;
        k.combine_bytes =
            mc_.combine_call.scale_up_bytes_per_gpu + mc_.combine_call.scale_out_bytes_per_gpu;
        // Per-GPU shares of the lane's pace (forward + backward, one share for both).
        const size_t li = static_cast<size_t>(lane) * in.moe_layers + lm;
        const double hot = p.experts_s();
        if (hot > 0) {
            in.mean_share[li] = static_cast<float>(std::min(1.0, mean_price_.experts_s() / hot));
            if (!uniform_load_ && mean > 0) {
                for (int r = 0; r < ep_; ++r) {
                    const double slots = mc_.mean_slots * tokens(lm, lane, r) / mean;
                    const double own = mc_.expertForward_s(slots) + mc_.expertBackward_s(slots);
                    in.expert_share[li * ep_ + r] =
                        static_cast<float>(std::clamp(own / hot, 0.0, 1.0));
                }
            }
        }
    }

private:
    double tokens(int lm, int group, int rank) const {
        const size_t i = (static_cast<size_t>(lm) * groups_ + group) * ep_ + rank;
        return i < load_.rank_tokens.size() ? load_.rank_tokens[i] : 0.0;
    }

    const ExpertLoad& load_;
    const MoeCosts& mc_;
    MoeLayerPrice mean_price_;
    std::vector<double> layer_mean_;
    int groups_;
    int ep_;
    bool uniform_load_;
    double comm_;
};

} // namespace

TimelineInput timelineInput(const Scenario& s, const Report& report,
                            const TimelineOptions& options) {
    TimelineInput in;
    const LayoutSpec& lay = s.layout;
    const ModelSpec& model = s.model;
    in.schedule = lay.schedule;
    in.pp = std::max(1, lay.pp);
    in.vpp = std::max(1, lay.vpp);
    in.micro_batches = std::max(1, report.micro_batches);
    in.layers = std::max(1, model.layers);
    in.gpus = report.gpus;
    in.gpus_per_node = std::max(1, s.cluster.gpus_per_node);
    in.placement = report.placement;
    if (!report.costs || static_cast<int>(report.costs->stages.size()) != in.pp) {
        in.pp = 0; // reported by checkInput
        return in;
    }
    const StepCostModel& costs = *report.costs;
    in.chunk_first = chunkFirstLayers(model, lay);

    const ExpertLoad& load = report.load;
    const MoeCosts& mc = costs.moe;
    const bool moe =
        model.isMoe() && mc.valid && load.moe_layers > 0 && load.sampled_groups > 0 && load.ep > 0;
    const int groups = moe ? load.sampled_groups : 1;
    const int ep = moe ? load.ep : 1;
    in.lanes = moe && !options.uniform_load ? groups : 1;
    in.ep = ep;
    in.first_moe_layer = moe ? model.dense_layers : 0;
    in.moe_layers = moe ? load.moe_layers : 0;
    const double comm = options.zero_communication ? 0.0 : 1.0;
    const MoeLanePricing moe_pricing(load, mc, in.moe_layers, groups, ep, options.uniform_load,
                                     comm);
    if (moe) {
        in.expert_share.assign(static_cast<size_t>(in.lanes) * in.moe_layers * ep, 1.0f);
        in.mean_share.assign(static_cast<size_t>(in.lanes) * in.moe_layers, 1.0f);
    }

    for (const StageCosts& st : costs.stages)
        in.optimizer_s.push_back(st.sync.optimizer_s);
    in.grad_norm_s = comm * costs.grad_norm_allreduce_s;
    in.dp_overlap = costs.dp_overlap;
    in.combined_1f1b = costs.paired_passes && lay.schedule != PipelineSchedule::dualpipe;
    in.pp_send_s = comm * costs.pp_send_s;
    in.pp_bytes = costs.pp_message_bytes;
    if (report.placement) {
        const Placement& pl = *report.placement;
        in.ep_stream = streamOf(pl, GroupKind::ep);
        in.tp_stream = streamOf(pl, GroupKind::tp);
        in.cp_stream = streamOf(pl, GroupKind::cp);
        in.pp_stream = streamOf(pl, GroupKind::pp);
    }

    in.costs.resize(static_cast<size_t>(in.lanes) * in.layers);
    for (const StageCosts& st : costs.stages) {
        for (size_t i = 0; i < st.layers.layer_indices.size(); ++i) {
            const int l = st.layers.layer_indices[i];
            const int lm = l - in.first_moe_layer;
            for (int lane = 0; lane < in.lanes; ++lane) {
                LayerCosts& k = in.costs[static_cast<size_t>(lane) * in.layers + l];
                k.layer = l;
                k.moe = moe && lm >= 0 && lm < in.moe_layers;
                setDenseCosts(k, costs.layer, comm, l == 0, l == in.layers - 1);
                if (k.moe)
                    moe_pricing.price(k, lane, lm, in);
                setGradientBucket(k, st, i, comm);
            }
        }
    }
    return in;
}

} // namespace moe
