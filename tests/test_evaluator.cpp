// The off-thread evaluator: results arrive on the GUI thread, only the newest counts, and a
// request queued behind a running one is replaced rather than evaluated.
#include "moe/scenario_io.h"
#include "moe_widgets/document/evaluator.h"
#include "moe_widgets/document/view_state.h"
#include "test_support.h"

#include <QSignalSpy>
#include <QThread>
#include <QtTest>

using namespace moe;
using namespace moe::widgets;

namespace {

Scenario withEp(int ep) {
    Scenario s = defaultScenario();
    s.layout.ep = ep;
    return s;
}

EvaluationResultPtr resultAt(const QSignalSpy& spy, int i) {
    return spy.at(i).at(0).value<EvaluationResultPtr>();
}

} // namespace

class TestEvaluator : public QObject {
    Q_OBJECT
private slots:
    void metaTypesAreRegistered() {
        registerMetaTypes();
        QVERIFY(QMetaType::fromName("moe::widgets::EvaluationResultPtr").isValid());
        QVERIFY(QMetaType::fromName("moe::widgets::GpuMetric").isValid());
    }

    void deliversOnTheGuiThread() {
        Evaluator evaluator;
        QSignalSpy spy(&evaluator, &Evaluator::resultReady);
        QThread* delivered_on = nullptr;
        connect(&evaluator, &Evaluator::resultReady, this,
                [&] { delivered_on = QThread::currentThread(); });
        const uint64_t generation = evaluator.request(withEp(16), 3);
        QVERIFY(spy.wait(5000));
        QCOMPARE(spy.count(), 1);
        const EvaluationResultPtr r = resultAt(spy, 0);
        QVERIFY(r);
        QCOMPARE(r->generation, generation);
        QCOMPARE(r->routing_step, uint64_t(3));
        QCOMPARE(r->scenario.layout.ep, 16);
        QCOMPARE(r->report.gpus, 64);
        QVERIFY(r->report.step_time_s > 0);
        QVERIFY(r->evaluate_ms > 0);
        QCOMPARE(delivered_on, QThread::currentThread());
        QCOMPARE(evaluator.latest(), r);
    }

    // A burst of requests (a slider drag) evaluates the first and the last, not all of them.
    void queuedRequestsAreReplaced() {
        const Scenario big =
            loadScenarioFile(test::samplePath("deepseek-v3-2048xh800.yaml")).scenario.value();
        Evaluator evaluator;
        QSignalSpy spy(&evaluator, &Evaluator::resultReady);
        uint64_t last = 0;
        for (int i = 0; i < 10; ++i) {
            Scenario s = big;
            s.routing.zipf_alpha = 0.5 + 0.1 * i;
            last = evaluator.request(s);
        }
        QTRY_VERIFY_WITH_TIMEOUT(evaluator.latest() && evaluator.latest()->generation == last,
                                 10000);
        QVERIFY2(spy.count() <= 3, qPrintable(QString::number(spy.count())));
        QCOMPARE(evaluator.latest()->scenario.routing.zipf_alpha, 0.5 + 0.1 * 9);
        for (int i = 1; i < spy.count(); ++i)
            QVERIFY(resultAt(spy, i)->generation > resultAt(spy, i - 1)->generation);
    }

    // A result that finishes after a newer one was shown is dropped.
    void staleResultsAreDropped() {
        Evaluator evaluator;
        QSignalSpy spy(&evaluator, &Evaluator::resultReady);
        const uint64_t old_generation = evaluator.request(withEp(4));
        // Published synchronously, before the worker's result can be delivered (that needs the
        // event loop), so it is newer than anything the worker sends afterwards.
        const EvaluationResultPtr now = evaluator.evaluateNow(withEp(16));
        QVERIFY(now);
        QVERIFY(now->generation > old_generation);
        QCOMPARE(spy.count(), 1);
        QTest::qWait(300); // the worker's ep=4 result arrives here and must be ignored
        QCOMPARE(spy.count(), 1);
        QCOMPARE(evaluator.latest()->scenario.layout.ep, 16);
    }

    void invalidScenarioIsNotEvaluated() {
        Evaluator evaluator;
        QSignalSpy spy(&evaluator, &Evaluator::resultReady);
        QVERIFY(!evaluator.evaluateNow(withEp(3)));
        evaluator.request(withEp(3));
        QTest::qWait(200);
        QCOMPARE(spy.count(), 0);
        QVERIFY(!evaluator.latest());
        // The worker is still alive afterwards.
        evaluator.request(withEp(8));
        QVERIFY(spy.wait(5000));
    }

    void destroyWhileBusy() {
        const Scenario big =
            loadScenarioFile(test::samplePath("deepseek-v3-2048xh800.yaml")).scenario.value();
        auto* evaluator = new Evaluator;
        evaluator->request(big);
        evaluator->request(big);
        delete evaluator; // joins the worker; the queued result is discarded, nothing crashes
        QTest::qWait(50);
    }
};

QTEST_GUILESS_MAIN(TestEvaluator)
#include "test_evaluator.moc"
