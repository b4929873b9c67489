// Expert load as a ratio to its layer's mean, the shared diverging colour scale, and the top
// stragglers with the step time each costs. The scenario is built in code and its routing
// sample replaced by a hand-set histogram, so every expected value is derived here.
#include "moe/evaluate.h"
#include "moe/load_scale.h"
#include "moe/load_stragglers.h"
#include "moe/scenario.h"
#include "moe/scenario_io.h"
#include "test_support.h"

#include <QtTest>

#include <cmath>

using namespace moe;

namespace {

/// test::kHandYaml: 2 nodes x 4 GPUs, 2 MoE layers of 8 experts top-2, PP=1, DP=8, EP=4
/// innermost: expert-DP = 8/4 = 2 token streams (sampled groups 0 and 1), GPU = 4 * edp + EP
/// rank, so EP group g is node g. With the gradient sync not overlapping compute, only the
/// pipeline's micro-batches depend on the load.
Scenario smallScenario() {
    const LoadResult r =
        loadScenarioTextWithOverrides(test::kHandYaml, "<test>", ".", {"training.dp_overlap=none"});
    if (!r.ok())
        qFatal("%s", formatAll(r.diagnostics).c_str());
    return *r.scenario;
}

/// The hand-set histogram of token slots per EP rank, rank_tokens[(layer * 2 + group) * 4 + r]:
///   layer 0: group 0 [10, 4, 3, 3]   group 1 [5, 5, 5, 5]   sum 40, mean 5
///   layer 1: group 0 [5, 5, 5, 5]    group 1 [4, 4, 4, 8]   sum 40, mean 5
Report reportWithHistogram() {
    Report r = evaluate(smallScenario());
    r.load.rank_tokens = {10, 4, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 4, 4, 4, 8};
    return r;
}

} // namespace

class TestLoadStragglers : public QObject {
    Q_OBJECT
private slots:
    void layerMeanAndGpuRatio() {
        const Report r = reportWithHistogram();
        QCOMPARE(r.load.sampled_groups, 2);
        QCOMPARE(r.load.ep, 4);
        QCOMPARE(layerMeanSlots(r.load, 0), 5.0); // 40 / 8
        QCOMPARE(layerMeanSlots(r.load, 1), 5.0);
        QCOMPARE(layerMeanSlots(r.load, 2), 0.0); // not a layer of the sample
        // GPU 0 = group 0, rank 0: 10 / 5 in layer 0; GPU 7 = group 1, rank 3: 8 / 5 in layer 1.
        QCOMPARE(gpuLoadRatio(r.load, *r.placement, 0, 0), 2.0);
        QCOMPARE(gpuLoadRatio(r.load, *r.placement, 7, 1), 1.6);
        QCOMPARE(gpuLoadRatio(r.load, *r.placement, 2, 0), 0.6);       // 3 / 5
        QVERIFY(std::isnan(gpuLoadRatio(r.load, *r.placement, 8, 0))); // no such GPU
    }

