// Parameter counts, FLOPs, the pipeline split, in-flight micro-batches and memory per GPU,
// each against values derived by hand in the comments.
#include "moe/model_costs.h"
#include "moe/scenario_io.h"
#include "test_support.h"

#include <QtTest>

#include <cmath>

using namespace moe;

namespace {

// 2 layers (1 dense, 1 MoE), hidden 8, 2 heads of 4 (head_dim = 8/2), 1 KV head, vocab 10,
// dense FFN 16, 4 experts top-2 of FFN 6, one shared expert of FFN 6, sequence 16.
ModelSpec tinyModel() {
    ModelSpec m;
    m.name = "tiny";
    m.layers = 2;
    m.dense_layers = 1;
    m.hidden = 8;
    m.heads = 2;
    m.kv_heads = 1;
    m.seq_len = 16;
    m.vocab = 10;
    m.ffn_hidden = 16;
    m.experts = 4;
    m.top_k = 2;
    m.expert_ffn_hidden = 6;
    m.shared_experts = 1;
    return m;
}

ModelSpec deepSeekV3() {
    ModelSpec m;
    m.name = "deepseek-v3";
    m.layers = 61;
    m.dense_layers = 3;
    m.hidden = 7168;
    m.heads = 128;
    m.kv_heads = 128;
    m.attention = AttentionKind::mla;
    m.mla = MlaDims{1536, 512, 128, 64, 128};
    m.seq_len = 4096;
    m.vocab = 129280;
    m.ffn_hidden = 18432;
    m.experts = 256;
    m.top_k = 8;
    m.expert_ffn_hidden = 2048;
    m.shared_experts = 1;
    m.shared_expert_ffn_hidden = 2048;
    return m;
}

// The built-in default scenario (sample_clusters/dgx-h100-8x8-moe16.yaml) with one sequence per
// micro-batch, built in code so this test does not depend on the loader. ZeRO-1 and the 1F1B
// schedule are the struct defaults.
Scenario defaultLike() {
    Scenario s = test::h100Moe16Scenario();
    s.name = "dgx-h100-8x8-moe16";
    s.training.recompute = Recompute::selective;
    return s;
}

// Hand-derived parameter counts of the default model (hidden 4096, 32 heads of 128, 8 KV heads):
//   attention = q 4096*4096 + k,v 2*4096*(8*128) + o 4096*4096
//             = 16,777,216 + 8,388,608 + 16,777,216 = 41,943,040
//   norms 2*4096 = 8,192; router 4096*16 = 65,536; one expert 3*4096*8192 = 100,663,296
// Per GPU (tp 1, pp 1, ep 8 -> 2 experts per layer per GPU):
//   non-expert = 24*(41,943,040 + 8,192 + 65,536) + embedding 32000*4096 + lm_head 32000*4096
//                + final norm 4096 = 1,008,402,432 + 262,144,000 + 4,096 = 1,270,550,528
//   expert     = 24 * 2 * 100,663,296 = 4,831,838,208
constexpr double kDefaultDensePerGpu = 1270550528.0;
constexpr double kDefaultExpertPerGpu = 4831838208.0;
// s*b*h = 4096 * 1 * 4096 bytes-units; an MoE layer holds 15 + top_k * 19 * 8192 / (4*4096)
// = 15 + 2 * 9.5 = 34 of them: 570,425,344 B per layer.
constexpr double kSbh = 4096.0 * 4096.0;
constexpr double kDefaultMoeLayerActivations = 34.0 * kSbh;
// With selective recompute (norm and activation outputs recomputed): 13 + 11 = 24 units.
constexpr double kDefaultSelectiveLayerActivations = 24.0 * kSbh;
// FP32 logits on the last stage: 4 B * 4096 tokens * 32000 vocab.
constexpr double kDefaultLogits = 4.0 * 4096.0 * 32000.0;

} // namespace

