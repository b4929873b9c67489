#pragma once
// Numbers as people read them, in one place for every front end: the shortest text that reads
// back exactly (files, JSON, messages), and durations, byte counts, counts and shares with three
// significant digits (reports, views, tooltips). Two unit spellings: the views' symbols ("µs",
// "kB") and plain ASCII for terminals and logs ("us", "KB", hours and days past an hour).

#include <charconv>
#include <concepts>
#include <string>

namespace moe {

/// Shortest text that reads back to the same double ("0.1", "1e+12", "450").
std::string formatNumber(double number);
/// The integer in decimal ("-3", "131072").
template <std::integral Int> std::string formatNumber(Int number) {
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, number);
    return std::string(buffer, result.ptr);
}

enum class UnitStyle {
    symbols, ///< "1.23 µs", "45.6 kB", seconds up to any size ("7200 s"): the views
    ascii,   ///< "1.23 us", "45.6 KB", then hours and days ("2.00 h", "3.50 days"): terminals
};

/// Three significant digits, fixed notation: "123", "12.3", "1.23" (a value that rounds up to
/// the next decade drops a decimal: 99.96 gives "100", not "100.0").
std::string threeSignificant(double value);
/// "17.2 s", "641 ms", "4.03 ms", "12.0 µs"; zero is "0 s" (symbols) or "0" (ascii).
std::string formatSeconds(double seconds, UnitStyle style = UnitStyle::symbols);
/// "71.7 GB", "512 B" (decimal units, 1 kB = 1000 B).
std::string formatBytes(double bytes, UnitStyle style = UnitStyle::symbols);
/// "1,234" for whole numbers and anything from 1000 up, else one decimal ("12.5").
std::string formatCount(double value);
/// "1.23M", "45.6K", "789".
std::string formatCompact(double value);
/// A fraction as a percentage: one decimal below 10% ("3.5%"), none above ("53%").
std::string formatPercent(double fraction);
/// printf's "%.*f".
std::string formatFixed(double value, int decimals);

} // namespace moe
