#pragma once
// Private helpers shared by the drag-and-drop experiment widgets (layout bar, placement grid,
// hardware palette): chip painting that reads on light and dark palettes, the refusal text of
// an edit, and short number formats.

#include "moe/diagnostics.h"
#include "moe/scenario.h"
#include "moe_widgets/common/palette.h"

#include "common/view_export.h"

#include <QColor>
#include <QFont>
#include <QPalette>
#include <QRect>
#include <QString>

class QLabel;
class QPainter;
class QWidget;

namespace moe::widgets::experiment {

/// The first error of a refused edit, in plain words ("" when there is none).
QString firstError(const Diagnostics& diagnostics);
/// Every error, one per line (tooltips).
QString allErrors(const Diagnostics& diagnostics);

// Shared with every view (view_export.h, palette.h).
using detail::formatSeconds;
/// "1.23M", "45.6K", "789".
inline QString formatCount(double value) {
    return detail::formatCompact(value);
}
using detail::isDark;
using moe::widgets::textOn;

/// The fonts a chip painter uses: the widget's own, a smaller one for captions and a bold one
/// (scaled by `bold_scale`) for titles.
struct Fonts {
    explicit Fonts(const QFont& widget_font, double bold_scale = 1.0);
    QFont base;
    QFont small;
    QFont bold;
};

/// Shows `message` in a status line under an experiment, in the refusal colour when `refusal`
/// (hidden when empty).
void showStatus(QLabel* status, const QWidget& owner, const QString& message, bool refusal);

/// One hue per parallel dimension (the chip's stripe), legible on light and dark windows.
QColor dimColor(Dim d);
/// The chip face: the palette's button colour tinted toward `accent`.
QColor chipFace(const QPalette& palette, const QColor& accent, double tint = 0.16);
/// Secondary text (captions, current values): between the text and the background colours, so
/// it stays legible where the palette's disabled colour is too faint.
QColor mutedText(const QPalette& palette, QPalette::ColorRole background = QPalette::Base);
/// The colour for refusals ("not applied: ..."), readable on the palette's window.
QColor refusalColor(const QPalette& palette);

} // namespace moe::widgets::experiment
