// TopologyView: group overlays (GPUs coloured by their TP, EP, expert-DP, DP or CP group or
// their pipeline stage), their chooser and their exports. Membership, spans and the legend's
// words come from the core (moe/group_overlay.h); this file only colours and lays them out.
#include "moe_widgets/topology/topology_view.h"

#include "moe_widgets/common/palette.h"
#include "topology/topology_legend.h"
#include "topology/topology_model.h"

#include <QComboBox>
#include <QDir>

namespace moe::widgets {

namespace detail {

QString overlayName(GroupOverlay overlay, bool dualpipe) {
    switch (overlay) {
    case GroupOverlay::tp:
        return TopologyView::tr("TP");
    case GroupOverlay::ep:
        return TopologyView::tr("EP");
    case GroupOverlay::edp:
        return TopologyView::tr("Expert DP");
    case GroupOverlay::dp:
        return TopologyView::tr("DP");
    case GroupOverlay::pp:
        return dualpipe ? TopologyView::tr("DualPipe rank") : TopologyView::tr("PP stage");
    case GroupOverlay::cp:
        return TopologyView::tr("CP");
    }
    return {};
}

QString viewTitleSuffix(const TopologyModel& m) {
    if (!m.result)
        return {};
    const QString aggregated =
        m.aggregated ? QStringLiteral(" · pod 0 of %1 in full").arg(m.layout.pods.size())
                     : QString();
    if (!m.overlay_on)
        return aggregated;
    const bool dualpipe = m.result->scenario.layout.schedule == PipelineSchedule::dualpipe;
    if (m.overlay == GroupOverlay::pp)
        return (dualpipe ? QStringLiteral(" · DualPipe ranks") : QStringLiteral(" · PP stages")) +
               aggregated;
    return QStringLiteral(" · %1 groups").arg(overlayName(m.overlay, dualpipe)) + aggregated;
}

/// Groups the side panel lists before summarising the rest; exports list more.
constexpr int kOverlayListedOnScreen = 8;

} // namespace detail

void TopologyView::setOverlay(std::optional<GroupOverlay> overlay) {
    TopologyModel& m = *model_;
    m.overlay_on = overlay.has_value();
    if (overlay)
        m.overlay = *overlay;
    if (overlay_box_)
        overlay_box_->setCurrentIndex(
            overlay_box_->findData(overlay ? static_cast<int>(*overlay) : -1));
    updateOverlay();
    updateColors();
    legend_->refresh();
}

std::optional<GroupOverlay> TopologyView::overlay() const {
    return model_->overlay_on ? std::optional<GroupOverlay>(model_->overlay) : std::nullopt;
}

int TopologyView::overlayGroupOf(int gpu) const {
    return model_->overlayGroup(gpu);
}

QStringList TopologyView::overlayLegendText() const {
    QStringList lines;
    if (model_->overlay_on)
        for (const OverlayLegendLine& line : model_->overlay_legend)
            lines << QString::fromStdString(line.text);
    return lines;
}

void TopologyView::updateOverlay() {
    TopologyModel& m = *model_;
    m.overlay_groups = {};
    m.overlay_legend.clear();
    if (overlay_box_ && m.result) {
        // The PP entry says what a pipeline position is under the schedule shown.
        const bool dualpipe = m.result->scenario.layout.schedule == PipelineSchedule::dualpipe;
        const int pp = overlay_box_->findData(static_cast<int>(GroupOverlay::pp));
        if (pp >= 0)
            overlay_box_->setItemText(pp, detail::overlayName(GroupOverlay::pp, dualpipe));
    }
    if (!m.overlay_on || !m.report || !m.graph || !m.placement)
        return;
    m.overlay_groups = overlayGroups(m.overlay, m.result->scenario, *m.placement, *m.graph);
    m.overlay_legend =
        overlayLegend(m.overlay_groups, m.result->scenario, detail::kOverlayListedOnScreen);
}

void TopologyView::applyOverlayColors() {
    TopologyModel& m = *model_;
    if (!m.overlay_on)
        return;
    for (int gpu = 0; gpu < static_cast<int>(m.fill.size()); ++gpu) {
        const int group = m.overlayGroup(gpu);
        // One-GPU groups (a dimension of degree 1) would only be noise: one neutral fill.
        m.fill[static_cast<size_t>(gpu)] = group < 0 || m.overlay_groups.single_gpu_groups
                                               ? m.theme.no_data
                                               : groupOverlayColor(group);
    }
}

QString TopologyView::exportOverlayTo(const QString& path, GroupOverlay overlay) {
    TopologyModel& m = *model_;
    const bool was_on = m.overlay_on;
    const GroupOverlay was = m.overlay;
    m.overlay_on = true;
    m.overlay = overlay;
    updateOverlay();
    const QString problem = exportTo(path);
    m.overlay_on = was_on;
    m.overlay = was;
    updateOverlay();
    updateColors();
    return problem;
}

QStringList TopologyView::exportOverlays(const QString& directory, const QString& format) {
    QStringList problems;
    for (const GroupOverlay overlay : kGroupOverlays) {
        const QString path = QDir(directory).filePath(
            QStringLiteral("topology-%1.%2").arg(QString::fromLatin1(toString(overlay)), format));
        const QString problem = exportOverlayTo(path, overlay);
        if (!problem.isEmpty())
            problems << QStringLiteral("%1: %2").arg(path, problem);
    }
    return problems;
}

} // namespace moe::widgets
