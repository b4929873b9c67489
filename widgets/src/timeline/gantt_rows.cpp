// The step timeline's rows: a tree of pipeline stage > node > GPU, each row with the simulated
// row it draws, its GPUs' expert load relative to their EP group, and the rows opened by default.
#include "timeline/gantt_canvas.h"

#include <algorithm>
#include <vector>

namespace moe::widgets {

namespace {

/// Expert tokens of each GPU over its stage's MoE layers, relative to the EP-group mean, and
/// the stage each GPU belongs to.
struct GpuLoads {
    std::vector<int> stage_of;
    std::vector<double> ratio;
};

/// Per stage, the MoE layers its GPUs run. A DualPipe rank runs stage s's chunk in one direction
/// and stage pp-1-s's in the other: its GPUs' load covers both chunks' MoE layers.
std::vector<std::vector<int>> moeLayersOfStages(const Report& report, const Scenario& scenario,
                                                bool moe, int stages, bool dual) {
    const ExpertLoad& load = report.load;
    std::vector<std::vector<int>> moe_layers(static_cast<size_t>(stages));
    for (size_t s = 0; s < report.stages.size(); ++s)
        for (const int layer : report.stages[s].layers.layer_indices) {
            const int moe_layer = layer - scenario.model.dense_layers;
            if (moe && moe_layer >= 0 && moe_layer < load.moe_layers)
                moe_layers[s].push_back(moe_layer);
        }
    if (dual)
        for (int s = 0; s < stages / 2; ++s) {
            auto& mine = moe_layers[static_cast<size_t>(s)];
            auto& theirs = moe_layers[static_cast<size_t>(stages - 1 - s)];
            const std::vector<int> own = mine;
            mine.insert(mine.end(), theirs.begin(), theirs.end());
            theirs.insert(theirs.begin(), own.begin(), own.end());
        }
    return moe_layers;
}

GpuLoads gpuLoads(const Report& report, const std::vector<std::vector<int>>& moe_layers,
                  int stages) {
    const int gpus = report.gpus;
    const Placement* placement = report.placement.get();
    const ExpertLoad& load = report.load;
    const double mean_rank = load.ep > 0 ? load.slots_per_group / load.ep : 0.0;
    GpuLoads out;
    out.stage_of.assign(static_cast<size_t>(std::max(0, gpus)), 0);
    out.ratio.assign(static_cast<size_t>(std::max(0, gpus)), 1.0);
    for (int g = 0; g < gpus; ++g) {
        const int s = placement != nullptr && g < placement->gpuCount()
                          ? std::clamp(placement->coordsOf(g).pp, 0, stages - 1)
                          : 0;
        out.stage_of[static_cast<size_t>(g)] = s;
        const auto& layers = moe_layers[static_cast<size_t>(s)];
        if (placement == nullptr || layers.empty() || mean_rank <= 0)
            continue;
        double own = 0;
        for (const int layer : layers)
            own += load.gpuTokens(*placement, g, layer);
        out.ratio[static_cast<size_t>(g)] = own / (mean_rank * static_cast<double>(layers.size()));
    }
    return out;
}

/// The simulated row a stage row shows: its token stream with the most critical-path time.
std::vector<int> stageTimelineRows(const Timeline& tl, const GanttData& d, int stages) {
    std::vector<int> stage_row(static_cast<size_t>(stages), -1);
    if (!tl.ok())
        return stage_row;
    std::vector<double> critical_s(tl.rows.size(), 0.0);
    for (size_t r = 0; r < tl.rows.size(); ++r)
        for (const auto& intervals : d.critical[r])
            for (const auto& [a, b] : intervals)
                critical_s[r] += b - a;
    for (size_t r = 0; r < tl.rows.size(); ++r) {
        const int s = tl.rows[r].stage;
        if (s < 0 || s >= stages)
            continue;
        int& best = stage_row[static_cast<size_t>(s)];
        if (best < 0 || critical_s[r] > critical_s[static_cast<size_t>(best)])
            best = static_cast<int>(r);
    }
    return stage_row;
}

/// "Stage 3 · layers 12–15"; a DualPipe rank "Rank 3 · stages 3 + 12" (both chunks' layer
/// ranges would not fit the label column; the stages name them).
QString stageLabel(const Report& report, int s, int partner) {
    if (partner >= 0)
        return QStringLiteral("Rank %1 · stages %1 + %2").arg(s).arg(partner);
    QString layers;
    if (s < static_cast<int>(report.stages.size())) {
        const auto& idx = report.stages[static_cast<size_t>(s)].layers.layer_indices;
        if (!idx.empty()) {
            const auto [lo, hi] = std::minmax_element(idx.begin(), idx.end());
            layers = *hi - *lo + 1 == static_cast<int>(idx.size())
                         ? QStringLiteral(" · layers %1–%2").arg(*lo).arg(*hi)
                         : QStringLiteral(" · %1 layers").arg(idx.size());
        }
    }
    return QStringLiteral("Stage %1%2").arg(s).arg(layers);
}

/// "GPU 5", "GPUs 8–15", or "6 GPUs" when they are not contiguous.
QString gpuRangeText(const std::vector<int>& list) {
    if (list.size() == 1)
        return QStringLiteral("GPU %1").arg(list.front());
    const bool contiguous = list.back() - list.front() + 1 == static_cast<int>(list.size());
    return contiguous ? QStringLiteral("GPUs %1–%2").arg(list.front()).arg(list.back())
                      : QStringLiteral("%1 GPUs").arg(list.size());
}

/// Appends the rows of one stage (the stage, its nodes, their GPUs) in tree order.
class StageRowsBuilder {
public:
    StageRowsBuilder(std::vector<GanttRow>& rows, const Timeline& tl, const GpuLoads& loads,
                     int hottest, int per_node)
        : rows_(rows)
        , tl_(tl)
        , loads_(loads)
        , hottest_(hottest)
        , per_node_(per_node) {}

