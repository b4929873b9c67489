// DualPipe pairs whose two chunks differ (step_costs.h, chunkPairExposure): the segments of a
// stage's forward and backward chunk, and what a fused pair of two such chunks exposes.

#include "moe/step_costs.h"

#include "step_costs_detail.h"

#include <algorithm>

namespace moe {

// Each segment waits for its transfer, which waits for the transfer stream and for the pass's
// previous compute (a backward transfer for its input gradients only); each compute block waits
// for the compute stream and its transfer. The segments run F1, B1, F2, B2, ... in emission
// order, the longer pass's rest alone. What the compute stream waits for a transfer is exposed,
// charged to that transfer's pass, its end first (chargeExposedTail), also when the stream was
// still busy with transfers queued ahead of it. A transfer after the pair's last compute (the
// forward's last combine) is left to the pair boundary, as in alternatingSegmentsExposure.
ChunkPairExposure chunkPairExposure(const std::vector<PairSegment>& forward,
                                    const std::vector<PairSegment>& backward) {
    ChunkPairExposure exposed;
    double compute_free_s = 0, transfer_free_s = 0;
    double forward_ready_s = 0, backward_ready_s = 0;
    auto run = [&](const PairSegment& seg, double& ready_s, bool is_backward) {
        double arrived_s = ready_s;
        const double transfer_s = seg.all_to_all_s + seg.tp_s;
        if (transfer_s > 0) {
            arrived_s = std::max(transfer_free_s, ready_s) + transfer_s;
            transfer_free_s = arrived_s;
        }
        if (!(seg.compute_s > 0)) { // a last transfer alone: nothing on the compute stream
            ready_s = arrived_s;
            return;
        }
        const double start_s = std::max(compute_free_s, arrived_s);
        const double wait_s = start_s - compute_free_s;
        if (wait_s > 0 && transfer_s > 0) {
            // Beyond the segment's own transfers the wait is for the transfers queued ahead of
            // them on the stream: all-to-all.
            PairExposure& to = is_backward ? exposed.backward : exposed.forward;
            const double own_s = std::min(wait_s, transfer_s);
            step_costs_detail::chargeExposedTail(to, own_s, seg);
            to.all_to_all_s += wait_s - own_s;
        }
        compute_free_s = start_s + seg.compute_s;
        ready_s = is_backward ? start_s + seg.compute_s - seg.weight_grads_s : compute_free_s;
    };
    size_t i = 0, j = 0;
    while (i < forward.size() || j < backward.size()) {
        if (i < forward.size())
            run(forward[i++], forward_ready_s, false);
        if (j < backward.size())
            run(backward[j++], backward_ready_s, true);
    }
    return exposed;
}

namespace {

/// Appends compute to the segment being built, or starts a new segment at a transfer
/// (timeline_builder.cpp, emitPair: a segment runs until a transfer that follows compute);
/// transfers back to back join one segment, in their order.
class SegmentList {
public:
    explicit SegmentList(std::vector<PairSegment>& out)
        : out_(out) {
        out_.clear();
    }
    void compute(double compute_s, double weight_grads_s = 0) {
        open_.compute_s += compute_s;
        open_.weight_grads_s += weight_grads_s;
    }
    void allToAll(double all_to_all_s, double tail_s) {
        startTransfer();
        open_.all_to_all_s += all_to_all_s;
        open_.all_to_all_wait_s += tail_s;
        open_.tp_runs_last = false;
    }
    void tp(double tp_s) {
        if (!(tp_s > 0))
            return;
        startTransfer();
        open_.tp_s += tp_s;
        open_.tp_runs_last = true;
    }
    void close() {
        if (open_.compute_s > 0 || open_.all_to_all_s + open_.tp_s > 0)
            out_.push_back(open_);
        open_ = {};
    }

private:
    void startTransfer() {
        if (open_.compute_s > 0)
            close();
    }
    std::vector<PairSegment>& out_;
    PairSegment open_;
};

} // namespace

// A stage's forward chunk: the embedding, then per layer its attention and, with TP, the TP
// collective after it; a MoE layer's router and shared experts, the dispatch, the experts, the
// combine; a dense layer's FFN; with TP the TP collective after the MLP. The LM head and MTP
// modules last. The all-to-alls at the pace `hot`, their busiest receiver's extra over the mean
// as the tail.
void step_costs_detail::forwardChunkSegments(const StepCostModel& model, const StageCosts& stage,
                                             const MoeLayerPrice& hot,
                                             std::vector<PairSegment>& out) {
    const LayerPassCosts& l = model.layer;
    const MoeCosts& moe = model.moe;
    const StageLayers& layers = stage.layers;
    SegmentList list(out);
    const double tp_s = l.tpOperationFwd_s();
    list.compute(l.endsFwd_s(layers.has_embedding, false));
    for (const int layer : layers.layer_indices) {
        list.compute(l.attention_fwd_s);
        list.tp(tp_s);
        if (!(moe.valid && layer >= model.dense_layers)) {
            list.compute(l.dense_ffn_fwd_s);
            list.tp(tp_s);
            continue;
        }
        list.compute(moe.attention_block_fwd_s - moe.attention_fwd_s);
        list.allToAll(hot.dispatch_fwd_s, hot.dispatch_fwd_s - moe.mean.dispatch_fwd_s);
        list.compute(hot.expert_fwd_s);
        list.allToAll(hot.combine_fwd_s, hot.combine_fwd_s - moe.mean.combine_fwd_s);
        list.tp(tp_s);
    }
    list.compute(l.endsFwd_s(false, layers.has_lm_head));
    list.close();
}

// The backward chunk, layers in reverse: the LM head and MTP modules first, then per layer the
// TP collective's gradient, a MoE layer's combine gradient, experts, dispatch gradient, router
// and shared experts, or a dense layer's FFN; the TP collective's gradient and the attention.
// The embedding last. Each block's weight gradients run after its input gradients.
void step_costs_detail::backwardChunkSegments(const StepCostModel& model, const StageCosts& stage,
                                              const MoeLayerPrice& hot,
                                              std::vector<PairSegment>& out) {
    const LayerPassCosts& l = model.layer;
    const MoeCosts& moe = model.moe;
    const StageLayers& layers = stage.layers;
    SegmentList list(out);
    const double tp_s = l.tpOperationBwd_s();
    list.compute(l.endsBwd_s(false, layers.has_lm_head), l.endsWgrad_s(false, layers.has_lm_head));
    for (auto it = layers.layer_indices.rbegin(); it != layers.layer_indices.rend(); ++it) {
        list.tp(tp_s);
        if (!(moe.valid && *it >= model.dense_layers)) {
            list.compute(l.dense_ffn_bwd_s, l.dense_ffn_wgrad_s);
        } else {
            list.allToAll(hot.combine_bwd_s, hot.combine_bwd_s - moe.mean.combine_bwd_s);
            list.compute(hot.expert_bwd_s, hot.expert_wgrad_s);
            list.allToAll(hot.dispatch_bwd_s, hot.dispatch_bwd_s - moe.mean.dispatch_bwd_s);
            list.compute(moe.attention_block_bwd_s - moe.attention_bwd_s,
                         moe.attention_block_wgrad_s - moe.attention_wgrad_s);
        }
        list.tp(tp_s);
        list.compute(l.attention_bwd_s, l.attention_wgrad_s);
    }
    list.compute(l.endsBwd_s(layers.has_embedding, false),
                 l.endsWgrad_s(layers.has_embedding, false));
    list.close();
}

} // namespace moe
