#include "moe_widgets/experiments/placement_grid.h"

#include "experiments/experiment_support.h"
#include "moe/edits.h"
#include "moe/placement.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/scenario_document.h"

#include <QApplication>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>

namespace moe::widgets {

namespace {

constexpr int kMargin = 8;
constexpr int kHeaderHeight = 50;
constexpr int kColumnWidth = 112;
constexpr int kColumnGap = 6;
constexpr int kChipHeight = 24;
constexpr int kChipGap = 4;

} // namespace

// ---------------------------------------------------------------------------------------------
// PlacementGrid

PlacementGrid::PlacementGrid(ScenarioDocument* document, QWidget* parent)
    : QWidget(parent)
    , document_(document) {
    setObjectName(QStringLiteral("placementGrid"));
    auto* top = new QHBoxLayout;
    top->setContentsMargins(4, 4, 4, 0);
    top->addWidget(new QLabel(tr("Edit:"), this));
    layer_box_ = new QComboBox(this);
    layer_box_->setObjectName(QStringLiteral("placementLayerBox"));
    layer_box_->setToolTip(tr("Which placement the grid shows and edits: every MoE layer "
                              "(entries without a layer) or one MoE layer"));
    top->addWidget(layer_box_);
    reset_ = new QPushButton(tr("Reset placement"), this);
    reset_->setObjectName(QStringLiteral("resetPlacementButton"));
    reset_->setToolTip(tr("Remove every layout.expert_placement entry: experts go back to "
                          "round-robin (expert e on EP rank e mod ep)"));
    top->addWidget(reset_);
    auto* hint = new QLabel(tr("Drag = move · Ctrl-drag = replicate · M / R / Delete on the "
                               "selected chip"),
                            this);
    QPalette hint_palette = hint->palette();
    hint_palette.setColor(QPalette::WindowText, experiment::mutedText(palette(), QPalette::Window));
    hint->setPalette(hint_palette);
    top->addWidget(hint, 1);

    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("placementStatus"));
    status_->setWordWrap(true);
    status_->setContentsMargins(6, 0, 6, 0);

    canvas_ = new detail::PlacementCanvas(this);
    scroll_ = new QScrollArea(this);
    scroll_->setWidget(canvas_);
    scroll_->setWidgetResizable(false);
    scroll_->setFrameShape(QFrame::NoFrame);
    scroll_->setBackgroundRole(QPalette::Base);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(3);
    layout->addLayout(top);
    layout->addWidget(status_);
    layout->addWidget(scroll_, 1);

    connect(layer_box_, &QComboBox::currentIndexChanged, this,
            [this](int index) { setLayer(layer_box_->itemData(index).toInt()); });
    connect(reset_, &QPushButton::clicked, this, &PlacementGrid::resetPlacement);
    connect(document_, &ScenarioDocument::scenarioChanged, this, &PlacementGrid::onScenarioChanged);
    onScenarioChanged();
}

PlacementGrid::~PlacementGrid() = default;

QWidget* PlacementGrid::canvas() const {
    return canvas_;
}

QString PlacementGrid::message() const {
    return message_;
}

void PlacementGrid::setMessage(const QString& message, bool refusal) {
    message_ = refusal ? message : QString();
    experiment::showStatus(status_, *this, message, refusal);
    emit messageChanged(message_);
}

void PlacementGrid::rebuildLayers() {
    const int moe_layers = std::max(0, document_->scenario().model.moeLayers());
    if (layer_box_->count() == moe_layers + 1)
        return;
    const QSignalBlocker block(layer_box_);
    layer_box_->clear();
    layer_box_->addItem(tr("Every MoE layer"), -1);
    for (int l = 0; l < moe_layers; ++l)
        layer_box_->addItem(tr("MoE layer %1").arg(l), l);
    if (layer_ >= moe_layers)
        layer_ = -1;
    layer_box_->setCurrentIndex(layer_ + 1);
}

void PlacementGrid::setLayer(int moe_layer) {
    const int moe_layers = std::max(0, document_->scenario().model.moeLayers());
    layer_ = std::clamp(moe_layer, -1, moe_layers - 1);
    if (layer_box_->currentIndex() != layer_ + 1) {
        const QSignalBlocker block(layer_box_);
        layer_box_->setCurrentIndex(layer_ + 1);
    }
    recompute();
}

