// moe-live headless smoke test: runs a few hundred frames under Xvfb (Mesa's software OpenGL)
// with the replay playing, saves a screenshot, and counts the GPU cells in it: every cell is
// a quad in a colour of the ramp, separated from its neighbours by background, so the number
// of 4-connected regions of ramp-coloured pixels inside the map is the number of GPUs drawn.
// The map's layout arithmetic (cluster_map.h) and the cluster resize behind --gpus and the
// nodes / GPUs-per-node what-ifs (cluster_resize.h) are checked directly, without a window.
#include "cluster_map.h"
#include "cluster_resize.h"
#include "save_state.h"
#include "test_support.h"

#include "moe/load_scale.h"
#include "moe/scenario_io.h"

#include <QtTest>

#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <set>
#include <vector>

namespace {

/// The default scenario (8 nodes of 8 GPUs) in an uneven rack of 5 nodes and one of 3, both
/// of capacity 5: the same overrides for the layout check and the screenshot.
const QStringList kUnevenRacks = {"--set", "cluster.nodes_per_rack=5", "--set",
                                  "cluster.rack_nodes=[5, 3]"};

struct Run {
    QString out;
    QImage image;
    QRect map;
    int gpus = -1, cells = -1;
};

/// A pixel of the colour ramp: its channels spread by more than 30 (the background is dark
/// grey, outlines and text are grey or white; every ramp colour has a spread of 60 or more).
bool isCellPixel(QRgb p) {
    const int r = qRed(p), g = qGreen(p), b = qBlue(p);
    return std::max({r, g, b}) - std::min({r, g, b}) > 30;
}

/// 4-connected regions of cell pixels inside `rect`, and the pixel count of the smallest.
std::pair<int, int> countCells(const QImage& image, const QRect& rect) {
    const int w = rect.width(), h = rect.height();
    std::vector<uint8_t> seen(static_cast<size_t>(w) * h, 0);
    std::vector<int> stack;
    int regions = 0, smallest = 1 << 30;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const size_t i = static_cast<size_t>(y) * w + x;
            if (seen[i] || !isCellPixel(image.pixel(rect.x() + x, rect.y() + y)))
                continue;
            ++regions;
            int size = 0;
            seen[i] = 1;
            stack.assign(1, static_cast<int>(i));
            while (!stack.empty()) {
                const int j = stack.back();
                stack.pop_back();
                ++size;
                const int jx = j % w, jy = j / w;
                const int nx[4] = {jx - 1, jx + 1, jx, jx};
                const int ny[4] = {jy, jy, jy - 1, jy + 1};
                for (int k = 0; k < 4; ++k) {
                    if (nx[k] < 0 || ny[k] < 0 || nx[k] >= w || ny[k] >= h)
                        continue;
                    const size_t n = static_cast<size_t>(ny[k]) * w + nx[k];
                    if (seen[n] || !isCellPixel(image.pixel(rect.x() + nx[k], rect.y() + ny[k])))
                        continue;
                    seen[n] = 1;
                    stack.push_back(static_cast<int>(n));
                }
            }
            smallest = std::min(smallest, size);
        }
    return {regions, regions ? smallest : 0};
}

} // namespace