class TestModelCosts : public QObject {
    Q_OBJECT
private slots:
    void tinyParams();
    void mlaParams();
    void deepSeekV3Params();
    void tinyFlops();
    void deepSeekV3Flops();
    void splitEven();
    void splitDeepSeekPp16();
    void splitInterleaved();
    void splitDenseModel();
    void inFlight();
    void microBatchesAndTokens();
    void memoryDefault();
    void memoryBuiltinDefaultScenario();
    void memoryDoubledHiddenDoesNotFit();
    void memoryTensorParallel();
    void memoryPipelineStages();
    void memoryZeroStages();
    void memoryRecomputeAndDualPipe();
    void degenerateLayoutDoesNotCrash();
};

void TestModelCosts::tinyParams() {
    // attention: q 8*(2*4)=64, k,v 2*8*(1*4)=64, o (2*4)*8=64 -> 192
    // norms 2*8=16; dense FFN 3*8*16=384; router 8*4=32; expert 3*8*6=144; shared 1*144
    // dense layer 192+16+384=592; MoE layer 192+16+32+4*144+144=960
    // embedding 10*8=80, lm_head 80, final norm 8
    // total = 592 + 960 + 80 + 80 + 8 = 1720; routed = 4*144 = 576; dense_total = 1144
    // active = 1144 + top_k 2 * 144 = 1432
    const ParamCounts p = countParams(tinyModel());
    QCOMPARE(p.attention_per_layer, 192.0);
    QCOMPARE(p.norms_per_layer, 16.0);
    QCOMPARE(p.dense_ffn_per_layer, 384.0);
    QCOMPARE(p.router_per_layer, 32.0);
    QCOMPARE(p.routed_expert, 144.0);
    QCOMPARE(p.shared_experts_per_layer, 144.0);
    QCOMPARE(p.embedding, 80.0);
    QCOMPARE(p.lm_head, 80.0);
    QCOMPARE(p.total, 1720.0);
    QCOMPARE(p.routed_experts_total, 576.0);
    QCOMPARE(p.dense_total, 1144.0);
    QCOMPARE(p.active_per_token, 1432.0);

    // A dense model has no router or experts and active == total.
    ModelSpec dense = tinyModel();
    dense.experts = 0;
    dense.top_k = 0;
    const ParamCounts d = countParams(dense);
    // 2 * 592 + 168 = 1352
    QCOMPARE(d.total, 1352.0);
    QCOMPARE(d.active_per_token, 1352.0);
    QCOMPARE(d.routed_experts_total, 0.0);

    // The GPT MLP (h -> f, GeLU, f -> h): 2 * 8 * 16 = 256 instead of SwiGLU's 384, so the
    // dense model is 1352 - 2 * 128 = 1096 and its FFN's forward FLOPs 2 * 256 = 512 per token.
    dense.mlp = MlpKind::gelu;
    QCOMPARE(countParams(dense).dense_ffn_per_layer, 256.0);
    QCOMPARE(countParams(dense).total, 1096.0);
    QCOMPARE(forwardFlopsPerToken(dense, false).dense_ffn, 512.0);
}

void TestModelCosts::mlaParams() {
    // hidden 8, 2 heads, q_lora 4, kv_lora 3, nope 2, rope 1, v 2:
    //   q  = 8*4 + 4*2*(2+1) = 32 + 24 = 56
    //   kv = 8*(3+1) + 3*2*(2+2) = 32 + 24 = 56
    //   o  = 2*2*8 = 32; latent norms 4 + 3 = 7 -> 151
    ModelSpec m = tinyModel();
    m.attention = AttentionKind::mla;
    m.mla = MlaDims{4, 3, 2, 1, 2};
    QCOMPARE(countParams(m).attention_per_layer, 151.0);
    // Without a query latent: q = 8*2*3 = 48, only the kv norm (3): 48 + 56 + 32 + 3 = 139
    m.mla.q_lora_rank = 0;
    QCOMPARE(countParams(m).attention_per_layer, 139.0);
}

