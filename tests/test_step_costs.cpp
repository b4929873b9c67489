// The one cost model's named formulas (step_costs.h), each against values derived by hand on
// the hand scenario (test_support.h: 1000 TFLOPS BF16 -> 7e14 GEMM and 5.5e14 attention FLOP/s,
// 4 TB/s HBM -> 3.2e12 B/s, NVLink 320 GB/s + 2 us, NIC 45 GB/s + 4 us per GPU; a 2-layer MoE,
// hidden 1024, 8 heads of 128, seq 1024, vocab 1000, dense FFN 4096, 8 experts of 1024, top-2),
// and the overlap, bucket and schedule formulas against small worked examples (the same
// examples the step simulation reproduces in test_timeline).
#include "moe/evaluate.h"
#include "moe/scenario_io.h"
#include "moe/step_costs.h"
#include "test_close.h"
#include "test_support.h"

#include <QtTest>

#include <cmath>
#include <optional>

using namespace moe;
using namespace moe::test::hand;

namespace {

Scenario hand(const std::vector<std::string>& overrides = {}) {
    const LoadResult r =
        loadScenarioTextWithOverrides(moe::test::kHandYaml, "<hand>", ".", overrides);
    if (!r.ok())
        qFatal("%s", formatAll(r.diagnostics).c_str());
    return *r.scenario;
}

constexpr double kTokens = 1024; // per GPU per micro-batch: micro_batch 1 x seq 1024, TP = CP = 1

} // namespace

class TestStepCosts : public QObject {
    Q_OBJECT

private slots:
    void rates() {
        const HardwareRates r = hardwareRates(hand());
        QCLOSE(r.gemm_flops, kGemm);
        QCLOSE(r.attention_flops, kAttn);
        QCLOSE(r.hbm_bytes_s, kHbm);
        QCLOSE(r.scale_up.bandwidth_gbps, kUp / 1e9);
        QCLOSE(r.scale_up.latency_us, 2.0);
        QCLOSE(r.scale_out.bandwidth_gbps, kOut / 1e9);
        // FP8 compute: 2000 TFLOPS x 0.50; DualPipe leaves compute 112 of 132 SMs; a 2:1
        // oversubscribed fabric halves each GPU's NIC rate.
        QCLOSE(hardwareRates(hand({"model.precision.compute=fp8"})).gemm_flops, 1e15);
        const HardwareRates dual = hardwareRates(
            hand({"layout.pp=2", "layout.dp=4", "layout.schedule=dualpipe", "model.layers=4"}));
        QCLOSE(dual.gemm_flops, kGemm * 112.0 / 132.0);
        QCLOSE(dual.attention_flops, kAttn * 112.0 / 132.0);
        QCLOSE(
            hardwareRates(hand({"cluster.scale_out.oversubscription=2"})).scale_out.bandwidth_gbps,
            kOut / 2e9);
    }