    void addStage(int s, int partner, const std::vector<int>& list, int timeline_row,
                  const QString& label) {
        const size_t stage_index = rows_.size();
        GanttRow stage;
        stage.level = GanttRow::Level::stage;
        stage.stage = s;
        stage.partner_stage = partner;
        stage.gpus = list;
        stage.timeline_row = timeline_row;
        stage.expert_ratio = meanRatio(list);
        stage.hottest = holdsHottest(list);
        stage.label = label;
        rows_.push_back(std::move(stage));
        for (size_t i = 0; i < list.size();) {
            const int node = list[i] / per_node_;
            std::vector<int> in_node;
            while (i < list.size() && list[i] / per_node_ == node)
                in_node.push_back(list[i++]);
            addNode(s, partner, node, in_node);
        }
        rows_[stage_index].subtree_end = static_cast<int>(rows_.size());
    }

private:
    void addNode(int s, int partner, int node, const std::vector<int>& in_node) {
        GanttRow node_row;
        node_row.level = GanttRow::Level::node;
        node_row.stage = s;
        node_row.partner_stage = partner;
        node_row.node = node;
        node_row.timeline_row = rowOfGpu(in_node.front());
        node_row.expert_ratio = meanRatio(in_node);
        node_row.hottest = holdsHottest(in_node);
        node_row.label = QStringLiteral("Node %1 · %2").arg(node).arg(gpuRangeText(in_node));
        node_row.gpus = in_node;
        const size_t node_index = rows_.size();
        rows_.push_back(std::move(node_row));
        for (const int g : in_node)
            addGpu(s, partner, node, g);
        rows_[node_index].subtree_end = static_cast<int>(rows_.size());
    }

    void addGpu(int s, int partner, int node, int g) {
        GanttRow gpu_row;
        gpu_row.level = GanttRow::Level::gpu;
        gpu_row.stage = s;
        gpu_row.partner_stage = partner;
        gpu_row.node = node;
        gpu_row.gpu = g;
        gpu_row.gpus = {g};
        gpu_row.timeline_row = rowOfGpu(g);
        gpu_row.expert_ratio = loads_.ratio[static_cast<size_t>(g)];
        gpu_row.hottest = g == hottest_;
        gpu_row.label = g == hottest_ ? QStringLiteral("GPU %1 · hottest").arg(g)
                                      : QStringLiteral("GPU %1").arg(g);
        gpu_row.subtree_end = static_cast<int>(rows_.size()) + 1;
        rows_.push_back(std::move(gpu_row));
    }

