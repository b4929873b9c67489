// TopologyView: the scene built from a result (layout, items) and its colours.
#include "moe_widgets/topology/topology_view.h"

#include "common/view_export.h"
#include "experiments/experiment_support.h"
#include "moe/load_stragglers.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/scenario_document.h"
#include "topology/topology_aggregate.h"
#include "topology/topology_graphics_view.h"
#include "topology/topology_items.h"
#include "topology/topology_legend.h"
#include "topology/topology_link_labels.h"
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

namespace {

/// The hardware the scene is laid out for, then "|" and the nodes of each rack (a node moved
/// between racks changes only that part).
QString shapeKey(const Scenario& s, const HardwareGraph& g) {
    QString racks;
    for (int rack = 0; rack < g.rackCount(); ++rack)
        racks += QString::number(g.nodesInRack(rack)) + QLatin1Char(',');
    return QStringLiteral("%1/%2/%3/%4/%5/%6/%7/%8|%9")
        .arg(g.gpuCount())
        .arg(g.gpus_per_node)
        .arg(g.nodes_per_rack)
        .arg(g.gpus_per_domain)
        .arg(g.nics)
        .arg(g.leaves)
        .arg(g.spines)
        .arg(static_cast<int>(s.cluster.fabric_topology))
        .arg(racks);
}

// Every result (traffic, power and load change with any edit):

/// Racks the rack-power-over warning names.
void markRacksOverPower(TopologyModel& m) {
    m.rack_over_power.assign(static_cast<size_t>(m.layout.racks), 0);
    for (const DesignWarning& w : m.report->warnings)
        if (w.code == WarningCode::rack_power_over)
            for (const int gpu : w.gpus)
                if (gpu >= 0 && gpu < m.layout.gpus)
                    m.rack_over_power[static_cast<size_t>(m.graph->rackOf(gpu))] = 1;
}

/// Per rack and leaf the NIC cables as one bundle; the busiest link of each leaf, spine, node,
/// rack and pod; the busiest link of all.
void aggregateLinks(TopologyModel& m) {
    const HardwareGraph& g = *m.graph;
    m.rack_bundles.assign(static_cast<size_t>(m.layout.racks), {});
    for (int nic = 0; nic < g.nics; ++nic) {
        const int link = g.nic_leaf_link[static_cast<size_t>(nic)];
        if (link < 0)
            continue;
        const int rack = m.layout.rackOfNode(nic / m.layout.shape.nics_per_node);
        const int leaf = g.nic_leaf[static_cast<size_t>(nic)];
        auto& bundles = m.rack_bundles[static_cast<size_t>(rack)];
        auto it = std::find_if(bundles.begin(), bundles.end(),
                               [leaf](const detail::Bundle& b) { return b.leaf == leaf; });
        if (it == bundles.end()) {
            detail::Bundle b;
            b.leaf = leaf;
            b.port = m.layout.leaf_slot[static_cast<size_t>(leaf)];
            bundles.push_back(b);
            it = bundles.end() - 1;
        }
        ++it->links;
        it->link_ids.push_back(link);
        it->max_util = std::max(it->max_util, m.util(link));
        it->bytes += m.bytes(link);
        it->bandwidth_gbps = g.links[static_cast<size_t>(link)].bandwidth_gbps;
    }
    m.leaf_up_util.assign(static_cast<size_t>(g.leaves), 0);
    m.leaf_down_util.assign(static_cast<size_t>(g.leaves), 0);
    m.spine_util.assign(static_cast<size_t>(g.spines), 0);
    m.node_scale_up_util.assign(static_cast<size_t>(m.layout.nodes), 0);
    m.rack_scale_up_util.assign(static_cast<size_t>(m.layout.racks), 0);
    m.busiest_link = busiestLink(*m.report);
    m.tiers = tierLoads(*m.report, g);
    m.busiest_tier = busiestTier(m.tiers);
    std::vector<std::vector<int>> node_links(static_cast<size_t>(m.layout.nodes));
    for (size_t id = 0; id < g.links.size(); ++id) {
        const Link& link = g.links[id];
        const double u = m.util(static_cast<int>(id));
        switch (link.kind) {
        case LinkKind::scale_up: {
            const int node = link.a / m.layout.shape.gpus_per_node;
            node_links[static_cast<size_t>(node)].push_back(static_cast<int>(id));
            m.node_scale_up_util[static_cast<size_t>(node)] =
                std::max(m.node_scale_up_util[static_cast<size_t>(node)], u);
            double& rack_util =
                m.rack_scale_up_util[static_cast<size_t>(m.layout.rackOfNode(node))];
            rack_util = std::max(rack_util, u);
            break;
        }
        case LinkKind::nic_leaf: {
            const auto leaf = static_cast<size_t>(link.b - m.leaf_base);
            m.leaf_down_util[leaf] = std::max(m.leaf_down_util[leaf], u);
            break;
        }
        case LinkKind::leaf_spine: {
            const auto leaf = static_cast<size_t>(link.a - m.leaf_base);
            const auto spine = static_cast<size_t>(link.b - m.spine_base);
            m.leaf_up_util[leaf] = std::max(m.leaf_up_util[leaf], u);
            m.spine_util[spine] = std::max(m.spine_util[spine], u);
            break;
        }
        case LinkKind::gpu_nic:
            break;
        }
    }

    for (auto& bundles : m.rack_bundles)
        for (detail::Bundle& b : bundles)
            b.load = linkLoad(*m.report, g, b.link_ids);
    m.node_scale_up_load.clear();
    for (const auto& links : node_links)
        m.node_scale_up_load.push_back(linkLoad(*m.report, g, links));
    auto uplinks = [&g](int leaf) {
        std::vector<int> links;
        const int begin = g.leaf_spine_links_begin[static_cast<size_t>(leaf)];
        for (int k = 0; k < g.leaf_spine_links_count[static_cast<size_t>(leaf)]; ++k)
            links.push_back(begin + k);
        return links;
    };
    m.leaf_up_load.clear();
    for (int leaf = 0; leaf < g.leaves; ++leaf)
        m.leaf_up_load.push_back(linkLoad(*m.report, g, uplinks(leaf)));
    m.pod_up_util.assign(m.layout.pods.size(), 0);
    m.pod_up_load.clear();
    for (size_t p = 0; p < m.layout.pods.size(); ++p) {
        std::vector<int> pod_links;
        for (const int leaf : m.layout.pods[p].leaves) {
            m.pod_up_util[p] =
                std::max(m.pod_up_util[p], m.leaf_up_util[static_cast<size_t>(leaf)]);
            const std::vector<int> links = uplinks(leaf);
            pod_links.insert(pod_links.end(), links.begin(), links.end());
        }
        m.pod_up_load.push_back(linkLoad(*m.report, g, pod_links));
    }
}

/// Stage lookups and the MoE layers each of the `pp` stages holds; the hottest GPU.
void indexStageLayers(TopologyModel& m, int pp) {
    m.stage_index.assign(static_cast<size_t>(pp), -1);
    for (size_t i = 0; i < m.report->stages.size(); ++i) {
        const int stage = m.report->stages[i].layers.stage;
        if (stage >= 0 && stage < pp)
            m.stage_index[static_cast<size_t>(stage)] = static_cast<int>(i);
    }
    const ExpertLoad& load = m.report->load;
    m.layers_of_stage.assign(static_cast<size_t>(pp), {});
    for (int layer = 0; layer < load.moe_layers; ++layer) {
        if (layer < static_cast<int>(load.stage_of_layer.size())) {
            const int stage = load.stage_of_layer[static_cast<size_t>(layer)];
            if (stage >= 0 && stage < pp)
                m.layers_of_stage[static_cast<size_t>(stage)].push_back(layer);
        } else {
            for (auto& layers : m.layers_of_stage)
                layers.push_back(layer);
        }
    }
    m.hottest = load.moe_layers > 0 ? load.hottestGpu(*m.placement) : -1;
}

} // namespace

