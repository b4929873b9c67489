// The composed performance model, evaluate(scenario) -> Report: step figures of a small scenario
// worked by hand, pipeline bubbles per schedule, link-byte conservation, monotonicity over every
// sample, the textbook default, calibration against DeepSeek-V3's published GPU-hours, a seeded
// sweep of random valid scenarios (every figure finite and non-negative), edge cases, design
// warnings and determinism.
#include "moe/catalog.h"
#include "moe/evaluate.h"
#include "moe/scenario_io.h"
#include "moe/validate.h"
#include "test_close.h"
#include "test_support.h"

#include <QtTest>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace moe;
using moe::test::close;

namespace {

std::string baseName(const std::string& path) {
    return std::filesystem::path(path).stem().string();
}

// ---- The hand-worked scenario ----------------------------------------------------------------
// moe::test::kHandYaml and its achievable rates kGemm, kAttn, kHbm, kUp, kOut (test_support.h):
// 2 nodes x 4 GPUs with round datasheet figures and a 2-layer MoE small enough to work through
// by hand.
using namespace moe::test::hand;
using moe::test::kHandYaml;

std::optional<Scenario> fromYaml(const std::string& yaml,
                                 const std::vector<std::string>& overrides = {}) {
    const LoadResult r = loadScenarioTextWithOverrides(yaml, "<test>", ".", overrides);
    if (!r.ok()) {
        qWarning("%s", formatAll(r.diagnostics).c_str());
        return std::nullopt;
    }
    return r.scenario;
}

std::optional<Scenario> loadFile(const std::string& path) {
    const LoadResult r = loadScenarioFile(path);
    if (!r.ok()) {
        qWarning("%s", formatAll(r.diagnostics).c_str());
        return std::nullopt;
    }
    return r.scenario;
}

const Collective* findCollective(const Report& r, CollectiveKind kind) {
    for (const Collective& c : r.collectives)
        if (c.kind == kind)
            return &c;
    return nullptr;
}

const DesignWarning* findWarning(const Report& r, const std::string& code) {
    for (const DesignWarning& w : r.warnings)
        if (toString(w.code) == code)
            return &w;
    return nullptr;
}

double item(const StepBreakdown& b, StepItem i) {
    return b[i];
}

double sumOf(const std::array<double, kStepItemCount>& a) {
    double s = 0;
    for (double v : a)
        s += v;
    return s;
}

double collectiveTime(const Report& r, CollectiveKind kind) {
    const Collective* c = findCollective(r, kind);
    return c ? c->time_s : 0.0;
}

/// Bytes on all links of one kind.
double linkTotal(const Report& r, LinkKind kind) {
    double total = 0;
    for (size_t i = 0; i < r.graph()->links.size(); ++i)
        if (r.graph()->links[i].kind == kind)
            total += r.linkBytes()[i];
    return total;
}

/// The first figure of a report that is NaN, infinite or negative, named; empty if none.
std::string badFigure(const Report& r) {
    std::string bad;
    auto check = [&](const std::string& what, double v) {
        if (bad.empty() && (!std::isfinite(v) || v < 0))
            bad = what + " = " + std::to_string(v);
    };
    auto checkBreakdown = [&](const std::string& what, const StepBreakdown& b) {
        for (int i = 0; i < kStepItemCount; ++i) {
            const std::string name = toString(static_cast<StepItem>(i));
            check(what + "." + name, b.seconds[static_cast<size_t>(i)]);
            check(what + "." + name + " overlapped", b.overlapped_s[static_cast<size_t>(i)]);
        }
        check(what + ".total_s", b.total_s);
    };
    auto checkMemory = [&](const std::string& what, const MemoryBreakdown& m) {
        // margin_bytes is signed by design (negative = does not fit); the parts are not.
        check(what + ".weights", m.weights_bytes);
        check(what + ".gradients", m.gradients_bytes);
        check(what + ".optimizer", m.optimizer_bytes);
        check(what + ".activations", m.activations_bytes);
        check(what + ".dispatch_buffers", m.dispatch_buffers_bytes);
        check(what + ".workspace", m.workspace_bytes);
        check(what + ".total", m.total_bytes);
        check(what + ".hbm", m.hbm_bytes);
        if (bad.empty() && !std::isfinite(m.margin_bytes))
            bad = what + ".margin not finite";
    };
    check("step_time_s", r.step_time_s);
    if (bad.empty() && !(r.step_time_s > 0))
        bad = "step_time_s is not positive";
    checkBreakdown("step", r.step);
    for (size_t i = 0; i < r.stages.size(); ++i) {
        checkBreakdown("stage" + std::to_string(i), r.stages[i].per_micro_batch);
        checkMemory("stage" + std::to_string(i) + ".memory", r.stages[i].memory);
    }
    checkMemory("memory", r.memory);
    for (const Collective& c : r.collectives) {
        check(c.name + " bytes", c.bytes_per_gpu);
        check(c.name + " scale_up", c.scale_up_bytes_per_gpu);
        check(c.name + " scale_out", c.scale_out_bytes_per_gpu);
        check(c.name + " time", c.time_s);
        check(c.name + " exposed", c.exposed_s);
        check(c.name + " calls", c.calls_per_step);
    }
    if (bad.empty() && r.linkBytes().size() != r.graph()->links.size())
        bad = "link_bytes size differs from the graph's links";
    if (bad.empty() && r.linkUtilization().size() != r.graph()->links.size())
        bad = "link_utilization size differs from the graph's links";
    for (size_t i = 0; i < r.linkBytes().size(); ++i)
        check("link_bytes[" + std::to_string(i) + "]", r.linkBytes()[i]);
    for (size_t i = 0; i < r.linkUtilization().size(); ++i)
        check("link_utilization[" + std::to_string(i) + "]", r.linkUtilization()[i]);
    const Throughput& t = r.throughput;
    check("tokens_per_step", t.tokens_per_step);
    check("tokens_per_s", t.tokens_per_s);
    check("tokens_per_s_per_gpu", t.tokens_per_s_per_gpu);
    check("model_tflops_per_gpu", t.model_tflops_per_gpu);
    check("mfu", t.mfu);
    check("time_to_train_s", t.time_to_train_s);
    check("gpu_hours", t.gpu_hours);
    check("gpu_hours_per_trillion_tokens", t.gpu_hours_per_trillion_tokens);
    check("economics.energy_kwh", r.economics.energy_kwh);
    check("economics.cost_usd", r.economics.cost_usd);
    const ExpertLoad& l = r.load;
    check("load.slots_per_group", l.slots_per_group);
    check("load.max_imbalance", l.max_imbalance);
    check("load.mean_imbalance", l.mean_imbalance);
    check("load.dropped_share", l.dropped_share);
    for (double v : l.popularity)
        check("load.popularity", v);
    for (double v : l.tokens_per_expert)
        check("load.tokens_per_expert", v);
    for (double v : l.rank_tokens)
        check("load.rank_tokens", v);
    for (double v : l.imbalance_per_layer)
        check("load.imbalance_per_layer", v);
    for (double v : l.dropped_share_per_layer)
        check("load.dropped_share_per_layer", v);
    return bad;
}

} // namespace

