#include "megatron_rules.h"

#include "moe/catalog.h"
#include "moe/edits.h"
#include "moe/format.h"
#include "moe/json_writer.h"
#include "moe/scenario_io.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <sstream>

namespace moe::io {

const char* toString(FlagStatus status) {
    switch (status) {
    case FlagStatus::mapped:
        return "mapped";
    case FlagStatus::not_modelled:
        return "recognized, not modelled yet";
    case FlagStatus::no_effect:
        return "no effect on the estimate";
    case FlagStatus::unknown:
        return "unknown, ignored";
    }
    return "?";
}

namespace megatron {

namespace {

// ---------------------------------------------------------------------------------------------
// --moe-layer-freq: an integer N (every N-th layer is MoE) or a Python list expression such as
// "([0]*3+[1]*58)", evaluated here without Python: lists of integers, +, *, parentheses.

struct PatternValue {
    bool is_list = false;
    int64_t number = 0;
    std::vector<int> list;
};

class PatternParser {
public:
    explicit PatternParser(const std::string& text)
        : text_(text) {}

    std::optional<PatternValue> parse(std::string& error) {
        std::optional<PatternValue> v = sum();
        skipSpace();
        if (v && pos_ != text_.size())
            fail("unexpected '" + text_.substr(pos_, 1) + "'");
        if (!error_.empty()) {
            error = error_;
            return std::nullopt;
        }
        return v;
    }

private:
    // Bounds the work a hostile expression can cause ("[1]*10**9" is refused, not allocated).
    static constexpr std::size_t kMaxLength = 100000;

    void skipSpace() {
        while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
            ++pos_;
    }
    void fail(const std::string& why) {
        if (error_.empty())
            error_ = why;
    }

    std::optional<PatternValue> sum() {
        std::optional<PatternValue> left = product();
        while (left) {
            skipSpace();
            if (pos_ >= text_.size() || text_[pos_] != '+')
                break;
            ++pos_;
            std::optional<PatternValue> right = product();
            if (!right)
                return std::nullopt;
            if (left->is_list != right->is_list) {
                fail("cannot add a list and a number");
                return std::nullopt;
            }
            if (left->is_list) {
                if (left->list.size() + right->list.size() > kMaxLength) {
                    fail("the pattern is longer than " + std::to_string(kMaxLength));
                    return std::nullopt;
                }
                left->list.insert(left->list.end(), right->list.begin(), right->list.end());
            } else {
                left->number += right->number;
            }
        }
        return left;
    }

    std::optional<PatternValue> product() {
        std::optional<PatternValue> left = atom();
        while (left) {
            skipSpace();
            if (pos_ >= text_.size() || text_[pos_] != '*')
                break;
            ++pos_;
            std::optional<PatternValue> right = atom();
            if (!right)
                return std::nullopt;
            if (left->is_list && right->is_list) {
                fail("cannot multiply two lists");
                return std::nullopt;
            }
            if (!left->is_list && !right->is_list) {
                left->number *= right->number;
                if (left->number > static_cast<int64_t>(kMaxLength))
                    return fail("number too large"), std::nullopt;
                continue;
            }
            const PatternValue& list = left->is_list ? *left : *right;
            const int64_t times = left->is_list ? right->number : left->number;
            if (times < 0 || list.list.size() * static_cast<std::size_t>(times) > kMaxLength) {
                fail("the pattern is longer than " + std::to_string(kMaxLength));
                return std::nullopt;
            }
            PatternValue repeated;
            repeated.is_list = true;
            for (int64_t k = 0; k < times; ++k)
                repeated.list.insert(repeated.list.end(), list.list.begin(), list.list.end());
            left = std::move(repeated);
        }
        return left;
    }

