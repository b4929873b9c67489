// The step timeline: closed-form pipeline oracles (GPipe, 1F1B, interleaved, DualPipe) on
// hand-built and scenario-derived inputs, durations that agree with evaluate(), exposed gradient
// sync on the critical path, skew that lengthens the step by what the hot GPU adds, termination on
// every schedule of every sample and of random scenarios, per-GPU queries, the step-time
// distribution, and the Chrome trace / CSV exports (parsed with QJsonDocument) through the library
// and the CLI.
#include "test_support.h"

#include "moe/edits.h"
#include "moe/evaluate.h"
#include "moe/scenario_io.h"
#include "moe/step_costs.h"
#include "moe/timeline.h"

#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>

using namespace moe;

namespace {

/// Every layer costs f forward and b backward (attention only); `layers_per_chunk` per chunk.
TimelineInput uniformInput(PipelineSchedule schedule, int pp, int vpp, int m,
                           int layers_per_chunk = 2, double f = 1.0, double b = 2.0) {
    TimelineInput in;
    in.schedule = schedule;
    in.pp = pp;
    in.vpp = vpp;
    in.micro_batches = m;
    in.layers = pp * vpp * layers_per_chunk;
    for (int c = 0; c <= pp * vpp; ++c)
        in.chunk_first.push_back(c * layers_per_chunk);
    in.costs.resize(static_cast<size_t>(in.layers));
    for (int l = 0; l < in.layers; ++l) {
        in.costs[static_cast<size_t>(l)].layer = l;
        in.costs[static_cast<size_t>(l)].attention_fwd_s = f;
        in.costs[static_cast<size_t>(l)].attention_bwd_s = b;
        // A GEMM-only layer: its weight gradients are the forward's work again.
        in.costs[static_cast<size_t>(l)].attention_wgrad_s = std::min(f, b);
    }
    in.optimizer_s.assign(static_cast<size_t>(pp), 0.0);
    return in;
}

Scenario defaultWith(const std::vector<std::string>& overrides) {
    const LoadResult r =
        loadScenarioTextWithOverrides(defaultScenarioYaml(), "<test>", ".", overrides);
    if (!r.ok())
        qWarning("%s", formatAll(r.diagnostics).c_str());
    return r.ok() ? *r.scenario : Scenario{};
}

bool near(double a, double b, double rel = 1e-9) {
    return std::fabs(a - b) <= rel * std::max({1e-12, std::fabs(a), std::fabs(b)});
}

/// Invariants every simulated step satisfies; returns an empty string or the first violation.
std::string checkInvariants(const Timeline& t) {
    if (!t.ok())
        return "error: " + t.error;
    if (!(t.step_time_s > 0) || !std::isfinite(t.step_time_s))
        return "step time " + std::to_string(t.step_time_s);
    if (t.critical_path.empty())
        return "no critical path";
    // The critical path is contiguous from 0 to the step's end.
    double at = 0, sum = 0;
    for (const CriticalStep& c : t.critical_path) {
        const Span& s = t.rows[static_cast<size_t>(c.row)].spans[static_cast<size_t>(c.span)];
        if (!near(s.start_s, at, 1e-9) && std::fabs(s.start_s - at) > 1e-12)
            return "critical path gap at " + std::to_string(at) + " -> " +
                   std::to_string(s.start_s);
        at = s.end_s;
    }
    if (!near(at, t.step_time_s))
        return "critical path ends at " + std::to_string(at);
    for (const double v : t.breakdown.seconds) {
        if (v < -1e-12 * t.step_time_s)
            return "negative breakdown item " + std::to_string(v);
        sum += v;
    }
    if (!near(sum, t.step_time_s, 1e-6) || !near(t.breakdown.total_s, t.step_time_s, 1e-6))
        return "breakdown items sum to " + std::to_string(sum);
    // Rows sorted by start, spans that start together in stream order; each stream's spans
    // never overlap; nothing past the step's end.
    for (const TimelineRow& row : t.rows) {
        double last_start = 0;
        int last_stream = 0;
        double stream_end[kTimelineStreamCount] = {};
        for (const Span& s : row.spans) {
            const int k = static_cast<int>(s.stream);
            if (s.start_s < last_start)
                return "row not sorted";
            if (s.start_s == last_start && k < last_stream)
                return "spans starting together not in stream order";
            last_start = s.start_s;
            last_stream = k;
            if (s.start_s < stream_end[k] - 1e-9 * t.step_time_s)
                return "stream overlap";
            stream_end[k] = s.end_s;
            if (s.end_s > t.step_time_s * (1 + 1e-12) || s.end_s < s.start_s)
                return "span outside the step";
        }
    }
    return {};
}

/// Compute of one micro-batch (forward + backward) on a stage at the mean load, as evaluate()
/// charges it.
double computeItems(const StepBreakdown& b) {
    return b[StepItem::attention] + b[StepItem::dense_ffn] + b[StepItem::router] +
           b[StepItem::expert_compute];
}

/// Per-layer compute (forward + backward) of an input's layer.
double layerCompute(const LayerCosts& k) {
    return k.attention_fwd_s + k.attention_bwd_s + k.ffn_fwd_s + k.ffn_bwd_s + k.router_fwd_s +
           k.router_bwd_s + k.expert_fwd_s + k.expert_bwd_s + k.lm_head_fwd_s + k.lm_head_bwd_s;
}

double layerAllToAll(const LayerCosts& k) {
    return k.dispatch_fwd_s + k.combine_fwd_s + k.combine_bwd_s + k.dispatch_bwd_s;
}

struct Run {
    int code = -1;
    QString out;
    QString err;
};

Run moePlan(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(MOE_PLAN_EXE), args);
    Run r;
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    if (p.exitStatus() == QProcess::NormalExit)
        r.code = p.exitCode();
    return r;
}

/// Structure of a Chrome trace: returns the number of "X" events, or -1 (with a warning).
int checkTrace(const QByteArray& json, const Timeline& t, const std::vector<int>& gpus) {
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject()) {
        qWarning("trace is not a JSON object: %s", qPrintable(error.errorString()));
        return -1;
    }
    const QJsonValue events_value = doc.object().value("traceEvents");
    if (!events_value.isArray()) {
        qWarning("no traceEvents array");
        return -1;
    }
    QSet<int> named_pids;
    QSet<QPair<int, int>> named_tids, used_tids;
    QSet<int> used_pids;
    int spans = 0;
    double last_end_us = 0;
    for (const QJsonValue& v : events_value.toArray()) {
        const QJsonObject e = v.toObject();
        const QString ph = e.value("ph").toString();
        const int pid = e.value("pid").toInt(-1);
        if (ph == "M") {
            const QString name = e.value("name").toString();
            if (name == "process_name" && e.value("args").toObject().contains("name"))
                named_pids.insert(pid);
            if (name == "thread_name" && e.value("args").toObject().contains("name"))
                named_tids.insert({pid, e.value("tid").toInt(-1)});
            continue;
        }
        if (ph != "X") {
            qWarning("unexpected phase %s", qPrintable(ph));
            return -1;
        }
        ++spans;
        const QJsonValue ts = e.value("ts"), dur = e.value("dur");
        if (!ts.isDouble() || !dur.isDouble() || ts.toDouble() < 0 || dur.toDouble() < 0 ||
            !e.value("pid").isDouble() || !e.value("tid").isDouble() ||
            e.value("name").toString().isEmpty()) {
            qWarning("bad X event");
            return -1;
        }
        const int tid = e.value("tid").toInt();
        const int gpu = tid / kTimelineStreamCount;
        if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end() || t.nodeOfGpu(gpu) != pid) {
            qWarning("event of GPU %d on process %d", gpu, pid);
            return -1;
        }
        const QJsonObject args = e.value("args").toObject();
        if (!args.contains("layer") || !args.contains("microbatch") || !args.contains("bytes")) {
            qWarning("event without layer / microbatch / bytes args");
            return -1;
        }
        used_pids.insert(pid);
        used_tids.insert({pid, tid});
        last_end_us = std::max(last_end_us, ts.toDouble() + dur.toDouble());
    }
    for (const int pid : used_pids)
        if (!named_pids.contains(pid)) {
            qWarning("process %d has no name", pid);
            return -1;
        }
    for (const auto& tid : used_tids)
        if (!named_tids.contains(tid)) {
            qWarning("thread %d has no name", tid.second);
            return -1;
        }
    // Microseconds: the last span ends at the step's end.
    if (!near(last_end_us, t.step_time_s * 1e6, 1e-6)) {
        qWarning("trace ends at %f us, the step at %f s", last_end_us, t.step_time_s);
        return -1;
    }
    return spans;
}

} // namespace

