// Megatron-Core arguments both ways: real launch scripts (tests/data/megatron, see its README)
// imported with every mapped field checked, the shell-word reader on its own, errors with lines,
// and export -> import round trips of every shipped sample.
#include "test_support.h"

#include "moe/edits.h"
#include "moe/io/megatron_args.h"
#include "moe/scenario_io.h"

#include <QtTest>

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <algorithm>

using namespace moe;
using namespace moe::io;

namespace {

std::string data(const char* name) {
    return test::readFile(std::string(MOE_TEST_DATA_DIR) + "/megatron/" + name);
}

MegatronImportOptions onPreset(const char* file, const char* gpu, int nodes) {
    MegatronImportOptions o;
    o.file_label = file;
    o.base = defaultScenario();
    o.gpu_preset = gpu;
    o.nodes = nodes;
    return o;
}

const FlagReport* report(const MegatronImport& r, const std::string& flag) {
    for (const FlagReport& f : r.flags)
        if (f.flag == flag)
            return &f;
    return nullptr;
}

FlagStatus statusOf(const MegatronImport& r, const std::string& flag) {
    const FlagReport* f = report(r, flag);
    return f ? f->status : FlagStatus::unknown;
}

std::string errors(const MegatronImport& r) {
    return formatAll(r.diagnostics);
}

const MegatronFlag* find(const MegatronArgs& args, const std::string& name) {
    for (const MegatronFlag& f : args.flags)
        if (f.name == name)
            return &f;
    return nullptr;
}

/// A small MoE model's flags, for the tests of one flag's effect.
const char* const kSmallMoeFlags = "--num-layers 4 --hidden-size 64 --num-attention-heads 4 "
                                   "--seq-length 128 --bf16 --swiglu --num-experts 8 "
                                   "--moe-router-topk 2 --expert-model-parallel-size 2 ";

} // namespace

class TestMegatronArgs : public QObject {
    Q_OBJECT

private slots:
    // The reader -------------------------------------------------------------------------------

    void readsArraysStringsContinuationsAndComments() {
        const std::string text = "#!/bin/bash\n"
                                 "LAYERS=12\n"
                                 "TP=${TP:-2}\n"
                                 "MODEL_ARGS=(\n"
                                 "    --num-layers $LAYERS   # a comment\n"
                                 "    \"--fp8-format hybrid\"\n"
                                 "    --sequence-parallel\n"
                                 ")\n"
                                 "EXTRA=\" \\\n"
                                 "    --hidden-size 1024 \\\n"
                                 "    --seq-length=2048 \\\n"
                                 "\"\n"
                                 "# --pipeline-model-parallel-size 4\n"
                                 "python pretrain_gpt.py ${MODEL_ARGS[@]} $EXTRA \\\n"
                                 "    --tensor-model-parallel-size ${TP} --save $1\n";
        const MegatronArgs args = readMegatronArgs(text);
        QVERIFY(find(args, "--pipeline-model-parallel-size") == nullptr); // commented out
        const MegatronFlag* layers = find(args, "--num-layers");
        QVERIFY(layers);
        QCOMPARE(layers->values, std::vector<std::string>{"12"});
        QCOMPARE(layers->line, 5);
        const MegatronFlag* fp8 = find(args, "--fp8-format");
        QVERIFY(fp8);
        QCOMPARE(fp8->values, std::vector<std::string>{"hybrid"});
        QCOMPARE(fp8->line, 6);
        const MegatronFlag* sp = find(args, "--sequence-parallel");
        QVERIFY(sp && sp->values.empty());
        // Flags inside a quoted string keep the line they were written on.
        const MegatronFlag* hidden = find(args, "--hidden-size");
        QVERIFY(hidden);
        QCOMPARE(hidden->values, std::vector<std::string>{"1024"});
        QCOMPARE(hidden->line, 10);
        const MegatronFlag* seq = find(args, "--seq-length");
        QVERIFY(seq);
        QCOMPARE(seq->values, std::vector<std::string>{"2048"});
        // A continuation keeps the logical line: the value of TP is its default.
        const MegatronFlag* tp = find(args, "--tensor-model-parallel-size");
        QVERIFY(tp);
        QCOMPARE(tp->values, std::vector<std::string>{"2"});
        QCOMPARE(tp->line, 15);
        const MegatronFlag* save = find(args, "--save");
        QVERIFY(save);
        QCOMPARE(save->unresolved, std::vector<std::string>{"1"});
        // Arrays and flag strings are read where written, not again where used.
        QCOMPARE(std::count_if(args.flags.begin(), args.flags.end(),
                               [](const MegatronFlag& f) { return f.name == "--num-layers"; }),
                 1);
    }

