// moe-plan for scripts and clusters (issue 19), end to end through the built executable:
// --version, '-' for standard input and output (with the 16 MB bound), problems as JSON on
// standard error with --json, sweeps (rows, CSV, shards merged into exactly the whole sweep, and
// merges that refuse missing, repeated or foreign parts), the layout search split into shards
// and merged, progress on request, Ctrl+C (SIGINT) leaving no partial file, every command's help
// reachable both ways, and the bash completion script it generates.
#include "test_support.h"

#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <csignal>

namespace {

struct Run {
    int code = -1; ///< -1 when the process crashed or timed out
    QByteArray out;
    QString err;
};

Run moePlan(const QStringList& args, const QByteArray& input = {}, const QStringList& env = {}) {
    QProcess p;
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    e.insert("MOE_PLAN_PROGRESS", "never");
    for (const QString& kv : env)
        e.insert(kv.section('=', 0, 0), kv.section('=', 1));
    p.setProcessEnvironment(e);
    p.start(QStringLiteral(MOE_PLAN_EXE), args);
    if (!input.isNull()) {
        p.write(input);
        p.closeWriteChannel();
    }
    Run r;
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.out = p.readAllStandardOutput();
    r.err = QString::fromUtf8(p.readAllStandardError());
    if (p.exitStatus() == QProcess::NormalExit)
        r.code = p.exitCode();
    return r;
}

QString sample(const char* name) {
    return QString::fromStdString(moe::test::samplePath(name));
}

QByteArray fileBytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

const QStringList kGrid = {"--grid", "layout.ep=4,8,12",
                           "--grid", "training.micro_batch=1,2",
                           "--grid", "routing.zipf_alpha=0.4,0.8"};

/// The search's text without its timing line.
QByteArray withoutTimings(QByteArray text) {
    QList<QByteArray> lines = text.split('\n');
    lines.removeIf([](const QByteArray& l) { return l.trimmed().startsWith("Searched "); });
    return lines.join('\n');
}

} // namespace