    void a100AgainstH100() {
        // The dense 70B sample on its own H100s and moved onto the a100-sxm preset (same shape,
        // DGX A100 with ConnectX-6 HDR). hardwareRates() multiplies each datasheet figure by one
        // efficiency, so every rate scales by the datasheet ratio: GEMM and attention 312/989
        // (both BF16 x the same efficiency), HBM 2.039/3.35, NVLink 300/450, NIC 24/48.
        const auto load = [](const std::vector<std::string>& overrides) {
            const LoadResult r = loadScenarioWithOverrides(
                moe::test::samplePath("dense-70b-64xh100.yaml"), overrides);
            if (!r.ok())
                qFatal("%s", formatAll(r.diagnostics).c_str());
            return *r.scenario;
        };
        const Scenario h100 = load({});
        const Scenario a100 = load({"cluster.gpu=a100-sxm", "cluster.scale_out.nic=cx6-200g"});
        QCOMPARE(a100.cluster.gpu.name, std::string("NVIDIA A100 SXM 80GB"));
        const HardwareRates rh = hardwareRates(h100);
        const HardwareRates ra = hardwareRates(a100);
        QCLOSE(ra.gemm_flops / rh.gemm_flops, 312.0 / 989.0);
        QCLOSE(ra.attention_flops / rh.attention_flops, 312.0 / 989.0);
        QCLOSE(ra.hbm_bytes_s / rh.hbm_bytes_s, 2.039 / 3.35);
        QCLOSE(ra.scale_up.bandwidth_gbps / rh.scale_up.bandwidth_gbps, 300.0 / 450.0);
        QCLOSE(ra.scale_out.bandwidth_gbps / rh.scale_out.bandwidth_gbps, 24.0 / 48.0);
        // The LM head is a pure GEMM: its time scales by exactly 989/312 = 3.17.
        const double tokens = 8192; // one micro-batch of one 8192-token sequence
        QCLOSE(lmHeadForward_s(a100.model, tokens, ra) / lmHeadForward_s(h100.model, tokens, rh),
               989.0 / 312.0);
        // The dense FFN adds its SwiGLU pass over HBM, which scales by 3.35/2.039 = 1.64 only,
        // so the whole FFN slows by less than the GEMM ratio and more than the HBM ratio.
        const double ffn_ratio = denseFfnForward_s(a100.model, 8, tokens, ra) /
                                 denseFfnForward_s(h100.model, 8, tokens, rh);
        QVERIFY(ffn_ratio < 989.0 / 312.0 && ffn_ratio > 3.35 / 2.039);
        // The whole scenario evaluates on A100; its step is slower than on H100 but by no more
        // than the largest rate ratio (the GEMM's 3.17, or NVLink's 1.5 / NIC's 2 for exposed
        // communication), and its MFU is against the A100's own 312 TFLOPS.
        const Report ra_report = evaluate(a100);
        const Report rh_report = evaluate(h100);
        QVERIFY(std::isfinite(ra_report.step_time_s) &&
                ra_report.step_time_s > rh_report.step_time_s);
        QVERIFY(ra_report.step_time_s < rh_report.step_time_s * 989.0 / 312.0 * 1.01);
        QCLOSE(ra_report.throughput.mfu, ra_report.throughput.model_tflops_per_gpu / 312.0);
    }

    void attention() {
        const Scenario s = hand();
        const HardwareRates r = hardwareRates(s);
        // Projections 2 x 4h^2 = 8,388,608 FLOPs per token at the GEMM rate; the causal core
        // 2 x seq x heads x head_dim = 2,097,152 per token at the attention rate; 14
        // hidden-sized BF16 passes = 28,672 B per token through HBM.
        QCLOSE(attentionForward_s(s.model, kTokens, r), kTokens * 8388608.0 / kGemm +
                                                            kTokens * 2097152.0 / kAttn +
                                                            kTokens * 1024 * 2 * 14 / kHbm);
        // Selective recompute of GQA attention: no up-projection GEMMs, the two norms' 4
        // passes.
        QCLOSE(selectiveRecompute_s(s.model, kTokens, r), kTokens * 1024 * 2 * 4 / kHbm);
    }

    void mlps() {
        Scenario s = hand();
        const HardwareRates r = hardwareRates(s);
        // SwiGLU: 3 passes of the intermediate columns, BF16.
        QCLOSE(swiglu_s(s.model, kTokens, 4096, r), kTokens * 4096 * 2 * 3 / kHbm);
        // Dense FFN: 3 GEMMs of h x 4096, 2 FLOPs per multiply-add = 25,165,824 per token. At
        // TP = 2 `tokens` is the GPU's sequence-parallel share: it runs all 2 x tokens on half
        // the columns, the same GEMM FLOPs, and the activation over its 2048 columns.
        QCLOSE(denseFfnForward_s(s.model, 1, kTokens, r),
               kTokens * 25165824.0 / kGemm + kTokens * 4096 * 2 * 3 / kHbm);
        QCLOSE(denseFfnForward_s(s.model, 2, kTokens, r),
               kTokens * 25165824.0 / kGemm + kTokens * 2048 * 2 * 3 / kHbm);
        // Router: 2 x h x experts = 16,384 FLOPs per token.
        QCLOSE(routerForward_s(s.model, kTokens, r), kTokens * 16384.0 / kGemm);
        // LM head: 2 x vocab x h = 2,048,000 FLOPs per token.
        QCLOSE(lmHeadForward_s(s.model, kTokens, r), kTokens * 2048000.0 / kGemm);
        // No shared experts: nothing. One shared expert of 1024 (the routed experts' size):
        // 6 x 1024 x 1024 = 6,291,456 FLOPs per token and its SwiGLU.
        QCOMPARE(sharedExpertsForward_s(s.model, 1, kTokens, r), 0.0);
        s.model.shared_experts = 1;
        QCLOSE(sharedExpertsForward_s(s.model, 1, kTokens, r),
               kTokens * 6291456.0 / kGemm + kTokens * 1024 * 2 * 3 / kHbm);
    }

