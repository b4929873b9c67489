// The step's operations, per row (pipeline stage and lane): forward and backward passes in the
// stage's schedule order, pipeline sends and receives, gradient buckets and the optimizer.
//
// Gradient sync: each layer is one bucket (its share of the stage's parameters). Its
// reduce-scatter (all-reduce with ZeRO-0) starts when the last backward of the layer is done on
// every lane of the stage (the DP group spans the lanes); the stage's optimizer runs after the
// last bucket. The weights' all-gather (ZeRO >= 1) runs at the start of the step and each
// layer's first forward waits for its bucket - the steady state of Megatron's overlapped
// parameter gather, where the all-gather hides under the next step's forward.

#include "timeline_builder.h"
#include "timeline_schedules.h"

#include <algorithm>
#include <deque>
#include <limits>

namespace moe::timeline_detail {

namespace {

/// One operation of a pass before it is placed on a stream.
struct Pending {
    double dur = 0;
    double load = 0;
    double bytes = 0;
    int layer = -1;
    TimelineStream stream = TimelineStream::compute;
    SpanKind kind = SpanKind::attention;
    bool concurrent = false;               ///< runs alongside the previous operation (same inputs)
    bool off_chain = false;                ///< waits for the chain but nothing in it waits for this
    SpanKind weights_of = SpanKind::count; ///< weight_grad: the compute they belong to
};

/// The running end of a chain of operations (a pass): what the next operation waits for.
struct Chain {
    Id tails[2] = {kNone, kNone};
    int ntails = 0;
    Id prev[3] = {kNone, kNone, kNone}; ///< inputs of the last operation (for concurrent ones)
    int nprev = 0;
    void reset(Id entry) {
        ntails = entry == kNone ? 0 : 1;
        tails[0] = entry;
        nprev = 0;
    }
};

/// A transfer that the next compute operation of its pass waits for. An operation that takes
/// no time is never emitted (emitOne), so it is neither a transfer nor compute: a TP=1 layer's
/// zero-length TP collectives must not cut a DualPipe pair into extra segments.
bool isTransfer(const Pending& p) {
    return p.dur > 0 && p.stream != TimelineStream::compute && !p.concurrent;
}

class Builder {
public:
    Builder(const TimelineInput& in, Engine& engine)
        : in_(in)
        , e_(engine) {
        chunks_ = in.pp * in.vpp;
        dual_ = in.schedule == PipelineSchedule::dualpipe;
        dirs_ = dual_ ? 2 : 1;
        mdir_ = dual_ ? in.micro_batches / 2 : in.micro_batches;
        const size_t table = static_cast<size_t>(in.lanes) * dirs_ * chunks_ * mdir_;
        entry_f_.assign(table, kNoSlot);
        entry_b_.assign(table, kNoSlot);
        send_f_.assign(table, kNone);
        send_b_.assign(table, kNone);
        exit_f_.assign(table, kNone);
        count_f_.assign(table, 0);
        count_b_.assign(table, 0);
        last_grad_.assign(static_cast<size_t>(in.pp) * in.lanes * in.layers, kNone);
    }

    std::string build() {
        for (int rank = 0; rank < in_.pp; ++rank) {
            std::string error;
            const std::vector<Action> actions = stageActions(in_, rank, error);
            if (!error.empty())
                return error;
            for (int lane = 0; lane < in_.lanes; ++lane) {
                error = emitRow(rank, lane, actions);
                if (!error.empty())
                    return error;
            }
        }
        return link();
    }

private:
    static constexpr size_t kNoSlot = std::numeric_limits<size_t>::max();

    size_t index(int lane, int dir, int chunk, int mb) const {
        return ((static_cast<size_t>(lane) * dirs_ + dir) * chunks_ + chunk) * mdir_ + mb;
    }
    const LayerCosts& cost(int lane, int layer) const {
        return in_.costs[static_cast<size_t>(lane) * in_.layers + layer];
    }
    int rankOfChunk(int dir, int chunk) const {
        if (dual_)
            return dir == 0 ? chunk : in_.pp - 1 - chunk;
        return chunk % in_.pp;
    }
    int label(int dir, int mb) const { return dir * mdir_ + mb; }

    // ---- passes ------------------------------------------------------------------------------

