#pragma once
// Time, cost and reliability of the run (moe::Economics): goodput against the checkpoint
// interval with the Young/Daly optimum marked, and a table of what the run costs (days, cost,
// energy, power, capital, failures). Renders the report only; the physics is in economics.cpp.

#include "moe_widgets/common/report_view.h"

#include <QString>
#include <QWidget>

class QCustomPlot;
class QCPGraph;
class QCPItemStraightLine;
class QTableWidget;

namespace moe::widgets {

class ReliabilityView : public QWidget, public ReportView {
    Q_OBJECT
public:
    explicit ReliabilityView(QWidget* parent = nullptr);
    ~ReliabilityView() override;

    QString viewId() const override { return QStringLiteral("reliability"); }
    QString viewTitle() const override { return tr("Time and cost"); }
    QWidget* widget() override { return this; }
    void showResult(const EvaluationResultPtr& result) override;
    QString exportTo(const QString& path) override;

    QCustomPlot* plot() const { return plot_; }
    QTableWidget* costTable() const { return table_; }
    /// Points of the goodput-vs-interval curve.
    int curvePointCount() const;
    /// Where the optimum marker stands, in seconds of training between checkpoints (0 = none).
    double markedOptimum_s() const;

protected:
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void rebuild(bool for_export);
    void fillTable();

    EvaluationResultPtr result_;
    QCustomPlot* plot_;
    QTableWidget* table_;
    QCPGraph* curve_ = nullptr;
    QCPItemStraightLine* optimum_line_ = nullptr;
};

} // namespace moe::widgets
