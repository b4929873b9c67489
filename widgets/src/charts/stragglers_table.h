#pragma once
// The expert-load panel's list of the top stragglers (core: topStragglers): GPU, node, MoE
// layer, ratio to the layer mean and the step time each costs. A click selects the GPU.

#include "moe/load_stragglers.h"

#include <QTableWidget>

class QSplitter;

#include <vector>

namespace moe::widgets::charts {

class StragglersTable : public QTableWidget {
    Q_OBJECT
public:
    explicit StragglersTable(QWidget* parent = nullptr);
    /// Shows `rows`; `dense_layers` turns MoE layer indices into model layer numbers.
    void setStragglers(const std::vector<LoadStraggler>& rows, int dense_layers);
    /// Cleared, with `why` in its single row (empty: no rows).
    void showNone(const QString& why);

signals:
    void gpuClicked(int gpu);

private:
    std::vector<int> gpus_;
};

/// `plot` above, "Top n stragglers" and `table` below, in a vertical splitter.
QSplitter* withStragglers(QWidget* plot, StragglersTable* table, int n, QWidget* parent);

} // namespace moe::widgets::charts
