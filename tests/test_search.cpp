// Layout search: the winners the issue asks for on the two 64-GPU samples, memory forcing model
// parallelism while TP and EP stay inside nodes, every reported layout re-evaluating to the same
// figures, counts that add up (hand-counted on a cluster with no valid layout), pins, and the
// same result whatever the thread count.
//
// The samples are edited by others (micro-batch, routing), so every field a test depends on is
// set here explicitly.
#include "moe/placement.h"
#include "moe/scenario_io.h"
#include "moe/search.h"
#include "moe/step_costs.h"
#include "moe/topology.h"
#include "moe/validate.h"
#include "test_support.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

using namespace moe;

namespace {

std::optional<Scenario> loadSample(const std::string& name,
                                   const std::vector<std::string>& overrides = {}) {
    const LoadResult r = loadScenarioWithOverrides(test::samplePath(name), overrides);
    if (!r.ok()) {
        qWarning("%s", formatAll(r.diagnostics).c_str());
        return std::nullopt;
    }
    return r.scenario;
}

SearchResult search(const Scenario& s, std::vector<std::string> pins = {}, int top_n = 10,
                    int threads = 0) {
    SearchOptions o;
    o.pins = std::move(pins);
    o.top_n = top_n;
    o.threads = threads;
    return searchLayouts(s, o);
}

GroupSpan spanOf(const Scenario& s, GroupKind k) {
    return placeLayout(s).spanOf(k);
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const std::string& l : lines)
        out += "\n  " + l;
    return out;
}

/// The first explanation line that starts with `prefix` and contains every one of `words`.
std::string lineWith(const std::vector<std::string>& lines, const std::string& prefix,
                     std::initializer_list<const char*> words) {
    for (const std::string& line : lines) {
        if (line.rfind(prefix, 0) != 0)
            continue;
        bool all = true;
        for (const char* w : words)
            all = all && line.find(w) != std::string::npos;
        if (all)
            return line;
    }
    return {};
}

int64_t rejectedTotal(const SearchResult& r) {
    int64_t total = 0;
    for (const RejectionCount& c : r.rejected)
        total += c.count;
    return total;
}

/// The fields that decide the expert layout in the issue's textbook cases, held fixed so the
/// search answers only "where do EP and expert-DP go": experts evenly loaded (the textbook
/// premise), one-sequence micro-batches and no pipeline, as the samples were written.
const std::vector<std::string> kTextbookOverrides = {"routing.balance=1.0",
                                                     "training.micro_batch=1"};
const std::vector<std::string> kTextbookPins = {"layout.pp=1", "training.micro_batch=1"};

/// Every figure, count, example and line two results show (not their timings).
void compareResults(const SearchResult& a, const SearchResult& b) {
    QCOMPARE(a.candidates, b.candidates);
    QCOMPARE(a.evaluated, b.evaluated);
    for (int i = 0; i < kRejectReasonCount; ++i) {
        QCOMPARE(a.rejected[static_cast<size_t>(i)].count,
                 b.rejected[static_cast<size_t>(i)].count);
        QCOMPARE(a.rejected[static_cast<size_t>(i)].example,
                 b.rejected[static_cast<size_t>(i)].example);
    }
    auto same = [](const std::vector<SearchCandidate>& x, const std::vector<SearchCandidate>& y) {
        if (x.size() != y.size())
            return false;
        for (size_t i = 0; i < x.size(); ++i)
            if (!(x[i].scenario == y[i].scenario) || x[i].rank != y[i].rank ||
                x[i].figures.step_time_s != y[i].figures.step_time_s ||
                x[i].figures.margin_bytes != y[i].figures.margin_bytes)
                return false;
        return true;
    };
    QVERIFY(same(a.ranked, b.ranked));
    QVERIFY(same(a.pareto, b.pareto));
    QCOMPARE(a.pareto_total, b.pareto_total);
    QCOMPARE(a.input.has_value(), b.input.has_value());
    if (a.input)
        QCOMPARE(a.input->rank, b.input->rank);
    QCOMPARE(a.explanation, b.explanation);
}

/// The search split into `count` parts and merged.
SearchResult sharded(const Scenario& s, const SearchOptions& o, int count,
                     std::vector<SearchPart>* parts_out = nullptr) {
    std::vector<SearchPart> parts;
    for (int i = 0; i < count; ++i)
        parts.push_back(searchPart(s, o, Shard{i, count}));
    if (parts_out)
        *parts_out = parts;
    return mergeSearchParts(s, o, parts);
}

} // namespace