void PlacementGrid::onScenarioChanged() {
    if (!message_.isEmpty())
        setMessage({}, false); // a refusal is stale once the scenario changed
    rebuildLayers();
    recompute();
}

void PlacementGrid::recompute() {
    const Scenario& s = document_->scenario();
    experts_ = std::max(0, s.model.experts);
    ep_ = std::max(1, s.layout.ep);
    ranks_of_expert_ = expertRanks(s, layer_);
    if (selection_) {
        const auto [e, r] = *selection_;
        const bool still =
            e < experts_ && std::count(ranks_of_expert_[static_cast<size_t>(e)].begin(),
                                       ranks_of_expert_[static_cast<size_t>(e)].end(), r) > 0;
        if (!still)
            selection_.reset();
    }
    reset_->setEnabled(!s.layout.expert_placement.empty());
    canvas_->resize(canvas_->sizeHint());
    canvas_->update();
}

std::vector<std::vector<int>> PlacementGrid::expertsOnRank() const {
    std::vector<std::vector<int>> out(static_cast<size_t>(ep_));
    for (int e = 0; e < experts_; ++e)
        for (int r : ranks_of_expert_[static_cast<size_t>(e)])
            out[static_cast<size_t>(r)].push_back(e);
    return out;
}

QRect PlacementGrid::columnRect(int rank) const {
    if (rank < 0 || rank >= ep_)
        return {};
    const int rows = [this] {
        size_t most = 0;
        for (const auto& list : expertsOnRank())
            most = std::max(most, list.size());
        return static_cast<int>(most);
    }();
    return QRect(kMargin + rank * (kColumnWidth + kColumnGap), kMargin, kColumnWidth,
                 kHeaderHeight + std::max(1, rows) * (kChipHeight + kChipGap) + kChipGap);
}

QRect PlacementGrid::chipRect(int expert, int rank) const {
    if (rank < 0 || rank >= ep_)
        return {};
    const auto on_rank = expertsOnRank();
    const auto& list = on_rank[static_cast<size_t>(rank)];
    const auto it = std::find(list.begin(), list.end(), expert);
    if (it == list.end())
        return {};
    const int row = static_cast<int>(it - list.begin());
    const QRect column = columnRect(rank);
    return QRect(column.left() + 4, column.top() + kHeaderHeight + row * (kChipHeight + kChipGap),
                 column.width() - 8, kChipHeight);
}

std::optional<std::pair<int, int>> PlacementGrid::chipAt(const QPoint& pos) const {
    const int rank = rankAt(pos);
    if (rank < 0)
        return std::nullopt;
    const auto on_rank = expertsOnRank();
    for (int e : on_rank[static_cast<size_t>(rank)])
        if (chipRect(e, rank).contains(pos))
            return std::make_pair(e, rank);
    return std::nullopt;
}

int PlacementGrid::rankAt(const QPoint& pos) const {
    for (int r = 0; r < ep_; ++r) {
        QRect c = columnRect(r);
        c.setBottom(std::max(c.bottom(), canvas_->height()));
        if (c.adjusted(-kColumnGap / 2, 0, kColumnGap / 2, 0).contains(pos))
            return r;
    }
    return -1;
}

void PlacementGrid::select(int expert, int rank) {
    if (expert >= 0 && expert < experts_ && !chipRect(expert, rank).isEmpty())
        selection_ = std::make_pair(expert, rank);
    else
        selection_.reset();
    if (selection_)
        scroll_->ensureVisible(chipRect(expert, rank).center().x(),
                               chipRect(expert, rank).center().y(), kColumnWidth, kChipHeight);
    canvas_->update();
}

// ---------------------------------------------------------------------------------------------
// Edits

bool PlacementGrid::applyRanks(const QString& text, int expert, std::vector<int> ranks) {
    const Scenario& s = document_->scenario();
    if (expertPlacementWith(s, layer_, expert, ranks) == s.layout.expert_placement)
        return false;
    return applyEdit(text, [&](const Scenario& scenario, const std::string&) {
        return setExpertRanks(scenario, layer_, expert, ranks);
    });
}

bool PlacementGrid::applyEdit(const QString& text, const ScenarioDocument::Edit& edit) {
    const Diagnostics diagnostics = document_->apply(text, edit);
    if (hasErrors(diagnostics)) {
        setMessage(tr("Not applied: %1").arg(experiment::firstError(diagnostics)), true);
        return false;
    }
    setMessage({}, false);
    return true;
}

