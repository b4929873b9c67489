// The calibration cases (issue 15): Megatron's FLOP formula by hand, the error arithmetic, every
// case citing its source, and each SC21 scenario holding its row of Table 1 (checked against a
// copy of the table typed here, so a typo in either fails). The errors themselves are printed,
// not asserted; the targets (issue 15's done-when) are asserted as bounds, and whether they are
// met is what `moe-plan calibrate` reports.
#include "moe/calibration.h"
#include "moe/evaluate.h"
#include "moe/scenario_io.h"

#include "test_close.h"

#include <QtTest>

#include <algorithm>

#include <cmath>
#include <set>
#include <string>

using namespace moe;

namespace {

const CalibrationCase* findCase(const std::string& id) {
    for (const CalibrationCase& c : calibrationCases())
        if (c.id == id)
            return &c;
    return nullptr;
}

} // namespace

class TestCalibration : public QObject {
    Q_OBJECT
private slots:
    void megatronFlopsByHand() {
        // SC21 Table 1, first row: B = 512, s = 2048, l = 24, h = 2304, V = 51200.
        // 96 B s l h^2 = 96 x 512 x 2048 x 24 x 2304^2
        //             = 2,415,919,104 x 5,308,416 = 12,824,703,626,379,264
        // 1 + s/(6h) + V/(16 l h) = 1 + 2048/13824 + 51200/884736 = 1 + 4/27 + 25/432
        //                        = (432 + 64 + 25)/432 = 521/432
        // F = 12,824,703,626,379,264 x 521/432 = 1.5466830067924992e16 FLOP (15.5 PFLOP;
        // at the published 137 TFLOP/s per GPU on 32 GPUs: 3.528 s per iteration).
        QCLOSE(megatronFlopsPerStep(512, 2048, 24, 2304, 51200), 1.5466830067924992e16);
    }

    void errorArithmetic() {
        QCLOSE(signedErrorPercent(110, 100), 10.0);
        QCLOSE(signedErrorPercent(80, 100), -20.0);
        // 205.3 vs 137: 68.3/137 = 0.498540... -> +49.854%
        QCLOSE(signedErrorPercent(205.3, 137), 49.85401459854015);

        CalibrationCase a, b;
        a.group = "dense";
        b.group = "other";
        std::vector<CalibrationResult> results(4);
        results[0] = {&a, true, 110, 10.0};
        results[1] = {&a, true, 80, -20.0};
        results[2] = {&a, false, 0, 0};
        results[3] = {&b, true, 150, 50.0};
        // dense: |+10| and |-20| -> mean 15, max 20; the uncompared case counts as a case only.
        const CalibrationGroupSummary dense = summarizeGroup("dense", results);
        QCOMPARE(dense.cases, 3);
        QCOMPARE(dense.compared, 2);
        QCLOSE(dense.mean_abs_error_percent, 15.0);
        QCLOSE(dense.max_abs_error_percent, 20.0);
        const CalibrationGroupSummary none = summarizeGroup("absent", results);
        QCOMPARE(none.cases, 0);
        QCOMPARE(none.mean_abs_error_percent, 0.0);
    }

    void everyCaseCitesItsSource() {
        std::set<std::string> ids;
        for (const CalibrationCase& c : calibrationCases()) {
            QVERIFY2(ids.insert(c.id).second, c.id.c_str());
            QVERIFY2(!c.source.empty() && !c.title.empty() && !c.unit.empty(), c.id.c_str());
            QVERIFY2(c.published > 0, c.id.c_str());
            // A case is compared (with a scenario) or says why not.
            const bool comparable = c.metric != CalibrationMetric::not_comparable;
            QVERIFY2(comparable ? (c.scenario.has_value() || !c.note.empty()) : !c.note.empty(),
                     c.id.c_str());
        }
        // + DeepSeek-V3 with perfect balance, + 3 Blackwell rows
        QCOMPARE(int(ids.size()), 10 + 1 + 7 + 1 + 8 + 3);
    }

