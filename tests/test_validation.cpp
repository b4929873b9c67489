// Semantic validation: every rule of the scenario format's "Semantic rules" and the range checks
// give one diagnostic with the exact field and message; a valid scenario gives none; several
// problems give several diagnostics; broken degrees never crash or cascade; a SourceMap puts
// file, line and column on each diagnostic.
#include "moe/scenario_io.h"
#include "moe/validate.h"
#include "test_support.h"

#include <QtTest>

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using namespace moe;

namespace {

// The shared 64-GPU MoE scenario (TP1 PP1 DP64 EP8, so expert-DP 8) with its GPU and NIC numbers
// resolved, as the validator sees a loaded file, without depending on the catalog or the loader.
Scenario validScenario() {
    Scenario s = test::h100Moe16Scenario();
    s.name = "valid";
    ClusterSpec& c = s.cluster;
    c.gpu.name = "H100";
    c.gpu.bf16_tflops = 989;
    c.gpu.fp8_tflops = 1979;
    c.gpu.hbm_tbps = 3.35;
    c.gpu.sm_count = 132; // cluster.gpu_overrides.sm_count must be at least 1
    c.gpu.scale_up_gbps = 450;
    c.gpu.scale_up_latency_us = 2.5;
    c.gpu.power_w = 700;
    c.nodes_per_rack = 4;
    c.nic.preset = "cx7-400g";
    c.nic.speed_gbit = 400;
    c.nic.bandwidth_gbps = 48;
    c.nic.latency_us = 4;
    c.nics_per_node = 8;
    return s;
}

void setLayout(Scenario& s, int tp, int cp, int pp, int dp) {
    s.layout.tp = tp;
    s.layout.cp = cp;
    s.layout.pp = pp;
    s.layout.dp = dp;
}

void makeDense(Scenario& s) {
    s.model.experts = 0;
    s.model.top_k = 0;
    s.model.expert_ffn_hidden = 0;
    s.layout.ep = 1;
}

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

QString fields(const Diagnostics& diagnostics) {
    QStringList list;
    for (const Diagnostic& d : diagnostics)
        list << qs(d.field);
    return list.join(", ");
}

struct Case {
    const char* name;
    std::function<void(Scenario&)> mutate;
    const char* field;
    const char* message;
    Diagnostic::Severity severity = Diagnostic::Severity::error;
};

// Each case breaks exactly one rule of the valid scenario, so it must give exactly one
// diagnostic; the messages were derived by hand from the numbers.
const std::vector<Case>& singleProblemCases() {
    using Sev = Diagnostic::Severity;
    static const std::vector<Case> cases = {
        // --- the layout covers the cluster ---
        {"gpu count", [](Scenario& s) { s.layout.dp = 32; }, "layout.dp",
         "layout: tp*cp*pp*dp = 1*1*1*32 = 32 does not equal the cluster's 64 GPUs "
         "(8 nodes x 8 GPUs)"},
        {"gpu count with all degrees",
         [](Scenario& s) {
             setLayout(s, 2, 2, 2, 2);
             s.layout.ep = 2;
             s.training.global_batch = 64;
         },
         "layout.dp",
         "layout: tp*cp*pp*dp = 2*2*2*2 = 16 does not equal the cluster's 64 GPUs "
         "(8 nodes x 8 GPUs)"},
        // --- the expert grid ---
        {"experts over ep", [](Scenario& s) { s.layout.ep = 32; }, "layout.ep",
         "layout.ep = 32 does not divide model.experts = 16"},
        {"expert grid folding (ep)",
         [](Scenario& s) {
             s.model.experts = 48;
             s.layout.ep = 3;
         },
         "layout.ep",
         "layout.ep*etp = 3*1 = 3 does not divide tp*cp*dp = 64 (the expert grid folds over "
         "the same GPUs)"},
        {"expert grid folding (etp)", [](Scenario& s) { s.layout.etp = 16; }, "layout.ep",
         "layout.ep*etp = 8*16 = 128 does not divide tp*cp*dp = 64 (the expert grid folds over "
         "the same GPUs)"},
        {"expert ffn over etp",
         [](Scenario& s) {
             s.layout.etp = 2;
             s.model.expert_ffn_hidden = 8191;
         },
         "layout.etp", "layout.etp = 2 does not divide model.expert_ffn_hidden = 8191"},
        // --- tensor parallelism ---
        {"heads over tp",
         [](Scenario& s) {
             setLayout(s, 2, 1, 1, 32);
             s.model.heads = 33;
             s.model.kv_heads = 1;
             s.model.head_dim = 128;
         },
         "layout.tp", "layout.tp = 2 does not divide model.heads = 33"},
        {"kv heads vs tp",
         [](Scenario& s) {
             setLayout(s, 4, 1, 1, 16);
             s.model.heads = 24;
             s.model.kv_heads = 6;
             s.model.head_dim = 128;
         },
         "layout.tp",
         "layout.tp = 4 and model.kv_heads = 6 do not divide one another (TP must either split "
         "the KV heads or replicate them evenly)"},
        {"dense ffn over tp",
         [](Scenario& s) {
             setLayout(s, 2, 1, 1, 32);
             s.model.dense_layers = 1;
             s.model.ffn_hidden = 14337;
         },
         "layout.tp", "layout.tp = 2 does not divide model.ffn_hidden = 14337"},
        {"shared expert ffn over tp",
         [](Scenario& s) {
             setLayout(s, 2, 1, 1, 32);
             s.model.shared_experts = 1;
             s.model.shared_expert_ffn_hidden = 2047;
         },
         "layout.tp", "layout.tp = 2 does not divide model.shared_expert_ffn_hidden = 2047"},
        // --- context parallelism and batch ---
        {"seq_len over 2*cp",
         [](Scenario& s) {
             setLayout(s, 1, 2, 1, 32);
             s.model.seq_len = 4098;
         },
         "layout.cp",
         "model.seq_len = 4098 is not divisible by 2*layout.cp = 2*2 = 4 (context parallelism "
         "splits each sequence into 2*cp chunks)"},
        {"global batch", [](Scenario& s) { s.training.global_batch = 500; },
         "training.global_batch",
         "training.global_batch = 500 is not divisible by layout.dp * training.micro_batch = 64 "
         "* 1"},
        {"global batch with micro batch",
         [](Scenario& s) {
             s.training.global_batch = 192;
             s.training.micro_batch = 2;
         },
         "training.global_batch",
         "training.global_batch = 192 is not divisible by layout.dp * training.micro_batch = 64 "
         "* 2"},
        // --- pipeline ---
        {"pp exceeds layers",
         [](Scenario& s) {
             setLayout(s, 1, 1, 32, 2);
             s.layout.ep = 2;
         },
         "layout.pp", "layout.pp*vpp = 32 exceeds model.layers = 24"},
        {"pp*vpp exceeds layers",
         [](Scenario& s) {
             setLayout(s, 1, 1, 8, 8);
             s.layout.vpp = 4;
             s.layout.schedule = PipelineSchedule::interleaved;
         },
         "layout.vpp", "layout.pp*vpp = 32 exceeds model.layers = 24"},
        {"vpp without interleaved",
         [](Scenario& s) {
             setLayout(s, 1, 1, 4, 16);
             s.layout.vpp = 2;
         },
         "layout.vpp", "layout.vpp = 2 needs layout.schedule = interleaved (it is 1f1b)"},
        {"interleaved layers",
         [](Scenario& s) {
             setLayout(s, 1, 1, 4, 16);
             s.layout.vpp = 2;
             s.layout.schedule = PipelineSchedule::interleaved;
             s.model.layers = 30;
         },
         "layout.vpp",
         "model.layers = 30 is not divisible by layout.pp*vpp = 4*2 = 8 (the interleaved "
         "schedule gives each virtual stage the same number of layers; "
         "layout.first_stage_layers and last_stage_layers make the end stages uneven)"},
        {"uneven middle stages",
         [](Scenario& s) {
             setLayout(s, 1, 1, 4, 16);
             s.layout.first_stage_layers = 5;
         },
         "layout.first_stage_layers",
         "model.layers = 24 less layout.first_stage_layers = 5 and last_stage_layers = 0 "
         "leaves 19 layers for the 3 stages between: they need an equal share of at least "
         "layout.vpp = 1 each (Megatron-Core splits them evenly)"},
        {"uneven without pipeline", [](Scenario& s) { s.layout.last_stage_layers = 2; },
         "layout.last_stage_layers",
         "layout.first_stage_layers and last_stage_layers need layout.pp >= 2 (it is 1)"},
        {"uneven end stage below vpp",
         [](Scenario& s) {
             setLayout(s, 1, 1, 4, 16);
             s.layout.vpp = 2;
             s.layout.schedule = PipelineSchedule::interleaved;
             s.layout.first_stage_layers = 1;
             s.layout.last_stage_layers = 1;
             s.model.layers = 26;
         },
         "layout.first_stage_layers",
         "layout.first_stage_layers = 1 is fewer than layout.vpp = 2 (every virtual stage "
         "needs at least one layer)"},
        {"interleaved micro-batches",
         [](Scenario& s) {
             setLayout(s, 1, 1, 4, 16);
             s.layout.vpp = 2;
             s.layout.schedule = PipelineSchedule::interleaved;
             s.training.global_batch = 96;
         },
         "training.global_batch",
         "layout.schedule = interleaved needs a number of micro-batches that is a multiple of "
         "layout.pp = 4, but training.global_batch / (layout.dp * training.micro_batch) = 96 / "
         "(16 * 1) = 6"},
        {"interleaved without vpp",
         [](Scenario& s) {
             setLayout(s, 1, 1, 4, 16);
             s.layout.schedule = PipelineSchedule::interleaved;
         },
         "layout.vpp",
         "layout.schedule = interleaved with layout.vpp = 1 runs like 1f1b; set layout.vpp > 1 "
         "to interleave",
         Sev::warning},
        {"dualpipe odd pp",
         [](Scenario& s) {
             s.cluster.nodes = 6;
             setLayout(s, 1, 1, 3, 16);
             s.layout.schedule = PipelineSchedule::dualpipe;
         },
         "layout.pp", "layout.pp = 3 must be even for layout.schedule = dualpipe"},
        {"dualpipe micro-batches",
         [](Scenario& s) {
             setLayout(s, 1, 1, 8, 8);
             s.layout.schedule = PipelineSchedule::dualpipe;
             s.training.global_batch = 64;
         },
         "training.global_batch",
         "layout.schedule = dualpipe needs at least 2*layout.pp = 16 micro-batches, but "
         "training.global_batch / (layout.dp * training.micro_batch) = 64 / (8 * 1) = 8"},
        {"dualpipe odd micro-batches",
         [](Scenario& s) {
             setLayout(s, 1, 1, 8, 8);
             s.layout.schedule = PipelineSchedule::dualpipe;
             s.training.global_batch = 8 * 17;
         },
         "training.global_batch",
         "layout.schedule = dualpipe needs an even number of micro-batches (half enter from "
         "each end), but training.global_batch / (layout.dp * training.micro_batch) = 136 / "
         "(8 * 1) = 17"},
        {"ep overlap on a 1f1b pipeline",
         [](Scenario& s) {
             setLayout(s, 1, 1, 4, 16);
             s.training.ep_overlap = EpOverlap::combined_1f1b;
         },
         "training.ep_overlap",
         "training.ep_overlap = combined-1f1b needs layout.schedule = interleaved with "
         "layout.vpp > 1 when layout.pp > 1 (Megatron-Core pairs passes only in the interleaved "
         "schedule), but layout.schedule = 1f1b, layout.vpp = 1"},
        {"ep overlap under dualpipe",
         [](Scenario& s) {
             setLayout(s, 1, 1, 8, 8);
             s.layout.schedule = PipelineSchedule::dualpipe;
             s.training.ep_overlap = EpOverlap::combined_1f1b;
         },
         "training.ep_overlap",
         "training.ep_overlap = combined-1f1b is for 1F1B pipelines; layout.schedule = dualpipe "
         "already runs its passes in overlapped pairs (set training.ep_overlap = none)"},
        {"ep overlap on a dense model",
         [](Scenario& s) {
             makeDense(s);
             s.training.ep_overlap = EpOverlap::combined_1f1b;
         },
         "training.ep_overlap",
         "training.ep_overlap = combined-1f1b overlaps the expert-parallel all-to-all, but the "
         "model has no MoE layers"},
        // --- dense and MoE model rules ---
        {"dense model with ep",
         [](Scenario& s) {
             makeDense(s);
             s.layout.ep = 8;
         },
         "layout.ep", "layout.ep = 8 must be 1 for a dense model (model.experts = 0)"},
        {"dense model with etp",
         [](Scenario& s) {
             makeDense(s);
             s.layout.etp = 2;
         },
         "layout.etp", "layout.etp = 2 must be 1 for a dense model (model.experts = 0)"},
        {"dense model with top_k",
         [](Scenario& s) {
             makeDense(s);
             s.model.top_k = 2;
         },
         "model.top_k", "model.top_k = 2 must be 0 for a dense model (model.experts = 0)"},
        {"dense model without ffn",
         [](Scenario& s) {
             makeDense(s);
             s.model.ffn_hidden = 0;
         },
         "model.ffn_hidden",
         "model.ffn_hidden = 0 must be greater than 0 for a dense model (model.experts = 0)"},
        {"moe top_k zero", [](Scenario& s) { s.model.top_k = 0; }, "model.top_k",
         "model.top_k = 0 must be at least 1 for a MoE model (model.experts = 16)"},
        {"moe top_k above experts", [](Scenario& s) { s.model.top_k = 17; }, "model.top_k",
         "model.top_k = 17 exceeds model.experts = 16"},
        {"moe without expert ffn", [](Scenario& s) { s.model.expert_ffn_hidden = 0; },
         "model.expert_ffn_hidden",
         "model.expert_ffn_hidden = 0 must be greater than 0 for a MoE model (model.experts = "
         "16)"},
        {"moe without moe layers", [](Scenario& s) { s.model.dense_layers = 24; },
         "model.dense_layers",
         "model.dense_layers = 24 must be less than model.layers = 24 so that the MoE model has "
         "MoE layers"},
        {"dense layers without ffn",
         [](Scenario& s) {
             s.model.dense_layers = 1;
             s.model.ffn_hidden = 0;
         },
         "model.ffn_hidden",
         "model.ffn_hidden = 0 must be greater than 0 because model.dense_layers = 1 (those "
         "layers use the dense FFN)"},
        {"moe without dense layers needs no ffn",
         [](Scenario& s) {
             s.model.ffn_hidden = 0;
             s.model.experts = 12; // 12 does not divide over EP 8: proves the case still runs
         },
         "layout.ep", "layout.ep = 8 does not divide model.experts = 12"},
        {"kv heads over heads", [](Scenario& s) { s.model.kv_heads = 6; }, "model.kv_heads",
         "model.kv_heads = 6 does not divide model.heads = 32"},
        {"hidden over heads",
         [](Scenario& s) {
             s.model.heads = 48;
             s.model.kv_heads = 8;
         },
         "model.heads",
         "model.hidden = 4096 is not divisible by model.heads = 48; set model.head_dim to give "
         "the head size"},
        // --- cluster ---
        {"rack domain needs whole racks",
         [](Scenario& s) {
             s.cluster.scale_up_domain = ScaleUpDomain::rack;
             s.cluster.nodes_per_rack = 3;
         },
         "cluster.nodes",
         "cluster.nodes = 8 is not divisible by cluster.nodes_per_rack = 3 "
         "(cluster.scale_up.domain = rack needs whole racks)"},
        {"empty rack",
         [](Scenario& s) {
             s.cluster.rack_nodes = {4, 0};
         },
         "cluster.rack_nodes[1]", "cluster.rack_nodes[1] = 0: a rack holds at least one node"},
        {"rack over capacity",
         [](Scenario& s) {
             s.cluster.rack_nodes = {5, 3};
         },
         "cluster.rack_nodes[0]",
         "cluster.rack_nodes[0] = 5 is more than a rack holds (cluster.nodes_per_rack = 4)"},
        {"racks place too many nodes",
         [](Scenario& s) {
             s.cluster.rack_nodes = {4, 3, 2};
         },
         "cluster.rack_nodes",
         "cluster.rack_nodes places 9 nodes but the cluster has "
         "cluster.nodes = 8"},
        {"uneven rack-wide NVLink domain",
         [](Scenario& s) {
             s.cluster.scale_up_domain = ScaleUpDomain::rack;
             s.cluster.rack_nodes = {4, 3};
         },
         "cluster.rack_nodes[1]",
         "cluster.rack_nodes[1] = 3: with cluster.scale_up.domain = rack a rack is one NVLink "
         "domain, so every rack holds cluster.nodes_per_rack = 4 nodes"},
        {"negative rack power limit", [](Scenario& s) { s.cluster.rack_power_limit_kw = -1; },
         "cluster.rack_power_limit_kw", "cluster.rack_power_limit_kw = -1 must be at least 0"},
        {"max nodes per token", [](Scenario& s) { s.layout.max_nodes_per_token = 9; },
         "layout.max_nodes_per_token", "layout.max_nodes_per_token = 9 exceeds cluster.nodes = 8"},
        {"cluster too large", [](Scenario& s) { s.cluster.nodes = 20000; }, "cluster.nodes",
         "cluster: 20000 nodes x 8 GPUs = 160000 GPUs exceeds the supported maximum of 131072"},
        // Issue 17 #1: a million NICs per node only warned and left an empty hardware graph.
        {"nics per node beyond bound", [](Scenario& s) { s.cluster.nics_per_node = 1000000; },
         "cluster.scale_out.nics_per_node",
         "cluster.scale_out.nics_per_node = 1000000 exceeds the supported maximum of 64"},
        // Issue 17 #2: a batch of 4e12 sequences overflowed the int micro-batch count.
        {"global batch beyond bound",
         [](Scenario& s) { s.training.global_batch = 4'000'000'000'000; }, "training.global_batch",
         "training.global_batch = 4000000000000 exceeds the supported maximum of 16777216"},
        {"kv_lora_rank beyond bound",
         [](Scenario& s) {
             s.model.attention = AttentionKind::mla;
             s.model.mla.kv_lora_rank = 2147483647;
         },
         "model.mla.kv_lora_rank",
         "model.mla.kv_lora_rank = 2147483647 exceeds the supported maximum of 262144"},
        // Issue 17 #3: experts 1e7 took 5 GB, layers 1e9 ended in bad_alloc.
        {"experts beyond bound", [](Scenario& s) { s.model.experts = 10'000'000; }, "model.experts",
         "model.experts = 10000000 exceeds the supported maximum of 16384"},
        {"layers beyond bound", [](Scenario& s) { s.model.layers = 1'000'000'000; }, "model.layers",
         "model.layers = 1000000000 exceeds the supported maximum of 1024"},
        {"expert-layer pairs beyond bound",
         [](Scenario& s) {
             s.model.experts = 16384;
             s.model.layers = 128;
         },
         "model.experts",
         "model: 16384 experts x 128 MoE layers = 2097152 exceeds the supported maximum of "
         "1048576 (expert, layer) pairs"},
        {"micro-batches per step beyond bound",
         [](Scenario& s) { s.training.global_batch = 64 * 20000; }, "training.global_batch",
         "training.global_batch / (layout.dp * training.micro_batch) = 20000 micro-batches per "
         "step exceeds the supported maximum of 16384"},
        {"bandwidth too small", [](Scenario& s) { s.cluster.nic.bandwidth_gbps = 1e-300; },
         "cluster.scale_out.bandwidth_gbps",
         "cluster.scale_out.bandwidth_gbps = 1e-300 is too small (the minimum is 1e-06)"},
        {"price too large", [](Scenario& s) { s.cluster.gpu.price_usd = 1e300; },
         "cluster.gpu_overrides.price_usd",
         "cluster.gpu_overrides.price_usd = 1e+300 exceeds the supported maximum of 1e+15"},
        {"nics per node warning", [](Scenario& s) { s.cluster.nics_per_node = 3; },
         "cluster.scale_out.nics_per_node",
         "cluster.scale_out.nics_per_node = 3 does not divide cluster.gpus_per_node = 8, so some "
         "NICs serve more GPUs than others",
         Sev::warning},
        {"rank order", [](Scenario& s) { s.layout.order[1] = Dim::tp; }, "layout.order",
         "layout.order = tp-tp-ep-dp-pp must name each of tp, cp, ep, dp, pp exactly once"},
        {"optimizer", [](Scenario& s) { s.training.optimizer = "sgd"; }, "training.optimizer",
         "training.optimizer = \"sgd\" is not one of: adam, adamw"},
        // --- ranges ---
        {"nodes", [](Scenario& s) { s.cluster.nodes = 0; }, "cluster.nodes",
         "cluster.nodes = 0 must be at least 1"},
        {"gpus per node", [](Scenario& s) { s.cluster.gpus_per_node = -8; },
         "cluster.gpus_per_node", "cluster.gpus_per_node = -8 must be at least 1"},
        {"hbm", [](Scenario& s) { s.cluster.gpu.hbm_gb = 0; }, "cluster.gpu_overrides.hbm_gb",
         "cluster.gpu_overrides.hbm_gb = 0 must be greater than 0"},
        {"bf16 tflops", [](Scenario& s) { s.cluster.gpu.bf16_tflops = -1.5; },
         "cluster.gpu_overrides.bf16_tflops",
         "cluster.gpu_overrides.bf16_tflops = -1.5 must be greater than 0"},
        {"fp8 tflops negative", [](Scenario& s) { s.cluster.gpu.fp8_tflops = -1; },
         "cluster.gpu_overrides.fp8_tflops",
         "cluster.gpu_overrides.fp8_tflops = -1 must be at least 0"},
        // A GPU without FP8 tensor cores (fp8_tflops 0, the A100 preset) refuses FP8 GEMMs and
        // warns about an FP8 dispatch payload, naming the field and the GPU.
        {"fp8 compute without fp8 tensor cores",
         [](Scenario& s) {
             s.cluster.gpu.name = "NVIDIA A100 SXM 80GB";
             s.cluster.gpu.fp8_tflops = 0;
             s.model.compute_precision = Precision::fp8;
         },
         "model.precision.compute",
         "model.precision.compute = fp8, but NVIDIA A100 SXM 80GB has no FP8 tensor cores; use "
         "bf16"},
        {"fp8 dispatch without fp8 tensor cores",
         [](Scenario& s) {
             s.cluster.gpu.name = "NVIDIA A100 SXM 80GB";
             s.cluster.gpu.fp8_tflops = 0;
             s.model.dispatch_precision = Precision::fp8;
         },
         "model.precision.dispatch",
         "model.precision.dispatch = fp8, but NVIDIA A100 SXM 80GB has no FP8 tensor cores: the "
         "experts would dequantize the tokens to BF16, which is not modelled; use bf16",
         Diagnostic::Severity::warning},
        // MXFP8 needs tensor cores that apply MX block scales (the catalog's mxfp8 capability,
        // Blackwell); the hand scenario's H100 has none.
        {"mxfp8 without mxfp8 tensor cores",
         [](Scenario& s) {
             s.cluster.gpu.name = "NVIDIA H100 SXM 80GB";
             s.cluster.gpu.mxfp8 = false;
             s.model.compute_precision = Precision::fp8;
             s.model.fp8_recipe = Fp8Recipe::mxfp8;
         },
         "model.precision.fp8_recipe",
         "model.precision.fp8_recipe = mxfp8, but NVIDIA H100 SXM 80GB has no MXFP8 tensor "
         "cores (block scales in hardware: Blackwell, e.g. b200, gb200); use blockwise, "
         "tensorwise or delayed"},
        {"fp8 recipe without fp8 compute",
         [](Scenario& s) {
             s.model.compute_precision = Precision::bf16;
             s.model.fp8_recipe = Fp8Recipe::blockwise;
         },
         "model.precision.fp8_recipe",
         "model.precision.fp8_recipe = blockwise has no effect: model.precision.compute = bf16, "
         "not fp8",
         Diagnostic::Severity::warning},
        {"hbm bandwidth nan",
         [](Scenario& s) { s.cluster.gpu.hbm_tbps = std::numeric_limits<double>::quiet_NaN(); },
         "cluster.gpu_overrides.hbm_tbps",
         "cluster.gpu_overrides.hbm_tbps = nan is not a finite number"},
        {"scale-up bandwidth", [](Scenario& s) { s.cluster.gpu.scale_up_gbps = 0; },
         "cluster.scale_up.bandwidth_gbps",
         "cluster.scale_up.bandwidth_gbps = 0 must be greater than 0"},
        {"nic bandwidth", [](Scenario& s) { s.cluster.nic.bandwidth_gbps = 0; },
         "cluster.scale_out.bandwidth_gbps",
         "cluster.scale_out.bandwidth_gbps = 0 must be greater than 0"},
        {"nics per node", [](Scenario& s) { s.cluster.nics_per_node = 0; },
         "cluster.scale_out.nics_per_node",
         "cluster.scale_out.nics_per_node = 0 must be at least 1"},
        {"oversubscription", [](Scenario& s) { s.cluster.oversubscription = 0.5; },
         "cluster.scale_out.oversubscription",
         "cluster.scale_out.oversubscription = 0.5 must be at least 1"},
        {"pue", [](Scenario& s) { s.cluster.pue = 0.9; }, "cluster.costs.pue",
         "cluster.costs.pue = 0.9 must be at least 1"},
        {"gpu hour price", [](Scenario& s) { s.cluster.gpu_hour_usd = -2; },
         "cluster.costs.gpu_hour_usd", "cluster.costs.gpu_hour_usd = -2 must be at least 0"},
        {"layers", [](Scenario& s) { s.model.layers = 0; }, "model.layers",
         "model.layers = 0 must be at least 1"},
        {"experts negative", [](Scenario& s) { s.model.experts = -1; }, "model.experts",
         "model.experts = -1 must be at least 0"},
        {"seq_len", [](Scenario& s) { s.model.seq_len = 0; }, "model.seq_len",
         "model.seq_len = 0 must be at least 1"},
        {"capacity factor", [](Scenario& s) { s.model.capacity_factor = -1; },
         "model.capacity_factor", "model.capacity_factor = -1 must be at least 0"},
        {"mla rank",
         [](Scenario& s) {
             s.model.attention = AttentionKind::mla;
             s.model.mla.kv_lora_rank = 0;
         },
         "model.mla.kv_lora_rank", "model.mla.kv_lora_rank = 0 must be at least 1"},
        {"micro batch", [](Scenario& s) { s.training.micro_batch = 0; }, "training.micro_batch",
         "training.micro_batch = 0 must be at least 1"},
        {"global batch zero", [](Scenario& s) { s.training.global_batch = 0; },
         "training.global_batch", "training.global_batch = 0 must be at least 1"},
        {"zero stage", [](Scenario& s) { s.training.zero_stage = 4; }, "training.zero_stage",
         "training.zero_stage = 4 must be between 0 and 3"},
        {"total tokens", [](Scenario& s) { s.training.total_tokens = -1e12; },
         "training.total_tokens", "training.total_tokens = -1e+12 must be at least 0"},
        {"balance", [](Scenario& s) { s.routing.balance = 1.5; }, "routing.balance",
         "routing.balance = 1.5 must be between 0 and 1"},
        {"zipf alpha", [](Scenario& s) { s.routing.zipf_alpha = -0.5; }, "routing.zipf_alpha",
         "routing.zipf_alpha = -0.5 must be at least 0"},
        {"max nodes per token negative", [](Scenario& s) { s.layout.max_nodes_per_token = -1; },
         "layout.max_nodes_per_token", "layout.max_nodes_per_token = -1 must be at least 0"},
        // --- explicit expert placement ---
        {"placement expert range",
         [](Scenario& s) {
             s.layout.expert_placement = {{-1, 16, {0}}};
         },
         "layout.expert_placement[0].expert",
         "layout.expert_placement[0].expert = 16 is out of range 0..15 (model.experts = 16)"},
        {"placement layer range",
         [](Scenario& s) {
             s.model.dense_layers = 1;
             s.layout.expert_placement = {{-1, 0, {0}}, {23, 1, {1}}};
         },
         "layout.expert_placement[1].layer",
         "layout.expert_placement[1].layer = 23 is out of range 0..22 (the model has 23 MoE "
         "layers)"},
        {"placement empty ranks",
         [](Scenario& s) {
             s.layout.expert_placement = {{-1, 3, {}}};
         },
         "layout.expert_placement[0].ep_ranks",
         "layout.expert_placement[0].ep_ranks is empty; list at least one EP rank"},
        {"placement rank range",
         [](Scenario& s) {
             s.layout.expert_placement = {{-1, 3, {0, 8}}};
         },
         "layout.expert_placement[0].ep_ranks",
         "layout.expert_placement[0].ep_ranks contains 8, out of range 0..7 (layout.ep = 8)"},
        {"placement duplicate rank",
         [](Scenario& s) {
             s.layout.expert_placement = {{-1, 3, {2, 5, 2}}};
         },
         "layout.expert_placement[0].ep_ranks",
         "layout.expert_placement[0].ep_ranks lists EP rank 2 more than once"},
        {"placement duplicate entry",
         [](Scenario& s) {
             s.layout.expert_placement = {{4, 3, {1}}, {-1, 3, {2}}, {4, 3, {5}}};
         },
         "layout.expert_placement[2]",
         "layout.expert_placement[2] places expert 3 again for MoE layer 4, after "
         "layout.expert_placement[0]"},
        {"placement on dense model",
         [](Scenario& s) {
             makeDense(s);
             s.layout.expert_placement = {{-1, 0, {0}}};
         },
         "layout.expert_placement",
         "layout.expert_placement places experts, but model.experts = 0 (a dense model has "
         "none)"},
        // --- routing balancing ---
        {"balancing none has no published spread",
         [](Scenario& s) { s.routing.balancing = BalancingMethod::none; }, "routing.model",
         "routing.balancing = none has no published expert-load spread to sample (no "
         "publication measures an unbalanced router we could use): set routing.model to "
         "histogram (your measured loads), zipf (a what-if skew) or uniform"},
        // --- routing histogram ---
        {"histogram missing", [](Scenario& s) { s.routing.model = PopularityModel::histogram; },
         "routing.histogram_csv", "routing.model = histogram needs routing.histogram_csv"},
        {"histogram rows",
         [](Scenario& s) {
             s.routing.model = PopularityModel::histogram;
             s.routing.histogram_csv = "h.csv";
             s.routing.histogram.assign(2, std::vector<double>(16, 1.0));
         },
         "routing.histogram_csv",
         "routing.histogram_csv = h.csv has 2 rows; it needs 1 (for every layer) or one per MoE "
         "layer (24)"},
        {"histogram columns",
         [](Scenario& s) {
             s.routing.model = PopularityModel::histogram;
             s.routing.histogram_csv = "h.csv";
             s.routing.histogram.assign(24, std::vector<double>(16, 1.0));
             s.routing.histogram[2].resize(15);
         },
         "routing.histogram_csv",
         "routing.histogram_csv = h.csv row 3 has 15 weights; it needs one per expert "
         "(model.experts = 16)"},
        {"histogram negative weight",
         [](Scenario& s) {
             s.routing.model = PopularityModel::histogram;
             s.routing.histogram_csv = "h.csv";
             s.routing.histogram.assign(1, std::vector<double>(16, 1.0));
             s.routing.histogram[0][5] = -0.25;
         },
         "routing.histogram_csv",
         "routing.histogram_csv = h.csv row 1 has the weight -0.25; weights must be finite and "
         "not negative"},
        {"histogram zero sum",
         [](Scenario& s) {
             s.routing.model = PopularityModel::histogram;
             s.routing.histogram_csv = "h.csv";
             s.routing.histogram.assign(1, std::vector<double>(16, 0.0));
         },
         "routing.histogram_csv",
         "routing.histogram_csv = h.csv row 1 has weights summing to 0; at least one must be "
         "positive"},
    };
    return cases;
}

int lineOf(const std::string& text, const std::string& needle) {
    const size_t pos = text.find(needle);
    if (pos == std::string::npos)
        return -1;
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + pos, '\n'));
}

