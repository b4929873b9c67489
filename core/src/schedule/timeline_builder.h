// Builds the operations of one training step (every pass, transfer, gradient bucket and the
// optimizer, per row) into the engine. Private to core/src/schedule.

#pragma once

#include "timeline_engine.h"

#include <string>

namespace moe::timeline_detail {

/// Adds the step's operations to `engine` (one row per stage and lane); an error when the
/// schedule is inconsistent. `in` has passed checkInput.
std::string buildStepOperations(const TimelineInput& in, Engine& engine);

} // namespace moe::timeline_detail
