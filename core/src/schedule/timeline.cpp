// The step timeline's queries (rows and GPUs, per-GPU spans), the step-time distribution over
// resampled routing, and the names of streams and span kinds. The simulation itself is in
// timeline_simulation.cpp.

#include "moe/timeline.h"

#include "recycled_arrays.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace moe {

Timeline::~Timeline() {
    auto& store = timeline_detail::RecycledArrays<Span>::instance();
    for (TimelineRow& row : rows)
        store.giveBack(row.spans);
}

// ---- queries -------------------------------------------------------------------------------

int Timeline::rowOfGpu(int gpu) const {
    if (gpu < 0 || gpu >= gpus)
        return -1;
    if (!placement)
        return gpu < static_cast<int>(rows.size()) ? gpu : -1;
    if (gpu >= placement->gpuCount())
        return -1;
    const RankCoords& rc = placement->coordsOf(gpu);
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
    if (lm < 0 || lm >= moe_layers || !placement || gpu < 0 || gpu >= placement->gpuCount())
        return 1.0;
    const RankCoords& rc = placement->coordsOf(gpu);
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