class TestTimeline : public QObject {
    Q_OBJECT

private slots:
    // ---- closed-form oracles -----------------------------------------------------------------

    void closedForms_data() {
        QTest::addColumn<int>("schedule");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("vpp");
        QTest::addColumn<int>("m");
        QTest::addColumn<double>("expected");
        // Two layers per chunk of F = 1, B = 2: a stage's micro-batch costs F+B = 6 (x vpp).
        // GPipe and 1F1B: (m + p - 1) * 6.
        const int gpipe = static_cast<int>(PipelineSchedule::gpipe);
        const int f1b1 = static_cast<int>(PipelineSchedule::one_f_one_b);
        const int inter = static_cast<int>(PipelineSchedule::interleaved);
        const int dual = static_cast<int>(PipelineSchedule::dualpipe);
        QTest::newRow("gpipe p4 m8") << gpipe << 4 << 1 << 8 << 66.0;
        QTest::newRow("gpipe p1 m3") << gpipe << 1 << 1 << 3 << 18.0;
        QTest::newRow("gpipe p8 m2") << gpipe << 8 << 1 << 2 << 54.0;
        QTest::newRow("1f1b p4 m8") << f1b1 << 4 << 1 << 8 << 66.0;
        QTest::newRow("1f1b p1 m5") << f1b1 << 1 << 1 << 5 << 30.0;
        QTest::newRow("1f1b p8 m2 (m < p)") << f1b1 << 8 << 1 << 2 << 54.0;
        QTest::newRow("1f1b p4 m1") << f1b1 << 4 << 1 << 1 << 24.0;
        QTest::newRow("1f1b p16 m64") << f1b1 << 16 << 1 << 64 << 474.0;
        // Interleaved: m * v*6 + (p - 1) * v*6 / v = m * 6v + (p - 1) * 6.
        QTest::newRow("interleaved p4 v2 m8") << inter << 4 << 2 << 8 << 114.0;
        QTest::newRow("interleaved p2 v3 m4") << inter << 2 << 3 << 4 << 78.0;
        QTest::newRow("interleaved p4 v2 m4 (all warm-up)") << inter << 4 << 2 << 4 << 66.0;
        QTest::newRow("interleaved p8 v4 m32") << inter << 8 << 4 << 32 << 810.0;
        QTest::newRow("interleaved p1 v2 m3") << inter << 1 << 2 << 3 << 36.0;
        QTest::newRow("interleaved v1 = 1f1b") << inter << 4 << 1 << 8 << 66.0;
        // DualPipe (F = 2, B = 4, W = B/2 = 2, F&B = F + B): m * 6 + (p/2 - 1)(6 + 4 - 6).
        QTest::newRow("dualpipe p2 m4") << dual << 2 << 1 << 4 << 24.0;
        QTest::newRow("dualpipe p4 m8") << dual << 4 << 1 << 8 << 52.0;
        QTest::newRow("dualpipe p8 m16") << dual << 8 << 1 << 16 << 108.0;
        QTest::newRow("dualpipe p16 m32") << dual << 16 << 1 << 32 << 220.0;
        QTest::newRow("dualpipe p4 m20") << dual << 4 << 1 << 20 << 124.0;
    }

    void closedForms() {
        QFETCH(int, schedule);
        QFETCH(int, pp);
        QFETCH(int, vpp);
        QFETCH(int, m);
        QFETCH(double, expected);
        const Timeline t =
            simulateTimeline(uniformInput(static_cast<PipelineSchedule>(schedule), pp, vpp, m));
        QVERIFY2(t.ok(), t.error.c_str());
        QCOMPARE(t.step_time_s, expected);
        const std::string problem = checkInvariants(t);
        QVERIFY2(problem.empty(), problem.c_str());
        // Every GPU (here: every row) computes m micro-batches forward and backward.
        for (const TimelineRow& row : t.rows) {
            double busy = 0;
            for (const Span& s : row.spans)
                busy += s.duration_s();
            QCOMPARE(busy, 6.0 * vpp * m);
        }
    }

    /// Uneven stages, one layer each with its own forward F_s and backward B_s (seeded random,
    /// 2-8 stages, 1-24 micro-batches): the simulated GPipe step is m t_pace + gpipeBubble_s,
    /// and, with the last stage made the slowest, the 1F1B step is m t_last +
    /// oneFOneBBubble_s (the other stages' t once; the derivation is in
    /// step_costs_communication.cpp).
    void unevenStageBubblesMatchTheOrder() {
        std::mt19937_64 rng(15);
        std::uniform_real_distribution<double> pass(0.1, 3.0);
        std::uniform_int_distribution<int> stages(2, 8), micro_batches(1, 24);
        for (int trial = 0; trial < 300; ++trial) {
            const int pp = stages(rng), m = micro_batches(rng);
            std::vector<double> forward(static_cast<size_t>(pp)), backward(forward);
            for (int st = 0; st < pp; ++st) {
                forward[static_cast<size_t>(st)] = pass(rng);
                backward[static_cast<size_t>(st)] = pass(rng);
            }
            const bool gpipe = trial % 2 == 0;
            std::vector<double> t(static_cast<size_t>(pp));
            for (size_t st = 0; st < t.size(); ++st)
                t[st] = forward[st] + backward[st];
            const size_t pace =
                static_cast<size_t>(std::max_element(t.begin(), t.end()) - t.begin());
            const double slowest = t[pace];
            if (!gpipe && t.back() < slowest) { // the case 1F1B's closed form is exact for
                backward.back() += slowest - t.back();
                t.back() = slowest;
            }
            TimelineInput in = uniformInput(
                gpipe ? PipelineSchedule::gpipe : PipelineSchedule::one_f_one_b, pp, 1, m, 1);
            for (int st = 0; st < pp; ++st) {
                LayerCosts& k = in.costs[static_cast<size_t>(st)];
                k.attention_fwd_s = forward[static_cast<size_t>(st)];
                k.attention_bwd_s = backward[static_cast<size_t>(st)];
                k.attention_wgrad_s = 0;
            }
            const Timeline sim = simulateTimeline(in);
            QVERIFY2(sim.ok(), sim.error.c_str());
            const double expected =
                gpipe ? m * t[pace] + gpipeBubble_s(forward, backward, m, static_cast<int>(pace))
                      : m * t.back() + oneFOneBBubble_s(t);
            QVERIFY2(near(sim.step_time_s, expected, 1e-12),
                     qPrintable(QString("trial %1 (%2, pp %3, m %4): simulated %5, closed form %6")
                                    .arg(trial)
                                    .arg(gpipe ? "gpipe" : "1f1b")
                                    .arg(pp)
                                    .arg(m)
                                    .arg(sim.step_time_s)
                                    .arg(expected)));
        }
    }

    /// The same closed forms with durations from evaluate(): the default MoE model on 4 stages,
    /// zero communication and uniform load, LM head and optimizer removed so the stages are
    /// identical; t = one stage's compute per micro-batch from StageResult::times.
    void scenarioClosedForms_data() {
        QTest::addColumn<QString>("schedule");
        QTest::addColumn<int>("vpp");
        QTest::newRow("gpipe") << "gpipe" << 1;
        QTest::newRow("1f1b") << "1f1b" << 1;
        QTest::newRow("interleaved") << "interleaved" << 2;
        QTest::newRow("dualpipe") << "dualpipe" << 1;
    }

