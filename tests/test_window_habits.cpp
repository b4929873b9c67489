// Issue 19, "desktop habits", offscreen: a scenario file dropped on the window opens as File >
// Open would (asking about unsaved edits, listing a broken file's problems, remembering it in the
// recent files); other files are refused with a status message, and of several dropped files the
// first scenario opens and the status bar says so. Ctrl+N lists the samples with their
// descriptions and makes the chosen one a new untitled document that Save never writes over the
// sample. The theme follows the desktop's colour scheme unless View > Theme says Light or Dark,
// and the choice is kept in QSettings.
#include "moe/scenario_io.h"
#include "moe_widgets/common/theme.h"
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/window/help_dialogs.h"
#include "moe_widgets/window/main_window.h"
#include "moe_widgets/window/sample_chooser.h"
#include "test_support.h"
#include "timeline/gantt_canvas.h"

#include <QAbstractButton>
#include <QAction>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScreen>
#include <QScrollBar>
#include <QSettings>
#include <QStatusBar>
#include <QTabBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeWidget>
#include <QUndoStack>
#include <QUrl>
#include <QtTest>

#include <functional>

using namespace moe;
using namespace moe::widgets;

namespace {

MainWindow::Options quiet() {
    return MainWindow::Options{false, false, {}};
}

QString samplePath(const char* name) {
    return QString::fromStdString(test::samplePath(name));
}

QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

bool writeFile(const QString& path, const QByteArray& data) {
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(data) == data.size();
}

/// Drags `paths` onto `target` (a widget of the window) and drops them there, as the window
/// system delivers it: enter (Qt hands it up to the first widget that accepts drops), then drop
/// (to the widget that accepted the enter). Returns whether the drop was accepted.
bool dropFiles(QWidget* target, const QStringList& paths) {
    QMimeData mime;
    QList<QUrl> urls;
    for (const QString& path : paths)
        urls << QUrl::fromLocalFile(path);
    mime.setUrls(urls);
    const QPointF at(target->width() / 2.0, target->height() / 2.0);
    QDragEnterEvent enter(at.toPoint(), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(target, &enter);
    if (!enter.isAccepted())
        return false;
    QDropEvent drop(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(target, &drop);
    return drop.isAccepted();
}

/// Runs `answer` on the next modal dialog once it is shown (QMessageBox, QFileDialog, ...).
void whenModal(QObject* context, const std::function<void(QWidget*)>& answer) {
    auto* timer = new QTimer(context);
    timer->setInterval(10);
    QObject::connect(timer, &QTimer::timeout, context, [timer, answer] {
        if (QWidget* modal = QApplication::activeModalWidget()) {
            timer->stop();
            timer->deleteLater();
            answer(modal);
        }
    });
    timer->start();
}

bool paletteIsDark() {
    return QApplication::palette().color(QPalette::Window).lightness() < 128;
}

} // namespace

class TestWindowHabits : public QObject {
    Q_OBJECT

    QTemporaryDir config_;

private slots:
    void initTestCase() {
        QCoreApplication::setOrganizationName(QStringLiteral("MoE Planner Tests"));
        QCoreApplication::setApplicationName(QStringLiteral("test_window_habits"));
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, config_.path());
    }
    void init() { QSettings().clear(); }

    // --- Drop a file on the window ------------------------------------------------------------

    void droppedScenarioOpensLikeFileOpen() {
        MainWindow window(MainWindow::Options{true, false, {}});
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const QString sample = samplePath("mixtral-8x7b-32xh100.yaml");
        // Dropped on a panel that takes no drops itself: the window takes it.
        QVERIFY(dropFiles(window.statusBar(), {sample}));
        QTRY_COMPARE(window.document()->filePath(), sample);
        QCOMPARE(window.document()->scenario().name, std::string("mixtral-8x7b-32xh100"));
        QVERIFY(!window.isWindowModified());
        QVERIFY(window.windowTitle().startsWith("mixtral-8x7b-32xh100.yaml"));
        QVERIFY(window.statusBar()->currentMessage().startsWith("Opened "));
        QCOMPARE(QSettings().value("recentFiles").toStringList().value(0), sample);
        // The views got the opened scenario's result (32 GPUs, not the default's 64).
        QTRY_COMPARE(window.currentResult()->report.gpus, 32);
    }

    void droppedOtherFileIsRefused() {
        QTemporaryDir dir;
        const QString notes = dir.filePath("notes.txt");
        QVERIFY(writeFile(notes, "cluster: not a scenario\n"));
        MainWindow window(quiet());
        const std::string before = window.document()->scenario().name;
        QVERIFY(dropFiles(&window, {notes}));
        QTRY_VERIFY(window.statusBar()->currentMessage().contains("not a scenario file"));
        QVERIFY2(window.statusBar()->currentMessage().contains("notes.txt"),
                 qPrintable(window.statusBar()->currentMessage()));
        QVERIFY(window.document()->filePath().isEmpty());
        QCOMPARE(window.document()->scenario().name, before);
        // A drag without local files (text, a web link) is not taken at all.
        QMimeData text;
        text.setText("hello");
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &text, Qt::LeftButton,
                              Qt::NoModifier);
        QCoreApplication::sendEvent(&window, &enter);
        QVERIFY(!enter.isAccepted());
    }

