#include "moe_widgets/document/evaluator.h"

#include "moe/validate.h"
#include "moe_widgets/document/view_state.h"

#include <QMetaObject>
#include <QtDebug>

#include <chrono>
#include <exception>

namespace moe::widgets {

void registerMetaTypes() {
    qRegisterMetaType<EvaluationResultPtr>("moe::widgets::EvaluationResultPtr");
    qRegisterMetaType<GpuMetric>("moe::widgets::GpuMetric");
    qRegisterMetaType<uint64_t>("uint64_t");
}

namespace {

/// Runs the model; nullptr when the scenario is not valid (the document only holds valid ones,
/// but a crash on bad input is never acceptable) or the model throws.
/// `cache` is the worker's (kept across requests); null evaluates from scratch.
std::shared_ptr<EvaluationResult> evaluateScenario(const Scenario& scenario, uint64_t routing_step,
                                                   uint64_t generation, EvaluationCache* cache) {
    if (hasErrors(validateScenario(scenario)))
        return nullptr;
    auto result = std::make_shared<EvaluationResult>();
    result->generation = generation;
    result->scenario = scenario;
    result->routing_step = routing_step;
    const auto start = std::chrono::steady_clock::now();
    try {
        result->report = cache != nullptr ? evaluate(scenario, routing_step, *cache)
                                          : evaluate(scenario, routing_step);
        // The topology draws every link: its graph and bytes are made here too (evaluate()
        // leaves them for later), off the GUI thread.
        result->report.linkTraffic();
        // The Gantt's schedule is simulated here too, so the GUI thread only draws it.
        result->timeline =
            std::make_shared<const Timeline>(simulateTimeline(scenario, result->report));
    } catch (const std::exception& e) {
        qWarning("evaluate() failed: %s", e.what());
        return nullptr;
    }
    result->evaluate_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return result;
}

} // namespace

Evaluator::Evaluator(QObject* parent)
    : QObject(parent) {
    registerMetaTypes();
}

// The worker member joins its thread first; results it queued for publish() are discarded with
// this object's posted events.
Evaluator::~Evaluator() = default;

uint64_t Evaluator::request(const Scenario& scenario, uint64_t routing_step) {
    uint64_t generation = 0;
    {
        std::lock_guard lock(mutex_);
        generation = next_generation_++;
    }
    // Replaces a request the worker has not started: only the newest one matters.
    worker_.submit([this, scenario, routing_step, generation](EvaluationJob& job) {
        EvaluationResultPtr result =
            evaluateScenario(scenario, routing_step, generation, &job.cache);
        if (result == nullptr || job.stopping())
            return;
        QMetaObject::invokeMethod(
            this, [this, result] { publish(result); }, Qt::QueuedConnection);
    });
    return generation;
}

EvaluationResultPtr Evaluator::evaluateNow(const Scenario& scenario, uint64_t routing_step) {
    uint64_t generation = 0;
    {
        std::lock_guard lock(mutex_);
        generation = next_generation_++;
    }
    EvaluationResultPtr result = evaluateScenario(scenario, routing_step, generation, nullptr);
    if (result)
        publish(result);
    return result;
}

EvaluationResultPtr Evaluator::latest() const {
    std::lock_guard lock(mutex_);
    return latest_;
}

void Evaluator::publish(EvaluationResultPtr result) {
    {
        std::lock_guard lock(mutex_);
        // Older than what the views already show: a newer edit overtook it.
        if (result->generation <= delivered_generation_)
            return;
        delivered_generation_ = result->generation;
        latest_ = result;
    }
    emit resultReady(result);
}

} // namespace moe::widgets