bool PlacementGrid::moveExpert(int expert, int from_rank, int to_rank) {
    if (expert < 0 || expert >= experts_ || to_rank < 0 || to_rank >= ep_ || from_rank == to_rank)
        return false;
    const std::vector<int>& ranks = ranks_of_expert_[static_cast<size_t>(expert)];
    if (std::find(ranks.begin(), ranks.end(), from_rank) == ranks.end())
        return false;
    const QString scope = layer_ < 0 ? tr("every MoE layer") : tr("MoE layer %1").arg(layer_);
    const bool ok =
        applyEdit(tr("Move expert %1: EP rank %2 → %3 (%4)")
                      .arg(expert)
                      .arg(from_rank)
                      .arg(to_rank)
                      .arg(scope),
                  [&](const Scenario& scenario, const std::string&) {
                      return moe::moveExpert(scenario, layer_, expert, from_rank, to_rank);
                  });
    if (ok)
        select(expert, to_rank);
    return ok;
}

bool PlacementGrid::replicateExpert(int expert, int to_rank) {
    if (expert < 0 || expert >= experts_ || to_rank < 0 || to_rank >= ep_)
        return false;
    std::vector<int> ranks = ranks_of_expert_[static_cast<size_t>(expert)];
    if (std::find(ranks.begin(), ranks.end(), to_rank) != ranks.end()) {
        setMessage(tr("Not applied: expert %1 is already on EP rank %2").arg(expert).arg(to_rank),
                   true);
        return false;
    }
    ranks.push_back(to_rank);
    const QString scope = layer_ < 0 ? tr("every MoE layer") : tr("MoE layer %1").arg(layer_);
    const bool ok = applyRanks(
        tr("Replicate expert %1 onto EP rank %2 (%3)").arg(expert).arg(to_rank).arg(scope), expert,
        ranks);
    if (ok)
        select(expert, to_rank);
    return ok;
}

bool PlacementGrid::removeReplica(int expert, int rank) {
    if (expert < 0 || expert >= experts_)
        return false;
    std::vector<int> ranks = ranks_of_expert_[static_cast<size_t>(expert)];
    if (std::find(ranks.begin(), ranks.end(), rank) == ranks.end())
        return false;
    if (ranks.size() == 1) {
        setMessage(tr("Not applied: EP rank %1 holds the only copy of expert %2; move it "
                      "instead")
                       .arg(rank)
                       .arg(expert),
                   true);
        return false;
    }
    ranks.erase(std::remove(ranks.begin(), ranks.end(), rank), ranks.end());
    const bool ok = applyRanks(
        tr("Remove the replica of expert %1 on EP rank %2").arg(expert).arg(rank), expert, ranks);
    if (ok)
        select(expert, ranks.front());
    return ok;
}

bool PlacementGrid::resetPlacement() {
    if (document_->scenario().layout.expert_placement.empty())
        return false;
    return applyEdit(tr("Reset expert placement (round-robin)"),
                     [](const Scenario& scenario, const std::string& base_dir) {
                         return setField(scenario, "layout.expert_placement",
                                         FieldValue(std::vector<ExpertPlacement>{}), base_dir);
                     });
}

// ---------------------------------------------------------------------------------------------
// Load from the report

void PlacementGrid::showResult(const EvaluationResultPtr& result) {
    result_ = result;
    canvas_->update();
}

bool PlacementGrid::resultMatches() const {
    return result_ && result_->scenario == document_->scenario();
}

double PlacementGrid::expertTokens(int expert) const {
    if (!result_ || result_->scenario.model != document_->scenario().model ||
        result_->scenario.routing != document_->scenario().routing)
        return -1;
    const ExpertLoad& load = result_->report.load;
    if (load.experts != experts_ || load.moe_layers <= 0 || expert < 0 || expert >= experts_)
        return -1;
    const auto at = [&](int l) {
        return load.tokens_per_expert[static_cast<size_t>(l) * load.experts + expert];
    };
    if (layer_ >= 0)
        return layer_ < load.moe_layers ? at(layer_) : -1;
    double sum = 0;
    for (int l = 0; l < load.moe_layers; ++l)
        sum += at(l);
    return sum / load.moe_layers;
}

