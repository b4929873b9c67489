#pragma once
// The warnings panel: the report's design warnings (EP crossing nodes, memory that does not fit,
// a straggler...) and, above them, the problems of a file that failed to open. Clicking a
// warning highlights the GPUs it is about in the other views (ViewState::setHighlight); clicking
// a file problem reveals its field in the editor.

#include "moe/diagnostics.h"
#include "moe_widgets/common/report_view.h"

#include <QAbstractTableModel>
#include <QPointer>
#include <QVector>
#include <QWidget>

class QLabel;
class QTableView;

namespace moe::widgets {

class ScenarioDocument;
class ViewState;

class WarningsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { SeverityColumn, MessageColumn, GpusColumn, ColumnCount };
    enum Role {
        GpusRole = Qt::UserRole + 1, ///< QVariantList of GPU ids
        CodeRole,                    ///< stable warning code ("ep-crosses-nodes"), or "file"
        FieldRole,                   ///< dotted field path of a file problem, or empty
        SeverityRole,                ///< "error", "critical", "warning", "info"
    };
    struct Item {
        QString severity; ///< "error", "critical", "warning", "info"
        QString code;
        QString message;
        QString location; ///< "file:line:col" of a file problem
        QString field;
        QVector<int> gpus;
    };

    explicit WarningsModel(QObject* parent = nullptr);

    /// Replaces the design warnings (file problems stay until cleared).
    void setReport(const EvaluationResultPtr& result);
    /// Shows the problems of a file that did not open, above the design warnings.
    void setLoadProblems(const Diagnostics& diagnostics);
    void clearLoadProblems();
    const QVector<Item>& items() const { return items_; }
    int loadProblemCount() const { return load_count_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    void rebuild();

    QVector<Item> load_items_;
    QVector<Item> design_items_;
    QVector<Item> items_; ///< load problems, then design warnings by severity
    int load_count_ = 0;
};

class WarningsView : public QWidget, public ReportView {
    Q_OBJECT
public:
    WarningsView(ScenarioDocument* document, ViewState* state, QWidget* parent = nullptr);

    QString viewId() const override { return QStringLiteral("warnings"); }
    QString viewTitle() const override { return tr("Warnings"); }
    QWidget* widget() override { return this; }
    void showResult(const EvaluationResultPtr& result) override;
    QString exportTo(const QString& path) override;

    WarningsModel* model() const { return model_; }
    QTableView* tableView() const { return table_; }
    void setLoadProblems(const Diagnostics& diagnostics, const QString& file);
    void clearLoadProblems();

public slots:
    /// What a click on `row` does: highlight its GPUs (or clear), reveal its field.
    void activateRow(int row);

signals:
    void fieldActivated(const QString& path);

private:
    void updateSummary();
    void paintPage(QPainter& painter, const QRectF& page) const;

    QPointer<ScenarioDocument> document_;
    QPointer<ViewState> state_;
    WarningsModel* model_;
    QLabel* summary_;
    QTableView* table_;
    EvaluationResultPtr result_;
    QString failed_file_;
};

} // namespace moe::widgets