    void severalDroppedFilesOpenTheFirstScenario() {
        QTemporaryDir dir;
        const QString readme = dir.filePath("README.txt");
        QVERIFY(writeFile(readme, "read me\n"));
        const QString first = samplePath("dense-70b-64xh100.yaml");
        const QString second = samplePath("mixtral-8x7b-32xh100.yaml");
        MainWindow window(quiet());
        QVERIFY(dropFiles(&window, {readme, first, second}));
        QTRY_COMPARE(window.document()->filePath(), first);
        const QString message = window.statusBar()->currentMessage();
        QVERIFY2(message.contains("dense-70b-64xh100.yaml") &&
                     message.contains("2 other dropped file(s) ignored"),
                 qPrintable(message));
    }

    void droppedFileAsksAboutUnsavedEdits() {
        MainWindow window(quiet());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(!hasErrors(window.document()->setField("layout.ep", "16")));
        QString question;
        whenModal(this, [&question](QWidget* modal) {
            auto* box = qobject_cast<QMessageBox*>(modal);
            question = box ? box->text() : QStringLiteral("not a message box");
            if (box)
                box->button(QMessageBox::Cancel)->click();
        });
        QVERIFY(dropFiles(&window, {samplePath("mixtral-8x7b-32xh100.yaml")}));
        QTRY_VERIFY(!question.isEmpty());
        QVERIFY2(question.contains("unsaved changes"), qPrintable(question));
        // Cancelled: the edited document stays.
        QVERIFY(window.document()->filePath().isEmpty());
        QCOMPARE(window.document()->scenario().layout.ep, 16);
        QVERIFY(window.document()->isModified());
        window.document()->undoStack()->clear(); // closes without asking
    }

    void droppedBrokenScenarioListsItsProblems() {
        QTemporaryDir dir;
        const QString broken = dir.filePath("broken.yaml");
        QByteArray text = readAll(samplePath("dgx-h100-8x8-moe16.yaml"));
        text.replace("micro_batch: 2", "micro_batch: -3");
        QVERIFY(text.contains("micro_batch: -3"));
        QVERIFY(writeFile(broken, text));
        MainWindow window(quiet());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(dropFiles(&window, {broken}));
        QTRY_VERIFY(window.statusBar()->currentMessage().contains("was not opened"));
        QVERIFY(window.statusBar()->currentMessage().contains("broken.yaml"));
        QVERIFY(window.document()->filePath().isEmpty());
        QVERIFY(window.dockFor("warnings")->isVisible());
    }

    // --- Ctrl+N: new from sample --------------------------------------------------------------

