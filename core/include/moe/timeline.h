#pragma once
// The step timeline: an event simulation of one training step over the placed layout, for the
// Gantt chart and trace exports. Every duration comes from the one cost model (step_costs.h,
// the report's Report::costs), so the timeline and the report never disagree about what an
// operation costs; where the report uses closed forms for the schedule (bubble, overlap,
// bucketed sync), the simulation follows the actual dependencies, and Timeline::breakdown
// measures the step in the report's items so the two can be compared item by item.
//
// What is simulated, per GPU: a compute stream and communication streams (scale-up, scale-out,
// and the gradient sync, which NCCL runs on its own communicator), each a FIFO of operations.
// An operation starts when its stream is free and its inputs have arrived. Pipeline schedules
// (GPipe, 1F1B, interleaved 1F1B, DualPipe) fix each stream's order; micro-batches flow between
// stages by sends; a MoE layer's dispatch -> expert GEMMs -> combine chain is paced by the
// slowest member of the EP group; TP collectives sit on the critical path; gradient buckets
// reduce-scatter as soon as the last backward of their layer is done, and the weights'
// all-gather runs under the first forward.
//
// Rows: GPUs whose schedules are identical share one simulated row: a row is a pipeline stage
// and a token stream ("lane", the expert-DP replica whose routing sample the GPU sees). GPUs of
// one row differ only in their own expert load: spansForGpu() shortens the expert GEMMs of the
// GPUs that are not their EP group's hottest and shows the rest as "wait". Memory is rows x
// spans, not GPUs x spans.

#include "moe/evaluate.h"
#include "moe/progress.h"
#include "moe/scenario.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace moe {

enum class TimelineStream : uint8_t { compute, scale_up, scale_out, grad_sync };
constexpr int kTimelineStreamCount = 4;
const char* toString(TimelineStream s);

enum class SpanKind : uint8_t {
    // compute
    attention,
    dense_ffn, ///< dense FFN, or the shared experts of a MoE layer
    router,
    expert,      ///< routed experts' grouped GEMMs
    lm_head,     ///< the model's ends: embedding (layer 0), output head, loss, MTP (last layer)
    weight_grad, ///< deferred weight gradients (DualPipe's zero-bubble W)
    optimizer,
    wait, ///< idle while the EP group's hottest GPU finishes (per-GPU views only)
    // communication
    tp,
    cp,
    dispatch,
    combine,
    pp_send,
    grad_sync,    ///< gradient reduce-scatter (ZeRO >= 1) or all-reduce
    param_gather, ///< all-gather of the updated weights (ZeRO >= 1)
    count
};
constexpr int kSpanKindCount = static_cast<int>(SpanKind::count);
const char* toString(SpanKind k);
bool isCommunication(SpanKind k);

struct Span {
    int gpu = -1;        ///< -1 in a shared row; the GPU in spansForGpu()
    int layer = -1;      ///< global layer index; -1 when not per layer (sends, optimizer)
    int microbatch = -1; ///< -1 when not per micro-batch
    TimelineStream stream = TimelineStream::compute;
    SpanKind kind = SpanKind::attention;
    bool backward = false;
    SpanKind weights_of = SpanKind::count; ///< weight_grad spans: the compute they belong to
    double start_s = 0;
    double end_s = 0;
    // Single precision: display detail, as the simulation keeps them, and a span in 40 bytes
    // (a 16,384-GPU DeepSeek-V3 step has ~2 million spans).
    float bytes = 0; ///< sent per GPU (communication spans)
    /// Compute: of the duration, the hottest rank's expert work (per-GPU views scale it).
    /// All-to-alls: of the duration, what the busiest receiver adds over the mean load (the
    /// tail of the transfer; the step's breakdown charges it as imbalance wait).
    float load_s = 0;
    double duration_s() const { return end_s - start_s; }
};
static_assert(sizeof(Span) == 40, "a span's size is the timeline's memory");

/// The simulated schedule of every GPU of one pipeline stage and one token stream.
struct TimelineRow {
    int stage = 0;
    int lane = 0;
    std::vector<Span> spans; ///< sorted by start
};

/// One step of the critical path: rows[row].spans[span].
struct CriticalStep {
    int row = 0;
    int span = 0;
};