    /// Worst-group imbalance of the one stage (mean over its 2 layers of busiest / mean):
    ///   group 0: (10/5 + 5/5) / 2 = 1.5,  group 1: (5/5 + 8/5) / 2 = 1.3  -> the step pays 1.5.
    /// Straggler 1, layer 0 group 0 rank 0 (ratio 10/5 = 2): at the mean its excess 5 spreads
    ///   5/3 over ranks 1-3 -> [5, 5.667, 4.667, 4.667]; group 0 pays (5.667/5 + 1) / 2 = 1.0667
    ///   and the stage the worst group, now group 1's 1.3. The step saves the difference between
    ///   running at 1.5 and at 1.3: m micro-batches x 2 layers x (expert GEMMs + all-to-alls at
    ///   1.5 - the same at 1.3) (1F1B, PP=1: no bubble; the gradient sync does not overlap).
    /// Straggler 2, layer 1 group 1 rank 3 (ratio 8/5 = 1.6): its excess 3 spreads 1 over ranks
    ///   0-2 -> [5, 5, 5, 5]; group 1 pays 1.0, group 0 still 1.5: the step saves nothing.
    /// No other rank is above its layer's mean, so the list has two rows. Each one's own wait is
    /// what its EP group waits for it: m x (expert GEMMs + all-to-alls at its ratio - at 1).
    void topStragglersHandDerived() {
        const Report r = reportWithHistogram();
        QCOMPARE(r.load.worstGroupImbalance({0, 1}), 1.5);
        const std::vector<LoadStraggler> top = topStragglers(r, 10);
        QCOMPARE(int(top.size()), 2);

        const LoadStraggler& first = top[0];
        QCOMPARE(first.layer, 0);
        QCOMPARE(first.group, 0);
        QCOMPARE(first.rank, 0);
        QCOMPARE(first.stage, 0);
        QCOMPARE(first.gpu, 0);
        QCOMPARE(first.node, 0);
        QCOMPARE(first.gpus, 1);
        QCOMPARE(first.tokens, 10.0);
        QCOMPARE(first.ratio, 2.0);
        const MoeCosts& moe = r.costs->moe;
        const MoeLayerPrice at15 = moe.price(1.5), at13 = moe.price(1.3);
        const double m = r.costs->micro_batches;
        const double expected =
            m * 2 *
            ((at15.experts_s() + at15.transfers_s()) - (at13.experts_s() + at13.transfers_s()));
        QVERIFY(expected > 0);
        QVERIFY2(std::abs(first.step_cost_s - expected) <= 1e-9 * expected + 1e-15,
                 qPrintable(QString("%1 vs %2").arg(first.step_cost_s).arg(expected)));
        // The wait it adds to its own group: m x (the layer at 2.0x - at the mean).
        const MoeLayerPrice at2 = moe.price(2.0);
        const double wait = m * ((at2.experts_s() + at2.transfers_s()) -
                                 (moe.mean.experts_s() + moe.mean.transfers_s()));
        QVERIFY(wait > 0);
        QVERIFY(std::abs(first.wait_s - wait) <= 1e-9 * wait);

        const LoadStraggler& second = top[1];
        QCOMPARE(second.layer, 1);
        QCOMPARE(second.group, 1);
        QCOMPARE(second.rank, 3);
        QCOMPARE(second.gpu, 7); // 4 * 1 + 3
        QCOMPARE(second.node, 1);
        QCOMPARE(second.ratio, 1.6);
        QCOMPARE(second.step_cost_s, 0.0);
        // It still makes its own group wait: m x (the layer at 1.6x - at the mean).
        const MoeLayerPrice at16 = moe.price(1.6);
        const double wait16 = m * ((at16.experts_s() + at16.transfers_s()) -
                                   (moe.mean.experts_s() + moe.mean.transfers_s()));
        QVERIFY(std::abs(second.wait_s - wait16) <= 1e-9 * wait16);

        // n limits the list; the report's load is left as it was.
        QCOMPARE(int(topStragglers(r, 1).size()), 1);
        QCOMPARE(r.load.rank_tokens[0], 10.0);
        QVERIFY(topStragglers(r, 0).empty());
    }

    void evenLoadAndDenseHaveNone() {
        Report r = reportWithHistogram();
        r.load.rank_tokens.assign(16, 5.0);
        QVERIFY(topStragglers(r, 10).empty());
        Report dense; // no cost model, no sample
        QVERIFY(topStragglers(dense, 10).empty());
    }

    /// Position = 0.5 + 0.5 ln(ratio) / ln(high): ratio 1 -> 0.5 (neutral), high -> 1,
    /// 1/high -> 0; with high = 2, ratio sqrt(2) -> 0.75. The hot end adapts to the data but
    /// never below 1.25: a hottest 1.14x keeps 1.25, so it sits at 0.5 + 0.5 ln 1.14 / ln 1.25
    /// = 0.7936 (clearly warm, where a scale from 0 put it at 1.0 of 1.14 like a 1.0 cell's 0.88).
    void scaleIsDivergingAtOne() {
        const LoadRatioScale two = loadRatioScale(2.0);
        QCOMPARE(two.high, 2.0);
        QCOMPARE(two.low(), 0.5);
        QCOMPARE(two.position(1.0), 0.5);
        QCOMPARE(two.position(2.0), 1.0);
        QCOMPARE(two.position(3.0), 1.0);
        QCOMPARE(two.position(0.5), 0.0);
        QVERIFY(std::abs(two.position(std::sqrt(2.0)) - 0.75) < 1e-12);
        QCOMPARE(two.position(0.0), 0.0);
        QCOMPARE(two.position(std::nan("")), 0.5);
        const LoadRatioScale mild = loadRatioScale(1.14);
        QCOMPARE(mild.high, kLoadScaleMinHigh);
        QVERIFY(std::abs(mild.position(1.14) - 0.79359) < 1e-4);
        QCOMPARE(loadRatioScale(std::nan("")).high, kLoadScaleMinHigh);
        // The stops: cool blue, neutral, hot red; halfway between neutral and hot red is the
        // light red stop #F4A582.
        QCOMPARE(loadScaleColorAt(0.0), (Rgb8{0x21, 0x66, 0xAC}));
        QCOMPARE(two.color(1.0), (Rgb8{0xF2, 0xF0, 0xEB}));
        QCOMPARE(two.color(2.0), (Rgb8{0xB2, 0x18, 0x2B}));
        QCOMPARE(loadScaleColorAt(0.75), (Rgb8{0xF4, 0xA5, 0x82}));
        // Between stops, channels interpolate: 0.875 = halfway #F4A582 -> #B2182B.
        QCOMPARE(loadScaleColorAt(0.875), (Rgb8{0xD3, 0x5F, 0x57}));
    }
};

QTEST_GUILESS_MAIN(TestLoadStragglers)
#include "test_load_stragglers.moc"
