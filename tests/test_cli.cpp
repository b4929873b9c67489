// moe-plan end to end: runs the built executable with QProcess and checks exit codes (0 ok,
// 1 bad input, 2 usage), the exact diagnostics users see, and that text and JSON agree.
#include "test_support.h"

#include <QtTest>

#include "moe/scenario_io.h"
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <cmath>

namespace {

struct Run {
    int code = -1; ///< -1 when the process crashed or timed out
    QString out;
    QString err;
};

Run moePlan(const QStringList& args, const QString& workingDir = {}) {
    QProcess p;
    if (!workingDir.isEmpty())
        p.setWorkingDirectory(workingDir);
    p.start(QStringLiteral(MOE_PLAN_EXE), args);
    Run r;
    if (!p.waitForFinished(20000)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("moe-plan did not finish");
        return r;
    }
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    if (p.exitStatus() == QProcess::NormalExit)
        r.code = p.exitCode();
    return r;
}

QString sample(const char* name) {
    return QString::fromStdString(moe::test::samplePath(name));
}

const char* const kDefault = "dgx-h100-8x8-moe16.yaml";
const char* const kSixteen = "16gpu-nodes-4x16-moe16.yaml";
const QString kTextbookSentence =
    QStringLiteral("EP=8 inside nodes so the all-to-all rides NVLink, DP=8 across nodes so the "
                   "gradient all-reduce uses InfiniBand");
const QStringList kCommands = {"evaluate", "compare", "validate", "show", "catalog", "bench"};

QJsonObject parseJson(const QString& text) {
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8(), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        qWarning("not a JSON object: %s", qPrintable(error.errorString()));
    return doc.object();
}

/// 1-based line and column where `needle` starts in `text` (as a YAML mark would say).
QString locationOf(const QString& text, const QString& needle) {
    const qsizetype at = text.indexOf(needle);
    if (at < 0)
        return QStringLiteral("<%1 not found>").arg(needle);
    const qsizetype line = text.left(at).count(QLatin1Char('\n')) + 1;
    const qsizetype lineStart = text.lastIndexOf(QLatin1Char('\n'), at - 1) + 1;
    return QStringLiteral("%1:%2").arg(line).arg(at - lineStart + 1);
}

/// The cells of a TextTable row, split on runs of two or more spaces (cells never hold two).
QStringList cells(const QString& line) {
    return line.trimmed().split(QRegularExpression(QStringLiteral("\\s{2,}")));
}

/// The row of the table whose first cell is `label`.
QStringList tableRow(const QString& text, const QString& label) {
    for (const QString& line : text.split(QLatin1Char('\n'))) {
        const QStringList c = cells(line);
        if (!c.isEmpty() && c.first() == label)
            return c;
    }
    return {};
}

/// Seconds from a formatSeconds() text ("3.16 s", "127 ms", "447 us", "0").
double secondsFrom(const QString& text) {
    const QStringList parts = text.split(QLatin1Char(' '));
    const double v = parts.first().toDouble();
    if (parts.size() < 2)
        return v;
    const QString unit = parts.at(1);
    if (unit == "us")
        return v * 1e-6;
    if (unit == "ms")
        return v * 1e-3;
    if (unit == "h")
        return v * 3600;
    if (unit == "days")
        return v * 86400;
    return v;
}

/// The delta text compare prints: relative change of b versus a with one decimal.
QString expectedDelta(double a, double b) {
    if (a == 0)
        return b == 0 ? QStringLiteral("0%") : QStringLiteral("n/a");
    return QString::asprintf("%+.1f%%", (b - a) / std::fabs(a) * 100.0);
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT

private slots:
    // Issue 17 #8: `moe-plan edit` changes exactly the values set; a no-op is byte-identical.
    void editSetEpChangesExactlyOneLine() {
        QTemporaryDir dir;
        const QString out = dir.filePath("out.yaml");
        const Run r = moePlan(
            {"edit", sample("dgx-h100-8x8-moe16.yaml"), "--set", "layout.ep=16", "-o", out});
        QCOMPARE(r.code, 0);
        const QStringList before =
            QString::fromStdString(
                moe::test::readFile(sample("dgx-h100-8x8-moe16.yaml").toStdString()))
                .split('\n');
        const QStringList after =
            QString::fromStdString(moe::test::readFile(out.toStdString())).split('\n');
        QCOMPARE(after.size(), before.size());
        int changed = 0;
        for (int i = 0; i < before.size(); ++i)
            changed += before[i] != after[i];
        QCOMPARE(changed, 1);
        QVERIFY(after.contains(QStringLiteral("  ep: 16")));
    }
    void editNoOpIsByteIdenticalForEverySample() {
        for (const std::string& path : moe::test::sampleFiles()) {
            QTemporaryDir dir;
            const QString out = dir.filePath("same.yaml");
            const Run r = moePlan({"edit", QString::fromStdString(path), "-o", out});
            QVERIFY2(r.code == 0, qPrintable(r.err));
            QCOMPARE(moe::test::readFile(out.toStdString()), moe::test::readFile(path));
        }
    }
    void editThatBreaksTheFileWritesNothing() {
        QTemporaryDir dir;
        const QString out = dir.filePath("out.yaml");
        const Run r = moePlan(
            {"edit", sample("dgx-h100-8x8-moe16.yaml"), "--set", "layout.ep=12", "-o", out});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains(QStringLiteral("layout.ep = 12 does not divide model.experts")));
        QVERIFY(!QFileInfo::exists(out));
    }
    // Issue 17 #6: --write-best into another folder kept routing.histogram_csv relative to the old.
    void writeBestIntoAnotherFolderRebasesTheHistogram() {
        QTemporaryDir a, b;
        QFile csv(a.filePath("h.csv"));
        QVERIFY(csv.open(QIODevice::WriteOnly));
        csv.write("8,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1\n");
        csv.close();
        std::string yaml = moe::defaultScenarioYaml();
        yaml.replace(yaml.find("  balancing: aux_loss\n"), 21,
                     "  model: histogram\n  histogram_csv: h.csv\n");
        QFile in(a.filePath("s.yaml"));
        QVERIFY(in.open(QIODevice::WriteOnly));
        in.write(QByteArray::fromStdString(yaml));
        in.close();
        const QString best = b.filePath("best.yaml");
        const Run r = moePlan({"search", a.filePath("s.yaml"), "--top", "1", "--pin", "layout.tp=1",
                               "--pin", "layout.pp=1", "--write-best", best});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const Run check = moePlan({"validate", best});
        QVERIFY2(check.code == 0, qPrintable(check.err));
        // The comments of the input survive in the written file.
        QVERIFY(moe::test::readFile(best.toStdString()).find("# dgx-h100-8x8-moe16") !=
                std::string::npos);
    }
    void toolHelp();
    void commandHelp_data();
    void commandHelp();
    void usageErrors_data();
    void usageErrors();

