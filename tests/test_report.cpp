// The Compare panel and the design-review report: comparing a design with itself shows zero
// deltas; a change of layout.ep shows in the field diff with the verdict colours; kept variants
// rank by step time and load as one undo step; the report PDF has the expected pages and its
// text (pdftotext) holds the headline figures and the layout in words; the HTML embeds SVGs;
// `moe-planner --report` writes the same headless.
#include "moe/design_summary.h"
#include "moe/scenario_io.h"
#include "moe_widgets/charts/heatmap_view.h"
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/document/view_state.h"
#include "moe_widgets/report/compare_view.h"
#include "moe_widgets/report/design_report.h"
#include "moe_widgets/topology/topology_view.h"
#include "test_support.h"

#include <QComboBox>
#include <QTabWidget>

#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QXmlStreamReader>
#include <QtTest>

using namespace moe;
using namespace moe::widgets;

namespace {

const QString kDefault = QStringLiteral(MOE_SAMPLES_DIR "/dgx-h100-8x8-moe16.yaml");

EvaluationResultPtr evaluated(const Scenario& s) {
    auto r = std::make_shared<EvaluationResult>();
    r->scenario = s;
    r->report = evaluate(s);
    return r;
}

Scenario defaultSample() {
    const LoadResult loaded = loadScenarioFile(kDefault.toStdString());
    if (!loaded.ok())
        qFatal("default sample does not load");
    return *loaded.scenario;
}

/// Whitespace runs as one space, so wrapped lines compare with the original text.
QString simplified(const QString& s) {
    return s.simplified();
}

/// Without whitespace and hyphens: pdftotext joins a line wrapped after a hyphen
/// ("expert-" / "DP=8") without it.
QString squashed(const QString& s) {
    QString out = s;
    out.remove(QRegularExpression(QStringLiteral("[\\s\\-]")));
    return out;
}

/// pdftotext's text of a PDF (pages end with a form feed), or a null string without the tool;
/// `page` > 0: that page only.
QString pdfText(const QString& pdf, int page = 0) {
    const QString tool = QStandardPaths::findExecutable(QStringLiteral("pdftotext"));
    if (tool.isEmpty())
        return {};
    QStringList args;
    if (page > 0)
        args << QStringLiteral("-f") << QString::number(page) << QStringLiteral("-l")
             << QString::number(page);
    QProcess p;
    p.start(tool, args << pdf << QStringLiteral("-"));
    if (!p.waitForFinished(30000) || p.exitCode() != 0)
        return QStringLiteral("");
    return QString::fromUtf8(p.readAllStandardOutput());
}

int pageCount(const QString& text) {
    return static_cast<int>(text.count(QLatin1Char('\f')));
}

} // namespace

class TestReport : public QObject {
    Q_OBJECT

private slots:
    void compareWithItselfShowsZeroDeltas();
    void compareShowsEpChange();
    void variantsRankAndLoadAsOneUndoStep();
    void sideBySideShowsOneViewPerDesign();
    void baselineFileIsEvaluatedOffTheGuiThread();
    void pdfPagesAndText();
    void firstPageArgues();
    void htmlEmbedsSvg();
    void headlessReportFlag();
    void ampersandAndScriptInNameStayText();
    void reportOnFullDiskFailsAndKeepsOldFile();
    void exportUnderAFileFailsWithoutClaimingFiles();
};

void TestReport::compareWithItselfShowsZeroDeltas() {
    ScenarioDocument document;
    ViewState state;
    CompareView view(&document, &state);
    const Scenario s = defaultSample();
    view.showResult(evaluated(s));
    view.pinCurrent();
    view.showResult(evaluated(s)); // evaluated anew: deterministic, so identical
    QVERIFY(view.hasComparison());
    QTableWidget* table = view.figureTable();
    QCOMPARE(table->rowCount(), static_cast<int>(headlineFigures().size()));
    for (int row = 0; row < table->rowCount(); ++row) {
        const QString name = table->item(row, CompareView::figure_column)->text();
        QCOMPARE(table->item(row, CompareView::delta_column)->data(Qt::UserRole).toDouble(), 0.0);
        QCOMPARE(table->item(row, CompareView::delta_column)->text(), QStringLiteral("0"));
        QCOMPARE(table->item(row, CompareView::relative_column)->text(), QStringLiteral("0.0%"));
        QCOMPARE(table->item(row, CompareView::baseline_column)->text(),
                 table->item(row, CompareView::current_column)->text());
        // No verdict colour on an unchanged figure.
        QCOMPARE(table->item(row, CompareView::delta_column)->foreground().color(),
                 view.palette().color(QPalette::Text));
        QVERIFY(!name.isEmpty());
    }
    QCOMPARE(view.fieldTable()->rowCount(), 0);
    QVERIFY(view.comparison().fields.empty());
}