    void varsWinOverTheScriptAndYamlFormIsRead() {
        const std::string text = "TP=${TP:-2}\nPP=4\nARGS=(--tensor-model-parallel-size $TP "
                                 "--pipeline-model-parallel-size $PP)\n";
        const MegatronArgs args = readMegatronArgs(text, {{"TP", "8"}, {"PP", "2"}});
        QCOMPARE(find(args, "--tensor-model-parallel-size")->values, std::vector<std::string>{"8"});
        QCOMPARE(find(args, "--pipeline-model-parallel-size")->values,
                 std::vector<std::string>{"2"});

        const MegatronArgs yaml = readMegatronArgs("MODEL_ARGS:\n"
                                                   "  --num-layers: 61\n"
                                                   "  --swiglu: true\n"
                                                   "  --finetune: false\n"
                                                   "  --moe-layer-freq: ([0]*3+[1]*58)\n"
                                                   "  --data-path: ${DATA_PATH}\n");
        const MegatronFlag* freq = find(yaml, "--moe-layer-freq");
        QVERIFY(freq && freq->yaml_form);
        QCOMPARE(freq->values, std::vector<std::string>{"([0]*3+[1]*58)"});
        QCOMPARE(freq->line, 5);
        QCOMPARE(find(yaml, "--finetune")->values, std::vector<std::string>{"false"});
        QCOMPARE(find(yaml, "--data-path")->unresolved, std::vector<std::string>{"DATA_PATH"});
    }

    void bomCrlfAndAnnotations() {
        const std::string text = "\xEF\xBB\xBF--num-layers 4\r\n"
                                 "# moe-plan: layout.schedule=dualpipe\r\n"
                                 "--hidden-size 64\r\n";
        const MegatronArgs args = readMegatronArgs(text);
        QCOMPARE(args.flags.size(), std::size_t(2));
        QCOMPARE(args.flags[0].name, std::string("--num-layers"));
        QCOMPARE(args.flags[0].values, std::vector<std::string>{"4"});
        QCOMPARE(args.flags[1].values, std::vector<std::string>{"64"});
        QCOMPARE(args.annotations.size(), std::size_t(1));
        QCOMPARE(args.annotations[0].assignment, std::string("layout.schedule=dualpipe"));
        QCOMPARE(args.annotations[0].line, 2);
    }

    // Real scripts, every mapped field ---------------------------------------------------------

