#include "moe_widgets/experiments/layout_bar.h"

#include "experiments/experiment_support.h"
#include "moe/placement.h"
#include "moe_widgets/document/scenario_document.h"

#include <QApplication>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <numeric>

namespace moe::widgets {

namespace {

constexpr int kChipWidth = 124;
constexpr int kChipHeight = 58;
constexpr int kSpacing = 8;
constexpr int kMargin = 6;
constexpr int kLabelWidth = 58; ///< "inner" / "outer" captions either side of the chips
constexpr int kArrowWidth = 18;
constexpr int kStatusMinWidth = 260;
/// How many refused degrees a chip walks past looking for a valid one (DP steps are small:
/// one node at a time, and most node counts break global_batch % dp).
constexpr int kMaxTries = 6;
constexpr int kMaxDpTries = 16;
/// Refused candidates listed per direction (the tooltip stays short).
constexpr int kMaxRefusedShown = 3;

QString dimName(Dim d) {
    return QString::fromLatin1(toString(d)).toUpper();
}

QString dimMeaning(Dim d) {
    switch (d) {
    case Dim::tp:
        return LayoutBar::tr("tensor parallelism (attention, dense FFN)");
    case Dim::cp:
        return LayoutBar::tr("context parallelism (sequence split)");
    case Dim::ep:
        return LayoutBar::tr("expert parallelism (experts spread over the group)");
    case Dim::dp:
        return LayoutBar::tr("data parallelism (replicas of the dense grid)");
    case Dim::pp:
        return LayoutBar::tr("pipeline parallelism (stages)");
    }
    return {};
}

GroupKind groupKind(Dim d) {
    switch (d) {
    case Dim::tp:
        return GroupKind::tp;
    case Dim::cp:
        return GroupKind::cp;
    case Dim::ep:
        return GroupKind::ep;
    case Dim::dp:
        return GroupKind::dp;
    case Dim::pp:
        return GroupKind::pp;
    }
    return GroupKind::tp;
}

QVector<int> divisorsOf(int n) {
    QVector<int> out;
    for (int i = 1; i <= n; ++i)
        if (n % i == 0)
            out << i;
    return out;
}

} // namespace

LayoutBar::LayoutBar(ScenarioDocument* document, QWidget* parent)
    : QWidget(parent)
    , document_(document) {
    setObjectName(QStringLiteral("layoutBar"));
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setAccessibleName(tr("Parallel layout"));
    setAccessibleDescription(
        tr("Parallel dimensions in rank order, innermost first. Left and Right choose a "
           "dimension, Ctrl+Left and Ctrl+Right move it, Up and Down change its degree, "
           "Shift+Up and Shift+Down change the expert tensor parallelism."));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    connect(document_, &ScenarioDocument::scenarioChanged, this, &LayoutBar::onScenarioChanged);
    onScenarioChanged();
}

LayoutBar::~LayoutBar() = default;

QSize LayoutBar::sizeHint() const {
    // Room for the status line, but not so much that the toolbar widens the window.
    return {2 * kMargin + 2 * kLabelWidth + kDimCount * (kChipWidth + kSpacing) + kStatusMinWidth,
            kChipHeight + 2 * kMargin};
}

QSize LayoutBar::minimumSizeHint() const {
    return {2 * kMargin + kLabelWidth + kDimCount * (kChipWidth + kSpacing),
            kChipHeight + 2 * kMargin};
}

RankOrder LayoutBar::order() const {
    return order_;
}

int LayoutBar::indexOf(Dim d) const {
    for (int i = 0; i < kDimCount; ++i)
        if (order_[static_cast<size_t>(i)] == d)
            return i;
    return 0;
}

QRect LayoutBar::chipRect(Dim d) const {
    return chip_rects_.value(indexOf(d));
}

QRect LayoutBar::arrowRect(Dim d, bool up) const {
    const QRect chip = chipRect(d);
    const int half = chip.height() / 2;
    return up ? QRect(chip.right() - kArrowWidth + 1, chip.top(), kArrowWidth, half)
              : QRect(chip.right() - kArrowWidth + 1, chip.top() + half, kArrowWidth,
                      chip.height() - half);
}

void LayoutBar::setFocusedDim(Dim d) {
    focus_ = d;
    update();
}

void LayoutBar::onScenarioChanged() {
    order_ = document_->scenario().layout.order;
    // A refusal is about the scenario it was refused against; any change (an undo, the editor)
    // makes it stale. An applied edit of this bar clears it too.
    setMessage({});
    if (!dragging_)
        pressed_.reset();
    layoutChips();
    update();
}

void LayoutBar::layoutChips() {
    chip_rects_.clear();
    int x = kMargin + kLabelWidth;
    for (int i = 0; i < kDimCount; ++i) {
        chip_rects_ << QRect(x, kMargin, kChipWidth, kChipHeight);
        x += kChipWidth + kSpacing;
    }
    x += kLabelWidth;
    status_rect_ = QRect(x, kMargin, std::max(0, width() - x - kMargin), kChipHeight);
}

void LayoutBar::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    layoutChips();
}