struct Timeline {
    Timeline() = default;
    Timeline(const Timeline&) = default;
    Timeline(Timeline&&) = default;
    Timeline& operator=(const Timeline&) = default;
    Timeline& operator=(Timeline&&) = default;
    /// Hands the rows' span arrays to the next simulation (core/src/schedule/recycled_arrays.h).
    ~Timeline();

    std::string error; ///< non-empty when the schedule could not be simulated (no spans then)
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    int stages = 1;
    int lanes = 1;
    int micro_batches = 1;
    int gpus = 0;
    int gpus_per_node = 1;
    double step_time_s = 0;
    size_t operations = 0; ///< simulated operations (the benchmark's unit)

    std::vector<TimelineRow> rows; ///< index stage * lanes + lane
    /// From the step's start to its end, contiguous: each span starts when the previous ends.
    std::vector<CriticalStep> critical_path;
    /// The row the step's breakdown follows: the one holding the most critical-path time.
    int reference_row = 0;
    /// The simulated step by item, in the same accounting as evaluate()'s Report::step (the
    /// items sum to step_time_s; see stepBreakdown in timeline_simulation.cpp): every instant of
    /// the reference row's step is its compute by kind, or, while its compute stream idles, what
    /// held up its next operation, followed back along the dependencies: its own transfers
    /// (exposed all-to-all, TP, CP, pipeline sends, gradient sync), another stage's work
    /// (pipeline bubble) or the optimizer. overlapped_s: the row's transfer time hidden.
    StepBreakdown breakdown;

    bool ok() const { return error.empty(); }
    int rowOfGpu(int gpu) const;
    int nodeOfGpu(int gpu) const { return gpus_per_node > 0 ? gpu / gpus_per_node : 0; }
    std::vector<int> gpusOfRow(int row) const;
    /// The GPU's own schedule, sorted by start: its row, with its expert GEMMs at its own load
    /// and "wait" spans until its EP group's hottest GPU finishes.
    std::vector<Span> spansForGpu(int gpu) const;
    /// Per-GPU time share of the lane's hottest rank's expert work in `layer` (1 = the hottest).
    double expertShare(int gpu, int layer) const;
    size_t spanCount() const;

    // Mapping of GPUs to rows (filled by the simulation; see rowOfGpu).
    std::shared_ptr<const Placement> placement; ///< null for hand-built inputs: GPU g = row g
    int ep = 1;
    int first_moe_layer = 0;
    int moe_layers = 0;
    /// own expert time / the lane's hottest, [(lane * moe_layers + moe_layer) * ep + ep_rank]
    std::vector<float> expert_share;
    /// mean-load expert time / the lane's hottest, [lane * moe_layers + moe_layer]
    std::vector<float> mean_share;
};

/// One layer's work for one micro-batch on one GPU, paced by its lane's EP group.
struct LayerCosts {
    int layer = 0;
    bool moe = false;
    double attention_fwd_s = 0, attention_bwd_s = 0;
    double cp_fwd_s = 0, cp_bwd_s = 0, cp_fwd_bytes = 0, cp_bwd_bytes = 0;
    /// One TP op: two calls (all-gather + reduce-scatter) around attention, two around the MLP.
    double tp_fwd_s = 0, tp_bwd_s = 0, tp_fwd_bytes = 0, tp_bwd_bytes = 0;
    double ffn_fwd_s = 0, ffn_bwd_s = 0; ///< dense FFN, or the shared experts
    double router_fwd_s = 0, router_bwd_s = 0;
    double expert_fwd_s = 0, expert_bwd_s = 0; ///< the lane's hottest EP rank
    double dispatch_fwd_s = 0, combine_fwd_s = 0, combine_bwd_s = 0, dispatch_bwd_s = 0;
    /// Of each all-to-all, what the lane's busiest receiver adds over the mean load.
    double dispatch_fwd_wait_s = 0, combine_fwd_wait_s = 0, combine_bwd_wait_s = 0,
           dispatch_bwd_wait_s = 0;
    double dispatch_bytes = 0, combine_bytes = 0;
    double lm_head_fwd_s = 0, lm_head_bwd_s = 0; ///< embedding, LM head and MTP (the ends)
    /// Of each backward above, the weight-gradient GEMMs (LayerPassCosts' *_wgrad_s): what a
    /// zero-bubble schedule defers to a W step, and what a fused pair's transfers do not wait
    /// for. At most the backward.
    double attention_wgrad_s = 0, ffn_wgrad_s = 0, router_wgrad_s = 0, expert_wgrad_s = 0,
           lm_head_wgrad_s = 0;
    /// The layer's gradient bucket (dense + expert parameters).
    double grad_sync_s = 0, param_gather_s = 0, sync_bytes = 0;
};

