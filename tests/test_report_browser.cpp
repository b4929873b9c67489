// The HTML design-review report in a real browser (issue 16): headless Chromium (Debian's
// `chromium`, installed by .ci/install-deps.sh) renders it. (1) Every inline diagram draws: the
// report itself is rendered with a style sheet added that hides the text and puts each
// <div class="figure" id="fig-ID"> in its own 600x380 box at a known place, so the screenshot's
// pixels inside each box are that diagram's; a box that is blank (one colour) fails. (2) A
// scenario whose name and description hold markup runs nothing: the DOM Chromium ends with
// (--dump-dom) has no <script> or <img> element and the title the script would set is not set.
// Skipped (QSKIP) only when chromium is not installed.
#include "moe_widgets/report/design_report.h"
#include "widget_test_support.h"

#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

using namespace moe;
using namespace moe::widgets;

namespace {

constexpr int kBoxW = 600, kBoxH = 380, kGap = 40, kColumns = 2;

QString chromium() {
    for (const char* name : {"chromium", "chromium-browser"}) {
        const QString path = QStandardPaths::findExecutable(QString::fromLatin1(name));
        if (!path.isEmpty())
            return path;
    }
    return {};
}

/// Runs headless Chromium on `url` with `extra` arguments; its stdout, or a null string.
QString runChromium(const QString& exe, const QString& profile, const QStringList& extra,
                    const QString& url, QString* log) {
    QProcess p;
    // CI runs as root, where Chromium refuses its sandbox; its own profile, so that parallel
    // runs do not share one.
    p.start(exe, QStringList{QStringLiteral("--headless"), QStringLiteral("--no-sandbox"),
                             QStringLiteral("--disable-gpu"), QStringLiteral("--no-first-run"),
                             QStringLiteral("--force-device-scale-factor=1"),
                             QStringLiteral("--hide-scrollbars"),
                             QStringLiteral("--user-data-dir=") + profile}
                     << extra << url);
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        *log = QStringLiteral("chromium timed out");
        return {};
    }
    *log = QString::fromUtf8(p.readAllStandardError()).right(2000);
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return {};
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    return out.isNull() ? QStringLiteral("") : out; // ran: not null, even without output
}

/// Share of the box's pixels (inset by 4 px) that differ from its most common colour, and how
/// many colours it has.
std::pair<double, int> inkOf(const QImage& image, const QRect& box) {
    QHash<QRgb, int> counts;
    const QRect inner = box.adjusted(4, 4, -4, -4);
    for (int y = inner.top(); y <= inner.bottom(); ++y)
        for (int x = inner.left(); x <= inner.right(); ++x)
            ++counts[image.pixel(x, y)];
    int most = 0;
    for (const int n : counts)
        most = std::max(most, n);
    const double total = static_cast<double>(inner.width()) * inner.height();
    return {(total - most) / total, static_cast<int>(counts.size())};
}

} // namespace

class TestReportBrowser : public QObject {
    Q_OBJECT

private slots:
    void htmlReportDrawsAndRunsNothing();
};