    void scenarioClosedForms() {
        QFETCH(QString, schedule);
        QFETCH(int, vpp);
        const Scenario s =
            defaultWith({"layout.pp=4", "layout.dp=16", "training.recompute=none",
                         "layout.schedule=" + schedule.toStdString(),
                         "layout.vpp=" + std::to_string(vpp), "training.global_batch=256"});
        QCOMPARE(s.layout.pp, 4);
        const Report report = evaluate(s);
        TimelineOptions options;
        options.zero_communication = true;
        options.uniform_load = true;
        TimelineInput in = timelineInput(s, report, options);
        QCOMPARE(in.lanes, 1);
        for (LayerCosts& k : in.costs)
            k.lm_head_fwd_s = k.lm_head_bwd_s = 0;
        std::fill(in.optimizer_s.begin(), in.optimizer_s.end(), 0.0);
        const Timeline t = simulateTimeline(in, options);
        QVERIFY2(t.ok(), t.error.c_str());

        const LayerPassCosts& st = report.costs->layer;
        const MoeLayerPrice experts = report.costs->moe.price(1.0);
        const double layer = st.attention_fwd_s + st.attention_bwd_s + st.router_fwd_s +
                             st.router_bwd_s + st.shared_fwd_s + st.shared_bwd_s +
                             experts.expert_fwd_s + experts.expert_bwd_s;
        const double tmb = layer * 24 / 4; // 6 MoE layers per stage
        // DualPipe's B and W: the backward's and its weight gradients' shares of t.
        const double backward =
            st.attention_bwd_s + st.router_bwd_s + st.shared_bwd_s + experts.expert_bwd_s;
        const double weights =
            st.attention_wgrad_s + st.router_wgrad_s + st.shared_wgrad_s + experts.expert_wgrad_s;
        const double b = tmb * backward / layer, w = tmb * weights / layer;
        const double m = report.micro_batches;
        QCOMPARE(report.micro_batches, 256 / (16 * 2));
        const double p = 4;
        double expected = 0;
        if (schedule == "interleaved")
            expected = m * tmb + (p - 1) * tmb / vpp;
        else if (schedule == "dualpipe")
            expected = m * tmb + (p / 2 - 1) * (tmb + b - 3.0 * w); // (F&B + B - 3W)
        else
            expected = (m + p - 1) * tmb;
        // DualPipe: the paper's bubble is exact when W = F (a model of GEMMs alone); with less
        // of the backward in W the simulated schedule's ends save up to one forward chunk
        // (p = 4..16, F = 1, B = 2..3, W = 0.2..1: 0 to 1 F shorter), so the closed form is
        // an upper bound within F.
        if (schedule == "dualpipe")
            QVERIFY2(t.step_time_s <= expected * (1 + 1e-12) &&
                         t.step_time_s >= expected - (tmb - b) - 1e-12,
                     qPrintable(QString("%1 vs %2").arg(t.step_time_s, 0, 'g', 17).arg(expected)));
        else
            QVERIFY2(near(t.step_time_s, expected, 1e-12),
                     qPrintable(QString("%1 vs %2").arg(t.step_time_s, 0, 'g', 17).arg(expected)));
        // evaluate()'s own bubble formula agrees on the same t and shares.
        if (schedule == "dualpipe")
            QVERIFY(
                near(expected - m * tmb,
                     pipelineBubble_s(s.layout, tmb, {1.0 - backward / layer, weights / layer})));
    }

    /// Unequal stages (the last holds the LM head): 1F1B and GPipe take m * t_last plus the
    /// other stages once, with t from evaluate()'s per-micro-batch items.
    void unequalStages() {
        for (const char* schedule : {"1f1b", "gpipe"}) {
            const Scenario s = defaultWith({"layout.pp=4", "layout.dp=16",
                                            std::string("layout.schedule=") + schedule,
                                            "training.global_batch=256"});
            const Report report = evaluate(s);
            TimelineOptions options;
            options.zero_communication = true;
            options.uniform_load = true;
            TimelineInput in = timelineInput(s, report, options);
            std::fill(in.optimizer_s.begin(), in.optimizer_s.end(), 0.0);
            const Timeline t = simulateTimeline(in, options);
            QVERIFY2(t.ok(), t.error.c_str());
            double expected = report.micro_batches * computeItems(report.stages[3].per_micro_batch);
            for (int st = 0; st < 3; ++st)
                expected += computeItems(report.stages[static_cast<size_t>(st)].per_micro_batch);
            QVERIFY2(
                near(t.step_time_s, expected, 1e-12),
                qPrintable(QString("%1: %2 vs %3").arg(schedule).arg(t.step_time_s).arg(expected)));
        }
    }

    // ---- durations from the performance model --------------------------------------------------

    void durationsMatchEvaluate_data() {
        QTest::addColumn<QString>("file");
        for (const char* f : {"dgx-h100-8x8-moe16.yaml", "mixtral-8x7b-32xh100.yaml",
                              "dense-70b-64xh100.yaml", "deepseek-v3-2048xh800.yaml"})
            QTest::newRow(f) << QString(f);
    }

    void durationsMatchEvaluate() {
        QFETCH(QString, file);
        const LoadResult r = loadScenarioFile(moe::test::samplePath(file.toStdString()));
        QVERIFY(r.ok());
        const Scenario& s = *r.scenario;
        const Report report = evaluate(s);
        TimelineOptions uniform;
        uniform.uniform_load = true;
        const TimelineInput mean = timelineInput(s, report, uniform);
        const TimelineInput sampled = timelineInput(s, report);
        QCOMPARE(static_cast<int>(report.stages.size()), mean.pp);
        const bool dualpipe = s.layout.schedule == PipelineSchedule::dualpipe;
        for (const StageResult& st : report.stages) {
            double compute = 0, a2a = 0, tp = 0, cp = 0;
            // Each lane (EP group) runs the stage's layers at its own busiest rank's pace;
            // evaluate() charges the lane whose extra over the mean adds up to the most.
            std::vector<double> lane_extra(static_cast<size_t>(sampled.lanes), 0.0);
            for (const int l : st.layers.layer_indices) {
                const LayerCosts& k = mean.costs[static_cast<size_t>(l)];
                compute += layerCompute(k);
                a2a += layerAllToAll(k);
                tp += 2 * (k.tp_fwd_s + k.tp_bwd_s);
                cp += k.cp_fwd_s + k.cp_bwd_s;
                if (!k.moe)
                    continue;
                for (int lane = 0; lane < sampled.lanes; ++lane) {
                    const LayerCosts& h =
                        sampled.costs[static_cast<size_t>(lane) * sampled.layers + l];
                    lane_extra[static_cast<size_t>(lane)] +=
                        h.expert_fwd_s + h.expert_bwd_s + layerAllToAll(h) -
                        (k.expert_fwd_s + k.expert_bwd_s + layerAllToAll(k));
                }
            }
            const double hot_extra =
                lane_extra.empty() ? 0.0 : *std::max_element(lane_extra.begin(), lane_extra.end());
            const StepBreakdown& b = st.per_micro_batch;
            QVERIFY2(near(compute, computeItems(b)), qPrintable(QString("stage %1 compute %2 vs %3")
                                                                    .arg(st.layers.stage)
                                                                    .arg(compute)
                                                                    .arg(computeItems(b))));
            const auto total = [&](StepItem i) {
                return b[i] + b.overlapped_s[static_cast<size_t>(i)];
            };
            QVERIFY(near(a2a, total(StepItem::all_to_all)));
            QVERIFY(near(tp, total(StepItem::tp_comm)));
            QVERIFY(near(cp, total(StepItem::cp_comm)));
            if (!dualpipe) // all-to-alls are exposed: imbalance = the hot lane's extra
                QVERIFY2(near(hot_extra, b[StepItem::imbalance_wait], 1e-6),
                         qPrintable(QString("stage %1 hot extra %2 vs imbalance %3")
                                        .arg(st.layers.stage)
                                        .arg(hot_extra)
                                        .arg(b[StepItem::imbalance_wait])));
            QCOMPARE(mean.optimizer_s[static_cast<size_t>(st.layers.stage)],
                     report.costs->stages[static_cast<size_t>(st.layers.stage)].sync.optimizer_s);
        }
        QCOMPARE(mean.pp_send_s, report.costs->pp_send_s);
        // The gradient buckets of a stage add up to its sync.
        for (const StageResult& st : report.stages) {
            double sync = 0, gather = 0;
            for (const int l : st.layers.layer_indices) {
                sync += mean.costs[static_cast<size_t>(l)].grad_sync_s;
                gather += mean.costs[static_cast<size_t>(l)].param_gather_s;
            }
            const StageSync& ss = report.costs->stages[static_cast<size_t>(st.layers.stage)].sync;
            QVERIFY(near(sync, ss.dp_grad_s + ss.edp_grad_s));
            QVERIFY(near(gather, ss.dp_gather_s + ss.edp_gather_s));
        }
    }

