#pragma once
// Memory per GPU of each pipeline stage as stacked bars (weights, gradients, optimizer states,
// activations, dispatch buffers, workspace) against the HBM line, with each stage's margin.

#include "moe_widgets/charts/stage_chart.h"

class QCPItemStraightLine;

namespace moe::widgets {

class MemoryChart : public StageChart {
    Q_OBJECT
public:
    MemoryChart(ScenarioDocument* document, ViewState* state, QWidget* parent = nullptr);

    QString viewId() const override { return QStringLiteral("memory"); }
    QString viewTitle() const override { return tr("Memory"); }

    int stageCount() const { return stage_count_; }
    /// Sum of the stacked bars of one stage, in bytes (read back from the plot's data).
    double stackedBytes(int stage) const;
    /// Where the HBM line is drawn, in bytes.
    double hbmLineBytes() const;

private:
    void rebuild(bool for_export) override;
    QString toolTipAt(const QPoint& pos) const override;
    QString exportTitle() const override;

    QCPItemStraightLine* hbm_line_ = nullptr;
    int stage_count_ = 0;
};

} // namespace moe::widgets
