// The step timeline: the schedule of one training step as operations on per-GPU streams.
//
// Simulation model. Every operation has a duration (from the performance model), a stream and
// a list of inputs. Each stream is a FIFO: an operation starts at
//     start = max(end of the previous operation on its stream, ends of its inputs)
// which is what a CUDA stream does with event waits, and what NCCL's blocking point-to-point
// and collectives reduce to when each stream issues in program order. Operations complete in
// dependency order: a stream whose head is not ready parks itself on the input it waits for and
// is woken when that input completes, so the cost is linear in operations plus dependencies and
// there is no time-ordered event queue to maintain. A schedule that waits in a circle leaves
// streams parked with nothing to wake them: that is reported as an error, never a hang.
//
// Rows. A pipeline stage's GPUs run the same schedule, except that the expert GEMMs of a MoE
// layer last as long as their own token count. The EP group's all-to-all completes when its
// busiest member is done, so the group advances at the pace of its hottest rank; GPUs of
// different expert-DP replicas ("lanes") see different routing samples and advance at their own
// group's pace, and meet only in the gradient sync. One row is simulated per (stage, lane) at the
// lane's pace; per-GPU views shorten each expert GEMM to the GPU's own load and show the rest as
// a wait (Timeline::spansForGpu).
//
// Schedules (the compute stream's order per stage):
//   GPipe: all forwards, then all backwards (Huang et al. 2019).
//   1F1B: pp - stage - 1 warm-up forwards, then one forward and one backward alternately, then
//     the remaining backwards (PipeDream-Flush; Megatron-LM forward_backward_pipelining).
//   Interleaved 1F1B: vpp chunks per stage, chunk c = j * pp + stage; warm-up
//     (pp - stage - 1) * 2 + (vpp - 1) * pp chunk forwards, virtual micro-batch k is chunk
//     (k mod pp*vpp) / pp of micro-batch (k / (pp*vpp)) * pp + k mod pp (Megatron-LM
//     forward_backward_pipelining_with_interleaving, all warm-up when micro-batches = pp).
//   DualPipe: the eight phases of deepseek-ai/DualPipe's DualPipe.step: two directions, rank r
//     holding chunk r of the forward direction and chunk pp-1-r of the reverse one, overlapped
//     forward & backward pairs (one micro-batch's communication under the other's compute),
//     zero-bubble splitting of the backward into input gradients (B) and deferred weight
//     gradients (W = the weight GEMMs' half of backward).
//
// Gradient sync: each layer is one bucket (its share of the stage's parameters). Its
// reduce-scatter (all-reduce with ZeRO-0) starts when the last backward of the layer is done on
// every lane of the stage (the DP group spans the lanes); the stage's optimizer runs after the
// last bucket. The weights' all-gather (ZeRO >= 1) runs at the start of the step and each
// layer's first forward waits for its bucket - the steady state of Megatron's overlapped
// parameter gather, where the all-gather hides under the next step's forward.

#include "moe/timeline.h"
#include "moe/format.h"

#include "moe/json_writer.h"
#include "moe/model_costs.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>

namespace moe {

namespace {

using Id = int32_t;
constexpr Id kNone = -1;

struct Op {
    double dur = 0;
    double start = 0;
    double end = 0;
    float load = 0; ///< single precision: display detail, and keeps an operation in 64 bytes
    float bytes = 0;
    Id row = kNone; ///< kNone: a virtual join (no stream, no duration, not a span)
    Id layer = -1;
    Id mb = -1;
    Id crit = kNone;   ///< the input (or stream predecessor) that decided the start
    Id next = kNone;   ///< next operation on the same stream
    Id waiter = kNone; ///< first stream parked on this operation; later its span index
    int32_t pred_begin = 0;
    uint8_t npreds = 0;
    uint8_t stream = 0;
    uint8_t kind = 0;
    uint8_t flags = 0;
    bool backward() const { return flags & kBackward; }
    bool done() const { return flags & kDone; }
    /// weight_grad operations: the compute whose weight gradients they are (high nibble).
    SpanKind weightsOf() const { return static_cast<SpanKind>(flags >> 4); }
    static constexpr uint8_t kBackward = 1, kDone = 2;
};
static_assert(kSpanKindCount < 16, "Op::flags keeps a span kind in its high nibble");

/// Streams as FIFOs of operations (linked through Op::next), completed in dependency order.
class Engine {
public:
    struct Queue {
        Id head = kNone;
        Id tail = kNone;
        Id cursor = kNone; ///< next operation to run
        int32_t next_waiter = -1;
    };

    explicit Engine(int rows)
        : queues_(static_cast<size_t>(rows) * kTimelineStreamCount)
        , row_ops_(static_cast<size_t>(rows), 0) {}

    std::vector<Op> ops;
    std::vector<Id> preds; ///< kNone entries are ignored (unfilled or absent inputs)

    Id add(int row, TimelineStream stream, SpanKind kind, bool backward, int layer, int mb,
           double dur, double load, double bytes, const Id* deps, int ndeps,
           SpanKind weights_of = SpanKind::count) {
        Op op;
        op.dur = dur;
        op.load = static_cast<float>(load);
        op.bytes = static_cast<float>(bytes);
        op.row = row;
        op.layer = layer;
        op.mb = mb;
        op.stream = static_cast<uint8_t>(stream);
        op.kind = static_cast<uint8_t>(kind);
        op.flags = static_cast<uint8_t>((backward ? Op::kBackward : 0) |
                                        (static_cast<unsigned>(weights_of) << 4));
        op.pred_begin = static_cast<int32_t>(preds.size());
        for (int i = 0; i < ndeps; ++i)
            preds.push_back(deps[i]);
        op.npreds = static_cast<uint8_t>(ndeps);
        const Id id = static_cast<Id>(ops.size());
        ops.push_back(op);
        Queue& q =
            queues_[static_cast<size_t>(row) * kTimelineStreamCount + static_cast<size_t>(stream)];
        if (q.tail == kNone)
            q.head = id;
        else
            ops[static_cast<size_t>(q.tail)].next = id;
        q.tail = id;
        ++row_ops_[static_cast<size_t>(row)];
        return id;
    }

    /// A zero-duration join of `deps` (at most 255); with `slot`, one more input to fill in
    /// later.
    Id addVirtual(const Id* deps, int ndeps, size_t* slot = nullptr) {
        Op op;
        op.pred_begin = static_cast<int32_t>(preds.size());
        for (int i = 0; i < ndeps; ++i)
            preds.push_back(deps[i]);
        if (slot) {
            *slot = preds.size();
            preds.push_back(kNone);
        }
        op.npreds = static_cast<uint8_t>(ndeps + (slot ? 1 : 0));
        const Id id = static_cast<Id>(ops.size());
        ops.push_back(op);
        return id;
    }

    const Queue& queue(size_t q) const { return queues_[q]; }
    size_t rowOps(int row) const { return row_ops_[static_cast<size_t>(row)]; }

