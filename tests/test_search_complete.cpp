// Complete search: the end-stage split against hand-derived values, and, on spaces small enough
// to enumerate, a brute-force sweep that evaluates every valid layout of TP, CP, PP, vpp, DP, EP,
// expert-TP, rank order, schedule, micro-batch and recompute; the search's winner must be at
// least as fast as the fastest layout the sweep finds that fits in memory.
//
// The sweep uses the search's own rank orders (tp-cp-ep-dp-pp and tp-cp-dp-ep-pp) and its
// end-stage rule for interleaving that does not split evenly (balancedEndStageLayers); every
// other dimension it enumerates independently of the search, including GPipe, expert-TP values
// other than 1 and TP, and TP wider than a node (which the search tries only when nothing
// narrower fits).
#include "moe/evaluate.h"
#include "moe/scenario_io.h"
#include "moe/search.h"
#include "moe/validate.h"
#include "test_support.h"

#include <QtTest>

#include <limits>
#include <optional>
#include <string>
#include <vector>

using namespace moe;

namespace {

struct BruteForce {
    double best_step_s = std::numeric_limits<double>::infinity();
    std::string best;
    int64_t valid = 0;
};

/// `base` with every schedule the sweep tries at its pipeline depth (vpp and end stages set).
std::vector<LayoutSpec> schedulesAt(const LayoutSpec& base, int layers) {
    std::vector<LayoutSpec> out;
    for (const PipelineSchedule s :
         {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b, PipelineSchedule::dualpipe}) {
        LayoutSpec l = base;
        l.schedule = s;
        out.push_back(l);
    }
    for (int vpp = 2; base.pp > 1 && base.pp * vpp <= layers; ++vpp) {
        LayoutSpec l = base;
        l.schedule = PipelineSchedule::interleaved;
        l.vpp = vpp;
        if (layers % (base.pp * vpp) != 0) {
            const auto ends = balancedEndStageLayers(layers, base.pp, vpp);
            if (!ends)
                continue;
            l.first_stage_layers = ends->first;
            l.last_stage_layers = ends->second;
        }
        out.push_back(l);
    }
    return out;
}

/// The fastest valid layout that fits, over the whole space (see the file comment).
BruteForce bruteForce(const Scenario& base) {
    BruteForce out;
    const int gpus = base.cluster.gpuCount();
    const int64_t batch = base.training.global_batch;
    const std::vector<int> eps =
        base.model.isMoe() ? test::divisorsOf(base.model.experts) : std::vector<int>{1};
    const RankOrder orders[] = {*parseRankOrder("tp-cp-ep-dp-pp"),
                                *parseRankOrder("tp-cp-dp-ep-pp")};
    for (const int tp : test::divisorsOf(gpus))
        for (const int cp : test::divisorsOf(gpus / tp))
            for (const int pp : test::divisorsOf(gpus / (tp * cp))) {
                const int dp = gpus / (tp * cp * pp);
                if (batch % dp != 0)
                    continue;
                for (const int ep : eps)
                    for (const int etp : test::divisorsOf(tp))
                        for (const RankOrder& order : orders) {
                            LayoutSpec l;
                            l.tp = tp, l.cp = cp, l.pp = pp, l.dp = dp, l.ep = ep, l.etp = etp;
                            l.order = order;
                            for (const LayoutSpec& sched : schedulesAt(l, base.model.layers))
                                for (const int mb : test::divisorsOf(static_cast<int>(batch / dp)))
                                    for (const Recompute rc :
                                         {Recompute::none, Recompute::selective, Recompute::full}) {
                                        Scenario s = base;
                                        s.layout = sched;
                                        s.training.micro_batch = mb;
                                        s.training.recompute = rc;
                                        if (hasErrors(validateScenario(s)))
                                            continue;
                                        ++out.valid;
                                        const SearchFigures f = figuresOf(evaluate(s));
                                        if (f.fits && f.step_time_s < out.best_step_s) {
                                            out.best_step_s = f.step_time_s;
                                            out.best = layoutSummary(s);
                                        }
                                    }
                        }
            }
    return out;
}

std::optional<Scenario> smallMoe(const std::vector<std::string>& extra = {}) {
    // The default sample cut to 16 GPUs and 10 layers (10 does not split over pp 4 x vpp 2, so
    // the balanced end stages are in the space), with a batch small enough to enumerate.
    std::vector<std::string> overrides = {"cluster.nodes=2",          "model.layers=10",
                                          "training.global_batch=32", "layout.dp=16",
                                          "training.micro_batch=1",   "routing.balancing=aux_free"};
    overrides.insert(overrides.end(), extra.begin(), extra.end());
    const LoadResult r =
        loadScenarioWithOverrides(test::samplePath("dgx-h100-8x8-moe16.yaml"), overrides);
    if (!r.ok()) {
        qWarning("%s", formatAll(r.diagnostics).c_str());
        return std::nullopt;
    }
    return r.scenario;
}

SearchResult completeSearch(const Scenario& s) {
    SearchOptions o;
    o.tie_share = 0;              // rank by step time alone
    o.memory_reserve_share = 0;   // the sweep's "fits" is evaluate()'s
    o.min_tokens_per_cp_rank = 1; // every CP degree
    o.top_n = 1;
    return searchLayouts(s, o);
}

void checkAgainstBruteForce(const Scenario& s) {
    const BruteForce brute = bruteForce(s);
    QVERIFY2(brute.valid > 100, std::to_string(brute.valid).c_str());
    QVERIFY(!brute.best.empty());
    const SearchResult r = completeSearch(s);
    QVERIFY(r.found());
    const SearchCandidate& win = r.ranked.front();
    const std::string why =
        "search: " + layoutSummary(win.scenario) + " " + std::to_string(win.figures.step_time_s) +
        " s; brute force: " + brute.best + " " + std::to_string(brute.best_step_s) + " s";
    QVERIFY2(win.figures.step_time_s <= brute.best_step_s * (1 + 1e-12), why.c_str());
    qInfo("%s (%lld valid layouts swept)", why.c_str(), static_cast<long long>(brute.valid));
}

} // namespace