double PlacementGrid::rankTokens(int rank) const {
    if (!resultMatches())
        return -1;
    const ExpertLoad& load = result_->report.load;
    if (load.ep != ep_ || load.sampled_groups <= 0 || rank < 0 || rank >= ep_)
        return -1;
    // EP group 0's sample: the GPUs the column headers name.
    const auto at = [&](int l) {
        return load.rank_tokens[(static_cast<size_t>(l) * load.sampled_groups) * load.ep +
                                static_cast<size_t>(rank)];
    };
    if (layer_ >= 0)
        return layer_ < load.moe_layers ? at(layer_) : -1;
    double sum = 0;
    for (int l = 0; l < load.moe_layers; ++l)
        sum += at(l);
    return load.moe_layers > 0 ? sum / load.moe_layers : -1;
}

// ---------------------------------------------------------------------------------------------
// PlacementCanvas

namespace detail {

PlacementCanvas::PlacementCanvas(PlacementGrid* grid)
    : QWidget(grid)
    , grid_(grid) {
    setObjectName(QStringLiteral("placementCanvas"));
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setAccessibleName(tr("Expert placement"));
    setAccessibleDescription(
        tr("EP ranks as columns and their experts. Arrows select an expert; M moves it to the "
           "next rank, R replicates it there, Delete removes the replica; Shift+Left/Right move "
           "and Ctrl+Shift+Left/Right replicate toward the previous or next rank."));
}

QSize PlacementCanvas::sizeHint() const {
    const QRect last = grid_->columnRect(grid_->ep_ - 1);
    return {last.right() + kMargin, last.bottom() + kMargin + 4};
}

PlacementCanvas::Loads PlacementCanvas::loads() const {
    // Mean tokens per expert and per rank: chips and headers are coloured relative to them.
    Loads loads;
    double expert_sum = 0;
    int known = 0;
    for (int e = 0; e < grid_->experts_; ++e) {
        const double t = grid_->expertTokens(e);
        if (t >= 0) {
            expert_sum += t;
            ++known;
        }
    }
    loads.expert_mean = known > 0 ? expert_sum / known : 0;
    double rank_sum = 0;
    double rank_max = 0;
    for (int r = 0; r < grid_->ep_; ++r) {
        const double t = grid_->rankTokens(r);
        rank_sum += std::max(0.0, t);
        if (t > rank_max) {
            rank_max = t;
            loads.hottest_rank = r;
        }
    }
    loads.rank_mean = rank_sum / grid_->ep_;
    return loads;
}

void PlacementCanvas::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette& pal = palette();
    p.fillRect(rect(), pal.color(QPalette::Base));
    const experiment::Fonts fonts(font());
    if (grid_->experts_ == 0) {
        p.setPen(pal.color(QPalette::Text));
        p.drawText(rect().adjusted(10, 10, -10, -10), Qt::AlignLeft | Qt::AlignTop,
                   tr("Dense model: there are no experts to place."));
        return;
    }
    const auto on_rank = grid_->expertsOnRank();
    const bool current = grid_->resultMatches();
    const Placement* placement = current ? grid_->result_->report.placement.get() : nullptr;
    const std::vector<ParallelGroup>* ep_groups =
        placement ? &placement->groupsOf(GroupKind::ep) : nullptr;
    const Loads load = loads();
    for (int r = 0; r < grid_->ep_; ++r) {
        paintColumn(p, fonts, r, ep_groups, load);
        for (int e : on_rank[static_cast<size_t>(r)])
            paintChip(p, fonts, e, r, load.expert_mean);
    }
    if (dragging_ && pressed_)
        paintDraggedChip(p, fonts);
}

