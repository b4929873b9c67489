#pragma once
// The step timeline's canvas and legend widgets, private to timeline/: rows, axis and labels in
// a scroll area whose time is zoomed and panned by hand, and the legend under it laid out and
// painted like the export's.

#include "moe_widgets/common/key_bindings.h"
#include "timeline/gantt_paint.h"

#include <QAbstractScrollArea>
#include <QPoint>
#include <QString>
#include <QWidget>

#include <vector>

namespace moe::widgets {

class ViewState;

class GanttCanvas : public QAbstractScrollArea {
public:
    explicit GanttCanvas(QWidget* parent);

    static constexpr double kBarScale = 10000.0;
    /// The keys keyPressEvent handles, for Help > Keyboard shortcuts.
    static QList<KeyBinding> keyBindings();

    GanttData data;
    GanttFrame frame;
    GanttTimeAxis axis;
    bool fitted = true;
    QString message; ///< shown instead of rows (no result, or the simulation failed)
    ViewState* state = nullptr;

    double minSpan() const { return std::max(1e-7, data.total_s() * 1e-6); }
    int chartWidth() const;

    void relayout();
    void updateBars();
    void syncHorizontal();
    void setAxis(const GanttTimeAxis& a);
    void fit();
    void zoom(double factor, double anchor_x);
    void pan(double dx);
    void toggle(int row);

    /// Tooltip text at a viewport point (gantt_tooltips.cpp).
    QString toolTip(const QPoint& pos) const;

protected:
    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent*) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool viewportEvent(QEvent* event) override;

private:
    QString labelToolTip(const GanttRow& row, int index) const;
    QString spanToolTip(const GanttRow& row, int visible_index, const QPoint& pos,
                        int content_y) const;

    bool syncing_ = false;
    bool dragging_ = false;
    QPoint drag_origin_;
    GanttTimeAxis drag_axis_;
    int drag_scroll_ = 0;
};

/// The legend under the chart, laid out and painted like the export's.
class GanttLegend : public QWidget {
public:
    explicit GanttLegend(QWidget* parent);
    void setEntries(std::vector<gantt::LegendEntry> entries);
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override { return {400, heightForWidth(std::max(400, width()))}; }
    QSize minimumSizeHint() const override { return {100, heightForWidth(std::max(100, width()))}; }

protected:
    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    std::vector<gantt::LegendEntry> entries_;
};

} // namespace moe::widgets
