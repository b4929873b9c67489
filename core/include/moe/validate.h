#pragma once
// Semantic checks of a scenario: ranges and the rules that tie fields together (degrees that
// multiply to the GPU count, experts that divide over EP, batch divisibility, schedules).
// Used by the loader (with a SourceMap, so messages carry lines) and by editors (without).

#include "moe/diagnostics.h"
#include "moe/scenario.h"
#include "moe/source_map.h"

namespace moe {

Diagnostics validateScenario(const Scenario& scenario, const SourceMap* source = nullptr);

} // namespace moe
