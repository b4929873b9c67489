#pragma once
// Text and JSON renderings of scenarios and reports for moe-plan. They only format figures the
// core computed; nothing here models anything.

#include "moe/evaluate.h"
#include "moe/json_writer.h"
#include "moe/placement.h"
#include "moe/scenario.h"
#include "moe/topology.h"

#include <string>
#include <utility>
#include <vector>

namespace moe::cli {

std::string showText(const Scenario& s, const HardwareGraph& graph, const Placement& placement);
std::string showJson(const Scenario& s, const HardwareGraph& graph, const Placement& placement);

/// The step in the one accounting, as both `evaluate --json` and `timeline --json` write it:
/// fields "step_time_s", "breakdown" (item key -> exposed seconds; they sum to the step) and
/// "hidden_s" (item key -> seconds hidden behind other work), into the open object.
void writeStepFields(JsonWriter& json, double step_time_s, const StepBreakdown& breakdown);

std::string reportText(const Scenario& s, const Report& report);
std::string reportJson(const Scenario& s, const Report& report);

/// "TP=1 CP=1 PP=1 DP=64 | EP=8 expert-TP=1 expert-DP=8 | order tp-cp-ep-dp-pp, 1f1b".
std::string layoutLine(const Scenario& s);

/// moe-plan compare (compare_text.cpp).
std::string compareText(const Scenario& a, const Report& ra, const Scenario& b, const Report& rb);
std::string compareJson(const Scenario& a, const Report& ra, const Scenario& b, const Report& rb);

} // namespace moe::cli
