// Time, cost and reliability (economics.h): Young/Daly and goodput against hand-computed cases,
// failure rates and MTBF, capital and power of the default cluster by hand, linear price
// scaling, finite figures for every sample, and the scenario fields' errors and round trip.
#include "moe/economics.h"
#include "moe/edits.h"
#include "moe/evaluate.h"
#include "moe/scenario_io.h"
#include "test_support.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <string>

using namespace moe;

namespace {

#define QCLOSE(actual, expected)                                                                   \
    do {                                                                                           \
        const double a_ = (actual), e_ = (expected);                                               \
        if (!(std::fabs(a_ - e_) <= 1e-9 * std::max(1.0, std::fabs(e_))))                          \
            QFAIL(qPrintable(QString("%1 = %2, expected %3")                                       \
                                 .arg(#actual)                                                     \
                                 .arg(a_, 0, 'g', 17)                                              \
                                 .arg(e_, 0, 'g', 17)));                                           \
    } while (0)

Scenario defaultSample() {
    return defaultScenario();
}

Scenario loadSample(const std::string& name) {
    const LoadResult r = loadScenarioFile(test::samplePath(name));
    if (!r.ok())
        qFatal("%s", formatAll(r.diagnostics).c_str());
    return *r.scenario;
}

/// Every figure of `e` finite (and the ones that cannot be negative, not negative).
std::string checkFinite(const Economics& e) {
    std::string bad;
    auto check = [&](const char* name, double v) {
        if (bad.empty() && (!std::isfinite(v) || v < 0))
            bad = std::string(name) + " = " + std::to_string(v);
    };
    const CapitalCost& k = e.capital;
    for (double v : {k.gpus_usd, k.servers_usd, k.nics_usd, k.switches_usd, k.cables_usd,
                     k.racks_usd, k.total_usd})
        check("capital", v);
    const PowerDraw& p = e.power;
    for (double v : {p.gpus_w, p.nodes_w, p.nics_w, p.switches_w, p.racks_w, p.it_w, p.facility_w})
        check("power", v);
    const ReliabilityFigures& f = e.reliability;
    for (double v : {f.failures_per_h, f.mtbf_s, f.checkpoint_bytes, f.checkpoint_write_s,
                     f.checkpoint_read_s, f.recovery_s, f.young_interval_s, f.optimal_interval_s,
                     f.interval_s, f.goodput, f.checkpoint_overhead, f.failure_overhead})
        check("reliability", v);
    for (double v : {e.amortized_usd_per_h, e.rental_usd_per_h, e.energy_usd_per_h, e.usd_per_h,
                     e.usd_per_day, e.usd_per_gpu_hour, e.compute_time_s, e.wall_time_s, e.days,
                     e.checkpoint_time_s, e.lost_time_s, e.expected_failures, e.gpu_hours,
                     e.energy_kwh, e.cost_usd, e.usd_per_trillion_tokens})
        check("run", v);
    for (const IntervalPoint& ip : e.interval_sweep) {
        check("interval sweep", ip.interval_s);
        check("interval sweep", ip.goodput);
        check("interval sweep", ip.lost_h_per_day);
    }
    for (const ScalePoint& sp : e.scale_sweep) {
        check("scale sweep", sp.mtbf_s);
        check("scale sweep", sp.goodput);
        check("scale sweep", sp.days);
        check("scale sweep", sp.cost_usd);
        check("scale sweep", sp.usd_per_trillion_tokens);
    }
    if (bad.empty() && !(f.goodput > 0 && f.goodput <= 1))
        bad = "goodput outside (0, 1]";
    return bad;
}

/// The default scenario's YAML with `block` inserted before the line starting with `before`;
/// `line` receives the 1-based line number of the block's first line.
std::string insertBefore(const std::string& before, const std::string& block, int& line) {
    std::string text = defaultScenarioYaml();
    const std::size_t at = text.find("\n" + before) + 1;
    line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
    text.insert(at, block);
    return text;
}

} // namespace

class TestEconomics : public QObject {
    Q_OBJECT

private slots:
    void youngAndDalyByHand() {
        // delta = 60 s, M = 3 h = 10,800 s: Young sqrt(2 * 60 * 10800) = sqrt(1,296,000)
        // = 1138.41996 s. Daly: x = delta / 2M = 60 / 21600 = 0.00277778, sqrt(x) = 0.0527046,
        // 1138.41996 * (1 + 0.0527046/3 + 0.00277778/9) - 60 = 1138.41996 * 1.01787637 - 60
        // = 1098.77132 s.
        QCLOSE(youngInterval_s(60, 10800), std::sqrt(1296000.0));
        QVERIFY(std::fabs(youngInterval_s(60, 10800) - 1138.41996) < 1e-4);
        QVERIFY(std::fabs(dalyInterval_s(60, 10800) - 1098.77132) < 1e-4);
        // delta >= 2M: checkpoint once per MTBF.
        QCOMPARE(dalyInterval_s(500, 200), 200.0);
        // Nothing fails: no optimum.
        QCOMPARE(youngInterval_s(60, 0), 0.0);
        QCOMPARE(dalyInterval_s(60, 0), 0.0);
    }

