#pragma once
// Plain-text tables for the CLI: columns sized to their widest cell, numbers right-aligned.
// Numbers in cells come from moe/format.h (UnitStyle::ascii for terminals).

#include <string>
#include <vector>

namespace moe::cli {

class TextTable {
public:
    enum class Align { left, right };
    explicit TextTable(std::vector<std::string> headers, std::vector<Align> aligns = {});
    void addRow(std::vector<std::string> cells);
    void addSeparator();
    std::string render(const std::string& indent = "") const;

private:
    std::vector<std::string> headers_;
    std::vector<Align> aligns_;
    std::vector<std::vector<std::string>> rows_; ///< an empty row is a separator
};

/// "+12.3%" style relative delta of b versus a ("n/a" when a == 0).
std::string formatDeltaPercent(double a, double b);

} // namespace moe::cli
