// The main window's files: new from a sample, open (dialog, recent files, drops), save, reload
// when the file changes on disk.
#include "moe_widgets/window/main_window.h"

#include "moe/scenario_io.h"
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/report/warnings_view.h"
#include "moe_widgets/window/sample_chooser.h"

#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>
#include <QUrl>

namespace moe::widgets {

namespace {

constexpr int kMaxRecentFiles = 8;
/// Editors often write a file in several steps; read it once they are done.
constexpr int kReloadDelayMs = 250;

/// What the window opens as a scenario: the Open and Save dialogs' filter, and drops.
const QStringList& scenarioSuffixes() {
    static const QStringList suffixes = {QStringLiteral("yaml"), QStringLiteral("yml")};
    return suffixes;
}

QString scenarioFilter() {
    return MainWindow::tr("Scenarios (*.%1)").arg(scenarioSuffixes().join(QStringLiteral(" *.")));
}

} // namespace

QStringList MainWindow::sampleFiles() {
    QStringList dirs;
    const QString env = qEnvironmentVariable("MOE_SAMPLES_DIR");
    if (!env.isEmpty())
        dirs << env;
    dirs << QCoreApplication::applicationDirPath() +
                QStringLiteral("/../share/moe-planner/sample_clusters");
#if defined(MOE_WIDGETS_SAMPLES_DIR) && defined(MOE_WIDGETS_BUILD_DIR)
    // The source tree's samples only for a program run from its build tree: an installed copy
    // never looks there, even when the source tree is still on the machine.
    const QString build_dir = QDir(QStringLiteral(MOE_WIDGETS_BUILD_DIR)).canonicalPath();
    const QString app_dir = QDir(QCoreApplication::applicationDirPath()).canonicalPath();
    if (!build_dir.isEmpty() && app_dir.startsWith(build_dir + QLatin1Char('/')))
        dirs << QStringLiteral(MOE_WIDGETS_SAMPLES_DIR);
#endif
    for (const QString& dir : dirs) {
        QDir d(dir);
        const QStringList names = d.entryList({QStringLiteral("*.yaml")}, QDir::Files, QDir::Name);
        if (names.isEmpty())
            continue;
        QStringList paths;
        for (const QString& name : names)
            paths << d.absoluteFilePath(name);
        return paths;
    }
    return {};
}

bool MainWindow::isScenarioFileName(const QString& path) {
    return scenarioSuffixes().contains(QFileInfo(path).suffix().toLower());
}

void MainWindow::showLoadProblems(const Diagnostics& diagnostics, const QString& path) {
    warnings_->setLoadProblems(diagnostics, path);
    if (QDockWidget* dock = dockFor(QStringLiteral("warnings"))) {
        dock->show();
        dock->raise();
    }
    int errors = 0;
    for (const Diagnostic& d : diagnostics)
        errors += d.severity == Diagnostic::Severity::error;
    statusBar()->showMessage(
        tr("%1 was not opened: %n problem(s), listed under Warnings", nullptr, errors)
            .arg(QFileInfo(path).fileName()),
        10000);
}

bool MainWindow::openFile(const QString& path) {
    const Diagnostics diagnostics = document_->open(path);
    if (hasErrors(diagnostics)) {
        showLoadProblems(diagnostics, path);
        return false;
    }
    warnings_->clearLoadProblems();
    statusBar()->showMessage(tr("Opened %1").arg(QDir::toNativeSeparators(path)), 5000);
    return true;
}

bool MainWindow::openAfterAsking(const QString& path) {
    return maybeSave() && openFile(path);
}

void MainWindow::openDialog() {
    if (!maybeSave())
        return;
    QString start = QFileInfo(document_->filePath()).absolutePath();
    if (document_->filePath().isEmpty() && !sampleFiles().isEmpty())
        start = QFileInfo(sampleFiles().front()).absolutePath();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario"), start,
                                                      scenarioFilter() + tr(";;All files (*)"));
    if (!path.isEmpty())
        openFile(path);
}

void MainWindow::showNewFromSample() {
    // One chooser at a time: Ctrl+N again brings the open one forward.
    if (auto* open = findChild<SampleChooser*>()) {
        open->raise();
        open->activateWindow();
        return;
    }
    auto* chooser = new SampleChooser(describeSamples(sampleFiles()), this);
    chooser->setAttribute(Qt::WA_DeleteOnClose);
    connect(chooser, &QDialog::accepted, this,
            [this, chooser] { newFromSample(chooser->chosenPath()); });
    chooser->open();
}

bool MainWindow::newFromSample(const QString& path) {
    if (!maybeSave())
        return false;
    if (path.isEmpty()) {
        document_->reset(defaultScenario());
    } else {
        const LoadResult loaded = loadScenarioFile(path.toStdString());
        if (!loaded.ok()) {
            showLoadProblems(loaded.diagnostics, path);
            return false;
        }
        // A new, unsaved scenario: Save asks where to put it, so the sample stays as shipped.
        document_->reset(*loaded.scenario);
    }
    warnings_->clearLoadProblems();
    statusBar()->showMessage(
        tr("New scenario from %1 (untitled: Save asks where to keep it)")
            .arg(path.isEmpty() ? tr("the built-in default") : QFileInfo(path).fileName()),
        6000);
    return true;
}

