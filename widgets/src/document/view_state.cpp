#include "moe_widgets/document/view_state.h"

namespace moe::widgets {

void ViewState::setHighlight(const QVector<int>& gpus, const QString& label) {
    if (gpus == highlighted_ && label == highlight_label_)
        return;
    highlighted_ = gpus;
    highlight_label_ = label;
    emit highlightChanged();
}

void ViewState::setSelectedGpu(int gpu) {
    if (gpu == selected_gpu_)
        return;
    selected_gpu_ = gpu;
    emit selectedGpuChanged(gpu);
}

void ViewState::setGpuMetric(GpuMetric metric) {
    if (metric == metric_)
        return;
    metric_ = metric;
    emit gpuMetricChanged(metric);
}

void ViewState::setRoutingStep(uint64_t step) {
    if (step == routing_step_)
        return;
    routing_step_ = step;
    emit routingStepChanged(step);
}

} // namespace moe::widgets
