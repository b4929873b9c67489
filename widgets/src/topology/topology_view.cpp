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

namespace {

QComboBox* makeMetricBox(QWidget* parent) {
    auto* box = new QComboBox(parent);
    box->addItem(TopologyView::tr("Expert load"), static_cast<int>(GpuMetric::expert_load));
    box->addItem(TopologyView::tr("Memory use"), static_cast<int>(GpuMetric::memory_use));
    box->addItem(TopologyView::tr("Idle time"), static_cast<int>(GpuMetric::idle_time));
    box->addItem(TopologyView::tr("Traffic"), static_cast<int>(GpuMetric::traffic));
    box->setToolTip(TopologyView::tr("What the GPU fill shows"));
    return box;
}

QComboBox* makeHoverGroupsBox(QWidget* parent) {
    using HoverGroups = TopologyView::HoverGroups;
    auto* box = new QComboBox(parent);
    box->addItem(TopologyView::tr("All groups"), static_cast<int>(HoverGroups::all));
    box->addItem(TopologyView::tr("EP"), static_cast<int>(HoverGroups::ep));
    box->addItem(TopologyView::tr("TP"), static_cast<int>(HoverGroups::tp));
    box->addItem(TopologyView::tr("CP"), static_cast<int>(HoverGroups::cp));
    box->addItem(TopologyView::tr("DP"), static_cast<int>(HoverGroups::dp));
    box->addItem(TopologyView::tr("PP"), static_cast<int>(HoverGroups::pp));
    box->addItem(TopologyView::tr("Expert TP"), static_cast<int>(HoverGroups::etp));
    box->addItem(TopologyView::tr("Expert DP"), static_cast<int>(HoverGroups::edp));
    box->setToolTip(
        TopologyView::tr("Which parallel groups of the GPU under the mouse are outlined"));
    return box;
}

QComboBox* makeOverlayBox(QWidget* parent) {
    auto* box = new QComboBox(parent);
    box->addItem(TopologyView::tr("None"), -1);
    for (const GroupOverlay overlay : kGroupOverlays)
        box->addItem(detail::overlayName(overlay, false), static_cast<int>(overlay));
    box->setToolTip(TopologyView::tr(
        "Colour every GPU by its group of one parallel dimension, instead of the fill metric"));
    return box;
}

QToolButton* makeToolButton(QWidget* parent, const QString& text, const QString& tip) {
    auto* button = new QToolButton(parent);
    button->setText(text);
    if (!tip.isEmpty())
        button->setToolTip(tip);
    return button;
}

/// The tool bar's buttons.
struct ViewButtons {
    QToolButton* fit;
    QToolButton* zoom_in;
    QToolButton* zoom_out;
    QToolButton* legend;
    QToolButton* aggregate;
};

ViewButtons makeViewButtons(QWidget* parent) {
    ViewButtons buttons{
        makeToolButton(parent, TopologyView::tr("Fit"), TopologyView::tr("Show the whole cluster")),
        makeToolButton(parent, QStringLiteral("+"), TopologyView::tr("Zoom in (mouse wheel)")),
        makeToolButton(parent, QStringLiteral("−"), TopologyView::tr("Zoom out (mouse wheel)")),
        makeToolButton(parent, TopologyView::tr("Legend"), QString()),
        makeToolButton(parent, TopologyView::tr("Aggregate"),
                       TopologyView::tr("Draw pod 0 in full and the other pods as one \"× N\" "
                                        "summary with their summed traffic (a review slide of a "
                                        "large cluster)"))};
    buttons.legend->setCheckable(true);
    buttons.legend->setChecked(true);
    buttons.aggregate->setCheckable(true);
    buttons.aggregate->setEnabled(false); // until a result has two pods or more
    return buttons;
}

/// The panel beside the diagram: the info text over the legend.
struct SidePanel {
    QWidget* panel;
    QTextBrowser* info;
    QScrollArea* legend_scroll;
    detail::LegendWidget* legend;
};

SidePanel makeSidePanel(QWidget* parent, const TopologyModel* model,
                        const TopologyView::HoverGroups* hover_groups) {
    SidePanel side{};
    side.panel = new QWidget(parent);
    side.info = new QTextBrowser(side.panel);
    side.info->setOpenLinks(false);
    side.info->setFrameShape(QFrame::NoFrame);
    // The legend scrolls when the dock is shorter than it, instead of being cut off.
    side.legend_scroll = new QScrollArea(side.panel);
    side.legend_scroll->setFrameShape(QFrame::NoFrame);
    side.legend_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    side.legend_scroll->setWidgetResizable(true);
    side.legend = new detail::LegendWidget(model, hover_groups, side.legend_scroll);
    side.legend_scroll->setWidget(side.legend);
    auto* layout = new QVBoxLayout(side.panel);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(side.info, 2);
    layout->addWidget(side.legend_scroll, 3);
    side.panel->setMinimumWidth(150);
    return side;
}

} // namespace

