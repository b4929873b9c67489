// Issue 16, layout search in the app: Tools > Search layouts… runs the core search off the GUI
// thread, lists the ranked layouts in the core's order with the CLI's figures and the search's
// own explanation, applies a ranked layout as one undo step, and Cancel stops the search.
#include "moe/format.h"
#include "moe/search.h"
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/window/layout_search_dialog.h"
#include "moe_widgets/window/main_window.h"
#include "widget_test_support.h"

#include <QAction>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTextBrowser>
#include <QUndoStack>
#include <QtTest>

using namespace moe;
using namespace moe::widgets;

namespace {

constexpr int kLayoutColumn = 3; ///< #, step, tokens/s, layout, ...
constexpr int kSearchTimeoutMs = 120'000;

bool waitForSearch(LayoutSearchDialog& dialog) {
    if (!dialog.isRunning())
        return true;
    QSignalSpy finished(&dialog, &LayoutSearchDialog::searchFinished);
    return finished.wait(kSearchTimeoutMs);
}

/// The layout fields the search varies, as a comparable triple.
bool sameSearchedFields(const Scenario& a, const Scenario& b) {
    return a.layout == b.layout && a.training.micro_batch == b.training.micro_batch &&
           a.training.recompute == b.training.recompute;
}

} // namespace

class TestLayoutSearch : public QObject {
    Q_OBJECT
private slots:
    /// The list is the core search's ranking: same layouts in the same order, the first the
    /// core's best; ordered by step time (the layouts tied with the fastest, within
    /// tie_share, first, then non-decreasing); each row's explanation is explainRanked's.
    void listsTheCoreRanking() {
        ScenarioDocument document;
        document.reset(test::loadSample("dgx-h100-8x8-moe16.yaml"));
        LayoutSearchDialog dialog(&document);
        dialog.start();
        QVERIFY(dialog.isRunning());
        QVERIFY(!dialog.cancelButton()->isHidden() && dialog.cancelButton()->isEnabled());
        QVERIFY(waitForSearch(dialog));
        QVERIFY(!dialog.isRunning());
        const SearchResult& shown = dialog.result();
        QVERIFY(!shown.interrupted);
        QVERIFY(shown.found());

        SearchOptions options;
        options.top_n = dialog.options().top_n;
        const SearchResult core = searchLayouts(document.scenario(), options);
        QCOMPARE(dialog.table()->rowCount(), static_cast<int>(core.ranked.size()));
        QCOMPARE(dialog.table()->item(0, kLayoutColumn)->text().toStdString(),
                 layoutSummary(core.ranked.front().scenario));
        for (int row = 0; row < dialog.table()->rowCount(); ++row) {
            const SearchCandidate& c = core.ranked[static_cast<size_t>(row)];
            QCOMPARE(dialog.table()->item(row, kLayoutColumn)->text().toStdString(),
                     layoutSummary(c.scenario));
            QVERIFY(dialog.table()->item(row, 0)->text().startsWith(QString::number(row + 1)));
            QCOMPARE(shown.ranked[static_cast<size_t>(row)].figures.step_time_s,
                     c.figures.step_time_s);
        }
        // By step time: a tied prefix within tie_share of the fastest, then non-decreasing.
        double fastest = shown.ranked.front().figures.step_time_s;
        for (const SearchCandidate& c : shown.ranked)
            fastest = std::min(fastest, c.figures.step_time_s);
        const double tie_limit = fastest * (1.0 + options.tie_share);
        size_t i = 0;
        while (i < shown.ranked.size() && shown.ranked[i].figures.step_time_s <= tie_limit)
            ++i;
        QVERIFY(i >= 1);
        for (; i + 1 < shown.ranked.size(); ++i)
            QVERIFY(shown.ranked[i].figures.step_time_s <= shown.ranked[i + 1].figures.step_time_s);

        // The winner is selected and explained with the search's own words.
        QCOMPARE(dialog.table()->currentRow(), 0);
        const QString winner = dialog.explanation()->toPlainText();
        QVERIFY2(winner.contains(QString::fromStdString(core.explanation[1])), qPrintable(winner));
        dialog.table()->selectRow(1);
        const QString second = dialog.explanation()->toPlainText();
        QVERIFY2(second.contains("Against the winner (#1): "), qPrintable(second));
        QVERIFY(second.contains(QString::fromStdString(explainRanked(core, options, 1)[1])));
        // The status counts what was evaluated and what the bound skipped.
        const QString status = dialog.statusLabel()->text();
        QVERIFY(core.rejectedCount(RejectReason::bound) > 0);
        QVERIFY2(status.contains(QString(" evaluated (%1 more that fit are slower than every "
                                         "ranked layout)")
                                     .arg(QString::fromStdString(formatCount(
                                         double(core.rejectedCount(RejectReason::bound)))))),
                 qPrintable(status));
    }

