#pragma once
// The cluster diagram: pods of racks (racks that share leaf switches), racks of nodes, nodes of
// GPUs with their NICs and scale-up switch, leaf and spine switches, and the links between them,
// drawn from report.graph(). GPUs are coloured by the ViewState metric, links by the report's link
// utilization; hovering a GPU outlines its parallel groups, clicking it shows its experts,
// memory, load and traffic. The scene keeps one item per rack (not per GPU or link) and each
// item paints at the level of detail the zoom allows, so 2048 GPUs stay fluid.
// Racks are drawn at their capacity (cluster.nodes_per_rack slots), so a rack that holds fewer
// nodes shows its free slots; dragging a node onto another rack (or Alt+Left / Alt+Right /
// Alt+N on the selected GPU's node) edits cluster.rack_nodes as one undo step.

#include "moe/group_overlay.h"
#include "moe/placement.h"
#include "moe_widgets/common/report_view.h"
#include "moe_widgets/document/view_state.h"

#include <QPointer>
#include <QWidget>

#include <memory>
#include <optional>

class QComboBox;
class QGraphicsItem;
class QGraphicsScene;
class QGraphicsView;
class QLabel;
class QSplitter;
class QTextBrowser;
class QToolButton;

namespace moe::widgets {

class ScenarioDocument;

namespace detail {
struct TopologyModel;
class TopologyGraphicsView;
class LegendWidget;
} // namespace detail

class TopologyView : public QWidget, public ReportView {
    Q_OBJECT
public:
    /// What the items draw at a zoom: whole racks (coloured by their hottest GPU), GPU cells,
    /// or everything (labels, NICs, scale-up switches and per-GPU links).
    enum class Detail { racks, gpus, full };
    /// Which parallel groups of the hovered GPU are outlined.
    enum class HoverGroups { all, ep, tp, cp, dp, pp, etp, edp };
    Q_ENUM(HoverGroups)

    TopologyView(ScenarioDocument* document, ViewState* state, QWidget* parent = nullptr);
    ~TopologyView() override;

    QString viewId() const override { return QStringLiteral("topology"); }
    QString viewTitle() const override { return tr("Topology"); }
    QWidget* widget() override { return this; }
    void showResult(const EvaluationResultPtr& result) override;
    QString exportTo(const QString& path) override;
    /// Only the diagram (wheel zoom and hover still work): no choosers, zoom buttons or side
    /// panel. For Compare's side-by-side page, where two views share one dock.
    void setCompact(bool compact);

    /// Level of detail at the current zoom, and the one a zoom (view scale) gives.
    Detail detail() const;
    static Detail detailAt(double scale);
    QGraphicsView* graphicsView() const;
    QGraphicsScene* scene() const { return scene_; }

    /// Where a GPU's tile is in scene coordinates (empty if there is no such GPU).
    QRectF gpuSceneRect(int gpu) const;
    /// The GPU whose tile is at `pos`, or -1.
    int gpuAtScenePos(const QPointF& pos) const;
    int hoveredGpu() const;
    /// GPUs outlined because they share the hovered GPU's group of `kind` (empty when that
    /// kind is not shown, the group has one GPU, or nothing is hovered).
    QVector<int> hoverGroupMembers(GroupKind kind) const;
    /// Fill of a GPU for the current metric, and the metric value behind it (0..1 is the
    /// colour ramp; NaN when the metric does not apply).
    QColor gpuFill(int gpu) const;
    double gpuMetricValue(int gpu) const;
    /// What clicking a GPU shows (HTML): experts, memory, load, traffic.
    QString gpuDetailsHtml(int gpu) const;
    /// Plain text of the info panel.
    QString infoPanelText() const;
    /// Short text for the tooltip at a scene position (GPU, NIC, switch, link bundle, rack).
    QString toolTipAt(const QPointF& scene_pos) const;
    int sceneItemCount() const;

    /// The group overlay: every GPU filled by its group of one dimension (core: overlayGroups),
    /// with a legend naming each group and where it spans. std::nullopt shows the metric.
    void setOverlay(std::optional<GroupOverlay> overlay);
    std::optional<GroupOverlay> overlay() const;
    /// The overlay group of `gpu` (index into the core's groups), -1 without an overlay.
    int overlayGroupOf(int gpu) const;
    /// The overlay legend's lines as the side panel shows them (empty without an overlay).
    QStringList overlayLegendText() const;
    /// Exports the page (as exportTo) with `overlay` shown, whatever the view shows.
    QString exportOverlayTo(const QString& path, GroupOverlay overlay);
    /// Every overlay to `directory`/topology-<overlay>.<format> (overlay: tp, ep, edp, dp, pp,
    /// cp); returns the problems, "path: reason".
    QStringList exportOverlays(const QString& directory, const QString& format);