    void expertGemms() {
        const Scenario s = hand();
        const HardwareRates r = hardwareRates(s);
        const ExpertGemmShape g = expertGemmShape(s);
        // 8 experts over EP = 4: 2 per rank; 6 h f = 6,291,456 FLOPs and 3 h f x 2 B =
        // 6,291,456 B of weights per expert; per slot 2 x (3h + 3f) + 4 permute passes of
        // 2h = 20,480 B.
        QCOMPARE(g.experts_per_rank, 2);
        QCLOSE(g.flops_per_slot, 6291456.0);
        QCLOSE(g.weight_bytes, 6291456.0);
        QCLOSE(g.activation_bytes_per_slot, 20480.0);
        // 2048 slots = 1024 per expert: efficiency 1024 / (1024 + 128); compute-bound (20.7 us
        // against 17.0 us of streaming).
        QCLOSE(expertGemm_s(g, 2048, r), 2048 * 6291456.0 / (kGemm * 1024.0 / 1152.0));
        // 64 slots = 32 per expert: efficiency 0.2, compute 2.88 us, memory-bound: two
        // experts' weights plus 64 slots' activations, (12,582,912 + 1,310,720) B at HBM rate.
        QCLOSE(expertGemm_s(g, 64, r), (2 * 6291456.0 + 64 * 20480.0) / kHbm);
        QCOMPARE(expertGemm_s(g, 0, r), 0.0);
    }

    void collectives() {
        // TP = 2 inside a node: 512 tokens per GPU (sequence parallel), a buffer of
        // 2 x 512 x 1024 x 2 B = 2,097,152 B; a ring reduce-scatter moves half of it in one
        // NVLink step.
        const Scenario tp = hand({"layout.tp=2", "layout.dp=4", "layout.ep=2"});
        const Report rt = evaluate(tp);
        const CollectiveCost call =
            tpCollective(tp, shapeOf(rt.placement->spanOf(GroupKind::tp)), 512, hardwareRates(tp));
        QCLOSE(call.scale_up_bytes_per_gpu, 1048576.0);
        QCOMPARE(call.scale_out_bytes_per_gpu, 0.0);
        QCLOSE(call.time_s, kAlphaUp + 1048576.0 / kUp);
        // CP = 2: 512 tokens per GPU, K and V of 8 heads x 128 = 2,048 elements per token,
        // BF16: 2,097,152 B per ring step.
        QCLOSE(kvChunkBytes(hand({"layout.cp=2", "layout.dp=4", "layout.ep=2"}), 512), 2097152.0);
        // All-to-all: 1024 tokens x top-2 x h x 2 B = 4,194,304 B per call each way; no
        // node-limited routing, so nothing is capped to the nodes a token reaches.
        const Scenario s = hand();
        const Report r = evaluate(s);
        const GroupShape ep = shapeOf(r.placement->spanOf(GroupKind::ep));
        const AllToAllBytes b = allToAllBytes(s, ep, kTokens);
        QCLOSE(b.dispatch, 4194304.0);
        QCLOSE(b.combine, 4194304.0);
        QCOMPARE(b.dispatch_cross, -1.0);
        // EP = 8 over both nodes with tokens limited to one remote node: each token crosses
        // the fabric expectedRemoteNodesPerToken(2, 2, 1) times.
        const Scenario limited = hand({"layout.ep=8", "layout.max_nodes_per_token=1"});
        const Report rl = evaluate(limited);
        const GroupShape ep8 = shapeOf(rl.placement->spanOf(GroupKind::ep));
        QCOMPARE(ep8.domains, 2);
        const AllToAllBytes bl = allToAllBytes(limited, ep8, kTokens);
        QCLOSE(bl.dispatch_cross, kTokens * expectedRemoteNodesPerToken(2, 2, 1) * 1024 * 2);
        QCLOSE(bl.combine_cross, bl.dispatch_cross);
    }