    std::optional<PatternValue> atom() {
        skipSpace();
        if (pos_ >= text_.size()) {
            fail("unexpected end");
            return std::nullopt;
        }
        const char c = text_[pos_];
        if (c == '(') {
            ++pos_;
            std::optional<PatternValue> inner = sum();
            skipSpace();
            if (pos_ >= text_.size() || text_[pos_] != ')') {
                fail("missing ')'");
                return std::nullopt;
            }
            ++pos_;
            return inner;
        }
        if (c == '[') {
            ++pos_;
            PatternValue v;
            v.is_list = true;
            skipSpace();
            while (pos_ < text_.size() && text_[pos_] != ']') {
                std::optional<PatternValue> item = sum();
                if (!item || item->is_list) {
                    fail("list items must be numbers");
                    return std::nullopt;
                }
                v.list.push_back(static_cast<int>(item->number));
                skipSpace();
                if (pos_ < text_.size() && text_[pos_] == ',')
                    ++pos_;
                skipSpace();
            }
            if (pos_ >= text_.size()) {
                fail("missing ']'");
                return std::nullopt;
            }
            ++pos_;
            return v;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) {
            PatternValue v;
            while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
                v.number = v.number * 10 + (text_[pos_++] - '0');
                if (v.number > static_cast<int64_t>(kMaxLength)) {
                    fail("number too large");
                    return std::nullopt;
                }
            }
            return v;
        }
        fail(std::string("unexpected '") + c + "'");
        return std::nullopt;
    }

