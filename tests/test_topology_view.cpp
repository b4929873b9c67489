// The topology diagram: its exports hold one tile per GPU and follow the scenario, hovering a
// GPU outlines its parallel groups, a clicked warning's GPUs are drawn outlined, clicking a GPU
// shows its experts, GPU fills follow the chosen metric, and 2048 GPUs are drawn per rack (not
// an item per GPU or link) with the level of detail following the zoom.
#include "moe/evaluate.h"
#include "moe/link_load.h"
#include "moe/scenario_io.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/view_state.h"
#include "moe_widgets/topology/topology_view.h"
#include "widget_test_support.h"

#include <QElapsedTimer>
#include <QFile>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QImage>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSvgGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include <set>

using namespace moe;
using namespace moe::widgets;

namespace {

/// Texts of an SVG that are a bare number: the GPU ids drawn on the tiles (every other label
/// of the diagram and legend has words or units).
std::multiset<int> numberTexts(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QString svg = QString::fromUtf8(file.readAll());
    std::multiset<int> numbers;
    static const QRegularExpression text(QStringLiteral("<text[^>]*>\\s*(\\d+)\\s*</text>"));
    for (auto it = text.globalMatch(svg); it.hasNext();)
        numbers.insert(it.next().captured(1).toInt());
    return numbers;
}

/// Every text of an SVG, trimmed (a stacked label is one text per line).
QStringList svgTexts(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QString svg = QString::fromUtf8(file.readAll());
    QStringList texts;
    static const QRegularExpression text(QStringLiteral("<text[^>]*>([^<]*)</text>"));
    for (auto it = text.globalMatch(svg); it.hasNext();)
        texts << it.next().captured(1).trimmed();
    return texts;
}

/// The texts of `result`'s topology exported to SVG (empty when the export fails).
QStringList exportedTexts(const widgets::EvaluationResultPtr& result) {
    ViewState state;
    TopologyView view(nullptr, &state);
    view.showResult(result);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("topology.svg"));
    return view.exportTo(path).isEmpty() ? svgTexts(path) : QStringList{};
}

/// Shows the view at `size`, waits until the window system exposes it and hands it the default
/// scenario's result; false if the window never appears.
bool showDefaultOnScreen(TopologyView& view, QSize size = QSize(1400, 900)) {
    view.resize(size);
    view.show();
    if (!QTest::qWaitForWindowExposed(&view))
        return false;
    view.showResult(test::resultFor(defaultScenario()));
    return true;
}

bool near(const QColor& a, const QColor& b, int tolerance = 40) {
    return std::abs(a.red() - b.red()) + std::abs(a.green() - b.green()) +
               std::abs(a.blue() - b.blue()) <=
           tolerance;
}

} // namespace

