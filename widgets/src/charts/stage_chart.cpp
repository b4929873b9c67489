#include "moe_widgets/charts/stage_chart.h"

#include "charts/chart_support.h"
#include "moe_widgets/document/view_state.h"

#include <QEvent>
#include <QHelpEvent>
#include <QToolTip>
#include <QVBoxLayout>
#include <qcustomplot.h>

namespace moe::widgets {

StageChart::StageChart(ScenarioDocument* document, ViewState* state, const QString& object_name,
                       QWidget* parent)
    : QWidget(parent)
    , document_(document)
    , state_(state)
    , plot_(new QCustomPlot(this)) {
    setObjectName(object_name);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(plot_);
    plot_->setMinimumSize(320, 220);
    plot_->setNoAntialiasingOnDrag(true);

    // Title, subtitle, the bars, the legend below them.
    plot_->plotLayout()->insertRow(0);
    plot_->plotLayout()->insertRow(1);
    auto* title = new QCPTextElement(plot_, QString());
    title->setMargins(QMargins(8, 6, 8, 0));
    plot_->plotLayout()->addElement(0, 0, title);
    auto* subtitle = new QCPTextElement(plot_, QString());
    subtitle->setProperty("moe_muted", true);
    subtitle->setMargins(QMargins(8, 2, 8, 4));
    plot_->plotLayout()->addElement(1, 0, subtitle);
    plot_->legend->setVisible(true);
    plot_->axisRect()->insetLayout()->take(plot_->legend);
    plot_->axisRect()->insetLayout()->simplify();
    auto* legend_row = new QCPLayoutGrid;
    plot_->plotLayout()->addElement(3, 0, legend_row);
    legend_row->addElement(0, 0, plot_->legend);
    legend_row->setMargins(QMargins(8, 0, 8, 6));
    plot_->plotLayout()->setRowStretchFactor(3, 0.001);
    plot_->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    plot_->legend->setRowSpacing(2);
    plot_->legend->setColumnSpacing(14);
    plot_->xAxis2->setVisible(false);
    plot_->yAxis2->setVisible(false);
    plot_->installEventFilter(this);

    if (state_ != nullptr) {
        connect(state_, &ViewState::selectedGpuChanged, this, [this](int gpu) {
            const int stage = stageOfSelectedGpu(gpu);
            if (stage != selected_stage_) {
                selected_stage_ = stage;
                if (result_ != nullptr)
                    rebuild(false);
            }
        });
    }
}

StageChart::~StageChart() = default;

int StageChart::stageOfSelectedGpu(int gpu) const {
    if (result_ == nullptr || result_->report.placement == nullptr || gpu < 0 ||
        gpu >= result_->report.placement->gpuCount())
        return -1;
    return result_->report.placement->coordsOf(gpu).pp;
}

void StageChart::showResult(const EvaluationResultPtr& result) {
    if (result == nullptr)
        return;
    result_ = result;
    if (state_ != nullptr)
        selected_stage_ = stageOfSelectedGpu(state_->selectedGpu());
    rebuild(false);
}

QString StageChart::exportTo(const QString& path) {
    if (result_ == nullptr)
        return tr("nothing to export: no evaluation yet");
    rebuild(true);
    const QString error =
        charts::exportPlot(plot_, path, kExportWidth, kExportHeight, exportTitle());
    rebuild(false);
    return error;
}

StageChart::Fonts StageChart::fonts(bool for_export) const {
    Fonts f;
    f.base = font();
    if (for_export) {
        f.base.setFamily(QStringLiteral("DejaVu Sans"));
        f.base.setPixelSize(15);
    }
    f.title = f.base;
    f.title.setBold(true);
    if (for_export)
        f.title.setPixelSize(24);
    else
        f.title.setPointSizeF(f.base.pointSizeF() * 1.15);
    f.small = f.base;
    if (for_export)
        f.small.setPixelSize(14);
    return f;
}

QCPTextElement* StageChart::titleElement() const {
    return qobject_cast<QCPTextElement*>(plot_->plotLayout()->element(0, 0));
}

QCPTextElement* StageChart::subtitleElement() const {
    return qobject_cast<QCPTextElement*>(plot_->plotLayout()->element(1, 0));
}

bool StageChart::clearForRebuild() {
    plot_->clearPlottables();
    plot_->clearItems();
    bars_.clear();
    if (result_ != nullptr)
        return true;
    plot_->replot();
    return false;
}

void StageChart::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && result_ != nullptr)
        rebuild(false);
}

bool StageChart::eventFilter(QObject* watched, QEvent* event) {
    if (watched == plot_ && event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = toolTipAt(help->pos());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, plot_);
        return true;
    }
    // Text wraps and labels thin out by the size: rebuild (a few ms) when it changes.
    if (watched == plot_ && event->type() == QEvent::Resize && result_ != nullptr)
        rebuild(false);
    return QWidget::eventFilter(watched, event);
}

} // namespace moe::widgets
