// Design warnings (warnings.h): the named thresholds decide, the figures are typed, and the one
// text function writes every code's words from its figures.
#include "moe/design_warnings.h"
#include "moe/evaluate.h"
#include "moe/scenario_io.h"
#include "moe/warnings.h"
#include "test_support.h"

#include <QtTest>

#include <algorithm>

using namespace moe;

namespace {

const DesignWarning* find(const std::vector<DesignWarning>& warnings, WarningCode code) {
    const auto it = std::find_if(warnings.begin(), warnings.end(),
                                 [&](const DesignWarning& w) { return w.code == code; });
    return it == warnings.end() ? nullptr : &*it;
}

} // namespace

class TestWarnings : public QObject {
    Q_OBJECT

private slots:
    /// The thresholds, on the default scenario's report with its figures moved across them.
    void thresholds() {
        const Scenario s = defaultScenario();
        Report r = evaluate(s);
        const double step = r.step_time_s;
        // Exposed gradient sync: more than 5% of the step.
        r.step[StepItem::dp_sync] = 0.049 * step;
        QVERIFY(!find(designWarnings(s, r), WarningCode::dp_sync_exposed));
        r.step[StepItem::dp_sync] = 0.051 * step;
        const std::vector<DesignWarning> exposed = designWarnings(s, r);
        const DesignWarning* sync = find(exposed, WarningCode::dp_sync_exposed);
        QVERIFY(sync);
        QCOMPARE(std::get<ExposedSync>(sync->figures).share, 0.051);
        // Pipeline bubble: more than 15%.
        r.step[StepItem::bubble] = 0.149 * step;
        QVERIFY(!find(designWarnings(s, r), WarningCode::bubble));
        r.step[StepItem::bubble] = 0.151 * step;
        QVERIFY(find(designWarnings(s, r), WarningCode::bubble));
        // Straggler: the hottest GPU at 1.5x the mean load or more.
        r.load.max_imbalance = 1.49;
        QVERIFY(!find(designWarnings(s, r), WarningCode::straggler));
        r.load.max_imbalance = 1.5;
        QVERIFY(find(designWarnings(s, r), WarningCode::straggler));
        // Memory: within 5% of HBM is tight, over it does not fit (critical, listed first).
        r.memory.margin_bytes = 0.051 * r.memory.hbm_bytes;
        QVERIFY(!find(designWarnings(s, r), WarningCode::memory_tight));
        r.memory.margin_bytes = 0.049 * r.memory.hbm_bytes;
        QVERIFY(find(designWarnings(s, r), WarningCode::memory_tight));
        r.memory.fits = false;
        const std::vector<DesignWarning> over = designWarnings(s, r);
        QVERIFY(find(over, WarningCode::memory_over));
        QVERIFY(!find(over, WarningCode::memory_tight));
        QCOMPARE(over.front().code, WarningCode::memory_over);
        QCOMPARE(over.front().severity, DesignWarning::Severity::critical);
        // Goodput under 90%.
        r.economics.reliability.goodput = 0.91;
        QVERIFY(!find(designWarnings(s, r), WarningCode::low_goodput));
        r.economics.reliability.goodput = 0.89;
        QVERIFY(find(designWarnings(s, r), WarningCode::low_goodput));
    }

    /// Every code's words, written from hand-built figures.
    void texts() {
        const auto text = [](WarningFigures figures) {
            DesignWarning w;
            w.code = codeOf(figures);
            w.figures = std::move(figures);
            return warningText(w);
        };
        QCOMPARE(text(TpCrossesDomain{16, 2, "InfiniBand"}),
                 std::string("TP group of 16 GPUs crosses 2 scale-up domains: every layer's TP "
                             "collectives go over InfiniBand"));
        QCOMPARE(text(Straggler{54, 1.74, 3}),
                 std::string("GPU 54 carries 1.7x the mean expert load (MoE layer 3): its EP "
                             "group waits for it every layer"));
        QCOMPARE(text(MemoryOver{2, 94.1e9, 80e9}),
                 std::string("stage 2 needs 94.1 GB per GPU, over the 80.0 GB of HBM"));
        QCOMPARE(text(MemoryTight{0, 77.5e9, 80e9}),
                 std::string("stage 0 uses 77.5 of 80.0 GB: within 5% of HBM"));
        QCOMPARE(text(LargeBubble{0.43}),
                 std::string("pipeline bubble is 43% of the step: more micro-batches, "
                             "interleaving or DualPipe would shrink it"));
        QCOMPARE(text(ExposedSync{0.052}),
                 std::string("gradient sync is not hidden: 5% of the step waits for it (the last "
                             "buckets' reduce after the last backward, the weights' all-gather "
                             "before the first forward)"));
        QCOMPARE(text(TokensDropped{0.031}),
                 std::string("3% of token slots exceed the capacity factor and are dropped"));
        QCOMPARE(text(RackPowerOver{2, 1, 4, 35.2, 30}),
                 std::string("2 racks (rack 1 first) draw 35.2 kW with 4 nodes, over the 30.0 kW "
                             "rack limit: move nodes to other racks or lower "
                             "cluster.nodes_per_rack"));
        QCOMPARE(text(TinyExpertGemms{64.7}),
                 std::string("about 64 tokens per expert per micro-batch, less than one 128-row "
                             "GEMM tile: padding wastes over a third of the expert GEMMs' work "
                             "(fewer tokens still make them memory-bound); a larger micro-batch "
                             "helps"));
        QCOMPARE(text(LowGoodput{0.85, 0.06, 0.09, 2.5, 12, 20}),
                 std::string("goodput 85%: checkpoints take 6% and failures 9% of the wall-clock "
                             "(MTBF 2.5 h, a checkpoint 12.0 min, a recovery 20.0 min); faster "
                             "checkpoint storage or quicker restarts shorten both"));
        // Stable ids.
        QCOMPARE(std::string(toString(WarningCode::dp_sync_exposed)),
                 std::string("dp-sync-exposed"));
        QCOMPARE(codeOf(WarningFigures{LowGoodput{}}), WarningCode::low_goodput);
    }
};

QTEST_APPLESS_MAIN(TestWarnings)
#include "test_warnings.moc"
