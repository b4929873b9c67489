// moe-plan import / export end to end: the built executable run with QProcess on the real test
// inputs; exit codes (0 ok, 1 bad input, 2 usage), what is written, and that a bad input leaves
// an existing output file as it was.
#include "test_support.h"

#include "moe/scenario_io.h"

#include <QtTest>

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

namespace {

struct Run {
    int code = -1;
    QString out;
    QString err;
};

Run moePlan(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(MOE_PLAN_EXE), args);
    Run r;
    if (!p.waitForFinished(30000)) {
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

QString data(const char* path) {
    return QStringLiteral(MOE_TEST_DATA_DIR "/") + QString::fromUtf8(path);
}

QString sample(const char* name) {
    return QString::fromStdString(moe::test::samplePath(name));
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeAll(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

} // namespace

class TestInteropCli : public QObject {
    Q_OBJECT

private slots:
    void helpListsBothCommands() {
        const Run r = moePlan({"--help"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("import megatron ARGS_FILE"));
        QVERIFY(r.out.contains("export megatron OUT.sh"));
        QVERIFY(r.out.contains("import nccl-topo FILE.xml"));
        const Run help = moePlan({"help", "import"});
        QCOMPARE(help.code, 0);
        QVERIFY(help.out.contains("--var NAME=VALUE"));
        const Run bad = moePlan({"import", "slurm", "x"});
        QCOMPARE(bad.code, 2);
        QVERIFY(bad.err.contains("unknown format 'slurm'"));
    }

    void importMegatronWritesTheScenario() {
        QTemporaryDir dir;
        const QString out = dir.filePath("mixtral.yaml");
        const Run r =
            moePlan({"import", "megatron", data("megatron/train_mixtral_8x7b_distributed.sh"),
                     "--gpu", "h100-sxm", "--nodes", "4", "-o", out});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.contains(
            "line 53: --moe-router-load-balancing-type aux_loss -> routing.balancing"));
        QVERIFY(r.out.contains("Scenario written to " + out));
        const moe::LoadResult loaded = moe::loadScenarioFile(out.toStdString());
        QVERIFY2(loaded.ok(), moe::formatAll(loaded.diagnostics).c_str());
        QCOMPARE(loaded.scenario->model.experts, 8);
        QCOMPARE(loaded.scenario->layout.pp, 4);
        // It evaluates.
        const Run eval = moePlan({"evaluate", out});
        QCOMPARE(eval.code, 0);
    }

    void badInputChangesNothing() {
        QTemporaryDir dir;
        const QString out = dir.filePath("keep.yaml");
        const QByteArray before = "# my file\n";
        QVERIFY(writeAll(out, before));
        // The ModelZoo file needs --var for TP, PP, ...: an error, and keep.yaml as it was.
        Run r = moePlan({"import", "megatron", data("megatron/DeepSeek-V3.yaml"), "--gpu",
                         "h100-sxm", "--nodes", "128", "-o", out});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains("DeepSeek-V3.yaml:23: error: --tensor-model-parallel-size: uses "
                               "the shell variable TP, not set in the file; pass --var TP=VALUE"));
        QCOMPARE(readAll(out), before);
        // A truncated matrix, the same.
        const QString cut = dir.filePath("cut.txt");
        QVERIFY(writeAll(cut, readAll(data("topology/dgx-h100.topo.txt")).left(600)));
        r = moePlan({"import", "nvidia-smi-topo", cut, "-o", out});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("the matrix is truncated"), qPrintable(r.err));
        QCOMPARE(readAll(out), before);
        // XML that is not NCCL's.
        const QString svg = dir.filePath("x.svg");
        QVERIFY(writeAll(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n"));
        r = moePlan({"import", "nccl-topo", svg, "-o", out});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains("x.svg:1: error: not an NCCL topology dump"));
        QCOMPARE(readAll(out), before);
    }

    void exportThenImportMegatron() {
        QTemporaryDir dir;
        const QString args = dir.filePath("ds.sh");
        Run r = moePlan({"export", "megatron", args, sample("deepseek-v3-2048xh800.yaml")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(readAll(args).contains("--moe-layer-freq \"([0]*3+[1]*58)\""));
        const QString back = dir.filePath("back.yaml");
        r = moePlan({"import", "megatron", args, "--cluster", sample("deepseek-v3-2048xh800.yaml"),
                     "-o", back});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const moe::LoadResult a =
            moe::loadScenarioFile(moe::test::samplePath("deepseek-v3-2048xh800.yaml"));
        const moe::LoadResult b = moe::loadScenarioFile(back.toStdString());
        QVERIFY(a.ok() && b.ok());
        QVERIFY(a.scenario->model == b.scenario->model);
        QVERIFY(a.scenario->layout == b.scenario->layout);
        QVERIFY(a.scenario->training == b.scenario->training);
        // NeMo snippet to stdout.
        r = moePlan({"export", "megatron", "-", "--format", "nemo"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("nl.MegatronStrategy"));
    }

    void importTopologies() {
        QTemporaryDir dir;
        const QString out = dir.filePath("gb200.yaml");
        const Run r = moePlan({"import", "nccl-topo", data("topology/gb200-tray.nccl.xml"),
                               "--cluster", sample("gb200-nvl72-deepseek-v3.yaml"), "-o", out});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.contains("NVSwitches outside the node"));
        const moe::LoadResult loaded = moe::loadScenarioFile(out.toStdString());
        QVERIFY(loaded.ok());
        // The sample's 16 active trays per rack stay; the dump's 400G NICs replace its 800G.
        QCOMPARE(loaded.scenario->cluster.gpusPerScaleUpDomain(), 64);
        QCOMPARE(loaded.scenario->cluster.nic.preset, std::string("cx7-400g"));
        // YAML to stdout without -o, the summary to stderr.
        const Run smi = moePlan(
            {"import", "nvidia-smi-topo", data("topology/dgx-a100.topo.txt"), "--nic", "cx7-400g"});
        QCOMPARE(smi.code, 0);
        QVERIFY(smi.out.startsWith("# MoE Planner scenario."));
        QVERIFY(smi.err.contains("12 links per GPU"));
    }

    void peersThroughTheCli() {
        QTemporaryDir dir;
        const QString calc = dir.filePath("calc");
        Run r = moePlan({"export", "calculon", calc, sample("dense-70b-64xh100.yaml")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.contains("What Calculon cannot express:"));
        for (const char* f : {"model.json", "execution.json", "system.json"})
            QVERIFY(QFile::exists(calc + "/" + f));
        const QString back = dir.filePath("back.yaml");
        r = moePlan({"import", "calculon", calc, "--cluster", sample("dense-70b-64xh100.yaml"),
                     "-o", back});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(moe::loadScenarioFile(back.toStdString()).ok());
        // The three files named one by one, Calculon's own example.
        r = moePlan({"import", "calculon", data("calculon/megatron-1T.json"),
                     data("calculon/3072_t4_p64_d12_mbs4_full.json"),
                     data("calculon/a100_80g.json"), "-o", dir.filePath("1t.yaml")});
        QVERIFY2(r.code == 0, qPrintable(r.err));

        const QString astra = dir.filePath("astra");
        r = moePlan({"export", "astra-sim", astra});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(readAll(astra + "/network.yml").contains("npus_count: [ 8, 8 ]"));
        QVERIFY(r.out.contains("--network-configuration=network.yml"));
        QVERIFY(r.out.contains(") to " + astra + "\n"));

        const QString drawio = dir.filePath("t.drawio");
        r = moePlan({"export", "drawio", drawio, sample("mixtral-8x7b-32xh100.yaml")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(readAll(drawio).startsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<mxfile"));
    }

    void megatronTokensPerExpertToRoutingCsv() {
        // The 8 rank logs of tests/data/megatron_tpe summed (test_megatron_tpe derives the
        // rows by hand), written atomically, then used as the scenario's routing histogram.
        QTemporaryDir dir;
        const QString cluster = data("megatron_tpe/pp2-dp4-ep2.yaml");
        const QString csv = dir.filePath("routing.csv");
        Run r = moePlan(
            {"import", "megatron-tpe", data("megatron_tpe"), "--cluster", cluster, "-o", csv});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QCOMPARE(readAll(csv), QByteArray("expert_0,expert_1,expert_2,expert_3\n"
                                          "26200,16368,13100,9868\n"
                                          "6544,13088,19656,26248\n"
                                          "16368,16376,16380,16412\n"
                                          "36028,9820,9816,9872\n"));
        QVERIFY2(r.out.contains("Summed 32 lines: iterations 10, 20, 64 micro-batch entries"),
                 qPrintable(r.out));
        QVERIFY(r.out.contains("Routing CSV written to " + csv));
        const Run eval = moePlan({"evaluate", cluster, "--set", "routing.model=histogram", "--set",
                                  "routing.histogram_csv=" + csv});
        QVERIFY2(eval.code == 0, qPrintable(eval.err));

        // To stdout with --iter; the summary goes to stderr.
        r = moePlan({"import", "megatron-tpe", data("megatron_tpe/tokens_per_expert/rank0.jsonl"),
                     data("megatron_tpe/tokens_per_expert/rank1.jsonl"), "--cluster", cluster,
                     "--set", "layout.pp=1", "--set", "layout.dp=8", "--set", "layout.ep=2",
                     "--set", "model.dense_layers=5", "--iter", "10"});
        // PP1: ranks 0 and 1 are EP ranks 0 and 1 of replica 0 of 4; their local layer 2 is
        // layer 2, dense under --set model.dense_layers=5: the --set reached the layout.
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("rank0.jsonl:1:34: error: layer 2 of pipeline stage 0 is layer 2, "
                                "dense in the scenario (model.dense_layers = 5)"),
                 qPrintable(r.err));

        // Usage errors and bad input leave an existing file as it was.
        const QByteArray before = "keep\n";
        QVERIFY(writeAll(csv, before));
        r = moePlan({"import", "megatron-tpe", data("megatron_tpe"), "-o", csv});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("pass --cluster SCENARIO.yaml"));
        r = moePlan({"import", "megatron", data("megatron/DeepSeek-V3.yaml"), "--iter", "3"});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("unknown option '--iter'"));
        r = moePlan(
            {"import", "megatron-tpe", data("megatron_tpe"), "--cluster", cluster, "--iter", "x"});
        QCOMPARE(r.code, 2);
        r = moePlan({"import", "megatron-tpe", data("megatron_tpe"), "--cluster", cluster, "--set",
                     "layout.order=tp-cp-ep-pp-dp", "-o", csv});
        QCOMPARE(r.code, 1);
        QCOMPARE(readAll(csv), before);
    }
};

QTEST_GUILESS_MAIN(TestInteropCli)
#include "test_interop_cli.moc"
