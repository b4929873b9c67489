// The desktop app's window, offscreen: every dock is there, an edit re-evaluates and reaches the
// views, the editor refuses invalid values inline and merges a scrub into one undo step, a broken
// file keeps the document and lists its problems, a change on disk reloads (asking first when
// there are unsaved edits), clicking a warning highlights its GPUs, every
// view exports to valid SVG/PNG/PDF (in process and through `moe-planner --export`), and every
// item model passes QAbstractItemModelTester.
#include "moe/scenario_io.h"
#include "moe_widgets/common/report_view.h"
#include "moe_widgets/document/autosave.h"
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/document/view_state.h"
#include "moe_widgets/editor/scenario_editor.h"
#include "moe_widgets/report/warnings_view.h"
#include "moe_widgets/window/main_window.h"
#include "test_support.h"

#include <QAbstractButton>
#include <QAbstractItemModelTester>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QImage>
#include <QMessageBox>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeView>
#include <QUndoStack>
#include <QtTest>

using namespace moe;
using namespace moe::widgets;

namespace {

/// A panel that only records what it is shown.
class RecordingView : public ReportView {
public:
    QString viewId() const override { return QStringLiteral("recording"); }
    QString viewTitle() const override { return QStringLiteral("Recording"); }
    QWidget* widget() override { return widget_; }
    void showResult(const EvaluationResultPtr& result) override { results.append(result); }
    QString exportTo(const QString&) override { return QStringLiteral("not exportable"); }
    QList<EvaluationResultPtr> results;

private:
    QWidget* widget_ = new QWidget; ///< owned by the dock it is put in
};

MainWindow::Options quiet() {
    return MainWindow::Options{false, false, {}};
}

const QStringList kViewIds = {"topology", "heatmap",     "gantt",    "breakdown",
                              "memory",   "reliability", "warnings", "compare"};

QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

/// The export is a valid file of its format: SVG is XML with an <svg> root, PNG decodes at
/// slide size, PDF has its header and trailer.
QString checkExport(const QString& path) {
    const QByteArray data = readAll(path);
    if (data.isEmpty())
        return path + " is missing or empty";
    if (path.endsWith(".svg")) {
        if (!data.contains("<svg") || !data.contains("</svg>"))
            return path + " is not an SVG document";
    } else if (path.endsWith(".png")) {
        QImage image;
        if (!image.loadFromData(data, "PNG"))
            return path + " does not decode as PNG";
        if (image.width() < 1600 || image.height() < 900)
            return path + QStringLiteral(" is %1x%2, smaller than a slide")
                              .arg(image.width())
                              .arg(image.height());
    } else if (path.endsWith(".pdf")) {
        if (!data.startsWith("%PDF-") || !data.contains("%%EOF"))
            return path + " is not a PDF";
    }
    return {};
}

} // namespace

class TestApp : public QObject {
    Q_OBJECT
private slots:
    // Issue 17 #9: after a crash or a kill every unsaved edit was lost. The real app is started
    // offscreen on a copy of the default sample, makes one edit (--test-set, as if typed), is
    // killed with SIGKILL once its recovery file exists, and a second start restores the edit
    // (--recover answers the "Restore unsaved edits?" question; --dump-scenario writes what the
    // window holds). The recovery directory is isolated through XDG_STATE_HOME.
    void editSurvivesSigkillThroughRecovery() {
        QTemporaryDir dir;
        const QString scenario = dir.filePath("s.yaml");
        QVERIFY(QFile::copy(QString::fromStdString(test::samplePath("dgx-h100-8x8-moe16.yaml")),
                            scenario));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("XDG_STATE_HOME"), dir.filePath("state"));
        const QDir recovery(dir.filePath("state/moe-planner/recovery"));