/// The default scenario's YAML with the first `from` replaced by `to`.
std::string defaultYamlWith(const std::string& from, const std::string& to) {
    std::string yaml = defaultScenarioYaml();
    const size_t at = yaml.find(from);
    if (at == std::string::npos)
        qFatal("the default scenario YAML lacks '%s'", from.c_str());
    return yaml.replace(at, from.size(), to);
}

} // namespace

class TestValidation : public QObject {
    Q_OBJECT
private slots:
    void validScenarioHasNoDiagnostics() {
        const Diagnostics d = validateScenario(validScenario());
        QVERIFY2(d.empty(), formatAll(d).c_str());
    }

    // Legal variations that exercise the rules' "allowed" side.
    void legalVariants_data() {
        QTest::addColumn<int>("variant");
        QTest::newRow("tp8 cp2 pp2 dp2 ep4 etp1") << 0;
        QTest::newRow("interleaved pp4 vpp2") << 1;
        QTest::newRow("dualpipe pp4") << 2;
        QTest::newRow("dense model") << 3;
        QTest::newRow("tp16 replicates kv heads") << 4;
        QTest::newRow("mla with dense layers") << 5;
        QTest::newRow("rack domain, histogram, placement") << 6;
        QTest::newRow("uneven racks, rack power limit") << 7;
        QTest::newRow("gpu without fp8, bf16 compute") << 8;
        QTest::newRow("interleaved uneven 30 layers") << 9;
    }
    void legalVariants() {
        QFETCH(int, variant);
        Scenario s = validScenario();
        switch (variant) {
        case 0: // ep*etp = 4 divides tp*cp*dp = 32; 512 % (2*1) == 0; 4096 % 4 == 0
            setLayout(s, 8, 2, 2, 2);
            s.layout.ep = 4;
            break;
        case 1: // 24 layers % 8 == 0; 512/16 = 32 micro-batches, % 4 == 0
            setLayout(s, 1, 1, 4, 16);
            s.layout.vpp = 2;
            s.layout.schedule = PipelineSchedule::interleaved;
            break;
        case 2: // 512/16 = 32 micro-batches >= 8
            setLayout(s, 1, 1, 4, 16);
            s.layout.schedule = PipelineSchedule::dualpipe;
            break;
        case 3:
            makeDense(s);
            break;
        case 4: // tp 16 is a multiple of kv_heads 8; 64 = 16*4
            setLayout(s, 16, 1, 1, 4);
            s.layout.ep = 4;
            break;
        case 5:
            s.model.attention = AttentionKind::mla;
            s.model.kv_heads = 0; // unused by MLA
            s.model.mla.q_lora_rank = 0;
            s.model.dense_layers = 3;
            break;
        case 6:
            s.cluster.scale_up_domain = ScaleUpDomain::rack;
            s.routing.model = PopularityModel::histogram;
            s.routing.histogram_csv = "h.csv";
            s.routing.histogram.assign(24, std::vector<double>(16, 0.5));
            s.layout.expert_placement = {{-1, 3, {0, 1}}, {5, 3, {2}}, {-1, 4, {7}}};
            s.layout.max_nodes_per_token = 8;
            break;
        case 7:
            // 3 + 1, and the remaining 4 nodes fill a third rack.
            s.cluster.rack_nodes = {3, 1};
            s.cluster.rack_power_limit_kw = 40;
            break;
        case 8: // fp8_tflops 0 (A100) is a GPU without FP8, legal while nothing asks for FP8
            s.cluster.gpu.fp8_tflops = 0;
            break;
        case 9: // 30 = 3 + 2 x 12 + 3; 12 per middle stage >= vpp 2; ends 3 >= vpp 2
            setLayout(s, 1, 1, 4, 16);
            s.layout.vpp = 2;
            s.layout.schedule = PipelineSchedule::interleaved;
            s.model.layers = 30;
            s.layout.first_stage_layers = 3;
            s.layout.last_stage_layers = 3;
            break;
        }
        const Diagnostics d = validateScenario(s);
        QVERIFY2(d.empty(), formatAll(d).c_str());
    }