class TestEvaluate : public QObject {
    Q_OBJECT

private slots:
    // ---- 1. Hand-derived step figures --------------------------------------------------------
    void handStepFigures() {
        const std::optional<Scenario> s = fromYaml(kHandYaml);
        QVERIFY(s);
        const Report r = evaluate(*s);
        QCOMPARE(r.gpus, 8);
        // Micro-batches per step = global_batch / (dp * micro_batch) = 16 / 8 = 2.
        QCOMPARE(r.micro_batches, 2);
        const double m = 2;
        QCOMPARE(r.stages.size(), size_t(1));
        // Tokens per GPU per micro-batch = micro_batch * seq / (cp * tp) = 1024.
        // Token slots per EP group per micro-batch = ep * 1024 * top_k = 4 * 1024 * 2 = 8192.
        QCOMPARE(r.load.slots_per_group, 8192.0);
        QCOMPARE(r.load.imbalance_per_layer.size(), size_t(2));
        // Uniform routing fully balanced: only multinomial noise (sd ~39 of 2048 per rank).
        for (double f : r.load.imbalance_per_layer) {
            QVERIFY2(f >= 1.0 && f < 1.1, qPrintable(QString::number(f)));
        }

        // All-to-all. Each GPU dispatches 1024 tokens x top-2 x hidden 1024 x 2 B (bf16)
        // = S = 4,194,304 B per layer, S/4 to each EP rank including itself; the 3 peers share
        // its node: 3/4 S = 3,145,728 B over NVLink, nothing through the NIC. Per layer and
        // micro-batch the dispatch direction carries the forward dispatch and the backward
        // gradient of the combine (2 x 3/4 S), the combine direction the forward combine and
        // the dispatch's gradient (2 x 3/4 S). Per step: 2 micro-batches x 2 layers.
        const double S = 1024.0 * 2 * 1024 * 2;
        QCOMPARE(S, 4194304.0);
        const double a2a_one_up = 0.75 * S;
        const double a2a_dir_step = m * 2 * 2 * a2a_one_up; // 25,165,824 B
        QCOMPARE(a2a_dir_step, 25165824.0);
        // One all-to-all: T = (3/4 S) / B_up + alpha_up (single domain, one latency step).
        const double t_a2a = a2a_one_up / kUp + kAlphaUp;
        for (CollectiveKind kind : {CollectiveKind::moe_dispatch, CollectiveKind::moe_combine}) {
            const Collective* c = findCollective(r, kind);
            QVERIFY2(c, toString(kind));
            QCOMPARE(c->group, GroupKind::ep);
            QCOMPARE(c->group_size, 4);
            QCLOSE(c->scale_up_bytes_per_gpu, a2a_dir_step);
            QCOMPARE(c->scale_out_bytes_per_gpu, 0.0);
            QCLOSE(c->bytes_per_gpu, a2a_dir_step);
            QCOMPARE(c->link_class, LinkClass::scale_up);
            // 2 per layer (fwd + bwd) x 2 layers x 2 micro-batches.
            QCOMPARE(c->calls_per_step, 8);
            QCLOSE(c->time_s, 8 * t_a2a);
            QCLOSE(c->exposed_s, 8 * t_a2a); // 1F1B overlaps no all-to-all
        }

        // Per micro-batch compute items (recompute none: forward + backward = 3 forwards).
        // Attention per layer forward (test_step_costs, attention): QKV 1024 x 3072 x 1024 is one
        // wave of 96 tiles (waveTime(1024) = 12.7 us), the output projection 32 tiles split-K 4,
        // a quarter wave; core 0.5 * (2*s*heads*d + 2*s*heads*d) = 2*1024*8*128 = 2,097,152
        // FLOPs per token on the attention rate; 14 hidden-sized bf16 passes = 1024*2*14 B per
        // token through HBM.
        const double T = 1024;
        // Backward: the projections and element-wise passes twice, the flash core 2.5x its
        // forward FLOPs at the backward rate and its pre- and postprocess kernels' 14,336 B per
        // token (test_step_costs, attention).
        const double attn_rest = 1.25 * waveTime_s(1024) + T * 1024 * 2 * 14 / kHbm;
        const double attn_fwd = attn_rest + T * 2097152.0 / kAttn;
        const double attn_bwd = 2 * attn_rest + 2.5 * T * 2097152.0 / kAttnBwd + T * 14336.0 / kHbm;
        const double attention = (attn_fwd + attn_bwd) * 2;
        // No dense layers and no shared experts: the dense FFN item is the LM head and embedding,
        // 1024 x 1000 x 1024: 32 tiles, split-K 4, a quarter wave; x3.
        const double lm_head = waveTime_s(1024) / 4 * 3;
        // The one stage also holds the embedding: forward gathers 1024 rows of 1024 bf16 (2
        // passes: 2 x 1024 x 1024 x 2 B), backward reads the bf16 gradient and read-modify-writes
        // the fp32 rows' gradient (1024 x 1024 x (2 + 2 x 4) B), all over HBM.
        const double embedding = (2.0 * T * 1024 * 2 + T * 1024 * (2 + 2 * 4)) / kHbm;
        // Router 1024 x 8 x 1024: 8 tiles, split-K 16; x3, 2 layers.
        const double router = waveTime_s(1024) / 16 * 3 * 2;
        // Experts: each rank gets 8192 / 4 = 2048 slots on average (1024 per expert).
        const double mean_gemm = handExpertGemm_s(2048);
        // At 1024 tokens per expert (1088 padded rows) the GEMMs are compute-bound:
        // 2 x 1088 x 6,291,456 FLOPs at 7e14 = 19.6 us, plus the permutes 2048 x 8 KiB / 3.2e12.
        QCLOSE(mean_gemm, 2 * 1088 * 6291456.0 / kGemm + 2048 * 8192.0 / kHbm);
        const double experts = mean_gemm * 3 * 2;
        // Four all-to-alls of time t_a2a per layer, two layers, all exposed.
        const double a2a = 8 * t_a2a;
        // The busiest rank (f = imbalance) runs its GEMM on f x 2048 slots, and each of the 4
        // all-to-alls into it moves f x the bytes: 4 (f - 1) x (3/4 S) / B_up extra per layer.
        double imbalance = 0;
        for (double f : r.load.imbalance_per_layer) {
            imbalance += (handExpertGemm_s(2048 * f) - mean_gemm) * 3;
            imbalance += 4 * (f - 1) * a2a_one_up / kUp;
        }
        const StepBreakdown& mb = r.stages[0].per_micro_batch;
        QCLOSE(item(mb, StepItem::attention), attention);
        QCLOSE(item(mb, StepItem::dense_ffn), lm_head + embedding);
        QCLOSE(item(mb, StepItem::router), router);
        QCLOSE(item(mb, StepItem::expert_compute), experts);
        QCLOSE(item(mb, StepItem::all_to_all), a2a);
        QCLOSE_REL(item(mb, StepItem::imbalance_wait), imbalance, 1e-7);
        for (StepItem i : {StepItem::tp_comm, StepItem::cp_comm, StepItem::pp_comm,
                           StepItem::bubble, StepItem::dp_sync, StepItem::optimizer})
            QCOMPARE(item(mb, i), 0.0);
        const double compute = attention + lm_head + embedding + router + experts;

        // Dense gradient sync over DP = 8 (2 domains of 4; ZeRO-1: reduce-scatter of fp32 grads
        // + all-gather of bf16 weights). Dense parameters per GPU: 2 layers x (attention 4h^2
        // = 4,194,304 + norms 2h = 2,048 + router h*E = 8,192) + embedding 1,024,000 + LM head
        // 1,024,000 + final norm 1,024 = 10,458,112.
        const double dense_params = 2 * (4194304.0 + 2048 + 8192) + 1024000 * 2 + 1024;
        QCOMPARE(dense_params, 10458112.0);
        // Hierarchical reduce-scatter of a B-byte buffer: (n_l-1)/n_l B over NVLink in
        // n_l - 1 = 3 steps, then (g-1)/g x B/n_l = B/8 through the NIC in g - 1 = 1 step.
        auto hierRs = [](double B, double& up, double& out) {
            up = 0.75 * B;
            out = 0.5 * B / 4;
            return 3 * kAlphaUp + up / kUp + kAlphaOut + out / kOut;
        };
        double dp_rs_up = 0, dp_rs_out = 0, dp_ag_up = 0, dp_ag_out = 0;
        const double dp_rs = hierRs(dense_params * 4, dp_rs_up, dp_rs_out);
        const double dp_ag = hierRs(dense_params * 2, dp_ag_up, dp_ag_out);
        const Collective* dp = findCollective(r, CollectiveKind::dp_sync);
        QVERIFY(dp);
        QCOMPARE(dp->group_size, 8);
        QCOMPARE(dp->calls_per_step, 2);
        QCLOSE(dp->scale_up_bytes_per_gpu, dp_rs_up + dp_ag_up);    // 47,061,504 B
        QCLOSE(dp->scale_out_bytes_per_gpu, dp_rs_out + dp_ag_out); // 7,843,584 B
        QCLOSE(dp->scale_up_bytes_per_gpu, 47061504.0);
        QCLOSE(dp->scale_out_bytes_per_gpu, 7843584.0);
        QCLOSE(dp->time_s, dp_rs + dp_ag);
        QCOMPARE(dp->link_class, LinkClass::scale_out);

        // Expert sync over expert-DP = 2 (one GPU per node: n_l = 1, g = 2). Expert parameters
        // per GPU: 2 layers x 8 experts x 3*h*f (3,145,728) / (ep * etp = 4) = 12,582,912.
        // Reduce-scatter of 4 B grads: 1/2 x 50,331,648 = 25,165,824 B through the NIC;
        // all-gather of 2 B weights: 12,582,912 B; each one NIC step, no NVLink at all.
        const double expert_params = 2 * 8 * 3145728.0 / 4;
        QCOMPARE(expert_params, 12582912.0);
        const double edp_rs_out = 0.5 * expert_params * 4;
        const double edp_ag_out = 0.5 * expert_params * 2;
        const double edp_rs = kAlphaOut + edp_rs_out / kOut;
        const double edp_ag = kAlphaOut + edp_ag_out / kOut;
        const Collective* edp = findCollective(r, CollectiveKind::edp_sync);
        QVERIFY(edp);
        QCOMPARE(edp->group, GroupKind::edp);
        QCOMPARE(edp->group_size, 2);
        QCOMPARE(edp->scale_up_bytes_per_gpu, 0.0);
        QCLOSE(edp->scale_out_bytes_per_gpu, 37748736.0);
        QCLOSE(edp->scale_out_bytes_per_gpu, edp_rs_out + edp_ag_out);
        QCLOSE(edp->time_s, edp_rs + edp_ag);
        QCOMPARE(edp->link_class, LinkClass::scale_out);

        // Exposure: each layer is one gradient bucket holding its share of the dense and
        // expert parameters. Dense: layer 0 = attention 4,194,304 + norms 2,048 + router 8,192
        // + embedding 1,024,000 = 5,228,544, layer 1 the same with the LM head instead: half
        // each; expert: half each. So each bucket syncs R/2 (R = both reduce-scatters) and
        // gathers G/2 (G = both all-gathers), on one stream. Both buckets run at the pace of
        // the stage's busiest EP group, f = its mean busiest-rank factor over the 2 layers.
        const double f = r.load.worstGroupImbalance({0, 1});
        const double t_a2a_f = t_a2a + (f - 1) * a2a_one_up / kUp;
        const double gemm_f = handExpertGemm_s(2048 * f);
        // Layer 0's forward and backward for one micro-batch: attention, router, expert GEMMs
        // (backward 2x forward), a dispatch and a combine each way, all exposed under 1F1B, and
        // the embedding before it (its gather forward, its scatter-add backward; above).
        const double embedding_fwd = 2.0 * T * 1024 * 2 / kHbm;
        const double embedding_bwd = embedding - embedding_fwd;
        const double layer0_fwd =
            attn_fwd + waveTime_s(1024) / 16 + gemm_f + 2 * t_a2a_f + embedding_fwd;
        const double layer0_bwd =
            attn_bwd + 2 * (waveTime_s(1024) / 16 + gemm_f) + 2 * t_a2a_f + embedding_bwd;
        const double R = dp_rs + edp_rs, G = dp_ag + edp_ag;
        // The weights' all-gather at the step's start: layer 0's bucket before its first
        // forward, layer 1's before layer 1's, which follows layer 0's forward:
        // max(G/2, G - layer0_fwd). The last backward releases layer 1's bucket when layer 0's
        // backward starts and layer 0's at its end: max(R/2, R - layer0_bwd) after it.
        const double head = std::max(G / 2, G - layer0_fwd);
        const double tail = std::max(R / 2, R - layer0_bwd);
        // The scenario is built so that the sync is partly hidden, partly exposed.
        // Here each sync is longer than a layer's compute (G = 401 us, R = 787 us against 71
        // and 117 us): layer 0's pass hides only that much of the other bucket.
        QVERIFY(G - layer0_fwd > G / 2 && R - layer0_bwd > R / 2);
        const double exposed = head + tail;
        QVERIFY(exposed < R + G);
        QCLOSE(item(r.step, StepItem::dp_sync), exposed);
        QCLOSE(r.step.overlapped_s[static_cast<int>(StepItem::dp_sync)], R + G - exposed);
        // The collectives split the exposed sync by their times.
        const double dp_exposed = exposed * (dp_rs + dp_ag) / (R + G);
        const double edp_exposed = exposed - dp_exposed;
        QCLOSE(dp->exposed_s, dp_exposed);
        QCLOSE(edp->exposed_s, edp_exposed);

        // Optimizer: Adam and the gradient norm touch 34 B per parameter of this GPU's ZeRO-1
        // shard (FP32 moments; test_step_costs optimizerStep), 10,458,112 / 8 + 12,582,912 / 2
        // = 7,598,720 parameters, at the HBM rate; then the norm's all-reduce of 4 B over the
        // 8 GPUs (2 x 3 NVLink steps + 2 NIC steps, ~20 us).
        const double norm_allreduce = 2 * (3 * kAlphaUp + 3.0 / kUp) + 2 * kAlphaOut + 1.0 / kOut;
        const double optimizer =
            (dense_params / 8 + expert_params / 2) * 34 / kHbm + norm_allreduce;
        QCLOSE(item(r.step, StepItem::optimizer), optimizer);

        // The step: per-micro-batch items x 2 micro-batches, plus the sync and the optimizer.
        const double expected_step = m * (compute + a2a + imbalance) + exposed + optimizer;
        QCLOSE_REL(r.step_time_s, expected_step, 1e-9);
        QCLOSE_REL(sumOf(r.step.seconds), r.step_time_s, 1e-12);
        QCLOSE_REL(r.step.total_s, r.step_time_s, 1e-12);
        QCOMPARE(item(r.step, StepItem::bubble), 0.0);
        QCOMPARE(item(r.step, StepItem::pp_comm), 0.0);
        QCOMPARE(item(r.step, StepItem::tp_comm), 0.0);
        QCLOSE(item(r.step, StepItem::attention), m * attention);
        QCLOSE(item(r.step, StepItem::expert_compute), m * experts);
        QCLOSE(r.step.overlapped_s[static_cast<int>(StepItem::all_to_all)], 0.0);

        // Throughput: 16 sequences x 1024 tokens per step. Model FLOPs per token =
        // 3 x [2 layers x (8,388,608 + 2,097,152 + 16,384 router + 2*2*3,145,728 experts)
        // + LM head 2,048,000] = 144,654,336.
        const double flops_per_token =
            3 * (2 * (8388608.0 + 2097152 + 16384 + 4 * 3145728.0) + 2048000);
        QCOMPARE(flops_per_token, 144654336.0);
        const Throughput& t = r.throughput;
        QCOMPARE(t.tokens_per_step, 16384.0);
        QCLOSE(t.tokens_per_s, 16384 / r.step_time_s);
        QCLOSE(t.tokens_per_s_per_gpu, t.tokens_per_s / 8);
        QCLOSE(t.model_tflops_per_gpu, flops_per_token * t.tokens_per_s / 8 / 1e12);
        QCLOSE(t.mfu, flops_per_token * t.tokens_per_s / (8 * 1000e12));
        QCLOSE(t.time_to_train_s, 1e9 / t.tokens_per_s);
        QCLOSE(t.gpu_hours, t.time_to_train_s * 8 / 3600);
        QCLOSE(t.gpu_hours_per_trillion_tokens, 1e12 / t.tokens_per_s * 8 / 3600);
        QCLOSE(t.gpu_hours_per_trillion_tokens, t.gpu_hours * 1e12 / 1e9);
        QVERIFY(t.mfu > 0 && t.mfu < 1);
        // No GPU-hour price: an owned cluster, whose one cost figure is capital written off
        // plus energy over the expected wall-clock (economics.h).
        QVERIFY(!r.economics.rental);
        QCLOSE(r.economics.cost_usd, r.economics.usd_per_h * r.economics.wall_time_s / 3600);
        QVERIFY(costBasisText(*s, r.economics).starts_with("owned: "));

        // Link bytes: every GPU's NVSwitch link carries its all-to-all and dense-sync NVLink
        // bytes; its NIC links the dense and expert syncs' NIC bytes.
        const double per_gpu_up = 2 * a2a_dir_step + dp_rs_up + dp_ag_up;
        const double per_gpu_out = dp_rs_out + dp_ag_out + edp_rs_out + edp_ag_out;
        const HardwareGraph& g = *r.graph();
        for (int gpu = 0; gpu < 8; ++gpu) {
            QCLOSE(r.linkBytes()[static_cast<size_t>(g.gpu_scale_up_link[gpu])], per_gpu_up);
            QCLOSE(r.linkBytes()[static_cast<size_t>(g.gpu_nic_link[gpu])], per_gpu_out);
        }
        for (size_t i = 0; i < g.links.size(); ++i) {
            QCLOSE(r.linkUtilization()[i],
                   r.linkBytes()[i] / (g.links[i].bandwidth_gbps * 1e9 * r.step_time_s));
        }
        QVERIFY(badFigure(r).empty());
    }

