#pragma once
// The open scenario: its value, file, modified state and undo history. Views never change the
// scenario directly; every edit goes through edit(), which validates it first (an invalid value
// is refused with the reason and nothing changes) and pushes one undo step.

#include "moe/diagnostics.h"
#include "moe/scenario.h"

#include <QObject>
#include <QString>

#include <functional>

class QUndoStack;

namespace moe::widgets {

class ScenarioDocument : public QObject {
    Q_OBJECT
public:
    explicit ScenarioDocument(QObject* parent = nullptr);
    ~ScenarioDocument() override;

    const Scenario& scenario() const { return scenario_; }
    QString filePath() const { return file_path_; }
    /// File name for the title bar ("dgx-h100-8x8-moe16.yaml", or the scenario name if unsaved).
    QString displayName() const;
    bool isModified() const;
    QUndoStack* undoStack() const { return undo_; }

    /// Replaces the document (New from sample, or the built-in default); clears the history.
    void reset(const Scenario& scenario, const QString& file_path = {});
    /// Loads a file. On errors returns them and keeps the current document unchanged.
    Diagnostics open(const QString& path);
    /// Saves atomically (temporary file + rename). Returns an empty string or the reason.
    QString save();
    QString saveAs(const QString& path);

    /// Applies `change` to a copy of the scenario, validates it, and if valid pushes it as one
    /// undo step named `text`. Consecutive edits with the same non-empty `merge_key` merge into
    /// one step (a drag or a spin-box scrub). Returns the validation errors (nothing applied).
    Diagnostics edit(const QString& text, const std::function<void(Scenario&)>& change,
                     const QString& merge_key = {});
    /// Sets one field by its dotted path ("layout.ep") from text, as the editor and --set do.
    Diagnostics setField(const QString& path, const QString& value, const QString& merge_key = {});

signals:
    /// After every change of the scenario value: edit, undo, redo, open, reset.
    void scenarioChanged();
    void modifiedChanged(bool modified);
    void filePathChanged(const QString& path);

private:
    friend class ScenarioEditCommand;
    void assign(const Scenario& scenario); ///< used by undo commands

    Scenario scenario_;
    QString file_path_;
    QUndoStack* undo_;
};

} // namespace moe::widgets
