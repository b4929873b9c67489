#include "moe_widgets/topology/topology_view.h"

#include "common/view_export.h"
#include "experiments/experiment_support.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/scenario_document.h"
#include "topology/topology_graphics_view.h"
#include "topology/topology_items.h"
#include "topology/topology_legend.h"
#include "topology/topology_model.h"

#include <QApplication>
#include <QComboBox>
#include <QEvent>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLabel>
#include <QLinearGradient>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QStyleOptionGraphicsItem>
#include <QTextBrowser>
#include <QTextDocument>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

namespace moe::widgets {

// --- TopologyView -----------------------------------------------------------------------------

TopologyView::TopologyView(ScenarioDocument* document, ViewState* state, QWidget* parent)
    : QWidget(parent)
    , document_(document)
    , state_(state)
    , model_(std::make_unique<TopologyModel>()) {
    setObjectName(QStringLiteral("TopologyView"));
    scene_ = new QGraphicsScene(this);
    scene_->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
    view_ = new detail::TopologyGraphicsView(this, scene_);

    metric_box_ = new QComboBox(this);
    metric_box_->addItem(tr("Expert load"), static_cast<int>(GpuMetric::expert_load));
    metric_box_->addItem(tr("Memory use"), static_cast<int>(GpuMetric::memory_use));
    metric_box_->addItem(tr("Idle time"), static_cast<int>(GpuMetric::idle_time));
    metric_box_->addItem(tr("Traffic"), static_cast<int>(GpuMetric::traffic));
    metric_box_->setToolTip(tr("What the GPU fill shows"));
    groups_box_ = new QComboBox(this);
    groups_box_->addItem(tr("All groups"), static_cast<int>(HoverGroups::all));
    groups_box_->addItem(tr("EP"), static_cast<int>(HoverGroups::ep));
    groups_box_->addItem(tr("TP"), static_cast<int>(HoverGroups::tp));
    groups_box_->addItem(tr("CP"), static_cast<int>(HoverGroups::cp));
    groups_box_->addItem(tr("DP"), static_cast<int>(HoverGroups::dp));
    groups_box_->addItem(tr("PP"), static_cast<int>(HoverGroups::pp));
    groups_box_->addItem(tr("Expert TP"), static_cast<int>(HoverGroups::etp));
    groups_box_->addItem(tr("Expert DP"), static_cast<int>(HoverGroups::edp));
    groups_box_->setToolTip(tr("Which parallel groups of the GPU under the mouse are outlined"));
    auto* fit = new QToolButton(this);
    fit->setText(tr("Fit"));
    fit->setToolTip(tr("Show the whole cluster"));
    auto* zoom_in = new QToolButton(this);
    zoom_in->setText(QStringLiteral("+"));
    zoom_in->setToolTip(tr("Zoom in (mouse wheel)"));
    auto* zoom_out = new QToolButton(this);
    zoom_out->setText(QStringLiteral("−"));
    zoom_out->setToolTip(tr("Zoom out (mouse wheel)"));
    auto* legend = new QToolButton(this);
    legend->setText(tr("Legend"));
    legend->setCheckable(true);
    legend->setChecked(true);
    status_ = new QLabel(this);
    status_->setTextFormat(Qt::RichText);
    status_->setMinimumWidth(50);
    status_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 4, 6, 2);
    bar->addWidget(new QLabel(tr("Fill"), this));
    bar->addWidget(metric_box_);
    bar->addSpacing(12);
    bar->addWidget(new QLabel(tr("Hover"), this));
    bar->addWidget(groups_box_);
    bar->addSpacing(12);
    bar->addWidget(status_, 1);
    bar->addWidget(zoom_out);
    bar->addWidget(zoom_in);
    bar->addWidget(fit);
    bar->addWidget(legend);

    auto* side = new QWidget(this);
    info_ = new QTextBrowser(side);
    info_->setOpenLinks(false);
    info_->setFrameShape(QFrame::NoFrame);
    // The legend scrolls when the dock is shorter than it, instead of being cut off.
    auto* legend_scroll = new QScrollArea(side);
    legend_scroll->setFrameShape(QFrame::NoFrame);
    legend_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    legend_scroll->setWidgetResizable(true);
    legend_ = new detail::LegendWidget(model_.get(), &hover_groups_, legend_scroll);
    legend_scroll->setWidget(legend_);
    auto* side_layout = new QVBoxLayout(side);
    side_layout->setContentsMargins(0, 0, 0, 0);
    side_layout->setSpacing(0);
    side_layout->addWidget(info_, 2);
    side_layout->addWidget(legend_scroll, 3);
    side->setMinimumWidth(150);
    splitter_ = new QSplitter(Qt::Horizontal, this);
    splitter_->addWidget(view_);
    splitter_->addWidget(side);
    splitter_->setCollapsible(0, false);
    splitter_->setStretchFactor(0, 4);
    splitter_->setStretchFactor(1, 1);
    splitter_->setSizes({900, 280});

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(bar);
    layout->addWidget(splitter_, 1);

