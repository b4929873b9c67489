#pragma once
// The scenario: the value type every part of MoE Planner reads. It is plain data (copyable,
// comparable), fully resolved (catalog presets already expanded), and free of I/O. Loading,
// saving and validation live in scenario_io.h / validate.h.
//
// Units are carried in the names: _gb = 1e9 bytes, _gbps = GB/s (1e9 bytes per second) per GPU
// per direction, _gbit = Gb/s as marketed for NICs, _us = microseconds, _tflops = 1e12 FLOP/s.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace moe {

enum class Precision { fp32, bf16, fp16, fp8 };
double bytesPerElement(Precision p);

/// A GPU type. `preset` names the catalog entry it came from; the numbers are the resolved ones
/// (preset values with the scenario's overrides applied).
struct GpuSpec {
    std::string preset;
    std::string name;
    double bf16_tflops = 0; ///< dense peak, no sparsity
    double fp8_tflops = 0;
    double hbm_gb = 0;
    double hbm_tbps = 0; ///< HBM bandwidth, 1e12 bytes/s
    /// Streaming multiprocessors (AMD: compute units) that GEMM tiles spread over; sets the
    /// wave quantization of GEMMs (step_costs.cpp, gemm_s). 0 = unknown: no quantization.
    int sm_count = 0;
    double scale_up_gbps = 0;       ///< NVLink / Infinity Fabric, GB/s per direction per GPU
    double scale_up_latency_us = 0; ///< per collective step inside the scale-up domain
    std::string scale_up_fabric = "NVLink"; ///< name used in explanations
    double power_w = 0;
    double price_usd = 0; ///< 0 = unknown
    /// Tensor cores that apply MX block scales (32-element blocks, E8M0 scales) in hardware
    /// (Blackwell, SM 10.0+): a catalog capability, required by fp8_recipe = mxfp8.
    bool mxfp8 = false;
    bool operator==(const GpuSpec&) const = default;
};

/// A NIC type (one scale-out port).
struct NicSpec {
    std::string preset;
    std::string name;
    double speed_gbit = 0;     ///< line rate as marketed, Gb/s per direction
    double bandwidth_gbps = 0; ///< achievable GB/s per direction
    double latency_us = 0;     ///< per message across one leaf/spine hop pair
    double power_w = 0;
    double price_usd = 0;
    // The fabric this NIC type plugs into, for the economics model (economics.h): one 64-port
    // leaf/spine switch of its speed, and one cable with its two transceivers.
    double switch_usd = 0;
    double switch_w = 0;
    double cable_usd = 0;
    bool operator==(const NicSpec&) const = default;
};

enum class ScaleUpDomain { node, rack };
enum class Fabric { infiniband, ethernet };
enum class FabricTopology { fat_tree, rail_optimized };

/// Failures and checkpoint storage of a cluster (economics.h). The failure-rate defaults are Llama
/// 3's published statistics (Llama Team, "The Llama 3 Herd of Models", 2024, section 3.3.4 and
/// table 5: 419 unexpected interruptions in 54 days on 16,384 H100 in 2,048 nodes): the 268
/// attributed to GPUs (faulty GPU, HBM3, SRAM, system processor, silent data corruption, thermal)
/// are 268 / (16384 x 1296 h) = 12.6 per million GPU-hours; the other 151 (software, switches and
/// cables, host maintenance, NIC, NCCL, SSD, power, CPU, ...) 151 / (2048 x 1296 h) = 56.9 per
/// million node-hours.
struct ReliabilitySpec {
    double gpu_failures_per_million_h = 12.6;  ///< per GPU
    double node_failures_per_million_h = 56.9; ///< per node, causes other than its GPUs
    double checkpoint_write_gbps_per_node = 1; ///< each node's share of the storage bandwidth
    double detection_s = 120; ///< from a failure to the job noticing (timeouts, health checks)
    double restart_s = 300;   ///< reschedule, re-initialise, warm up (checkpoint read excluded)
    bool operator==(const ReliabilitySpec&) const = default;
};