void LayoutBar::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        update();
}

void LayoutBar::showResult(const EvaluationResultPtr& result) {
    result_ = result;
    update();
}

void LayoutBar::setMessage(const QString& message) {
    if (message_ == message)
        return;
    message_ = message;
    emit messageChanged(message_);
    update();
}

// ---------------------------------------------------------------------------------------------
// Degrees

int LayoutBar::currentDegree(Dim d, bool etp) const {
    const LayoutSpec& l = document_->scenario().layout;
    return etp ? l.etp : degree(l, d);
}

/// The degrees a chip can take, ascending. TP, CP, PP, EP and ETP divide the GPU count (the
/// grids tile the GPUs). DP is GPUs / (tp*cp*pp), so a DP degree is a GPU count: dp' must give
/// whole nodes (whole racks when the rack is the NVLink domain), i.e. dp'*tp*cp*pp a multiple
/// of the unit, which makes dp' a multiple of unit / gcd(unit, tp*cp*pp).
QVector<int> LayoutBar::degreeSequence(Dim d, bool etp) const {
    const Scenario& s = document_->scenario();
    const int gpus = s.cluster.gpuCount();
    if (etp || d != Dim::dp)
        return divisorsOf(std::max(1, gpus));
    const int model_parallel = std::max(1, s.layout.tp * s.layout.cp * s.layout.pp);
    const int unit = s.cluster.scale_up_domain == ScaleUpDomain::rack
                         ? s.cluster.gpus_per_node * s.cluster.nodes_per_rack
                         : s.cluster.gpus_per_node;
    const int step = std::max(1, unit / std::gcd(std::max(1, unit), model_parallel));
    QVector<int> out;
    const int top = std::max(s.layout.dp, 1) * 4 + step;
    for (int dp = step; dp <= top; dp += step)
        out << dp;
    if (!out.contains(s.layout.dp))
        out << s.layout.dp;
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<FieldAssignment> LayoutBar::degreeAssignments(Dim d, int value, bool etp) const {
    if (etp)
        return {{"layout.etp", int64_t{value}}};
    if (d == Dim::dp) {
        // dp follows the GPU count (dp = GPUs / (tp*cp*pp)), so more replicas mean more nodes.
        const Scenario& s = document_->scenario();
        const int64_t gpus = static_cast<int64_t>(value) * s.layout.tp * s.layout.cp * s.layout.pp;
        const int64_t per_node = std::max(1, s.cluster.gpus_per_node);
        if (gpus % per_node != 0)
            return {{"layout.dp", int64_t{value}}}; // refused with the rule's reason
        return {{"cluster.nodes", gpus / per_node}};
    }
    return {{std::string("layout.") + toString(d), int64_t{value}}};
}

QVector<LayoutBar::Candidate> LayoutBar::candidates(Dim d, bool etp) const {
    const QVector<int> sequence = degreeSequence(d, etp);
    const int current = currentDegree(d, etp);
    const int at = static_cast<int>(sequence.indexOf(current));
    const int tries = (!etp && d == Dim::dp) ? kMaxDpTries : kMaxTries;
    QVector<Candidate> out;
    for (const int direction : {-1, +1}) {
        QVector<Candidate> side;
        int refused = 0;
        for (int i = at + direction, n = 0; i >= 0 && i < sequence.size() && n < tries;
             i += direction, ++n) {
            Candidate c;
            c.degree = sequence[i];
            const FieldEditResult preview =
                document_->previewFields(degreeAssignments(d, c.degree, etp));
            c.valid = preview.ok();
            if (!c.valid)
                c.reason = experiment::firstError(preview.diagnostics);
            if (c.valid || refused < kMaxRefusedShown)
                side << c;
            if (c.valid)
                break;
            ++refused;
        }
        if (direction < 0)
            std::reverse(side.begin(), side.end());
        out += side;
    }
    std::sort(out.begin(), out.end(),
              [](const Candidate& a, const Candidate& b) { return a.degree < b.degree; });
    return out;
}

bool LayoutBar::applyAssignments(const QString& text,
                                 const std::vector<FieldAssignment>& assignments) {
    const Diagnostics diagnostics = document_->setFields(text, assignments);
    if (hasErrors(diagnostics)) {
        setMessage(tr("Not applied: %1").arg(experiment::firstError(diagnostics)));
        return false;
    }
    setMessage({});
    return true;
}

bool LayoutBar::setDegree(Dim d, int value, bool etp) {
    const QString name = etp ? QStringLiteral("ETP") : dimName(d);
    const int from = currentDegree(d, etp);
    if (value == from)
        return false;
    return applyAssignments(tr("%1 %2 → %3").arg(name).arg(from).arg(value),
                            degreeAssignments(d, value, etp));
}

bool LayoutBar::stepDegree(Dim d, int direction, bool etp) {
    if (etp && d != Dim::ep)
        return false;
    const int current = currentDegree(d, etp);
    const QVector<Candidate> all = candidates(d, etp);
    std::optional<Candidate> refused;
    // Nearest first in the chosen direction.
    QVector<Candidate> side;
    for (const Candidate& c : all)
        if ((direction > 0 && c.degree > current) || (direction < 0 && c.degree < current))
            side << c;
    if (direction < 0)
        std::reverse(side.begin(), side.end());
    for (const Candidate& c : side) {
        if (c.valid)
            return setDegree(d, c.degree, etp);
        if (!refused)
            refused = c;
    }
    const QString name = etp ? QStringLiteral("ETP") : dimName(d);
    if (refused)
        setMessage(
            tr("Not applied: %1 = %2: %3").arg(name).arg(refused->degree).arg(refused->reason));
    else
        setMessage(tr("Not applied: no %1 degree %2 %3")
                       .arg(name, direction > 0 ? tr("above") : tr("below"))
                       .arg(current));
    return false;
}

bool LayoutBar::moveDim(Dim d, int index) {
    index = std::clamp(index, 0, kDimCount - 1);
    const int from = indexOf(d);
    if (from == index)
        return false;
    RankOrder next = order_;
    std::vector<Dim> list(next.begin(), next.end());
    list.erase(list.begin() + from);
    list.insert(list.begin() + index, d);
    std::copy(list.begin(), list.end(), next.begin());
    const QString order = QString::fromStdString(toString(next));
    return applyAssignments(
        tr("Move %1 to position %2 (order %3)").arg(dimName(d)).arg(index + 1).arg(order),
        {{"layout.order", order.toStdString()}});
}

// ---------------------------------------------------------------------------------------------
// Text

QString LayoutBar::spanText(Dim d) const {
    const Scenario& s = document_->scenario();
    if (degree(s.layout, d) <= 1)
        return tr("not split");
    if (!result_ || !result_->report.placement || result_->scenario.layout != s.layout ||
        result_->scenario.cluster != s.cluster)
        return tr("…");
    const GroupSpan& span = result_->report.placement->spanOf(groupKind(d));
    const QString fabric = QString::fromStdString(s.cluster.gpu.scale_up_fabric);
    if (span.link_class == LinkClass::scale_up)
        return span.nodes > 1 ? tr("%1 · %2 nodes").arg(fabric).arg(span.nodes) : fabric;
    return span.nodes > 1 ? tr("across %1 nodes").arg(span.nodes)
                          : tr("across %1 domains").arg(span.domains);
}

QString LayoutBar::chipTooltip(Dim d) const {
    const Scenario& s = document_->scenario();
    const int position = indexOf(d);
    QString html = tr("<b>%1 = %2</b> — %3<br>Position %4 of 5 in the rank order (%5), "
                      "innermost first; groups: %6.")
                       .arg(dimName(d))
                       .arg(degree(s.layout, d))
                       .arg(dimMeaning(d).toHtmlEscaped())
                       .arg(position + 1)
                       .arg(QString::fromStdString(toString(s.layout.order)))
                       .arg(spanText(d).toHtmlEscaped());
    if (d == Dim::ep)
        html += tr("<br>Folded expert grid: ETP = %1, expert-DP = tp·cp·dp / (ep·etp) = %2.")
                    .arg(s.layout.etp)
                    .arg(s.layout.expertDp());
    if (d == Dim::dp)
        html += tr("<br>DP = GPUs / (tp·cp·pp): changing it adds or removes nodes.");
    const auto listCandidates = [&](bool etp) {
        QString out;
        for (const Candidate& c : candidates(d, etp)) {
            if (c.valid)
                out += tr("<br>&nbsp;&nbsp;%1 — ok").arg(c.degree);
            else
                out += tr("<br>&nbsp;&nbsp;<span style='color:gray'>%1 — %2</span>")
                           .arg(c.degree)
                           .arg(c.reason.toHtmlEscaped());
        }
        return out;
    };
    html += tr("<br><br><b>Neighbouring degrees</b> (wheel or Up/Down):") + listCandidates(false);
    if (d == Dim::ep)
        html += tr("<br><b>ETP</b> (Shift+wheel or Shift+Up/Down):") + listCandidates(true);
    html += tr("<br><br>Drag the chip (or Ctrl+Left/Right) to change the rank order.");
    return html;
}

// ---------------------------------------------------------------------------------------------
// Painting

namespace {

/// The two downward/upward triangles of a chip's degree stepper, in the column at `ax`.
void paintStepperArrows(QPainter& p, const QRect& chip, int ax, const QColor& text) {
    const auto arrow = [&](bool up) {
        const QRectF a(ax, up ? chip.top() : chip.top() + chip.height() / 2, kArrowWidth,
                       chip.height() / 2);
        const QPointF c = a.center();
        QPolygonF tri;
        if (up)
            tri << QPointF(c.x() - 4, c.y() + 2) << QPointF(c.x() + 4, c.y() + 2)
                << QPointF(c.x(), c.y() - 3);
        else
            tri << QPointF(c.x() - 4, c.y() - 2) << QPointF(c.x() + 4, c.y() - 2)
                << QPointF(c.x(), c.y() + 3);
        p.setBrush(text);
        p.setPen(Qt::NoPen);
        p.drawPolygon(tri);
    };
    arrow(true);
    arrow(false);
    p.setBrush(Qt::NoBrush);
}

} // namespace

void LayoutBar::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const experiment::Fonts fonts(font(), 1.1);
    paintEndLabels(p, fonts);
    for (const auto& [d, r] : placedChips())
        paintChip(p, fonts, d, r, false);
    if (dragging_ && pressed_) {
        // The drop gap, then the dragged chip under the mouse.
        const QRect gap = chip_rects_.value(drop_index_);
        p.setPen(QPen(palette().color(QPalette::Highlight), 1.5, Qt::DashLine));
        p.drawRoundedRect(QRectF(gap).adjusted(1, 1, -1, -1), 6, 6);
        QRect r = chipRect(*pressed_);
        r.moveLeft(drag_x_ - r.width() / 2);
        paintChip(p, fonts, *pressed_, r.translated(0, -2), true);
    }
    if (status_rect_.width() > 40)
        paintStatus(p, fonts);
}

