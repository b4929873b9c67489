// The core's evaluation worker: newest request wins (a waiting request is replaced, a running
// one sees it was overtaken), one thread keeps its EvaluationCache across requests, shutdown
// stops a running job and drops a waiting one, a throwing job does not kill the thread, and
// submits from several threads at once are safe (run under the ASan preset too).
#include "moe/evaluation_worker.h"
#include "moe/scenario_io.h"

#include <QtTest>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace moe;

namespace {

/// A job that blocks the worker until release() so a test can queue requests behind it.
struct Gate {
    std::promise<void> opened;
    std::shared_future<void> wait_for = opened.get_future().share();
    std::promise<void> entered;
    void release() { opened.set_value(); }
};

} // namespace

class TestEvaluationWorker : public QObject {
    Q_OBJECT
private slots:
    // While one job runs, three more are submitted: the first two are replaced before they run,
    // the running one sees superseded(), and only the newest runs after it.
    void newestRequestWins() {
        EvaluationWorker worker;
        Gate gate;
        std::vector<uint64_t> ran;
        std::mutex ran_mutex;
        bool first_superseded = false;
        const uint64_t first = worker.submit([&](EvaluationJob& job) {
            gate.entered.set_value();
            gate.wait_for.wait();
            first_superseded = job.superseded();
            std::lock_guard lock(ran_mutex);
            ran.push_back(job.generation);
        });
        gate.entered.get_future().wait(); // the first job is running, not waiting
        uint64_t last = 0;
        bool last_superseded = true;
        for (int i = 0; i < 3; ++i)
            last = worker.submit([&](EvaluationJob& job) {
                last_superseded = job.superseded();
                std::lock_guard lock(ran_mutex);
                ran.push_back(job.generation);
            });
        gate.release();
        worker.waitIdle();
        QCOMPARE(first, uint64_t(1));
        QCOMPARE(last, uint64_t(4));
        QCOMPARE(ran, (std::vector<uint64_t>{first, last}));
        QVERIFY(first_superseded);
        QVERIFY(!last_superseded);
        QCOMPARE(worker.droppedCount(), uint64_t(2));
        QCOMPARE(worker.finishedCount(), uint64_t(2));
    }

    // Two requests on the same cluster run on one thread and share the hardware graph the first
    // built (the cache), and the figures equal a from-scratch evaluate().
    void cacheIsKeptAcrossRequests() {
        EvaluationWorker worker;
        Scenario a = defaultScenario();
        Scenario b = a;
        b.routing.balancing = BalancingMethod::aux_free; // another routing sample, same graph
        std::thread::id thread_a, thread_b;
        Report report_a, report_b;
        worker.submit([&](EvaluationJob& job) {
            thread_a = std::this_thread::get_id();
            report_a = evaluate(a, 0, job.cache);
        });
        worker.waitIdle();
        worker.submit([&](EvaluationJob& job) {
            thread_b = std::this_thread::get_id();
            QVERIFY(job.cache.graph != nullptr); // left there by the first request
            report_b = evaluate(b, 0, job.cache);
        });
        worker.waitIdle();
        QCOMPARE(thread_a, thread_b);
        QVERIFY(thread_a != std::this_thread::get_id());
        QVERIFY(report_a.hardware_graph != nullptr);
        QCOMPARE(report_b.hardware_graph.get(), report_a.hardware_graph.get());
        const Report scratch = evaluate(b, 0);
        QCOMPARE(report_b.step_time_s, scratch.step_time_s);
        QVERIFY(report_b.step_time_s != report_a.step_time_s);
    }

    // The constructor's cache sets its options for every job.
    void cacheOptionsAreKept() {
        EvaluationCache options;
        options.figures_only = true;
        EvaluationWorker worker(options);
        bool figures_only = false;
        worker.submit([&](EvaluationJob& job) { figures_only = job.cache.figures_only; });
        worker.waitIdle();
        QVERIFY(figures_only);
    }

    // Destroying the worker while a job runs: the job sees stopping() and returns, the waiting
    // request never runs, and the destructor returns (joins) without a hang.
    void shutdownStopsRunningAndDropsWaiting() {
        auto worker = std::make_unique<EvaluationWorker>();
        std::promise<void> entered;
        std::atomic<bool> saw_stopping = false;
        std::atomic<bool> waiting_ran = false;
        worker->submit([&](EvaluationJob& job) {
            entered.set_value();
            while (!job.stopping())
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            saw_stopping = true;
        });
        entered.get_future().wait();
        worker->submit([&](EvaluationJob&) { waiting_ran = true; });
        worker.reset();
        QVERIFY(saw_stopping);
        QVERIFY(!waiting_ran);
    }

    void idleWorkerShutsDown() {
        EvaluationWorker worker;
        worker.waitIdle(); // nothing submitted: returns at once
        QCOMPARE(worker.finishedCount(), uint64_t(0));
    }

    void throwingJobKeepsTheWorker() {
        EvaluationWorker worker;
        worker.submit([](EvaluationJob&) { throw std::runtime_error("bad scenario"); });
        worker.waitIdle();
        QCOMPARE(QString::fromStdString(worker.lastError()), QStringLiteral("bad scenario"));
        bool ran = false;
        worker.submit([&](EvaluationJob&) { ran = true; });
        worker.waitIdle();
        QVERIFY(ran);
    }

    // Four threads submit at once: every request either runs or is dropped, generations are
    // unique, and the newest one always runs.
    void concurrentSubmitsAreSafe() {
        constexpr int threads = 4, per_thread = 200;
        std::atomic<int> ran = 0;
        std::atomic<uint64_t> newest_ran = 0;
        {
            EvaluationWorker worker;
            std::vector<std::thread> submitters;
            for (int t = 0; t < threads; ++t)
                submitters.emplace_back([&] {
                    for (int i = 0; i < per_thread; ++i)
                        worker.submit([&](EvaluationJob& job) {
                            ++ran;
                            newest_ran = std::max(newest_ran.load(), job.generation);
                        });
                });
            for (std::thread& t : submitters)
                t.join();
            worker.waitIdle();
            QCOMPARE(worker.finishedCount() + worker.droppedCount(),
                     uint64_t(threads * per_thread));
            QCOMPARE(uint64_t(ran.load()), worker.finishedCount());
            QCOMPARE(newest_ran.load(), uint64_t(threads * per_thread));
        }
    }

    // A poller sees only the newest result; an older one offered late is refused.
    void latestResultKeepsTheNewest() {
        LatestResult<int> latest;
        QVERIFY(!latest.take());
        QVERIFY(latest.offer(2, 20));
        QVERIFY(!latest.offer(1, 10)); // finished after a newer one: stale
        QVERIFY(latest.offer(3, 30));
        const auto taken = latest.take();
        QVERIFY(taken);
        QCOMPARE(taken->first, uint64_t(3));
        QCOMPARE(taken->second, 30);
        QVERIFY(!latest.take());
        QVERIFY(!latest.offer(3, 31)); // already taken generation
    }
};

QTEST_GUILESS_MAIN(TestEvaluationWorker)
#include "test_evaluation_worker.moc"