struct ClusterSpec {
    GpuSpec gpu;
    int nodes = 1;
    int gpus_per_node = 8;
    int nodes_per_rack = 1; ///< a rack's capacity (space, power, its NVLink spine)
    /// Nodes in each rack, in node order (racks hold consecutive nodes). Nodes beyond the listed
    /// racks fill further racks of nodes_per_rack; empty = every rack filled in turn.
    std::vector<int> rack_nodes;
    double rack_power_limit_kw = 0; ///< IT power one rack may draw; 0 = no limit
    ScaleUpDomain scale_up_domain = ScaleUpDomain::node;
    NicSpec nic;
    int nics_per_node = 8;
    Fabric fabric = Fabric::infiniband;
    FabricTopology fabric_topology = FabricTopology::rail_optimized;
    double oversubscription = 1.0; ///< leaf downlink : uplink bandwidth ratio, >= 1
    int nodes_per_leaf = 0;        ///< 0 = derived (rail-optimized: all nodes of a rail group)
    // Optional economics (0 = not given).
    double gpu_hour_usd = 0;
    double electricity_usd_per_kwh = 0;
    double pue = 1.0;
    double node_overhead_w = 0; ///< CPUs, memory, fans, switches per node beyond GPUs and NICs
    // Ownership costs for the economics model (economics.h); presets fill them from the catalog.
    double server_usd = 0;         ///< per node, without its GPUs and NICs
    double rack_usd = 0;           ///< per rack: rack, power, cooling (NVL72: NVLink switch trays)
    double rack_overhead_w = 0;    ///< per rack beyond its nodes (NVL72: NVLink switch trays)
    double amortization_years = 4; ///< capital written off over this period
    ReliabilitySpec reliability;

    int gpuCount() const { return nodes * gpus_per_node; }
    int rackCount() const { return static_cast<int>(nodesInRacks().size()); }
    /// Nodes in every rack: rack_nodes, then full racks of nodes_per_rack for the rest (the last
    /// one possibly partial). Entries over the remaining nodes are clipped (validation refuses
    /// them), so the counts always sum to `nodes`.
    std::vector<int> nodesInRacks() const;
    /// The racks in words: "2 racks of 4 nodes", "4 racks of 3 nodes (room for 4)",
    /// "3 racks (3 + 4 + 1 nodes, up to 4 each)",
    /// "256 racks (255 x 8 + 3 nodes, up to 8 each)".
    std::string describeRacks() const;
    /// GPUs that share one scale-up (NVLink) domain.
    int gpusPerScaleUpDomain() const {
        return scale_up_domain == ScaleUpDomain::node ? gpus_per_node
                                                      : gpus_per_node * nodes_per_rack;
    }
    bool operator==(const ClusterSpec&) const = default;
};

enum class AttentionKind { gqa, mla };
/// The dense FFN's (and every expert's) MLP: SwiGLU (gate, up, down: 3 matrices) or the
/// original GPT MLP (h -> f, GeLU, f -> h: 2 matrices).
enum class MlpKind { swiglu, gelu };

/// Multi-head latent attention dimensions (DeepSeek-V2/V3).
struct MlaDims {
    int q_lora_rank = 1536;
    int kv_lora_rank = 512;
    int qk_nope_head_dim = 128;
    int qk_rope_head_dim = 64;
    int v_head_dim = 128;
    bool operator==(const MlaDims&) const = default;
};

/// How FP8 GEMM operands are scaled: Megatron-Core's --fp8-recipe names (megatron/core/enums.py,
/// Fp8Recipe). delayed / tensorwise: one scale per tensor (from an amax history, or from the
/// current tensor); blockwise: DeepSeek-V3's 1x128 activation tiles and 128x128 weight blocks;
/// mxfp8: 1x32 blocks with E8M0 scales, applied by Blackwell's tensor cores.
enum class Fp8Recipe { delayed, tensorwise, blockwise, mxfp8 };

struct ModelSpec {
    std::string name;
    int layers = 1;
    int dense_layers = 0; ///< the first `dense_layers` layers use the dense FFN
    /// Multi-token prediction modules (DeepSeek-V3 report sec. 2.2), on the last stage.
    int mtp_layers = 0;
    int hidden = 1024;
    int heads = 8;
    int kv_heads = 8;
    int head_dim = 0; ///< 0 = hidden / heads
    AttentionKind attention = AttentionKind::gqa;
    MlaDims mla;
    int seq_len = 2048;
    int vocab = 32000;
    int ffn_hidden = 4096;         ///< dense FFN intermediate size
    MlpKind mlp = MlpKind::swiglu; ///< dense FFN kind (routed and shared experts are SwiGLU)
    double dropout = 0;            ///< hidden and attention dropout probability (Megatron: 0.1)
    int experts = 0;               ///< routed experts per MoE layer; 0 = dense model
    int top_k = 0;
    int expert_ffn_hidden = 0;
    int shared_experts = 0;
    int shared_expert_ffn_hidden = 0; ///< 0 = expert_ffn_hidden
    double capacity_factor = 0;       ///< 0 = dropless
    Precision weight_precision = Precision::bf16;
    Precision activation_precision = Precision::bf16;
    Precision dispatch_precision = Precision::bf16;
    Precision compute_precision = Precision::bf16;
    Precision grad_precision = Precision::fp32;
    Fp8Recipe fp8_recipe = Fp8Recipe::delayed; ///< scaling of FP8 GEMMs (compute = fp8)

