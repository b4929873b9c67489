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
    void stepChangeByHand();
    void stepChangeTiesAndNoise();
    void stepChangeOfEpEdit();
    void cliComparesAFileWithItsWhatIf();
    void cliSetBErrorNamesTheKey();
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

void TestCompare::stepChangeByHand() {
    // Two hand-made breakdowns (the items sum to the step time, as priceStep's do):
    //   before: attention 1.000 + all-to-all 0.500 + DP sync 0.300 + imbalance 0.200 = 2.000 s
    //   after:  attention 1.000 + all-to-all 0.973 + DP sync 0.250 + imbalance 0.429 = 2.652 s
    // Deltas: all-to-all +0.473, imbalance +0.229, DP sync -0.050, attention 0 (not listed);
    // step +0.652 s. By |delta|: all-to-all, imbalance, DP sync.
    Report before, after;
    before.step[StepItem::attention] = 1.0;
    before.step[StepItem::all_to_all] = 0.5;
    before.step[StepItem::dp_sync] = 0.3;
    before.step[StepItem::imbalance_wait] = 0.2;
    before.step_time_s = 2.0;
    after.step[StepItem::attention] = 1.0;
    after.step[StepItem::all_to_all] = 0.973;
    after.step[StepItem::dp_sync] = 0.25;
    after.step[StepItem::imbalance_wait] = 0.429;
    after.step_time_s = 2.652;

    const StepChange c = compareSteps(before, after);
    QCOMPARE(c.before_s, 2.0);
    QCOMPARE(c.after_s, 2.652);
    QVERIFY(std::fabs(c.delta_s - 0.652) < 1e-12);
    QCOMPARE(c.items.size(), size_t(3));
    QCOMPARE(c.items[0].item, StepItem::all_to_all);
    QCOMPARE(c.items[0].before_s, 0.5);
    QCOMPARE(c.items[0].after_s, 0.973);
    QVERIFY(std::fabs(c.items[0].delta_s - 0.473) < 1e-12);
    QCOMPARE(c.items[1].item, StepItem::imbalance_wait);
    QVERIFY(std::fabs(c.items[1].delta_s - 0.229) < 1e-12);
    QCOMPARE(c.items[2].item, StepItem::dp_sync);
    QVERIFY(std::fabs(c.items[2].delta_s + 0.05) < 1e-12);

    // Three significant digits (format.h): 2.652 s -> "2.65 s", 0.652 s -> "652 ms".
    QCOMPARE(stepChangeSummary(c, 2),
             std::string("Step 2.00 s → 2.65 s (+652 ms): all-to-all +473 ms, imbalance +229 ms"));
    QCOMPARE(stepChangeSummary(c, 3, UnitStyle::ascii),
             std::string("Step 2.00 s -> 2.65 s (+652 ms): all-to-all +473 ms, imbalance +229 ms, "
                         "DP sync -50.0 ms"));
    QCOMPARE(stepChangeSummary(c, 0), std::string("Step 2.00 s → 2.65 s (+652 ms)"));
    // The reverse edit: every sign flips, the order stays.
    const StepChange back = compareSteps(after, before);
    QCOMPARE(back.items.size(), size_t(3));
    QCOMPARE(back.items[0].item, StepItem::all_to_all);
    QVERIFY(back.items[0].delta_s < 0);
    QCOMPARE(formatSecondsDelta(back.items[0].delta_s), std::string("-473 ms"));
    QCOMPARE(formatSecondsDelta(0), std::string("0 s"));
}

void TestCompare::stepChangeTiesAndNoise() {
    // Equal magnitudes keep StepItem order (router before optimizer), whatever the sign; a
    // difference of 1e-12 s on a 1 s step is below the 1e-9 x step floor and is not listed;
    // an identical report moves nothing.
    Report before, after;
    before.step_time_s = 1.0;
    after.step_time_s = 1.0;
    before.step[StepItem::optimizer] = 0.2;
    after.step[StepItem::optimizer] = 0.1; // -0.1
    before.step[StepItem::router] = 0.1;
    after.step[StepItem::router] = 0.2; // +0.1
    before.step[StepItem::attention] = 0.7;
    after.step[StepItem::attention] = 0.7 + 1e-12;
    const StepChange c = compareSteps(before, after);
    QCOMPARE(c.items.size(), size_t(2));
    QCOMPARE(c.items[0].item, StepItem::router);
    QCOMPARE(c.items[1].item, StepItem::optimizer);
    QCOMPARE(c.delta_s, 0.0);
    const StepChange none = compareSteps(before, before);
    QVERIFY(none.items.empty());
    QCOMPARE(stepChangeSummary(none, 3), std::string("Step 1.00 s → 1.00 s (0 s): no item moved"));
}

void TestCompare::stepChangeOfEpEdit() {
    // EP 8 -> 16 on the default sample's 8-GPU nodes: the all-to-all leaves NVLink, so its
    // exposed time grows; the item deltas add up to the step's (the items sum to the step).
    const Scenario a = defaultSample();
    Scenario b = a;
    b.layout.ep = 16;
    const Report ra = evaluate(a), rb = evaluate(b);
    const StepChange c = compareSteps(ra, rb);
    QCOMPARE(c.before_s, ra.step_time_s);
    QCOMPARE(c.after_s, rb.step_time_s);
    double sum = 0;
    bool a2a = false;
    for (size_t i = 0; i < c.items.size(); ++i) {
        sum += c.items[i].delta_s;
        if (i > 0)
            QVERIFY(std::fabs(c.items[i - 1].delta_s) >= std::fabs(c.items[i].delta_s));
        if (c.items[i].item == StepItem::all_to_all) {
            a2a = true;
            QVERIFY(c.items[i].delta_s > 0);
            QCOMPARE(c.items[i].delta_s,
                     rb.step[StepItem::all_to_all] - ra.step[StepItem::all_to_all]);
        }
    }
    QVERIFY(a2a);
    QVERIFY2(std::fabs(sum - c.delta_s) < 1e-9 * rb.step_time_s,
             qPrintable(QString("%1 vs %2").arg(sum).arg(c.delta_s)));
}

