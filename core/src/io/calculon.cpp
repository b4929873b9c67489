#include "moe/io/calculon.h"

#include "moe/format.h"
#include "moe/json_writer.h"
#include "moe/placement.h"
#include "moe/scenario_io.h"
#include "moe/topology.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

namespace moe::io {

namespace {

using json = nlohmann::ordered_json;

constexpr double kBytesPerGiB = 1073741824.0;

// Calculon's own calibration, from its system file for an 8-GPU H100 (systems/h100_80g_nvl8.json
// in github.com/calculon-ai/calculon): efficiency curves of the matrix and vector units and of
// HBM, and its NVLink (0.65) and InfiniBand (0.9) collective efficiencies. The export gives
// Calculon the scenario's hardware and workload and lets it apply its own calibration, so the
// comparison is between the two models, not between two copies of one.
const json kMatrixEfficiency = json::parse("[[128, 0.95], [16, 0.9], [1, 0.6], [0, 0.1]]");
const json kVectorEfficiency = json::parse("[[16, 0.95], [1, 0.5], [0, 0.1]]");
const json kHbmEfficiency = json::parse("[[100, 0.90], [10, 0.75], [1, 0.6], [0, 0.3]]");
constexpr double kCalculonNvlinkEfficiency = 0.65;
constexpr double kCalculonFabricEfficiency = 0.9;
// Calculon's H100 file gives the vector (non-tensor-core) units 120 TFLOPS for 1000 matrix
// TFLOPS; the scenario has no such figure, so the same share is used for every GPU.
constexpr double kVectorShareOfMatrix = 120.0 / 1000.0;
// Its share of SMs that overlapped communication takes, which the scenario's model also charges
// (20 of 132 H100 SMs, evaluate.cpp), as Calculon's processor_usage.
constexpr double kCommSmShare = 20.0 / 132.0;

/// Calculon's network ops: (scalar, offset) per operation, as in its system files.
json networkOps(bool all_reduce_offset) {
    json ops;
    ops["p2p"] = json::array({1.0, nullptr});
    ops["reduce_scatter"] = json::array({1.0, 0});
    ops["all_gather"] = json::array({1.0, 0});
    ops["all_reduce"] = json::array({1.0, all_reduce_offset ? 1 : 0});
    return ops;
}

const char* calculonDatatype(Precision p) {
    switch (p) {
    case Precision::bf16:
        return "bfloat16";
    case Precision::fp16:
        return "float16";
    case Precision::fp8:
        return "float8";
    case Precision::fp32:
        return "float32";
    }
    return "bfloat16";
}

/// Rounds away the last bits a unit conversion leaves (74.5058... GiB back to 80 GB).
double tidy(double v) {
    if (v == 0 || !std::isfinite(v))
        return v;
    const double scale = std::pow(10.0, 9 - std::ceil(std::log10(std::abs(v))));
    return std::round(v * scale) / scale;
}

/// application (model) JSON: the dense part of the model. Calculon's MLP has two matrices (h x
/// ff, ff x h); the scenario's FFNs are SwiGLU with three (two h x f, one f x h), so ff = 1.5 f
/// keeps FLOPs and weights. A MoE layer becomes the dense MLP a token runs through: top-k routed
/// experts plus the shared ones. Calculon's blocks are all alike, so dense and MoE layers are
/// averaged over the layers.
json calculonModel(const Scenario& s, std::vector<std::string>& notes) {
    const ModelSpec& m = s.model;
    const LayoutSpec& l = s.layout;
    const double moe_ffn = m.isMoe()
                               ? static_cast<double>(m.top_k) * m.expert_ffn_hidden +
                                     static_cast<double>(m.shared_experts) * m.effectiveSharedFfn()
                               : 0.0;
    const int dense_layers = m.isMoe() ? m.dense_layers : m.layers;
    const double mean_ffn =
        (static_cast<double>(dense_layers) * m.ffn_hidden + (m.layers - dense_layers) * moe_ffn) /
        m.layers;
    // Calculon splits feedforward over TP: a multiple of TP.
    const int tp = l.tp;
    const int feedforward = static_cast<int>(std::lround(1.5 * mean_ffn / tp)) * tp;
    const int attn_size =
        m.attention == AttentionKind::mla ? m.mla.v_head_dim : m.effectiveHeadDim();
    // Context parallelism splits each sequence into cp pieces: Calculon sees cp times the
    // sequences, each cp times shorter, on cp times the data parallelism (same tokens per GPU;
    // attention's quadratic part shrinks, as it does per CP rank).
    const int cp = l.cp;
    json model;
    model["hidden"] = m.hidden;
    model["feedforward"] = feedforward;
    model["seq_size"] = m.seq_len / cp;
    model["attn_heads"] = m.heads;
    model["attn_size"] = attn_size;
    model["num_blocks"] = m.layers;
    if (m.isMoe())
        notes.push_back(
            "MoE: Calculon has no experts or routing. Each MoE layer is exported as the dense MLP "
            "one token runs through (top-" +
            std::to_string(m.top_k) + " x " + std::to_string(m.expert_ffn_hidden) +
            (m.shared_experts > 0 ? " + " + std::to_string(m.shared_experts) + " shared x " +
                                        std::to_string(m.effectiveSharedFfn())
                                  : std::string()) +
            "), averaged with the dense layers: the FLOPs match, but expert weights, expert "
            "parallelism (EP " +
            std::to_string(l.ep) +
            "), the all-to-all, routing skew and the straggler are not in Calculon's figures");
    notes.push_back("FFN: SwiGLU of " + formatNumber(mean_ffn) +
                    " (mean over layers) exported as Calculon's 2-matrix MLP of feedforward " +
                    std::to_string(feedforward) + " (1.5x: same FLOPs and weights)");
    if (m.attention == AttentionKind::mla)
        notes.push_back("MLA: exported as multi-head attention of " + std::to_string(m.heads) +
                        " heads x " + std::to_string(attn_size) +
                        " (Calculon has no latent attention; projection FLOPs and KV memory "
                        "differ)");
    else if (m.kv_heads != m.heads && m.kv_heads != 1)
        notes.push_back("GQA: " + std::to_string(m.kv_heads) +
                        " KV heads exported as multi-head "
                        "attention (Calculon has multi-head and multi-query only)");
    notes.push_back("vocabulary (" + std::to_string(m.vocab) +
                    "), embedding and output head: Calculon counts transformer blocks only");

    return model;
}

/// execution JSON: the layout on Calculon's two network tiers, batch, recompute, sharding.
json calculonExecution(const Scenario& s, std::vector<std::string>& notes) {
    const ModelSpec& m = s.model;
    const LayoutSpec& l = s.layout;
    const ClusterSpec& c = s.cluster;
    const int cp = l.cp;
    const Placement placement = placeLayout(s);
    auto tier = [&](GroupKind k) {
        return placement.spanOf(k).link_class == LinkClass::scale_up ? 0 : 1;
    };
    const int data_par = l.dp * cp;
    json exe;
    exe["num_procs"] = c.gpuCount();
    exe["tensor_par"] = l.tp;
    exe["pipeline_par"] = l.pp;
    exe["data_par"] = data_par;
    exe["tensor_par_net"] = tier(GroupKind::tp);
    exe["pipeline_par_net"] = tier(GroupKind::pp);
    exe["data_par_net"] =
        cp > 1 ? std::max(tier(GroupKind::dp), tier(GroupKind::cp)) : tier(GroupKind::dp);
    exe["batch_size"] = s.training.global_batch * cp;
    exe["microbatch_size"] = s.training.micro_batch;
    exe["datatype"] = calculonDatatype(m.weight_precision);
    exe["fused_activation"] = true;
    exe["attention_type"] =
        m.attention == AttentionKind::gqa && m.kv_heads == 1 ? "multiquery" : "multihead";
    exe["activation_recompute"] = s.training.recompute == Recompute::full        ? "full"
                                  : s.training.recompute == Recompute::selective ? "attn_only"
                                                                                 : "none";
    exe["pipeline_interleaving"] = l.schedule == PipelineSchedule::interleaved ? l.vpp : 1;
    exe["optimizer_sharding"] = s.training.zero_stage >= 1 && data_par > 1;
    exe["tensor_par_comm_type"] = "rs_ag"; // sequence parallelism, as the scenario's TP
    exe["tensor_par_overlap"] = "none";
    exe["seq_par_ag_redo"] = false;
    exe["data_par_overlap"] = data_par > 1; // the scenario hides the gradient sync too
    exe["weight_offload"] = false;
    exe["activations_offload"] = false;
    exe["optimizer_offload"] = false;
    exe["training"] = true;
    if (cp > 1)
        notes.push_back("CP " + std::to_string(cp) + ": folded into data parallelism (" +
                        std::to_string(data_par) + ") with sequences " + std::to_string(cp) +
                        "x shorter (Calculon has no context parallelism)");
    if (l.schedule == PipelineSchedule::dualpipe || l.schedule == PipelineSchedule::gpipe)
        notes.push_back(std::string("schedule ") + toString(l.schedule) + ": Calculon runs 1F1B");
    if (s.training.recompute == Recompute::selective)
        notes.push_back("selective recompute exported as Calculon's attn_only");
    if (s.training.zero_stage > 1)
        notes.push_back("ZeRO " + std::to_string(s.training.zero_stage) +
                        ": Calculon shards the optimizer state only (stage 1)");
    if (m.compute_precision != m.weight_precision)
        notes.push_back(std::string("datatype ") + calculonDatatype(m.weight_precision) +
                        " for everything: Calculon has one datatype, the scenario computes in " +
                        toString(m.compute_precision) + " with " + toString(m.weight_precision) +
                        " weights");

    return exe;
}

/// system JSON: the scenario's hardware with Calculon's own efficiencies.
json calculonSystem(const ClusterSpec& c, std::vector<std::string>& notes) {
    json sys;
    auto unit = [](double tflops, const json& efficiency) {
        json u;
        u["tflops"] = tflops;
        u["gflops_efficiency"] = efficiency;
        return u;
    };
    const double bf16 = c.gpu.bf16_tflops;
    sys["matrix"]["float8"] = unit(c.gpu.fp8_tflops, kMatrixEfficiency);
    sys["matrix"]["float16"] = unit(bf16, kMatrixEfficiency);
    sys["matrix"]["bfloat16"] = unit(bf16, kMatrixEfficiency);
    for (const char* type : {"float8", "float16", "bfloat16"})
        sys["vector"][type] = unit(tidy(bf16 * kVectorShareOfMatrix), kVectorEfficiency);
    sys["mem1"]["GiB"] = c.gpu.hbm_gb * 1e9 / kBytesPerGiB;
    sys["mem1"]["GBps"] = c.gpu.hbm_tbps * 1000;
    sys["mem1"]["MB_efficiency"] = kHbmEfficiency;
    // No offload in the scenario: an empty second memory tier.
    sys["mem2"]["GiB"] = 0;
    sys["mem2"]["GBps"] = 1;
    sys["mem2"]["MB_efficiency"] = json::parse("[[0, 1.0]]");
    sys["processing_mode"] = "roofline";
    json up;
    up["bandwidth"] = c.gpu.scale_up_gbps;
    up["efficiency"] = kCalculonNvlinkEfficiency;
    up["size"] = c.gpusPerScaleUpDomain();
    up["latency"] = c.gpu.scale_up_latency_us * 1e-6;
    up["ops"] = networkOps(true);
    up["must_be_filled"] = false;
    up["processor_usage"] = kCommSmShare;
    json out;
    // Calculon's network bandwidth is per processor: the node's NICs shared by its GPUs, at
    // line rate (its efficiency stands for what is achievable).
    out["bandwidth"] = c.nic.speed_gbit / 8.0 * c.nics_per_node / c.gpus_per_node;
    out["efficiency"] = kCalculonFabricEfficiency;
    out["size"] = c.gpuCount();
    out["latency"] = c.nic.latency_us * 1e-6;
    out["ops"] = networkOps(false);
    out["must_be_filled"] = false;
    out["processor_usage"] = kCommSmShare;
    sys["networks"] = json::array({up, out});
    notes.push_back("network: two tiers, NVLink (" + std::to_string(c.gpusPerScaleUpDomain()) +
                    " GPUs) and the fabric; oversubscription, rails and leaf/spine hops are not "
                    "in Calculon's model");

    return sys;
}

} // namespace

CalculonExport exportCalculon(const Scenario& s) {
    CalculonExport result;
    if (s.model.weight_precision == Precision::fp32) {
        Diagnostic d;
        d.field = "model.precision.weights";
        d.message = "Calculon needs TFLOPS for its datatype and the scenario has none for FP32 "
                    "weights; export a bf16, fp16 or fp8 scenario";
        result.diagnostics.push_back(std::move(d));
        return result;
    }
    CalculonFiles files;
    const json model = calculonModel(s, files.notes);
    const json exe = calculonExecution(s, files.notes);
    const json sys = calculonSystem(s.cluster, files.notes);
    files.model_json = model.dump(2) + "\n";
    files.execution_json = exe.dump(2) + "\n";
    files.system_json = sys.dump(2) + "\n";
    result.files = std::move(files);
    return result;
}

// ---------------------------------------------------------------------------------------------
// Import

namespace {

struct Reader {
    CalculonImport& result;
    bool ok = true;

