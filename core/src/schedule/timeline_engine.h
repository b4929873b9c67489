// The step simulation's engine: operations on per-GPU streams, completed in dependency order.
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
// Private to core/src/schedule: the builder (timeline_builder.cpp) fills it, simulateTimeline
// (timeline_simulation.cpp) runs it and reads the result back.

#pragma once

#include "moe/timeline.h"

#include <cstdint>
#include <string>
#include <vector>

namespace moe::timeline_detail {

using Id = int32_t;
constexpr Id kNone = -1;

struct Op {
    double start = 0;
    double end = 0; ///< until the operation runs: its duration
    float load = 0; ///< single precision: display detail, and keeps an operation in 56 bytes
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
    bool critical() const { return flags & kCritical; }
    /// weight_grad operations: the compute whose weight gradients they are (high nibble).
    SpanKind weightsOf() const { return static_cast<SpanKind>(flags >> 4); }
    /// kCritical: on the step's critical path (set after the run, for the read-back).
    static constexpr uint8_t kBackward = 1, kDone = 2, kCritical = 4;
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

    /// The operation and input arrays, which a caller may keep between simulations (see
    /// simulateTimeline): at 16,384 GPUs they hold ~2 million operations, and touching that much
    /// fresh memory costs more in page faults than the simulation does.
    using Ops = std::vector<Op>;
    using Preds = std::vector<Id>;
    struct Storage {
        Ops ops;
        Preds preds;
    };

    /// Empties `storage` (keeping its capacity, reserved for `operations`) and works in it.
    Engine(int rows, Storage& storage, size_t operations)
        : ops(storage.ops)
        , preds(storage.preds)
        , queues_(static_cast<size_t>(rows) * kTimelineStreamCount)
        , row_ops_(static_cast<size_t>(rows), 0) {
        ops.clear();
        preds.clear();
        ops.reserve(operations);
        preds.reserve(2 * operations);
    }

    Ops& ops;
    Preds& preds; ///< kNone entries are ignored (unfilled or absent inputs)

    Id add(int row, TimelineStream stream, SpanKind kind, bool backward, int layer, int mb,
           double dur, double load, double bytes, const Id* deps, int ndeps,
           SpanKind weights_of = SpanKind::count) {
        // Filled in place: an Op assembled on the stack and copied in stalls on the
        // store-to-load forward of its narrow fields (perf: the build's hottest instruction).
        const Id id = static_cast<Id>(ops.size());
        Op& op = ops.emplace_back();
        op.end = dur;
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
        op.npreds = static_cast<uint8_t>(ndeps);
        for (int i = 0; i < ndeps; ++i)
            preds.push_back(deps[i]);
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
        const Id id = static_cast<Id>(ops.size());
        Op& op = ops.emplace_back();
        op.pred_begin = static_cast<int32_t>(preds.size());
        op.npreds = static_cast<uint8_t>(ndeps + (slot ? 1 : 0));
        for (int i = 0; i < ndeps; ++i)
            preds.push_back(deps[i]);
        if (slot) {
            *slot = preds.size();
            preds.push_back(kNone);
        }
        return id;
    }

    const Queue& queue(size_t q) const { return queues_[q]; }
    size_t rowOps(int row) const { return row_ops_[static_cast<size_t>(row)]; }

    /// Runs every stream to its end; false (with the reason) if some stream can never proceed.
    bool run(std::string& error) {
        const size_t queues = queues_.size();
        last_done_.assign(queues, kNone);
        last_op_ = kNone;
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
                const double dur = op.end;
                settle(op, start, crit);
                op.end = op.start + dur;
                prev = head;
                q.cursor = op.next;
                for (int32_t w = op.waiter; w >= 0;) {
                    const int32_t next = queues_[static_cast<size_t>(w)].next_waiter;
                    queues_[static_cast<size_t>(w)].next_waiter = -1;
                    work.push_back(w);
                    w = next;
                }
                op.waiter = kNone;
                // The step ends with its last operation (ties: the last one made).
                if (last_op_ == kNone || op.end > last_op_end_ ||
                    (op.end == last_op_end_ && head > last_op_)) {
                    last_op_ = head;
                    last_op_end_ = op.end;
                }
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

    /// The stream operation that ends last (ties: the last one made); kNone before run() or
    /// without operations.
    Id last() const { return last_op_; }
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
    Id last_op_ = kNone;
    double last_op_end_ = 0;
    int stuck_queue_ = -1;
    Id stuck_op_ = kNone;
};

} // namespace moe::timeline_detail