    /// The one accounting, on every shipped sample (subfolders included): evaluate()'s closed
    /// form within 2% of the simulated step, and every item of its breakdown within 3% of the
    /// step (or 20 ms) of the simulated breakdown. The table is printed for the record.
    /// evaluate()'s closed form against the simulated step of `scenario`: the step within 2%,
    /// every item within 3% of the step (or 20 ms).
    static void compareClosedForm(const Scenario& scenario, const std::string& label) {
        const Report report = evaluate(scenario);
        const Timeline t = simulateTimeline(scenario, report);
        const std::string problem = checkInvariants(t);
        QVERIFY2(problem.empty(), (label + ": " + problem).c_str());
        const double error = report.step_time_s / t.step_time_s - 1.0;
        double worst_s = 0;
        StepItem worst = StepItem::attention;
        for (int i = 0; i < kStepItemCount; ++i) {
            const auto k = static_cast<StepItem>(i);
            const double gap = std::fabs(report.step[k] - t.breakdown[k]);
            if (gap > worst_s) {
                worst_s = gap;
                worst = k;
            }
        }
        qInfo("%-40s %-11s simulated %8.3f s  evaluate %8.3f s  %+5.2f%%  worst item %s "
              "%+.1f ms",
              label.c_str(), toString(scenario.layout.schedule), t.step_time_s, report.step_time_s,
              100.0 * error, keyOf(worst), 1e3 * (report.step[worst] - t.breakdown[worst]));
        QVERIFY2(std::fabs(error) <= 0.02, qPrintable(QString("%1: step %2 s simulated, %3 s "
                                                              "evaluated")
                                                          .arg(QString::fromStdString(label))
                                                          .arg(t.step_time_s)
                                                          .arg(report.step_time_s)));
        const double tolerance = std::max(0.03 * t.step_time_s, 0.020);
        for (int i = 0; i < kStepItemCount; ++i) {
            const auto k = static_cast<StepItem>(i);
            QVERIFY2(std::fabs(report.step[k] - t.breakdown[k]) <= tolerance,
                     qPrintable(QString("%1: %2 simulated %3 s, evaluated %4 s")
                                    .arg(QString::fromStdString(label))
                                    .arg(keyOf(k))
                                    .arg(t.breakdown[k])
                                    .arg(report.step[k])));
        }
    }

    void closedFormAgreesWithSimulation() {
        int checked = 0;
        for (const std::string& file : moe::test::sampleFiles()) {
            const LoadResult r = loadScenarioFile(file);
            QVERIFY2(r.ok(), file.c_str());
            compareClosedForm(*r.scenario, file);
            if (QTest::currentTestFailed())
                return;
            ++checked;
        }
        QVERIFY(checked >= 10);
    }

    /// Uneven pipelines (layout.first_stage_layers / last_stage_layers) under 1F1B, interleaved
    /// and DualPipe, with the MTP module on the last stage: the closed form agrees with the
    /// simulated step. GPT-3 175B (96 layers, PP16): 5 + 14 x 6 + 7 = 96; interleaved vpp 2
    /// splits the end stages 3 + 2 and 4 + 3. DeepSeek-V3 (61 layers, PP16): 2 + 14 x 4 + 3.
    void unevenStagesClosedFormAgrees() {
        struct Case {
            const char* sample;
            std::vector<FieldAssignment> fields;
        };
        const Case cases[] = {
            {"dgx-a100-1024-gpt3-175b",
             {{"layout.first_stage_layers", int64_t{5}}, {"layout.last_stage_layers", int64_t{7}}}},
            {"dgx-a100-1024-gpt3-175b",
             {{"layout.first_stage_layers", int64_t{5}},
              {"layout.last_stage_layers", int64_t{7}},
              {"layout.schedule", std::string("interleaved")},
              {"layout.vpp", int64_t{2}}}},
            {"deepseek-v3-2048xh800",
             {{"layout.first_stage_layers", int64_t{2}}, {"layout.last_stage_layers", int64_t{3}}}},
            {"deepseek-v3-2048xh800",
             {{"layout.schedule", std::string("1f1b")}, {"model.mtp_layers", int64_t{0}}}},
            // The last stage (3 layers, MTP, LM head) is the slowest: 1F1B's bubble is the
            // other stages' t once (+3.2% on the step under the old (p - 1) t).
            {"deepseek-v3-2048xh800",
             {{"layout.schedule", std::string("1f1b")},
              {"layout.first_stage_layers", int64_t{2}},
              {"layout.last_stage_layers", int64_t{3}}}},
        };
        for (const Case& c : cases) {
            const std::string file = moe::test::samplePath(std::string(c.sample) + ".yaml");
            const LoadResult r = loadScenarioFile(file);
            QVERIFY2(r.ok(), file.c_str());
            const FieldEditResult edited = setFields(*r.scenario, c.fields);
            QVERIFY2(edited.ok(), formatAll(edited.diagnostics).c_str());
            compareClosedForm(*edited.scenario, std::string(c.sample) + " uneven");
            if (QTest::currentTestFailed())
                return;
        }
    }

    /// A fused DualPipe pair alternates its passes' segments (DeepSeek-V3 report, figure 4):
    ///     compute:  F attention | B experts  | F experts  | B attention
    ///     transfer: B combine   | F dispatch | B dispatch | F combine
    /// A TP = 1 layer's TP collectives take no time and must not cut the passes into more
    /// segments (they once did, queueing the backward dispatch before the forward one).
    void dualPipePairSegments() {
        TimelineInput in = uniformInput(PipelineSchedule::dualpipe, 2, 1, 4, 1);
        for (LayerCosts& k : in.costs) {
            k.moe = true;
            k.expert_fwd_s = 1.0;
            k.expert_bwd_s = 2.0;
            k.expert_wgrad_s = 1.0;
            k.dispatch_fwd_s = k.combine_fwd_s = k.dispatch_bwd_s = k.combine_bwd_s = 0.5;
        }
        const Timeline t = simulateTimeline(in);
        const std::string problem = checkInvariants(t);
        QVERIFY2(problem.empty(), problem.c_str());
        // Stage 0's all-to-alls in start order; a fused pair's four form the pattern.
        std::vector<std::pair<SpanKind, bool>> transfers;
        for (const Span& span : t.rows[0].spans)
            if (span.kind == SpanKind::dispatch || span.kind == SpanKind::combine)
                transfers.emplace_back(span.kind, span.backward);
        const std::vector<std::pair<SpanKind, bool>> pair_order = {{SpanKind::combine, true},
                                                                   {SpanKind::dispatch, false},
                                                                   {SpanKind::dispatch, true},
                                                                   {SpanKind::combine, false}};
        int pairs = 0;
        for (size_t i = 0; i + pair_order.size() <= transfers.size(); ++i)
            if (std::equal(pair_order.begin(), pair_order.end(), transfers.begin() + i))
                ++pairs;
        // m = 4 on pp = 2: one forward of the four is fused with a backward on each rank.
        QCOMPARE(pairs, 1);
    }

