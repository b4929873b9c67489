#pragma once
// Routing histogram CSV files (routing.histogram_csv): expert popularity per MoE layer. Files are
// accepted as people save them: a UTF-8 byte-order mark, CRLF line ends and '#' comments, in
// one of three layouts, told apart by the header row:
//   weights (wide):  one row of non-negative weights (or raw token counts) per MoE layer, or
//                    one row for every layer; one column per expert; an optional header row of
//                    names (expert_0,expert_1,...).
//   index column:    the same with a first column of consecutive integer row or layer numbers,
//                    marked by the header's first name being empty (pandas' DataFrame.to_csv()),
//                    "Unnamed: 0" (pandas re-saved), "index", "layer" or "moe_layer". Rows are
//                    taken in the order of that column; a duplicate or a gap is an error.
//   long (tidy):     a header naming columns layer, expert and the count (tokens,
//                    tokens_per_expert, count or weight, the first of these present), in any
//                    order, one row per (layer, expert); rows repeating a pair (several
//                    iterations, or an iteration/iter column) are summed, missing pairs are 0.
// Without a header row a file is always read as weights: a first column of 0,1,2... is then a
// weight, not an index (guessing would silently drop an expert).
// Reading is two stages, each layout a converter of the same split table:
//   splitCsv():                  text -> records of cells, each with its line and column
//   histogramFrom...Table():     records -> weight rows, with errors per cell
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

enum class RoutingCsvLayout { weights, index_column, long_counts };
const char* toString(RoutingCsvLayout layout); ///< "weights", "index column", "long"

struct RoutingHistogramCsv {
    std::vector<std::vector<double>> rows;
    bool had_header = false; ///< the first record was a header row of names
    RoutingCsvLayout layout = RoutingCsvLayout::weights;
    Diagnostics diagnostics; ///< errors with the CSV file's name, line and column
    bool ok() const { return !hasErrors(diagnostics); }
};

/// Weight rows from split records: a first record of which no cell is a number is a header and
/// skipped; every other cell must be a finite, non-negative number. At most a few errors are
/// reported (a broken file can have thousands). `file_label` names the file in messages.
RoutingHistogramCsv histogramFromWeightTable(const std::vector<CsvRecord>& records,
                                             const std::string& file_label);

/// Weight rows from records whose first record is a header with an index column first: every
/// data row's first cell must be an integer, the integers consecutive without duplicates; the
/// rows come out in their order and the column is dropped.
RoutingHistogramCsv histogramFromIndexedTable(const std::vector<CsvRecord>& records,
                                              const std::string& file_label);

/// Weight rows from a long table: the first record is the header (see above), every other
/// record one (layer, expert, count) triple. Layers must be consecutive integers (any start),
/// experts integers 0..E-1 (E = the largest expert + 1); a pair repeated within one iteration
/// is an error naming both lines.
RoutingHistogramCsv histogramFromLongTable(const std::vector<CsvRecord>& records,
                                           const std::string& file_label);

/// The layout of split records, from their header row (weights when there is none).
RoutingCsvLayout detectRoutingCsvLayout(const std::vector<CsvRecord>& records);

/// splitCsv + detectRoutingCsvLayout + the layout's converter.
RoutingHistogramCsv parseRoutingHistogramCsv(std::string_view text, const std::string& file_label);

} // namespace moe