    void mixtral8x7bExample() {
        const MegatronImport r =
            importMegatronArgs(data("train_mixtral_8x7b_distributed.sh"),
                               onPreset("train_mixtral_8x7b_distributed.sh", "h100-sxm", 4));
        QVERIFY2(r.ok(), errors(r).c_str());
        const Scenario& s = *r.scenario;
        QCOMPARE(s.cluster.gpu.preset, std::string("h100-sxm"));
        QCOMPARE(s.cluster.nodes, 4);
        const ModelSpec& m = s.model;
        QCOMPARE(m.layers, 32);
        QCOMPARE(m.hidden, 4096);
        QCOMPARE(m.ffn_hidden, 14336);
        QCOMPARE(m.heads, 32);
        QCOMPARE(m.kv_heads, 8); // --group-query-attention --num-query-groups 8
        QCOMPARE(m.head_dim, 0);
        QCOMPARE(m.attention, AttentionKind::gqa);
        QCOMPARE(m.seq_len, 4096);
        QCOMPARE(m.experts, 8);
        QCOMPARE(m.top_k, 2);
        QCOMPARE(m.expert_ffn_hidden, 14336); // Megatron's default: the dense FFN size
        QCOMPARE(m.dense_layers, 0);
        QCOMPARE(m.shared_experts, 0);
        QCOMPARE(m.vocab, defaultScenario().model.vocab); // the tokenizer decides: kept
        QCOMPARE(m.weight_precision, Precision::bf16);
        QCOMPARE(m.compute_precision, Precision::bf16);
        QCOMPARE(m.grad_precision, Precision::fp32);
        const TrainingSpec& t = s.training;
        QCOMPARE(t.micro_batch, 1);
        QCOMPARE(t.global_batch, int64_t(256));
        QCOMPARE(t.total_tokens, 500000.0 * 256 * 4096); // --train-iters x batch x seq
        QCOMPARE(t.zero_stage, 1);                       // --use-distributed-optimizer
        QCOMPARE(t.recompute, Recompute::none);
        const LayoutSpec& l = s.layout;
        QCOMPARE(l.tp, 1);
        QCOMPARE(l.pp, 4);
        QCOMPARE(l.cp, 1);
        QCOMPARE(l.ep, 8);
        QCOMPARE(l.etp, 1); // defaults to TP
        QCOMPARE(l.dp, 32 / 4);
        QCOMPARE(l.vpp, 1);
        QCOMPARE(l.schedule, PipelineSchedule::one_f_one_b);
        QCOMPARE(toString(l.order), std::string("tp-cp-ep-dp-pp"));
        QCOMPARE(statusOf(r, "--moe-router-load-balancing-type"), FlagStatus::mapped);
        QCOMPARE(s.routing.balancing, BalancingMethod::aux_loss);
        QCOMPARE(report(r, "--moe-router-load-balancing-type")->line, 53);
        QCOMPARE(statusOf(r, "--lr"), FlagStatus::no_effect);
        QCOMPARE(statusOf(r, "--num-layers"), FlagStatus::mapped);
        QCOMPARE(report(r, "--num-layers")->line, 32);
        const std::string text = describeImport(r);
        QVERIFY(
            text.find("line 53: --moe-router-load-balancing-type aux_loss -> routing.balancing") !=
            std::string::npos);
        QVERIFY(text.find("model.vocab = 32000 from the base scenario") != std::string::npos);
    }

    void denseLlama3Fp8Example() {
        // One node from torchrun's --nnodes (NUM_NODES=1 in the script).
        const MegatronImport r =
            importMegatronArgs(data("train_llama3_8b_h100_fp8.sh"),
                               onPreset("train_llama3_8b_h100_fp8.sh", "h100-sxm", 0));
        QVERIFY2(r.ok(), errors(r).c_str());
        const Scenario& s = *r.scenario;
        QCOMPARE(s.cluster.nodes, 1);
        const ModelSpec& m = s.model;
        QVERIFY(!m.isMoe());
        QCOMPARE(m.layers, 32); // --num-layers $NUM_LAYERS, set in the script
        QCOMPARE(m.hidden, 4096);
        QCOMPARE(m.ffn_hidden, 14336);
        QCOMPARE(m.heads, 32);
        QCOMPARE(m.kv_heads, 8);
        QCOMPARE(m.head_dim, 0); // --kv-channels 128 = 4096 / 32
        QCOMPARE(m.seq_len, 8192);
        // --vocab-size 128256, padded to a multiple of 128 x TP 1: 128256 = 1002 x 128 already.
        QCOMPARE(m.vocab, 128256);
        QCOMPARE(m.weight_precision, Precision::bf16);
        QCOMPARE(m.compute_precision, Precision::fp8); // "--fp8-format hybrid" array element
        QCOMPARE(m.grad_precision, Precision::bf16);   // --grad-reduce-in-bf16
        QCOMPARE(s.training.micro_batch, 1);
        QCOMPARE(s.training.global_batch, int64_t(128));
        QCOMPARE(s.training.total_tokens, 1953125000.0 * 8192); // --train-samples x seq
        QCOMPARE(s.training.zero_stage, 1);
        QCOMPARE(s.layout.tp, 1);
        QCOMPARE(s.layout.cp, 1);
        QCOMPARE(s.layout.pp, 1); // the script comments --pipeline-model-parallel-size out
        QCOMPARE(s.layout.dp, 8);
        QCOMPARE(s.layout.ep, 1);
        QCOMPARE(statusOf(r, "--fp8-param-gather"), FlagStatus::not_modelled);
        QVERIFY(report(r, "--pipeline-model-parallel-size") == nullptr);
    }

