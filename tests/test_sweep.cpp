// Sweeps and shards (issue 19): grid specs with lists and ranges, the points of a grid in
// mixed-radix order (hand-enumerated), shards that partition the points, and runSweep's rows:
// in point order whatever the thread count, each point's figures those of evaluate() on the
// scenario with its overrides, invalid points reported with their errors, sharded runs whose
// union is the whole run, and a progress callback that stops it.
#include "moe/evaluate.h"
#include "moe/format.h"
#include "moe/json_writer.h"
#include "moe/scenario_io.h"
#include "moe/shard.h"
#include "moe/sweep.h"

#include <QtTest>

#include <mutex>
#include <set>
#include <string>
#include <vector>

using namespace moe;

namespace {

/// The rows of a sweep over the built-in default: "index ep mb step_time_s" or "index error".
std::vector<std::string> sweepRows(const SweepGrid& grid, Shard shard, int threads,
                                   const ProgressFn& progress = {}, SweepRun* run_out = nullptr) {
    SweepOptions options;
    options.shard = shard;
    options.threads = threads;
    options.progress = progress;
    std::vector<std::string> rows;
    const SweepRun run = runSweep(
        defaultScenarioYaml(), "<built-in default>", ".", grid, options,
        [](const SweepPoint& p) {
            std::string row = std::to_string(p.index);
            for (const auto& [key, value] : p.overrides)
                row += " " + key + "=" + value;
            if (p.report == nullptr)
                return row + " invalid: " + p.loaded.diagnostics.front().message;
            return row + " " + formatNumber(p.report->step_time_s);
        },
        [&](const std::string& row) { rows.push_back(row); });
    if (run_out)
        *run_out = run;
    return rows;
}

} // namespace

class TestSweep : public QObject {
    Q_OBJECT

private slots:
    void axes() {
        SweepAxis a;
        QVERIFY(parseSweepAxis("layout.ep=1,2,4,8", a).empty());
        QCOMPARE(a.key, std::string("layout.ep"));
        QCOMPARE(a.values, (std::vector<std::string>{"1", "2", "4", "8"}));
        // 8..32:8 = 8, 16, 24, 32; a plain range steps by 1; lists mix with ranges.
        QVERIFY(parseSweepAxis("cluster.nodes=8..32:8,2..3", a).empty());
        QCOMPARE(a.values, (std::vector<std::string>{"8", "16", "24", "32", "2", "3"}));
        // Commas inside a flow list belong to the value.
        QVERIFY(parseSweepAxis("cluster.rack_nodes=[3,3,3,3],[4,4,4]", a).empty());
        QCOMPARE(a.values, (std::vector<std::string>{"[3,3,3,3]", "[4,4,4]"}));
        QVERIFY(parseSweepAxis("routing.zipf_alpha=0.2,1e-1", a).empty());
        QCOMPARE(a.values, (std::vector<std::string>{"0.2", "1e-1"}));

        for (const char* bad :
             {"layout.ep", "layout.bogus=1", "layout.ep=1,,2", "layout.ep=", "cluster.nodes=8..x",
              "cluster.nodes=9..8", "cluster.nodes=1..9:0", "=1,2"}) {
            const Diagnostics d = parseSweepAxis(bad, a);
            QVERIFY2(hasErrors(d), bad);
        }
        QVERIFY(parseSweepAxis("layout.bogus=1", a).front().message.find("unknown field") !=
                std::string::npos);
    }

    /// 2 x 3 points, the last axis fastest: index = 3 * i_ep + i_mb.
    void gridPoints() {
        SweepGrid grid;
        QVERIFY(
            makeSweepGrid({"layout.ep=4,8", "training.micro_batch=1..3"}, {"routing.seed=7"}, grid)
                .empty());
        QCOMPARE(grid.points(), int64_t{6});
        QCOMPARE(grid.axes.front().key, std::string("routing.seed")); // pins first
        using P = std::vector<std::pair<std::string, std::string>>;
        QCOMPARE(grid.point(0),
                 (P{{"routing.seed", "7"}, {"layout.ep", "4"}, {"training.micro_batch", "1"}}));
        QCOMPARE(grid.point(4),
                 (P{{"routing.seed", "7"}, {"layout.ep", "8"}, {"training.micro_batch", "2"}}));
        QCOMPARE(grid.point(5),
                 (P{{"routing.seed", "7"}, {"layout.ep", "8"}, {"training.micro_batch", "3"}}));
        QVERIFY(hasErrors(makeSweepGrid({"layout.ep=4", "layout.ep=8"}, {}, grid)));
        QVERIFY(hasErrors(makeSweepGrid({}, {"layout.ep=4,8"}, grid)));
        // 10^5 x 10^4 points is over the bound.
        QVERIFY(hasErrors(
            makeSweepGrid({"routing.seed=1..100000", "cluster.nodes=1..10000"}, {}, grid)));
    }