    void moeLayerPrice() {
        const Report r = evaluate(hand());
        const MoeCosts& moe = r.costs->moe;
        // One EP group of 4 GPUs in a node: T = 3/4 x 4,194,304 B / B_up + alpha_up, and the
        // busiest receiver at f = 1.5 x the mean adds half the bandwidth term.
        const double t = 0.75 * 4194304.0 / kUp + kAlphaUp;
        QCLOSE(moe.mean_slots, 2048.0);
        QCLOSE(moe.dispatch_s(1.0), t);
        QCLOSE(moe.combine_s(1.5), t + 0.5 * 0.75 * 4194304.0 / kUp);
        QCLOSE(moe.dispatch_s(0.5), t); // factors below 1 count as 1
        const MoeLayerPrice p = moe.price(1.5);
        QCLOSE(p.expert_fwd_s, moe.expertForward_s(3072));
        QCLOSE(p.expert_bwd_s, 2 * moe.expertForward_s(3072)); // backward = 2 forwards
        QCLOSE(p.combine_bwd_s, moe.combine_s(1.5));
        QCLOSE(p.transfers_s(), moe.dispatch_s(1.5) + 3 * moe.combine_s(1.5));
        // Full recompute re-runs the forward pair before the backward's combine, and the
        // backward GEMMs once more.
        const Report full = evaluate(hand({"training.recompute=full"}));
        const MoeLayerPrice pf = full.costs->moe.price(1.0);
        QCLOSE(pf.combine_bwd_s, pf.combine_fwd_s + pf.dispatch_fwd_s + pf.combine_fwd_s);
        QCLOSE(pf.expert_bwd_s, 3 * pf.expert_fwd_s);
        QCLOSE(full.costs->moe.mean.transfers_s(), pf.transfers_s());
    }

    /// Two segments per pass (worked by hand, timeline_builder.cpp's emitPair order F0 B0 F1 B1):
    ///   F0: transfer 3 then compute 1     B0: transfer 4 then compute 2 (weight grads 1)
    ///   F1: transfer 2 then compute 1     B1: transfer 1 then compute 2 (weight grads 1)
    /// B0's transfer starts when F0's transfer leaves the stream (3) - B1's input gradients were
    /// ready at 1 - and ends at 7; F0's compute ends at max(2, 3) + 1 = 4: 3 exposed. F1's
    /// transfer (2) hides under B0's compute (2). B1's transfer starts at max(1, 2) = 2 after
    /// B0's block starts and ends at 3 = when F1's compute ends: nothing. F0's next transfer
    /// (3, the next layer's) beside B1's compute (2): 1 exposed. Total 4 of all-to-all.
    void pairSegments() {
        PairSegment forward[] = {{3, 0, false, 1}, {2, 0, false, 1}};
        PairSegment backward[] = {{4, 0, false, 2, 1}, {1, 0, false, 2, 1}};
        PairExposure e = alternatingSegmentsExposure(forward, backward, 2);
        QCOMPARE(e.all_to_all_s, 4.0);
        QCOMPARE(e.tp_s, 0.0);
        QCOMPARE(e.imbalance_s, 0.0);
        // When 1.5 of B0's 4 is the busiest receiver's extra, the exposed 3 is its tail: 1.5
        // imbalance, 1.5 all-to-all.
        backward[0].all_to_all_wait_s = 1.5;
        e = alternatingSegmentsExposure(forward, backward, 2);
        QCOMPARE(e.imbalance_s, 1.5);
        QCOMPARE(e.all_to_all_s, 2.5);
        // With a TP collective: F (all-to-all 1 then TP 2, compute 1), B (TP 1 then all-to-all
        // 2, compute 2). B's transfers (3) start at 3 when F's leave the stream, end at 6, F's
        // compute ends at 4: 2 exposed, the tail = B's all-to-all. F's next transfers (3)
        // beside B's compute (2): 1 exposed, the tail = F's TP.
        const PairSegment f_tp[] = {{1, 2, true, 1}};
        const PairSegment b_tp[] = {{2, 1, false, 2}};
        e = alternatingSegmentsExposure(f_tp, b_tp, 1);
        QCOMPARE(e.all_to_all_s, 2.0);
        QCOMPARE(e.tp_s, 1.0);
    }