class TestMoeLive : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    Run run(const QStringList& args, const QString& size, int frames) {
        Run r;
        const QString png = dir_.filePath("shot.png");
        QFile::remove(png);
        QStringList command;
        QString program = QStringLiteral(MOE_LIVE_EXE);
        const QString xvfb = QStringLiteral(MOE_XVFB_RUN);
        if (!xvfb.isEmpty()) {
            program = xvfb;
            command << "-a"
                    << "-s" << ("-screen 0 " + size + "x24") << MOE_LIVE_EXE;
        }
        command << "--frames" << QString::number(frames) << "--size" << size << "--screenshot"
                << png << args;
        QProcess p;
        // Under the sanitizer preset: Mesa's driver is unloaded before LeakSanitizer runs, so
        // its allocations show up as leaks from an unknown module that no suppression can name.
        // Leak checking is off for this child only; address and UB checks stay on.
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        const QString asan = env.value("ASAN_OPTIONS");
        env.insert("ASAN_OPTIONS", (asan.isEmpty() ? QString() : asan + ":") + "detect_leaks=0");
        p.setProcessEnvironment(env);
        p.start(program, command);
        if (!p.waitForFinished(240000))
            qWarning("moe-live did not finish");
        r.out = QString::fromUtf8(p.readAllStandardOutput());
        const QString err = QString::fromUtf8(p.readAllStandardError());
        if (p.exitCode() != 0)
            qWarning("moe-live exit %d: %s %s", p.exitCode(), qPrintable(r.out), qPrintable(err));
        const QRegularExpression line("moe-live: (\\d+) GPUs, (\\d+) cells drawn, \\d+ frames, map "
                                      "(\\d+) (\\d+) (\\d+) (\\d+)");
        const QRegularExpressionMatch m = line.match(r.out);
        if (m.hasMatch()) {
            r.gpus = m.captured(1).toInt();
            r.cells = m.captured(2).toInt();
            r.map = QRect(m.captured(3).toInt(), m.captured(4).toInt(), m.captured(5).toInt(),
                          m.captured(6).toInt());
        }
        r.image.load(png);
        return r;
    }

    /// `count`: also count the cells in the picture (ramp colours only: the expert-load scale's
    /// near-neutral cells have too little colour to tell from the white outlines).
    void check(const Run& r, int want_gpus, bool count = true) {
        QVERIFY2(!r.image.isNull(), qPrintable("no screenshot; output: " + r.out));
        QCOMPARE(r.gpus, want_gpus);
        QCOMPARE(r.cells, want_gpus);
        QVERIFY(r.image.rect().contains(r.map));
        // Not blank: the whole frame has many colours (panel, text, plots, cells).
        QSet<QRgb> colours;
        for (int y = 0; y < r.image.height(); y += 7)
            for (int x = 0; x < r.image.width(); x += 7)
                colours.insert(r.image.pixel(x, y));
        QVERIFY2(colours.size() > 20, qPrintable(QString::number(colours.size())));
        if (!count)
            return;
        const auto [cells, smallest] = countCells(r.image, r.map);
        QCOMPARE(cells, want_gpus);
        QVERIFY(smallest >= 4); // whole quads, not stray pixels
    }