void LayoutBar::paintEndLabels(QPainter& p, const experiment::Fonts& fonts) const {
    p.setPen(experiment::mutedText(palette(), QPalette::Window));
    p.setFont(fonts.small);
    const QRect first = chip_rects_.value(0);
    const QRect last = chip_rects_.value(kDimCount - 1);
    p.drawText(QRect(kMargin, first.top(), kLabelWidth - 4, first.height()),
               Qt::AlignRight | Qt::AlignVCenter | Qt::TextWordWrap, tr("inner\n(NVLink)"));
    p.drawText(QRect(last.right() + 6, last.top(), kLabelWidth - 6, last.height()),
               Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, tr("outer\n(network)"));
}

QVector<std::pair<Dim, QRect>> LayoutBar::placedChips() const {
    // While dragging, the other chips close ranks around the drop gap.
    QVector<std::pair<Dim, QRect>> placed;
    if (dragging_ && pressed_) {
        int slot = 0;
        for (int i = 0; i < kDimCount; ++i) {
            const Dim d = order_[static_cast<size_t>(i)];
            if (d == *pressed_)
                continue;
            if (slot == drop_index_)
                ++slot;
            placed.push_back({d, chip_rects_.value(slot)});
            ++slot;
        }
    } else {
        for (int i = 0; i < kDimCount; ++i)
            placed.push_back({order_[static_cast<size_t>(i)], chip_rects_.value(i)});
    }
    return placed;
}