    void handAllToAllSplitAcrossNodes() {
        // EP = 8 over both nodes (expert-DP = 1): each GPU sends S/8 to every rank, 3 of its 7
        // peers in its node and 4 in the other: 3/8 S over NVLink, 4/8 S through the NIC,
        // concurrently: T = max(3/8 S / B_up, 4/8 S / B_out) + alpha_up + alpha_out.
        const std::optional<Scenario> s = fromYaml(kHandYaml, {"layout.ep=8"});
        QVERIFY(s);
        const Report r = evaluate(*s);
        const double S = 4194304.0;
        const double t_one = std::max(3.0 / 8 * S / kUp, 4.0 / 8 * S / kOut) + kAlphaUp + kAlphaOut;
        for (CollectiveKind kind : {CollectiveKind::moe_dispatch, CollectiveKind::moe_combine}) {
            const Collective* c = findCollective(r, kind);
            QVERIFY(c);
            QCOMPARE(c->group_size, 8);
            // 8 one-way all-to-alls per step and direction (2 per layer x 2 layers x 2 mb).
            QCLOSE(c->scale_up_bytes_per_gpu, 8 * 3.0 / 8 * S);  // 12,582,912 B
            QCLOSE(c->scale_out_bytes_per_gpu, 8 * 4.0 / 8 * S); // 16,777,216 B
            QCOMPARE(c->link_class, LinkClass::scale_out);
            QCLOSE(c->time_s, 8 * t_one);
        }
        // Expert-DP = 1: no expert gradient sync at all.
        QVERIFY(!findCollective(r, CollectiveKind::edp_sync));
        QVERIFY(findWarning(r, "ep-crosses-domain"));

        // Node-limited routing, at most 1 node per token, with DeepEP's dispatcher (Megatron's
        // alltoall one sends one copy per slot, node limit or not: the bytes above). A token's
        // 2 picks on N = 2 nodes hit
        // R = (N-1)(1 - (1-1/N)^2) = 0.75 remote nodes unlimited; the cap M(N-1)/N = 0.5 wins.
        // Dispatch sends one copy per remote node: 1024 x 0.5 x 1024 x 2 B = 1,048,576 B per
        // all-to-all through the NIC. Inside the target node the copy is forwarded over NVLink:
        // the token reaches H = 0.5 x 2/1 = 1 node, its 2 picks D = 4 (1 - (3/4)^2) = 1.75 of
        // that node's 4 GPUs, 3 in 4 of them not the receiving GPU: 1.3125 copies,
        // 1024 x 1.3125 x 1024 x 2 B = 2,752,512 B per all-to-all over NVLink.
        const std::optional<Scenario> limited =
            fromYaml(kHandYaml, {"layout.ep=8", "layout.max_nodes_per_token=1",
                                 "training.moe_dispatcher=deepep"});
        QVERIFY(limited);
        const Report rl = evaluate(*limited);
        const Collective* d = findCollective(rl, CollectiveKind::moe_dispatch);
        QVERIFY(d);
        QCLOSE(d->scale_out_bytes_per_gpu, 8 * 1048576.0);
        QCLOSE(d->scale_up_bytes_per_gpu, 8 * 2752512.0);
        const double t_lim = std::max(2752512.0 / kUp, 1048576.0 / kOut) + kAlphaUp + kAlphaOut;
        QCLOSE(d->time_s, 8 * t_lim);
        QVERIFY(rl.step_time_s < r.step_time_s);
    }

