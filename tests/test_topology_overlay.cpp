// The topology view's group overlays (issue 16): every GPU takes the colour of the group the
// core's placement puts it in, for every overlay on the default and the DeepSeek-V3 2048-GPU
// sample; the legend lists groups and summarises the rest; "All groups" hovering keeps the EP
// ring visible inside the DP ring; and --export's window path writes topology-<overlay> files
// with the overlay's colours and legend.
#include "moe/evaluate.h"
#include "moe/group_overlay.h"
#include "moe/scenario_io.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/view_state.h"
#include "moe_widgets/topology/topology_view.h"
#include "moe_widgets/window/main_window.h"
#include "widget_test_support.h"

#include <QFile>
#include <QGraphicsView>
#include <QImage>
#include <QTemporaryDir>
#include <QtTest>

using namespace moe;
using namespace moe::widgets;

namespace {

/// The placement's group of `gpu` for an overlay, read from the core's Placement directly
/// (pp: the stage, the GPU's pp coordinate).
int coreGroup(const Placement& p, GroupOverlay overlay, int gpu) {
    switch (overlay) {
    case GroupOverlay::tp:
        return p.groupIndexOf(GroupKind::tp, gpu);
    case GroupOverlay::ep:
        return p.groupIndexOf(GroupKind::ep, gpu);
    case GroupOverlay::edp:
        return p.groupIndexOf(GroupKind::edp, gpu);
    case GroupOverlay::dp:
        return p.groupIndexOf(GroupKind::dp, gpu);
    case GroupOverlay::pp:
        return p.coordsOf(gpu).pp;
    case GroupOverlay::cp:
        return p.groupIndexOf(GroupKind::cp, gpu);
    }
    return -2;
}

/// The dimension's degree: 1 means one-GPU groups, drawn in one neutral fill.
int degree(const LayoutSpec& l, GroupOverlay overlay) {
    switch (overlay) {
    case GroupOverlay::tp:
        return l.tp;
    case GroupOverlay::ep:
        return l.ep;
    case GroupOverlay::edp:
        return l.expertDp();
    case GroupOverlay::dp:
        return l.dp;
    case GroupOverlay::pp:
        return 2; // a stage is coloured even when it is one GPU
    case GroupOverlay::cp:
        return l.cp;
    }
    return 0;
}

/// Pixels of `image` within a small distance of `color`.
int pixelsNear(const QImage& image, const QColor& color) {
    int n = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x) {
            const QColor c = image.pixelColor(x, y);
            n += std::abs(c.red() - color.red()) + std::abs(c.green() - color.green()) +
                     std::abs(c.blue() - color.blue()) <=
                 24;
        }
    return n;
}

QString readText(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

} // namespace

class TestTopologyOverlay : public QObject {
    Q_OBJECT
private slots:
    void overlayColoursEachGpuByItsCoreGroup_data() {
        QTest::addColumn<QString>("sample");
        QTest::newRow("default") << QString();
        QTest::newRow("deepseek-v3-2048") << QStringLiteral("deepseek-v3-2048xh800.yaml");
    }
    void overlayColoursEachGpuByItsCoreGroup() {
        QFETCH(QString, sample);
        const Scenario s =
            sample.isEmpty() ? defaultScenario() : test::loadSample(sample.toStdString());
        const EvaluationResultPtr result = test::resultFor(s);
        const Placement& p = *result->report.placement;
        ViewState state;
        TopologyView view(nullptr, &state);
        view.showResult(result);
        const int gpus = result->report.graph()->gpuCount();
        QVERIFY(gpus >= 64);
        for (const GroupOverlay overlay : kGroupOverlays) {
            view.setOverlay(overlay);
            QCOMPARE(view.overlay(), std::optional<GroupOverlay>(overlay));
            const bool single = degree(s.layout, overlay) == 1;
            for (int gpu = 0; gpu < gpus; ++gpu) {
                const int group = coreGroup(p, overlay, gpu);
                QVERIFY(group >= 0);
                if (view.overlayGroupOf(gpu) != group)
                    QFAIL(qPrintable(QStringLiteral("%1: GPU %2 in group %3, placement says %4")
                                         .arg(toString(overlay))
                                         .arg(gpu)
                                         .arg(view.overlayGroupOf(gpu))
                                         .arg(group)));
                const QColor expected = single ? view.gpuFill(0) : groupOverlayColor(group);
                if (view.gpuFill(gpu) != expected)
                    QFAIL(qPrintable(QStringLiteral("%1: GPU %2 filled %3, group %4 is %5")
                                         .arg(toString(overlay))
                                         .arg(gpu)
                                         .arg(view.gpuFill(gpu).name(), QString::number(group),
                                              expected.name())));
            }
            // The legend: a title, at most 8 groups by name, then summaries by shape.
            const QStringList legend = view.overlayLegendText();
            QVERIFY(!legend.isEmpty());
            QVERIFY2(legend.size() <= 1 + 8 + 4, qPrintable(legend.join('\n')));
        }
        // DeepSeek-V3: EP 64 over 8-GPU nodes, so EP group 0 is GPUs 0-63 on nodes 0-7; 32
        // groups, 8 listed and the other 24 summarised.
        if (!sample.isEmpty()) {
            view.setOverlay(GroupOverlay::ep);
            const QStringList legend = view.overlayLegendText();
            QVERIFY2(legend.value(1).startsWith(QStringLiteral("EP group 0: nodes 0-7")),
                     qPrintable(legend.join('\n')));
            QVERIFY2(legend.last().startsWith(QStringLiteral("… 24 more, each 64 GPUs in 8 nodes")),
                     qPrintable(legend.join('\n')));
            view.setOverlay(GroupOverlay::pp);
            QVERIFY2(view.overlayLegendText().value(1).startsWith(
                         QStringLiteral("DualPipe rank 0 (stages 0 and 15)")),
                     qPrintable(view.overlayLegendText().join('\n')));
        }
        view.setOverlay(std::nullopt);
        QCOMPARE(view.overlayGroupOf(0), -1);
        QVERIFY(view.overlayLegendText().isEmpty());
    }