void LayoutBar::paintChip(QPainter& p, const experiment::Fonts& fonts, Dim d, QRect r,
                          bool lifted) const {
    const QPalette& pal = palette();
    const LayoutSpec& layout = document_->scenario().layout;
    const QColor accent = experiment::dimColor(d);
    const QColor face = experiment::chipFace(pal, accent, lifted ? 0.3 : 0.16);
    const QColor text = experiment::textOn(face);
    QPainterPath path;
    path.addRoundedRect(QRectF(r).adjusted(0.5, 0.5, -0.5, -0.5), 6, 6);
    if (lifted) {
        p.setOpacity(0.35);
        p.fillPath(path.translated(2, 3), pal.color(QPalette::Shadow));
        p.setOpacity(1.0);
    }
    p.fillPath(path, face);
    const bool focused = hasFocus() && d == focus_;
    p.setPen(QPen(focused ? pal.color(QPalette::Highlight) : accent, focused ? 2.5 : 1.2));
    p.drawPath(path);
    // Stripe: the dimension's hue.
    p.fillRect(QRect(r.left() + 3, r.top() + 6, 4, r.height() - 12), accent);

    p.setPen(text);
    p.setFont(fonts.bold);
    const QRect title(r.left() + 12, r.top() + 3, r.width() - 14 - kArrowWidth, 22);
    p.drawText(title, Qt::AlignLeft | Qt::AlignVCenter,
               QStringLiteral("%1 %2").arg(dimName(d)).arg(degree(layout, d)));
    p.setFont(fonts.small);
    const QRect line(r.left() + 12, r.top() + 24, r.width() - 14 - kArrowWidth, 16);
    p.drawText(line, Qt::AlignLeft | Qt::AlignVCenter,
               p.fontMetrics().elidedText(spanText(d), Qt::ElideRight, line.width()));
    if (d == Dim::ep) // the folded expert grid
        p.drawText(
            line.translated(0, 15), Qt::AlignLeft | Qt::AlignVCenter,
            p.fontMetrics().elidedText(tr("etp %1 · edp %2").arg(layout.etp).arg(layout.expertDp()),
                                       Qt::ElideRight, line.width()));
    // Arrows: the degree steppers.
    const int ax = r.right() - kArrowWidth + 1;
    p.setPen(QPen(text, 1));
    p.setOpacity(0.35);
    p.drawLine(ax, r.top() + 6, ax, r.bottom() - 6);
    p.setOpacity(1.0);
    paintStepperArrows(p, r, ax, text);
}