    /// With TP > 1 the TP collectives cut DualPipe's segments and hide under the other pass's
    /// compute, in the simulation and in evaluate's pair model alike: TP = 2 and 4 variants of
    /// the DeepSeek sample agree as closely as the TP = 1 samples, with the all-to-all inside a
    /// few nodes (EP = 8) and across the fabric (EP = 64).
    void dualPipeTensorParallelAgreesWithEvaluate_data() {
        QTest::addColumn<QStringList>("overrides");
        QTest::newRow("tp2-ep8") << QStringList{"layout.tp=2",  "layout.pp=16",
                                                "layout.dp=64", "layout.ep=8",
                                                "layout.etp=2", "training.recompute=none"};
        QTest::newRow("tp2-ep64") << QStringList{"layout.tp=2", "layout.dp=64"};
        QTest::newRow("tp4-ep64") << QStringList{"layout.tp=4", "layout.dp=32"};
    }
    void dualPipeTensorParallelAgreesWithEvaluate() {
        QFETCH(QStringList, overrides);
        std::vector<std::string> sets;
        for (const QString& o : overrides)
            sets.push_back(o.toStdString());
        const LoadResult r =
            loadScenarioWithOverrides(moe::test::samplePath("deepseek-v3-2048xh800.yaml"), sets);
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        QCOMPARE(r.scenario->layout.schedule, PipelineSchedule::dualpipe);
        const Report report = evaluate(*r.scenario);
        QVERIFY(report.step[StepItem::tp_comm] > 0);
        QVERIFY(report.step.overlapped_s[static_cast<int>(StepItem::tp_comm)] > 0);
        const Timeline t = simulateTimeline(*r.scenario, report);
        QVERIFY2(t.ok(), t.error.c_str());
        const double ratio = t.step_time_s / report.step_time_s;
        QVERIFY2(ratio > 0.95 && ratio < 1.05, qPrintable(QString("simulated %1 s, evaluate %2 s")
                                                              .arg(t.step_time_s)
                                                              .arg(report.step_time_s)));
    }

    // ---- gradient sync and skew ----------------------------------------------------------------

    void dpSyncExposed() {
        // One stage, two micro-batches, two layers of F = 1, B = 2. Compute ends at 12:
        // F0 [0,2], B0 [2,6], F1 [6,8], B1: L1 [8,10], L0 [10,12].
        TimelineInput in = uniformInput(PipelineSchedule::one_f_one_b, 1, 1, 2);
        in.optimizer_s = {1.0};
        auto item = [](const Timeline& t, StepItem i) { return t.breakdown[i]; };
        // A short sync hides behind backward except its last bucket: L1's reduce-scatter
        // [10,11] under L0's backward, L0's [12,13], optimizer [13,14]. The breakdown: 12 s of
        // attention, 1 s of exposed sync, 1 s of optimizer.
        for (LayerCosts& k : in.costs)
            k.grad_sync_s = 1.0;
        Timeline t = simulateTimeline(in);
        QVERIFY2(t.ok(), t.error.c_str());
        QCOMPARE(t.step_time_s, 14.0);
        QCOMPARE(item(t, StepItem::dp_sync), 1.0);
        QCOMPARE(item(t, StepItem::attention), 12.0);
        QCOMPARE(item(t, StepItem::optimizer), 1.0);
        QCOMPARE(t.breakdown.overlapped_s[static_cast<int>(StepItem::dp_sync)], 1.0);
        QVERIFY(checkInvariants(t).empty());
        // Longer than the backward window: L1 [10,20], L0 [20,30], optimizer [30,31]. Both
        // buckets are on the critical path, but 2 s of L1's ran beside L0's backward: the
        // compute is charged to attention (12 s) and the sync with what it adds after the last
        // backward, 18 s, the time the GPU waits for it.
        for (LayerCosts& k : in.costs)
            k.grad_sync_s = 10.0;
        t = simulateTimeline(in);
        QCOMPARE(t.step_time_s, 31.0);
        QCOMPARE(item(t, StepItem::dp_sync), 18.0);
        QCOMPARE(item(t, StepItem::optimizer), 1.0);
        QCOMPARE(item(t, StepItem::attention), 12.0);
        const Span& last = t.rows[0].spans[static_cast<size_t>(t.critical_path.back().span)];
        QCOMPARE(last.kind, SpanKind::optimizer);
        const CriticalStep& before = t.critical_path[t.critical_path.size() - 2];
        QCOMPARE(t.rows[0].spans[static_cast<size_t>(before.span)].kind, SpanKind::grad_sync);
        QVERIFY(checkInvariants(t).empty());
        // The weights' all-gather at the start: L0 [0,5] then L1 [5,10]; L0's first forward
        // waits 5, L1's waits until 10: 9 s exposed (L0's forward hides 1 s of L1's gather).
        for (LayerCosts& k : in.costs) {
            k.grad_sync_s = 0;
            k.param_gather_s = 5.0;
        }
        in.optimizer_s = {0.0};
        t = simulateTimeline(in);
        QCOMPARE(t.step_time_s, 21.0);
        QCOMPARE(item(t, StepItem::dp_sync), 9.0);
        QCOMPARE(item(t, StepItem::attention), 12.0);
        QVERIFY(checkInvariants(t).empty());
        // No DP overlap: both reduce-scatters (1 s each) start after the last backward
        // [12,13], [13,14], the optimizer (1 s + a 0.5 s norm all-reduce) [14,15.5], then both
        // gathers (5 s each) [15.5,25.5]; the forwards no longer wait for them.
        for (LayerCosts& k : in.costs)
            k.grad_sync_s = 1.0;
        in.optimizer_s = {1.0};
        in.grad_norm_s = 0.5;
        in.dp_overlap = DpOverlap::none;
        t = simulateTimeline(in);
        QVERIFY2(t.ok(), t.error.c_str());
        QCOMPARE(t.step_time_s, 25.5);
        QCOMPARE(item(t, StepItem::dp_sync), 12.0);
        QCOMPARE(item(t, StepItem::optimizer), 1.5);
        QCOMPARE(item(t, StepItem::attention), 12.0);
        QVERIFY(checkInvariants(t).empty());
    }

    /// Combined 1F1B (training.ep_overlap) without a pipeline and interleaved: the simulated
    /// schedule pairs the steady state's passes, agrees with the closed form, and exposes less
    /// all-to-all than the same layout without the overlap (an EP all-to-all over a slow
    /// NIC, so there is something to hide).
    void combinedOneFOneBAgrees() {
        const std::vector<std::vector<std::string>> layouts = {
            {},
            {"layout.pp=2", "layout.dp=32", "layout.vpp=2", "layout.schedule=interleaved",
             "training.global_batch=2048"}};
        for (const std::vector<std::string>& layout : layouts) {
            std::vector<std::string> base = layout;
            base.push_back("layout.order=tp-cp-dp-ep-pp");
            base.push_back("cluster.scale_out.bandwidth_gbps=50");
            std::vector<std::string> overlapped = base;
            overlapped.push_back("training.ep_overlap=combined-1f1b");
            const Scenario plain = defaultWith(base);
            const Scenario paired = defaultWith(overlapped);
            QVERIFY(paired.training.ep_overlap == EpOverlap::combined_1f1b);
            compareClosedForm(paired, "combined 1F1B pp " + std::to_string(paired.layout.pp));
            const Report a = evaluate(plain), b = evaluate(paired);
            QVERIFY(b.step[StepItem::all_to_all] < 0.8 * a.step[StepItem::all_to_all]);
            const Timeline t = simulateTimeline(paired, b);
            int pairs = 0;
            for (const Span& span : t.rows[0].spans)
                pairs += span.kind == SpanKind::weight_grad ? 1 : 0;
            QVERIFY2(pairs > 0, "the steady state runs split (paired) backwards");
        }
    }