    void goodputByHand() {
        // tau = 1800, delta = 60, R = 600, M = 36000 s: (tau+delta)/M = 0.0516667,
        // e^0.0516667 - 1 = 0.0530246; e^(R/M) = e^(1/60) = 1.0168064;
        // G = 1800 / (36000 * 1.0168064 * 0.0530246) = 1800 / 1940.97 = 0.927371.
        QVERIFY(std::fabs(checkpointGoodput(1800, 60, 600, 36000) - 0.927371) < 1e-6);
        // Without failures only the checkpoints cost: 1800 / 1860.
        QCLOSE(checkpointGoodput(1800, 60, 600, 0), 1800.0 / 1860.0);
        // No failures and no checkpoints: every second trains.
        QCOMPARE(checkpointGoodput(0, 60, 600, 0), 1.0);
        // Goodput peaks near the Daly optimum: it beats half and twice the interval.
        const double opt = dalyInterval_s(60, 36000);
        const double g = checkpointGoodput(opt, 60, 600, 36000);
        QVERIFY(g > checkpointGoodput(opt / 2, 60, 600, 36000));
        QVERIFY(g > checkpointGoodput(opt * 2, 60, 600, 36000));
        // Longer recovery, lower goodput.
        QVERIFY(checkpointGoodput(opt, 60, 1200, 36000) < g);
    }

    void defaultClusterByHand() {
        const Scenario s = defaultSample();
        const Report r = evaluate(s);
        const Economics& e = r.economics;
        QVERIFY(e.valid);
        QVERIFY(!e.rental);
        // 64 GPUs x 12.6 + 8 nodes x 56.9 per million hours = 0.0012616 per hour.
        QCLOSE(e.reliability.failures_per_h, 64 * 12.6e-6 + 8 * 56.9e-6);
        QCLOSE(e.reliability.mtbf_s, 3600 / 0.0012616);
        // Checkpoint: BF16 weights + 12 bytes of optimizer state per parameter, written by 8
        // nodes at 1 GB/s each; recovery = 120 + 300 + the read.
        QCLOSE(e.reliability.checkpoint_bytes, r.params.total * 14);
        QCLOSE(e.reliability.checkpoint_write_s, r.params.total * 14 / 8e9);
        QCLOSE(e.reliability.recovery_s, 420 + r.params.total * 14 / 8e9);
        QCLOSE(e.reliability.interval_s,
               dalyInterval_s(e.reliability.checkpoint_write_s, e.reliability.mtbf_s));
        QVERIFY(e.reliability.interval_is_optimal);
        // Capital (catalog estimates): 64 x $30,000 GPUs, 8 x $90,000 servers, 64 x $2,500
        // NICs, 8 rail leaves + 4 spines = 12 x $30,000 switches, 64 NIC + 64 uplink cables x
        // $1,500, 2 racks x $25,000 = $3.4M.
        const CapitalCost& k = e.capital;
        QCOMPARE(k.switches, 12);
        QCOMPARE(k.cables, 128);
        QCOMPARE(k.racks, 2);
        QCLOSE(k.total_usd, 1.92e6 + 720e3 + 160e3 + 360e3 + 192e3 + 50e3);
        // Power: 64 x 700 + 8 x 3000 + 64 x 25 + 12 x 1100 = 83,600 W at PUE 1.
        QCLOSE(e.power.it_w, 83600.0);
        QCLOSE(e.power.facility_w, 83600.0);
        // Owned, no electricity price given: the $0.08 estimate.
        QVERIFY(e.electricity_estimated);
        QCLOSE(e.energy_usd_per_h, 83.6 * 0.08);
        QCLOSE(e.amortized_usd_per_h, 3.402e6 / (4 * 8766.0));
        QCLOSE(e.usd_per_h, e.amortized_usd_per_h + e.energy_usd_per_h);
        // The run: wall-clock = failure-free time / goodput, its parts add up.
        QCLOSE(e.compute_time_s, r.throughput.time_to_train_s);
        QCLOSE(e.wall_time_s, e.compute_time_s / e.reliability.goodput);
        QCLOSE(e.compute_time_s + e.checkpoint_time_s + e.lost_time_s, e.wall_time_s);
        QCLOSE(e.cost_usd, e.usd_per_h * e.wall_time_s / 3600);
        QCLOSE(e.energy_kwh, 83.6 * e.wall_time_s / 3600);
        QCLOSE(e.expected_failures, e.wall_time_s / e.reliability.mtbf_s);
    }