    void deepSeekV3FsdpExample() {
        MegatronImportOptions o = onPreset("sbatch_mfsdp_deepseek_v3.sh", "h800-sxm", 32);
        o.overrides = {"model.vocab=129280"};
        const MegatronImport r = importMegatronArgs(data("sbatch_mfsdp_deepseek_v3.sh"), o);
        QVERIFY2(r.ok(), errors(r).c_str());
        const ModelSpec& m = r.scenario->model;
        QCOMPARE(m.layers, 61);
        QCOMPARE(m.dense_layers, 3); // --moe-layer-freq [0]*3+[1]*58
        QCOMPARE(m.hidden, 7168);
        QCOMPARE(m.ffn_hidden, 18432);
        QCOMPARE(m.heads, 128);
        QCOMPARE(m.attention, AttentionKind::mla);
        QCOMPARE(m.head_dim, 0); // --kv-channels plays no part with MLA
        QCOMPARE(m.mla.q_lora_rank, 1536);
        QCOMPARE(m.mla.kv_lora_rank, 512);
        QCOMPARE(m.mla.qk_nope_head_dim, 128);
        QCOMPARE(m.mla.qk_rope_head_dim, 64);
        QCOMPARE(m.mla.v_head_dim, 128);
        QCOMPARE(m.seq_len, 4096);
        QCOMPARE(m.experts, 256);
        QCOMPARE(m.top_k, 8);
        QCOMPARE(m.expert_ffn_hidden, 2048);
        QCOMPARE(m.shared_experts, 1);
        QCOMPARE(m.shared_expert_ffn_hidden, 2048);
        QCOMPARE(m.vocab, 129280); // --set
        const TrainingSpec& t = r.scenario->training;
        QCOMPARE(t.micro_batch, 4);              // MBS=${MBS:-4}
        QCOMPARE(t.global_batch, int64_t(2048)); // GBS=${GBS:-2048}
        QCOMPARE(t.total_tokens, 585937500.0 * 4096);
        QCOMPARE(t.zero_stage, 3); // --use-megatron-fsdp, optim_grads_params
        QCOMPARE(t.recompute, Recompute::selective);
        const LayoutSpec& l = r.scenario->layout;
        QCOMPARE(l.tp, 1);
        QCOMPARE(l.ep, 8); // EP=${EP:-8}
        QCOMPARE(l.etp, 1);
        QCOMPARE(l.pp, 1);
        QCOMPARE(l.dp, 256);
        // Eight expert groups while EP 8 fills one node: not the scenario's node-limited routing.
        QCOMPARE(l.max_nodes_per_token, 0);
        QCOMPARE(statusOf(r, "--moe-router-group-topk"), FlagStatus::not_modelled);
        QCOMPARE(statusOf(r, "--mtp-num-layers"), FlagStatus::mapped);
        QCOMPARE(report(r, "--mtp-num-layers")->line, 115);
        QCOMPARE(r.scenario->model.mtp_layers, 1); // --mtp-num-layers 1
        QCOMPARE(statusOf(r, "--recompute-modules"), FlagStatus::not_modelled);
        QCOMPARE(statusOf(r, "--container-image"), FlagStatus::unknown); // srun, in the heredoc
    }

    void deepSeekR1StringWithContinuations() {
        const MegatronImport r =
            importMegatronArgs(data("DeepSeek-R1.sh"), onPreset("DeepSeek-R1.sh", "h100-sxm", 1));
        QVERIFY2(r.ok(), errors(r).c_str());
        const ModelSpec& m = r.scenario->model;
        QCOMPARE(m.layers, 61);
        QCOMPARE(m.dense_layers, 3);
        QCOMPARE(m.attention, AttentionKind::mla);
        QCOMPARE(m.experts, 256);
        QCOMPARE(m.top_k, 8);
        QCOMPARE(r.scenario->training.recompute, Recompute::selective); // --recompute-activations
        QCOMPARE(r.scenario->training.global_batch, int64_t(8));        // micro 1 x DP 8
        QCOMPARE(report(r, "--num-layers")->line, 16);
        QCOMPARE(report(r, "--moe-layer-freq")->line, 29);
        QCOMPARE(statusOf(r, "--moe-layer-recompute"), FlagStatus::not_modelled);
        // Commented out after the string: not flags.
        QVERIFY(report(r, "--decoder-first-pipeline-num-layers") == nullptr);
    }

