#pragma once
// Sweeps: a scenario evaluated at every point of a grid of field values (the cross product of
// axes such as layout.ep=1,2,4,8 and cluster.nodes=8..64:8), each point as its own --set
// overrides with the file's own validation, on every core, optionally only one shard of the
// points (moe/shard.h) so a cluster job array splits a study. The core enumerates, evaluates and
// orders the points; what a row looks like is the caller's (moe-plan writes JSONL or CSV).

#include "moe/evaluate.h"
#include "moe/progress.h"
#include "moe/scenario_io.h"
#include "moe/shard.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace moe {

/// The most points a grid may have (a million points are about a GB of JSONL rows).
constexpr int64_t kMaxSweepPoints = 100'000'000;

/// One axis: a field path as in --set and the values it takes, in the order given.
struct SweepAxis {
    std::string key;
    std::vector<std::string> values;
};

/// Parses "key=v1,v2,..." where a value may be an integer range "A..B" (step 1) or "A..B:S";
/// commas inside [...] or {...} belong to the value (a flow list such as [3,3,3]). Empty
/// values, an unknown field path and ranges of more than kMaxSweepPoints values are errors.
Diagnostics parseSweepAxis(const std::string& spec, SweepAxis& axis);

struct SweepGrid {
    std::vector<SweepAxis> axes; ///< the first varies slowest, the last fastest

    int64_t points() const;
    /// The overrides (key, value) of point `index` (0 .. points()-1), one per axis in order.
    std::vector<std::pair<std::string, std::string>> point(int64_t index) const;
};

/// Builds the grid from --grid specs and --pin key=value (a one-value axis, placed first so
/// rows list it first). Each key at most once; the grid at most kMaxSweepPoints points.
Diagnostics makeSweepGrid(const std::vector<std::string>& grids,
                          const std::vector<std::string>& pins, SweepGrid& grid);

/// What a row is made from.
struct SweepPoint {
    int64_t index = 0;
    std::vector<std::pair<std::string, std::string>> overrides;
    LoadResult loaded;              ///< the scenario with the overrides, or why it is invalid
    const Report* report = nullptr; ///< null when the scenario did not load
};

struct SweepOptions {
    Shard shard;     ///< which points to run
    int threads = 0; ///< 0 = every core
    ProgressFn progress;
};

struct SweepRun {
    int64_t points = 0;  ///< rows emitted
    int64_t invalid = 0; ///< of which the scenario did not load
    bool interrupted = false;
    int threads = 1;
    double elapsed_s = 0;
};

/// Evaluates the shard's points of `grid` over `base` (its text, label and base directory, as
/// loadScenarioTextWithOverrides takes them) on worker threads. `row` turns a point into its
/// row and runs on the workers (it must be thread-safe); `emit` receives the rows on the
/// calling thread in point order, as they become ready.
SweepRun runSweep(const std::string& base_text, const std::string& label,
                  const std::string& base_dir, const SweepGrid& grid, const SweepOptions& options,
                  const std::function<std::string(const SweepPoint&)>& row,
                  const std::function<void(const std::string&)>& emit);

} // namespace moe