    /// Apply sets the layout, micro-batch and recompute of the selected row as one undo step;
    /// one Undo restores the previous scenario entirely. After another edit the ranking is
    /// stale and Apply refuses.
    void applyIsOneUndoStep() {
        ScenarioDocument document;
        document.reset(test::loadSample("dgx-h100-8x8-moe16.yaml"));
        const Scenario before = document.scenario();
        LayoutSearchDialog dialog(&document);
        dialog.start();
        QVERIFY(waitForSearch(dialog));
        const std::vector<SearchCandidate>& ranked = dialog.result().ranked;
        QVERIFY(!ranked.empty());
        // The sample's own layout is not the winner (it ranks below the shown ones).
        QVERIFY(!sameSearchedFields(ranked.front().scenario, before));
        dialog.table()->selectRow(0);
        QVERIFY(dialog.applyButton()->isEnabled());
        const int steps = document.undoStack()->count();
        dialog.applyButton()->click();
        QCOMPARE(document.undoStack()->count(), steps + 1);
        QVERIFY(sameSearchedFields(document.scenario(), ranked.front().scenario));
        QVERIFY(!(document.scenario() == before));
        Scenario expected = before;
        expected.layout = ranked.front().scenario.layout;
        expected.training.micro_batch = ranked.front().scenario.training.micro_batch;
        expected.training.recompute = ranked.front().scenario.training.recompute;
        QVERIFY(document.scenario() == expected); // nothing but the searched fields changed
        // The applied row is now the document's layout: nothing to apply.
        QVERIFY(!dialog.applyButton()->isEnabled());
        QVERIFY(!dialog.applyRow(0).isEmpty());
        QCOMPARE(document.undoStack()->count(), steps + 1);

        document.undoStack()->undo();
        QVERIFY(document.scenario() == before);
        QVERIFY(dialog.applyButton()->isEnabled());

        // Another row after another (non-layout) edit: refused, nothing changes.
        QVERIFY(!hasErrors(document.setField("training.global_batch",
                                             QString::number(before.training.global_batch * 2))));
        const Scenario edited = document.scenario();
        QVERIFY(!dialog.applyRow(1).isEmpty());
        QVERIFY(!dialog.applyButton()->isEnabled());
        QVERIFY(document.scenario() == edited);
    }

    /// Cancel stops the search at the next structure: it ends interrupted, long before the
    /// last structure, with nothing listed.
    void cancelStopsTheSearch() {
        ScenarioDocument document;
        document.reset(test::loadSample("deepseek-v3-2048xh800.yaml"));
        LayoutSearchDialog dialog(&document);
        dialog.start();
        dialog.cancelButton()->click();
        QVERIFY(waitForSearch(dialog));
        QVERIFY(dialog.result().interrupted);
        QVERIFY(!dialog.result().found());
        QCOMPARE(dialog.table()->rowCount(), 0);
        QVERIFY(dialog.progressTotal() > 10);
        QVERIFY2(
            dialog.progressDone() < dialog.progressTotal() / 2,
            qPrintable(
                QStringLiteral("%1 of %2").arg(dialog.progressDone()).arg(dialog.progressTotal())));
        QVERIFY2(dialog.statusLabel()->text().startsWith("Cancelled"),
                 qPrintable(dialog.statusLabel()->text()));
        QVERIFY(dialog.searchButton()->isEnabled());
        QVERIFY(!dialog.applyButton()->isEnabled());
        // A new search after a cancelled one runs to the end (on the smaller default sample: a
        // full DeepSeek-V3 search takes minutes under the sanitizers).
        document.reset(test::loadSample("dgx-h100-8x8-moe16.yaml"));
        dialog.start();
        QVERIFY(waitForSearch(dialog));
        QVERIFY(dialog.result().found());
        QCOMPARE(dialog.progressDone(), dialog.progressTotal());
    }

    /// Tools > Search layouts… (Ctrl+Shift+L) opens one dialog per window and searches the
    /// document; closing the window while it runs is safe.
    void toolsMenuOpensTheSearch() {
        MainWindow window(MainWindow::Options{false, false, {}});
        auto* action = window.findChild<QAction*>(QStringLiteral("searchLayoutsAction"));
        QVERIFY(action);
        QCOMPARE(action->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L));
        action->trigger();
        auto* dialog = window.findChild<LayoutSearchDialog*>();
        QVERIFY(dialog);
        QVERIFY(dialog->isVisible());
        QVERIFY(waitForSearch(*dialog));
        QVERIFY(dialog->result().found());
        QCOMPARE(dialog->searched(), window.document()->scenario());
        action->trigger();
        QCOMPARE(window.findChildren<LayoutSearchDialog*>().size(), qsizetype{1});
        dialog->start(); // destroyed while running: the destructor stops and waits
    }
};

QTEST_MAIN(TestLayoutSearch)
#include "test_layout_search.moc"