void TopologyView::showResult(const EvaluationResultPtr& result) {
    TopologyModel& m = *model_;
    if (!result || !result->report.hardware_graph || !result->report.placement) {
        const bool overlay_on = m.overlay_on;
        const GroupOverlay overlay = m.overlay;
        m = TopologyModel{};
        m.overlay_on = overlay_on; // the chooser's choice outlives a missing result
        m.overlay = overlay;
        m.theme = detail::viewTheme(detail::isDark(palette()));
        scene_->clear();
        shape_key_.clear();
        updateInfoPanel();
        return;
    }
    m.result = result;
    m.report = &result->report;
    m.graph = result->report.graph().get();
    m.placement = result->report.placement.get();
    if (state_) {
        m.metric = state_->gpuMetric();
        m.selected = state_->selectedGpu();
    }
    if (m.selected >= m.graph->gpuCount())
        m.selected = -1;
    if (m.hovered >= m.graph->gpuCount())
        m.hovered = -1;
    m.editable = document_ != nullptr;
    const QString key = shapeKey(result->scenario, *m.graph);
    if (key != shape_key_) {
        // A node moved between racks: the user is working where they are zoomed, so the view
        // stays there (unless it was showing the whole cluster, which it keeps doing).
        const bool same_hardware =
            key.section(QLatin1Char('|'), 0, 0) == shape_key_.section(QLatin1Char('|'), 0, 0);
        shape_key_ = key;
        rebuildScene(same_hardware && !view_->fit_mode);
    }
    m.rack_power_w = rackPowerW(result->scenario.cluster);
    markRacksOverPower(m);
    aggregateLinks(m);
    detail::summarizeHiddenPods(m);
    indexStageLayers(m, std::max(1, result->scenario.layout.pp));

    updateOverlay();
    updateColors();
    updateHoverMask();
    updateHighlight();
    updateInfoPanel();
    applyAggregation();
    repaintItems();
}