    void validateSamples_data();
    void validateSamples();
    void validateBrokenFile_data();
    void validateBrokenFile();
    void validateSeveralFilesOneBad();

    void showTextbookLayout();
    void showRankOrderMovesEpAcrossNodes();
    void showJson();
    void showBadInput();

    void evaluateDefaultText();
    void evaluateJsonSumsToStepTime();
    void evaluateOverrides();
    void evaluateBadInput();

    void compareWithItself();
    void compareTwoSamples();
    void compareScaleUpVsScaleOut();
    void evaluateShowsTimeCostAndReliability();

    void catalog();
    void bench();
};

void TestCli::toolHelp() {
    for (const QString& flag : {QStringLiteral("--help"), QStringLiteral("-h")}) {
        const Run r = moePlan({flag});
        QCOMPARE(r.code, 0);
        QVERIFY(r.err.isEmpty());
        QVERIFY(r.out.startsWith("moe-plan — plan Mixture-of-Experts"));
        QVERIFY(r.out.contains("Usage: moe-plan <command> [options]\n"));
        for (const QString& c : kCommands)
            QVERIFY2(r.out.contains("\n  " + c + " "), qPrintable(c));
        QVERIFY(r.out.contains("Exit status: 0 success, 1 bad input (scenario errors), 2 usage "
                               "error, 130 interrupted."));
    }
    const Run r = moePlan({"help", "evaluate"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.err.isEmpty());
    QVERIFY(r.out.startsWith("Usage: moe-plan evaluate [FILE] [--set key=value ...] [--json]\n"));
    QVERIFY(r.out.contains("--set layout.ep=16"));
}

void TestCli::commandHelp_data() {
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("synopsis");
    QTest::newRow("evaluate") << "evaluate"
                              << "evaluate [FILE] [--set key=value ...] [--json]";
    QTest::newRow("compare")
        << "compare"
        << "compare A.yaml B.yaml [--set key=value ...] [--set-b key=value ...] "
           "[--json]";
    QTest::newRow("validate") << "validate"
                              << "validate FILE... [--json]";
    QTest::newRow("show") << "show"
                          << "show [FILE] [--set key=value ...] [--json]";
    QTest::newRow("catalog") << "catalog"
                             << "catalog [--json]";
    QTest::newRow("bench")
        << "bench"
        << "bench [FILE...] [--set key=value ...] [--repeat N] [--scaling] [--search] [--json]";
}

void TestCli::commandHelp() {
    QFETCH(QString, command);
    QFETCH(QString, synopsis);
    // --help wins over missing files (validate and compare need some).
    const Run r = moePlan({command, "--help"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.err.isEmpty());
    QVERIFY2(r.out.startsWith("Usage: moe-plan " + synopsis + "\n\n"), qPrintable(r.out));
    QVERIFY(r.out.size() > synopsis.size() + 40); // the description follows
    const Run viaHelp = moePlan({"help", command});
    QCOMPARE(viaHelp.code, 0);
    QCOMPARE(viaHelp.out, r.out);
}

void TestCli::usageErrors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    const QString a = sample(kDefault);
    QTest::newRow("no arguments") << QStringList{} << "Usage: moe-plan <command>";
    QTest::newRow("unknown command")
        << QStringList{"frobnicate"} << "moe-plan: unknown command 'frobnicate'\n";
    QTest::newRow("help for unknown command")
        << QStringList{"help", "frobnicate"} << "moe-plan: unknown command 'frobnicate'\n";
    QTest::newRow("unknown option")
        << QStringList{"evaluate", "--frob"} << "moe-plan evaluate: unknown option '--frob'\n";
    QTest::newRow("option of another command")
        << QStringList{"edit", "--top", "3", a} << "moe-plan edit: unknown option '--top'\n";
    QTest::newRow("set where not offered") << QStringList{"catalog", "--set", "layout.ep=16"}
                                           << "moe-plan catalog: unknown option '--set'\n";
    // Not "--set needs a value": the command takes no --set at all.
    QTest::newRow("bare set where not offered")
        << QStringList{"validate", a, "--set"} << "moe-plan validate: unknown option '--set'\n";
    QTest::newRow("repeat outside bench") << QStringList{"evaluate", "--repeat", "3"}
                                          << "moe-plan evaluate: unknown option '--repeat'\n";
    QTest::newRow("validate without file")
        << QStringList{"validate"} << "moe-plan validate: needs FILE\n";
    QTest::newRow("compare with one file")
        << QStringList{"compare", a} << "moe-plan compare: needs 2 FILES, got 1\n";
    QTest::newRow("evaluate with two files")
        << QStringList{"evaluate", a, a} << "moe-plan evaluate: unexpected argument '" + a + "'\n";
    QTest::newRow("catalog with a file")
        << QStringList{"catalog", a} << "moe-plan catalog: unexpected argument '" + a + "'\n";
    QTest::newRow("set without value")
        << QStringList{"evaluate", "--set"} << "moe-plan evaluate: --set needs a value\n";
    QTest::newRow("set without value after file")
        << QStringList{"show", a, "--set"} << "moe-plan show: --set needs a value\n";
    QTest::newRow("repeat without value")
        << QStringList{"bench", "--repeat"} << "moe-plan bench: --repeat needs a value\n";
    QTest::newRow("repeat zero")
        << QStringList{"bench", "--repeat", "0"}
        << "moe-plan bench: --repeat needs a whole number from 1 to 1000000, got '0'\n";
    QTest::newRow("repeat not a number")
        << QStringList{"bench", "--repeat", "x"}
        << "moe-plan bench: --repeat needs a whole number from 1 to 1000000, got 'x'\n";
    QTest::newRow("repeat with trailing junk")
        << QStringList{"bench", "--repeat", "3x"}
        << "moe-plan bench: --repeat needs a whole number from 1 to 1000000, got '3x'\n";
}

void TestCli::usageErrors() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const Run r = moePlan(args);
    QCOMPARE(r.code, 2);
    QVERIFY2(r.out.isEmpty(), qPrintable(r.out));
    // The problem comes first, then the usage that helps fix it.
    if (args.isEmpty())
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    else
        QVERIFY2(r.err.startsWith(message), qPrintable(r.err));
    QVERIFY2(r.err.contains("Usage: moe-plan"), qPrintable(r.err));
}