    /// Runs every stream to its end; false (with the reason) if some stream can never proceed.
    bool run(std::string& error) {
        const size_t queues = queues_.size();
        last_done_.assign(queues, kNone);
        std::vector<int32_t> work;
        work.reserve(queues);
        for (size_t q = queues; q-- > 0;) {
            queues_[q].cursor = queues_[q].head;
            if (queues_[q].head != kNone)
                work.push_back(static_cast<int32_t>(q));
        }
        // Each pass over a stream's head either completes it or parks the stream on one
        // unfinished input; an input completes once, so the loop is bounded by operations
        // times inputs. The budget only guards against a bug in that argument.
        size_t budget = 4 * (ops.size() + preds.size()) + 1024;
        while (!work.empty()) {
            const int32_t qi = work.back();
            work.pop_back();
            Queue& q = queues_[static_cast<size_t>(qi)];
            Id prev = last_done_[static_cast<size_t>(qi)]; // the cursor's stream predecessor
            while (q.cursor != kNone) {
                if (budget-- == 0) {
                    error = "the step simulation exceeded its event budget";
                    return false;
                }
                const Id head = q.cursor;
                const Id blocker = firstUnfinished(head);
                if (blocker != kNone) {
                    Op& b = ops[static_cast<size_t>(blocker)];
                    q.next_waiter = b.waiter;
                    b.waiter = qi;
                    break;
                }
                Op& op = ops[static_cast<size_t>(head)];
                double start = 0;
                Id crit = kNone;
                if (prev != kNone) {
                    crit = prev;
                    start = ops[static_cast<size_t>(prev)].end;
                }
                settle(op, start, crit);
                op.end = op.start + op.dur;
                prev = head;
                q.cursor = op.next;
                for (int32_t w = op.waiter; w >= 0;) {
                    const int32_t next = queues_[static_cast<size_t>(w)].next_waiter;
                    queues_[static_cast<size_t>(w)].next_waiter = -1;
                    work.push_back(w);
                    w = next;
                }
                op.waiter = kNone;
            }
            last_done_[static_cast<size_t>(qi)] = prev;
        }
        for (size_t q = 0; q < queues; ++q) {
            if (queues_[q].cursor != kNone) {
                stuck_queue_ = static_cast<int>(q);
                stuck_op_ = queues_[q].cursor;
                error = "the schedule deadlocked";
                return false;
            }
        }
        return true;
    }

    int stuckQueue() const { return stuck_queue_; }
    Id stuckOp() const { return stuck_op_; }

private:
    void settle(Op& op, double start, Id crit) {
        const Id* p = preds.data() + op.pred_begin;
        for (int i = 0; i < op.npreds; ++i) {
            if (p[i] == kNone)
                continue;
            const double end = ops[static_cast<size_t>(p[i])].end;
            if (end > start) {
                start = end;
                crit = p[i];
            }
        }
        op.start = start;
        op.crit = crit;
        op.flags |= Op::kDone;
    }

    /// The first input of `id` that has not completed (virtual joins complete on demand), or
    /// kNone when all have.
    Id firstUnfinished(Id id) {
        const Op& op = ops[static_cast<size_t>(id)];
        for (int i = 0; i < op.npreds; ++i) {
            const Id p = preds[static_cast<size_t>(op.pred_begin + i)];
            if (p == kNone || ops[static_cast<size_t>(p)].done())
                continue;
            if (ops[static_cast<size_t>(p)].row != kNone)
                return p;
            const Id blocker = firstUnfinished(p);
            if (blocker != kNone)
                return blocker;
            Op& join = ops[static_cast<size_t>(p)];
            settle(join, 0.0, kNone);
            join.end = join.start;
        }
        return kNone;
    }

    std::vector<Queue> queues_;
    std::vector<size_t> row_ops_;
    std::vector<Id> last_done_;
    int stuck_queue_ = -1;
    Id stuck_op_ = kNone;
};

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

struct Action {
    enum Type : uint8_t { forward, backward, pair, weights };
    Type type = forward;
    bool zb = false; ///< backward: defer the weight gradients (DualPipe zero bubble)
    /// forward: its output leaves only after the next action's compute (DualPipe issues some
    /// sends with the next chunk's batch of transfers)
    bool late_send = false;
    int dir_f = 0, chunk_f = 0, mb_f = 0;
    int dir_b = 0, chunk_b = 0, mb_b = 0;
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
            const std::vector<Action> actions = schedule(rank, error);
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

    // ---- schedules ---------------------------------------------------------------------------

    std::vector<Action> schedule(int rank, std::string& error) const {
        const int p = in_.pp;
        const int m = in_.micro_batches;
        std::vector<Action> a;
        auto f = [&](int chunk, int mb) {
            Action x;
            x.type = Action::forward;
            x.chunk_f = chunk;
            x.mb_f = mb;
            a.push_back(x);
        };
        auto b = [&](int chunk, int mb) {
            Action x;
            x.type = Action::backward;
            x.chunk_b = chunk;
            x.mb_b = mb;
            a.push_back(x);
        };
        switch (in_.schedule) {
        case PipelineSchedule::gpipe:
            for (int i = 0; i < m; ++i)
                f(rank, i);
            for (int i = 0; i < m; ++i)
                b(rank, i);
            break;
        case PipelineSchedule::one_f_one_b:
            oneFOneB(rank, f, b);
            break;
        case PipelineSchedule::interleaved: {
            const int v = in_.vpp;
            if (v == 1) {
                oneFOneB(rank, f, b);
                break;
            }
            const int total = m * v;
            const int group = p * v;
            const int warmup = m == p ? total : std::min((p - rank - 1) * 2 + (v - 1) * p, total);
            auto mb_of = [&](int k) { return (k / group) * p + k % p; };
            auto fchunk = [&](int k) { return ((k % group) / p) * p + rank; };
            auto bchunk = [&](int k) { return (v - 1 - (k % group) / p) * p + rank; };
            for (int k = 0; k < warmup; ++k)
                f(fchunk(k), mb_of(k));
            for (int k = 0; k < total - warmup; ++k) {
                f(fchunk(k + warmup), mb_of(k + warmup));
                b(bchunk(k), mb_of(k));
            }
            for (int k = total - warmup; k < total; ++k)
                b(bchunk(k), mb_of(k));
            break;
        }
        case PipelineSchedule::dualpipe:
            dualPipe(rank, a, error);
            break;
        }
        return a;
    }

    template <typename F, typename B> void oneFOneB(int rank, F f, B b) const {
        const int m = in_.micro_batches;
        const int warmup = std::min(in_.pp - rank - 1, m);
        for (int i = 0; i < warmup; ++i)
            f(rank, i);
        for (int i = 0; i < m - warmup; ++i) {
            f(rank, warmup + i);
            b(rank, i);
        }
        for (int i = m - warmup; i < m; ++i)
            b(rank, i);
    }

