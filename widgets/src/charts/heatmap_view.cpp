#include "moe_widgets/charts/heatmap_view.h"

#include "charts/chart_support.h"
#include "charts/heatmap_matrix.h"
#include "charts/stragglers_table.h"
#include "moe/load_stragglers.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/scenario_document.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPushButton>
#include <QSplitter>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>
#include <utility>

namespace moe::widgets {

using charts::busiestCell;
using charts::LoadMatrix;
using charts::loadMatrix;
using charts::routingText;
using charts::stageOfLayer;
using detail::formatCount;
using detail::formatPercent;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Near-black: the hot end of the load scale is red, so a red ring would vanish on it.
const QColor kHotColor(0x1F2328);
constexpr int kStragglers = 10;

QCPColorGradient loadGradient(const QColor& nan_color) {
    // The shared load-ratio scale (moe/load_scale.h), so "hot" looks the same here, in the
    // topology and in moe-live. The colour scale's axis is logarithmic over [1/high, high], so
    // a gradient position is the scale's own position (log-symmetric about 1).
    QCPColorGradient gradient;
    gradient.clearColorStops();
    for (int i = 0; i <= 16; ++i)
        gradient.setColorStopAt(i / 16.0, loadScaleColor(i / 16.0));
    gradient.setNanHandling(QCPColorGradient::nhNanColor);
    gradient.setNanColor(nan_color);
    return gradient;
}

/// The colour bar of the load-ratio scale: logarithmic, ticks every 0.25×.
void setUpRatioScale(QCPColorScale* scale) {
    scale->setDataScaleType(QCPAxis::stLogarithmic);
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(0.25);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    scale->axis()->setTicker(ticker);
    scale->axis()->setNumberFormat(QStringLiteral("f"));
    scale->axis()->setNumberPrecision(2);
}

/// Pipeline stage numbers centred on each stage's block of GPU columns, thinned out so they
/// never overlap at the axis' current width and zoom.
class StageTicker : public QCPAxisTicker {
public:
    StageTicker(QCPAxis* axis, std::vector<double> centers, std::vector<int> stages)
        : axis_(axis)
        , centers_(std::move(centers))
        , stages_(std::move(stages)) {}
    void generate(const QCPRange& range, const QLocale&, QChar, int, QVector<double>& ticks,
                  QVector<double>* sub_ticks, QVector<QString>* labels) override {
        ticks.clear();
        if (sub_ticks)
            sub_ticks->clear();
        if (labels)
            labels->clear();
        std::vector<size_t> visible;
        for (size_t i = 0; i < centers_.size(); ++i)
            if (range.contains(centers_[i]))
                visible.push_back(i);
        const bool vertical = axis_->orientation() == Qt::Vertical;
        const QCPAxisRect* rect = axis_->axisRect();
        const double length = rect ? (vertical ? rect->height() : rect->width()) : 0;
        const auto every = static_cast<size_t>(
            std::max(1.0, std::ceil(static_cast<double>(visible.size()) * (vertical ? 16 : 28) /
                                    (length > 0 ? length : 800))));
        for (size_t k = 0; k < visible.size(); k += every) {
            ticks << centers_[visible[k]];
            if (labels)
                *labels << QString::number(stages_[visible[k]]);
        }
    }

private:
    QCPAxis* axis_;
    std::vector<double> centers_;
    std::vector<int> stages_;
};

/// Items drawn for the data (stage separators, highlighted GPUs) carry this name so a rebuild
/// can remove them without touching the fixed markers.
const QString kDecorName = QStringLiteral("heatmap-decor");

/// The ring around the hottest cell and its label, kept a few pixels from it whatever the zoom.
std::pair<QCPItemTracer*, QCPItemText*> makeHotMarker(QCustomPlot* plot) {
    auto* marker = new QCPItemTracer(plot);
    marker->setStyle(QCPItemTracer::tsCircle);
    marker->setSize(13);
    marker->setPen(QPen(kHotColor, 2.5));
    marker->setBrush(Qt::NoBrush);
    auto* label = new QCPItemText(plot);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
    label->setPadding(QMargins(5, 2, 5, 2));
    label->setClipToAxisRect(true);
    // Pixels away from the marked cell, whatever the zoom.
    label->position->setParentAnchor(marker->position);
    label->position->setType(QCPItemPosition::ptAbsolute);
    return {marker, label};
}

/// A zoomed or panned column range kept inside the matrix: at least one column, at most all.
QCPRange clampedToColumns(const QCPRange& range, int columns) {
    const QCPRange bounds(-0.5, std::max(0, columns) - 0.5);
    QCPRange r = range;
    if (r.size() > bounds.size() || r.size() < 1)
        r = r.size() < 1 ? QCPRange(r.center() - 0.5, r.center() + 0.5) : bounds;
    if (r.lower < bounds.lower)
        r = QCPRange(bounds.lower, bounds.lower + r.size());
    if (r.upper > bounds.upper)
        r = QCPRange(bounds.upper - r.size(), bounds.upper);
    return r;
}

/// The stage view's rows as labelled blocks: a dashed line wherever the stage holding the next
/// MoE layer changes, the stage numbers on the right axis (thinned to fit).
void addStageBlocks(QCustomPlot* plot, const ExpertLoad& load, const std::vector<int>& row_layer,
                    const QColor& line_color) {
    const int rows = static_cast<int>(row_layer.size());
    auto stage = [&](int row) { return stageOfLayer(load, row_layer[static_cast<size_t>(row)]); };
    std::vector<double> centers;
    std::vector<int> stages;
    int begin = 0;
    for (int row = 1; row <= rows; ++row) {
        if (row < rows && stage(row) == stage(begin))
            continue;
        centers.push_back((begin + row - 1) / 2.0);
        stages.push_back(stage(begin));
        if (row < rows) {
            auto* line = new QCPItemStraightLine(plot);
            line->setObjectName(kDecorName);
            line->setSelectable(false);
            line->point1->setCoords(0, row - 0.5);
            line->point2->setCoords(1, row - 0.5);
            line->setPen(QPen(line_color, 1, Qt::DotLine));
        }
        begin = row;
    }
    auto ticker =
        QSharedPointer<StageTicker>::create(plot->yAxis2, std::move(centers), std::move(stages));
    plot->yAxis2->setVisible(true);
    plot->yAxis2->setLabel(HeatmapView::tr("pipeline stage"));
    plot->yAxis2->setTicker(ticker);
    plot->yAxis2->setTickLabels(true);
    plot->yAxis2->setTicks(true);
    plot->yAxis2->setSubTicks(false);
    plot->yAxis2->setTickLength(0, 4);
    plot->yAxis2->setRange(plot->yAxis->range());
}

} // namespace

