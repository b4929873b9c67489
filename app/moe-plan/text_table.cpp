#include "text_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace moe::cli {

namespace {
// Display width of UTF-8 text: count code points, not bytes, so "—" and "µ" align.
size_t displayWidth(const std::string& text) {
    size_t width = 0;
    for (const unsigned char c : text) {
        if ((c & 0xC0) != 0x80)
            ++width;
    }
    return width;
}
} // namespace

TextTable::TextTable(std::vector<std::string> headers, std::vector<Align> aligns)
    : headers_(std::move(headers))
    , aligns_(std::move(aligns)) {
    aligns_.resize(headers_.size(), Align::right);
    if (!aligns_.empty() && aligns_.size() == headers_.size() && aligns_[0] == Align::right)
        aligns_[0] = Align::left; // the first column names the row
}

void TextTable::addRow(std::vector<std::string> cells) {
    cells.resize(headers_.size());
    rows_.push_back(std::move(cells));
}

void TextTable::addSeparator() {
    rows_.emplace_back();
}

std::string TextTable::render(const std::string& indent) const {
    std::vector<size_t> widths(headers_.size(), 0);
    auto widen = [&](const std::vector<std::string>& cells) {
        for (size_t i = 0; i < cells.size(); ++i)
            widths[i] = std::max(widths[i], displayWidth(cells[i]));
    };
    widen(headers_);
    for (const auto& row : rows_)
        widen(row);

    auto line = [&](const std::vector<std::string>& cells) {
        std::string out = indent;
        for (size_t i = 0; i < cells.size(); ++i) {
            const size_t pad = widths[i] - displayWidth(cells[i]);
            if (aligns_[i] == Align::right)
                out.append(pad, ' ').append(cells[i]);
            else
                out.append(cells[i]).append(i + 1 < cells.size() ? pad : 0, ' ');
            if (i + 1 < cells.size())
                out += "  ";
        }
        while (!out.empty() && out.back() == ' ')
            out.pop_back();
        return out + "\n";
    };
    size_t total = 0;
    for (const size_t w : widths)
        total += w + 2;
    const std::string rule = indent + std::string(total > 2 ? total - 2 : 0, '-') + "\n";

    std::string out = line(headers_) + rule;
    for (const auto& row : rows_)
        out += row.empty() ? rule : line(row);
    return out;
}

std::string formatDeltaPercent(double a, double b) {
    if (a == 0)
        return b == 0 ? "0%" : "n/a";
    const double delta = (b - a) / std::fabs(a) * 100.0;
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%+.1f%%", delta);
    return buffer;
}

} // namespace moe::cli