void TestReport::compareShowsEpChange() {
    ScenarioDocument document;
    ViewState state;
    CompareView view(&document, &state);
    const Scenario a = defaultSample();
    Scenario b = a;
    b.layout.ep = 16;
    view.showResult(evaluated(a));
    view.pinCurrent();
    view.showResult(evaluated(b));
    QCOMPARE(view.fieldTable()->rowCount(), 1);
    QCOMPARE(view.fieldTable()->item(0, 0)->text(), QStringLiteral("layout.ep"));
    QCOMPARE(view.fieldTable()->item(0, 1)->text(), QStringLiteral("8"));
    QCOMPARE(view.fieldTable()->item(0, 2)->text(), QStringLiteral("16"));
    QTableWidget* table = view.figureTable();
    const QColor red = verdictColor(Verdict::worse, view.palette());
    const QColor green = verdictColor(Verdict::better, view.palette());
    QVERIFY(red != green);
    bool saw_a2a = false;
    for (int row = 0; row < table->rowCount(); ++row) {
        const FigureDelta& d = view.comparison().figures[static_cast<size_t>(row)];
        QTableWidgetItem* delta = table->item(row, CompareView::delta_column);
        QCOMPARE(delta->data(Qt::UserRole).toDouble(), d.delta);
        QCOMPARE(delta->foreground().color(), verdictColor(d.verdict, view.palette()));
        if (table->item(row, 0)->text() == QLatin1String("exposed all-to-all")) {
            saw_a2a = true;
            QVERIFY(d.delta > 0); // EP leaves the node: worse
            QVERIFY(delta->text().startsWith('+'));
            QCOMPARE(delta->foreground().color(), red);
        }
        if (table->item(row, 0)->text() == QLatin1String("memory per GPU")) {
            QVERIFY(delta->text().startsWith(QStringLiteral("−")));
            QCOMPARE(delta->foreground().color(), green);
        }
    }
    QVERIFY(saw_a2a);
    // The colours stay readable on a dark palette too: lighter than on a light one.
    QPalette dark;
    dark.setColor(QPalette::Base, QColor(0x1f, 0x21, 0x24));
    dark.setColor(QPalette::Window, QColor(0x2b, 0x2d, 0x31));
    QVERIFY(verdictColor(Verdict::worse, dark).lightness() > red.lightness());
    QVERIFY(verdictColor(Verdict::better, dark).lightness() > green.lightness());
    // Side by side: one bar per design.
    QString problem;
    QTemporaryDir dir;
    problem = view.exportTo(dir.filePath("compare.svg"));
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
}

void TestReport::variantsRankAndLoadAsOneUndoStep() {
    ScenarioDocument document;
    ViewState state;
    CompareView view(&document, &state);
    const Scenario a = defaultSample();
    document.reset(a);
    Scenario slow = a;
    slow.layout.ep = 16;
    slow.name = "ep16";
    const EvaluationResultPtr ra = evaluated(a), rs = evaluated(slow);
    QVERIFY(rs->report.step_time_s != ra->report.step_time_s);
    view.showResult(rs);
    view.keepVariant();
    view.showResult(ra);
    view.keepVariant();
    QCOMPARE(view.variantCount(), 2);
    QVERIFY(view.variant(0)->report.step_time_s <= view.variant(1)->report.step_time_s);
    QCOMPARE(view.variantTable()->rowCount(), 2);
    const int ep16 = view.variant(0)->scenario.name == "ep16" ? 0 : 1;
    // Named by what differs (both share the sample's settings but EP): from the design being
    // edited without a baseline, from the baseline once there is one.
    QTableWidget* names = view.variantTable();
    QCOMPARE(names->item(ep16, 1)->text(), QStringLiteral("EP=16"));
    QCOMPARE(names->item(1 - ep16, 1)->text(), QStringLiteral("as the current design"));
    view.makeVariantBaseline(ep16);
    QCOMPARE(names->item(ep16, 1)->text(), QStringLiteral("as the baseline"));
    QCOMPARE(names->item(1 - ep16, 1)->text(), QStringLiteral("EP=8"));
    QCOMPARE(view.baseline()->scenario.name, std::string("ep16"));
    QCOMPARE(document.undoStack()->count(), 0);
    QVERIFY(view.loadVariant(ep16));
    QCOMPARE(document.undoStack()->count(), 1);
    QCOMPARE(document.scenario().layout.ep, 16);
    document.undoStack()->undo();
    QCOMPARE(document.scenario().layout.ep, 8);
}

