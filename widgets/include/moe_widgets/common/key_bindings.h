#pragma once
// The keys a view takes while it has focus, listed next to the keyPressEvent that handles them so
// Help > Keyboard shortcuts shows what the code does (menu shortcuts are read from the menus).

#include <QList>
#include <QString>

namespace moe::widgets {

struct KeyBinding {
    QString keys; ///< as the user presses them, e.g. "Ctrl+Left / Ctrl+Right"
    QString does; ///< what happens, e.g. "move the focused dimension left or right"
};

} // namespace moe::widgets
