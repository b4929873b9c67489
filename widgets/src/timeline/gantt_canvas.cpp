#include "timeline/gantt_canvas.h"

#include "moe_widgets/document/view_state.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace moe::widgets {

using charts::ChartTheme;
using namespace gantt;

// ---------------------------------------------------------------------------------------------
// The canvas: rows, axis and labels in a scroll area; time is zoomed and panned by hand.

GanttCanvas::GanttCanvas(QWidget* parent)
    : QAbstractScrollArea(parent) {
    setFrameShape(QFrame::NoFrame);
    setFocusPolicy(Qt::StrongFocus);
    viewport()->setMouseTracking(true);
    horizontalScrollBar()->setRange(0, 0);
    connect(horizontalScrollBar(), &QScrollBar::valueChanged, this, [this](int value) {
        if (syncing_)
            return;
        const double total = data.total_s();
        const double span = axis.span_s();
        axis.start_s = std::clamp(value / kBarScale * total, 0.0, std::max(0.0, total - span));
        axis.end_s = axis.start_s + span;
        fitted = false;
        viewport()->update();
    });
    connect(verticalScrollBar(), &QScrollBar::valueChanged, viewport(),
            qOverload<>(&QWidget::update));
}

int GanttCanvas::chartWidth() const {
    return std::max(1, viewport()->width() - kLabelWidth - kRightMargin);
}

void GanttCanvas::relayout() {
    frame.build(data, data.expanded);
    updateBars();
    viewport()->update();
}

void GanttCanvas::updateBars() {
    QScrollBar* v = verticalScrollBar();
    const int page = std::max(1, viewport()->height() - kAxisHeight);
    v->setRange(0, std::max(0, frame.totalHeight() - page));
    v->setPageStep(page);
    v->setSingleStep(20);
    syncHorizontal();
}

void GanttCanvas::syncHorizontal() {
    syncing_ = true;
    QScrollBar* h = horizontalScrollBar();
    const double total = data.total_s();
    const int page = static_cast<int>(std::round(axis.span_s() / total * kBarScale));
    h->setRange(0, std::max(0, static_cast<int>(kBarScale) - page));
    h->setPageStep(std::max(1, page));
    h->setSingleStep(std::max(1, page / 10));
    h->setValue(static_cast<int>(std::round(axis.start_s / total * kBarScale)));
    syncing_ = false;
}

void GanttCanvas::setAxis(const GanttTimeAxis& a) {
    axis = a;
    syncHorizontal();
    viewport()->update();
}

void GanttCanvas::fit() {
    axis = GanttTimeAxis::fit(data.total_s(), kLabelWidth, chartWidth());
    fitted = true;
    syncHorizontal();
    viewport()->update();
}

void GanttCanvas::zoom(double factor, double anchor_x) {
    setAxis(axis.zoomed(factor, anchor_x, data.total_s(), minSpan()));
    fitted = axis.start_s <= 0 && axis.end_s >= data.total_s();
}

void GanttCanvas::pan(double dx) {
    setAxis(axis.panned(dx, data.total_s()));
    fitted = axis.start_s <= 0 && axis.end_s >= data.total_s();
}

void GanttCanvas::toggle(int row) {
    if (row < 0 || row >= static_cast<int>(data.rows.size()) ||
        data.rows[static_cast<size_t>(row)].level == GanttRow::Level::gpu)
        return;
    auto& open = data.expanded[static_cast<size_t>(row)];
    open = open != 0 ? 0 : 1;
    relayout();
}

void GanttCanvas::paintEvent(QPaintEvent*) {
    QPainter p(viewport());
    const ChartTheme theme = ChartTheme::fromPalette(palette());
    const QRect all = viewport()->rect();
    p.fillRect(all, theme.background);
    if (!message.isEmpty() || frame.visible.empty()) {
        p.setPen(theme.muted);
        p.drawText(all.adjusted(16, 16, -16, -16), Qt::AlignCenter | Qt::TextWordWrap,
                   message.isEmpty() ? QStringLiteral("No evaluation yet") : message);
        return;
    }
    QFont small = font();
    small.setPointSizeF(std::max(7.0, font().pointSizeF() * 0.9));
    const QRect rows_rect(0, kAxisHeight, all.width(), all.height() - kAxisHeight);
    paintRows(p, rows_rect, verticalScrollBar()->value(), kLabelWidth, axis, frame, theme, font(),
              small);
    p.save();
    p.setClipRect(QRect(kLabelWidth, kAxisHeight, chartWidth() + kRightMargin, rows_rect.height()));
    paintGrid(p,
              QRect(kLabelWidth, kAxisHeight, chartWidth(),
                    std::min(rows_rect.height(), frame.totalHeight())),
              axis, data, theme);
    p.restore();
    paintAxis(p, QRect(0, 0, all.width(), kAxisHeight), axis, data, theme, small);
    if (data.moe) {
        p.setPen(theme.muted);
        p.setFont(small);
        p.drawText(QRect(8, 0, kLabelWidth - 16, kAxisHeight - 2),
                   Qt::AlignVCenter | Qt::AlignRight, QStringLiteral("waiting for hot GPU"));
    }
}