void TestModelCosts::deepSeekV3Params() {
    // MLA attention per layer:
    //   q  7168*1536 + 1536*128*192         = 11,010,048 + 37,748,736
    //   kv 7168*(512+64) + 512*128*(128+128) = 4,128,768 + 16,777,216
    //   o  128*128*7168 = 117,440,512; norms 1536 + 512 = 2,048 -> 187,107,328
    // dense layer = 187,107,328 + 3*7168*18432 (396,361,728) + 2*7168 = 583,483,392
    // MoE layer = 187,107,328 + 256*44,040,192 + 44,040,192 (shared) + 7168*256 + 14,336
    //           = 11,507,286,016
    // total = 3*583,483,392 + 58*11,507,286,016 + 2*129280*7168 + 7168 = 671,026,404,352
    // active: MoE layer uses 8 + 1 experts: 585,318,400 per layer ->
    //   3*583,483,392 + 58*585,318,400 + 1,853,358,080 + 7168 = 37,552,282,624
    // = 671.03B (0.004% over the published 671B, which excludes the MTP module as we do) and
    // 37.55B active (1.5% over the published 37B; we count the embedding rows and LM head).
    const ParamCounts p = countParams(deepSeekV3());
    QCOMPARE(p.attention_per_layer, 187107328.0);
    QCOMPARE(p.total, 671026404352.0);
    QCOMPARE(p.active_per_token, 37552282624.0);
    QVERIFY(std::abs(p.total / 671e9 - 1.0) < 0.01);
    QVERIFY(std::abs(p.active_per_token / 37e9 - 1.0) < 0.03);
}

void TestModelCosts::tinyFlops() {
    // Dense layer: proj 2*192 = 384; core: QK^T 2*16*2*4 = 256, AV 256, halved -> 256;
    //   FFN 2*384 = 768; total 1408.
    // MoE layer: proj 384, core 256, router 2*32 = 64, routed 2*2*144 = 576, shared 2*144 = 288;
    //   total 1568.
    // LM head 2*10*8 = 160. Model = 3 * (1408 + 1568 + 160) = 9408.
    const ModelSpec m = tinyModel();
    const LayerFlops dense = forwardFlopsPerToken(m, false);
    QCOMPARE(dense.attention_proj, 384.0);
    QCOMPARE(dense.attention_core, 256.0);
    QCOMPARE(dense.dense_ffn, 768.0);
    QCOMPARE(dense.router, 0.0);
    QCOMPARE(dense.total(), 1408.0);
    const LayerFlops moe = forwardFlopsPerToken(m, true);
    QCOMPARE(moe.dense_ffn, 0.0);
    QCOMPARE(moe.router, 64.0);
    QCOMPARE(moe.routed_experts, 576.0);
    QCOMPARE(moe.shared_experts, 288.0);
    QCOMPARE(moe.total(), 1568.0);
    QCOMPARE(lmHeadForwardFlopsPerToken(m), 160.0);
    QCOMPARE(modelFlopsPerToken(m), 9408.0);

    // MLA core uses qk = nope + rope and v = v_head_dim: 16 * 2 * (3 + 2) = 160.
    ModelSpec mla = m;
    mla.attention = AttentionKind::mla;
    mla.mla = MlaDims{4, 3, 2, 1, 2};
    QCOMPARE(forwardFlopsPerToken(mla, true).attention_core, 160.0);
}

void TestModelCosts::deepSeekV3Flops() {
    // Per-layer core attention: 4096 * 128 * (192 + 128) = 167,772,160.
    // Weight FLOPs are 2 * active params except the embedding lookup and the RMSNorm vectors
    // (61 * 14,336 + 7,168 = 881,664; elementwise, not matrix work):
    //   2 * (37,552,282,624 - 926,679,040 - 881,664) = 73,249,443,840
    // plus 61 * 167,772,160 = 10,234,101,760 -> forward 83,483,545,600, x3 = 250,450,636,800
    // (about 6 * 37B + attention, the usual 6N rule).
    const ModelSpec m = deepSeekV3();
    QCOMPARE(forwardFlopsPerToken(m, true).attention_core, 167772160.0);
    QCOMPARE(modelFlopsPerToken(m), 250450636800.0);
}