HeatmapView::HeatmapView(ScenarioDocument* document, ViewState* state, QWidget* parent)
    : QWidget(parent)
    , document_(document)
    , state_(state) {
    setObjectName(QStringLiteral("HeatmapView"));
    mode_box_ = new QComboBox(this);
    mode_box_->addItem(tr("GPU × MoE layer"), static_cast<int>(Mode::gpu_by_layer));
    mode_box_->addItem(tr("Expert × MoE layer"), static_cast<int>(Mode::expert_by_layer));
    mode_box_->setToolTip(tr("Columns: the GPUs (tokens their experts receive) or the experts"));
    next_ = new QPushButton(tr("Next step ▸"), this);
    next_->setToolTip(tr("Resample the routing: show the expert load of the next training step"));
    first_ = new QToolButton(this);
    first_->setText(tr("Step 0"));
    first_->setToolTip(tr("Back to the first routing sample"));
    // Under the controls, wrapped: a narrow dock shows all of it instead of clipping it.
    summary_ = new QLabel(this);
    summary_->setTextFormat(Qt::RichText);
    summary_->setWordWrap(true);
    summary_->setContentsMargins(8, 0, 8, 2);
    summary_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 4, 6, 2);
    bar->addWidget(new QLabel(tr("Show"), this));
    bar->addWidget(mode_box_);
    bar->addSpacing(8);
    bar->addWidget(first_);
    bar->addWidget(next_);
    bar->addStretch(1);

    plot_ = new QCustomPlot(this);
    plot_->setNoAntialiasingOnDrag(true);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->axisRect()->setRangeDrag(Qt::Horizontal);
    plot_->axisRect()->setRangeZoom(Qt::Horizontal);

    // Layout: title, [map | colour scale], footer.
    QCPLayoutGrid* main = plot_->plotLayout();
    QCPAxisRect* rect = plot_->axisRect();
    main->take(rect);
    main->simplify();
    auto* middle = new QCPLayoutGrid;
    title_ = new QCPTextElement(plot_, QString(), QFont(font().family(), 13, QFont::Bold));
    footer_ = new QCPTextElement(plot_, QString(), QFont(font().family(), 9));
    footer_->setTextFlags(Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap);
    footer_->setMargins(QMargins(12, 4, 12, 6));
    main->addElement(0, 0, title_);
    main->addElement(1, 0, middle);
    main->addElement(2, 0, footer_);
    middle->addElement(0, 0, rect);
    scale_ = new QCPColorScale(plot_);
    middle->addElement(0, 1, scale_);
    scale_->setType(QCPAxis::atRight);
    scale_->setBarWidth(14);
    scale_->axis()->setLabel(tr("× layer mean"));
    setUpRatioScale(scale_);
    auto* margins = new QCPMarginGroup(plot_);
    rect->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    scale_->setMarginGroup(QCP::msTop | QCP::msBottom, margins);

    map_ = new QCPColorMap(plot_->xAxis, plot_->yAxis);
    map_->setColorScale(scale_);
    map_->setInterpolate(false);
    map_->setTightBoundary(false);
    const bool reordered = !std::is_sorted(row_layer_.begin(), row_layer_.end());
    plot_->yAxis->setLabel(reordered ? tr("MoE layer (grouped by stage)") : tr("MoE layer"));
    if (reordered) {
        std::vector<double> centers(row_layer_.size());
        std::iota(centers.begin(), centers.end(), 0.0);
        plot_->yAxis->setTicker(
            QSharedPointer<StageTicker>::create(plot_->yAxis, centers, row_layer_));
    } else {
        plot_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    }
    plot_->yAxis->grid()->setVisible(false);
    plot_->xAxis->grid()->setVisible(false);

    std::tie(hot_marker_, hot_label_) = makeHotMarker(plot_);

    stragglers_ = new charts::StragglersTable(this);
    QSplitter* split = charts::withStragglers(plot_, stragglers_, kStragglers, this);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(bar);
    layout->addWidget(summary_);
    layout->addWidget(split, 1);

    connect(mode_box_, &QComboBox::activated, this,
            [this](int index) { setMode(static_cast<Mode>(mode_box_->itemData(index).toInt())); });
    connect(next_, &QPushButton::clicked, this, &HeatmapView::requestNextStep);
    connect(first_, &QToolButton::clicked, this, &HeatmapView::requestFirstStep);
    connect(plot_, &QCustomPlot::mouseMove, this, &HeatmapView::onMouseMove);
    connect(plot_, &QCustomPlot::afterLayout, this, &HeatmapView::placeHotLabel);
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this](QMouseEvent*) {
        plot_->xAxis->setRange(-0.5, columns_ - 0.5);
        plot_->replot(QCustomPlot::rpQueuedReplot);
    });
    // Zooming stays inside the matrix.
    connect(plot_->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            [this](const QCPRange& range) {
                const QCPRange r = clampedToColumns(range, columns_);
                if (r != range)
                    plot_->xAxis->setRange(r);
            });
    connect(plot_->yAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), plot_->yAxis2,
            qOverload<const QCPRange&>(&QCPAxis::setRange));
    if (state_) {
        connect(stragglers_, &charts::StragglersTable::gpuClicked, state_.data(),
                &ViewState::setSelectedGpu);
        connect(state_, &ViewState::highlightChanged, this, &HeatmapView::updateMarkers);
        connect(state_, &ViewState::selectedGpuChanged, this, &HeatmapView::updateMarkers);
    }
    applyTheme(detail::isDark(palette()));
    rebuild();
}