TopologyView::TopologyView(ScenarioDocument* document, ViewState* state, QWidget* parent)
    : QWidget(parent)
    , document_(document)
    , state_(state)
    , model_(std::make_unique<TopologyModel>()) {
    setObjectName(QStringLiteral("TopologyView"));
    scene_ = new QGraphicsScene(this);
    scene_->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
    view_ = new detail::TopologyGraphicsView(this, scene_);

    metric_box_ = makeMetricBox(this);
    groups_box_ = makeHoverGroupsBox(this);
    overlay_box_ = makeOverlayBox(this);
    const ViewButtons buttons = makeViewButtons(this);
    status_ = new QLabel(this);
    status_->setTextFormat(Qt::RichText);
    status_->setMinimumWidth(50);
    status_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);

    // The choosers, then the status line and the zoom buttons; on a narrow dock the latter
    // move to a second row (arrangeToolBar) instead of squeezing the choosers unreadable.
    auto* choosers = new QWidget(this);
    choosers->setObjectName(QStringLiteral("topologyChoosers"));
    choosers->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Preferred);
    auto* chooser_row = new QHBoxLayout(choosers);
    chooser_row->setContentsMargins(0, 0, 0, 0);
    chooser_row->addWidget(new QLabel(tr("Fill"), choosers));
    chooser_row->addWidget(metric_box_);
    chooser_row->addSpacing(12);
    chooser_row->addWidget(new QLabel(tr("Hover"), choosers));
    chooser_row->addWidget(groups_box_);
    chooser_row->addSpacing(12);
    chooser_row->addWidget(new QLabel(tr("Overlay"), choosers));
    chooser_row->addWidget(overlay_box_);
    auto* tools = new QWidget(this);
    tools->setObjectName(QStringLiteral("topologyTools"));
    auto* tool_row = new QHBoxLayout(tools);
    tool_row->setContentsMargins(0, 0, 0, 0);
    tool_row->addWidget(status_, 1);
    tool_row->addWidget(buttons.zoom_out);
    tool_row->addWidget(buttons.zoom_in);
    tool_row->addWidget(buttons.fit);
    aggregate_button_ = buttons.aggregate;
    tool_row->addWidget(aggregate_button_);
    tool_row->addWidget(buttons.legend);
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 4, 6, 2);
    bar->addWidget(choosers);
    bar->addSpacing(12);
    bar->addWidget(tools, 1);
    bar->addStretch(0); // takes the room the tools leave on a narrow dock (stretch 0: only then)
    auto* bar2 = new QHBoxLayout;
    bar2->setContentsMargins(6, 0, 6, 2);

    const SidePanel side = makeSidePanel(this, model_.get(), &hover_groups_);
    info_ = side.info;
    legend_ = side.legend;
    splitter_ = new QSplitter(Qt::Horizontal, this);
    splitter_->addWidget(view_);
    splitter_->addWidget(side.panel);
    splitter_->setCollapsible(0, false);
    splitter_->setStretchFactor(0, 4);
    splitter_->setStretchFactor(1, 1);
    splitter_->setSizes({900, 280});

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(bar);  // item 0: arrangeToolBar's first row
    layout->addLayout(bar2); // item 1: its second
    layout->addWidget(splitter_, 1);

    connect(buttons.fit, &QToolButton::clicked, this, &TopologyView::fitAll);
    connect(aggregate_button_, &QToolButton::clicked, this, &TopologyView::setAggregated);
    connect(buttons.zoom_in, &QToolButton::clicked, this, [this] { view_->zoomBy(1.5); });
    connect(buttons.zoom_out, &QToolButton::clicked, this, [this] { view_->zoomBy(1 / 1.5); });
    connect(buttons.legend, &QToolButton::toggled, this,
            [scroll = side.legend_scroll](bool on) { scroll->setVisible(on); });
    connect(groups_box_, &QComboBox::activated, this, [this](int index) {
        setHoverGroups(static_cast<HoverGroups>(groups_box_->itemData(index).toInt()));
    });
    connect(overlay_box_, &QComboBox::activated, this, [this](int index) {
        const int data = overlay_box_->itemData(index).toInt();
        setOverlay(data < 0 ? std::nullopt
                            : std::optional<GroupOverlay>(static_cast<GroupOverlay>(data)));
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

namespace {

/// The tool bar on one row, or the status line and the zoom buttons on a second row when the
/// view is too narrow for them beside the choosers (which would otherwise be squeezed).
void arrangeToolBar(QWidget* view) {
    auto* choosers = view->findChild<QWidget*>(QStringLiteral("topologyChoosers"));
    auto* tools = view->findChild<QWidget*>(QStringLiteral("topologyTools"));
    QLayout* rows = view->layout();
    if (!choosers || !tools || !rows || rows->count() < 2)
        return;
    auto* first = qobject_cast<QHBoxLayout*>(rows->itemAt(0)->layout());
    auto* second = qobject_cast<QHBoxLayout*>(rows->itemAt(1)->layout());
    if (!first || !second)
        return;
    // Room for the choosers, the buttons and a short status line on one row?
    const int one_row = choosers->sizeHint().width() + tools->minimumSizeHint().width() + 80;
    const bool two_rows = view->width() < one_row;
    if (two_rows == (second->indexOf(tools) >= 0))
        return;
    (two_rows ? first : second)->removeWidget(tools);
    (two_rows ? second : first)->addWidget(tools, 1);
}

} // namespace

bool TopologyView::event(QEvent* event) {
    if (event->type() == QEvent::Resize)
        arrangeToolBar(this);
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
    for (const GroupKind kind : detail::hoverKinds(hover_groups_)) {
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
    if (!model_->report)
        return -1;
    const int gpu = model_->layout.gpuAt(pos);
    return gpu >= 0 && !model_->rackHidden(model_->graph->rackOf(gpu)) ? gpu : -1;
}

void TopologyView::repaintItems() {
    // QGraphicsScene::update() would leave the items' cached pixmaps as they were.
    for (QGraphicsItem* item : scene_->items())
        item->update();
}

void TopologyView::setCompact(bool compact) {
    for (const char* name : {"topologyChoosers", "topologyTools"})
        if (auto* part = findChild<QWidget*>(QLatin1String(name)))
            part->setVisible(!compact);
    splitter_->widget(1)->setVisible(!compact);
}

void TopologyView::fitAll() {
    const QRectF shown = model_->shownViewBounds();
    if (shown.isEmpty())
        return;
    view_->resetTransform();
    view_->fitInView(shown, Qt::KeepAspectRatio);
    view_->fit_mode = true;
    updateInfoPanel();
}

void TopologyView::zoomToGpu(int gpu, double tile_px) {
    const QRectF tile = gpuSceneRect(gpu);
    if (tile.isEmpty())
        return;
    if (model_->rackHidden(model_->graph->rackOf(gpu)))
        setAggregated(false); // a GPU of a summed pod: draw the pods again to show it
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

// --- Moving nodes between racks
// ---------------------------------------------------------------

} // namespace moe::widgets