    // Per-rack power and the rack power limit, as a drag of nodes between racks changes them.
    void rackPowerByHand() {
        // A slow fabric (10 GB/s per NIC) leaves the gradient sync exposed, a second warning
        // for the ordering check below; power and capital do not depend on it.
        FieldEditResult slow =
            setScenarioField(defaultSample(), "cluster.scale_out.bandwidth_gbps", "10");
        QVERIFY2(slow.ok(), formatAll(slow.diagnostics).c_str());
        Scenario s = *slow.scenario;
        // A DGX H100 node: 8 x 700 W GPUs + 8 x 25 W NICs + 3,000 W overhead = 8,800 W; four
        // to a rack = 35,200 W (no rack overhead for H100 racks).
        const Report even = evaluate(s);
        QCOMPARE(rackPowerW(s.cluster), (std::vector<double>{35200, 35200}));
        QCOMPARE(even.economics.power.hottest_rack, 0);
        QCOMPARE(even.economics.power.hottest_rack_w, 35200.0);
        FieldEditResult edit = setScenarioField(s, "cluster.rack_nodes", "[3, 1]");
        QVERIFY2(edit.ok(), formatAll(edit.diagnostics).c_str());
        edit = setScenarioField(*edit.scenario, "cluster.rack_power_limit_kw", "30");
        QVERIFY2(edit.ok(), formatAll(edit.diagnostics).c_str());
        const Report uneven = evaluate(*edit.scenario);
        // Racks of 3, 1 and the remaining 4 nodes: one more rack bought, the same IT power.
        QCOMPARE(rackPowerW(edit.scenario->cluster), (std::vector<double>{26400, 8800, 35200}));
        QCOMPARE(uneven.economics.power.hottest_rack, 2);
        QCOMPARE(uneven.economics.power.hottest_rack_w, 35200.0);
        QCOMPARE(uneven.economics.capital.racks, 3);
        QCLOSE(uneven.economics.capital.total_usd - even.economics.capital.total_usd, 25e3);
        QCLOSE(uneven.economics.power.it_w, even.economics.power.it_w);
        QCOMPARE(uneven.step_time_s, even.step_time_s); // racks do not move traffic here
        const auto over = std::find_if(
            uneven.warnings.begin(), uneven.warnings.end(),
            [](const DesignWarning& w) { return w.code == WarningCode::rack_power_over; });
        QVERIFY(over != uneven.warnings.end());
        QCOMPARE(over->severity, DesignWarning::Severity::critical);
        QCOMPARE(warningText(*over),
                 std::string("rack 2 draws 35.2 kW with 4 nodes, over the 30.0 kW "
                             "rack limit: move nodes to other racks or lower "
                             "cluster.nodes_per_rack"));
        QCOMPARE(over->gpus.size(), std::size_t{32});
        QCOMPARE(over->gpus.front(), 32); // node 4, the first node of rack 2
        // Critical warnings come first, ahead of the exposed-sync warning.
        QVERIFY(uneven.warnings.size() >= 2);
        QCOMPARE(over, uneven.warnings.begin());
        // Moving a node from rack 2 into rack 1 brings every rack under 30 kW.
        edit = setScenarioField(*edit.scenario, "cluster.rack_nodes", "[3, 2, 3]");
        QVERIFY2(edit.ok(), formatAll(edit.diagnostics).c_str());
        const Report fixed = evaluate(*edit.scenario);
        QVERIFY(
            std::none_of(fixed.warnings.begin(), fixed.warnings.end(), [](const DesignWarning& w) {
                return w.code == WarningCode::rack_power_over;
            }));
    }