void TopologyView::rebuildScene(bool keep_view) {
    TopologyModel& m = *model_;
    const HardwareGraph& g = *m.graph;
    const QPointF view_center = view_->mapToScene(view_->viewport()->rect().center());
    scene_->clear();
    drag_item_ = nullptr;
    m.drag = {};
    detail::ClusterShape shape = detail::clusterShape(g);
    shape.new_rack_zone = m.editable;
    m.layout = detail::layoutTopology(shape);
    m.nic_base = m.layout.gpus + g.scale_up_switches;
    m.leaf_base = m.nic_base + g.nics;
    m.spine_base = m.leaf_base + g.leaves;

    for (int p = 0; p < static_cast<int>(m.layout.pods.size()); ++p)
        scene_->addItem(new detail::PodItem(model_.get(), p));
    scene_->addItem(new detail::FabricItem(model_.get(), detail::FabricItem::Layer::spines));
    scene_->addItem(new detail::FabricItem(model_.get(), detail::FabricItem::Layer::leaves));
    for (int rack = 0; rack < m.layout.racks; ++rack)
        scene_->addItem(new detail::RackItem(model_.get(), rack));
    scene_->addItem(new detail::BusiestCalloutItem(model_.get()));
    scene_->addItem(new detail::AggregateItem(model_.get()));
    if (m.editable) {
        drag_item_ = new detail::NodeDragItem(model_.get());
        scene_->addItem(drag_item_);
    }
    scene_->setSceneRect(m.shownViewBounds());
    if (keep_view) {
        view_->centerOn(view_center);
        return;
    }
    view_->fit_mode = true;
    fitAll();
}

