// The topology's aggregated view (issue 16, "one representative pod drawn in full, the rest as
// x N with their summed traffic"): on the DeepSeek-V3 2048-GPU sample (8 pods of 8 racks) the
// summary names the 7 other pods and sums their links exactly as the core's tierLoadsOfRacks
// does; the view then shows only pod 0 and the summary (their GPUs are not hit-tested), a
// zoom to a summed GPU draws the pods again, the export writes the summary, and a one-pod
// cluster cannot be aggregated.
#include "moe/link_load.h"
#include "moe_widgets/document/view_state.h"
#include "moe_widgets/topology/topology_view.h"
#include "moe_widgets/window/main_window.h"
#include "widget_test_support.h"

#include <QFile>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace moe;
using namespace moe::widgets;

namespace {

/// "1,792"
QString withThousands(int n) {
    QString digits = QString::number(n);
    for (qsizetype at = digits.size() - 3; at > 0; at -= 3)
        digits.insert(at, QLatin1Char(','));
    return digits;
}

} // namespace

class TestTopologyAggregate : public QObject {
    Q_OBJECT
private slots:
    void summarySumsTheOtherPodsAsTheCoreDoes() {
        const EvaluationResultPtr result =
            test::resultFor(test::loadSample("deepseek-v3-2048xh800.yaml"));
        const Report& r = result->report;
        ViewState state;
        TopologyView view(nullptr, &state);
        view.resize(1400, 900);
        view.showResult(result);
        QVERIFY(view.canAggregate());
        QVERIFY(!view.aggregated()); // the full diagram unless asked
        const QRectF full = view.scene()->sceneRect();
        view.setAggregated(true);
        QVERIFY(view.aggregated());

        // 8 pods of 8 racks of 4 nodes of 8 GPUs: the summary stands for pods 1-7, racks
        // 8-63, nodes 32-255, 7 * 256 = 1792 GPUs, 7 * 8 = 56 rail leaves.
        const QStringList lines = view.aggregateSummaryText().split(QLatin1Char('\n'));
        QCOMPARE(lines.value(0), QStringLiteral("× 7 more pods like pod 0"));
        QCOMPARE(lines.value(1), QStringLiteral("pods 1–7 · racks 8–63 · nodes 32–255 · "
                                                "1,792 GPUs · 56 leaf switches"));
        // Per tier the core's sums over racks 8-63: one line each, in tier order.
        const std::vector<TierLoad> hidden = tierLoadsOfRacks(r, *r.graph(), 8, 64);
        QCOMPARE(hidden.size(), size_t(4)); // NVLink, PCIe, InfiniBand leaf and spine
        QCOMPARE(lines.size(), qsizetype(3 + hidden.size()));
        for (size_t t = 0; t < hidden.size(); ++t) {
            const QString line = lines.value(static_cast<qsizetype>(3 + t));
            const QString head =
                QStringLiteral("%1 · %2 links: ")
                    .arg(QString::fromStdString(tierName(hidden[t].kind, result->scenario.cluster)))
                    .arg(withThousands(hidden[t].load.links));
            QVERIFY2(line.startsWith(head), qPrintable(line + " / " + head));
            // 1792 GPUs: one NVLink, one PCIe and one leaf cable each; 56 leaves x 32 uplinks.
            QCOMPARE(hidden[t].load.links, 1792);
            if (hidden[t].load.utilization >= 0.1)
                QVERIFY2(line.endsWith(QStringLiteral("%1%").arg(
                             std::lround(hidden[t].load.utilization * 100))),
                         qPrintable(line));
        }
        // The pods partition the links: pod 0 and the summed pods add up to every link.
        const std::vector<TierLoad> shown = tierLoadsOfRacks(r, *r.graph(), 0, 8);
        const std::vector<TierLoad> all = tierLoads(r, *r.graph());
        QCOMPARE(all.size(), hidden.size());
        for (size_t t = 0; t < all.size(); ++t) {
            QCOMPARE(shown[t].load.links + hidden[t].load.links, all[t].load.links);
            QVERIFY(std::abs(shown[t].load.bytes + hidden[t].load.bytes - all[t].load.bytes) <=
                    1e-9 * all[t].load.bytes);
            QVERIFY(hidden[t].load.bytes > 0);
        }

        // The view: pod 0 and the summary under it; a summed GPU is not
        // hit (its rack is not drawn), pod 0's are.
        const QRectF aggregated = view.scene()->sceneRect();
        // Pod 0's column, two of four pod rows: about a quarter of the diagram.
        QVERIFY(aggregated.width() < full.width() * 0.55);
        QVERIFY(aggregated.height() < full.height() * 0.6);
        QVERIFY(aggregated.contains(view.rackSceneRect(0)));
        QVERIFY(!aggregated.contains(view.rackSceneRect(63)));
        QCOMPARE(view.gpuAtScenePos(view.gpuSceneRect(5).center()), 5);
        QCOMPARE(view.gpuAtScenePos(view.gpuSceneRect(2047).center()), -1);
        // Zooming to a summed GPU (a click in the heatmap) draws every pod again.
        view.zoomToGpu(2047);
        QVERIFY(!view.aggregated());
        QCOMPARE(view.scene()->sceneRect(), full);
        QCOMPARE(view.gpuAtScenePos(view.gpuSceneRect(2047).center()), 2047);
    }

    void exportWritesTheSummaryAndLeavesTheView() {
        const EvaluationResultPtr result =
            test::resultFor(test::loadSample("deepseek-v3-2048xh800.yaml"));
        ViewState state;
        TopologyView view(nullptr, &state);
        view.showResult(result);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("topology-aggregated.svg"));
        QCOMPARE(view.exportAggregatedTo(path), QString());
        const QString svg = QString::fromStdString(test::readFile(path.toStdString()));
        QVERIFY(!svg.isEmpty());
        QVERIFY(svg.contains(QStringLiteral("× 7 more pods like pod 0")));
        QVERIFY(svg.contains(QStringLiteral("pod 0 of 8 in full"))); // the page title
        QVERIFY(!view.aggregated());
    }

    void onePodCannotBeAggregated() {
        // The default: 8 nodes in 2 racks under one rail-optimized fabric's leaves = one pod.
        ViewState state;
        TopologyView view(nullptr, &state);
        view.showResult(test::resultFor(defaultScenario()));
        QVERIFY(!view.canAggregate());
        view.setAggregated(true);
        QVERIFY(!view.aggregated());
        QVERIFY(view.aggregateSummaryText().isEmpty());
        QTemporaryDir dir;
        QVERIFY(!view.exportAggregatedTo(dir.filePath(QStringLiteral("x.svg"))).isEmpty());
        // The window's export writes no aggregated file for it.
        MainWindow window(MainWindow::Options{false, false, {}});
        window.evaluateNow();
        QCOMPARE(window.exportViews(dir.path(), {QStringLiteral("svg")}), QStringList());
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("topology.svg"))));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("topology-aggregated.svg"))));
    }
};

QTEST_MAIN(TestTopologyAggregate)
#include "test_topology_aggregate.moc"
