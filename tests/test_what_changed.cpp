// The "What changed" panel and the status bar's summary (issue 16): after an edit made the way
// the layout bar makes it, they show old -> new step time and the items that moved most, against
// the previous state; the figures are the core's own comparison of the two reports
// (compareSteps), undo shows the reverse, and opening another file starts afresh.

#include "moe/compare.h"
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/experiments/layout_bar.h"
#include "moe_widgets/report/what_changed_view.h"
#include "moe_widgets/window/main_window.h"
#include "widget_test_support.h"

#include <QDockWidget>
#include <QLabel>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTableWidget>
#include <QUndoStack>
#include <QtTest>

using namespace moe;
using namespace moe::widgets;

namespace {

MainWindow::Options quiet() {
    return MainWindow::Options{false, false, {}};
}

QString sample(const char* name) {
    return QString::fromStdString(test::samplePath(name));
}

/// Opens a sample and waits for its own result (the one before belongs to the previous file,
/// and may describe an equal scenario: the default is this sample).
bool openAndWait(MainWindow& window, const char* name) {
    QSignalSpy shown(&window, &MainWindow::resultShown);
    if (!window.openFile(sample(name)))
        return false;
    return QTest::qWaitFor(
        [&] {
            return !shown.isEmpty() &&
                   window.currentResult()->scenario == window.document()->scenario();
        },
        10000);
}

QLabel* statusLine(const MainWindow& window) {
    return window.findChild<QLabel*>(QStringLiteral("whatChangedLabel"));
}

/// The panel lists `expected`'s first rows: item, before, after and change, in its order.
void checkPanel(const WhatChangedView& view, const StepChange& expected) {
    const QTableWidget* table = view.table();
    const int rows =
        std::min<int>(static_cast<int>(expected.items.size()), WhatChangedView::kTopItems);
    QCOMPARE(table->rowCount(), rows);
    for (int row = 0; row < rows; ++row) {
        const StepItemChange& e = expected.items[static_cast<size_t>(row)];
        QCOMPARE(table->item(row, 0)->data(Qt::UserRole).toInt(), static_cast<int>(e.item));
        QCOMPARE(table->item(row, 0)->text(), QString::fromUtf8(toString(e.item)));
        QCOMPARE(table->item(row, 3)->data(Qt::UserRole).toDouble(), e.delta_s);
        QCOMPARE(table->item(row, 3)->text(),
                 QString::fromStdString(formatSecondsDelta(e.delta_s)));
    }
}

} // namespace

class TestWhatChanged : public QObject {
    Q_OBJECT
private slots:
    void epEditListsTheItemsThatMoved();
    void undoShowsTheReverseAndOpenStartsAfresh();
    void fitsAt1280x800();
};

void TestWhatChanged::epEditListsTheItemsThatMoved() {
    MainWindow window(quiet());
    // The MoE sample with EP=8 inside 8-GPU nodes (the default's twin on disk).
    QVERIFY(openAndWait(window, "dgx-h100-8x8-moe16.yaml"));
    const EvaluationResultPtr before = window.currentResult();
    QCOMPARE(before->scenario.layout.ep, 8);
    WhatChangedView* view = window.whatChangedView();
    QVERIFY(view);
    QVERIFY(!view->change()); // nothing edited yet
    QVERIFY(statusLine(window)->text().isEmpty());

    // EP 8 -> 16 through the layout bar's own edit (one undo step, evaluated off the GUI thread).
    QVERIFY(window.layoutBar()->setDegree(Dim::ep, 16));
    QTRY_VERIFY_WITH_TIMEOUT(window.currentResult() != before &&
                                 window.currentResult()->scenario.layout.ep == 16,
                             10000);
    const EvaluationResultPtr after = window.currentResult();

    // The core's comparison of the two reports is what the panel and the status bar show.
    const StepChange expected = compareSteps(before->report, after->report);
    QVERIFY(view->change());
    QCOMPARE(view->change()->before_s, before->report.step_time_s);
    QCOMPARE(view->change()->after_s, after->report.step_time_s);
    QVERIFY(!expected.items.empty());
    checkPanel(*view, expected);
    QCOMPARE(view->cause(), QStringLiteral("EP 8 → 16"));

    // EP=16 leaves the 8-GPU node: the all-to-all crosses InfiniBand, so it is among the top
    // items and grew (a positive delta, coloured as worse).
    int a2a_row = -1;
    for (int row = 0; row < view->table()->rowCount(); ++row)
        if (view->table()->item(row, 0)->data(Qt::UserRole).toInt() ==
            static_cast<int>(StepItem::all_to_all))
            a2a_row = row;
    QVERIFY2(a2a_row >= 0, "all-to-all is not among the top items");
    QVERIFY(view->table()->item(a2a_row, 3)->data(Qt::UserRole).toDouble() > 0);
    QVERIFY(view->table()->item(a2a_row, 3)->text().startsWith('+'));

    // The status line: the core's summary in full in its tooltip, and as many of its items as
    // the width allows in its text (the window is not shown here, so it may be the shortest).
    const QLabel* status = statusLine(window);
    const QString full =
        QString::fromStdString(stepChangeSummary(expected, WhatChangedView::kStatusItems));
    QCOMPARE(status->toolTip(), full);
    QCOMPARE(view->summary(), full);
    QVERIFY2(full.startsWith("Step ") && full.contains(" → "), qPrintable(full));
    QVERIFY2(full.contains("all-to-all +") == (a2a_row < WhatChangedView::kStatusItems),
             qPrintable(full));
    QStringList fits;
    for (int n = WhatChangedView::kStatusItems; n >= 0; --n)
        fits << QString::fromStdString(stepChangeSummary(expected, n));
    QVERIFY2(fits.contains(status->text()), qPrintable(status->text()));
}