    void deepEpCasesCountTheTestScriptsBytes() {
        // Bytes per GPU and call as DeepEP's test scripts count them, 4096 tokens, hidden 7168:
        // EP8 in one node: a token reaches 8 (1 - (7/8)^8) = 5.25113 of the 8 ranks, FP8 with a
        // 4-byte scale per 128: 4096 x 5.25113 x 7168 x 1.03125 = 158,991,741.6 B.
        QCLOSE(deepEpMetricBytes(8, 8, 0, 8, 4096, 7168, kDeepEpFp8BytesPerElement),
               158991741.5625);
        // EP64 over 8 nodes limited to 4: 3.5 remote nodes + the own one in 2 = 4 nodes;
        // FP8 121,110,528 B, BF16 combine 4096 x 4 x 7168 x 2 = 234,881,024 B.
        QCLOSE(deepEpMetricBytes(64, 8, 4, 8, 4096, 7168, kDeepEpFp8BytesPerElement), 121110528.0);
        QCLOSE(deepEpMetricBytes(64, 8, 4, 8, 4096, 7168, 2.0), 234881024.0);
        // EP16 over 2 nodes: 2 (1 - (1/2)^8) = 1.9921875 nodes: 60,318,720 B.
        QCLOSE(deepEpMetricBytes(16, 8, 4, 8, 4096, 7168, kDeepEpFp8BytesPerElement), 60318720.0);

        // The planner's EP64 dispatch of 4096 tokens: through the NIC 3.5 copies x 7168 B (FP8
        // priced at one byte) = 102,760,448 B at 48 x 0.9 = 43.2 GB/s = 2.3787 ms; over NVLink
        // 4096 x 32 (1 - (31/32)^8) x 7/8 x 7168 B = 184.4 MB at 200 x 0.8 = 160 GB/s = 1.15 ms:
        // the NIC sets the pace, 121.11 MB / 2.3787 ms = 50.9 GB/s (latencies of a few us aside).
        const CalibrationRun run = runCalibration("deepep-ep64-dispatch");
        QCOMPARE(int(run.results.size()), 1);
        const CalibrationResult& r = run.results.front();
        QVERIFY(r.compared);
        const double hand_gbps = 121110528.0 / (102760448.0 / 43.2e9) / 1e9;
        QVERIFY2(std::abs(r.predicted - hand_gbps) / hand_gbps < 0.01,
                 qPrintable(QString::number(r.predicted)));
        const Scenario& s = *r.reference->scenario;
        QCOMPARE(s.layout.ep, 64);
        QCOMPARE(s.cluster.nodes, 8);
        QCOMPARE(s.layout.max_nodes_per_token, 4);
        QCOMPARE(s.layout.pp, 1);
    }

    void blackwellCasesHoldTheirRows() {
        // Megatron-Bridge performance summary, release 26.04.01, DeepSeekV3 (256 GPUs, MXFP8,
        // GBS 4096, MBS 1, seq 4096, TP 1): DGX-GB200 PP 4 VP 4 EP 64 at 4256 tokens/s/GPU,
        // DGX-B200 PP 8 VP 2 EP 32 at 3328; release 26.04: DGX-B200 PP 16 EP 8 at 2815, typed
        // again here.
        struct Row {
            const char* id;
            const char* gpu;
            int pp, vpp, ep;
            double tokens_per_s;
        };
        for (const Row& row : {Row{"bridge-dsv3-gb200", "gb200", 4, 4, 64, 4256},
                               Row{"bridge-dsv3-b200", "b200", 8, 2, 32, 3328},
                               Row{"bridge-dsv3-b200-pp16", "b200", 16, 1, 8, 2815}}) {
            const auto& cases = calibrationCases();
            const auto it = std::find_if(cases.begin(), cases.end(),
                                         [&](const CalibrationCase& c) { return c.id == row.id; });
            QVERIFY2(it != cases.end(), row.id);
            QCOMPARE(it->group, std::string("blackwell"));
            QCOMPARE(it->metric, CalibrationMetric::tokens_per_s_per_gpu);
            QCOMPARE(it->published, row.tokens_per_s);
            // 61 layers do not split evenly over PP x VP = 16 chunks, which the interleaved
            // schedule needs until uneven first/last stages exist: then the case says so.
            // Without interleaving (the PP 16 row) the case is expressible today.
            QVERIFY2(row.vpp > 1 || it->scenario.has_value(), it->note.c_str());
            if (!it->scenario) {
                QVERIFY2(it->note.find("not expressible") != std::string::npos, it->note.c_str());
                continue;
            }
            const Scenario& s = *it->scenario;
            QCOMPARE(s.cluster.gpu.preset, std::string(row.gpu));
            QCOMPARE(s.cluster.nodes * s.cluster.gpus_per_node, 256);
            QCOMPARE(s.layout.pp, row.pp);
            QCOMPARE(s.layout.vpp, row.vpp);
            QCOMPARE(s.layout.ep, row.ep);
            QCOMPARE(s.model.fp8_recipe, Fp8Recipe::mxfp8);
            QCOMPARE(s.training.global_batch, int64_t{4096});
        }
    }

