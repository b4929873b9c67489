#include "charts/stragglers_table.h"

#include "charts/chart_support.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

namespace moe::widgets::charts {

StragglersTable::StragglersTable(QWidget* parent)
    : QTableWidget(parent) {
    setObjectName(QStringLiteral("StragglersTable"));
    setColumnCount(6);
    // Short headings (their tooltips say the rest) and columns that share the panel's width:
    // the table sits in a narrow dock and must not scroll sideways to its last column.
    setHorizontalHeaderLabels(
        {tr("GPU"), tr("node"), tr("layer"), tr("× mean"), tr("adds"), tr("saves")});
    horizontalHeaderItem(2)->setToolTip(tr("The MoE layer (k-th MoE layer of the model)"));
    horizontalHeaderItem(3)->setToolTip(tr("Token slots on this GPU's experts in the layer over "
                                           "the layer's mean over every GPU holding it"));
    horizontalHeaderItem(4)->setToolTip(
        tr("Imbalance wait per step this GPU adds to its EP group: in its layer the group runs "
           "at its pace (expert GEMMs and all-to-alls at this ratio vs the mean, every "
           "micro-batch)"));
    horizontalHeaderItem(5)->setToolTip(
        tr("What the step would save if this EP rank ran at the layer mean (its excess tokens "
           "spread over its EP group's other ranks): 0 unless its group alone is the slowest "
           "stage's worst, which sets the pace"));
    verticalHeader()->setVisible(false);
    verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 4);
    horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    horizontalHeader()->setMinimumSectionSize(
        fontMetrics().horizontalAdvance(QStringLiteral("000.0 ms")));
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setSelectionMode(QAbstractItemView::SingleSelection);
    setAlternatingRowColors(true);
    connect(this, &QTableWidget::cellClicked, this, [this](int row, int) {
        if (row >= 0 && row < static_cast<int>(gpus_.size()))
            emit gpuClicked(gpus_[static_cast<size_t>(row)]);
    });
}

void StragglersTable::setStragglers(const std::vector<LoadStraggler>& rows, int dense_layers) {
    gpus_.clear();
    setRowCount(static_cast<int>(rows.size()));
    auto cell = [](const QString& text, Qt::Alignment align = Qt::AlignRight | Qt::AlignVCenter) {
        auto* item = new QTableWidgetItem(text);
        item->setTextAlignment(align);
        return item;
    };
    for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
        const LoadStraggler& s = rows[static_cast<size_t>(i)];
        gpus_.push_back(s.gpu);
        QString gpu = QString::number(s.gpu);
        if (s.gpus > 1)
            gpu += tr(" (+%1)").arg(s.gpus - 1);
        setItem(i, 0, cell(gpu));
        item(i, 0)->setToolTip(tr("EP rank %1 of sampled EP group %2, stage %3; %4 GPU(s) carry "
                                  "this sample, the first is shown")
                                   .arg(s.rank)
                                   .arg(s.group)
                                   .arg(s.stage)
                                   .arg(s.gpus));
        setItem(i, 1, cell(QString::number(s.node)));
        setItem(i, 2, cell(QString::number(s.layer)));
        item(i, 2)->setToolTip(
            tr("MoE layer %1 = model layer %2").arg(s.layer).arg(dense_layers + s.layer));
        setItem(i, 3, cell(QStringLiteral("%1×").arg(s.ratio, 0, 'f', 2)));
        setItem(i, 4, cell(formatDuration(s.wait_s)));
        setItem(i, 5, cell(s.step_cost_s > 0 ? formatDuration(s.step_cost_s) : tr("0")));
    }
}

void StragglersTable::showNone(const QString& why) {
    gpus_.clear();
    setRowCount(why.isEmpty() ? 0 : 1);
    if (!why.isEmpty()) {
        setItem(0, 0, new QTableWidgetItem(why));
        setSpan(0, 0, 1, columnCount());
    }
}

QSplitter* withStragglers(QWidget* plot, StragglersTable* table, int n, QWidget* parent) {
    table->setToolTip(QObject::tr("The %1 GPUs furthest above their layer's mean (core: "
                                  "topStragglers); a click selects the GPU")
                          .arg(n));
    auto* split = new QSplitter(Qt::Vertical, parent);
    split->setChildrenCollapsible(false);
    split->addWidget(plot);
    auto* list = new QWidget(split);
    auto* list_layout = new QVBoxLayout(list);
    list_layout->setContentsMargins(6, 2, 6, 2);
    list_layout->setSpacing(2);
    list_layout->addWidget(new QLabel(QObject::tr("<b>Top %1 stragglers</b>").arg(n), list));
    list_layout->addWidget(table, 1);
    split->addWidget(list);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    return split;
}

} // namespace moe::widgets::charts