    void modelZooYamlNeedsItsVariables() {
        MegatronImportOptions o = onPreset("DeepSeek-V3.yaml", "h100-sxm", 128);
        MegatronImport r = importMegatronArgs(data("DeepSeek-V3.yaml"), o);
        QVERIFY(!r.ok());
        const std::string text = errors(r);
        for (const char* expected :
             {"DeepSeek-V3.yaml:23: error: --tensor-model-parallel-size: uses the shell variable "
              "TP, not set in the file; pass --var TP=VALUE",
              "DeepSeek-V3.yaml:24: error: --pipeline-model-parallel-size: uses the shell "
              "variable PP",
              "DeepSeek-V3.yaml:25: error: --expert-model-parallel-size: uses the shell variable "
              "EP",
              "DeepSeek-V3.yaml:38: error: --micro-batch-size: uses the shell variable MBS",
              "DeepSeek-V3.yaml:53: error: --seq-length: uses the shell variable SEQ_LEN"})
            QVERIFY2(text.find(expected) != std::string::npos, text.c_str());
        QVERIFY2(text.find("missing --seq-length") == std::string::npos, text.c_str());

        o.vars = {{"TP", "2"},  {"PP", "8"},     {"EP", "64"},       {"CP", "1"},
                  {"MBS", "1"}, {"GBS", "8192"}, {"SEQ_LEN", "4096"}};
        r = importMegatronArgs(data("DeepSeek-V3.yaml"), o);
        QVERIFY2(r.ok(), errors(r).c_str());
        const Scenario& s = *r.scenario;
        QCOMPARE(s.model.dense_layers, 3); // ([0]*3+[1]*58)
        QCOMPARE(s.model.attention, AttentionKind::mla);
        QCOMPARE(s.layout.tp, 2);
        QCOMPARE(s.layout.pp, 8);
        QCOMPARE(s.layout.ep, 64);
        QCOMPARE(s.layout.etp, 1);
        QCOMPARE(s.layout.dp, 1024 / 16);
        // 8 groups, EP 64 over 8-GPU nodes spans 8 nodes: the groups are the nodes.
        QCOMPARE(s.layout.max_nodes_per_token, 4);
        QCOMPARE(s.training.global_batch, int64_t(8192));
        QCOMPARE(s.training.zero_stage, 1);
        QCOMPARE(statusOf(r, "--finetune"), FlagStatus::no_effect); // "--finetune: false"
    }

    // Patterns, defaults and errors ------------------------------------------------------------

    void layerFrequencyForms() {
        const std::string head = "--num-layers 8 --hidden-size 64 --num-attention-heads 4 "
                                 "--seq-length 128 --num-experts 4 --bf16 --swiglu ";
        MegatronImportOptions o = onPreset("t.sh", "h100-sxm", 1);
        // Every second layer is MoE (Megatron: layer i is MoE when i % 2 == 0): 4 dense, noted.
        MegatronImport r = importMegatronArgs(head + "--moe-layer-freq 2", o);
        QVERIFY2(r.ok(), errors(r).c_str());
        QCOMPARE(r.scenario->model.dense_layers, 4);
        QVERIFY(describeImport(r).find("interleaves 4 dense layers") != std::string::npos);
        r = importMegatronArgs(head + "--moe-layer-freq \"([0]*2+[1]*2)*2\"", o);
        QVERIFY2(r.ok(), errors(r).c_str());
        QCOMPARE(r.scenario->model.dense_layers, 4);
        r = importMegatronArgs(head + "--moe-layer-freq '[0]+[1]*7'", o);
        QVERIFY2(r.ok(), errors(r).c_str());
        QCOMPARE(r.scenario->model.dense_layers, 1);
        QVERIFY(describeImport(r).find("interleaves") == std::string::npos);
        r = importMegatronArgs(head + "--moe-layer-freq '[0]*3+[1]*4'", o);
        QVERIFY(!r.ok());
        QVERIFY2(errors(r).find("the pattern has 7 entries for 8 layers") != std::string::npos,
                 errors(r).c_str());
        r = importMegatronArgs(head + "--moe-layer-freq '[1]*10**9'", o);
        QVERIFY(!r.ok());
        // Megatron's defaults when the flags are left out: FFN 4h (or 2/3 of it with SwiGLU,
        // rounded down to 64: int(4*64*2/3/64)*64 = 128), top-2, expert FFN = FFN, ETP = TP.
        r = importMegatronArgs(head, o);
        QVERIFY2(r.ok(), errors(r).c_str());
        QCOMPARE(r.scenario->model.ffn_hidden, 128);
        QCOMPARE(r.scenario->model.top_k, 2);
        QCOMPARE(r.scenario->model.expert_ffn_hidden, 128);
        QCOMPARE(r.scenario->model.kv_heads, 4); // no --group-query-attention: MHA
    }