HeatmapView::~HeatmapView() = default;

bool HeatmapView::event(QEvent* event) {
    if ((event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange) && plot_) {
        applyTheme(detail::isDark(palette()));
        plot_->replot(QCustomPlot::rpQueuedReplot);
    }
    return QWidget::event(event);
}

void HeatmapView::applyTheme(bool dark) {
    dark_ = dark;
    const detail::ViewTheme t = detail::viewTheme(dark);
    plot_->setBackground(t.background);
    plot_->axisRect()->setBackground(t.background);
    for (QCPAxis* axis :
         {plot_->xAxis, plot_->yAxis, plot_->xAxis2, plot_->yAxis2, scale_->axis()}) {
        axis->setBasePen(QPen(t.muted, 1));
        axis->setTickPen(QPen(t.muted, 1));
        axis->setSubTickPen(QPen(t.muted, 1));
        axis->setTickLabelColor(t.text);
        axis->setLabelColor(t.text);
    }
    title_->setTextColor(t.text);
    footer_->setTextColor(t.muted);
    map_->setGradient(loadGradient(t.no_data));
    hot_label_->setColor(t.text);
    QColor label_bg = t.background;
    label_bg.setAlpha(230);
    hot_label_->setBrush(label_bg);
    hot_label_->setPen(QPen(kHotColor, 1));
    for (int i = 0; i < plot_->itemCount(); ++i) {
        QCPAbstractItem* item = plot_->item(i);
        if (item->objectName() != kDecorName)
            continue;
        if (auto* line = qobject_cast<QCPItemStraightLine*>(item))
            line->setPen(QPen(t.muted, 1, Qt::DotLine));
        if (auto* band = qobject_cast<QCPItemRect*>(item)) {
            QColor fill = t.highlight;
            fill.setAlpha(45);
            band->setPen(QPen(t.highlight, 1.5));
            band->setBrush(fill);
        }
    }
}

