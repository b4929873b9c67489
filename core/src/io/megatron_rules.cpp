#include "megatron_rules.h"

#include "moe/format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>

namespace moe::io::megatron {

namespace {

std::optional<int> intValue(ImportState& st, const MegatronFlag& flag, int min = 0) {
    const std::optional<int64_t> v = wholeNumber(st, flag, min);
    if (!v)
        return std::nullopt;
    if (*v > std::numeric_limits<int>::max()) {
        st.error(flag, "value " + std::to_string(*v) + " is too large");
        return std::nullopt;
    }
    return static_cast<int>(*v);
}

std::optional<double> realValue(ImportState& st, const MegatronFlag& flag) {
    const std::optional<std::string> text = single(st, flag);
    if (!text)
        return std::nullopt;
    double value = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || end != text->data() + text->size() || !std::isfinite(value)) {
        st.error(flag, "expected a number, got '" + *text + "'");
        return std::nullopt;
    }
    return value;
}

/// One of `choices`, or an error naming them.
std::optional<std::string> choice(ImportState& st, const MegatronFlag& flag,
                                  const std::vector<std::string>& choices) {
    const std::optional<std::string> text = single(st, flag);
    if (!text)
        return std::nullopt;
    if (std::find(choices.begin(), choices.end(), *text) != choices.end())
        return text;
    std::string known;
    for (const std::string& c : choices)
        known += (known.empty() ? "" : ", ") + c;
    st.error(flag, "expected one of " + known + ", got '" + *text + "'");
    return std::nullopt;
}

std::string line(const std::string& flag, const std::string& value = {}) {
    return value.empty() ? flag : flag + " " + value;
}

// Row builders -------------------------------------------------------------------------------

/// A flag that sets one integer field directly (both ways).
Rule intField(std::string flag, Group group, std::string path, IntRef ref, int min = 1) {
    Rule r;
    r.flag = flag;
    r.arity = Arity::one;
    r.status = FlagStatus::mapped;
    r.note = path;
    r.group = group;
    r.apply = [path, ref, min](ImportState& st, const MegatronFlag& f, FlagReport&) {
        if (const std::optional<int> v = intValue(st, f, min)) {
            ref(st.s) = *v;
            st.set(path, f);
        }
    };
    r.write = [flag, ref](const Scenario& s, std::vector<std::string>& out) {
        out.push_back(line(flag, std::to_string(ref(const_cast<Scenario&>(s)))));
    };
    return r;
}

/// An integer field whose Megatron default (None) is the scenario's 0: imported when given,
/// exported only when set.
Rule optionalIntField(std::string flag, Group group, std::string path, IntRef ref) {
    Rule r = intField(flag, group, std::move(path), ref);
    r.write = [flag, ref](const Scenario& s, std::vector<std::string>& out) {
        const int v = ref(const_cast<Scenario&>(s));
        if (v > 0)
            out.push_back(line(flag, std::to_string(v)));
    };
    return r;
}

Rule mapped(std::string flag, Arity arity, Group group, std::string note, ApplyFn apply,
            WriteFn write = {}) {
    Rule r;
    r.flag = std::move(flag);
    r.arity = arity;
    r.status = FlagStatus::mapped;
    r.note = std::move(note);
    r.group = group;
    r.apply = std::move(apply);
    r.write = std::move(write);
    return r;
}

/// A launcher flag (torchrun): used when it can be, never an error when it cannot.
Rule launcher(std::string flag, Arity arity, Group group, std::string note, ApplyFn apply) {
    Rule r = mapped(std::move(flag), arity, group, std::move(note), std::move(apply));
    r.optional_value = true;
    return r;
}

Rule notModelled(std::string flag, Arity arity, std::string what) {
    Rule r;
    r.flag = std::move(flag);
    r.arity = arity;
    r.status = FlagStatus::not_modelled;
    r.note = std::move(what);
    return r;
}

Rule noEffect(std::string flag, Arity arity, std::string why) {
    Rule r;
    r.flag = std::move(flag);
    r.arity = arity;
    r.status = FlagStatus::no_effect;
    r.note = std::move(why);
    return r;
}

/// A switch that states what the model assumes anyway (its absence is noted in finish()).
Rule assumption(std::string flag, std::string note, Group group, bool (*wanted)(const Scenario&)) {
    Rule r;
    r.flag = flag;
    r.arity = Arity::none;
    r.status = FlagStatus::mapped;
    r.note = std::move(note);
    r.group = group;
    r.write = [flag, wanted](const Scenario& s, std::vector<std::string>& out) {
        if (wanted(s))
            out.push_back(flag);
    };
    return r;
}

#define MOE_INT(expr) [](Scenario& s) -> int& { return s.expr; }

std::vector<Rule> buildRules() {
    using A = Arity;
    using G = Group;
    std::vector<Rule> r;
    auto add = [&](Rule rule) { r.push_back(std::move(rule)); };

    // Model shape.
    add(intField("--num-layers", G::model, "model.layers", MOE_INT(model.layers)));
    add(intField("--hidden-size", G::model, "model.hidden", MOE_INT(model.hidden)));
    add(mapped(
        "--ffn-hidden-size", A::one, G::model, "model.ffn_hidden",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if ((st.ffn = intValue(st, f, 1)))
                st.set("model.ffn_hidden", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.model.ffn_hidden > 0)
                out.push_back(line("--ffn-hidden-size", std::to_string(s.model.ffn_hidden)));
        }));
    add(intField("--num-attention-heads", G::model, "model.heads", MOE_INT(model.heads)));
    add(mapped(
        "--group-query-attention", A::none, G::model, "model.kv_heads (with --num-query-groups)",
        [](ImportState& st, const MegatronFlag&, FlagReport&) { st.gqa = true; },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.model.attention == AttentionKind::gqa && s.model.kv_heads != s.model.heads) {
                out.push_back("--group-query-attention");
                out.push_back(line("--num-query-groups", std::to_string(s.model.kv_heads)));
            }
        }));
    add(mapped("--num-query-groups", A::one, G::model, "model.kv_heads",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if ((st.query_groups = intValue(st, f, 1)))
                       st.set("model.kv_heads", f);
               }));
    add(mapped(
        "--kv-channels", A::one, G::model, "model.head_dim",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if ((st.kv_channels = intValue(st, f, 1)))
                st.set("model.head_dim", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            // With MLA the head sizes are MLA's own; scripts give the per-head size there.
            const int kv = s.model.attention == AttentionKind::mla ? s.model.mla.qk_nope_head_dim
                                                                   : s.model.effectiveHeadDim();
            out.push_back(line("--kv-channels", std::to_string(kv)));
        }));
    add(intField("--seq-length", G::model, "model.seq_len", MOE_INT(model.seq_len)));
    add(mapped(
        "--max-position-embeddings", A::one, G::model,
        "no field: the scenario trains at model.seq_len",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) { intValue(st, f, 1); },
        [](const Scenario& s, std::vector<std::string>& out) {
            out.push_back(line("--max-position-embeddings", std::to_string(s.model.seq_len)));
        }));
    add(mapped(
        "--vocab-size", A::one, G::model, "model.vocab (padded as Megatron pads it)",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if ((st.vocab = wholeNumber(st, f, 1)))
                st.set("model.vocab", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            out.push_back(line("--vocab-size", std::to_string(s.model.vocab)));
            out.push_back(line("--make-vocab-size-divisible-by",
                               std::to_string(vocabDivisor(s.model.vocab, s.layout.tp))));
        }));
    add(mapped("--make-vocab-size-divisible-by", A::one, G::model, "model.vocab (padding)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if (const std::optional<int> v = intValue(st, f, 1))
                       st.vocab_divisible_by = *v;
               }));
    add(assumption("--swiglu", "the scenario's FFNs are SwiGLU (model.mlp; without it gelu)",
                   G::model, [](const Scenario& s) { return s.model.mlp == MlpKind::swiglu; }));
    add(mapped(
        "--multi-latent-attention", A::none, G::model, "model.attention = mla",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            st.mla = true;
            st.set("model.attention", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.model.attention != AttentionKind::mla)
                return;
            out.push_back("--multi-latent-attention");
            const MlaDims& m = s.model.mla;
            if (m.q_lora_rank > 0)
                out.push_back(line("--q-lora-rank", std::to_string(m.q_lora_rank)));
            out.push_back(line("--kv-lora-rank", std::to_string(m.kv_lora_rank)));
            out.push_back(line("--qk-head-dim", std::to_string(m.qk_nope_head_dim)));
            out.push_back(line("--qk-pos-emb-head-dim", std::to_string(m.qk_rope_head_dim)));
            out.push_back(line("--v-head-dim", std::to_string(m.v_head_dim)));
        }));
    // MLA dimensions; their export is part of --multi-latent-attention's.
    auto mla = [&](const char* flag, const char* path, IntRef ref, int min) {
        Rule rule = intField(flag, G::model, path, ref, min);
        rule.write = {};
        add(std::move(rule));
    };
    mla("--q-lora-rank", "model.mla.q_lora_rank", MOE_INT(model.mla.q_lora_rank), 0);
    mla("--kv-lora-rank", "model.mla.kv_lora_rank", MOE_INT(model.mla.kv_lora_rank), 1);
    mla("--qk-head-dim", "model.mla.qk_nope_head_dim", MOE_INT(model.mla.qk_nope_head_dim), 1);
    mla("--qk-pos-emb-head-dim", "model.mla.qk_rope_head_dim", MOE_INT(model.mla.qk_rope_head_dim),
        0);
    mla("--v-head-dim", "model.mla.v_head_dim", MOE_INT(model.mla.v_head_dim), 1);

    // Precision.
    add(mapped(
        "--bf16", A::none, G::model, "model.precision (weights, activations, dispatch, compute)",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            st.bf16 = true;
            st.set("model.precision", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.model.weight_precision == Precision::bf16)
                out.push_back("--bf16");
            else if (s.model.weight_precision == Precision::fp16)
                out.push_back("--fp16");
        }));
    add(mapped("--fp16", A::none, G::model,
               "model.precision (weights, activations, dispatch, compute)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   st.fp16 = true;
                   st.set("model.precision", f);
               }));
    add(mapped(
        "--fp8-format", A::one, G::model, "model.precision.compute = fp8",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if (choice(st, f, {"e4m3", "hybrid"})) {
                st.fp8 = true;
                st.set("model.precision.compute", f);
            }
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.model.compute_precision == Precision::fp8)
                out.push_back(line("--fp8-format", "e4m3"));
        }));
    // Megatron-Core's Fp8Recipe (megatron/core/enums.py): delayed (its default), tensorwise,
    // mxfp8, blockwise, custom. A custom quantizer has no recipe the planner could price.
    add(mapped(
        "--fp8-recipe", A::one, G::model, "model.precision.fp8_recipe",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if (const std::optional<std::string> v =
                    choice(st, f, {"delayed", "tensorwise", "blockwise", "mxfp8"})) {
                st.s.model.fp8_recipe = *parseFp8Recipe(*v);
                st.set("model.precision.fp8_recipe", f);
            }
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.model.compute_precision == Precision::fp8)
                out.push_back(line("--fp8-recipe", toString(s.model.fp8_recipe)));
        }));
    add(notModelled("--fp8-param-gather", A::none,
                    "FP8 weight all-gather (weights stay model.precision.weights)"));
    add(mapped(
        "--grad-reduce-in-bf16", A::none, G::training, "model.precision.grads = bf16",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            st.grads_bf16 = true;
            st.set("model.precision.grads", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.model.grad_precision == Precision::bf16)
                out.push_back("--grad-reduce-in-bf16");
        }));
    add(mapped("--accumulate-allreduce-grads-in-fp32", A::none, G::training,
               "model.precision.grads = fp32 (the default)",
               [](ImportState&, const MegatronFlag&, FlagReport&) {}));

    // Mixture of experts.
    add(intField("--num-experts", G::moe, "model.experts", MOE_INT(model.experts)));
    r.back().write = [](const Scenario& s, std::vector<std::string>& out) {
        const ModelSpec& m = s.model;
        if (!m.isMoe())
            return;
        out.push_back(line("--num-experts", std::to_string(m.experts)));
        out.push_back(line("--moe-ffn-hidden-size", std::to_string(m.expert_ffn_hidden)));
        out.push_back(line("--moe-router-topk", std::to_string(m.top_k)));
        out.push_back(line("--moe-layer-freq", layerFreqText(m)));
        if (m.shared_experts > 0)
            out.push_back(line("--moe-shared-expert-intermediate-size",
                               std::to_string(m.shared_experts * m.effectiveSharedFfn())));
        if (m.capacity_factor > 0)
            out.push_back(line("--moe-expert-capacity-factor", formatNumber(m.capacity_factor)));
        out.push_back("--moe-grouped-gemm");
        const MoeDispatcher dispatcher = s.training.moe_dispatcher;
        out.push_back(line("--moe-token-dispatcher-type",
                           dispatcher == MoeDispatcher::alltoall ? "alltoall" : "flex"));
        if (dispatcher != MoeDispatcher::alltoall)
            out.push_back(line("--moe-flex-dispatcher-backend", toString(dispatcher)));
    };
    add(mapped("--moe-ffn-hidden-size", A::one, G::moe, "model.expert_ffn_hidden",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if ((st.moe_ffn = intValue(st, f, 1)))
                       st.set("model.expert_ffn_hidden", f);
               }));
    add(mapped("--moe-router-topk", A::one, G::moe, "model.top_k",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if ((st.topk = intValue(st, f, 1)))
                       st.set("model.top_k", f);
               }));
    add(mapped("--moe-layer-freq", A::one, G::moe, "model.dense_layers",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   st.moe_layer_freq = f;
                   st.set("model.dense_layers", f);
               }));
    add(mapped("--moe-shared-expert-intermediate-size", A::one, G::moe,
               "model.shared_experts = 1, model.shared_expert_ffn_hidden",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if ((st.shared_size = intValue(st, f, 0)))
                       st.set("model.shared_expert_ffn_hidden", f);
               }));
    add(mapped("--moe-expert-capacity-factor", A::one, G::moe, "model.capacity_factor",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if (const std::optional<double> v = realValue(st, f)) {
                       st.s.model.capacity_factor = *v;
                       st.set("model.capacity_factor", f);
                   }
               }));
    add(mapped(
        "--moe-router-num-groups", A::one, G::moe,
        "layout.max_nodes_per_token (with --moe-router-group-topk, when the groups are the "
        "EP group's nodes)",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            st.router_groups = intValue(st, f, 1);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            const int span = epNodeSpan(s.layout, s.cluster.gpus_per_node);
            if (s.layout.max_nodes_per_token > 0 && span > 0) {
                out.push_back(line("--moe-router-num-groups", std::to_string(span)));
                out.push_back(
                    line("--moe-router-group-topk", std::to_string(s.layout.max_nodes_per_token)));
            }
        }));
    add(mapped("--moe-router-group-topk", A::one, G::moe, "layout.max_nodes_per_token",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if ((st.router_group_topk = intValue(st, f, 1)))
                       st.set("layout.max_nodes_per_token", f);
               }));
    add(mapped("--moe-router-topk-limited-devices", A::one, G::moe,
               "layout.max_nodes_per_token (when the EP group spans whole nodes)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if ((st.router_group_topk = intValue(st, f, 1)))
                       st.set("layout.max_nodes_per_token", f);
               }));
    // routing.balancing, decided in finish() from the three (megatron_import.cpp).
    add(mapped("--moe-router-load-balancing-type", A::many, G::moe,
               "routing.balancing: aux_loss / seq_aux_loss / global_aux_loss = aux-loss, none",
               [](ImportState& st, const MegatronFlag& f, FlagReport& report) {
                   if (const std::optional<std::string> v = single(st, f)) {
                       st.load_balancing = *v;
                       st.set("routing.balancing", f);
                       if (*v == "sinkhorn") {
                           report.status = FlagStatus::not_modelled;
                           report.note = "Sinkhorn balancing is not modelled; the router is "
                                         "priced as auxiliary-loss balanced";
                       }
                   }
               }));
    add(mapped("--moe-router-enable-expert-bias", A::none, G::moe,
               "routing.balancing = aux-free (DeepSeek-V3's loss-free bias)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   st.expert_bias = true;
                   st.set("routing.balancing", f);
               }));
    add(mapped("--moe-router-force-load-balancing", A::none, G::moe,
               "routing.balancing = perfect (benchmarks' forced balance)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   st.force_balance = true;
                   st.set("routing.balancing", f);
               }));
    add(mapped("--moe-token-dispatcher-type", A::one, G::moe,
               "training.moe_dispatcher (flex: the backend's, deepep by default)",
               [](ImportState& st, const MegatronFlag& f, FlagReport& report) {
                   const std::optional<std::string> v =
                       choice(st, f, {"alltoall", "flex", "allgather", "alltoall_seq"});
                   if (v)
                       st.dispatcher_type = *v;
                   st.set("training.moe_dispatcher", f);
                   if (v && *v == "allgather") {
                       report.status = FlagStatus::not_modelled;
                       report.note = "the model's dispatch is an all-to-all; an all-gather "
                                     "dispatcher moves more bytes";
                   }
               }));
    add(mapped("--moe-flex-dispatcher-backend", A::one, G::moe,
               "training.moe_dispatcher = deepep or hybridep (with the flex dispatcher)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if (const auto v = choice(st, f, {"deepep", "hybridep"}))
                       st.flex_backend = *v;
                   st.set("training.moe_dispatcher", f);
               }));
    add(mapped("--moe-enable-deepep", A::none, G::moe,
               "training.moe_dispatcher = deepep (with the flex dispatcher)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   st.flex_backend = "deepep";
                   st.set("training.moe_dispatcher", f);
               }));
    add(notModelled("--moe-shared-expert-overlap", A::none,
                    "shared-expert compute overlapping the dispatch"));
    add(mapped(
        "--overlap-moe-expert-parallel-comm", A::none, G::moe,
        "training.ep_overlap = combined-1f1b (Megatron's default: none)",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            st.overlap_moe_ep_comm = true;
            st.set("training.ep_overlap", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.training.ep_overlap == EpOverlap::combined_1f1b)
                out.push_back("--overlap-moe-expert-parallel-comm");
        }));
    add(notModelled("--delay-wgrad-compute", A::none,
                    "weight-gradient GEMMs deferred to hide the all-to-all"));
    add(notModelled("--moe-layer-recompute", A::none,
                    "recomputing whole MoE layers (training.recompute covers all layers alike)"));
    add(notModelled("--moe-pad-expert-input-to-capacity", A::none,
                    "padding experts to capacity (the model drops, it does not pad)"));
    // megatron/core/transformer/transformer_config.py: "Number of Multi-Token Prediction (MTP)
    // Layers ... D sequential modules to predict D additional tokens".
    add(optionalIntField("--mtp-num-layers", G::model, "model.mtp_layers",
                         MOE_INT(model.mtp_layers)));
    add(noEffect("--mtp-loss-scaling-factor", A::one, "loss weighting"));

    // Training batch, tokens, optimizer, recompute.
    add(intField("--micro-batch-size", G::training, "training.micro_batch",
                 MOE_INT(training.micro_batch)));
    add(mapped(
        "--global-batch-size", A::one, G::training, "training.global_batch",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if ((st.global_batch = wholeNumber(st, f, 1)))
                st.set("training.global_batch", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            out.push_back(line("--global-batch-size", std::to_string(s.training.global_batch)));
        }));
    add(mapped(
        "--train-samples", A::one, G::training, "training.total_tokens (samples x seq_len)",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if ((st.train_samples = wholeNumber(st, f, 1)))
                st.set("training.total_tokens", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.training.total_tokens > 0)
                out.push_back(
                    line("--train-samples",
                         formatNumber(std::ceil(s.training.total_tokens / s.model.seq_len))));
        }));
    add(mapped("--train-iters", A::one, G::training,
               "training.total_tokens (iterations x global batch x seq_len)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if ((st.train_iters = wholeNumber(st, f, 1)))
                       st.set("training.total_tokens", f);
               }));
    add(mapped("--optimizer", A::one, G::training, "training.optimizer",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if (choice(st, f, {"adam", "sgd", "muon"}) && f.values.front() != "adam")
                       st.error(f, "the scenario models Adam(W) only (12 bytes of optimizer "
                                   "state per parameter)");
               }));
    add(mapped(
        "--use-distributed-optimizer", A::none, G::training, "training.zero_stage = 1",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            st.distributed_optimizer = true;
            st.set("training.zero_stage", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.training.zero_stage == 1)
                out.push_back("--use-distributed-optimizer");
            if (s.training.zero_stage >= 2) {
                out.push_back("--use-megatron-fsdp");
                out.push_back(
                    line("--data-parallel-sharding-strategy",
                         s.training.zero_stage == 2 ? "optim_grads" : "optim_grads_params"));
            }
        }));
    add(mapped("--use-megatron-fsdp", A::none, G::training,
               "training.zero_stage (from --data-parallel-sharding-strategy)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   st.fsdp = true;
                   st.set("training.zero_stage", f);
               }));
    add(mapped("--data-parallel-sharding-strategy", A::one, G::training,
               "training.zero_stage (with --use-megatron-fsdp)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if (const std::optional<std::string> v = choice(
                           st, f, {"no_shard", "optim", "optim_grads", "optim_grads_params"}))
                       st.sharding = *v;
               }));
    add(mapped(
        "--recompute-granularity", A::one, G::training, "training.recompute",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if (const std::optional<std::string> v = choice(st, f, {"full", "selective"})) {
                st.recompute = *v;
                st.set("training.recompute", f);
            }
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.training.recompute != Recompute::none)
                out.push_back(line("--recompute-granularity", toString(s.training.recompute)));
        }));
    add(mapped("--recompute-activations", A::none, G::training, "training.recompute = selective",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if (st.recompute.empty())
                       st.recompute = "selective";
                   st.set("training.recompute", f);
               }));
    add(notModelled("--recompute-method", A::one,
                    "full recompute of some layers only (training.recompute applies to all)"));
    add(notModelled("--recompute-num-layers", A::one,
                    "full recompute of some layers only (training.recompute applies to all)"));
    add(notModelled("--recompute-modules", A::many,
                    "the modules selective recompute re-runs are fixed in the model (norms, "
                    "activations, MLA up-projections)"));
    add(notModelled("--cpu-offloading", A::none, "activation offload to host memory"));
    add(notModelled("--optimizer-cpu-offload", A::none, "optimizer state offload to host memory"));
    add(notModelled("--tp-comm-overlap", A::none,
                    "TP communication overlapped with GEMMs (the model exposes TP collectives)"));

    // Parallel layout.
    add(intField("--tensor-model-parallel-size", G::parallel, "layout.tp", MOE_INT(layout.tp)));
    add(intField("--pipeline-model-parallel-size", G::parallel, "layout.pp", MOE_INT(layout.pp)));
    add(intField("--context-parallel-size", G::parallel, "layout.cp", MOE_INT(layout.cp)));
    add(intField("--expert-model-parallel-size", G::parallel, "layout.ep", MOE_INT(layout.ep)));
    add(mapped(
        "--expert-tensor-parallel-size", A::one, G::parallel, "layout.etp",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if ((st.etp = intValue(st, f, 1)))
                st.set("layout.etp", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.model.isMoe())
                out.push_back(line("--expert-tensor-parallel-size", std::to_string(s.layout.etp)));
        }));
    add(mapped(
        "--num-virtual-stages-per-pipeline-rank", A::one, G::parallel,
        "layout.vpp, layout.schedule = interleaved",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if ((st.virtual_stages = intValue(st, f, 1)))
                st.set("layout.vpp", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.layout.vpp > 1)
                out.push_back(
                    line("--num-virtual-stages-per-pipeline-rank", std::to_string(s.layout.vpp)));
        }));
    add(mapped("--num-layers-per-virtual-pipeline-stage", A::one, G::parallel,
               "layout.vpp = layers / (pp x this), layout.schedule = interleaved",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if ((st.layers_per_virtual_stage = intValue(st, f, 1)))
                       st.set("layout.vpp", f);
               }));
    add(mapped(
        "--use-tp-pp-dp-mapping", A::none, G::parallel, "layout.order = tp-cp-ep-pp-dp",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            st.tp_pp_dp_mapping = true;
            st.set("layout.order", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (toString(s.layout.order) == std::string("tp-cp-ep-pp-dp"))
                out.push_back("--use-tp-pp-dp-mapping");
        }));
    add(mapped(
        "--sequence-parallel", A::none, G::parallel,
        "training.tp_activations = sequence-parallel (without it: replicated, Megatron's default; "
        "the flag exists since April 2022, cfd2e21607)",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            st.sequence_parallel = true;
            st.set("training.tp_activations", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.layout.tp > 1 && s.training.tp_activations == TpActivations::sequence_parallel)
                out.push_back("--sequence-parallel");
        }));
    add(mapped(
        "--overlap-grad-reduce", A::none, G::training,
        "training.dp_overlap (Megatron's default: no overlap)",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            st.overlap_grad_reduce = true;
            st.set("training.dp_overlap", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.training.dp_overlap != DpOverlap::none)
                out.push_back("--overlap-grad-reduce");
        }));
    add(mapped(
        "--overlap-param-gather", A::none, G::training,
        "training.dp_overlap = grad-reduce-and-param-gather (needs --overlap-grad-reduce)",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            st.overlap_param_gather = true;
            st.set("training.dp_overlap", f);
        },
        [](const Scenario& s, std::vector<std::string>& out) {
            if (s.training.dp_overlap == DpOverlap::grad_reduce_and_param_gather &&
                s.training.zero_stage >= 1)
                out.push_back("--overlap-param-gather");
        }));
    add(assumption("--use-flash-attn", "the model's attention is flash attention", G::model,
                   [](const Scenario&) { return false; }));
    // megatron/training/arguments.py: --hidden-dropout defaults to 0.1; --attention-backend
    // (flash, fused, unfused, local, auto; default auto) picks the core attention kernel.
    add(mapped("--hidden-dropout", A::one, G::model, "model.dropout (Megatron's default: 0.1)",
               [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                   if (const std::optional<double> v = realValue(st, f)) {
                       st.s.model.dropout = *v;
                       st.set("model.dropout", f);
                   }
               }));
    add(mapped(
        "--attention-backend", A::one, G::model,
        "training.attention_kernel: unfused and local = unfused, flash, fused and auto = flash",
        [](ImportState& st, const MegatronFlag& f, FlagReport&) {
            if (const std::optional<std::string> v =
                    choice(st, f, {"flash", "fused", "unfused", "local", "auto"})) {
                st.s.training.attention_kernel = *v == "unfused" || *v == "local"
                                                     ? AttentionKernel::unfused
                                                     : AttentionKernel::flash;
                st.set("training.attention_kernel", f);
            }
        }));
    // Megatron-LM megatron/training/arguments.py (d98e8a6): "The number of transformer layers
    // on the first [last] pipeline stage of the decoder. Default None is even split".
    add(optionalIntField("--decoder-first-pipeline-num-layers", G::parallel,
                         "layout.first_stage_layers", MOE_INT(layout.first_stage_layers)));
    add(optionalIntField("--decoder-last-pipeline-num-layers", G::parallel,
                         "layout.last_stage_layers", MOE_INT(layout.last_stage_layers)));
    add(notModelled("--pipeline-model-parallel-layout", A::one,
                    "a custom pipeline layout (uneven stages, embedding and loss placement)"));
    add(notModelled("--account-for-embedding-in-pipeline-split", A::none,
                    "the embedding counted as a layer in the pipeline split"));
    add(notModelled("--account-for-loss-in-pipeline-split", A::none,
                    "the loss counted as a layer in the pipeline split"));
    add(notModelled("--num-distributed-optimizer-instances", A::one,
                    "hybrid-sharded optimizer (the model shards over the whole DP group)"));

    // Model details that do not change the estimate (the model assumes the usual choices).
    add(assumption("--untie-embeddings-and-output-weights",
                   "the model counts a separate output head", G::model,
                   [](const Scenario&) { return true; }));
    add(assumption("--disable-bias-linear", "the model has no linear biases", G::model,
                   [](const Scenario&) { return true; }));
    add(mapped(
        "--normalization", A::one, G::model, "the model's norms are RMSNorm-sized",
        [](ImportState&, const MegatronFlag&, FlagReport&) {},
        [](const Scenario&, std::vector<std::string>& out) {
            out.push_back(line("--normalization", "RMSNorm"));
        }));
    add(mapped(
        "--position-embedding-type", A::one, G::model, "the model uses rotary embeddings",
        [](ImportState&, const MegatronFlag&, FlagReport&) {},
        [](const Scenario&, std::vector<std::string>& out) {
            out.push_back(line("--position-embedding-type", "rope"));
        }));
    // The launcher's own flags: nodes and GPUs per node.
    add(launcher("--nnodes", A::one, G::parallel,
                 "cluster.nodes when the import gives --gpu without --nodes",
                 [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                     if (!f.unresolved.empty())
                         return;
                     st.torchrun_nnodes = intValue(st, f, 1);
                 }));
    add(launcher("--nproc_per_node", A::one, G::parallel, "checked against cluster.gpus_per_node",
                 [](ImportState& st, const MegatronFlag& f, FlagReport&) {
                     if (!f.unresolved.empty())
                         return;
                     st.torchrun_nproc = intValue(st, f, 1);
                 }));
    return r;
}

} // namespace

const std::vector<Rule>& rules() {
    static const std::vector<Rule> table = buildRules();
    return table;
}

const Rule* findRule(const std::string& flag) {
    for (const Rule& r : rules())
        if (r.flag == flag)
            return &r;
    return nullptr;
}

} // namespace moe::io::megatron