void PlacementCanvas::paintColumn(QPainter& p, const experiment::Fonts& fonts, int r,
                                  const std::vector<ParallelGroup>* ep_groups,
                                  const Loads& load) const {
    const QPalette& pal = palette();
    const QRect column = grid_->columnRect(r);
    const bool target = dragging_ && r == drop_rank_;
    QColor column_face = pal.color(QPalette::AlternateBase);
    if (target)
        column_face = drop_valid_ ? experiment::chipFace(pal, QColor(0x2f, 0xa0, 0x5a), 0.25)
                                  : experiment::chipFace(pal, experiment::refusalColor(pal), 0.25);
    p.setPen(QPen(pal.color(QPalette::Mid), 1));
    p.setBrush(column_face);
    p.drawRoundedRect(QRectF(column).adjusted(0.5, 0.5, -0.5, -0.5), 5, 5);
    p.setBrush(Qt::NoBrush);

    // Header: rank, GPU and node, tokens on this rank versus the mean.
    p.setPen(pal.color(QPalette::Text));
    p.setFont(fonts.bold);
    p.drawText(QRect(column.left() + 6, column.top() + 2, column.width() - 12, 16),
               Qt::AlignLeft | Qt::AlignVCenter, tr("rank %1").arg(r));
    p.setFont(fonts.small);
    QString where = tr("GPU …");
    if (ep_groups && !ep_groups->empty() && r < static_cast<int>(ep_groups->front().gpus.size())) {
        const int gpu = ep_groups->front().gpus[static_cast<size_t>(r)];
        const int gpus_per_node = std::max(1, grid_->document_->scenario().cluster.gpus_per_node);
        where = tr("GPU %1 · node %2").arg(gpu).arg(gpu / gpus_per_node);
    }
    p.drawText(QRect(column.left() + 6, column.top() + 17, column.width() - 12, 14),
               Qt::AlignLeft | Qt::AlignVCenter,
               p.fontMetrics().elidedText(where, Qt::ElideRight, column.width() - 12));
    const QRect load_line(column.left() + 6, column.top() + 31, column.width() - 12, 14);
    const double t = grid_->rankTokens(r);
    if (t >= 0 && load.rank_mean > 0) {
        const double ratio = t / load.rank_mean;
        if (r == load.hottest_rank && ratio > 1.005) {
            p.setPen(experiment::refusalColor(pal));
            QFont small_bold = fonts.small;
            small_bold.setBold(true);
            p.setFont(small_bold);
        }
        p.drawText(load_line, Qt::AlignLeft | Qt::AlignVCenter,
                   tr("%1 tok ×%2").arg(experiment::formatCount(t)).arg(ratio, 0, 'f', 2));
        p.setFont(fonts.small);
    } else {
        p.drawText(load_line, Qt::AlignLeft | Qt::AlignVCenter, tr("load …"));
    }
}

void PlacementCanvas::paintChip(QPainter& p, const experiment::Fonts& fonts, int e, int r,
                                double expert_mean) const {
    const QPalette& pal = palette();
    if (dragging_ && pressed_ && pressed_->first == e && pressed_->second == r && !drop_replicate_)
        p.setOpacity(0.35);
    const QRect chip = grid_->chipRect(e, r);
    const int replicas = static_cast<int>(grid_->ranks_of_expert_[static_cast<size_t>(e)].size());
    const double tokens = grid_->expertTokens(e);
    // Each replica takes an even share of the expert's tokens; colour = that share versus the
    // mean expert (mean -> middle of the ramp, 2x mean -> hottest).
    const double share = tokens >= 0 ? tokens / replicas : -1;
    const QColor fill = share >= 0 && expert_mean > 0 ? utilizationColor(share / (2 * expert_mean))
                                                      : pal.color(QPalette::Button);
    p.setPen(Qt::NoPen);
    p.setBrush(fill);
    p.drawRoundedRect(QRectF(chip), 4, 4);
    const bool selected =
        grid_->selection_ && grid_->selection_->first == e && grid_->selection_->second == r;
    if (selected) {
        p.setPen(QPen(pal.color(QPalette::Highlight), hasFocus() ? 3 : 2));
        p.setBrush(Qt::NoBrush);
        p.drawRoundedRect(QRectF(chip).adjusted(1, 1, -1, -1), 4, 4);
    }
    p.setPen(experiment::textOn(fill));
    p.setFont(fonts.bold);
    QString label = tr("E%1").arg(e);
    if (replicas > 1)
        label += QStringLiteral(" ·%1").arg(replicas);
    p.drawText(chip.adjusted(6, 0, -4, 0), Qt::AlignLeft | Qt::AlignVCenter, label);
    if (share >= 0 && expert_mean > 0) {
        p.setFont(fonts.small);
        p.drawText(chip.adjusted(4, 0, -6, 0), Qt::AlignRight | Qt::AlignVCenter,
                   QStringLiteral("×%1").arg(share / expert_mean, 0, 'f', 2));
    }
    p.setOpacity(1.0);
}