    /// The aggregated view of a cluster of several pods, for review slides: pod 0 drawn in
    /// full and the other pods as one "x N" summary with their summed traffic (core:
    /// tierLoadsOfRacks). Asked for with one pod, it stays off until the cluster has more.
    void setAggregated(bool on);
    bool aggregated() const;
    bool canAggregate() const;
    /// The summary's lines (empty with one pod), as drawn.
    QString aggregateSummaryText() const;
    /// Exports the page (as exportTo) aggregated, whatever the view shows: the review slide
    /// `moe-planner --export` writes as topology-aggregated.<format>.
    QString exportAggregatedTo(const QString& path);

    /// Where a node, a rack (its frame, free slots included) and the "+ new rack" drop zone
    /// after the last rack are in scene coordinates (empty when there is no such thing).
    QRectF nodeSceneRect(int node) const;
    QRectF rackSceneRect(int rack) const;
    QRectF newRackSceneRect() const;
    /// The node whose tray is at `pos`, or -1.
    int nodeAtScenePos(const QPointF& pos) const;
    /// What dropping `node` on `to_rack` (rackCount() = a new rack) would do, as the status
    /// line shows it during a drag: "Move node ..." or "Refused: <reason>"; empty when the
    /// drop would change nothing (its own rack).
    QString nodeMovePreview(int node, int to_rack) const;
    /// Moves `node` into `to_rack` (rackCount() opens a new rack) as one undo step; on a
    /// refusal nothing changes and message() says why. Returns whether it was applied.
    bool moveNode(int node, int to_rack);
    /// The last refusal of a node move, or empty.
    QString message() const { return message_; }

public slots:
    void setHoveredGpu(int gpu);
    void setHoverGroups(moe::widgets::TopologyView::HoverGroups groups);
    void fitAll();
    /// Zooms so that `gpu`'s tile is about `tile_px` screen pixels wide, centred on it.
    void zoomToGpu(int gpu, double tile_px = 56);

signals:
    void hoveredGpuChanged(int gpu);

private:
    friend class detail::TopologyGraphicsView;
    /// `keep_view`: the zoom and centre stay (only racks changed) instead of fitting the cluster.
    void rebuildScene(bool keep_view = false);
    void updateColors();
    /// The overlay's groups and legend from the core, for the current result.
    void updateOverlay();
    /// Overlay colours over the metric's fill (when an overlay is on).
    void applyOverlayColors();
    /// Repaints every item, invalidating their render caches (the model changed).
    void repaintItems();
    void updateHoverMask();
    void updateHighlight();
    void updateInfoPanel();
    /// The status line: a node drag's preview, a refused move, else the zoom and hovered GPU.
    void updateStatus();
    void applyTheme();
    void onClick(const QPointF& scene_pos);
    /// Alt+Left / Alt+Right / Alt+N: the selected GPU's node to the previous (`step` -1), the
    /// next (1) or a new rack (0).
    bool moveSelectedNode(int step);
    /// A node drag in progress: `node` under the cursor at `scene_pos` (the target follows the
    /// cursor); -1 ends it.
    void updateNodeDrag(int node, const QPointF& grab_offset, const QPointF& scene_pos);
    void dropNode(const QPointF& scene_pos);
    /// The rack a node dropped at `pos` goes to (rackCount() = the new-rack zone), or -1.
    int dropRackAt(const QPointF& pos) const;
    /// The aggregated view as asked for and possible; the scene shows its part.
    void applyAggregation();
    void setMessage(const QString& message);
    bool canDragNodes() const;
    void paintExportPage(QPainter& painter, const QRectF& page);
    bool event(QEvent* event) override;

    QPointer<ScenarioDocument> document_;
    QPointer<ViewState> state_;
    std::unique_ptr<detail::TopologyModel> model_;
    QGraphicsScene* scene_ = nullptr;
    detail::TopologyGraphicsView* view_ = nullptr;
    QSplitter* splitter_ = nullptr;
    QTextBrowser* info_ = nullptr;
    detail::LegendWidget* legend_ = nullptr;
    QComboBox* metric_box_ = nullptr;
    QComboBox* groups_box_ = nullptr;
    QComboBox* overlay_box_ = nullptr;
    QLabel* status_ = nullptr;
    QToolButton* aggregate_button_ = nullptr;
    bool aggregate_wanted_ = false; ///< the user's choice (on only with two pods or more)
    HoverGroups hover_groups_ = HoverGroups::all;
    QString shape_key_; ///< cluster shape the scene was built for; rebuilt only when it changes
    QString message_;   ///< the last refused node move
    QGraphicsItem* drag_item_ = nullptr; ///< the new-rack zone and a node drag's ghost
};

} // namespace moe::widgets