    std::string text_;
    std::size_t pos_ = 0;
    std::string error_;
};

// ---------------------------------------------------------------------------------------------
// Import

/// A scenario with the model, training and layout reset to Megatron's defaults (what a run with
/// no such flags would do), keeping the base's cluster, routing, economics and optimizer.
Scenario megatronDefaults(const Scenario& base) {
    Scenario s;
    s.cluster = base.cluster;
    s.routing = base.routing;
    s.training.total_tokens = base.training.total_tokens;
    s.training.optimizer = base.training.optimizer;
    s.training.checkpoint_interval_s = base.training.checkpoint_interval_s;
    s.model.vocab = base.model.vocab;
    s.model.name = base.model.name;
    // Megatron trains in FP32 unless --bf16/--fp16; its distributed optimizer is opt-in; hidden
    // and attention dropout default to 0.1 (arguments.py).
    s.model.dropout = 0.1;
    s.training.zero_stage = 0;
    s.training.recompute = Recompute::none;
    return s;
}

void note(ImportState& st, const MegatronFlag* flag, const std::string& text) {
    st.notes.push_back((flag ? "line " + std::to_string(flag->line) + ": " : std::string()) + text);
}

void applyLayerFreq(ImportState& st, ModelSpec& m) {
    const MegatronFlag& f = *st.moe_layer_freq;
    const std::optional<std::string> text = single(st, f);
    if (!text)
        return;
    std::string error;
    const std::optional<PatternValue> pattern = PatternParser(*text).parse(error);
    if (!pattern) {
        st.error(f, "cannot read '" + *text + "': " + error +
                        " (expected N or a Python list expression such as ([0]*3+[1]*58))");
        return;
    }
    std::vector<int> moe(static_cast<std::size_t>(m.layers), 0);
    if (pattern->is_list) {
        if (static_cast<int>(pattern->list.size()) != m.layers) {
            st.error(f, "the pattern has " + std::to_string(pattern->list.size()) +
                            " entries for " + std::to_string(m.layers) +
                            " layers (--num-layers); Megatron requires one per layer");
            return;
        }
        for (std::size_t i = 0; i < moe.size(); ++i) {
            if (pattern->list[i] != 0 && pattern->list[i] != 1) {
                st.error(f, "pattern entries must be 0 (dense) or 1 (MoE)");
                return;
            }
            moe[i] = pattern->list[i];
        }
    } else {
        if (pattern->number < 1) {
            st.error(f, "the frequency must be at least 1");
            return;
        }
        // Megatron: layer i is a MoE layer when i % N == 0.
        for (std::size_t i = 0; i < moe.size(); ++i)
            moe[i] = static_cast<int64_t>(i) % pattern->number == 0 ? 1 : 0;
    }
    const int dense = static_cast<int>(std::count(moe.begin(), moe.end(), 0));
    const bool leading =
        std::all_of(moe.begin(), moe.begin() + dense, [](int v) { return v == 0; });
    m.dense_layers = dense;
    if (dense == m.layers) {
        st.error(f, "the pattern makes every layer dense; drop --num-experts for a dense model");
        return;
    }
    if (!leading)
        note(st, &f,
             "--moe-layer-freq " + *text + " interleaves " + std::to_string(dense) +
                 " dense layers among the MoE layers; the scenario puts them first "
                 "(model.dense_layers = " +
                 std::to_string(dense) +
                 ": same counts, so the same work, but pipeline stages may split differently)");
}

/// Reports the flags Megatron requires that the arguments lack; true when one is missing.
bool reportMissingRequired(ImportState& st, const std::set<std::string>& present) {
    for (const auto& [path, flag] : std::initializer_list<std::pair<const char*, const char*>>{
             {"model.layers", "--num-layers"},
             {"model.hidden", "--hidden-size"},
             {"model.heads", "--num-attention-heads"},
             {"model.seq_len", "--seq-length"}}) {
        if (st.origin.count(path) == 0 && present.count(flag) == 0) {
            Diagnostic d;
            d.file = st.options->file_label;
            d.field = path;
            d.message = std::string("missing ") + flag + " (Megatron requires it too)";
            st.diagnostics.push_back(std::move(d));
        }
    }
    return hasErrors(st.diagnostics);
}

/// FFN width, attention kind (MLA or GQA) and head sizes, with Megatron's defaults
/// (megatron/training/arguments.py, validate_args).
void finishDenseModel(ImportState& st) {
    ModelSpec& m = st.s.model;
    auto given = [&](const std::string& path) { return st.origin.count(path) > 0; };
    if (st.ffn) {
        m.ffn_hidden = *st.ffn;
    } else {
        m.ffn_hidden =
            st.swiglu ? static_cast<int>((4.0 * m.hidden * 2 / 3) / 64) * 64 : 4 * m.hidden;
        st.notes.push_back("model.ffn_hidden = " + std::to_string(m.ffn_hidden) +
                           ": Megatron's default (no --ffn-hidden-size)");
    }
    if (st.mla && st.gqa) {
        Diagnostic d;
        d.file = st.options->file_label;
        d.message = "--multi-latent-attention and --group-query-attention exclude each other "
                    "(Megatron refuses both)";
        st.diagnostics.push_back(std::move(d));
    }
    m.attention = st.mla ? AttentionKind::mla : AttentionKind::gqa;
    if (st.mla) {
        // arguments.py defaults for the MLA sizes not given (q-lora-rank None = no compression).
        const MlaDims megatron{0, 32, 128, 64, 128};
        const std::pair<const char*, int MlaDims::*> dims[] = {
            {"model.mla.q_lora_rank", &MlaDims::q_lora_rank},
            {"model.mla.kv_lora_rank", &MlaDims::kv_lora_rank},
            {"model.mla.qk_nope_head_dim", &MlaDims::qk_nope_head_dim},
            {"model.mla.qk_rope_head_dim", &MlaDims::qk_rope_head_dim},
            {"model.mla.v_head_dim", &MlaDims::v_head_dim}};
        for (const auto& [path, member] : dims)
            if (!given(path))
                m.mla.*member = megatron.*member;
    }
    // Without --group-query-attention Megatron ignores --num-query-groups (default 1 with it).
    m.kv_heads = st.gqa ? st.query_groups.value_or(1) : m.heads;
    if (st.query_groups && !st.gqa)
        st.notes.push_back("--num-query-groups without --group-query-attention: Megatron "
                           "ignores it, so kv_heads = heads");
    m.head_dim = 0;
    // MLA's head sizes are its own (--qk-head-dim, --v-head-dim); kv-channels plays no part.
    if (st.kv_channels && !st.mla &&
        (m.heads <= 0 || m.hidden % m.heads != 0 || *st.kv_channels != m.hidden / m.heads))
        m.head_dim = *st.kv_channels;
    if (!st.swiglu) {
        // Megatron builds the 2-matrix GeLU MLP without --swiglu.
        m.mlp = MlpKind::gelu;
        st.notes.push_back("no --swiglu: model.mlp = gelu (Megatron's 2-matrix GeLU MLP)" +
                           std::string(m.experts > 0 ? "; the scenario's experts stay SwiGLU, "
                                                       "so their work is counted 1.5x"
                                                     : ""));
    }
}

/// Expert sizes, top-k, the shared expert and the dense/MoE layer pattern.
void finishExperts(ImportState& st) {
    ModelSpec& m = st.s.model;
    if (m.experts > 0) {
        m.expert_ffn_hidden = st.moe_ffn.value_or(m.ffn_hidden);
        m.top_k = st.topk.value_or(2);
        if (st.shared_size && *st.shared_size > 0) {
            m.shared_experts = 1;
            m.shared_expert_ffn_hidden = *st.shared_size;
        }
        if (st.moe_layer_freq)
            applyLayerFreq(st, m);
    } else {
        m.top_k = 0;
        m.expert_ffn_hidden = 0;
        for (const char* path : {"model.expert_ffn_hidden", "model.top_k", "model.dense_layers",
                                 "model.shared_expert_ffn_hidden"}) {
            if (st.origin.count(path) > 0)
                st.notes.push_back(std::string(path) + ": ignored without --num-experts");
        }
    }
}

/// Expert-TP, rank order, virtual stages, schedule and DP (derived from the GPU count).
void finishLayout(ImportState& st, int gpus) {
    const ModelSpec& m = st.s.model;
    LayoutSpec& lay = st.s.layout;
    // ETP defaults to TP (arguments.py); a dense model has no expert grid.
    lay.etp = m.isMoe() ? st.etp.value_or(lay.tp) : 1;
    if (!m.isMoe())
        lay.ep = 1;
    if (st.tp_pp_dp_mapping)
        lay.order = *parseRankOrder("tp-cp-ep-pp-dp");
    if (st.virtual_stages) {
        lay.vpp = *st.virtual_stages;
    } else if (st.layers_per_virtual_stage) {
        const int per_rank = lay.pp > 0 ? m.layers / lay.pp : 0;
        if (lay.pp <= 0 || m.layers % lay.pp != 0 || per_rank % *st.layers_per_virtual_stage != 0) {
            Diagnostic d;
            d.file = st.options->file_label;
            d.line = st.origin["layout.vpp"].line;
            d.field = "layout.vpp";
            d.message = "--num-layers-per-virtual-pipeline-stage " +
                        std::to_string(*st.layers_per_virtual_stage) + " does not divide the " +
                        std::to_string(per_rank) + " layers of each of the " +
                        std::to_string(lay.pp) + " pipeline stages";
            st.diagnostics.push_back(std::move(d));
        } else {
            lay.vpp = per_rank / *st.layers_per_virtual_stage;
        }
    }
    lay.schedule = lay.vpp > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b;
    const int model_parallel = lay.tp * lay.cp * lay.pp;
    lay.dp = model_parallel > 0 && gpus % model_parallel == 0 ? gpus / model_parallel : 1;
    if (model_parallel <= 0 || gpus % model_parallel != 0) {
        Diagnostic d;
        d.file = st.options->file_label;
        d.field = "layout.dp";
        d.message = "TP x CP x PP = " + std::to_string(model_parallel) + " does not divide the " +
                    std::to_string(gpus) + " GPUs of the cluster (Megatron derives DP from it)";
        st.diagnostics.push_back(std::move(d));
    }
}

/// Global batch (default micro-batch x DP) and the tokens of the run.
void finishBatch(ImportState& st) {
    TrainingSpec& t = st.s.training;
    t.global_batch = st.global_batch.value_or(static_cast<int64_t>(t.micro_batch) * st.s.layout.dp);
    if (!st.global_batch)
        st.notes.push_back("training.global_batch = " + std::to_string(t.global_batch) +
                           ": Megatron's default, micro-batch x DP");
    if (st.train_samples)
        t.total_tokens = static_cast<double>(*st.train_samples) * st.s.model.seq_len;
    else if (st.train_iters)
        t.total_tokens = static_cast<double>(*st.train_iters) * t.global_batch * st.s.model.seq_len;
}

/// Precision, optimizer sharding (ZeRO stage) and recomputation.
void finishPrecisionAndMemory(ImportState& st) {
    ModelSpec& m = st.s.model;
    TrainingSpec& t = st.s.training;
    // Precision: FP32 unless --bf16/--fp16 (Megatron's default); FP8 GEMMs with --fp8-format.
    const Precision half = st.fp16 ? Precision::fp16 : st.bf16 ? Precision::bf16 : Precision::fp32;
    m.weight_precision = m.activation_precision = m.dispatch_precision = half;
    m.compute_precision = st.fp8 ? Precision::fp8 : half;
    m.grad_precision = st.grads_bf16 ? Precision::bf16 : Precision::fp32;
    if (!st.fp16 && !st.bf16)
        st.notes.push_back("no --bf16 or --fp16: Megatron trains in FP32");

    // ZeRO: the distributed optimizer shards the optimizer state (stage 1); Megatron-FSDP's
    // sharding strategy names what else is sharded.
    if (st.fsdp) {
        const std::map<std::string, int> stage = {
            {"no_shard", 0}, {"optim", 1}, {"optim_grads", 2}, {"optim_grads_params", 3}};
        t.zero_stage = stage.at(st.sharding);
    } else {
        t.zero_stage = st.distributed_optimizer ? 1 : 0;
    }
    // Megatron overlaps neither unless asked; --overlap-param-gather requires
    // --overlap-grad-reduce (arguments.py asserts it), so alone it counts as both.
    t.dp_overlap = st.overlap_param_gather  ? DpOverlap::grad_reduce_and_param_gather
                   : st.overlap_grad_reduce ? DpOverlap::grad_reduce
                                            : DpOverlap::none;
    t.tp_activations =
        st.sequence_parallel ? TpActivations::sequence_parallel : TpActivations::replicated;
    t.ep_overlap = st.overlap_moe_ep_comm ? EpOverlap::combined_1f1b : EpOverlap::none;
    t.moe_dispatcher = st.dispatcher_type != "flex"    ? MoeDispatcher::alltoall
                       : st.flex_backend == "hybridep" ? MoeDispatcher::hybridep
                                                       : MoeDispatcher::deepep;
    t.recompute = st.recompute == "full"        ? Recompute::full
                  : st.recompute == "selective" ? Recompute::selective
                                                : Recompute::none;
    // The router's balancing: forced balance wins, then the loss-free expert bias, then the
    // loss type (Megatron's default aux_loss; seq_aux_loss and global_aux_loss are auxiliary
    // losses too).
    st.s.routing.balancing = st.force_balance              ? BalancingMethod::perfect
                             : st.expert_bias              ? BalancingMethod::aux_free
                             : st.load_balancing == "none" ? BalancingMethod::none
                                                           : BalancingMethod::aux_loss;
}

/// Group-limited routing limits the expert groups a token reaches; it is the scenario's
/// node-limited routing when the groups are the nodes an EP group spans.
void finishGroupLimitedRouting(ImportState& st) {
    if (!st.router_group_topk)
        return;
    LayoutSpec& lay = st.s.layout;
    const int span = epNodeSpan(lay, st.gpus_per_node);
    const int groups = st.router_groups.value_or(span);
    if (span > 0 && groups == span) {
        lay.max_nodes_per_token = *st.router_group_topk;
        return;
    }
    st.origin.erase("layout.max_nodes_per_token");
    const std::string why =
        "group-limited routing over " + std::to_string(groups) +
        " expert groups is node-limited routing (layout.max_nodes_per_token) only when "
        "the groups are the nodes an EP group spans; EP " +
        std::to_string(lay.ep) + " spans " +
        (span > 0 ? std::to_string(span) + (span == 1 ? " node" : " nodes")
                  : std::string("part of a node"));
    for (const char* flag : {"--moe-router-group-topk", "--moe-router-num-groups",
                             "--moe-router-topk-limited-devices"})
        st.outcome[flag] = {FlagStatus::not_modelled, why};
}

/// Vocabulary: Megatron pads it to a multiple of divisible-by x TP.
void finishVocabulary(ImportState& st) {
    if (!st.vocab)
        return;
    const int64_t multiple = static_cast<int64_t>(st.vocab_divisible_by) * st.s.layout.tp;
    const int64_t padded = (*st.vocab + multiple - 1) / multiple * multiple;
    st.s.model.vocab = static_cast<int>(std::min<int64_t>(padded, std::numeric_limits<int>::max()));
    if (padded != *st.vocab)
        st.notes.push_back("model.vocab = " + std::to_string(padded) + ": --vocab-size " +
                           std::to_string(*st.vocab) + " padded to a multiple of " +
                           std::to_string(multiple) +
                           " (--make-vocab-size-divisible-by x TP), as Megatron pads it");
}

/// Resolves the flags whose meaning depends on others, in Megatron's own way.
void finish(ImportState& st, int gpus, const std::set<std::string>& present) {
    if (reportMissingRequired(st, present))
        return;
    finishDenseModel(st);
    finishExperts(st);
    finishLayout(st, gpus);
    finishBatch(st);
    finishPrecisionAndMemory(st);
    finishGroupLimitedRouting(st);
    finishVocabulary(st);
    // The launcher's view of the node.
    if (st.torchrun_nproc && *st.torchrun_nproc != st.gpus_per_node)
        st.notes.push_back("torchrun --nproc_per_node " + std::to_string(*st.torchrun_nproc) +
                           " differs from the cluster's " + std::to_string(st.gpus_per_node) +
                           " GPUs per node");
}

std::string fileStem(const std::string& label) {
    std::string stem = std::filesystem::path(label).stem().string();
    return stem.empty() ? std::string("imported") : stem;
}

} // namespace

/// Quotes a --set value when the field is free text, so "a: b" stays text.
std::string assignmentFor(const std::string& path, const std::string& value) {
    const FieldInfo* info = findScenarioField(path);
    const bool text = info && info->kind == FieldKind::text && path != "layout.order";
    return path + "=" + (text ? JsonWriter::escape(value) : value);
}

Built buildFromFlags(const MegatronArgs& args, const MegatronImportOptions& options) {
    Built b;
    ImportState& st = b.state;
    st.options = &options;
    st.s = megatronDefaults(options.base);
    st.s.name = fileStem(options.file_label);
    st.s.model.name = st.s.name;
    st.s.description = "imported from " +
                       std::filesystem::path(options.file_label).filename().string() +
                       " by moe-plan import megatron";
    st.gpus_per_node = options.base.cluster.gpus_per_node;

    // Last occurrence wins (argparse); a conflicting repeat is worth a note.
    std::map<std::string, const MegatronFlag*> last;
    for (const MegatronFlag& f : args.flags) {
        const Rule* rule = findRule(f.name);
        if (const auto it = last.find(f.name);
            it != last.end() && rule && rule->status == FlagStatus::mapped &&
            it->second->values != f.values && f.unresolved.empty() &&
            it->second->unresolved.empty())
            st.notes.push_back("lines " + std::to_string(it->second->line) + " and " +
                               std::to_string(f.line) + " give " + f.name + " different values (" +
                               joined(it->second->values) + ", " + joined(f.values) +
                               "); the last one wins, as in argparse");
        last[f.name] = &f;
    }
    st.swiglu = last.count("--swiglu") > 0;

    for (const MegatronFlag& f : args.flags) {
        FlagReport report;
        report.flag = f.name;
        report.line = f.line;
        const Rule* rule = findRule(f.name);
        std::vector<std::string> values = f.values;
        if (rule && rule->arity == Arity::none)
            values.clear();
        if (rule && rule->arity == Arity::one && values.size() > 1)
            values.resize(1);
        report.value = joined(values);
        if (!rule) {
            const Family* family = findFamily(f.name);
            report.status = family ? FlagStatus::no_effect : FlagStatus::unknown;
            report.note = family ? family->why : "";
            report.value = joined(f.values);
            b.reports.push_back(std::move(report));
            continue;
        }
        report.status = rule->status;
        report.note = rule->note;
        // YAML "--switch: false" means the switch is off.
        const bool switched_off = rule->arity == Arity::none && f.yaml_form && !f.values.empty() &&
                                  f.values.front() == "false";
        if (switched_off) {
            report.status = FlagStatus::no_effect;
            report.note = "set to false";
            report.value = "false";
        } else if (last.at(f.name) != &f) {
            report.note += " (overridden by line " + std::to_string(last.at(f.name)->line) + ")";
        } else if (rule->apply && !(rule->arity != Arity::none && !f.unresolved.empty())) {
            MegatronFlag used = f;
            used.values = values;
            rule->apply(st, used, report);
        }
        if (rule->arity != Arity::none && !f.unresolved.empty() && !rule->optional_value &&
            report.status == FlagStatus::mapped && !switched_off && last.at(f.name) == &f) {
            std::string names;
            for (const std::string& n : f.unresolved)
                names += (names.empty() ? "" : ", ") + n;
            std::string how;
            for (const std::string& n : f.unresolved) {
                how += " --var " + n + "=VALUE";
                st.unresolved.insert(n);
            }
            st.error(f, "uses the shell variable" +
                            std::string(f.unresolved.size() > 1 ? "s " : " ") + names +
                            ", not set in the file; pass" + how);
        }
        b.reports.push_back(std::move(report));
    }

    // The cluster: the base's, or a GPU preset with its catalog node shape.
    int gpus = options.base.cluster.gpuCount();
    if (!options.gpu_preset.empty()) {
        const Catalog& catalog = builtinCatalog();
        if (const Catalog::NodeShape* shape = catalog.findNodeShape(options.gpu_preset))
            st.gpus_per_node = shape->gpus_per_node;
        const int nodes = options.nodes > 0 ? options.nodes : st.torchrun_nnodes.value_or(0);
        if (nodes <= 0) {
            Diagnostic d;
            d.file = options.file_label;
            d.message = "no node count: pass --nodes N (the arguments have no torchrun --nnodes)";
            st.diagnostics.push_back(std::move(d));
        }
        gpus = nodes * st.gpus_per_node;
        // Applied on load, where the catalog's node shape for the preset takes effect.
        b.cluster_overrides = {"cluster.gpu=" + options.gpu_preset,
                               "cluster.nodes=" + std::to_string(std::max(nodes, 1))};
        // Keep the GPU count of the written text equal to the final one, so dp is derived.
        st.s.cluster.nodes = std::max(1, gpus / std::max(1, st.s.cluster.gpus_per_node));
    }
    std::set<std::string> present;
    for (const auto& [name, flag] : last)
        present.insert(name);
    finish(st, gpus, present);
    for (FlagReport& report : b.reports) {
        if (const auto it = st.outcome.find(report.flag);
            it != st.outcome.end() && report.status == FlagStatus::mapped) {
            report.status = it->second.first;
            report.note = it->second.second;
        }
    }
    return b;
}

namespace {

/// Points a problem the loader found in the generated scenario at the flag that caused it.
Diagnostic relocate(const Diagnostic& d, const ImportState& st) {
    Diagnostic out = d;
    out.file = st.options->file_label;
    out.line = 0;
    out.column = 0;
    std::string path = d.field;
    while (!path.empty()) {
        if (const auto it = st.origin.find(path); it != st.origin.end()) {
            out.line = it->second.line;
            out.message = it->second.flag + ": " + d.message;
            return out;
        }
        const std::size_t dot = path.find_last_of('.');
        path = dot == std::string::npos ? std::string() : path.substr(0, dot);
    }
    if (d.file == "--set") {
        out.file = "--set";
        return out;
    }
    out.message = "imported scenario: " + d.message;
    return out;
}

/// Fields the arguments did not give, in words, so a user sees what to set.
std::vector<std::string> describeDefaults(const ImportState& st, const Scenario& s,
                                          const MegatronImportOptions& options) {
    std::vector<std::string> out;
    auto given = [&](const std::string& path) {
        if (st.origin.count(path) > 0)
            return true;
        for (const std::string& o : options.overrides)
            if (o.rfind(path + "=", 0) == 0)
                return true;
        return false;
    };
    if (!given("model.vocab"))
        out.push_back("model.vocab = " + std::to_string(s.model.vocab) +
                      " from the base scenario (the tokenizer decides it in Megatron; "
                      "--set model.vocab=N)");
    if (!given("training.total_tokens"))
        out.push_back("training.total_tokens = " + formatNumber(s.training.total_tokens) +
                      " from the base scenario (no --train-samples or --train-iters)");
    if (s.model.isMoe())
        out.push_back("routing: " + std::string(toString(s.routing.balancing)) +
                      " balancing from the router flags; popularity " +
                      std::string(toString(s.routing.model)) +
                      (s.routing.model == PopularityModel::zipf
                           ? " (alpha " + formatNumber(s.routing.zipf_alpha) + ")"
                           : std::string()) +
                      ", balance " + formatNumber(s.routing.balance) +
                      " from the base scenario (Megatron's arguments do not say how skewed the "
                      "router is)");
    const std::string nodes =
        std::to_string(s.cluster.nodes) + (s.cluster.nodes == 1 ? " node" : " nodes");
    out.push_back(options.gpu_preset.empty()
                      ? "cluster from the base scenario: " + nodes + " of " +
                            std::to_string(s.cluster.gpus_per_node) + " x " + s.cluster.gpu.name
                      : "cluster: " + nodes + " of the " + options.gpu_preset + " preset (" +
                            std::to_string(s.cluster.gpus_per_node) + " GPUs each)");
    for (const std::string& n : st.notes)
        out.push_back(n);
    return out;
}

} // namespace

} // namespace megatron