// Issue 16: Compare > Topology & heatmap shows the topology of both designs, or their heatmaps,
// each with the page's full height (four stacked views got a quarter each).
void TestReport::sideBySideShowsOneViewPerDesign() {
    ScenarioDocument document;
    ViewState state;
    CompareView view(&document, &state);
    view.resize(500, 420);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    auto* tabs = view.findChild<QTabWidget*>();
    QVERIFY(tabs != nullptr);
    for (int i = 0; i < tabs->count(); ++i)
        if (tabs->tabText(i).startsWith("Topology"))
            tabs->setCurrentIndex(i);
    const auto visible = [&view](auto* type) {
        int n = 0;
        for (auto* w : view.findChildren<std::remove_pointer_t<decltype(type)>*>())
            n += w->isVisible() ? 1 : 0;
        return n;
    };
    QCOMPARE(visible(static_cast<TopologyView*>(nullptr)), 2);
    QCOMPARE(visible(static_cast<HeatmapView*>(nullptr)), 0);
    // Compact: the diagram alone, without the choosers (they squeezed it to a strip).
    for (auto* topology : view.findChildren<TopologyView*>())
        QVERIFY(!topology->findChild<QWidget*>("topologyChoosers")->isVisible());
    auto* chooser = view.findChild<QComboBox*>("compareSideChooser");
    QVERIFY(chooser != nullptr);
    chooser->setCurrentIndex(1);
    QCOMPARE(visible(static_cast<TopologyView*>(nullptr)), 0);
    QCOMPARE(visible(static_cast<HeatmapView*>(nullptr)), 2);
    // Each view has the page's height less the chooser and captions, not a quarter of it.
    for (auto* heatmap : view.findChildren<HeatmapView*>())
        if (heatmap->isVisible())
            QVERIFY2(heatmap->height() > tabs->currentWidget()->height() * 2 / 3,
                     qPrintable(QString::number(heatmap->height())));
}

// Opening a baseline file returns at once; the worker's result becomes the baseline, unless a
// baseline chosen meanwhile (pinned) replaced it.
void TestReport::baselineFileIsEvaluatedOffTheGuiThread() {
    ScenarioDocument document;
    ViewState state;
    CompareView view(&document, &state);
    const QString big = QStringLiteral(MOE_SAMPLES_DIR "/deepseek-v3-2048xh800.yaml");
    QSignalSpy changed(&view, &CompareView::baselineChanged);
    QCOMPARE(view.openBaselineFile(big), QString());
    QVERIFY(view.baselinePending());
    QVERIFY(view.baseline() == nullptr);
    QVERIFY(changed.wait(20000));
    QVERIFY(!view.baselinePending());
    const Scenario expected = loadScenarioFile(big.toStdString()).scenario.value();
    QCOMPARE(view.baseline()->scenario.name, expected.name);
    QCOMPARE(view.baseline()->report.step_time_s, evaluate(expected).step_time_s);

    // Pinned while the file is evaluated: the pin stays.
    view.showResult(evaluated(defaultSample()));
    QCOMPARE(view.openBaselineFile(big), QString());
    view.pinCurrent();
    QTest::qWait(1500);
    QCOMPARE(view.baseline()->scenario.name, defaultSample().name);
    QVERIFY(!view.openBaselineFile(QStringLiteral("/nonexistent.yaml")).isEmpty());
}