    void handTensorAndContextParallel() {
        // TP = 2, CP = 2, DP = 2 on the hand scenario (EP = 4 still one node). Tokens per GPU
        // per micro-batch = 1024 / (cp * tp) = 256; micro-batches = 16 / 2 = 8. The TP pair
        // {0, 1} and the CP pair {0, 2} both sit inside node 0: everything rides NVLink.
        const std::optional<Scenario> s =
            fromYaml(kHandYaml, {"layout.tp=2", "layout.cp=2", "layout.dp=2"});
        QVERIFY(s);
        const Report r = evaluate(*s);
        QCOMPARE(r.micro_batches, 8);

        // TP with sequence parallelism: an all-gather and a reduce-scatter around attention
        // and around the MLP, forward and backward: 8 per layer, 2 layers, 8 micro-batches =
        // 128 calls, each over the 2 x 256 tokens x 1024 x 2 B = 1,048,576 B buffer; a ring of
        // 2 sends half of it: 524,288 B, T = alpha_up + 524,288 / B_up.
        const Collective* tp = findCollective(r, CollectiveKind::tp_collective);
        QVERIFY(tp);
        QCOMPARE(tp->group_size, 2);
        QCOMPARE(tp->calls_per_step, 128);
        QCLOSE(tp->scale_up_bytes_per_gpu, 128 * 524288.0);
        QCOMPARE(tp->scale_out_bytes_per_gpu, 0.0);
        const double t_tp = 128 * (kAlphaUp + 524288.0 / kUp);
        QCLOSE(tp->time_s, t_tp);
        QCLOSE(tp->exposed_s, t_tp);
        QCLOSE(item(r.step, StepItem::tp_comm), t_tp);

        // CP ring attention: after the TP all-gather a GPU holds the KV of its CP chunk
        // (2 x 256 = 512 tokens) for its 8 / 2 = 4 KV heads of 128: 512 x 2 x 4 x 128 x 2 B =
        // 1,048,576 B per hop; (cp - 1) hops forward and twice that backward: 3 per layer,
        // 6 per micro-batch, 48 per step, each T = alpha_up + 1,048,576 / B_up. It hides under
        // the attention item; only the excess is exposed.
        const double hop_bytes = 512.0 * 2 * 4 * 128 * 2;
        QCOMPARE(hop_bytes, 1048576.0);
        const double t_hop = kAlphaUp + hop_bytes / kUp;
        const Collective* cp = findCollective(r, CollectiveKind::cp_exchange);
        QVERIFY(cp);
        QCOMPARE(cp->group_size, 2);
        QCOMPARE(cp->calls_per_step, 48);
        QCLOSE(cp->scale_up_bytes_per_gpu, 48 * hop_bytes);
        QCOMPARE(cp->scale_out_bytes_per_gpu, 0.0);
        QCLOSE(cp->time_s, 48 * t_hop);
        const double attention_mb = item(r.stages[0].per_micro_batch, StepItem::attention);
        const double cp_exposed = 8 * std::max(0.0, 6 * t_hop - attention_mb);
        QCLOSE(item(r.step, StepItem::cp_comm), cp_exposed);
        QCLOSE(r.step.overlapped_s[static_cast<int>(StepItem::cp_comm)] + cp_exposed, 48 * t_hop);
        QCLOSE_REL(sumOf(r.step.seconds), r.step_time_s, 1e-12);
    }

    void handDualPipeOverlap() {
        // The hand scenario on PP = 2 with DualPipe: one MoE layer per stage, DP = 4 and EP = 4
        // (one node, NVLink only), micro-batches = 16 / 4 = 4 = 2 * pp. DualPipe leaves compute
        // 112 of the 132 SMs (the all-to-all kernels take 20), so the GEMM and attention rates
        // are 112/132 of the others' and GEMM tiles spread over 112 SMs (one SM's rate is
        // unchanged: waveTime_s still times one wave). NVLink is slowed to 100 GB/s so that one
        // all-to-all (3/4 S over 0.8 x 100 GB/s + 2 us = 41.3 us) outlasts the forward experts
        // (28.3 us) and the forward attention with the router (31.6 us) but not their
        // backwards.
        const std::optional<Scenario> s =
            fromYaml(kHandYaml, {"layout.pp=2", "layout.dp=4", "layout.schedule=dualpipe",
                                 "cluster.scale_up.bandwidth_gbps=100"});
        QVERIFY(s);
        const Report r = evaluate(*s);
        QCOMPARE(r.micro_batches, 4);
        QCOMPARE(r.stages.size(), size_t(2));
        const double m = 4;
        const double up = 100e9 * 0.80;
        const double S = 1024.0 * 2 * 1024 * 2;
        const auto a2a = [&](double factor) { return factor * 0.75 * S / up + kAlphaUp; };
        const double T = 1024;
        const double sm_share = 112.0 / 132.0;
        const double gemm = kGemm * sm_share;
        // QKV: 96 tiles on 112 SMs, one wave; output projection 32 tiles, split-K
        // floor(112 / 32) = 3; router 8 tiles, split-K 14.
        const double attn_fwd = waveTime_s(1024) * (1 + 1.0 / 3) +
                                T * 2097152.0 / (kAttn * sm_share) + T * 1024 * 2 * 14 / kHbm;
        const double router_fwd = waveTime_s(1024) / 14;
        const auto experts_fwd_s = [&](double slot_count) {
            return handExpertGemm_s(slot_count, gemm);
        };
        // A rank fuses stage 0's forward chunk with stage 1's backward chunk, and stage 1's
        // forward with stage 0's backward (chunkPairExposure, derived by hand in
        // test_step_costs). The chunks as segments (transfer, then compute; a backward block's
        // weight gradients last), recompute none, all transfers 3/4 S at the stage's pace:
        //   stage 0 forward:  embedding + attention block | dispatch, experts | combine
        //   stage 1 forward:  attention block | dispatch, experts | combine, LM head
        //   stage 1 backward: LM head | combine grad, experts | dispatch grad, attention block
        //   stage 0 backward: combine grad, experts | dispatch grad, attention block + embedding
        const StepCostModel& costs = *r.costs;
        const LayerPassCosts& l = costs.layer;
        const MoeCosts& moe = costs.moe;
        const auto forward_chunk = [&](int stage, const MoeLayerPrice& p) {
            const double head = stage == 1 ? l.lm_head_fwd_s : 0.0;
            const double embedding = stage == 0 ? l.embedding_fwd_s : 0.0;
            const double tail = p.dispatch_fwd_s - moe.mean.dispatch_fwd_s;
            std::vector<PairSegment> f{{0, 0, false, embedding + moe.attention_block_fwd_s, 0, 0},
                                       {p.dispatch_fwd_s, 0, false, p.expert_fwd_s, 0, tail}};
            f.push_back(
                {p.combine_fwd_s, 0, false, head, 0, p.combine_fwd_s - moe.mean.combine_fwd_s});
            return f;
        };
        const auto backward_chunk = [&](int stage, const MoeLayerPrice& p) {
            std::vector<PairSegment> b;
            if (stage == 1)
                b.push_back({0, 0, false, l.lm_head_bwd_s, l.lm_head_wgrad_s, 0});
            const double embedding = stage == 0 ? l.embedding_bwd_s : 0.0;
            b.push_back({p.combine_bwd_s, 0, false, p.expert_bwd_s, p.expert_wgrad_s,
                         p.combine_bwd_s - moe.mean.combine_bwd_s});
            b.push_back({p.dispatch_bwd_s, 0, false, moe.attention_block_bwd_s + embedding,
                         moe.attention_block_wgrad_s + embedding,
                         p.dispatch_bwd_s - moe.mean.dispatch_bwd_s});
            return b;
        };
        // The stage's micro-batch: its forward chunk's waits in the one pair, its backward
        // chunk's in the other; both chunks at the stage's pace.
        const auto pair_exposed = [&](int stage, const MoeLayerPrice& p) {
            const PairExposure f =
                chunkPairExposure(forward_chunk(stage, p), backward_chunk(1 - stage, p)).forward;
            const PairExposure b =
                chunkPairExposure(forward_chunk(1 - stage, p), backward_chunk(stage, p)).backward;
            return PairExposure{f.all_to_all_s + b.all_to_all_s, 0, f.imbalance_s + b.imbalance_s};
        };
        const double t_mean = a2a(1.0);
        QVERIFY(t_mean > experts_fwd_s(2048) && t_mean > attn_fwd + router_fwd);
        QVERIFY(t_mean < 2 * experts_fwd_s(2048));
        QCLOSE(moe.mean.dispatch_fwd_s, t_mean);
        QCLOSE(moe.mean.expert_fwd_s, experts_fwd_s(2048));
        QCLOSE(moe.attention_block_fwd_s, attn_fwd + router_fwd);
        // pp = 2: both ranks are the middle ones; phases 1-3 leave 1.5*2 - 0 - 1 + 1 = 3 of the
        // 4 forwards (and backwards) unpaired, their all-to-alls all exposed.
        const double unpaired = 3;
        for (const StageResult& st : r.stages) {
            const double imbalance = r.load.worstGroupImbalance({st.layers.stage});
            const double hot_slots = 2048 * imbalance;
            const PairExposure mean = pair_exposed(st.layers.stage, moe.mean);
            const PairExposure hot = pair_exposed(st.layers.stage, moe.price(imbalance));
            QVERIFY(mean.all_to_all_s > 0); // the transfers outlast the blocks beside them
            const double exposed = ((m - unpaired) * hot.all_to_all_s + unpaired * 4 * t_mean) / m;
            const double exposed_hot = ((m - unpaired) * (hot.all_to_all_s + hot.imbalance_s) +
                                        unpaired * 4 * a2a(imbalance)) /
                                       m;
            const StepBreakdown& b = st.per_micro_batch;
            QCLOSE(item(b, StepItem::all_to_all), exposed);
            QCLOSE(item(b, StepItem::all_to_all) + item(b, StepItem::imbalance_wait) -
                       3 * (experts_fwd_s(hot_slots) - experts_fwd_s(2048)),
                   exposed_hot);
            QCLOSE(b.overlapped_s[static_cast<int>(StepItem::all_to_all)] +
                       item(b, StepItem::all_to_all),
                   4 * t_mean);
            QCLOSE_REL(sumOf(b.seconds), b.total_s, 1e-12);
        }
        // Each rank runs both stages' chunks, m/2 micro-batches each: the step charges their
        // mean per micro-batch (and DualPipe on two stages has no bubble: p/2 - 1 = 0).
        QCOMPARE(item(r.step, StepItem::bubble), 0.0);
        for (StepItem k : {StepItem::attention, StepItem::all_to_all, StepItem::imbalance_wait})
            QCLOSE(
                item(r.step, k),
                m * (item(r.stages[0].per_micro_batch, k) + item(r.stages[1].per_micro_batch, k)) /
                    2);
        QCLOSE_REL(sumOf(r.step.seconds), r.step_time_s, 1e-12);
    }

