// Comparing two designs (moe/compare.h): the shared headline list, deltas with their verdicts,
// the breakdowns side by side and the scenario field diff.
#include "moe/compare.h"
#include "moe/edits.h"
#include "moe/scenario_io.h"
#include "test_support.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>

#include <cmath>

using namespace moe;

namespace {

Scenario defaultSample() {
    const LoadResult loaded = loadScenarioFile(test::samplePath("dgx-h100-8x8-moe16.yaml"));
    if (!loaded.ok())
        qFatal("default sample does not load");
    return *loaded.scenario;
}

const FigureDelta& figure(const Comparison& c, const char* name) {
    for (const FigureDelta& d : c.figures) {
        if (std::string(d.figure->name) == name)
            return d;
    }
    qFatal("no figure %s", name);
}

} // namespace

class TestCompare : public QObject {
    Q_OBJECT

private slots:
    void headlineList();
    void itselfIsZero();
    void epChangeShowsInDiffAndDeltas();
    void relativeDeltaSignAndZeroBaseline();
    void cliPrintsFieldDiff();
};

void TestCompare::headlineList() {
    const auto& list = headlineFigures();
    QVERIFY(list.size() >= 10);
    QCOMPARE(std::string(list.front().name), std::string("step time"));
    QVERIFY(list.front().lower_is_better);
    QCOMPARE(list.front().format, FigureFormat::seconds);
    QCOMPARE(std::string(list[1].name), std::string("tokens/s"));
    QVERIFY(!list[1].lower_is_better);
    // The getter reads the report's own figure.
    Report r;
    r.step_time_s = 1.25;
    QCOMPARE(list.front().get(r), 1.25);
}

void TestCompare::itselfIsZero() {
    const Scenario s = defaultSample();
    const Report r = evaluate(s);
    const Comparison c = compareDesigns(s, r, s, evaluate(s));
    QCOMPARE(c.figures.size(), headlineFigures().size());
    for (const FigureDelta& d : c.figures) {
        QCOMPARE(d.delta, 0.0);
        QCOMPARE(d.relative, 0.0);
        QCOMPARE(d.verdict, Verdict::same);
        QCOMPARE(d.baseline, d.current);
    }
    QVERIFY(c.fields.empty());
    QCOMPARE(c.baseline_step_s, c.current_step_s);
    QCOMPARE(c.current_step_s, r.step.seconds);
}

void TestCompare::epChangeShowsInDiffAndDeltas() {
    const Scenario a = defaultSample();
    QCOMPARE(a.layout.ep, 8);
    // By hand: EP 8 -> 16 on 8-GPU nodes; nothing else changes.
    Scenario b = a;
    b.layout.ep = 16;
    const Report ra = evaluate(a), rb = evaluate(b);
    const Comparison c = compareDesigns(a, ra, b, rb);

    QCOMPARE(c.fields.size(), size_t(1));
    QCOMPARE(c.fields[0].path, std::string("layout.ep"));
    QCOMPARE(c.fields[0].baseline, std::string("8"));
    QCOMPARE(c.fields[0].current, std::string("16"));

    // EP=16 leaves the node: the all-to-all crosses InfiniBand and grows (worse, delta > 0),
    // while each GPU holds one expert instead of two (memory better, delta < 0).
    const FigureDelta& a2a = figure(c, "exposed all-to-all");
    QCOMPARE(a2a.baseline, ra.step[StepItem::all_to_all]);
    QCOMPARE(a2a.current, rb.step[StepItem::all_to_all]);
    QVERIFY(a2a.delta > 0);
    QCOMPARE(a2a.verdict, Verdict::worse);
    const FigureDelta& mem = figure(c, "memory per GPU");
    QVERIFY(mem.delta < 0);
    QCOMPARE(mem.verdict, Verdict::better);
    const FigureDelta& step = figure(c, "step time");
    QCOMPARE(step.delta, rb.step_time_s - ra.step_time_s);
    QCOMPARE(step.verdict, step.delta > 0 ? Verdict::worse : Verdict::better);
    // tokens/s is higher-is-better: its verdict is opposite to the step time's.
    const FigureDelta& tps = figure(c, "tokens/s");
    QCOMPARE(tps.verdict, step.verdict == Verdict::worse ? Verdict::worse : Verdict::better);
    QVERIFY(tps.delta * step.delta < 0);
    QCOMPARE(c.current_step_s, rb.step.seconds);

    // Swapping the sides flips every delta and verdict.
    const Comparison back = compareDesigns(b, rb, a, ra);
    QCOMPARE(back.fields[0].baseline, std::string("16"));
    for (size_t i = 0; i < c.figures.size(); ++i) {
        QCOMPARE(back.figures[i].delta, -c.figures[i].delta);
        if (c.figures[i].verdict != Verdict::same)
            QVERIFY(back.figures[i].verdict != c.figures[i].verdict);
    }
}

