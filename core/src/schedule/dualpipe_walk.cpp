// DualPipe's bubble from its schedule walked chunk by chunk (step_costs.h, dualPipeBubble_s).
//
// deepseek-ai/DualPipe's closed form, (p/2 - 1)(F&B + B - 3W), holds when every chunk costs the
// same. A DeepSeek-V3 pipeline's end stages do not: rank 0 runs the embedding and the dense
// layers in one direction and the LM head and the MTP module in the other, and the forwards of
// the warm-up and the backwards of the cool-down cross every other rank's chunks on their way
// to it. The walk runs each rank's passes in DualPipe.step's order (timeline_schedules.cpp,
// dualPipeActions), each pass starting when the rank is free and its input has arrived, with
// each stage's own chunk times: the same order and dependencies as the timeline, one operation
// per chunk instead of per layer and link, and no send time (the closed form adds the sends on
// the critical path itself).
//
// The walk's cost does not depend on the micro-batch count: past DualPipe's warm-up every rank
// repeats one pair of pairs, so a walk with kSteadyPairs more of them than the fewest DualPipe
// allows has reached the steady state, and more of them add the same period to the step and to
// the pacing rank's work. O(pp^2) passes.

#include "moe/step_costs.h"

#include "timeline_schedules.h"

#include <algorithm>
#include <string>
#include <vector>

