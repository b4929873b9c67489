#pragma once
// One colour per step item, collective and link load, shared by every view and export, so a
// collective has the same colour in the topology diagram, the Gantt chart and the breakdown.

#include "moe/evaluate.h"
#include "moe/load_scale.h"

#include <QColor>

namespace moe::widgets {

QColor stepItemColor(StepItem item);
QColor collectiveColor(CollectiveKind kind);
/// Link or GPU load from 0 (idle) to 1 (saturated) on a perceptually ordered ramp; values
/// above 1 (oversubscribed) stay at the hottest colour.
QColor utilizationColor(double utilization);
/// The same ramp for thin lines (links): on a dark background its dark low end is lifted toward
/// white so that an idle-ish link keeps a 3:1 contrast with the background; hue order is kept.
QColor linkColor(double utilization, bool dark);

/// Expert load as a ratio to its layer's mean on the shared diverging scale (moe/load_scale.h,
/// the same colours moe-live draws): neutral at 1.0, hot at `scale.high`, cool at its inverse.
QColor loadRatioColor(double ratio, const LoadRatioScale& scale);
/// The same scale's colour at `position` 0 (cool) .. 0.5 (neutral) .. 1 (hot), for ramps.
QColor loadScaleColor(double position);

/// Black or white text, whichever reads better on `background`.
QColor textOn(const QColor& background);
/// WCAG 2 contrast ratio of two colours, 1 (same luminance) to 21 (black on white).
double contrastRatio(const QColor& a, const QColor& b);

/// Group overlays: a categorical colour per group index (Paul Tol's "muted" scheme, made for
/// colour-blind readers), repeating after groupOverlayColorCount() groups; neighbouring
/// indices always differ.
QColor groupOverlayColor(int group);
int groupOverlayColorCount();

} // namespace moe::widgets
