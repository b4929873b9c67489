#pragma once
// The expert-load heatmap: token slots per GPU and MoE layer (or per expert and MoE layer) in
// one training step's routing sample, from report.load. The hottest cell is marked, tooltips
// give exact counts, and "Next step" asks for the next routing resample so the user sees the
// load move (the main window re-evaluates; this view only asks).

#include "moe_widgets/common/report_view.h"
#include "moe_widgets/document/view_state.h"

#include <QPointer>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <vector>

class QCPColorMap;
class QCPColorScale;
class QCPItemStraightLine;
class QCPItemText;
class QCPItemTracer;
class QCPTextElement;
class QComboBox;
class QCustomPlot;
class QLabel;
class QPushButton;
class QToolButton;

namespace moe::widgets {

class ScenarioDocument;

class HeatmapView : public QWidget, public ReportView {
    Q_OBJECT
public:
    enum class Mode { gpu_by_layer, expert_by_layer };
    Q_ENUM(Mode)

    HeatmapView(ScenarioDocument* document, ViewState* state, QWidget* parent = nullptr);
    ~HeatmapView() override;

    QString viewId() const override { return QStringLiteral("heatmap"); }
    QString viewTitle() const override { return tr("Expert load"); }
    QWidget* widget() override { return this; }
    void showResult(const EvaluationResultPtr& result) override;
    QString exportTo(const QString& path) override;

    Mode mode() const { return mode_; }
    QCustomPlot* plot() const { return plot_; }
    QPushButton* nextStepButton() const { return next_; }
    /// Matrix shown: columns are GPUs (or experts), rows MoE layers.
    int columns() const { return columns_; }
    int rows() const { return rows_; }
    /// Token slots per micro-batch in a cell; NaN where the GPU's stage does not hold the layer.
    double cellValue(int column, int row) const;
    /// The tooltip text for a cell (exact token counts).
    QString cellToolTip(int column, int row) const;
    /// The marked hottest cell (-1 when there is none).
    int markedColumn() const { return hot_column_; }
    int markedRow() const { return hot_row_; }
    /// Routing step of the result shown.
    uint64_t routingStep() const;
    /// The one-line summary above the plot.
    QString summaryText() const;

public slots:
    void setMode(moe::widgets::HeatmapView::Mode mode);
    /// Asks for the next routing resample: ViewState::setRoutingStep(step + 1) and
    /// resampleRequested(step + 1).
    void requestNextStep();
    /// Asks for routing step 0 again.
    void requestFirstStep();

signals:
    /// The user asked to see routing step `routing_step` (the main window re-evaluates with it).
    void resampleRequested(uint64_t routing_step);

private:
    void rebuild();
    void updateMarkers();
    void placeHotLabel();
    void applyTheme(bool dark);
    void onMouseMove(QMouseEvent* event);
    bool event(QEvent* event) override;

    QPointer<ScenarioDocument> document_;
    QPointer<ViewState> state_;
    EvaluationResultPtr result_;
    Mode mode_ = Mode::gpu_by_layer;

    QComboBox* mode_box_ = nullptr;
    QPushButton* next_ = nullptr;
    QToolButton* first_ = nullptr;
    QLabel* summary_ = nullptr;
    QCustomPlot* plot_ = nullptr;
    QCPTextElement* title_ = nullptr;
    QCPTextElement* footer_ = nullptr;
    QCPColorMap* map_ = nullptr;
    QCPColorScale* scale_ = nullptr;
    QCPItemTracer* hot_marker_ = nullptr;
    QCPItemText* hot_label_ = nullptr;
    QCPItemStraightLine* selected_line_ = nullptr;

    int columns_ = 0;
    int rows_ = 0;
    std::vector<double> cells_; ///< row-major: cells_[row * columns_ + column]
    std::vector<double> row_mean_;
    int hot_column_ = -1;
    int hot_row_ = -1;
    bool dark_ = false;
    QString hot_long_, hot_short_; ///< the hottest cell's label, in full and short
    QString export_title_;  ///< exports' title and footnote (on screen the dock title and the
    QString export_footer_; ///< toolbar summary say it)
};

} // namespace moe::widgets
