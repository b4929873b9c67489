#include "moe_widgets/palette.h"

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
    0x79706E, // imbalance wait
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

} // namespace moe::widgets
