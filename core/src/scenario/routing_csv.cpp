#include "moe/routing_csv.h"

#include "moe/limits.h"
#include "moe/text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>

namespace moe {

namespace {

/// A broken CSV can have thousands of bad cells; past this many the rest add nothing.
constexpr int kMaxCsvErrors = 10;
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
constexpr std::size_t kMaxQuotedChars = 40;

// Header names, compared lower-cased. pandas writes an unnamed index as an empty first name and,
// once read back and saved again, as "Unnamed: 0".
constexpr std::string_view kIndexNames[] = {"", "unnamed: 0", "index", "layer", "moe_layer"};
constexpr std::string_view kLayerNames[] = {"layer", "moe_layer"};
constexpr std::string_view kExpertNames[] = {"expert"};
/// In order of preference when a table has several (raw counts before normalized weights).
constexpr std::string_view kCountNames[] = {"tokens", "tokens_per_expert", "count", "weight"};
constexpr std::string_view kIterationNames[] = {"iteration", "iter"};

std::string quoteCell(std::string_view text) {
    const std::string shown = visibleText(text.substr(0, kMaxQuotedChars));
    return "'" + shown + (text.size() > kMaxQuotedChars ? "..." : "") + "'";
}

std::string cellOrNothing(const std::string& text) {
    return text.empty() ? std::string("nothing") : quoteCell(text);
}

bool tooManyErrors(const RoutingHistogramCsv& out) {
    return static_cast<int>(out.diagnostics.size()) >= kMaxCsvErrors;
}

void addError(RoutingHistogramCsv& out, const std::string& file, int line, int column,
              std::string message) {
    if (tooManyErrors(out))
        return;
    Diagnostic d;
    d.file = file;
    d.line = line;
    d.column = column;
    d.field = "routing.histogram_csv";
    d.message = std::move(message);
    out.diagnostics.push_back(std::move(d));
}

void addError(RoutingHistogramCsv& out, const std::string& file, const CsvCell& at,
              std::string message) {
    addError(out, file, at.line, at.column, std::move(message));
}

/// Closes a converter's run: says so when the error budget cut the checking short.
RoutingHistogramCsv finish(RoutingHistogramCsv out, const std::string& file) {
    if (tooManyErrors(out)) {
        Diagnostic d;
        d.file = file;
        d.field = "routing.histogram_csv";
        d.message = "too many errors; the rest of the file was not checked";
        out.diagnostics.push_back(std::move(d));
    }
    return out;
}

/// A whole number as people save it ("3", "3.0", "+3"); beyond 2^53 doubles skip integers.
std::optional<int64_t> wholeNumber(std::string_view text) {
    const std::optional<double> value = parseFiniteNumber(text);
    if (!value || std::trunc(*value) != *value || std::fabs(*value) > 9007199254740992.0)
        return std::nullopt;
    return static_cast<int64_t>(*value);
}

std::string headerName(const CsvCell& cell) {
    std::string name = cell.text;
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"')
        name = name.substr(1, name.size() - 2);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return name;
}

template <std::size_t N> bool isOneOf(const std::string& name, const std::string_view (&names)[N]) {
    return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

/// Position of the first header cell named one of `names`, trying the names in their order.
template <std::size_t N>
std::optional<std::size_t> findColumn(const CsvRecord& header, const std::string_view (&names)[N]) {
    for (std::string_view name : names)
        for (std::size_t i = 0; i < header.size(); ++i)
            if (headerName(header[i]) == name)
                return i;
    return std::nullopt;
}

/// A header names the columns ("expert_0,expert_1" or "e0;e1"): no cell of it is a number, and
/// only the first may be empty (pandas leaves its index column unnamed).
bool isHeader(const CsvRecord& record) {
    for (std::size_t i = 0; i < record.size(); ++i) {
        if (record[i].text.empty() ? i != 0 || record.size() == 1
                                   : parseFiniteNumber(record[i].text).has_value())
            return false;
    }
    return !record.empty();
}

/// Appends one weight row per record, from cell `skip` on: every cell a finite, non-negative
/// number whose row sum stays finite.
void readWeightRows(const std::vector<const CsvRecord*>& records, std::size_t skip,
                    const std::string& file, RoutingHistogramCsv& out) {
    for (const CsvRecord* record : records) {
        if (tooManyErrors(out))
            return;
        std::vector<double> row;
        row.reserve(record->size());
        double sum = 0;
        for (std::size_t c = skip; c < record->size(); ++c) {
            const CsvCell& cell = (*record)[c];
            const std::optional<double> weight = parseFiniteNumber(cell.text);
            if (!weight || *weight < 0) {
                addError(out, file, cell,
                         "expected a non-negative number, got " + cellOrNothing(cell.text));
                continue;
            }
            row.push_back(*weight);
            sum += *weight;
        }
        // Weights are relative; a sum past the largest double would make every share 0 (and
        // the routing silently uniform), so it is refused where it happens.
        if (!std::isfinite(sum) && !record->empty())
            addError(out, file, record->front(),
                     "the weights of this row add up to more than 1.8e308, the largest number; "
                     "scale them down (only their ratios matter)");
        out.rows.push_back(std::move(row));
    }
}

/// Checks that the distinct layer (or row) numbers, each with the first cell that names it,
/// are consecutive; a gap is an error at the first number after it.
void checkConsecutive(const std::map<int64_t, const CsvCell*>& numbers, const std::string& what,
                      const std::string& file, RoutingHistogramCsv& out) {
    if (numbers.empty())
        return;
    const int64_t span = numbers.rbegin()->first - numbers.begin()->first + 1;
    if (span > limits::kMaxLayers) {
        addError(out, file, *numbers.rbegin()->second,
                 what + "s run from " + std::to_string(numbers.begin()->first) + " to " +
                     std::to_string(numbers.rbegin()->first) + ", more than the supported " +
                     std::to_string(limits::kMaxLayers) + " layers");
        return;
    }
    for (auto it = std::next(numbers.begin()); it != numbers.end(); ++it) {
        const int64_t previous = std::prev(it)->first;
        if (it->first == previous + 1)
            continue;
        const std::string missing = it->first == previous + 2
                                        ? what + " " + std::to_string(previous + 1) + " is missing"
                                        : what + "s " + std::to_string(previous + 1) + " to " +
                                              std::to_string(it->first - 1) + " are missing";
        addError(out, file, *it->second,
                 what + " " + std::to_string(it->first) + " follows " + std::to_string(previous) +
                     ": " + missing + " (the " + what + "s must be consecutive)");
    }
}

} // namespace

const char* toString(RoutingCsvLayout layout) {
    switch (layout) {
    case RoutingCsvLayout::weights:
        return "weights";
    case RoutingCsvLayout::index_column:
        return "index column";
    case RoutingCsvLayout::long_counts:
        return "long";
    }
    return "?";
}

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
    out.had_header = !records.empty() && isHeader(records[0]) && !records[0][0].text.empty();
    std::vector<const CsvRecord*> data;
    for (std::size_t r = out.had_header ? 1 : 0; r < records.size(); ++r)
        data.push_back(&records[r]);
    readWeightRows(data, 0, file_label, out);
    return finish(std::move(out), file_label);
}

RoutingHistogramCsv histogramFromIndexedTable(const std::vector<CsvRecord>& records,
                                              const std::string& file_label) {
    RoutingHistogramCsv out;
    out.had_header = true;
    out.layout = RoutingCsvLayout::index_column;
    if (records.empty())
        return out;
    const std::string name = records[0][0].text;
    const std::string column =
        name.empty() ? std::string("the unnamed index column") : "index column " + quoteCell(name);
    const std::string what = isOneOf(headerName(records[0][0]), kLayerNames) ? "layer" : "row";
    // Layer (or row) number -> its cell; rows are read in the order of these numbers.
    std::map<int64_t, const CsvCell*> numbers;
    std::map<int64_t, const CsvRecord*> by_number;
    for (std::size_t r = 1; r < records.size() && !tooManyErrors(out); ++r) {
        const CsvCell& cell = records[r][0];
        const std::optional<int64_t> number = wholeNumber(cell.text);
        if (!number) {
            addError(out, file_label, cell,
                     "expected a whole number in " + column + ", got " + cellOrNothing(cell.text));
            continue;
        }
        const auto [it, inserted] = numbers.emplace(*number, &cell);
        if (!inserted) {
            addError(out, file_label, cell,
                     what + " " + std::to_string(*number) + " appears twice in " + column +
                         " (also on line " + std::to_string(it->second->line) + ")");
            continue;
        }
        by_number.emplace(*number, &records[r]);
    }
    checkConsecutive(numbers, what, file_label, out);
    std::vector<const CsvRecord*> data;
    for (const auto& [number, record] : by_number)
        data.push_back(record);
    readWeightRows(data, 1, file_label, out);
    return finish(std::move(out), file_label);
}

RoutingHistogramCsv histogramFromLongTable(const std::vector<CsvRecord>& records,
                                           const std::string& file_label) {
    RoutingHistogramCsv out;
    out.had_header = true;
    out.layout = RoutingCsvLayout::long_counts;
    if (records.empty())
        return out;
    const CsvRecord& header = records[0];
    const std::optional<std::size_t> layer_col = findColumn(header, kLayerNames);
    const std::optional<std::size_t> expert_col = findColumn(header, kExpertNames);
    const std::optional<std::size_t> count_col = findColumn(header, kCountNames);
    const std::optional<std::size_t> iteration_col = findColumn(header, kIterationNames);
    if (!layer_col || !expert_col || !count_col) {
        addError(out, file_label, header.front(),
                 "a long routing table needs a header with the columns layer, expert and one of "
                 "tokens, tokens_per_expert, count or weight");
        return finish(std::move(out), file_label);
    }
    const std::size_t needed =
        std::max({*layer_col, *expert_col, *count_col, iteration_col.value_or(0)}) + 1;

    struct Count {
        int64_t layer = 0;
        int64_t expert = 0;
        double tokens = 0;
    };
    std::vector<Count> counts;
    std::map<int64_t, const CsvCell*> layers; // first cell naming each layer
    int64_t experts = 0;
    // (layer, expert, iteration) -> the line that first gave it.
    std::map<std::tuple<int64_t, int64_t, std::string>, int> seen;
    for (std::size_t r = 1; r < records.size() && !tooManyErrors(out); ++r) {
        const CsvRecord& record = records[r];
        if (record.size() < needed) {
            addError(out, file_label, record.back(),
                     "this row has " + std::to_string(record.size()) + " cells; the header's " +
                         quoteCell(header[needed - 1].text) + " column is number " +
                         std::to_string(needed));
            continue;
        }
        const CsvCell& layer_cell = record[*layer_col];
        const CsvCell& expert_cell = record[*expert_col];
        const CsvCell& count_cell = record[*count_col];
        const std::optional<int64_t> layer = wholeNumber(layer_cell.text);
        const std::optional<int64_t> expert = wholeNumber(expert_cell.text);
        const std::optional<double> tokens = parseFiniteNumber(count_cell.text);
        bool ok = true;
        if (!layer || *layer < 0) {
            addError(out, file_label, layer_cell,
                     "expected a layer number (a whole number >= 0), got " +
                         cellOrNothing(layer_cell.text));
            ok = false;
        }
        if (!expert || *expert < 0 || *expert >= limits::kMaxExperts) {
            addError(out, file_label, expert_cell,
                     "expected an expert number from 0 to " +
                         std::to_string(limits::kMaxExperts - 1) + ", got " +
                         cellOrNothing(expert_cell.text));
            ok = false;
        }
        if (!tokens || *tokens < 0) {
            addError(out, file_label, count_cell,
                     "expected a non-negative number, got " + cellOrNothing(count_cell.text));
            ok = false;
        }
        if (!ok)
            continue;
        const std::string iteration = iteration_col ? record[*iteration_col].text : std::string();
        const auto [it, inserted] =
            seen.emplace(std::tuple(*layer, *expert, iteration), layer_cell.line);
        if (!inserted) {
            addError(out, file_label, layer_cell,
                     "layer " + std::to_string(*layer) + ", expert " + std::to_string(*expert) +
                         (iteration_col ? ", iteration " + quoteCell(iteration) : std::string()) +
                         " appears twice (also on line " + std::to_string(it->second) + ")");
            continue;
        }
        layers.emplace(*layer, &layer_cell);
        experts = std::max(experts, *expert + 1);
        counts.push_back({*layer, *expert, *tokens});
    }
    checkConsecutive(layers, "layer", file_label, out);
    if (!out.diagnostics.empty() || layers.empty())
        return finish(std::move(out), file_label);
    // Bounded: at most kMaxLayers x kMaxExperts cells (checked above).
    const int64_t first_layer = layers.begin()->first;
    out.rows.assign(layers.size(), std::vector<double>(static_cast<std::size_t>(experts), 0.0));
    for (const Count& c : counts)
        out.rows[static_cast<std::size_t>(c.layer - first_layer)]
                [static_cast<std::size_t>(c.expert)] += c.tokens;
    for (const auto& [layer, cell] : layers) {
        const std::vector<double>& row = out.rows[static_cast<std::size_t>(layer - first_layer)];
        double sum = 0;
        for (double tokens : row)
            sum += tokens;
        if (!std::isfinite(sum))
            addError(out, file_label, *cell,
                     "the counts of layer " + std::to_string(layer) +
                         " add up to more than 1.8e308, the largest number; scale them down "
                         "(only their ratios matter)");
    }
    return finish(std::move(out), file_label);
}

RoutingCsvLayout detectRoutingCsvLayout(const std::vector<CsvRecord>& records) {
    if (records.empty() || !isHeader(records[0]))
        return RoutingCsvLayout::weights;
    const CsvRecord& header = records[0];
    if (findColumn(header, kLayerNames) && findColumn(header, kExpertNames) &&
        findColumn(header, kCountNames))
        return RoutingCsvLayout::long_counts;
    if (isOneOf(headerName(header[0]), kIndexNames))
        return RoutingCsvLayout::index_column;
    return RoutingCsvLayout::weights;
}

RoutingHistogramCsv parseRoutingHistogramCsv(std::string_view text, const std::string& file_label) {
    const std::vector<CsvRecord> records = splitCsv(text);
    switch (detectRoutingCsvLayout(records)) {
    case RoutingCsvLayout::weights:
        break;
    case RoutingCsvLayout::index_column:
        return histogramFromIndexedTable(records, file_label);
    case RoutingCsvLayout::long_counts:
        return histogramFromLongTable(records, file_label);
    }
    return histogramFromWeightTable(records, file_label);
}

} // namespace moe