    void singleProblem_data() {
        QTest::addColumn<int>("index");
        const auto& cases = singleProblemCases();
        for (size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(cases[i].name) << static_cast<int>(i);
    }
    void singleProblem() {
        QFETCH(int, index);
        const Case& c = singleProblemCases()[static_cast<size_t>(index)];
        Scenario s = validScenario();
        c.mutate(s);
        const Diagnostics d = validateScenario(s);
        QVERIFY2(d.size() == 1, ("expected one diagnostic, got:\n" + formatAll(d)).c_str());
        QCOMPARE(qs(d[0].field), QString(c.field));
        QCOMPARE(qs(d[0].message), QString(c.message));
        QCOMPARE(d[0].severity == Diagnostic::Severity::error,
                 c.severity == Diagnostic::Severity::error);
        QCOMPARE(hasErrors(d), c.severity == Diagnostic::Severity::error);
        // Without a source map nothing is located.
        QVERIFY(d[0].file.empty());
        QCOMPARE(d[0].line, 0);
        QCOMPARE(d[0].column, 0);
    }

    void everyProblemIsReported() {
        Scenario s = validScenario();
        s.layout.ep = 12;                 // does not divide 16 experts, nor tp*cp*dp = 64
        s.training.global_batch = 500;    // not a multiple of 64
        s.routing.balance = 2;            // out of [0, 1]
        s.cluster.oversubscription = 0.5; // below 1
        const Diagnostics d = validateScenario(s);
        QCOMPARE(fields(d), QString("cluster.scale_out.oversubscription, layout.ep, layout.ep, "
                                    "training.global_batch, routing.balance"));
        QCOMPARE(qs(d[1].message), QString("layout.ep*etp = 12*1 = 12 does not divide tp*cp*dp "
                                           "= 64 (the expert grid folds over the same GPUs)"));
        QCOMPARE(qs(d[2].message), QString("layout.ep = 12 does not divide model.experts = 16"));
    }

    // A zero or negative degree gives its own error and nothing that divides by it.
    void badDegreeDoesNotCascade_data() {
        QTest::addColumn<QString>("dim");
        QTest::addColumn<int>("value");
        for (const char* dim : {"tp", "cp", "pp", "vpp", "dp", "ep", "etp"})
            for (int value : {0, -4})
                QTest::newRow(qPrintable(QString("%1=%2").arg(dim).arg(value)))
                    << QString(dim) << value;
    }
    void badDegreeDoesNotCascade() {
        QFETCH(QString, dim);
        QFETCH(int, value);
        Scenario s = validScenario();
        LayoutSpec& l = s.layout;
        // Interleaving and an expert placement make the pp/vpp divisions and the EP-rank range
        // check run, so each has to cope with the bad degree.
        l.schedule = PipelineSchedule::interleaved;
        l.vpp = 2;
        l.expert_placement = {{-1, 0, {0}}};
        int* target = dim == "tp"    ? &l.tp
                      : dim == "cp"  ? &l.cp
                      : dim == "pp"  ? &l.pp
                      : dim == "vpp" ? &l.vpp
                      : dim == "dp"  ? &l.dp
                      : dim == "ep"  ? &l.ep
                                     : &l.etp;
        *target = value;
        // Place an expert too, so the EP-rank range check has to cope with a bad ep.
        const Diagnostics d = validateScenario(s);
        QVERIFY2(d.size() == 1, formatAll(d).c_str());
        QCOMPARE(qs(d[0].field), "layout." + dim);
        QCOMPARE(qs(d[0].message),
                 QString("layout.%1 = %2 must be at least 1").arg(dim).arg(value));
    }

    void everythingZeroDoesNotCrash() {
        Scenario s;
        s.cluster = ClusterSpec{};
        s.cluster.nodes = 0;
        s.cluster.gpus_per_node = 0;
        s.cluster.nodes_per_rack = 0;
        s.cluster.nics_per_node = 0;
        s.model = ModelSpec{};
        s.model.layers = 0;
        s.model.hidden = 0;
        s.model.heads = 0;
        s.model.kv_heads = 0;
        s.model.seq_len = 0;
        s.model.experts = 4;
        s.training.global_batch = 0;
        s.training.micro_batch = 0;
        setLayout(s, 0, 0, 0, 0);
        s.layout.vpp = 0;
        s.layout.ep = 0;
        s.layout.etp = 0;
        s.layout.expert_placement = {{3, 0, {0}}};
        s.routing.model = PopularityModel::histogram;
        s.routing.histogram = {{1, 1, 1, 1}};
        const Diagnostics d = validateScenario(s);
        QVERIFY(hasErrors(d));
        // One error per zero field, no follow-ups that divide by them.
        for (const char* f : {"cluster.nodes", "cluster.gpus_per_node", "model.layers",
                              "model.heads", "layout.tp", "layout.ep", "training.micro_batch"})
            QVERIFY2(fields(d).split(", ").count(f) == 1, f);
    }

    void absurdDegreesDoNotOverflow() {
        Scenario s = validScenario();
        setLayout(s, INT_MAX, INT_MAX, INT_MAX, INT_MAX);
        s.layout.ep = INT_MAX;
        s.layout.etp = INT_MAX;
        s.layout.vpp = INT_MAX;
        s.training.global_batch = std::numeric_limits<int64_t>::max();
        const Diagnostics d = validateScenario(s);
        QVERIFY(hasErrors(d));
        // Every degree and the batch are refused at their documented bound, without follow-up
        // rules that would multiply them.
        for (const char* f : {"layout.tp", "layout.cp", "layout.pp", "layout.dp", "layout.ep",
                              "layout.etp", "layout.vpp", "training.global_batch"}) {
            const bool bounded = std::any_of(d.begin(), d.end(), [&](const Diagnostic& x) {
                return x.field == f &&
                       x.message.find("exceeds the supported maximum") != std::string::npos;
            });
            QVERIFY2(bounded, (std::string(f) + "\n" + formatAll(d)).c_str());
        }
    }

    void sourceMapLocatesDiagnostics() {
        SourceMap source;
        source.file = "x.yaml";
        source.fields["layout"] = {50, 1};
        source.fields["layout.ep"] = {55, 3};
        Scenario s = validScenario();
        s.layout.ep = 32; // does not divide 16 experts
        s.layout.dp = 32; // not written in the file: falls back to "layout"
        const Diagnostics d = validateScenario(s, &source);
        QCOMPARE(fields(d), QString("layout.dp, layout.ep"));
        QCOMPARE(qs(d[0].file), QString("x.yaml"));
        QCOMPARE(d[0].line, 50);
        QCOMPARE(d[0].column, 1);
        QCOMPARE(qs(d[1].file), QString("x.yaml"));
        QCOMPARE(d[1].line, 55);
        QCOMPARE(d[1].column, 3);
        QCOMPARE(qs(d[1].format()),
                 QString("x.yaml:55:3: error: layout.ep = 32 does not divide model.experts = 16"));
    }

    // End to end through the loader: a semantic error points at the key in the YAML text.
    void loadedTextReportsLines() {
        const std::string yaml = defaultYamlWith("\n  ep: 8\n", "\n  ep: 12\n");
        const int line = lineOf(yaml, "\n  ep: 12\n") + 1;
        const LoadResult r = loadScenarioText(yaml, "x.yaml");
        QVERIFY(!r.ok());
        std::vector<std::string> lines;
        for (const Diagnostic& d : r.diagnostics)
            lines.push_back(d.format());
        const std::string want = "x.yaml:" + std::to_string(line) +
                                 ":3: error: layout.ep = 12 does not divide model.experts = 16";
        QVERIFY2(std::find(lines.begin(), lines.end(), want) != lines.end(),
                 ("want " + want + "\ngot:\n" + formatAll(r.diagnostics)).c_str());
    }

    // A list entry's error points at the entry, not at the list's key.
    void rackNodesErrorPointsAtTheEntry() {
        const std::string yaml = defaultYamlWith(
            "\n  nodes_per_rack: 4\n", "\n  nodes_per_rack: 4\n  rack_nodes:\n    - 3\n    - 5\n");
        const int line = lineOf(yaml, "\n    - 5\n") + 1;
        const LoadResult r = loadScenarioText(yaml, "x.yaml");
        QVERIFY(!r.ok());
        QCOMPARE(r.diagnostics.size(), std::size_t{1});
        QCOMPARE(r.diagnostics[0].format(),
                 "x.yaml:" + std::to_string(line) +
                     ":7: error: cluster.rack_nodes[1] = 5 is more than a rack holds "
                     "(cluster.nodes_per_rack = 4)");
    }

    void loadedTextReportsBatchLine() {
        const std::string yaml = defaultYamlWith("global_batch: 512", "global_batch: 500");
        const int line = lineOf(yaml, "global_batch: 500");
        const LoadResult r = loadScenarioText(yaml, "b.yaml");
        QVERIFY(!r.ok());
        QVERIFY2(!r.diagnostics.empty(), "no diagnostics");
        bool found = false;
        for (const Diagnostic& d : r.diagnostics)
            if (d.field == "training.global_batch") {
                found = true;
                QCOMPARE(qs(d.file), QString("b.yaml"));
                QCOMPARE(d.line, line);
                QCOMPARE(d.column, 3);
                QCOMPARE(qs(d.message),
                         QString("training.global_batch = 500 is not divisible by layout.dp * "
                                 "training.micro_batch = 64 * 2"));
            }
        QVERIFY2(found, formatAll(r.diagnostics).c_str());
    }
};

QTEST_GUILESS_MAIN(TestValidation)
#include "test_validation.moc"