void GanttCanvas::resizeEvent(QResizeEvent* event) {
    QAbstractScrollArea::resizeEvent(event);
    axis = fitted ? GanttTimeAxis::fit(data.total_s(), kLabelWidth, chartWidth())
                  : axis.resized(kLabelWidth, chartWidth());
    updateBars();
}

void GanttCanvas::wheelEvent(QWheelEvent* event) {
    const QPoint delta = event->angleDelta();
    if (event->modifiers() & Qt::ControlModifier) {
        zoom(std::pow(1.0015, delta.y()), event->position().x());
        event->accept();
        return;
    }
    if ((event->modifiers() & Qt::ShiftModifier) || delta.x() != 0) {
        const int dd = delta.x() != 0 ? delta.x() : delta.y();
        pan(-dd / 120.0 * chartWidth() / 8.0);
        event->accept();
        return;
    }
    QAbstractScrollArea::wheelEvent(event);
}

void GanttCanvas::mousePressEvent(QMouseEvent* event) {
    const QPoint pos = event->position().toPoint();
    const int k = frame.rowAtY(pos.y() - kAxisHeight + verticalScrollBar()->value());
    if (event->button() == Qt::LeftButton && pos.y() >= kAxisHeight && k >= 0 &&
        pos.x() < kLabelWidth) {
        const int row = frame.visible[static_cast<size_t>(k)];
        const GanttRow& r = data.rows[static_cast<size_t>(row)];
        if (r.level != GanttRow::Level::gpu)
            toggle(row);
        else if (state != nullptr)
            state->setSelectedGpu(r.gpu);
        return;
    }
    if (event->button() == Qt::LeftButton || event->button() == Qt::MiddleButton) {
        dragging_ = true;
        drag_origin_ = pos;
        drag_axis_ = axis;
        drag_scroll_ = verticalScrollBar()->value();
        viewport()->setCursor(Qt::ClosedHandCursor);
    }
}

void GanttCanvas::mouseMoveEvent(QMouseEvent* event) {
    if (!dragging_)
        return;
    const QPoint delta = event->position().toPoint() - drag_origin_;
    setAxis(drag_axis_.panned(-delta.x(), data.total_s()));
    fitted = axis.start_s <= 0 && axis.end_s >= data.total_s();
    verticalScrollBar()->setValue(drag_scroll_ - delta.y());
}

void GanttCanvas::mouseReleaseEvent(QMouseEvent*) {
    dragging_ = false;
    viewport()->unsetCursor();
}

void GanttCanvas::mouseDoubleClickEvent(QMouseEvent* event) {
    if (event->position().x() >= kLabelWidth)
        fit();
}

QList<KeyBinding> GanttCanvas::keyBindings() {
    return {{QObject::tr("+ / -"), QObject::tr("zoom the time axis in or out")},
            {QObject::tr("0 (or double-click)"), QObject::tr("fit the whole step")},
            {QObject::tr("Left / Right"), QObject::tr("pan by an eighth of the view")}};
}

void GanttCanvas::keyPressEvent(QKeyEvent* event) {
    const double mid = kLabelWidth + chartWidth() / 2.0;
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoom(1.5, mid);
        return;
    case Qt::Key_Minus:
        zoom(1 / 1.5, mid);
        return;
    case Qt::Key_0:
        fit();
        return;
    case Qt::Key_Left:
        pan(-chartWidth() / 8.0);
        return;
    case Qt::Key_Right:
        pan(chartWidth() / 8.0);
        return;
    default:
        QAbstractScrollArea::keyPressEvent(event);
    }
}

bool GanttCanvas::viewportEvent(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = toolTip(help->pos());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, viewport());
        return true;
    }
    return QAbstractScrollArea::viewportEvent(event);
}

// ---------------------------------------------------------------------------------------------
// The legend

GanttLegend::GanttLegend(QWidget* parent)
    : QWidget(parent) {
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
}

void GanttLegend::setEntries(std::vector<LegendEntry> entries) {
    entries_ = std::move(entries);
    updateGeometry();
    update();
}

int GanttLegend::heightForWidth(int width) const {
    if (entries_.empty())
        return 0;
    return layoutLegend(nullptr, QRect(8, 2, width - 16, 0), entries_,
                        ChartTheme::fromPalette(palette()), font()) +
           4;
}

void GanttLegend::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const ChartTheme theme = ChartTheme::fromPalette(palette());
    p.fillRect(rect(), theme.background);
    layoutLegend(&p, QRect(8, 2, width() - 16, height()), entries_, theme, font());
}

void GanttLegend::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (height() != heightForWidth(width()))
        updateGeometry();
}

} // namespace moe::widgets
