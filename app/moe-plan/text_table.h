#pragma once
// Plain-text tables for the CLI: columns sized to their widest cell, numbers right-aligned.

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

/// "1.23 ms", "456 us", "2.1 s": seconds in the most readable unit, 3 significant digits.
std::string formatSeconds(double seconds);
/// "12.3 GB", "512 MB": bytes with decimal (1e9) units.
std::string formatBytes(double bytes);
/// Fixed decimals.
std::string formatFixed(double value, int decimals);
/// "+12.3%" style relative delta of b versus a ("n/a" when a == 0).
std::string formatDeltaPercent(double a, double b);
/// Large counts with thousands separators: 1,540.
std::string formatCount(double value);

} // namespace moe::cli