void LayoutBar::paintStatus(QPainter& p, const experiment::Fonts& fonts) const {
    // The newest step time, then the refusal or the drop preview or a hint.
    const QPalette& pal = palette();
    p.setFont(fonts.base);
    p.setPen(pal.color(QPalette::WindowText));
    const QRect top(status_rect_.left(), status_rect_.top() + 5, status_rect_.width(), 22);
    QString headline =
        tr("Order %1").arg(QString::fromStdString(toString(document_->scenario().layout.order)));
    if (result_)
        headline += tr("  ·  step %1  ·  %2 tokens/s")
                        .arg(experiment::formatSeconds(result_->report.step_time_s),
                             experiment::formatCount(result_->report.throughput.tokens_per_s));
    p.drawText(top, Qt::AlignLeft | Qt::AlignVCenter,
               p.fontMetrics().elidedText(headline, Qt::ElideRight, top.width()));
    const QRect bottom(status_rect_.left(), status_rect_.top() + 29, status_rect_.width(), 22);
    QString line;
    if (dragging_) {
        line = drop_preview_;
        p.setPen(drop_preview_.startsWith(tr("Refused")) ? experiment::refusalColor(pal)
                                                         : pal.color(QPalette::WindowText));
    } else if (!message_.isEmpty()) {
        line = message_;
        p.setPen(experiment::refusalColor(pal));
    } else {
        line = tr("Drag a chip to reorder · wheel or ▲▼ to change its degree");
        p.setPen(experiment::mutedText(pal, QPalette::Window));
    }
    p.setFont(fonts.small);
    p.drawText(bottom, Qt::AlignLeft | Qt::AlignVCenter,
               p.fontMetrics().elidedText(line, Qt::ElideRight, bottom.width()));
}