    void sc21ScenariosHoldTheirRows_data() {
        // Narayanan et al., SC21, Table 1 (heads, hidden, layers, TP, PP, GPUs, batch) and
        // run_table_1.sh (MBS, layers per virtual stage -> vpp), typed again here.
        QTest::addColumn<QString>("id");
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("hidden");
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("gpus");
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("mbs");
        QTest::addColumn<int>("vpp");
        QTest::addColumn<double>("tflops");
        auto row = [](const char* id, int heads, int hidden, int layers, int tp, int pp, int gpus,
                      int batch, int mbs, int vpp, double tflops) {
            QTest::newRow(id) << QString(id) << heads << hidden << layers << tp << pp << gpus
                              << batch << mbs << vpp << tflops;
        };
        row("sc21-1.7b", 24, 2304, 24, 1, 1, 32, 512, 16, 1, 137);
        row("sc21-3.6b", 32, 3072, 30, 2, 1, 64, 512, 16, 1, 138);
        row("sc21-7.5b", 32, 4096, 36, 4, 1, 128, 512, 16, 1, 142);
        row("sc21-18.4b", 48, 6144, 40, 8, 1, 256, 1024, 8, 1, 135);
        row("sc21-39.1b", 64, 8192, 48, 8, 2, 512, 1536, 4, 1, 138);
        row("sc21-76.1b", 80, 10240, 60, 8, 4, 1024, 1792, 2, 3, 140);     // 60/(4x5)
        row("sc21-145.6b", 96, 12288, 80, 8, 8, 1536, 2304, 2, 2, 148);    // 80/(8x5)
        row("sc21-310.1b", 128, 16384, 96, 8, 16, 1920, 2160, 1, 2, 155);  // 96/(16x3)
        row("sc21-529.6b", 128, 20480, 105, 8, 35, 2520, 2520, 1, 3, 163); // 105/(35x1)
        row("sc21-1008b", 160, 25600, 128, 8, 64, 3072, 3072, 1, 1, 163);
    }
    void sc21ScenariosHoldTheirRows() {
        QFETCH(QString, id);
        QFETCH(int, heads);
        QFETCH(int, hidden);
        QFETCH(int, layers);
        QFETCH(int, tp);
        QFETCH(int, pp);
        QFETCH(int, gpus);
        QFETCH(int, batch);
        QFETCH(int, mbs);
        QFETCH(int, vpp);
        QFETCH(double, tflops);
        const CalibrationCase* c = findCase(id.toStdString());
        QVERIFY(c);
        QCOMPARE(c->published, tflops);
        QCOMPARE(c->metric, CalibrationMetric::megatron_tflops_per_gpu);
        QVERIFY2(c->scenario, c->note.c_str());
        const Scenario& s = *c->scenario;
        QCOMPARE(s.model.heads, heads);
        QCOMPARE(s.model.hidden, hidden);
        QCOMPARE(s.model.layers, layers);
        QCOMPARE(s.model.seq_len, 2048);
        QCOMPARE(s.model.vocab, 51200);
        QVERIFY(!s.model.isMoe());
        // What Megatron-LM 6985e58 builds from the script's flags: the GeLU MLP of 4h,
        // dropout 0.1 (hidden and attention), unfused attention.
        QCOMPARE(s.model.ffn_hidden, 4 * hidden);
        QCOMPARE(s.model.mlp, MlpKind::gelu);
        QCOMPARE(s.model.dropout, 0.1);
        QCOMPARE(s.training.attention_kernel, AttentionKernel::unfused);
        QCOMPARE(s.layout.tp, tp);
        QCOMPARE(s.layout.pp, pp);
        QCOMPARE(s.layout.dp, gpus / (tp * pp));
        QCOMPARE(s.layout.vpp, vpp);
        QCOMPARE(s.layout.schedule,
                 vpp > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b);
        QCOMPARE(s.cluster.gpuCount(), gpus);
        QCOMPARE(s.cluster.gpu.preset, std::string("a100-sxm"));
        QCOMPARE(s.cluster.nic.preset, std::string("cx6-200g"));
        QCOMPARE(s.cluster.nics_per_node, 8);
        QCOMPARE(s.training.global_batch, int64_t{batch});
        QCOMPARE(s.training.micro_batch, mbs);
        QCOMPARE(s.training.recompute, Recompute::full);
        QCOMPARE(s.model.compute_precision, Precision::fp16);
    }