    /// Each DP overlap on a scenario: the simulated step's ends agree with evaluate's closed
    /// form (stepEnds), norm barrier included.
    void dpOverlapAgreesWithEvaluate() {
        for (const char* overlap : {"none", "grad-reduce", "grad-reduce-and-param-gather"}) {
            const Scenario s = defaultWith({std::string("training.dp_overlap=") + overlap,
                                            "cluster.scale_out.bandwidth_gbps=20"});
            const Report report = evaluate(s);
            TimelineOptions options;
            options.uniform_load = true;
            const Timeline t = simulateTimeline(s, report, options);
            QVERIFY2(t.ok(), t.error.c_str());
            QVERIFY(checkInvariants(t).empty());
            const Report even =
                evaluate(defaultWith({std::string("training.dp_overlap=") + overlap,
                                      "cluster.scale_out.bandwidth_gbps=20",
                                      "routing.model=uniform", "routing.balance=1"}));
            QVERIFY2(std::abs(t.breakdown[StepItem::optimizer] - even.step[StepItem::optimizer]) <=
                         1e-6 * even.step_time_s,
                     overlap);
        }
    }

    /// A scenario whose gradient sync cannot hide (a slow NIC): its exposed part is on the
    /// critical path, after the last backward.
    void dpSyncExposedScenario() {
        const Scenario s = defaultWith({"cluster.scale_out.bandwidth_gbps=2"});
        const Report report = evaluate(s);
        const Timeline t = simulateTimeline(s, report);
        QVERIFY(checkInvariants(t).empty());
        double last_compute = 0, optimizer = 0;
        for (const TimelineRow& row : t.rows)
            for (const Span& span : row.spans) {
                if (span.kind == SpanKind::optimizer)
                    optimizer = std::max(optimizer, span.duration_s());
                else if (span.stream == TimelineStream::compute)
                    last_compute = std::max(last_compute, span.end_s);
            }
        const double exposed = t.step_time_s - optimizer - last_compute;
        QVERIFY(exposed > 0.1 * t.step_time_s);
        QVERIFY(t.breakdown[StepItem::dp_sync] >= exposed * (1 - 1e-9));
        QVERIFY(report.step[StepItem::dp_sync] > 0); // evaluate() agrees it is exposed
    }

    void skewLengthensStep() {
        // One stage, 8 lanes (expert-DP replicas): with zero communication each lane computes
        // alone, so the skewed step exceeds the uniform one by the hottest lane's extra expert
        // time over the micro-batches.
        const Scenario s = defaultScenario();
        const Report report = evaluate(s);
        TimelineOptions uniform;
        uniform.zero_communication = true;
        uniform.uniform_load = true;
        TimelineOptions skewed;
        skewed.zero_communication = true;
        const Timeline tu = simulateTimeline(s, report, uniform);
        const TimelineInput in = timelineInput(s, report, skewed);
        const Timeline ts = simulateTimeline(in, skewed);
        QVERIFY(checkInvariants(tu).empty());
        QVERIFY(checkInvariants(ts).empty());
        QCOMPARE(tu.rows.size(), size_t(1));
        QCOMPARE(ts.rows.size(), size_t(8));
        const MoeLayerPrice st = report.costs->moe.price(1.0);
        double hottest_extra = 0;
        int hottest_lane = 0;
        for (int lane = 0; lane < in.lanes; ++lane) {
            double extra = 0;
            for (int l = 0; l < in.layers; ++l) {
                const LayerCosts& k = in.costs[static_cast<size_t>(lane) * in.layers + l];
                extra += k.expert_fwd_s + k.expert_bwd_s - st.expert_fwd_s - st.expert_bwd_s;
            }
            if (extra > hottest_extra) {
                hottest_extra = extra;
                hottest_lane = lane;
            }
        }
        QVERIFY(hottest_extra > 0);
        const double added = ts.step_time_s - tu.step_time_s;
        QVERIFY2(
            near(added, report.micro_batches * hottest_extra, 1e-9),
            qPrintable(QString("%1 vs %2").arg(added).arg(report.micro_batches * hottest_extra)));
        // In the breakdown the extra shows as imbalance wait (the hottest lane is the
        // reference row: the critical path runs through it).
        QCOMPARE(ts.rows[static_cast<size_t>(ts.reference_row)].lane, hottest_lane);
        QVERIFY(near(ts.breakdown[StepItem::imbalance_wait], report.micro_batches * hottest_extra,
                     1e-6));

        // Per GPU: in the hottest lane's EP groups, per layer the GPU holding the most tokens
        // computes the whole expert span, the others compute their own load and wait.
        const Placement& pl = *report.placement;
        const ExpertLoad& load = report.load;
        int checked = 0;
        for (int g = 0; g < report.gpus; ++g) {
            if (ts.rowOfGpu(g) != hottest_lane)
                continue;
            const std::vector<Span> spans = ts.spansForGpu(g);
            const TimelineRow& row = ts.rows[static_cast<size_t>(hottest_lane)];
            QCOMPARE(spans.size(),
                     row.spans.size() + static_cast<size_t>(std::count_if(
                                            spans.begin(), spans.end(), [](const Span& x) {
                                                return x.kind == SpanKind::wait;
                                            })));
            double own_busy = 0, wait = 0, row_busy = 0;
            for (const Span& x : spans)
                (x.kind == SpanKind::wait ? wait : own_busy) += x.duration_s();
            for (const Span& x : row.spans)
                row_busy += x.duration_s();
            QVERIFY(near(own_busy + wait, row_busy, 1e-9)); // same span, split
            for (int lm = 0; lm < load.moe_layers; ++lm) {
                const int group = pl.coordsOf(g).edp % load.sampled_groups;
                double most = 0;
                for (int rank = 0; rank < load.ep; ++rank)
                    most = std::max(
                        most,
                        load.rank_tokens[(static_cast<size_t>(lm) * load.sampled_groups + group) *
                                             load.ep +
                                         rank]);
                const double own = load.gpuTokens(pl, g, lm);
                const double share = ts.expertShare(g, lm + s.model.dense_layers);
                if (own == most)
                    QCOMPARE(share, 1.0);
                else
                    QVERIFY(share < 1.0);
                ++checked;
            }
        }
        QVERIFY(checked > 0);
    }

    // ---- termination and bad input -------------------------------------------------------------

    void everyScheduleOnEverySample() {
        for (const std::string& file : moe::test::sampleFiles()) {
            int ran = 0;
            for (const char* schedule : {"gpipe", "1f1b", "interleaved", "dualpipe"}) {
                std::vector<std::string> o = {std::string("layout.schedule=") + schedule};
                if (std::string(schedule) != "interleaved")
                    o.push_back("layout.vpp=1");
                const LoadResult r = loadScenarioWithOverrides(file, o);
                if (!r.ok())
                    continue; // e.g. DualPipe with an odd pp: a load-time error
                const Report report = evaluate(*r.scenario);
                const Timeline t = simulateTimeline(*r.scenario, report);
                const std::string problem = checkInvariants(t);
                QVERIFY2(problem.empty(), (file + " " + schedule + ": " + problem).c_str());
                ++ran;
            }
            QVERIFY2(ran >= 2, file.c_str());
        }
    }