    void sequenceParallelIsAFlag() {
        // Megatron's --sequence-parallel is off unless set: without it every TP rank runs the
        // norms and dropouts on all tokens (training.tp_activations: replicated). Export
        // writes the flag back only for a sequence-parallel layout with TP > 1.
        const std::string head = "--num-layers 4 --hidden-size 64 --num-attention-heads 4 "
                                 "--seq-length 128 --bf16 --swiglu --tensor-model-parallel-size 2 ";
        const MegatronImportOptions o = onPreset("t.sh", "h100-sxm", 1);
        MegatronImport r = importMegatronArgs(head, o);
        QVERIFY2(r.ok(), errors(r).c_str());
        QCOMPARE(r.scenario->training.tp_activations, TpActivations::replicated);
        QVERIFY(exportMegatronArgs(*r.scenario).find("--sequence-parallel") == std::string::npos);
        r = importMegatronArgs(head + "--sequence-parallel", o);
        QVERIFY2(r.ok(), errors(r).c_str());
        QCOMPARE(r.scenario->training.tp_activations, TpActivations::sequence_parallel);
        QVERIFY(exportMegatronArgs(*r.scenario).find("--sequence-parallel") != std::string::npos);
    }

    void epOverlapIsAFlag() {
        // --overlap-moe-expert-parallel-comm (Megatron-Core's combined 1F1B, off unless set)
        // is training.ep_overlap; export writes it back only when set.
        const std::string head = kSmallMoeFlags;
        const MegatronImportOptions o = onPreset("t.sh", "h100-sxm", 1);
        MegatronImport r = importMegatronArgs(head, o);
        QVERIFY2(r.ok(), errors(r).c_str());
        QCOMPARE(r.scenario->training.ep_overlap, EpOverlap::none);
        QVERIFY(exportMegatronArgs(*r.scenario).find("--overlap-moe-expert-parallel-comm") ==
                std::string::npos);
        r = importMegatronArgs(head + "--overlap-moe-expert-parallel-comm", o);
        QVERIFY2(r.ok(), errors(r).c_str());
        QCOMPARE(r.scenario->training.ep_overlap, EpOverlap::combined_1f1b);
        QVERIFY(exportMegatronArgs(*r.scenario).find("--overlap-moe-expert-parallel-comm") !=
                std::string::npos);
    }

    void dispatcherFlags() {
        // --moe-token-dispatcher-type alltoall (or unset) is training.moe_dispatcher alltoall;
        // flex is the flex backend's (--moe-flex-dispatcher-backend, deepep by default); export
        // writes the pair back.
        const std::string head = kSmallMoeFlags;
        const MegatronImportOptions o = onPreset("t.sh", "h100-sxm", 1);
        struct Case {
            const char* flags;
            MoeDispatcher expected;
            const char* exported;
        };
        const Case cases[] = {
            {"", MoeDispatcher::alltoall, "--moe-token-dispatcher-type alltoall"},
            {"--moe-token-dispatcher-type flex", MoeDispatcher::deepep,
             "--moe-flex-dispatcher-backend deepep"},
            {"--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep",
             MoeDispatcher::hybridep, "--moe-flex-dispatcher-backend hybridep"},
            {"--moe-token-dispatcher-type flex --moe-enable-deepep", MoeDispatcher::deepep,
             "--moe-token-dispatcher-type flex"},
            {"--moe-flex-dispatcher-backend hybridep", MoeDispatcher::alltoall,
             "--moe-token-dispatcher-type alltoall"},
        };
        for (const Case& c : cases) {
            const MegatronImport r = importMegatronArgs(head + c.flags, o);
            QVERIFY2(r.ok(), errors(r).c_str());
            QCOMPARE(r.scenario->training.moe_dispatcher, c.expected);
            QVERIFY2(exportMegatronArgs(*r.scenario).find(c.exported) != std::string::npos,
                     c.flags);
            const MegatronImport back = importMegatronArgs(exportMegatronArgs(*r.scenario), o);
            QVERIFY2(back.ok(), errors(back).c_str());
            QCOMPARE(back.scenario->training.moe_dispatcher, c.expected);
        }
        QVERIFY(!importMegatronArgs(head + "--moe-flex-dispatcher-backend nccl", o).ok());
    }

