#pragma once
// The one colour scale of expert load, shared by every front end (the Qt heatmap and topology,
// moe-live's ImGui map), so "hot" is the same colour everywhere. Qt-free: colours are 8-bit
// sRGB triples the front ends wrap in their own colour types.
//
// A load is shown as its ratio to the layer's mean (gpuLoadRatio, load_stragglers.h). The scale
// diverges at 1.0 (the mean, neutral) and is symmetric in log(ratio): twice the mean is as hot
// as half the mean is cool. Its hot end adapts to the data (the hottest ratio shown) but never
// lies closer to 1 than kLoadScaleMinHigh, so a sample whose hottest rank is 1.02x does not look
// on fire, while a 1.14x hottest cell is clearly warm; the cool end is 1 / hot end. A scale
// that started at 0 would put every cell of a 1.14x sample within 12% of the same colour.

#include <cstdint>

namespace moe {

struct Rgb8 {
    uint8_t r = 0, g = 0, b = 0;
    bool operator==(const Rgb8&) const = default;
};

/// The hot end of the scale never lies below this ratio.
constexpr double kLoadScaleMinHigh = 1.25;

struct LoadRatioScale {
    double high = kLoadScaleMinHigh;          ///< ratio at the hot end (>= kLoadScaleMinHigh)
    double low() const { return 1.0 / high; } ///< ratio at the cool end
    /// Where `ratio` sits on the scale: 0 (cool end, ratio <= low) .. 0.5 (ratio 1, neutral) ..
    /// 1 (hot end, ratio >= high); 0.5 + 0.5 * ln(ratio) / ln(high), clamped. Ratios <= 0 (a GPU
    /// without tokens) sit at the cool end; NaN at the neutral middle.
    double position(double ratio) const;
    Rgb8 color(double ratio) const;
};

/// The scale for data whose hottest ratio is `max_ratio`: high = max(max_ratio, 1.25).
LoadRatioScale loadRatioScale(double max_ratio);

/// The diverging ramp at `position` 0..1 (clamped; NaN = neutral): ColorBrewer RdBu's ends
/// (#2166AC blue, #B2182B red) through a light neutral #F2F0EB at 0.5, interpolated in sRGB
/// between five stops.
Rgb8 loadScaleColorAt(double position);

} // namespace moe
