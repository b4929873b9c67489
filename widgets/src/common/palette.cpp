#include "moe_widgets/common/palette.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace moe::widgets {

namespace {
// Okabe-Ito and Tableau-like hues: distinguishable for colour-blind readers and on both light
// and dark backgrounds. Compute items are blues/greens, communication warm, waiting grey/red.
constexpr std::array<QRgb, kStepItemCount> kStepItemRgb = {
    0x4E79A7, // attention
    0x76B7B2, // dense FFN & head
    0xB07AA1, // router
    0x59A14F, // expert compute
    0xF28E2B, // all-to-all
    0xEDC948, // TP
    0xFF9DA7, // CP
    0x9C755F, // PP
    0xBAB0AC, // bubble
    0xE15759, // DP sync
    0x8CD17D, // optimizer
    0x8E8482, // imbalance wait: mid-grey, >= 3.5:1 on the light and the dark background
};

// A viridis-like ramp sampled at 5 stops (dark purple -> yellow).
constexpr std::array<QRgb, 5> kRamp = {0x440154, 0x3B528B, 0x21918C, 0x5EC962, 0xFDE725};
} // namespace

QColor stepItemColor(StepItem item) {
    const auto index = static_cast<size_t>(item);
    return index < kStepItemRgb.size() ? QColor(kStepItemRgb[index]) : QColor(Qt::gray);
}

QColor collectiveColor(CollectiveKind kind) {
    switch (kind) {
    case CollectiveKind::moe_dispatch:
    case CollectiveKind::moe_combine:
        return stepItemColor(StepItem::all_to_all);
    case CollectiveKind::tp_collective:
        return stepItemColor(StepItem::tp_comm);
    case CollectiveKind::cp_exchange:
        return stepItemColor(StepItem::cp_comm);
    case CollectiveKind::pp_send_recv:
        return stepItemColor(StepItem::pp_comm);
    case CollectiveKind::dp_sync:
    case CollectiveKind::edp_sync:
        return stepItemColor(StepItem::dp_sync);
    }
    return QColor(Qt::gray);
}

QColor utilizationColor(double utilization) {
    const double u = std::isfinite(utilization) ? std::clamp(utilization, 0.0, 1.0) : 1.0;
    const double position = u * (kRamp.size() - 1);
    const auto low = static_cast<size_t>(std::floor(position));
    const size_t high = std::min(low + 1, kRamp.size() - 1);
    const double t = position - static_cast<double>(low);
    const QColor a(kRamp[low]);
    const QColor b(kRamp[high]);
    return QColor::fromRgbF(static_cast<float>(a.redF() + (b.redF() - a.redF()) * t),
                            static_cast<float>(a.greenF() + (b.greenF() - a.greenF()) * t),
                            static_cast<float>(a.blueF() + (b.blueF() - a.blueF()) * t));
}

namespace {
/// WCAG 2 relative luminance: sRGB channels linearised, weighted by the eye's sensitivity.
double relativeLuminance(const QColor& c) {
    const auto linear = [](double v) {
        return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * linear(c.redF()) + 0.7152 * linear(c.greenF()) + 0.0722 * linear(c.blueF());
}
} // namespace

double contrastRatio(const QColor& a, const QColor& b) {
    const double la = relativeLuminance(a);
    const double lb = relativeLuminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QColor textOn(const QColor& background) {
    // Whichever of near-black and white has the higher contrast ratio on it.
    const QColor ink(0x1F2328);
    const QColor paper(0xFFFFFF);
    return contrastRatio(ink, background) >= contrastRatio(paper, background) ? ink : paper;
}

QColor linkColor(double utilization, bool dark) {
    const QColor c = utilizationColor(utilization);
    if (!dark)
        return c;
    // Mix toward white by what the dark end lacks: 45% at idle, nothing once the ramp is
    // light by itself (u >= 0.6, green-yellow). Keeps the ramp's hue order and makes the
    // darkest link (#440154 -> #9C80A9) reach 4:1 against the dark theme's #1C1F24.
    const double u = std::isfinite(utilization) ? std::clamp(utilization, 0.0, 1.0) : 1.0;
    const double w = 0.45 * std::max(0.0, 1.0 - u / 0.6);
    return QColor::fromRgbF(static_cast<float>(c.redF() + (1 - c.redF()) * w),
                            static_cast<float>(c.greenF() + (1 - c.greenF()) * w),
                            static_cast<float>(c.blueF() + (1 - c.blueF()) * w));
}

// --- Group overlays -------------------------------------------------------------------------

namespace {
// Paul Tol, "Colour schemes and templates" (2021), the muted qualitative scheme: nine colours
// that colour-blind readers tell apart, all of them distinct from white and black text halos.
constexpr std::array<QRgb, 9> kOverlayRgb = {0x332288, 0x88CCEE, 0x117733, 0xDDCC77, 0xCC6677,
                                             0x44AA99, 0xAA4499, 0x999933, 0x882255};
} // namespace

QColor groupOverlayColor(int group) {
    const int n = static_cast<int>(kOverlayRgb.size());
    return QColor(kOverlayRgb[static_cast<size_t>(((group % n) + n) % n)]);
}

int groupOverlayColorCount() {
    return static_cast<int>(kOverlayRgb.size());
}

QColor loadScaleColor(double position) {
    const Rgb8 c = loadScaleColorAt(position);
    return QColor(c.r, c.g, c.b);
}

QColor loadRatioColor(double ratio, const LoadRatioScale& scale) {
    return loadScaleColor(scale.position(ratio));
}

} // namespace moe::widgets