    void forwardOps(int lane, int chunk, std::vector<Pending>& out) const {
        const int first = in_.chunk_first[static_cast<size_t>(chunk)];
        const int last = in_.chunk_first[static_cast<size_t>(chunk) + 1];
        for (int l = first; l < last; ++l) {
            const LayerCosts& k = cost(lane, l);
            out.push_back(
                {k.attention_fwd_s, 0, 0, l, TimelineStream::compute, SpanKind::attention, false});
            out.push_back({k.cp_fwd_s, 0, k.cp_fwd_bytes, l, in_.cp_stream, SpanKind::cp, true});
            out.push_back({k.tp_fwd_s, 0, k.tp_fwd_bytes, l, in_.tp_stream, SpanKind::tp, false});
            if (k.moe) {
                out.push_back(
                    {k.router_fwd_s, 0, 0, l, TimelineStream::compute, SpanKind::router, false});
                out.push_back(
                    {k.ffn_fwd_s, 0, 0, l, TimelineStream::compute, SpanKind::dense_ffn, false});
                out.push_back({k.dispatch_fwd_s, k.dispatch_fwd_wait_s, k.dispatch_bytes, l,
                               in_.ep_stream, SpanKind::dispatch, false});
                out.push_back({k.expert_fwd_s, k.expert_fwd_s, 0, l, TimelineStream::compute,
                               SpanKind::expert, false});
                out.push_back({k.combine_fwd_s, k.combine_fwd_wait_s, k.combine_bytes, l,
                               in_.ep_stream, SpanKind::combine, false});
            } else {
                out.push_back(
                    {k.ffn_fwd_s, 0, 0, l, TimelineStream::compute, SpanKind::dense_ffn, false});
            }
            out.push_back({k.tp_fwd_s, 0, k.tp_fwd_bytes, l, in_.tp_stream, SpanKind::tp, false});
            if (k.lm_head_fwd_s > 0)
                out.push_back(
                    {k.lm_head_fwd_s, 0, 0, l, TimelineStream::compute, SpanKind::lm_head, false});
        }
    }

    /// Where a backward pass's weight-gradient GEMMs (each compute operation's *_wgrad_s) go:
    /// inside each operation (plain backward), deferred to a later W
    /// step (DualPipe's zero bubble), or split off right after each operation, so the transfer
    /// of the input gradient starts before them (DualPipe's overlapped pairs, DeepSeek-V3
    /// report figure 4).
    enum class WeightGrads { inline_, deferred, split };

    void backwardOps(int lane, int chunk, WeightGrads w, std::vector<Pending>& out) const {
        const int first = in_.chunk_first[static_cast<size_t>(chunk)];
        const int last = in_.chunk_first[static_cast<size_t>(chunk) + 1];
        auto compute = [&](double bwd, double weights, bool load, int l, SpanKind kind) {
            const double wgrad = w == WeightGrads::inline_ ? 0.0 : std::clamp(weights, 0.0, bwd);
            const double input = bwd - wgrad;
            out.push_back(
                {input, load ? input : 0.0, 0, l, TimelineStream::compute, kind, false, false});
            if (w == WeightGrads::split)
                out.push_back({wgrad, load ? wgrad : 0.0, 0, l, TimelineStream::compute,
                               SpanKind::weight_grad, false, true, kind});
        };
        for (int l = last - 1; l >= first; --l) {
            const LayerCosts& k = cost(lane, l);
            if (k.lm_head_bwd_s > 0)
                compute(k.lm_head_bwd_s, k.lm_head_wgrad_s, false, l, SpanKind::lm_head);
            out.push_back({k.tp_bwd_s, 0, k.tp_bwd_bytes, l, in_.tp_stream, SpanKind::tp, false});
            if (k.moe) {
                out.push_back({k.combine_bwd_s, k.combine_bwd_wait_s, k.combine_bytes, l,
                               in_.ep_stream, SpanKind::combine, false});
                compute(k.expert_bwd_s, k.expert_wgrad_s, true, l, SpanKind::expert);
                out.push_back({k.dispatch_bwd_s, k.dispatch_bwd_wait_s, k.combine_bytes, l,
                               in_.ep_stream, SpanKind::dispatch, false});
                compute(k.ffn_bwd_s, k.ffn_wgrad_s, false, l, SpanKind::dense_ffn);
                compute(k.router_bwd_s, k.router_wgrad_s, false, l, SpanKind::router);
            } else {
                compute(k.ffn_bwd_s, k.ffn_wgrad_s, false, l, SpanKind::dense_ffn);
            }
            out.push_back({k.tp_bwd_s, 0, k.tp_bwd_bytes, l, in_.tp_stream, SpanKind::tp, false});
            compute(k.attention_bwd_s, k.attention_wgrad_s, false, l, SpanKind::attention);
            out.push_back({k.cp_bwd_s, 0, k.cp_bwd_bytes, l, in_.cp_stream, SpanKind::cp, true});
        }
    }