// ---------------------------------------------------------------------------------------------
// Mouse and keyboard

std::optional<Dim> LayoutBar::chipAt(const QPoint& pos) const {
    for (int i = 0; i < kDimCount; ++i)
        if (chip_rects_.value(i).contains(pos))
            return order_[static_cast<size_t>(i)];
    return std::nullopt;
}

int LayoutBar::insertionIndex(int x) const {
    // The slot whose centre is nearest: slots are equally wide.
    const int x0 = chip_rects_.value(0).left();
    const int pitch = kChipWidth + kSpacing;
    return std::clamp((x - x0 + kSpacing / 2) / pitch, 0, kDimCount - 1);
}

void LayoutBar::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) {
        QWidget::mousePressEvent(event);
        return;
    }
    const QPoint pos = event->position().toPoint();
    const std::optional<Dim> d = chipAt(pos);
    if (!d) {
        pressed_.reset();
        return;
    }
    focus_ = *d;
    setFocus(Qt::MouseFocusReason);
    const bool etp = event->modifiers().testFlag(Qt::ShiftModifier) && *d == Dim::ep;
    if (arrowRect(*d, true).contains(pos)) {
        stepDegree(*d, +1, etp);
        pressed_.reset();
        return;
    }
    if (arrowRect(*d, false).contains(pos)) {
        stepDegree(*d, -1, etp);
        pressed_.reset();
        return;
    }
    pressed_ = d;
    press_pos_ = pos;
    dragging_ = false;
    update();
}

void LayoutBar::mouseMoveEvent(QMouseEvent* event) {
    if (!pressed_ || !(event->buttons() & Qt::LeftButton))
        return;
    const QPoint pos = event->position().toPoint();
    if (!dragging_ && (pos - press_pos_).manhattanLength() < QApplication::startDragDistance())
        return;
    dragging_ = true;
    drag_x_ = pos.x();
    const int index = insertionIndex(pos.x());
    if (index != drop_index_) {
        drop_index_ = index;
        // Preview the drop: the order it gives and whether the rules take it.
        RankOrder next = order_;
        std::vector<Dim> list(next.begin(), next.end());
        list.erase(list.begin() + indexOf(*pressed_));
        list.insert(list.begin() + index, *pressed_);
        std::copy(list.begin(), list.end(), next.begin());
        const QString order = QString::fromStdString(toString(next));
        if (next == order_) {
            drop_preview_ = tr("Drop here: no change");
        } else {
            const FieldEditResult preview =
                document_->previewFields({{"layout.order", order.toStdString()}});
            drop_preview_ =
                preview.ok() ? tr("Drop: order %1").arg(order)
                             : tr("Refused: %1").arg(experiment::firstError(preview.diagnostics));
        }
    }
    update();
}