uint64_t HeatmapView::routingStep() const {
    return result_ ? result_->routing_step : 0;
}

void HeatmapView::requestNextStep() {
    const uint64_t step = routingStep() + 1;
    if (state_)
        state_->setRoutingStep(step);
    emit resampleRequested(step);
}

void HeatmapView::requestFirstStep() {
    if (state_)
        state_->setRoutingStep(0);
    emit resampleRequested(0);
}

void HeatmapView::setMode(Mode mode) {
    mode_box_->setCurrentIndex(mode_box_->findData(static_cast<int>(mode)));
    if (mode == mode_)
        return;
    mode_ = mode;
    rebuild();
}

void HeatmapView::showResult(const EvaluationResultPtr& result) {
    result_ = result;
    rebuild();
}

double HeatmapView::cellValue(int column, int row) const {
    if (column < 0 || row < 0 || column >= columns_ || row >= rows_)
        return kNaN;
    return cells_[static_cast<size_t>(row) * static_cast<size_t>(columns_) +
                  static_cast<size_t>(column)];
}

QTableWidget* HeatmapView::stragglersTable() const {
    return stragglers_;
}

double HeatmapView::cellRatio(int column, int row) const {
    if (column < 0 || row < 0 || column >= columns_ || row >= rows_)
        return kNaN;
    return ratios_[static_cast<size_t>(row) * static_cast<size_t>(columns_) +
                   static_cast<size_t>(column)];
}

int HeatmapView::cellGpu(int column, int row) const {
    if (column < 0 || row < 0 || column >= columns_ || row >= rows_ || gpu_of_.empty())
        return -1;
    return gpu_of_[static_cast<size_t>(row) * static_cast<size_t>(columns_) +
                   static_cast<size_t>(column)];
}

int HeatmapView::columnOfGpu(int gpu, int row) const {
    if (row < 0 || row >= rows_ || gpu < 0 || gpu >= static_cast<int>(column_of_gpu_.size()))
        return -1;
    const int column = column_of_gpu_[static_cast<size_t>(gpu)];
    return cellGpu(column, row) == gpu ? column : -1;
}

std::pair<int, int> HeatmapView::cellOfGpu(int gpu, int layer) const {
    const auto it = std::find(row_layer_.begin(), row_layer_.end(), layer);
    const int row = it == row_layer_.end() ? -1 : static_cast<int>(it - row_layer_.begin());
    const int column = columnOfGpu(gpu, row);
    return column < 0 ? std::pair{-1, -1} : std::pair{column, row};
}

int HeatmapView::layerOfRow(int row) const {
    return row >= 0 && row < static_cast<int>(row_layer_.size())
               ? row_layer_[static_cast<size_t>(row)]
               : -1;
}

QColor HeatmapView::cellColor(int column, int row) const {
    return loadRatioColor(cellRatio(column, row), loadRatioScale(scale_high_));
}

