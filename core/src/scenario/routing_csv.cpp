#include "moe/routing_csv.h"

#include "moe/text.h"

#include <algorithm>
#include <cmath>

namespace moe {

namespace {

/// A broken CSV can have thousands of bad cells; past this many the rest add nothing.
constexpr int kMaxCsvErrors = 10;
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
constexpr std::size_t kMaxQuotedChars = 40;

std::string quoteCell(std::string_view text) {
    const std::string shown = visibleText(text.substr(0, kMaxQuotedChars));
    return "'" + shown + (text.size() > kMaxQuotedChars ? "..." : "") + "'";
}

void addError(RoutingHistogramCsv& out, const std::string& file, int line, int column,
              std::string message) {
    Diagnostic d;
    d.file = file;
    d.line = line;
    d.column = column;
    d.field = "routing.histogram_csv";
    d.message = std::move(message);
    out.diagnostics.push_back(std::move(d));
}

} // namespace

std::vector<CsvRecord> splitCsv(std::string_view text) {
    std::vector<CsvRecord> records;
    if (text.starts_with(kUtf8Bom))
        text.remove_prefix(kUtf8Bom.size());
    int line_number = 0;
    std::size_t line_start = 0;
    while (line_start < text.size()) {
        std::size_t line_end = text.find('\n', line_start);
        if (line_end == std::string_view::npos)
            line_end = text.size();
        ++line_number;
        std::string_view line = text.substr(line_start, line_end - line_start);
        line_start = line_end + 1;
        if (line.ends_with('\r'))
            line.remove_suffix(1);
        line = line.substr(0, std::min(line.find('#'), line.size()));
        if (line.find_first_not_of(" \t") == std::string_view::npos)
            continue;
        CsvRecord record;
        std::size_t cell_start = 0;
        while (cell_start <= line.size()) {
            const std::size_t comma = std::min(line.find(',', cell_start), line.size());
            const std::string_view raw = line.substr(cell_start, comma - cell_start);
            const std::size_t first = std::min(raw.find_first_not_of(" \t"), raw.size());
            const std::size_t last = raw.find_last_not_of(" \t");
            CsvCell cell;
            cell.text = last == std::string_view::npos
                            ? std::string()
                            : std::string(raw.substr(first, last - first + 1));
            cell.line = line_number;
            cell.column = static_cast<int>(cell_start + first) + 1;
            record.push_back(std::move(cell));
            cell_start = comma + 1;
        }
        records.push_back(std::move(record));
    }
    return records;
}

RoutingHistogramCsv histogramFromWeightTable(const std::vector<CsvRecord>& records,
                                             const std::string& file_label) {
    RoutingHistogramCsv out;
    std::size_t first = 0;
    // A header names the columns ("expert_0,expert_1" or "e0;e1"): no cell of it is a number.
    if (!records.empty() &&
        std::none_of(records[0].begin(), records[0].end(), [](const CsvCell& cell) {
            return cell.text.empty() || parseFiniteNumber(cell.text).has_value();
        })) {
        out.had_header = true;
        first = 1;
    }
    int errors = 0;
    for (std::size_t r = first; r < records.size() && errors < kMaxCsvErrors; ++r) {
        std::vector<double> row;
        row.reserve(records[r].size());
        double sum = 0;
        for (const CsvCell& cell : records[r]) {
            const std::optional<double> weight = parseFiniteNumber(cell.text);
            if (!weight || *weight < 0) {
                addError(out, file_label, cell.line, cell.column,
                         "expected a non-negative number, got " +
                             (cell.text.empty() ? std::string("nothing") : quoteCell(cell.text)));
                if (++errors >= kMaxCsvErrors)
                    break;
                continue;
            }
            row.push_back(*weight);
            sum += *weight;
        }
        // Weights are relative; a sum past the largest double would make every share 0 (and
        // the routing silently uniform), so it is refused where it happens.
        if (!std::isfinite(sum) && !records[r].empty()) {
            addError(out, file_label, records[r].front().line, records[r].front().column,
                     "the weights of this row add up to more than 1.8e308, the largest number; "
                     "scale them down (only their ratios matter)");
            ++errors;
        }
        out.rows.push_back(std::move(row));
    }
    if (errors >= kMaxCsvErrors)
        addError(out, file_label, 0, 0, "too many errors; the rest of the file was not checked");
    return out;
}

RoutingHistogramCsv parseRoutingHistogramCsv(std::string_view text, const std::string& file_label) {
    return histogramFromWeightTable(splitCsv(text), file_label);
}

} // namespace moe
