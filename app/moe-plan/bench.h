#pragma once
// moe-plan bench: evaluate()'s time on one core, as text or JSON.

#include "moe/scenario.h"

#include <string>
#include <vector>

namespace moe::cli {

struct BenchInput {
    std::string label; ///< the file, or "<built-in default>"
    Scenario scenario;
};

struct BenchRow {
    const BenchInput* input = nullptr;
    int runs = 0;
    double median_s = 0, min_s = 0, max_s = 0;
};

/// Times evaluate() on each scenario: median of `repeat` runs after a warm-up (0 = as many as
/// take about half a second, 5 to 2000).
std::vector<BenchRow> benchEvaluate(const std::vector<BenchInput>& inputs, int repeat);

std::string benchText(const std::vector<BenchRow>& rows);
std::string benchJson(const std::vector<BenchRow>& rows);

} // namespace moe::cli