    /// The weight-gradient GEMMs a zero-bubble backward deferred, per layer and per compute
    /// operation (so the step's breakdown charges each to its own item).
    void weightOps(int lane, int chunk, std::vector<Pending>& out) const {
        const int first = in_.chunk_first[static_cast<size_t>(chunk)];
        const int last = in_.chunk_first[static_cast<size_t>(chunk) + 1];
        auto weights = [&](double wgrad, double bwd, bool load, int l, SpanKind of) {
            const double w = std::clamp(wgrad, 0.0, bwd);
            if (w > 0)
                out.push_back({w, load ? w : 0.0, 0, l, TimelineStream::compute,
                               SpanKind::weight_grad, false, false, of});
        };
        for (int l = last - 1; l >= first; --l) {
            const LayerCosts& k = cost(lane, l);
            weights(k.lm_head_wgrad_s, k.lm_head_bwd_s, false, l, SpanKind::lm_head);
            if (k.moe)
                weights(k.expert_wgrad_s, k.expert_bwd_s, true, l, SpanKind::expert);
            weights(k.ffn_wgrad_s, k.ffn_bwd_s, false, l, SpanKind::dense_ffn);
            weights(k.router_wgrad_s, k.router_bwd_s, false, l, SpanKind::router);
            weights(k.attention_wgrad_s, k.attention_bwd_s, false, l, SpanKind::attention);
        }
    }

    enum class Pass { forward, backward, backward_deferred, backward_split, weights };
    static constexpr size_t kPasses = 5;

    /// A pass's operations: the same for every micro-batch of a row, so made once per row.
    const std::vector<Pending>& passOps(Pass pass, int lane, int chunk) {
        const size_t i = static_cast<size_t>(chunk) * kPasses + static_cast<size_t>(pass);
        std::vector<Pending>& out = pass_ops_[i];
        if (pass_made_[i])
            return out;
        pass_made_[i] = 1;
        out.clear();
        switch (pass) {
        case Pass::forward:
            forwardOps(lane, chunk, out);
            break;
        case Pass::backward:
            backwardOps(lane, chunk, WeightGrads::inline_, out);
            break;
        case Pass::backward_deferred:
            backwardOps(lane, chunk, WeightGrads::deferred, out);
            break;
        case Pass::backward_split:
            backwardOps(lane, chunk, WeightGrads::split, out);
            break;
        case Pass::weights:
            weightOps(lane, chunk, out);
            break;
        }
        return out;
    }

    // ---- emission ----------------------------------------------------------------------------

    void emitOne(int row, Chain& ch, const Pending& p, int mb, bool backward) {
        if (!(p.dur > 0)) {
            if (!p.concurrent && !p.off_chain) {
                ch.nprev = ch.ntails;
                std::copy(ch.tails, ch.tails + ch.ntails, ch.prev);
            }
            return;
        }
        Id deps[4] = {kNone, kNone, kNone, kNone};
        int n = 0;
        if (p.concurrent) {
            for (int i = 0; i < ch.nprev; ++i)
                deps[n++] = ch.prev[i];
        } else {
            for (int i = 0; i < ch.ntails; ++i)
                deps[n++] = ch.tails[i];
            if (!backward && p.kind == SpanKind::attention) {
                Id& gather = gather_[static_cast<size_t>(p.layer)];
                if (gather != kNone) {
                    deps[n++] = gather;
                    gather = kNone;
                }
            }
        }
        const Id id = e_.add(row, p.stream, p.kind, backward, p.layer, mb, p.dur, p.load, p.bytes,
                             deps, n, p.weights_of);
        if (p.off_chain) {
            // nothing
        } else if (p.concurrent) {
            if (ch.ntails < 2) {
                ch.tails[ch.ntails++] = id;
            } else {
                const Id join = e_.addVirtual(ch.tails, ch.ntails);
                ch.tails[0] = join;
                ch.tails[1] = id;
                ch.ntails = 2;
            }
        } else {
            ch.nprev = std::min(n, 3);
            std::copy(deps, deps + ch.nprev, ch.prev);
            ch.tails[0] = id;
            ch.ntails = 1;
        }
        if (p.stream == TimelineStream::compute) {
            last_compute_ = id;
            if (backward)
                row_grad_[static_cast<size_t>(p.layer)] = id;
        }
    }

