#pragma once
// Memory per GPU of each pipeline stage as stacked bars (weights, gradients, optimizer states,
// activations, dispatch buffers, workspace) against the HBM line, with each stage's margin.

#include "moe_widgets/report_view.h"

#include <QString>
#include <QWidget>

#include <vector>

class QCustomPlot;
class QCPBars;
class QCPItemStraightLine;

namespace moe::widgets {

class ScenarioDocument;
class ViewState;

class MemoryChart : public QWidget, public ReportView {
    Q_OBJECT
public:
    MemoryChart(ScenarioDocument* document, ViewState* state, QWidget* parent = nullptr);
    ~MemoryChart() override;

    QString viewId() const override { return QStringLiteral("memory"); }
    QString viewTitle() const override { return tr("Memory per GPU"); }
    QWidget* widget() override { return this; }
    void showResult(const EvaluationResultPtr& result) override;
    QString exportTo(const QString& path) override;

    QCustomPlot* plot() const { return plot_; }
    int stageCount() const { return stage_count_; }
    /// Sum of the stacked bars of one stage, in bytes (read back from the plot's data).
    double stackedBytes(int stage) const;
    /// Where the HBM line is drawn, in bytes.
    double hbmLineBytes() const;

protected:
    void changeEvent(QEvent* event) override;

private:
    void rebuild(bool for_export);
    QString toolTipAt(const QPoint& pos) const;
    bool eventFilter(QObject* watched, QEvent* event) override;

    ScenarioDocument* document_;
    ViewState* state_;
    EvaluationResultPtr result_;
    QCustomPlot* plot_;
    std::vector<QCPBars*> bars_;
    QCPItemStraightLine* hbm_line_ = nullptr;
    int stage_count_ = 0;
    int selected_stage_ = -1;
};

} // namespace moe::widgets