class TestSearchComplete : public QObject {
    Q_OBJECT
private slots:
    /// Hand-derived: m = ceil(layers / pp) layers on each middle stage, the ends share the rest,
    /// the last the lighter, each end at least vpp (else m steps down).
    void balancedEndStages() {
        using Ends = std::optional<std::pair<int, int>>;
        // 61 over pp 16: m = 4, ends 61 - 14*4 = 5 -> 3 + 2 (DeepSeek-V3's published split).
        QCOMPARE(balancedEndStageLayers(61, 16, 1), (Ends{{3, 2}}));
        // pp 8 vpp 2: m = 8, ends 61 - 6*8 = 13 -> 7 + 6.
        QCOMPARE(balancedEndStageLayers(61, 8, 2), (Ends{{7, 6}}));
        // pp 16 vpp 3: m = 4 leaves a last stage of 2 < 3; m = 3: ends 61 - 42 = 19 -> 10 + 9.
        QCOMPARE(balancedEndStageLayers(61, 16, 3), (Ends{{10, 9}}));
        // pp 2: the two stages are the ends, 24 -> 12 + 12 (over 10 virtual stages each).
        QCOMPARE(balancedEndStageLayers(24, 2, 10), (Ends{{12, 12}}));
        // 10 over pp 4 vpp 2: m = 3, ends 10 - 6 = 4 -> 2 + 2.
        QCOMPARE(balancedEndStageLayers(10, 4, 2), (Ends{{2, 2}}));
        // Even splits and one-stage pipelines need no end counts.
        QCOMPARE(balancedEndStageLayers(64, 8, 2), Ends{});
        QCOMPARE(balancedEndStageLayers(61, 1, 1), Ends{});
        // 5 over pp 4 vpp 2: m = 2 leaves ends of 1 (< 2 each), and m cannot go below vpp.
        QCOMPARE(balancedEndStageLayers(5, 4, 2), Ends{});
    }

    /// The search's split is one the scenario accepts and the model builds as stated.
    void balancedEndStagesValidate() {
        auto s =
            smallMoe({"layout.pp=4", "layout.dp=4", "layout.ep=4", "layout.schedule=interleaved",
                      "layout.vpp=2", "layout.first_stage_layers=2", "layout.last_stage_layers=2"});
        QVERIFY(s);
        QVERIFY(!hasErrors(validateScenario(*s)));
    }

    /// HBM cut until pipelines, interleaving (even and with balanced end stages), TP, CP and
    /// recompute win; 4-GPU nodes put TP 8 and 16 across nodes. Searched winners today: MoE 40 GB
    /// CP2 PP2 interleaved x5, MoE 24 GB TP4 CP2 PP2, dense 10 GB TP2 CP2 PP4 interleaved x2
    /// with 2/2 end stages, dense 7 GB TP4 PP4 the same with full recompute.
    void searchMatchesBruteForce_data() {
        QTest::addColumn<QStringList>("overrides");
        const QStringList dense = {
            "model.experts=0", "model.top_k=0",           "layout.ep=1",
            "cluster.nodes=4", "cluster.gpus_per_node=4", "cluster.scale_out.nics_per_node=4"};
        QTest::newRow("moe 80 GB") << QStringList{};
        QTest::newRow("moe 40 GB") << QStringList{"cluster.gpu_overrides.hbm_gb=40"};
        QTest::newRow("moe 24 GB") << QStringList{"cluster.gpu_overrides.hbm_gb=24"};
        QTest::newRow("dense 80 GB") << dense;
        QTest::newRow("dense 16 GB") << dense + QStringList{"cluster.gpu_overrides.hbm_gb=16"};
        QTest::newRow("dense 10 GB") << dense + QStringList{"cluster.gpu_overrides.hbm_gb=10"};
        QTest::newRow("dense 7 GB") << dense + QStringList{"cluster.gpu_overrides.hbm_gb=7"};
    }
    void searchMatchesBruteForce() {
        QFETCH(QStringList, overrides);
        std::vector<std::string> extra;
        for (const QString& o : overrides)
            extra.push_back(o.toStdString());
        const auto s = smallMoe(extra);
        QVERIFY(s);
        checkAgainstBruteForce(*s);
    }
};

QTEST_GUILESS_MAIN(TestSearchComplete)
#include "test_search_complete.moc"