    void predictionIsLikeForLike() {
        // sc21-1.7b: the predicted TFLOP/s is Megatron's F over the planner's step and 32 GPUs.
        const CalibrationRun run = runCalibration("sc21-1.7b");
        QCOMPARE(int(run.results.size()), 1);
        const CalibrationResult& r = run.results[0];
        QVERIFY(r.compared);
        const Report report = evaluate(*r.reference->scenario);
        QCLOSE(r.predicted, 1.5466830067924992e16 / (report.step_time_s * 32) / 1e12);
        QCLOSE(r.error_percent, (r.predicted - 137) / 137 * 100);
    }

    /// The DeepSeek-V3 phase rows are the pacing rank's DualPipePhases of the shipped sample;
    /// with the optimizer they partition the step, as the published rows nearly do (19.90 of
    /// 19.926 s), and each compared row states the interpretation in its note.
    void targetsAreTheIssuesDoneWhen() {
        // Issue 15: SC21 mean |error| <= 5% and max <= 12%; DeepSeek-V3 figures within 15%.
        QCOMPARE(calibrationTarget("sc21").mean_abs_percent, 5.0);
        QCOMPARE(calibrationTarget("sc21").max_abs_percent, 12.0);
        QCOMPARE(calibrationTarget("deepseek-v3").max_abs_percent, 15.0);
        QCOMPARE(calibrationTarget("deepseek-v3-perfect").max_abs_percent, 15.0);
        QVERIFY(calibrationTarget("deepep").mean_abs_percent == 0 &&
                calibrationTarget("deepep").max_abs_percent == 0);
        CalibrationGroupSummary g;
        g.cases = g.compared = 10;
        g.target_mean_abs_percent = 5;
        g.target_max_abs_percent = 12;
        g.mean_abs_error_percent = 4.9;
        g.max_abs_error_percent = 11.9;
        QVERIFY(g.meetsTarget());
        g.max_abs_error_percent = 12.1; // one case outside the max
        QVERIFY(!g.meetsTarget());
        g.max_abs_error_percent = 11.9;
        g.mean_abs_error_percent = 5.1; // the mean outside
        QVERIFY(!g.meetsTarget());
        g.mean_abs_error_percent = 4.9;
        g.compared = 9; // a case not compared never counts as met
        QVERIFY(!g.meetsTarget());
        CalibrationGroupSummary untargeted;
        untargeted.cases = untargeted.compared = 1;
        QVERIFY(!untargeted.hasTarget() && !untargeted.meetsTarget());
        const CalibrationRun run = runCalibration();
        QCOMPARE(run.targetGroups(), 3);
        int met = 0;
        for (const CalibrationGroupSummary& s : run.summary)
            met += s.meetsTarget() ? 1 : 0;
        QCOMPARE(run.targetsMet(), met);
    }

    void deepSeekPhasesPartitionTheStep() {
        const CalibrationRun run = runCalibration();
        double sum_s = 0, step_s = 0;
        int phases = 0;
        for (const CalibrationResult& r : run.results) {
            if (r.reference->group != "deepseek-v3")
                continue;
            QVERIFY(r.compared);
            if (r.reference->id == "deepseek-v3-step") {
                step_s = r.predicted;
                continue;
            }
            sum_s += r.predicted;
            if (r.reference->id != "deepseek-v3-opt") {
                ++phases;
                QVERIFY(r.reference->note.find("interpretation") != std::string::npos);
            }
        }
        QCOMPARE(phases, 5);
        QCLOSE(sum_s, step_s);
        const Report report = evaluate(*findCase("deepseek-v3-1f")->scenario);
        QVERIFY(report.dualpipe_phases.valid);
        QCOMPARE(findCase("deepseek-v3-1f")->metric, CalibrationMetric::dualpipe_forward_s);
        QCLOSE(report.dualpipe_phases.forward_s,
               runCalibration("deepseek-v3-1f").results[0].predicted);
    }