    void lowGoodputIsWarned() {
        Scenario s = defaultSample();
        const auto lowGoodput = [](const Report& r) {
            return std::find_if(r.warnings.begin(), r.warnings.end(), [](const DesignWarning& w) {
                return w.code == WarningCode::low_goodput;
            });
        };
        const Report fine = evaluate(s);
        QVERIFY(fine.economics.reliability.goodput > 0.9);
        QVERIFY(lowGoodput(fine) == fine.warnings.end());
        // Storage at 1 MB/s per node: a checkpoint takes hours, goodput collapses.
        s.cluster.reliability.checkpoint_write_gbps_per_node = 0.001;
        const Report slow = evaluate(s);
        const ReliabilityFigures& f = slow.economics.reliability;
        QVERIFY(f.goodput < 0.9);
        const auto w = lowGoodput(slow);
        QVERIFY(w != slow.warnings.end());
        QCOMPARE(w->severity, DesignWarning::Severity::warning);
        // Its figures are the reliability figures; its words start with the goodput.
        const auto& figures = std::get<LowGoodput>(w->figures);
        QCOMPARE(figures.goodput, f.goodput);
        QCOMPARE(figures.mtbf_h, f.mtbf_s / 3600);
        const std::string text = warningText(*w);
        QVERIFY2(text.starts_with("goodput " + std::to_string(std::lround(f.goodput * 100)) + "%"),
                 text.c_str());
    }

    void moreGpusLowerTheMtbf() {
        Scenario s = defaultSample();
        const double mtbf8 = evaluate(s).economics.reliability.mtbf_s;
        s.cluster.nodes = 16;
        s.layout.dp = 128;
        const double mtbf16 = evaluate(s).economics.reliability.mtbf_s;
        QVERIFY(mtbf16 < mtbf8);
        QCLOSE(mtbf16, mtbf8 / 2); // twice the GPUs and nodes, twice the failure rate
        // The sweep: MTBF falls and the optimal interval shortens as the cluster grows.
        const Economics e = evaluate(loadSample("deepseek-v3-2048xh800.yaml")).economics;
        QVERIFY(e.scale_sweep.size() >= 5);
        for (std::size_t i = 1; i < e.scale_sweep.size(); ++i) {
            QVERIFY(e.scale_sweep[i].gpus > e.scale_sweep[i - 1].gpus);
            QVERIFY(e.scale_sweep[i].mtbf_s < e.scale_sweep[i - 1].mtbf_s);
            QVERIFY(e.scale_sweep[i].goodput < e.scale_sweep[i - 1].goodput);
        }
        // The evaluated size is a point of the sweep, with the same goodput.
        bool found = false;
        for (const ScalePoint& p : e.scale_sweep) {
            if (p.gpus == 2048) {
                found = true;
                QCLOSE(p.goodput, e.reliability.goodput);
                QVERIFY(std::fabs(p.days - e.days) < 1e-9 * e.days);
            }
        }
        QVERIFY(found);
    }

    void zeroFailureRateGivesGoodputOne() {
        Scenario s = defaultSample();
        s.cluster.reliability.gpu_failures_per_million_h = 0;
        s.cluster.reliability.node_failures_per_million_h = 0;
        const Economics e = evaluate(s).economics;
        QCOMPARE(e.reliability.goodput, 1.0);
        QCOMPARE(e.reliability.mtbf_s, 0.0); // "never"
        QCOMPARE(e.reliability.interval_s, 0.0);
        QCOMPARE(e.wall_time_s, e.compute_time_s);
        QCOMPARE(e.expected_failures, 0.0);
        QVERIFY(checkFinite(e).empty());
        // A fixed interval still costs its checkpoints.
        s.training.checkpoint_interval_s = 3600;
        const Economics fixed = evaluate(s).economics;
        QVERIFY(!fixed.reliability.interval_is_optimal);
        QCLOSE(fixed.reliability.goodput, 3600 / (3600 + fixed.reliability.checkpoint_write_s));
    }

