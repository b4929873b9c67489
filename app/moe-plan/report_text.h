#pragma once
// Text and JSON renderings of scenarios and reports for moe-plan. They only format figures the
// core computed; nothing here models anything.

#include "moe/evaluate.h"
#include "moe/placement.h"
#include "moe/scenario.h"
#include "moe/topology.h"

#include <string>
#include <utility>
#include <vector>

namespace moe::cli {

std::string showText(const Scenario& s, const HardwareGraph& graph, const Placement& placement);
std::string showJson(const Scenario& s, const HardwareGraph& graph, const Placement& placement);

std::string reportText(const Scenario& s, const Report& report);
std::string reportJson(const Scenario& s, const Report& report);

std::string compareText(const Scenario& a, const Report& ra, const Scenario& b, const Report& rb);
std::string compareJson(const Scenario& a, const Report& ra, const Scenario& b, const Report& rb);

/// Times evaluate() on each scenario (median of `repeat` runs; 0 = automatic).
std::string benchText(const std::vector<std::pair<std::string, Scenario>>& scenarios, int repeat);

} // namespace moe::cli
