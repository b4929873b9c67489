#include "topology/topology_legend.h"

#include "common/view_export.h"
#include "experiments/experiment_support.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/scenario_document.h"

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
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>

namespace moe::widgets {
namespace detail {

// --- Legend -----------------------------------------------------------------------------------

MetricText metricText(const TopologyModel& m) {
    switch (m.metric) {
    case GpuMetric::expert_load:
        if (m.report && m.report->load.moe_layers == 0)
            return {QStringLiteral("GPU fill: expert load"),
                    QStringLiteral("the model has no MoE layers: GPUs stay grey"),
                    QStringLiteral("1×"), QStringLiteral("1.5×"), QStringLiteral("≥ 2×")};
        return {QStringLiteral("GPU fill: expert load"),
                QStringLiteral("the GPU's busiest MoE layer, × that layer's mean"),
                QStringLiteral("≤ %1×").arg(1.0 / m.load_scale_high, 0, 'f', 2),
                QStringLiteral("1× mean"),
                QStringLiteral("≥ %1×").arg(m.load_scale_high, 0, 'f', 2)};
    case GpuMetric::memory_use: {
        const double hbm = m.result ? m.result->scenario.cluster.gpu.hbm_gb : 0;
        return {QStringLiteral("GPU fill: memory use"),
                QStringLiteral("share of HBM (%1 GB) the stage needs").arg(hbm, 0, 'f', 0),
                QStringLiteral("0%"), QStringLiteral("50%"), QStringLiteral("≥ 100%")};
    }
    case GpuMetric::idle_time:
        return {QStringLiteral("GPU fill: idle time"),
                QStringLiteral("share of the step spent waiting (bubble, slower stages, hot rank)"),
                QStringLiteral("0%"), QStringLiteral("50%"), QStringLiteral("100%")};
    case GpuMetric::traffic:
        return {QStringLiteral("GPU fill: traffic"),
                QStringLiteral("busiest link of the GPU, share of the step"), QStringLiteral("0%"),
                QStringLiteral("50%"), QStringLiteral("≥ 100%")};
    }
    return {};
}

QFont pixelFont(const QFont& base, double px, bool bold) {
    QFont f = base;
    f.setPixelSize(static_cast<int>(std::lround(px)));
    f.setBold(bold);
    return f;
}

/// A ramp of the shared utilization colours (as links draw them when `links`) with three tick
/// labels under it; returns its height.
double drawRamp(QPainter& p, const QRectF& area, const ViewTheme& theme, const QString& low,
                const QString& mid, const QString& high, double px, bool links, bool load) {
    const QRectF bar(area.left(), area.top(), area.width(), 12);
    QLinearGradient gradient(bar.topLeft(), bar.topRight());
    for (int i = 0; i <= 8; ++i)
        gradient.setColorAt(i / 8.0, load    ? loadScaleColor(i / 8.0)
                                     : links ? linkColor(i / 8.0, theme.dark)
                                             : utilizationColor(i / 8.0));
    p.setPen(QPen(theme.node_border, 1));
    p.setBrush(gradient);
    p.drawRect(bar);
    p.setFont(pixelFont(p.font(), px));
    p.setPen(theme.muted);
    const QRectF labels(bar.left(), bar.bottom() + 2, bar.width(), px * 1.5);
    p.drawText(labels, Qt::AlignLeft | Qt::AlignTop, low);
    const QFontMetricsF metrics(p.font());
    // The middle label only when it cannot touch the ends.
    if (metrics.horizontalAdvance(mid) +
            2 * std::max(metrics.horizontalAdvance(low), metrics.horizontalAdvance(high)) + 24 <=
        labels.width())
        p.drawText(labels, Qt::AlignHCenter | Qt::AlignTop, mid);
    p.drawText(labels, Qt::AlignRight | Qt::AlignTop, high);
    return bar.height() + 2 + px * 1.5;
}

namespace {

/// Groups an exported page's legend lists before summarising the rest.
constexpr int kOverlayListedOnPage = 12;

/// Paints the legend's blocks one under the other, from the top of `area` down.
class LegendPainter {
public:
    LegendPainter(QPainter& painter, const QRectF& legend_area, const TopologyModel& model,
                  bool full_legend)
        : p(painter)
        , area(legend_area)
        , m(model)
        , t(model.theme)
        , full(full_legend)
        , title_px(full_legend ? 14 : 12)
        , text_px(full_legend ? 12 : 11)
        , y(legend_area.top()) {}