        QProcess app;
        app.setProcessEnvironment(env);
        app.start(QStringLiteral(MOE_PLANNER_EXE),
                  {QStringLiteral("--test-set"), QStringLiteral("layout.ep=16"), scenario});
        QVERIFY(app.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(!recovery.entryList({QStringLiteral("*.yaml")}).isEmpty(), 20000);
        app.kill(); // SIGKILL: no close event, no clean-up
        QVERIFY(app.waitForFinished());
        QCOMPARE(app.exitStatus(), QProcess::CrashExit);
        const QStringList left = recovery.entryList({QStringLiteral("*.yaml")});
        QCOMPARE(left.size(), 1);
        const std::string kept = test::readFile(recovery.filePath(left[0]).toStdString());
        QVERIFY(kept.find("# edits: 1\n") != std::string::npos);
        QVERIFY(kept.find("  ep: 16\n") != std::string::npos);

        QProcess again;
        again.setProcessEnvironment(env);
        const QString out = dir.filePath("restored.yaml");
        again.start(QStringLiteral(MOE_PLANNER_EXE),
                    {QStringLiteral("--recover"), QStringLiteral("--dump-scenario"), out});
        QVERIFY(again.waitForFinished(60000));
        QCOMPARE(again.exitCode(), 0);
        const LoadResult restored = loadScenarioFile(out.toStdString());
        QVERIFY2(restored.ok(), formatAll(restored.diagnostics).c_str());
        QCOMPARE(restored.scenario->layout.ep, 16);
        // Restored into the original file's text: its comments are still there.
        QVERIFY(test::readFile(out.toStdString()).find("# dgx-h100-8x8-moe16") !=
                std::string::npos);
        // The killed session's file is consumed (the new session keeps its own until saved).
        QVERIFY(!recovery.exists(left[0]));
    }

    // A clean close removes the recovery file; saving does too.
    void cleanCloseAndSaveRemoveTheRecoveryFile() {
        QTemporaryDir dir;
        const QString scenario = dir.filePath("s.yaml");
        QVERIFY(QFile::copy(QString::fromStdString(test::samplePath("dgx-h100-8x8-moe16.yaml")),
                            scenario));
        MainWindow::Options options{false, false, dir.filePath("recovery")};
        MainWindow window(options);
        QVERIFY(window.openFile(scenario));
        QVERIFY(!hasErrors(
            window.document()->setField(QStringLiteral("layout.ep"), QStringLiteral("16"))));
        QCOMPARE(window.autosave()->writeNow(), QString());
        QVERIFY(QFileInfo::exists(window.autosave()->path()));
        QCOMPARE(window.document()->save(), QString());
        QVERIFY(!QFileInfo::exists(window.autosave()->path()));
        // Saving kept the file: only the ep line changed.
        const std::string saved = test::readFile(scenario.toStdString());
        QVERIFY(saved.find("# dgx-h100-8x8-moe16") != std::string::npos);
        QVERIFY(saved.find("  ep: 16\n") != std::string::npos);
        QVERIFY(!hasErrors(
            window.document()->setField(QStringLiteral("layout.ep"), QStringLiteral("8"))));
        QCOMPARE(window.autosave()->writeNow(), QString());
        QVERIFY(QFileInfo::exists(window.autosave()->path()));
        // Discard on close: a clean close all the same.
        QTimer::singleShot(0, [] {
            for (QWidget* w : QApplication::topLevelWidgets())
                if (auto* box = qobject_cast<QMessageBox*>(w))
                    box->button(QMessageBox::Discard)->click();
        });
        window.close();
        QVERIFY(!QFileInfo::exists(window.autosave()->path()));
    }
    void initTestCase() {
        QCoreApplication::setOrganizationName(QStringLiteral("MoE Planner Tests"));
        QCoreApplication::setApplicationName(QStringLiteral("test_app"));
    }