void TestModelCosts::splitEven() {
    // 24 layers over pp 4: 6 each, stage s starts at 6s.
    ModelSpec m = defaultLike().model;
    LayoutSpec l;
    l.pp = 4;
    const auto stages = splitLayers(m, l);
    QCOMPARE(int(stages.size()), 4);
    for (int s = 0; s < 4; ++s) {
        QCOMPARE(stages[s].stage, s);
        QCOMPARE(stages[s].layers, 6);
        QCOMPARE(stages[s].first_layer, 6 * s);
        QCOMPARE(stages[s].moe_layers, 6);
        QCOMPARE(stages[s].dense_layers, 0);
        QCOMPARE(stages[s].has_embedding, s == 0);
        QCOMPARE(stages[s].has_lm_head, s == 3);
    }
}

void TestModelCosts::splitDeepSeekPp16() {
    // 61 = 16*3 + 13: chunks 0..12 get 4 layers, 13..15 get 3.
    LayoutSpec l;
    l.pp = 16;
    const auto st = splitLayers(deepSeekV3(), l);
    QCOMPARE(int(st.size()), 16);
    int sum = 0;
    for (int s = 0; s < 16; ++s) {
        QCOMPARE(st[s].layers, s < 13 ? 4 : 3);
        sum += st[s].layers;
    }
    QCOMPARE(sum, 61);
    // Stage 0 holds layers 0..3: the 3 dense layers and one MoE layer.
    QCOMPARE(st[0].dense_layers, 3);
    QCOMPARE(st[0].moe_layers, 1);
    QVERIFY(st[0].has_embedding);
    QVERIFY(!st[0].has_lm_head);
    QCOMPARE(st[1].first_layer, 4);
    QCOMPARE(st[1].dense_layers, 0);
    QCOMPARE(st[1].moe_layers, 4);
    QCOMPARE(st[13].first_layer, 52); // 13 * 4
    QCOMPARE(st[15].first_layer, 58); // 52 + 3 + 3
    QVERIFY(st[15].has_lm_head);
    QVERIFY(!st[15].has_embedding);
}

void TestModelCosts::splitInterleaved() {
    // 61 layers, pp 4, vpp 4: 16 chunks of 4,4,...(13 times),3,3,3.
    // Stage s holds chunks s, s+4, s+8, s+12:
    //   stage 0: 4+4+4+4 = 16 (chunk 0 = layers 0..3 -> 3 dense, 1 MoE; 13 MoE in all)
    //   stages 1..3: 4+4+4+3 = 15. The last chunk (15) is on stage 3, which gets the LM head.
    LayoutSpec l;
    l.pp = 4;
    l.vpp = 4;
    l.schedule = PipelineSchedule::interleaved;
    const auto st = splitLayers(deepSeekV3(), l);
    QCOMPARE(int(st.size()), 4);
    QCOMPARE(st[0].layers, 16);
    QCOMPARE(st[0].dense_layers, 3);
    QCOMPARE(st[0].moe_layers, 13);
    QCOMPARE(st[1].layers, 15);
    QCOMPARE(st[2].layers, 15);
    QCOMPARE(st[3].layers, 15);
    QCOMPARE(st[1].first_layer, 4);
    QCOMPARE(st[3].first_layer, 12);
    QVERIFY(st[3].has_lm_head);
    QVERIFY(!st[0].has_lm_head);
}

void TestModelCosts::splitDenseModel() {
    // A dense model: every layer dense regardless of dense_layers.
    ModelSpec m = tinyModel();
    m.experts = 0;
    m.layers = 5;
    LayoutSpec l;
    l.pp = 2;
    const auto st = splitLayers(m, l);
    QCOMPARE(st[0].layers, 3); // earlier chunk takes the remainder
    QCOMPARE(st[1].layers, 2);
    QCOMPARE(st[0].dense_layers, 3);
    QCOMPARE(st[1].dense_layers, 2);
    QCOMPARE(st[1].moe_layers, 0);
}