    /// What the GPU fill and the link colours mean: a ramp each.
    void paintRamps();
    /// The overlay's groups: a swatch and where each of the first groups spans, then the rest
    /// summarised (in place of the fill metric's ramp).
    void paintOverlayKey();
    /// The idle link and the hottest GPU's flag.
    void paintTrafficKeys();
    /// The outline of highlighted GPUs (a clicked warning's), when there are any.
    void paintHighlightKey();
    /// The ring colours of the hovered GPU's groups, one row (on screen).
    void paintHoverKey(TopologyView::HoverGroups hover_groups);
    /// GPU, NIC and switch symbols (exports).
    void paintSymbols();
    /// The key figures and the layout in words (exports): what a reviewer asks first.
    void paintKeyFigures();
    double height() const { return y - area.top(); }
    /// Height left below what is painted.
    double room() const { return area.bottom() - y; }

private:
    /// A line (or wrapped paragraph) of text; moves down past it.
    void text(const QString& s, double px, const QColor& color, bool bold = false,
              bool wrap = false) {
        p.setFont(pixelFont(p.font(), px, bold));
        p.setPen(color);
        const QRectF r(area.left(), y, area.width(), 1000);
        const int flags = Qt::AlignLeft | Qt::AlignTop | (wrap ? Qt::TextWordWrap : 0);
        const QRectF used = p.boundingRect(r, flags, s);
        p.drawText(r, flags, s);
        y += used.height() + 2;
    }
    /// An icon drawn by `draw` and its label; moves down past them.
    void symbol(const std::function<void(const QRectF&)>& draw, const QString& label) {
        const QRectF icon(area.left(), y, 26, 16);
        draw(icon);
        p.setFont(pixelFont(p.font(), text_px));
        p.setPen(t.muted);
        p.drawText(QRectF(area.left() + 34, y - 1, area.width() - 34, 18),
                   Qt::AlignLeft | Qt::AlignVCenter, label);
        y += 21;
    }