    void emitChain(int row, Chain& ch, const std::vector<Pending>& ops, int mb, bool backward) {
        for (const Pending& p : ops)
            emitOne(row, ch, p, mb, backward);
    }

    /// DualPipe's overlapped pair (DeepSeek-V3 report, figure 4): the passes are cut into
    /// segments - the transfers a block of compute needs, then that block - and the segments
    /// alternate between the passes, so the streams run
    ///     compute:  F attention  | B experts  | F experts  | B attention | ...
    ///     transfer: B combine    | F dispatch | B dispatch | F combine   | ...
    /// and each all-to-all hides under the other pass's compute when it is not longer.
    void emitPair(int row, Chain& cf, const std::vector<Pending>& f, int mbf, Chain& cb,
                  const std::vector<Pending>& b, int mbb) {
        auto segment = [&](const std::vector<Pending>& ops, size_t& i, Chain& ch, int mb,
                           bool backward) {
            if (i >= ops.size())
                return;
            bool computed = false;
            while (i < ops.size() && !(computed && isTransfer(ops[i]))) {
                computed = computed || (ops[i].dur > 0 && !isTransfer(ops[i]));
                emitOne(row, ch, ops[i++], mb, backward);
            }
        };
        size_t i = 0, j = 0;
        while (i < f.size() || j < b.size()) {
            segment(f, i, cf, mbf, false);
            segment(b, j, cb, mbb, true);
        }
    }

    /// Makes the chain's end also wait for `id`.
    void waitFor(Chain& ch, Id id) {
        if (id == kNone)
            return;
        for (int i = 0; i < ch.ntails; ++i)
            if (ch.tails[i] == id)
                return;
        if (ch.ntails == 2) {
            ch.tails[0] = e_.addVirtual(ch.tails, 2);
            ch.ntails = 1;
        }
        ch.tails[ch.ntails++] = id;
    }

    Id exitOf(const Chain& ch) {
        if (ch.ntails == 0)
            return kNone;
        if (ch.ntails == 1)
            return ch.tails[0];
        return e_.addVirtual(ch.tails, ch.ntails);
    }

    Id sendFrom(int row, const Chain& ch, int mb, bool backward) {
        if (!(in_.pp_send_s > 0))
            return exitOf(ch);
        return e_.add(row, in_.pp_stream, SpanKind::pp_send, backward, -1, mb, in_.pp_send_s, 0,
                      in_.pp_bytes, ch.tails, ch.ntails);
    }

    Id entry(std::vector<size_t>& slots, size_t idx) {
        size_t slot = kNoSlot;
        const Id id = e_.addVirtual(nullptr, 0, &slot);
        slots[idx] = slot;
        return id;
    }

    void startForward(int lane, int dir, int chunk, int mb, Chain& ch) {
        const size_t idx = index(lane, dir, chunk, mb);
        ++count_f_[idx];
        ch.reset(chunk > 0 ? entry(entry_f_, idx) : kNone);
    }
    void finishForward(int row, int lane, int dir, int chunk, int mb, const Chain& ch) {
        const size_t idx = index(lane, dir, chunk, mb);
        if (chunk + 1 < chunks_)
            send_f_[idx] = sendFrom(row, ch, label(dir, mb), false);
        else
            exit_f_[idx] = exitOf(ch);
    }
    void startBackward(int lane, int dir, int chunk, int mb, Chain& ch) {
        const size_t idx = index(lane, dir, chunk, mb);
        ++count_b_[idx];
        ch.reset(entry(entry_b_, idx));
    }
    void finishBackward(int row, int lane, int dir, int chunk, int mb, const Chain& ch) {
        if (chunk > 0)
            send_b_[index(lane, dir, chunk, mb)] = sendFrom(row, ch, label(dir, mb), true);
    }

