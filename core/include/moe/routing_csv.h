#pragma once
// Routing histogram CSV files (routing.histogram_csv): one row of non-negative weights per MoE
// layer, or a single row for every layer; one column per expert. Files saved by spreadsheets are
// accepted: a UTF-8 byte-order mark, CRLF line ends, '#' comments and a header row of names
// (expert_0,expert_1,...). Reading is two stages, so that more layouts (an index column, raw
// token counts, framework logs) can be added as further converters of the same table:
//   splitCsv():              text -> records of cells, each with its line and column
//   histogramFromWeightTable(): records -> weight rows, with errors per cell
// Messages quote cells with invisible characters shown as <U+FEFF>, \t, \x01 (visibleText).

#include "moe/diagnostics.h"

#include <string>
#include <string_view>
#include <vector>

namespace moe {

struct CsvCell {
    std::string text; ///< trimmed of spaces and tabs
    int line = 0;     ///< 1-based
    int column = 0;   ///< 1-based, of the first non-blank character
};
using CsvRecord = std::vector<CsvCell>;

/// The non-empty, non-comment lines of `text` split at commas (no quoting: weights need none).
/// A leading UTF-8 byte-order mark is skipped; '\r' before '\n' is dropped.
std::vector<CsvRecord> splitCsv(std::string_view text);

struct RoutingHistogramCsv {
    std::vector<std::vector<double>> rows;
    bool had_header = false; ///< the first record was a header row of names
    Diagnostics diagnostics; ///< errors with the CSV file's name, line and column
    bool ok() const { return !hasErrors(diagnostics); }
};

/// Weight rows from split records: a first record of which no cell is a number is a header and
/// skipped; every other cell must be a finite, non-negative number. At most a few errors are
/// reported (a broken file can have thousands). `file_label` names the file in messages.
RoutingHistogramCsv histogramFromWeightTable(const std::vector<CsvRecord>& records,
                                             const std::string& file_label);

/// splitCsv + histogramFromWeightTable.
RoutingHistogramCsv parseRoutingHistogramCsv(std::string_view text, const std::string& file_label);

} // namespace moe
