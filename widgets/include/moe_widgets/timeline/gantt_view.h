#pragma once
// The step timeline (Gantt): the core's simulated step (moe/timeline.h) drawn as rows grouped
// pipeline stage > node > GPU (collapsible). Each row has a compute lane (spans coloured by
// kind with the shared palette, a strip on top telling forward from backward, micro-batch
// labels where they fit), a communication lane (all-to-all, TP, CP, PP sends) and a thin
// gradient-sync lane. Stage and node rows show the shared simulated row of their token stream;
// GPU rows show the GPU's own schedule (its expert GEMMs at its own load, then "wait" for its
// EP group's hottest GPU). Zoom and pan on time; spans narrower than a pixel fold into a band
// whose colours show what the folded time was spent on and whose height shows how busy it was;
// the critical path outlines the spans it runs through (in the text colour, no fill: no span
// colour can pass for it) with a dashed connector where it moves to another stage. The header
// shows one step time, the simulated one the chart draws.

#include "moe/timeline.h"
#include "moe_widgets/common/report_view.h"

#include <QString>
#include <QWidget>

#include <memory>
#include <vector>

class QLabel;
class QToolButton;

namespace moe::widgets {

class ScenarioDocument;
class ViewState;

/// Maps time to x and back for the visible time window [start_s, end_s] drawn over
/// [x0, x0 + width] pixels; zooming and panning return a new window clamped to [0, total_s].
struct GanttTimeAxis {
    double start_s = 0;
    double end_s = 1;
    double x0 = 0;
    double width = 1;

    double span_s() const { return end_s - start_s; }
    double mapTimeToX(double time_s) const;
    double mapXToTime(double x) const;

    /// The whole [0, total_s] over the pixels.
    static GanttTimeAxis fit(double total_s, double x0, double width);
    /// Zooms by `factor` (> 1 magnifies) keeping the time under `anchor_x` where it is; never
    /// narrower than `min_span_s` nor wider than [0, total_s].
    GanttTimeAxis zoomed(double factor, double anchor_x, double total_s, double min_span_s) const;
    /// Moves the window by `dx` pixels (positive = later times come into view), clamped.
    GanttTimeAxis panned(double dx, double total_s) const;
    /// Same time window over other pixels.
    GanttTimeAxis resized(double new_x0, double new_width) const;
};

/// A "nice" tick step (1, 2 or 5 x 10^k seconds) giving at most `max_ticks` ticks over span_s.
double niceTickStep(double span_s, int max_ticks);

struct GanttRow {
    enum class Level { stage, node, gpu };
    Level level = Level::stage;
    int stage = 0;
    int partner_stage = -1; ///< DualPipe: the stage whose chunk the rank also runs; else -1
    int node = -1;
    int gpu = -1;            ///< GPU rows only
    std::vector<int> gpus;   ///< GPUs the row stands for
    int timeline_row = -1;   ///< the simulated row drawn (stage and node rows)
    int subtree_end = 0;     ///< index after the row's last descendant
    double expert_ratio = 1; ///< expert tokens / EP-group mean, averaged over its GPUs
    bool hottest = false;    ///< holds the report's hottest GPU
    QString label;
};

class GanttCanvas;
class GanttLegend;

class GanttView : public QWidget, public ReportView {
    Q_OBJECT
public:
    GanttView(ScenarioDocument* document, ViewState* state, QWidget* parent = nullptr);
    ~GanttView() override;

    QString viewId() const override { return QStringLiteral("gantt"); }
    QString viewTitle() const override { return tr("Step timeline"); }
    QWidget* widget() override { return this; }
    /// Uses result->timeline when the evaluator simulated it, otherwise simulates here.
    void showResult(const EvaluationResultPtr& result) override;
    QString exportTo(const QString& path) override;

    /// The simulated step drawn (null before the first result).
    const Timeline* timeline() const;
    /// Every row (stage, node and GPU rows) in tree order.
    const std::vector<GanttRow>& rows() const;
    /// Indices into rows() currently shown (children of collapsed rows are hidden).
    const std::vector<int>& visibleRows() const;
    bool isExpanded(int row) const;
    void setExpanded(int row, bool expanded);
    void expandAll();
    void collapseAll();
    /// Row of `gpu`, expanding its stage and node so it is visible, and scrolling to it.
    int revealGpu(int gpu);

    const GanttTimeAxis& timeAxis() const;
    void zoomTime(double factor, double anchor_x);
    void fitTime();
    void setShowCriticalPath(bool show);

    /// Tooltip text at a point of the chart canvas (empty where there is nothing).
    QString toolTipAt(const QPoint& canvas_pos) const;
    /// The widget that paints rows and receives mouse events (for tests and screenshots).
    QWidget* canvas() const;

private:
    void rebuildRows();
    void updateCaption();
    void applyHighlight();

    ScenarioDocument* document_;
    ViewState* state_;
    EvaluationResultPtr result_;
    GanttCanvas* canvas_;
    QLabel* caption_;
    GanttLegend* legend_;
    QToolButton* critical_button_;
};

} // namespace moe::widgets
