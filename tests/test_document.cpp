// The open scenario (ScenarioDocument): every edit is validated before it applies, is one undo
// step (a scrub merges into one), and notifies the views; opening a broken file keeps the
// document; saving is atomic.
#include "moe/scenario_io.h"
#include "moe_widgets/document/scenario_document.h"
#include "test_support.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include <sys/stat.h>

using namespace moe;
using namespace moe::widgets;

namespace {

std::string messages(const Diagnostics& diagnostics) {
    return formatAll(diagnostics);
}

ino_t inodeOf(const QString& path) {
    struct stat st {};
    return ::stat(path.toLocal8Bit().constData(), &st) == 0 ? st.st_ino : 0;
}

void writeText(const QString& path, const std::string& text) {
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(text.data(), static_cast<qint64>(text.size()));
}

} // namespace

class TestDocument : public QObject {
    Q_OBJECT
private slots:
    void startsWithTheDefault() {
        ScenarioDocument doc;
        QVERIFY(doc.scenario() == defaultScenario());
        QVERIFY(!doc.isModified());
        QCOMPARE(doc.undoStack()->count(), 0);
        QCOMPARE(doc.filePath(), QString());
        QCOMPARE(doc.displayName(), QString("dgx-h100-8x8-moe16"));
    }

    void editIsOneUndoStep() {
        ScenarioDocument doc;
        QSignalSpy changed(&doc, &ScenarioDocument::scenarioChanged);
        QSignalSpy modified(&doc, &ScenarioDocument::modifiedChanged);

        const Diagnostics d = doc.setField("layout.ep", "16");
        QVERIFY2(!hasErrors(d), messages(d).c_str());
        QCOMPARE(doc.scenario().layout.ep, 16);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(modified.count(), 1);
        QCOMPARE(modified.at(0).at(0).toBool(), true);
        QVERIFY(doc.isModified());
        QCOMPARE(doc.undoStack()->count(), 1);
        QCOMPARE(doc.undoStack()->undoText(), QString("Set layout.ep = 16"));

        doc.undoStack()->undo();
        QCOMPARE(doc.scenario().layout.ep, 8);
        QVERIFY(doc.scenario() == defaultScenario());
        QCOMPARE(changed.count(), 2);
        QVERIFY(!doc.isModified());
        QCOMPARE(modified.last().at(0).toBool(), false);

        doc.undoStack()->redo();
        QCOMPARE(doc.scenario().layout.ep, 16);
        QCOMPARE(changed.count(), 3);
        QVERIFY(doc.isModified());

        // Setting the value it already has is not an edit.
        doc.setField("layout.ep", "16");
        QCOMPARE(doc.undoStack()->count(), 1);
        QCOMPARE(changed.count(), 3);
    }

    void lambdaEdit() {
        ScenarioDocument doc;
        QSignalSpy changed(&doc, &ScenarioDocument::scenarioChanged);
        const Diagnostics ok =
            doc.edit("Faster NICs", [](Scenario& s) { s.cluster.nic.bandwidth_gbps = 96; });
        QVERIFY(!hasErrors(ok));
        QCOMPARE(doc.scenario().cluster.nic.bandwidth_gbps, 96.0);
        QCOMPARE(doc.undoStack()->undoText(), QString("Faster NICs"));
        QCOMPARE(changed.count(), 1);

        const Diagnostics bad = doc.edit("EP 3", [](Scenario& s) { s.layout.ep = 3; });
        QVERIFY(hasErrors(bad));
        QCOMPARE(doc.scenario().layout.ep, 8);
        QCOMPARE(doc.undoStack()->count(), 1);
        QCOMPARE(changed.count(), 1);
    }

