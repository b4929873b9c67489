#include "charts/heatmap_matrix.h"

#include "moe/load_stragglers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace moe::widgets::charts {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// GPUs of each pipeline stage, by id.
std::vector<std::vector<int>> gpusByStage(const Placement& placement) {
    std::vector<std::vector<int>> stages;
    for (int gpu = 0; gpu < placement.gpuCount(); ++gpu) {
        const int stage = std::max(0, placement.coordsOf(gpu).pp);
        if (stage >= static_cast<int>(stages.size()))
            stages.resize(static_cast<size_t>(stage) + 1);
        stages[static_cast<size_t>(stage)].push_back(gpu);
    }
    return stages;
}

} // namespace

int stageOfLayer(const ExpertLoad& load, int layer) {
    return layer < static_cast<int>(load.stage_of_layer.size())
               ? load.stage_of_layer[static_cast<size_t>(layer)]
               : 0;
}

LoadMatrix loadMatrix(const ExpertLoad& load, const Placement& placement, bool gpus, int experts) {
    const int rows = load.moe_layers;
    const std::vector<std::vector<int>> stages = gpusByStage(placement);
    LoadMatrix m;
    m.columns = experts;
    if (gpus)
        for (const auto& stage : stages)
            m.columns = std::max(m.columns, static_cast<int>(stage.size()));
    if (gpus && stages.empty())
        m.columns = 0;
    const size_t size = static_cast<size_t>(m.columns) * static_cast<size_t>(rows);
    m.cells.assign(size, kNaN);
    m.ratios.assign(size, kNaN);
    m.gpu.assign(gpus ? size : 0, -1);
    m.row_mean.assign(static_cast<size_t>(rows), 0.0);
    m.row_layer.resize(static_cast<size_t>(rows));
    std::iota(m.row_layer.begin(), m.row_layer.end(), 0);
    if (gpus)
        std::stable_sort(m.row_layer.begin(), m.row_layer.end(), [&](int a, int b) {
            return stageOfLayer(load, a) < stageOfLayer(load, b);
        });
    for (int row = 0; row < rows; ++row) {
        const int layer = m.row_layer[static_cast<size_t>(row)];
        const size_t base = static_cast<size_t>(row) * static_cast<size_t>(m.columns);
        if (gpus) {
            m.row_mean[static_cast<size_t>(row)] = layerMeanSlots(load, layer);
            const int stage = std::clamp(stageOfLayer(load, layer), 0,
                                         std::max(0, static_cast<int>(stages.size()) - 1));
            const std::vector<int>& members = stages[static_cast<size_t>(stage)];
            for (size_t k = 0; k < members.size(); ++k) {
                m.gpu[base + k] = members[k];
                m.cells[base + k] = load.gpuTokens(placement, members[k], layer);
                m.ratios[base + k] = gpuLoadRatio(load, placement, members[k], layer);
            }
        } else {
            const double* first = load.tokens_per_expert.data() +
                                  static_cast<size_t>(layer) * static_cast<size_t>(m.columns);
            double sum = 0;
            for (int e = 0; e < m.columns; ++e)
                sum += first[e];
            const double mean = m.columns > 0 ? sum / m.columns : 0;
            m.row_mean[static_cast<size_t>(row)] = mean;
            for (int e = 0; e < m.columns; ++e) {
                m.cells[base + static_cast<size_t>(e)] = first[e];
                m.ratios[base + static_cast<size_t>(e)] = mean > 0 ? first[e] / mean : kNaN;
            }
        }
        for (size_t i = base; i < base + static_cast<size_t>(m.columns); ++i)
            if (std::isfinite(m.ratios[i]))
                m.max_ratio = std::max(m.max_ratio, m.ratios[i]);
    }
    return m;
}

std::pair<int, int> busiestCell(const std::vector<double>& cells, int columns, int rows) {
    std::pair<int, int> hot{-1, -1};
    double best = -1;
    for (int row = 0; row < rows; ++row)
        for (int column = 0; column < columns; ++column)
            if (const double v = cells[static_cast<size_t>(row) * static_cast<size_t>(columns) +
                                       static_cast<size_t>(column)];
                std::isfinite(v) && v > best) {
                best = v;
                hot = {column, row};
            }
    return hot;
}

QString routingText(const RoutingSpec& routing) {
    QString model = QString::fromLatin1(toString(routing.balancing)) +
                    QStringLiteral(" balancing, ") + QString::fromLatin1(toString(routing.model));
    if (routing.model == PopularityModel::zipf)
        model += QStringLiteral(" α %1").arg(routing.zipf_alpha);
    model += QStringLiteral(", balance %1, seed %2").arg(routing.balance).arg(routing.seed);
    return model;
}

} // namespace moe::widgets::charts