void PlacementCanvas::paintDraggedChip(QPainter& p, const experiment::Fonts& fonts) const {
    const QPalette& pal = palette();
    QRect chip = grid_->chipRect(pressed_->first, pressed_->second);
    chip.moveCenter(drag_pos_);
    p.setOpacity(0.85);
    p.setPen(QPen(pal.color(QPalette::Highlight), 2));
    p.setBrush(pal.color(QPalette::Button));
    p.drawRoundedRect(QRectF(chip), 4, 4);
    p.setPen(pal.color(QPalette::ButtonText));
    p.setFont(fonts.bold);
    p.drawText(chip, Qt::AlignCenter,
               (drop_replicate_ ? tr("+E%1") : tr("E%1")).arg(pressed_->first));
    p.setOpacity(1.0);
}

void PlacementCanvas::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton)
        return;
    setFocus(Qt::MouseFocusReason);
    const QPoint pos = event->position().toPoint();
    pressed_ = grid_->chipAt(pos);
    press_pos_ = pos;
    dragging_ = false;
    drop_rank_ = -1;
    if (pressed_)
        grid_->select(pressed_->first, pressed_->second);
    update();
}

void PlacementCanvas::mouseMoveEvent(QMouseEvent* event) {
    if (!pressed_ || !(event->buttons() & Qt::LeftButton))
        return;
    const QPoint pos = event->position().toPoint();
    if (!dragging_ && (pos - press_pos_).manhattanLength() < QApplication::startDragDistance())
        return;
    dragging_ = true;
    drag_pos_ = pos;
    const int rank = grid_->rankAt(pos);
    const bool replicate = event->modifiers().testFlag(Qt::ControlModifier);
    if (rank != drop_rank_ || replicate != drop_replicate_) {
        drop_rank_ = rank;
        drop_replicate_ = replicate;
        drop_valid_ = false;
        drop_preview_.clear();
        const auto [e, from] = *pressed_;
        std::vector<int> ranks = grid_->ranks_of_expert_[static_cast<size_t>(e)];
        if (rank >= 0 && rank != from) {
            if (std::find(ranks.begin(), ranks.end(), rank) != ranks.end()) {
                drop_preview_ = tr("Refused: expert %1 is already on EP rank %2").arg(e).arg(rank);
            } else {
                if (replicate)
                    ranks.push_back(rank);
                else
                    std::replace(ranks.begin(), ranks.end(), from, rank);
                const int layer = grid_->layer_;
                const FieldEditResult preview =
                    grid_->document_->preview([&](const Scenario& scenario, const std::string&) {
                        return setExpertRanks(scenario, layer, e, ranks);
                    });
                drop_valid_ = preview.ok();
                drop_preview_ =
                    drop_valid_
                        ? (replicate ? tr("Drop: replicate expert %1 onto EP rank %2")
                                     : tr("Drop: move expert %1 to EP rank %2"))
                              .arg(e)
                              .arg(rank)
                        : tr("Refused: %1").arg(experiment::firstError(preview.diagnostics));
            }
        }
        grid_->status_->setText(drop_preview_);
        grid_->status_->setVisible(!drop_preview_.isEmpty());
    }
    update();
}

void PlacementCanvas::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton)
        return;
    const auto pressed = pressed_;
    const bool was_dragging = dragging_;
    const int rank = grid_->rankAt(event->position().toPoint());
    const bool replicate = event->modifiers().testFlag(Qt::ControlModifier);
    pressed_.reset();
    dragging_ = false;
    drop_rank_ = -1;
    drop_preview_.clear();
    grid_->setMessage(grid_->message_, !grid_->message_.isEmpty());
    if (pressed && was_dragging && rank >= 0 && rank != pressed->second) {
        if (replicate)
            grid_->replicateExpert(pressed->first, rank);
        else
            grid_->moveExpert(pressed->first, pressed->second, rank);
    }
    update();
}

QList<KeyBinding> PlacementCanvas::keyBindings() {
    return {{tr("Arrow keys"), tr("select another expert")},
            {tr("M / Shift+M, Shift+Left / Shift+Right"),
             tr("move the selected expert to the next (previous) rank without it")},
            {tr("R / Shift+R, Ctrl+Shift+Left / Ctrl+Shift+Right"),
             tr("replicate the selected expert there")},
            {tr("Delete"), tr("remove the selected replica")},
            {tr("Escape"), tr("cancel a drag")}};
}

