#include "moe_widgets/document/scenario_document.h"

#include "moe/atomic_file.h"
#include "moe/edits.h"
#include "moe/scenario_io.h"
#include "moe/scenario_text.h"
#include "moe/validate.h"

#include <QDir>
#include <QFileInfo>
#include <QHashFunctions>
#include <QUndoCommand>
#include <QUndoStack>

namespace moe::widgets {

namespace {

/// QUndoStack only offers to merge commands with equal int ids; the command then checks the
/// whole key, so two keys that hash alike simply do not merge.
int mergeId(const QString& merge_key) {
    if (merge_key.isEmpty())
        return -1;
    return static_cast<int>(qHash(merge_key) & 0x7fffffffU);
}

} // namespace

/// One edit: the scenario before and after. Undo and redo swap whole values, which are small
/// (no report inside), so there is no diffing to get wrong.
class ScenarioEditCommand : public QUndoCommand {
public:
    ScenarioEditCommand(ScenarioDocument* document, const QString& text, Scenario before,
                        Scenario after, const QString& merge_key)
        : QUndoCommand(text)
        , document_(document)
        , before_(std::move(before))
        , after_(std::move(after))
        , merge_key_(merge_key)
        , id_(mergeId(merge_key)) {}

    void undo() override { document_->assign(before_); }
    void redo() override { document_->assign(after_); }
    int id() const override { return id_; }

    bool mergeWith(const QUndoCommand* other) override {
        const auto* next = dynamic_cast<const ScenarioEditCommand*>(other);
        if (!next || next->merge_key_ != merge_key_)
            return false;
        after_ = next->after_;
        setText(next->text());
        // A scrub that ends where it started leaves nothing to undo.
        setObsolete(after_ == before_);
        return true;
    }

private:
    ScenarioDocument* document_;
    Scenario before_;
    Scenario after_;
    QString merge_key_;
    int id_;
};

ScenarioDocument::ScenarioDocument(QObject* parent)
    : QObject(parent)
    , scenario_(defaultScenario())
    , undo_(new QUndoStack(this)) {
    connect(undo_, &QUndoStack::cleanChanged, this,
            [this](bool clean) { emit modifiedChanged(!clean); });
}

ScenarioDocument::~ScenarioDocument() = default;

QString ScenarioDocument::displayName() const {
    if (!file_path_.isEmpty())
        return QFileInfo(file_path_).fileName();
    return QString::fromStdString(scenario_.name);
}

bool ScenarioDocument::isModified() const {
    return !undo_->isClean();
}

void ScenarioDocument::setOrigin(const QString& file_path) {
    origin_text_.clear();
    origin_dir_ = file_path.isEmpty() ? QDir::currentPath().toStdString()
                                      : QFileInfo(file_path).absolutePath().toStdString();
    if (!file_path.isEmpty())
        readFileBounded(file_path.toStdString(), origin_text_);
    else if (scenario_ == defaultScenario())
        origin_text_ = defaultScenarioYaml();
}

void ScenarioDocument::reset(const Scenario& scenario, const QString& file_path) {
    undo_->clear();
    restored_edits_ = 0;
    scenario_ = scenario;
    setOrigin(file_path);
    const QString absolute =
        file_path.isEmpty() ? QString() : QFileInfo(file_path).absoluteFilePath();
    if (absolute != file_path_) {
        file_path_ = absolute;
        emit filePathChanged(file_path_);
    }
    emit replaced();
    emit scenarioChanged();
}

Diagnostics ScenarioDocument::open(const QString& path) {
    LoadResult loaded = loadScenarioFile(path.toStdString());
    if (!loaded.ok())
        return loaded.diagnostics;
    reset(*loaded.scenario, path);
    return loaded.diagnostics; // warnings only
}

int ScenarioDocument::unsavedEdits() const {
    return isModified() ? restored_edits_ + undo_->index() : 0;
}

Diagnostics ScenarioDocument::restore(const std::string& recovery_text, const QString& file_path,
                                      int edits) {
    const std::string dir = file_path.isEmpty() ? QDir::currentPath().toStdString()
                                                : QFileInfo(file_path).absolutePath().toStdString();
    LoadResult loaded = loadScenarioText(recovery_text, "recovery", dir);
    if (!loaded.ok())
        return loaded.diagnostics;
    reset(*loaded.scenario, file_path);
    // The restored edits are not in the file yet.
    restored_edits_ = edits;
    undo_->resetClean();
    emit modifiedChanged(true);
    return loaded.diagnostics;
}

QString ScenarioDocument::save() {
    if (file_path_.isEmpty())
        return tr("the scenario has no file yet; use Save As");
    return saveAs(file_path_);
}

QString ScenarioDocument::saveAs(const QString& path) {
    const std::string problem =
        saveScenarioText(scenario_, {origin_text_, origin_dir_}, path.toStdString());
    if (!problem.empty())
        return QString::fromStdString(problem);
    setOrigin(path);
    restored_edits_ = 0;
    const QString absolute = QFileInfo(path).absoluteFilePath();
    if (absolute != file_path_) {
        file_path_ = absolute;
        emit filePathChanged(file_path_);
    }
    undo_->setClean();
    return {};
}

Diagnostics ScenarioDocument::edit(const QString& text,
                                   const std::function<void(Scenario&)>& change,
                                   const QString& merge_key) {
    Scenario next = scenario_;
    change(next);
    Diagnostics diagnostics = validateScenario(next);
    if (hasErrors(diagnostics) || next == scenario_)
        return diagnostics;
    undo_->push(new ScenarioEditCommand(this, text, scenario_, std::move(next), merge_key));
    return diagnostics;
}

Diagnostics ScenarioDocument::setField(const QString& path, const QString& value,
                                       const QString& merge_key) {
    const std::string typed = value.toStdString();
    return apply(
        tr("Set %1 = %2").arg(path, value.simplified()),
        [&](const Scenario& scenario, const std::string& base_dir) {
            return setScenarioField(scenario, path.toStdString(), typed, base_dir);
        },
        merge_key);
}

FieldEditResult ScenarioDocument::preview(const Edit& edit) const {
    // A relative routing histogram is relative to the scenario's file.
    const QString base_dir =
        file_path_.isEmpty() ? QDir::currentPath() : QFileInfo(file_path_).absolutePath();
    return edit(scenario_, base_dir.toStdString());
}

Diagnostics ScenarioDocument::apply(const QString& text, const Edit& edit,
                                    const QString& merge_key) {
    FieldEditResult result = preview(edit);
    if (!result.ok() || *result.scenario == scenario_)
        return result.diagnostics;
    undo_->push(
        new ScenarioEditCommand(this, text, scenario_, std::move(*result.scenario), merge_key));
    return result.diagnostics;
}

FieldEditResult
ScenarioDocument::previewFields(const std::vector<FieldAssignment>& assignments) const {
    return preview([&](const Scenario& scenario, const std::string& base_dir) {
        return moe::setFields(scenario, assignments, base_dir);
    });
}

Diagnostics ScenarioDocument::setFields(const QString& text,
                                        const std::vector<FieldAssignment>& assignments,
                                        const QString& merge_key) {
    return apply(
        text,
        [&](const Scenario& scenario, const std::string& base_dir) {
            return moe::setFields(scenario, assignments, base_dir);
        },
        merge_key);
}

void ScenarioDocument::assign(const Scenario& scenario) {
    scenario_ = scenario;
    emit scenarioChanged();
}

} // namespace moe::widgets