namespace {

struct Run {
    int code = -1;
    QString out, err;
};

Run moePlan(const QStringList& args) {
    QProcess p;
    p.start(MOE_PLAN_EXE, args);
    if (!p.waitForFinished(30000))
        qFatal("moe-plan did not finish");
    return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

} // namespace

void TestCompare::cliComparesAFileWithItsWhatIf() {
    const QString a = QString::fromStdString(test::samplePath("dgx-h100-8x8-moe16.yaml"));
    // The file against itself with EP=16 for B only: A keeps EP=8.
    const Run r = moePlan({"compare", a, a, "--set-b", "layout.ep=16"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    QVERIFY(r.out.startsWith("A: dgx-h100-8x8-moe16 (TP=1 CP=1 PP=1 DP=64 | EP=8 "));
    QVERIFY(r.out.contains("\nB: dgx-h100-8x8-moe16 (TP=1 CP=1 PP=1 DP=64 | EP=16 "));
    QVERIFY(QRegularExpression(R"(\n  layout\.ep +8 +16\n)").match(r.out).hasMatch());

    // What moved the step is the core's comparison of the two reports.
    const Scenario sa = defaultSample();
    Scenario sb = sa;
    sb.layout.ep = 16;
    const StepChange expected = compareSteps(evaluate(sa), evaluate(sb));
    QVERIFY(r.out.contains(
        "\nWhat changed the step (B against A): " +
        QString::fromStdString(stepChangeSummary(expected, 3, UnitStyle::ascii)) + "\n"));
    QVERIFY(QRegularExpression(R"(\n  all-to-all +\S+ \S+ +\S+ \S+ +\+\S+ \S+\n)")
                .match(r.out)
                .hasMatch());
    // The imbalance wait is a headline row, and money carries its currency.
    QVERIFY(QRegularExpression(R"(\nimbalance wait +\S+)").match(r.out).hasMatch());
    QVERIFY(
        QRegularExpression(R"(\ncost of the run +\$[0-9,]+ +\$[0-9,]+ )").match(r.out).hasMatch());

    const Run j = moePlan({"compare", "--json", a, a, "--set-b", "layout.ep=16"});
    QCOMPARE(j.code, 0);
    const QJsonObject json = QJsonDocument::fromJson(j.out.toUtf8()).object();
    const QJsonObject change = json["step_change"].toObject();
    QCOMPARE(change["a_s"].toDouble(), expected.before_s);
    QCOMPARE(change["b_s"].toDouble(), expected.after_s);
    const QJsonArray items = change["items"].toArray();
    QCOMPARE(items.size(), static_cast<qsizetype>(expected.items.size()));
    for (qsizetype i = 0; i < items.size(); ++i) {
        const StepItemChange& e = expected.items[static_cast<size_t>(i)];
        QCOMPARE(items[i]["item"].toString(), QString(keyOf(e.item)));
        QCOMPARE(items[i]["delta_s"].toDouble(), e.delta_s);
    }
    bool cost = false;
    for (const QJsonValue f : json["figures"].toArray()) {
        if (f["name"].toString() == "cost of the run") {
            cost = true;
            QCOMPARE(f["currency"].toString(), QStringLiteral("USD"));
        } else if (f["name"].toString() == "step time") {
            QVERIFY(!f.toObject().contains("currency"));
        }
    }
    QVERIFY(cost);

    // --set applies to both, then --set-b to B, so B's value wins for a field both set.
    const Run both = moePlan({"compare", a, a, "--set", "layout.ep=4", "--set-b", "layout.ep=16"});
    QCOMPARE(both.code, 0);
    QVERIFY(both.out.startsWith("A: dgx-h100-8x8-moe16 (TP=1 CP=1 PP=1 DP=64 | EP=4 "));
    QVERIFY(both.out.contains("\nB: dgx-h100-8x8-moe16 (TP=1 CP=1 PP=1 DP=64 | EP=16 "));
}

void TestCompare::cliSetBErrorNamesTheKey() {
    const QString a = QString::fromStdString(test::samplePath("dgx-h100-8x8-moe16.yaml"));
    // An unknown key in --set-b: bad input (1), nothing on standard output, and the message
    // names the option and the key.
    const Run r = moePlan({"compare", a, a, "--set-b", "layout.epp=16"});
    QCOMPARE(r.code, 1);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.startsWith("--set-b: error: "), qPrintable(r.err));
    QVERIFY2(r.err.contains("layout.epp"), qPrintable(r.err));
    // A value the rules refuse is B's problem too, named the same way.
    const Run bad = moePlan({"compare", a, a, "--set-b", "layout.ep=7"});
    QCOMPARE(bad.code, 1);
    QVERIFY2(bad.err.contains("--set-b") && bad.err.contains("layout.ep"), qPrintable(bad.err));
    // Without an assignment: a malformed override, named as --set-b.
    const Run malformed = moePlan({"compare", a, a, "--set-b", "layout.ep"});
    QCOMPARE(malformed.code, 1);
    QVERIFY2(malformed.err.startsWith("--set-b: error: malformed override"),
             qPrintable(malformed.err));
}

QTEST_GUILESS_MAIN(TestCompare)
#include "test_compare.moc"