    void shards() {
        std::string problem;
        const std::optional<Shard> s = parseShard("2/8", problem);
        QVERIFY(s);
        QCOMPARE(s->index, 2);
        QCOMPARE(s->count, 8);
        for (const char* bad : {"8/8", "-1/8", "1/0", "1", "1/", "/3", "a/3", "1/3x", "1/2000000"})
            QVERIFY2(!parseShard(bad, problem), bad);
        // The shards of 3 over 10 items: 0,3,6,9 | 1,4,7 | 2,5,8.
        std::set<int64_t> seen;
        int64_t sizes = 0;
        for (int i = 0; i < 3; ++i) {
            const Shard shard{i, 3};
            sizes += shard.size(10);
            for (int64_t item = 0; item < 10; ++item)
                if (shard.contains(item))
                    QVERIFY(seen.insert(item).second);
        }
        QCOMPARE(sizes, int64_t{10});
        QCOMPARE(seen.size(), size_t{10});
        QCOMPARE((Shard{0, 3}.size(10)), int64_t{4});
        QCOMPARE((Shard{2, 3}.size(2)), int64_t{0});
    }

    void rowsInOrderWithTheirFigures() {
        SweepGrid grid;
        QVERIFY(makeSweepGrid({"layout.ep=4,8,12", "training.micro_batch=1,2"}, {}, grid).empty());
        const std::vector<std::string> one = sweepRows(grid, {}, 1);
        const std::vector<std::string> two = sweepRows(grid, {}, 2);
        QCOMPARE(one, two);
        QCOMPARE(one.size(), size_t{6});
        // Point 3 = ep 8, micro-batch 2: the default's own layout.
        const LoadResult own = loadScenarioTextWithOverrides(
            defaultScenarioYaml(), "x", ".", {"layout.ep=8", "training.micro_batch=2"});
        QVERIFY(own.ok());
        QCOMPARE(one[3], "3 layout.ep=8 training.micro_batch=2 " +
                             formatNumber(evaluate(*own.scenario).step_time_s));
        // EP=12 does not divide the 16 experts: those points are invalid, with the reason.
        QVERIFY2(one[4].find("4 layout.ep=12 training.micro_batch=1 invalid: ") == 0,
                 one[4].c_str());
        SweepRun run;
        sweepRows(grid, {}, 2, {}, &run);
        QCOMPARE(run.points, int64_t{6});
        QCOMPARE(run.invalid, int64_t{2});
        QVERIFY(!run.interrupted);
    }

    void shardsUnionIsTheWholeSweep() {
        SweepGrid grid;
        QVERIFY(makeSweepGrid({"layout.ep=2,4,8,16", "routing.balance=0,0.5,1"}, {}, grid).empty());
        const std::vector<std::string> whole = sweepRows(grid, {}, 2);
        std::vector<std::string> merged(whole.size());
        for (int i = 0; i < 5; ++i) {
            const std::vector<std::string> part = sweepRows(grid, Shard{i, 5}, 2);
            QCOMPARE(static_cast<int64_t>(part.size()), (Shard{i, 5}.size(grid.points())));
            for (size_t k = 0; k < part.size(); ++k)
                merged[static_cast<size_t>(i) + k * 5] = part[k];
        }
        QCOMPARE(merged, whole);
    }

    void progressCanStopTheSweep() {
        SweepGrid grid;
        QVERIFY(makeSweepGrid({"routing.seed=1..40"}, {}, grid).empty());
        std::mutex m;
        int64_t last_total = 0;
        SweepRun run;
        const std::vector<std::string> rows = sweepRows(
            grid, {}, 1,
            [&](int64_t done, int64_t total) {
                const std::lock_guard<std::mutex> lock(m);
                last_total = total;
                return done < 3;
            },
            &run);
        QVERIFY(run.interrupted);
        QCOMPARE(last_total, int64_t{40});
        QVERIFY(rows.size() <= 3);
        QCOMPARE(static_cast<int64_t>(rows.size()), run.points);
    }
};

QTEST_GUILESS_MAIN(TestSweep)
#include "test_sweep.moc"
