#pragma once
// The Help menu's pages. HelpBrowser shows the manual (docs/*.md, built into the program as Qt
// resources, so it is the manual of this very build) with working links between its pages and to
// their headings; it opens on the model's formulas, units, sources and known limits.
// ShortcutsDialog lists every menu action that has a shortcut, read from the menu bar when it
// opens (so it cannot go stale), then the keys each view takes while it has focus.

#include "moe_widgets/common/key_bindings.h"

#include <QDialog>
#include <QList>
#include <QString>
#include <QStringList>
#include <QTextBrowser>

class QComboBox;
class QMenuBar;
class QTableWidget;

namespace moe::widgets {

/// A text browser for the built-in manual: Markdown pages whose headings get the anchors GitHub
/// gives them ("## Pipeline schedules" -> #pipeline-schedules), so the pages' own links work.
class ManualBrowser : public QTextBrowser {
    Q_OBJECT
public:
    explicit ManualBrowser(QWidget* parent = nullptr);
    /// GitHub's heading anchor: lower case, punctuation other than '-' dropped, spaces -> '-'.
    static QString headingAnchor(const QString& heading);

protected:
    void doSetSource(const QUrl& name, QTextDocument::ResourceType type) override;

private:
    void addHeadingAnchors();
};

class HelpBrowser : public QDialog {
    Q_OBJECT
public:
    explicit HelpBrowser(QWidget* parent = nullptr);
    /// The manual's pages built into the program, e.g. "model.md", in reading order.
    static QStringList pages();
    /// Shows `page` ("model.md", optionally with "#anchor").
    void showPage(const QString& page);
    ManualBrowser* browser() const { return browser_; }

private:
    ManualBrowser* browser_ = nullptr;
    QComboBox* page_choice_ = nullptr;
};

struct ShortcutRow {
    QString where; ///< "File", "View > Theme", or a view's name
    QString keys;
    QString does;
};

class ShortcutsDialog : public QDialog {
    Q_OBJECT
public:
    explicit ShortcutsDialog(const QMenuBar* menus, QWidget* parent = nullptr);
    /// Every action with a shortcut in `menus` (sub-menus included), then every view's keys.
    static QList<ShortcutRow> rows(const QMenuBar* menus);
    QTableWidget* table() const { return table_; }

private:
    QTableWidget* table_ = nullptr;
};

} // namespace moe::widgets
