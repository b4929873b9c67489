// The main window's Tools menu: the layout search (LayoutSearchDialog).
#include "moe_widgets/window/layout_search_dialog.h"
#include "moe_widgets/window/main_window.h"
#include "window/raise_dialog.h"

#include <QAction>
#include <QMenu>
#include <QMenuBar>

namespace moe::widgets {

void MainWindow::createToolsMenu() {
    QMenu* tools = menuBar()->addMenu(tr("&Tools"));
    QAction* search =
        tools->addAction(tr("&Search layouts…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L),
                         this, [this] { showLayoutSearch(); });
    search->setObjectName(QStringLiteral("searchLayoutsAction"));
    search->setStatusTip(tr("Rank every parallel layout of this cluster and model by step time "
                            "and apply one"));
}

LayoutSearchDialog* MainWindow::showLayoutSearch() {
    // Kept when closed, with its ranked list; only the first opening starts a search.
    const auto [dialog, made] = raiseDialog<LayoutSearchDialog>(
        this, [this] { return new LayoutSearchDialog(document_, this); });
    if (made)
        dialog->start();
    return dialog;
}

} // namespace moe::widgets