void TopologyView::updateColors() {
    TopologyModel& m = *model_;
    if (!m.report)
        return;
    const int gpus = m.layout.gpus;
    m.value.assign(static_cast<size_t>(gpus), std::numeric_limits<double>::quiet_NaN());
    m.raw.assign(static_cast<size_t>(gpus), std::numeric_limits<double>::quiet_NaN());
    const Report& r = *m.report;
    const ExpertLoad& load = r.load;
    switch (m.metric) {
    case GpuMetric::expert_load: {
        // Each GPU's busiest MoE layer against that layer's mean over every GPU holding it
        // (core: gpuLoadRatio): the straggler factor the GPU imposes on its EP group at its
        // worst. (Averaged over layers, loads even out and the diagram would hide the hot spots
        // the heatmap shows.)
        double sum = 0;
        int cells = 0;
        m.load_scale_high = kLoadScaleMinHigh;
        m.peak_layer.assign(static_cast<size_t>(gpus), -1);
        m.peak_tokens.assign(static_cast<size_t>(gpus), 0.0);
        for (int gpu = 0; gpu < gpus; ++gpu) {
            const int stage = m.stageOf(gpu);
            if (stage < 0 || stage >= static_cast<int>(m.layers_of_stage.size()))
                continue;
            double peak = -1;
            for (const int layer : m.layers_of_stage[static_cast<size_t>(stage)]) {
                const double t = load.gpuTokens(*m.placement, gpu, layer);
                const double ratio = gpuLoadRatio(load, *m.placement, gpu, layer);
                sum += t;
                ++cells;
                if (std::isfinite(ratio) && ratio > peak) {
                    peak = ratio;
                    m.peak_layer[static_cast<size_t>(gpu)] = layer;
                    m.peak_tokens[static_cast<size_t>(gpu)] = t;
                }
            }
            if (peak >= 0) {
                m.raw[static_cast<size_t>(gpu)] = peak;
                m.value[static_cast<size_t>(gpu)] = peak;
                m.load_scale_high = std::max(m.load_scale_high, peak);
            }
        }
        m.mean_tokens = cells > 0 ? sum / cells : 0;
        m.load_scale_high = loadRatioScale(m.load_scale_high).high;
        break;
    }
    case GpuMetric::memory_use:
        for (int gpu = 0; gpu < gpus; ++gpu)
            if (const StageResult* stage = m.stageResult(gpu);
                stage && stage->memory.hbm_bytes > 0) {
                m.raw[static_cast<size_t>(gpu)] = stage->memory.total_bytes;
                m.value[static_cast<size_t>(gpu)] =
                    stage->memory.total_bytes / stage->memory.hbm_bytes;
            }
        break;
    case GpuMetric::idle_time: {
        // The report's own times, summed: the bubble, waiting for the slowest stage's
        // micro-batches, and waiting for the hot EP rank inside this stage.
        double slowest = 0;
        for (const StageResult& stage : r.stages)
            slowest = std::max(slowest, stage.per_micro_batch.total_s);
        for (int gpu = 0; gpu < gpus; ++gpu)
            if (const StageResult* stage = m.stageResult(gpu); stage && r.step_time_s > 0) {
                const double idle =
                    r.step[StepItem::bubble] +
                    r.micro_batches * (slowest - stage->per_micro_batch.total_s) +
                    r.micro_batches * stage->per_micro_batch[StepItem::imbalance_wait];
                m.raw[static_cast<size_t>(gpu)] = idle;
                m.value[static_cast<size_t>(gpu)] = idle / r.step_time_s;
            }
        break;
    }
    case GpuMetric::traffic:
        for (int gpu = 0; gpu < gpus; ++gpu) {
            const auto g = static_cast<size_t>(gpu);
            double u =
                std::max(m.util(m.graph->gpu_scale_up_link[g]), m.util(m.graph->gpu_nic_link[g]));
            const int nic =
                m.graph->vertices[static_cast<size_t>(m.graph->gpu_nic_vertex[g])].index;
            if (nic < static_cast<int>(m.graph->nic_leaf_link.size()))
                u = std::max(u, m.util(m.graph->nic_leaf_link[static_cast<size_t>(nic)]));
            m.raw[g] = u;
            m.value[g] = u;
        }
        break;
    }
    m.fill.resize(static_cast<size_t>(gpus));
    const LoadRatioScale load_scale = loadRatioScale(m.load_scale_high);
    for (int gpu = 0; gpu < gpus; ++gpu) {
        const double v = m.value[static_cast<size_t>(gpu)];
        m.fill[static_cast<size_t>(gpu)] = !std::isfinite(v) ? m.theme.no_data
                                           : m.metric == GpuMetric::expert_load
                                               ? loadRatioColor(v, load_scale)
                                               : utilizationColor(v);
    }
    applyOverlayColors();
    m.rack_hot_gpu.assign(static_cast<size_t>(m.layout.racks), -1);
    for (int gpu = 0; gpu < gpus; ++gpu) {
        const double v = m.value[static_cast<size_t>(gpu)];
        if (!std::isfinite(v))
            continue;
        int& hot = m.rack_hot_gpu[static_cast<size_t>(m.graph->rackOf(gpu))];
        if (hot < 0 || v > m.value[static_cast<size_t>(hot)])
            hot = gpu;
    }
    repaintItems();
}

} // namespace moe::widgets
