// The compute stream's order of passes per pipeline stage, for each pipeline schedule.
// Private to core/src/schedule (used by timeline_builder.cpp and dualpipe_walk.cpp).

#pragma once

#include "moe/timeline.h"

#include <cstdint>
#include <string>
#include <vector>

namespace moe::timeline_detail {

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

/// The passes of pipeline stage `rank` in the order its compute stream runs them; `error` is
/// set when the schedule does not cover every micro-batch.
std::vector<Action> stageActions(const TimelineInput& in, int rank, std::string& error);

/// DualPipe's passes on rank `rank` of `pp` for `micro_batches` (both directions together),
/// appended to `out`.
void dualPipeActions(int pp, int micro_batches, int rank, std::vector<Action>& out,
                     std::string& error);

} // namespace moe::timeline_detail