    /// The simulation reuses memory: its operation arrays stay with the thread and a dropped
    /// timeline's span arrays go to the next one. Whatever ran before, the same input gives the
    /// same spans, in a larger and in a smaller step than the one before it.
    void reusedMemoryGivesTheSameTimeline() {
        auto spansOf = [](const Timeline& t) {
            std::vector<std::vector<Span>> rows;
            for (const TimelineRow& row : t.rows)
                rows.push_back(row.spans);
            return rows;
        };
        auto same = [](const std::vector<Span>& a, const std::vector<Span>& b) {
            if (a.size() != b.size())
                return false;
            for (size_t i = 0; i < a.size(); ++i)
                if (a[i].start_s != b[i].start_s || a[i].end_s != b[i].end_s ||
                    a[i].kind != b[i].kind || a[i].layer != b[i].layer ||
                    a[i].microbatch != b[i].microbatch || a[i].bytes != b[i].bytes)
                    return false;
            return true;
        };
        const Scenario small = defaultWith({});
        const Scenario large = defaultWith({"training.global_batch=2048"});
        const Report small_report = evaluate(small);
        const Report large_report = evaluate(large);
        std::vector<std::vector<Span>> first_small, first_large;
        {
            const Timeline t = simulateTimeline(small, small_report);
            QVERIFY(t.ok());
            first_small = spansOf(t);
        }
        {
            const Timeline t = simulateTimeline(large, large_report);
            QVERIFY(t.ok());
            QVERIFY(t.operations > 2 * [&] {
                size_t n = 0;
                for (const auto& row : first_small)
                    n += row.size();
                return n;
            }());
            first_large = spansOf(t);
        }
        for (int round = 0; round < 2; ++round) {
            const Timeline a = simulateTimeline(small, small_report);
            const Timeline copy = a; // copies die too: their arrays go to the store as well
            QCOMPARE(a.rows.size(), first_small.size());
            for (size_t r = 0; r < a.rows.size(); ++r)
                QVERIFY2(same(a.rows[r].spans, first_small[r]), std::to_string(r).c_str());
            const Timeline b = simulateTimeline(large, large_report);
            QCOMPARE(b.rows.size(), first_large.size());
            for (size_t r = 0; r < b.rows.size(); ++r)
                QVERIFY2(same(b.rows[r].spans, first_large[r]), std::to_string(r).c_str());
        }
    }