    void scrubMergesIntoOneStep() {
        ScenarioDocument doc;
        QSignalSpy changed(&doc, &ScenarioDocument::scenarioChanged);
        for (const char* alpha : {"0.7", "0.8", "0.9", "1.1"})
            QVERIFY(!hasErrors(doc.setField("routing.zipf_alpha", alpha, "scrub-1")));
        QCOMPARE(changed.count(), 4);          // every step redraws ...
        QCOMPARE(doc.undoStack()->count(), 1); // ... but undoes as one
        QCOMPARE(doc.scenario().routing.zipf_alpha, 1.1);
        QCOMPARE(doc.undoStack()->undoText(), QString("Set routing.zipf_alpha = 1.1"));
        doc.undoStack()->undo();
        QCOMPARE(doc.scenario().routing.zipf_alpha, defaultScenario().routing.zipf_alpha);
        doc.undoStack()->redo();
        QCOMPARE(doc.scenario().routing.zipf_alpha, 1.1);

        // Another key (another scrub or another field) starts a new step.
        doc.setField("routing.zipf_alpha", "1.2", "scrub-2");
        doc.setField("routing.balance", "0.4", "scrub-2b");
        QCOMPARE(doc.undoStack()->count(), 3);
        doc.undoStack()->undo();
        QCOMPARE(doc.scenario().routing.balance, defaultScenario().routing.balance);
        QCOMPARE(doc.scenario().routing.zipf_alpha, 1.2);

        // An unmerged edit (no key) never merges.
        doc.setField("layout.ep", "4");
        doc.setField("layout.ep", "2");
        QCOMPARE(doc.undoStack()->count(), 4);
    }

    void scrubBackToTheStartLeavesNoStep() {
        ScenarioDocument doc;
        const QString start = QString::number(defaultScenario().routing.balance);
        doc.setField("routing.balance", "0.25", "scrub");
        QCOMPARE(doc.undoStack()->count(), 1);
        doc.setField("routing.balance", start, "scrub");
        QCOMPARE(doc.undoStack()->count(), 0);
        QVERIFY(doc.scenario() == defaultScenario());
        QVERIFY(!doc.isModified());
    }

    void invalidEditIsRefused() {
        ScenarioDocument doc;
        QSignalSpy changed(&doc, &ScenarioDocument::scenarioChanged);
        QSignalSpy modified(&doc, &ScenarioDocument::modifiedChanged);
        const Diagnostics d = doc.setField("layout.ep", "12", "scrub");
        QVERIFY(hasErrors(d));
        bool reason = false;
        for (const Diagnostic& diagnostic : d)
            reason = reason || diagnostic.message.find("does not divide model.experts = 16") !=
                                   std::string::npos;
        QVERIFY2(reason, messages(d).c_str());
        QVERIFY(doc.scenario() == defaultScenario());
        QCOMPARE(changed.count(), 0);
        QCOMPARE(modified.count(), 0);
        QCOMPARE(doc.undoStack()->count(), 0);
        QVERIFY(hasErrors(doc.setField("layout.tp", "two")));
        QVERIFY(hasErrors(doc.setField("layout.nonsense", "1")));
        QCOMPARE(changed.count(), 0);
    }

    void openBrokenKeepsTheDocument() {
        QTemporaryDir dir;
        ScenarioDocument doc;
        doc.setField("layout.ep", "16");
        QSignalSpy changed(&doc, &ScenarioDocument::scenarioChanged);
        QSignalSpy path_changed(&doc, &ScenarioDocument::filePathChanged);

        std::string text = defaultScenarioYaml();
        text.replace(text.find("\nlayout:"), 8, "\nlayuot:");
        const QString broken = dir.filePath("broken.yaml");
        writeText(broken, text);
        const Diagnostics d = doc.open(broken);
        QVERIFY(hasErrors(d));
        QVERIFY2(formatAll(d).find("did you mean 'layout'") != std::string::npos,
                 messages(d).c_str());
        QVERIFY2(formatAll(d).find("broken.yaml:") != std::string::npos, messages(d).c_str());
        QCOMPARE(doc.scenario().layout.ep, 16);
        QVERIFY(doc.isModified());
        QCOMPARE(doc.undoStack()->count(), 1);
        QCOMPARE(doc.filePath(), QString());
        QCOMPARE(changed.count(), 0);
        QCOMPARE(path_changed.count(), 0);

        // Not YAML at all, and a file that does not exist.
        writeText(broken, "cluster: [unclosed\n");
        QVERIFY(hasErrors(doc.open(broken)));
        QVERIFY(hasErrors(doc.open(dir.filePath("missing.yaml"))));
        QCOMPARE(doc.scenario().layout.ep, 16);
        QCOMPARE(changed.count(), 0);
    }