class TestSearch : public QObject {
    Q_OBJECT

private slots:
    void defaultSampleTextbookWinner() {
        const auto s = loadSample("dgx-h100-8x8-moe16.yaml", kTextbookOverrides);
        QVERIFY(s);
        const SearchResult r = search(*s, kTextbookPins);
        QVERIFY(r.ok());
        QVERIFY(r.found());
        const Scenario& win = r.ranked.front().scenario;
        const std::string why = joined(r.explanation);
        QVERIFY2(win.layout.tp == 1 && win.layout.ep == 8 && win.layout.expertDp() == 8,
                 (layoutSummary(win) + why).c_str());
        // EP=8 fills one 8-GPU node; each expert's 8 replicas sit one per node.
        const GroupSpan ep = spanOf(win, GroupKind::ep);
        QCOMPARE(ep.domains, 1);
        QCOMPARE(ep.gpus, 8);
        const GroupSpan edp = spanOf(win, GroupKind::edp);
        QCOMPARE(edp.nodes, 8);
        QCOMPARE(edp.max_gpus_per_domain, 1);
        // The explanation names NVLink for the all-to-all and InfiniBand for the gradient sync.
        QVERIFY2(!lineWith(r.explanation, "MoE all-to-all", {"EP=8", "NVLink only"}).empty(),
                 why.c_str());
        QVERIFY2(!lineWith(r.explanation, "expert gradient sync", {"InfiniBand only"}).empty(),
                 why.c_str());
        QVERIFY2(!lineWith(r.explanation, "Layout: EP=8 inside nodes",
                           {"all-to-all rides NVLink", "InfiniBand"})
                      .empty(),
                 why.c_str());
        // The best layout with another EP puts it across two nodes and loses on InfiniBand
        // all-to-all time; the line is the runner-up's or "best with another EP", and its
        // percentage is the figures' own.
        const SearchCandidate* other = nullptr;
        for (const SearchCandidate& c : r.ranked)
            if (!other && c.scenario.layout.ep != 8)
                other = &c;
        QVERIFY(other);
        QCOMPARE(other->scenario.layout.ep, 16);
        QCOMPARE(spanOf(other->scenario, GroupKind::ep).nodes, 2);
        const std::string tag = "(#" + std::to_string(other->rank) + "): EP=16 across 2 nodes";
        std::string line;
        for (const std::string& l : r.explanation)
            if (l.find(tag) != std::string::npos &&
                l.find("all-to-all time on InfiniBand") != std::string::npos)
                line = l;
        QVERIFY2(!line.empty(), why.c_str());
        const double loss = other->figures.step_time_s / r.ranked[0].figures.step_time_s - 1.0;
        const std::string percent =
            (loss >= 0 ? "+" : "") + std::to_string(std::lround(loss * 100)) + "% step time";
        QVERIFY2(line.find(percent) != std::string::npos, (line + " / " + percent).c_str());
    }

    /// The default with a loss-free balanced router (free micro-batch, recompute, schedule and
    /// pipeline): the full search lands on the textbook expert layout. (As shipped, with the
    /// aux-loss router's published spread, the hot expert's rank decides instead:
    /// samplesAsShippedImbalanceDecides.)
    void defaultAsShippedTextbookWinner() {
        const auto s = loadSample("dgx-h100-8x8-moe16.yaml", {"routing.balancing=aux_free"});
        QVERIFY(s);
        const SearchResult r = search(*s, {});
        QVERIFY(r.found());
        const Scenario& win = r.ranked.front().scenario;
        // The textbook placement: no TP, EP=8 filling one node, expert-DP one GPU per node.
        // Since the search tries every interleaving depth, a 2-stage pipeline (x10, 12 layers a
        // stage) wins by 0.9% over the file's PP=1 (DP=64, expert-DP=8), which ranks 17th.
        QVERIFY2(win.layout.tp == 1 && win.layout.ep == 8,
                 (layoutSummary(win) + joined(r.explanation)).c_str());
        QCOMPARE(spanOf(win, GroupKind::ep).domains, 1);
        QCOMPARE(spanOf(win, GroupKind::edp).nodes, win.layout.expertDp());
        QCOMPARE(spanOf(win, GroupKind::edp).max_gpus_per_domain, 1);
    }

    /// The file as shipped, nothing pinned: EP=16 fills the 16-GPU node, expert-DP=4 across the
    /// 4 nodes, and the explanation says what EP=8 would cost (as the runner-up or its own line).
    void sixteenGpuNodesAsShippedTextbookWinner() {
        const auto s = loadSample("16gpu-nodes-4x16-moe16.yaml");
        QVERIFY(s);
        const SearchResult r = search(*s, {});
        QVERIFY(r.found());
        const Scenario& win = r.ranked.front().scenario;
        const std::string why = layoutSummary(win) + joined(r.explanation);
        QVERIFY2(win.layout.ep == 16 && win.layout.expertDp() == 4 && win.layout.tp == 1,
                 why.c_str());
        QCOMPARE(spanOf(win, GroupKind::ep).domains, 1);
        QCOMPARE(spanOf(win, GroupKind::ep).gpus, 16);
        QCOMPARE(spanOf(win, GroupKind::edp).nodes, 4);
        QCOMPARE(spanOf(win, GroupKind::edp).max_gpus_per_domain, 1);
        QVERIFY2(!lineWith(r.explanation, "MoE all-to-all", {"EP=16", "NVLink only"}).empty(),
                 why.c_str());
        QVERIFY2(!lineWith(r.explanation, "expert gradient sync", {"InfiniBand"}).empty(),
                 why.c_str());
        // What EP=8 would cost: its own line, or the runner-up's when the runner-up is the best
        // EP=8 layout (with GEMMs priced by shape, EP=8 with selective recompute is #2 at +0%).
        QVERIFY2(!lineWith(r.explanation, "Best with another EP", {"EP=8"}).empty() ||
                     !lineWith(r.explanation, "Runner-up", {"EP=8"}).empty(),
                 why.c_str());
    }

    /// Memory reserve: no recommended layout uses more than 95% of HBM, and the reserve is what
    /// rejects the fastest EP=8 layout of the 16-GPU sample (micro-batch 2 without recompute,
    /// 79.8 of 80 GB); with the reserve off it comes back.
    void memoryReserveKeepsRecommendationsOutOfTheLastFivePercent() {
        const auto s = loadSample("16gpu-nodes-4x16-moe16.yaml");
        QVERIFY(s);
        SearchOptions o;
        o.top_n = 1'000'000;
        const SearchResult with = searchLayouts(*s, o);
        QVERIFY(with.found());
        for (const SearchCandidate& c : with.ranked)
            QVERIFY2(c.figures.memory_bytes <= 0.95 * c.figures.hbm_bytes + 1.0,
                     layoutSummary(c.scenario).c_str());
        o.memory_reserve_share = 0.0;
        const SearchResult without = searchLayouts(*s, o);
        QVERIFY(without.evaluated > with.evaluated);
        const SearchFigures& full = without.ranked.front().figures;
        QVERIFY(full.memory_bytes > 0.95 * full.hbm_bytes);
        QVERIFY(full.step_time_s < with.ranked.front().figures.step_time_s);
        QVERIFY(with.rejectedCount(RejectReason::memory) >
                without.rejectedCount(RejectReason::memory));
    }

