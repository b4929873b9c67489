// The main window's exports: every view as SVG/PNG/PDF (and the topology as draw.io), and the
// design-review report.
#include "moe_widgets/window/main_window.h"

#include "moe/io/interop.h"
#include "moe_widgets/common/report_view.h"
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/report/compare_view.h"
#include "moe_widgets/report/design_report.h"
#include "moe_widgets/topology/topology_view.h"

#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QStatusBar>

namespace moe::widgets {

QStringList MainWindow::exportViews(const QString& directory, const QStringList& formats) {
    QStringList problems;
    if (!QDir().mkpath(directory)) {
        // mkpath gives no reason; the usual one is a path component that is a file.
        QString blocker = directory;
        while (!blocker.isEmpty() && !QFileInfo::exists(blocker))
            blocker = QFileInfo(blocker).path();
        const bool file_in_the_way = !blocker.isEmpty() && !QFileInfo(blocker).isDir();
        return {file_in_the_way ? tr("cannot create directory %1: %2 is a file, not a directory")
                                      .arg(directory, blocker)
                                : tr("cannot create directory %1").arg(directory)};
    }
    for (ReportView* view : std::as_const(views_)) {
        for (const QString& format : formats) {
            const QString path = QDir(directory).filePath(view->viewId() + '.' + format);
            const QString problem = view->exportTo(path);
            if (!problem.isEmpty())
                problems << QStringLiteral("%1: %2").arg(path, problem);
        }
        // The topology once more per group overlay: topology-<tp|ep|edp|dp|pp|cp>.<format>.
        // And aggregated (pod 0 in full, the other pods summed) when it has several pods.
        if (auto* topology = dynamic_cast<TopologyView*>(view))
            for (const QString& format : formats) {
                problems << topology->exportOverlays(directory, format);
                if (topology->canAggregate()) {
                    const QString path =
                        QDir(directory).filePath(QStringLiteral("topology-aggregated.") + format);
                    const QString problem = topology->exportAggregatedTo(path);
                    if (!problem.isEmpty())
                        problems << QStringLiteral("%1: %2").arg(path, problem);
                }
            }
    }
    // The topology also as an editable draw.io diagram (the hardware graph, not the view).
    const std::string drawio =
        io::writeExport(io::exportScenario(io::ExportFormat::drawio, document_->scenario()),
                        QDir(directory).filePath(QStringLiteral("topology.drawio")).toStdString());
    if (!drawio.empty())
        problems << QString::fromStdString(drawio);
    return problems;
}

void MainWindow::exportDialog() {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Export every view to"));
    if (dir.isEmpty())
        return;
    const QStringList problems = exportViews(dir, {"svg", "png", "pdf"});
    if (problems.isEmpty())
        statusBar()->showMessage(tr("Exported %1 views to %2").arg(views_.size()).arg(dir), 6000);
    else
        QMessageBox::warning(this, tr("Export"), problems.join('\n'));
}

QString MainWindow::exportReport(const QString& path) {
    DesignReportInput input;
    input.current = current_;
    input.baseline = compare_ ? compare_->baseline() : nullptr;
    input.source_file = document_->filePath();
    return writeDesignReport(path, input);
}

void MainWindow::exportReportDialog() {
    QString suggestion = QFileInfo(document_->filePath()).absolutePath();
    if (document_->filePath().isEmpty())
        suggestion = QDir::currentPath();
    suggestion = QDir(suggestion)
                     .filePath(QString::fromStdString(document_->scenario().name) +
                               QStringLiteral("-review.pdf"));
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export design-review report"), suggestion,
        tr("PDF report (*.pdf);;HTML report with embedded SVG (*.html)"));
    if (path.isEmpty())
        return;
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const QString problem = exportReport(path);
    QApplication::restoreOverrideCursor();
    if (problem.isEmpty())
        statusBar()->showMessage(tr("Wrote the report to %1").arg(QDir::toNativeSeparators(path)),
                                 6000);
    else
        QMessageBox::warning(this, tr("Export report"), problem);
}

} // namespace moe::widgets