    void allGroupsHoverKeepsTheEpRingInsideDp() {
        // DeepSeek-V3: DP groups are 128 consecutive GPUs and EP groups 64 of them, so every
        // EP partner of the hovered GPU is also a DP partner. At cell size both rings must
        // show: the EP colour may not be covered by the DP one.
        const EvaluationResultPtr result =
            test::resultFor(test::loadSample("deepseek-v3-2048xh800.yaml"));
        ViewState state;
        TopologyView view(nullptr, &state);
        view.resize(1400, 900);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.showResult(result);
        view.setHoverGroups(TopologyView::HoverGroups::all);
        view.zoomToGpu(200, 16);
        QCOMPARE(view.detail(), TopologyView::Detail::gpus);
        view.setHoveredGpu(200);
        QCOMPARE(view.hoverGroupMembers(GroupKind::ep).size(), 64);
        QCOMPARE(view.hoverGroupMembers(GroupKind::dp).size(), 128);
        QApplication::processEvents();
        const QImage image = view.graphicsView()->viewport()->grab().toImage();
        const QColor ep = collectiveColor(CollectiveKind::moe_dispatch);
        const QColor dp = collectiveColor(CollectiveKind::dp_sync);
        QVERIFY2(pixelsNear(image, ep) > 64, "no EP ring drawn");
        QVERIFY2(pixelsNear(image, dp) > 64, "no DP ring drawn");
    }

    void exportsCarryTheOverlay() {
        ViewState state;
        TopologyView view(nullptr, &state);
        view.showResult(test::resultFor(defaultScenario()));
        QTemporaryDir dir;
        QCOMPARE(view.exportOverlays(dir.path(), QStringLiteral("svg")), QStringList());
        // The default: EP 8 inside each 8-GPU node, so 8 EP groups, one per node.
        const QString svg = readText(dir.filePath(QStringLiteral("topology-ep.svg")));
        // (Wrapped legend lines are split into several texts: check the start of one.)
        QVERIFY(svg.contains(QStringLiteral("EP group 0:")));
        QVERIFY(svg.contains(QStringLiteral("EP group 7:")));
        QVERIFY(svg.contains(QStringLiteral(" · EP groups"))); // the page title
        QVERIFY(svg.contains(groupOverlayColor(0).name(), Qt::CaseInsensitive));
        QVERIFY(svg.contains(groupOverlayColor(7).name(), Qt::CaseInsensitive));
        // Exporting an overlay leaves the view as it was.
        QCOMPARE(view.overlay(), std::optional<GroupOverlay>());
        QVERIFY(!readText(dir.filePath(QStringLiteral("topology-dp.svg"))).isEmpty());
    }

    void windowExportWritesEveryOverlay() {
        MainWindow window(MainWindow::Options{false, false, {}});
        window.evaluateNow();
        QTemporaryDir dir;
        const QStringList problems = window.exportViews(dir.path(), {QStringLiteral("png")});
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
        for (const GroupOverlay overlay : kGroupOverlays) {
            const QString path =
                dir.filePath(QStringLiteral("topology-%1.png").arg(toString(overlay)));
            const QImage image(path);
            QVERIFY2(!image.isNull(), qPrintable(path));
            QVERIFY(image.width() >= 1600);
        }
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("topology.png"))));
    }
};

QTEST_MAIN(TestTopologyOverlay)
#include "test_topology_overlay.moc"