    void ctrlNMakesAnUntitledDocumentFromASample() {
        // The shipped samples, copied so that "never overwrites the sample" is checked on files
        // this test owns; MOE_SAMPLES_DIR is where sampleFiles() looks first.
        QTemporaryDir samples;
        const QStringList names = {"dgx-h100-8x8-moe16.yaml", "mixtral-8x7b-32xh100.yaml"};
        for (const QString& name : names)
            QVERIFY(QFile::copy(samplePath(qPrintable(name)), samples.filePath(name)));
        qputenv("MOE_SAMPLES_DIR", samples.path().toUtf8());
        const QString mixtral = samples.filePath("mixtral-8x7b-32xh100.yaml");
        const QByteArray shipped = readAll(mixtral);
        QCOMPARE(MainWindow::sampleFiles(),
                 QStringList({samples.filePath(names[0]), samples.filePath(names[1])}));

        MainWindow window(quiet());
        window.show();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QTest::keyClick(&window, Qt::Key_N, Qt::ControlModifier);
        SampleChooser* chooser = nullptr;
        QTRY_VERIFY((chooser = window.findChild<SampleChooser*>()) != nullptr);
        QVERIFY(chooser->isVisible());
        // The built-in default, then the samples as --list-samples prints them, each with its
        // one-line description (the scenario's description field).
        QCOMPARE(chooser->list()->topLevelItemCount(), 3);
        QCOMPARE(chooser->samples().value(0).path, QString());
        const LoadResult loaded = loadScenarioFile(mixtral.toStdString());
        QVERIFY(loaded.ok());
        QCOMPARE(chooser->samples().value(2).path, mixtral);
        QCOMPARE(chooser->list()->topLevelItem(2)->text(0), QString("mixtral-8x7b-32xh100"));
        QCOMPARE(chooser->list()->topLevelItem(2)->text(1),
                 QString::fromStdString(loaded.scenario->description));
        QVERIFY(!chooser->list()->topLevelItem(1)->text(1).isEmpty());

        QVERIFY(chooser->selectPath(mixtral));
        chooser->accept();
        QTRY_COMPARE(window.document()->scenario(), *loaded.scenario);
        QVERIFY(window.document()->filePath().isEmpty()); // untitled
        QVERIFY(!window.isWindowModified());
        QVERIFY(window.windowTitle().startsWith("mixtral-8x7b-32xh100[*]"));
        QTRY_COMPARE(window.currentResult()->report.gpus, 32);

        // Save asks for a path (a save dialog, cancelled here) and the sample stays as shipped.
        QVERIFY(!hasErrors(window.document()->setField("layout.ep", "4")));
        bool asked_for_path = false;
        whenModal(this, [&asked_for_path](QWidget* modal) {
            asked_for_path = qobject_cast<QFileDialog*>(modal) != nullptr;
            modal->close();
        });
        window.activateWindow(); // back from the chooser
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QTest::keyClick(&window, Qt::Key_S, Qt::ControlModifier);
        QTRY_VERIFY(asked_for_path);
        QVERIFY(window.document()->filePath().isEmpty());
        QCOMPARE(readAll(mixtral), shipped);
        window.document()->undoStack()->clear();
        qunsetenv("MOE_SAMPLES_DIR");
    }

    void chooserDefaultRowIsTheBuiltInScenario() {
        MainWindow window(quiet());
        QVERIFY(window.newFromSample(samplePath("dense-70b-64xh100.yaml")));
        window.showNewFromSample();
        auto* chooser = window.findChild<SampleChooser*>();
        QVERIFY(chooser);
        QCOMPARE(chooser->chosenPath(), QString()); // first row, selected
        // Ctrl+N while it is open brings it forward instead of a second one.
        window.showNewFromSample();
        QCOMPARE(window.findChildren<SampleChooser*>().size(), 1);
        chooser->accept();
        QTRY_COMPARE(window.document()->scenario(), defaultScenario());
        QVERIFY(window.document()->filePath().isEmpty());
    }

    // --- Theme --------------------------------------------------------------------------------

    void themeDecision() {
        // An explicit choice wins over the desktop; System follows it, light when unknown.
        QCOMPARE(useDarkTheme(ThemeChoice::system, SystemScheme::dark), true);
        QCOMPARE(useDarkTheme(ThemeChoice::system, SystemScheme::light), false);
        QCOMPARE(useDarkTheme(ThemeChoice::system, SystemScheme::unknown), false);
        QCOMPARE(useDarkTheme(ThemeChoice::light, SystemScheme::dark), false);
        QCOMPARE(useDarkTheme(ThemeChoice::dark, SystemScheme::light), true);
        QCOMPARE(useDarkTheme(ThemeChoice::dark, SystemScheme::unknown), true);
        for (const ThemeChoice choice :
             {ThemeChoice::system, ThemeChoice::light, ThemeChoice::dark})
            QCOMPARE(themeChoiceFromKey(themeChoiceKey(choice)), choice);
        QCOMPARE(themeChoiceFromKey("purple"), ThemeChoice::system);
    }