    QPainter& p;
    const QRectF area;
    const TopologyModel& m;
    const ViewTheme& t;
    const bool full;
    const double title_px;
    const double text_px;
    double y;
};

void LegendPainter::paintRamps() {
    if (m.overlay_on) {
        paintOverlayKey();
    } else {
        const MetricText mt = metricText(m);
        text(mt.title, title_px, t.text, true, true); // wrapped: a narrow side panel clips
        text(mt.subtitle, text_px, t.muted, false, true);
        y += 2;
        y += drawRamp(p, QRectF(area.left(), y, area.width(), 30), t, mt.low, mt.mid, mt.high,
                      text_px, false, m.metric == GpuMetric::expert_load);
    }
    y += full ? 12 : 8;
    text(QStringLiteral("Links: utilization"), title_px, t.text, true, true);
    text(QStringLiteral("bytes ÷ (bandwidth × step time); labels: bytes per step · GB/s over "
                        "the step · % of bandwidth"),
         text_px, t.muted, false, true);
    y += 2;
    y += drawRamp(p, QRectF(area.left(), y, area.width(), 30), t, QStringLiteral("0%"),
                  QStringLiteral("50%"), QStringLiteral("≥ 100%"), text_px, true);
    y += 4;
}

void LegendPainter::paintOverlayKey() {
    // The core's lines: a title, the first groups with their spans, then the rest by shape.
    // Exports list more groups than the side panel.
    const std::vector<OverlayLegendLine> lines =
        full && m.result ? overlayLegend(m.overlay_groups, m.result->scenario, kOverlayListedOnPage)
                         : m.overlay_legend;
    for (size_t i = 0; i < lines.size(); ++i) {
        const QString line = QString::fromStdString(lines[i].text);
        if (i == 0) {
            text(QStringLiteral("GPU fill: ") + line, title_px, t.text, true, true);
            continue;
        }
        const int group = lines[i].group;
        const double indent = 20;
        p.setFont(pixelFont(p.font(), text_px));
        const QRectF r(area.left() + indent, y, area.width() - indent, 1000);
        const QRectF used = p.boundingRect(r, Qt::AlignLeft | Qt::TextWordWrap, line);
        if (group >= 0) {
            p.setPen(QPen(groupOverlayColor(group).darker(140), 1));
            p.setBrush(groupOverlayColor(group));
            p.drawRoundedRect(QRectF(area.left() + 1, y + 1, 13, text_px), 2, 2);
        }
        p.setPen(group >= 0 ? t.text : t.muted);
        p.drawText(r, Qt::AlignLeft | Qt::TextWordWrap, line);
        y += std::max(used.height(), text_px * 1.3) + 3;
    }
}

void LegendPainter::paintTrafficKeys() {
    p.setFont(pixelFont(p.font(), text_px));
    p.setPen(QPen(t.idle_link, 3));
    p.drawLine(QPointF(area.left(), y + text_px * 0.6),
               QPointF(area.left() + 22, y + text_px * 0.6));
    p.setPen(t.muted);
    p.drawText(QRectF(area.left() + 28, y, area.width() - 28, text_px * 1.4),
               Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("no traffic"));
    if (m.metric == GpuMetric::expert_load && m.hottest >= 0) {
        // Beside "no traffic" when there is room, else on the next line.
        const bool beside = area.width() >= 230;
        if (!beside)
            y += text_px * 1.4 + 2;
        const double x = beside ? area.left() + area.width() / 2 : area.left() + 5;
        QPainterPath flag;
        flag.moveTo(x, y + 1);
        flag.lineTo(x + 12, y + 1);
        flag.lineTo(x + 12, y + 13);
        flag.closeSubpath();
        p.setPen(Qt::NoPen);
        p.setBrush(QColor(0xD62728));
        p.drawPath(flag);
        p.setPen(t.muted);
        p.drawText(QRectF(x + 18, y, area.right() - x - 18, text_px * 1.4),
                   Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("hottest GPU"));
    }
    y += text_px * 1.4 + 4;
}

void LegendPainter::paintHighlightKey() {
    if (m.any_highlight) {
        p.setPen(QPen(t.highlight, 3));
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRectF(area.left() + 1, y + 1, 18, text_px));
        p.setPen(t.text);
        p.setFont(pixelFont(p.font(), text_px));
        const QString label =
            m.highlight_label.isEmpty() ? QStringLiteral("highlighted GPUs") : m.highlight_label;
        const QRectF r(area.left() + 28, y, area.width() - 28, 1000);
        const QRectF used = p.boundingRect(r, Qt::AlignLeft | Qt::TextWordWrap, label);
        p.drawText(r, Qt::AlignLeft | Qt::TextWordWrap, label);
        y += std::max(used.height(), text_px * 1.4) + 4;
    }
}

void LegendPainter::paintHoverKey(TopologyView::HoverGroups hover_groups) {
    // The kinds innermost ring first.
    std::vector<GroupKind> kinds = hoverKinds(hover_groups);
    std::reverse(kinds.begin(), kinds.end());
    p.setFont(pixelFont(p.font(), text_px));
    double x = area.left();
    p.setPen(t.muted);
    const QString lead = QStringLiteral("hover:");
    p.drawText(QRectF(x, y, 50, text_px * 1.4), Qt::AlignLeft | Qt::AlignVCenter, lead);
    x += QFontMetricsF(p.font()).horizontalAdvance(lead) + 6;
    for (const GroupKind kind : kinds) {
        const QString name = groupName(kind);
        const double item_w = 20 + QFontMetricsF(p.font()).horizontalAdvance(name);
        if (x + item_w > area.right()) { // wrap
            x = area.left();
            y += text_px * 1.4;
        }
        p.setPen(QPen(groupColor(kind), 2.5));
        p.setBrush(Qt::NoBrush);
        p.drawRoundedRect(QRectF(x + 1, y + 2, 12, text_px - 2), 2, 2);
        p.setPen(t.text);
        p.drawText(QRectF(x + 16, y, 40, text_px * 1.4), Qt::AlignLeft | Qt::AlignVCenter, name);
        x += item_w + 8;
    }
    y += text_px * 1.4;
}

void LegendPainter::paintSymbols() {
    y += 8;
    text(QStringLiteral("Symbols"), title_px, t.text, true);
    symbol(
        [&](const QRectF& r) {
            p.setPen(QPen(utilizationColor(0.5).darker(140), 1));
            p.setBrush(utilizationColor(0.5));
            p.drawRoundedRect(r.adjusted(5, 0, -5, 0), 3, 3);
        },
        QStringLiteral("GPU (number = global GPU id)"));
    symbol(
        [&](const QRectF& r) {
            p.setPen(QPen(t.switch_fill, 1));
            p.setBrush(utilizationColor(0.2));
            p.drawRect(r.adjusted(3, 4, -3, -4));
        },
        QStringLiteral("NIC, filled by its fabric link"));
    symbol(
        [&](const QRectF& r) {
            p.setPen(Qt::NoPen);
            p.setBrush(t.switch_fill);
            p.drawRoundedRect(r.adjusted(0, 4, 0, -4), 2, 2);
        },
        QString::fromStdString(m.result->scenario.cluster.gpu.scale_up_fabric) +
            QStringLiteral(" switch (scale-up domain)"));
    symbol(
        [&](const QRectF& r) {
            p.setPen(Qt::NoPen);
            p.setBrush(t.switch_fill);
            p.drawRoundedRect(r.adjusted(0, 1, 0, -1), 3, 3);
        },
        QStringLiteral("leaf / spine switch"));
}

void LegendPainter::paintKeyFigures() {
    const Report& r = *m.report;
    y += 8;
    text(QStringLiteral("Key figures"), title_px, t.text, true);
    QStringList figures;
    figures << QStringLiteral("step time %1 · %2 tokens/s · MFU %3")
                   .arg(formatSeconds(r.step_time_s))
                   .arg(formatCount(r.throughput.tokens_per_s))
                   .arg(formatPercent(r.throughput.mfu));
    if (m.hottest >= 0 && r.load.moe_layers > 0)
        figures << QStringLiteral("hottest GPU %1: %2× the mean in its hottest layer")
                       .arg(m.hottest)
                       .arg(r.load.max_imbalance, 0, 'f', 2);
    // The callouts the diagram draws (core: busiestLink, busiestTier).
    for (const QString& callout : {m.busiestLinkCallout(), m.busiestTierCallout()})
        if (!callout.isEmpty())
            figures << callout;
    for (const QString& f : figures)
        if (y <= area.bottom() - text_px * 3)
            text(QStringLiteral("• ") + f, text_px, t.muted, false, true);
    if (!r.layout_description.empty() && y <= area.bottom() - text_px * 6) {
        y += 8;
        text(QStringLiteral("Layout"), title_px, t.text, true);
        for (const std::string& line : r.layout_description) {
            if (y > area.bottom() - text_px * 3)
                break;
            text(QStringLiteral("• ") + QString::fromStdString(line), text_px, t.muted, false,
                 true);
        }
    }
}

} // namespace

std::vector<GroupKind> hoverKinds(TopologyView::HoverGroups groups) {
    switch (groups) {
    case TopologyView::HoverGroups::all:
        return {kAllHoverKinds.begin(), kAllHoverKinds.end()};
    case TopologyView::HoverGroups::ep:
        return {GroupKind::ep};
    case TopologyView::HoverGroups::tp:
        return {GroupKind::tp};
    case TopologyView::HoverGroups::cp:
        return {GroupKind::cp};
    case TopologyView::HoverGroups::dp:
        return {GroupKind::dp};
    case TopologyView::HoverGroups::pp:
        return {GroupKind::pp};
    case TopologyView::HoverGroups::etp:
        return {GroupKind::etp};
    case TopologyView::HoverGroups::edp:
        return {GroupKind::edp};
    }
    return {};
}

/// Draws the legend in `area`; `full` adds the symbols, the layout in words and key figures
/// (exports). Returns the height used.
double paintLegend(QPainter& p, const QRectF& area, const TopologyModel& m, bool full,
                   TopologyView::HoverGroups hover_groups) {
    LegendPainter legend(p, area, m, full);
    legend.paintRamps();
    legend.paintTrafficKeys();
    legend.paintHighlightKey();
    if (!full) {
        legend.paintHoverKey(hover_groups);
        return legend.height();
    }
    // A long overlay legend leaves less room: what does not fit is left out, never clipped.
    if (legend.room() >= 130)
        legend.paintSymbols();
    if (legend.room() >= 80)
        legend.paintKeyFigures();
    return legend.height();
}

} // namespace detail
} // namespace moe::widgets