    void buildsWithEveryDock() {
        MainWindow window(quiet());
        for (const QString& id : kViewIds)
            QVERIFY2(window.dockFor(id), qPrintable("no dock for view " + id));
        QVERIFY(window.dockFor("editor"));
        QVERIFY(window.dockFor("history"));
        QCOMPARE(window.views().size(), kViewIds.size());
        QStringList ids;
        for (ReportView* view : window.views()) {
            ids << view->viewId();
            QVERIFY(!view->viewTitle().isEmpty());
            QCOMPARE(window.dockFor(view->viewId())->widget(), view->widget());
        }
        QCOMPARE(QSet<QString>(ids.begin(), ids.end()),
                 QSet<QString>(kViewIds.begin(), kViewIds.end()));
        // The first result is there before the window is ever shown.
        QVERIFY(window.currentResult());
        QCOMPARE(window.currentResult()->report.gpus, 64);
        // "Step 2.41 s": the report's step time, as the status bar rounds it.
        const QString step =
            QStringLiteral("Step %1 s").arg(window.currentResult()->report.step_time_s, 0, 'f', 2);
        QVERIFY2(window.statusSummary().startsWith(step), qPrintable(window.statusSummary()));
        QVERIFY(window.statusSummary().contains("MFU"));
        QVERIFY(window.statusSummary().contains("Memory headroom"));
        QVERIFY(window.windowTitle().startsWith("dgx-h100-8x8-moe16[*]"));
        QVERIFY(!window.isWindowModified());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
    }

