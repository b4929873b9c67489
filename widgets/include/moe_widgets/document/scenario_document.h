#pragma once
// The open scenario: its value, file, modified state and undo history. Views never change the
// scenario directly; every edit goes through edit(), which validates it first (an invalid value
// is refused with the reason and nothing changes) and pushes one undo step.

#include "moe/diagnostics.h"
#include "moe/edits.h"
#include "moe/scenario.h"
#include "moe/scenario_text.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>
#include <string>

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
    /// Restores unsaved edits from a recovery file's text (Autosave) as the document of
    /// `file_path`, marked modified so that they are saved or discarded deliberately.
    Diagnostics restore(const std::string& recovery_text, const QString& file_path, int edits = 0);
    /// Edits not saved yet: the undo steps since opening, plus those restored from a recovery.
    int unsavedEdits() const;
    /// The text the scenario was opened from and its folder (what Save edits).
    ScenarioSource origin() const { return {origin_text_, origin_dir_}; }
    /// Saves atomically (temporary file + rename), keeping the file: the text it was opened from
    /// with only the changed values rewritten (comments, order and explicit defaults stay; a
    /// relative histogram path is rebased when saved to another folder). Returns an empty string
    /// or the reason.
    QString save();
    QString saveAs(const QString& path);

    /// Applies `change` to a copy of the scenario, validates it, and if valid pushes it as one
    /// undo step named `text`. Consecutive edits with the same non-empty `merge_key` merge into
    /// one step (a drag or a spin-box scrub). Returns the validation errors (nothing applied).
    Diagnostics edit(const QString& text, const std::function<void(Scenario&)>& change,
                     const QString& merge_key = {});
    /// Sets one field by its dotted path ("layout.ep") from text, as the editor and --set do.
    Diagnostics setField(const QString& path, const QString& value, const QString& merge_key = {});
    /// A typed edit (edits.h): the edited scenario, validated, or why not. `base_dir` is the
    /// scenario's folder (a relative routing histogram is relative to it).
    using Edit =
        std::function<FieldEditResult(const Scenario& scenario, const std::string& base_dir)>;
    /// Applies `edit` as one undo step named `text` (merged like edit()). Returns the errors
    /// (nothing applied) and warnings.
    Diagnostics apply(const QString& text, const Edit& edit, const QString& merge_key = {});
    /// The scenario apply(edit) would produce, or its errors; changes nothing (the drag-and-drop
    /// experiments preview a drop with it, so preview and edit cannot disagree).
    FieldEditResult preview(const Edit& edit) const;
    /// apply() of setFields (edits.h): several fields as one undo step, validated together, so
    /// fields that are only valid together (a GB200 rack needs whole racks of trays) change
    /// together.
    Diagnostics setFields(const QString& text, const std::vector<FieldAssignment>& assignments,
                          const QString& merge_key = {});
    FieldEditResult previewFields(const std::vector<FieldAssignment>& assignments) const;

signals:
    /// Just before scenarioChanged() when the document was replaced (open, reset, restore)
    /// rather than edited: what came before is another scenario, not a previous state.
    void replaced();
    /// After every change of the scenario value: edit, undo, redo, open, reset.
    void scenarioChanged();
    void modifiedChanged(bool modified);
    void filePathChanged(const QString& path);

private:
    friend class ScenarioEditCommand;
    void assign(const Scenario& scenario); ///< used by undo commands

    /// Where the scenario came from (file text, or the built-in default's), to save by editing it.
    void setOrigin(const QString& file_path);

    Scenario scenario_;
    QString file_path_;
    std::string origin_text_;
    std::string origin_dir_ = ".";
    int restored_edits_ = 0; ///< unsaved edits restored from a recovery file
    QUndoStack* undo_;
};

} // namespace moe::widgets