    /// A bucket's bytes, split between its reduce-scatter and all-gather by their times.
    static double syncBytes(const LayerCosts& k, double part_s) {
        const double total = k.grad_sync_s + k.param_gather_s;
        return total > 0 ? k.sync_bytes * part_s / total : 0.0;
    }

    /// A forward pass whose output leaves with the next action's transfers (Action::late_send).
    struct LateSend {
        Chain chain;
        int dir, chunk, mb;
    };

    std::string emitRow(int rank, int lane, const std::vector<Action>& actions) {
        const int row = rank * in_.lanes + lane;
        gather_.assign(static_cast<size_t>(in_.layers), kNone);
        pass_ops_.resize(static_cast<size_t>(chunks_) * kPasses);
        pass_made_.assign(pass_ops_.size(), 0);
        row_grad_ = last_grad_.data() + static_cast<size_t>(row) * in_.layers;
        emitParamGathers(row, lane, actions);
        const std::string error = emitActions(rank, lane, actions);
        if (!error.empty())
            return error;
        emitGradSyncAndOptimizer(rank, lane);
        return {};
    }

    /// The weights' all-gather, bucket by bucket in the order of first use.
    void emitParamGathers(int row, int lane, const std::vector<Action>& actions) {
        if (in_.dp_overlap != DpOverlap::grad_reduce_and_param_gather)
            return; // the previous step's end gathered them (emitGradSyncAndOptimizer)
        std::vector<char> seen(static_cast<size_t>(chunks_), 0);
        for (const Action& a : actions) {
            if (a.type != Action::forward && a.type != Action::pair)
                continue;
            if (seen[static_cast<size_t>(a.chunk_f)])
                continue;
            seen[static_cast<size_t>(a.chunk_f)] = 1;
            for (int l = in_.chunk_first[static_cast<size_t>(a.chunk_f)];
                 l < in_.chunk_first[static_cast<size_t>(a.chunk_f) + 1]; ++l) {
                const LayerCosts& k = cost(lane, l);
                if (k.param_gather_s > 0)
                    gather_[static_cast<size_t>(l)] =
                        e_.add(row, TimelineStream::grad_sync, SpanKind::param_gather, false, l, -1,
                               k.param_gather_s, 0, syncBytes(k, k.param_gather_s), nullptr, 0);
            }
        }
    }

    /// The row's passes in schedule order.
    std::string emitActions(int rank, int lane, const std::vector<Action>& actions) {
        const int row = rank * in_.lanes + lane;
        std::deque<std::pair<int, int>> deferred; // (chunk, micro-batch label) awaiting W
        std::vector<LateSend> late, due;
        Chain cf, cb;
        for (const Action& a : actions) {
            due.swap(late);
            late.clear();
            switch (a.type) {
            case Action::forward:
                emitForward(row, lane, a, cf, late);
                break;
            case Action::backward:
                emitBackward(row, lane, a, cb, deferred);
                break;
            case Action::pair:
                emitForwardBackwardPair(row, lane, a, cf, cb);
                break;
            case Action::weights: {
                if (deferred.empty())
                    return "the schedule of stage " + std::to_string(rank) +
                           " runs a weight-gradient step with nothing deferred";
                const auto [chunk, mb] = deferred.front();
                deferred.pop_front();
                Chain cw;
                emitChain(row, cw, passOps(Pass::weights, lane, chunk), mb, true);
                break;
            }
            }
            // Sends held back by the previous action leave with this one's transfers, once its
            // compute is done.
            for (LateSend& d : due) {
                waitFor(d.chain, last_compute_);
                finishForward(row, lane, d.dir, d.chunk, d.mb, d.chain);
            }
        }
        for (LateSend& d : late)
            finishForward(row, lane, d.dir, d.chunk, d.mb, d.chain);
        if (!deferred.empty())
            return "the schedule of stage " + std::to_string(rank) +
                   " leaves weight gradients deferred at the end of the step";
        return {};
    }

    void emitForward(int row, int lane, const Action& a, Chain& cf, std::vector<LateSend>& late) {
        startForward(lane, a.dir_f, a.chunk_f, a.mb_f, cf);
        emitChain(row, cf, passOps(Pass::forward, lane, a.chunk_f), label(a.dir_f, a.mb_f), false);
        if (a.late_send)
            late.push_back({cf, a.dir_f, a.chunk_f, a.mb_f});
        else
            finishForward(row, lane, a.dir_f, a.chunk_f, a.mb_f, cf);
    }