void TestModelCosts::inFlight() {
    LayoutSpec l;
    l.pp = 4;
    l.schedule = PipelineSchedule::gpipe; // all m
    QCOMPARE(inFlightMicroBatches(l, 0, 8), 8);
    QCOMPARE(inFlightMicroBatches(l, 3, 8), 8);

    l.schedule = PipelineSchedule::one_f_one_b; // min(m, pp - stage)
    QCOMPARE(inFlightMicroBatches(l, 0, 8), 4);
    QCOMPARE(inFlightMicroBatches(l, 1, 8), 3);
    QCOMPARE(inFlightMicroBatches(l, 3, 8), 1);
    QCOMPARE(inFlightMicroBatches(l, 0, 2), 2);

    // Interleaved pp 4, vpp 2: chunk micro-batches min(m*2, (4-s-1)*2 + (2-1)*4 + 1):
    //   stage 0, m 8: min(16, 11) = 11 -> ceil(11/2) = 6
    //   stage 3, m 8: min(16, 5) = 5 -> 3
    //   stage 0, m 2: min(4, 11) = 4 -> 2
    l.schedule = PipelineSchedule::interleaved;
    l.vpp = 2;
    QCOMPARE(inFlightMicroBatches(l, 0, 8), 6);
    QCOMPARE(inFlightMicroBatches(l, 3, 8), 3);
    QCOMPARE(inFlightMicroBatches(l, 0, 2), 2);
    // One virtual stage is plain 1F1B.
    l.vpp = 1;
    QCOMPARE(inFlightMicroBatches(l, 0, 8), 4);

    // DualPipe: min(m, pp + 1); DeepSeek-V3 with pp 16 holds 17.
    l.schedule = PipelineSchedule::dualpipe;
    l.pp = 16;
    QCOMPARE(inFlightMicroBatches(l, 0, 120), 17);
    QCOMPARE(inFlightMicroBatches(l, 15, 120), 17);
    QCOMPARE(inFlightMicroBatches(l, 0, 4), 4);
}

void TestModelCosts::microBatchesAndTokens() {
    Scenario s = defaultLike();
    QCOMPARE(microBatchesPerStep(s), 8);            // 512 / (64 * 1)
    QCOMPARE(tokensPerGpuPerMicroBatch(s), 4096.0); // 1 * 4096 / (1 * 1)
    s.layout.tp = 2;
    s.layout.cp = 2;
    s.layout.dp = 16;
    s.training.micro_batch = 2;
    QCOMPARE(microBatchesPerStep(s), 16);           // 512 / (16 * 2)
    QCOMPARE(tokensPerGpuPerMicroBatch(s), 2048.0); // 2 * 4096 / (2 * 2)
}

void TestModelCosts::memoryDefault() {
    const Scenario s = defaultLike();
    const auto stages = splitLayers(s.model, s.layout);
    QCOMPARE(int(stages.size()), 1);
    const MemoryBreakdown mem = memoryPerGpu(s, stages[0]);
    // weights (bf16): (1,270,550,528 + 4,831,838,208) * 2 = 12,204,777,472
    QCOMPARE(mem.weights_bytes, 12204777472.0);
    QCOMPARE(mem.weights_bytes, (kDefaultDensePerGpu + kDefaultExpertPerGpu) * 2);
    // fp32 main gradients, not sharded under ZeRO-1: 6,102,388,736 * 4 = 24,409,554,944
    QCOMPARE(mem.gradients_bytes, 24409554944.0);
    // Adam 12 B/param; dense over DP 64, experts over expert-DP 64/8 = 8:
    //   12 * (1,270,550,528/64 + 4,831,838,208/8) = 12 * (19,852,352 + 603,979,776)
    //   = 7,485,985,536
    QCOMPARE(mem.optimizer_bytes, 7485985536.0);
    // 1F1B with pp 1: one micro-batch in flight. Selective recompute (norm outputs and
    // activation outputs recomputed), BF16, GQA: attention 4 + 0 + 4 + 2 + 2 + 1 = 13 units,
    // MLP 2 + 8 + 0 + 1 = 11 units per 4h, times top-2 * 8192 / (4 * 4096) = 1 -> 24 * sbh
    // = 24 * 16,777,216 = 402,653,184 B per layer; 24 layers + fp32 logits
    //   = 9,663,676,416 + 524,288,000 = 10,187,964,416
    QCOMPARE(mem.activations_bytes, 10187964416.0);
    QCOMPARE(mem.activations_bytes, 24 * kDefaultSelectiveLayerActivations + kDefaultLogits);
    // dispatch (bf16) + combine (bf16): 4096 tokens * top 2 * 4096 * (2 + 2) = 134,217,728
    QCOMPARE(mem.dispatch_buffers_bytes, 134217728.0);
    // 3 GB + 5% of 80 GB
    QCOMPARE(mem.workspace_bytes, 7e9);
    // Sum: 61,422,500,096 B -> fits 80 GB with 18.6 GB to spare.
    QCOMPARE(mem.total_bytes, 61422500096.0);
    QCOMPARE(mem.hbm_bytes, 80e9);
    QCOMPARE(mem.margin_bytes, 80e9 - 61422500096.0);
    QVERIFY(mem.fits);
    QVERIFY(mem.margin_bytes > 10e9);
}