    // ---- 2. Pipeline bubbles -----------------------------------------------------------------
    void pipelineBubble_data() {
        QTest::addColumn<QString>("schedule");
        QTest::addColumn<int>("vpp");
        QTest::newRow("1f1b") << "1f1b" << 1;
        QTest::newRow("gpipe") << "gpipe" << 1;
        QTest::newRow("interleaved") << "interleaved" << 2;
        QTest::newRow("dualpipe") << "dualpipe" << 1;
    }
    void pipelineBubble() {
        QFETCH(QString, schedule);
        QFETCH(int, vpp);
        // 8 layers on PP = 4 (2 per stage; stage 0 also holds the embedding, stage 3 the LM
        // head), DP = 2, EP = 2: micro-batches = 16 / 2 = 8 = 2 * pp (DualPipe's minimum;
        // interleaved needs 8 % pp == 0 and 8 layers % (pp * vpp) == 0).
        // DualPipe runs with EP = 1: without all-to-all, a chunk's passes are its compute alone
        // and the walk's inputs can be written down here.
        const bool dualpipe = schedule == "dualpipe";
        const std::optional<Scenario> s =
            fromYaml(kHandYaml, {"model.layers=8", "layout.pp=4", "layout.dp=2",
                                 dualpipe ? "layout.ep=1" : "layout.ep=2",
                                 "layout.schedule=" + schedule.toStdString(),
                                 "layout.vpp=" + std::to_string(vpp)});
        QVERIFY(s);
        const Report r = evaluate(*s);
        QCOMPARE(r.micro_batches, 8);
        QCOMPARE(r.stages.size(), size_t(4));
        double slowest = 0;
        for (const StageResult& st : r.stages)
            slowest = std::max(slowest, st.per_micro_batch.total_s);
        // The LM head makes the last stage the slowest.
        QCOMPARE(slowest, r.stages[3].per_micro_batch.total_s);
        QVERIFY(slowest > r.stages[1].per_micro_batch.total_s);
        // DualPipe's rank 0 runs stage 0's chunk and stage 3's: its micro-batch is their mean.
        const auto per_micro_batch = [&](StepItem k) {
            const double last = item(r.stages[3].per_micro_batch, k);
            return dualpipe ? (last + item(r.stages[0].per_micro_batch, k)) / 2 : last;
        };
        const double t_mb =
            dualpipe ? (slowest + r.stages[0].per_micro_batch.total_s) / 2 : slowest;
        const double p = 4;
        double expected = 0;
        if (schedule == "1f1b") {
            // The last stage is the slowest, so the fill and drain pass through stages 0-2
            // once (oneFOneBBubble_s, tested by hand in test_step_costs): below (p - 1) t.
            for (size_t st = 0; st < 3; ++st)
                expected += r.stages[st].per_micro_batch.total_s;
            QVERIFY(expected < (p - 1) * t_mb);
        } else if (schedule == "gpipe") {
            // Each stage's micro-batch split by its forward share (gpipeBubble_s, tested by
            // hand in test_step_costs). The last stage holds the slowest forward and backward,
            // so the fill and drain pass through stages 0-2 once: their t, below (p - 1) t.
            std::vector<double> forward, backward;
            for (size_t st = 0; st < r.stages.size(); ++st) {
                const double total = r.stages[st].per_micro_batch.total_s;
                forward.push_back(total * r.costs->stages[st].shares.forward);
                backward.push_back(total - forward.back());
                if (st < 3)
                    expected += total;
            }
            QCLOSE(gpipeBubble_s(forward, backward, 8, 3), expected);
            QVERIFY(expected < (p - 1) * t_mb);
        } else if (schedule == "interleaved") {
            expected = (p - 1) * t_mb / 2;
        } else {
            // DualPipe: the schedule walked with each stage's own chunk times
            // (dualPipeBubble_s, tested by hand in test_step_costs): its compute c split by
            // its shares into F = f c, B = (1 - f) c and W = w c, alone and in a pair alike
            // (no transfers), less the pacing rank's (3, the mirror of rank 0) work.
            std::vector<DualPipeChunkTimes> chunks;
            for (const StageCosts& c : r.costs->stages) {
                const double f = c.compute_s * c.shares.forward;
                chunks.push_back(
                    {f, c.compute_s - f, c.compute_s * c.shares.weight, f, c.compute_s - f});
            }
            QCOMPARE(r.slowest_stage, 3);
            expected = dualPipeBubble_s(chunks, 8, 3);
            // The light middle stages shorten the paper's (p/2 - 1)(F&B + B - 3W) on rank
            // 0's mean F, B and W: (2 - 1)(t + (1 - f) t - 3 w t).
            const StageCosts& a = r.costs->stages[0];
            const StageCosts& b = r.costs->stages[3];
            const double total = a.compute_s + b.compute_s;
            const double f =
                (a.compute_s * a.shares.forward + b.compute_s * b.shares.forward) / total;
            const double w =
                (a.compute_s * a.shares.weight + b.compute_s * b.shares.weight) / total;
            QVERIFY(expected < t_mb + (1.0 - f) * t_mb - 3.0 * w * t_mb);
        }
        QCLOSE(item(r.step, StepItem::bubble), expected);

        // PP sends: a pipeline group (stride dp = 2: GPUs 0, 2, 4, 6) spans both nodes, so each
        // send of a micro-batch's activations (1024 x 1024 x 2 B) goes through the NIC:
        // t_send = alpha_out + 2,097,152 / B_out; fill and drain expose 2 (p-1) vpp of them.
        const double t_send = kAlphaOut + 2097152.0 / kOut;
        if (!dualpipe) {
            QCLOSE(item(r.step, StepItem::pp_comm), 2 * (p - 1) * vpp * t_send);
        } else {
            // DualPipe adds, at each of rank 0's pair boundaries, the wait for its neighbour's
            // two sends (its all-to-all rides NVLink, the sends the NIC: no shared stream):
            // 2 t_send less how much slower rank 0 is than rank 1 per paired micro-batch, its
            // LM head (2 * 1000 * 1024 FLOPs per token x 1024 tokens x 3 / 7e14 / 2 = 4.5 us)
            // and its EP groups' imbalance (a few us). Rank 0 runs 8 - u = 8 - 5 = 3 pairs
            // (u = 1.5 * 4 - 1 unpaired passes).
            QCOMPARE(dualPipeUnpairedPasses(4, 0), 5.0);
            const double fill = 2 * (p - 1) * t_send;
            const double pp_s = item(r.step, StepItem::pp_comm);
            QVERIFY2(
                pp_s > fill + 3 * (2 * t_send - 20e-6) && pp_s <= fill + 3 * 2 * t_send,
                qPrintable(QString("%1 vs fill %2, t_send %3").arg(pp_s).arg(fill).arg(t_send)));
        }
        const Collective* pp = findCollective(r, CollectiveKind::pp_send_recv);
        QVERIFY(pp);
        QCOMPARE(pp->link_class, LinkClass::scale_out);
        QCLOSE(pp->scale_out_bytes_per_gpu, 2 * 8 * vpp * 2097152.0);
        QCOMPARE(pp->calls_per_step, 2 * 8 * vpp);

        // Step = slowest stage (DualPipe: rank) x micro-batches + bubble + PP + sync + optimizer.
        for (int i = 0; i < kStepItemCount; ++i) {
            const auto k = static_cast<StepItem>(i);
            if (k == StepItem::bubble || k == StepItem::pp_comm || k == StepItem::dp_sync ||
                k == StepItem::optimizer)
                continue;
            QCLOSE(item(r.step, k), 8 * per_micro_batch(k));
        }
        QCLOSE_REL(sumOf(r.step.seconds), r.step_time_s, 1e-12);
    }

    // ---- 3. Conservation ---------------------------------------------------------------------
    void linkBytesConservationUniformStages() {
        // PP = 1: one stage, so every GPU carries exactly the collectives' per-GPU bytes. The
        // NVSwitch links together carry gpus x the scale-up bytes; the GPU-NIC links and the
        // NIC-leaf links each carry gpus x the scale-out bytes. Checked for the hand scenario
        // with EP inside and across nodes, and for the PP = 1 default, with its TP=2 variant.
        struct Case {
            const char* yaml;
            std::vector<std::string> overrides;
        };
        const std::vector<Case> cases = {
            {kHandYaml, {}},
            {kHandYaml, {"layout.ep=8"}},
            {kHandYaml, {"layout.tp=2", "layout.dp=4", "layout.ep=2"}},
            {defaultScenarioYaml(), {}},
            {defaultScenarioYaml(), {"layout.order=tp-cp-dp-ep-pp"}},
            {defaultScenarioYaml(), {"layout.tp=2", "layout.dp=32"}},
        };
        for (const Case& c : cases) {
            const std::optional<Scenario> s = fromYaml(c.yaml, c.overrides);
            QVERIFY(s);
            QCOMPARE(s->layout.pp, 1);
            const Report r = evaluate(*s);
            double up = 0, out = 0;
            for (const Collective& col : r.collectives) {
                up += col.scale_up_bytes_per_gpu;
                out += col.scale_out_bytes_per_gpu;
                QCLOSE(col.bytes_per_gpu, col.scale_up_bytes_per_gpu + col.scale_out_bytes_per_gpu);
            }
            const std::string label = s->name + " " + std::to_string(c.overrides.size());
            QVERIFY2(close(linkTotal(r, LinkKind::scale_up), r.gpus * up, 1e-12), label.c_str());
            QVERIFY2(close(linkTotal(r, LinkKind::gpu_nic), r.gpus * out, 1e-12), label.c_str());
            QVERIFY2(close(linkTotal(r, LinkKind::nic_leaf), r.gpus * out, 1e-12), label.c_str());
        }
    }

