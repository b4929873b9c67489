#pragma once
// File > Import… and File > Export… of the desktop app: the formats of `moe-plan import` and
// `moe-plan export` (core/include/moe/io/interop.h). An import starts from the open scenario
// (its cluster for Megatron arguments, its node for topology dumps) and is one undo step.

#include "moe/io/interop.h"

#include <QString>
#include <QStringList>

#include <map>
#include <optional>
#include <string>

class QWidget;

namespace moe::widgets {

class ScenarioDocument;

/// The file-dialog filters, in menu order, and the format each stands for.
QStringList importFilters();
std::optional<io::ImportFormat> importFormatOf(const QString& filter);
QStringList exportFilters();
std::optional<io::ExportFormat> exportFormatOf(const QString& filter);

struct InteropReport {
    bool ok = false;
    QString summary;        ///< what was mapped, or written and what the peer cannot express
    QString errors;         ///< file:line: error: ... lines
    QStringList unresolved; ///< Megatron: shell variables to ask for
};

/// Imports `path` onto the document's scenario as one undo step named "Import FILE".
InteropReport importIntoDocument(ScenarioDocument& document, io::ImportFormat format,
                                 const QString& path,
                                 const std::map<std::string, std::string>& vars = {});

/// Writes `scenario` in `format` to `path` (a directory for Calculon and ASTRA-sim).
InteropReport exportScenarioTo(const Scenario& scenario, io::ExportFormat format,
                               const QString& path);

/// The dialogs: choose a file (and, for Megatron, the values of unset shell variables), import
/// or export, and show the summary.
void showImportDialog(QWidget* parent, ScenarioDocument& document);
void showExportDialog(QWidget* parent, const Scenario& scenario, const QString& start_dir);

} // namespace moe::widgets