void TestCli::validateSamples_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("summary");
    // GPUs = nodes x GPUs per node, as each sample's header describes it.
    QTest::newRow("default") << sample(kDefault) << "64 GPUs in 8 nodes, moe-16x2-40b";
    QTest::newRow("16-GPU nodes") << sample(kSixteen) << "64 GPUs in 4 nodes, moe-16x2-40b";
    QTest::newRow("deepseek h800")
        << sample("deepseek-v3-2048xh800.yaml") << "2048 GPUs in 256 nodes, deepseek-v3";
    QTest::newRow("mixtral") << sample("mixtral-8x7b-32xh100.yaml")
                             << "32 GPUs in 4 nodes, mixtral-8x7b";
    for (const std::string& path : moe::test::sampleFiles()) {
        const QString file = QString::fromStdString(path);
        QTest::newRow(qPrintable(QFileInfo(file).fileName())) << file << QString();
    }
}

void TestCli::validateSamples() {
    QFETCH(QString, file);
    QFETCH(QString, summary);
    const Run r = moePlan({"validate", file});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    QVERIFY2(r.out.startsWith(file + ": ok ("), qPrintable(r.out));
    if (!summary.isEmpty())
        QCOMPARE(r.out, file + ": ok (" + summary + ")\n");
}

void TestCli::validateBrokenFile_data() {
    QTest::addColumn<QString>("content");
    QTest::addColumn<QString>("expected"); ///< one line of stderr, without "file:"
    const QString base =
        QString::fromStdString(moe::test::readFile(moe::test::samplePath(kDefault)));
    QVERIFY(base.contains("\nlayout:\n") && base.contains("\n  ep: 8\n"));

    QString typo = base;
    typo.replace("\nlayout:\n", "\nlayuot:\n");
    QTest::newRow("typo'd section")
        << typo
        << locationOf(typo, "layuot:") +
               QString::fromUtf8(": error: unknown field 'layuot' — did you mean 'layout'?");

    QString ep12 = base;
    ep12.replace("\n  ep: 8\n", "\n  ep: 12\n");
    // The mark is the key's, two spaces in.
    QTest::newRow("ep does not divide experts")
        << ep12
        << locationOf(ep12, "ep: 12") +
               ": error: layout.ep = 12 does not divide model.experts = 16";

    // "   nodes: 8" is indented deeper than its sibling: the ':' at line 4 column 9 is where
    // the parser gives up.
    QTest::newRow("bad indentation") << "name: x\ncluster:\n  gpu: h100-sxm\n   nodes: 8\n"
                                     << "4:9: error: YAML syntax error: illegal map value";
    // A list item inside a map: the '-' at line 4 column 3.
    QTest::newRow("list item in a map") << "name: x\ncluster:\n  gpu: h100-sxm\n  - 8\n"
                                        << "4:3: error: YAML syntax error: end of map not found";
}