    bool isMoe() const { return experts > 0; }
    int moeLayers() const { return isMoe() ? layers - dense_layers : 0; }
    int effectiveHeadDim() const { return head_dim > 0 ? head_dim : hidden / heads; }
    int effectiveSharedFfn() const {
        return shared_expert_ffn_hidden > 0 ? shared_expert_ffn_hidden : expert_ffn_hidden;
    }
    bool operator==(const ModelSpec&) const = default;
};

enum class Recompute { none, selective, full };
/// How core attention runs: one fused kernel that never writes the s x s scores (FlashAttention)
/// or Megatron's 2021 path that materializes them (baddbmm, fused softmax, dropout, bmm).
enum class AttentionKernel { flash, unfused };
/// How the TP ranks hold the work outside the TP-split GEMMs (norms, residual adds, dropout):
/// sharded by sequence (Megatron --sequence-parallel, 2022) or replicated on every TP rank
/// (Megatron-LM before it; the flag's default is still off).
enum class TpActivations { sequence_parallel, replicated };

/// Which data-parallel communication of the distributed optimizer overlaps compute
/// (Megatron-LM: --overlap-grad-reduce; --overlap-param-gather, which requires it).
enum class DpOverlap { none, grad_reduce, grad_reduce_and_param_gather };

/// Whether the expert-parallel all-to-all of one micro-batch hides behind another's compute
/// outside DualPipe: Megatron-Core's combined 1F1B (--overlap-moe-expert-parallel-comm) fuses
/// the steady state's forward and backward of two micro-batches like DualPipe's pairs.
enum class EpOverlap { none, combined_1f1b };

/// How the EP all-to-all moves a token (Megatron-Core --moe-token-dispatcher-type and
/// --moe-flex-dispatcher-backend): alltoall sends one copy per token slot (per chosen expert);
/// the flex dispatchers deepep and hybridep send one copy per distinct rank inside the NVLink
/// domain and one per distinct node across it, forwarded over NVLink there.
enum class MoeDispatcher { alltoall, deepep, hybridep };

struct TrainingSpec {
    int64_t global_batch = 1; ///< sequences per optimizer step
    int micro_batch = 1;      ///< sequences per micro-batch per pipeline replica
    double total_tokens = 0;  ///< tokens to train (for time/cost totals)
    std::string optimizer = "adam";
    int zero_stage = 1;
    /// Adam's two moments (exp_avg, exp_avg_sq); master weights stay FP32. Megatron-LM:
    /// --use-precision-aware-optimizer --exp-avg-dtype / --exp-avg-sq-dtype.
    Precision optimizer_states = Precision::fp32;
    DpOverlap dp_overlap = DpOverlap::grad_reduce_and_param_gather;
    EpOverlap ep_overlap = EpOverlap::none;
    MoeDispatcher moe_dispatcher = MoeDispatcher::alltoall;
    Recompute recompute = Recompute::none;
    AttentionKernel attention_kernel = AttentionKernel::flash;
    TpActivations tp_activations = TpActivations::sequence_parallel;
    double checkpoint_interval_s = 0; ///< compute time between checkpoints; 0 = optimal (Daly)
    bool operator==(const TrainingSpec&) const = default;
};

enum class Dim { tp, cp, ep, dp, pp };
constexpr int kDimCount = 5;
using RankOrder = std::array<Dim, kDimCount>; ///< leftmost varies fastest (Megatron style)

enum class PipelineSchedule { gpipe, one_f_one_b, interleaved, dualpipe };

/// Places one expert on explicit EP ranks (positions 0..ep-1 inside every EP group), for one
/// MoE layer or for all of them. Several ranks replicate the expert (its tokens split evenly).
struct ExpertPlacement {
    int layer = -1; ///< -1 = every MoE layer
    int expert = 0;
    std::vector<int> ep_ranks;
    bool operator==(const ExpertPlacement&) const = default;
};

