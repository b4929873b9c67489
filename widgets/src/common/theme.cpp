#include "moe_widgets/common/theme.h"

#include <QApplication>
#include <QGuiApplication>
#include <QStyle>
#include <QStyleFactory>
#include <QStyleHints>
#include <QtGlobal>

namespace moe::widgets {

bool useDarkTheme(ThemeChoice choice, SystemScheme scheme) {
    switch (choice) {
    case ThemeChoice::light:
        return false;
    case ThemeChoice::dark:
        return true;
    case ThemeChoice::system:
        break;
    }
    return scheme == SystemScheme::dark;
}

QString themeChoiceKey(ThemeChoice choice) {
    switch (choice) {
    case ThemeChoice::light:
        return QStringLiteral("light");
    case ThemeChoice::dark:
        return QStringLiteral("dark");
    case ThemeChoice::system:
        break;
    }
    return QStringLiteral("system");
}

ThemeChoice themeChoiceFromKey(const QString& key) {
    if (key == QLatin1String("light"))
        return ThemeChoice::light;
    if (key == QLatin1String("dark"))
        return ThemeChoice::dark;
    return ThemeChoice::system;
}

QPalette darkPalette() {
    QPalette p;
    const QColor window(0x2b, 0x2d, 0x31);
    const QColor base(0x1f, 0x21, 0x24);
    const QColor text(0xe6, 0xe8, 0xeb);
    const QColor disabled(0x80, 0x84, 0x8a);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x27, 0x29, 0x2d));
    p.setColor(QPalette::ToolTipBase, QColor(0x35, 0x38, 0x3d));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
    p.setColor(QPalette::Link, QColor(0x6c, 0xb4, 0xff));
    p.setColor(QPalette::Highlight, QColor(0x3d, 0x7e, 0xd6));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Mid, QColor(0x45, 0x48, 0x4e));
    p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
    p.setColor(QPalette::Light, QColor(0x50, 0x54, 0x5a));
    for (const QPalette::ColorRole role :
         {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    return p;
}

namespace {

/// Without a colour-scheme hint: a platform theme that starts the app with a dark palette (a
/// dark KDE or GNOME theme through its Qt platform plugin) is a dark desktop. Read once, before
/// this app's own palette replaces it.
SystemScheme schemeOfStartupPalette() {
    static const SystemScheme at_start =
        QGuiApplication::palette().color(QPalette::Window).lightness() < 128
            ? SystemScheme::dark
            : SystemScheme::unknown;
    return at_start;
}

#if QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)
SystemScheme toScheme(Qt::ColorScheme scheme) {
    switch (scheme) {
    case Qt::ColorScheme::Dark:
        return SystemScheme::dark;
    case Qt::ColorScheme::Light:
        return SystemScheme::light;
    default:
        return schemeOfStartupPalette();
    }
}
#endif

bool usesFusion() {
    return QApplication::style()->name().compare(QLatin1String("fusion"), Qt::CaseInsensitive) == 0;
}

} // namespace

SystemScheme systemColorScheme() {
#if QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)
    return toScheme(QGuiApplication::styleHints()->colorScheme());
#else
    return schemeOfStartupPalette();
#endif
}

ThemeController::ThemeController(QObject* parent)
    : QObject(parent) {
    // Read the platform's palette now, before any controller changes it (a later "unknown"
    // scheme falls back to it).
    schemeOfStartupPalette();
    scheme_ = systemColorScheme();
#if QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)
    connect(QGuiApplication::styleHints(), &QStyleHints::colorSchemeChanged, this,
            [this](Qt::ColorScheme scheme) { setSystemScheme(toScheme(scheme)); });
#endif
    applied_dark_ = isDark();
    // A dark desktop (or a dark platform palette) gets the app's own dark palette from the
    // start, so every view's colours match; a light one keeps the platform's look untouched.
    if (applied_dark_)
        apply();
}

void ThemeController::setChoice(ThemeChoice choice) {
    choice_ = choice;
    apply();
}

void ThemeController::setSystemScheme(SystemScheme scheme) {
    scheme_ = scheme;
    apply();
}

void ThemeController::apply() {
    const bool dark = isDark();
    // The platform's native styles ignore a custom palette; Fusion paints with it. Light after
    // dark (or light on a dark desktop) needs Fusion's own light palette, not the platform's.
    if (dark || restyled_ || scheme_ == SystemScheme::dark) {
        if (!usesFusion())
            QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(dark ? darkPalette() : QApplication::style()->standardPalette());
        restyled_ = true;
    }
    if (dark != applied_dark_) {
        applied_dark_ = dark;
        emit darkChanged(dark);
    }
}

} // namespace moe::widgets
