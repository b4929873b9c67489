#include "megatron_rules.h"

#include "moe/edits.h"
#include "moe/format.h"

#include <cmath>
#include <sstream>

namespace moe::io {

using namespace megatron;

// ---------------------------------------------------------------------------------------------
// Export

namespace {

std::vector<std::string> flagLines(const Scenario& s, Group group) {
    std::vector<std::string> out;
    for (const Rule& r : rules())
        if (r.write && r.group == group)
            r.write(s, out);
    return out;
}

std::string arrayBlock(const char* name, const std::vector<std::string>& lines) {
    std::string text = std::string(name) + "=(\n";
    for (const std::string& l : lines)
        text += "    " + l + "\n";
    return text + ")\n";
}

/// Why a field that differs after a flags-only import needs an annotation, in words.
std::string annotationReason(const std::string& path) {
    static const std::map<std::string, std::string> reasons = {
        {"layout.schedule", "Megatron-Core schedules are 1F1B and interleaved 1F1B"},
        {"layout.order", "Megatron-Core orders ranks tp-cp-ep-dp-pp or tp-cp-ep-pp-dp"},
        {"layout.expert_placement", "Megatron-Core places experts round-robin"},
        {"layout.max_nodes_per_token",
         "group-limited routing maps to it only when EP spans whole nodes"},
        {"model.dispatch_precision", "FP8 dispatch is a DeepEP option, not an argument"},
        {"model.precision.dispatch", "FP8 dispatch is a DeepEP option, not an argument"},
        {"model.precision.activations", "activation precision follows --bf16/--fp16"},
        {"model.precision.weights", "weight precision follows --bf16/--fp16"},
        {"model.shared_experts", "Megatron has one shared-expert MLP"},
        {"model.shared_expert_ffn_hidden", "Megatron has one shared-expert MLP"},
        {"training.total_tokens", "--train-samples counts whole sequences"},
        {"model.name", "Megatron has no model name"},
        {"training.optimizer", "Megatron's adam is AdamW"},
        {"training.checkpoint_interval_s", "checkpoint timing is not a model argument"},
    };
    const auto it = reasons.find(path);
    return it == reasons.end() ? std::string() : it->second;
}

} // namespace

std::string exportMegatronArgs(const Scenario& s) {
    std::string body;
    body += arrayBlock("MODEL_ARGS", flagLines(s, Group::model));
    if (s.model.isMoe())
        body += "\n" + arrayBlock("MOE_ARGS", flagLines(s, Group::moe));
    body += "\n" + arrayBlock("TRAINING_ARGS", flagLines(s, Group::training));
    body += "\n" + arrayBlock("MODEL_PARALLEL_ARGS", flagLines(s, Group::parallel));

    // What the flags alone would give back: every model, training and layout field that differs
    // is annotated, so import reproduces the scenario exactly.
    MegatronImportOptions options;
    options.base = s;
    options.file_label = "<export>";
    const Built back = buildFromFlags(readMegatronArgs(body), options);
    std::string annotations;
    for (const FieldInfo& field : scenarioFields()) {
        if (field.group != "model" && field.group != "training" && field.group != "layout")
            continue;
        const std::optional<std::string> want = getScenarioField(s, field.path);
        const std::optional<std::string> got = getScenarioField(back.state.s, field.path);
        if (!want || want == got)
            continue;
        // MLA sizes mean nothing (and may not be written) unless attention is MLA.
        if (field.path.rfind("model.mla.", 0) == 0 && s.model.attention != AttentionKind::mla)
            continue;
        if (const std::string reason = annotationReason(field.path); !reason.empty())
            annotations += "#   " + reason + ":\n";
        annotations += "# moe-plan: " + assignmentFor(field.path, *want) + "\n";
    }

    const ClusterSpec& c = s.cluster;
    std::string text = "#!/bin/bash\n";
    text += "# Megatron-Core arguments for the scenario \"" + s.name +
            "\", written by moe-plan export megatron.\n";
    text += "# Cluster: " + std::to_string(c.gpuCount()) + " x " + c.gpu.name + " in " +
            std::to_string(c.nodes) + " nodes of " + std::to_string(c.gpus_per_node) + ".\n";
    text += "# Launch with your data, tokenizer, learning-rate and checkpoint arguments added:\n";
    text += "#   torchrun --nnodes " + std::to_string(c.nodes) + " --nproc_per_node " +
            std::to_string(c.gpus_per_node) + " pretrain_gpt.py \\\n#     \"${MODEL_ARGS[@]}\"" +
            (s.model.isMoe() ? " \"${MOE_ARGS[@]}\"" : "") +
            " \"${TRAINING_ARGS[@]}\" \"${MODEL_PARALLEL_ARGS[@]}\"\n";
    text += "# Router balance assumed by the plan (not a Megatron argument): " +
            std::string(toString(s.routing.balancing)) + " balancing, routing " +
            std::string(toString(s.routing.model)) + ", balance " +
            formatNumber(s.routing.balance) + ".\n";
    if (!annotations.empty())
        text += "#\n# Scenario fields Megatron-Core has no argument for; moe-plan import reads "
                "them back:\n" +
                annotations;
    return text + "\n" + body;
}

namespace {

std::string pyBool(bool v) {
    return v ? "True" : "False";
}

std::string pyPrecision(Precision p) {
    return p == Precision::fp8 ? "\"e4m3\"" : "None";
}

/// "name=value," lines of a Python call, indented for the recipe's run.Config blocks.
class PyArgs {
public:
    explicit PyArgs(std::ostringstream& py)
        : py_(py) {}
    void operator()(const std::string& name, const std::string& value) {
        py_ << "        " << name << "=" << value << ",\n";
    }

private:
    std::ostringstream& py_;
};

/// The recipe's comment header, with the Megatron export's annotations: what NeMo cannot say
/// either.
void writeNemoHeader(std::ostringstream& py, const Scenario& s) {
    py << "# NeMo 2.0 pre-training recipe for the scenario \"" << s.name
       << "\", written by moe-plan export megatron --format nemo.\n"
          "# Model, parallelism and batch as the plan has them; data, tokenizer, learning-rate\n"
          "# schedule, logging and checkpointing are yours. Run with nemo_run, e.g.\n"
          "#   run.run(pretrain_recipe(dir=\"/checkpoints\"), executor=run.LocalExecutor())\n";
    const std::string megatron = exportMegatronArgs(s);
    std::istringstream lines(megatron);
    std::string text_line;
    bool any = false;
    while (std::getline(lines, text_line)) {
        if (text_line.rfind("# moe-plan: ", 0) == 0) {
            if (!any)
                py << "#\n# Not expressible as NeMo arguments (the plan assumes them):\n";
            any = true;
            py << "#   " << text_line.substr(12) << "\n";
        }
    }
}

void writeNemoImports(std::ostringstream& py, bool mla) {
    py << "\nimport nemo_run as run\n"
          "import torch\n"
          "import torch.nn.functional as F\n"
          "from megatron.core.distributed import DistributedDataParallelConfig\n"
          "from nemo import lightning as nl\n"
          "from nemo.collections import llm\n";
    if (mla)
        py << "from nemo.collections.llm.gpt.model.deepseek import DeepSeekConfig, "
              "DeepSeekModel\n";
    py << "from nemo.collections.llm.recipes.optim.adam import "
          "distributed_fused_adam_with_cosine_annealing\n\n\n";
}

/// The MoE arguments of the model config.
void writeNemoExpertArgs(PyArgs& arg, const Scenario& s) {
    const ModelSpec& m = s.model;
    arg("num_moe_experts", std::to_string(m.experts));
    arg("moe_ffn_hidden_size", std::to_string(m.expert_ffn_hidden));
    arg("moe_router_topk", std::to_string(m.top_k));
    arg("moe_layer_freq", m.dense_layers == 0
                              ? std::string("1")
                              : "[0] * " + std::to_string(m.dense_layers) + " + [1] * " +
                                    std::to_string(m.layers - m.dense_layers));
    arg("moe_shared_expert_intermediate_size",
        m.shared_experts > 0 ? std::to_string(m.shared_experts * m.effectiveSharedFfn()) : "None");
    arg("moe_expert_capacity_factor",
        m.capacity_factor > 0 ? formatNumber(m.capacity_factor) : "None");
    const int span = epNodeSpan(s.layout, s.cluster.gpus_per_node);
    if (s.layout.max_nodes_per_token > 0 && span > 0) {
        arg("moe_router_num_groups", std::to_string(span));
        arg("moe_router_group_topk", std::to_string(s.layout.max_nodes_per_token));
    }
    arg("moe_grouped_gemm", "True");
    const MoeDispatcher dispatcher = s.training.moe_dispatcher;
    arg("moe_token_dispatcher_type",
        dispatcher == MoeDispatcher::alltoall ? "\"alltoall\"" : "\"flex\"");
    if (dispatcher != MoeDispatcher::alltoall)
        arg("moe_flex_dispatcher_backend", std::string("\"") + toString(dispatcher) + "\"");
}

/// def model(): the model config (GPTConfig, or DeepSeekConfig for MLA).
void writeNemoModel(std::ostringstream& py, const Scenario& s) {
    const ModelSpec& m = s.model;
    const bool mla = m.attention == AttentionKind::mla;
    py << "def model() -> run.Config:\n";
    py << "    config = run.Config(\n";
    py << "        " << (mla ? "DeepSeekConfig" : "llm.GPTConfig") << ",\n";
    PyArgs arg(py);
    arg("num_layers", std::to_string(m.layers));
    arg("hidden_size", std::to_string(m.hidden));
    arg("ffn_hidden_size", std::to_string(m.ffn_hidden));
    arg("num_attention_heads", std::to_string(m.heads));
    if (!mla)
        arg("num_query_groups", std::to_string(m.kv_heads));
    arg("kv_channels", std::to_string(mla ? m.mla.qk_nope_head_dim : m.effectiveHeadDim()));
    arg("seq_length", std::to_string(m.seq_len));
    arg("vocab_size", std::to_string(m.vocab));
    arg("normalization", "\"RMSNorm\"");
    arg("activation_func", "F.silu");
    arg("gated_linear_unit", "True");
    arg("position_embedding_type", "\"rope\"");
    arg("add_bias_linear", "False");
    arg("share_embeddings_and_output_weights", "False");
    if (mla) {
        arg("q_lora_rank", m.mla.q_lora_rank > 0 ? std::to_string(m.mla.q_lora_rank) : "None");
        arg("kv_lora_rank", std::to_string(m.mla.kv_lora_rank));
        arg("qk_head_dim", std::to_string(m.mla.qk_nope_head_dim));
        arg("qk_pos_emb_head_dim", std::to_string(m.mla.qk_rope_head_dim));
        arg("v_head_dim", std::to_string(m.mla.v_head_dim));
    }
    if (m.isMoe())
        writeNemoExpertArgs(arg, s);
    if (s.training.recompute != Recompute::none)
        arg("recompute_granularity", std::string("\"") + toString(s.training.recompute) + "\"");
    py << "    )\n";
    py << "    return run.Config(" << (mla ? "DeepSeekModel" : "llm.GPTModel")
       << ", config=config)\n\n\n";
}

/// The MegatronStrategy: parallel sizes and the DDP config.
void writeNemoStrategy(std::ostringstream& py, const Scenario& s) {
    const ModelSpec& m = s.model;
    const LayoutSpec& l = s.layout;
    py << "    strategy = run.Config(\n"
          "        nl.MegatronStrategy,\n";
    PyArgs sarg(py);
    sarg("tensor_model_parallel_size", std::to_string(l.tp));
    sarg("pipeline_model_parallel_size", std::to_string(l.pp));
    sarg("virtual_pipeline_model_parallel_size", l.vpp > 1 ? std::to_string(l.vpp) : "None");
    sarg("context_parallel_size", std::to_string(l.cp));
    sarg("expert_model_parallel_size", std::to_string(l.ep));
    if (m.isMoe())
        sarg("expert_tensor_parallel_size", std::to_string(l.etp));
    sarg("sequence_parallel", pyBool(l.tp > 1));
    sarg("pipeline_dtype", "torch.bfloat16");
    py << "        ddp=run.Config(\n"
          "            DistributedDataParallelConfig,\n"
          "            check_for_nan_in_grad=True,\n"
          "            grad_reduce_in_fp32="
       << pyBool(m.grad_precision == Precision::fp32)
       << ",\n"
          "            overlap_grad_reduce=True,\n"
          "            overlap_param_gather="
       << pyBool(s.training.zero_stage >= 1)
       << ",\n"
          "        ),\n"
          "    )\n";
}

/// def pretrain_recipe(): strategy, trainer (steps from the run's tokens) and llm.pretrain.
void writeNemoPretrainRecipe(std::ostringstream& py, const Scenario& s) {
    const ModelSpec& m = s.model;
    const TrainingSpec& t = s.training;
    const int64_t steps =
        t.total_tokens > 0
            ? static_cast<int64_t>(
                  std::ceil(t.total_tokens / (static_cast<double>(t.global_batch) * m.seq_len)))
            : 0;
    py << "def pretrain_recipe(dir=None, name=\"" << s.name << "\", num_nodes=" << s.cluster.nodes
       << ", num_gpus_per_node=" << s.cluster.gpus_per_node << ") -> run.Partial:\n";
    writeNemoStrategy(py, s);
    py << "    trainer = run.Config(\n"
          "        nl.Trainer,\n"
          "        accelerator=\"gpu\",\n"
          "        devices=num_gpus_per_node,\n"
          "        num_nodes=num_nodes,\n"
          "        max_steps="
       << steps
       << ",\n"
          "        strategy=strategy,\n"
          "        plugins=run.Config(nl.MegatronMixedPrecision, precision=\""
       << (m.weight_precision == Precision::fp16 ? "16-mixed" : "bf16-mixed") << "\", fp8="
       << pyPrecision(m.compute_precision)
       // NeMo's MegatronMixedPrecision(fp8_recipe=...) takes Megatron-Core's recipe names.
       << (m.compute_precision == Precision::fp8
               ? std::string(", fp8_recipe=\"") + toString(m.fp8_recipe) + "\""
               : std::string())
       << "),\n"
          "    )\n";
    py << "    recipe = run.Partial(\n"
          "        llm.pretrain,\n"
          "        model=model(),\n"
          "        trainer=trainer,\n"
          "        data=run.Config(llm.MockDataModule, seq_length="
       << m.seq_len << ", global_batch_size=" << t.global_batch
       << ", micro_batch_size=" << t.micro_batch
       << "),\n"
          "        optim=distributed_fused_adam_with_cosine_annealing(max_lr=3e-4),\n"
          "    )\n";
    py << "    recipe.optim.config.use_distributed_optimizer = " << pyBool(t.zero_stage >= 1)
       << "\n";
    py << "    return recipe\n";
}

} // namespace

std::string exportNemoRecipe(const Scenario& s) {
    std::ostringstream py;
    writeNemoHeader(py, s);
    writeNemoImports(py, s.model.attention == AttentionKind::mla);
    writeNemoModel(py, s);
    writeNemoPretrainRecipe(py, s);
    return py.str();
}

} // namespace moe::io