    void costScalesLinearlyWithPrice() {
        // Rented: the GPU-hour price (no energy price given) is the whole hourly cost.
        Scenario s = defaultSample();
        s.cluster.gpu_hour_usd = 2;
        const Economics a = evaluate(s).economics;
        s.cluster.gpu_hour_usd = 6;
        const Economics b = evaluate(s).economics;
        QVERIFY(a.rental && b.rental);
        QCLOSE(a.usd_per_h, 64 * 2.0);
        QCLOSE(b.cost_usd, 3 * a.cost_usd);
        QCLOSE(b.usd_per_trillion_tokens, 3 * a.usd_per_trillion_tokens);
        QCOMPARE(b.wall_time_s, a.wall_time_s); // prices do not change time
        // Owned: every price and the electricity doubled, the cost doubles.
        Scenario o = defaultSample();
        o.cluster.electricity_usd_per_kwh = 0.1;
        const Economics c = evaluate(o).economics;
        o.cluster.gpu.price_usd *= 2;
        o.cluster.nic.price_usd *= 2;
        o.cluster.nic.switch_usd *= 2;
        o.cluster.nic.cable_usd *= 2;
        o.cluster.server_usd *= 2;
        o.cluster.rack_usd *= 2;
        o.cluster.electricity_usd_per_kwh = 0.2;
        const Economics d = evaluate(o).economics;
        QVERIFY(!c.electricity_estimated);
        QCLOSE(d.capital.total_usd, 2 * c.capital.total_usd);
        QCLOSE(d.cost_usd, 2 * c.cost_usd);
        QCLOSE(d.usd_per_day, 2 * c.usd_per_day);
        // A longer write-off halves the capital share only.
        o.cluster.amortization_years = 8;
        QCLOSE(evaluate(o).economics.amortized_usd_per_h, d.amortized_usd_per_h / 2);
    }

    void intervalSweep() {
        const Economics e = evaluate(defaultSample()).economics;
        QCOMPARE(e.interval_sweep.size(), std::size_t(49));
        const IntervalPoint& centre = e.interval_sweep[24];
        QVERIFY(std::fabs(centre.interval_s / e.reliability.optimal_interval_s - 1) < 1e-12);
        QCLOSE(centre.goodput, e.reliability.goodput);
        QCLOSE(centre.lost_h_per_day, 24 * (1 - e.reliability.goodput));
        for (const IntervalPoint& p : e.interval_sweep)
            QVERIFY(p.goodput <= centre.goodput * (1 + 1e-6));
    }

    void allFiguresFiniteForEverySample_data() {
        QTest::addColumn<QString>("path");
        for (const std::string& path : test::sampleFiles())
            QTest::newRow(path.substr(path.find("sample_clusters/") + 16).c_str())
                << QString::fromStdString(path);
    }
    void allFiguresFiniteForEverySample() {
        QFETCH(QString, path);
        const LoadResult loaded = loadScenarioFile(path.toStdString());
        QVERIFY2(loaded.ok(), formatAll(loaded.diagnostics).c_str());
        const Economics e = evaluate(*loaded.scenario).economics;
        QVERIFY(e.valid);
        const std::string bad = checkFinite(e);
        QVERIFY2(bad.empty(), bad.c_str());
        QVERIFY(e.usd_per_h > 0);
        QVERIFY(e.reliability.mtbf_s > 0);
        QVERIFY(!e.interval_sweep.empty());
        QVERIFY(!e.scale_sweep.empty());
    }

    void scaleUpVsScaleOutPair() {
        const Scenario out = loadSample("scale-up-vs-scale-out/hgx-b200-infiniband.yaml");
        const Scenario up = loadSample("scale-up-vs-scale-out/gb200-nvl72-racks.yaml");
        QCOMPARE(out.model, up.model);
        QCOMPARE(out.training, up.training);
        QCOMPARE(out.cluster.gpuCount(), up.cluster.gpuCount());
        const Report ro = evaluate(out), ru = evaluate(up);
        // The rack-scale NVLink domain keeps the all-to-all off the fabric: faster and cheaper
        // per run, although an NVL72 rack slot costs more and its 512 trays fail more often.
        QVERIFY(ru.step_time_s < ro.step_time_s);
        QVERIFY(ru.economics.days < ro.economics.days);
        QVERIFY(ru.economics.cost_usd < ro.economics.cost_usd);
        QVERIFY(ru.economics.capital.total_usd > ro.economics.capital.total_usd);
        QVERIFY(ru.economics.reliability.mtbf_s < ro.economics.reliability.mtbf_s);
    }

