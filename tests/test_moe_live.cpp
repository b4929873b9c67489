// moe-live headless smoke test: runs a few hundred frames under Xvfb (Mesa's software OpenGL)
// with the replay playing, saves a screenshot, and counts the GPU cells in it: every cell is
// a quad in a colour of the ramp, separated from its neighbours by background, so the number
// of 4-connected regions of ramp-coloured pixels inside the map is the number of GPUs drawn.
#include "test_support.h"

#include <QtTest>

#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <vector>

namespace {

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

    void check(const Run& r, int want_gpus) {
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
        const auto [cells, smallest] = countCells(r.image, r.map);
        QCOMPARE(cells, want_gpus);
        QVERIFY(smallest >= 4); // whole quads, not stray pixels
    }

private slots:
    void initTestCase() {
        if (QStringLiteral(MOE_XVFB_RUN).isEmpty() && qEnvironmentVariableIsEmpty("DISPLAY"))
            QSKIP("neither xvfb-run nor an X display: moe-live needs an OpenGL window");
        QVERIFY(dir_.isValid());
    }

    // The built-in default: 64 GPUs, 300 frames of replay.
    void defaultScenario() {
        const Run r = run({}, "1024x700", 300);
        check(r, 64);
    }

    // A generated 16,384-GPU cluster (the default scaled with --gpus: nodes, dp and the global
    // batch scale together), coloured by all-to-all bytes received.
    void sixteenThousandGpus() {
        const Run r = run({"--gpus", "16384", "--metric", "a2a"}, "1920x1200", 100);
        check(r, 16384);
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