namespace moe {

namespace {

/// Pairs of pairs each rank runs beyond the fewest DualPipe allows (2 pp micro-batches).
constexpr int kSteadyPairs = 2;

using timeline_detail::Action;

/// When each chunk pass's output is available, per direction, chunk and micro-batch (< 0:
/// not yet run).
struct PassTimes {
    int pp = 0, half = 0;
    std::vector<double> forward_out, forward_end, backward_out;
    void reset(int p, int per_direction) {
        pp = p;
        half = per_direction;
        const size_t n = static_cast<size_t>(2 * p * per_direction);
        forward_out.assign(n, -1.0);
        forward_end.assign(n, -1.0);
        backward_out.assign(n, -1.0);
    }
    size_t at(int dir, int chunk, int mb) const {
        return (static_cast<size_t>(dir) * static_cast<size_t>(pp) + static_cast<size_t>(chunk)) *
                   static_cast<size_t>(half) +
               static_cast<size_t>(mb);
    }
};

struct RankWalk {
    size_t next = 0;
    double clock_s = 0, busy_s = 0;
    /// Chunks whose weight gradients a zero-bubble backward deferred, run first in first out
    /// from deferred_next (DualPipe's WeightGradStore queue).
    std::vector<int> deferred;
    size_t deferred_next = 0;
    bool late = false; ///< a forward's output leaves after the next pass (late_send)
    size_t late_at = 0;
    void reset() {
        next = deferred_next = late_at = 0;
        clock_s = busy_s = 0;
        deferred.clear();
        late = false;
    }
};

/// The time `a`'s inputs are all available, or < 0 when one has not been produced yet.
double inputsReady(const Action& a, const PassTimes& t) {
    double ready = 0;
    auto need = [&](double at) { ready = at < 0 || ready < 0 ? -1.0 : std::max(ready, at); };
    if (a.type == Action::forward || a.type == Action::pair)
        if (a.chunk_f > 0)
            need(t.forward_out[t.at(a.dir_f, a.chunk_f - 1, a.mb_f)]);
    if (a.type == Action::backward || a.type == Action::pair) {
        if (a.chunk_b < t.pp - 1)
            need(t.backward_out[t.at(a.dir_b, a.chunk_b + 1, a.mb_b)]);
        else
            need(t.forward_end[t.at(a.dir_b, a.chunk_b, a.mb_b)]);
    }
    return ready;
}

} // namespace

double dualPipeBubble_s(const std::vector<DualPipeChunkTimes>& stages, int micro_batches,
                        int rank) {
    const int p = static_cast<int>(stages.size());
    if (p < 2 || rank < 0 || rank >= p)
        return 0;
    if (p % 2 != 0 || micro_batches % 2 != 0 || micro_batches < 2 * p)
        return -1; // DualPipe's rules (validate.cpp says which one a scenario breaks)
    const int m = std::min(micro_batches, 2 * (p + kSteadyPairs));
    // The ranks' passes depend on pp and m alone: kept from the previous call when they match
    // (a search prices one layout shape after another).
    thread_local std::vector<std::vector<Action>> actions;
    thread_local int actions_pp = 0, actions_m = 0;
    thread_local std::string error;
    if (actions_pp != p || actions_m != m) {
        actions_pp = p;
        actions_m = m;
        error.clear();
        actions.resize(static_cast<size_t>(p));
        for (int r = 0; r < p; ++r) {
            actions[static_cast<size_t>(r)].clear();
            timeline_detail::dualPipeActions(p, m, r, actions[static_cast<size_t>(r)], error);
        }
    }
    if (!error.empty())
        return -1;
    thread_local std::vector<RankWalk> walks;
    walks.resize(static_cast<size_t>(p));
    for (RankWalk& w : walks)
        w.reset();
    thread_local PassTimes times;
    size_t remaining = 0;
    for (const std::vector<Action>& a : actions)
        remaining += a.size();
    times.reset(p, m / 2);

    // Runs every rank as far as its inputs allow, until all have finished: each pass starts at
    // max(the rank's clock, its inputs' arrival).
    while (remaining > 0) {
        size_t ran = 0;
        for (int r = 0; r < p; ++r) {
            RankWalk& w = walks[static_cast<size_t>(r)];
            const std::vector<Action>& list = actions[static_cast<size_t>(r)];
            for (; w.next < list.size(); ++w.next) {
                const Action& a = list[w.next];
                const double ready = inputsReady(a, times);
                if (ready < 0)
                    break;
                double d = 0;
                switch (a.type) {
                case Action::forward:
                    d = stages[static_cast<size_t>(a.chunk_f)].forward_s;
                    break;
                case Action::backward: {
                    const DualPipeChunkTimes& c = stages[static_cast<size_t>(a.chunk_b)];
                    d = a.zb ? c.backward_s - c.weight_s : c.backward_s;
                    if (a.zb)
                        w.deferred.push_back(a.chunk_b);
                    break;
                }
                case Action::pair:
                    d = stages[static_cast<size_t>(a.chunk_f)].pair_forward_s +
                        stages[static_cast<size_t>(a.chunk_b)].pair_backward_s;
                    break;
                case Action::weights:
                    if (w.deferred_next == w.deferred.size())
                        return -1;
                    d = stages[static_cast<size_t>(w.deferred[w.deferred_next++])].weight_s;
                    break;
                }
                const double start = std::max(w.clock_s, ready);
                w.clock_s = start + d;
                w.busy_s += d;
                // An output held back by the previous pass leaves once this one has computed.
                if (w.late)
                    times.forward_out[w.late_at] = w.clock_s;
                w.late = false;
                if (a.type == Action::forward || a.type == Action::pair) {
                    const size_t at = times.at(a.dir_f, a.chunk_f, a.mb_f);
                    times.forward_end[at] = w.clock_s;
                    w.late = a.type == Action::forward && a.late_send;
                    w.late_at = at;
                    if (!w.late)
                        times.forward_out[at] = w.clock_s;
                }
                if (a.type == Action::backward || a.type == Action::pair)
                    times.backward_out[times.at(a.dir_b, a.chunk_b, a.mb_b)] = w.clock_s;
                ++ran;
            }
            if (w.next == list.size() && w.late) {
                times.forward_out[w.late_at] = w.clock_s;
                w.late = false;
            }
        }
        if (ran == 0)
            return -1; // a pass waits for one that never runs: not DualPipe's order
        remaining -= ran;
    }
    double end_s = 0;
    for (const RankWalk& w : walks)
        end_s = std::max(end_s, w.clock_s);
    return std::max(0.0, end_s - walks[static_cast<size_t>(rank)].busy_s);
}

} // namespace moe
