#include "experiments/experiment_support.h"

#include <QLabel>
#include <QStringList>
#include <QWidget>

namespace moe::widgets::experiment {

QString firstError(const Diagnostics& diagnostics) {
    for (const Diagnostic& d : diagnostics)
        if (d.severity == Diagnostic::Severity::error)
            return QString::fromStdString(d.message);
    return {};
}

QString allErrors(const Diagnostics& diagnostics) {
    QStringList lines;
    for (const Diagnostic& d : diagnostics)
        if (d.severity == Diagnostic::Severity::error)
            lines << QString::fromStdString(d.message);
    return lines.join(QLatin1Char('\n'));
}

Fonts::Fonts(const QFont& widget_font, double bold_scale)
    : base(widget_font)
    , small(widget_font)
    , bold(widget_font) {
    small.setPointSizeF(base.pointSizeF() * 0.85);
    bold.setBold(true);
    if (bold_scale != 1.0)
        bold.setPointSizeF(base.pointSizeF() * bold_scale);
}

void showStatus(QLabel* status, const QWidget& owner, const QString& message, bool refusal) {
    status->setText(message);
    QPalette pal = status->palette();
    pal.setColor(QPalette::WindowText, refusal ? refusalColor(owner.palette())
                                               : owner.palette().color(QPalette::WindowText));
    status->setPalette(pal);
    status->setVisible(!message.isEmpty());
}

QColor dimColor(Dim d) {
    // Mid-lightness hues: they keep contrast as a stripe on both a white and a near-black chip.
    switch (d) {
    case Dim::tp:
        return QColor(0x3b, 0x7d, 0xd8);
    case Dim::cp:
        return QColor(0x9b, 0x5c, 0xd0);
    case Dim::ep:
        return QColor(0xe0, 0x7b, 0x22);
    case Dim::dp:
        return QColor(0x2f, 0xa0, 0x5a);
    case Dim::pp:
        return QColor(0x1f, 0x9e, 0xa8);
    }
    return QColor(Qt::gray);
}

QColor chipFace(const QPalette& palette, const QColor& accent, double tint) {
    const QColor base = palette.color(QPalette::Base);
    const auto mix = [tint](int a, int b) { return static_cast<int>(a + (b - a) * tint); };
    return QColor(mix(base.red(), accent.red()), mix(base.green(), accent.green()),
                  mix(base.blue(), accent.blue()));
}

QColor mutedText(const QPalette& palette, QPalette::ColorRole background) {
    const QColor text = palette.color(QPalette::Text);
    const QColor back = palette.color(background);
    constexpr double kToward = 0.38; // 62% text, 38% background
    const auto mix = [](int a, int b) { return static_cast<int>(a + (b - a) * kToward); };
    return QColor(mix(text.red(), back.red()), mix(text.green(), back.green()),
                  mix(text.blue(), back.blue()));
}

QColor refusalColor(const QPalette& palette) {
    return isDark(palette) ? QColor(0xff, 0x8a, 0x80) : QColor(0xb3, 0x26, 0x1e);
}

} // namespace moe::widgets::experiment