    void error(const std::string& file, int line, const std::string& message) {
        Diagnostic d;
        d.file = file;
        d.line = line;
        d.message = message;
        result.diagnostics.push_back(std::move(d));
        ok = false;
    }

    /// The line where "key" is first written, for messages (nlohmann-json keeps no positions).
    static int lineOfKey(const std::string& text, const std::string& key) {
        const std::size_t at = text.find("\"" + key + "\"");
        if (at == std::string::npos)
            return 0;
        return 1 + static_cast<int>(std::count(
                       text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    }

    std::optional<json> parse(const std::string& text, const std::string& file) {
        try {
            json j = json::parse(text);
            if (!j.is_object()) {
                error(file, 1, "expected a JSON object");
                return std::nullopt;
            }
            return j;
        } catch (const json::parse_error& e) {
            const std::size_t at = std::min(e.byte, text.size());
            const int line =
                1 + static_cast<int>(std::count(
                        text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
            error(file, line, std::string("not valid JSON: ") + e.what());
            return std::nullopt;
        }
    }

    const json* field(const json& j, const std::string& key, const std::string& file) {
        const auto it = j.find(key);
        if (it == j.end()) {
            error(file, 0, "missing key \"" + key + "\"");
            return nullptr;
        }
        return &*it;
    }

    std::optional<int64_t> integer(const json& j, const std::string& key, const std::string& file,
                                   const std::string& text, int64_t min = 1) {
        const json* v = field(j, key, file);
        if (!v)
            return std::nullopt;
        if (!v->is_number_integer() || v->get<int64_t>() < min) {
            error(file, lineOfKey(text, key),
                  "\"" + key + "\": expected a whole number of at least " + std::to_string(min) +
                      ", got " + v->dump());
            return std::nullopt;
        }
        return v->get<int64_t>();
    }

    std::optional<double> number(const json& j, const std::string& key, const std::string& file,
                                 const std::string& text) {
        const json* v = field(j, key, file);
        if (!v)
            return std::nullopt;
        if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < 0) {
            error(file, lineOfKey(text, key),
                  "\"" + key + "\": expected a non-negative number, got " + v->dump());
            return std::nullopt;
        }
        return v->get<double>();
    }

    std::optional<std::string> choice(const json& j, const std::string& key,
                                      const std::vector<std::string>& choices,
                                      const std::string& file, const std::string& text) {
        const json* v = field(j, key, file);
        if (!v)
            return std::nullopt;
        const std::string value = v->is_string() ? v->get<std::string>() : v->dump();
        if (!v->is_string() || std::find(choices.begin(), choices.end(), value) == choices.end()) {
            std::string known;
            for (const std::string& c : choices)
                known += (known.empty() ? "" : ", ") + c;
            error(file, lineOfKey(text, key),
                  "\"" + key + "\": expected one of " + known + ", got " + v->dump());
            return std::nullopt;
        }
        return value;
    }

    std::optional<bool> boolean(const json& j, const std::string& key, const std::string& file,
                                const std::string& text) {
        const json* v = field(j, key, file);
        if (!v)
            return std::nullopt;
        if (!v->is_boolean()) {
            error(file, lineOfKey(text, key),
                  "\"" + key + "\": expected true or false, got " + v->dump());
            return std::nullopt;
        }
        return v->get<bool>();
    }
};

/// The application (model) file's fields.
struct CalculonModel {
    std::optional<int64_t> hidden, feedforward, seq, heads, attn_size, blocks;
};

CalculonModel readCalculonModel(Reader& r, const json& model, const std::string& mf,
                                const std::string& model_text) {
    CalculonModel f;
    f.hidden = r.integer(model, "hidden", mf, model_text);
    f.feedforward = r.integer(model, "feedforward", mf, model_text);
    f.seq = r.integer(model, "seq_size", mf, model_text);
    f.heads = r.integer(model, "attn_heads", mf, model_text);
    f.attn_size = r.integer(model, "attn_size", mf, model_text);
    f.blocks = r.integer(model, "num_blocks", mf, model_text);
    return f;
}

/// The execution file's fields.
struct CalculonExecution {
    std::optional<int64_t> procs, tp, pp, dp, batch, micro, interleaving;
    std::optional<std::string> datatype, attention, recompute;
    std::optional<bool> sharding, training;
};

CalculonExecution readCalculonExecution(Reader& r, const json& exe, const std::string& ef,
                                        const std::string& exe_text) {
    CalculonExecution f;
    f.procs = r.integer(exe, "num_procs", ef, exe_text);
    f.tp = r.integer(exe, "tensor_par", ef, exe_text);
    f.pp = r.integer(exe, "pipeline_par", ef, exe_text);
    f.dp = r.integer(exe, "data_par", ef, exe_text);
    f.batch = r.integer(exe, "batch_size", ef, exe_text);
    f.micro = r.integer(exe, "microbatch_size", ef, exe_text);
    f.datatype =
        r.choice(exe, "datatype", {"bfloat16", "float16", "float8", "float32"}, ef, exe_text);
    f.attention = r.choice(exe, "attention_type", {"multihead", "multiquery"}, ef, exe_text);
    f.recompute =
        r.choice(exe, "activation_recompute", {"full", "attn_only", "none"}, ef, exe_text);
    f.interleaving = r.integer(exe, "pipeline_interleaving", ef, exe_text);
    f.sharding = r.boolean(exe, "optimizer_sharding", ef, exe_text);
    f.training = r.boolean(exe, "training", ef, exe_text);
    return f;
}

/// The system file's fields: compute, HBM and the two network tiers.
struct CalculonSystem {
    const json* matrix = nullptr;
    std::optional<double> gib, gbps, up_bw, up_latency, out_bw, out_latency;
    std::optional<int64_t> up_size;
};

/// Reads the system file; nullopt when it, or a file read before it, has an error.
std::optional<CalculonSystem> readCalculonSystem(Reader& r, const json& sys, const std::string& sf,
                                                 const std::string& sys_text) {
    CalculonSystem f;
    f.matrix = r.field(sys, "matrix", sf);
    const json* mem1 = r.field(sys, "mem1", sf);
    const json* networks = r.field(sys, "networks", sf);
    if (!r.ok)
        return std::nullopt;
    if (!networks->is_array() || networks->size() < 2 || !(*networks)[0].is_object() ||
        !(*networks)[1].is_object()) {
        r.error(sf, Reader::lineOfKey(sys_text, "networks"),
                "\"networks\": expected two tiers (NVLink, then the fabric)");
        return std::nullopt;
    }
    if (!mem1->is_object() || !f.matrix->is_object()) {
        r.error(sf, Reader::lineOfKey(sys_text, "mem1"), "\"matrix\" and \"mem1\" must be objects");
        return std::nullopt;
    }
    f.gib = r.number(*mem1, "GiB", sf, sys_text);
    f.gbps = r.number(*mem1, "GBps", sf, sys_text);
    const json& up = (*networks)[0];
    const json& out = (*networks)[1];
    f.up_bw = r.number(up, "bandwidth", sf, sys_text);
    f.up_size = r.integer(up, "size", sf, sys_text);
    f.up_latency = r.number(up, "latency", sf, sys_text);
    f.out_bw = r.number(out, "bandwidth", sf, sys_text);
    f.out_latency = r.number(out, "latency", sf, sys_text);
    if (!r.ok)
        return std::nullopt;
    return f;
}

/// Calculon's own checks (llm.py Execution.__init__) and the system's fit to the execution.
void checkCalculonConsistency(Reader& r, const CalculonExecution& e, const CalculonSystem& sys,
                              const CalculonImportOptions& o, const std::string& exe_text,
                              const std::string& sys_text) {
    const std::string& ef = o.execution_label;
    const std::string& sf = o.system_label;
    if (*e.procs != *e.tp * *e.pp * *e.dp)
        r.error(ef, Reader::lineOfKey(exe_text, "num_procs"),
                "\"num_procs\" " + std::to_string(*e.procs) +
                    " is not tensor x pipeline x data = " + std::to_string(*e.tp * *e.pp * *e.dp) +
                    " (Calculon refuses it too)");
    if (*e.batch % *e.dp != 0 || (*e.batch / *e.dp) % *e.micro != 0)
        r.error(ef, Reader::lineOfKey(exe_text, "batch_size"),
                "\"batch_size\" " + std::to_string(*e.batch) +
                    " is not a whole number of micro-batches per data-parallel rank");
    if (!*e.training)
        r.error(ef, Reader::lineOfKey(exe_text, "training"),
                "\"training\": false is inference; the planner models training");
    const std::string type_key = *e.datatype == "float32" ? "" : *e.datatype;
    if (type_key.empty() || !sys.matrix->contains(type_key))
        r.error(sf, Reader::lineOfKey(sys_text, "matrix"),
                "\"matrix\" has no \"" + *e.datatype + "\" entry for the execution's datatype" +
                    (type_key.empty() ? " (FP32 has no TFLOPS field in the scenario)" : ""));
    if (*sys.up_size < 1 || *e.procs % *sys.up_size != 0)
        r.error(sf, Reader::lineOfKey(sys_text, "size"),
                "the first network tier's size " + std::to_string(*sys.up_size) +
                    " does not divide the " + std::to_string(*e.procs) + " processors");
}

/// The model: a dense transformer with Calculon's sizes and datatype.
void applyCalculonModel(Scenario& s, const CalculonModel& f, const CalculonExecution& e,
                        const CalculonImportOptions& o, std::vector<std::string>& notes) {
    ModelSpec& m = s.model;
    m = ModelSpec{};
    m.name = std::filesystem::path(o.model_label).stem().string();
    m.vocab = o.base.model.vocab;
    m.layers = static_cast<int>(*f.blocks);
    m.hidden = static_cast<int>(*f.hidden);
    m.heads = static_cast<int>(*f.heads);
    m.kv_heads = *e.attention == "multiquery" ? 1 : m.heads;
    m.head_dim = m.heads > 0 && m.hidden % m.heads == 0 && m.hidden / m.heads == *f.attn_size
                     ? 0
                     : static_cast<int>(*f.attn_size);
    m.seq_len = static_cast<int>(*f.seq);
    // Calculon's 2-matrix MLP of width ff is a SwiGLU of 2/3 ff (same FLOPs and weights), kept
    // a multiple of TP as the scenario requires.
    m.ffn_hidden =
        static_cast<int>(std::lround(*f.feedforward * 2.0 / 3.0 / static_cast<double>(*e.tp))) *
        static_cast<int>(*e.tp);
    const Precision p = *e.datatype == "bfloat16"  ? Precision::bf16
                        : *e.datatype == "float16" ? Precision::fp16
                                                   : Precision::fp8;
    m.weight_precision = m.activation_precision = m.dispatch_precision = m.compute_precision = p;
    notes.push_back("model: a dense transformer (Calculon has no experts); SwiGLU FFN " +
                    std::to_string(m.ffn_hidden) + " = 2/3 of Calculon's feedforward " +
                    std::to_string(*f.feedforward));
    notes.push_back("vocabulary " + std::to_string(m.vocab) +
                    ", routing and economics from the base scenario (not in Calculon's "
                    "files)");
}

/// Batch, recompute, optimizer sharding and the TP/PP/DP layout.
void applyCalculonExecution(Scenario& s, const CalculonExecution& e) {
    TrainingSpec& t = s.training;
    t.global_batch = *e.batch;
    t.micro_batch = static_cast<int>(*e.micro);
    t.recompute = *e.recompute == "full"        ? Recompute::full
                  : *e.recompute == "attn_only" ? Recompute::selective
                                                : Recompute::none;
    t.zero_stage = *e.sharding ? 1 : 0;

    LayoutSpec& l = s.layout;
    l = LayoutSpec{};
    l.tp = static_cast<int>(*e.tp);
    l.pp = static_cast<int>(*e.pp);
    l.dp = static_cast<int>(*e.dp);
    l.vpp = static_cast<int>(*e.interleaving);
    l.schedule = l.vpp > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b;
}

/// The cluster: the base's, reshaped to Calculon's processor count and NVLink tier, with its
/// figures where they differ.
void applyCalculonSystem(Scenario& s, const CalculonSystem& f, int64_t procs,
                         std::vector<std::string>& notes) {
    ClusterSpec& c = s.cluster;
    const json& matrix = *f.matrix;
    if (c.gpusPerScaleUpDomain() != *f.up_size) {
        c.gpus_per_node = static_cast<int>(*f.up_size);
        c.scale_up_domain = ScaleUpDomain::node;
        c.rack_nodes.clear();
        notes.push_back("cluster: nodes of " + std::to_string(*f.up_size) +
                        " GPUs (Calculon's first network tier)");
    }
    c.nodes = static_cast<int>(procs / c.gpus_per_node);
    c.nics_per_node = std::min(c.nics_per_node, c.gpus_per_node);
    for (const char* half : {"float16", "bfloat16"})
        if (matrix.contains(half))
            c.gpu.bf16_tflops = matrix[half].value("tflops", c.gpu.bf16_tflops);
    if (matrix.contains("float8"))
        c.gpu.fp8_tflops = matrix["float8"].value("tflops", c.gpu.fp8_tflops);
    c.gpu.hbm_gb = tidy(*f.gib * kBytesPerGiB / 1e9);
    c.gpu.hbm_tbps = tidy(*f.gbps / 1000);
    c.gpu.scale_up_gbps = *f.up_bw;
    c.gpu.scale_up_latency_us = tidy(*f.up_latency * 1e6);
    // Calculon's fabric bandwidth is per processor at line rate: back to one NIC's achievable
    // rate with the base NIC's achievable share.
    const double share = c.nic.bandwidth_gbps / (c.nic.speed_gbit / 8.0);
    c.nic.bandwidth_gbps = tidy(*f.out_bw * c.gpus_per_node / c.nics_per_node * share);
    c.nic.latency_us = tidy(*f.out_latency * 1e6);
    notes.push_back("efficiencies in Calculon's system file are its own calibration; the "
                    "planner applies its own");
}

} // namespace

CalculonImport importCalculon(const std::string& model_text, const std::string& exe_text,
                              const std::string& sys_text, const CalculonImportOptions& o) {
    CalculonImport result;
    Reader r{result};
    const std::optional<json> model = r.parse(model_text, o.model_label);
    const std::optional<json> exe = r.parse(exe_text, o.execution_label);
    const std::optional<json> sys = r.parse(sys_text, o.system_label);
    if (!model || !exe || !sys)
        return result;
    const CalculonModel model_fields = readCalculonModel(r, *model, o.model_label, model_text);
    const CalculonExecution exe_fields =
        readCalculonExecution(r, *exe, o.execution_label, exe_text);
    const std::optional<CalculonSystem> sys_fields =
        readCalculonSystem(r, *sys, o.system_label, sys_text);
    if (!sys_fields)
        return result;
    checkCalculonConsistency(r, exe_fields, *sys_fields, o, exe_text, sys_text);
    if (!r.ok)
        return result;

    Scenario s = o.base;
    applyCalculonModel(s, model_fields, exe_fields, o, result.notes);
    applyCalculonExecution(s, exe_fields);
    applyCalculonSystem(s, *sys_fields, *exe_fields.procs, result.notes);

    LoadResult loaded =
        loadScenarioTextWithOverrides(toYaml(s), o.model_label, o.base_dir, o.overrides);
    for (Diagnostic d : loaded.diagnostics) {
        if (d.file != "--set") {
            d.file = o.execution_label;
            d.line = 0;
            d.column = 0;
            d.message = "the imported scenario: " + d.message;
        }
        result.diagnostics.push_back(std::move(d));
    }
    result.scenario = std::move(loaded.scenario);
    return result;
}

} // namespace moe::io
