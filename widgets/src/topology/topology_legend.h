#pragma once
// The topology view's legend: what the GPU fill, the link colours and the outlines mean, beside
// the diagram and (fuller) on exported pages.

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
namespace detail {

struct MetricText {
    QString title, subtitle, low, mid, high;
};

MetricText metricText(const TopologyModel& m);
QFont pixelFont(const QFont& base, double px, bool bold = false);
/// A ramp of the shared utilization colours (as links draw them when `links`; the expert-load
/// scale's when `load`) with three tick labels under it; returns its height.
double drawRamp(QPainter& p, const QRectF& area, const ViewTheme& theme, const QString& low,
                const QString& mid, const QString& high, double px, bool links = false,
                bool load = false);
/// Draws the legend in `area`; `full` adds the symbols, the layout in words and key figures
/// (exports). Returns the height used.
double paintLegend(QPainter& p, const QRectF& area, const TopologyModel& m, bool full,
                   TopologyView::HoverGroups hover_groups);

/// The legend beside the diagram (not over it, so it never hides a rack).
class LegendWidget : public QWidget {
public:
    LegendWidget(const TopologyModel* model, const TopologyView::HoverGroups* hover,
                 QWidget* parent)
        : QWidget(parent)
        , model_(model)
        , hover_(hover) {
        setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    }
    QSize sizeHint() const override { return {260, heightFor(std::max(200, width()))}; }
    int heightFor(int w) const {
        if (!model_->report)
            return 0;
        QImage scratch(1, 1, QImage::Format_ARGB32_Premultiplied);
        QPainter dry(&scratch);
        dry.setFont(font());
        return static_cast<int>(std::ceil(
                   paintLegend(dry, QRectF(10, 10, w - 20, 1000), *model_, false, *hover_))) +
               20;
    }
    void refresh() {
        setFixedHeight(heightFor(std::max(200, width())));
        update();
    }

protected:
    void resizeEvent(QResizeEvent*) override {
        const int h = heightFor(std::max(200, width()));
        if (h != height())
            setFixedHeight(h);
    }
    void paintEvent(QPaintEvent*) override {
        if (!model_->report)
            return;
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        p.fillRect(rect(), model_->theme.background);
        p.setPen(QPen(model_->theme.pod_border, 1));
        p.drawLine(0, 0, width(), 0);
        paintLegend(p, QRectF(10, 10, width() - 20, height() - 20), *model_, false, *hover_);
    }

private:
    const TopologyModel* model_;
    const TopologyView::HoverGroups* hover_;
};

} // namespace detail
} // namespace moe::widgets
