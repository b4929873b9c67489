#pragma once
// The step-time breakdown as stacked horizontal bars (QCustomPlot): the whole step on top, then
// each pipeline stage's share of it (its per-micro-batch time x micro-batches). The step bar
// adds what only the pipeline as a whole pays: the bubble, PP transfers, the exposed gradient
// sync and the optimizer. Colours are the shared step-item palette.

#include "moe_widgets/charts/stage_chart.h"

#include <QVector>

namespace moe::widgets {

class BreakdownChart : public StageChart {
    Q_OBJECT
public:
    BreakdownChart(ScenarioDocument* document, ViewState* state, QWidget* parent = nullptr);

    QString viewId() const override { return QStringLiteral("breakdown"); }
    QString viewTitle() const override { return tr("Breakdown"); }

    /// Bar categories top to bottom: "Step", then one per pipeline stage.
    int categoryCount() const { return static_cast<int>(labels_.size()); }
    QString categoryLabel(int category) const;
    /// The categories whose label the axis shows at the current size (the step always; stages
    /// thinned out evenly when their labels would overlap).
    QVector<int> labelledCategories() const;
    /// Bar values are seconds x valueScale() (1000 when the chart is in milliseconds).
    double valueScale() const { return scale_; }
    /// Sum of the stacked bars of one category, in seconds (read back from the plot's data).
    double stackedSeconds(int category) const;

private:
    void rebuild(bool for_export) override;
    QString toolTipAt(const QPoint& pos) const override;
    QString exportTitle() const override;
    int labelEvery(double px_per_category) const;
    void setStageLabels(int every);
    void checkLabelRoom();

    std::vector<QString> labels_;
    QVector<int> labelled_;
    int label_every_ = 1;
    bool roomy_ = true; ///< room for "Stage 3 · layers 12–15", else "Stage 3"
    int label_height_px_ = 16;
    QString explanation_; ///< the subtitle in full (the tooltip outside the bars)
    double scale_ = 1.0;
};

} // namespace moe::widgets
