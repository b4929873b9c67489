#pragma once
// moe-plan bench: evaluate()'s time on one core, as text or JSON.

#include "moe/scenario.h"

#include <string>
#include <vector>

namespace moe::cli {

struct BenchInput {
    std::string label; ///< the file, or "<built-in default>"
    Scenario scenario;
    /// --scaling: why the layout shape does not fit this size ("" = it does, and is timed).
    std::string refused;
    int refused_gpus = 0;
};

/// The cluster sizes `bench --scaling` times each layout shape at.
constexpr int kScalingGpus[] = {64, 512, 2048, 16384, 65536};

/// Each input's layout shape at every kScalingGpus size (scaledDataParallel); sizes the shape
/// does not fit are kept with the reason, and not timed.
std::vector<BenchInput> scalingInputs(const std::vector<BenchInput>& shapes);

struct BenchRow {
    const BenchInput* input = nullptr;
    int runs = 0;
    double median_s = 0, min_s = 0, max_s = 0;
    /// What a view pays on first reading the per-GPU detail evaluate() leaves for later: the
    /// hardware graph and the bytes on every link (median of a few reports).
    double detail_median_s = 0;
};

/// Times evaluate() on each scenario: median of `repeat` runs after a warm-up (0 = as many as
/// take about half a second, 5 to 2000).
std::vector<BenchRow> benchEvaluate(const std::vector<BenchInput>& inputs, int repeat);

std::string benchText(const std::vector<BenchRow>& rows);

/// One scenario's layout search on one thread (bench --search).
struct SearchBenchRow {
    const BenchInput* input = nullptr;
    int runs = 0;
    double median_cpu_s = 0, min_cpu_s = 0;
    int64_t candidates = 0, evaluated = 0;
    int64_t pruned = 0; ///< RejectReason::bound
};
/// Times searchLayouts() with its defaults on one thread: the median CPU time of `repeat` runs
/// (0 = 3).
std::vector<SearchBenchRow> benchSearch(const std::vector<BenchInput>& inputs, int repeat);
std::string searchBenchText(const std::vector<SearchBenchRow>& rows);
/// The inputs that were not timed, with why ("" when every input was).
std::string refusedText(const std::vector<BenchInput>& inputs);
std::string benchJson(const std::vector<BenchRow>& rows, const std::vector<SearchBenchRow>& search,
                      const std::vector<BenchInput>& inputs);

} // namespace moe::cli