    void sixteenGpuNodesTextbookWinner() {
        const auto s = loadSample("16gpu-nodes-4x16-moe16.yaml", kTextbookOverrides);
        QVERIFY(s);
        const SearchResult r = search(*s, kTextbookPins);
        QVERIFY(r.found());
        const Scenario& win = r.ranked.front().scenario;
        QVERIFY2(win.layout.ep == 16 && win.layout.expertDp() == 4 && win.layout.tp == 1,
                 (layoutSummary(win) + joined(r.explanation)).c_str());
        const GroupSpan ep = spanOf(win, GroupKind::ep);
        QCOMPARE(ep.domains, 1);
        QCOMPARE(ep.gpus, 16);
        QCOMPARE(spanOf(win, GroupKind::edp).nodes, 4);
        QVERIFY(!lineWith(r.explanation, "MoE all-to-all", {"EP=16", "NVLink only"}).empty());
    }

    /// Routing skew decides between EP=8 and EP=16: with one expert per GPU the hot expert
    /// lands on one GPU. Where the textbook layout loses, it must have been evaluated and must
    /// lose by less than its extra imbalance wait: that figure, not a search defect, decides.
    void samplesAsShippedImbalanceDecides_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("textbook_ep");
        QTest::addColumn<QStringList>("overrides");
        QTest::addColumn<bool>("textbook_loses");
        // The default's aux-loss router (hottest expert at 1.52x the mean) puts the hot expert
        // on one of EP=8's ranks: layouts with more experts per GPU win by ~3%.
        QTest::newRow("dgx-h100-8x8") << "dgx-h100-8x8-moe16.yaml" << 8 << QStringList{} << true;
        QTest::newRow("16gpu-nodes")
            << "16gpu-nodes-4x16-moe16.yaml" << 16 << QStringList{} << false;
        // The default's routing (an aux-loss router, hottest expert at 1.52x the mean) on
        // 16-GPU nodes: one expert per GPU turns the hot expert into a straggler and a layout
        // with several experts per GPU wins (the sample's header says so).
        QTest::newRow("16gpu-nodes, default routing")
            << "16gpu-nodes-4x16-moe16.yaml" << 16 << QStringList{"routing.balancing=aux_loss"}
            << true;
    }
    void samplesAsShippedImbalanceDecides() {
        QFETCH(QString, file);
        QFETCH(int, textbook_ep);
        QFETCH(QStringList, overrides);
        QFETCH(bool, textbook_loses);
        std::vector<std::string> override_list;
        for (const QString& o : overrides)
            override_list.push_back(o.toStdString());
        const auto s = loadSample(file.toStdString(), override_list);
        QVERIFY(s);
        const SearchResult r = search(*s, {}, 1'000'000);
        QVERIFY(r.found());
        const SearchCandidate& win = r.ranked.front();
        const LayoutSpec& wl = win.scenario.layout;
        const bool textbook_wins =
            wl.ep == textbook_ep && wl.tp == 1 && spanOf(win.scenario, GroupKind::ep).domains == 1;
        QCOMPARE(!textbook_wins, textbook_loses);
        if (textbook_wins)
            return;
        const SearchCandidate* textbook = nullptr;
        for (const SearchCandidate& c : r.ranked) {
            const LayoutSpec& l = c.scenario.layout;
            if (l.ep == textbook_ep && l.tp == 1 && l.pp == 1 && l.cp == 1 &&
                spanOf(c.scenario, GroupKind::ep).domains == 1) {
                textbook = &c;
                break;
            }
        }
        QVERIFY2(textbook, "the textbook layout was never evaluated");
        const double gap = textbook->figures.step_time_s - win.figures.step_time_s;
        const double extra_wait = textbook->figures.step[StepItem::imbalance_wait] -
                                  win.figures.step[StepItem::imbalance_wait];
        qInfo("%s: winner %s; textbook #%d loses %.0f ms, %.0f ms of it imbalance wait",
              qPrintable(file), layoutSummary(win.scenario).c_str(), textbook->rank, gap * 1e3,
              extra_wait * 1e3);
        QVERIFY2(gap > 0 && extra_wait > gap, joined(r.explanation).c_str());
    }

    /// Less HBM: the winner adds TP or PP, keeps TP inside a node, and never puts TP or EP
    /// across nodes while an in-node alternative within 2% fits.
    void tightMemoryAddsModelParallelismInsideNodes_data() {
        QTest::addColumn<QStringList>("pins");
        QTest::newRow("free") << QStringList{};
        QTest::newRow("no pipeline") << QStringList{"layout.pp=1"};
    }
    void tightMemoryAddsModelParallelismInsideNodes() {
        QFETCH(QStringList, pins);
        const auto s = loadSample("dgx-h100-8x8-moe16.yaml", {"cluster.gpu_overrides.hbm_gb=48"});
        QVERIFY(s);
        std::vector<std::string> pin_list;
        for (const QString& p : pins)
            pin_list.push_back(p.toStdString());
        const SearchResult r = search(*s, pin_list, 1'000'000);
        QVERIFY(r.found());
        const Scenario& win = r.ranked.front().scenario;
        const std::string why = layoutSummary(win) + joined(r.explanation);
        QVERIFY2(win.layout.tp > 1 || win.layout.pp > 1, why.c_str());
        if (pins.contains("layout.pp=1"))
            QVERIFY2(win.layout.tp > 1, why.c_str());
        QCOMPARE(spanOf(win, GroupKind::tp).domains, 1);
        QVERIFY2(!lineWith(r.explanation, "Memory: ",
                           {"does not fit", "GB > 45.6 GB (48.0 GB of HBM less the 5% reserve)"})
                      .empty(),
                 why.c_str());
        // The cheapest TP=1 / PP=1 layout really does not fit (the memory line is true).
        QVERIFY(r.rejectedCount(RejectReason::memory) > 0);
        if (spanOf(win, GroupKind::ep).domains > 1) {
            for (const SearchCandidate& c : r.ranked) {
                if (spanOf(c.scenario, GroupKind::ep).domains == 1)
                    QVERIFY2(c.figures.step_time_s > 1.02 * r.ranked[0].figures.step_time_s,
                             layoutSummary(c.scenario).c_str());
            }
        }
        for (const SearchCandidate& c : r.ranked)
            QCOMPARE(spanOf(c.scenario, GroupKind::tp).domains, 1);
        // Narrower layouts fit, so the wide ones were counted, not searched.
        QVERIFY(r.rejectedCount(RejectReason::wide_tp) > 0);
    }

    /// Every ranked and Pareto layout evaluates to exactly the figures the search reported; the
    /// counts add up; the Pareto front holds the winner and nothing it lists is dominated.
    void reportedLayoutsReEvaluate() {
        const auto s = loadSample("dgx-h100-8x8-moe16.yaml", {"cluster.gpu_overrides.hbm_gb=64"});
        QVERIFY(s);
        const SearchResult r = search(*s, {}, 1'000'000);
        QVERIFY(r.found());
        QCOMPARE(r.evaluated, static_cast<int64_t>(r.ranked.size()));
        QCOMPARE(rejectedTotal(r) + r.evaluated, r.candidates);
        auto same = [](const SearchCandidate& c) {
            const SearchFigures f = figuresOf(evaluate(c.scenario));
            return f.step_time_s == c.figures.step_time_s &&
                   f.tokens_per_s == c.figures.tokens_per_s &&
                   f.memory_bytes == c.figures.memory_bytes &&
                   f.margin_bytes == c.figures.margin_bytes &&
                   f.cross_node_bytes == c.figures.cross_node_bytes &&
                   f.step.seconds == c.figures.step.seconds && c.figures.fits &&
                   !hasErrors(validateScenario(c.scenario));
        };
        for (size_t i = 0; i < r.ranked.size(); i += 1 + r.ranked.size() / 50)
            QVERIFY2(same(r.ranked[i]), layoutSummary(r.ranked[i].scenario).c_str());
        for (const SearchCandidate& c : r.pareto)
            QVERIFY2(same(c), layoutSummary(c.scenario).c_str());
        // Ranks 1..n by step time, except that the layouts tied with the fastest (within
        // SearchOptions::tie_share) go first in order of model parallelism (TP*CP*PP).
        double fastest_s = r.ranked.front().figures.step_time_s;
        for (const SearchCandidate& c : r.ranked)
            fastest_s = std::min(fastest_s, c.figures.step_time_s);
        const double tied_s = fastest_s * (1 + SearchOptions{}.tie_share);
        const auto modelParallel = [](const SearchCandidate& c) {
            return c.scenario.layout.tp * c.scenario.layout.cp * c.scenario.layout.pp;
        };
        for (size_t i = 0; i < r.ranked.size(); ++i) {
            QCOMPARE(r.ranked[i].rank, static_cast<int>(i) + 1);
            if (i == 0)
                continue;
            const SearchCandidate& a = r.ranked[i - 1];
            const SearchCandidate& b = r.ranked[i];
            if (b.figures.step_time_s <= tied_s) {
                QVERIFY(a.figures.step_time_s <= tied_s);
                QVERIFY(modelParallel(a) <= modelParallel(b));
            } else {
                QVERIFY(a.figures.step_time_s <= b.figures.step_time_s);
            }
        }
        QVERIFY(!r.pareto.empty());
        QCOMPARE(r.pareto.front().rank, 1);
        QVERIFY(r.pareto_total >= static_cast<int64_t>(r.pareto.size()));
        for (const SearchCandidate& p : r.pareto) {
            for (const SearchCandidate& c : r.ranked) {
                const SearchFigures& a = c.figures;
                const SearchFigures& b = p.figures;
                const bool dominates =
                    a.step_time_s <= b.step_time_s && a.margin_bytes >= b.margin_bytes &&
                    a.cross_node_bytes <= b.cross_node_bytes &&
                    (a.step_time_s < b.step_time_s || a.margin_bytes > b.margin_bytes ||
                     a.cross_node_bytes < b.cross_node_bytes);
                QVERIFY2(!dominates,
                         (layoutSummary(c.scenario) + " dominates " + layoutSummary(p.scenario))
                             .c_str());
            }
        }
    }

    /// The search skips heavier recomputation when a lighter one fits, because it is never
    /// faster; check that on the leading layouts against evaluate().
    void skippedRecomputeIsNeverFaster() {
        const auto s = loadSample("dgx-h100-8x8-moe16.yaml");
        QVERIFY(s);
        const SearchResult r = search(*s, {"layout.pp=1"}, 5);
        QVERIFY(r.found());
        QVERIFY(r.rejectedCount(RejectReason::recompute) > 0);
        for (const SearchCandidate& c : r.ranked) {
            for (const Recompute heavier : {Recompute::selective, Recompute::full}) {
                if (heavier <= c.scenario.training.recompute)
                    continue;
                Scenario v = c.scenario;
                v.training.recompute = heavier;
                QVERIFY2(evaluate(v).step_time_s >= c.figures.step_time_s,
                         layoutSummary(v).c_str());
            }
        }
    }

    void sameResultWhateverTheThreadCount() {
        const auto s = loadSample("dgx-h100-8x8-moe16.yaml");
        QVERIFY(s);
        const std::vector<std::string> pins = {"layout.pp=2"};
        const SearchResult one = search(*s, pins, 50, 1);
        const SearchResult two = search(*s, pins, 50, 2);
        QCOMPARE(one.threads, 1);
        QCOMPARE(two.threads, 2);
        QCOMPARE(one.candidates, two.candidates);
        QCOMPARE(one.evaluated, two.evaluated);
        QCOMPARE(one.ranked.size(), two.ranked.size());
        for (size_t i = 0; i < one.ranked.size(); ++i) {
            QVERIFY(one.ranked[i].scenario == two.ranked[i].scenario);
            QVERIFY(one.ranked[i].figures.step_time_s == two.ranked[i].figures.step_time_s);
        }
        for (int i = 0; i < kRejectReasonCount; ++i) {
            QCOMPARE(one.rejected[static_cast<size_t>(i)].count,
                     two.rejected[static_cast<size_t>(i)].count);
            QCOMPARE(one.rejected[static_cast<size_t>(i)].example,
                     two.rejected[static_cast<size_t>(i)].example);
        }
        QCOMPARE(one.explanation, two.explanation);
        QVERIFY(one.evaluated_per_s > 0 && one.candidates_per_s >= one.evaluated_per_s);
    }

    /// Issue 21: pruning by the compute floor (SearchOptions::prune) skips layouts, yet every
    /// figure the result reports is the unpruned search's: the ranking, the scenario's own
    /// rank, the explanation (its runner-up and best with another EP, TP and PP) and the Pareto
    /// front up to the bound. The pruned layouts are counted, and each layout's floor is the
    /// built model's (stepComputeFloor_s), never above its step.
    void pruningByBoundKeepsEveryReportedFigure_data() {
        QTest::addColumn<QString>("sample");
        QTest::addColumn<int>("top");
        QTest::addColumn<QStringList>("pins");
        QTest::newRow("64 H100, MoE, top 10") << "dgx-h100-8x8-moe16.yaml" << 10 << QStringList{};
        QTest::newRow("64 H100, MoE, top 1") << "dgx-h100-8x8-moe16.yaml" << 1 << QStringList{};
        QTest::newRow("64 H100, dense 70B") << "dense-70b-64xh100.yaml" << 10 << QStringList{};
        QTest::newRow("2048 H800, DeepSeek-V3, PP 8 or 16")
            << "deepseek-v3-2048xh800.yaml" << 10
            << QStringList{"layout.pp=8", "layout.pp=16", "training.micro_batch=1"};
    }
    void pruningByBoundKeepsEveryReportedFigure() {
        QFETCH(QString, sample);
        QFETCH(int, top);
        QFETCH(QStringList, pins);
        const auto s = loadSample(sample.toStdString());
        QVERIFY(s);
        SearchOptions o;
        o.top_n = top;
        o.max_pareto = 100'000;
        for (const QString& pin : pins)
            o.pins.push_back(pin.toStdString());
        const SearchResult pruned = searchLayouts(*s, o);
        o.prune = false;
        const SearchResult whole = searchLayouts(*s, o);
        QVERIFY(pruned.found());
        const int64_t skipped = pruned.rejectedCount(RejectReason::bound);
        QVERIFY2(skipped > 0, "the case prunes");
        QCOMPARE(whole.rejectedCount(RejectReason::bound), int64_t{0});
        QCOMPARE(whole.pareto_bound_s, 0.0);
        QCOMPARE(pruned.candidates, whole.candidates);
        QCOMPARE(pruned.evaluated + skipped, whole.evaluated);
        QVERIFY(pruned.evaluated < whole.evaluated);
        for (int i = 0; i < kRejectReasonCount; ++i)
            if (static_cast<RejectReason>(i) != RejectReason::bound)
                QCOMPARE(pruned.rejected[static_cast<size_t>(i)].count,
                         whole.rejected[static_cast<size_t>(i)].count);
        QCOMPARE(pruned.ranked.size(), whole.ranked.size());
        for (size_t i = 0; i < pruned.ranked.size(); ++i) {
            QVERIFY(pruned.ranked[i].scenario == whole.ranked[i].scenario);
            QCOMPARE(pruned.ranked[i].rank, whole.ranked[i].rank);
            QCOMPARE(pruned.ranked[i].figures.step_time_s, whole.ranked[i].figures.step_time_s);
        }
        QCOMPARE(pruned.input.has_value(), whole.input.has_value());
        if (pruned.input)
            QCOMPARE(pruned.input->rank, whole.input->rank);
        QCOMPARE(pruned.explanation, whole.explanation);
        // The front up to the bound, with the same ranks; the whole front goes on beyond it.
        const double bound_s = pruned.pareto_bound_s;
        QVERIFY(bound_s >= pruned.ranked.back().figures.step_time_s);
        std::vector<const SearchCandidate*> front;
        for (const SearchCandidate& c : whole.pareto)
            if (c.figures.step_time_s <= bound_s)
                front.push_back(&c);
        QCOMPARE(pruned.pareto_total, static_cast<int64_t>(front.size()));
        QCOMPARE(pruned.pareto.size(), front.size());
        for (size_t i = 0; i < front.size(); ++i) {
            QVERIFY(pruned.pareto[i].scenario == front[i]->scenario);
            QCOMPARE(pruned.pareto[i].rank, front[i]->rank);
        }
        QVERIFY(whole.pareto_total > pruned.pareto_total ||
                whole.pareto.back().figures.step_time_s <= bound_s);
        // The floors the search computed are the built models' and bound the steps.
        const SearchPart part = searchPart(*s, o);
        int checked = 0;
        for (const SearchStructureOutcome& out : part.outcomes)
            for (size_t i = 0; i < out.evaluated.size(); i += 7) {
                const SearchEvaluated& e = out.evaluated[i];
                Scenario c = *s;
                c.layout = e.layout;
                c.training.micro_batch = e.micro_batch;
                c.training.recompute = e.recompute;
                const Report r = evaluate(c);
                QCOMPARE(e.floor_s, stepComputeFloor_s(*r.costs));
                QVERIFY(e.floor_s <= e.figures.step_time_s);
                ++checked;
            }
        QVERIFY(checked > 10);
    }

    /// Issue 19: any split of the structures over shards merges into exactly the unsharded
    /// result: here when narrower layouts fit everywhere (80 GB), when no TP inside a node
    /// fits so every shard searches its wide structures too (16 GB), and when some shards find a
    /// narrower layout and others do not (16.2 GB over 8 shards: 3 do), where the merge must drop
    /// the wide layouts the unlucky shards searched.
    void shardsMergeIntoTheUnshardedResult_data() {
        QTest::addColumn<double>("hbm_gb");
        QTest::addColumn<int>("shards");
        QTest::newRow("80 GB, 3 shards") << 80.0 << 3;
        QTest::newRow("80 GB, 1 shard") << 80.0 << 1;
        QTest::newRow("16 GB, 4 shards") << 16.0 << 4;
        QTest::newRow("16.2 GB, 8 shards") << 16.2 << 8;
    }
    void shardsMergeIntoTheUnshardedResult() {
        QFETCH(double, hbm_gb);
        QFETCH(int, shards);
        const auto s = loadSample("dgx-h100-8x8-moe16.yaml",
                                  {"cluster.gpu_overrides.hbm_gb=" + std::to_string(hbm_gb)});
        QVERIFY(s);
        SearchOptions o;
        o.top_n = 30;
        const SearchResult whole = searchLayouts(*s, o);
        QVERIFY(whole.found());
        std::vector<SearchPart> parts;
        const SearchResult merged = sharded(*s, o, shards, &parts);
        QVERIFY2(merged.ok(), formatAll(merged.diagnostics).c_str());
        compareResults(whole, merged);
        // The shards partition the structures.
        int64_t outcomes = 0;
        int found_inside = 0;
        for (const SearchPart& p : parts) {
            QCOMPARE(p.structures, parts.front().structures);
            found_inside += p.found_inside;
            for (const SearchStructureOutcome& out : p.outcomes) {
                QCOMPARE(out.structure % shards, int64_t{p.shard.index});
                outcomes += out.counted_only || out.inside_domain || !p.found_inside ? 1 : 0;
            }
        }
        QVERIFY(outcomes >= parts.front().structures);
        if (hbm_gb == 16.2) {
            QVERIFY2(found_inside > 0 && found_inside < shards, "exercises the mixed case");
            QVERIFY(whole.rejectedCount(RejectReason::wide_tp) > 0);
        }
        if (hbm_gb == 16.0)
            QCOMPARE(whole.rejectedCount(RejectReason::wide_tp), int64_t{0});
    }

    void mergeRefusesIncompleteOrRepeatedParts() {
        const auto s = loadSample("dgx-h100-8x8-moe16.yaml");
        QVERIFY(s);
        SearchOptions o;
        std::vector<SearchPart> parts = {searchPart(*s, o, Shard{0, 3}),
                                         searchPart(*s, o, Shard{1, 3})};
        SearchResult r = mergeSearchParts(*s, o, parts);
        QVERIFY(!r.ok());
        QVERIFY2(formatAll(r.diagnostics).find("the parts miss") != std::string::npos,
                 formatAll(r.diagnostics).c_str());
        parts.push_back(parts.front());
        r = mergeSearchParts(*s, o, parts);
        QVERIFY(!r.ok());
        QVERIFY(formatAll(r.diagnostics).find("is in two parts") != std::string::npos);
        // Parts of another search are told apart by the CLI's fingerprint (test_cli_batch).
        QVERIFY(hasErrors(searchPart(*s, o, Shard{3, 3}).diagnostics));
    }

    /// A progress callback that says stop ends the search early with nothing ranked.
    void progressCanStopTheSearch() {
        const auto s = loadSample("dgx-h100-8x8-moe16.yaml");
        QVERIFY(s);
        SearchOptions o;
        o.threads = 1;
        int64_t calls = 0, last_total = 0;
        o.progress = [&](int64_t done, int64_t total) {
            ++calls;
            last_total = total;
            return done < 5;
        };
        const SearchResult r = searchLayouts(*s, o);
        QVERIFY(r.interrupted);
        QVERIFY(!r.found());
        QCOMPARE(calls, int64_t{5});
        QVERIFY(last_total > 5);
        // Without stopping, every structure is reported once and the last call says done.
        int64_t done_last = 0;
        o.progress = [&](int64_t done, int64_t total) {
            done_last = done;
            last_total = total;
            return true;
        };
        QVERIFY(!searchLayouts(*s, o).interrupted);
        QCOMPARE(done_last, last_total);
    }

    /// On several threads (workers finish structures in any order) the calls still count 1, 2,
    /// ... total one after the other, and a stop is the last call: the app's progress bar only
    /// moves forward and its Cancel stops the search at once.
    void progressIsMonotoneAndStopsOnSeveralThreads() {
        const auto s = loadSample("dgx-h100-8x8-moe16.yaml");
        QVERIFY(s);
        SearchOptions o;
        o.threads = 4;
        std::vector<int64_t> seen;
        int64_t total_seen = 0;
        o.progress = [&](int64_t done, int64_t total) {
            seen.push_back(done); // not thread-safe unless the calls never overlap
            total_seen = total;
            return true;
        };
        QVERIFY(!searchLayouts(*s, o).interrupted);
        QVERIFY(total_seen > 8);
        QCOMPARE(static_cast<int64_t>(seen.size()), total_seen);
        for (size_t i = 0; i < seen.size(); ++i)
            QCOMPARE(seen[i], static_cast<int64_t>(i + 1));
        // Stop at the third structure: no call after it, though three workers were still busy.
        seen.clear();
        o.progress = [&](int64_t done, int64_t) {
            seen.push_back(done);
            return done < 3;
        };
        const SearchResult stopped = searchLayouts(*s, o);
        QVERIFY(stopped.interrupted);
        QVERIFY(!stopped.found());
        QCOMPARE(seen, (std::vector<int64_t>{1, 2, 3}));
    }

    /// The table's columns group the step items; each item is a distinct power of two, so a
    /// column's value names the items it holds: compute = attention 1 + dense FFN 2 + router 4 +
    /// expert compute 8 + optimizer 1024 = 1039; all-to-all 16; TP+CP = 32 + 64 = 96;
    /// pipeline = pp send 128 + bubble 256 = 384; DP sync 512; imbalance 2048. Every item is in
    /// exactly one column: they add up to 2^12 - 1 = 4095.
    void stepColumnsGroupTheItems() {
        SearchFigures f;
        for (int i = 0; i < kStepItemCount; ++i)
            f.step.seconds[static_cast<size_t>(i)] = std::ldexp(1.0, i);
        const SearchStepColumns c = stepColumnsOf(f);
        QCOMPARE(c.compute_s, 1039.0);
        QCOMPARE(c.all_to_all_s, 16.0);
        QCOMPARE(c.tp_cp_s, 96.0);
        QCOMPARE(c.pipeline_s, 384.0);
        QCOMPARE(c.dp_sync_s, 512.0);
        QCOMPARE(c.imbalance_s, 2048.0);
        QCOMPARE(c.compute_s + c.all_to_all_s + c.tp_cp_s + c.pipeline_s + c.dp_sync_s +
                     c.imbalance_s,
                 4095.0);
    }

    /// A ranked row's explanation: the winner's is the search's; the runner-up's says against
    /// the winner exactly what the search's "Runner-up (#2)" line says.
    void explainRankedReusesTheExplanation() {
        const auto s = loadSample("dgx-h100-8x8-moe16.yaml");
        QVERIFY(s);
        SearchOptions o;
        const SearchResult r = searchLayouts(*s, o);
        QVERIFY(r.ranked.size() >= 2);
        QCOMPARE(explainRanked(r, o, 0), r.explanation);
        QVERIFY(explainRanked(r, o, r.ranked.size()).empty());
        const std::vector<std::string> second = explainRanked(r, o, 1);
        QVERIFY(!second.empty());
        QCOMPARE(second.front().rfind("#2: " + layoutSummary(r.ranked[1].scenario) + " - ", 0),
                 size_t{0});
        const std::string runner_up = lineWith(r.explanation, "Runner-up (#2): ", {});
        const std::string against = lineWith(second, "Against the winner (#1): ", {});
        QVERIFY2(!runner_up.empty() && !against.empty(), joined(second).c_str());
        QCOMPARE(against.substr(std::string("Against the winner (#1): ").size()),
                 runner_up.substr(std::string("Runner-up (#2): ").size()));
        // On this sample #2 is 6.6 ms faster than #1 (2.53 s vs 2.54 s) but splits a replica
        // over PP=4 GPUs against the winner's TP=2: the tie rule is said.
        if (r.ranked[1].figures.step_time_s < r.ranked[0].figures.step_time_s)
            QVERIFY2(!lineWith(second, "Ranked below the winner though ", {"tie margin"}).empty(),
                     joined(second).c_str());
        QVERIFY2(!lineWith(second, "Memory", {"this layout"}).empty() ||
                     !lineWith(second, "Memory left", {}).empty(),
                 joined(second).c_str());
    }

    void pinsRestrictTheSpace() {
        const auto s = loadSample("dgx-h100-8x8-moe16.yaml");
        QVERIFY(s);
        const SearchResult r = search(
            *s, {"layout.tp=1", "training.micro_batch=1", "layout.ep=4", "layout.ep=8"}, 1000);
        QVERIFY(r.found());
        for (const SearchCandidate& c : r.ranked) {
            QCOMPARE(c.scenario.layout.tp, 1);
            QCOMPARE(c.scenario.training.micro_batch, 1);
            QVERIFY(c.scenario.layout.ep == 4 || c.scenario.layout.ep == 8);
        }
        QVERIFY(r.rejectedCount(RejectReason::pin) > 0);
        QCOMPARE(rejectedTotal(r) + r.evaluated, r.candidates);
        // A pinned micro-batch above the default cap is still tried.
        const SearchResult big = search(*s, {"training.micro_batch=8", "layout.pp=4"}, 5);
        QVERIFY(big.found());
        QCOMPARE(big.ranked.front().scenario.training.micro_batch, 8);
    }

    void badPins() {
        const Diagnostics d = checkPins({"layout.tp=0", "layout.bogus=1", "layout.order=tp-cp",
                                         "training.recompute=sometimes", "layout.tp"});
        QCOMPARE(d.size(), size_t{5});
        QCOMPARE(d[0].field, std::string("layout.tp"));
        QVERIFY(d[1].message.find("pinnable keys") != std::string::npos);
        QVERIFY(checkPins({"layout.schedule=dualpipe", "layout.order=tp-cp-dp-ep-pp"}).empty());
        const auto s = loadSample("dgx-h100-8x8-moe16.yaml");
        QVERIFY(s);
        const SearchResult r = search(*s, {"layout.tp=two"});
        QVERIFY(!r.ok());
        QVERIFY(!r.found());
        QCOMPARE(r.candidates, int64_t{0});
    }

    /// 7 GPUs in one node, 4 layers: 7 divides neither the heads, the experts nor the batch,
    /// and a 7-stage pipeline is deeper than the model (so PP is not tried). Hand count, each
    /// with 3 recompute levels:
    ///   TP=1 DP=7 (micro-batch 1): EP=1 (orders equivalent) -> 3, batch 512 % 7;
    ///     EP=2, EP=4 (2 orders) -> 2 x 6, EP does not divide 7
    ///   TP=7 DP=1 (micro-batches: the 10 divisors 1, 2, ..., 512 of the per-replica batch),
    ///     32 heads % 7: EP=1 with ETP=1 or 7 (orders equivalent) -> 2 x 30; EP=2, EP=4 with
    ///     ETP=1 or 7 (2 orders) -> 4 x 60
    ///   = 3 batch + 312 divisibility = 315.
    void noValidLayoutSaysWhy() {
        const auto loaded = loadSample("dgx-h100-8x8-moe16.yaml");
        QVERIFY(loaded);
        Scenario s = *loaded;
        s.cluster.nodes = 1;
        s.cluster.gpus_per_node = 7;
        s.cluster.nics_per_node = 7;
        s.model.layers = 4;
        s.model.dense_layers = 0;
        s.model.heads = 32;
        s.model.kv_heads = 8;
        s.model.experts = 16;
        s.model.expert_ffn_hidden = 8192;
        s.model.seq_len = 4096;
        s.training.global_batch = 512;
        s.training.micro_batch = 1;
        s.layout = LayoutSpec{}; // tp=cp=pp=dp=ep=etp=1: invalid for 7 GPUs, the search fixes it
        const SearchResult r = search(s);
        QVERIFY(r.ok());
        QVERIFY(!r.found());
        QVERIFY(r.ranked.empty() && r.pareto.empty());
        QCOMPARE(r.evaluated, int64_t{0});
        QCOMPARE(r.candidates, int64_t{315});
        QCOMPARE(r.rejectedCount(RejectReason::batch), int64_t{3});
        QCOMPARE(r.rejectedCount(RejectReason::divisibility), int64_t{312});
        QCOMPARE(rejectedTotal(r), r.candidates);
        const std::string why = joined(r.explanation);
        QVERIFY2(!lineWith(r.explanation, "No valid layout: all 315 candidates were rejected",
                           {"divisibility 312", "batch 3"})
                      .empty(),
                 why.c_str());
        QVERIFY2(
            !lineWith(r.explanation, "global batch not divisible", {"e.g. training.global_batch"})
                 .empty(),
            why.c_str());
    }

    /// 10 GB of HBM: everything valid fails on memory; the wide TP layouts are searched too
    /// (nothing narrower fits) and the closest miss is named.
    void outOfMemoryEverywhere() {
        const auto s = loadSample("dgx-h100-8x8-moe16.yaml", {"cluster.gpu_overrides.hbm_gb=10"});
        QVERIFY(s);
        const SearchResult r = search(*s);
        QVERIFY(r.ok());
        QVERIFY(!r.found());
        QVERIFY(r.rejectedCount(RejectReason::memory) > 0);
        QCOMPARE(r.rejectedCount(RejectReason::wide_tp), int64_t{0});
        QCOMPARE(rejectedTotal(r), r.candidates);
        QVERIFY(!lineWith(r.explanation, "Closest to fitting: ",
                          {"over 9.5 GB (10.0 GB of HBM less the 5% reserve)"})
                     .empty());
        QVERIFY(r.input);
        QVERIFY(!r.input->figures.fits);
        QCOMPARE(r.input->rank, 0);
    }

    /// DeepSeek-V3 on 2048 H800, restricted to the published pipeline so the test stays fast:
    /// the search keeps node-limited routing and ranks the published layout.
    void deepSeekPublishedPipelineSlice() {
        const auto s = loadSample("deepseek-v3-2048xh800.yaml");
        QVERIFY(s);
        const SearchResult r =
            search(*s,
                   {"layout.tp=1", "layout.cp=1", "layout.pp=16", "layout.schedule=dualpipe",
                    "training.micro_batch=" + std::to_string(s->training.micro_batch)},
                   1000);
        QVERIFY(r.found());
        QVERIFY(r.input);
        QVERIFY2(r.input->rank > 0, joined(r.explanation).c_str());
        QCOMPARE(r.ranked[static_cast<size_t>(r.input->rank - 1)].scenario, *s);
        for (const SearchCandidate& c : r.ranked) {
            QCOMPARE(c.scenario.layout.max_nodes_per_token, s->layout.max_nodes_per_token);
            QCOMPARE(c.scenario.layout.pp, 16);
        }
        const SearchCandidate& win = r.ranked.front();
        QVERIFY(figuresOf(evaluate(win.scenario)).step_time_s == win.figures.step_time_s);
    }
};

QTEST_GUILESS_MAIN(TestSearch)
#include "test_search.moc"