void TestCompare::relativeDeltaSignAndZeroBaseline() {
    Report a, b;
    a.step_time_s = 2.0;
    b.step_time_s = 1.5;
    a.economics.cost_usd = 0;
    b.economics.cost_usd = 10;
    const Scenario s = defaultSample();
    const Comparison c = compareDesigns(s, a, s, b);
    const FigureDelta& step = figure(c, "step time");
    QCOMPARE(step.delta, -0.5);
    QCOMPARE(step.relative, -0.25); // (1.5 - 2) / 2
    QCOMPARE(step.verdict, Verdict::better);
    const FigureDelta& cost = figure(c, "cost of the run");
    QVERIFY(std::isnan(cost.relative)); // no finite ratio against a zero baseline
    QCOMPARE(cost.verdict, Verdict::worse);
}

void TestCompare::cliPrintsFieldDiff() {
    const QString a = QString::fromStdString(test::samplePath("dgx-h100-8x8-moe16.yaml"));
    const QString b = QString::fromStdString(test::samplePath("16gpu-nodes-4x16-moe16.yaml"));
    QProcess p;
    p.start(MOE_PLAN_EXE, {"compare", a, b});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 0);
    const QString text = QString::fromUtf8(p.readAllStandardOutput());
    QVERIFY(text.contains("\nScenario fields that differ ("));
    QVERIFY(QRegularExpression(R"(\n  cluster\.nodes +8 +4\n)").match(text).hasMatch());

    p.start(MOE_PLAN_EXE, {"compare", "--json", a, b});
    QVERIFY(p.waitForFinished(30000));
    const QJsonObject json = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
    const QJsonArray fields = json["fields"].toArray();
    const auto loadedA = loadScenarioFile(a.toStdString());
    const auto loadedB = loadScenarioFile(b.toStdString());
    QVERIFY(loadedA.ok() && loadedB.ok());
    const auto diff = diffScenarioFields(*loadedA.scenario, *loadedB.scenario);
    QCOMPARE(fields.size(), static_cast<qsizetype>(diff.size()));
    for (qsizetype i = 0; i < fields.size(); ++i) {
        QCOMPARE(fields[i]["path"].toString().toStdString(), diff[static_cast<size_t>(i)].path);
        QCOMPARE(fields[i]["a"].toString().toStdString(), diff[static_cast<size_t>(i)].baseline);
        QCOMPARE(fields[i]["b"].toString().toStdString(), diff[static_cast<size_t>(i)].current);
    }
    // Same file twice: no differences, said in words.
    p.start(MOE_PLAN_EXE, {"compare", a, a});
    QVERIFY(p.waitForFinished(30000));
    QVERIFY(QString::fromUtf8(p.readAllStandardOutput())
                .endsWith("\nScenario fields that differ: none\n"));
}

QTEST_GUILESS_MAIN(TestCompare)
#include "test_compare.moc"