    void fieldsRoundTripAndEdit() {
        Scenario s = defaultSample();
        s.cluster.server_usd = 12345;
        s.cluster.nic.switch_usd = 777;
        s.cluster.amortization_years = 5;
        s.cluster.reliability.restart_s = 900;
        s.cluster.reliability.checkpoint_write_gbps_per_node = 2.5;
        s.training.checkpoint_interval_s = 1800;
        const std::string yaml = toYaml(s);
        QVERIFY(yaml.find("reliability:") != std::string::npos);
        const LoadResult back = loadScenarioText(yaml, "roundtrip.yaml");
        QVERIFY2(back.ok(), formatAll(back.diagnostics).c_str());
        QVERIFY(*back.scenario == s);
        // Defaults are left out of a saved file.
        QVERIFY(toYaml(defaultSample()).find("reliability") == std::string::npos);

        const FieldInfo* info = findScenarioField("cluster.reliability.restart_s");
        QVERIFY(info);
        QCOMPARE(info->unit, std::string("s"));
        QVERIFY(findScenarioField("training.checkpoint_interval_s"));
        QVERIFY(findScenarioField("cluster.costs.amortization_years"));
        const FieldEditResult edit = setScenarioField(
            defaultSample(), "cluster.reliability.gpu_failures_per_million_h", "0");
        QVERIFY(edit.ok());
        QCOMPARE(edit.scenario->cluster.reliability.gpu_failures_per_million_h, 0.0);
        const FieldEditResult bad =
            setScenarioField(defaultSample(), "cluster.costs.amortization_years", "0");
        QVERIFY(!bad.ok());
        QCOMPARE(bad.diagnostics.front().field, std::string("cluster.costs.amortization_years"));
        // A new GPU preset brings its own server price.
        const FieldEditResult gpu = setScenarioField(defaultSample(), "cluster.gpu", "b200");
        QVERIFY(gpu.ok());
        QCOMPARE(gpu.scenario->cluster.server_usd, 120000.0);
    }

    void fieldErrorsNameFileLineAndField() {
        int line = 0;
        const std::string text = insertBefore("model:",
                                              "  reliability:\n"
                                              "    detection_s: -5\n"
                                              "    checkpoint_write_gbps_per_node: fast\n"
                                              "  costs:\n"
                                              "    amortisation_years: 3\n",
                                              line);
        // The block goes inside `cluster:` (the default's last cluster line precedes it).
        const LoadResult r = loadScenarioText(text, "broken.yaml");
        QVERIFY(!r.ok());
        const std::string all = formatAll(r.diagnostics);
        const std::string type_error =
            "broken.yaml:" + std::to_string(line + 2) +
            ":37: error: cluster.reliability.checkpoint_write_gbps_per_node: expected a number, "
            "got 'fast'";
        QVERIFY2(all.find(type_error) != std::string::npos, all.c_str());
        const std::string unknown = "broken.yaml:" + std::to_string(line + 4) +
                                    ":5: error: unknown field "
                                    "'cluster.costs.amortisation_years' — did you mean "
                                    "'cluster.costs.amortization_years'?";
        QVERIFY2(all.find(unknown) != std::string::npos, all.c_str());

        // Once the structure is sound, ranges are checked: at the value's line.
        const std::string ranged = insertBefore("model:",
                                                "  reliability:\n"
                                                "    detection_s: -5\n",
                                                line);
        const LoadResult q = loadScenarioText(ranged, "range.yaml");
        QVERIFY(!q.ok());
        const std::string range_error =
            "range.yaml:" + std::to_string(line + 1) +
            ":5: error: cluster.reliability.detection_s = -5 must be at least 0";
        const std::string got = formatAll(q.diagnostics);
        QVERIFY2(got.find(range_error) != std::string::npos, got.c_str());
        QCOMPARE(q.diagnostics.front().field, std::string("cluster.reliability.detection_s"));
    }
};

QTEST_GUILESS_MAIN(TestEconomics)
#include "test_economics.moc"