    void linkBytesSamples_data() {
        QTest::addColumn<QString>("path");
        for (const std::string& path : test::sampleFiles())
            QTest::newRow(baseName(path).c_str()) << QString::fromStdString(path);
    }
    void linkBytesSamples() {
        QFETCH(QString, path);
        const std::optional<Scenario> s = loadFile(path.toStdString());
        QVERIFY(s);
        const Report r = evaluate(*s);
        // evaluate() leaves the graph and the link bytes to whoever reads them first; the
        // report's own sizes are the graph's.
        QVERIFY(!r.hardware_graph->made());
        QVERIFY(!r.link_traffic->made());
        QCOMPARE(r.hardware.gpus, r.gpus);
        QCOMPARE(r.linkBytes().size(), r.graph()->links.size());
        QVERIFY(r.hardware_graph->made() && r.link_traffic->made());
        QCOMPARE(r.graph()->gpuCount(), r.hardware.gpus);
        QCOMPARE(r.graph()->leaves + r.graph()->spines,
                 r.economics.capital.switches); // capital counts the graph's switches
        for (double b : r.linkBytes())
            QVERIFY(std::isfinite(b) && b >= 0);
        double up = 0, out = 0;
        for (const Collective& c : r.collectives) {
            up += c.scale_up_bytes_per_gpu;
            out += c.scale_out_bytes_per_gpu;
            QCOMPARE(c.link_class,
                     c.scale_out_bytes_per_gpu > 0 ? LinkClass::scale_out : LinkClass::scale_up);
        }
        const double link_out = linkTotal(r, LinkKind::gpu_nic);
        const double link_up = linkTotal(r, LinkKind::scale_up);
        QCOMPARE(link_out > 0, out > 0);
        QCOMPARE(link_up > 0, up > 0);
        // GPU-NIC and NIC-leaf links carry the same bytes (every NIC byte goes to the leaf).
        QVERIFY(close(linkTotal(r, LinkKind::nic_leaf), link_out, 1e-12));
        if (s->layout.pp == 1) {
            QVERIFY(close(link_up, r.gpus * up, 1e-12));
            QVERIFY(close(link_out, r.gpus * out, 1e-12));
        }
    }

    // The layout search's way (a cache, no load kept, the lean routing sample) prices every
    // sample as evaluate() does, drawn or found in the cache.
    void leanCachePricesAsEvaluate_data() { linkBytesSamples_data(); }
    void leanCachePricesAsEvaluate() {
        QFETCH(QString, path);
        const std::optional<Scenario> s = loadFile(path.toStdString());
        QVERIFY(s);
        const Report full = evaluate(*s);
        EvaluationCache cache;
        cache.figures_only = true;
        for (int pass = 0; pass < 2; ++pass) {
            const Report lean = evaluate(*s, 0, cache);
            QCOMPARE(lean.step_time_s, full.step_time_s);
            QVERIFY(lean.step.seconds == full.step.seconds);
            QCOMPARE(lean.slowest_stage, full.slowest_stage);
            QVERIFY(lean.load.rank_tokens.empty());
            QVERIFY(lean.layout_description.empty() && lean.warnings.empty());
        }
    }

    // ---- 4. Monotonicity over every sample -----------------------------------------------------
    void monotonicity_data() { linkBytesSamples_data(); }
    void monotonicity() {
        QFETCH(QString, path);
        const std::optional<Scenario> s = loadFile(path.toStdString());
        QVERIFY(s);
        const double base = evaluate(*s).step_time_s;
        const double slack = 1 + 1e-12;
        auto report = [&](const char* what, double before, double after) {
            return QString("%1 (%2): %3 s -> %4 s")
                .arg(what)
                .arg(path)
                .arg(before, 0, 'g', 12)
                .arg(after, 0, 'g', 12)
                .toStdString();
        };

        Scenario nvlink = *s;
        nvlink.cluster.gpu.scale_up_gbps *= 2;
        const double t_nvlink = evaluate(nvlink).step_time_s;
        QVERIFY2(t_nvlink <= base * slack, report("2x NVLink", base, t_nvlink).c_str());

        Scenario nic = *s;
        nic.cluster.nic.bandwidth_gbps *= 2;
        const double t_nic = evaluate(nic).step_time_s;
        QVERIFY2(t_nic <= base * slack, report("2x NIC", base, t_nic).c_str());

        Scenario both = nvlink;
        both.cluster.nic.bandwidth_gbps *= 2;
        const double t_both = evaluate(both).step_time_s;
        QVERIFY2(t_both <= std::min(t_nic, t_nvlink) * slack,
                 report("2x both", base, t_both).c_str());

        if (!s->model.isMoe())
            return;
        // More skew, same seed: fully balanced vs raw Zipf, and a mild vs a steep Zipf.
        Scenario skew = *s;
        skew.routing.model = PopularityModel::zipf;
        skew.routing.zipf_alpha = 1.2;
        skew.routing.balance = 1.0;
        const double t_balanced = evaluate(skew).step_time_s;
        skew.routing.balance = 0.0;
        const double t_raw = evaluate(skew).step_time_s;
        QVERIFY2(t_raw >= t_balanced / slack, report("balance 1 -> 0", t_balanced, t_raw).c_str());
        skew.routing.zipf_alpha = 0.3;
        const double t_mild = evaluate(skew).step_time_s;
        skew.routing.zipf_alpha = 2.0;
        const double t_steep = evaluate(skew).step_time_s;
        QVERIFY2(t_steep >= t_mild / slack, report("alpha 0.3 -> 2", t_mild, t_steep).c_str());
        QVERIFY2(t_raw >= t_mild / slack, report("alpha 0.3 -> 1.2", t_mild, t_raw).c_str());
    }

    void epAcrossNodesSlowsTheAllToAll() {
        const std::optional<Scenario> inside = fromYaml(defaultScenarioYaml());
        const std::optional<Scenario> across =
            fromYaml(defaultScenarioYaml(), {"layout.order=tp-cp-dp-ep-pp"});
        QVERIFY(inside && across);
        const Report ri = evaluate(*inside);
        const Report ra = evaluate(*across);
        QCOMPARE(ri.placement->spanOf(GroupKind::ep).nodes, 1);
        QCOMPARE(ra.placement->spanOf(GroupKind::ep).nodes, 8);
        const Collective* di = findCollective(ri, CollectiveKind::moe_dispatch);
        const Collective* da = findCollective(ra, CollectiveKind::moe_dispatch);
        QVERIFY(di && da);
        QCOMPARE(di->scale_out_bytes_per_gpu, 0.0);
        QVERIFY(da->scale_out_bytes_per_gpu > 0);
        // Same bytes sent in total, but 7/8 of them now cross the NIC (one peer per node).
        // Inside: an EP group is one node, 7/8 of the bytes go to NVLink peers. Across: one
        // member per node, so those same 7/8 all go through the NIC and none over NVLink.
        QCLOSE(da->bytes_per_gpu, di->bytes_per_gpu);
        QCLOSE(da->scale_out_bytes_per_gpu, di->scale_up_bytes_per_gpu);
        QCOMPARE(da->scale_up_bytes_per_gpu, 0.0);
        QVERIFY2(da->time_s > 2 * di->time_s,
                 qPrintable(QString("%1 vs %2").arg(da->time_s).arg(di->time_s)));
        QVERIFY(collectiveTime(ra, CollectiveKind::moe_combine) >
                collectiveTime(ri, CollectiveKind::moe_combine));
    }

    // ---- 5. The textbook case ----------------------------------------------------------------
    void textbookDefault() {
        const Scenario& s = defaultScenario();
        QCOMPARE(s.cluster.gpuCount(), 64);
        const Report r = evaluate(s);
        // The all-to-all stays on NVLink.
        for (CollectiveKind kind : {CollectiveKind::moe_dispatch, CollectiveKind::moe_combine}) {
            const Collective* c = findCollective(r, kind);
            QVERIFY(c);
            QVERIFY(c->scale_up_bytes_per_gpu > 0);
            QCOMPARE(c->scale_out_bytes_per_gpu, 0.0);
            QCOMPARE(c->link_class, LinkClass::scale_up);
        }
        // The expert-DP sync (8 replicas, one per node) rides InfiniBand only.
        const Collective* edp = findCollective(r, CollectiveKind::edp_sync);
        QVERIFY(edp);
        QCOMPARE(edp->group_size, 8);
        QVERIFY(edp->scale_out_bytes_per_gpu > 0);
        QCOMPARE(edp->scale_up_bytes_per_gpu, 0.0);
        QCOMPARE(edp->link_class, LinkClass::scale_out);
        // ... and most of it hides under the last micro-batch's backward (reduce-scatter) and
        // the next step's first forward (all-gather).
        QVERIFY(edp->exposed_s < 0.5 * edp->time_s);
        QVERIFY(r.step.overlapped_s[static_cast<int>(StepItem::dp_sync)] > 0);
        qInfo("default: expert-DP sync %.1f ms, %.1f ms exposed (%.0f%% hidden)", edp->time_s * 1e3,
              edp->exposed_s * 1e3, 100.0 * (1 - edp->exposed_s / edp->time_s));
        QVERIFY(findWarning(r, "ep-crosses-domain") == nullptr);

        // EP inside nodes beats EP across nodes.
        const std::optional<Scenario> across =
            fromYaml(defaultScenarioYaml(), {"layout.order=tp-cp-dp-ep-pp"});
        QVERIFY(across);
        const Report ra = evaluate(*across);
        QVERIFY2(r.step_time_s < ra.step_time_s,
                 qPrintable(QString("%1 vs %2").arg(r.step_time_s).arg(ra.step_time_s)));
    }