    /// deepseek-ai/DualPipe, DualPipe.step: phase numbers are local (phase 0 is the forward
    /// direction on the first half of the ranks and the reverse one on the second half).
    void dualPipe(int rank, std::vector<Action>& a, std::string& error) const {
        const int p = in_.pp;
        const int half = p / 2;
        const int hr = std::min(rank, p - 1 - rank);
        const int half_chunks = mdir_;
        const bool second = rank >= half;
        const bool middle = rank == half - 1 || rank == half;
        int fnext[2] = {0, 0};
        int bnext[2] = {0, 0};
        auto dir = [&](int phase) { return phase ^ (second ? 1 : 0); };
        auto chunk = [&](int d) { return d == 0 ? rank : p - 1 - rank; };
        auto f = [&](int phase) {
            Action x;
            x.type = Action::forward;
            x.dir_f = dir(phase);
            x.chunk_f = chunk(x.dir_f);
            x.mb_f = fnext[x.dir_f]++;
            a.push_back(x);
        };
        auto b = [&](int phase, bool zb) {
            Action x;
            x.type = Action::backward;
            x.zb = zb;
            x.dir_b = dir(phase);
            x.chunk_b = chunk(x.dir_b);
            x.mb_b = bnext[x.dir_b]++;
            a.push_back(x);
        };
        auto fb = [&](int phase_f, int phase_b) {
            Action x;
            x.type = Action::pair;
            x.dir_f = dir(phase_f);
            x.chunk_f = chunk(x.dir_f);
            x.mb_f = fnext[x.dir_f]++;
            x.dir_b = dir(phase_b);
            x.chunk_b = chunk(x.dir_b);
            x.mb_b = bnext[x.dir_b]++;
            a.push_back(x);
        };
        auto w = [&]() {
            Action x;
            x.type = Action::weights;
            a.push_back(x);
        };
        for (int i = 0; i < (half - hr - 1) * 2; ++i) // 1: nF0
            f(0);
        for (int i = 0; i < hr + 1; ++i) { // 2: nF0F1
            f(0);
            a.back().late_send = !middle; // sent after F1
            f(1);
            a.back().late_send = middle && i == hr; // sent after step 4's first F0
        }
        for (int i = 0; i < half - hr - 1; ++i) { // 3: nB1W1F1 (zero bubble)
            b(1, true);
            w();
            f(1);
        }
        for (int i = 0; i < half_chunks - p + hr + 1; ++i) { // 4: nF0B1F1B0
            if (i == 0 && middle) {
                f(0); // not overlapped, to shrink the bubble
                a.back().late_send = true;
                b(1, false);
            } else {
                fb(0, 1);
            }
            fb(1, 0);
        }
        for (int i = 0; i < half - hr - 1; ++i) { // 5: nB1F1B0
            b(1, false);
            fb(1, 0);
        }
        bool zb = false; // 6: nB1B0, the second half with zero bubble
        for (int i = 0; i < hr + 1; ++i) {
            if (i == (hr + 1) / 2 && hr % 2 == 1)
                zb = true;
            b(1, zb);
            if (i == (hr + 1) / 2 && hr % 2 == 0)
                zb = true;
            b(0, zb);
        }
        for (int i = 0; i < half - hr - 1; ++i) { // 7: nWB0 (zero bubble)
            w();
            b(0, true);
        }
        for (int i = 0; i < hr + 1; ++i) // 8: nW
            w();
        if (fnext[0] != half_chunks || fnext[1] != half_chunks || bnext[0] != half_chunks ||
            bnext[1] != half_chunks)
            error = "DualPipe schedule of rank " + std::to_string(rank) +
                    " does not cover every micro-batch";
    }

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

    /// Where a backward pass's weight-gradient GEMMs (the forward-sized half of each compute
    /// operation's backward) go: inside each operation (plain backward), deferred to a later W
    /// step (DualPipe's zero bubble), or split off right after each operation, so the transfer
    /// of the input gradient starts before them (DualPipe's overlapped pairs, DeepSeek-V3
    /// report figure 4).
    enum class WeightGrads { inline_, deferred, split };

    void backwardOps(int lane, int chunk, WeightGrads w, std::vector<Pending>& out) const {
        const int first = in_.chunk_first[static_cast<size_t>(chunk)];
        const int last = in_.chunk_first[static_cast<size_t>(chunk) + 1];
        auto compute = [&](double bwd, double fwd, bool load, int l, SpanKind kind) {
            const double wgrad = w == WeightGrads::inline_ ? 0.0 : std::clamp(fwd, 0.0, bwd);
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
                compute(k.lm_head_bwd_s, k.lm_head_fwd_s, false, l, SpanKind::lm_head);
            out.push_back({k.tp_bwd_s, 0, k.tp_bwd_bytes, l, in_.tp_stream, SpanKind::tp, false});
            if (k.moe) {
                out.push_back({k.combine_bwd_s, k.combine_bwd_wait_s, k.combine_bytes, l,
                               in_.ep_stream, SpanKind::combine, false});
                compute(k.expert_bwd_s, k.expert_fwd_s, true, l, SpanKind::expert);
                out.push_back({k.dispatch_bwd_s, k.dispatch_bwd_wait_s, k.combine_bytes, l,
                               in_.ep_stream, SpanKind::dispatch, false});
                compute(k.ffn_bwd_s, k.ffn_fwd_s, false, l, SpanKind::dense_ffn);
                compute(k.router_bwd_s, k.router_fwd_s, false, l, SpanKind::router);
            } else {
                compute(k.ffn_bwd_s, k.ffn_fwd_s, false, l, SpanKind::dense_ffn);
            }
            out.push_back({k.tp_bwd_s, 0, k.tp_bwd_bytes, l, in_.tp_stream, SpanKind::tp, false});
            compute(k.attention_bwd_s, k.attention_fwd_s, false, l, SpanKind::attention);
            out.push_back({k.cp_bwd_s, 0, k.cp_bwd_bytes, l, in_.cp_stream, SpanKind::cp, true});
        }
    }

