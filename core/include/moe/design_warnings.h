#pragma once
// What a finished report says an architect should act on: the design warnings (warnings.h) it
// raises, with the thresholds named there. Reads the report only; no physics here.

#include "moe/report.h"
#include "moe/scenario.h"
#include "moe/warnings.h"

#include <vector>

namespace moe {

/// The warnings of a finished report (its throughput, memory, load and economics), most severe
/// first.
std::vector<DesignWarning> designWarnings(const Scenario& scenario, const Report& report);

} // namespace moe
