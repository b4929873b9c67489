// The design in words (moe/design_summary.h): the layout paragraph of the report's first page,
// the settings that differ between two designs, and the verdict against a baseline. Expected
// texts are worked out by hand from the rank strides (order tp-cp-ep-dp-pp, GPUs numbered
// node-major, 8 per node) and the formatting rules of format.h.
#include "moe/design_summary.h"
#include "moe/topology.h"
#include "test_support.h"

#include <QtTest>

using namespace moe;

namespace {

/// 8 nodes x 8 H100 (one node per rack), 16 experts top-2, TP1 CP1 PP1 DP64 EP8 ETP1.
Scenario textbook() {
    Scenario s;
    s.name = "textbook";
    s.cluster = test::h100Nodes(8);
    s.model.layers = 4;
    s.model.dense_layers = 1;
    s.model.experts = 16;
    s.model.top_k = 2;
    s.model.expert_ffn_hidden = 1024;
    s.layout.dp = 64;
    s.layout.ep = 8;
    s.layout.order = {Dim::tp, Dim::cp, Dim::ep, Dim::dp, Dim::pp};
    s.training.global_batch = 512;
    return s;
}

std::string words(const Scenario& s) {
    return layoutInWords(s, placeLayout(s));
}

} // namespace

class TestDesignSummary : public QObject {
    Q_OBJECT

private slots:
    void layoutInWordsTextbook() {
        // 64 GPUs = 8 nodes x 8; nodes_per_rack defaults to 1, so 8 racks.
        // TP 1: said as a degree only.
        // EP 8: expert grid etp (stride 1), ep (stride 1): GPUs 0-7 = node 0, one domain:
        //   "inside nodes", NVLink.
        // PP 1: degree only.
        // DP 64: dense grid tp, cp, dp: GPUs 0-63, 8 nodes with 8 each: "across 8 nodes", both
        //   NVLink and InfiniBand.
        // expert-DP = 64 / 8 = 8: stride etp x ep = 8: GPUs 0, 8, ..., 56, one per node:
        //   "across nodes", InfiniBand only.
        // 16 experts / EP 8 = 2 per GPU.
        QCOMPARE(words(textbook()),
                 std::string("64 H100 SXM GPUs in 8 nodes of 8 (8 racks); TP 1, EP 8 inside nodes "
                             "over NVLink, PP 1, DP 64 across 8 nodes over NVLink + InfiniBand, "
                             "expert-DP 8 across nodes over InfiniBand; 16 experts over EP 8 = 2 "
                             "per GPU, top-2."));
    }

    void layoutInWordsWithPipeline() {
        Scenario s = textbook();
        s.cluster.nodes_per_rack = 4; // 2 racks
        s.layout.tp = 2;
        s.layout.pp = 2;
        s.layout.dp = 16;
        s.layout.schedule = PipelineSchedule::dualpipe;
        // TP 2: GPUs {0, 1}, one node: NVLink.
        // EP 8: stride 1 in the expert grid: GPUs 0-7, one node: NVLink.
        // PP 2: stride tp x cp x dp = 32: GPUs {0, 32} = nodes 0 and 4, one per node:
        //   "across nodes", InfiniBand.
        // DP 16: stride tp = 2 inside the first 32 GPUs: GPUs 0, 2, ..., 30 = nodes 0-3, 4 each:
        //   "across 4 nodes", NVLink + InfiniBand.
        // expert-DP = 2 x 16 / 8 = 4: stride 8: GPUs 0, 8, 16, 24, one per node: InfiniBand.
        QCOMPARE(words(s),
                 std::string("64 H100 SXM GPUs in 8 nodes of 8 (2 racks); TP 2 inside nodes over "
                             "NVLink, EP 8 inside nodes over NVLink, PP 2 with DualPipe across "
                             "nodes over InfiniBand, DP 16 across 4 nodes over NVLink + "
                             "InfiniBand, expert-DP 4 across nodes over InfiniBand; 16 experts "
                             "over EP 8 = 2 per GPU, top-2."));
    }

    void layoutInWordsUnplaceable() {
        Scenario s = textbook();
        s.layout.dp = 4; // covers 4 of 64 GPUs
        QCOMPARE(words(s), std::string("64 H100 SXM GPUs in 8 nodes of 8 (8 racks); the layout "
                                       "does not cover these GPUs, so it cannot be placed."));
    }