    /// The router's balancing from its flags (Megatron's default: an auxiliary loss), hidden
    /// dropout (default 0.1) and the attention backend.
    void routerDropoutAndAttentionFlags() {
        const std::string head = kSmallMoeFlags;
        const MegatronImportOptions o = onPreset("t.sh", "h100-sxm", 1);
        struct Case {
            const char* flags;
            BalancingMethod balancing;
        };
        const Case cases[] = {
            {"", BalancingMethod::aux_loss},
            {"--moe-router-load-balancing-type seq_aux_loss", BalancingMethod::aux_loss},
            {"--moe-router-load-balancing-type none", BalancingMethod::none},
            {"--moe-router-load-balancing-type seq_aux_loss --moe-router-enable-expert-bias",
             BalancingMethod::aux_free},
            {"--moe-router-enable-expert-bias --moe-router-force-load-balancing",
             BalancingMethod::perfect},
        };
        // An unbalanced router has no published spread to sample: that import needs the
        // popularity stated (here uniform), else it says so.
        QVERIFY(!importMegatronArgs(head + "--moe-router-load-balancing-type none", o).ok());
        MegatronImportOptions stated = o;
        stated.overrides = {"routing.model=uniform"};
        for (const Case& c : cases) {
            const MegatronImport r = importMegatronArgs(head + c.flags, stated);
            QVERIFY2(r.ok(), errors(r).c_str());
            QVERIFY2(r.scenario->routing.balancing == c.balancing, c.flags);
        }
        MegatronImport r = importMegatronArgs(head, o);
        QCOMPARE(r.scenario->model.dropout, 0.1);
        QCOMPARE(r.scenario->training.attention_kernel, AttentionKernel::flash);
        r = importMegatronArgs(head + "--hidden-dropout 0.0 --attention-backend unfused", o);
        QVERIFY2(r.ok(), errors(r).c_str());
        QCOMPARE(r.scenario->model.dropout, 0.0);
        QCOMPARE(r.scenario->training.attention_kernel, AttentionKernel::unfused);
        r = importMegatronArgs(head + "--attention-backend sdpa", o);
        QVERIFY(!r.ok());
    }

    void badValuesPointAtTheirLine() {
        MegatronImportOptions o = onPreset("bad.sh", "h100-sxm", 1);
        const std::string text = "ARGS=(\n"
                                 "    --num-layers sixty\n"
                                 "    --hidden-size 64 --num-attention-heads 4 --seq-length 128\n"
                                 "    --recompute-granularity sometimes\n"
                                 "    --optimizer sgd\n"
                                 ")\n";
        const MegatronImport r = importMegatronArgs(text, o);
        QVERIFY(!r.ok());
        const std::string e = errors(r);
        QVERIFY2(e.find("bad.sh:2: error: --num-layers: expected a whole number, got 'sixty'") !=
                     std::string::npos,
                 e.c_str());
        QVERIFY2(e.find("bad.sh:4: error: --recompute-granularity: expected one of full, "
                        "selective, got 'sometimes'") != std::string::npos,
                 e.c_str());
        QVERIFY2(e.find("bad.sh:5: error: --optimizer: the scenario models Adam(W) only") !=
                     std::string::npos,
                 e.c_str());
        // A layout the cluster cannot hold is reported at the flag that set it.
        const MegatronImport r2 = importMegatronArgs(
            "--num-layers 8 --hidden-size 64 --num-attention-heads 4 --seq-length 128\n"
            "--num-experts 6 --expert-model-parallel-size 4\n",
            o);
        QVERIFY(!r2.ok());
        QVERIFY2(errors(r2).find("bad.sh:2: error: --expert-model-parallel-size: layout.ep = 4 "
                                 "does not divide model.experts = 6") != std::string::npos,
                 errors(r2).c_str());
    }