struct LayoutSpec {
    int tp = 1;
    int cp = 1;
    int pp = 1;
    int vpp = 1; ///< virtual stages per pipeline rank (interleaved schedule)
    /// Transformer layers on the first / last pipeline stage; 0 = the even split (Megatron-Core
    /// --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers).
    int first_stage_layers = 0;
    int last_stage_layers = 0;
    int dp = 1;
    int ep = 1;
    int etp = 1;
    RankOrder order{Dim::tp, Dim::cp, Dim::ep, Dim::dp, Dim::pp};
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    int max_nodes_per_token = 0; ///< node-limited routing; 0 = unlimited
    std::vector<ExpertPlacement> expert_placement;

    /// Expert data-parallel degree under parallel folding: TP*CP*DP / (EP*ETP).
    int expertDp() const { return (tp * cp * dp) / (ep * etp); }
    bool operator==(const LayoutSpec&) const = default;
};

/// Where the expert popularity comes from: `published` = the spread measured for the router's
/// balancing method (RoutingSpec::balancing); the others are explicit choices or what-ifs.
enum class PopularityModel { uniform, zipf, histogram, published };

/// How the router was trained to balance its experts (docs/model.md, "Routing by balancing
/// method"): an auxiliary load-balancing loss (Switch/GShard/Megatron's aux_loss), DeepSeek's
/// auxiliary-loss-free expert bias, none at all, or `perfect`: the what-if of a router that
/// gives every expert exactly its share of every micro-batch (no spread, no sampling noise),
/// the lower bound on step time.
enum class BalancingMethod { aux_loss, aux_free, none, perfect };

struct RoutingSpec {
    BalancingMethod balancing = BalancingMethod::aux_loss;
    PopularityModel model = PopularityModel::published;
    double zipf_alpha = 1.0;
    std::string histogram_csv; ///< as written in the file (relative to the scenario)
    /// Loaded histogram: one row per MoE layer, or a single row for every layer.
    std::vector<std::vector<double>> histogram;
    double balance = 0.0; ///< 0 = raw popularity, 1 = perfectly uniform
    uint64_t seed = 1;
#ifdef MOE_SCHEMA_TEST_FIELD
    /// Only in the schema test's build of the format (test_schema_dummy): a field that nothing
    /// but its row in the schema table declares.
    int schema_test_field = 4;
#endif
    bool operator==(const RoutingSpec&) const = default;
};

struct Scenario {
    std::string name;
    std::string description;
    ClusterSpec cluster;
    ModelSpec model;
    TrainingSpec training;
    LayoutSpec layout;
    RoutingSpec routing;
    bool operator==(const Scenario&) const = default;
};

// Names used in files, messages and the CLI. Parsing returns nullopt for unknown names.
const char* toString(Precision p);
const char* toString(ScaleUpDomain d);
const char* toString(Fabric f);
const char* toString(FabricTopology t);
const char* toString(AttentionKind a);
const char* toString(Recompute r);
const char* toString(MlpKind k);
const char* toString(AttentionKernel k);
const char* toString(TpActivations t);
const char* toString(Fp8Recipe r);
const char* toString(DpOverlap o);
const char* toString(EpOverlap o);
const char* toString(MoeDispatcher d);
const char* toString(Dim d);
const char* toString(PipelineSchedule s);
const char* toString(PopularityModel m);
const char* toString(BalancingMethod b);
std::string toString(const RankOrder& order); ///< "tp-cp-ep-dp-pp"
/// The fabric as people write it in prose and tables: "InfiniBand", "Ethernet".
const char* displayName(Fabric f);

std::optional<Precision> parsePrecision(const std::string& s);
std::optional<ScaleUpDomain> parseScaleUpDomain(const std::string& s);
std::optional<Fabric> parseFabric(const std::string& s);
std::optional<FabricTopology> parseFabricTopology(const std::string& s);
std::optional<AttentionKind> parseAttentionKind(const std::string& s);
std::optional<Recompute> parseRecompute(const std::string& s);
std::optional<MlpKind> parseMlpKind(const std::string& s);
std::optional<AttentionKernel> parseAttentionKernel(const std::string& s);
std::optional<TpActivations> parseTpActivations(const std::string& s);
std::optional<Fp8Recipe> parseFp8Recipe(const std::string& s);
std::optional<Dim> parseDim(const std::string& s);
std::optional<PipelineSchedule> parsePipelineSchedule(const std::string& s);
std::optional<PopularityModel> parsePopularityModel(const std::string& s);
std::optional<BalancingMethod> parseBalancingMethod(const std::string& s);
/// Parses "tp-cp-ep-dp-pp"; every one of the five dimensions exactly once.
std::optional<RankOrder> parseRankOrder(const std::string& s);

/// Degree of one dimension of the layout.
int degree(const LayoutSpec& layout, Dim d);

} // namespace moe