    void openSampleReplacesAndClearsHistory() {
        ScenarioDocument doc;
        doc.setField("layout.ep", "16");
        QSignalSpy changed(&doc, &ScenarioDocument::scenarioChanged);
        QSignalSpy path_changed(&doc, &ScenarioDocument::filePathChanged);
        const QString path = QString::fromStdString(test::samplePath("deepseek-v3-2048xh800.yaml"));
        const Diagnostics d = doc.open(path);
        QVERIFY2(!hasErrors(d), messages(d).c_str());
        QCOMPARE(doc.scenario().cluster.gpuCount(), 2048);
        QCOMPARE(doc.filePath(), QFileInfo(path).absoluteFilePath());
        QCOMPARE(doc.displayName(), QString("deepseek-v3-2048xh800.yaml"));
        QCOMPARE(doc.undoStack()->count(), 0);
        QVERIFY(!doc.isModified());
        QCOMPARE(changed.count(), 1);
        QCOMPARE(path_changed.count(), 1);
    }

    void saveIsAtomic() {
        QTemporaryDir dir;
        ScenarioDocument doc;
        QVERIFY(!doc.save().isEmpty()); // no file yet: refused with a reason
        doc.setField("layout.ep", "16");
        QSignalSpy modified(&doc, &ScenarioDocument::modifiedChanged);

        const QString path = dir.filePath("mine.yaml");
        QCOMPARE(doc.saveAs(path), QString());
        QCOMPARE(doc.filePath(), path);
        QVERIFY(!doc.isModified());
        QCOMPARE(modified.count(), 1);
        const LoadResult reloaded = loadScenarioFile(path.toStdString());
        QVERIFY(reloaded.ok());
        QVERIFY(*reloaded.scenario == doc.scenario());

        // Saving replaces the file by rename: a second name (hard link) for the old file keeps
        // the old content, which an in-place rewrite would have changed half-way.
        const QString old_link = dir.filePath("old-link.yaml");
        QVERIFY(::link(path.toLocal8Bit().constData(), old_link.toLocal8Bit().constData()) == 0);
        const ino_t before = inodeOf(path);
        doc.setField("layout.ep", "4");
        QVERIFY(doc.isModified());
        QCOMPARE(doc.save(), QString());
        QVERIFY(!doc.isModified());
        QVERIFY(inodeOf(path) != before);
        QCOMPARE(loadScenarioFile(path.toStdString()).scenario->layout.ep, 4);
        QCOMPARE(loadScenarioFile(old_link.toStdString()).scenario->layout.ep, 16);
        // No temporary files left beside it.
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 2);

        // A failed save reports why and keeps the document modified and its file.
        doc.setField("layout.ep", "2");
        QVERIFY(!doc.saveAs(dir.filePath("no/such/dir/x.yaml")).isEmpty());
        QVERIFY(doc.isModified());
        QCOMPARE(doc.filePath(), path);
        QCOMPARE(loadScenarioFile(path.toStdString()).scenario->layout.ep, 4);
    }

    void resetReplaces() {
        ScenarioDocument doc;
        doc.setField("layout.ep", "16");
        QSignalSpy changed(&doc, &ScenarioDocument::scenarioChanged);
        Scenario other = defaultScenario();
        other.name = "other";
        doc.reset(other);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(doc.scenario().name, std::string("other"));
        QCOMPARE(doc.undoStack()->count(), 0);
        QVERIFY(!doc.isModified());
    }
};

QTEST_GUILESS_MAIN(TestDocument)
#include "test_document.moc"