    // ---- 6. Calibration ----------------------------------------------------------------------
    void calibrationDeepSeekV3() {
        const std::optional<Scenario> s = loadFile(test::samplePath("deepseek-v3-2048xh800.yaml"));
        QVERIFY(s);
        const Report r = evaluate(*s);
        // DeepSeek-V3 report, Table 1: 2.664M H800 GPU-hours for 14.8T tokens = 180K per
        // trillion tokens (about 1,545 tokens/s per GPU).
        const double published = 2.664e6 / 14.8;
        const double predicted = r.throughput.gpu_hours_per_trillion_tokens;
        qInfo("deepseek-v3-2048xh800: %.0f GPU-hours per trillion tokens (published %.0f, "
              "%+.1f%%), %.0f tokens/s per GPU, MFU %.1f%%",
              predicted, published, 100 * (predicted / published - 1),
              r.throughput.tokens_per_s_per_gpu, 100 * r.throughput.mfu);
        // Known gap (issue 15): with the routing the report states (loss-free balancing, no
        // invented Zipf skew) the sample predicts ~17% fewer GPU-hours than published (23%
        // before FlashAttention-3's backward pre- and postprocess kernels and DualPipe's pairs
        // of whole chunks were priced); the rest of issue 15 has to close the gap.
        QVERIFY2(predicted >= 0.8 * published && predicted <= 1.2 * published,
                 qPrintable(QString::number(predicted)));
        QVERIFY(predicted > 0.6 * published); // not absurd meanwhile
        QCLOSE(r.throughput.gpu_hours, predicted * 14.8);
        // Rented at $2 per GPU-hour: the run's one cost figure is the expected GPU-hours (with
        // failures and checkpoints) at that price, plus energy if the scenario prices it.
        const Economics& e = r.economics;
        QVERIFY(e.rental);
        QCLOSE(e.cost_usd, e.gpu_hours * 2.0 + e.energy_kwh * e.electricity_usd_per_kwh);
        QVERIFY(costBasisText(*s, e).starts_with("rented: GPU-hours x $2.00 per GPU-hour"));
    }

    // ---- 7. Robustness -----------------------------------------------------------------------
    void randomValidScenarios() {
        std::vector<Scenario> bases;
        for (const std::string& path : test::sampleFiles()) {
            const std::optional<Scenario> s = loadFile(path);
            QVERIFY(s);
            bases.push_back(*s);
        }
        const Catalog& catalog = builtinCatalog();
        QVERIFY(!catalog.gpus.empty());
        std::mt19937 rng(20250101u);
        auto pick = [&](const auto& options) {
            return options[std::uniform_int_distribution<size_t>(0, options.size() - 1)(rng)];
        };
        auto chance = [&](double p) {
            return std::uniform_real_distribution<double>(0, 1)(rng) < p;
        };
        auto divisors = [](int n, int max) {
            std::vector<int> d;
            for (int i = 1; i <= std::min(n, max); ++i)
                if (n % i == 0)
                    d.push_back(i);
            return d;
        };

        const auto start = std::chrono::steady_clock::now();
        int valid = 0, attempts = 0, moe = 0, dense = 0, dropping = 0;
        int schedules[4] = {0, 0, 0, 0};
        while (valid < 200 && attempts < 20000) {
            ++attempts;
            Scenario s = pick(bases);
            if (chance(0.5)) {
                s.cluster.gpu = pick(catalog.gpus);
            }
            if (chance(0.6)) {
                // Smaller clusters keep the sweep fast and explore 1-node and 1-GPU cases.
                s.cluster.nodes = pick(std::vector<int>{1, 2, 4, 8, 16});
                if (chance(0.1))
                    s.cluster.gpus_per_node = 1;
            }
            s.cluster.oversubscription = pick(std::vector<double>{1.0, 1.0, 2.0, 3.0});
            const int gpus = s.cluster.gpuCount();
            ModelSpec& m = s.model;
            if (chance(0.15)) {
                m.experts = 0;
                m.top_k = 0;
                m.expert_ffn_hidden = 0;
                m.shared_experts = 0;
                m.dense_layers = 0;
                if (m.ffn_hidden <= 0)
                    m.ffn_hidden = 4 * m.hidden;
            } else {
                if (m.experts == 0) {
                    m.expert_ffn_hidden = m.ffn_hidden / 4;
                    m.dense_layers = 0;
                }
                m.experts = pick(std::vector<int>{8, 16, 32, 64, 256});
                m.top_k = std::uniform_int_distribution<int>(1, std::min(8, m.experts))(rng);
                m.capacity_factor = pick(std::vector<double>{0.0, 0.0, 1.0, 1.25, 2.0});
            }
            LayoutSpec& l = s.layout;
            l.tp = pick(divisors(gpus, 8));
            l.cp = pick(std::vector<int>{1, 1, 1, 2});
            l.pp = pick(std::vector<int>{1, 1, 2, 4, 8, 16});
            if (gpus % (l.tp * l.cp * l.pp) != 0)
                continue;
            l.dp = gpus / (l.tp * l.cp * l.pp);
            l.etp = m.isMoe() ? pick(std::vector<int>{1, 1, 2}) : 1;
            l.ep = 1;
            if (m.isMoe()) {
                std::vector<int> eps;
                for (int e : divisors(m.experts, m.experts))
                    if ((l.tp * l.cp * l.dp) % (e * l.etp) == 0)
                        eps.push_back(e);
                if (eps.empty())
                    continue;
                l.ep = pick(eps);
            }
            l.schedule = pick(std::vector<PipelineSchedule>{
                PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b,
                PipelineSchedule::interleaved, PipelineSchedule::dualpipe});
            l.vpp = l.schedule == PipelineSchedule::interleaved ? pick(std::vector<int>{1, 2}) : 1;
            if (chance(0.3))
                l.order = *parseRankOrder(pick(std::vector<std::string>{
                    "tp-cp-ep-dp-pp", "tp-cp-dp-ep-pp", "tp-cp-ep-pp-dp", "tp-ep-cp-dp-pp"}));
            l.max_nodes_per_token =
                std::uniform_int_distribution<int>(0, std::min(4, s.cluster.nodes))(rng);
            l.expert_placement.clear();
            TrainingSpec& t = s.training;
            t.micro_batch = pick(std::vector<int>{1, 1, 2, 4});
            int per_replica = pick(std::vector<int>{1, 2, 4, 8, 16, 64});
            if (l.schedule == PipelineSchedule::dualpipe)
                per_replica = std::max(per_replica, 2 * l.pp);
            t.global_batch = int64_t{l.dp} * t.micro_batch * per_replica;
            t.recompute = pick(
                std::vector<Recompute>{Recompute::none, Recompute::selective, Recompute::full});
            t.zero_stage = std::uniform_int_distribution<int>(0, 3)(rng);
            RoutingSpec& ro = s.routing;
            ro.model = chance(0.3) ? PopularityModel::uniform : PopularityModel::zipf;
            ro.histogram.clear();
            ro.histogram_csv.clear();
            ro.zipf_alpha = std::uniform_real_distribution<double>(0, 2)(rng);
            ro.balance = std::uniform_real_distribution<double>(0, 1)(rng);
            ro.seed = rng();
            if (hasErrors(validateScenario(s)))
                continue;
            ++valid;
            const Report r = evaluate(s);
            const std::string bad = badFigure(r);
            QVERIFY2(bad.empty(),
                     qPrintable(QString::fromStdString("case " + std::to_string(valid) + ": " +
                                                       bad + "\n" + toYaml(s))));
            QVERIFY(close(sumOf(r.step.seconds), r.step_time_s, 1e-12));
            // The layout search prunes by this floor (SearchOptions::prune): no layout may step
            // faster than its compute at the mean expert load.
            const double floor_s = stepComputeFloor_s(*r.costs);
            QVERIFY2(floor_s > 0 && floor_s <= r.step_time_s,
                     qPrintable(QString::fromStdString(std::to_string(floor_s) + " vs " +
                                                       std::to_string(r.step_time_s) + "\n" +
                                                       toYaml(s))));
            if (valid % 5 == 0) {
                // Monotonicity beyond the samples: twice the NVLink or NIC bandwidth is never
                // slower.
                Scenario faster = s;
                faster.cluster.gpu.scale_up_gbps *= 2;
                QVERIFY2(evaluate(faster).step_time_s <= r.step_time_s * (1 + 1e-12),
                         toYaml(s).c_str());
                faster = s;
                faster.cluster.nic.bandwidth_gbps *= 2;
                QVERIFY2(evaluate(faster).step_time_s <= r.step_time_s * (1 + 1e-12),
                         toYaml(s).c_str());
            }
            moe += m.isMoe();
            dense += !m.isMoe();
            dropping += r.load.dropped_share > 0;
            ++schedules[static_cast<int>(l.schedule)];
        }
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        qInfo("%d valid of %d attempts (%d MoE, %d dense, %d dropping tokens; gpipe %d, 1f1b %d, "
              "interleaved %d, dualpipe %d) in %.2f s",
              valid, attempts, moe, dense, dropping, schedules[0], schedules[1], schedules[2],
              schedules[3], seconds);
        QCOMPARE(valid, 200);
        // The sweep must actually cover the variety it claims.
        QVERIFY(moe > 0 && dense > 0 && dropping > 0);
        for (int n : schedules)
            QVERIFY(n > 0);
    }