    void settingChangesLayoutFirst() {
        const Scenario a = textbook();
        Scenario b = a;
        b.name = "other"; // not a setting
        b.description = "anything";
        b.training.global_batch = 1024; // training comes before layout in the file
        b.layout.pp = 2;
        b.layout.dp = 32;
        const std::vector<SettingChange> changes = settingChanges(a, b);
        QCOMPARE(changes.size(), size_t(3));
        QCOMPARE(changes[0].path, std::string("layout.pp"));
        QCOMPARE(changes[0].label, std::string("PP"));
        QCOMPARE(changes[1].label, std::string("DP"));
        QCOMPARE(changes[2].label, std::string("global_batch"));
        QCOMPARE(describeChanges(changes, ChangeStyle::arrow),
                 std::string("PP 1 \u2192 2, DP 64 \u2192 32, global_batch 512 \u2192 1024"));
        QCOMPARE(describeChanges(changes, ChangeStyle::current, 2),
                 std::string("PP=2, DP=32, +1 more"));
        QCOMPARE(describeChanges(changes, ChangeStyle::baseline, 1), std::string("PP=1, +2 more"));
        QCOMPARE(describeChanges(settingChanges(a, a), ChangeStyle::arrow),
                 std::string("same settings"));
        // A long value (an expert placement list) is named, not quoted.
        Scenario c = a;
        c.layout.expert_placement = {{-1, 0, {1, 2}}, {-1, 3, {4, 5, 6}}};
        const std::vector<SettingChange> placed = settingChanges(a, c);
        QCOMPARE(placed.size(), size_t(1));
        QVERIFY2(placed[0].current.size() > 20, placed[0].current.c_str());
        QCOMPARE(describeChanges(placed, ChangeStyle::current),
                 std::string("expert_placement changed"));
    }

    void verdictNamesTheItemsThatMoved() {
        Report base, cur;
        // Baseline: 10 s = attention 7 + all-to-all 2 + bubble 1.
        base.step_time_s = 10;
        base.step[StepItem::attention] = 7;
        base.step[StepItem::all_to_all] = 2;
        base.step[StepItem::bubble] = 1;
        // Current: 8.8 s = 6 + 1.6 + 1.2: -1.2 s = 12.0% faster; attention -1 s, all-to-all
        // -0.4 s, bubble +0.2 s, largest move first.
        cur.step_time_s = 8.8;
        cur.step[StepItem::attention] = 6;
        cur.step[StepItem::all_to_all] = 1.6;
        cur.step[StepItem::bubble] = 1.2;
        const BaselineVerdict v = verdictAgainstBaseline(base, cur);
        QCOMPARE(v.top.size(), size_t(3));
        QCOMPARE(v.top[0].item, StepItem::attention);
        QCOMPARE(v.top[1].item, StepItem::all_to_all);
        QCOMPARE(v.top[2].item, StepItem::bubble);
        QVERIFY(std::abs(v.relative + 0.12) < 1e-12);
        Scenario a = textbook();
        Scenario b = a;
        b.layout.ep = 16;
        QCOMPARE(describeVerdict(v, "ep8", settingChanges(a, b)),
                 std::string("12.0% faster than baseline 'ep8' (EP 8 \u2192 16): attention \u2212"
                             "1.00 s, all-to-all (exposed) \u2212400 ms, pipeline bubble +200 ms"));
        // Two items only; slower the other way round.
        const BaselineVerdict back = verdictAgainstBaseline(cur, base, 2);
        QCOMPARE(back.top.size(), size_t(2));
        // +1.2 / 8.8 = 13.64% -> "13.6%".
        QCOMPARE(describeVerdict(back, "fast", {}),
                 std::string("13.6% slower than baseline 'fast': attention +1.00 s, all-to-all "
                             "(exposed) +400 ms"));
        QCOMPARE(describeVerdict(verdictAgainstBaseline(base, base), "same", {}),
                 std::string("same step time as baseline 'same'"));
    }

    void scheduleNames() {
        QCOMPARE(std::string(displayName(PipelineSchedule::one_f_one_b)), std::string("1F1B"));
        QCOMPARE(std::string(displayName(PipelineSchedule::dualpipe)), std::string("DualPipe"));
    }
};

QTEST_GUILESS_MAIN(TestDesignSummary)
#include "test_design_summary.moc"