void TestReportBrowser::htmlReportDrawsAndRunsNothing() {
    const QString exe = chromium();
    if (exe.isEmpty())
        QSKIP("chromium is not installed (Debian package chromium; .ci/install-deps.sh "
              "installs it)");
    const Scenario sample = test::loadSample("dgx-h100-8x8-moe16.yaml");
    Scenario current = sample;
    current.name = "<script>document.title='pwned'</script>";
    current.description = "<img src=x onerror=\"document.title='pwned'\">";
    current.layout.ep = 16;
    DesignReportInput input;
    input.current = test::resultFor(current);
    input.baseline = test::resultFor(sample); // adds the comparison chart
    QTemporaryDir dir;
    const QString html = dir.filePath("report.html");
    const QString problem = writeDesignReport(html, input);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QFile file(html);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(file.readAll());
    file.close();

    // (2) Nothing runs: the markup in the name and description stays text.
    QString log;
    const QString dom = runChromium(exe, dir.filePath("profile"), {QStringLiteral("--dump-dom")},
                                    QUrl::fromLocalFile(html).toString(), &log);
    QVERIFY2(!dom.isNull(), qPrintable(log));
    QVERIFY2(dom.contains(QStringLiteral("&lt;script&gt;document.title='pwned'")),
             qPrintable(dom.left(2000)));
    QVERIFY(!dom.contains(QStringLiteral("<script"), Qt::CaseInsensitive));
    QVERIFY(!dom.contains(QStringLiteral("<img"), Qt::CaseInsensitive));
    QVERIFY(!dom.contains(QStringLiteral("<title>pwned</title>")));

    // (1) Every inline diagram draws. Each figure gets a box; the rest of the page is hidden.
    const QRegularExpression figure(QStringLiteral("<div class=\"figure\" id=\"(fig-[a-z-]+)\">"));
    QStringList ids;
    for (auto it = figure.globalMatch(text); it.hasNext();)
        ids << it.next().captured(1);
    // Topology, breakdown, Gantt, heatmap, memory and the comparison's breakdowns.
    QVERIFY2(ids.size() >= 6, qPrintable(ids.join(' ')));
    QVERIFY(ids.contains(QStringLiteral("fig-topology")));
    QCOMPARE(text.count(QStringLiteral("<svg")), ids.size());
    QString style =
        QStringLiteral(
            "<style>body{margin:0;padding:0;max-width:none;background:#fff}body>*{display:none}"
            "body>.figure{display:block;position:absolute;overflow:hidden;width:%1px;height:%2px}"
            ".figure svg{width:%1px!important;height:%2px!important;max-width:none!important;"
            "border:0!important}\n")
            .arg(kBoxW)
            .arg(kBoxH);
    std::vector<QRect> boxes;
    for (int i = 0; i < ids.size(); ++i) {
        const QRect box((i % kColumns) * (kBoxW + kGap), (i / kColumns) * (kBoxH + kGap), kBoxW,
                        kBoxH);
        boxes.push_back(box);
        style += QStringLiteral("#%1{left:%2px;top:%3px}\n").arg(ids[i]).arg(box.x()).arg(box.y());
    }
    style += QStringLiteral("</style>\n");
    QString boxed = text;
    boxed.replace(QStringLiteral("</head>"), style + QStringLiteral("</head>"));
    const QString boxed_path = dir.filePath("boxed.html");
    QFile out(boxed_path);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(boxed.toUtf8());
    out.close();
    const int width = kColumns * (kBoxW + kGap);
    const int height = static_cast<int>((ids.size() + kColumns - 1) / kColumns) * (kBoxH + kGap);
    const QString png = dir.filePath("boxed.png");
    QVERIFY2(!runChromium(exe, dir.filePath("profile"),
                          {QStringLiteral("--screenshot=") + png,
                           QStringLiteral("--window-size=%1,%2").arg(width).arg(height)},
                          QUrl::fromLocalFile(boxed_path).toString(), &log)
                  .isNull(),
             qPrintable(log));
    QImage image(png);
    QVERIFY2(!image.isNull(), qPrintable(log));
    QVERIFY2(image.width() >= width && image.height() >= height,
             qPrintable(QStringLiteral("%1x%2").arg(image.width()).arg(image.height())));
    // Outside the boxes the page is white: the boxes are where the style put them.
    QCOMPARE(image.pixel(width - 5, height - 5), qRgb(255, 255, 255));
    for (int i = 0; i < ids.size(); ++i) {
        const auto [ink, colours] = inkOf(image, boxes[static_cast<size_t>(i)]);
        qInfo("%s: %.1f%% ink, %d colours", qPrintable(ids[i]), ink * 100, colours);
        QVERIFY2(ink > 0.01 && colours >= 4, qPrintable(ids[i] + QStringLiteral(" is blank")));
    }
    // A blank box would fail: the gap between two boxes is one colour.
    QCOMPARE(inkOf(image, QRect(kBoxW, 0, kGap, kBoxH)).second, 1);
}

QTEST_MAIN(TestReportBrowser)
#include "test_report_browser.moc"