    void emitBackward(int row, int lane, const Action& a, Chain& cb,
                      std::deque<std::pair<int, int>>& deferred) {
        startBackward(lane, a.dir_b, a.chunk_b, a.mb_b, cb);
        const Pass pass = a.zb ? Pass::backward_deferred : Pass::backward;
        emitChain(row, cb, passOps(pass, lane, a.chunk_b), label(a.dir_b, a.mb_b), true);
        finishBackward(row, lane, a.dir_b, a.chunk_b, a.mb_b, cb);
        if (a.zb)
            deferred.emplace_back(a.chunk_b, label(a.dir_b, a.mb_b));
    }

    void emitForwardBackwardPair(int row, int lane, const Action& a, Chain& cf, Chain& cb) {
        startForward(lane, a.dir_f, a.chunk_f, a.mb_f, cf);
        startBackward(lane, a.dir_b, a.chunk_b, a.mb_b, cb);
        const std::vector<Pending>& f = passOps(Pass::forward, lane, a.chunk_f);
        const std::vector<Pending>& b = passOps(Pass::backward_split, lane, a.chunk_b);
        {
            // The pair starts once both inputs have arrived (DualPipe receives both,
            // then runs the fused forward-backward).
            Id both[2];
            int n = 0;
            if (cf.ntails > 0)
                both[n++] = cf.tails[0];
            if (cb.ntails > 0)
                both[n++] = cb.tails[0];
            const Id start = n > 1 ? e_.addVirtual(both, n) : n == 1 ? both[0] : kNone;
            cf.reset(start);
            cb.reset(start);
        }
        emitPair(row, cf, f, label(a.dir_f, a.mb_f), cb, b, label(a.dir_b, a.mb_b));
        // Both outputs leave once the fused pair has finished computing.
        waitFor(cf, last_compute_);
        waitFor(cb, last_compute_);
        finishForward(row, lane, a.dir_f, a.chunk_f, a.mb_f, cf);
        finishBackward(row, lane, a.dir_b, a.chunk_b, a.mb_b, cb);
    }

    /// Gradient buckets in the order their last backward finishes (without overlap, all after
    /// the last), then the stage's optimizer once every row's reduction is done (gradient
    /// clipping's norm all-reduce spans every GPU; link() joins them), then the weights'
    /// all-gather when it is not overlapped with the next step's forward.
    void emitGradSyncAndOptimizer(int rank, int lane) {
        const int row = rank * in_.lanes + lane;
        std::vector<int> order;
        for (int l = 0; l < in_.layers; ++l)
            if (row_grad_[l] != kNone)
                order.push_back(l);
        std::sort(order.begin(), order.end(),
                  [&](int x, int y) { return row_grad_[x] < row_grad_[y]; });
        const bool overlapped = in_.dp_overlap != DpOverlap::none;
        Id last_sync = kNone;
        for (const int l : order) {
            const LayerCosts& k = cost(lane, l);
            if (!(k.grad_sync_s > 0))
                continue;
            const int released = overlapped ? l : order.back();
            Id dep = in_.lanes > 1 ? kNone : row_grad_[released];
            last_sync = e_.add(row, TimelineStream::grad_sync, SpanKind::grad_sync, true, l, -1,
                               k.grad_sync_s, 0, syncBytes(k, k.grad_sync_s), &dep, 1);
            if (in_.lanes > 1)
                barrier_slots_.push_back(
                    {rank, released, e_.ops[static_cast<size_t>(last_sync)].pred_begin});
        }
        reduced_.push_back(last_sync != kNone ? last_sync : last_compute_);
        double optimizer = in_.optimizer_s[static_cast<size_t>(rank)];
        if (dual_)
            optimizer += in_.optimizer_s[static_cast<size_t>(in_.pp - 1 - rank)];
        optimizer += in_.grad_norm_s;
        const Id deps[2] = {last_sync, kNone};
        const Id update = e_.add(row, TimelineStream::compute, SpanKind::optimizer, false, -1, -1,
                                 optimizer, 0, 0, deps, 2);
        norm_slots_.push_back(e_.ops[static_cast<size_t>(update)].pred_begin + 1);
        if (in_.dp_overlap == DpOverlap::grad_reduce_and_param_gather)
            return;
        for (const int l : order) {
            const LayerCosts& k = cost(lane, l);
            if (k.param_gather_s > 0)
                e_.add(row, TimelineStream::grad_sync, SpanKind::param_gather, false, l, -1,
                       k.param_gather_s, 0, syncBytes(k, k.param_gather_s), &update, 1);
        }
    }

