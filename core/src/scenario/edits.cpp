#include "moe/edits.h"

#include "moe/catalog.h"
#include "moe/format.h"
#include "moe/scenario_io.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <type_traits>
#include <utility>

namespace moe {

namespace {

template <typename T>
requires std::is_arithmetic_v<T> std::string formatValue(T value) {
    return formatNumber(value);
}

std::string formatValue(const std::string& value) {
    return value;
}

template <typename E>
requires std::is_enum_v<E> std::string formatValue(E value) {
    return toString(value);
}

std::string formatValue(const RankOrder& order) {
    return toString(order);
}

std::string formatList(const std::vector<int>& values) {
    std::string text = "[";
    for (std::size_t i = 0; i < values.size(); ++i)
        text += (i ? ", " : "") + std::to_string(values[i]);
    return text + "]";
}

std::string formatPlacement(const std::vector<ExpertPlacement>& placements) {
    std::string text = "[";
    for (std::size_t i = 0; i < placements.size(); ++i) {
        const ExpertPlacement& p = placements[i];
        text += i ? ", " : "";
        text += "{expert: " + std::to_string(p.expert) + ", ep_ranks: " + formatList(p.ep_ranks);
        if (p.layer >= 0)
            text += ", layer: " + std::to_string(p.layer);
        text += "}";
    }
    return text + "]";
}

/// A YAML double-quoted scalar, so free text ("a: b", "# x", "yes") stays text.
std::string quoteYaml(const std::string& text) {
    std::string quoted = "\"";
    for (const char c : text) {
        switch (c) {
        case '"':
            quoted += "\\\"";
            break;
        case '\\':
            quoted += "\\\\";
            break;
        case '\n':
            quoted += "\\n";
            break;
        case '\t':
            quoted += "\\t";
            break;
        case '\r':
            quoted += "\\r";
            break;
        default:
            quoted += c;
        }
    }
    return quoted + "\"";
}

std::string trimmed(const std::string& s) {
    const std::size_t begin = s.find_first_not_of(" \t\r\n");
    if (begin == std::string::npos)
        return {};
    const std::size_t end = s.find_last_not_of(" \t\r\n");
    return s.substr(begin, end - begin + 1);
}

template <typename E, std::size_t N> std::vector<std::string> names(const E (&values)[N]) {
    std::vector<std::string> out;
    for (const E value : values)
        out.emplace_back(toString(value));
    return out;
}

using Getter = std::function<std::string(const Scenario&)>;

struct Row {
    FieldInfo info;
    Getter get;
};

/// Builds the table; each add() names the field, its getter and its metadata.
class TableBuilder {
public:
    std::vector<Row> rows;