void HeatmapView::clearMatrix() {
    columns_ = 0;
    rows_ = 0;
    cells_.clear();
    ratios_.clear();
    gpu_of_.clear();
    column_of_gpu_.clear();
    row_mean_.clear();
    row_layer_.clear();
    top_.clear();
    hot_column_ = hot_row_ = -1;
}

void HeatmapView::showEmpty() {
    map_->data()->setSize(1, 1);
    map_->data()->setRange(QCPRange(0, 0), QCPRange(0, 0));
    map_->data()->setCell(0, 0, kNaN);
    export_title_ = result_ ? tr("Expert load — %1 has no MoE layers")
                                  .arg(QString::fromStdString(result_->scenario.name))
                            : tr("Expert load — no result yet");
    export_footer_.clear();
    title_->setText(result_ ? export_title_ : QString());
    footer_->setText(QString());
    summary_->setText(result_ ? tr("dense model: no routing") : QString());
    hot_marker_->setVisible(false);
    hot_label_->setVisible(false);
    plot_->yAxis2->setVisible(false);
    stragglers_->showNone(result_ ? tr("dense model: no expert load") : QString());
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapView::rebuild() {
    // Data-dependent items go; the fixed markers stay.
    for (int i = plot_->itemCount() - 1; i >= 0; --i)
        if (plot_->item(i)->objectName() == kDecorName)
            plot_->removeItem(i);
    clearMatrix();

    const bool moe = result_ && result_->report.placement && result_->report.load.moe_layers > 0 &&
                     result_->report.load.experts > 0;
    next_->setEnabled(moe);
    first_->setEnabled(moe && routingStep() > 0);
    if (!moe) {
        showEmpty();
        return;
    }

    const Scenario& s = result_->scenario;
    const Report& r = result_->report;
    const ExpertLoad& load = r.load;
    const Placement& placement = *r.placement;
    const bool gpus = mode_ == Mode::gpu_by_layer;
    LoadMatrix matrix = loadMatrix(load, placement, gpus, gpus ? 0 : load.experts);
    columns_ = matrix.columns;
    rows_ = load.moe_layers;
    cells_ = std::move(matrix.cells);
    ratios_ = std::move(matrix.ratios);
    gpu_of_ = std::move(matrix.gpu);
    column_of_gpu_.assign(gpus ? static_cast<size_t>(placement.gpuCount()) : 0, -1);
    for (size_t i = 0; i < gpu_of_.size(); ++i)
        if (gpu_of_[i] >= 0)
            column_of_gpu_[static_cast<size_t>(gpu_of_[i])] =
                static_cast<int>(i % static_cast<size_t>(columns_));
    row_mean_ = std::move(matrix.row_mean);
    row_layer_ = std::move(matrix.row_layer);
    scale_high_ = loadRatioScale(matrix.max_ratio).high;

    QCPColorMapData* data = map_->data();
    data->setSize(columns_, rows_);
    data->setRange(QCPRange(0, columns_ - 1), QCPRange(0, rows_ - 1));
    for (int row = 0; row < rows_; ++row)
        for (int column = 0; column < columns_; ++column)
            data->setCell(column, row, cellRatio(column, row));
    map_->setDataScaleType(QCPAxis::stLogarithmic);
    map_->setDataRange(QCPRange(1.0 / scale_high_, scale_high_));
    plot_->xAxis->setRange(-0.5, columns_ - 0.5);
    plot_->yAxis->setRange(-0.5, rows_ - 0.5);
    const bool staged = gpus && s.layout.pp > 1;
    plot_->xAxis->setLabel(!gpus    ? tr("expert")
                           : staged ? tr("GPU of the layer's pipeline stage (k-th by id)")
                                    : tr("GPU"));
    plot_->yAxis->setLabel(tr("MoE layer"));

    // The hottest cell: the core's top straggler for GPUs, the busiest expert otherwise.
    if (gpus) {
        top_ = topStragglers(r, kStragglers);
        stragglers_->setStragglers(top_, s.model.dense_layers);
        if (top_.empty())
            stragglers_->showNone(tr("no GPU above its layer's mean"));
        else
            std::tie(hot_column_, hot_row_) = cellOfGpu(top_.front().gpu, top_.front().layer);
    } else {
        std::tie(hot_column_, hot_row_) = busiestCell(cells_, columns_, rows_);
        stragglers_->setStragglers(topStragglers(r, kStragglers), s.model.dense_layers);
    }

    // Each stage's MoE layers as a labelled block of rows.
    plot_->yAxis2->setVisible(false);
    if (staged)
        addStageBlocks(plot_, load, row_layer_, detail::viewTheme(dark_).muted);

    const QString name = QString::fromStdString(s.name);
    export_title_ =
        (gpus ? tr("Expert load — %1: token slots per GPU and MoE layer · routing step %2")
                    .arg(name)
                    .arg(routingStep())
              : tr("Expert load — %1: token slots per expert and MoE layer · routing step %2")
                    .arg(name)
                    .arg(routingStep()));
    const QString model = routingText(s.routing);
    export_footer_ =
        ((gpus ? tr("Token slots (tokens × top-%1) per GPU and micro-batch ÷ the layer's mean "
                    "over every GPU holding it (log scale, neutral 1×, hot %2×). ")
                         .arg(s.model.top_k)
                         .arg(scale_high_, 0, 'f', 2) +
                     (staged ? tr("Column k: the k-th GPU of the stage holding the row's layer. ")
                             : QString())
               : tr("Token slots per expert in one micro-batch, averaged over the %1 sampled EP "
                    "groups, coloured by their ratio to the layer's mean expert. ")
                     .arg(load.sampled_groups)) +
         tr("Circle: the hottest cell. Routing: %1.").arg(model));
    // Slides carry the top stragglers the panel lists.
    if (!top_.empty())
        export_footer_ += tr(" Top straggler: GPU %1 (node %2), MoE layer %3, %4×, adds %5 of "
                             "wait, step saved %6.")
                              .arg(top_[0].gpu)
                              .arg(top_[0].node)
                              .arg(top_[0].layer)
                              .arg(top_[0].ratio, 0, 'f', 2)
                              .arg(charts::formatDuration(top_[0].wait_s))
                              .arg(charts::formatDuration(top_[0].step_cost_s));
    // On screen the dock names the view and the toolbar summarises it; the explanation is the
    // summary's tooltip. Exports carry both as title and footnote.
    title_->setText(QString());
    footer_->setText(QString());
    summary_->setToolTip(export_footer_ +
                         tr(" The wheel zooms the columns, a double-click shows them all."));
    updateMarkers();
}

void HeatmapView::placeHotLabel() {
    // Beside the marker on the side with room (the axis rect as laid out for this replot), in
    // full when it fits, else just the column and ratio.
    if (!hot_label_->visible())
        return;
    const QRect rect = plot_->axisRect()->rect();
    const double x = plot_->xAxis->coordToPixel(hot_column_);
    const double y = plot_->yAxis->coordToPixel(hot_row_);
    const QFontMetrics metrics(hot_label_->font());
    const double room_right = rect.right() - x - 16;
    const double room_left = x - rect.left() - 16;
    const bool right = room_right >= room_left;
    const double room = right ? room_right : room_left;
    const bool above = y - rect.top() > rect.bottom() - y;
    hot_label_->setText(metrics.horizontalAdvance(hot_long_) + 12 <= room ? hot_long_ : hot_short_);
    hot_label_->setPositionAlignment((right ? Qt::AlignLeft : Qt::AlignRight) |
                                     (above ? Qt::AlignBottom : Qt::AlignTop));
    hot_label_->position->setCoords(right ? 10 : -10, above ? -8 : 8);
}

void HeatmapView::updateMarkers() {
    for (int i = plot_->itemCount() - 1; i >= 0; --i)
        if (qobject_cast<QCPItemRect*>(plot_->item(i)) &&
            plot_->item(i)->objectName() == kDecorName)
            plot_->removeItem(i);
    const bool have = hot_column_ >= 0 && hot_row_ >= 0 && columns_ > 0;
    hot_marker_->setVisible(have);
    hot_label_->setVisible(have);
    summary_->clear();
    if (have) {
        const double value = cellValue(hot_column_, hot_row_);
        hot_marker_->position->setCoords(hot_column_, hot_row_);
        const QString what = mode_ == Mode::gpu_by_layer
                                 ? tr("GPU %1").arg(cellGpu(hot_column_, hot_row_))
                                 : tr("expert %1").arg(hot_column_);
        const double ratio = cellRatio(hot_column_, hot_row_);
        hot_long_ = tr("hottest: %1 · layer %2 · %3 slots · %4×")
                        .arg(what)
                        .arg(layerOfRow(hot_row_))
                        .arg(formatCount(value))
                        .arg(ratio, 0, 'f', 2);
        hot_short_ = tr("%1 · %2×").arg(what).arg(ratio, 0, 'f', 2);
        placeHotLabel();

        const Report& r = result_->report;
        summary_->setText(
            tr("routing step %1 · hottest %2 in MoE layer %3 (%4× the layer mean) · "
               "worst layer imbalance %5× · mean %6×%7")
                .arg(routingStep())
                .arg(what)
                .arg(layerOfRow(hot_row_))
                .arg(ratio, 0, 'f', 2)
                .arg(r.load.max_imbalance, 0, 'f', 2)
                .arg(r.load.mean_imbalance, 0, 'f', 2)
                .arg(r.load.dropped_share > 0
                         ? tr(" · %1 of slots dropped").arg(formatPercent(r.load.dropped_share))
                         : QString()));
    }

    // ViewState: highlighted GPUs as bands, the selected GPU outlined (GPU mode only): each
    // over its column in the rows of its stage's layers.
    const bool gpus = mode_ == Mode::gpu_by_layer && columns_ > 0;
    if (gpus && state_) {
        const detail::ViewTheme t = detail::viewTheme(dark_);
        QColor fill = t.highlight;
        fill.setAlpha(45);
        int bands = 0;
        // Rows whose stage holds the same columns of `marked` share one rectangle per run of
        // adjacent columns.
        auto mark = [&](const QVector<int>& marked, const QPen& pen, const QBrush& brush) {
            std::vector<int> previous;
            int start = 0;
            for (int row = 0; row <= rows_; ++row) {
                std::vector<int> columns;
                for (int i = 0; row < rows_ && i < marked.size(); ++i)
                    if (const int column = columnOfGpu(marked[i], row); column >= 0)
                        columns.push_back(column);
                std::sort(columns.begin(), columns.end());
                if (row < rows_ && columns == previous)
                    continue;
                for (size_t i = 0; i < previous.size() && bands < 512;) {
                    size_t j = i;
                    while (j + 1 < previous.size() && previous[j + 1] == previous[j] + 1)
                        ++j;
                    auto* band = new QCPItemRect(plot_);
                    band->setObjectName(kDecorName);
                    band->setSelectable(false);
                    band->topLeft->setCoords(previous[i] - 0.5, row - 0.5);
                    band->bottomRight->setCoords(previous[j] + 0.5, start - 0.5);
                    band->setPen(pen);
                    band->setBrush(brush);
                    ++bands;
                    i = j + 1;
                }
                previous = std::move(columns);
                start = row;
            }
        };
        QVector<int> lit = state_->highlightedGpus();
        std::sort(lit.begin(), lit.end());
        lit.erase(std::unique(lit.begin(), lit.end()), lit.end());
        mark(lit, QPen(t.highlight, 1.5), fill);
        if (const int selected = state_->selectedGpu(); selected >= 0)
            mark({selected}, QPen(t.text, 1.5, Qt::DashLine), Qt::NoBrush);
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QString HeatmapView::cellToolTip(int column, int row) const {
    if (!result_ || column < 0 || row < 0 || column >= columns_ || row >= rows_)
        return {};
    const Scenario& s = result_->scenario;
    const Report& r = result_->report;
    const ExpertLoad& load = r.load;
    const Placement& placement = *r.placement;
    const double value = cellValue(column, row);
    const double mean = row_mean_[static_cast<size_t>(row)];
    const double ratio = cellRatio(column, row);
    const int moe_layer = layerOfRow(row);
    const QString layer =
        tr("MoE layer %1 (model layer %2)").arg(moe_layer).arg(s.model.dense_layers + moe_layer);
    if (mode_ == Mode::gpu_by_layer) {
        const int gpu = cellGpu(column, row);
        if (gpu < 0)
            return tr("%1<br>its stage has fewer GPUs than the widest").arg(layer);
        const RankCoords& rc = placement.coordsOf(gpu);
        QString text =
            tr("<b>GPU %1</b> · node %2 · stage %3 · EP rank %4 · expert-DP %5<br>%6<br>")
                .arg(gpu)
                .arg(r.hardware.gpus > 0 ? r.hardware.nodeOf(gpu) : 0)
                .arg(rc.pp)
                .arg(rc.ep)
                .arg(rc.edp)
                .arg(layer);
        text += tr("<b>%1</b> token slots per micro-batch · <b>%2×</b> the layer mean (%3 over "
                   "every GPU holding it)")
                    .arg(formatCount(value))
                    .arg(ratio, 0, 'f', 2)
                    .arg(formatCount(mean));
        for (const LoadStraggler& st : top_)
            if (st.gpu == gpu && st.layer == moe_layer)
                text += tr("<br>a top-%1 straggler: its EP group waits %2 a step for it; the "
                           "step would save %3")
                            .arg(kStragglers)
                            .arg(charts::formatDuration(st.wait_s))
                            .arg(charts::formatDuration(st.step_cost_s));
        const ExpertMap& map = placement.expertsForLayer(moe_layer);
        if (rc.ep >= 0 && rc.ep < static_cast<int>(map.experts_on_rank.size())) {
            QStringList experts;
            for (const int e : map.experts_on_rank[static_cast<size_t>(rc.ep)])
                experts << QString::number(e);
            text += tr("<br>experts here: %1").arg(experts.join(QStringLiteral(", ")));
        }
        if (column == hot_column_ && row == hot_row_)
            text += tr("<br><b>the hottest GPU</b>");
        return text;
    }
    QString text =
        tr("<b>Expert %1</b> · %2<br><b>%3</b> token slots per micro-batch (mean over %4 "
           "sampled EP groups) · %5× the mean expert")
            .arg(column)
            .arg(layer)
            .arg(formatCount(value))
            .arg(load.sampled_groups)
            .arg(ratio, 0, 'f', 2);
    const size_t i =
        static_cast<size_t>(row) * static_cast<size_t>(columns_) + static_cast<size_t>(column);
    if (i < load.popularity.size())
        text += tr("<br>routing probability %1").arg(formatPercent(load.popularity[i]));
    const ExpertMap& map = placement.expertsForLayer(moe_layer);
    if (column < static_cast<int>(map.ranks_of_expert.size())) {
        QStringList ranks;
        for (const int rank : map.ranks_of_expert[static_cast<size_t>(column)])
            ranks << QString::number(rank);
        text += tr("<br>on EP rank%1 %2")
                    .arg(ranks.size() == 1 ? QString() : QStringLiteral("s"))
                    .arg(ranks.join(QStringLiteral(", ")));
    }
    return text;
}

void HeatmapView::onMouseMove(QMouseEvent* event) {
    if (columns_ == 0 || !plot_->axisRect()->rect().contains(event->pos())) {
        QToolTip::hideText();
        return;
    }
    const double key = plot_->xAxis->pixelToCoord(event->pos().x());
    const double value = plot_->yAxis->pixelToCoord(event->pos().y());
    const int column = static_cast<int>(std::lround(key));
    const int row = static_cast<int>(std::lround(value));
    const QString text = cellToolTip(column, row);
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, plot_);
}

QString HeatmapView::summaryText() const {
    return summary_->text();
}

QString HeatmapView::exportTo(const QString& path) {
    if (!result_)
        return QStringLiteral("nothing to export: no result yet");
    constexpr int kWidth = 1600;
    constexpr int kHeight = 900;
    // Slides are light whatever the desktop theme, and show the whole matrix.
    const bool dark = dark_;
    const QCPRange range = plot_->xAxis->range();
    applyTheme(false);
    plot_->xAxis->setRange(-0.5, columns_ - 0.5);
    QFont title_font = title_->font();
    QFont big = title_font;
    big.setPointSizeF(16);
    title_->setFont(big);
    const QString screen_title = title_->text();
    title_->setText(export_title_);
    footer_->setText(export_footer_);
    // The footnote wraps; its element is laid out for one line unless told otherwise.
    footer_->setMinimumSize(0, QFontMetrics(footer_->font()).lineSpacing() * 3 + 10);
    const QString error = charts::exportPlot(plot_, path, kWidth, kHeight, export_title_);
    title_->setFont(title_font);
    title_->setText(screen_title);
    footer_->setText(QString());
    footer_->setMinimumSize(0, 0);
    plot_->xAxis->setRange(range);
    applyTheme(dark);
    plot_->replot(QCustomPlot::rpQueuedReplot);
    return error;
}

} // namespace moe::widgets
