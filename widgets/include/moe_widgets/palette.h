#pragma once
// One colour per step item, collective and link load, shared by every view and export, so a
// collective has the same colour in the topology diagram, the Gantt chart and the breakdown.

#include "moe/evaluate.h"

#include <QColor>

namespace moe::widgets {

QColor stepItemColor(StepItem item);
QColor collectiveColor(CollectiveKind kind);
/// Link or GPU load from 0 (idle) to 1 (saturated) on a perceptually ordered ramp; values
/// above 1 (oversubscribed) stay at the hottest colour.
QColor utilizationColor(double utilization);

} // namespace moe::widgets
