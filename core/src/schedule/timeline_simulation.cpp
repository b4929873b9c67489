// The step simulation: checks the input, builds and runs the operations of one training step
// on per-GPU streams and reads the result back (rows, critical path, breakdown).
//
// Rows. A pipeline stage's GPUs run the same schedule, except that the expert GEMMs of a MoE
// layer last as long as their own token count. The EP group's all-to-all completes when its
// busiest member is done, so the group advances at the pace of its hottest rank; GPUs of
// different expert-DP replicas ("lanes") see different routing samples and advance at their own
// group's pace, and meet only in the gradient sync. One row is simulated per (stage, lane) at the
// lane's pace; per-GPU views shorten each expert GEMM to the GPU's own load and show the rest as
// a wait (Timeline::spansForGpu).
//
// Where the parts live: timeline_engine.h (the streams and their completion), timeline_schedules
// (each pipeline schedule's order of passes), timeline_builder (the operations of a step),
// timeline_input (durations from the performance model), timeline_export (trace and CSV),
// timeline.cpp (queries on the result, the step-time distribution and names).

#include "moe/timeline.h"

#include "recycled_arrays.h"
#include "timeline_builder.h"
#include "timeline_engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace moe {

using timeline_detail::Engine;
using timeline_detail::Id;
using timeline_detail::kNone;
using timeline_detail::Op;

namespace {

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
    const Engine::Ops& ops = engine.ops;
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
        const double dur = op.end - op.start;
        if (op.load > 0 && moe_layer >= 0 && moe_layer < t.moe_layers && dur > 0) {
            const size_t i = static_cast<size_t>(lane) * t.moe_layers + moe_layer;
            const double mean =
                std::clamp(i < t.mean_share.size() ? double(t.mean_share[i]) : 1.0, 0.0, 1.0);
            const double load = d * std::min(1.0, op.load / dur);
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

/// The rows' spans, read back from the engine after the run. Operations marked critical
/// (Op::kCritical) record their span's index in their `waiter` field, free after the run;
/// no other operation is written, so the read-back does not write the large operation array
/// back to memory.
void readRows(Engine& engine, Timeline& t) {
    // Each row merges its stream FIFOs (each already in start order) into one sorted list.
    Engine::Ops& ops = engine.ops;
    const int rows = t.stages * t.lanes;
    t.rows.resize(static_cast<size_t>(rows));
    auto& span_arrays = timeline_detail::RecycledArrays<Span>::instance();
    for (int r = 0; r < rows; ++r) {
        TimelineRow& row = t.rows[static_cast<size_t>(r)];
        row.stage = r / t.lanes;
        row.lane = r % t.lanes;
        row.spans = span_arrays.take(engine.rowOps(r));
        constexpr double kEnded = std::numeric_limits<double>::infinity();
        auto startOf = [&](Id id) {
            return id == kNone ? kEnded : ops[static_cast<size_t>(id)].start;
        };
        Id head[kTimelineStreamCount];
        double head_start[kTimelineStreamCount];
        for (int s = 0; s < kTimelineStreamCount; ++s) {
            head[s] =
                engine.queue(static_cast<size_t>(r) * kTimelineStreamCount + static_cast<size_t>(s))
                    .head;
            head_start[s] = startOf(head[s]);
        }
        // Runs: the stream that starts first keeps going while its next operation still
        // precedes every other stream's head (ties to the lower stream index), so most spans
        // cost one comparison instead of a four-way minimum.
        for (;;) {
            // The leading stream and the runner-up, each the lowest index among equals.
            int best = 0;
            double limit = kEnded;
            int limit_stream = kTimelineStreamCount;
            for (int s = 1; s < kTimelineStreamCount; ++s) {
                if (head_start[s] < head_start[best]) {
                    limit = head_start[best];
                    limit_stream = best;
                    best = s;
                } else if (head_start[s] < limit) {
                    limit = head_start[s];
                    limit_stream = s;
                }
            }
            Id id = head[best];
            if (id == kNone)
                break;
            double start = head_start[best];
            do {
                Op& op = ops[static_cast<size_t>(id)];
                Span& span = row.spans.emplace_back();
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
                if (op.critical())
                    op.waiter = static_cast<Id>(row.spans.size() - 1);
                id = op.next;
                start = startOf(id);
            } while (id != kNone && (start < limit || (start == limit && best < limit_stream)));
            head[best] = id;
            head_start[best] = start;
        }
        t.operations += row.spans.size();
    }
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

    // The arrays stay with the thread for its next simulation (the app re-simulates on every
    // edit, sampleStepTimes once per routing sample), unless they are far larger than needed.
    thread_local Engine::Storage storage;
    const size_t estimate = static_cast<size_t>(operationEstimate(in));
    if (storage.ops.capacity() > 8 * estimate + 4096)
        storage = {};
    Engine engine(rows, storage, estimate);
    t.error = timeline_detail::buildStepOperations(in, engine);
    if (!t.ok())
        return t;
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

    // The critical path walks back from the step's last operation through whatever decided
    // each start; its operations are marked so that readRows records their spans.
    Engine::Ops& ops = engine.ops;
    const Id last = engine.last();
    std::vector<Id> path;
    for (Id id = last; id != kNone; id = ops[static_cast<size_t>(id)].crit) {
        Op& op = ops[static_cast<size_t>(id)];
        if (op.row == kNone)
            continue;
        op.flags |= Op::kCritical;
        path.push_back(id);
    }
    readRows(engine, t);
    if (last == kNone)
        return t;
    t.step_time_s = ops[static_cast<size_t>(last)].end;
    t.critical_path.reserve(path.size());
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
        const Op& op = ops[static_cast<size_t>(*it)];
        t.critical_path.push_back({op.row, op.waiter});
    }
    stepBreakdown(engine, last, t);
    return t;
}

Timeline simulateTimeline(const Scenario& scenario, const Report& report,
                          const TimelineOptions& options) {
    return simulateTimeline(timelineInput(scenario, report, options), options);
}

} // namespace moe