    connect(fit, &QToolButton::clicked, this, &TopologyView::fitAll);
    connect(zoom_in, &QToolButton::clicked, this, [this] { view_->zoomBy(1.5); });
    connect(zoom_out, &QToolButton::clicked, this, [this] { view_->zoomBy(1 / 1.5); });
    connect(legend, &QToolButton::toggled, this,
            [legend_scroll](bool on) { legend_scroll->setVisible(on); });
    connect(groups_box_, &QComboBox::activated, this, [this](int index) {
        setHoverGroups(static_cast<HoverGroups>(groups_box_->itemData(index).toInt()));
    });
    connect(metric_box_, &QComboBox::activated, this, [this](int index) {
        const auto metric = static_cast<GpuMetric>(metric_box_->itemData(index).toInt());
        if (state_)
            state_->setGpuMetric(metric);
        else {
            model_->metric = metric;
            updateColors();
        }
    });
    if (state_) {
        model_->metric = state_->gpuMetric();
        model_->selected = state_->selectedGpu();
        connect(state_, &ViewState::gpuMetricChanged, this, [this](GpuMetric metric) {
            model_->metric = metric;
            metric_box_->setCurrentIndex(metric_box_->findData(static_cast<int>(metric)));
            updateColors();
            updateInfoPanel();
        });
        connect(state_, &ViewState::highlightChanged, this, &TopologyView::updateHighlight);
        connect(state_, &ViewState::selectedGpuChanged, this, [this](int gpu) {
            model_->selected = gpu;
            updateInfoPanel();
            repaintItems();
        });
    }
    if (document_)
        connect(document_, &ScenarioDocument::scenarioChanged, this, [this] {
            if (!message_.isEmpty())
                setMessage({}); // a refusal is stale once the scenario changed
        });
    metric_box_->setCurrentIndex(metric_box_->findData(static_cast<int>(model_->metric)));
    applyTheme();
    updateInfoPanel();
}

TopologyView::~TopologyView() {
    // Items point into the model: remove them before it goes.
    scene_->clear();
}

QGraphicsView* TopologyView::graphicsView() const {
    return view_;
}

TopologyView::Detail TopologyView::detailAt(double scale) {
    return detail::detailFor(scale);
}

TopologyView::Detail TopologyView::detail() const {
    return detailAt(view_->scaleFactor());
}

int TopologyView::sceneItemCount() const {
    return static_cast<int>(scene_->items().size());
}

bool TopologyView::event(QEvent* event) {
    if ((event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange) && view_)
        applyTheme();
    return QWidget::event(event);
}

void TopologyView::applyTheme() {
    model_->theme = detail::viewTheme(detail::isDark(palette()));
    view_->setBackgroundBrush(model_->theme.background);
    if (model_->report)
        updateColors();
    repaintItems();
}

void TopologyView::updateHoverMask() {
    TopologyModel& m = *model_;
    m.hover_mask.assign(static_cast<size_t>(m.layout.gpus), 0);
    if (!m.placement || m.hovered < 0 || m.hovered >= m.layout.gpus)
        return;
    std::vector<GroupKind> kinds;
    switch (hover_groups_) {
    case HoverGroups::all:
        kinds.assign(detail::kAllHoverKinds.begin(), detail::kAllHoverKinds.end());
        break;
    case HoverGroups::ep:
        kinds = {GroupKind::ep};
        break;
    case HoverGroups::tp:
        kinds = {GroupKind::tp};
        break;
    case HoverGroups::cp:
        kinds = {GroupKind::cp};
        break;
    case HoverGroups::dp:
        kinds = {GroupKind::dp};
        break;
    case HoverGroups::pp:
        kinds = {GroupKind::pp};
        break;
    case HoverGroups::etp:
        kinds = {GroupKind::etp};
        break;
    case HoverGroups::edp:
        kinds = {GroupKind::edp};
        break;
    }
    for (const GroupKind kind : kinds) {
        const ParallelGroup& group = m.placement->groupOf(kind, m.hovered);
        if (group.gpus.size() <= 1)
            continue;
        const auto bit = static_cast<uint8_t>(1u << static_cast<int>(kind));
        for (const int gpu : group.gpus)
            if (gpu >= 0 && gpu < m.layout.gpus)
                m.hover_mask[static_cast<size_t>(gpu)] |= bit;
    }
}