void TestModelCosts::memoryBuiltinDefaultScenario() {
    // The embedded default scenario (loaded from YAML) is defaultLike() with two sequences per
    // micro-batch; this fails if the sample file or the hand-built copy drift apart. Weights,
    // gradients, optimizer and workspace are as derived above; activations and dispatch
    // buffers double: 2 * 9,663,676,416 + 2 * 524,288,000 logits = 20,375,928,832 and
    // 2 * 134,217,728 = 268,435,456. Total 12,204,777,472 + 24,409,554,944 + 7,485,985,536 +
    // 20,375,928,832 + 268,435,456 + 7e9 = 71,744,682,240.
    const Scenario& s = defaultScenario();
    QCOMPARE(s.training.micro_batch, 2);
    const auto stages = splitLayers(s.model, s.layout);
    QCOMPARE(int(stages.size()), 1);
    const MemoryBreakdown mem = memoryPerGpu(s, stages[0]);
    QCOMPARE(mem.activations_bytes, 20375928832.0);
    QCOMPARE(mem.dispatch_buffers_bytes, 268435456.0);
    QCOMPARE(mem.total_bytes, 71744682240.0);
    QCOMPARE(mem.hbm_bytes, 80e9);
    QVERIFY(mem.fits);
}

void TestModelCosts::memoryDoubledHiddenDoesNotFit() {
    // hidden 8192: expert weights alone are 24*2*3*8192*8192*2 B = 19.3 GB and their fp32 grads
    // 38.7 GB; with attention (4x) the total is far above 80 GB.
    Scenario s = defaultLike();
    s.model.hidden = 8192;
    const auto stages = splitLayers(s.model, s.layout);
    const MemoryBreakdown mem = memoryPerGpu(s, stages[0]);
    QVERIFY(!mem.fits);
    QVERIFY(mem.margin_bytes < 0);
    QVERIFY(mem.total_bytes > 80e9);
}