void PlacementCanvas::keyPressEvent(QKeyEvent* event) {
    const bool ctrl = event->modifiers().testFlag(Qt::ControlModifier);
    const bool shift = event->modifiers().testFlag(Qt::ShiftModifier);
    const int ep = grid_->ep_;
    if (!grid_->selection_) {
        // The first key selects the first chip, so the keyboard never starts from nowhere.
        if (grid_->experts_ > 0 && (event->key() == Qt::Key_Left || event->key() == Qt::Key_Right ||
                                    event->key() == Qt::Key_Up || event->key() == Qt::Key_Down)) {
            const auto on_rank = grid_->expertsOnRank();
            for (int r = 0; r < ep; ++r)
                if (!on_rank[static_cast<size_t>(r)].empty()) {
                    grid_->select(on_rank[static_cast<size_t>(r)].front(), r);
                    break;
                }
            event->accept();
            return;
        }
        QWidget::keyPressEvent(event);
        return;
    }
    const auto [e, r] = *grid_->selection_;
    const auto on_rank = grid_->expertsOnRank();
    const auto& column = on_rank[static_cast<size_t>(r)];
    const int row = static_cast<int>(std::find(column.begin(), column.end(), e) - column.begin());
    /// The next rank in `direction` that does not hold expert e yet (for replicas), wrapping.
    const auto nextFree = [&](int direction) {
        const auto& ranks = grid_->ranks_of_expert_[static_cast<size_t>(e)];
        for (int step = 1; step < ep; ++step) {
            const int candidate = ((r + direction * step) % ep + ep) % ep;
            if (std::find(ranks.begin(), ranks.end(), candidate) == ranks.end())
                return candidate;
        }
        return -1;
    };
    switch (event->key()) {
    case Qt::Key_Left:
    case Qt::Key_Right: {
        const int direction = event->key() == Qt::Key_Left ? -1 : +1;
        if (shift) {
            const int target = nextFree(direction);
            if (target >= 0) {
                if (ctrl)
                    grid_->replicateExpert(e, target);
                else
                    grid_->moveExpert(e, r, target);
            }
            break;
        }
        const int next = r + direction;
        if (next >= 0 && next < ep && !on_rank[static_cast<size_t>(next)].empty()) {
            const auto& other = on_rank[static_cast<size_t>(next)];
            grid_->select(
                other[static_cast<size_t>(std::min<int>(row, static_cast<int>(other.size()) - 1))],
                next);
        }
        break;
    }
    case Qt::Key_Up:
    case Qt::Key_Down: {
        const int next = row + (event->key() == Qt::Key_Up ? -1 : +1);
        if (next >= 0 && next < static_cast<int>(column.size()))
            grid_->select(column[static_cast<size_t>(next)], r);
        break;
    }
    case Qt::Key_M: {
        const int target = nextFree(shift ? -1 : +1);
        if (target >= 0)
            grid_->moveExpert(e, r, target);
        break;
    }
    case Qt::Key_R: {
        const int target = nextFree(shift ? -1 : +1);
        if (target >= 0)
            grid_->replicateExpert(e, target);
        break;
    }
    case Qt::Key_Delete:
    case Qt::Key_Backspace:
        grid_->removeReplica(e, r);
        break;
    case Qt::Key_Escape:
        if (dragging_) {
            pressed_.reset();
            dragging_ = false;
            update();
            break;
        }
        QWidget::keyPressEvent(event);
        return;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    event->accept();
}

bool PlacementCanvas::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        if (const auto chip = grid_->chipAt(help->pos())) {
            const auto [e, r] = *chip;
            const auto& ranks = grid_->ranks_of_expert_[static_cast<size_t>(e)];
            QStringList where;
            for (int rank : ranks)
                where << QString::number(rank);
            const double tokens = grid_->expertTokens(e);
            QString text = tr("<b>Expert %1</b> on EP rank %2<br>Replicas on EP ranks %3")
                               .arg(e)
                               .arg(r)
                               .arg(where.join(QStringLiteral(", ")));
            if (tokens >= 0)
                text +=
                    tr("<br>%1 token slots per micro-batch; %2 on this replica")
                        .arg(experiment::formatCount(tokens))
                        .arg(experiment::formatCount(tokens / static_cast<double>(ranks.size())));
            text += tr("<br>Drag to move, Ctrl-drag to replicate; M / R / Delete");
            QToolTip::showText(help->globalPos(), text, this, grid_->chipRect(e, r));
        } else {
            QToolTip::hideText();
        }
        return true;
    }
    return QWidget::event(event);
}

} // namespace detail

} // namespace moe::widgets