    void dualPipeSchedule() {
        // 1.5 pp - 1 - (distance from the nearer end), + 1 on the two middle ranks.
        QCOMPARE(dualPipeUnpairedPasses(16, 0), 23.0);
        QCOMPARE(dualPipeUnpairedPasses(16, 15), 23.0);
        QCOMPARE(dualPipeUnpairedPasses(16, 4), 19.0);
        QCOMPARE(dualPipeUnpairedPasses(16, 7), 17.0);
        QCOMPARE(dualPipeUnpairedPasses(4, 0), 5.0);
        QCOMPARE(dualPipeUnpairedPasses(4, 1), 5.0);
    }

    void bubbles() {
        LayoutSpec lay;
        lay.pp = 4;
        const double t = 3;
        lay.schedule = PipelineSchedule::one_f_one_b;
        QCOMPARE(pipelineBubble_s(lay, t), 9.0); // (p - 1) t
        lay.schedule = PipelineSchedule::gpipe;
        QCOMPARE(pipelineBubble_s(lay, t), 9.0);
        lay.schedule = PipelineSchedule::interleaved;
        lay.vpp = 2;
        QCOMPARE(pipelineBubble_s(lay, t), 4.5); // (p - 1) t / v
        lay.schedule = PipelineSchedule::dualpipe;
        lay.vpp = 1;
        // F = 1, B = 2, W = 1, F&B = 3: (4/2 - 1)(3 + 2 - 3) = 2.
        QCOMPARE(pipelineBubble_s(lay, t), 2.0);
        lay.pp = 1;
        QCOMPARE(pipelineBubble_s(lay, t), 0.0);
    }

    /// The oracles of test_timeline's dpSyncExposed, in closed form: two layers of backward 2,
    /// forward 1. Buckets of 1: layer 1's is released with 2 of backward to go and hides; layer
    /// 0's ends 1 after the backward. Buckets of 10: 20 - 2 = 18. Gathers of 5: layer 0's first
    /// forward waits 5, layer 1's until 10, 9 later than its compute alone.
    void buckets() {
        QCOMPARE(bucketSyncTail_s({1, 1}, {2, 0}), 1.0);
        QCOMPARE(bucketSyncTail_s({10, 10}, {2, 0}), 18.0);
        QCOMPARE(bucketSyncTail_s({3, 1, 1}, {2, 1, 0}), 3.0);
        QCOMPARE(bucketSyncTail_s({}, {}), 0.0);
        QCOMPARE(bucketGatherHead_s({5, 5}, {0, 1}), 9.0);
        QCOMPARE(bucketGatherHead_s({1, 1}, {0, 3}), 1.0);
    }

    /// The pricing function on the hand scenario: the step is m x the stage's per-micro-batch
    /// items plus the two ends, priced once per sample; an even sample has no imbalance wait.
    void pricing() {
        const Report r = evaluate(hand());
        const StepCostModel& model = *r.costs;
        QCOMPARE(model.stages.size(), size_t(1));
        QCOMPARE(model.ranks.size(), size_t(1));
        QCOMPARE(model.ranks[0].buckets.size(), size_t(2));
        const StepPrice p = priceStep(model, r.load);
        QCLOSE(p.step_time_s, r.step_time_s);
        const StepBreakdown mb = priceStage(model, model.stages[0], p.stage_imbalance[0]);
        for (int i = 0; i < kStepItemCount; ++i) {
            const auto k = static_cast<StepItem>(i);
            if (k != StepItem::dp_sync && k != StepItem::optimizer)
                QCLOSE(p.step[k], 2 * mb[k]);
        }
        const StepBreakdown even = priceStage(model, model.stages[0], 1.0);
        QCOMPARE(even[StepItem::imbalance_wait], 0.0);
        QCLOSE(even.total_s, model.stages[0].mean.total_s);
        // Keys are stable snake_case, words are for people.
        QCOMPARE(std::string(keyOf(StepItem::tp_comm)), std::string("tp_collectives"));
        QCOMPARE(std::string(toString(StepItem::tp_comm)), std::string("TP comm (exposed)"));
    }
};

QTEST_APPLESS_MAIN(TestStepCosts)
#include "test_step_costs.moc"