class TestTopologyView : public QObject {
    Q_OBJECT
private slots:
    void svgHasOneTilePerGpu() {
        ViewState state;
        TopologyView view(nullptr, &state);
        view.showResult(test::resultFor(defaultScenario()));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("topology.svg"));
        QCOMPARE(view.exportTo(path), QString());
        const std::multiset<int> ids = numberTexts(path);
        // The default is 8 nodes x 8 GPUs: ids 0..63, each exactly once.
        QCOMPARE(static_cast<int>(ids.size()), 64);
        for (int gpu = 0; gpu < 64; ++gpu)
            QCOMPARE(static_cast<int>(ids.count(gpu)), 1);
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString svg = QString::fromUtf8(file.readAll());
        QVERIFY(svg.contains(QStringLiteral("Cluster topology — dgx-h100-8x8-moe16")));
        QVERIFY(svg.contains(QStringLiteral("GPU fill: expert load")));    // legend
        QVERIFY(svg.contains(QStringLiteral("Links: utilization")));       // legend
        QVERIFY(svg.contains(QStringLiteral("viewBox=\"0 0 1600 900\""))); // slide size
    }

    void svgFollowsTheScenario() {
        // Half the nodes: half the tiles, and the subtitle says so.
        Scenario s = defaultScenario();
        s.cluster.nodes = 4;
        s.layout.dp = 32;
        ViewState state;
        TopologyView view(nullptr, &state);
        view.showResult(test::resultFor(s));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("half.svg"));
        QCOMPARE(view.exportTo(path), QString());
        const std::multiset<int> ids = numberTexts(path);
        QCOMPARE(static_cast<int>(ids.size()), 32);
        QCOMPARE(*ids.rbegin(), 31);
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(file.readAll()).contains(QStringLiteral("32 × NVIDIA H100")));
    }

    void pngAndPdfAreValid() {
        ViewState state;
        TopologyView view(nullptr, &state);
        view.showResult(test::resultFor(defaultScenario()));
        QTemporaryDir dir;
        const QString png = dir.filePath(QStringLiteral("topology.png"));
        QCOMPARE(view.exportTo(png), QString());
        QImage image(png);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() >= 1600 && image.height() >= 900);
        QCOMPARE(image.width() * 9, image.height() * 16);
        // Not blank: the GPU tiles and switches put many colours on the page.
        std::set<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7)
                colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 50, qPrintable(QString::number(colours.size())));

        const QString pdf = dir.filePath(QStringLiteral("topology.pdf"));
        QCOMPARE(view.exportTo(pdf), QString());
        QFile file(pdf);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray bytes = file.readAll();
        QVERIFY(bytes.startsWith("%PDF-"));
        QVERIFY(bytes.trimmed().endsWith("%%EOF"));
        QVERIFY(bytes.size() > 10000);
    }

    void badExportsAreRefused() {
        ViewState state;
        TopologyView view(nullptr, &state);
        QVERIFY(!view.exportTo(QStringLiteral("/tmp/x.svg")).isEmpty()); // no result yet
        view.showResult(test::resultFor(defaultScenario()));
        QTemporaryDir dir;
        QVERIFY(view.exportTo(dir.filePath(QStringLiteral("topology.bmp"))).contains("format"));
        QVERIFY(!view.exportTo(QStringLiteral("/nonexistent-dir/x.png")).isEmpty());
    }

    void hoverOutlinesTheGpusGroups() {
        // Default: tp = cp = 1 and EP=8 is the innermost dimension, so GPU 10 (node 1) is EP
        // rank 2 of the EP group 8..15; DP=64 spans every GPU; TP and PP groups have one GPU
        // and are not outlined; expert-DP groups are GPUs with the same EP rank (stride 8).
        ViewState state;
        TopologyView view(nullptr, &state);
        view.showResult(test::resultFor(defaultScenario()));
        QSignalSpy hovered(&view, &TopologyView::hoveredGpuChanged);
        view.setHoveredGpu(10);
        QCOMPARE(hovered.count(), 1);
        QCOMPARE(view.hoveredGpu(), 10);
        QCOMPARE(view.hoverGroupMembers(GroupKind::ep),
                 (QVector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
        QCOMPARE(view.hoverGroupMembers(GroupKind::dp).size(), 64);
        QVERIFY(view.hoverGroupMembers(GroupKind::tp).isEmpty());
        QVERIFY(view.hoverGroupMembers(GroupKind::pp).isEmpty());
        QVERIFY(view.hoverGroupMembers(GroupKind::edp).isEmpty()); // not part of "all"
        view.setHoverGroups(TopologyView::HoverGroups::edp);
        QCOMPARE(view.hoverGroupMembers(GroupKind::edp),
                 (QVector<int>{2, 10, 18, 26, 34, 42, 50, 58}));
        QVERIFY(view.hoverGroupMembers(GroupKind::ep).isEmpty());
        view.setHoveredGpu(-1);
        QVERIFY(view.hoverGroupMembers(GroupKind::edp).isEmpty());
    }

    void mouseHoverFindsTheGpu() {
        ViewState state;
        TopologyView view(nullptr, &state);
        QVERIFY(showDefaultOnScreen(view));
        QGraphicsView* gv = view.graphicsView();
        const QPoint at = gv->mapFromScene(view.gpuSceneRect(42).center());
        QTest::mouseMove(gv->viewport(), at);
        QTRY_COMPARE(view.hoveredGpu(), 42);
        QCOMPARE(view.gpuAtScenePos(view.gpuSceneRect(42).center()), 42);
        QCOMPARE(view.gpuAtScenePos(QPointF(-1000, -1000)), -1);
        // GPU 42 is EP rank 2 of node 5 (GPUs 40..47).
        QCOMPARE(view.hoverGroupMembers(GroupKind::ep).front(), 40);
        QVERIFY(view.toolTipAt(view.gpuSceneRect(42).center()).contains(QStringLiteral("GPU 42")));
    }

    void highlightedGpusAreOutlined() {
        ViewState state;
        TopologyView view(nullptr, &state);
        QVERIFY(showDefaultOnScreen(view));
        state.setHighlight({3}, QStringLiteral("a warning about GPU 3"));
        view.zoomToGpu(3, 60);
        QGraphicsView* gv = view.graphicsView();
        const QImage shot = gv->viewport()->grab().toImage();
        // The outline sits just outside the tile: 3 scene units left of GPU 3, not of GPU 5
        // (left of GPU 4 would be GPU 3's right-hand outline).
        auto outside = [&](int gpu) {
            const QRectF tile = view.gpuSceneRect(gpu);
            const QPoint p = gv->mapFromScene(QPointF(tile.left() - 3, tile.center().y()));
            return QColor(shot.pixel(p * shot.devicePixelRatio()));
        };
        const QColor highlight(0xE0007A); // the light theme's highlight
        QVERIFY2(near(outside(3), highlight), qPrintable(outside(3).name()));
        QVERIFY2(!near(outside(5), highlight), qPrintable(outside(5).name()));
    }

    void clickShowsTheGpusExperts() {
        // 16 experts round-robin over EP=8: EP rank 2 (GPU 10) holds experts 2 and 10.
        ViewState state;
        TopologyView view(nullptr, &state);
        QVERIFY(showDefaultOnScreen(view));
        QGraphicsView* gv = view.graphicsView();
        QTest::mouseClick(gv->viewport(), Qt::LeftButton, {},
                          gv->mapFromScene(view.gpuSceneRect(10).center()));
        QCOMPARE(state.selectedGpu(), 10);
        const QString info = view.infoPanelText();
        QVERIFY2(info.contains(QStringLiteral("every MoE layer: 2, 10")), qPrintable(info));
        QVERIFY(info.contains(QStringLiteral("EP rank 2 of 8")));
        QVERIFY(info.contains(QStringLiteral("EP group 1: GPUs 8–15")));
        QVERIFY(info.contains(QStringLiteral("Memory")));
        QVERIFY(info.contains(QStringLiteral("Traffic per step")));
    }

    void fillFollowsTheMetric() {
        const EvaluationResultPtr result = test::resultFor(defaultScenario());
        ViewState state;
        TopologyView view(nullptr, &state);
        view.showResult(result);
        // Expert load: the hottest GPU's busiest layer is the report's worst imbalance, drawn
        // in the hot end of the shared load scale (whose hot end is the hottest ratio, >= 1.25).
        const int hot = result->report.load.hottestGpu(*result->report.placement);
        const double worst = result->report.load.max_imbalance;
        QVERIFY(std::abs(view.gpuMetricValue(hot) - worst) < 1e-9);
        QCOMPARE(view.gpuFill(hot).rgb(), loadRatioColor(worst, loadRatioScale(worst)).rgb());
        if (worst >= kLoadScaleMinHigh)
            QCOMPARE(view.gpuFill(hot).rgb(), loadScaleColor(1.0).rgb());
        // Memory: the stage's need over HBM, on the shared ramp.
        state.setGpuMetric(GpuMetric::memory_use);
        const MemoryBreakdown& memory = result->report.stages.front().memory;
        const double share = memory.total_bytes / memory.hbm_bytes;
        QVERIFY(share > 0.1 && share < 1.5);
        QCOMPARE(view.gpuMetricValue(7), share);
        QCOMPARE(view.gpuFill(7).rgb(), utilizationColor(share).rgb());
        // Traffic: the busiest of the GPU's own links.
        state.setGpuMetric(GpuMetric::traffic);
        const HardwareGraph& g = *result->report.graph();
        const auto& u = result->report.linkUtilization();
        const int nic = g.vertices[static_cast<size_t>(g.gpu_nic_vertex[7])].index;
        const double busiest =
            std::max({u[static_cast<size_t>(g.gpu_scale_up_link[7])],
                      u[static_cast<size_t>(g.gpu_nic_link[7])],
                      u[static_cast<size_t>(g.nic_leaf_link[static_cast<size_t>(nic)])]});
        QCOMPARE(view.gpuMetricValue(7), busiest);
    }

    void twoThousandGpusAreDrawnPerRack() {
        const EvaluationResultPtr result =
            test::resultFor(test::loadSample("deepseek-v3-2048xh800.yaml"));
        ViewState state;
        TopologyView view(nullptr, &state);
        view.resize(1400, 900);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QElapsedTimer timer;
        timer.start();
        view.showResult(result);
        view.graphicsView()->viewport()->repaint();
        const double first_ms = timer.nsecsElapsed() / 1e6;
        timer.restart();
        view.showResult(result); // an edit that keeps the cluster's shape
        view.graphicsView()->viewport()->repaint();
        const double again_ms = timer.nsecsElapsed() / 1e6;
        qInfo("2048 GPUs: first showResult + repaint %.1f ms, again %.1f ms", first_ms, again_ms);
        QVERIFY2(again_ms < 1000, qPrintable(QString::number(again_ms)));

        // 64 racks, 8 pods, two fabric layers, the busiest-link callout and the aggregated
        // view's "x N" summary (hidden until asked for): no item per GPU (2048) or link (8192).
        QCOMPARE(view.sceneItemCount(), 64 + 8 + 2 + 1 + 1);
        // The whole cluster in view is too small for labels; zoomed onto a GPU, everything.
        QVERIFY(view.detail() != TopologyView::Detail::full);
        QCOMPARE(TopologyView::detailAt(0.05), TopologyView::Detail::racks);
        QCOMPARE(TopologyView::detailAt(0.2), TopologyView::Detail::gpus);
        QCOMPARE(TopologyView::detailAt(1.0), TopologyView::Detail::full);
        view.zoomToGpu(1487, 56);
        QCOMPARE(view.detail(), TopologyView::Detail::full);
        QVERIFY(view.graphicsView()
                    ->mapToScene(view.graphicsView()->viewport()->rect())
                    .boundingRect()
                    .contains(view.gpuSceneRect(1487)));

        // Hovering still finds the groups: EP=64 innermost (GPUs 1472..1535), PP=16 outermost
        // (every 128th GPU from 1487 % 128 = 79).
        view.setHoveredGpu(1487);
        const QVector<int> ep = view.hoverGroupMembers(GroupKind::ep);
        QCOMPARE(ep.size(), 64);
        QCOMPARE(ep.front(), 1472);
        QCOMPARE(ep.back(), 1535);
        const QVector<int> pp = view.hoverGroupMembers(GroupKind::pp);
        QCOMPARE(pp.size(), 16);
        QCOMPARE(pp.front(), 79);
        QCOMPARE(pp[1], 79 + 128);

        // The slide export draws racks of GPU cells without 2048 id labels.
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("ds.svg"));
        QCOMPARE(view.exportTo(path), QString());
        QVERIFY(numberTexts(path).size() < 100);
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString svg = QString::fromUtf8(file.readAll());
        QVERIFY(svg.contains(QStringLiteral("2048 × NVIDIA H800")));
        QVERIFY(svg.contains(QStringLiteral("Pod 7")));
    }

    void rackRenderCacheFollowsTheModel() {
        // Racks and pods paint from a device-coordinate pixmap cache (panning blits it), and
        // every model change invalidates it: a metric switch repaints the GPU colours.
        ViewState state;
        TopologyView view(nullptr, &state);
        QVERIFY(showDefaultOnScreen(view, QSize(900, 700)));
        int cached = 0;
        for (QGraphicsItem* item : view.scene()->items())
            cached += item->cacheMode() == QGraphicsItem::DeviceCoordinateCache ? 1 : 0;
        // All but the fabric layers, the callout and the aggregated view's summary.
        QCOMPARE(cached, view.sceneItemCount() - 4);
        view.zoomToGpu(0, 20);
        const QImage before = view.graphicsView()->viewport()->grab().toImage();
        state.setGpuMetric(GpuMetric::memory_use);
        const QImage after = view.graphicsView()->viewport()->grab().toImage();
        QVERIFY(before != after);
        // Panning back and forth paints the same picture from the caches.
        QScrollBar* bar = view.graphicsView()->horizontalScrollBar();
        bar->setValue(bar->value() + 40);
        bar->setValue(bar->value() - 40);
        QCOMPARE(view.graphicsView()->viewport()->grab().toImage(), after);
    }
    void linkLabelsCarryTheCoresFigures() {
        // The default: 8 nodes of 8 GPUs, 4 nodes a rack, 8 rails of 48 GB/s NICs. Rack 0's
        // rail-0 cables (NIC 0 of nodes 0-3) are drawn as one line to their leaf; its label is
        // the core's LinkLoad of those 4 cables.
        const EvaluationResultPtr result = test::resultFor(defaultScenario());
        const Report& r = result->report;
        const HardwareGraph& g = *r.graph();
        std::vector<int> cables;
        for (int node = 0; node < 4; ++node) {
            QCOMPARE(g.nic_leaf[static_cast<size_t>(node * 8)], g.nic_leaf[0]);
            cables.push_back(g.nic_leaf_link[static_cast<size_t>(node * 8)]);
        }
        const LinkLoad load = linkLoad(r, g, cables);
        // By hand: the cables' bytes over the step time, against 4 x 48 GB/s.
        double bytes = 0;
        for (const int link : cables)
            bytes += r.linkBytes()[static_cast<size_t>(link)];
        QVERIFY(bytes > 0);
        QCOMPARE(load.gbps, bytes / r.step_time_s / 1e9);
        QCOMPARE(load.bandwidth_gbps, 4 * 48.0);
        QCOMPARE(load.utilization, bytes / r.step_time_s / 1e9 / 192);

        const QStringList texts = exportedTexts(result);
        QVERIFY(!texts.isEmpty());
        // The export stacks the label (bytes, rate, share) where the cable enters the rack.
        QVERIFY2(texts.contains(QString::number(load.gbps, 'f', 0) + QStringLiteral(" GB/s")),
                 qPrintable(texts.join(QLatin1Char('|'))));
        QVERIFY(texts.contains(QString::number(std::lround(load.utilization * 100)) +
                               QStringLiteral("%")));
        // Leaf 0's spine uplinks as one bundle: the same figures from the core.
        std::vector<int> uplinks;
        for (int k = 0; k < g.leaf_spine_links_count[0]; ++k)
            uplinks.push_back(g.leaf_spine_links_begin[0] + k);
        const LinkLoad up = linkLoad(r, g, uplinks);
        QVERIFY(up.bytes > 0);
        QVERIFY(texts.contains(QString::number(up.gbps, 'f', 1) + QStringLiteral(" GB/s")));
    }

    void busiestLinkAndTierAreCalledOut() {
        const EvaluationResultPtr result = test::resultFor(defaultScenario());
        const Report& r = result->report;
        const HardwareGraph& g = *r.graph();
        // The core's ranking: the first link of the highest utilization.
        int busiest = -1;
        for (size_t id = 0; id < r.linkUtilization().size(); ++id)
            if (busiest < 0 ||
                r.linkUtilization()[id] > r.linkUtilization()[static_cast<size_t>(busiest)])
                busiest = static_cast<int>(id);
        QCOMPARE(busiestLink(r), busiest);
        QCOMPARE(g.links[static_cast<size_t>(busiest)].kind, LinkKind::nic_leaf);
        const std::vector<TierLoad> tiers = tierLoads(r, g);
        const int tier = busiestTier(tiers);
        QVERIFY(tier >= 0);

        const QStringList texts = exportedTexts(result);
        QVERIFY(!texts.isEmpty());
        const LinkLoad load = linkLoad(r, g, busiest);
        const QString link_callout = QStringLiteral("busiest link: %1 · %2 GB/s · %3%")
                                         .arg(QString::fromStdString(linkName(g, busiest)))
                                         .arg(load.gbps, 0, 'f', load.gbps < 10 ? 1 : 0)
                                         .arg(std::lround(load.utilization * 100));
        QVERIFY2(texts.contains(link_callout), qPrintable(texts.filter("busiest").join('|')));
        const QString tier_name = QString::fromStdString(
            tierName(tiers[static_cast<size_t>(tier)].kind, result->scenario.cluster));
        QCOMPARE(tier_name, QStringLiteral("InfiniBand leaf"));
        QVERIFY(!texts.filter(QStringLiteral("busiest tier: ") + tier_name + QStringLiteral(" · "))
                     .isEmpty());
    }
    void idsAppearWhereTheyFit() {
        // The scene drawn at a scale: at 0.5 a GPU tile is 20 px (GPU-cell detail), room for the
        // node ids in the tray headers and the GPU ids on the tiles; at 0.08 (whole racks)
        // neither fits.
        ViewState state;
        TopologyView view(nullptr, &state);
        view.showResult(test::resultFor(defaultScenario()));
        QCOMPARE(TopologyView::detailAt(0.5), TopologyView::Detail::gpus);
        QCOMPARE(TopologyView::detailAt(0.08), TopologyView::Detail::racks);
        // Painted afresh (as exports are), not from the racks' pixmap caches.
        for (QGraphicsItem* item : view.scene()->items())
            item->setCacheMode(QGraphicsItem::NoCache);
        QTemporaryDir dir;
        auto textsAt = [&](double scale) {
            const QString path = dir.filePath(QStringLiteral("scene-%1.svg").arg(scale));
            const QRectF bounds = view.scene()->sceneRect();
            QSvgGenerator svg;
            svg.setFileName(path);
            svg.setSize((bounds.size() * scale).toSize());
            svg.setViewBox(QRectF(QPointF(0, 0), bounds.size() * scale));
            QPainter painter(&svg);
            view.scene()->render(&painter, QRectF(QPointF(0, 0), bounds.size() * scale), bounds);
            painter.end();
            return svgTexts(path);
        };
        const QStringList near = textsAt(0.5);
        for (int node = 0; node < 8; ++node)
            QVERIFY2(near.contains(QStringLiteral("node %1").arg(node)),
                     qPrintable(near.join(QLatin1Char('|'))));
        for (int gpu = 0; gpu < 64; ++gpu)
            QVERIFY(near.contains(QString::number(gpu)));
        const QStringList far = textsAt(0.08);
        QVERIFY(!far.contains(QStringLiteral("node 3")));
        QVERIFY(!far.contains(QStringLiteral("17")));
    }
};

QTEST_MAIN(TestTopologyView)
#include "test_topology_view.moc"