using namespace megatron;

MegatronImport importMegatronArgs(const std::string& text, const MegatronImportOptions& options) {
    MegatronImport result;
    const MegatronArgs args = readMegatronArgs(text, options.vars);
    Built built = buildFromFlags(args, options);
    ImportState& st = built.state;
    result.flags = std::move(built.reports);
    result.diagnostics = st.diagnostics;
    result.unresolved_variables.assign(st.unresolved.begin(), st.unresolved.end());
    if (hasErrors(result.diagnostics))
        return result;

    std::vector<std::string> overrides = built.cluster_overrides;
    for (const MegatronAnnotation& a : args.annotations) {
        overrides.push_back(a.assignment);
        result.annotations.push_back(a.assignment);
        const std::size_t eq = a.assignment.find('=');
        st.origin[trim(a.assignment.substr(0, eq))] = {a.line, "# moe-plan: " + a.assignment};
    }
    overrides.insert(overrides.end(), options.overrides.begin(), options.overrides.end());
    LoadResult loaded = loadScenarioTextWithOverrides(toYaml(st.s), options.file_label,
                                                      options.base_dir, overrides);
    for (const Diagnostic& d : loaded.diagnostics)
        result.diagnostics.push_back(relocate(d, st));
    if (!loaded.ok())
        return result;
    result.scenario = std::move(loaded.scenario);
    result.defaults = describeDefaults(st, *result.scenario, options);
    return result;
}