    void themeFollowsTheDesktopUnlessChosen() {
        MainWindow window(quiet());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        ThemeController* theme = window.theme();
        QCOMPARE(theme->choice(), ThemeChoice::system);
        QVERIFY(window.findChild<QAction*>("themeSystemAction")->isChecked());
        QSignalSpy changed(theme, &ThemeController::darkChanged);

        // The offscreen platform cannot change its scheme: tell the controller, as
        // QStyleHints::colorSchemeChanged does on Qt >= 6.5.
        theme->setSystemScheme(SystemScheme::dark);
        QVERIFY(theme->isDark());
        QVERIFY(paletteIsDark());
        // The widgets follow the application palette (the views repaint on PaletteChange).
        QTRY_VERIFY(window.palette().color(QPalette::Base).lightness() < 128);
        QCOMPARE(changed.size(), 1);
        theme->setSystemScheme(SystemScheme::light);
        QVERIFY(!paletteIsDark());
        QCOMPARE(changed.size(), 2);

        // View > Theme > Light: a dark desktop no longer darkens the app.
        window.findChild<QAction*>("themeLightAction")->trigger();
        QCOMPARE(theme->choice(), ThemeChoice::light);
        theme->setSystemScheme(SystemScheme::dark);
        QVERIFY(!paletteIsDark());
        // Dark on a light desktop; System again follows the (dark) desktop.
        theme->setSystemScheme(SystemScheme::light);
        window.findChild<QAction*>("themeDarkAction")->trigger();
        QVERIFY(paletteIsDark());
        QVERIFY(window.findChild<QAction*>("themeDarkAction")->isChecked());
        theme->setSystemScheme(SystemScheme::dark);
        window.findChild<QAction*>("themeSystemAction")->trigger();
        QVERIFY(paletteIsDark());
        theme->setSystemScheme(SystemScheme::light);
        QVERIFY(!paletteIsDark());
    }

    void themeChoiceIsRemembered() {
        {
            MainWindow window(MainWindow::Options{true, false, {}});
            window.findChild<QAction*>("themeDarkAction")->trigger();
            QVERIFY(window.close());
        }
        QCOMPARE(QSettings().value("theme").toString(), QString("dark"));
        {
            MainWindow again(MainWindow::Options{true, false, {}});
            QCOMPARE(again.theme()->choice(), ThemeChoice::dark);
            QVERIFY(again.findChild<QAction*>("themeDarkAction")->isChecked());
            QVERIFY(paletteIsDark());
            again.setThemeChoice(ThemeChoice::light); // not a menu choice: not saved
            QVERIFY(!paletteIsDark());
        }
        QCOMPARE(QSettings().value("theme").toString(), QString("dark"));
        // The setting of the old View > Dark palette item still means Dark.
        QSettings().clear();
        QSettings().setValue("darkPalette", true);
        MainWindow old(MainWindow::Options{true, false, {}});
        QCOMPARE(old.theme()->choice(), ThemeChoice::dark);
        old.setThemeChoice(ThemeChoice::light);
    }

    // --- Issue 16: Help menu, and a window that fits a 1280 x 800 screen ---------------------

    void headingAnchorsAreGitHubs() {
        // docs/model.md's contents line links "#all-to-all-expert-load-and-routing-skew" to
        // "## All-to-all, expert load and routing skew": lower case, the comma dropped, spaces
        // to hyphens (hyphens kept).
        QCOMPARE(ManualBrowser::headingAnchor("All-to-all, expert load and routing skew"),
                 QString("all-to-all-expert-load-and-routing-skew"));
        QCOMPARE(ManualBrowser::headingAnchor("Time, cost and reliability"),
                 QString("time-cost-and-reliability"));
    }

    void helpShowsTheModelManualWithWorkingLinks() {
        MainWindow window(quiet());
        window.findChild<QAction*>("modelHelpAction")->trigger();
        auto* help = window.findChild<HelpBrowser*>();
        QVERIFY(help != nullptr);
        QVERIFY(help->isVisible());
        ManualBrowser* browser = help->browser();
        QCOMPARE(browser->source().fileName(), QString("model.md"));
        // The page is the built-in docs/model.md, rendered (headings, not "## ").
        QVERIFY(browser->toPlainText().startsWith("The performance model"));
        QVERIFY(browser->toPlainText().contains("Calibration status"));
        QVERIFY(!browser->toPlainText().contains("## "));
        // Asked again, the same window comes forward.
        window.findChild<QAction*>("modelHelpAction")->trigger();
        QCOMPARE(window.findChildren<HelpBrowser*>().size(), 1);
        // A heading link scrolls down to it; a link to another page opens that page there.
        help->resize(800, 500);
        QCOMPARE(browser->verticalScrollBar()->value(), 0);
        emit browser->anchorClicked(QUrl("#pipeline-schedules"));
        QVERIFY(browser->verticalScrollBar()->value() > 0);
        emit browser->anchorClicked(QUrl("scenario.md#rank-order-and-parallel-folding"));
        QCOMPARE(browser->source().fileName(), QString("scenario.md"));
        QVERIFY(browser->toPlainText().contains("Rank order and parallel folding",
                                                Qt::CaseInsensitive));
        QVERIFY(browser->verticalScrollBar()->value() > 0);
        for (const QString& page : HelpBrowser::pages()) {
            help->showPage(page);
            QVERIFY2(browser->toPlainText().size() > 1000, qPrintable(page));
        }
    }