private slots:
    // Issue 17 #9: moe-live had no unsaved-changes flag and saved over whatever path was typed.
    void saveStateFlagsUnsavedEditsAndForeignOverwrites() {
        QTemporaryDir dir;
        const std::string file = dir.filePath("s.yaml").toStdString();
        QVERIFY(
            QFile::copy(QString::fromStdString(moe::test::samplePath("dgx-h100-8x8-moe16.yaml")),
                        QString::fromStdString(file)));
        moe::live::SaveState state;
        state.opened(file);
        const moe::LoadResult loaded = moe::loadScenarioFile(file);
        QVERIFY(loaded.ok());
        moe::Scenario edited = *loaded.scenario;
        QVERIFY(!state.modified(edited));
        edited.layout.ep = 16;
        QVERIFY(state.modified(edited));
        // Saving over its own file needs no question; over another existing file it does.
        QVERIFY(!state.overwriteNeedsConfirm(file));
        const std::string other = dir.filePath("other.yaml").toStdString();
        QVERIFY(!state.overwriteNeedsConfirm(other));
        QFile(QString::fromStdString(other)).open(QIODevice::WriteOnly);
        QVERIFY(state.overwriteNeedsConfirm(other));
        QCOMPARE(state.save(edited, file), std::string());
        QVERIFY(!state.modified(edited));
        // The save kept the file's comments and changed the one value.
        const std::string text = moe::test::readFile(file);
        QVERIFY(text.find("# dgx-h100-8x8-moe16") != std::string::npos);
        QVERIFY(text.find("  ep: 16\n") != std::string::npos);
    }
    void initTestCase() {
        if (QStringLiteral(MOE_XVFB_RUN).isEmpty() && qEnvironmentVariableIsEmpty("DISPLAY"))
            QSKIP("neither xvfb-run nor an X display: moe-live needs an OpenGL window");
        QVERIFY(dir_.isValid());
    }

    // The built-in default: 64 GPUs, 300 frames of replay, coloured by expert load on the
    // shared scale (moe/load_scale.h): the hottest GPU's busiest layer is the scale's hot end,
    // so that exact colour is in the map; its cells are counted coloured by idle time.
    void defaultScenario() {
        const Run r = run({}, "1024x700", 300);
        check(r, 64, false);
        const moe::Rgb8 hot = moe::loadScaleColorAt(1.0);
        int hot_pixels = 0;
        for (int y = r.map.top(); y <= r.map.bottom(); ++y)
            for (int x = r.map.left(); x <= r.map.right(); ++x) {
                const QRgb p = r.image.pixel(x, y);
                hot_pixels += std::abs(qRed(p) - hot.r) <= 2 && std::abs(qGreen(p) - hot.g) <= 2 &&
                                      std::abs(qBlue(p) - hot.b) <= 2
                                  ? 1
                                  : 0;
            }
        QVERIFY2(hot_pixels >= 4, qPrintable(QString::number(hot_pixels)));
        check(run({"--metric", "idle"}, "1024x700", 30), 64);
    }

    // A generated 16,384-GPU cluster (the default scaled with --gpus: nodes, dp and the global
    // batch scale together), coloured by all-to-all bytes received.
    void sixteenThousandGpus() {
        const Run r = run({"--gpus", "16384", "--metric", "a2a"}, "1920x1200", 100);
        check(r, 16384);
    }

    // Uneven racks follow the scenario: node 5 starts rack 1, every GPU has a cell of its own,
    // and the cell's centre hit-tests back to the GPU; free slots and gaps hit nothing.
    void unevenRackLayout() {
        std::vector<std::string> overrides;
        for (int i = 1; i < kUnevenRacks.size(); i += 2)
            overrides.push_back(kUnevenRacks[i].toStdString());
        const moe::LoadResult loaded = moe::loadScenarioTextWithOverrides(
            moe::defaultScenarioYaml(), "<built-in default>", ".", overrides);
        QVERIFY2(loaded.ok(), moe::formatAll(loaded.diagnostics).c_str());
        const moe::ClusterSpec& c = loaded.scenario->cluster;
        QCOMPARE(c.nodesInRacks(), (std::vector<int>{5, 3}));
        using moe::live::MapLayout;
        const MapLayout l = MapLayout::make(c.gpuCount(), c.gpus_per_node, c.nodesInRacks(),
                                            c.nodes_per_rack, 1.3f);
        QCOMPARE(l.racks, 2);
        QCOMPARE(l.node_rack[5], 1);
        QCOMPARE(l.rack_first_node[1], 5);
        QCOMPARE(l.partial_racks, std::vector<int>{1});
        // Node 5 sits in rack 1's slot 0: the top of rack 1, not the bottom of rack 0.
        const auto node5 = l.cellOrigin(5 * c.gpus_per_node);
        QCOMPARE(node5, l.rackOrigin(1));
        std::set<std::pair<float, float>> cells;
        for (int gpu = 0; gpu < l.gpus; ++gpu) {
            const auto [x, y] = l.cellOrigin(gpu);
            cells.insert({x, y});
            QCOMPARE(l.gpuAt(x + 0.5f, y + 0.5f), gpu);
        }
        QCOMPARE(static_cast<int>(cells.size()), 64);
        // Rack 1's first free slot (its 4th node position) holds no GPU.
        const auto [rack1_x, rack1_y] = l.rackOrigin(1);
        QCOMPARE(l.gpuAt(rack1_x + 0.5f, rack1_y + 3 * (l.node_rows + MapLayout::kNodeGap) + 0.5f),
                 -1);
        // Racks are drawn at capacity: both are equally tall, 5 node rows and 4 gaps.
        QCOMPARE(l.rack_h, 5 * l.node_rows + 4 * MapLayout::kNodeGap);
    }

    // Nodes and GPUs per node resize the cluster with dp and the global batch following the GPU
    // count (the batch per DP rank held), in one validated edit.
    void clusterResize() {
        using moe::live::resizeCluster;
        const moe::LoadResult loaded =
            moe::loadScenarioText(moe::defaultScenarioYaml(), "<built-in default>");
        QVERIFY2(loaded.ok(), moe::formatAll(loaded.diagnostics).c_str());
        const moe::Scenario& s = *loaded.scenario;
        QCOMPARE(s.cluster.nodes, 8);
        QCOMPARE(s.cluster.gpus_per_node, 8);
        QCOMPARE(s.layout.dp, 64);
        QCOMPARE(s.training.global_batch, int64_t{512});

        const auto doubled = resizeCluster(s, 16, 8);
        QVERIFY2(doubled.edit.ok(), moe::formatAll(doubled.edit.diagnostics).c_str());
        QCOMPARE(doubled.edit.scenario->cluster.gpuCount(), 128);
        QCOMPARE(doubled.edit.scenario->layout.dp, 128);
        QCOMPARE(doubled.edit.scenario->training.global_batch, int64_t{1024});
        QCOMPARE(doubled.summary, std::string("16 nodes: dp 64 -> 128, global batch 512 -> 1024"));

        // 3 nodes are 24 GPUs: dp 24 and batch 192 are whole numbers and the layout fits.
        const auto three = resizeCluster(s, 3, 8);
        QVERIFY2(three.edit.ok(), moe::formatAll(three.edit.diagnostics).c_str());
        QCOMPARE(three.edit.scenario->layout.dp, 24);
        QCOMPARE(three.edit.scenario->training.global_batch, int64_t{192});

        // One node of 4 GPUs: dp 4 and batch 32 divide, but EP 8 does not fit on 4 GPUs; the
        // reason is the validator's.
        const auto tiny = resizeCluster(s, 1, 4);
        QVERIFY(!tiny.edit.ok());
        QVERIFY(!tiny.overrides.empty());
        QVERIFY(!tiny.edit.diagnostics.empty());
        const std::string reason = tiny.edit.diagnostics.front().message;
        QVERIFY2(reason.find("layout.ep") != std::string::npos, reason.c_str());

        const auto halved = resizeCluster(s, 8, 4);
        QVERIFY2(halved.edit.ok(), moe::formatAll(halved.edit.diagnostics).c_str());
        QCOMPARE(halved.edit.scenario->cluster.gpus_per_node, 4);
        QCOMPARE(halved.edit.scenario->cluster.nodes, 8);
        QCOMPARE(halved.edit.scenario->layout.dp, 32);
        QCOMPARE(halved.edit.scenario->training.global_batch, int64_t{256});
        QCOMPARE(halved.summary,
                 std::string("4 GPUs per node: dp 64 -> 32, global batch 512 -> 256"));

        // A per-rack list is emptied when the node count changes, so the racks refill.
        std::vector<std::string> overrides;
        for (int i = 1; i < kUnevenRacks.size(); i += 2)
            overrides.push_back(kUnevenRacks[i].toStdString());
        const moe::LoadResult racked = moe::loadScenarioTextWithOverrides(
            moe::defaultScenarioYaml(), "<built-in default>", ".", overrides);
        QVERIFY2(racked.ok(), moe::formatAll(racked.diagnostics).c_str());
        const auto grown = resizeCluster(*racked.scenario, 16, 8);
        QVERIFY2(grown.edit.ok(), moe::formatAll(grown.edit.diagnostics).c_str());
        QVERIFY(grown.edit.scenario->cluster.rack_nodes.empty());
        QCOMPARE(grown.edit.scenario->cluster.nodesInRacks(), (std::vector<int>{5, 5, 5, 1}));
    }

    // dp that does not scale to a whole number is refused before the validator, with the
    // numbers: PP 8 leaves dp 8 on 64 GPUs, and 12 GPUs would need dp 1.5.
    void clusterResizeRefusesFractionalDp() {
        const moe::LoadResult loaded = moe::loadScenarioTextWithOverrides(
            moe::defaultScenarioYaml(), "<built-in default>", ".", {"layout.pp=8", "layout.dp=8"});
        QVERIFY2(loaded.ok(), moe::formatAll(loaded.diagnostics).c_str());
        const auto r = moe::live::resizeCluster(*loaded.scenario, 3, 4);
        QVERIFY(!r.edit.ok());
        QVERIFY(r.overrides.empty());
        QCOMPARE(r.summary, std::string("3 nodes of 4 GPUs"));
        QCOMPARE(r.edit.diagnostics.size(), size_t{1});
        QCOMPARE(r.edit.diagnostics.front().field, std::string("layout.dp"));
        QVERIFY2(r.edit.diagnostics.front().message.find("dp 8 does not scale to 12 GPUs") == 0,
                 r.edit.diagnostics.front().message.c_str());
    }

    // The same uneven racks on screen: still exactly one cell per GPU.
    void unevenRackScreenshot() {
        const Run r = run(kUnevenRacks, "1024x700", 30);
        check(r, 64);
    }

    // Bad input: an unknown field is reported by name, exit status 1, no window needed.
    void badOverride() {
        QProcess p;
        p.start(MOE_LIVE_EXE, {"--set", "layout.nope=3"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains("layout.nope"));
    }
};

QTEST_GUILESS_MAIN(TestMoeLive)
#include "test_moe_live.moc"