std::string describeImport(const MegatronImport& result) {
    std::ostringstream out;
    const FlagStatus order[] = {FlagStatus::mapped, FlagStatus::not_modelled, FlagStatus::unknown,
                                FlagStatus::no_effect};
    for (const FlagStatus status : order) {
        std::vector<const FlagReport*> in;
        for (const FlagReport& f : result.flags)
            if (f.status == status)
                in.push_back(&f);
        if (in.empty())
            continue;
        out << toString(status) << " (" << in.size() << "):\n";
        if (status == FlagStatus::no_effect) {
            // Listed compactly: these change nothing the planner estimates.
            std::string names;
            for (const FlagReport* f : in)
                names += (names.empty() ? "" : " ") + f->flag;
            out << "  " << names << "\n";
            continue;
        }
        for (const FlagReport* f : in) {
            out << "  line " << f->line << ": " << f->flag << (f->value.empty() ? "" : " ")
                << f->value;
            if (!f->note.empty())
                out << (status == FlagStatus::mapped ? " -> " : ": ") << f->note;
            out << "\n";
        }
    }
    if (!result.annotations.empty()) {
        out << "moe-plan annotations (" << result.annotations.size() << "):\n";
        for (const std::string& a : result.annotations)
            out << "  " << a << "\n";
    }
    if (!result.defaults.empty()) {
        out << "not from the arguments:\n";
        for (const std::string& d : result.defaults)
            out << "  " << d << "\n";
    }
    return out.str();
}

} // namespace moe::io
