#include "moe_widgets/window/interop_dialogs.h"

#include "moe_widgets/document/scenario_document.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMessageBox>

namespace moe::widgets {

namespace {

struct Filter {
    const char* text;
    int format;
};

const Filter kImportFilters[] = {
    {QT_TRANSLATE_NOOP("Interop", "Megatron-Core launch script or arguments (*.sh *.bash *.txt "
                                  "*.args *.yaml *.yml)"),
     static_cast<int>(io::ImportFormat::megatron)},
    {QT_TRANSLATE_NOOP("Interop", "nvidia-smi topo -m output (*.txt *.log *.out)"),
     static_cast<int>(io::ImportFormat::nvidia_smi_topo)},
    {QT_TRANSLATE_NOOP("Interop", "NCCL topology dump, NCCL_TOPO_DUMP_FILE (*.xml)"),
     static_cast<int>(io::ImportFormat::nccl_topo)},
    {QT_TRANSLATE_NOOP("Interop", "Calculon model.json, with execution.json and system.json "
                                  "beside it (*.json)"),
     static_cast<int>(io::ImportFormat::calculon)},
};

const Filter kExportFilters[] = {
    {QT_TRANSLATE_NOOP("Interop", "Megatron-Core arguments (*.sh)"),
     static_cast<int>(io::ExportFormat::megatron)},
    {QT_TRANSLATE_NOOP("Interop", "NeMo 2.0 recipe (*.py)"),
     static_cast<int>(io::ExportFormat::nemo)},
    {QT_TRANSLATE_NOOP("Interop", "draw.io diagram of the topology (*.drawio)"),
     static_cast<int>(io::ExportFormat::drawio)},
    {QT_TRANSLATE_NOOP("Interop", "Calculon inputs, a directory (*)"),
     static_cast<int>(io::ExportFormat::calculon)},
    {QT_TRANSLATE_NOOP("Interop", "ASTRA-sim inputs, a directory (*)"),
     static_cast<int>(io::ExportFormat::astra_sim)},
};

QString diagnosticsText(const Diagnostics& diagnostics) {
    return QString::fromStdString(formatAll(diagnostics));
}

} // namespace

QStringList importFilters() {
    QStringList out;
    for (const Filter& f : kImportFilters)
        out << QString::fromUtf8(f.text);
    return out;
}

std::optional<io::ImportFormat> importFormatOf(const QString& filter) {
    for (const Filter& f : kImportFilters)
        if (filter == QString::fromUtf8(f.text))
            return static_cast<io::ImportFormat>(f.format);
    return std::nullopt;
}

QStringList exportFilters() {
    QStringList out;
    for (const Filter& f : kExportFilters)
        out << QString::fromUtf8(f.text);
    return out;
}

std::optional<io::ExportFormat> exportFormatOf(const QString& filter) {
    for (const Filter& f : kExportFilters)
        if (filter == QString::fromUtf8(f.text))
            return static_cast<io::ExportFormat>(f.format);
    return std::nullopt;
}

InteropReport importIntoDocument(ScenarioDocument& document, io::ImportFormat format,
                                 const QString& path,
                                 const std::map<std::string, std::string>& vars) {
    io::ImportRequest request;
    request.format = format;
    // Calculon's three files sit together: the chosen file's directory holds them.
    request.paths = {format == io::ImportFormat::calculon
                         ? QFileInfo(path).absolutePath().toStdString()
                         : path.toStdString()};
    request.base = document.scenario();
    request.base_dir = document.filePath().isEmpty()
                           ? QDir::currentPath().toStdString()
                           : QFileInfo(document.filePath()).absolutePath().toStdString();
    request.vars = vars;
    const io::ImportOutcome outcome = io::importFiles(request);
    InteropReport report;
    report.summary = QString::fromStdString(outcome.summary);
    report.errors = diagnosticsText(outcome.diagnostics);
    for (const std::string& v : outcome.unresolved_variables)
        report.unresolved << QString::fromStdString(v);
    if (!outcome.scenario)
        return report;
    const Scenario imported = *outcome.scenario;
    const Diagnostics refused =
        document.edit(QObject::tr("Import %1").arg(QFileInfo(path).fileName()),
                      [&](Scenario& s) { s = imported; });
    if (hasErrors(refused)) {
        report.errors += diagnosticsText(refused);
        return report;
    }
    report.ok = true;
    return report;
}

InteropReport exportScenarioTo(const Scenario& scenario, io::ExportFormat format,
                               const QString& path) {
    const io::ExportOutcome outcome = io::exportScenario(format, scenario);
    InteropReport report;
    report.summary = QString::fromStdString(outcome.summary);
    report.errors = diagnosticsText(outcome.diagnostics);
    if (outcome.files.empty())
        return report;
    const std::string problem = io::writeExport(outcome, path.toStdString());
    if (!problem.empty()) {
        report.errors += QString::fromStdString(problem);
        return report;
    }
    report.ok = true;
    return report;
}

void showImportDialog(QWidget* parent, ScenarioDocument& document) {
    QString selected;
    const QString path =
        QFileDialog::getOpenFileName(parent, QObject::tr("Import into the scenario"), QString(),
                                     importFilters().join(";;"), &selected);
    if (path.isEmpty())
        return;
    const io::ImportFormat format = importFormatOf(selected).value_or(io::ImportFormat::megatron);
    std::map<std::string, std::string> vars;
    InteropReport report = importIntoDocument(document, format, path, vars);
    // Shell variables the script uses but does not set: ask for them, as --var would give them.
    while (!report.ok && !report.unresolved.isEmpty()) {
        for (const QString& name : std::as_const(report.unresolved)) {
            bool accepted = false;
            const QString value = QInputDialog::getText(
                parent, QObject::tr("Shell variable"),
                QObject::tr("%1 uses $%2, which it does not set. Value of %2:")
                    .arg(QFileInfo(path).fileName(), name),
                QLineEdit::Normal, QString(), &accepted);
            if (!accepted)
                return;
            vars[name.toStdString()] = value.toStdString();
        }
        report = importIntoDocument(document, format, path, vars);
    }
    QMessageBox box(
        report.ok ? QMessageBox::Information : QMessageBox::Warning, QObject::tr("Import"),
        report.ok
            ? QObject::tr("Imported %1 (Edit > Undo reverts it).").arg(QFileInfo(path).fileName())
            : QObject::tr("%1 was not imported; the scenario is unchanged.\n\n%2")
                  .arg(QFileInfo(path).fileName(), report.errors),
        QMessageBox::Ok, parent);
    box.setDetailedText(report.summary);
    box.exec();
}

void showExportDialog(QWidget* parent, const Scenario& scenario, const QString& start_dir) {
    QString selected;
    const QString path = QFileDialog::getSaveFileName(
        parent, QObject::tr("Export for other tools"),
        QDir(start_dir).filePath(QString::fromStdString(scenario.name)), exportFilters().join(";;"),
        &selected);
    if (path.isEmpty())
        return;
    const io::ExportFormat format = exportFormatOf(selected).value_or(io::ExportFormat::megatron);
    const InteropReport report = exportScenarioTo(scenario, format, path);
    QMessageBox box(report.ok ? QMessageBox::Information : QMessageBox::Warning,
                    QObject::tr("Export"),
                    report.ok ? QObject::tr("Wrote %1.").arg(QDir::toNativeSeparators(path))
                              : QObject::tr("Nothing was written.\n\n%1").arg(report.errors),
                    QMessageBox::Ok, parent);
    box.setDetailedText(report.summary);
    box.exec();
}

} // namespace moe::widgets