void TestReport::pdfPagesAndText() {
    QTemporaryDir dir;
    const EvaluationResultPtr r = evaluated(defaultSample());
    const QString pdf = dir.filePath("report.pdf");
    DesignReportInput input;
    input.current = r;
    input.source_file = kDefault;
    QElapsedTimer timer;
    timer.start();
    const QString problem = writeDesignReport(pdf, input);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    qInfo("PDF report written in %lld ms", static_cast<long long>(timer.elapsed()));
    const QString text = pdfText(pdf);
    if (text.isNull())
        QSKIP("pdftotext (poppler-utils) is not installed");
    QCOMPARE(pageCount(text), designReportPageCount(false));
    QCOMPARE(designReportPageCount(false), 15); // 9 before the six overlay pages
    const QString flat = simplified(text);
    const QString step = formatFigure(FigureFormat::seconds, r->report.step_time_s);
    const QString tokens = formatFigure(FigureFormat::count, r->report.throughput.tokens_per_s);
    QVERIFY2(flat.contains(QStringLiteral("step time ") + step), qPrintable(step));
    QVERIFY2(flat.contains(QStringLiteral("tokens/s ") + tokens), qPrintable(tokens));
    QVERIFY(!r->report.layout_description.empty());
    for (const std::string& line : r->report.layout_description)
        QVERIFY2(squashed(text).contains(squashed(QString::fromStdString(line))), line.c_str());
    for (const char* heading :
         {"Layout in words", "Topology", "Topology: EP groups", "Topology: DP groups",
          "Step-time breakdown", "Step timeline (Gantt)", "Expert load heatmap", "Memory per GPU",
          "Warnings", "Page 15 of 15"})
        QVERIFY2(flat.contains(QString::fromUtf8(heading)), heading);
    QVERIFY(!flat.contains(QStringLiteral("diagram unavailable")));
}

// Issue 16: page 1 argues from the evaluation: the layout in words generated from the
// placement (not the scenario's description), the step time as the report writes it, the
// verdict against the baseline naming what differs, and no "$0" where cost is not configured.
void TestReport::firstPageArgues() {
    QTemporaryDir dir;
    const Scenario a = defaultSample();
    Scenario b = a; // same name: the two sides must still be told apart
    b.layout.ep = 16;
    b.training.total_tokens = 0; // no run: no time or cost to train
    DesignReportInput input;
    input.baseline = evaluated(a);
    input.current = evaluated(b);
    const QString pdf = dir.filePath("report.pdf");
    const QString problem = writeDesignReport(pdf, input);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    const QString page1 = pdfText(pdf, 1);
    if (page1.isNull())
        QSKIP("pdftotext (poppler-utils) is not installed");
    const Report& r = input.current->report;
    const QString words = QString::fromStdString(layoutInWords(b, *r.placement));
    QVERIFY(words.contains(QStringLiteral("EP 16 across 2 nodes")));
    QVERIFY2(squashed(page1).contains(squashed(words)), qPrintable(page1));
    const QString flat = simplified(page1);
    const QString step = formatFigure(FigureFormat::seconds, r.step_time_s);
    QVERIFY2(flat.contains(QStringLiteral("step time ") + step), qPrintable(step));
    const std::string verdict = describeVerdict(verdictAgainstBaseline(input.baseline->report, r),
                                                a.name, settingChanges(a, b));
    QVERIFY2(squashed(page1).contains(squashed(QString::fromStdString(verdict))), verdict.c_str());
    QVERIFY(flat.contains(QStringLiteral("EP 8 → 16")));
    QVERIFY(flat.contains(QStringLiteral("not configured")));
    // The free-text description (which says EP=8) is not on page 1.
    QVERIFY(!flat.contains(QString::fromStdString(a.description).left(30)));
    // The comparison comes next, its sides named by what differs.
    const QString page2 = simplified(pdfText(pdf, 2));
    QVERIFY2(page2.contains(QStringLiteral("Comparison with the baseline")), qPrintable(page2));
    // (The column headers wrap, so pdftotext interleaves their words.)
    for (const char* label : {"Baseline:", "EP=8", "Current:", "EP=16", "+1 more"})
        QVERIFY2(page2.contains(QString::fromUtf8(label)), label);
    // Nowhere a cost of $0: unconfigured money says so (or is left out).
    const QString all = simplified(pdfText(pdf));
    QVERIFY2(!all.contains(QRegularExpression(QStringLiteral("\\$0(?![.,0-9])"))), qPrintable(all));
    QVERIFY(all.contains(QStringLiteral("Author's note")));
}

