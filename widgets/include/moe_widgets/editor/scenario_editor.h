#pragma once
// The scenario editor: every field of the format, grouped by section (cluster, model, training,
// layout, routing), generated from moe::scenarioFields() with units, ranges and tooltips. Edits
// go through ScenarioDocument::setField, so a value is accepted exactly when a file with it would
// load; a refused value is shown inline with the reason, never in a dialog. Scrubbing a spin box
// applies every step live and undoes as one step.

#include <QAbstractItemModel>
#include <QHash>
#include <QPointer>
#include <QString>
#include <QWidget>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTreeView;

namespace moe::widgets {

class ScenarioDocument;
class ViewState;

/// Tree model: groups (cluster, model...), their sub-sections (scale_up...) and fields.
/// Columns: field, value, unit.
class ScenarioFieldsModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { FieldColumn, ValueColumn, UnitColumn, ColumnCount };
    enum Role {
        FieldPathRole = Qt::UserRole + 1, ///< dotted path of a field row; empty for groups
        RefusalRole,                      ///< the reason the last value was refused, or empty
    };

    explicit ScenarioFieldsModel(ScenarioDocument* document, QObject* parent = nullptr);

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

    /// Sets a field from text through the document. Returns true when the scenario accepted it
    /// (or already had it); otherwise remembers the reason (RefusalRole) and emits refused().
    bool setFieldValue(const QString& path, const QString& value, const QString& merge_key = {});
    QModelIndex indexOfField(const QString& path, int column = ValueColumn) const;
    QString refusal(const QString& path) const { return refusals_.value(path); }

signals:
    void refused(const QString& path, const QString& value, const QString& reason);
    void accepted(const QString& path);

private:
    void onScenarioChanged();
    void refreshValues();

    QPointer<ScenarioDocument> document_;
    /// The tree; node 0 is the root, an index's internal id is its node.
    struct Node {
        int parent = 0;
        int row = 0;
        QString title;  ///< group id, section key or field key
        int field = -1; ///< index into scenarioFields(); -1 for groups and sections
        bool group = false;
        QVector<int> children;
    };
    int nodeOf(const QModelIndex& index) const;

    QVector<Node> nodes_;
    QHash<QString, int> field_nodes_;  ///< path -> node
    QVector<bool> applies_;            ///< per field: used by the scenario as it stands
    QStringList values_;               ///< per field: the value shown
    QHash<QString, QString> refusals_; ///< path -> reason
};

class ScenarioEditor : public QWidget {
    Q_OBJECT
public:
    ScenarioEditor(ScenarioDocument* document, ViewState* state, QWidget* parent = nullptr);

    ScenarioFieldsModel* model() const { return model_; }
    QSortFilterProxyModel* proxyModel() const { return proxy_; }
    QTreeView* treeView() const { return tree_; }
    /// The inline problem line under the tree (empty when the last edit was accepted).
    QString problemText() const;

public slots:
    /// Expands the field's group, scrolls to it and selects it (a clicked load error).
    void revealField(const QString& path);
    void setFilter(const QString& text);

private:
    void showRefusal(const QString& path, const QString& value, const QString& reason);

    QPointer<ScenarioDocument> document_;
    ScenarioFieldsModel* model_;
    QSortFilterProxyModel* proxy_;
    QLineEdit* filter_;
    QTreeView* tree_;
    QLabel* problem_;
};

} // namespace moe::widgets