namespace {

/// The local files of a drag, in the order the user selected them.
QStringList droppedFiles(const QMimeData* mime) {
    QStringList paths;
    if (mime == nullptr || !mime->hasUrls())
        return paths;
    for (const QUrl& url : mime->urls()) {
        if (url.isLocalFile())
            paths << url.toLocalFile();
    }
    return paths;
}

} // namespace

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    const QStringList paths = droppedFiles(event->mimeData());
    if (paths.isEmpty()) {
        event->ignore();
        return;
    }
    // Accepted even without a scenario among them, so that the drop can say why it refuses.
    event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QStringList paths = droppedFiles(event->mimeData());
    if (paths.isEmpty()) {
        event->ignore();
        return;
    }
    event->acceptProposedAction();
    // Opened after the drop has returned: the unsaved-changes question is a modal dialog, which
    // must not run inside the drag-and-drop operation of the source application.
    QTimer::singleShot(0, this, [this, paths] { openDropped(paths); });
}

void MainWindow::openDropped(const QStringList& paths) {
    QStringList scenarios;
    for (const QString& path : paths) {
        if (isScenarioFileName(path))
            scenarios << path;
    }
    if (scenarios.isEmpty()) {
        statusBar()->showMessage(
            tr("Not opened: %1 is not a scenario file (MoE Planner opens .%2 scenarios)")
                .arg(QFileInfo(paths.front()).fileName(), scenarioSuffixes().join(tr(" and ."))),
            10000);
        return;
    }
    if (!openAfterAsking(scenarios.front()))
        return;
    if (paths.size() > 1)
        statusBar()->showMessage(
            tr("Opened %1; %n other dropped file(s) ignored (one scenario opens at a time)",
               nullptr, static_cast<int>(paths.size() - 1))
                .arg(QFileInfo(scenarios.front()).fileName()),
            10000);
}

bool MainWindow::saveDocument() {
    if (document_->filePath().isEmpty())
        return saveDocumentAs();
    const QString problem = document_->save();
    if (!problem.isEmpty()) {
        QMessageBox::warning(this, tr("Save failed"), problem);
        return false;
    }
    statusBar()->showMessage(tr("Saved %1").arg(document_->filePath()), 4000);
    return true;
}

bool MainWindow::saveDocumentAs() {
    QString suggestion = document_->filePath();
    if (suggestion.isEmpty())
        suggestion = QDir::current().filePath(QString::fromStdString(document_->scenario().name) +
                                              QStringLiteral(".yaml"));
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Save scenario as"), suggestion, scenarioFilter());
    if (path.isEmpty())
        return false;
    const QString problem = document_->saveAs(path);
    if (!problem.isEmpty()) {
        QMessageBox::warning(this, tr("Save failed"), problem);
        return false;
    }
    statusBar()->showMessage(tr("Saved %1").arg(path), 4000);
    return true;
}

bool MainWindow::maybeSave() {
    if (!document_->isModified())
        return true;
    const auto answer = QMessageBox::warning(
        this, tr("Unsaved changes"),
        tr("%1 has unsaved changes. Save them?").arg(document_->displayName()),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Save)
        return saveDocument();
    return answer == QMessageBox::Discard;
}

void MainWindow::createFileWatcher() {
    watcher_ = new QFileSystemWatcher(this);
    connect(watcher_, &QFileSystemWatcher::fileChanged, this, [this](const QString& path) {
        QTimer::singleShot(kReloadDelayMs, this, [this, path] { onFileChangedOnDisk(path); });
    });
}

void MainWindow::watchFile() {
    if (!watcher_)
        return;
    if (!watcher_->files().isEmpty())
        watcher_->removePaths(watcher_->files());
    if (options_.watch_file && !document_->filePath().isEmpty() &&
        QFileInfo::exists(document_->filePath()))
        watcher_->addPath(document_->filePath());
}

void MainWindow::onFileChangedOnDisk(const QString& path) {
    if (path != document_->filePath() || asking_reload_)
        return;
    // A save by rename replaces the file, and the watcher forgets a replaced file.
    watchFile();
    if (!QFileInfo::exists(path))
        return;
    const LoadResult loaded = loadScenarioFile(path.toStdString());
    if (loaded.ok() && *loaded.scenario == document_->scenario())
        return; // our own save, or a change that makes no difference
    if (!loaded.ok()) {
        warnings_->setLoadProblems(loaded.diagnostics, path);
        statusBar()->showMessage(tr("%1 changed on disk but does not load; see Warnings")
                                     .arg(QFileInfo(path).fileName()),
                                 10000);
        return;
    }
    if (document_->isModified()) {
        asking_reload_ = true;
        const auto answer =
            QMessageBox::question(this, tr("File changed on disk"),
                                  tr("%1 changed on disk. Reload it and lose your unsaved edits?")
                                      .arg(QFileInfo(path).fileName()),
                                  QMessageBox::Yes | QMessageBox::No, QMessageBox::No);
        asking_reload_ = false;
        if (answer != QMessageBox::Yes)
            return;
    }
    if (openFile(path))
        statusBar()->showMessage(
            tr("Reloaded %1 (changed on disk)").arg(QFileInfo(path).fileName()), 5000);
}

void MainWindow::addRecentFile(const QString& path) {
    if (!options_.use_settings)
        return;
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recentFiles")).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecentFiles)
        recent.removeLast();
    settings.setValue(QStringLiteral("recentFiles"), recent);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
    if (!recent_menu_)
        return;
    recent_menu_->clear();
    const QStringList recent = options_.use_settings
                                   ? QSettings().value(QStringLiteral("recentFiles")).toStringList()
                                   : QStringList();
    for (const QString& path : recent) {
        recent_menu_->addAction(QDir::toNativeSeparators(path), this,
                                [this, path] { openAfterAsking(path); });
    }
    recent_menu_->setEnabled(!recent.isEmpty());
}

} // namespace moe::widgets