void TestWhatChanged::undoShowsTheReverseAndOpenStartsAfresh() {
    MainWindow window(quiet());
    QVERIFY(openAndWait(window, "dgx-h100-8x8-moe16.yaml"));
    const EvaluationResultPtr start = window.currentResult();
    QVERIFY(window.layoutBar()->setDegree(Dim::ep, 16));
    QTRY_VERIFY_WITH_TIMEOUT(window.currentResult()->scenario.layout.ep == 16, 10000);
    const EvaluationResultPtr edited = window.currentResult();
    QVERIFY(window.whatChangedView()->change());
    const StepChange forward = *window.whatChangedView()->change();
    QCOMPARE(forward.before_s, start->report.step_time_s);

    // Undo compares with the previous state (EP=16), not with a baseline: every delta flips.
    window.document()->undoStack()->undo();
    QTRY_VERIFY_WITH_TIMEOUT(window.currentResult()->scenario.layout.ep == 8, 10000);
    QVERIFY(window.whatChangedView()->change());
    const StepChange& back = *window.whatChangedView()->change();
    QCOMPARE(back.before_s, forward.after_s);
    QCOMPARE(back.after_s, forward.before_s);
    QCOMPARE(back.items.size(), forward.items.size());
    for (size_t i = 0; i < back.items.size(); ++i) {
        QCOMPARE(back.items[i].item, forward.items[i].item);
        QCOMPARE(back.items[i].delta_s, -forward.items[i].delta_s);
    }
    QCOMPARE(window.whatChangedView()->cause(), QStringLiteral("Undo EP 8 → 16"));
    checkPanel(*window.whatChangedView(),
               compareSteps(edited->report, window.currentResult()->report));

    // Redo: forward again.
    window.document()->undoStack()->redo();
    QTRY_VERIFY_WITH_TIMEOUT(window.currentResult()->scenario.layout.ep == 16, 10000);
    QVERIFY(window.whatChangedView()->change());
    QCOMPARE(window.whatChangedView()->change()->delta_s, forward.delta_s);

    // Another file is another scenario, not a previous state: nothing to say until an edit.
    QVERIFY(openAndWait(window, "mixtral-8x7b-32xh100.yaml"));
    QVERIFY(!window.whatChangedView()->change());
    QVERIFY(statusLine(window)->text().isEmpty());
    QCOMPARE(window.whatChangedView()->table()->rowCount(), 0);
}

void TestWhatChanged::fitsAt1280x800() {
    MainWindow window(quiet());
    window.resize(1280, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.layoutBar()->setDegree(Dim::ep, 16));
    QTRY_VERIFY_WITH_TIMEOUT(window.whatChangedView()->change().has_value(), 10000);
    QCoreApplication::processEvents();
    QVERIFY(window.width() <= 1280);
    QDockWidget* dock = window.dockFor(QStringLiteral("whatChanged"));
    QVERIFY(dock && dock->isVisible());
    // The panel's headline and every row it lists are inside the dock.
    const WhatChangedView* view = window.whatChangedView();
    const QTableWidget* table = view->table();
    QVERIFY2(view->height() >= view->minimumSizeHint().height(),
             qPrintable(QString::number(view->height())));
    QVERIFY(table->rowCount() > 0);
    const int last = table->rowCount() - 1;
    QVERIFY2(table->visualItemRect(table->item(std::min(last, 2), 0)).bottom() <=
                 table->viewport()->height(),
             "the first rows do not fit the panel");
    // The status line is not cut: it names what fits (at least the step's move), and the
    // figures beside it keep their own width.
    QLabel* line = statusLine(window);
    QVERIFY2(line->text().startsWith(QString::fromStdString(stepChangeSummary(*view->change(), 0))),
             qPrintable(line->text()));
    QVERIFY2(
        line->fontMetrics().horizontalAdvance(line->text()) <= line->contentsRect().width(),
        qPrintable(QString("%1 px for %2").arg(line->contentsRect().width()).arg(line->text())));
    for (const char* name : {"stepLabel", "economicsLabel", "timingLabel"}) {
        const QLabel* figure = window.findChild<QLabel*>(QLatin1String(name));
        QVERIFY2(figure->fontMetrics().horizontalAdvance(figure->text()) <=
                     figure->contentsRect().width(),
                 name);
    }
}

QTEST_MAIN(TestWhatChanged)
#include "test_what_changed.moc"