void TestModelCosts::memoryTensorParallel() {
    // tp 2, dp 32, ep 8 (expert-DP = 2*32/8 = 8). Non-expert per GPU:
    //   24 * (41,943,040/2 + 8,192 + 65,536) + 2*131,072,000/2 + 4,096
    //   = 24 * 21,045,248 + 131,072,000 + 4,096 = 636,162,048
    // weights = (636,162,048 + 4,831,838,208) * 2 = 10,936,000,512
    // activations halve (sequence parallel): 4,831,838,208 + logits/2 262,144,000 = 5,093,982,208
    // dispatch: 2048 tokens per GPU -> 67,108,864
    Scenario s = defaultLike();
    s.layout.tp = 2;
    s.layout.dp = 32;
    const MemoryBreakdown mem = memoryPerGpu(s, splitLayers(s.model, s.layout)[0]);
    QCOMPARE(mem.weights_bytes, 10936000512.0);
    QCOMPARE(mem.activations_bytes, 5093982208.0);
    QCOMPARE(mem.dispatch_buffers_bytes, 67108864.0);
    // optimizer: 12 * (636,162,048/32 + 4,831,838,208/8) = 12 * (19,880,064 + 603,979,776)
    //   = 7,486,318,080
    QCOMPARE(mem.optimizer_bytes, 7486318080.0);

    // Without sequence parallelism the parts TP does not split stay whole on both TP ranks
    // (Korthikanti eq. 2's 10 sbh): with selective recompute the QKV input is recomputed, so
    // norm inputs 4 + fc1 input 2 + dropout masks 2 = 8 sbh units per layer, of which the
    // sharded layout held 8/tp: one more 8 x sbh/2 per layer, 24 layers, one micro-batch.
    QCOMPARE(s.training.recompute, Recompute::selective);
    Scenario replicated = s;
    replicated.training.tp_activations = TpActivations::replicated;
    const MemoryBreakdown whole = memoryPerGpu(replicated, splitLayers(s.model, s.layout)[0]);
    const double sbh_over_tp =
        double(s.model.seq_len) * s.training.micro_batch * s.model.hidden / 2;
    QCOMPARE(whole.activations_bytes - mem.activations_bytes, 8.0 * sbh_over_tp * 24);
}

void TestModelCosts::memoryPipelineStages() {
    // pp 4, dp 16, ep 8 (expert-DP 2), m = 512/16 = 32, 6 layers a stage.
    Scenario s = defaultLike();
    s.layout.pp = 4;
    s.layout.dp = 16;
    const auto st = splitLayers(s.model, s.layout);
    const MemoryBreakdown first = memoryPerGpu(s, st[0]);
    const MemoryBreakdown last = memoryPerGpu(s, st[3]);
    // Stage 0: 1F1B keeps 4 micro-batches: 4 * 6 * 402,653,184 = 9,663,676,416 (the classic
    // result: the first stage holds as much as the whole unpipelined model).
    QCOMPARE(first.activations_bytes, 9663676416.0);
    // Last stage: 1 micro-batch of 6 layers + logits = 2,415,919,104 + 524,288,000
    QCOMPARE(last.activations_bytes, 2940207104.0);
    // Stage 0 weights: (6 * 42,016,768 + 131,072,000 embedding + 6*2*100,663,296) * 2
    //   = (252,100,608 + 131,072,000 + 1,207,959,552) * 2 = 3,182,264,320
    QCOMPARE(first.weights_bytes, 3182264320.0);
    // Last stage: LM head and final norm instead of the embedding: + 4096 params * 2 B
    QCOMPARE(last.weights_bytes, 3182264320.0 + 4096 * 2);
}

void TestModelCosts::memoryZeroStages() {
    Scenario s = defaultLike();
    const StageLayers st = splitLayers(s.model, s.layout)[0];
    const double dense = kDefaultDensePerGpu;
    const double expert = kDefaultExpertPerGpu;
    const double sharded = dense / 64 + expert / 8; // 623,832,128

    s.training.zero_stage = 0; // optimizer not sharded: 12 * 6,102,388,736
    QCOMPARE(memoryPerGpu(s, st).optimizer_bytes, 12 * (dense + expert));

    s.training.zero_stage = 2; // gradients sharded too
    MemoryBreakdown z2 = memoryPerGpu(s, st);
    QCOMPARE(z2.gradients_bytes, 4 * sharded);
    QCOMPARE(z2.weights_bytes, 2 * (dense + expert));

    s.training.zero_stage = 3; // weights sharded, plus one gathered layer:
    // one MoE layer on this GPU = 41,943,040 + 8,192 + 65,536 + 2 * 100,663,296 = 243,343,360
    MemoryBreakdown z3 = memoryPerGpu(s, st);
    QCOMPARE(z3.weights_bytes, 2 * (sharded + 243343360.0));
    QVERIFY(z3.total_bytes < z2.total_bytes);
}

