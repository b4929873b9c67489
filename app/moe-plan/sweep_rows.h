#pragma once
// The rows of moe-plan sweep: one JSON object per grid point, on one line (JSONL), with the
// point's overrides, the effective scenario and layout, and the headline figures (or the
// errors when that point's scenario is invalid); CSV is the same rows flattened
// ("layout.tp", "breakdown.all_to_all"). schemas/sweep-row.schema.json describes a row.

#include "moe/sweep.h"

#include <string>
#include <vector>

namespace moe::cli {

/// Identifies a study: the base scenario's text, the grid and the tool version. Rows of
/// different studies are not merged.
std::string sweepStudy(const std::string& base_text, const SweepGrid& grid);

/// One JSONL row (with its newline).
std::string sweepRowJson(const SweepPoint& point, const std::string& study, int64_t points);

/// Writes rows as CSV: a header from the first row's flattened keys, then one line per row.
class CsvRows {
public:
    /// The CSV lines (the header first, on the first call) of one JSONL row; the reason in
    /// `problem` when the row is not a JSON object or has other keys than the first.
    std::string add(const std::string& json_row, std::string& problem);

private:
    std::vector<std::string> columns_;
};

/// The "study", "point" and "points" of a JSONL row; false when they cannot be read.
bool sweepRowKey(const std::string& json_row, std::string& study, int64_t& point, int64_t& points);

} // namespace moe::cli