    /// A join of every operation in `ids`, in joins of at most 255 inputs each.
    Id joinAll(std::vector<Id> ids) {
        constexpr size_t kMaxInputs = 255;
        while (ids.size() > 1) {
            std::vector<Id> joins;
            for (size_t i = 0; i < ids.size(); i += kMaxInputs)
                joins.push_back(e_.addVirtual(
                    ids.data() + i, static_cast<int>(std::min(kMaxInputs, ids.size() - i))));
            ids.swap(joins);
        }
        return ids.empty() ? kNone : ids.front();
    }

    /// Cross-row inputs, once every row exists: receives, and the gradient buckets' wait for
    /// every lane of their stage.
    std::string link() {
        for (int lane = 0; lane < in_.lanes; ++lane)
            for (int d = 0; d < dirs_; ++d)
                for (int c = 0; c < chunks_; ++c)
                    for (int mb = 0; mb < mdir_; ++mb) {
                        const size_t idx = index(lane, d, c, mb);
                        if (count_f_[idx] != 1 || count_b_[idx] != 1)
                            return "the " + std::string(toString(in_.schedule)) +
                                   " schedule runs micro-batch " + std::to_string(label(d, mb)) +
                                   " of chunk " + std::to_string(c) + " " +
                                   std::to_string(count_f_[idx]) + " times forward and " +
                                   std::to_string(count_b_[idx]) + " times backward";
                        if (c > 0)
                            e_.preds[entry_f_[idx]] = send_f_[index(lane, d, c - 1, mb)];
                        e_.preds[entry_b_[idx]] =
                            c + 1 < chunks_ ? send_b_[index(lane, d, c + 1, mb)] : exit_f_[idx];
                    }
        std::vector<Id> barrier(static_cast<size_t>(in_.pp) * in_.layers, kNone);
        std::vector<Id> deps(static_cast<size_t>(in_.lanes));
        for (const BarrierSlot& s : barrier_slots_) {
            Id& b = barrier[static_cast<size_t>(s.rank) * in_.layers + s.layer];
            if (b == kNone) {
                for (int lane = 0; lane < in_.lanes; ++lane)
                    deps[static_cast<size_t>(lane)] =
                        last_grad_[(static_cast<size_t>(s.rank) * in_.lanes + lane) * in_.layers +
                                   s.layer];
                b = e_.addVirtual(deps.data(), in_.lanes);
            }
            e_.preds[static_cast<size_t>(s.slot)] = b;
        }
        const Id reduced = joinAll(reduced_);
        for (const int32_t slot : norm_slots_)
            e_.preds[static_cast<size_t>(slot)] = reduced;
        return {};
    }

    struct BarrierSlot {
        int rank;
        int layer;
        int32_t slot;
    };

    const TimelineInput& in_;
    Engine& e_;
    int chunks_ = 1;
    bool dual_ = false;
    int dirs_ = 1;
    int mdir_ = 1;
    std::vector<size_t> entry_f_, entry_b_;
    std::vector<Id> send_f_, send_b_, exit_f_;
    std::vector<uint8_t> count_f_, count_b_;
    std::vector<Id> last_grad_; ///< [row * layers + layer]: last op producing its gradients
    Id* row_grad_ = nullptr;
    Id last_compute_ = kNone;
    std::vector<Id> gather_;
    std::vector<BarrierSlot> barrier_slots_;
    std::vector<Id> reduced_;         ///< per row: the end of its gradient reduction
    std::vector<int32_t> norm_slots_; ///< per row: its optimizer's wait for every row's
    /// passOps' lists for the row being emitted: [chunk * kPasses + pass], made on first use.
    std::vector<std::vector<Pending>> pass_ops_;
    std::vector<char> pass_made_;
};

} // namespace

std::string buildStepOperations(const TimelineInput& in, Engine& engine) {
    Builder builder(in, engine);
    return builder.build();
}

} // namespace moe::timeline_detail