void LayoutBar::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton)
        return;
    const std::optional<Dim> d = pressed_;
    const bool was_dragging = dragging_;
    const int index = drop_index_;
    pressed_.reset();
    dragging_ = false;
    drop_index_ = -1;
    drop_preview_.clear();
    if (d && was_dragging)
        moveDim(*d, index);
    update();
}

void LayoutBar::wheelEvent(QWheelEvent* event) {
    const std::optional<Dim> d = chipAt(event->position().toPoint());
    const int delta =
        event->angleDelta().y() != 0 ? event->angleDelta().y() : event->angleDelta().x();
    if (!d || delta == 0) {
        event->ignore();
        return;
    }
    focus_ = *d;
    const bool etp = event->modifiers().testFlag(Qt::ShiftModifier) && *d == Dim::ep;
    stepDegree(*d, delta > 0 ? +1 : -1, etp);
    event->accept();
}

QList<KeyBinding> LayoutBar::keyBindings() {
    return {
        {tr("Left / Right, Home / End"), tr("focus another dimension")},
        {tr("Ctrl+Left / Ctrl+Right, Ctrl+Home / Ctrl+End"),
         tr("move the focused dimension in the rank order")},
        {tr("Up / Down, + / -, Page Up / Page Down, wheel"),
         tr("next or previous valid degree of the focused dimension")},
        {tr("Shift+Up / Shift+Down, Shift+wheel on EP"),
         tr("step the expert tensor parallel degree")},
        {tr("Escape"), tr("cancel a drag")},
    };
}

void LayoutBar::keyPressEvent(QKeyEvent* event) {
    const bool ctrl = event->modifiers().testFlag(Qt::ControlModifier);
    const bool shift = event->modifiers().testFlag(Qt::ShiftModifier);
    const int at = indexOf(focus_);
    switch (event->key()) {
    case Qt::Key_Left:
    case Qt::Key_Right: {
        const int next = at + (event->key() == Qt::Key_Left ? -1 : +1);
        if (next < 0 || next >= kDimCount)
            break;
        if (ctrl)
            moveDim(focus_, next);
        else
            setFocusedDim(order_[static_cast<size_t>(next)]);
        break;
    }
    case Qt::Key_Home:
    case Qt::Key_End:
        if (ctrl)
            moveDim(focus_, event->key() == Qt::Key_Home ? 0 : kDimCount - 1);
        else
            setFocusedDim(order_[event->key() == Qt::Key_Home ? 0 : kDimCount - 1]);
        break;
    case Qt::Key_Up:
    case Qt::Key_Plus:
    case Qt::Key_Equal:
    case Qt::Key_PageUp:
        stepDegree(focus_, +1, shift && focus_ == Dim::ep && event->key() == Qt::Key_Up);
        break;
    case Qt::Key_Down:
    case Qt::Key_Minus:
    case Qt::Key_PageDown:
        stepDegree(focus_, -1, shift && focus_ == Dim::ep && event->key() == Qt::Key_Down);
        break;
    case Qt::Key_Escape:
        if (dragging_) {
            pressed_.reset();
            dragging_ = false;
            drop_index_ = -1;
            update();
        } else {
            event->ignore();
        }
        return;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    event->accept();
}

bool LayoutBar::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        if (const std::optional<Dim> d = chipAt(help->pos()))
            QToolTip::showText(help->globalPos(), chipTooltip(*d), this, chipRect(*d));
        else if (status_rect_.contains(help->pos()) && !message_.isEmpty())
            QToolTip::showText(help->globalPos(), message_, this, status_rect_);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

} // namespace moe::widgets
