#pragma once
// Runs evaluate() off the GUI thread on the core's EvaluationWorker (one long-lived thread that
// keeps its EvaluationCache). Only the newest request counts: a request made while an evaluation
// runs replaces any queued one, and results older than the newest delivered one are dropped (a
// generation counter), so dragging a slider never queues stale work and the UI never blocks.

#include "moe/evaluate.h"
#include "moe/evaluation_worker.h"
#include "moe/scenario.h"
#include "moe/timeline.h"

#include <QObject>

#include <cstdint>
#include <memory>
#include <mutex>

namespace moe::widgets {

/// What the views render: the scenario that was evaluated and its report.
struct EvaluationResult {
    uint64_t generation = 0;
    Scenario scenario;
    Report report;
    uint64_t routing_step = 0;
    double evaluate_ms = 0;
    /// The step timeline (simulateTimeline), when the evaluator simulated it off the GUI thread;
    /// null otherwise, and then the Gantt view simulates it itself.
    std::shared_ptr<const Timeline> timeline;
};
using EvaluationResultPtr = std::shared_ptr<const EvaluationResult>;

class Evaluator : public QObject {
    Q_OBJECT
public:
    explicit Evaluator(QObject* parent = nullptr);
    ~Evaluator() override;

    /// Schedules an evaluation; returns its generation.
    uint64_t request(const Scenario& scenario, uint64_t routing_step = 0);
    /// Evaluates on the calling thread and publishes the result (headless export, tests).
    EvaluationResultPtr evaluateNow(const Scenario& scenario, uint64_t routing_step = 0);
    EvaluationResultPtr latest() const;

signals:
    /// Delivered on the GUI thread, newest generation only.
    void resultReady(moe::widgets::EvaluationResultPtr result);

private:
    void publish(EvaluationResultPtr result);

    mutable std::mutex mutex_;
    uint64_t next_generation_ = 1;
    uint64_t delivered_generation_ = 0;
    EvaluationResultPtr latest_;
    EvaluationWorker worker_; ///< last: joined before the members its jobs use are destroyed
};

/// Registers the types carried by queued signals (results, GPU metric); idempotent. Called by
/// the Evaluator's constructor; call it first in code that queues them without an Evaluator.
void registerMetaTypes();

} // namespace moe::widgets

Q_DECLARE_METATYPE(moe::widgets::EvaluationResultPtr)