    void edgeCases_data() {
        QTest::addColumn<QStringList>("overrides");
        QTest::newRow("one GPU") << QStringList{"cluster.nodes=1",
                                                "cluster.gpus_per_node=1",
                                                "cluster.scale_out.nics_per_node=1",
                                                "layout.dp=1",
                                                "layout.ep=1",
                                                "training.global_batch=2"};
        QTest::newRow("EP=1 MoE") << QStringList{"layout.ep=1"};
        QTest::newRow("dense") << QStringList{"model.experts=0", "model.top_k=0",
                                              "model.expert_ffn_hidden=0", "layout.ep=1"};
        QTest::newRow("TP across nodes")
            << QStringList{"layout.tp=8", "layout.dp=1", "layout.ep=1", "training.global_batch=4"};
        QTest::newRow("CP and ZeRO-3 full recompute")
            << QStringList{"layout.cp=2", "layout.dp=4", "layout.ep=4", "training.zero_stage=3",
                           "training.recompute=full"};
        QTest::newRow("zero latency ethernet oversubscribed")
            << QStringList{"cluster.scale_up.latency_us=0", "cluster.scale_out.latency_us=0",
                           "cluster.scale_out.fabric=ethernet",
                           "cluster.scale_out.oversubscription=4", "layout.ep=8"};
    }
    void edgeCases() {
        QFETCH(QStringList, overrides);
        std::vector<std::string> o;
        for (const QString& s : overrides)
            o.push_back(s.toStdString());
        const std::optional<Scenario> s = fromYaml(kHandYaml, o);
        QVERIFY(s);
        const Report r = evaluate(*s);
        const std::string bad = badFigure(r);
        QVERIFY2(bad.empty(), bad.c_str());
        QVERIFY(close(sumOf(r.step.seconds), r.step_time_s, 1e-12));
        if (s->layout.ep == 1) {
            QVERIFY(!findCollective(r, CollectiveKind::moe_dispatch));
            QCOMPARE(item(r.step, StepItem::all_to_all), 0.0);
        }
        if (!s->model.isMoe()) {
            QCOMPARE(item(r.step, StepItem::expert_compute), 0.0);
            QCOMPARE(item(r.step, StepItem::router), 0.0);
            QCOMPARE(item(r.step, StepItem::imbalance_wait), 0.0);
            QVERIFY(r.load.imbalance_per_layer.empty());
            QVERIFY(!findCollective(r, CollectiveKind::edp_sync));
        }
        if (r.gpus == 1)
            QVERIFY(r.collectives.empty());
    }

    void droppingTokens() {
        // Capacity factor 1 with a steep Zipf: the hot experts overflow ceil(1 x 8192 / 8) =
        // 1024 slots per layer and the rest is dropped.
        const std::optional<Scenario> s =
            fromYaml(kHandYaml, {"model.capacity_factor=1.0", "routing.model=zipf",
                                 "routing.zipf_alpha=1.5", "routing.balance=0"});
        QVERIFY(s);
        const Report r = evaluate(*s);
        QVERIFY(r.load.dropped_share > 0 && r.load.dropped_share < 1);
        QVERIFY(findWarning(r, "tokens-dropped"));
        QVERIFY(badFigure(r).empty());
        // A generous capacity drops nothing.
        const std::optional<Scenario> roomy =
            fromYaml(kHandYaml, {"model.capacity_factor=8.0", "routing.model=zipf",
                                 "routing.zipf_alpha=1.5", "routing.balance=0"});
        QVERIFY(roomy);
        const Report rr = evaluate(*roomy);
        QCOMPARE(rr.load.dropped_share, 0.0);
        QVERIFY(!findWarning(rr, "tokens-dropped"));
    }

    void absurdSizes_data() {
        QTest::addColumn<QString>("yaml");
        QTest::addColumn<QStringList>("overrides");
        // The documented bounds (moe/limits.h): 16,384 experts x 64 MoE layers = 2^20 pairs.
        QTest::newRow("experts x layers at the bound")
            << QString(kHandYaml)
            << QStringList{"model.experts=16384", "model.top_k=8", "model.layers=64", "layout.ep=8",
                           "training.global_batch=8"};
        // 25,000 nodes x 4 = 100,000 GPUs on the hand model, EP = 4 inside nodes.
        QTest::newRow("100K GPUs") << QString(kHandYaml)
                                   << QStringList{"cluster.nodes=25000", "layout.dp=100000",
                                                  "training.global_batch=100000"};
    }
    void absurdSizes() {
        QFETCH(QString, yaml);
        QFETCH(QStringList, overrides);
        std::vector<std::string> o;
        for (const QString& s : overrides)
            o.push_back(s.toStdString());
        const std::optional<Scenario> s = fromYaml(yaml.toStdString(), o);
        QVERIFY(s);
        const auto start = std::chrono::steady_clock::now();
        const Report r = evaluate(*s);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        qInfo("%d GPUs, %d experts: evaluated in %.3f s, step %.4g s", r.gpus, s->model.experts,
              seconds, r.step_time_s);
        const std::string bad = badFigure(r);
        QVERIFY2(bad.empty(), bad.c_str());
        QVERIFY(close(sumOf(r.step.seconds), r.step_time_s, 1e-12));
    }

    // ---- 8. Warnings -------------------------------------------------------------------------
    void warnings() {
        auto evalDefault = [](const std::vector<std::string>& overrides) {
            const std::optional<Scenario> s = fromYaml(defaultScenarioYaml(), overrides);
            return s ? std::optional<Report>(evaluate(*s)) : std::nullopt;
        };
        using Sev = DesignWarning::Severity;

        // The hand scenario is clean: EP inside nodes, no TP, fits, uniform routing, no PP.
        {
            const std::optional<Scenario> s = fromYaml(kHandYaml);
            QVERIFY(s);
            const Report r = evaluate(*s);
            for (const char* code : {"ep-crosses-domain", "tp-crosses-domain", "memory-over",
                                     "memory-tight", "straggler", "bubble", "tokens-dropped"})
                QVERIFY2(!findWarning(r, code), code);
        }
        {
            const auto r = evalDefault({"layout.order=tp-cp-dp-ep-pp"});
            QVERIFY(r);
            const DesignWarning* w = findWarning(*r, "ep-crosses-domain");
            QVERIFY(w);
            QCOMPARE(w->severity, Sev::warning);
            QCOMPARE(w->gpus.size(), size_t(8));
            // The words come from the figures: EP = 8 on 8-GPU nodes, ordered outside DP,
            // spans 8 nodes; the CX7's 48 GB/s x 0.9 per GPU against NVLink's 450 x 0.8.
            const auto& f = std::get<EpCrossesDomain>(w->figures);
            QCOMPARE(f.ep_gpus, 8);
            QCOMPARE(f.ep_nodes, 8);
            QCOMPARE(warningText(*w),
                     std::string("EP group of 8 GPUs spans 8 nodes: the all-to-all rides "
                                 "InfiniBand (43.2 GB/s per GPU) instead of NVLink (360.0 GB/s)"));
        }
        {
            // TP = 16 on 8-GPU nodes: every TP group spans two NVLink domains.
            const auto r = evalDefault({"layout.tp=16", "layout.dp=4"});
            QVERIFY(r);
            const DesignWarning* w = findWarning(*r, "tp-crosses-domain");
            QVERIFY(w);
            QCOMPARE(w->severity, Sev::critical);
            const Collective* tp = findCollective(*r, CollectiveKind::tp_collective);
            QVERIFY(tp && tp->scale_out_bytes_per_gpu > 0);
            // TP = 8 stays inside the node: no warning.
            const auto r8 = evalDefault({"layout.tp=8", "layout.dp=8"});
            QVERIFY(r8);
            QVERIFY(!findWarning(*r8, "tp-crosses-domain"));
        }
        {
            // 128 experts of 3 x 4096 x 8192 over EP = 8: 24 x 16 x 100.7M = 38.7B expert
            // parameters per GPU, far beyond 80 GB.
            const auto r = evalDefault({"model.experts=128"});
            QVERIFY(r);
            const DesignWarning* w = findWarning(*r, "memory-over");
            QVERIFY(w);
            QCOMPARE(w->severity, Sev::critical);
            QVERIFY(!r->memory.fits && r->memory.margin_bytes < 0);
        }
        {
            const auto calm =
                evalDefault({"routing.model=zipf", "routing.zipf_alpha=2", "routing.balance=1"});
            const auto r =
                evalDefault({"routing.model=zipf", "routing.zipf_alpha=2", "routing.balance=0"});
            QVERIFY(r && calm);
            QVERIFY(!findWarning(*calm, "straggler"));
            const DesignWarning* w = findWarning(*r, "straggler");
            QVERIFY(w);
            QVERIFY(r->load.max_imbalance >= 1.5);
            QCOMPARE(w->gpus.size(), size_t(1));
            QCOMPARE(w->gpus.front(), r->load.hottestGpu(*r->placement));
        }
        {
            // PP = 4 with 4 micro-batches (64 / (16 x 1)): bubble 3t / (4t + 3t) ~ 43%.
            const auto r = evalDefault({"layout.pp=4", "layout.dp=16", "training.global_batch=64",
                                        "training.micro_batch=1"});
            QVERIFY(r);
            QCOMPARE(r->micro_batches, 4);
            QVERIFY(findWarning(*r, "bubble"));
            QVERIFY(item(r->step, StepItem::bubble) > 0.15 * r->step_time_s);
            // Many micro-batches: the bubble shrinks below 15%.
            const auto many =
                evalDefault({"layout.pp=4", "layout.dp=16", "training.global_batch=1024"});
            QVERIFY(many);
            QVERIFY(!findWarning(*many, "bubble"));
        }
    }

    // ---- 9. Determinism ----------------------------------------------------------------------
    void determinism() {
        const Scenario& s = defaultScenario();
        const Report a = evaluate(s);
        const Report b = evaluate(s);
        QCOMPARE(a.step_time_s, b.step_time_s);
        QVERIFY(a.load.rank_tokens == b.load.rank_tokens);
        QVERIFY(a.load.imbalance_per_layer == b.load.imbalance_per_layer);
        QVERIFY(a.linkBytes() == b.linkBytes());
        QVERIFY(a.step.seconds == b.step.seconds);

        // Thread-safe: the same figures from two threads at once.
        Report c, d;
        std::thread t1([&] { c = evaluate(s); });
        std::thread t2([&] { d = evaluate(s); });
        t1.join();
        t2.join();
        QCOMPARE(c.step_time_s, a.step_time_s);
        QCOMPARE(d.step_time_s, a.step_time_s);
        QVERIFY(c.load.rank_tokens == a.load.rank_tokens);

        // The next routing step resamples the tokens (popularity stays).
        const Report next = evaluate(s, 1);
        QVERIFY(next.load.rank_tokens != a.load.rank_tokens);
        QVERIFY(next.load.popularity == a.load.popularity);
        QCOMPARE(next.load.slots_per_group, a.load.slots_per_group);
    }
};

QTEST_GUILESS_MAIN(TestEvaluate)
#include "test_evaluate.moc"