    void samplesAreTheShippedFiles() {
        // The GPT-3 and DeepSeek-V3 cases evaluate the samples users run.
        const CalibrationRun run = runCalibration("deepseek-v3-step");
        QCOMPARE(int(run.results.size()), 1);
        const LoadResult sample =
            loadScenarioFile(std::string(MOE_SAMPLES_DIR) + "/deepseek-v3-2048xh800.yaml");
        QVERIFY(sample.ok());
        QCOMPARE(run.results[0].predicted, evaluate(*sample.scenario).step_time_s);
        const LoadResult gpt3 =
            loadScenarioFile(std::string(MOE_SAMPLES_DIR) + "/dgx-a100-1024-gpt3-175b.yaml");
        QVERIFY(gpt3.ok());
        QVERIFY(*findCase("gpt3-175b")->scenario == *gpt3.scenario);
    }

    void perfectBalanceIsALowerBound() {
        // A perfectly balanced router (no spread, no sampling noise) is the fastest routing
        // there is: every balancing method, and every what-if popularity, gives a step at
        // least as long. Checked on the DeepSeek-V3 sample (EP64, 256 experts, DualPipe) and
        // on the default scenario's model (EP8, 16 experts, 1F1B).
        const CalibrationCase* bound = findCase("deepseek-v3-step-perfect");
        QVERIFY(bound && bound->scenario);
        QCOMPARE(bound->scenario->routing.balancing, BalancingMethod::perfect);
        const LoadResult dgx =
            loadScenarioFile(std::string(MOE_SAMPLES_DIR) + "/dgx-h100-8x8-moe16.yaml");
        QVERIFY(dgx.ok());
        for (Scenario base : {*bound->scenario, *dgx.scenario}) {
            base.routing.balancing = BalancingMethod::perfect;
            const double perfect_s = evaluate(base).step_time_s;
            for (BalancingMethod b : {BalancingMethod::aux_loss, BalancingMethod::aux_free}) {
                for (PopularityModel m : {PopularityModel::published, PopularityModel::uniform,
                                          PopularityModel::zipf}) {
                    Scenario s = base;
                    s.routing.balancing = b;
                    s.routing.model = m;
                    s.routing.zipf_alpha = 0.8;
                    const double step_s = evaluate(s).step_time_s;
                    QVERIFY2(step_s >= perfect_s, qPrintable(QString("%1 %2: %3 < %4")
                                                                 .arg(toString(b), toString(m))
                                                                 .arg(step_s)
                                                                 .arg(perfect_s)));
                }
            }
        }
    }

    void runIsDeterministicAndPrinted() {
        const CalibrationRun a = runCalibration();
        const CalibrationRun b = runCalibration();
        QCOMPARE(a.results.size(), calibrationCases().size());
        QCOMPARE(a.results.size(), b.results.size());
        for (size_t i = 0; i < a.results.size(); ++i) {
            const CalibrationResult& r = a.results[i];
            QCOMPARE(r.predicted, b.results[i].predicted);
            if (r.compared) {
                QVERIFY(std::isfinite(r.predicted) && r.predicted > 0);
                qInfo("%-22s published %9.3f %-8s predicted %9.3f  error %+6.1f%%",
                      r.reference->id.c_str(), r.reference->published, r.reference->unit.c_str(),
                      r.predicted, r.error_percent);
            }
        }
        // sc21, gpt3-175b, deepseek-v3, deepseek-v3-perfect, deepep, blackwell
        QCOMPARE(int(a.summary.size()), 6);
        QCOMPARE(a.summary[0].group, std::string("sc21"));
        QCOMPARE(a.summary[0].compared, 10);
        for (const CalibrationGroupSummary& s : a.summary)
            qInfo("%s: %d of %d compared, mean |error| %.1f%%, max %.1f%%", s.group.c_str(),
                  s.compared, s.cases, s.mean_abs_error_percent, s.max_abs_error_percent);
        QVERIFY(runCalibration("no-such-case").results.empty());
    }
};

QTEST_APPLESS_MAIN(TestCalibration)
#include "test_calibration.moc"
