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
std::shared_ptr<EvaluationResult> evaluateScenario(const Scenario& scenario, uint64_t routing_step,
                                                   uint64_t generation) {
    if (hasErrors(validateScenario(scenario)))
        return nullptr;
    auto result = std::make_shared<EvaluationResult>();
    result->generation = generation;
    result->scenario = scenario;
    result->routing_step = routing_step;
    const auto start = std::chrono::steady_clock::now();
    try {
        result->report = evaluate(scenario, routing_step);
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
    worker_ = std::thread([this] { run(); });
}

Evaluator::~Evaluator() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
        pending_.reset();
    }
    wake_.notify_all();
    worker_.join();
    // Results the worker queued for publish() are discarded with this object's posted events.
}

uint64_t Evaluator::request(const Scenario& scenario, uint64_t routing_step) {
    uint64_t generation = 0;
    {
        std::lock_guard lock(mutex_);
        generation = next_generation_++;
        // Replaces a request the worker has not started: only the newest one matters.
        pending_.emplace(scenario, routing_step);
        pending_generation_ = generation;
    }
    wake_.notify_one();
    return generation;
}

EvaluationResultPtr Evaluator::evaluateNow(const Scenario& scenario, uint64_t routing_step) {
    uint64_t generation = 0;
    {
        std::lock_guard lock(mutex_);
        generation = next_generation_++;
    }
    EvaluationResultPtr result = evaluateScenario(scenario, routing_step, generation);
    if (result)
        publish(result);
    return result;
}

EvaluationResultPtr Evaluator::latest() const {
    std::lock_guard lock(mutex_);
    return latest_;
}

void Evaluator::run() {
    for (;;) {
        std::pair<Scenario, uint64_t> job;
        uint64_t generation = 0;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [this] { return stop_ || pending_.has_value(); });
            if (stop_)
                return;
            job = std::move(*pending_);
            pending_.reset();
            generation = pending_generation_;
        }
        EvaluationResultPtr result = evaluateScenario(job.first, job.second, generation);
        if (!result)
            continue;
        QMetaObject::invokeMethod(
            this, [this, result] { publish(result); }, Qt::QueuedConnection);
    }
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
