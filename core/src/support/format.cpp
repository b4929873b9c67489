#include "moe/format.h"

#include <cmath>
#include <cstdio>

namespace moe {

namespace {

/// Shown for NaN and infinities, which only a bug or an empty figure produce.
constexpr const char* kNotANumber = "–";

std::string printed(const char* format, double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, value);
    return buffer;
}

/// The integer part of |value| with a comma every three digits.
std::string groupedDigits(double magnitude) {
    std::string text = printed("%.0f", magnitude);
    for (int i = static_cast<int>(text.size()) - 3; i > 0; i -= 3)
        text.insert(static_cast<size_t>(i), ",");
    return text;
}

} // namespace

std::string formatNumber(double number) {
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, number);
    return std::string(buffer, result.ptr);
}

std::string threeSignificant(double value) {
    const double magnitude = std::fabs(value);
    // 99.95 and 9.995 rather than 100 and 10: what rounds up to the next decade loses a decimal.
    const int decimals = magnitude >= 99.95 ? 0 : magnitude >= 9.995 ? 1 : 2;
    return formatFixed(value, decimals);
}

std::string formatSeconds(double seconds, UnitStyle style) {
    if (!std::isfinite(seconds))
        return kNotANumber;
    const double magnitude = std::fabs(seconds);
    const bool ascii = style == UnitStyle::ascii;
    if (magnitude == 0)
        return ascii ? "0" : "0 s";
    if (ascii) {
        if (magnitude < 1e-3)
            return threeSignificant(seconds * 1e6) + " us";
        if (magnitude < 1)
            return threeSignificant(seconds * 1e3) + " ms";
        if (magnitude < 3600)
            return threeSignificant(seconds) + " s";
        // Up to two days in hours ("36.0 h" reads better than "1.50 days").
        if (magnitude < 2 * 86400)
            return threeSignificant(seconds / 3600) + " h";
        return threeSignificant(seconds / 86400) + " days";
    }
    if (magnitude >= 1)
        return threeSignificant(seconds) + " s";
    if (magnitude >= 1e-3)
        return threeSignificant(seconds * 1e3) + " ms";
    if (magnitude >= 1e-6)
        return threeSignificant(seconds * 1e6) + " µs";
    return threeSignificant(seconds * 1e9) + " ns";
}

std::string formatBytes(double bytes, UnitStyle style) {
    if (!std::isfinite(bytes))
        return kNotANumber;
    const double magnitude = std::fabs(bytes);
    if (magnitude >= 1e12)
        return threeSignificant(bytes / 1e12) + " TB";
    if (magnitude >= 1e9)
        return threeSignificant(bytes / 1e9) + " GB";
    if (magnitude >= 1e6)
        return threeSignificant(bytes / 1e6) + " MB";
    if (magnitude >= 1e3)
        return threeSignificant(bytes / 1e3) + (style == UnitStyle::ascii ? " KB" : " kB");
    return formatFixed(bytes, 0) + " B";
}

std::string formatCount(double value) {
    if (!std::isfinite(value))
        return kNotANumber;
    const bool whole = std::fabs(value - std::round(value)) < 1e-9;
    if (!whole && std::fabs(value) < 1000)
        return formatFixed(value, 1);
    const double rounded = std::round(value);
    return (rounded < 0 ? "-" : "") + groupedDigits(std::fabs(rounded));
}

std::string formatCompact(double value) {
    if (!std::isfinite(value))
        return kNotANumber;
    if (std::fabs(value) >= 1e6)
        return formatFixed(value / 1e6, 2) + "M";
    if (std::fabs(value) >= 1e3)
        return formatFixed(value / 1e3, 1) + "K";
    return formatFixed(value, 0);
}

std::string formatPercent(double fraction) {
    if (!std::isfinite(fraction))
        return kNotANumber;
    const double percent = fraction * 100;
    return formatFixed(percent, std::fabs(percent) < 10 ? 1 : 0) + "%";
}

std::string formatFixed(double value, int decimals) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

} // namespace moe