    void shortcutsListMenusAndViews() {
        MainWindow window(quiet());
        window.findChild<QAction*>("shortcutsHelpAction")->trigger();
        auto* dialog = window.findChild<ShortcutsDialog*>();
        QVERIFY(dialog != nullptr);
        const QList<ShortcutRow> rows = ShortcutsDialog::rows(window.menuBar());
        QCOMPARE(dialog->table()->rowCount(), rows.size());
        const auto has = [&rows](const QString& where, const QKeySequence& keys,
                                 const QString& does) {
            for (const ShortcutRow& row : rows)
                if (row.where == where && row.does == does &&
                    row.keys.contains(keys.toString(QKeySequence::NativeText)))
                    return true;
            return false;
        };
        QVERIFY(has("File", QKeySequence::Save, "Save"));
        QVERIFY(has("Edit", QKeySequence::Undo, "Undo"));
        QVERIFY(has("View", QKeySequence(Qt::CTRL | Qt::Key_T), "Next routing sample"));
        QVERIFY(has("Help", QKeySequence(Qt::CTRL | Qt::Key_Slash), "Keyboard shortcuts"));
        // An action without a shortcut (Help > About) is not listed.
        for (const ShortcutRow& row : rows)
            QVERIFY(!row.does.contains("About"));
        // Then the keys each view takes while focused, from the views themselves.
        int timeline = 0;
        for (const ShortcutRow& row : rows)
            timeline += row.where.startsWith("Step timeline") ? 1 : 0;
        QCOMPARE(timeline, GanttCanvas::keyBindings().size());
        QVERIFY(timeline > 0);
    }

    void windowFitsA1280By800Screen() {
        MainWindow window(quiet());
        // As constructed it is no larger than its screen, or than its panels' minimum where that
        // is larger (the offscreen screen is 800x600): placing the docks grew it past both.
        const QSize room = window.screen()->availableSize();
        QVERIFY2(window.height() <= std::max(room.height(), window.minimumSizeHint().height()),
                 qPrintable(QString("%1x%2").arg(window.width()).arg(window.height())));
        QVERIFY(window.width() <= std::max(room.width(), window.minimumSizeHint().width()));
        QVERIFY(window.document()->open(samplePath("deepseek-v3-2048xh800.yaml")).empty());
        window.resize(1280, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTRY_VERIFY(window.currentResult() != nullptr);
        // Its panels' minimum sizes let it be 1280 x 800 (it grew to 817 before).
        QCOMPARE(window.size(), QSize(1280, 800));
        // Every dock tab shows its whole title (no "Time, co…").
        for (const QTabBar* tabs : window.findChildren<QTabBar*>()) {
            if (!tabs->isVisible())
                continue;
            for (int i = 0; i < tabs->count(); ++i) {
                const int text = tabs->fontMetrics().horizontalAdvance(tabs->tabText(i));
                QVERIFY2(tabs->tabRect(i).width() > text, qPrintable(tabs->tabText(i)));
            }
        }
        // The heatmap's stragglers table fits its dock without scrolling sideways.
        QTRY_COMPARE(window.currentResult()->report.gpus, 2048);
        QTableWidget* stragglers = nullptr;
        for (auto* table : window.findChildren<QTableWidget*>("StragglersTable"))
            if (table->isVisible())
                stragglers = table;
        QVERIFY(stragglers != nullptr);
        QTRY_VERIFY(stragglers->rowCount() > 1);
        QVERIFY(!stragglers->horizontalScrollBar()->isVisible());
    }
};

QTEST_MAIN(TestWindowHabits)
#include "test_window_habits.moc"
