#include "timeline/gantt_style.h"

#include "moe_widgets/common/palette.h"

#include <algorithm>
#include <cmath>

namespace moe::widgets::gantt {

using charts::ChartTheme;

int rowHeight(GanttRow::Level level) {
    switch (level) {
    case GanttRow::Level::stage:
        return 32;
    case GanttRow::Level::node:
        return 28;
    case GanttRow::Level::gpu:
        return 26;
    }
    return 26;
}

Lanes lanesOf(const QRectF& row) {
    const double compute_h =
        row.height() - kTopPad - kLaneGap - kCommLane - kLaneGap - kSyncLane - kBottomPad;
    Lanes l;
    l.compute = QRectF(row.left(), row.top() + kTopPad, row.width(), compute_h);
    l.comm = QRectF(row.left(), l.compute.bottom() + kLaneGap, row.width(), kCommLane);
    l.sync = QRectF(row.left(), l.comm.bottom() + kLaneGap, row.width(), kSyncLane);
    return l;
}

QColor spanColor(SpanKind kind) {
    switch (kind) {
    case SpanKind::attention:
        return stepItemColor(StepItem::attention);
    case SpanKind::dense_ffn:
    case SpanKind::lm_head:
        return stepItemColor(StepItem::dense_ffn);
    case SpanKind::router:
        return stepItemColor(StepItem::router);
    case SpanKind::expert:
        return stepItemColor(StepItem::expert_compute);
    case SpanKind::weight_grad:
        return QColor(0xA0CBE8); // a lighter attention blue: backward work split off
    case SpanKind::optimizer:
        return stepItemColor(StepItem::optimizer);
    case SpanKind::wait:
        return stepItemColor(StepItem::imbalance_wait);
    case SpanKind::tp:
        return collectiveColor(CollectiveKind::tp_collective);
    case SpanKind::cp:
        return collectiveColor(CollectiveKind::cp_exchange);
    case SpanKind::dispatch:
        return collectiveColor(CollectiveKind::moe_dispatch);
    case SpanKind::combine:
        return collectiveColor(CollectiveKind::moe_combine);
    case SpanKind::pp_send:
        return collectiveColor(CollectiveKind::pp_send_recv);
    case SpanKind::grad_sync:
    case SpanKind::param_gather:
        return collectiveColor(CollectiveKind::dp_sync);
    case SpanKind::count:
        break;
    }
    return QColor(Qt::gray);
}

QString spanName(SpanKind kind) {
    switch (kind) {
    case SpanKind::attention:
        return QStringLiteral("attention");
    case SpanKind::dense_ffn:
        return QStringLiteral("dense FFN / shared experts");
    case SpanKind::router:
        return QStringLiteral("router");
    case SpanKind::expert:
        return QStringLiteral("expert GEMMs");
    case SpanKind::lm_head:
        return QStringLiteral("LM head and loss");
    case SpanKind::weight_grad:
        return QStringLiteral("weight gradients (deferred)");
    case SpanKind::optimizer:
        return QStringLiteral("optimizer step");
    case SpanKind::wait:
        return QStringLiteral("waiting for the hot expert GPU");
    case SpanKind::tp:
        return QStringLiteral("TP all-gather / reduce-scatter");
    case SpanKind::cp:
        return QStringLiteral("CP KV exchange");
    case SpanKind::dispatch:
        return QStringLiteral("dispatch all-to-all");
    case SpanKind::combine:
        return QStringLiteral("combine all-to-all");
    case SpanKind::pp_send:
        return QStringLiteral("PP send");
    case SpanKind::grad_sync:
        return QStringLiteral("gradient reduce-scatter / all-reduce");
    case SpanKind::param_gather:
        return QStringLiteral("weight all-gather");
    case SpanKind::count:
        break;
    }
    return QStringLiteral("?");
}

QString legendName(SpanKind kind) {
    switch (kind) {
    case SpanKind::dense_ffn:
        return QStringLiteral("dense FFN, shared experts");
    case SpanKind::lm_head:
        return QStringLiteral("LM head");
    case SpanKind::weight_grad:
        return QStringLiteral("weight gradients");
    case SpanKind::optimizer:
        return QStringLiteral("optimizer");
    case SpanKind::wait:
        return QStringLiteral("waiting for the hot GPU");
    case SpanKind::tp:
        return QStringLiteral("TP collectives");
    case SpanKind::cp:
        return QStringLiteral("CP exchange");
    case SpanKind::dispatch:
        return QStringLiteral("all-to-all dispatch");
    case SpanKind::combine:
        return QStringLiteral("combine");
    case SpanKind::grad_sync:
        return QStringLiteral("gradient sync");
    case SpanKind::param_gather:
        return QStringLiteral("weight all-gather");
    default:
        return spanName(kind);
    }
}

QString tickLabel(double t, double step, double window_end) {
    const auto decimals = [](double s) {
        return std::clamp(static_cast<int>(-std::floor(std::log10(s) + 1e-9)), 0, 6);
    };
    if (window_end >= 1.0)
        return QString::number(t, 'f', decimals(step)) + QStringLiteral(" s");
    if (window_end >= 1e-3)
        return QString::number(t * 1e3, 'f', decimals(step * 1e3)) + QStringLiteral(" ms");
    return QString::number(t * 1e6, 'f', decimals(step * 1e6)) + QStringLiteral(" µs");
}

QString layoutSummary(const Scenario& s) {
    const LayoutSpec& l = s.layout;
    QString text = QStringLiteral("TP%1 CP%2 PP%3 DP%4 EP%5")
                       .arg(l.tp)
                       .arg(l.cp)
                       .arg(l.pp)
                       .arg(l.dp)
                       .arg(l.ep);
    if (l.etp > 1)
        text += QStringLiteral(" ETP%1").arg(l.etp);
    if (l.schedule == PipelineSchedule::interleaved)
        text += QStringLiteral(" VPP%1").arg(l.vpp);
    return text + QStringLiteral(" · ") + QString::fromUtf8(toString(l.schedule));
}

QPen criticalPen(const ChartTheme& theme, bool connector) {
    QPen pen(theme.critical, connector ? 1.5 : 2.0, connector ? Qt::DashLine : Qt::SolidLine);
    pen.setJoinStyle(Qt::MiterJoin);
    return pen;
}

QPen criticalHaloPen(const ChartTheme& theme, bool connector) {
    QPen pen(theme.background, connector ? 3.5 : 4.5, Qt::SolidLine);
    pen.setJoinStyle(Qt::MiterJoin);
    return pen;
}

QString blockText(int microbatch, bool backward) {
    return QStringLiteral("%1%2")
        .arg(backward ? QLatin1Char('B') : QLatin1Char('F'))
        .arg(microbatch + 1);
}

QString whoOf(const GanttRow& row) {
    // A DualPipe rank runs two stages' chunks: it is named as its row label names it.
    const bool dual = row.partner_stage >= 0;
    const QString stage =
        dual ? QStringLiteral("Rank %1 (stages %1 + %2)").arg(row.stage).arg(row.partner_stage)
             : QStringLiteral("Stage %1").arg(row.stage);
    switch (row.level) {
    case GanttRow::Level::stage:
        return dual ? QStringLiteral("Rank %1 (stages %1 + %2, %3 GPUs)")
                          .arg(row.stage)
                          .arg(row.partner_stage)
                          .arg(row.gpus.size())
                    : QStringLiteral("Stage %1 (%2 GPUs)").arg(row.stage).arg(row.gpus.size());
    case GanttRow::Level::node:
        return QStringLiteral("%1, node %2 (%3 GPUs)")
            .arg(stage)
            .arg(row.node)
            .arg(row.gpus.size());
    case GanttRow::Level::gpu:
        break;
    }
    return QStringLiteral("%1, node %2, GPU %3").arg(stage).arg(row.node).arg(row.gpu);
}

} // namespace moe::widgets::gantt