    /// Every panel, toolbar and the status bar together still fit a 1280 x 800 laptop screen:
    /// a panel's wide content clips or scrolls instead of widening the window.
    void fitsA1280x800Screen() {
        MainWindow window(quiet());
        window.resize(1280, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QCoreApplication::processEvents();
        const QSize minimum = window.minimumSizeHint().expandedTo(window.minimumSize());
        QVERIFY2(minimum.width() <= 1280 && minimum.height() <= 800,
                 qPrintable(QStringLiteral("%1 x %2").arg(minimum.width()).arg(minimum.height())));
        QCOMPARE(window.width(), 1280);
    }

    void editReachesEveryView() {
        RecordingView recorder_view; // outlives the window, which deletes its widget
        RecordingView* recorder = &recorder_view;
        MainWindow window(quiet());
        window.addView(recorder);
        QCOMPARE(recorder->results.size(), 1); // gets the current result at once
        QSignalSpy shown(&window, &MainWindow::resultShown);
        const QString before = window.statusSummary();

        QVERIFY(!hasErrors(window.document()->setField("layout.order", "tp-cp-dp-ep-pp")));
        QVERIFY(shown.wait(5000));
        const EvaluationResultPtr result = recorder->results.last();
        QCOMPARE(result, window.currentResult());
        QCOMPARE(result->scenario.layout.order[2], Dim::dp);
        QVERIFY(result->scenario == window.document()->scenario());
        // The all-to-all now crosses nodes: slower step, and a warning that says so.
        QVERIFY(result->report.step_time_s > recorder->results.first()->report.step_time_s);
        QVERIFY(window.statusSummary() != before);
        bool ep_warning = false;
        for (const WarningsModel::Item& item : window.warningsView()->model()->items())
            ep_warning = ep_warning || item.code == "ep-crosses-domain";
        QVERIFY(ep_warning);
        QVERIFY(window.isWindowModified());
        QVERIFY2(window.lastUpdateMs() < 1000, qPrintable(QString::number(window.lastUpdateMs())));

        // Undo re-evaluates too.
        window.document()->undoStack()->undo();
        QVERIFY(shown.wait(5000));
        QVERIFY(recorder->results.last()->scenario == defaultScenario());
        QVERIFY(!window.isWindowModified());

        // The heatmap's "next step" goes through the view state.
        window.viewState()->nextRoutingStep();
        QVERIFY(shown.wait(5000));
        QCOMPARE(recorder->results.last()->routing_step, uint64_t(1));
    }

    void editorRefusesInline() {
        MainWindow window(quiet());
        ScenarioFieldsModel* model = window.editor()->model();
        QSignalSpy refused(model, &ScenarioFieldsModel::refused);
        QVERIFY(!model->setFieldValue("layout.ep", "12"));
        QCOMPARE(refused.count(), 1);
        QCOMPARE(window.document()->scenario().layout.ep, 8);
        const QString reason =
            model->indexOfField("layout.ep").data(ScenarioFieldsModel::RefusalRole).toString();
        QVERIFY2(reason.contains("does not divide model.experts = 16"), qPrintable(reason));
        QVERIFY(window.editor()->problemText().contains("layout.ep = 12"));
        QVERIFY(window.editor()->problemText().contains("does not divide"));
        QVERIFY(
            model->indexOfField("layout.ep").data(Qt::ToolTipRole).toString().contains("Refused"));
        // The model shows the value the scenario has, not the refused one.
        QCOMPARE(model->indexOfField("layout.ep").data().toString(), QString("8"));

        QVERIFY(model->setFieldValue("layout.ep", "16"));
        QCOMPARE(window.document()->scenario().layout.ep, 16);
        QVERIFY(model->indexOfField("layout.ep")
                    .data(ScenarioFieldsModel::RefusalRole)
                    .toString()
                    .isEmpty());
        QVERIFY(window.editor()->problemText().isEmpty());
        QCOMPARE(model->indexOfField("layout.ep").data().toString(), QString("16"));
        QCOMPARE(model->indexOfField("layout.dp", ScenarioFieldsModel::UnitColumn).data(),
                 QVariant("replicas"));
    }

    void spinBoxScrubIsOneUndoStep() {
        MainWindow window(quiet());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        ScenarioEditor* editor = window.editor();
        QTreeView* tree = editor->treeView();
        const QModelIndex alpha = editor->proxyModel()->mapFromSource(
            editor->model()->indexOfField("routing.zipf_alpha"));
        QVERIFY(alpha.isValid());
        tree->scrollTo(alpha);
        tree->setCurrentIndex(alpha);
        tree->edit(alpha);
        auto* spin = tree->findChild<QDoubleSpinBox*>();
        QVERIFY(spin);
        QCOMPARE(spin->value(), 1.0); // not written in the default: the schema's default
        for (int i = 0; i < 3; ++i)
            spin->stepUp(); // each step applies live ...
        QCOMPARE(window.document()->scenario().routing.zipf_alpha, 1.15);
        QCOMPARE(window.document()->undoStack()->count(), 1); // ... as one undo step
        tree->setCurrentIndex(tree->model()->index(0, 0));    // closes and commits the editor
        QCOMPARE(window.document()->undoStack()->count(), 1);
        window.document()->undoStack()->undo();
        QCOMPARE(window.document()->scenario().routing.zipf_alpha, 1.0);

        // An integer scrub through invalid values: refused steps are shown and skipped, the
        // spin box keeps what the user typed, the valid ones apply as one step.
        const QModelIndex ep =
            editor->proxyModel()->mapFromSource(editor->model()->indexOfField("layout.ep"));
        tree->scrollTo(ep);
        tree->setCurrentIndex(ep);
        tree->edit(ep);
        auto* int_spin = tree->findChild<QSpinBox*>();
        QVERIFY(int_spin);
        int_spin->setValue(16);
        QCOMPARE(window.document()->scenario().layout.ep, 16);
        int_spin->setValue(12);
        QCOMPARE(window.document()->scenario().layout.ep, 16);
        QCOMPARE(int_spin->value(), 12);
        QVERIFY(editor->problemText().contains("layout.ep = 12"));
        int_spin->setValue(4);
        QCOMPARE(window.document()->scenario().layout.ep, 4);
        QVERIFY(editor->problemText().isEmpty());
        // The undone alpha scrub was dropped by the new edit: one step, the whole ep scrub.
        QCOMPARE(window.document()->undoStack()->count(), 1);
        window.document()->undoStack()->undo();
        QCOMPARE(window.document()->scenario().layout.ep, 8);
    }

    void brokenFileKeepsTheDocument() {
        QTemporaryDir dir;
        MainWindow window(quiet());
        window.document()->setField("layout.ep", "16");
        std::string text = defaultScenarioYaml();
        text.replace(text.find("\n  ep: 8"), 8, "\n  ep: 12");
        const QString broken = dir.filePath("broken.yaml");
        QFile file(broken);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(text.c_str());
        file.close();

        QVERIFY(!window.openFile(broken));
        QCOMPARE(window.document()->scenario().layout.ep, 16);
        QVERIFY(window.document()->isModified());
        WarningsModel* model = window.warningsView()->model();
        QVERIFY(model->loadProblemCount() >= 1);
        const QString first = model->index(0, WarningsModel::MessageColumn).data().toString();
        QVERIFY2(first.contains("broken.yaml:") && first.contains("does not divide"),
                 qPrintable(first));
        QCOMPARE(model->index(0, 0).data(WarningsModel::FieldRole).toString(),
                 QString("layout.ep"));
        // Clicking the problem shows its field in the editor.
        window.warningsView()->activateRow(0);
        const QModelIndex current = window.editor()->treeView()->currentIndex();
        QCOMPARE(current.data(ScenarioFieldsModel::FieldPathRole).toString(), QString("layout.ep"));

        // A good file replaces the document and clears the problems.
        QVERIFY(
            window.openFile(QString::fromStdString(test::samplePath("mixtral-8x7b-32xh100.yaml"))));
        QCOMPARE(model->loadProblemCount(), 0);
        QCOMPARE(window.document()->scenario().cluster.gpuCount(), 32);
        QVERIFY(window.windowTitle().startsWith("mixtral-8x7b-32xh100.yaml"));
    }

    void warningHighlightsItsGpus() {
        MainWindow window(quiet());
        // A raw Zipf what-if (alpha 1, no blend) makes one GPU the straggler.
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(!hasErrors(window.document()->setField("routing.model", "zipf")));
        QVERIFY(shown.wait(5000));
        WarningsModel* model = window.warningsView()->model();
        int row = -1;
        for (int i = 0; i < model->rowCount(); ++i) {
            if (!model->index(i, 0).data(WarningsModel::GpusRole).toList().isEmpty())
                row = i;
        }
        QVERIFY2(row >= 0, "unbalanced routing gives a straggler warning about one GPU");
        QCOMPARE(model->index(row, 0).data(WarningsModel::CodeRole).toString(),
                 QString("straggler"));
        const int hot = window.currentResult()->report.load.hottestGpu(
            *window.currentResult()->report.placement);
        QSignalSpy highlight(window.viewState(), &ViewState::highlightChanged);
        window.warningsView()->activateRow(row);
        QCOMPARE(highlight.count(), 1);
        QCOMPARE(window.viewState()->highlightedGpus(), QVector<int>{hot});
        QCOMPARE(window.viewState()->highlightLabel(), QString("straggler"));
        QVERIFY(model->index(row, WarningsModel::GpusColumn)
                    .data()
                    .toString()
                    .contains(QString::number(hot)));
    }

    void exportsEveryView() {
        QTemporaryDir dir;
        MainWindow window(quiet());
        const QStringList problems = window.exportViews(dir.path(), {"svg", "png", "pdf"});
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
        for (const QString& id : kViewIds) {
            for (const char* format : {"svg", "png", "pdf"}) {
                const QString problem = checkExport(dir.filePath(id + '.' + QLatin1String(format)));
                QVERIFY2(problem.isEmpty(), qPrintable(problem));
            }
        }
        // The warnings page names the scenario and lists its warnings.
        const QByteArray svg = readAll(dir.filePath("warnings.svg"));
        QVERIFY(svg.contains("dgx-h100-8x8-moe16"));
        for (const DesignWarning& w : window.currentResult()->report.warnings)
            QVERIFY(svg.contains(QByteArray::fromStdString(warningText(w)).left(30)));

        // Another scenario gives other pictures, view by view.
        QTemporaryDir other;
        QVERIFY(
            window.openFile(QString::fromStdString(test::samplePath("mixtral-8x7b-32xh100.yaml"))));
        window.evaluateNow();
        QVERIFY(window.exportViews(other.path(), {"svg"}).isEmpty());
        for (const QString& id : kViewIds)
            QVERIFY2(readAll(dir.filePath(id + ".svg")) != readAll(other.filePath(id + ".svg")),
                     qPrintable(id));
    }

    void headlessExportCommand() {
        QTemporaryDir dir;
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("QT_QPA_PLATFORM"); // --export must work without a display on its own
        env.remove("DISPLAY");
        process.setProcessEnvironment(env);
        process.start(MOE_PLANNER_EXE,
                      {"--export", dir.path(), "--format", "svg,pdf",
                       QString::fromStdString(test::samplePath("mixtral-8x7b-32xh100.yaml"))});
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitCode(), 0);
        for (const QString& id : kViewIds) {
            for (const char* format : {"svg", "pdf"}) {
                const QString problem = checkExport(dir.filePath(id + '.' + QLatin1String(format)));
                QVERIFY2(problem.isEmpty(), qPrintable(problem));
            }
            QVERIFY(!QFile::exists(dir.filePath(id + ".png")));
        }
        QVERIFY(readAll(dir.filePath("warnings.svg")).contains("mixtral"));

        // A broken scenario: exit 1 with located errors; a bad format: exit 2.
        QTemporaryDir broken_dir;
        const QString broken = broken_dir.filePath("broken.yaml");
        QFile file(broken);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("name: x\ncluster: {gpu: h100-sxm, nodes: 0}\n");
        file.close();
        process.start(MOE_PLANNER_EXE, {"--export", broken_dir.filePath("out"), broken});
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitCode(), 1);
        QVERIFY(process.readAllStandardError().contains("broken.yaml:"));
        process.start(MOE_PLANNER_EXE, {"--export", dir.path(), "--format", "gif"});
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitCode(), 2);
    }

    void closingWithUnsavedEditsAsks() {
        MainWindow window(quiet());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.document()->setField("layout.ep", "16");
        bool asked = false;
        QTimer::singleShot(0, this, [&asked] {
            if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
                asked = true;
                box->button(QMessageBox::Cancel)->click();
            }
        });
        QVERIFY(!window.close());
        QVERIFY(asked);
        QVERIFY(window.isVisible());
        // Unmodified: closes without asking.
        window.document()->undoStack()->undo();
        QVERIFY(window.close());
    }

    void reloadsWhenTheFileChangesOnDisk() {
        QTemporaryDir dir;
        const QString path = dir.filePath("watched.yaml");
        QVERIFY(saveScenarioFile(defaultScenario(), path.toStdString()).empty());
        MainWindow window(MainWindow::Options{false, true, {}});
        QVERIFY(window.openFile(path));
        QSignalSpy changed(window.document(), &ScenarioDocument::scenarioChanged);

        // Our own save is not a change on disk.
        window.document()->setField("layout.ep", "16");
        QCOMPARE(window.document()->save(), QString());
        QTest::qWait(600);
        QCOMPARE(changed.count(), 1);

        // Another program's edit reloads an unmodified document, replaced by rename or not.
        Scenario edited = defaultScenario();
        edited.layout.ep = 4;
        QVERIFY(saveScenarioFile(edited, path.toStdString()).empty());
        QTRY_COMPARE_WITH_TIMEOUT(window.document()->scenario().layout.ep, 4, 5000);
        QVERIFY(!window.document()->isModified());
        edited.layout.ep = 2;
        QVERIFY(saveScenarioFile(edited, path.toStdString()).empty());
        QTRY_COMPARE_WITH_TIMEOUT(window.document()->scenario().layout.ep, 2, 5000);

        // With unsaved edits it asks first; "No" keeps the edits.
        QVERIFY(!hasErrors(window.document()->setField("layout.ep", "16")));
        bool asked = false;
        QTimer answer;
        connect(&answer, &QTimer::timeout, this, [&asked] {
            if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
                asked = true;
                box->button(QMessageBox::No)->click();
            }
        });
        answer.start(20);
        edited.layout.ep = 4;
        QVERIFY(saveScenarioFile(edited, path.toStdString()).empty());
        QTRY_VERIFY_WITH_TIMEOUT(asked, 5000);
        QCOMPARE(window.document()->scenario().layout.ep, 16);
        QVERIFY(window.document()->isModified());
    }

    void settingsRememberLayoutAndRecentFiles() {
        QTemporaryDir config;
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, config.path());
        QSettings().clear();
        const QString sample =
            QString::fromStdString(test::samplePath("mixtral-8x7b-32xh100.yaml"));
        {
            MainWindow window(MainWindow::Options{true, false, {}});
            QVERIFY(window.openFile(sample));
            window.dockFor("heatmap")->hide();
            QVERIFY(window.close());
        }
        QVERIFY(QSettings().value("recentFiles").toStringList().contains(sample));
        MainWindow again(MainWindow::Options{true, false, {}});
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        QVERIFY(!again.dockFor("heatmap")->isVisible()); // the layout came back
        QVERIFY(again.dockFor("topology")->isVisible());
        QSettings().clear();
    }

    void editorMutesFieldsTheScenarioIgnores() {
        MainWindow window(quiet());
        ScenarioFieldsModel* model = window.editor()->model();
        const QBrush muted = QApplication::palette().brush(QPalette::Disabled, QPalette::Text);
        // A GQA model ignores the MLA sizes; switching to MLA brings them in.
        QCOMPARE(
            model->indexOfField("model.mla.kv_lora_rank").data(Qt::ForegroundRole).value<QBrush>(),
            muted);
        QVERIFY(!model->indexOfField("model.kv_heads").data(Qt::ForegroundRole).isValid());
        QSignalSpy changed(model, &QAbstractItemModel::dataChanged);
        QVERIFY(model->setFieldValue("model.attention", "mla"));
        QVERIFY(!model->indexOfField("model.mla.kv_lora_rank").data(Qt::ForegroundRole).isValid());
        QCOMPARE(model->indexOfField("model.kv_heads").data(Qt::ForegroundRole).value<QBrush>(),
                 muted);
        // Only the rows that changed are announced (attention, kv_heads, and the five MLA sizes).
        QCOMPARE(changed.count(), 7);
    }

    void itemModelsPassTheTester() {
        MainWindow window(quiet());
        using Mode = QAbstractItemModelTester::FailureReportingMode;
        QAbstractItemModelTester editor_tester(window.editor()->model(), Mode::QtTest);
        QAbstractItemModelTester proxy_tester(window.editor()->proxyModel(), Mode::QtTest);
        QAbstractItemModelTester warnings_tester(window.warningsView()->model(), Mode::QtTest);
        QSignalSpy shown(&window, &MainWindow::resultShown);

        // Every kind of change the models see: edits, refusals, undo, filtering, warnings that
        // come and go, a file that does not open, a new document.
        window.document()->setField("layout.order", "tp-cp-dp-ep-pp");
        QVERIFY(shown.wait(5000));
        window.editor()->model()->setFieldValue("layout.ep", "12");
        window.editor()->setFilter("bandwidth");
        QVERIFY(window.editor()->proxyModel()->rowCount() >= 1);
        window.editor()->setFilter({});
        window.document()->undoStack()->undo();
        QVERIFY(shown.wait(5000));
        window.warningsView()->setLoadProblems(loadScenarioText("name: [", "bad.yaml").diagnostics,
                                               "bad.yaml");
        window.warningsView()->clearLoadProblems();
        window.document()->reset(
            loadScenarioFile(test::samplePath("dense-70b-64xh100.yaml")).scenario.value());
        QVERIFY(shown.wait(5000));
        QCOMPARE(window.editor()->model()->rowCount(), 6);
    }

    void largeClusterStaysInteractive() {
        MainWindow window(quiet());
        window.resize(1600, 1000);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.openFile(
            QString::fromStdString(test::samplePath("deepseek-v3-2048xh800.yaml"))));
        QSignalSpy shown(&window, &MainWindow::resultShown);
        QVERIFY(shown.wait(10000));
        QCOMPARE(window.currentResult()->report.gpus, 2048);
        // Edit to every view updated and repainted; the target is 200 ms, the bound here only
        // catches a regression by an order of magnitude on a loaded CI machine.
        QElapsedTimer timer;
        timer.start();
        window.document()->setField("routing.zipf_alpha", "0.9");
        QVERIFY(shown.wait(10000));
        window.repaint();
        QVERIFY2(timer.elapsed() < 2000, qPrintable(QString::number(timer.elapsed())));
    }
};

QTEST_MAIN(TestApp)
#include "test_app.moc"