void TopologyView::updateHighlight() {
    TopologyModel& m = *model_;
    m.highlighted.assign(static_cast<size_t>(m.layout.gpus), 0);
    m.rack_highlighted.assign(static_cast<size_t>(m.layout.racks), 0);
    m.any_highlight = false;
    m.highlight_label.clear();
    if (state_) {
        for (const int gpu : state_->highlightedGpus())
            if (gpu >= 0 && gpu < m.layout.gpus) {
                m.highlighted[static_cast<size_t>(gpu)] = 1;
                m.rack_highlighted[static_cast<size_t>(m.graph->rackOf(gpu))] = 1;
                m.any_highlight = true;
            }
        m.highlight_label = state_->highlightLabel();
    }
    repaintItems();
    legend_->refresh();
}

void TopologyView::setHoveredGpu(int gpu) {
    TopologyModel& m = *model_;
    if (gpu >= m.layout.gpus)
        gpu = -1;
    if (gpu == m.hovered)
        return;
    m.hovered = gpu;
    updateHoverMask();
    repaintItems();
    updateInfoPanel();
    emit hoveredGpuChanged(gpu);
}

void TopologyView::setHoverGroups(HoverGroups groups) {
    hover_groups_ = groups;
    groups_box_->setCurrentIndex(groups_box_->findData(static_cast<int>(groups)));
    updateHoverMask();
    repaintItems();
    legend_->refresh();
}

int TopologyView::hoveredGpu() const {
    return model_->hovered;
}

QVector<int> TopologyView::hoverGroupMembers(GroupKind kind) const {
    QVector<int> members;
    const auto bit = static_cast<uint8_t>(1u << static_cast<int>(kind));
    for (size_t gpu = 0; gpu < model_->hover_mask.size(); ++gpu)
        if (model_->hover_mask[gpu] & bit)
            members.push_back(static_cast<int>(gpu));
    return members;
}

QColor TopologyView::gpuFill(int gpu) const {
    return gpu >= 0 && gpu < static_cast<int>(model_->fill.size())
               ? model_->fill[static_cast<size_t>(gpu)]
               : QColor();
}

double TopologyView::gpuMetricValue(int gpu) const {
    return gpu >= 0 && gpu < static_cast<int>(model_->value.size())
               ? model_->value[static_cast<size_t>(gpu)]
               : std::numeric_limits<double>::quiet_NaN();
}

QRectF TopologyView::gpuSceneRect(int gpu) const {
    if (!model_->report || gpu < 0 || gpu >= model_->layout.gpus)
        return {};
    return model_->layout.gpuRect(gpu);
}

int TopologyView::gpuAtScenePos(const QPointF& pos) const {
    return model_->report ? model_->layout.gpuAt(pos) : -1;
}

void TopologyView::repaintItems() {
    // QGraphicsScene::update() would leave the items' cached pixmaps as they were.
    for (QGraphicsItem* item : scene_->items())
        item->update();
}

void TopologyView::fitAll() {
    if (model_->layout.view_bounds.isEmpty())
        return;
    view_->resetTransform();
    view_->fitInView(model_->layout.view_bounds, Qt::KeepAspectRatio);
    view_->fit_mode = true;
    updateInfoPanel();
}

void TopologyView::zoomToGpu(int gpu, double tile_px) {
    const QRectF tile = gpuSceneRect(gpu);
    if (tile.isEmpty())
        return;
    view_->resetTransform();
    const double s = tile_px / detail::kTile;
    view_->scale(s, s);
    view_->centerOn(tile.center());
    view_->fit_mode = false;
    updateInfoPanel();
}

void TopologyView::onClick(const QPointF& scene_pos) {
    const int gpu = detail() == Detail::racks ? -1 : gpuAtScenePos(scene_pos);
    if (detail() == Detail::racks) {
        // A click on a rack zooms in to it.
        for (int rack = 0; rack < model_->layout.racks; ++rack)
            if (model_->layout.rack_rects[static_cast<size_t>(rack)].contains(scene_pos)) {
                zoomToGpu(model_->layout.firstNode(rack) * model_->layout.shape.gpus_per_node, 20);
                view_->centerOn(model_->layout.rack_rects[static_cast<size_t>(rack)].center());
                return;
            }
        return;
    }
    if (state_)
        state_->setSelectedGpu(gpu);
    else {
        model_->selected = gpu;
        updateInfoPanel();
        repaintItems();
    }
}

// --- Moving nodes between racks ---------------------------------------------------------------

} // namespace moe::widgets
