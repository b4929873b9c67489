// The Time, cost and reliability panel: it renders a report's economics (goodput curve with the
// Young/Daly optimum marked, cost table) and exports for slides.
#include "moe/economics.h"
#include "moe/evaluate.h"
#include "moe/scenario_io.h"
#include "moe_widgets/charts/reliability_view.h"
#include "widget_test_support.h"

#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <qcustomplot.h>

#include <cmath>
#include <memory>

using namespace moe;
using namespace moe::widgets;

namespace {

QString cell(QTableWidget* table, const QString& figure) {
    for (int r = 0; r < table->rowCount(); ++r)
        if (table->item(r, 0)->text() == figure)
            return table->item(r, 1)->text();
    return {};
}

} // namespace

class TestReliabilityView : public QObject {
    Q_OBJECT

private slots:
    void showsTheCurveAndTheOptimum() {
        ReliabilityView view;
        view.resize(900, 700);
        QCOMPARE(view.viewId(), QStringLiteral("reliability"));
        QCOMPARE(view.curvePointCount(), 0);
        const EvaluationResultPtr result =
            test::resultFor(test::loadSample("deepseek-v3-2048xh800.yaml"));
        view.showResult(result);
        const Economics& e = result->report.economics;
        QCOMPARE(view.curvePointCount(), static_cast<int>(e.interval_sweep.size()));
        QVERIFY(view.curvePointCount() > 10);
        QVERIFY(std::fabs(view.markedOptimum_s() / e.reliability.optimal_interval_s - 1) < 1e-9);
        // The curve's highest point is at the marker (within one sweep step).
        QCPGraph* curve = view.plot()->graph(0);
        double best_x = 0, best_y = -1;
        for (auto it = curve->data()->constBegin(); it != curve->data()->constEnd(); ++it)
            if (it->value > best_y) {
                best_y = it->value;
                best_x = it->key;
            }
        QVERIFY(std::fabs(std::log(best_x * 60 / view.markedOptimum_s())) < std::log(1.2));
        // Issue 16: the legend never covers the data; it has its own row under the axes, in a
        // short dock too.
        view.resize(400, 330);
        view.plot()->replot();
        const QRect axes = view.plot()->axisRect()->rect();
        QVERIFY(!view.plot()->legend->outerRect().intersects(axes));
        QVERIFY(view.plot()->legend->outerRect().top() >= axes.bottom());
        // The cost table carries the run's figures.
        QTableWidget* table = view.costTable();
        QVERIFY(table->rowCount() >= 10);
        QVERIFY(cell(table, "Goodput")
                    .startsWith(QString::number(e.reliability.goodput * 100, 'f', 1) + "%"));
        QVERIFY(cell(table, "Cost of the run").startsWith("$"));
        QVERIFY(cell(table, "Checkpoint every").contains("Young/Daly optimum"));
        QVERIFY(!cell(table, "Capital").isEmpty());
    }

    void aFixedIntervalIsMarkedToo() {
        ReliabilityView view;
        auto result = std::make_shared<EvaluationResult>(
            *test::resultFor(test::loadSample("dgx-h100-8x8-moe16.yaml")));
        result->scenario.training.checkpoint_interval_s = 7200;
        result->report = evaluate(result->scenario);
        view.showResult(result);
        QCOMPARE(view.plot()->graphCount(), 3); // curve, optimum, the scenario's interval
        QVERIFY(view.costTable()->item(4, 1) != nullptr);
        bool fixed = false;
        for (int r = 0; r < view.costTable()->rowCount(); ++r)
            fixed = fixed || view.costTable()->item(r, 1)->text().endsWith("(fixed)");
        QVERIFY(fixed);
    }

    void exportsForSlides() {
        ReliabilityView view;
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(!view.exportTo(dir.filePath("none.png")).isEmpty()); // nothing to export yet
        view.showResult(
            test::resultFor(test::loadSample("scale-up-vs-scale-out/gb200-nvl72-racks.yaml")));
        for (const char* name : {"reliability.svg", "reliability.png", "reliability.pdf"}) {
            const QString path = dir.filePath(QString::fromLatin1(name));
            const QString error = view.exportTo(path);
            QVERIFY2(error.isEmpty(), qPrintable(error));
            QVERIFY(QFileInfo(path).size() > 1000);
        }
        QImage png(dir.filePath("reliability.png"));
        QVERIFY(png.width() >= 1600 && png.height() >= 900);
        // Exporting leaves the on-screen plot as it was.
        QVERIFY(view.curvePointCount() > 10);
    }
};

QTEST_MAIN(TestReliabilityView)
#include "test_reliability_view.moc"