    // Export -----------------------------------------------------------------------------------

    void exportThenImportRoundTripsEverySample() {
        for (const std::string& path : test::sampleFiles()) {
            const LoadResult loaded = loadScenarioFile(path);
            QVERIFY2(loaded.ok(), path.c_str());
            const Scenario& s = *loaded.scenario;
            const std::string args = exportMegatronArgs(s);
            MegatronImportOptions o;
            o.file_label = "exported.sh";
            o.base = s;
            const MegatronImport r = importMegatronArgs(args, o);
            QVERIFY2(r.ok(), (path + "\n" + errors(r) + "\n" + args).c_str());
            QVERIFY2(r.scenario->model == s.model, path.c_str());
            QVERIFY2(r.scenario->layout == s.layout, path.c_str());
            QVERIFY2(r.scenario->training == s.training, path.c_str());
            QVERIFY2(r.scenario->cluster == s.cluster, path.c_str());
            // No unknown flags in our own output.
            for (const FlagReport& f : r.flags)
                QVERIFY2(f.status != FlagStatus::unknown, (path + ": " + f.flag).c_str());
        }
    }

    void exportWritesLaunchableArguments() {
        const LoadResult ds = loadScenarioFile(test::samplePath("deepseek-v3-2048xh800.yaml"));
        QVERIFY(ds.ok());
        const std::string args = exportMegatronArgs(*ds.scenario);
        for (const char* expected :
             {"--num-layers 61\n", "--multi-latent-attention\n", "--q-lora-rank 1536\n",
              "--moe-layer-freq \"([0]*3+[1]*58)\"\n", "--num-experts 256\n",
              "--moe-router-topk 8\n", "--moe-shared-expert-intermediate-size 2048\n",
              "--pipeline-model-parallel-size 16\n", "--expert-model-parallel-size 64\n",
              "--fp8-format e4m3\n", "--fp8-recipe blockwise\n", "--moe-router-num-groups 8\n",
              "--moe-router-group-topk 4\n", "# moe-plan: layout.schedule=dualpipe\n",
              "# moe-plan: model.precision.dispatch=fp8\n",
              "torchrun --nnodes 256 --nproc_per_node 8"})
            QVERIFY2(args.find(expected) != std::string::npos, expected);

        const std::string nemo = exportNemoRecipe(*ds.scenario);
        for (const char* expected :
             {"DeepSeekConfig,", "num_layers=61,", "q_lora_rank=1536,", "kv_channels=128,",
              "moe_layer_freq=[0] * 3 + [1] * 58,", "pipeline_model_parallel_size=16,",
              "expert_model_parallel_size=64,", "global_batch_size=15360,", "fp8=\"e4m3\"",
              "fp8_recipe=\"blockwise\"", "#   layout.schedule=dualpipe"})
            QVERIFY2(nemo.find(expected) != std::string::npos, expected);
    }

    void nemoRecipeIsPython() {
        const QString python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        if (python.isEmpty())
            QSKIP("python3 is not installed: the NeMo recipe's syntax is not checked");
        QTemporaryDir dir;
        for (const char* name : {"deepseek-v3-2048xh800.yaml", "dense-70b-64xh100.yaml"}) {
            const LoadResult loaded = loadScenarioFile(test::samplePath(name));
            QVERIFY(loaded.ok());
            const QString path = dir.filePath(QStringLiteral("recipe.py"));
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(exportNemoRecipe(*loaded.scenario)));
            f.close();
            QProcess p;
            p.start(python, {"-m", "py_compile", path});
            QVERIFY(p.waitForFinished(30000));
            QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        }
    }
};

QTEST_GUILESS_MAIN(TestMegatronArgs)
#include "test_megatron_args.moc"