    void randomScenarios() {
        uint64_t state = 0x9e3779b97f4a7c15ULL;
        auto next = [&](int n) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            return static_cast<int>(state % static_cast<uint64_t>(n));
        };
        auto pick = [&](std::initializer_list<const char*> options) {
            return std::string(*(options.begin() + next(static_cast<int>(options.size()))));
        };
        int valid = 0, attempts = 0;
        std::set<std::string> schedules;
        while (valid < 60 && attempts < 3000) {
            ++attempts;
            const int tp = 1 << next(3), cp = 1 << next(2), pp = 1 << next(4);
            const int dp = 64 / (tp * cp * pp);
            if (dp < 1 || tp * cp * pp * dp != 64)
                continue;
            std::vector<std::string> o = {
                "layout.tp=" + std::to_string(tp),
                "layout.cp=" + std::to_string(cp),
                "layout.pp=" + std::to_string(pp),
                "layout.dp=" + std::to_string(dp),
                "layout.ep=" + pick({"1", "2", "4", "8"}),
                "layout.schedule=" + pick({"gpipe", "1f1b", "interleaved", "dualpipe"}),
                "layout.vpp=" + pick({"1", "2", "3"}),
                "layout.order=" + pick({"tp-cp-ep-dp-pp", "tp-cp-dp-ep-pp", "tp-ep-cp-dp-pp"}),
                "model.layers=" + pick({"8", "12", "16", "24"}),
                "model.dense_layers=" + pick({"0", "1", "2"}),
                "model.ffn_hidden=" + pick({"14336", "8192"}),
                "training.global_batch=" + pick({"64", "128", "256", "512"}),
                "training.micro_batch=" + pick({"1", "2"}),
                "training.recompute=" + pick({"none", "selective", "full"}),
                "training.zero_stage=" + pick({"0", "1"}),
                "routing.balance=" + pick({"0", "0.5", "1"}),
            };
            const LoadResult r =
                loadScenarioTextWithOverrides(defaultScenarioYaml(), "<random>", ".", o);
            if (!r.ok())
                continue;
            const Report report = evaluate(*r.scenario);
            const Timeline t = simulateTimeline(*r.scenario, report);
            std::string all;
            for (const std::string& x : o)
                all += x + " ";
            const std::string problem = checkInvariants(t);
            QVERIFY2(problem.empty(), (all + ": " + problem).c_str());
            // Every GPU has a schedule.
            for (int g = 0; g < report.gpus; g += 7)
                QVERIFY(!t.spansForGpu(g).empty());
            schedules.insert(toString(r.scenario->layout.schedule));
            ++valid;
        }
        QVERIFY2(valid >= 30, qPrintable(QString("only %1 valid random scenarios").arg(valid)));
        QCOMPARE(schedules.size(), size_t(4));
    }

    void rejectsUnrunnableSchedules() {
        // Interleaved with layers that do not split into pp*vpp equal chunks.
        LoadResult r = loadScenarioTextWithOverrides(
            defaultScenarioYaml(), "<test>", ".",
            {"layout.schedule=interleaved", "layout.pp=2", "layout.dp=32", "layout.vpp=5"});
        QVERIFY(!r.ok());
        QVERIFY(QString::fromStdString(formatAll(r.diagnostics)).contains("not divisible by"));
        // More stages than layers.
        r = loadScenarioTextWithOverrides(defaultScenarioYaml(), "<test>", ".",
                                          {"model.layers=4", "layout.pp=8", "layout.dp=8"});
        QVERIFY(!r.ok());
        QVERIFY(QString::fromStdString(formatAll(r.diagnostics))
                    .contains("layout.pp*vpp = 8 exceeds model.layers = 4"));
        // DualPipe with an odd pp or too few micro-batches.
        r = loadScenarioTextWithOverrides(defaultScenarioYaml(), "<test>", ".",
                                          {"layout.schedule=dualpipe", "layout.pp=2",
                                           "layout.dp=32", "training.global_batch=64"});
        QVERIFY(!r.ok());
        QVERIFY(QString::fromStdString(formatAll(r.diagnostics)).contains("at least 2*layout.pp"));

        // Hand-built inputs the simulator cannot run are errors, never hangs or crashes.
        TimelineInput in = uniformInput(PipelineSchedule::dualpipe, 4, 1, 9);
        Timeline t = simulateTimeline(in);
        QVERIFY(!t.ok());
        QVERIFY(QString::fromStdString(t.error).contains("even number of micro-batches"));
        in = uniformInput(PipelineSchedule::interleaved, 4, 2, 6);
        QVERIFY(QString::fromStdString(simulateTimeline(in).error).contains("divisible by pp"));
        in = uniformInput(PipelineSchedule::one_f_one_b, 4, 1, 8);
        in.chunk_first = {0, 2, 2, 6, 8}; // chunk 1 empty
        QVERIFY(QString::fromStdString(simulateTimeline(in).error).contains("holds no layer"));
        in = uniformInput(PipelineSchedule::one_f_one_b, 4, 1, 8);
        TimelineOptions tiny;
        tiny.max_operations = 100;
        QVERIFY(QString::fromStdString(simulateTimeline(in, tiny).error).contains("limit"));
        in.costs.pop_back();
        QVERIFY(!simulateTimeline(in).ok());
    }

    // ---- queries -------------------------------------------------------------------------------

    void everyGpuAnswerable() {
        const LoadResult r = loadScenarioFile(moe::test::samplePath("deepseek-v3-2048xh800.yaml"));
        QVERIFY(r.ok());
        const Report report = evaluate(*r.scenario);
        const Timeline t = simulateTimeline(*r.scenario, report);
        QVERIFY(t.ok());
        QCOMPARE(t.gpus, 2048);
        QCOMPARE(t.rows.size(), size_t(16 * 2)); // 16 stages x 2 expert-DP lanes
        size_t covered = 0;
        for (size_t row = 0; row < t.rows.size(); ++row)
            covered += t.gpusOfRow(static_cast<int>(row)).size();
        QCOMPARE(covered, size_t(2048));
        // Memory follows the distinct rows, not GPUs x spans.
        size_t largest = 0;
        for (const TimelineRow& row : t.rows)
            largest = std::max(largest, row.spans.size());
        QVERIFY(t.spanCount() <= t.rows.size() * largest);
        QVERIFY(t.spanCount() * 50 < size_t(2048) * largest);
        // DualPipe: stage 5 runs its own chunk (layers of chunk 5) and chunk 10's.
        const std::vector<Span> spans = t.spansForGpu(5 * 128 + 3);
        QVERIFY(!spans.empty());
        std::set<int> layers;
        for (const Span& s : spans)
            if (s.layer >= 0)
                layers.insert(s.layer);
        const std::vector<StageLayers> split = splitLayers(r.scenario->model, r.scenario->layout);
        std::set<int> expected(split[5].layer_indices.begin(), split[5].layer_indices.end());
        expected.insert(split[10].layer_indices.begin(), split[10].layer_indices.end());
        QVERIFY(layers == expected);
        QVERIFY(std::is_sorted(spans.begin(), spans.end(),
                               [](const Span& a, const Span& b) { return a.start_s < b.start_s; }));
        QCOMPARE(t.rowOfGpu(2048), -1);
        QVERIFY(t.spansForGpu(-1).empty());
    }

    void stepTimeDistribution() {
        QCOMPARE(percentile({4, 1, 3, 2}, 0.5), 2.5);
        QCOMPARE(percentile({1, 2, 3, 4}, 0.9), 3.7);
        QCOMPARE(percentile({7}, 0.99), 7.0);
        QCOMPARE(percentile({}, 0.5), 0.0);

        const Scenario s = defaultScenario();
        const StepTimeDistribution d = sampleStepTimes(s, 6);
        QVERIFY(d.error.empty());
        QCOMPARE(d.simulated_s.size(), size_t(6));
        QCOMPARE(d.evaluated_s.size(), size_t(6));
        const auto [lo, hi] = std::minmax_element(d.simulated_s.begin(), d.simulated_s.end());
        QVERIFY(*lo < *hi); // the routing resample changes the step
        QVERIFY(*lo <= d.p50_s && d.p50_s <= d.p90_s && d.p90_s <= d.p99_s && d.p99_s <= *hi);
        // Step 0 is the default view.
        QCOMPARE(d.simulated_s[0], simulateTimeline(s, evaluate(s)).step_time_s);
        QCOMPARE(d.evaluated_s[1], evaluate(s, 1).step_time_s);
        TimelineOptions uniform;
        uniform.uniform_load = true;
        const StepTimeDistribution u = sampleStepTimes(s, 3, uniform);
        QCOMPARE(u.p50_s, u.p99_s);
    }

    // ---- exports -------------------------------------------------------------------------------

    void chromeTrace() {
        const Scenario s = defaultScenario();
        const Timeline t = simulateTimeline(s, evaluate(s));
        QVERIFY(t.ok());
        const std::vector<int> gpus = {0, 1, 9, 63};
        const std::string json = chromeTraceJson(t, gpus);
        size_t spans = 0;
        for (const int g : gpus)
            spans += t.spansForGpu(g).size();
        QCOMPARE(checkTrace(QByteArray::fromStdString(json), t, gpus), static_cast<int>(spans));
        // The default picks every GPU of a small cluster.
        QCOMPARE(defaultTraceGpus(t).size(), size_t(64));
        const size_t picked = defaultTraceGpus(t, 1000).size(); // first + hottest of 8 rows
        QVERIFY(picked >= 8 && picked <= 16);

        const std::string csv = timelineCsv(t, {9});
        QVERIFY(csv.rfind("gpu,node,stream,kind,pass,layer,microbatch,start_s,end_s,bytes\n", 0) ==
                0);
        QCOMPARE(static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')),
                 t.spansForGpu(9).size() + 1);
        QVERIFY(csv.find("\n9,1,compute,expert,forward,") != std::string::npos);
    }

    void cli() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString trace = dir.filePath("step.json"), csv = dir.filePath("step.csv");
        Run r = moePlan(
            {"timeline", "--trace", trace, "--csv", csv, "--steps", "3", "--gpus", "0-3,17"});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("Step-time breakdown"), qPrintable(r.out));
        QVERIFY(r.out.contains("p50") && r.out.contains("p99"));
        QVERIFY(r.out.contains("over 3 routing samples"));
        QFile file(trace);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const Scenario s = defaultScenario();
        const Timeline t = simulateTimeline(s, evaluate(s));
        QVERIFY(checkTrace(file.readAll(), t, {0, 1, 2, 3, 17}) > 0);
        QFile spans(csv);
        QVERIFY(spans.open(QIODevice::ReadOnly));
        QVERIFY(spans.readLine().startsWith("gpu,node,stream,kind"));

        QCOMPARE(moePlan({"timeline", "--steps", "0"}).code, 2);
        QCOMPARE(moePlan({"timeline", "--gpus", "64"}).code, 2);
        QCOMPARE(moePlan({"timeline", "--trace"}).code, 2);
        QCOMPARE(moePlan({"timeline", dir.filePath("missing.yaml")}).code, 1);
        r = moePlan({"timeline", "--bench"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("CPU median"));
        r = moePlan({"help", "timeline"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("--trace"));
    }

    /// `timeline --json` and `evaluate --json` carry the step in the same accounting: the same
    /// breakdown keys, each summing to its own step time; the timeline's closed_form is
    /// evaluate's, its error their difference.
    void cliJson() {
        const Run t = moePlan({"timeline", "--json", "--steps", "2"});
        QCOMPARE(t.code, 0);
        const Run e = moePlan({"evaluate", "--json"});
        QCOMPARE(e.code, 0);
        const QJsonObject sim = QJsonDocument::fromJson(t.out.toUtf8()).object();
        const QJsonObject closed = QJsonDocument::fromJson(e.out.toUtf8()).object();
        QVERIFY(!sim.isEmpty() && !closed.isEmpty());
        const auto sum = [](const QJsonObject& breakdown) {
            double total = 0;
            for (auto it = breakdown.begin(); it != breakdown.end(); ++it)
                total += it.value().toDouble();
            return total;
        };
        const QJsonObject sim_items = sim["breakdown"].toObject();
        const QJsonObject closed_items = closed["breakdown"].toObject();
        QCOMPARE(sim_items.keys(), closed_items.keys());
        QCOMPARE(sim["hidden_s"].toObject().keys(), closed_items.keys());
        QVERIFY(std::fabs(sum(sim_items) / sim["step_time_s"].toDouble() - 1) < 1e-3);
        QVERIFY(std::fabs(sum(closed_items) / closed["step_time_s"].toDouble() - 1) < 1e-3);
        const Scenario s = defaultScenario();
        const Timeline in_process = simulateTimeline(s, evaluate(s));
        QVERIFY(near(sim["step_time_s"].toDouble(), in_process.step_time_s, 1e-12));
        const QJsonObject cf = sim["closed_form"].toObject();
        QCOMPARE(cf["step_time_s"].toDouble(), closed["step_time_s"].toDouble());
        QCOMPARE(cf["breakdown"].toObject(), closed_items);
        const QJsonObject error = sim["error"].toObject();
        QVERIFY(near(error["step_s"].toDouble(),
                     closed["step_time_s"].toDouble() - sim["step_time_s"].toDouble(), 1e-9));
        const QJsonObject item_errors = error["breakdown_s"].toObject();
        for (const QString& key : closed_items.keys())
            QVERIFY(std::fabs(item_errors[key].toDouble() -
                              (closed_items[key].toDouble() - sim_items[key].toDouble())) < 1e-12);
        QCOMPARE(sim["distribution"].toObject()["steps"].toInt(), 2);
        QVERIFY(sim["critical_path"].toObject()["ends_with"].toArray().size() > 0);
    }
};

QTEST_GUILESS_MAIN(TestTimeline)
#include "test_timeline.moc"
