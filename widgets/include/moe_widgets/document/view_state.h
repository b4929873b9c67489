#pragma once
// State shared by the views that is not part of the scenario: which GPUs are highlighted (a
// hovered parallel group, a clicked warning), the selected GPU, the colouring metric, and which
// routing resample is shown (the heatmap's "Next step"; the main window re-evaluates on change).

#include <QObject>
#include <QString>
#include <QVector>

#include <cstdint>

namespace moe::widgets {

enum class GpuMetric { expert_load, memory_use, idle_time, traffic };

class ViewState : public QObject {
    Q_OBJECT
public:
    explicit ViewState(QObject* parent = nullptr)
        : QObject(parent) {}

    const QVector<int>& highlightedGpus() const { return highlighted_; }
    QString highlightLabel() const { return highlight_label_; }
    int selectedGpu() const { return selected_gpu_; }
    GpuMetric gpuMetric() const { return metric_; }
    /// Routing resample to evaluate (0 = the default sample); see moe::evaluate().
    uint64_t routingStep() const { return routing_step_; }

public slots:
    void setHighlight(const QVector<int>& gpus, const QString& label);
    void clearHighlight() { setHighlight({}, {}); }
    void setSelectedGpu(int gpu);
    void setGpuMetric(moe::widgets::GpuMetric metric);
    void setRoutingStep(uint64_t step);
    void nextRoutingStep() { setRoutingStep(routing_step_ + 1); }

signals:
    void highlightChanged();
    void selectedGpuChanged(int gpu);
    void gpuMetricChanged(moe::widgets::GpuMetric metric);
    void routingStepChanged(uint64_t step);

private:
    QVector<int> highlighted_;
    QString highlight_label_;
    int selected_gpu_ = -1;
    GpuMetric metric_ = GpuMetric::expert_load;
    uint64_t routing_step_ = 0;
};

} // namespace moe::widgets

Q_DECLARE_METATYPE(moe::widgets::GpuMetric)