    double meanRatio(const std::vector<int>& list) const {
        double sum = 0;
        for (const int g : list)
            sum += loads_.ratio[static_cast<size_t>(g)];
        return list.empty() ? 1.0 : sum / static_cast<double>(list.size());
    }
    bool holdsHottest(const std::vector<int>& list) const {
        return std::find(list.begin(), list.end(), hottest_) != list.end();
    }
    int rowOfGpu(int g) const { return tl_.ok() ? tl_.rowOfGpu(g) : -1; }

    std::vector<GanttRow>& rows_;
    const Timeline& tl_;
    const GpuLoads& loads_;
    int hottest_;
    int per_node_;
};

/// Opened by default: the stage holding the hottest GPU (else the first) down to its nodes,
/// and the node holding it down to its GPUs, so the hot GPU and its waiting peers show.
void openDefaultRows(GanttData& d) {
    const auto& rows = d.rows;
    d.expanded.assign(rows.size(), 0);
    d.highlight.assign(rows.size(), 0);
    const auto pick = [&](size_t from, size_t to, GanttRow::Level level) {
        int chosen = -1;
        for (size_t r = from; r < to; ++r) {
            if (rows[r].level != level)
                continue;
            if (chosen < 0 || (rows[r].hottest && !rows[static_cast<size_t>(chosen)].hottest))
                chosen = static_cast<int>(r);
        }
        return chosen;
    };
    const int open_stage = pick(0, rows.size(), GanttRow::Level::stage);
    if (open_stage >= 0) {
        d.expanded[static_cast<size_t>(open_stage)] = 1;
        const int open_node =
            pick(static_cast<size_t>(open_stage) + 1,
                 static_cast<size_t>(rows[static_cast<size_t>(open_stage)].subtree_end),
                 GanttRow::Level::node);
        if (open_node >= 0)
            d.expanded[static_cast<size_t>(open_node)] = 1;
    }
}

} // namespace

void GanttView::rebuildRows() {
    GanttData& d = canvas_->data;
    d.rows.clear();
    const Report& report = result_->report;
    const Scenario& scenario = result_->scenario;
    const Timeline& tl = *d.timeline;
    const Placement* placement = report.placement.get();
    const int stages = std::max(1, static_cast<int>(report.stages.size()));
    const int per_node = std::max(1, report.hardware.gpus > 0 ? report.hardware.gpus_per_node
                                                              : scenario.cluster.gpus_per_node);
    const int hottest = d.moe && placement != nullptr ? report.load.hottestGpu(*placement) : -1;
    // A DualPipe rank runs stage s's chunk in one direction and stage pp-1-s's in the other:
    // its row shows both.
    const bool dual = scenario.layout.schedule == PipelineSchedule::dualpipe && stages > 1;

    const GpuLoads loads =
        gpuLoads(report, moeLayersOfStages(report, scenario, d.moe, stages, dual), stages);
    const std::vector<int> stage_row = stageTimelineRows(tl, d, stages);
    std::vector<std::vector<int>> members(static_cast<size_t>(stages));
    for (int g = 0; g < report.gpus; ++g)
        members[static_cast<size_t>(loads.stage_of[static_cast<size_t>(g)])].push_back(g);

    StageRowsBuilder builder(d.rows, tl, loads, hottest, per_node);
    for (int s = 0; s < stages; ++s) {
        const int partner = dual ? stages - 1 - s : -1;
        builder.addStage(s, partner, members[static_cast<size_t>(s)],
                         stage_row[static_cast<size_t>(s)], stageLabel(report, s, partner));
    }
    openDefaultRows(d);
}

} // namespace moe::widgets
