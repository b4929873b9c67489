#pragma once
// The expert-load heatmap: token slots per GPU and MoE layer (or per expert and MoE layer) in
// one training step's routing sample, from report.load. The hottest cell is marked, tooltips
// give exact counts, and "Next step" asks for the next routing resample so the user sees the
// load move (the main window re-evaluates; this view only asks).

#include "moe/load_scale.h"
#include "moe/load_stragglers.h"
#include "moe_widgets/common/report_view.h"
#include "moe_widgets/document/view_state.h"

#include <QColor>
#include <QPointer>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <utility>
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
class QTableWidget;
class QToolButton;

namespace moe::widgets {

class ScenarioDocument;
namespace charts {
class StragglersTable;
}

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
    /// Matrix shown: rows are MoE layers; columns the experts, or (GPU mode, the stage view)
    /// column k = the k-th GPU by id of the pipeline stage holding the row's layer (with PP=1,
    /// GPU k), so every cell is a GPU holding its layer.
    int columns() const { return columns_; }
    int rows() const { return rows_; }
    /// Token slots per micro-batch in a cell (NaN only past a narrower stage's GPUs).
    double cellValue(int column, int row) const;
    /// The cell's load over its layer's mean (core: gpuLoadRatio), what its colour shows.
    double cellRatio(int column, int row) const;
    /// The colour the cell is drawn in: the shared load scale (loadRatioColor).
    QColor cellColor(int column, int row) const;
    /// The MoE layer of a row: the row itself, except that a PP>1 stage view groups the rows by
    /// the stage holding them (interleaved and DualPipe stages hold non-adjacent layers).
    int layerOfRow(int row) const;
    /// GPU mode: the GPU of a cell (-1 in expert mode or outside).
    int cellGpu(int column, int row) const;
    /// The hot end of the colour scale (× layer mean; the cool end is its inverse).
    double scaleHigh() const { return scale_high_; }
    /// The top stragglers listed under the map (core: topStragglers), GPU mode.
    const std::vector<LoadStraggler>& stragglers() const { return top_; }
    QTableWidget* stragglersTable() const;
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
    void clearMatrix();
    void showEmpty(); ///< no result, or a dense model
    void updateMarkers();
    void placeHotLabel();
    int columnOfGpu(int gpu, int row) const;
    std::pair<int, int> cellOfGpu(int gpu, int layer) const;
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

    int columns_ = 0;
    int rows_ = 0;
    std::vector<double> cells_;      ///< row-major: cells_[row * columns_ + column]
    std::vector<double> ratios_;     ///< the same cells over their layer's mean
    std::vector<int> gpu_of_;        ///< GPU mode: each cell's GPU
    std::vector<int> column_of_gpu_; ///< GPU mode: each GPU's column (in its stage's rows)
    std::vector<int> row_layer_;
    std::vector<LoadStraggler> top_;
    charts::StragglersTable* stragglers_ = nullptr;
    double scale_high_ = kLoadScaleMinHigh;
    std::vector<double> row_mean_;
    int hot_column_ = -1;
    int hot_row_ = -1;
    bool dark_ = false;
    QString hot_long_, hot_short_; ///< the hottest cell's label, in full and short
    QString export_title_;  ///< exports' title and footnote (on screen the dock title and the
    QString export_footer_; ///< toolbar summary say it)
};

} // namespace moe::widgets