    /// The weight-gradient GEMMs a zero-bubble backward deferred: forward-sized, per layer and
    /// per compute operation (so the step's breakdown charges each to its own item).
    void weightOps(int lane, int chunk, std::vector<Pending>& out) const {
        const int first = in_.chunk_first[static_cast<size_t>(chunk)];
        const int last = in_.chunk_first[static_cast<size_t>(chunk) + 1];
        auto weights = [&](double fwd, double bwd, bool load, int l, SpanKind of) {
            const double w = std::min(fwd, bwd);
            if (w > 0)
                out.push_back({w, load ? w : 0.0, 0, l, TimelineStream::compute,
                               SpanKind::weight_grad, false, false, of});
        };
        for (int l = last - 1; l >= first; --l) {
            const LayerCosts& k = cost(lane, l);
            weights(k.lm_head_fwd_s, k.lm_head_bwd_s, false, l, SpanKind::lm_head);
            if (k.moe)
                weights(k.expert_fwd_s, k.expert_bwd_s, true, l, SpanKind::expert);
            weights(k.ffn_fwd_s, k.ffn_bwd_s, false, l, SpanKind::dense_ffn);
            weights(k.router_fwd_s, k.router_bwd_s, false, l, SpanKind::router);
            weights(k.attention_fwd_s, k.attention_bwd_s, false, l, SpanKind::attention);
        }
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

    std::string emitRow(int rank, int lane, const std::vector<Action>& actions) {
        const int row = rank * in_.lanes + lane;
        gather_.assign(static_cast<size_t>(in_.layers), kNone);
        row_grad_ = last_grad_.data() + static_cast<size_t>(row) * in_.layers;

        // The weights' all-gather, bucket by bucket in the order of first use.
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

        std::deque<std::pair<int, int>> deferred; // (chunk, micro-batch label) awaiting W
        struct LateSend {
            Chain chain;
            int dir, chunk, mb;
        };
        std::vector<LateSend> late, due;
        Chain cf, cb;
        for (const Action& a : actions) {
            due.swap(late);
            late.clear();
            switch (a.type) {
            case Action::forward:
                startForward(lane, a.dir_f, a.chunk_f, a.mb_f, cf);
                pend_f_.clear();
                forwardOps(lane, a.chunk_f, pend_f_);
                emitChain(row, cf, pend_f_, label(a.dir_f, a.mb_f), false);
                if (a.late_send)
                    late.push_back({cf, a.dir_f, a.chunk_f, a.mb_f});
                else
                    finishForward(row, lane, a.dir_f, a.chunk_f, a.mb_f, cf);
                break;
            case Action::backward:
                startBackward(lane, a.dir_b, a.chunk_b, a.mb_b, cb);
                pend_b_.clear();
                backwardOps(lane, a.chunk_b, a.zb ? WeightGrads::deferred : WeightGrads::inline_,
                            pend_b_);
                emitChain(row, cb, pend_b_, label(a.dir_b, a.mb_b), true);
                finishBackward(row, lane, a.dir_b, a.chunk_b, a.mb_b, cb);
                if (a.zb)
                    deferred.emplace_back(a.chunk_b, label(a.dir_b, a.mb_b));
                break;
            case Action::pair:
                startForward(lane, a.dir_f, a.chunk_f, a.mb_f, cf);
                startBackward(lane, a.dir_b, a.chunk_b, a.mb_b, cb);
                pend_f_.clear();
                pend_b_.clear();
                forwardOps(lane, a.chunk_f, pend_f_);
                backwardOps(lane, a.chunk_b, WeightGrads::split, pend_b_);
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
                emitPair(row, cf, pend_f_, label(a.dir_f, a.mb_f), cb, pend_b_,
                         label(a.dir_b, a.mb_b));
                // Both outputs leave once the fused pair has finished computing.
                waitFor(cf, last_compute_);
                waitFor(cb, last_compute_);
                finishForward(row, lane, a.dir_f, a.chunk_f, a.mb_f, cf);
                finishBackward(row, lane, a.dir_b, a.chunk_b, a.mb_b, cb);
                break;
            case Action::weights: {
                if (deferred.empty())
                    return "the schedule of stage " + std::to_string(rank) +
                           " runs a weight-gradient step with nothing deferred";
                const auto [chunk, mb] = deferred.front();
                deferred.pop_front();
                Chain cw;
                pend_b_.clear();
                weightOps(lane, chunk, pend_b_);
                emitChain(row, cw, pend_b_, mb, true);
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

        // Gradient buckets in the order their last backward finishes.
        std::vector<int> order;
        for (int l = 0; l < in_.layers; ++l)
            if (row_grad_[l] != kNone)
                order.push_back(l);
        std::sort(order.begin(), order.end(),
                  [&](int x, int y) { return row_grad_[x] < row_grad_[y]; });
        Id last_sync = kNone;
        for (const int l : order) {
            const LayerCosts& k = cost(lane, l);
            if (!(k.grad_sync_s > 0))
                continue;
            Id dep = in_.lanes > 1 ? kNone : row_grad_[l];
            last_sync = e_.add(row, TimelineStream::grad_sync, SpanKind::grad_sync, true, l, -1,
                               k.grad_sync_s, 0, syncBytes(k, k.grad_sync_s), &dep, 1);
            if (in_.lanes > 1)
                barrier_slots_.push_back(
                    {rank, l, e_.ops[static_cast<size_t>(last_sync)].pred_begin});
        }
        double optimizer = in_.optimizer_s[static_cast<size_t>(rank)];
        if (dual_)
            optimizer += in_.optimizer_s[static_cast<size_t>(in_.pp - 1 - rank)];
        if (optimizer > 0)
            e_.add(row, TimelineStream::compute, SpanKind::optimizer, false, -1, -1, optimizer, 0,
                   0, &last_sync, 1);
        return {};
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
    std::vector<Pending> pend_f_, pend_b_;
};

std::string checkInput(const TimelineInput& in) {
    auto bad = [](const std::string& what) { return "cannot simulate the step: " + what; };
    if (in.pp < 1 || in.vpp < 1 || in.micro_batches < 1 || in.lanes < 1 || in.layers < 1)
        return bad("pipeline stages, virtual stages, micro-batches, lanes and layers must be "
                   "at least 1");
    const int chunks = in.pp * in.vpp;
    if (static_cast<int>(in.chunk_first.size()) != chunks + 1 || in.chunk_first.front() != 0 ||
        in.chunk_first.back() != in.layers)
        return bad("the layer split does not cover the " + std::to_string(in.layers) +
                   " layers in " + std::to_string(chunks) + " chunks");
    for (int c = 0; c < chunks; ++c)
        if (in.chunk_first[static_cast<size_t>(c) + 1] <= in.chunk_first[static_cast<size_t>(c)])
            return bad("pipeline chunk " + std::to_string(c) +
                       " holds no layer (more stages than layers)");
    if (in.costs.size() != static_cast<size_t>(in.lanes) * in.layers ||
        static_cast<int>(in.optimizer_s.size()) != in.pp)
        return bad("the cost tables do not match the layout");
    if (in.vpp > 1 && in.schedule != PipelineSchedule::interleaved)
        return bad("virtual stages (vpp = " + std::to_string(in.vpp) +
                   ") need the interleaved schedule");
    if (in.schedule == PipelineSchedule::interleaved && in.vpp > 1 && in.micro_batches % in.pp != 0)
        return bad("the interleaved schedule needs a number of micro-batches (" +
                   std::to_string(in.micro_batches) +
                   ") divisible by pp = " + std::to_string(in.pp));
    if (in.schedule == PipelineSchedule::dualpipe) {
        if (in.pp % 2 != 0)
            return bad("DualPipe needs an even number of stages, not " + std::to_string(in.pp));
        if (in.micro_batches % 2 != 0 || in.micro_batches < 2 * in.pp)
            return bad("DualPipe needs an even number of micro-batches of at least 2*pp = " +
                       std::to_string(2 * in.pp) + ", not " + std::to_string(in.micro_batches));
    }
    return {};
}

/// Upper bound of the operations a simulation creates (to refuse oversized inputs up front).
double operationEstimate(const TimelineInput& in) {
    // Per layer and micro-batch at most 10 operations forward, 10 backward and 5 deferred
    // weight-gradient operations; plus sends, joins and receives per pass, and the sync buckets.
    return static_cast<double>(in.lanes) * in.micro_batches * in.vpp *
               (25.0 * in.layers + 8.0 * in.pp) +
           3.0 * in.lanes * in.layers;
}

/// The step item a compute operation's time belongs to (weight gradients: their operation's).
StepItem computeItem(SpanKind kind) {
    switch (kind) {
    case SpanKind::attention:
        return StepItem::attention;
    case SpanKind::dense_ffn:
    case SpanKind::lm_head:
        return StepItem::dense_ffn;
    case SpanKind::router:
        return StepItem::router;
    case SpanKind::expert:
        return StepItem::expert_compute;
    case SpanKind::optimizer:
        return StepItem::optimizer;
    default:
        return StepItem::bubble;
    }
}

/// The step item of waiting for a transfer (`own`: one of the reference row's) or, when
/// another row's operation holds the reference row up, of that operation.
StepItem waitItem(SpanKind kind, bool own) {
    switch (kind) {
    case SpanKind::pp_send:
        return StepItem::pp_comm;
    case SpanKind::grad_sync:
    case SpanKind::param_gather:
        return StepItem::dp_sync;
    case SpanKind::optimizer:
        return StepItem::optimizer;
    default:
        break;
    }
    if (!own)
        return StepItem::bubble;
    switch (kind) {
    case SpanKind::dispatch:
    case SpanKind::combine:
        return StepItem::all_to_all;
    case SpanKind::tp:
        return StepItem::tp_comm;
    case SpanKind::cp:
        return StepItem::cp_comm;
    default:
        return computeItem(kind);
    }
}

/// The simulated step by item (Timeline::breakdown), in evaluate()'s accounting. The reference
/// row is the one holding the most critical-path time: the GPUs the step waits on most. Every
/// instant of the step is charged once:
///   - while the reference row computes, to that compute (expert GEMMs: the mean-load share to
///     expert compute, what the lane's hottest rank adds to imbalance wait; weight gradients
///     to the operation they belong to);
///   - while its compute stream idles, to what held up its next operation: the chain of
///     operations that decided its start (Op::crit), followed back to the end of its previous
///     compute. Its own transfers are exposed all-to-all (the busiest receiver's tail as
///     imbalance wait), TP, CP, pipeline sends or gradient sync; another row's work is the
///     pipeline bubble, except its pipeline sends, gradient sync and optimizer;
///   - after its last micro-batch's compute, along the step's critical path back from the
///     step's last operation (the drain of the other stages, the exposed gradient sync and the
///     optimizer that ends the step; the row's own optimizer, run while others drain, is hidden).
/// This is the exposure a profiler shows on that GPU: a transfer that runs beside compute is
/// hidden (overlapped_s), one the GPU waits for is exposed. It is what evaluate()'s closed form
/// adds up: m micro-batches of the slowest stage's compute and exposed transfers, the bubble,
/// the exposed gradient sync and the optimizer.
void stepBreakdown(const Engine& engine, Id last, Timeline& t) {
    const std::vector<Op>& ops = engine.ops;
    StepBreakdown& b = t.breakdown;
    std::vector<double> row_critical_s(t.rows.size(), 0.0);
    for (const CriticalStep& c : t.critical_path)
        row_critical_s[static_cast<size_t>(c.row)] +=
            t.rows[static_cast<size_t>(c.row)].spans[static_cast<size_t>(c.span)].duration_s();
    const int ref = static_cast<int>(
        std::max_element(row_critical_s.begin(), row_critical_s.end()) - row_critical_s.begin());
    t.reference_row = ref;
    const int lane = t.rows[static_cast<size_t>(ref)].lane;

    auto add = [&](StepItem item, double s) { b.seconds[static_cast<size_t>(item)] += s; };
    // Compute of the reference row over [from, to].
    auto compute = [&](const Op& op, double from, double to) {
        const double d = to - from;
        const SpanKind kind = static_cast<SpanKind>(op.kind);
        const SpanKind work = kind == SpanKind::weight_grad ? op.weightsOf() : kind;
        const int moe_layer = op.layer - t.first_moe_layer;
        if (op.load > 0 && moe_layer >= 0 && moe_layer < t.moe_layers && op.dur > 0) {
            const size_t i = static_cast<size_t>(lane) * t.moe_layers + moe_layer;
            const double mean =
                std::clamp(i < t.mean_share.size() ? double(t.mean_share[i]) : 1.0, 0.0, 1.0);
            const double load = d * std::min(1.0, op.load / op.dur);
            add(StepItem::expert_compute, load * mean);
            add(StepItem::imbalance_wait, load * (1.0 - mean));
            add(computeItem(work), d - load);
            return;
        }
        add(computeItem(work), d);
    };
    // Waiting over [from, to] for `op` (the operation that held the reference row up then).
    auto wait = [&](const Op& op, double from, double to) {
        const SpanKind kind = static_cast<SpanKind>(op.kind);
        const bool own = op.row == ref;
        if (own && op.stream == static_cast<uint8_t>(TimelineStream::compute)) {
            compute(op, from, to);
            return;
        }
        const StepItem item = waitItem(kind, own);
        if (item == StepItem::all_to_all && op.load > 0) {
            // The busiest receiver's extra is the transfer's tail.
            const double tail = std::max(0.0, to - std::max(from, op.end - op.load));
            add(StepItem::imbalance_wait, tail);
            add(item, to - from - tail);
            return;
        }
        add(item, to - from);
    };
    // Charges [from, ops[id].end] along id and the operations that decided each start.
    auto follow = [&](Id id, double from) {
        double until = id == kNone ? from : ops[static_cast<size_t>(id)].end;
        for (; id != kNone && until > from; id = ops[static_cast<size_t>(id)].crit) {
            const Op& op = ops[static_cast<size_t>(id)];
            if (op.row == kNone)
                continue; // a join: no time of its own
            const double start = std::max(from, op.start);
            if (until > start)
                wait(op, start, until);
            until = std::min(until, op.start);
        }
        if (until > from) // nothing recorded before: the step's very start
            add(StepItem::bubble, until - from);
    };

    double at = 0;
    const size_t compute_queue = static_cast<size_t>(ref) * kTimelineStreamCount +
                                 static_cast<size_t>(TimelineStream::compute);
    for (Id id = engine.queue(compute_queue).head; id != kNone;
         id = ops[static_cast<size_t>(id)].next) {
        const Op& op = ops[static_cast<size_t>(id)];
        if (op.kind == static_cast<uint8_t>(SpanKind::optimizer))
            break; // the step's tail follows the critical path (below)
        if (op.start > at)
            follow(op.crit, at);
        compute(op, std::max(at, op.start), op.end);
        at = std::max(at, op.end);
    }
    if (t.step_time_s > at)
        follow(last, at);

    // What the reference row's transfers took beyond what it waited for.
    std::array<double, kStepItemCount> transfer_s{};
    for (const Span& s : t.rows[static_cast<size_t>(ref)].spans)
        if (isCommunication(s.kind))
            transfer_s[static_cast<size_t>(waitItem(s.kind, true))] += s.duration_s();
    for (int i = 0; i < kStepItemCount; ++i)
        b.overlapped_s[static_cast<size_t>(i)] =
            std::max(0.0, transfer_s[static_cast<size_t>(i)] - b.seconds[static_cast<size_t>(i)]);
    b.total_s = 0;
    for (const double v : b.seconds)
        b.total_s += v;
}

} // namespace

Timeline simulateTimeline(const TimelineInput& in, const TimelineOptions& options) {
    Timeline t;
    t.schedule = in.schedule;
    t.stages = in.pp;
    t.lanes = in.lanes;
    t.micro_batches = in.micro_batches;
    t.gpus_per_node = std::max(1, in.gpus_per_node);
    t.placement = in.placement;
    t.ep = std::max(1, in.ep);
    t.first_moe_layer = in.first_moe_layer;
    t.moe_layers = in.moe_layers;
    t.expert_share = in.expert_share;
    t.mean_share = in.mean_share;
    t.error = checkInput(in);
    if (!t.ok())
        return t;
    const int rows = in.pp * in.lanes;
    t.gpus = in.gpus > 0 ? in.gpus : rows;
    if (operationEstimate(in) > static_cast<double>(options.max_operations)) {
        t.error = "cannot simulate the step: it needs about " +
                  std::to_string(static_cast<long long>(operationEstimate(in))) +
                  " operations, over the limit of " + std::to_string(options.max_operations);
        return t;
    }

    Engine engine(rows);
    engine.ops.reserve(static_cast<size_t>(operationEstimate(in) * 0.6));
    engine.preds.reserve(engine.ops.capacity() * 2);
    {
        Builder builder(in, engine);
        t.error = builder.build();
        if (!t.ok())
            return t;
    }
    std::string error;
    if (!engine.run(error)) {
        if (engine.stuckOp() != kNone) {
            const Op& op = engine.ops[static_cast<size_t>(engine.stuckOp())];
            const int q = engine.stuckQueue();
            const int row = q / kTimelineStreamCount;
            error += ": stage " + std::to_string(row / in.lanes) + " (lane " +
                     std::to_string(row % in.lanes) + ") waits forever on its " +
                     toString(static_cast<TimelineStream>(q % kTimelineStreamCount)) +
                     " stream before " + toString(static_cast<SpanKind>(op.kind)) +
                     (op.backward() ? " backward" : "") + " of micro-batch " +
                     std::to_string(op.mb) + ", layer " + std::to_string(op.layer);
        }
        t.error = error;
        return t;
    }

    // Rows: merge the stream FIFOs (each already in start order) into one sorted list. An
    // operation's `waiter` field, free after the run, records its index in the row.
    std::vector<Op>& ops = engine.ops;
    t.rows.resize(static_cast<size_t>(rows));
    for (int r = 0; r < rows; ++r) {
        TimelineRow& row = t.rows[static_cast<size_t>(r)];
        row.stage = r / in.lanes;
        row.lane = r % in.lanes;
        row.spans.reserve(engine.rowOps(r));
        Id head[kTimelineStreamCount];
        for (int s = 0; s < kTimelineStreamCount; ++s)
            head[s] =
                engine.queue(static_cast<size_t>(r) * kTimelineStreamCount + static_cast<size_t>(s))
                    .head;
        for (;;) {
            int best = -1;
            for (int s = 0; s < kTimelineStreamCount; ++s)
                if (head[s] != kNone &&
                    (best < 0 || ops[static_cast<size_t>(head[s])].start <
                                     ops[static_cast<size_t>(head[best])].start))
                    best = s;
            if (best < 0)
                break;
            Op& op = ops[static_cast<size_t>(head[best])];
            head[best] = op.next;
            Span span;
            span.stream = static_cast<TimelineStream>(op.stream);
            span.kind = static_cast<SpanKind>(op.kind);
            span.backward = op.backward();
            span.layer = op.layer;
            span.microbatch = op.mb;
            span.start_s = op.start;
            span.end_s = op.end;
            span.bytes = op.bytes;
            span.load_s = op.load;
            span.weights_of = op.weightsOf();
            op.waiter = static_cast<Id>(row.spans.size());
            row.spans.push_back(span);
        }
        t.operations += row.spans.size();
    }

    // The step ends with its last operation; the critical path walks back through whatever
    // decided each start.
    Id last = kNone;
    for (size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].row == kNone)
            continue;
        if (last == kNone || ops[i].end >= ops[static_cast<size_t>(last)].end)
            last = static_cast<Id>(i);
    }
    if (last == kNone)
        return t;
    t.step_time_s = ops[static_cast<size_t>(last)].end;
    for (Id id = last; id != kNone; id = ops[static_cast<size_t>(id)].crit) {
        const Op& op = ops[static_cast<size_t>(id)];
        if (op.row == kNone)
            continue;
        t.critical_path.push_back({op.row, op.waiter});
    }
    std::reverse(t.critical_path.begin(), t.critical_path.end());
    stepBreakdown(engine, last, t);
    return t;
}

// ---- inputs from the performance model -----------------------------------------------------

namespace {

TimelineStream streamOf(const Placement& placement, GroupKind kind) {
    return placement.spanOf(kind).link_class == LinkClass::scale_out ? TimelineStream::scale_out
                                                                     : TimelineStream::scale_up;
}

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

    // The layer split of splitLayers: chunk c holds base (+1 for the first `remainder`) layers.
    const int chunks = in.pp * in.vpp;
    const int base = in.layers / chunks;
    const int remainder = in.layers % chunks;
    in.chunk_first.push_back(0);
    for (int c = 0; c < chunks; ++c)
        in.chunk_first.push_back(in.chunk_first.back() + base + (c < remainder ? 1 : 0));

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

    // Mean token slots per EP rank of each MoE layer (over every sampled group), the reference
    // of the imbalance factors, as in sampleExpertLoad.
    std::vector<double> layer_mean(static_cast<size_t>(in.moe_layers), 0.0);
    if (moe) {
        for (int lm = 0; lm < in.moe_layers; ++lm) {
            double sum = 0;
            const size_t begin = static_cast<size_t>(lm) * groups * ep;
            for (size_t i = begin; i < begin + static_cast<size_t>(groups) * ep; ++i)
                sum += i < load.rank_tokens.size() ? load.rank_tokens[i] : 0.0;
            layer_mean[static_cast<size_t>(lm)] = sum / (static_cast<double>(groups) * ep);
        }
        in.expert_share.assign(static_cast<size_t>(in.lanes) * in.moe_layers * ep, 1.0f);
        in.mean_share.assign(static_cast<size_t>(in.lanes) * in.moe_layers, 1.0f);
    }
    auto tokens = [&](int lm, int group, int rank) {
        const size_t i = (static_cast<size_t>(lm) * groups + group) * ep + rank;
        return i < load.rank_tokens.size() ? load.rank_tokens[i] : 0.0;
    };

    for (const StageCosts& st : costs.stages)
        in.optimizer_s.push_back(st.sync.optimizer_s);
    in.pp_send_s = comm * costs.pp_send_s;
    in.pp_bytes = costs.pp_message_bytes;
    if (report.placement) {
        const Placement& pl = *report.placement;
        in.ep_stream = streamOf(pl, GroupKind::ep);
        in.tp_stream = streamOf(pl, GroupKind::tp);
        in.cp_stream = streamOf(pl, GroupKind::cp);
        in.pp_stream = streamOf(pl, GroupKind::pp);
    }

    const LayerPassCosts& t = costs.layer;
    const MoeLayerPrice mean_price = moe ? mc.mean : MoeLayerPrice{};
    in.costs.resize(static_cast<size_t>(in.lanes) * in.layers);
    for (const StageCosts& st : costs.stages) {
        for (size_t i = 0; i < st.layers.layer_indices.size(); ++i) {
            const int l = st.layers.layer_indices[i];
            for (int lane = 0; lane < in.lanes; ++lane) {
                LayerCosts& k = in.costs[static_cast<size_t>(lane) * in.layers + l];
                k.layer = l;
                k.attention_fwd_s = t.attention_fwd_s;
                k.attention_bwd_s = t.attention_bwd_s;
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
                if (l == in.layers - 1) {
                    k.lm_head_fwd_s = t.lm_head_fwd_s;
                    k.lm_head_bwd_s = t.lm_head_bwd_s;
                }
                const int lm = l - in.first_moe_layer;
                k.moe = moe && lm >= 0 && lm < in.moe_layers;
                if (!k.moe) {
                    k.ffn_fwd_s = t.dense_ffn_fwd_s;
                    k.ffn_bwd_s = t.dense_ffn_bwd_s;
                } else {
                    k.ffn_fwd_s = t.shared_fwd_s;
                    k.ffn_bwd_s = t.shared_bwd_s;
                    k.router_fwd_s = t.router_fwd_s;
                    k.router_bwd_s = t.router_bwd_s;
                    // The lane's pace: its hottest EP rank, at evaluate's imbalance definition
                    // (max / mean over every group and rank of the layer).
                    const double mean = layer_mean[static_cast<size_t>(lm)];
                    double factor = 1.0;
                    if (!options.uniform_load && mean > 0) {
                        double hottest = 0;
                        for (int r = 0; r < ep; ++r)
                            hottest = std::max(hottest, tokens(lm, lane, r));
                        factor = hottest / mean;
                    }
                    const MoeLayerPrice p = mc.price(factor);
                    k.expert_fwd_s = p.expert_fwd_s;
                    k.expert_bwd_s = p.expert_bwd_s;
                    k.dispatch_fwd_s = comm * p.dispatch_fwd_s;
                    k.combine_fwd_s = comm * p.combine_fwd_s;
                    k.combine_bwd_s = comm * p.combine_bwd_s;
                    k.dispatch_bwd_s = comm * p.dispatch_bwd_s;
                    k.dispatch_fwd_wait_s = comm * (p.dispatch_fwd_s - mean_price.dispatch_fwd_s);
                    k.combine_fwd_wait_s = comm * (p.combine_fwd_s - mean_price.combine_fwd_s);
                    k.combine_bwd_wait_s = comm * (p.combine_bwd_s - mean_price.combine_bwd_s);
                    k.dispatch_bwd_wait_s = comm * (p.dispatch_bwd_s - mean_price.dispatch_bwd_s);
                    k.dispatch_bytes = mc.dispatch_call.scale_up_bytes_per_gpu +
                                       mc.dispatch_call.scale_out_bytes_per_gpu;
                    k.combine_bytes = mc.combine_call.scale_up_bytes_per_gpu +
                                      mc.combine_call.scale_out_bytes_per_gpu;
                    // Per-GPU shares of the lane's pace (forward + backward, one share for both).
                    const size_t li = static_cast<size_t>(lane) * in.moe_layers + lm;
                    const double hot = p.experts_s();
                    if (hot > 0) {
                        in.mean_share[li] =
                            static_cast<float>(std::min(1.0, mean_price.experts_s() / hot));
                        if (!options.uniform_load && mean > 0) {
                            for (int r = 0; r < ep; ++r) {
                                const double slots = mc.mean_slots * tokens(lm, lane, r) / mean;
                                const double own =
                                    mc.expertForward_s(slots) + mc.expertBackward_s(slots);
                                in.expert_share[li * ep + r] =
                                    static_cast<float>(std::clamp(own / hot, 0.0, 1.0));
                            }
                        }
                    }
                }
                // The layer's gradient bucket.
                const double dense_share = st.layer_dense_share[i];
                const double expert_share = k.moe ? st.layer_expert_share[i] : 0.0;
                const StageSync& sync = st.sync;
                k.grad_sync_s =
                    comm * (sync.dp_grad_s * dense_share + sync.edp_grad_s * expert_share);
                k.param_gather_s =
                    comm * (sync.dp_gather_s * dense_share + sync.edp_gather_s * expert_share);
                k.sync_bytes = (sync.dp_bytes_up + sync.dp_bytes_out) * dense_share +
                               (sync.edp_bytes_up + sync.edp_bytes_out) * expert_share;
            }
        }
    }
    return in;
}

Timeline simulateTimeline(const Scenario& scenario, const Report& report,
                          const TimelineOptions& options) {
    return simulateTimeline(timelineInput(scenario, report, options), options);
}

// ---- queries -------------------------------------------------------------------------------

int Timeline::rowOfGpu(int gpu) const {
    if (gpu < 0 || gpu >= gpus)
        return -1;
    if (!placement)
        return gpu < static_cast<int>(rows.size()) ? gpu : -1;
    if (gpu >= static_cast<int>(placement->coords.size()))
        return -1;
    const RankCoords& rc = placement->coords[static_cast<size_t>(gpu)];
    const int lane = lanes > 1 ? std::max(0, rc.edp) % lanes : 0;
    const int row = rc.pp * lanes + lane;
    return row >= 0 && row < static_cast<int>(rows.size()) ? row : -1;
}

std::vector<int> Timeline::gpusOfRow(int row) const {
    std::vector<int> out;
    for (int g = 0; g < gpus; ++g)
        if (rowOfGpu(g) == row)
            out.push_back(g);
    return out;
}

double Timeline::expertShare(int gpu, int layer) const {
    const int lm = layer - first_moe_layer;
    if (lm < 0 || lm >= moe_layers || !placement || gpu < 0 ||
        gpu >= static_cast<int>(placement->coords.size()))
        return 1.0;
    const RankCoords& rc = placement->coords[static_cast<size_t>(gpu)];
    const int lane = lanes > 1 ? std::max(0, rc.edp) % lanes : 0;
    const size_t i = (static_cast<size_t>(lane) * moe_layers + lm) * ep + std::max(0, rc.ep);
    return i < expert_share.size() ? expert_share[i] : 1.0;
}

std::vector<Span> Timeline::spansForGpu(int gpu) const {
    std::vector<Span> out;
    const int row = rowOfGpu(gpu);
    if (row < 0)
        return out;
    const std::vector<Span>& spans = rows[static_cast<size_t>(row)].spans;
    out.reserve(spans.size() + spans.size() / 8);
    bool waits = false;
    for (const Span& s : spans) {
        Span own = s;
        own.gpu = gpu;
        if (s.load_s > 0 && !isCommunication(s.kind)) {
            const double share = expertShare(gpu, s.layer);
            if (share < 1.0) {
                const double saved = s.load_s * (1.0 - share);
                own.load_s = s.load_s * share;
                own.end_s = s.end_s - saved;
                out.push_back(own);
                Span wait = own;
                wait.kind = SpanKind::wait;
                wait.start_s = own.end_s;
                wait.end_s = s.end_s;
                wait.load_s = 0;
                wait.bytes = 0;
                out.push_back(wait);
                waits = true;
                continue;
            }
        }
        out.push_back(own);
    }
    if (waits)
        std::stable_sort(out.begin(), out.end(),
                         [](const Span& a, const Span& b) { return a.start_s < b.start_s; });
    return out;
}

size_t Timeline::spanCount() const {
    size_t n = 0;
    for (const TimelineRow& r : rows)
        n += r.spans.size();
    return n;
}

// ---- step-time distribution ----------------------------------------------------------------

double percentile(std::vector<double> values, double q) {
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(values.size() - 1, lo + 1);
    const double frac = pos - static_cast<double>(lo);
    return values[lo] + (values[hi] - values[lo]) * frac;
}

StepTimeDistribution sampleStepTimes(const Scenario& scenario, int steps,
                                     const TimelineOptions& options) {
    StepTimeDistribution d;
    for (int k = 0; k < std::max(1, steps); ++k) {
        const Report report = evaluate(scenario, static_cast<uint64_t>(k));
        const Timeline t = simulateTimeline(scenario, report, options);
        if (!t.ok()) {
            d.error = t.error;
            return d;
        }
        d.simulated_s.push_back(t.step_time_s);
        d.evaluated_s.push_back(report.step_time_s);
        if (options.progress && !options.progress(k + 1, std::max(1, steps))) {
            d.interrupted = true;
            d.error = "interrupted after " + std::to_string(k + 1) + " of " +
                      std::to_string(std::max(1, steps)) + " samples";
            return d;
        }
    }
    d.p50_s = percentile(d.simulated_s, 0.50);
    d.p90_s = percentile(d.simulated_s, 0.90);
    d.p99_s = percentile(d.simulated_s, 0.99);
    d.mean_s = std::accumulate(d.simulated_s.begin(), d.simulated_s.end(), 0.0) /
               static_cast<double>(d.simulated_s.size());
    return d;
}

// ---- exports -------------------------------------------------------------------------------

std::vector<int> defaultTraceGpus(const Timeline& t, size_t max_spans) {
    std::vector<int> all;
    size_t spans = 0;
    std::vector<int> first(t.rows.size(), -1), hottest(t.rows.size(), -1);
    std::vector<double> best(t.rows.size(), -1.0);
    // Layers whose expert GEMMs each row runs, to rank its GPUs by their own load.
    std::vector<std::vector<int>> row_layers(t.rows.size());
    for (size_t r = 0; r < t.rows.size(); ++r) {
        for (const Span& s : t.rows[r].spans)
            if (s.kind == SpanKind::expert && !s.backward && s.microbatch == 0)
                row_layers[r].push_back(s.layer);
    }
    for (int g = 0; g < t.gpus; ++g) {
        const int r = t.rowOfGpu(g);
        if (r < 0)
            continue;
        all.push_back(g);
        spans += t.rows[static_cast<size_t>(r)].spans.size();
        if (first[static_cast<size_t>(r)] < 0)
            first[static_cast<size_t>(r)] = g;
        double load = 0;
        for (const int l : row_layers[static_cast<size_t>(r)])
            load += t.expertShare(g, l);
        if (load > best[static_cast<size_t>(r)]) {
            best[static_cast<size_t>(r)] = load;
            hottest[static_cast<size_t>(r)] = g;
        }
    }
    if (spans <= max_spans)
        return all;
    std::vector<int> picked;
    for (size_t r = 0; r < t.rows.size(); ++r) {
        if (first[r] >= 0)
            picked.push_back(first[r]);
        if (hottest[r] >= 0 && hottest[r] != first[r])
            picked.push_back(hottest[r]);
    }
    std::sort(picked.begin(), picked.end());
    return picked;
}

namespace {

const char* passName(const Span& s) {
    return s.backward ? "backward" : "forward";
}

std::string threadName(int gpu, TimelineStream stream) {
    return "GPU " + std::to_string(gpu) + " " + toString(stream);
}

} // namespace

std::string chromeTraceJson(const Timeline& t, const std::vector<int>& gpus) {
    JsonWriter json(false);
    json.beginObject();
    json.field("displayTimeUnit", "ms");
    json.key("otherData").beginObject();
    json.field("generator", "moe-plan timeline");
    json.field("schedule", toString(t.schedule));
    json.field("step_time_s", t.step_time_s);
    json.field("stages", t.stages);
    json.field("micro_batches", t.micro_batches);
    json.endObject();
    json.key("traceEvents").beginArray();
    // Metadata first: processes are nodes, threads are GPU streams (tid = gpu * streams + s).
    std::vector<int> nodes;
    for (const int g : gpus)
        if (nodes.empty() || nodes.back() != t.nodeOfGpu(g))
            nodes.push_back(t.nodeOfGpu(g));
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    for (const int n : nodes) {
        json.beginObject()
            .field("name", "process_name")
            .field("ph", "M")
            .field("pid", n)
            .key("args")
            .beginObject()
            .field("name", "node " + std::to_string(n))
            .endObject()
            .endObject();
        json.beginObject()
            .field("name", "process_sort_index")
            .field("ph", "M")
            .field("pid", n)
            .key("args")
            .beginObject()
            .field("sort_index", n)
            .endObject()
            .endObject();
    }
    for (const int g : gpus) {
        const int row = t.rowOfGpu(g);
        if (row < 0)
            continue;
        bool used[kTimelineStreamCount] = {};
        for (const Span& s : t.rows[static_cast<size_t>(row)].spans)
            used[static_cast<int>(s.stream)] = true;
        for (int s = 0; s < kTimelineStreamCount; ++s) {
            if (!used[s])
                continue;
            const int tid = g * kTimelineStreamCount + s;
            json.beginObject()
                .field("name", "thread_name")
                .field("ph", "M")
                .field("pid", t.nodeOfGpu(g))
                .field("tid", tid)
                .key("args")
                .beginObject()
                .field("name", threadName(g, static_cast<TimelineStream>(s)))
                .endObject()
                .endObject();
            json.beginObject()
                .field("name", "thread_sort_index")
                .field("ph", "M")
                .field("pid", t.nodeOfGpu(g))
                .field("tid", tid)
                .key("args")
                .beginObject()
                .field("sort_index", tid)
                .endObject()
                .endObject();
        }
    }
    for (const int g : gpus) {
        const int pid = t.nodeOfGpu(g);
        for (const Span& s : t.spansForGpu(g)) {
            json.beginObject();
            json.field("name", std::string(toString(s.kind)) + (s.backward ? " bwd" : ""));
            json.field("cat", isCommunication(s.kind) ? "communication" : "compute");
            json.field("ph", "X");
            json.field("ts", s.start_s * 1e6);
            json.field("dur", s.duration_s() * 1e6);
            json.field("pid", pid);
            json.field("tid", g * kTimelineStreamCount + static_cast<int>(s.stream));
            json.key("args").beginObject();
            json.key("layer");
            if (s.layer >= 0)
                json.value(s.layer);
            else
                json.null();
            json.key("microbatch");
            if (s.microbatch >= 0)
                json.value(s.microbatch);
            else
                json.null();
            json.field("bytes", s.bytes);
            json.field("pass", passName(s));
            json.endObject();
            json.endObject();
        }
    }
    json.endArray();
    json.endObject();
    return json.str();
}

std::string timelineCsv(const Timeline& t, const std::vector<int>& gpus) {
    std::string out = "gpu,node,stream,kind,pass,layer,microbatch,start_s,end_s,bytes\n";
    for (const int g : gpus) {
        const std::string prefix = std::to_string(g) + "," + std::to_string(t.nodeOfGpu(g)) + ",";
        for (const Span& s : t.spansForGpu(g)) {
            out += prefix;
            out += toString(s.stream);
            out += ',';
            out += toString(s.kind);
            out += ',';
            out += passName(s);
            out += ',';
            out += std::to_string(s.layer);
            out += ',';
            out += std::to_string(s.microbatch);
            out += ',';
            out += formatNumber(s.start_s);
            out += ',';
            out += formatNumber(s.end_s);
            out += ',';
            out += formatNumber(s.bytes);
            out += '\n';
        }
    }
    return out;
}

// ---- names ---------------------------------------------------------------------------------

const char* toString(TimelineStream s) {
    switch (s) {
    case TimelineStream::compute:
        return "compute";
    case TimelineStream::scale_up:
        return "scale-up";
    case TimelineStream::scale_out:
        return "scale-out";
    case TimelineStream::grad_sync:
        return "grad-sync";
    }
    return "?";
}

const char* toString(SpanKind k) {
    switch (k) {
    case SpanKind::attention:
        return "attention";
    case SpanKind::dense_ffn:
        return "dense-ffn";
    case SpanKind::router:
        return "router";
    case SpanKind::expert:
        return "expert";
    case SpanKind::lm_head:
        return "lm-head";
    case SpanKind::weight_grad:
        return "weight-grad";
    case SpanKind::optimizer:
        return "optimizer";
    case SpanKind::wait:
        return "wait";
    case SpanKind::tp:
        return "tp";
    case SpanKind::cp:
        return "cp";
    case SpanKind::dispatch:
        return "dispatch";
    case SpanKind::combine:
        return "combine";
    case SpanKind::pp_send:
        return "pp-send";
    case SpanKind::grad_sync:
        return "grad-sync";
    case SpanKind::param_gather:
        return "param-gather";
    case SpanKind::count:
        break;
    }
    return "?";
}

bool isCommunication(SpanKind k) {
    switch (k) {
    case SpanKind::tp:
    case SpanKind::cp:
    case SpanKind::dispatch:
    case SpanKind::combine:
    case SpanKind::pp_send:
    case SpanKind::grad_sync:
    case SpanKind::param_gather:
        return true;
    default:
        return false;
    }
}

} // namespace moe
