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
        QCLOSE(r.attention_bwd_flops, kAttnBwd);
        QCLOSE(r.weight_grad_gemm_flops, kGemm);
        QCLOSE(r.hbm_bytes_s, kHbm);
        QCLOSE(r.scale_up.bandwidth_gbps, kUp / 1e9);
        QCLOSE(r.scale_up.latency_us, 2.0);
        QCLOSE(r.scale_out.bandwidth_gbps, kOut / 1e9);
        // The h100-sxm preset's 132 SMs; BF16 operands and output.
        QCOMPARE(r.gemm_sms, 132);
        QCLOSE(r.gemm_input_bytes, 2.0);
        QCLOSE(r.gemm_output_bytes, 2.0);
        QCLOSE(hardwareRates(hand({"model.precision.compute=fp8"})).gemm_input_bytes, 1.0);
        // FP8 compute at the default delayed (per-tensor) scaling: 2000 TFLOPS x 0.70, the BF16
        // share; DualPipe leaves compute 112 of 132 SMs; a 2:1 oversubscribed fabric halves each
        // GPU's NIC rate.
        QCLOSE(hardwareRates(hand({"model.precision.compute=fp8"})).gemm_flops, 1.4e15);
        const HardwareRates dual = hardwareRates(
            hand({"layout.pp=2", "layout.dp=4", "layout.schedule=dualpipe", "model.layers=4"}));
        QCLOSE(dual.gemm_flops, kGemm * 112.0 / 132.0);
        QCLOSE(dual.attention_flops, kAttn * 112.0 / 132.0);
        QCLOSE(dual.attention_bwd_flops, kAttnBwd * 112.0 / 132.0);
        // FP8 with DeepSeek-V3's block scaling: forward GEMMs at 0.60 of the 2000 TFLOPS FP8
        // peak, weight gradients at 0.475 (DeepGEMM's wgrad kernels); per-tensor scaling runs
        // both at the BF16 share.
        const HardwareRates block = hardwareRates(
            hand({"model.precision.compute=fp8", "model.precision.fp8_recipe=blockwise"}));
        QCLOSE(block.gemm_flops, 2000e12 * 0.60);
        QCLOSE(block.weight_grad_gemm_flops, 2000e12 * 0.475);
        QCLOSE(weightGradRates(block).gemm_flops, 2000e12 * 0.475);
        QCLOSE(bf16GemmRates(block).weight_grad_gemm_flops, kGemm);
        QCLOSE(hardwareRates(hand({"model.precision.compute=fp8"})).weight_grad_gemm_flops, 1.4e15);
        QCOMPARE(dual.gemm_sms, 112);
        QCLOSE(
            hardwareRates(hand({"cluster.scale_out.oversubscription=2"})).scale_out.bandwidth_gbps,
            kOut / 2e9);
    }

    void fp8Recipes() {
        // The hand GPU: FP8 peak 2000 TFLOPS, HBM 3.2e12 B/s achievable, 132 SMs.
        Scenario s = hand({"model.precision.compute=fp8"});
        const auto rates = [&](Fp8Recipe recipe) {
            s.model.fp8_recipe = recipe;
            return hardwareRates(s);
        };
        // Shares of the FP8 peak: per-tensor (delayed, tensorwise) and MXFP8 0.70 (the BF16
        // main loop), blockwise 0.60 (DeepGEMM's grouped GEMMs on H800). The router and head
        // keep the BF16 rate, 1000 x 0.70.
        QCLOSE(rates(Fp8Recipe::delayed).gemm_flops, 1.4e15);
        QCLOSE(rates(Fp8Recipe::tensorwise).gemm_flops, 1.4e15);
        QCLOSE(rates(Fp8Recipe::mxfp8).gemm_flops, 1.4e15);
        QCLOSE(rates(Fp8Recipe::blockwise).gemm_flops, 1.2e15);
        QCLOSE(rates(Fp8Recipe::blockwise).bf16_gemm_flops, kGemm);
        // Quantize bytes per element over the step, spread over 3 forward-pass equivalents:
        // delayed X 2 read + 2 written (FP8 and its transpose) = 4, dY the same;
        // tensorwise adds the amax read: 6 and 6;
        // blockwise X: 2 + 1 + 4/128 forward, then 1 + 4/128 read and written again for the
        // 128x1 re-quantization = 3.03125 + 2.0625 = 5.09375; dY: 2 + 2 x (1 + 4/128) = 4.0625;
        // mxfp8 X and dY: 2 + 2 x (1 + 1/32) = 4.0625.
        QCLOSE(rates(Fp8Recipe::delayed).quantize_input_bytes, 4.0 / 3.0);
        QCLOSE(rates(Fp8Recipe::tensorwise).quantize_output_bytes, 6.0 / 3.0);
        QCLOSE(rates(Fp8Recipe::blockwise).quantize_input_bytes, 5.09375 / 3.0);
        QCLOSE(rates(Fp8Recipe::blockwise).quantize_output_bytes, 4.0625 / 3.0);
        QCLOSE(rates(Fp8Recipe::mxfp8).quantize_input_bytes, 4.0625 / 3.0);
        QCLOSE(rates(Fp8Recipe::mxfp8).quantize_output_bytes, 4.0625 / 3.0);
        QCOMPARE(hardwareRates(hand()).quantize_input_bytes, 0.0);

        // A blockwise GEMM 4096 x 2304 x 2304: 288 tiles in 3 waves of 132 (efficiency
        // 288 / 396) at 1.2e15 -> 2 x 4096 x 2304^2 / (1.2e15 x 288 / 396) = 49.8 us; streaming
        // A and B at 1 B and C at 2 B is (4096 x 2304 + 2304^2) x 1 + 4096 x 2304 x 2 = 33.6 MB
        // -> 10.5 us, so compute wins; quantization adds 4096 x (2304 x 5.09375 + 2304 x 4.0625)
        // / 3 B = 28.8 MB -> 9.0 us at 3.2e12 B/s.
        const HardwareRates block = rates(Fp8Recipe::blockwise);
        const double compute_s = 2.0 * 4096 * 2304 * 2304 / (1.2e15 * 288.0 / 396.0);
        const double quant_bytes = 4096.0 * (2304 * 5.09375 + 2304 * 4.0625) / 3.0;
        QCLOSE(quantize_s({4096, 2304, 2304}, 1.0, block), quant_bytes / kHbm);
        QCLOSE(gemm_s({4096, 2304, 2304}, block), compute_s + quant_bytes / kHbm);
        // Grouped: the quantization covers each group's unpadded rows: 2 groups of 8 rows.
        QCLOSE(quantize_s({8, 2048, 1024}, 2.0, block),
               2.0 * 8 * (1024 * 5.09375 + 2048 * 4.0625) / 3.0 / kHbm);
        // The router and the output head stay BF16 under FP8: the same time as in a BF16 run.
        const HardwareRates bf16 = hardwareRates(hand());
        QCLOSE(routerForward_s(s.model, kTokens, block), routerForward_s(s.model, kTokens, bf16));
        QCLOSE(lmHeadForward_s(s.model, 1, kTokens, block),
               lmHeadForward_s(s.model, 1, kTokens, bf16));
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
        // The LM head is one compute-bound GEMM: TP 8, one 8192-token sequence (1024 tokens per
        // GPU's sequence-parallel share) -> m = 8192, n = 128256 / 8 = 16032, k = 8192. Tiles
        // 64 x ceil(16032 / 256) = 64 x 63 = 4032: 31 waves on H100's 132 SMs, 38 on A100's 108.
        // Compute time is waves x SMs / sustained rate, so the ratio is
        // (989 / 312) x (38 x 108) / (31 x 132) = 3.179.
        const double tokens = 1024;
        QCLOSE(lmHeadForward_s(a100.model, 8, tokens, ra) /
                   lmHeadForward_s(h100.model, 8, tokens, rh),
               989.0 / 312.0 * (38.0 * 108.0) / (31.0 * 132.0));
        // The dense FFN adds its SwiGLU pass over HBM, which scales by 3.35/2.039 = 1.64 only,
        // so the whole FFN slows by less than the GEMM ratio and more than the HBM ratio.
        const double ffn_ratio = denseFfnForward_s(a100.model, 8, tokens, ra) /
                                 denseFfnForward_s(h100.model, 8, tokens, rh);
        QVERIFY(ffn_ratio < 989.0 / 312.0 * 1.05 && ffn_ratio > 3.35 / 2.039);
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

    void gemmTiles() {
        // NVIDIA's wave-quantization example shape on A100: m = 4096, n = k = 2304 on 108 SMs.
        // Tiles of 128 x 256: ceil(4096 / 128) x ceil(2304 / 256) = 32 x 9 = 288 (with 128 x 128
        // tiles it would be 32 x 18 = 576 and the same share); waves = ceil(288 / 108) = 3, which
        // could hold 324 tiles: efficiency 288 / 324 = 0.889.
        QCLOSE(gemmTileEfficiency({4096, 2304, 2304}, 108), 288.0 / 324.0);
        // Tile quantization: m = 1000 pads to 8 tiles of 128 rows, 8 x 9 = 72 tiles, one wave
        // (72 < 108 but floor(108 / 72) = 1: no split-K): 1000 x 2304 / (108 x 128 x 256) = 0.651.
        QCLOSE(gemmTileEfficiency({1000, 2304, 2304}, 108), 1000.0 * 2304 / (108.0 * 32768));
        // Split-K: 1024 x 1024 has 8 x 4 = 32 tiles on 132 SMs; floor(132 / 32) = 4 slices of k
        // each: 128 work units in one wave, 128 / 132 = 0.970.
        QCLOSE(gemmTileEfficiency({1024, 1024, 1024}, 132), 128.0 / 132.0);
        // Unknown SM count: no quantization.
        QCOMPARE(gemmTileEfficiency({1000, 2304, 2304}, 0), 1.0);

        const HardwareRates r = hardwareRates(hand());
        // Compute-bound: 4096 x 2304 x 2304 on 132 SMs: 288 tiles, 3 waves of 132 (396 slots),
        // efficiency 288 / 396; 2 x 4096 x 2304 x 2304 FLOPs = 43.5 GFLOP -> 85.4 us against
        // (4096 x 2304 x 2 + 2304 x 2304) x 2 B = 48.4 MB -> 15.1 us of streaming.
        QCLOSE(gemm_s({4096, 2304, 2304}, r), 2.0 * 4096 * 2304 * 2304 / (kGemm * 288.0 / 396.0));
        // Memory-bound skinny GEMM: 8 tokens through a 7168 -> 4096 projection. Tiles 1 x 16,
        // split-K floor(132 / 16) = 8: an eighth of a k = 7168 wave = 11.1 us; bytes A 8 x 7168,
        // B 7168 x 4096, C 8 x 4096 at 2 B = 2 x (57,344 + 29,360,128 + 32,768) = 58,900,480 B
        // -> 18.4 us at the HBM rate, so the time is its bytes over bandwidth.
        QCLOSE(gemm_s({8, 4096, 7168}, r), 58900480.0 / kHbm);
        QVERIFY(waveTime_s(7168) / 8 < 58900480.0 / kHbm);
        // Grouped, 8 rows for each of 2 experts (h = 1024 -> 2f = 2048): rows pad to one tile
        // (max(128, 8 + 64)), compute 2 x 2 x 128 x 2048 x 1024 / 7e14 = 1.53 us; bytes per expert
        // A 8 x 1024, B 1024 x 2048, C 8 x 2048: 2 x (8,192 + 2,097,152 + 16,384) x 2 =
        // 8,486,912 B -> 2.65 us: memory-bound.
        QCLOSE(groupedGemm_s({8, 2048, 1024}, 2, r), 8486912.0 / kHbm);
        // 1024 rows each: padded to 1024 + 64 = 1088 rows (half a tile expected per expert),
        // compute 2 x 2 x 1088 x 2048 x 1024 / 7e14 = 13.0 us against 21.0 MB = 6.6 us.
        QCLOSE(groupedGemm_s({1024, 2048, 1024}, 2, r), 2.0 * 2 * 1088 * 2048 * 1024 / kGemm);
        QCOMPARE(groupedGemm_s({8, 2048, 1024}, 0, r), 0.0);
        QCOMPARE(gemm_s({0, 2048, 1024}, r), 0.0);
    }

    void gemmMonotone() {
        // A bigger GEMM (or grouped GEMM) is never faster, in each dimension, on 108 (A100) and 132
        // (H100) SMs, across tile, wave and split-K boundaries.
        for (const int sms : {108, 132}) {
            HardwareRates r = hardwareRates(hand());
            r.gemm_sms = sms;
            double last_m = 0, last_n = 0, last_k = 0,
                   last_count = 0; // last_count: the grouped GEMM over rows
            for (double x = 1; x <= 20000; x += 37) {
                const double tm = gemm_s({x, 2304, 2304}, r);
                const double tn = gemm_s({4096, x, 2304}, r);
                const double tk = gemm_s({4096, 2304, x}, r);
                // (equal times may differ in the last bit: compare with a relative 1e-12)
                QVERIFY(tm >= last_m * (1 - 1e-12) && tn >= last_n * (1 - 1e-12) &&
                        tk >= last_k * (1 - 1e-12));
                last_m = tm, last_n = tn, last_k = tk;
            }
            for (double rows = 1; rows <= 4000; rows += 7) {
                const double t = groupedGemm_s({rows, 4096, 7168}, 4, r);
                QVERIFY(t >= last_count * (1 - 1e-12));
                last_count = t;
            }
        }
    }

    void attention() {
        const Scenario s = hand();
        const HardwareRates r = hardwareRates(s);
        // QKV: m = 1024 tokens, k = h = 1024, n = 3 x 1024: 8 x 12 = 96 tiles, one wave (no
        // split: floor(132 / 96) = 1) = waveTime(1024) = 12.7 us, above its 14.7 MB / 3.2e12 =
        // 4.6 us of streaming. Output projection 1024 x 1024 x 1024: 32 tiles, split-K 4, a
        // quarter wave = 3.2 us (streaming 6.3 MB: 2.0 us).
        QCLOSE(attentionForward_s(s.model, 1, kTokens, r), waveTime_s(1024) * 1.25);
        // Flash core: 2 x seq x heads x head_dim = 2,097,152 causal FLOPs per token at the
        // forward rate; backward 2.5x those FLOPs (QK^T recomputed) at the backward rate. Its
        // dropout runs inside the kernel. FlashAttention-3's pre- and postprocess per token and
        // head (8 heads of 128): O and dO read, 2 x 128 x 2 B = 512 B; the FP32 dQ accumulator
        // zeroed and read, 2 x 128 x 4 B = 1024 B; dQ written, 128 x 2 B = 256 B: 1792 B, x 8
        // heads = 14,336 B per token at the HBM rate.
        const double flash_s = kTokens * 2097152.0 / kAttn;
        QCLOSE(attentionCoreForward_s(s.model, AttentionKernel::flash, 1, kTokens, r), flash_s);
        QCLOSE(flashBackwardPrePost_s(s.model, kTokens, r), kTokens * 14336.0 / kHbm);
        QCLOSE(attentionCoreBackward_s(s.model, AttentionKernel::flash, 1, kTokens, r),
               2.5 * kTokens * 2097152.0 / kAttnBwd + kTokens * 14336.0 / kHbm);
        // Element-wise per token: two norms (2 passes each) and two residual adds (3 each) of
        // h = 1024, rotary on 8 query + 8 key heads of 128 = 2048 elements, 2 passes: 10 x 1024
        // + 2 x 2048 = 14,336 BF16 elements = 28,672 B. Dropout adds two 1-byte masks of h.
        QCLOSE(layerElementwiseForward_s(s.model, kTokens, 1, r), kTokens * 28672.0 / kHbm);
        QCLOSE(layerElementwiseForward_s(hand({"model.dropout=0.1"}).model, kTokens, 1, r),
               kTokens * (28672.0 + 2048.0) / kHbm);
        // Selective recompute of GQA attention: no up-projection GEMMs, the two norms' 4
        // passes.
        QCLOSE(selectiveRecompute_s(s.model, 1, kTokens, 1, r), kTokens * 1024 * 2 * 4 / kHbm);
        // Without sequence parallelism at TP 4 each GPU runs the norms and residual adds on
        // all 4 x 1024 tokens of its TP group: the 10 x 1024 hidden-sized elements per token
        // count 4 times, rotary (per head, split by TP) once: (4 x 10,240 + 4,096) x 2 B.
        QCLOSE(layerElementwiseForward_s(s.model, kTokens, 4, r),
               kTokens * (4 * 20480.0 + 8192.0) / kHbm);
        QCLOSE(selectiveRecompute_s(s.model, 1, kTokens, 4, r), 4 * kTokens * 1024 * 2 * 4 / kHbm);
        QCOMPARE(
            tpReplicas(hand({"layout.tp=4", "layout.dp=2", "training.tp_activations=replicated"})),
            4.0);
        QCOMPARE(tpReplicas(hand({"layout.tp=4", "layout.dp=2"})), 1.0);
    }

    void mlaProjections() {
        // MLA with q_lora 256, kv_lora 128, nope 64, rope 32, v 64 on the hand model (h = 1024,
        // 8 heads), 1024 tokens, TP 1: four input GEMMs and the output projection, each priced
        // on its own. Streamed bytes are (m k + k n) x 2 + m n x 2 at 3.2e12 B/s.
        const std::vector<std::string> mla = {
            "model.attention=mla",           "model.mla.q_lora_rank=256",
            "model.mla.kv_lora_rank=128",    "model.mla.qk_nope_head_dim=64",
            "model.mla.qk_rope_head_dim=32", "model.mla.v_head_dim=64"};
        const Scenario s = hand(mla);
        const HardwareRates r = hardwareRates(s);
        // q down 1024 x 256 x 1024: 8 tiles, split-K 16, one wave of 64-long tiles = 0.79 us,
        // under streaming 3,145,728 B = 0.98 us. kv down (n = 128 + 32 = 160): 8 tiles, the same
        // wave, under 2,752,512 B = 0.86 us. q up 1024 x 768 x 256: 24 tiles, split 5 (0.63
        // us), under 2,490,368 B = 0.78 us. kv up 1024 x 1024 x 128: 32 tiles, split 4 (0.40
        // us), under 2,621,440 B = 0.82 us. Output 1024 x 1024 x 512: 32 tiles, split 4, a wave
        // of 128-long tiles = 1.58 us, above its 4,194,304 B = 1.31 us.
        const double streamed_bytes = 3145728.0 + 2752512.0 + 2490368.0 + 2621440.0;
        const double expected_s = streamed_bytes / kHbm + waveTime_s(128);
        QCLOSE(attentionForward_s(s.model, 1, kTokens, r), expected_s);
        // Selective recompute re-runs the two up-projections (and the norms' passes).
        QCLOSE(selectiveRecompute_s(s.model, 1, kTokens, 1, r),
               (2490368.0 + 2621440.0) / kHbm + kTokens * 1024 * 2 * 4 / kHbm);
        // Under FP8 each GEMM quantizes its own input and output gradient: inputs k = 1024 +
        // 1024 + 256 + 128 + 512 = 2944 and outputs n = 256 + 160 + 768 + 1024 + 1024 = 3232
        // elements per token, at the recipe's bytes per element.
        std::vector<std::string> fp8 = mla;
        fp8.push_back("model.precision.compute=fp8");
        fp8.push_back("model.precision.fp8_recipe=blockwise");
        const Scenario f = hand(fp8);
        const HardwareRates fr = hardwareRates(f);
        HardwareRates unquantized = fr;
        unquantized.quantize_input_bytes = unquantized.quantize_output_bytes = 0;
        QCLOSE(attentionForward_s(f.model, 1, kTokens, fr) -
                   attentionForward_s(f.model, 1, kTokens, unquantized),
               kTokens * (2944.0 * fr.quantize_input_bytes + 3232.0 * fr.quantize_output_bytes) /
                   kHbm);
    }

    void unfusedAttention() {
        Scenario s = hand();
        const HardwareRates r = hardwareRates(s);
        // Scores: 1024 tokens x 8 heads x 1024 keys = 8,388,608 elements, the full square.
        const double elements = 8388608.0;
        QCLOSE(attentionScoreElements(s.model, kTokens), elements);
        // Each of the six batched score GEMMs: 8 (one sequence x 8 heads) GEMMs of 1024 x 1024
        // x 128 or its permutations. QK^T: 8 x (8 x 4) = 256 tiles, 2 waves, 97% useful:
        // 2 x 8 x 1024^2 x 128 FLOPs = 2.15e9 / (7e14 x 0.97) = 3.2 us, below streaming A, B
        // and C: 8 x (1024 x 128 + 128 x 1024 + 1024 x 1024) x 2 B = 20,971,520 B = 6.55 us.
        // AV (1024 x 128 x 1024): as C, 8 x 8 x 1 = 64 tiles at 37.5% of their columns; as
        // C^T (128 x 1024), 32 tiles, split-K 4, 97%: the same 3.2 us against the same bytes.
        // So every score GEMM is memory-bound at 20,971,520 B.
        const double gemm_s = 20971520.0 / kHbm;
        QCLOSE(batchedGemm_s({1024, 1024, 128}, 8, r), gemm_s);
        QCLOSE(batchedGemm_s({1024, 128, 1024}, 8, r), gemm_s);
        // A compute-bound batch: 4 GEMMs of 4096 x 4096 x 4096 = 4 x 512 tiles over 132 SMs,
        // ceil(2048 / 132) = 16 waves: 2 x 4 x 4096^3 / (7e14 x 2048 / (16 x 132)).
        QCLOSE(batchedGemm_s({4096, 4096, 4096}, 4, r),
               2.0 * 4 * 4096.0 * 4096 * 4096 / (kGemm * 2048.0 / (16 * 132)));
        // Forward without dropout: QK^T, AV and the softmax reading and writing the scores
        // (2 x 2 B per element); with dropout 0.1 also its read, write and 1-byte mask (5 B).
        const auto unfused = AttentionKernel::unfused;
        QCLOSE(attentionCoreForward_s(s.model, unfused, 1, kTokens, r),
               2 * gemm_s + elements * 4 / kHbm);
        // Backward: four GEMMs (dP, dV, dQ, dK) and the softmax's backward reading P and dP
        // and writing dS (3 x 2 B).
        QCLOSE(attentionCoreBackward_s(s.model, unfused, 1, kTokens, r),
               4 * gemm_s + elements * 6 / kHbm);
        s.model.dropout = 0.1;
        QCLOSE(attentionCoreForward_s(s.model, unfused, 1, kTokens, r),
               2 * gemm_s + elements * (4 + 5) / kHbm);
        QCLOSE(attentionCoreBackward_s(s.model, unfused, 1, kTokens, r),
               4 * gemm_s + elements * (6 + 5) / kHbm);

        // A layer's attention per pass: projections, element-wise and core forward; backward
        // 2x the projections and element-wise, the core's own backward, and under full
        // recompute one more forward of everything.
        const Scenario full =
            hand({"training.attention_kernel=unfused", "training.recompute=full"});
        const Report rep = evaluate(full);
        const double rest_s = attentionForward_s(full.model, 1, kTokens, r) +
                              layerElementwiseForward_s(full.model, kTokens, 1, r);
        const double core_fwd_s = attentionCoreForward_s(full.model, unfused, 1, kTokens, r);
        QCLOSE(rep.costs->layer.attention_fwd_s, rest_s + core_fwd_s);
        QCLOSE(rep.costs->layer.attention_bwd_s,
               3 * rest_s + core_fwd_s +
                   attentionCoreBackward_s(full.model, unfused, 1, kTokens, r));
        // Selective recompute re-runs the unfused core (its scores are not stored).
        const Scenario sel =
            hand({"training.attention_kernel=unfused", "training.recompute=selective"});
        QCLOSE(evaluate(sel).costs->layer.attention_bwd_s,
               2 * rest_s + core_fwd_s +
                   attentionCoreBackward_s(sel.model, unfused, 1, kTokens, r) +
                   selectiveRecompute_s(sel.model, 1, kTokens, 1, r));
    }

    void mlps() {
        Scenario s = hand();
        const HardwareRates r = hardwareRates(s);
        // SwiGLU: 3 passes of the intermediate columns, BF16.
        QCLOSE(swiglu_s(s.model, kTokens, 4096, r), kTokens * 4096 * 2 * 3 / kHbm);
        // Dense FFN, TP 1: gate + up 1024 x 8192 x 1024 = 8 x 32 = 256 tiles, 2 waves (35.7 MB
        // of streaming = 11.1 us < 25.3 us); down 1024 x 1024 x 4096 = 32 tiles, split-K 4:
        // waveTime(4096) / 4 = waveTime(1024) (18.9 MB = 5.9 us of streaming). At TP = 2
        // `tokens` is the GPU's sequence-parallel share: m = 2048 on half the columns: gate + up
        // 2048 x 4096 x 1024 = 16 x 16 = 256 tiles, 2 waves; down 2048 x 1024 x 2048 = 64
        // tiles, split-K 2: waveTime(2048) / 2. The same 3 waves of k = 1024 either way, and
        // the activation over the same 1024 x 4096 elements (2048 rows x 2048 columns at TP 2).
        QCLOSE(denseFfnForward_s(s.model, 1, kTokens, r),
               3 * waveTime_s(1024) + kTokens * 4096 * 2 * 3 / kHbm);
        QCLOSE(denseFfnForward_s(s.model, 2, kTokens, r),
               3 * waveTime_s(1024) + kTokens * 4096 * 2 * 3 / kHbm);
        // GeLU MLP: up 1024 x 4096 x 1024 = 8 x 16 = 128 tiles, one wave (18.9 MB of
        // streaming = 5.9 us < 12.7 us); down as above, one wave's time; the activation reads
        // and writes the 4096 columns: 2 passes.
        const Scenario gelu = hand({"model.mlp=gelu"});
        QCLOSE(mlpActivation_s(gelu.model, kTokens, r), kTokens * 4096 * 2 * 2 / kHbm);
        QCLOSE(denseFfnForward_s(gelu.model, 1, kTokens, r),
               2 * waveTime_s(1024) + kTokens * 4096 * 2 * 2 / kHbm);
        // Router 1024 x 8 x 1024: 8 tiles, split-K floor(132 / 8) = 16: waveTime / 16 = 0.79
        // us, above its 2.13 MB = 0.67 us of streaming.
        QCLOSE(routerForward_s(s.model, kTokens, r), waveTime_s(1024) / 16);
        // LM head 1024 x 1000 x 1024: 8 x 4 = 32 tiles, split-K 4: a quarter wave (6.2 MB of
        // streaming = 1.9 us < 3.2 us).
        QCLOSE(lmHeadForward_s(s.model, 1, kTokens, r), waveTime_s(1024) / 4);
        // No shared experts: nothing. One shared expert of 1024 (the routed experts' size):
        // gate + up 1024 x 2048 x 1024 = 64 tiles, split-K 2, half a wave (10.5 MB = 3.3 us of
        // streaming < 6.3 us); down as the attention output, a quarter wave; and its SwiGLU.
        QCOMPARE(sharedExpertsForward_s(s.model, 1, kTokens, r), 0.0);
        s.model.shared_experts = 1;
        QCLOSE(sharedExpertsForward_s(s.model, 1, kTokens, r),
               waveTime_s(1024) * 0.75 + kTokens * 1024 * 2 * 3 / kHbm);
    }

    void expertGemms() {
        const Scenario s = hand();
        const HardwareRates r = hardwareRates(s);
        const ExpertGemmShape g = expertGemmShape(s);
        // 8 experts over EP = 4: 2 per rank; 6 h f = 6,291,456 FLOPs and 3 h f x 2 B =
        // 6,291,456 B of weights per expert; per slot 4 permute passes of 2h = 8,192 B.
        QCOMPARE(g.experts_per_rank, 2);
        QCLOSE(g.hidden, 1024.0);
        QCLOSE(g.ffn_shard, 1024.0);
        QCLOSE(g.flops_per_slot, 6291456.0);
        QCLOSE(g.weight_bytes, 6291456.0);
        QCLOSE(g.permute_bytes_per_slot, 8192.0);
        // 2048 slots = 1024 per expert, padded to 1088 rows (groupedGemm_s): gate + up and down
        // are compute-bound (groupedGemm test; down: 6.5 us against 12.6 MB = 3.9 us), together
        // 2 experts x 1088 rows x 6hf = 2 x 1088 x 6,291,456 FLOPs; the permutes 2048 x 8,192 B
        // through HBM.
        QCLOSE(expertGemm_s(g, 2048, r), 2 * 1088 * 6291456.0 / kGemm + 2048 * 8192.0 / kHbm);
        // 16 slots = 8 per expert: memory-bound by roofline. Gate + up 8,486,912 B (gemmTiles);
        // down: 2 x (8 x 1024 + 1024 x 1024 + 8 x 1024) x 2 B = 4,259,840 B (compute: one tile
        // of rows, 0.77 us < 1.33 us); permutes 16 x 8,192 = 131,072 B.
        QCLOSE(expertGemm_s(g, 16, r), (8486912.0 + 4259840.0 + 131072.0) / kHbm);
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
        // A flex dispatcher (DeepEP) sends a token once to each distinct GPU of the four:
        // 4 (1 - (3/4)^2) = 1.75 copies, 1024 x 1.75 x 1024 x 2 B = 3,670,016 B.
        for (const char* dispatcher : {"deepep", "hybridep"}) {
            const Scenario flex = hand({std::string("training.moe_dispatcher=") + dispatcher});
            const AllToAllBytes bf = allToAllBytes(flex, ep, kTokens);
            QCLOSE(bf.dispatch, 3670016.0);
            QCLOSE(bf.combine, 3670016.0);
            QCOMPARE(bf.dispatch_cross, -1.0);
        }
        // EP = 8 over both nodes with tokens limited to one remote node. Megatron's alltoall
        // dispatcher still sends one copy per slot (the default shares); DeepEP's crosses the
        // fabric expectedRemoteNodesPerToken(2, 2, 1) times per token and forwards inside the
        // target node to the distinct GPUs its 2 picks reach among the H x 4 GPUs of the H =
        // R x 2 / 1 nodes reached: D (4 - 1) / 4 copies.
        const Scenario limited = hand({"layout.ep=8", "layout.max_nodes_per_token=1"});
        const Report rl = evaluate(limited);
        const GroupShape ep8 = shapeOf(rl.placement->spanOf(GroupKind::ep));
        QCOMPARE(ep8.domains, 2);
        QCOMPARE(allToAllBytes(limited, ep8, kTokens).dispatch_cross, -1.0);
        const Scenario deepep =
            hand({"layout.ep=8", "layout.max_nodes_per_token=1", "training.moe_dispatcher=deepep"});
        const AllToAllBytes bl = allToAllBytes(deepep, ep8, kTokens);
        const double remote = expectedRemoteNodesPerToken(2, 2, 1);
        QCLOSE(remote, 0.5); // min((2 - 1)(1 - 1/4), 1 x 1/2)
        QCLOSE(bl.dispatch_cross, kTokens * remote * 1024 * 2);
        QCLOSE(bl.combine_cross, bl.dispatch_cross);
        // H = 1 node reached, D = 4 (1 - (3/4)^2) = 1.75, forwarded 1.75 x 3/4 = 1.3125.
        QCLOSE(bl.dispatch_forward, kTokens * 1.3125 * 1024 * 2);
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

    /// Uneven stages, hand-split. 61 layers, PP16, first 3, last 2: 61 - 5 = 56 = 14 x 4, so
    /// chunk firsts 0, 3, 7, ..., 55 (3 + 13 x 4), 59, and 61. Interleaved vpp 2 (32 chunks,
    /// chunk c on stage c % 16): stage 0's 3 layers split 2 (chunk 0) + 1 (chunk 16), the middle
    /// stages' 4 as 2 + 2, stage 15's 2 as 1 (chunk 15) + 1 (chunk 31): chunk 0 = [0, 2),
    /// chunks 1-14 two each up to 30, chunk 15 = [30, 31), chunk 16 = [31, 32), chunks 17-30 two
    /// each up to 60, chunk 31 = [60, 61).
    void unevenChunks() {
        ModelSpec m;
        m.layers = 61;
        LayoutSpec lay;
        lay.pp = 16;
        lay.first_stage_layers = 3;
        lay.last_stage_layers = 2;
        std::vector<int> expected{0, 3};
        for (int i = 0; i < 14; ++i)
            expected.push_back(expected.back() + 4);
        expected.push_back(61);
        QCOMPARE(chunkFirstLayers(m, lay), expected);
        lay.vpp = 2;
        const std::vector<int> first = chunkFirstLayers(m, lay);
        QCOMPARE(first.size(), size_t{33});
        QCOMPARE(first[1], 2);
        QCOMPARE(first[15], 30);
        QCOMPARE(first[16], 31);
        QCOMPARE(first[17], 32);
        QCOMPARE(first[31], 60);
        QCOMPARE(first[32], 61);
        const std::vector<StageLayers> stages = splitLayers(m, lay);
        QCOMPARE(stages[0].layers, 3);
        QCOMPARE(stages[7].layers, 4);
        QCOMPARE(stages[15].layers, 2);
        QVERIFY(stages[15].has_lm_head && stages[0].has_embedding);
        // Without the fields: the even split, earlier chunks taking the remainder (61 = 13 x 4
        // + 3 x 3 over 16 stages).
        lay = LayoutSpec{};
        lay.pp = 16;
        QCOMPARE(splitLayers(m, lay)[12].layers, 4);
        QCOMPARE(splitLayers(m, lay)[13].layers, 3);
    }

    /// DualPipe phases, PP16, m = 120, t = 0.3 s: F = 0.1, B = 0.2, W = 0.1. Rank 0 (hr = 0)
    /// runs u = 1.5 x 16 - 1 = 23 passes alone and defers 16 - 1 - 0 = 15 W: 1F = 2.3,
    /// 1W = 1.5, 1B = 23 x 0.2 - 1.5 = 3.1, 1F1B = (120 - 23) x 0.3 = 29.1; with 40 s before
    /// the optimizer, idle = 40 - 120 x 0.3 = 4. A middle rank (7: hr = 7) runs 24 - 1 - 7 + 1
    /// = 17 alone and defers 8 W: 1F = 1.7, 1W = 0.8, 1B = 3.4 - 0.8 = 2.6, 1F1B = 103 x 0.3.
    void dualPipePhaseSegments() {
        DualPipePhases r0 = dualPipePhases(16, 120, 0, 0.3, 40);
        QVERIFY(r0.valid);
        QCOMPARE(r0.alone, 23);
        QCOMPARE(r0.deferred_w, 15);
        QVERIFY(moe::test::close(r0.forward_s, 2.3));
        QVERIFY(moe::test::close(r0.weight_backward_s, 1.5));
        QVERIFY(moe::test::close(r0.input_backward_s, 3.1));
        QVERIFY(moe::test::close(r0.paired_s, 29.1));
        QVERIFY(moe::test::close(r0.idle_s, 4.0));
        QVERIFY(moe::test::close(r0.forward_s + r0.input_backward_s + r0.weight_backward_s +
                                     r0.paired_s + r0.idle_s,
                                 40.0));
        const DualPipePhases r7 = dualPipePhases(16, 120, 7, 0.3, 40);
        QCOMPARE(r7.alone, 17);
        QCOMPARE(r7.deferred_w, 8);
        QVERIFY(moe::test::close(r7.forward_s, 1.7));
        QVERIFY(moe::test::close(r7.weight_backward_s, 0.8));
        QVERIFY(moe::test::close(r7.input_backward_s, 2.6));
        QVERIFY(moe::test::close(r7.paired_s, 30.9));
        QVERIFY(!dualPipePhases(1, 120, 0, 0.3, 40).valid);
        // Shares F 0.3, W 0.1 of t = 0.3: F = 0.09, B = 0.21, W = 0.03. Rank 0: 1F = 23 x 0.09
        // = 2.07, 1W = 15 x 0.03 = 0.45, 1B = 23 x 0.21 - 0.45 = 4.38, 1F1B = 97 x 0.3 = 29.1.
        r0 = dualPipePhases(16, 120, 0, 0.3, 40, PassShares{0.3, 0.1});
        QVERIFY(moe::test::close(r0.forward_s, 2.07));
        QVERIFY(moe::test::close(r0.weight_backward_s, 0.45));
        QVERIFY(moe::test::close(r0.input_backward_s, 4.38));
        QVERIFY(moe::test::close(r0.paired_s, 29.1));
        // Passes alone expose X_f = 0.02 (forward) and X_b = 0.03 (backward), a pair X_p =
        // 0.01. Rank 0: t mixes them as (97 x 0.01 + 23 x 0.05) / 120 = 0.0176667, so the
        // compute is c = 0.2823333: F = W = 0.0941111, B = 0.1882222. 1F = 23 x (F + 0.02) =
        // 2.6245556, 1W = 15 W = 1.4116667, 1B = 23 x (B + 0.03) - 1W = 3.6074444, 1F1B =
        // 97 x (c + 0.01) = 28.3563333: together 120 x 0.3 = 36, as before.
        r0 = dualPipePhases(16, 120, 0, 0.3, 40, PassShares{}, PassTransfers{0.02, 0.03, 0.01});
        QVERIFY(moe::test::close(r0.forward_s, 2.6245556, 1e-6));
        QVERIFY(moe::test::close(r0.weight_backward_s, 1.4116667, 1e-6));
        QVERIFY(moe::test::close(r0.input_backward_s, 3.6074444, 1e-6));
        QVERIFY(moe::test::close(r0.paired_s, 28.3563333, 1e-6));
        QVERIFY(moe::test::close(r0.idle_s, 4.0));
    }

    /// A fused pair of two whole chunks, segments run F1 B1 F2 B2 F3 B3:
    ///   F: (no transfer, 4) | (transfer 6, 2) | (transfer 3, nothing after)
    ///   B: (no transfer, 5 of which 2 dW) | (transfer 6 with a 1 tail, 6 of which 3 dW) |
    ///      (transfer 1, 2 of which 1 dW)
    /// Compute stream C, transfer stream X. F1 C [0, 4]. B1 C [4, 9], its input gradients by 7.
    /// F2's transfer waits for F1: X [4, 10]; its compute waits from 9 to 10: forward exposes
    /// 1. B2's transfer waits for X and B1's input gradients: X [10, 16]; C waits from 12 to
    /// 16: backward exposes 4, its tail 1 as imbalance; C [16, 22], input gradients by 19.
    /// F3's transfer X [16, 19] has no compute after it: nothing waits. B3's transfer X
    /// [19, 20] is there before C frees at 22.
    void chunkPairs() {
        const std::vector<PairSegment> forward{
            {0, 0, false, 4, 0, 0}, {6, 0, false, 2, 0, 0}, {3, 0, false, 0, 0, 0}};
        const std::vector<PairSegment> backward{
            {0, 0, false, 5, 2, 0}, {6, 0, false, 6, 3, 1}, {1, 0, false, 2, 1, 0}};
        const ChunkPairExposure e = chunkPairExposure(forward, backward);
        QCOMPARE(e.forward.all_to_all_s, 1.0);
        QCOMPARE(e.forward.imbalance_s, 0.0);
        QCOMPARE(e.backward.all_to_all_s, 3.0);
        QCOMPARE(e.backward.imbalance_s, 1.0);
        QCOMPARE(e.forward.tp_s + e.backward.tp_s, 0.0);
        // The longer chunk's rest runs alone: with no forward at all, B2 waits for its whole
        // transfer after B1 (X [3, 9] from B1's input gradients at 3, C free at 5: 4 exposed).
        const ChunkPairExposure alone = chunkPairExposure({}, backward);
        QCOMPARE(alone.backward.all_to_all_s + alone.backward.imbalance_s, 4.0 + 0.0);
    }

    /// Combined 1F1B's passes alone, in micro-batches: warm-up chunk forwards over vpp.
    /// PP 8, VP 2, m = 16: stage 0 min(7 x 2 + 1 x 8 + 1, 32) = 23 -> 11.5; stage 7
    /// min(0 + 8 + 1, 32) = 9 -> 4.5. m = pp: all of them (m). No pipeline: the first forward.
    void combinedUnpaired() {
        QCOMPARE(combinedUnpairedPasses(8, 2, 16, 0), 11.5);
        QCOMPARE(combinedUnpairedPasses(8, 2, 16, 7), 4.5);
        QCOMPARE(combinedUnpairedPasses(4, 2, 4, 1), 4.0);
        QCOMPARE(combinedUnpairedPasses(1, 1, 8, 0), 1.0);
    }

    /// The weight-gradient part of each backward. A dense SwiGLU FFN's dW is its GEMMs alone:
    /// forward less the activation (3 passes of tokens x ffn elements at 2 B over HBM). The
    /// experts' dW is their forward less the permutes (4 passes of h per slot). On the
    /// DeepSeek-V3 sample the stage's weight share is the dW over forward + backward, below the
    /// 1/3 of a GEMM-only model (attention's core and the element-wise work have no dW).
    void weightGradients() {
        const LoadResult loaded =
            loadScenarioFile(moe::test::samplePath("deepseek-v3-2048xh800.yaml"));
        QVERIFY(loaded.ok());
        const Scenario& s = *loaded.scenario;
        const Report rep = evaluate(s);
        const StepCostModel& c = *rep.costs;
        const LayerPassCosts& l = c.layer;
        const double act_bytes = bytesPerElement(s.model.activation_precision);
        const double activation_s =
            3.0 * c.tokens * s.model.ffn_hidden * act_bytes / c.rates.hbm_bytes_s;
        // FP8 block scaling: dW at the weight gradients' rate (weightGradRates), slower than
        // the forward GEMMs; the backward carries the difference.
        const HardwareRates wr = weightGradRates(c.rates);
        QVERIFY(wr.gemm_flops < c.rates.gemm_flops);
        QVERIFY(moe::test::close(l.dense_ffn_fwd_s - activation_s,
                                 denseFfnWeightGrads_s(s.model, 1, c.tokens, c.rates)));
        QVERIFY(
            moe::test::close(l.dense_ffn_wgrad_s, denseFfnWeightGrads_s(s.model, 1, c.tokens, wr)));
        QVERIFY(l.dense_ffn_wgrad_s > l.dense_ffn_fwd_s - activation_s);
        QVERIFY(
            moe::test::close(l.attention_wgrad_s, attentionForward_s(s.model, 1, c.tokens, wr)));
        QVERIFY(moe::test::close(l.router_wgrad_s, l.router_fwd_s));
        QVERIFY(l.attention_wgrad_s > 0 && l.attention_wgrad_s < l.attention_fwd_s);
        const double slot_count = c.moe.mean_slots;
        const double permute_s =
            slot_count * 4.0 * s.model.hidden * act_bytes / c.rates.hbm_bytes_s;
        QVERIFY(moe::test::close(
            expertGemm_s(c.moe.gemm, slot_count, wr) - c.moe.mean.expert_wgrad_s, permute_s));
        // Backward = 2 forwards + the SwiGLU recompute + the dW's extra time at its rate.
        const double fwd_dw_s = c.moe.mean.expert_fwd_s - permute_s;
        QVERIFY(
            moe::test::close(c.moe.mean.expert_bwd_s, 2 * c.moe.mean.expert_fwd_s +
                                                          c.moe.recompute_s_per_slot * slot_count +
                                                          c.moe.mean.expert_wgrad_s - fwd_dw_s));
        // The stage's shares, from its layers' operations.
        const StageCosts& st = c.stages[4];
        QVERIFY(st.layers.dense_layers == 0 && !st.layers.has_lm_head && !st.layers.has_embedding);
        const double n = st.layers.layers;
        const double fwd =
            n * (l.attention_fwd_s + l.shared_fwd_s + l.router_fwd_s + c.moe.mean.expert_fwd_s);
        const double bwd =
            n * (l.attention_bwd_s + l.shared_bwd_s + l.router_bwd_s + c.moe.mean.expert_bwd_s);
        const double wgrad = n * (l.attention_wgrad_s + l.shared_wgrad_s + l.router_wgrad_s +
                                  c.moe.mean.expert_wgrad_s);
        QVERIFY(moe::test::close(st.shares.forward, fwd / (fwd + bwd)));
        QVERIFY(moe::test::close(st.shares.weight, wgrad / (fwd + bwd)));
        QVERIFY(st.shares.weight < 1.0 / 3.0 && st.shares.forward < 1.0 / 3.0);
    }

    /// The embedding per token: forward 2 passes of h activations; backward the gradient read
    /// (activation bytes) plus a read-modify-write of the row's gradient (2 x grad bytes).
    /// h = 1000, bf16 activations, fp32 grads, HBM 1e12 B/s, 1000 tokens: forward 2 x 1e6 x 2 /
    /// 1e12 = 4 us; backward 1e6 x (2 + 8) / 1e12 = 10 us. MTP projection 2h -> h is a GEMM.
    void embeddingAndMtp() {
        ModelSpec m;
        m.hidden = 1000;
        m.activation_precision = Precision::bf16;
        m.grad_precision = Precision::fp32;
        HardwareRates r;
        r.hbm_bytes_s = 1e12;
        QVERIFY(moe::test::close(embeddingForward_s(m, 1000, r), 4e-6));
        QVERIFY(moe::test::close(embeddingBackward_s(m, 1000, r), 10e-6));
        // The DeepSeek-V3 sample with MTP depth 1 (on the last stage) against the same without:
        // the last stage's per-micro-batch compute grows by the module, the first stage's not.
        const LoadResult loaded =
            loadScenarioFile(moe::test::samplePath("deepseek-v3-2048xh800.yaml"));
        QVERIFY(loaded.ok());
        Scenario without = *loaded.scenario;
        without.model.mtp_layers = 0;
        const Report with_mtp = evaluate(*loaded.scenario);
        const Report no_mtp = evaluate(without);
        const StepCostModel& a = *with_mtp.costs;
        const StepCostModel& b = *no_mtp.costs;
        QVERIFY(a.layer.mtp_fwd_s > a.layer.attention_fwd_s);
        QVERIFY(b.layer.mtp_fwd_s == 0);
        QVERIFY(moe::test::close(a.stages.back().compute_s - b.stages.back().compute_s,
                                 a.layer.mtp_fwd_s + a.layer.mtp_bwd_s));
        QVERIFY(moe::test::close(a.stages.front().compute_s, b.stages.front().compute_s));
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
        // Less of the backward in dW: F = 0.3 t = 0.9, B = 2.1, W = 0.2 t = 0.6, F&B = 3:
        // (4/2 - 1)(3 + 2.1 - 1.8) = 3.3.
        QVERIFY(moe::test::close(pipelineBubble_s(lay, t, PassShares{0.3, 0.2}), 3.3));
        lay.pp = 16;
        // (16/2 - 1)(3 + 2.1 - 1.8) = 23.1.
        QVERIFY(moe::test::close(pipelineBubble_s(lay, t, PassShares{0.3, 0.2}), 23.1));
        lay.pp = 1;
        QCOMPARE(pipelineBubble_s(lay, t), 0.0);
    }

    /// The compute floor the layout search prunes by: m micro-batches of the busiest pipeline
    /// rank's compute. Stages of 1, 2, 3 and 4 s, 8 micro-batches: 8 x 4 = 32 s; under DualPipe
    /// rank r runs stages r and 3 - r, half the micro-batches each: 8 x (1 + 4) / 2 = 20 s.
    /// On the samples it is below the step, and it is the built model's own compute.
    void computeFloor() {
        QCOMPARE(stepComputeFloor_s({1, 2, 3, 4}, 8, false), 32.0);
        QCOMPARE(stepComputeFloor_s({1, 2, 3, 4}, 8, true), 20.0);
        QCOMPARE(stepComputeFloor_s({1, 4, 1, 1}, 8, true), 20.0); // (4 + 1) / 2 on rank 1
        QCOMPARE(stepComputeFloor_s({2.5}, 4, false), 10.0);
        for (const std::string& path : test::sampleFiles()) {
            const std::optional<Scenario> s = loadScenarioFile(path).scenario;
            QVERIFY2(s, path.c_str());
            const Report r = evaluate(*s);
            double busiest_s = 0;
            for (const StageCosts& stage : r.costs->stages) {
                const StepBreakdown b = stageMeanCompute(r.costs->layer, r.costs->moe, stage.layers,
                                                         stage.moe_layer_indices.size());
                QCOMPARE(b[StepItem::attention] + b[StepItem::dense_ffn] + b[StepItem::router] +
                             b[StepItem::expert_compute],
                         stage.compute_s);
                busiest_s = std::max(busiest_s, stage.compute_s);
            }
            const double floor_s = stepComputeFloor_s(*r.costs);
            QVERIFY2(floor_s > 0.5 * r.step_time_s && floor_s < r.step_time_s, path.c_str());
            if (s->layout.schedule != PipelineSchedule::dualpipe)
                QCOMPARE(floor_s, r.micro_batches * busiest_s);
        }
    }

    /// DualPipe's walked bubble. Every chunk alike with W = F, the walk is the paper's closed
    /// form: F = 1, B = 2, W = 1, a pair F + B = 3: (p/2 - 1)(3 + 2 - 3) = 2 on 4 ranks, 6 on 8.
    /// Its cost and value do not depend on the micro-batch count. Two ranks never idle, however
    /// unequal their stages: both start with their own forward, each next pass's input is the
    /// other rank's pass of the same length, and both end with B, B - W, W (derivation by hand
    /// in docs/model.md).
    void dualPipeWalk() {
        DualPipeChunkTimes alike;
        alike.forward_s = alike.pair_forward_s = 1;
        alike.backward_s = alike.pair_backward_s = 2;
        alike.weight_s = 1;
        QVERIFY(moe::test::close(dualPipeBubble_s(std::vector(4, alike), 8, 0), 2.0));
        QVERIFY(moe::test::close(dualPipeBubble_s(std::vector(4, alike), 40, 1), 2.0));
        QVERIFY(moe::test::close(dualPipeBubble_s(std::vector(8, alike), 16, 0), 6.0));
        QVERIFY(moe::test::close(dualPipeBubble_s(std::vector(8, alike), 120, 3), 6.0));
        DualPipeChunkTimes heavy = alike;
        heavy.forward_s = 3;
        heavy.backward_s = 5;
        heavy.pair_forward_s = 2.5;
        heavy.pair_backward_s = 4;
        heavy.weight_s = 1.5;
        QCOMPARE(dualPipeBubble_s({alike, heavy}, 4, 0), 0.0);
        QCOMPARE(dualPipeBubble_s({heavy, alike}, 12, 1), 0.0);
        // The schedule cannot run: too few micro-batches, or an odd count.
        QCOMPARE(dualPipeBubble_s(std::vector(4, alike), 6, 0), -1.0);
        QCOMPARE(dualPipeBubble_s(std::vector(4, alike), 9, 0), -1.0);
    }

    /// GPipe with each stage's own passes. All alike (F 1, B 2) on p = 4: (p - 1) t = 9 for
    /// any m. (F, B) = (1, 1), (2, 4), (1, 3), m = 2, by hand: stage 2 runs F0 3-4, F1 5-6,
    /// B0 6-9, B1 9-12; stage 1 B0 9-13, B1 13-17; stage 0 B1 17-18: 18 - 2 x 6 = 6.
    /// (3, 1), (1, 3), m = 4: stage 0's forwards end at 12, stage 1's at 13; stage 1's
    /// backwards 13-25, stage 0's last 25-26: 26 - 4 x 4 = 10, not (p - 1) t = 4, and 3 more
    /// per micro-batch, as the slowest forward and backward are on different stages.
    void gpipeBubble() {
        for (const int m : {1, 2, 8, 100})
            QVERIFY(moe::test::close(gpipeBubble_s({1, 1, 1, 1}, {2, 2, 2, 2}, m, 2), 9.0));
        QVERIFY(moe::test::close(gpipeBubble_s({1, 2, 1}, {1, 4, 3}, 2, 1), 6.0));
        QVERIFY(moe::test::close(gpipeBubble_s({3, 1}, {1, 3}, 4, 0), 10.0));
        QVERIFY(moe::test::close(gpipeBubble_s({3, 1}, {1, 3}, 5, 1), 12.0));
        QCOMPARE(gpipeBubble_s({2}, {4}, 8, 0), 0.0);
    }

    /// 1F1B with each stage's own t (forward = backward = t / 2 below). Stages (1, 2, 1, 4):
    /// the last stage's first forward starts at 0.5 + 1 + 0.5 = 2, it then runs m = 4
    /// micro-batches back to back (16) and its last backward passes 0.5 + 1 + 0.5 back: 20 in
    /// all, m t_last = 16 of work, a bubble of 4 = 1 + 2 + 1. With the slowest stage inside
    /// the pipeline it keeps (p - 1) max t.
    void oneFOneBBubble() {
        QCOMPARE(oneFOneBBubble_s({1, 2, 1, 4}), 4.0);
        QCOMPARE(oneFOneBBubble_s({2, 2, 2, 2}), 6.0); // (p - 1) t: all alike
        QCOMPARE(oneFOneBBubble_s({1, 4, 1, 2}), 12.0);
        QCOMPARE(oneFOneBBubble_s({3}), 0.0);
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

    /// The optimizer's HBM bytes per parameter of the shard: master weight and both moments
    /// read and written, the FP32 main gradient read twice (norm, update), the BF16 weight
    /// written. FP32 moments: 2 x (4 + 4 + 4) + 2 x 4 + 2 = 34 B; BF16 moments (DeepSeek-V3):
    /// 2 x (4 + 2 + 2) + 8 + 2 = 26 B. The memory model holds 12 and 8 B of state.
    void optimizerStep() {
        QCLOSE(optimizerBytesPerParam(hand()), 34.0);
        const Scenario bf16 = hand({"training.optimizer_states=bf16"});
        QCLOSE(optimizerBytesPerParam(bf16), 26.0);
        QCLOSE(optimizerStateBytesPerParam(hand().training), 12.0);
        QCLOSE(optimizerStateBytesPerParam(bf16.training), 8.0);
        // The norm's all-reduce of 4 B over all 8 GPUs, 2 nodes of 4 (collectives.cpp,
        // hierarchical): 2 x (3 NVLink steps + 3/4 x 4 B / kUp) + 2 x (1 NIC step) +
        // 2 x 1/2 x (4 B / 4) / kOut = 12 us + 8 us + a few bytes' worth: ~20.00004 us.
        const double norm = 2 * (3 * kAlphaUp + 3.0 / kUp) + 2 * kAlphaOut + 1.0 / kOut;
        QCLOSE(gradNormAllReduce_s(hand(), hardwareRates(hand())), norm);
        QCLOSE(evaluate(hand()).costs->grad_norm_allreduce_s, norm);
        // One GPU: nothing to reduce.
        QCOMPARE(gradNormAllReduce_s(hand({"cluster.nodes=1", "cluster.gpus_per_node=1",
                                           "layout.dp=1", "layout.ep=1"}),
                                     hardwareRates(hand())),
                 0.0);
    }

    /// The optimizer phase on the hand scenario (one stage, two buckets: layer 0 and layer 1)
    /// for each DP overlap. Without overlap, the whole reduction (R, both buckets' reduce-
    /// scatters) follows the last backward, then the norm's all-reduce and the update (U), then
    /// the whole all-gather (G): the step's two ends are R + U + G, none of it at the start.
    /// Overlapped reduction only: the tail is bucketSyncTail_s of the buckets (as with full
    /// overlap), and G still follows the update. Full overlap: G moves to the step's start
    /// (bucketGatherHead_s) and the phase is the tail + U.
    void optimizerPhase() {
        auto phase = [](const std::string& overlap) {
            const Report r = evaluate(hand({"training.dp_overlap=" + overlap}));
            return std::pair{r, priceStep(*r.costs, r.load)};
        };
        const auto [none, pn] = phase("none");
        const StepCostModel& m = *none.costs;
        const StageSync& sync = m.stages[0].sync;
        const double R = sync.dp_grad_s + sync.edp_grad_s, G = sync.dp_gather_s + sync.edp_gather_s;
        const double U = m.grad_norm_allreduce_s + sync.optimizer_s;
        QVERIFY(R > 0 && G > 0 && U > 0);
        QCLOSE(pn.optimizer_phase.grad_sync_s, R);
        QCLOSE(pn.optimizer_phase.optimizer_s, U);
        QCLOSE(pn.optimizer_phase.grad_norm_allreduce_s, m.grad_norm_allreduce_s);
        QCLOSE(pn.optimizer_phase.param_gather_s, G);
        QCLOSE(pn.step[StepItem::dp_sync], R + G);
        QCLOSE(pn.step[StepItem::optimizer], U);
        QCLOSE(none.optimizer_phase.total_s(), R + U + G);

        // Overlapped reduction: the buckets' tail (bucketSyncTail_s at the stage's pace; the
        // same with or without the gathers overlapped), at least the last-released bucket
        // (layer 0's) and less than R; the gathers follow the update, or, fully overlapped,
        // lead the step (at most G of them exposed there).
        const auto [reduce, pr] = phase("grad-reduce");
        const auto [full, pf] = phase("grad-reduce-and-param-gather");
        const std::vector<SyncBucket>& b = reduce.costs->ranks[0].buckets;
        const double tail = pr.optimizer_phase.grad_sync_s;
        QVERIFY(tail >= b[0].grad_s && tail < R);
        QCLOSE(pf.optimizer_phase.grad_sync_s, tail);
        QCLOSE(pr.optimizer_phase.param_gather_s, G);
        QCLOSE(pr.step[StepItem::dp_sync], tail + G);
        QCOMPARE(pf.optimizer_phase.param_gather_s, 0.0);
        const double head = pf.step[StepItem::dp_sync] - tail;
        QVERIFY(head > 0 && head <= G);
        QCLOSE(pf.optimizer_phase.total_s(), tail + U);
        QVERIFY(full.step_time_s < reduce.step_time_s && reduce.step_time_s < none.step_time_s);
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
