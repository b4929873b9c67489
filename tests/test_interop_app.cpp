// The desktop app's side of the bridges: File > Import… (onto the open scenario, one undo step,
// shell variables asked for), File > Export… in every format, and topology.drawio beside the
// exported views (in process and through `moe-planner --export`).
#include "test_support.h"

#include "moe/scenario_io.h"
#include "moe_widgets/window/main_window.h"

// After main_window.h: Qt's "slots" macro must not meet core's ExpertLoadCache::Key::slots.
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/window/interop_dialogs.h"

#include <QtTest>

#include <QAction>
#include <QProcess>
#include <QTemporaryDir>
#include <QUndoStack>

using namespace moe;
using namespace moe::widgets;

namespace {

QString data(const char* path) {
    return QStringLiteral(MOE_TEST_DATA_DIR "/") + QString::fromUtf8(path);
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestInteropApp : public QObject {
    Q_OBJECT

private slots:
    void filtersNameEveryFormat() {
        QCOMPARE(importFilters().size(), 4);
        QCOMPARE(exportFilters().size(), 5);
        for (const QString& f : importFilters())
            QVERIFY(importFormatOf(f).has_value());
        for (const QString& f : exportFilters())
            QVERIFY(exportFormatOf(f).has_value());
        QCOMPARE(exportFormatOf(exportFilters()[2]), std::optional(io::ExportFormat::drawio));
    }

    void importIsOneUndoStep() {
        ScenarioDocument doc;
        doc.reset(defaultScenario());
        const InteropReport r = importIntoDocument(
            doc, io::ImportFormat::megatron, data("megatron/train_mixtral_8x7b_distributed.sh"));
        QVERIFY2(r.ok, qPrintable(r.errors));
        QVERIFY(r.summary.contains("--moe-router-load-balancing-type aux_loss"));
        // Megatron's arguments on the open scenario's cluster (8 x DGX H100).
        QCOMPARE(doc.scenario().model.experts, 8);
        QCOMPARE(doc.scenario().layout.pp, 4);
        QCOMPARE(doc.scenario().cluster.gpuCount(), 64);
        QCOMPARE(doc.undoStack()->count(), 1);
        QCOMPARE(doc.undoStack()->text(0),
                 QStringLiteral("Import train_mixtral_8x7b_distributed.sh"));
        doc.undoStack()->undo();
        QVERIFY(doc.scenario() == defaultScenario());
    }

    void unsetShellVariablesAreReported() {
        ScenarioDocument doc;
        doc.reset(defaultScenario());
        InteropReport r =
            importIntoDocument(doc, io::ImportFormat::megatron, data("megatron/DeepSeek-V3.yaml"));
        QVERIFY(!r.ok);
        QCOMPARE(r.unresolved, (QStringList{"CP", "EP", "GBS", "MBS", "PP", "SEQ_LEN", "TP"}));
        QVERIFY(doc.scenario() == defaultScenario());
        r = importIntoDocument(doc, io::ImportFormat::megatron, data("megatron/DeepSeek-V3.yaml"),
                               {{"TP", "1"},
                                {"PP", "8"},
                                {"EP", "8"},
                                {"CP", "1"},
                                {"MBS", "1"},
                                {"GBS", "64"},
                                {"SEQ_LEN", "4096"}});
        QVERIFY2(r.ok, qPrintable(r.errors));
        QCOMPARE(doc.scenario().model.dense_layers, 3);
        QCOMPARE(doc.scenario().layout.pp, 8);
    }

    void topologyImportsAndBadDumps() {
        ScenarioDocument doc;
        doc.reset(*loadScenarioFile(test::samplePath("dense-70b-64xh100.yaml")).scenario);
        const Scenario before = doc.scenario();
        InteropReport r = importIntoDocument(doc, io::ImportFormat::nvidia_smi_topo,
                                             data("topology/dgx-a100.topo.txt"));
        QVERIFY2(r.ok, qPrintable(r.errors));
        QCOMPARE(doc.scenario().cluster.gpu.scale_up_gbps, 300.0); // NV12
        QCOMPARE(doc.undoStack()->count(), 1);
        // A dump that is not NCCL's: an error with its line, nothing changes.
        QTemporaryDir dir;
        const QString bad = dir.filePath("x.xml");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("<?xml version=\"1.0\"?>\n<topology/>\n");
        f.close();
        const Scenario imported = doc.scenario();
        r = importIntoDocument(doc, io::ImportFormat::nccl_topo, bad);
        QVERIFY(!r.ok);
        QVERIFY2(r.errors.contains("x.xml:2: error: not an NCCL topology dump"),
                 qPrintable(r.errors));
        QVERIFY(doc.scenario() == imported);
        QCOMPARE(doc.undoStack()->count(), 1);
        doc.undoStack()->undo();
        QVERIFY(doc.scenario() == before);
    }

    void exportsEveryFormat() {
        QTemporaryDir dir;
        const Scenario s = defaultScenario();
        struct Case {
            io::ExportFormat format;
            const char* path;
            const char* check; ///< a file to find, and text it holds
            const char* text;
        };
        const Case cases[] = {
            {io::ExportFormat::megatron, "a.sh", "a.sh", "--num-experts 16"},
            {io::ExportFormat::nemo, "r.py", "r.py", "nl.MegatronStrategy"},
            {io::ExportFormat::drawio, "t.drawio", "t.drawio", "<mxfile"},
            {io::ExportFormat::calculon, "calc", "calc/execution.json", "\"num_procs\": 64"},
            {io::ExportFormat::astra_sim, "astra", "astra/network.yml", "npus_count: [ 8, 8 ]"},
        };
        for (const Case& c : cases) {
            const InteropReport r = exportScenarioTo(s, c.format, dir.filePath(c.path));
            QVERIFY2(r.ok, qPrintable(r.errors));
            QVERIFY2(readAll(dir.filePath(c.check)).contains(c.text), c.path);
        }
    }

    void menuAndExportedViews() {
        MainWindow window(MainWindow::Options{false, false, {}});
        QStringList texts;
        for (QAction* a : window.findChildren<QAction*>())
            texts << a->text();
        QVERIFY(texts.contains(QStringLiteral("&Import…")));
        QVERIFY(texts.contains(QStringLiteral("Export for other &tools…")));
        QTemporaryDir dir;
        const QStringList problems = window.exportViews(dir.path(), {"svg"});
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
        const QByteArray drawio = readAll(dir.filePath("topology.drawio"));
        QVERIFY(drawio.contains("<mxfile host=\"moe-planner\""));
        QVERIFY(drawio.contains("id=\"gpu-63\""));
    }

    void headlessExportWritesTheDiagram() {
        QTemporaryDir dir;
        QProcess p;
        p.start(MOE_PLANNER_EXE,
                {"--export", dir.path(), "--format", "svg",
                 QString::fromStdString(test::samplePath("mixtral-8x7b-32xh100.yaml"))});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(readAll(dir.filePath("topology.drawio")).contains("mixtral-8x7b-32xh100"));
        const QString said = QString::fromUtf8(p.readAllStandardOutput());
        const int svgs = static_cast<int>(QDir(dir.path()).entryList({"*.svg"}).size());
        QVERIFY2(said.contains(QStringLiteral("wrote %1 files").arg(svgs + 1)), qPrintable(said));
    }
};

QTEST_MAIN(TestInteropApp)
#include "test_interop_app.moc"