void TestReport::htmlEmbedsSvg() {
    QTemporaryDir dir;
    const Scenario a = defaultSample();
    DesignReportInput input;
    input.current = evaluated(a);
    input.baseline = evaluated(a);
    const QString html = dir.filePath("report.html");
    const QString problem = writeDesignReport(html, input);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    QFile file(html);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(file.readAll());
    // Topology, breakdown, Gantt, heatmap, memory and the comparison chart.
    QVERIFY2(text.count(QStringLiteral("<svg")) >= 6,
             qPrintable(QString::number(text.count("<svg"))));
    QVERIFY(!text.contains(QStringLiteral("<?xml")));
    const Report& r = input.current->report;
    QVERIFY(text.contains(formatFigure(FigureFormat::seconds, r.step_time_s).toHtmlEscaped()));
    QVERIFY(text.contains(formatFigure(FigureFormat::count, r.throughput.tokens_per_s)));
    QVERIFY(text.contains(QString::fromStdString(r.layout_description.front()).toHtmlEscaped()));
    QVERIFY(text.contains(QStringLiteral("Scenario fields that differ: none.")));
    QVERIFY(writeDesignReport(dir.filePath("report.docx"), input).contains("unknown"));
}

void TestReport::headlessReportFlag() {
    QTemporaryDir dir;
    const QString pdf = dir.filePath("cli.pdf");
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(MOE_PLANNER_EXE),
            {QStringLiteral("--report"), pdf, kDefault, QStringLiteral("--baseline"),
             QStringLiteral(MOE_SAMPLES_DIR "/16gpu-nodes-4x16-moe16.yaml")});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    QVERIFY(QString::fromUtf8(p.readAllStandardOutput())
                .contains(QStringLiteral("%1 pages").arg(designReportPageCount(true))));
    const QString text = pdfText(pdf);
    if (text.isNull())
        QSKIP("pdftotext (poppler-utils) is not installed");
    QCOMPARE(pageCount(text), designReportPageCount(true));
    QCOMPARE(designReportPageCount(true), 17);
    const QString flat = simplified(text);
    QVERIFY(flat.contains(QStringLiteral("Comparison with the baseline")));
    QVERIFY(flat.contains(QStringLiteral("Page 17 of 17")));
    // The figures of both designs and the change of the step time, as the app writes them.
    const Scenario a = defaultSample();
    const LoadResult b = loadScenarioFile(MOE_SAMPLES_DIR "/16gpu-nodes-4x16-moe16.yaml");
    QVERIFY(b.ok());
    const Report ra = evaluate(a), rb = evaluate(*b.scenario);
    const Comparison cmp = compareDesigns(*b.scenario, rb, a, ra);
    QVERIFY(flat.contains(
        QStringLiteral("step time %1 %2 %3")
            .arg(formatFigure(FigureFormat::seconds, rb.step_time_s),
                 formatFigure(FigureFormat::seconds, ra.step_time_s),
                 formatFigureDelta(FigureFormat::seconds, cmp.figures.front().delta))));
    // The fields that differ: the 16-GPU sample has half the nodes.
    QVERIFY2(flat.contains(QStringLiteral("cluster.nodes 4 8")), qPrintable(flat));
    // A bad baseline is refused with the file's problem and nothing written.
    QProcess bad;
    bad.setProcessEnvironment(env);
    bad.start(QStringLiteral(MOE_PLANNER_EXE),
              {QStringLiteral("--report"), dir.filePath("bad.pdf"), kDefault,
               QStringLiteral("--baseline"), dir.filePath("missing.yaml")});
    QVERIFY(bad.waitForFinished(60000));
    QCOMPARE(bad.exitCode(), 1);
    QVERIFY(!QFileInfo::exists(dir.filePath("bad.pdf")));
}