/// Everything the simulation needs, as plain durations (tests build these by hand).
struct TimelineInput {
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    int pp = 1;
    int vpp = 1;
    int micro_batches = 1;
    int lanes = 1;
    int layers = 1;
    /// Layers of chunk c are [chunk_first[c], chunk_first[c + 1]); chunk c runs on stage c % pp.
    std::vector<int> chunk_first;
    std::vector<LayerCosts> costs;   ///< [lane * layers + layer]
    std::vector<double> optimizer_s; ///< per stage
    double grad_norm_s = 0;          ///< gradient clipping's all-reduce, once per rank
    DpOverlap dp_overlap = DpOverlap::grad_reduce_and_param_gather;
    /// Combined 1F1B (training.ep_overlap): the interleaved (or unpipelined) schedule's steady
    /// state runs each forward fused with the backward beside it.
    bool combined_1f1b = false;
    double pp_send_s = 0;
    double pp_bytes = 0;
    TimelineStream ep_stream = TimelineStream::scale_up;
    TimelineStream tp_stream = TimelineStream::scale_up;
    TimelineStream cp_stream = TimelineStream::scale_up;
    TimelineStream pp_stream = TimelineStream::scale_out;

    // Per-GPU views (optional; see Timeline).
    int gpus = 0; ///< 0 = one GPU per row
    int gpus_per_node = 1;
    std::shared_ptr<const Placement> placement;
    int ep = 1;
    int first_moe_layer = 0;
    int moe_layers = 0;
    std::vector<float> expert_share;
    std::vector<float> mean_share;
};

struct TimelineOptions {
    /// Every transfer takes no time (the closed-form oracles of the tests).
    bool zero_communication = false;
    /// Every EP rank at the mean load: one lane, no hot GPU.
    bool uniform_load = false;
    /// Guard: inputs needing more operations than this are refused with an error.
    size_t max_operations = 20'000'000;
    /// sampleStepTimes: called after each routing sample (done, total); false stops it.
    ProgressFn progress;
};

/// Durations of one step of a validated scenario, from its report.
TimelineInput timelineInput(const Scenario& scenario, const Report& report,
                            const TimelineOptions& options = {});
/// Simulates the step; never hangs (a circular wait or an oversized input is an error).
Timeline simulateTimeline(const TimelineInput& input, const TimelineOptions& options = {});
Timeline simulateTimeline(const Scenario& scenario, const Report& report,
                          const TimelineOptions& options = {});

/// Step times over resampled routing: step k uses evaluate(scenario, k) (k = 0..steps-1).
struct StepTimeDistribution {
    std::string error;
    bool interrupted = false; ///< options.progress asked to stop (error says so too)
    std::vector<double> simulated_s;
    std::vector<double> evaluated_s; ///< evaluate()'s closed-form step time for the same sample
    double p50_s = 0, p90_s = 0, p99_s = 0, mean_s = 0;
};
StepTimeDistribution sampleStepTimes(const Scenario& scenario, int steps,
                                     const TimelineOptions& options = {});
/// Percentile q in [0, 1] by linear interpolation between order statistics (0 when empty).
double percentile(std::vector<double> values, double q);

/// GPUs a trace shows by default: all of them when their spans stay under `max_spans`,
/// otherwise the first and the hottest GPU of every row.
std::vector<int> defaultTraceGpus(const Timeline& timeline, size_t max_spans = 2'000'000);
/// Chrome trace event format (Perfetto, chrome://tracing): one process per node, one thread
/// per GPU stream, "X" spans with ts/dur in microseconds and args {layer, microbatch, bytes}.
std::string chromeTraceJson(const Timeline& timeline, const std::vector<int>& gpus);
/// One line per span: gpu,node,stream,kind,pass,layer,microbatch,start_s,end_s,bytes.
std::string timelineCsv(const Timeline& timeline, const std::vector<int>& gpus);

} // namespace moe
