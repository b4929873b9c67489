#pragma once
// The app's light or dark look (issue 19, "follow the system's dark/light setting unless
// chosen"). View > Theme offers System, Light and Dark; System follows the desktop's colour
// scheme (Qt >= 6.5: QStyleHints::colorScheme and its change signal; older Qt: whether the
// platform's palette was dark at start-up). The views read the application palette (isDark) and
// repaint on QEvent::PaletteChange, so switching the palette is all a theme change takes.

#include <QObject>
#include <QPalette>
#include <QString>

namespace moe::widgets {

/// What the user chose in View > Theme.
enum class ThemeChoice { system, light, dark };
/// What the desktop says; unknown when the platform does not tell (Xvfb, offscreen, Qt < 6.5).
enum class SystemScheme { unknown, light, dark };

/// The decision: an explicit Light or Dark wins; System follows the desktop, light when unknown.
bool useDarkTheme(ThemeChoice choice, SystemScheme scheme);

/// QSettings spelling of a choice ("system", "light", "dark"); anything else reads as system.
QString themeChoiceKey(ThemeChoice choice);
ThemeChoice themeChoiceFromKey(const QString& key);

/// The app's dark palette (Fusion style): #2B2D31 windows, #1F2124 bases, #E6E8EB text.
QPalette darkPalette();

/// The desktop's colour scheme now (see the file comment for how it is found).
SystemScheme systemColorScheme();

/// Applies the decision to the application's style and palette and keeps it current: follows
/// the desktop's scheme changes while the choice is System. One per window; the last one to
/// apply wins (there is one application palette).
class ThemeController : public QObject {
    Q_OBJECT
public:
    explicit ThemeController(QObject* parent = nullptr);

    ThemeChoice choice() const { return choice_; }
    SystemScheme systemScheme() const { return scheme_; }
    /// The effective look: useDarkTheme(choice(), systemScheme()).
    bool isDark() const { return useDarkTheme(choice_, scheme_); }

    /// Changes the choice and applies it (not persisted: the window saves it in QSettings).
    void setChoice(ThemeChoice choice);
    /// The desktop's scheme changed (connected to QStyleHints::colorSchemeChanged on Qt >= 6.5;
    /// tests call it directly because the offscreen platform cannot change its scheme).
    void setSystemScheme(SystemScheme scheme);

signals:
    /// After the palette was switched between light and dark.
    void darkChanged(bool dark);

private:
    void apply();

    ThemeChoice choice_ = ThemeChoice::system;
    SystemScheme scheme_ = SystemScheme::unknown;
    bool applied_dark_ = false;
    /// The look was changed from the platform's own (so a return to light must set it back).
    bool restyled_ = false;
};

} // namespace moe::widgets
