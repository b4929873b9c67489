// Pipeline schedules (the compute stream's order of passes per stage):
//   GPipe: all forwards, then all backwards (Huang et al. 2019).
//   1F1B: pp - stage - 1 warm-up forwards, then one forward and one backward alternately, then
//     the remaining backwards (PipeDream-Flush; Megatron-LM forward_backward_pipelining).
//   Interleaved 1F1B: vpp chunks per stage, chunk c = j * pp + stage; warm-up
//     (pp - stage - 1) * 2 + (vpp - 1) * pp chunk forwards, virtual micro-batch k is chunk
//     (k mod pp*vpp) / pp of micro-batch (k / (pp*vpp)) * pp + k mod pp (Megatron-LM
//     forward_backward_pipelining_with_interleaving, all warm-up when micro-batches = pp).
//   Combined 1F1B (training.ep_overlap; Megatron-Core combined_1f1b.py): interleaved or
//     unpipelined, each steady-state forward fused with the backward beside it into one
//     overlapped pair, as DualPipe's.
//   DualPipe: the eight phases of deepseek-ai/DualPipe's DualPipe.step: two directions, rank r
//     holding chunk r of the forward direction and chunk pp-1-r of the reverse one, overlapped
//     forward & backward pairs (one micro-batch's communication under the other's compute),
//     zero-bubble splitting of the backward into input gradients (B) and deferred weight
//     gradients (W = the weight GEMMs' half of backward).

#include "timeline_schedules.h"

#include <algorithm>

namespace moe::timeline_detail {

namespace {

template <typename F, typename B, typename FB>
void oneFOneB(const TimelineInput& in, int rank, F f, B b, FB fb) {
    const int m = in.micro_batches;
    // Combined 1F1B without a pipeline: the first forward alone, then forward i + 1 fused
    // with backward i (Megatron-Core, combined_1f1b_schedule_for_no_pipelining).
    const int warmup = std::min(in.combined_1f1b && in.pp == 1 ? 1 : in.pp - rank - 1, m);
    for (int i = 0; i < warmup; ++i)
        f(rank, i);
    for (int i = 0; i < m - warmup; ++i) {
        if (in.combined_1f1b && in.pp == 1) {
            fb(rank, warmup + i, rank, i);
            continue;
        }
        f(rank, warmup + i);
        b(rank, i);
    }
    for (int i = m - warmup; i < m; ++i)
        b(rank, i);
}

} // namespace

/// deepseek-ai/DualPipe, DualPipe.step: phase numbers are local (phase 0 is the forward
/// direction on the first half of the ranks and the reverse one on the second half).
void dualPipeActions(int p, int micro_batches, int rank, std::vector<Action>& a,
                     std::string& error) {
    const int half = p / 2;
    const int hr = std::min(rank, p - 1 - rank);
    const int half_chunks = micro_batches / 2; // micro-batches per direction
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

std::vector<Action> stageActions(const TimelineInput& in, int rank, std::string& error) {
    const int p = in.pp;
    const int m = in.micro_batches;
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
    // Combined 1F1B's fused step: the forward and the backward of two micro-batches as one
    // overlapped pair (the same pair DualPipe runs).
    auto fb = [&](int chunk_f, int mb_f, int chunk_b, int mb_b) {
        Action x;
        x.type = Action::pair;
        x.chunk_f = chunk_f;
        x.mb_f = mb_f;
        x.chunk_b = chunk_b;
        x.mb_b = mb_b;
        a.push_back(x);
    };
    switch (in.schedule) {
    case PipelineSchedule::gpipe:
        for (int i = 0; i < m; ++i)
            f(rank, i);
        for (int i = 0; i < m; ++i)
            b(rank, i);
        break;
    case PipelineSchedule::one_f_one_b:
        oneFOneB(in, rank, f, b, fb);
        break;
    case PipelineSchedule::interleaved: {
        const int v = in.vpp;
        if (v == 1) {
            oneFOneB(in, rank, f, b, fb);
            break;
        }
        const int total = m * v;
        const int group = p * v;
        // Combined 1F1B warms up one chunk more, so a fused pair never holds the forward and
        // the backward of one micro-batch (Megatron-Core schedules.py,
        // get_pp_rank_microbatches: num_warmup_microbatches += 1).
        const int extra = in.combined_1f1b ? 1 : 0;
        const int warmup =
            m == p ? total : std::min((p - rank - 1) * 2 + (v - 1) * p + extra, total);
        auto mb_of = [&](int k) { return (k / group) * p + k % p; };
        auto fchunk = [&](int k) { return ((k % group) / p) * p + rank; };
        auto bchunk = [&](int k) { return (v - 1 - (k % group) / p) * p + rank; };
        for (int k = 0; k < warmup; ++k)
            f(fchunk(k), mb_of(k));
        for (int k = 0; k < total - warmup; ++k) {
            if (in.combined_1f1b) {
                fb(fchunk(k + warmup), mb_of(k + warmup), bchunk(k), mb_of(k));
                continue;
            }
            f(fchunk(k + warmup), mb_of(k + warmup));
            b(bchunk(k), mb_of(k));
        }
        for (int k = total - warmup; k < total; ++k)
            b(bchunk(k), mb_of(k));
        break;
    }
    case PipelineSchedule::dualpipe:
        dualPipeActions(p, m, rank, a, error);
        break;
    }
    return a;
}

} // namespace moe::timeline_detail