QTEST_MAIN(TestReport)
namespace {

struct AppRun {
    int code = -1;
    QString out, err;
};

AppRun runPlanner(const QStringList& args) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(MOE_PLANNER_EXE), args);
    AppRun r;
    if (!p.waitForFinished(120000))
        return r;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    if (p.exitStatus() == QProcess::NormalExit)
        r.code = p.exitCode();
    return r;
}

} // namespace

// Issue 17 #5: '&' in the name made every SVG invalid XML; '<script>' reached the HTML as markup.
void TestReport::ampersandAndScriptInNameStayText() {
    QTemporaryDir dir;
    std::string yaml = defaultScenarioYaml();
    yaml.replace(yaml.find("name: dgx-h100-8x8-moe16"), 24,
                 "name: \"a & <script>alert(1)</script>\"");
    const QString scenario = dir.filePath("amp.yaml");
    QFile f(scenario);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray::fromStdString(yaml));
    f.close();
    const AppRun exported =
        runPlanner({QStringLiteral("--export"), dir.filePath("views"), QStringLiteral("--format"),
                    QStringLiteral("svg"), scenario});
    QCOMPARE(exported.code, 0);
    const QStringList svgs = QDir(dir.filePath("views")).entryList({QStringLiteral("*.svg")});
    QVERIFY(svgs.size() >= 8);
    for (const QString& name : svgs) {
        QFile svg(dir.filePath("views/" + name));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&svg);
        while (!xml.atEnd())
            xml.readNext();
        QVERIFY2(!xml.hasError(), qPrintable(name + ": " + xml.errorString()));
    }
    const AppRun report =
        runPlanner({QStringLiteral("--report"), dir.filePath("r.html"), scenario});
    QCOMPARE(report.code, 0);
    QFile html(dir.filePath("r.html"));
    QVERIFY(html.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(html.readAll());
    QVERIFY(!text.contains(QStringLiteral("<script>")));
    QVERIFY(text.contains(QStringLiteral("a &amp; &lt;script&gt;")));
}

// Issue 17 #4: on a full disk the report printed "wrote ... (8 pages)", exited 0 and left a
// truncated file in place of the old one. A 64 KB tmpfs is a full disk for a report (root only;
// skipped where mounting is not allowed).
void TestReport::reportOnFullDiskFailsAndKeepsOldFile() {
    QTemporaryDir dir;
    const QString mount = dir.filePath("full");
    QDir().mkpath(mount);
    if (QProcess::execute(QStringLiteral("mount"),
                          {QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"),
                           QStringLiteral("size=64k"), QStringLiteral("tmpfs"), mount}) != 0)
        QSKIP("cannot mount a small tmpfs here (needs root)");
    const QString old_report = mount + QStringLiteral("/report.pdf");
    QFile old(old_report);
    QVERIFY(old.open(QIODevice::WriteOnly));
    old.write("OLD REPORT");
    old.close();
    QFile filler(mount + QStringLiteral("/filler"));
    QVERIFY(filler.open(QIODevice::WriteOnly));
    filler.write(QByteArray(80 * 1024, 'x')); // fails part way: the disk is now full
    filler.close();
    const AppRun r = runPlanner({QStringLiteral("--report"), old_report});
    QByteArray kept;
    if (old.open(QIODevice::ReadOnly))
        kept = old.readAll();
    old.close();
    const QStringList left = QDir(mount).entryList(QDir::Files);
    QProcess::execute(QStringLiteral("umount"), {mount});
    QCOMPARE(kept, QByteArray("OLD REPORT"));
    QCOMPARE(left, (QStringList{QStringLiteral("filler"), QStringLiteral("report.pdf")}));
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains(QStringLiteral("No space left on device")), qPrintable(r.err));
    QVERIFY(!r.out.contains(QStringLiteral("wrote")));
}

// Issue 17 #4: --export under a path whose parent is a file printed "wrote 23 files".
void TestReport::exportUnderAFileFailsWithoutClaimingFiles() {
    QTemporaryDir dir;
    QFile file(dir.filePath("afile"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.close();
    const AppRun r = runPlanner({QStringLiteral("--export"), dir.filePath("afile/views")});
    QCOMPARE(r.code, 1);
    QVERIFY(!r.out.contains(QStringLiteral("wrote")));
    QVERIFY2(r.err.contains(QStringLiteral("is a file, not a directory")), qPrintable(r.err));
}

#include "test_report.moc"