    FieldInfo& add(const std::string& path, FieldKind kind, Getter get, std::string tooltip) {
        FieldInfo info;
        info.path = path;
        const std::size_t dot = path.find('.');
        info.group = dot == std::string::npos ? "scenario" : path.substr(0, dot);
        info.key = dot == std::string::npos ? path : path.substr(dot + 1);
        info.kind = kind;
        info.tooltip = std::move(tooltip);
        rows.push_back({std::move(info), std::move(get)});
        return rows.back().info;
    }
};

FieldInfo& ranged(FieldInfo& info, std::optional<double> min, std::optional<double> max,
                  std::string unit = {}) {
    info.min = min;
    info.max = max;
    info.unit = std::move(unit);
    return info;
}

FieldInfo& real(FieldInfo& info, double step, int decimals) {
    info.step = step;
    info.decimals = decimals;
    return info;
}

// Getters reach a member through a lambda; these macros keep the table one line per field.
#define MOE_GET(expr) [](const Scenario& s) { return formatValue(s.expr); }

constexpr double kIntMax = std::numeric_limits<int>::max();
/// Strictly positive reals: the spin boxes' smallest step above 0.
constexpr double kTiny = 0.001;

std::vector<Row> buildTable() {
    const Catalog& catalog = builtinCatalog();
    std::vector<std::string> gpu_presets;
    for (const GpuSpec& gpu : catalog.gpus)
        gpu_presets.push_back(gpu.preset);
    std::vector<std::string> nic_presets;
    for (const NicSpec& nic : catalog.nics)
        nic_presets.push_back(nic.preset);
    const std::vector<std::string> precisions =
        names({Precision::fp32, Precision::bf16, Precision::fp16, Precision::fp8});
    const std::string gpu_override =
        " Replaces the GPU preset's figure; shown here as resolved (preset or override).";

    TableBuilder t;
    using K = FieldKind;

    t.add("name", K::text, MOE_GET(name),
          "Short identifier of the scenario (the samples use "
          "their file name).")
        .required = true;
    t.add("description", K::text, MOE_GET(description),
          "One line shown in reports and in the window title's tooltip.");

    // cluster
    {
        FieldInfo& f = t.add("cluster.gpu", K::choice, MOE_GET(cluster.gpu.preset),
                             "GPU preset from the built-in catalog. Choosing one resets the "
                             "figures and node shape that were not overridden.");
        f.choices = gpu_presets;
        f.required = true;
    }
    t.add("cluster.gpu_overrides.name", K::text, MOE_GET(cluster.gpu.name),
          "GPU name shown in reports." + gpu_override);
    real(ranged(t.add("cluster.gpu_overrides.bf16_tflops", K::number,
                      MOE_GET(cluster.gpu.bf16_tflops),
                      "Dense BF16 peak, no sparsity." + gpu_override),
                kTiny, std::nullopt, "TFLOPS"),
         10, 0);
    real(
        ranged(t.add("cluster.gpu_overrides.fp8_tflops", K::number, MOE_GET(cluster.gpu.fp8_tflops),
                     "Dense FP8 peak, no sparsity." + gpu_override),
               kTiny, std::nullopt, "TFLOPS"),
        10, 0);
    real(ranged(t.add("cluster.gpu_overrides.hbm_gb", K::number, MOE_GET(cluster.gpu.hbm_gb),
                      "HBM capacity per GPU (1 GB = 10^9 bytes)." + gpu_override),
                kTiny, std::nullopt, "GB"),
         1, 1);
    real(ranged(t.add("cluster.gpu_overrides.hbm_tbps", K::number, MOE_GET(cluster.gpu.hbm_tbps),
                      "HBM bandwidth per GPU." + gpu_override),
                kTiny, std::nullopt, "TB/s"),
         0.05, 2);
    real(ranged(t.add("cluster.gpu_overrides.power_w", K::number, MOE_GET(cluster.gpu.power_w),
                      "Board power, for energy totals." + gpu_override),
                0.0, std::nullopt, "W"),
         10, 0);
    real(ranged(t.add("cluster.gpu_overrides.price_usd", K::number, MOE_GET(cluster.gpu.price_usd),
                      "Purchase price per GPU (0 = unknown)." + gpu_override),
                0.0, std::nullopt, "USD"),
         1000, 0);
    {
        FieldInfo& f = ranged(t.add("cluster.nodes", K::integer, MOE_GET(cluster.nodes),
                                    "Number of nodes (servers, or trays for GB200)."),
                              1, kIntMax, "nodes");
        f.required = true;
    }
    ranged(t.add("cluster.gpus_per_node", K::integer, MOE_GET(cluster.gpus_per_node),
                 "GPUs per node; GPU g is on node g / gpus_per_node. Default: the preset's node "
                 "shape."),
           1, kIntMax, "GPUs");
    ranged(t.add("cluster.nodes_per_rack", K::integer, MOE_GET(cluster.nodes_per_rack),
                 "Nodes a rack holds: the topology drawing, rack count and power, and the "
                 "scale-up domain when scale_up.domain is rack."),
           1, kIntMax, "nodes");
    t.add(
        "cluster.rack_nodes", K::list,
        [](const Scenario& s) { return formatList(s.cluster.rack_nodes); },
        "Nodes in each rack, in node order, each at most nodes_per_rack (e.g. [4, 2, 2]); nodes "
        "beyond the listed racks fill further racks. [] = every rack filled in turn.");
    real(
        ranged(t.add("cluster.rack_power_limit_kw", K::number, MOE_GET(cluster.rack_power_limit_kw),
                     "IT power one rack may draw (power feed, cooling); a rack above it is "
                     "flagged. 0 = no limit."),
               0.0, std::nullopt, "kW"),
        5, 1);
    t.add("cluster.scale_up.domain", K::choice, MOE_GET(cluster.scale_up_domain),
          "Which GPUs share one NVLink (scale-up) domain: a node, or a whole rack (GB200 NVL72).")
        .choices = names({ScaleUpDomain::node, ScaleUpDomain::rack});
    real(ranged(t.add("cluster.scale_up.bandwidth_gbps", K::number,
                      MOE_GET(cluster.gpu.scale_up_gbps),
                      "Peak scale-up bandwidth of each GPU, per direction (H100 NVLink 4: 450)."),
                kTiny, std::nullopt, "GB/s per GPU per direction"),
         25, 0);
    real(ranged(t.add("cluster.scale_up.latency_us", K::number,
                      MOE_GET(cluster.gpu.scale_up_latency_us),
                      "Latency per collective step inside the scale-up domain."),
                0.0, std::nullopt, "µs"),
         0.5, 2);
    t.add("cluster.scale_up.name", K::text, MOE_GET(cluster.gpu.scale_up_fabric),
          "Scale-up fabric name used in explanations (NVLink, Infinity Fabric).");
    t.add("cluster.scale_out.nic", K::choice, MOE_GET(cluster.nic.preset),
          "NIC preset: one scale-out port per rail. Default cx7-400g.")
        .choices = nic_presets;
    ranged(t.add("cluster.scale_out.nics_per_node", K::integer, MOE_GET(cluster.nics_per_node),
                 "NICs per node; each GPU sends through one NIC (its rail). Default: "
                 "gpus_per_node."),
           1, kIntMax, "NICs");
    real(ranged(t.add("cluster.scale_out.bandwidth_gbps", K::number,
                      MOE_GET(cluster.nic.bandwidth_gbps),
                      "Achievable rate of one NIC per direction (NDR 400 Gb/s = 50 GB/s line "
                      "rate, ~48 achievable). Default: the NIC preset's."),
                kTiny, std::nullopt, "GB/s per NIC per direction"),
         4, 1);
    real(ranged(t.add("cluster.scale_out.latency_us", K::number, MOE_GET(cluster.nic.latency_us),
                      "Latency across leaf and spine. Default: the NIC preset's."),
                0.0, std::nullopt, "µs"),
         0.5, 2);
    t.add("cluster.scale_out.fabric", K::choice, MOE_GET(cluster.fabric),
          "Kind of scale-out network. Default infiniband.")
        .choices = names({Fabric::infiniband, Fabric::ethernet});
    t.add("cluster.scale_out.topology", K::choice, MOE_GET(cluster.fabric_topology),
          "Rail-optimized: NIC i of every node hangs off rail leaf i. Default rail-optimized.")
        .choices = names({FabricTopology::fat_tree, FabricTopology::rail_optimized});
    real(ranged(t.add("cluster.scale_out.oversubscription", K::number,
                      MOE_GET(cluster.oversubscription),
                      "Leaf downlink : uplink bandwidth ratio; traffic leaving a leaf is divided "
                      "by it. 1 = non-blocking."),
                1.0, std::nullopt, ":1"),
         0.5, 2);
    ranged(t.add("cluster.scale_out.nodes_per_leaf", K::integer, MOE_GET(cluster.nodes_per_leaf),
                 "Nodes under one leaf switch; 0 = derived."),
           0, kIntMax, "nodes");
    real(ranged(t.add("cluster.costs.gpu_hour_usd", K::number, MOE_GET(cluster.gpu_hour_usd),
                      "Rental or amortized price per GPU-hour, for cost totals (0 = not given)."),
                0.0, std::nullopt, "USD per GPU-hour"),
         0.25, 2);
    real(ranged(t.add("cluster.costs.electricity_usd_per_kwh", K::number,
                      MOE_GET(cluster.electricity_usd_per_kwh), "Energy price (0 = not given)."),
                0.0, std::nullopt, "USD/kWh"),
         0.01, 3);
    real(ranged(t.add("cluster.costs.pue", K::number, MOE_GET(cluster.pue),
                      "Data-centre power usage effectiveness (1 = no overhead)."),
                1.0, std::nullopt),
         0.05, 2);
    real(ranged(t.add("cluster.costs.node_overhead_w", K::number, MOE_GET(cluster.node_overhead_w),
                      "CPUs, memory, NVSwitches and fans per node beyond GPU and NIC board power. "
                      "Default: the catalog's estimate for the preset."),
                0.0, std::nullopt, "W per node"),
         50, 0);
    const std::string estimate = " Default: the catalog's estimate for the preset.";
    real(ranged(t.add("cluster.costs.rack_overhead_w", K::number, MOE_GET(cluster.rack_overhead_w),
                      "Power per rack beyond its nodes (GB200 NVL72: the NVLink switch trays)." +
                          estimate),
                0.0, std::nullopt, "W per rack"),
         500, 0);
    real(ranged(t.add("cluster.costs.server_usd", K::number, MOE_GET(cluster.server_usd),
                      "Price of one server (NVL72: compute tray) without its GPUs and NICs." +
                          estimate),
                0.0, std::nullopt, "USD per node"),
         1000, 0);
    real(ranged(t.add("cluster.costs.rack_usd", K::number, MOE_GET(cluster.rack_usd),
                      "Price of one rack with power and cooling (NVL72: with its NVLink switch "
                      "trays)." +
                          estimate),
                0.0, std::nullopt, "USD per rack"),
         1000, 0);
    real(ranged(t.add("cluster.costs.switch_usd", K::number, MOE_GET(cluster.nic.switch_usd),
                      "Price of one 64-port leaf or spine switch of the NIC's speed. Default: the "
                      "NIC preset's estimate."),
                0.0, std::nullopt, "USD per switch"),
         1000, 0);
    real(ranged(t.add("cluster.costs.switch_w", K::number, MOE_GET(cluster.nic.switch_w),
                      "Power of one leaf or spine switch. Default: the NIC preset's estimate."),
                0.0, std::nullopt, "W per switch"),
         100, 0);
    real(ranged(t.add("cluster.costs.cable_usd", K::number, MOE_GET(cluster.nic.cable_usd),
                      "Price of one switch link: fibre and two transceivers. Default: the NIC "
                      "preset's estimate."),
                0.0, std::nullopt, "USD per link"),
         100, 0);
    real(ranged(t.add("cluster.costs.amortization_years", K::number,
                      MOE_GET(cluster.amortization_years),
                      "The purchase is written off over this period (used when gpu_hour_usd is "
                      "0). Default 4."),
                kTiny, std::nullopt, "years"),
         0.5, 1);
    real(ranged(t.add("cluster.reliability.gpu_failures_per_million_h", K::number,
                      MOE_GET(cluster.reliability.gpu_failures_per_million_h),
                      "Job-stopping failures per GPU per million hours. Default 12.6: Llama 3's "
                      "268 GPU-caused interruptions in 54 days on 16,384 H100."),
                0.0, std::nullopt, "per million GPU-hours"),
         1, 1);
    real(ranged(t.add("cluster.reliability.node_failures_per_million_h", K::number,
                      MOE_GET(cluster.reliability.node_failures_per_million_h),
                      "Job-stopping failures per node per million hours from everything but its "
                      "GPUs (software, network, host, power). Default 56.9: Llama 3's other 151 "
                      "interruptions on 2,048 nodes."),
                0.0, std::nullopt, "per million node-hours"),
         1, 1);
    real(ranged(t.add("cluster.reliability.checkpoint_write_gbps_per_node", K::number,
                      MOE_GET(cluster.reliability.checkpoint_write_gbps_per_node),
                      "Each node's share of the checkpoint storage's write (and read) bandwidth. "
                      "Default 1 (Llama 3: ~2 TB/s for 2,048 nodes)."),
                kTiny, std::nullopt, "GB/s per node"),
         0.5, 2);
    real(ranged(t.add("cluster.reliability.detection_s", K::number,
                      MOE_GET(cluster.reliability.detection_s),
                      "From a failure to the job noticing it (timeouts, health checks). Default "
                      "120."),
                0.0, std::nullopt, "s"),
         30, 0);
    real(ranged(t.add("cluster.reliability.restart_s", K::number,
                      MOE_GET(cluster.reliability.restart_s),
                      "Rescheduling, re-initialisation and warm-up after a failure, without "
                      "reading the checkpoint. Default 300."),
                0.0, std::nullopt, "s"),
         30, 0);

    // model
    t.add("model.name", K::text, MOE_GET(model.name), "Model name for reports.");
    ranged(t.add("model.layers", K::integer, MOE_GET(model.layers), "Transformer layers."), 1,
           kIntMax, "layers")
        .required = true;
    ranged(t.add("model.dense_layers", K::integer, MOE_GET(model.dense_layers),
                 "The first dense_layers layers use the dense FFN; the rest are MoE layers "
                 "(DeepSeek-V3: 3)."),
           0, kIntMax, "layers");
    ranged(t.add("model.hidden", K::integer, MOE_GET(model.hidden), "Model (embedding) width h."),
           1, kIntMax, "elements")
        .required = true;
    ranged(t.add("model.heads", K::integer, MOE_GET(model.heads), "Query heads."), 1, kIntMax,
           "heads")
        .required = true;
    ranged(t.add("model.kv_heads", K::integer, MOE_GET(model.kv_heads),
                 "Key/value heads (GQA); must divide heads. Default: heads. Ignored with MLA."),
           1, kIntMax, "heads");
    ranged(t.add("model.head_dim", K::integer, MOE_GET(model.head_dim),
                 "Per-head size when it is not hidden / heads; 0 = hidden / heads."),
           0, kIntMax, "elements");
    t.add("model.attention", K::choice, MOE_GET(model.attention),
          "Grouped-query attention (MHA when kv_heads == heads) or DeepSeek multi-head latent "
          "attention.")
        .choices = names({AttentionKind::gqa, AttentionKind::mla});
    ranged(t.add("model.mla.q_lora_rank", K::integer, MOE_GET(model.mla.q_lora_rank),
                 "Query compression rank (0 = none). Only with attention: mla."),
           0, kIntMax, "elements");
    ranged(t.add("model.mla.kv_lora_rank", K::integer, MOE_GET(model.mla.kv_lora_rank),
                 "Compressed KV latent size. Only with attention: mla."),
           1, kIntMax, "elements");
    ranged(t.add("model.mla.qk_nope_head_dim", K::integer, MOE_GET(model.mla.qk_nope_head_dim),
                 "Per-head query/key size without rotary embedding. Only with attention: mla."),
           1, kIntMax, "elements");
    ranged(t.add("model.mla.qk_rope_head_dim", K::integer, MOE_GET(model.mla.qk_rope_head_dim),
                 "Per-head rotary part. Only with attention: mla."),
           1, kIntMax, "elements");
    ranged(t.add("model.mla.v_head_dim", K::integer, MOE_GET(model.mla.v_head_dim),
                 "Per-head value size. Only with attention: mla."),
           1, kIntMax, "elements");
    ranged(
        t.add("model.seq_len", K::integer, MOE_GET(model.seq_len), "Training sequence length s."),
        1, kIntMax, "tokens")
        .required = true;
    ranged(t.add("model.vocab", K::integer, MOE_GET(model.vocab),
                 "Vocabulary size (embedding and output head)."),
           1, kIntMax, "tokens")
        .required = true;
    ranged(t.add("model.ffn_hidden", K::integer, MOE_GET(model.ffn_hidden),
                 "Dense FFN (SwiGLU) intermediate size; must be > 0 for a dense model and when "
                 "dense_layers > 0."),
           0, kIntMax, "elements");
    ranged(t.add("model.experts", K::integer, MOE_GET(model.experts),
                 "Routed experts per MoE layer E; 0 = dense model."),
           0, kIntMax, "experts");
    ranged(t.add("model.top_k", K::integer, MOE_GET(model.top_k),
                 "Experts per token k: 1..E for a MoE model, 0 for a dense one."),
           0, kIntMax, "experts");
    ranged(t.add("model.expert_ffn_hidden", K::integer, MOE_GET(model.expert_ffn_hidden),
                 "Intermediate size of each routed expert (SwiGLU); > 0 for a MoE model."),
           0, kIntMax, "elements");
    ranged(t.add("model.shared_experts", K::integer, MOE_GET(model.shared_experts),
                 "Always-active shared experts per MoE layer."),
           0, kIntMax, "experts");
    ranged(t.add("model.shared_expert_ffn_hidden", K::integer,
                 MOE_GET(model.shared_expert_ffn_hidden),
                 "Intermediate size of each shared expert; 0 = expert_ffn_hidden."),
           0, kIntMax, "elements");
    real(ranged(t.add("model.capacity_factor", K::number, MOE_GET(model.capacity_factor),
                      "Tokens over C*T*k/E per expert are dropped; 0 = dropless."),
                0.0, std::nullopt),
         0.25, 2);
    t.add("model.precision.weights", K::choice, MOE_GET(model.weight_precision),
          "Weights held for compute (memory, TP/PP traffic). Default bf16.")
        .choices = precisions;
    t.add("model.precision.activations", K::choice, MOE_GET(model.activation_precision),
          "Stored activations and pipeline sends. Default bf16.")
        .choices = precisions;
    t.add("model.precision.dispatch", K::choice, MOE_GET(model.dispatch_precision),
          "Payload of the all-to-all dispatch; fp8 halves it (the combine stays BF16). Default "
          "bf16.")
        .choices = precisions;
    t.add("model.precision.compute", K::choice, MOE_GET(model.compute_precision),
          "GEMM precision; fp8 uses the GPU's FP8 peak. Default bf16.")
        .choices = precisions;
    t.add("model.precision.grads", K::choice, MOE_GET(model.grad_precision),
          "Main gradients (memory and data-parallel gradient sync). Default fp32.")
        .choices = precisions;

    // training
    ranged(t.add("training.global_batch", K::integer, MOE_GET(training.global_batch),
                 "Sequences per optimizer step, all data-parallel replicas together."),
           1, kIntMax, "sequences")
        .required = true;
    ranged(t.add("training.micro_batch", K::integer, MOE_GET(training.micro_batch),
                 "Sequences per micro-batch per pipeline replica; micro-batches per step = "
                 "global_batch / (dp * micro_batch)."),
           1, kIntMax, "sequences");
    real(ranged(t.add("training.total_tokens", K::number, MOE_GET(training.total_tokens),
                      "Training budget for days, GPU-hours, energy and cost; 0 = no totals."),
                0.0, std::nullopt, "tokens"),
         1e11, 0);
    t.add("training.optimizer", K::choice, MOE_GET(training.optimizer),
          "Both keep FP32 master weights and two moments (12 bytes per parameter).")
        .choices = {"adam", "adamw"};
    ranged(t.add("training.zero_stage", K::integer, MOE_GET(training.zero_stage),
                 "ZeRO stage: 1 shards the optimizer state over DP, 2 also the gradients, 3 also "
                 "the weights."),
           0, 3);
    t.add("training.recompute", K::choice, MOE_GET(training.recompute),
          "Activation recomputation: selective re-runs core attention, full re-runs each "
          "layer's forward.")
        .choices = names({Recompute::none, Recompute::selective, Recompute::full});
    real(ranged(t.add("training.checkpoint_interval_s", K::number,
                      MOE_GET(training.checkpoint_interval_s),
                      "Training time between checkpoints; 0 = the optimum for the cluster's "
                      "failure rate (Young/Daly)."),
                0.0, std::nullopt, "s"),
         300, 0);

    // layout
    ranged(t.add("layout.tp", K::integer, MOE_GET(layout.tp),
                 "Tensor parallelism of attention and dense FFN (with sequence parallelism)."),
           1, kIntMax, "GPUs");
    ranged(t.add("layout.cp", K::integer, MOE_GET(layout.cp),
                 "Context parallelism: each sequence split into 2*cp chunks."),
           1, kIntMax, "GPUs");
    ranged(t.add("layout.pp", K::integer, MOE_GET(layout.pp), "Pipeline stages."), 1, kIntMax,
           "stages");
    ranged(t.add("layout.vpp", K::integer, MOE_GET(layout.vpp),
                 "Virtual stages per pipeline rank (only with schedule: interleaved)."),
           1, kIntMax, "stages");
    ranged(t.add("layout.dp", K::integer, MOE_GET(layout.dp),
                 "Data parallelism of the dense grid. Default: GPUs / (tp*cp*pp), and it follows "
                 "tp, cp, pp and the GPU count while it equals that."),
           1, kIntMax, "replicas");
    ranged(t.add("layout.ep", K::integer, MOE_GET(layout.ep),
                 "Expert parallelism: experts are spread over ep GPUs. Expert-DP = "
                 "tp*cp*dp / (ep*etp)."),
           1, kIntMax, "GPUs");
    ranged(t.add("layout.etp", K::integer, MOE_GET(layout.etp),
                 "Tensor parallelism inside each expert."),
           1, kIntMax, "GPUs");
    t.add("layout.order", K::text, MOE_GET(layout.order),
          "Rank order, leftmost fastest; each of tp cp ep dp pp exactly once. Put tp and ep "
          "leftmost (inside the scale-up domain), dp and pp rightmost.")
        .choices = {"tp-cp-ep-dp-pp", "tp-cp-dp-ep-pp", "tp-ep-cp-dp-pp",
                    "ep-tp-cp-dp-pp", "tp-cp-ep-pp-dp", "tp-cp-pp-ep-dp"};
    t.add("layout.schedule", K::choice, MOE_GET(layout.schedule),
          "Pipeline schedule. Default 1f1b.")
        .choices = names({PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b,
                          PipelineSchedule::interleaved, PipelineSchedule::dualpipe});
    ranged(t.add("layout.max_nodes_per_token", K::integer, MOE_GET(layout.max_nodes_per_token),
                 "Node-limited routing (DeepSeek-V3: 4): a token goes to experts on at most this "
                 "many nodes; 0 = unlimited."),
           0, kIntMax, "nodes");
    t.add(
        "layout.expert_placement", K::list,
        [](const Scenario& s) { return formatPlacement(s.layout.expert_placement); },
        "Explicit placement, a list of {expert: E, ep_ranks: [r, ...], layer: L}; experts not "
        "listed stay round-robin (expert e on EP rank e mod ep). [] = all round-robin.");

    // routing
    t.add("routing.model", K::choice, MOE_GET(routing.model),
          "Expert popularity per MoE layer. Default uniform.")
        .choices =
        names({PopularityModel::uniform, PopularityModel::zipf, PopularityModel::histogram});
    real(ranged(t.add("routing.zipf_alpha", K::number, MOE_GET(routing.zipf_alpha),
                      "Zipf exponent: expert of rank i gets weight proportional to 1/i^alpha."),
                0.0, std::nullopt),
         0.05, 2);
    t.add("routing.histogram_csv", K::text, MOE_GET(routing.histogram_csv),
          "CSV of expert weights, relative to the scenario file; required for model: "
          "histogram.");
    real(ranged(t.add("routing.balance", K::number, MOE_GET(routing.balance),
                      "Blends the popularity toward uniform: 0 = raw, 1 = perfectly balanced."),
                0.0, 1.0),
         0.05, 2);
    ranged(t.add("routing.seed", K::integer, MOE_GET(routing.seed),
                 "Seed of every random draw: same seed, same result."),
           0, kIntMax);
    return std::move(t.rows);
}

#undef MOE_GET

const std::vector<Row>& table() {
    static const std::vector<Row> rows = buildTable();
    return rows;
}

const Row* findRow(const std::string& path) {
    static const std::map<std::string, const Row*> index = [] {
        std::map<std::string, const Row*> m;
        for (const Row& row : table())
            m.emplace(row.info.path, &row);
        return m;
    }();
    const auto it = index.find(path);
    return it == index.end() ? nullptr : it->second;
}

} // namespace

const std::vector<FieldInfo>& scenarioFields() {
    static const std::vector<FieldInfo> fields = [] {
        std::vector<FieldInfo> out;
        for (const Row& row : table())
            out.push_back(row.info);
        return out;
    }();
    return fields;
}

const FieldInfo* findScenarioField(const std::string& path) {
    const Row* row = findRow(path);
    return row ? &row->info : nullptr;
}

std::optional<std::string> getScenarioField(const Scenario& scenario, const std::string& path) {
    const Row* row = findRow(path);
    if (!row)
        return std::nullopt;
    return row->get(scenario);
}

FieldEditResult setScenarioField(const Scenario& scenario, const std::string& path,
                                 const std::string& value, const std::string& base_dir) {
    const FieldInfo* info = findScenarioField(path);
    const bool literal = info && info->kind == FieldKind::text && path != "layout.order";
    const std::string written = literal ? quoteYaml(value) : trimmed(value);
    FieldEditResult result;
    if (written.empty()) {
        Diagnostic d;
        d.field = path;
        d.message = path + ": a value is needed";
        result.diagnostics.push_back(std::move(d));
        return result;
    }
    // The same path a --set override takes, so an edit is valid exactly when the file would be.
    LoadResult loaded =
        loadScenarioTextWithOverrides(toYaml(scenario), "", base_dir, {path + "=" + written});
    // Lines and columns point into the generated text, which the user never sees.
    for (Diagnostic& d : loaded.diagnostics) {
        d.file.clear();
        d.line = 0;
        d.column = 0;
    }
    result.scenario = std::move(loaded.scenario);
    result.diagnostics = std::move(loaded.diagnostics);
    return result;
}

std::optional<std::string> rackNodesAfterMove(const ClusterSpec& cluster, int from_rack,
                                              int to_rack) {
    std::vector<int> racks = cluster.nodesInRacks();
    const int count = static_cast<int>(racks.size());
    if (from_rack < 0 || from_rack >= count || to_rack < 0 || to_rack > count ||
        from_rack == to_rack)
        return std::nullopt;
    if (to_rack == count)
        racks.push_back(0);
    ++racks[static_cast<std::size_t>(to_rack)];
    if (--racks[static_cast<std::size_t>(from_rack)] == 0)
        racks.erase(racks.begin() + from_rack);
    return formatList(racks);
}

} // namespace moe
