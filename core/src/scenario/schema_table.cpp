// The schema table: every field of the scenario format, declared once (moe/schema.h).
#include "field_access.h"
#include "moe/catalog.h"
#include "moe/limits.h"
#include "moe/schema.h"

#include <utility>

namespace moe {

namespace {

// ---------------------------------------------------------------------------------------------
// Presets: naming one brings its figures, which the fields after it refine

template <typename Spec> std::vector<std::string> presetIds(const std::vector<Spec>& specs) {
    std::vector<std::string> ids;
    for (const Spec& spec : specs)
        ids.push_back(spec.preset);
    return ids;
}

std::string assignGpuPreset(Scenario& s, const FieldValue& value, const std::string& path) {
    const auto* id = std::get_if<std::string>(&value);
    if (!id)
        return field_access::mismatch(path, "a GPU preset name", value);
    const Catalog& catalog = builtinCatalog();
    const GpuSpec* gpu = catalog.findGpu(*id);
    if (!gpu)
        return "unknown GPU preset " + yaml::shortQuote(*id) +
               " — known: " + yaml::joinNames(presetIds(catalog.gpus), ", ");
    // Every later cluster field (overrides, node shape, scale-up) refines this preset.
    s.cluster.gpu = *gpu;
    applyNodeShape(*id, s.cluster);
    return {};
}

std::string assignNicPreset(Scenario& s, const FieldValue& value, const std::string& path) {
    const auto* id = std::get_if<std::string>(&value);
    if (!id)
        return field_access::mismatch(path, "a NIC preset name", value);
    const Catalog& catalog = builtinCatalog();
    if (const NicSpec* nic = catalog.findNic(*id)) {
        s.cluster.nic = *nic;
        return {};
    }
    return "unknown NIC preset " + yaml::shortQuote(*id) +
           " — known: " + yaml::joinNames(presetIds(catalog.nics), ", ");
}

template <std::string (*Assign)(Scenario&, const FieldValue&, const std::string&)>
void readPreset(yaml::ValueSink& sink, const YAML::Node& node, const std::string& path, Scenario& s,
                const char* what) {
    const std::optional<std::string> id = yaml::scalarText(sink, node, path, what);
    if (!id)
        return;
    if (std::string problem = Assign(s, FieldValue(*id), path); !problem.empty())
        sink.error(path, node, std::move(problem));
}

constexpr FieldAccess gpuPresetAccess() {
    FieldAccess a = kMember<&Scenario::cluster, &ClusterSpec::gpu, &GpuSpec::preset>;
    a.kind = FieldKind::choice;
    a.names = [] { return presetIds(builtinCatalog().gpus); };
    a.assign = assignGpuPreset;
    a.parse = [](yaml::ValueSink& sink, const YAML::Node& node, const std::string& path) {
        const std::optional<std::string> id =
            yaml::scalarText(sink, node, path, "a GPU preset name");
        return id ? std::optional<FieldValue>(*id) : std::nullopt;
    };
    a.read = [](yaml::ValueSink& sink, const YAML::Node& node, const std::string& path,
                Scenario& s) {
        readPreset<assignGpuPreset>(sink, node, path, s, "a GPU preset name");
    };
    return a;
}

constexpr FieldAccess nicPresetAccess() {
    FieldAccess a = kMember<&Scenario::cluster, &ClusterSpec::nic, &NicSpec::preset>;
    a.kind = FieldKind::choice;
    a.names = [] { return presetIds(builtinCatalog().nics); };
    a.assign = assignNicPreset;
    a.parse = [](yaml::ValueSink& sink, const YAML::Node& node, const std::string& path) {
        const std::optional<std::string> id =
            yaml::scalarText(sink, node, path, "a NIC preset name");
        return id ? std::optional<FieldValue>(*id) : std::nullopt;
    };
    a.read = [](yaml::ValueSink& sink, const YAML::Node& node, const std::string& path,
                Scenario& s) {
        readPreset<assignNicPreset>(sink, node, path, s, "a NIC preset name");
    };
    return a;
}

const std::vector<std::string>& optimizerNames() {
    static const std::vector<std::string> names = {"adam", "adamw"};
    return names;
}

/// training.optimizer is stored as text but is one of two names.
constexpr FieldAccess optimizerAccess() {
    FieldAccess a = kMember<&Scenario::training, &TrainingSpec::optimizer>;
    a.kind = FieldKind::choice;
    a.names = [] { return optimizerNames(); };
    a.parse = [](yaml::ValueSink& sink, const YAML::Node& node, const std::string& path) {
        const std::optional<std::string> name = yaml::pickName(sink, node, path, optimizerNames());
        return name ? std::optional<FieldValue>(*name) : std::nullopt;
    };
    a.assign = [](Scenario& s, const FieldValue& value, const std::string& path) {
        std::string name;
        if (std::string problem = field_access::checkName(value, optimizerNames(), path, name);
            !problem.empty())
            return problem;
        s.training.optimizer = name;
        return std::string();
    };
    a.read = [](yaml::ValueSink& sink, const YAML::Node& node, const std::string& path,
                Scenario& s) {
        if (const std::optional<std::string> name =
                yaml::pickName(sink, node, path, optimizerNames()))
            s.training.optimizer = *name;
    };
    return a;
}

inline constexpr FieldAccess kGpuPreset = gpuPresetAccess();
inline constexpr FieldAccess kNicPreset = nicPresetAccess();
inline constexpr FieldAccess kOptimizer = optimizerAccess();

constexpr auto kCluster = &Scenario::cluster;
constexpr auto kGpu = &ClusterSpec::gpu;
constexpr auto kNic = &ClusterSpec::nic;
constexpr auto kModel = &Scenario::model;
constexpr auto kMla = &ModelSpec::mla;
constexpr auto kTraining = &Scenario::training;
constexpr auto kLayout = &Scenario::layout;
constexpr auto kRouting = &Scenario::routing;
constexpr auto kReliability = &ClusterSpec::reliability;

// ---------------------------------------------------------------------------------------------
// The table

/// One row being written: the path, the accessor and the help; the rest by chained setters.
struct Row {
    SchemaField f;
    Row(std::string path, const FieldAccess& access, std::string help) {
        f.path = std::move(path);
        f.access = &access;
        f.kind = access.kind;
        f.choices = access.names();
        f.help = std::move(help);
    }
    Row& unit(std::string text) {
        f.unit = std::move(text);
        return *this;
    }
    Row& range(Range r) {
        f.range = r;
        return *this;
    }
    Row& real(double step, int decimals) {
        f.step = step;
        f.decimals = decimals;
        return *this;
    }
    Row& required() {
        f.required = true;
        return *this;
    }
    Row& defaults(std::string text) {
        f.default_text = std::move(text);
        return *this;
    }
    Row& suggest(std::vector<std::string> examples) {
        f.choices = std::move(examples);
        return *this;
    }
    Row& onlyWhen(bool (*applies)(const Scenario&)) {
        f.applies = applies;
        return *this;
    }
    /// The range is checked by the validator's rule that ties it to other fields.
    Row& checkedByRules() {
        f.range_checked_by_rules = true;
        return *this;
    }
};

constexpr int64_t kMaxGpus = limits::kMaxGpus;

bool withMla(const Scenario& s) {
    return s.model.attention == AttentionKind::mla;
}
bool withGqa(const Scenario& s) {
    return s.model.attention == AttentionKind::gqa;
}

std::vector<SchemaSection> sections() {
    return {
        {"cluster", true,
         "The hardware: GPUs, nodes, racks, the scale-up and scale-out networks, "
         "costs and failure rates.",
         ""},
        {"cluster.gpu_overrides", false,
         "Replace single figures of the GPU preset (a GPU that is not in the catalog, a "
         "measured bandwidth).",
         "the preset's figures"},
        {"cluster.scale_up", false, "The scale-up (NVLink) domain.", "the GPU preset's"},
        {"cluster.scale_out", false, "The scale-out network: NICs and the fabric between nodes.",
         "one cx7-400g NIC per GPU on a rail-optimized InfiniBand fabric"},
        {"cluster.costs", false, "Prices and power beyond the GPUs, for the economics.",
         "the catalog's estimates"},
        {"cluster.reliability", false, "Failure rates and recovery times, for goodput.",
         "Llama 3's measured rates"},
        {"model", true, "The transformer: shape, attention, experts and precisions.", ""},
        {"model.mla", false, "Multi-head latent attention dimensions (only with attention: mla).",
         "DeepSeek-V3's"},
        {"model.precision", false, "Number formats of weights, activations and traffic.",
         "bf16, with fp32 gradients"},
        {"training", true, "The optimizer step: batch, optimizer, memory savings, checkpoints.",
         ""},
        {"layout", false, "How the model is split over the GPUs.", "no parallelism but data"},
        {"routing", false, "How tokens choose experts.", "uniform"},
    };
}

std::vector<SchemaField> buildFields() {
    const std::string gpu_override =
        " Replaces the GPU preset's figure; shown here as resolved (preset or override).";
    const std::string preset = "the GPU preset's";
    const std::string estimate = " Default: the catalog's estimate for the preset.";
    const std::string nic_preset = "the NIC preset's";
    const std::string node_shape = "the GPU preset's node shape";
    const std::string mla_default = "DeepSeek-V3's";
    using R = Range;
    std::vector<Row> t;
    auto add = [&t](std::string path, const FieldAccess& access, std::string help) -> Row& {
        return t.emplace_back(std::move(path), access, std::move(help));
    };

    add("name", kMember<&Scenario::name>,
        "Short identifier of the scenario (the samples use their file name).")
        .required();
    add("description", kMember<&Scenario::description>,
        "One line shown in reports and in the window title's tooltip.");

    // cluster
    add("cluster.gpu", kGpuPreset,
        "GPU preset from the built-in catalog. Choosing one resets the figures and node shape "
        "that were not overridden.")
        .required();
    add("cluster.gpu_overrides.name", kMember<kCluster, kGpu, &GpuSpec::name>,
        "GPU name shown in reports." + gpu_override)
        .defaults(preset);
    add("cluster.gpu_overrides.bf16_tflops", kMember<kCluster, kGpu, &GpuSpec::bf16_tflops>,
        "Dense BF16 peak, no sparsity." + gpu_override)
        .unit("TFLOPS")
        .range(R::positive())
        .real(10, 0)
        .defaults(preset);
    add("cluster.gpu_overrides.fp8_tflops", kMember<kCluster, kGpu, &GpuSpec::fp8_tflops>,
        "Dense FP8 peak, no sparsity; 0 = no FP8 tensor cores (A100), which refuses "
        "model.precision.compute = fp8." +
            gpu_override)
        .unit("TFLOPS")
        .range(R::atLeast(0))
        .real(10, 0)
        .defaults(preset);
    add("cluster.gpu_overrides.hbm_gb", kMember<kCluster, kGpu, &GpuSpec::hbm_gb>,
        "HBM capacity per GPU (1 GB = 10^9 bytes)." + gpu_override)
        .unit("GB")
        .range(R::positive())
        .real(1, 1)
        .defaults(preset);
    add("cluster.gpu_overrides.hbm_tbps", kMember<kCluster, kGpu, &GpuSpec::hbm_tbps>,
        "HBM bandwidth per GPU." + gpu_override)
        .unit("TB/s")
        .range(R::positive())
        .real(0.05, 2)
        .defaults(preset);
    add("cluster.gpu_overrides.sm_count", kMember<kCluster, kGpu, &GpuSpec::sm_count>,
        "Streaming multiprocessors (AMD: compute units). GEMM output tiles run in waves over "
        "them, so a GEMM with few tiles leaves SMs idle." +
            gpu_override)
        .unit("SMs")
        .range(R::size(1, 1024))
        .defaults(preset);
    add("cluster.gpu_overrides.power_w", kMember<kCluster, kGpu, &GpuSpec::power_w>,
        "Board power, for energy totals." + gpu_override)
        .unit("W")
        .range(R::atLeast(0))
        .real(10, 0)
        .defaults(preset);
    add("cluster.gpu_overrides.price_usd", kMember<kCluster, kGpu, &GpuSpec::price_usd>,
        "Purchase price per GPU (0 = unknown)." + gpu_override)
        .unit("USD")
        .range(R::atLeast(0))
        .real(1000, 0)
        .defaults(preset);
    add("cluster.nodes", kMember<kCluster, &ClusterSpec::nodes>,
        "Number of nodes (servers, or trays for GB200).")
        .unit("nodes")
        .range(R::size(1, kMaxGpus))
        .required();
    add("cluster.gpus_per_node", kMember<kCluster, &ClusterSpec::gpus_per_node>,
        "GPUs per node; GPU g is on node g / gpus_per_node. Default: the preset's node shape.")
        .unit("GPUs")
        .range(R::size(1, limits::kMaxGpusPerNode))
        .defaults(node_shape);
    add("cluster.nodes_per_rack", kMember<kCluster, &ClusterSpec::nodes_per_rack>,
        "Nodes a rack holds: the topology drawing, rack count and power, and the scale-up "
        "domain when scale_up.domain is rack.")
        .unit("nodes")
        .range(R::size(1, limits::kMaxNodesPerRack))
        .defaults(node_shape);
    add("cluster.rack_nodes", kMember<kCluster, &ClusterSpec::rack_nodes>,
        "Nodes in each rack, in node order, each at most nodes_per_rack (e.g. [4, 2, 2]); nodes "
        "beyond the listed racks fill further racks. [] = every rack filled in turn.");
    add("cluster.rack_power_limit_kw", kMember<kCluster, &ClusterSpec::rack_power_limit_kw>,
        "IT power one rack may draw (power feed, cooling); a rack above it is flagged. 0 = no "
        "limit.")
        .unit("kW")
        .range(R::atLeast(0))
        .real(5, 1);
    add("cluster.scale_up.domain", kMember<kCluster, &ClusterSpec::scale_up_domain>,
        "Which GPUs share one NVLink (scale-up) domain: a node, or a whole rack (GB200 NVL72).")
        .defaults(node_shape);
    add("cluster.scale_up.bandwidth_gbps", kMember<kCluster, kGpu, &GpuSpec::scale_up_gbps>,
        "Peak scale-up bandwidth of each GPU, per direction (H100 NVLink 4: 450).")
        .unit("GB/s per GPU per direction")
        .range(R::positive())
        .real(25, 0)
        .defaults(preset);
    add("cluster.scale_up.latency_us", kMember<kCluster, kGpu, &GpuSpec::scale_up_latency_us>,
        "Latency per collective step inside the scale-up domain.")
        .unit("µs")
        .range(R::atLeast(0))
        .real(0.5, 2)
        .defaults(preset);
    add("cluster.scale_up.name", kMember<kCluster, kGpu, &GpuSpec::scale_up_fabric>,
        "Scale-up fabric name used in explanations (NVLink, Infinity Fabric).")
        .defaults(preset);
    // First in scale_out, so bandwidth and latency below refine the chosen NIC.
    add("cluster.scale_out.nic", kNicPreset,
        "NIC preset: one scale-out port per rail. Default cx7-400g.");
    add("cluster.scale_out.nics_per_node", kMember<kCluster, &ClusterSpec::nics_per_node>,
        "NICs per node; each GPU sends through one NIC (its rail). Default: gpus_per_node.")
        .unit("NICs")
        .range(R::size(1, limits::kMaxNicsPerNode))
        .defaults("cluster.gpus_per_node");
    add("cluster.scale_out.bandwidth_gbps", kMember<kCluster, kNic, &NicSpec::bandwidth_gbps>,
        "Achievable rate of one NIC per direction (NDR 400 Gb/s = 50 GB/s line rate, ~48 "
        "achievable). Default: the NIC preset's.")
        .unit("GB/s per NIC per direction")
        .range(R::positive())
        .real(4, 1)
        .defaults(nic_preset);
    add("cluster.scale_out.latency_us", kMember<kCluster, kNic, &NicSpec::latency_us>,
        "Latency across leaf and spine. Default: the NIC preset's.")
        .unit("µs")
        .range(R::atLeast(0))
        .real(0.5, 2)
        .defaults(nic_preset);
    add("cluster.scale_out.fabric", kMember<kCluster, &ClusterSpec::fabric>,
        "Kind of scale-out network. Default infiniband.");
    add("cluster.scale_out.topology", kMember<kCluster, &ClusterSpec::fabric_topology>,
        "Rail-optimized: NIC i of every node hangs off rail leaf i. Default rail-optimized.");
    add("cluster.scale_out.oversubscription", kMember<kCluster, &ClusterSpec::oversubscription>,
        "Leaf downlink : uplink bandwidth ratio; traffic leaving a leaf is divided by it. 1 = "
        "non-blocking.")
        .unit(":1")
        .range(R::atLeast(1))
        .real(0.5, 2);
    add("cluster.scale_out.nodes_per_leaf", kMember<kCluster, &ClusterSpec::nodes_per_leaf>,
        "Nodes under one leaf switch; 0 = derived.")
        .unit("nodes")
        .range(R::size(0, kMaxGpus));
    add("cluster.costs.gpu_hour_usd", kMember<kCluster, &ClusterSpec::gpu_hour_usd>,
        "Rental or amortized price per GPU-hour, for cost totals (0 = not given).")
        .unit("USD per GPU-hour")
        .range(R::atLeast(0))
        .real(0.25, 2);
    add("cluster.costs.electricity_usd_per_kwh",
        kMember<kCluster, &ClusterSpec::electricity_usd_per_kwh>, "Energy price (0 = not given).")
        .unit("USD/kWh")
        .range(R::atLeast(0))
        .real(0.01, 3);
    add("cluster.costs.pue", kMember<kCluster, &ClusterSpec::pue>,
        "Data-centre power usage effectiveness (1 = no overhead).")
        .range(R::atLeast(1))
        .real(0.05, 2);
    add("cluster.costs.node_overhead_w", kMember<kCluster, &ClusterSpec::node_overhead_w>,
        "CPUs, memory, NVSwitches and fans per node beyond GPU and NIC board power." + estimate)
        .unit("W per node")
        .range(R::atLeast(0))
        .real(50, 0)
        .defaults(node_shape);
    add("cluster.costs.rack_overhead_w", kMember<kCluster, &ClusterSpec::rack_overhead_w>,
        "Power per rack beyond its nodes (GB200 NVL72: the NVLink switch trays)." + estimate)
        .unit("W per rack")
        .range(R::atLeast(0))
        .real(500, 0)
        .defaults(node_shape);
    add("cluster.costs.server_usd", kMember<kCluster, &ClusterSpec::server_usd>,
        "Price of one server (NVL72: compute tray) without its GPUs and NICs." + estimate)
        .unit("USD per node")
        .range(R::atLeast(0))
        .real(1000, 0)
        .defaults(node_shape);
    add("cluster.costs.rack_usd", kMember<kCluster, &ClusterSpec::rack_usd>,
        "Price of one rack with power and cooling (NVL72: with its NVLink switch trays)." +
            estimate)
        .unit("USD per rack")
        .range(R::atLeast(0))
        .real(1000, 0)
        .defaults(node_shape);
    add("cluster.costs.switch_usd", kMember<kCluster, kNic, &NicSpec::switch_usd>,
        "Price of one 64-port leaf or spine switch of the NIC's speed. Default: the NIC preset's "
        "estimate.")
        .unit("USD per switch")
        .range(R::atLeast(0))
        .real(1000, 0)
        .defaults(nic_preset);
    add("cluster.costs.switch_w", kMember<kCluster, kNic, &NicSpec::switch_w>,
        "Power of one leaf or spine switch. Default: the NIC preset's estimate.")
        .unit("W per switch")
        .range(R::atLeast(0))
        .real(100, 0)
        .defaults(nic_preset);
    add("cluster.costs.cable_usd", kMember<kCluster, kNic, &NicSpec::cable_usd>,
        "Price of one switch link: fibre and two transceivers. Default: the NIC preset's "
        "estimate.")
        .unit("USD per link")
        .range(R::atLeast(0))
        .real(100, 0)
        .defaults(nic_preset);
    add("cluster.costs.amortization_years", kMember<kCluster, &ClusterSpec::amortization_years>,
        "The purchase is written off over this period (used when gpu_hour_usd is 0). Default 4.")
        .unit("years")
        .range(R::positive())
        .real(0.5, 1);
    add("cluster.reliability.gpu_failures_per_million_h",
        kMember<kCluster, kReliability, &ReliabilitySpec::gpu_failures_per_million_h>,
        "Job-stopping failures per GPU per million hours. Default 12.6: Llama 3's 268 GPU-caused "
        "interruptions in 54 days on 16,384 H100.")
        .unit("per million GPU-hours")
        .range(R::atLeast(0))
        .real(1, 1);
    add("cluster.reliability.node_failures_per_million_h",
        kMember<kCluster, kReliability, &ReliabilitySpec::node_failures_per_million_h>,
        "Job-stopping failures per node per million hours from everything but its GPUs "
        "(software, network, host, power). Default 56.9: Llama 3's other 151 interruptions on "
        "2,048 nodes.")
        .unit("per million node-hours")
        .range(R::atLeast(0))
        .real(1, 1);
    add("cluster.reliability.checkpoint_write_gbps_per_node",
        kMember<kCluster, kReliability, &ReliabilitySpec::checkpoint_write_gbps_per_node>,
        "Each node's share of the checkpoint storage's write (and read) bandwidth. Default 1 "
        "(Llama 3: ~2 TB/s for 2,048 nodes).")
        .unit("GB/s per node")
        .range(R::positive())
        .real(0.5, 2);
    add("cluster.reliability.detection_s",
        kMember<kCluster, kReliability, &ReliabilitySpec::detection_s>,
        "From a failure to the job noticing it (timeouts, health checks). Default 120.")
        .unit("s")
        .range(R::atLeast(0))
        .real(30, 0);
    add("cluster.reliability.restart_s",
        kMember<kCluster, kReliability, &ReliabilitySpec::restart_s>,
        "Rescheduling, re-initialisation and warm-up after a failure, without reading the "
        "checkpoint. Default 300.")
        .unit("s")
        .range(R::atLeast(0))
        .real(30, 0);

    // model
    add("model.name", kMember<kModel, &ModelSpec::name>, "Model name for reports.");
    add("model.layers", kMember<kModel, &ModelSpec::layers>, "Transformer layers.")
        .unit("layers")
        .range(R::size(1, limits::kMaxLayers))
        .required();
    add("model.dense_layers", kMember<kModel, &ModelSpec::dense_layers>,
        "The first dense_layers layers use the dense FFN; the rest are MoE layers (DeepSeek-V3: "
        "3).")
        .unit("layers")
        .range(R::size(0, limits::kMaxLayers));
    add("model.mtp_layers", kMember<kModel, &ModelSpec::mtp_layers>,
        "Multi-token-prediction modules (DeepSeek-V3 report sec. 2.2: depth 1), each an "
        "embedding, a 2h -> h projection, one transformer block and the shared output head, "
        "priced on the last pipeline stage. Default 0.")
        .unit("modules")
        .range(R::size(0, limits::kMaxLayers));
    add("model.hidden", kMember<kModel, &ModelSpec::hidden>, "Model (embedding) width h.")
        .unit("elements")
        .range(R::size(1, limits::kMaxHidden))
        .required();
    add("model.heads", kMember<kModel, &ModelSpec::heads>, "Query heads.")
        .unit("heads")
        .range(R::size(1, limits::kMaxHeads))
        .required();
    add("model.kv_heads", kMember<kModel, &ModelSpec::kv_heads>,
        "Key/value heads (GQA); must divide heads. Default: heads. Ignored with MLA.")
        .unit("heads")
        .range(R::size(1, limits::kMaxHeads))
        .onlyWhen(withGqa)
        .defaults("model.heads");
    add("model.head_dim", kMember<kModel, &ModelSpec::head_dim>,
        "Per-head size when it is not hidden / heads; 0 = hidden / heads.")
        .unit("elements")
        .range(R::size(0, limits::kMaxHeadDim));
    add("model.attention", kMember<kModel, &ModelSpec::attention>,
        "Grouped-query attention (MHA when kv_heads == heads) or DeepSeek multi-head latent "
        "attention.");
    add("model.mla.q_lora_rank", kMember<kModel, kMla, &MlaDims::q_lora_rank>,
        "Query compression rank (0 = none). Only with attention: mla.")
        .unit("elements")
        .range(R::size(0, limits::kMaxMlaRank))
        .onlyWhen(withMla)
        .defaults(mla_default);
    add("model.mla.kv_lora_rank", kMember<kModel, kMla, &MlaDims::kv_lora_rank>,
        "Compressed KV latent size. Only with attention: mla.")
        .unit("elements")
        .range(R::size(1, limits::kMaxMlaRank))
        .onlyWhen(withMla)
        .defaults(mla_default);
    add("model.mla.qk_nope_head_dim", kMember<kModel, kMla, &MlaDims::qk_nope_head_dim>,
        "Per-head query/key size without rotary embedding. Only with attention: mla.")
        .unit("elements")
        .range(R::size(1, limits::kMaxHeadDim))
        .onlyWhen(withMla)
        .defaults(mla_default);
    add("model.mla.qk_rope_head_dim", kMember<kModel, kMla, &MlaDims::qk_rope_head_dim>,
        "Per-head rotary part. Only with attention: mla.")
        .unit("elements")
        .range(R::size(1, limits::kMaxHeadDim))
        .onlyWhen(withMla)
        .defaults(mla_default);
    add("model.mla.v_head_dim", kMember<kModel, kMla, &MlaDims::v_head_dim>,
        "Per-head value size. Only with attention: mla.")
        .unit("elements")
        .range(R::size(1, limits::kMaxHeadDim))
        .onlyWhen(withMla)
        .defaults(mla_default);
    add("model.seq_len", kMember<kModel, &ModelSpec::seq_len>, "Training sequence length s.")
        .unit("tokens")
        .range(R::size(1, limits::kMaxSeqLen))
        .required();
    add("model.vocab", kMember<kModel, &ModelSpec::vocab>,
        "Vocabulary size (embedding and output head).")
        .unit("tokens")
        .range(R::size(1, limits::kMaxVocab))
        .required();
    add("model.ffn_hidden", kMember<kModel, &ModelSpec::ffn_hidden>,
        "Dense FFN intermediate size (see model.mlp); must be > 0 for a dense model and when "
        "dense_layers > 0.")
        .unit("elements")
        .range(R::size(0, limits::kMaxFfnHidden))
        .checkedByRules();
    add("model.mlp", kMember<kModel, &ModelSpec::mlp>,
        "Dense FFN kind: swiglu (gate, up and down matrices, 3*h*ffn_hidden) or gelu (the GPT "
        "MLP: h -> ffn_hidden, GeLU, back to h, 2*h*ffn_hidden; GPT-2/3 and Megatron's GPT use "
        "ffn_hidden = 4h). Routed and shared experts are SwiGLU. Default swiglu.");
    add("model.dropout", kMember<kModel, &ModelSpec::dropout>,
        "Hidden and attention dropout probability (Megatron-LM's GPT default is 0.1 for both; "
        "recent LLM recipes use 0). Above 0, each layer's two residual dropouts write and read a "
        "mask, and unfused attention runs a dropout pass over the s x s scores. Default 0.")
        .range(R::between(0, 1))
        .real(0.05, 2);
    add("model.experts", kMember<kModel, &ModelSpec::experts>,
        "Routed experts per MoE layer E; 0 = dense model.")
        .unit("experts")
        .range(R::size(0, limits::kMaxExperts));
    add("model.top_k", kMember<kModel, &ModelSpec::top_k>,
        "Experts per token k: 1..E for a MoE model, 0 for a dense one.")
        .unit("experts")
        .range(R::size(0, limits::kMaxTopK))
        .checkedByRules();
    add("model.expert_ffn_hidden", kMember<kModel, &ModelSpec::expert_ffn_hidden>,
        "Intermediate size of each routed expert (SwiGLU); > 0 for a MoE model.")
        .unit("elements")
        .range(R::size(0, limits::kMaxFfnHidden))
        .checkedByRules();
    add("model.shared_experts", kMember<kModel, &ModelSpec::shared_experts>,
        "Always-active shared experts per MoE layer.")
        .unit("experts")
        .range(R::size(0, limits::kMaxSharedExperts));
    add("model.shared_expert_ffn_hidden", kMember<kModel, &ModelSpec::shared_expert_ffn_hidden>,
        "Intermediate size of each shared expert; 0 = expert_ffn_hidden.")
        .unit("elements")
        .range(R::size(0, limits::kMaxFfnHidden));
    add("model.capacity_factor", kMember<kModel, &ModelSpec::capacity_factor>,
        "Tokens over C*T*k/E per expert are dropped; 0 = dropless.")
        .range(R::atLeast(0))
        .real(0.25, 2);
    add("model.precision.weights", kMember<kModel, &ModelSpec::weight_precision>,
        "Weights held for compute (memory, TP/PP traffic). Default bf16.");
    add("model.precision.activations", kMember<kModel, &ModelSpec::activation_precision>,
        "Stored activations and pipeline sends. Default bf16.");
    add("model.precision.dispatch", kMember<kModel, &ModelSpec::dispatch_precision>,
        "Payload of the all-to-all dispatch; fp8 halves it (the combine stays BF16). Default "
        "bf16.");
    add("model.precision.compute", kMember<kModel, &ModelSpec::compute_precision>,
        "GEMM precision; fp8 uses the GPU's FP8 peak and needs a GPU with FP8 tensor cores "
        "(not A100). Default bf16.");
    add("model.precision.grads", kMember<kModel, &ModelSpec::grad_precision>,
        "Main gradients (memory and data-parallel gradient sync). Default fp32.");
    add("model.precision.fp8_recipe", kMember<kModel, &ModelSpec::fp8_recipe>,
        "Scaling of FP8 GEMMs (Megatron-Core --fp8-recipe): delayed or tensorwise = one scale "
        "per tensor (from an amax history, or the current tensor), blockwise = DeepSeek-V3's "
        "1x128 activation / 128x128 weight blocks, mxfp8 = 1x32 blocks with E8M0 scales in "
        "the tensor cores (GPUs with MXFP8 support: Blackwell). Sets the FP8 GEMMs' efficiency "
        "and their quantization passes; used only with compute = fp8. Default delayed.");

    // training
    add("training.global_batch", kMember<kTraining, &TrainingSpec::global_batch>,
        "Sequences per optimizer step, all data-parallel replicas together.")
        .unit("sequences")
        .range(R::size(1, limits::kMaxGlobalBatch))
        .required();
    add("training.micro_batch", kMember<kTraining, &TrainingSpec::micro_batch>,
        "Sequences per micro-batch per pipeline replica; micro-batches per step = global_batch "
        "/ (dp * micro_batch).")
        .unit("sequences")
        .range(R::size(1, limits::kMaxMicroBatch));
    add("training.total_tokens", kMember<kTraining, &TrainingSpec::total_tokens>,
        "Training budget for days, GPU-hours, energy and cost; 0 = no totals.")
        .unit("tokens")
        .range(R::atLeast(0))
        .real(1e11, 0);
    add("training.optimizer", kOptimizer,
        "Both keep FP32 master weights and two moments (training.optimizer_states).");
    add("training.optimizer_states", kMember<kTraining, &TrainingSpec::optimizer_states>,
        "Precision of Adam's two moments (memory and the optimizer step's HBM traffic); master "
        "weights stay FP32. DeepSeek-V3 keeps them in bf16. Default fp32.");
    add("training.zero_stage", kMember<kTraining, &TrainingSpec::zero_stage>,
        "ZeRO stage: 1 shards the optimizer state over DP, 2 also the gradients, 3 also the "
        "weights.")
        .range(R::between(0, 3));
    add("training.dp_overlap", kMember<kTraining, &TrainingSpec::dp_overlap>,
        "Data-parallel communication hidden behind compute: grad-reduce reduces each layer's "
        "gradients during backward (Megatron --overlap-grad-reduce), grad-reduce-and-param-gather "
        "also gathers each layer's ZeRO weights during forward (--overlap-param-gather); none "
        "runs both after the last backward, in the optimizer phase. Default "
        "grad-reduce-and-param-gather.");
    add("training.ep_overlap", kMember<kTraining, &TrainingSpec::ep_overlap>,
        "EP all-to-all hidden outside DualPipe: combined-1f1b runs the steady state of an "
        "interleaved pipeline (or of none) as DualPipe's overlapped forward & backward pairs "
        "(Megatron-Core --overlap-moe-expert-parallel-comm); needs EP > 1. Default none.");
    add("training.moe_dispatcher", kMember<kTraining, &TrainingSpec::moe_dispatcher>,
        "How the EP all-to-all moves tokens: alltoall sends one copy per chosen expert "
        "(Megatron-Core --moe-token-dispatcher-type alltoall); deepep and hybridep (flex "
        "dispatcher, --moe-flex-dispatcher-backend) send one copy per distinct GPU inside the "
        "NVLink domain and one per distinct node across it, forwarded over NVLink there. "
        "Default alltoall.");
    add("training.recompute", kMember<kTraining, &TrainingSpec::recompute>,
        "Activation recomputation: selective re-runs core attention, full re-runs each layer's "
        "forward.");
    add("training.attention_kernel", kMember<kTraining, &TrainingSpec::attention_kernel>,
        "Core attention kernel: flash (one fused kernel, causal half of the scores, never "
        "writes them) or unfused (Megatron-LM before FlashAttention: score and context GEMMs "
        "over the full s x s square, the scores written, softmaxed and dropped out through "
        "HBM). Default flash.");
    add("training.tp_activations", kMember<kTraining, &TrainingSpec::tp_activations>,
        "Where the work outside the TP-split GEMMs runs (norms, residual adds, dropout): "
        "sequence-parallel shards it by sequence over the TP ranks (Megatron --sequence-parallel, "
        "an all-gather and a reduce-scatter around each block); replicated runs it on all tokens "
        "on every TP rank and keeps those activations whole (Megatron without the flag, and "
        "Megatron-LM before 2022; an all-reduce after each block, the same bytes). No effect at "
        "TP = 1. Default sequence-parallel.");
    add("training.checkpoint_interval_s", kMember<kTraining, &TrainingSpec::checkpoint_interval_s>,
        "Training time between checkpoints; 0 = the optimum for the cluster's failure rate "
        "(Young/Daly).")
        .unit("s")
        .range(R::atLeast(0))
        .real(300, 0);

    // layout
    add("layout.tp", kMember<kLayout, &LayoutSpec::tp>,
        "Tensor parallelism of attention and dense FFN (with sequence parallelism).")
        .unit("GPUs")
        .range(R::size(1, kMaxGpus));
    add("layout.cp", kMember<kLayout, &LayoutSpec::cp>,
        "Context parallelism: each sequence split into 2*cp chunks.")
        .unit("GPUs")
        .range(R::size(1, kMaxGpus));
    add("layout.pp", kMember<kLayout, &LayoutSpec::pp>, "Pipeline stages.")
        .unit("stages")
        .range(R::size(1, kMaxGpus));
    add("layout.vpp", kMember<kLayout, &LayoutSpec::vpp>,
        "Virtual stages per pipeline rank (only with schedule: interleaved).")
        .unit("stages")
        .range(R::size(1, kMaxGpus));
    add("layout.first_stage_layers", kMember<kLayout, &LayoutSpec::first_stage_layers>,
        "Transformer layers on the first pipeline stage (Megatron-Core "
        "--decoder-first-pipeline-num-layers); the stages between the first and last share "
        "the rest evenly. 0 = the even split.")
        .unit("layers")
        .range(R::size(0, limits::kMaxLayers));
    add("layout.last_stage_layers", kMember<kLayout, &LayoutSpec::last_stage_layers>,
        "Transformer layers on the last pipeline stage (Megatron-Core "
        "--decoder-last-pipeline-num-layers), which also holds the output head and the MTP "
        "modules. 0 = the even split.")
        .unit("layers")
        .range(R::size(0, limits::kMaxLayers));
    add("layout.dp", kMember<kLayout, &LayoutSpec::dp>,
        "Data parallelism of the dense grid. Default: GPUs / (tp*cp*pp), and it follows tp, cp, "
        "pp and the GPU count while it equals that.")
        .unit("replicas")
        .range(R::size(1, kMaxGpus))
        .defaults("GPUs / (tp*cp*pp)");
    add("layout.ep", kMember<kLayout, &LayoutSpec::ep>,
        "Expert parallelism: experts are spread over ep GPUs. Expert-DP = tp*cp*dp / (ep*etp).")
        .unit("GPUs")
        .range(R::size(1, kMaxGpus));
    add("layout.etp", kMember<kLayout, &LayoutSpec::etp>, "Tensor parallelism inside each expert.")
        .unit("GPUs")
        .range(R::size(1, kMaxGpus));
    add("layout.order", kMember<kLayout, &LayoutSpec::order>,
        "Rank order, leftmost fastest; each of tp cp ep dp pp exactly once. Put tp and ep "
        "leftmost (inside the scale-up domain), dp and pp rightmost.")
        .suggest({"tp-cp-ep-dp-pp", "tp-cp-dp-ep-pp", "tp-ep-cp-dp-pp", "ep-tp-cp-dp-pp",
                  "tp-cp-ep-pp-dp", "tp-cp-pp-ep-dp"});
    add("layout.schedule", kMember<kLayout, &LayoutSpec::schedule>,
        "Pipeline schedule. Default 1f1b.");
    add("layout.max_nodes_per_token", kMember<kLayout, &LayoutSpec::max_nodes_per_token>,
        "Node-limited routing (DeepSeek-V3: 4): a token goes to experts on at most this many "
        "nodes; 0 = unlimited.")
        .unit("nodes")
        .range(R::size(0, kMaxGpus));
    add("layout.expert_placement", kMember<kLayout, &LayoutSpec::expert_placement>,
        "Explicit placement, a list of {expert: E, ep_ranks: [r, ...], layer: L}; experts not "
        "listed stay round-robin (expert e on EP rank e mod ep). [] = all round-robin.");

    // routing
    add("routing.balancing", kMember<kRouting, &RoutingSpec::balancing>,
        "How the router was trained to balance its experts: aux_loss (auxiliary loss, Switch/"
        "GShard/Megatron default), aux_free (DeepSeek's loss-free expert bias), none, or perfect "
        "(what-if: every expert gets exactly its share, no sampling noise; the lower bound). "
        "Default aux_loss.");
    add("routing.model", kMember<kRouting, &RoutingSpec::model>,
        "Expert popularity per MoE layer: published (the spread measured for routing.balancing, "
        "sampled per micro-batch), uniform, zipf (what-if skew) or histogram (measured). "
        "Default published.");
    add("routing.zipf_alpha", kMember<kRouting, &RoutingSpec::zipf_alpha>,
        "Zipf exponent: expert of rank i gets weight proportional to 1/i^alpha.")
        .range(R::atLeast(0))
        .real(0.05, 2);
    add("routing.histogram_csv", kMember<kRouting, &RoutingSpec::histogram_csv>,
        "CSV of expert weights, relative to the scenario file; required for model: histogram.");
    add("routing.balance", kMember<kRouting, &RoutingSpec::balance>,
        "What-if: blends the popularity toward uniform: 0 = raw, 1 = uniform (sampling noise "
        "remains; balancing: perfect removes it).")
        .range(R::between(0, 1))
        .real(0.05, 2);
    add("routing.seed", kMember<kRouting, &RoutingSpec::seed>,
        "Seed of every random draw: same seed, same result.");
#ifdef MOE_SCHEMA_TEST_FIELD
    // The schema test's build appends this row and nothing else (tests/test_schema_dummy.cpp).
    add("routing.schema_test_field", kMember<kRouting, &RoutingSpec::schema_test_field>,
        "A field that only the schema table declares.")
        .unit("widgets")
        .range(R::size(2, 7));
#endif

    std::vector<SchemaField> fields;
    fields.reserve(t.size());
    for (Row& row : t) {
        const std::size_t dot = row.f.path.find('.');
        row.f.section = dot == std::string::npos ? "scenario" : row.f.path.substr(0, dot);
        row.f.key = dot == std::string::npos ? row.f.path : row.f.path.substr(dot + 1);
        fields.push_back(std::move(row.f));
    }
    return fields;
}

} // namespace

const ScenarioSchema& scenarioSchema() {
    static const ScenarioSchema schema(sections(), buildFields());
    return schema;
}

} // namespace moe
