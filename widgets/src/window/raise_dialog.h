#pragma once
// The main window's non-modal tool windows (Help pages, the layout search): one of each per
// window, created on first use and brought forward when asked again.

#include <QWidget>

#include <utility>

namespace moe::widgets {

/// The owner's dialog of type Dialog, made by `make` when it has none, shown and raised; and
/// whether it was just made.
template <class Dialog, class Make>
std::pair<Dialog*, bool> raiseDialog(QWidget* owner, Make make) {
    auto* dialog = owner->findChild<Dialog*>(QString(), Qt::FindDirectChildrenOnly);
    const bool made = dialog == nullptr;
    if (made)
        dialog = make();
    dialog->show();
    dialog->raise();
    dialog->activateWindow();
    return {dialog, made};
}

} // namespace moe::widgets