void TestCli::validateBrokenFile() {
    QFETCH(QString, content);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile f(dir.filePath("broken.yaml"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(content.toUtf8());
    f.close();

    // A relative path is reported as given.
    const Run r = moePlan({"validate", "broken.yaml"}, dir.path());
    QCOMPARE(r.code, 1);
    QVERIFY2(r.out.isEmpty(), qPrintable(r.out));
    const QStringList lines = r.err.split('\n', Qt::SkipEmptyParts);
    QVERIFY2(lines.contains("broken.yaml:" + expected), qPrintable(r.err));
    static const QRegularExpression located(QStringLiteral("^broken\\.yaml:\\d+:\\d+: error: \\S"));
    for (const QString& line : lines)
        QVERIFY2(located.match(line).hasMatch(), qPrintable(line));
}

void TestCli::validateSeveralFilesOneBad() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QString text = QString::fromStdString(moe::test::readFile(moe::test::samplePath(kDefault)));
    text.replace("\n  ep: 8\n", "\n  ep: 12\n");
    QFile f(dir.filePath("ep12.yaml"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text.toUtf8());
    f.close();
    const QString good = sample(kDefault);
    const QString message = "ep12.yaml:" + locationOf(text, "ep: 12") +
                            ": error: layout.ep = 12 does not divide model.experts = 16\n";

    // The bad file first and last: the other is still checked and reported.
    for (const QStringList& args :
         {QStringList{"validate", "ep12.yaml", good}, QStringList{"validate", good, "ep12.yaml"}}) {
        const Run r = moePlan(args, dir.path());
        QCOMPARE(r.code, 1);
        QCOMPARE(r.out, good + ": ok (64 GPUs in 8 nodes, moe-16x2-40b)\n");
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }
}

void TestCli::showTextbookLayout() {
    const Run r = moePlan({"show"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    const QStringList header = tableRow(r.out, "group");
    QCOMPARE(header, (QStringList{"group", "degree", "groups", "GPUs/domain", "domains", "nodes",
                                  "racks", "rides"}));
    // 8 nodes x 8 GPUs, EP=8 with order tp-cp-ep-dp-pp: EP takes the 8 consecutive ranks of
    // one node, 8 such groups; expert-DP strides by 8, one GPU in each of the 8 nodes.
    QCOMPARE(tableRow(r.out, "EP"), (QStringList{"EP", "8", "8", "8", "1", "1", "1", "NVLink"}));
    QCOMPARE(tableRow(r.out, "expert-DP"),
             (QStringList{"expert-DP", "8", "8", "1", "8", "8", "2", "InfiniBand"}));
    // DP=64 covers every GPU: 8 per node, all 8 nodes, both racks of 4 nodes.
    QCOMPARE(tableRow(r.out, "DP"),
             (QStringList{"DP", "64", "1", "8", "8", "8", "2", "NVLink + InfiniBand"}));
    QCOMPARE(tableRow(r.out, "TP"), (QStringList{"TP", "1", "64", "1", "1", "1", "1", "-"}));
    QVERIFY(r.out.contains("\n  " + kTextbookSentence + "\n"));

    // The built-in default is sample 1.
    const Run file = moePlan({"show", sample(kDefault)});
    QCOMPARE(file.code, 0);
    QCOMPARE(file.out, r.out);
}

void TestCli::showRankOrderMovesEpAcrossNodes() {
    const Run r = moePlan({"show", "--set", "layout.order=tp-cp-dp-ep-pp"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    // DP now varies fastest after TP/CP, so an EP group strides by 8 ranks: one GPU per node.
    QCOMPARE(tableRow(r.out, "EP"),
             (QStringList{"EP", "8", "8", "1", "8", "8", "2", "InfiniBand"}));
    QCOMPARE(tableRow(r.out, "expert-DP"),
             (QStringList{"expert-DP", "8", "8", "8", "1", "1", "1", "NVLink"}));
    QVERIFY(r.out.contains("order tp-cp-dp-ep-pp"));
    QVERIFY(!r.out.contains(kTextbookSentence));
    QVERIFY(r.out.contains("EP=8 across nodes so the all-to-all rides InfiniBand"));
}

void TestCli::showJson() {
    const Run r = moePlan({"show", "--json"});
    QCOMPARE(r.code, 0);
    const QJsonObject root = parseJson(r.out);
    QCOMPARE(root["name"].toString(), QStringLiteral("dgx-h100-8x8-moe16"));
    QCOMPARE(root["cluster"]["gpus"].toInt(), 64);
    QCOMPARE(root["cluster"]["nodes"].toInt(), 8);
    const QJsonObject groups = root["groups"].toObject();
    QCOMPARE(groups["ep"]["count"].toInt(), 8);
    QCOMPARE(groups["ep"]["span"]["gpus"].toInt(), 8);
    QCOMPARE(groups["ep"]["span"]["nodes"].toInt(), 1);
    QCOMPARE(groups["ep"]["span"]["link_class"].toString(), QStringLiteral("scale_up"));
    QCOMPARE(groups["edp"]["span"]["nodes"].toInt(), 8);
    QCOMPARE(groups["edp"]["span"]["link_class"].toString(), QStringLiteral("scale_out"));
    QCOMPARE(groups["dp"]["span"]["gpus"].toInt(), 64);
    QVERIFY(root["description"].toArray().contains(kTextbookSentence));

    const Run swapped = moePlan({"show", "--json", "--set", "layout.order=tp-cp-dp-ep-pp"});
    QCOMPARE(swapped.code, 0);
    const QJsonObject swappedRoot = parseJson(swapped.out);
    const QJsonObject ep = swappedRoot["groups"]["ep"].toObject();
    QCOMPARE(ep["span"]["nodes"].toInt(), 8);
    QCOMPARE(ep["span"]["link_class"].toString(), QStringLiteral("scale_out"));
}

void TestCli::showBadInput() {
    const Run r = moePlan({"show", "--set", "layout.ep=12"});
    QCOMPARE(r.code, 1);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.contains("error: layout.ep = 12 does not divide model.experts = 16\n"),
             qPrintable(r.err));
}

void TestCli::evaluateDefaultText() {
    const Run r = moePlan({"evaluate"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    QVERIFY(r.out.startsWith("MoE Planner report: dgx-h100-8x8-moe16\n"));
    qsizetype at = 0;
    // Sections in reading order.
    for (const char* section :
         {"\nHeadline\n", "\nStep-time breakdown", "\nTraffic per GPU per step", "\nMemory per GPU",
          "\nExpert load", "\nWarnings\n"}) {
        const qsizetype found = r.out.indexOf(QString::fromUtf8(section), at);
        QVERIFY2(found > at, section);
        at = found;
    }
    QVERIFY(r.out.contains(kTextbookSentence));
    // Both all-to-all directions ride EP=8 inside a node; expert-DP=8 gradients cross nodes.
    QVERIFY(tableRow(r.out, "MoE dispatch all-to-all (fwd+bwd)").value(1) == "EP=8");
    QVERIFY(tableRow(r.out, "expert-DP gradient sync").value(1) == "expert-DP=8");

    // The printed step time is the JSON figure to 3 significant digits, and the breakdown's
    // closing row repeats it.
    const Run json = moePlan({"evaluate", "--json"});
    QCOMPARE(json.code, 0);
    const double step_s = parseJson(json.out)["step_time_s"].toDouble();
    const QString shown = tableRow(r.out, "step time").value(1);
    QVERIFY2(std::fabs(secondsFrom(shown) - step_s) <= 0.005 * step_s, qPrintable(shown));
    const QStringList stepRow = tableRow(r.out, "step");
    QCOMPARE(stepRow.value(1), shown);
    QCOMPARE(stepRow.value(2), QStringLiteral("100.0%"));
}

void TestCli::evaluateJsonSumsToStepTime() {
    const Run r = moePlan({"evaluate", "--json"});
    QCOMPARE(r.code, 0);
    const QJsonObject root = parseJson(r.out);
    QCOMPARE(root["gpus"].toInt(), 64);
    const double step_s = root["step_time_s"].toDouble();
    QVERIFY(step_s > 0);
    // "breakdown": one snake_case key per item, exposed seconds summing to the step;
    // "hidden_s": the same keys, time hidden behind other work.
    const QJsonObject breakdown = root["breakdown"].toObject();
    const QJsonObject hidden = root["hidden_s"].toObject();
    const QStringList keys = {"attention",      "dense_ffn",    "router",
                              "expert_compute", "all_to_all",   "tp_collectives",
                              "cp_collectives", "pp_transfers", "pipeline_bubble",
                              "dp_sync",        "optimizer",    "imbalance_wait"};
    QCOMPARE(breakdown.keys().size(), keys.size());
    double sum_s = 0;
    for (const QString& key : keys) {
        QVERIFY2(breakdown.contains(key) && hidden.contains(key), qPrintable(key));
        const double exposed = breakdown[key].toDouble(-1);
        QVERIFY2(exposed >= 0, qPrintable(key));
        QVERIFY2(hidden[key].toDouble(-1) >= 0, qPrintable(key));
        sum_s += exposed;
    }
    QVERIFY2(std::fabs(sum_s - step_s) <= 1e-9 * step_s,
             qPrintable(QString::asprintf("%.17g vs %.17g", sum_s, step_s)));
    QVERIFY(breakdown["dp_sync"].toDouble() > 0 && hidden["dp_sync"].toDouble() > 0);
    QVERIFY(root["throughput"]["tokens_per_s"].toDouble() > 0);
    QVERIFY(root["memory"]["fits"].toBool());

    // The built-in default is sample 1, figure for figure.
    const Run file = moePlan({"evaluate", "--json", sample(kDefault)});
    QCOMPARE(file.code, 0);
    QCOMPARE(file.out, r.out);
}

void TestCli::evaluateOverrides() {
    const QJsonObject base = parseJson(moePlan({"evaluate", "--json"}).out);
    const Run r = moePlan({"evaluate", "--json", "--set", "layout.ep=16"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    const QJsonObject ep16 = parseJson(r.out);
    QVERIFY(ep16["step_time_s"].toDouble() > 0);
    QVERIFY(ep16["step_time_s"].toDouble() != base["step_time_s"].toDouble());
    // EP=16 on 8-GPU nodes spans two nodes: the all-to-all leaves NVLink and gets slower.
    const auto allToAllSeconds = [](const QJsonObject& report) {
        double s = 0, scale_out_bytes = 0;
        for (const QJsonValue c : report["collectives"].toArray()) {
            if (c["kind"].toString().startsWith("moe-")) {
                s += c["time_s"].toDouble();
                scale_out_bytes += c["scale_out_bytes_per_gpu"].toDouble();
            }
        }
        return std::make_pair(s, scale_out_bytes);
    };
    QCOMPARE(allToAllSeconds(base).second, 0.0);
    QVERIFY(allToAllSeconds(ep16).second > 0);
    QVERIFY(allToAllSeconds(ep16).first > allToAllSeconds(base).first);

    // --set=key=value is the same override.
    const Run joined = moePlan({"evaluate", "--json", "--set=layout.ep=16"});
    QCOMPARE(joined.code, 0);
    QCOMPARE(joined.out, r.out);
}

void TestCli::evaluateBadInput() {
    const Run ep12 = moePlan({"evaluate", "--set", "layout.ep=12"});
    QCOMPARE(ep12.code, 1);
    QVERIFY(ep12.out.isEmpty());
    QVERIFY2(ep12.err.contains(": error: layout.ep = 12 does not divide model.experts = 16\n"),
             qPrintable(ep12.err));

    const Run malformed = moePlan({"evaluate", "--set", "layout.ep"});
    QCOMPARE(malformed.code, 1);
    QVERIFY2(malformed.err.contains("malformed override 'layout.ep'"), qPrintable(malformed.err));

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const Run missing = moePlan({"evaluate", "no-such-file.yaml"}, dir.path());
    QCOMPARE(missing.code, 1);
    QVERIFY(missing.out.isEmpty());
    QVERIFY2(missing.err.startsWith("no-such-file.yaml: error: cannot read file"),
             qPrintable(missing.err));
}

void TestCli::compareWithItself() {
    const QString a = sample(kDefault);
    const Run r = moePlan({"compare", a, a});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    QVERIFY(r.out.startsWith("A: dgx-h100-8x8-moe16 (TP=1 CP=1 PP=1 DP=64 | EP=8 "));
    QVERIFY(r.out.contains("\nB: dgx-h100-8x8-moe16 (TP=1 CP=1 PP=1 DP=64 | EP=8 "));
    QCOMPARE(tableRow(r.out, "figure"), (QStringList{"figure", "A", "B", "delta"}));

    const QJsonObject json = parseJson(moePlan({"compare", "--json", a, a}).out);
    const QJsonArray figures = json["figures"].toArray();
    QVERIFY(figures.size() >= 10);
    for (const QJsonValue f : figures) {
        const QString name = f["name"].toString();
        QCOMPARE(f["delta"].toDouble(), 0.0);
        QCOMPARE(f["a"].toDouble(), f["b"].toDouble());
        const QStringList row = tableRow(r.out, name);
        QCOMPARE(row.size(), 4); // no "B better"/"B worse"
        QCOMPARE(row.at(1), row.at(2));
        QVERIFY2(row.at(3) == "+0.0%" || row.at(3) == "0%", qPrintable(row.join('|')));
    }
}

void TestCli::compareTwoSamples() {
    const QString a = sample(kDefault), b = sample(kSixteen);
    const Run r = moePlan({"compare", a, b});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    QVERIFY(r.out.startsWith("A: dgx-h100-8x8-moe16 ("));
    QVERIFY(r.out.contains("\nB: 16gpu-nodes-4x16-moe16 (TP=1 CP=1 PP=1 DP=64 | EP=16 expert-TP=1 "
                           "expert-DP=4 "));

    const Run j = moePlan({"compare", "--json", a, b});
    QCOMPARE(j.code, 0);
    const QJsonObject json = parseJson(j.out);
    QCOMPARE(json["a"].toString(), QStringLiteral("dgx-h100-8x8-moe16"));
    QCOMPARE(json["b"].toString(), QStringLiteral("16gpu-nodes-4x16-moe16"));
    const QJsonArray figures = json["figures"].toArray();
    QVERIFY(figures.size() >= 10);
    QStringList names;
    for (const QJsonValue f : figures) {
        const QString name = f["name"].toString();
        names << name;
        const double va = f["a"].toDouble(), vb = f["b"].toDouble();
        QCOMPARE(f["delta"].toDouble(), vb - va);
        // Every figure is a row whose delta and verdict agree with the JSON.
        const QStringList row = tableRow(r.out, name);
        QVERIFY2(row.size() >= 4, qPrintable(name));
        QCOMPARE(row.at(3), expectedDelta(va, vb));
        const bool lower = f["lower_is_better"].toBool();
        const QString verdict = (lower ? vb < va : vb > va)   ? "B better"
                                : (lower ? vb > va : vb < va) ? "B worse"
                                                              : "";
        QCOMPARE(row.value(4), verdict);
    }
    for (const char* must : {"step time", "tokens/s", "memory per GPU", "exposed all-to-all",
                             "exposed DP sync", "max expert imbalance"})
        QVERIFY2(names.contains(QString::fromUtf8(must)), must);
    // Same model, same 64 GPUs: memory differs only through the layout (EP=16 holds one expert
    // per GPU instead of two), so B needs less.
    QVERIFY(tableRow(r.out, "memory per GPU").value(4) == "B better");
}

void TestCli::catalog() {
    const Run r = moePlan({"catalog"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    for (const char* id : {"h100-sxm", "h800-sxm", "h200-sxm", "b200", "gb200", "mi300x",
                           "a100-sxm", "cx7-400g", "cx8-800g", "cx6-200g"})
        QVERIFY2(!tableRow(r.out, QString::fromUtf8(id)).isEmpty(), id);
    // H100 SXM datasheet: 989 dense BF16 TFLOPS, 80 GB HBM3 at 3.35 TB/s.
    const QStringList h100 = tableRow(r.out, "h100-sxm");
    QCOMPARE(h100.value(1), QStringLiteral("NVIDIA H100 SXM 80GB"));
    QCOMPARE(h100.value(2), QStringLiteral("989"));
    QCOMPARE(h100.value(4), QStringLiteral("80"));
    QCOMPARE(h100.value(5), QStringLiteral("3.35"));
    // A100 has no FP8 tensor cores: its FP8 column says so instead of a zero peak.
    QCOMPARE(tableRow(r.out, "a100-sxm").value(3), QStringLiteral("none"));
    QCOMPARE(h100.value(3), QStringLiteral("1,979"));

    const Run j = moePlan({"catalog", "--json"});
    QCOMPARE(j.code, 0);
    const QJsonObject json = parseJson(j.out);
    QStringList gpus, nics;
    double h100Tflops = 0;
    for (const QJsonValue g : json["gpus"].toArray()) {
        gpus << g["id"].toString();
        QVERIFY2(!g["source"].toString().isEmpty(), qPrintable(g["id"].toString()));
        if (g["id"].toString() == "h100-sxm")
            h100Tflops = g["bf16_tflops"].toDouble();
    }
    for (const QJsonValue n : json["nics"].toArray()) {
        nics << n["id"].toString();
        QVERIFY2(!n["source"].toString().isEmpty(), qPrintable(n["id"].toString()));
    }
    QVERIFY(gpus.contains("h100-sxm") && gpus.contains("gb200") && gpus.contains("mi300x"));
    QVERIFY(nics.contains("cx7-400g") && nics.contains("cx8-800g"));
    // Every catalog entry is listed: 7 GPUs (A100 included) and 4 NICs (CX6 HDR included).
    QCOMPARE(gpus.size(), 7);
    QCOMPARE(nics.size(), 4);
    QVERIFY(gpus.contains("a100-sxm") && nics.contains("cx6-200g"));
    QCOMPARE(h100Tflops, 989.0);
}

void TestCli::bench() {
    const Run r = moePlan({"bench", "--repeat", "3"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    QVERIFY(r.out.contains("evaluate median"));
    const QStringList row = tableRow(r.out, "<built-in default>");
    QCOMPARE(row.size(), 7);
    QCOMPARE(row.at(1), QStringLiteral("64")); // GPUs
    QCOMPARE(row.at(2), QStringLiteral("3"));  // runs
    const double median = secondsFrom(row.at(3)), min = secondsFrom(row.at(4)),
                 max = secondsFrom(row.at(5));
    QVERIFY(median > 0);
    QVERIFY(min <= median && median <= max);
    QVERIFY(secondsFrom(row.at(6)) > 0); // the graph and link bytes, read once

    // Overrides reach the built-in default as well as files.
    const Run bad = moePlan({"bench", "--repeat", "1", "--set", "layout.ep=12"});
    QCOMPARE(bad.code, 1);
    QVERIFY2(bad.err.contains("layout.ep = 12 does not divide model.experts = 16"),
             qPrintable(bad.err));
    const Run badFile =
        moePlan({"bench", "--repeat", "1", "--set", "layout.ep=12", sample(kDefault)});
    QCOMPARE(badFile.code, 1);

    // --scaling: the layout shape on 64 to 65,536 GPUs; sizes it does not fit are named.
    const Run scaled = moePlan({"bench", "--scaling", "--repeat", "1"});
    QCOMPARE(scaled.code, 0);
    for (const char* gpus : {"64", "512", "2048", "16384", "65536"}) {
        bool found = false;
        for (const QString& line : scaled.out.split('\n'))
            found = found ||
                    line.simplified().startsWith(QString("<built-in default> ") + gpus + " 1 ");
        QVERIFY2(found, qPrintable(scaled.out));
    }
    // EP 16 with PP 8 on 128 GPUs (DP 16): at 64 GPUs DP is 8, which EP 16 cannot fold into.
    const Run refused =
        moePlan({"bench", "--scaling", "--repeat", "1", "--set", "cluster.nodes=16", "--set",
                 "layout.pp=8", "--set", "layout.dp=16", "--set", "layout.ep=16"});
    QCOMPARE(refused.code, 0);
    QVERIFY2(refused.out.contains("<built-in default> at 64 GPUs: not timed, layout.ep"),
             qPrintable(refused.out));

    // --search: the layout search on one thread, its counts the search's own.
    const Run searched = moePlan({"bench", "--search", "--repeat", "1"});
    QCOMPARE(searched.code, 0);
    QVERIFY(searched.out.contains("search median"));
    const QStringList srow = tableRow(searched.out, "<built-in default>");
    QCOMPARE(srow.size(), 9);
    QCOMPARE(srow.at(2), QStringLiteral("1"));
    QVERIFY(secondsFrom(srow.at(3)) > 0);
    const Run direct = moePlan({"search", "--json", "--threads", "1"});
    QCOMPARE(direct.code, 0);
    const QJsonObject result = QJsonDocument::fromJson(direct.out.toUtf8()).object();
    auto count = [](const QString& cell) { return QString(cell).remove(',').toLongLong(); };
    QCOMPARE(count(srow.at(5)), static_cast<qint64>(result["candidates"].toDouble()));
    QCOMPARE(count(srow.at(6)), static_cast<qint64>(result["evaluated"].toDouble()));
    QCOMPARE(
        count(srow.at(7)),
        static_cast<qint64>(result["rejected"].toObject()["bound"].toObject()["count"].toDouble()));
}

void TestCli::compareScaleUpVsScaleOut() {
    // The sample pair answers its question: step time, days to train, cost, energy, goodput.
    const QString a = sample("scale-up-vs-scale-out/hgx-b200-infiniband.yaml");
    const QString b = sample("scale-up-vs-scale-out/gb200-nvl72-racks.yaml");
    const Run r = moePlan({"compare", a, b});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    for (const char* name : {"step time", "time to train with failures", "goodput",
                             "cost of the run", "energy (MWh)", "cluster MTBF", "capital"})
        QVERIFY2(tableRow(r.out, name).size() >= 4, name);
    // Rack-scale NVLink keeps the all-to-all off the fabric: faster, sooner, cheaper per run.
    for (const char* name :
         {"step time", "time to train with failures", "cost of the run", "energy (MWh)"})
        QCOMPARE(tableRow(r.out, name).value(4), QStringLiteral("B better"));
    QCOMPARE(tableRow(r.out, "capital").value(4), QStringLiteral("B worse"));
    QCOMPARE(tableRow(r.out, "cluster MTBF").value(4), QStringLiteral("B worse"));

    const Run j = moePlan({"compare", "--json", a, b});
    QCOMPARE(j.code, 0);
    const QJsonArray figures = parseJson(j.out)["figures"].toArray();
    bool goodput = false;
    for (const QJsonValue f : figures) {
        if (f["name"].toString() != "goodput")
            continue;
        goodput = true;
        QVERIFY(f["a"].toDouble() > 0.5 && f["a"].toDouble() < 1);
        QVERIFY(f["b"].toDouble() > 0.5 && f["b"].toDouble() < 1);
        QCOMPARE(f["lower_is_better"].toBool(), false);
    }
    QVERIFY(goodput);
}

void TestCli::evaluateShowsTimeCostAndReliability() {
    const Run r = moePlan({"evaluate", sample("deepseek-v3-2048xh800.yaml")});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains(
        "\nTime, cost and reliability (cost basis: rented: GPU-hours x $2.00 per GPU-hour;"));
    // One cost and one energy figure: nothing else in the report prices the run.
    QCOMPARE(r.out.count("cost of the run"), 1);
    QVERIFY(!r.out.contains("energy $0"));
    for (const char* label : {"goodput", "cluster MTBF", "checkpoint every", "cost of the run",
                              "cost per trillion tokens", "energy", "capital"})
        QVERIFY2(r.out.contains("\n  " + QString::fromLatin1(label) + " "), label);
    QVERIFY(r.out.contains("Young/Daly optimum"));
    QVERIFY(r.out.contains("What if the cluster were smaller or larger"));

    const Run j = moePlan({"evaluate", "--json", sample("deepseek-v3-2048xh800.yaml")});
    QCOMPARE(j.code, 0);
    const QJsonObject e = parseJson(j.out)["economics"].toObject();
    QVERIFY(e["valid"].toBool());
    QVERIFY(e["rental"].toBool());
    QCOMPARE(e["cost_basis"].toString(), QStringLiteral("rented: GPU-hours x $2.00 per GPU-hour"));
    const QJsonObject throughput = parseJson(j.out)["throughput"].toObject();
    QVERIFY(!throughput.contains("cost_usd") && !throughput.contains("energy_kwh"));
    const QJsonObject rel = e["reliability"].toObject();
    const double goodput = rel["goodput"].toDouble();
    QVERIFY(goodput > 0.9 && goodput < 1);
    QVERIFY(rel["mtbf_s"].toDouble() > 0);
    QCOMPARE(e["wall_time_s"].toDouble(), e["compute_time_s"].toDouble() / goodput);
    QVERIFY(e["scale_sweep"].toArray().size() >= 5);
    QCOMPARE(e["interval_sweep"].toArray().size(), 49);
}

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
