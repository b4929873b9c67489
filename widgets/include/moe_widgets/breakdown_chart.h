#pragma once
// The step-time breakdown as stacked horizontal bars (QCustomPlot): the whole step on top, then
// each pipeline stage's share of it (its per-micro-batch time x micro-batches). The step bar
// adds what only the pipeline as a whole pays: the bubble, PP transfers, the exposed gradient
// sync and the optimizer. Colours are the shared step-item palette.

#include "moe_widgets/report_view.h"

#include <QString>
#include <QWidget>

#include <vector>

class QCustomPlot;
class QCPBars;

namespace moe::widgets {

class ScenarioDocument;
class ViewState;

class BreakdownChart : public QWidget, public ReportView {
    Q_OBJECT
public:
    BreakdownChart(ScenarioDocument* document, ViewState* state, QWidget* parent = nullptr);
    ~BreakdownChart() override;

    QString viewId() const override { return QStringLiteral("breakdown"); }
    QString viewTitle() const override { return tr("Step breakdown"); }
    QWidget* widget() override { return this; }
    void showResult(const EvaluationResultPtr& result) override;
    QString exportTo(const QString& path) override;

    QCustomPlot* plot() const { return plot_; }
    /// Bar categories top to bottom: "Step", then one per pipeline stage.
    int categoryCount() const { return static_cast<int>(labels_.size()); }
    QString categoryLabel(int category) const;
    /// Bar values are seconds x valueScale() (1000 when the chart is in milliseconds).
    double valueScale() const { return scale_; }
    /// Sum of the stacked bars of one category, in seconds (read back from the plot's data).
    double stackedSeconds(int category) const;

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
    std::vector<QCPBars*> bars_; ///< one per step item, stacked in item order
    std::vector<QString> labels_;
    double scale_ = 1.0;
    int selected_stage_ = -1;
};

} // namespace moe::widgets
