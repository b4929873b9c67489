// Help > Model and assumptions (the built-in manual) and Help > Keyboard shortcuts.
#include "moe_widgets/window/help_dialogs.h"

#include "moe_widgets/experiments/hardware_palette.h"
#include "moe_widgets/experiments/layout_bar.h"
#include "moe_widgets/experiments/placement_grid.h"
#include "timeline/gantt_canvas.h"

#include <QAction>
#include <QComboBox>
#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QScrollBar>
#include <QTableWidget>
#include <QTextBlock>
#include <QVBoxLayout>

namespace moe::widgets {

namespace {

// Where the manual's pages live in the program's resources (widgets/CMakeLists.txt).
const QString kManualRoot = QStringLiteral("qrc:/help/");

} // namespace

ManualBrowser::ManualBrowser(QWidget* parent)
    : QTextBrowser(parent) {
    // Links leaving the manual (the project's web pages, papers) go to the desktop's browser;
    // links between pages and to headings stay here (doSetSource).
    setOpenLinks(false);
    connect(this, &QTextBrowser::anchorClicked, this, [this](const QUrl& link) {
        const QUrl target = source().resolved(link);
        if (target.scheme() == QLatin1String("qrc"))
            setSource(target);
        else
            QDesktopServices::openUrl(target);
    });
}

QString ManualBrowser::headingAnchor(const QString& heading) {
    QString anchor = heading.trimmed().toLower();
    anchor.remove(QRegularExpression(QStringLiteral("[^\\w\\- ]")));
    anchor.replace(QLatin1Char(' '), QLatin1Char('-'));
    return anchor;
}

void ManualBrowser::doSetSource(const QUrl& name, QTextDocument::ResourceType type) {
    const QString page = name.adjusted(QUrl::RemoveFragment).toString();
    if (page != source().adjusted(QUrl::RemoveFragment).toString() || document()->isEmpty()) {
        QUrl without_fragment = name.adjusted(QUrl::RemoveFragment);
        QTextBrowser::doSetSource(without_fragment, page.endsWith(QLatin1String(".md"))
                                                        ? QTextDocument::MarkdownResource
                                                        : type);
        addHeadingAnchors();
    }
    if (name.hasFragment())
        scrollToAnchor(name.fragment());
    else
        verticalScrollBar()->setValue(0);
}

// Qt's Markdown reader makes headings without anchors; the pages link to them GitHub's way.
void ManualBrowser::addHeadingAnchors() {
    QTextCursor cursor(document());
    for (QTextBlock block = document()->begin(); block.isValid(); block = block.next()) {
        if (block.blockFormat().headingLevel() == 0 || block.text().isEmpty())
            continue;
        cursor.setPosition(block.position());
        cursor.setPosition(block.position() + block.length() - 1, QTextCursor::KeepAnchor);
        QTextCharFormat anchor;
        anchor.setAnchor(true);
        anchor.setAnchorNames({headingAnchor(block.text())});
        cursor.mergeCharFormat(anchor);
    }
}

HelpBrowser::HelpBrowser(QWidget* parent)
    : QDialog(parent) {
    setWindowTitle(tr("MoE Planner manual"));
    setObjectName(QStringLiteral("helpBrowser"));
    browser_ = new ManualBrowser(this);
    page_choice_ = new QComboBox(this);
    for (const QString& page : pages())
        page_choice_->addItem(page, page);
    connect(page_choice_, &QComboBox::activated, this,
            [this](int index) { showPage(page_choice_->itemData(index).toString()); });
    connect(browser_, &QTextBrowser::sourceChanged, this, [this](const QUrl& source) {
        const int at = page_choice_->findData(source.fileName());
        if (at >= 0)
            page_choice_->setCurrentIndex(at);
    });
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Page:"), this));
    top->addWidget(page_choice_, 1);
    auto* back = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(back, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(browser_, 1);
    layout->addWidget(back);
    resize(900, 700);
    showPage(QStringLiteral("model.md"));
}

QStringList HelpBrowser::pages() {
    return {QStringLiteral("model.md"),  QStringLiteral("scenario.md"),
            QStringLiteral("format.md"), QStringLiteral("programs.md"),
            QStringLiteral("cli.md"),    QStringLiteral("architecture.md")};
}

void HelpBrowser::showPage(const QString& page) {
    browser_->setSource(QUrl(kManualRoot + page));
}

ShortcutsDialog::ShortcutsDialog(const QMenuBar* menus, QWidget* parent)
    : QDialog(parent) {
    setWindowTitle(tr("Keyboard shortcuts"));
    setObjectName(QStringLiteral("shortcutsDialog"));
    const QList<ShortcutRow> all = rows(menus);
    table_ = new QTableWidget(static_cast<int>(all.size()), 3, this);
    table_->setHorizontalHeaderLabels({tr("Where"), tr("Keys"), tr("Does")});
    table_->verticalHeader()->hide();
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    for (int row = 0; row < all.size(); ++row) {
        const ShortcutRow& entry = all[row];
        table_->setItem(row, 0, new QTableWidgetItem(entry.where));
        table_->setItem(row, 1, new QTableWidgetItem(entry.keys));
        table_->setItem(row, 2, new QTableWidgetItem(entry.does));
    }
    // Long key lists wrap in their column rather than pushing "Does" off to the side.
    table_->setWordWrap(true);
    table_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Interactive);
    table_->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
    table_->setColumnWidth(1, fontMetrics().horizontalAdvance(QStringLiteral("M")) * 22);
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    auto* close = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(close, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(table_, 1);
    layout->addWidget(close);
    resize(760, 560);
}

namespace {

QString withoutMnemonic(QString text) {
    text.remove(QRegularExpression(QStringLiteral("&(?!&)")));
    text.remove(QStringLiteral("…"));
    return text;
}

void collectMenu(const QMenu* menu, const QString& where, QList<ShortcutRow>& rows) {
    for (const QAction* action : menu->actions()) {
        if (action->menu()) {
            collectMenu(action->menu(),
                        where + QStringLiteral(" > ") + withoutMnemonic(action->text()), rows);
            continue;
        }
        const QList<QKeySequence> keys = action->shortcuts();
        if (keys.isEmpty())
            continue;
        QStringList texts;
        for (const QKeySequence& key : keys)
            texts << key.toString(QKeySequence::NativeText);
        rows.push_back({where, texts.join(QStringLiteral(", ")), withoutMnemonic(action->text())});
    }
}

void addView(const QString& view, const QList<KeyBinding>& bindings, QList<ShortcutRow>& rows) {
    for (const KeyBinding& binding : bindings)
        rows.push_back({view, binding.keys, binding.does});
}

} // namespace

QList<ShortcutRow> ShortcutsDialog::rows(const QMenuBar* menus) {
    QList<ShortcutRow> rows;
    if (menus)
        for (const QAction* top : menus->actions())
            if (top->menu())
                collectMenu(top->menu(), withoutMnemonic(top->text()), rows);
    addView(tr("Layout bar (focused)"), LayoutBar::keyBindings(), rows);
    addView(tr("Step timeline (focused)"), GanttCanvas::keyBindings(), rows);
    addView(tr("Experts on GPUs (focused)"), detail::PlacementCanvas::keyBindings(), rows);
    addView(tr("Hardware palette (focused)"), detail::HardwareCanvas::keyBindings(), rows);
    return rows;
}

} // namespace moe::widgets