void TestModelCosts::memoryRecomputeAndDualPipe() {
    Scenario s = defaultLike();
    const StageLayers st = splitLayers(s.model, s.layout)[0];
    // No recompute stores everything but the scores (flash attention): 15 + 19 = 34 units,
    //   24 * 34 * sbh + logits = 13,690,208,256 + 524,288,000 = 14,214,496,256
    s.training.recompute = Recompute::none;
    QCOMPARE(memoryPerGpu(s, st).activations_bytes, 14214496256.0);
    QCOMPARE(memoryPerGpu(s, st).activations_bytes,
             24 * kDefaultMoeLayerActivations + kDefaultLogits);
    // FP8 compute caches linear-layer inputs in FP8: attention 4 + 1 + 6 + 1 + 1 = 13, MLP
    // 1 + 8 + 4 + 1 = 14 -> 27 units: 24 * 27 * 16,777,216 + logits = 11,395,923,968
    s.model.compute_precision = Precision::fp8;
    QCOMPARE(memoryPerGpu(s, st).activations_bytes, 11395923968.0);
    s.model.compute_precision = Precision::bf16;
    // Full: 24 layer inputs 2*sbh + one layer being recomputed (34 sbh) + logits
    //   = 805,306,368 + 570,425,344 + 524,288,000 = 1,900,019,712
    s.training.recompute = Recompute::full;
    QCOMPARE(memoryPerGpu(s, st).activations_bytes, 1900019712.0);
    // Unfused attention stores the scores too: Korthikanti's 5as/h units with dropout (softmax
    // output, mask, dropout output) or 2as/h without (softmax output), here a = 32 heads,
    // s = 4096, h = 4096: 64 units, in the one layer being recomputed under full recompute:
    // + 64 x 16,777,216 = 1,073,741,824 B. Selective recompute drops them again.
    s.training.attention_kernel = AttentionKernel::unfused;
    QCOMPARE(memoryPerGpu(s, st).activations_bytes, 1900019712.0 + 1073741824.0);
    s.model.dropout = 0.1;
    QCOMPARE(memoryPerGpu(s, st).activations_bytes, 1900019712.0 + 2.5 * 1073741824.0);
    s.training.recompute = Recompute::selective;
    QCOMPARE(memoryPerGpu(s, st).activations_bytes,
             24 * kDefaultSelectiveLayerActivations + kDefaultLogits);
    s.training.attention_kernel = AttentionKernel::flash;
    s.model.dropout = 0;

    // DualPipe doubles weights and gradients, not the optimizer.
    s = defaultLike();
    const MemoryBreakdown base = memoryPerGpu(s, st);
    s.layout.schedule = PipelineSchedule::dualpipe;
    const MemoryBreakdown dual = memoryPerGpu(s, st);
    QCOMPARE(dual.weights_bytes, 2 * base.weights_bytes);
    QCOMPARE(dual.gradients_bytes, 2 * base.gradients_bytes);
    QCOMPARE(dual.optimizer_bytes, base.optimizer_bytes);

    // FP8 dispatch: 4096 * 2 * 4096 * (1 + 2) = 100,663,296
    s = defaultLike();
    s.model.dispatch_precision = Precision::fp8;
    QCOMPARE(memoryPerGpu(s, st).dispatch_buffers_bytes, 100663296.0);
}

void TestModelCosts::degenerateLayoutDoesNotCrash() {
    Scenario s = defaultLike();
    s.layout.tp = 0;
    s.layout.pp = 0;
    s.layout.dp = 0;
    s.layout.ep = 0;
    s.training.micro_batch = 0;
    const auto st = splitLayers(s.model, s.layout);
    QCOMPARE(int(st.size()), 1);
    const MemoryBreakdown mem = memoryPerGpu(s, st[0]);
    QVERIFY(std::isfinite(mem.total_bytes));
    QVERIFY(microBatchesPerStep(s) >= 1);
    QVERIFY(std::isfinite(tokensPerGpuPerMicroBatch(s)));
    s.model.heads = 0;
    QVERIFY(std::isfinite(countParams(s.model).total));
    QVERIFY(std::isfinite(modelFlopsPerToken(s.model)));
}

QTEST_GUILESS_MAIN(TestModelCosts)
#include "test_model_costs.moc"
