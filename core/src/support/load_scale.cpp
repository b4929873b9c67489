// The expert-load colour scale (load_scale.h).
#include "moe/load_scale.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace moe {

double LoadRatioScale::position(double ratio) const {
    if (std::isnan(ratio))
        return 0.5;
    if (ratio <= 0)
        return 0.0;
    const double h = std::max(high, kLoadScaleMinHigh);
    return std::clamp(0.5 + 0.5 * std::log(ratio) / std::log(h), 0.0, 1.0);
}

Rgb8 LoadRatioScale::color(double ratio) const {
    return loadScaleColorAt(position(ratio));
}

LoadRatioScale loadRatioScale(double max_ratio) {
    LoadRatioScale scale;
    if (std::isfinite(max_ratio))
        scale.high = std::max(max_ratio, kLoadScaleMinHigh);
    return scale;
}

Rgb8 loadScaleColorAt(double position) {
    // RdBu's outer and inner stops: cool blue, light blue, neutral, light red, hot red.
    static constexpr std::array<Rgb8, 5> kStops = {Rgb8{0x21, 0x66, 0xAC}, Rgb8{0x92, 0xC5, 0xDE},
                                                   Rgb8{0xF2, 0xF0, 0xEB}, Rgb8{0xF4, 0xA5, 0x82},
                                                   Rgb8{0xB2, 0x18, 0x2B}};
    const double t = std::isnan(position) ? 0.5 : std::clamp(position, 0.0, 1.0);
    const double pos = t * 4.0;
    const int lo = std::min(3, static_cast<int>(pos));
    const double f = pos - lo;
    const Rgb8 a = kStops[static_cast<size_t>(lo)];
    const Rgb8 b = kStops[static_cast<size_t>(lo + 1)];
    auto mix = [f](uint8_t x, uint8_t y) {
        return static_cast<uint8_t>(std::lround(x + (y - x) * f));
    };
    return {mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b)};
}

} // namespace moe