class TestCliBatch : public QObject {
    Q_OBJECT

private slots:
    void version() {
        const Run r = moePlan({"--version"});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, QByteArray("moe-plan " MOE_VERSION "\n"));
    }

    void standardInputAndOutput() {
        const QByteArray yaml = fileBytes(sample("dgx-h100-8x8-moe16.yaml"));
        const Run from_file = moePlan({"evaluate", sample("dgx-h100-8x8-moe16.yaml")});
        const Run from_stdin = moePlan({"evaluate", "-"}, yaml);
        QCOMPARE(from_stdin.code, 0);
        QCOMPARE(from_stdin.out, from_file.out);
        const Run valid = moePlan({"validate", "-"}, yaml);
        QCOMPARE(valid.out, QByteArray("-: ok (64 GPUs in 8 nodes, moe-16x2-40b)\n"));
        // Problems name <stdin>.
        QByteArray broken = yaml;
        broken.replace("  ep: 8\n", "  ep: 12\n");
        const Run bad = moePlan({"validate", "-"}, broken);
        QCOMPARE(bad.code, 1);
        QVERIFY2(bad.err.contains("<stdin>:62:3: error: layout.ep = 12 does not divide"),
                 qPrintable(bad.err));
        // edit: standard input to standard output, one line changed.
        const Run edited = moePlan({"edit", "-", "--set", "layout.ep=16"}, yaml);
        QCOMPARE(edited.code, 0);
        QByteArray expected = yaml;
        expected.replace("  ep: 8\n", "  ep: 16\n");
        QCOMPARE(edited.out, expected);
        // The trace to standard output: JSON only, the summary left out.
        const Run trace = moePlan({"timeline", "--steps", "1", "--trace", "-"});
        QCOMPARE(trace.code, 0);
        QVERIFY(QJsonDocument::fromJson(trace.out).object().contains("traceEvents"));
        QVERIFY(trace.err.contains("Trace written to standard output"));
        // More than 16 MB on standard input is refused.
        const Run huge = moePlan({"evaluate", "-"}, QByteArray(17 * 1024 * 1024, '#'));
        QCOMPARE(huge.code, 1);
        QVERIFY2(huge.err.contains("standard input is larger than the supported maximum of 16 MB"),
                 qPrintable(huge.err));
    }

    void problemsAsJson() {
        const Run bad = moePlan({"evaluate", "--json", "--set", "layout.ep=12"});
        QCOMPARE(bad.code, 1);
        QVERIFY(bad.out.isEmpty());
        const QJsonObject doc = QJsonDocument::fromJson(bad.err.toUtf8()).object();
        QCOMPARE(doc["status"].toInt(), 1);
        QCOMPARE(doc["command"].toString(), QStringLiteral("evaluate"));
        const QJsonArray diagnostics = doc["diagnostics"].toArray();
        QCOMPARE(diagnostics.size(), 2);
        QCOMPARE(diagnostics[1].toObject()["field"].toString(), QStringLiteral("layout.ep"));
        QCOMPARE(diagnostics[1].toObject()["file"].toString(), QStringLiteral("--set"));
        QCOMPARE(diagnostics[1].toObject()["message"].toString(),
                 QStringLiteral("layout.ep = 12 does not divide model.experts = 16"));
        const Run usage = moePlan({"search", "--json", "--top", "0"});
        QCOMPARE(usage.code, 2);
        const QJsonObject u = QJsonDocument::fromJson(usage.err.toUtf8()).object();
        QCOMPARE(u["status"].toInt(), 2);
        QVERIFY2(u["message"].toString().contains("--top needs a whole number"),
                 qPrintable(usage.err));
        // Success: the document on standard output, nothing on standard error.
        const Run ok = moePlan({"validate", "--json", sample("dgx-h100-8x8-moe16.yaml")});
        QCOMPARE(ok.code, 0);
        QVERIFY(ok.err.isEmpty());
        QCOMPARE(QJsonDocument::fromJson(ok.out).object()["schema_version"].toInt(), 1);
    }

    void sweepRows() {
        const Run r = moePlan(QStringList{"sweep"} + kGrid);
        QCOMPARE(r.code, 0);
        const QList<QByteArray> lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 12);
        // Point 5 = ep 8 (index 1), micro-batch 1 (0), alpha 0.8 (1): 1*4 + 0*2 + 1.
        const QJsonObject row = QJsonDocument::fromJson(lines[5]).object();
        QCOMPARE(row["point"].toInt(), 5);
        QCOMPARE(row["points"].toInt(), 12);
        QCOMPARE(row["overrides"].toObject()["layout.ep"].toDouble(), 8.0);
        QCOMPARE(row["overrides"].toObject()["training.micro_batch"].toDouble(), 1.0);
        QCOMPARE(row["overrides"].toObject()["routing.zipf_alpha"].toDouble(), 0.8);
        QCOMPARE(row["layout"].toObject()["ep"].toInt(), 8);
        QCOMPARE(row["layout"].toObject()["micro_batch"].toInt(), 1);
        QVERIFY(row["ok"].toBool());
        // Its step time is evaluate's with the same overrides.
        const Run e = moePlan({"evaluate", "--json", "--set", "layout.ep=8", "--set",
                               "training.micro_batch=1", "--set", "routing.zipf_alpha=0.8"});
        QCOMPARE(row["step_time_s"].toDouble(),
                 QJsonDocument::fromJson(e.out).object()["step_time_s"].toDouble());
        // EP=12 does not divide 16 experts: invalid rows with the reason.
        const QJsonObject invalid = QJsonDocument::fromJson(lines[8]).object();
        QVERIFY(!invalid["ok"].toBool());
        QVERIFY(invalid["step_time_s"].isNull());
        QVERIFY(invalid["errors"].toArray()[0].toString().contains("does not divide"));
        QVERIFY2(r.err.contains("sweep: 12 points in ") && r.err.contains("4 invalid"),
                 qPrintable(r.err));
        // CSV: a header and one line per point, the overrides as columns.
        const Run csv = moePlan(QStringList{"sweep", "--format", "csv"} + kGrid);
        const QList<QByteArray> rows = csv.out.trimmed().split('\n');
        QCOMPARE(rows.size(), 13);
        QVERIFY(rows[0].startsWith("schema_version,tool,tool_version,command,study,point,points,"
                                   "overrides.layout.ep,overrides.training.micro_batch,"));
        QVERIFY(rows[6].contains(",5,12,8,1,0.8,"));
        // Bad grids are usage errors.
        QCOMPARE(moePlan({"sweep", "--grid", "layout.bogus=1,2"}).code, 2);
        QCOMPARE(moePlan({"sweep", "--grid", "layout.ep=4", "--grid", "layout.ep=8"}).code, 2);
        QCOMPARE(moePlan({"sweep"}).code, 2);
        QCOMPARE(moePlan({"sweep", "--grid", "layout.ep=4", "--shard", "3/3"}).code, 2);
    }

    void sweepShardsMergeIntoTheWholeSweep() {
        QTemporaryDir dir;
        const Run whole = moePlan(QStringList{"sweep"} + kGrid);
        QStringList parts;
        for (int i = 0; i < 3; ++i) {
            parts << dir.filePath(QString("part-%1.jsonl").arg(i));
            const Run r = moePlan(
                QStringList{"sweep", "--shard", QString("%1/3").arg(i), "-o", parts.last()} +
                kGrid);
            QCOMPARE(r.code, 0);
            QVERIFY(r.out.isEmpty());
            QVERIFY(r.err.contains("4 rows written to " + parts.last()));
        }
        // Any order of the parts.
        const Run merged = moePlan({"sweep", "--merge", parts[2], parts[0], parts[1]});
        QCOMPARE(merged.code, 0);
        QCOMPARE(merged.out, whole.out);
        const Run csv =
            moePlan({"sweep", "--format", "csv", "--merge", parts[0], parts[1], parts[2]});
        QCOMPARE(csv.out, moePlan(QStringList{"sweep", "--format", "csv"} + kGrid).out);
        // Missing, repeated and foreign parts are refused.
        const Run missing = moePlan({"sweep", "--merge", parts[0], parts[2]});
        QCOMPARE(missing.code, 1);
        QVERIFY2(missing.err.contains("4 of 12 points are missing (the first is point 1)"),
                 qPrintable(missing.err));
        const Run twice = moePlan({"sweep", "--merge", parts[0], parts[1], parts[2], parts[1]});
        QCOMPARE(twice.code, 1);
        QVERIFY(twice.err.contains("is in two parts"));
        const QString other = dir.filePath("other.jsonl");
        QCOMPARE(moePlan({"sweep", "--grid", "layout.ep=4,8", "-o", other}).code, 0);
        const Run foreign = moePlan({"sweep", "--merge", parts[0], other});
        QCOMPARE(foreign.code, 1);
        QVERIFY(foreign.err.contains("rows of another study"));
        const Run out_file = moePlan(
            {"sweep", "--merge", parts[0], parts[1], parts[2], "-o", dir.filePath("all.jsonl")});
        QCOMPARE(out_file.code, 0);
        QCOMPARE(fileBytes(dir.filePath("all.jsonl")), whole.out);
    }

    void searchShardsMergeIntoTheWholeSearch() {
        QTemporaryDir dir;
        const QStringList options = {"--set", "cluster.gpu_overrides.hbm_gb=18", "--top", "20"};
        const Run whole = moePlan(QStringList{"search"} + options);
        QCOMPARE(whole.code, 0);
        QStringList parts;
        for (int i = 0; i < 4; ++i) {
            parts << dir.filePath(QString("part-%1.json").arg(i));
            QCOMPARE(moePlan(QStringList{"search", "--shard", QString("%1/4").arg(i), "-o",
                                         parts.last()} +
                             options)
                         .code,
                     0);
        }
        const Run merged =
            moePlan(QStringList{"search"} + options + QStringList{"--merge"} + parts);
        QCOMPARE(merged.code, 0);
        QCOMPARE(withoutTimings(merged.out), withoutTimings(whole.out));
        // Parts of another search (other --set) are refused.
        const Run foreign = moePlan(QStringList{"search", "--merge"} + parts);
        QCOMPARE(foreign.code, 1);
        QVERIFY2(foreign.err.contains("from another search"), qPrintable(foreign.err));
        // The pruning bound follows --top: parts pruned for the top 20 cannot rank 30.
        const Run wider = moePlan(QStringList{"search", "--set", "cluster.gpu_overrides.hbm_gb=18",
                                              "--top", "30", "--merge"} +
                                  parts);
        QCOMPARE(wider.code, 1);
        QVERIFY2(wider.err.contains("--top"), qPrintable(wider.err));
        QCOMPARE(moePlan({"search", "--shard", "1/4", "--write-best", "x.yaml"}).code, 2);
    }

    void progressOnRequest() {
        const Run r = moePlan(QStringList{"sweep"} + kGrid, {}, {"MOE_PLAN_PROGRESS=always"});
        QCOMPARE(r.code, 0);
        // Redrawn in place ("\r", erase to the end of the line), the last one at 100%.
        QVERIFY2(r.err.startsWith("\r\033[Ksweep: 1 of 12 points (8%)") &&
                     r.err.contains("\r\033[Ksweep: 12 of 12 points (100%)"),
                 qPrintable(r.err));
        QCOMPARE(r.out, moePlan(QStringList{"sweep"} + kGrid).out);
    }

    /// Ctrl+C stops a long sweep: exit 130, the output file is not created.
    void interruptLeavesNoPartialFile() {
        QTemporaryDir dir;
        const QString out = dir.filePath("big.jsonl");
        QProcess p;
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert("MOE_PLAN_PROGRESS", "never");
        p.setProcessEnvironment(e);
        // 2 million points of the 2048-GPU sample: hours of work.
        p.start(QStringLiteral(MOE_PLAN_EXE), {"sweep", sample("deepseek-v3-2048xh800.yaml"),
                                               "--grid", "routing.seed=1..2000000", "-o", out});
        QVERIFY(p.waitForStarted());
        QTest::qWait(700);
        QCOMPARE(p.state(), QProcess::Running);
        ::kill(static_cast<pid_t>(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(20000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 130);
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(err.contains("moe-plan sweep: interrupted after ") &&
                     err.contains(out + " not written"),
                 qPrintable(err));
        QVERIFY(!QFile::exists(out));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 0);
    }

    /// `help CMD` and `CMD --help` print the same text for every command.
    void everyCommandsHelp() {
        const Run all = moePlan({"--help"});
        QStringList commands;
        for (const QByteArray& line : all.out.split('\n')) {
            if (!line.startsWith("  ") || line.startsWith("   ") || line.startsWith("  -"))
                continue;
            // The command's words: lower case, before its arguments and options.
            QStringList words;
            for (const QByteArray& w : line.trimmed().split(' ')) {
                if (!QRegularExpression("^[a-z][a-z0-9-]*$").match(QString::fromUtf8(w)).hasMatch())
                    break;
                words << QString::fromUtf8(w);
            }
            if (!words.isEmpty())
                commands << words.join(' ');
        }
        QVERIFY2(commands.contains("sweep") && commands.contains("import megatron") &&
                     commands.contains("export drawio"),
                 qPrintable(commands.join(", ")));
        for (const QString& c : commands) {
            const Run a = moePlan(c.split(' ') + QStringList{"--help"});
            const Run b = moePlan(QStringList{"help"} + c.split(' '));
            QCOMPARE(a.code, 0);
            QCOMPARE(b.out, a.out);
            QVERIFY2(a.out.startsWith("Usage: moe-plan " + c.toUtf8()), qPrintable(c));
        }
        const Run manual = moePlan({"--help-all"});
        for (const QString& c : commands)
            QVERIFY2(manual.out.contains("Usage: moe-plan " + c.toUtf8() + " "), qPrintable(c));
    }

    void bashCompletion() {
        if (QStandardPaths::findExecutable("bash").isEmpty())
            QSKIP("no bash");
        QTemporaryDir dir;
        const Run script = moePlan({"--completion", "bash"});
        QCOMPARE(script.code, 0);
        QFile f(dir.filePath("moe-plan.bash"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(script.out);
        f.close();
        auto complete = [&](const QString& line) {
            QProcess bash;
            bash.setWorkingDirectory(dir.path());
            const QString words = line.endsWith(' ') ? line + "''" : line;
            bash.start("bash", {"-c", "source moe-plan.bash; COMP_WORDS=(" + words +
                                          "); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _moe_plan; "
                                          "printf '%s\\n' \"${COMPREPLY[@]}\""});
            bash.waitForFinished();
            return QString::fromUtf8(bash.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
        };
        QCOMPARE(complete("moe-plan sw"), QStringList{"sweep"});
        QVERIFY(complete("moe-plan sweep --f").contains("--format"));
        QCOMPARE(
            complete("moe-plan import "),
            (QStringList{"megatron", "nvidia-smi-topo", "nccl-topo", "calculon", "megatron-tpe"}));
        QVERIFY(complete("moe-plan evaluate --set ").isEmpty());
        QVERIFY(complete("moe-plan validate m").contains("moe-plan.bash"));
        if (!QStandardPaths::findExecutable("zsh").isEmpty()) {
            const Run zsh = moePlan({"--completion", "zsh"});
            QFile z(dir.filePath("_moe-plan"));
            QVERIFY(z.open(QIODevice::WriteOnly));
            z.write(zsh.out);
            z.close();
            QProcess check;
            check.start("zsh", {"-n", z.fileName()});
            check.waitForFinished();
            QCOMPARE(check.exitCode(), 0);
        }
    }
};

QTEST_GUILESS_MAIN(TestCliBatch)
#include "test_cli_batch.moc"
