// The flags the import accepts without a rule because they change nothing the planner
// estimates, by family (a prefix and why).

#include "megatron_rules.h"

#include <string>

namespace moe::io::megatron {

namespace {

constexpr Family kNoEffectFamilies[] = {
    {"--lr", "learning-rate schedule"},
    {"--min-lr", "learning-rate schedule"},
    {"--decoupled-", "learning-rate schedule"},
    {"--weight-decay", "optimizer hyperparameter"},
    {"--clip-grad", "optimizer hyperparameter"},
    {"--adam-", "optimizer hyperparameter"},
    {"--sgd-", "optimizer hyperparameter"},
    {"--init-method", "initialisation"},
    {"--attention-dropout", "regularisation (model.dropout follows --hidden-dropout)"},
    {"--log", "logging"},
    {"--tensorboard", "logging"},
    {"--wandb", "logging"},
    {"--timing-log", "logging"},
    {"--save", "checkpointing"},
    {"--load", "checkpointing"},
    {"--no-load-", "checkpointing"},
    {"--no-save-", "checkpointing"},
    {"--ckpt-", "checkpointing"},
    {"--dist-ckpt-", "checkpointing"},
    {"--auto-detect-ckpt-format", "checkpointing"},
    {"--finetune", "checkpointing"},
    {"--pretrained-checkpoint", "checkpointing"},
    {"--eval-", "evaluation"},
    {"--data-", "data"},
    {"--split", "data"},
    {"--mock-data", "data"},
    {"--tokenizer-", "data (the tokenizer decides the vocabulary: --set model.vocab=N)"},
    {"--vocab-file", "data"},
    {"--merge-file", "data"},
    {"--tiktoken-", "data"},
    {"--num-workers", "data"},
    {"--no-mmap-bin-files", "data"},
    {"--no-create-attention-mask-in-dataloader", "data"},
    {"--seed", "reproducibility"},
    {"--profile", "profiling"},
    {"--exit-", "job control"},
    {"--manual-gc", "job control"},
    {"--distributed-timeout-minutes", "job control"},
    {"--distributed-backend", "job control"},
    {"--use-mcore-models", "implementation choice"},
    {"--transformer-impl", "implementation choice"},
    {"--rotary-", "position encoding detail"},
    {"--rope-", "position encoding detail"},
    {"--no-rope-fusion", "kernel fusion"},
    {"--no-position-embedding", "position encoding detail"},
    {"--mscale", "position encoding detail"},
    {"--norm-epsilon", "numerics detail"},
    {"--layernorm-epsilon", "numerics detail"},
    {"--apply-layernorm-1p", "numerics detail"},
    {"--qk-layernorm", "numerics detail"},
    {"--no-masked-softmax-fusion", "kernel fusion"},
    {"--no-bias-", "kernel fusion"},
    {"--no-gradient-accumulation-fusion", "kernel fusion"},
    {"--cross-entropy-", "kernel fusion"},
    {"--calculate-per-token-loss", "loss detail"},
    {"--empty-unused-memory-level", "allocator detail"},
    {"--enable-experimental", "feature gate"},
    {"--no-check-for-nan-in-loss-and-grad", "checking"},
    {"--check-for-nan-in-loss-and-grad", "checking"},
    {"--moe-aux-loss-coeff", "router loss weight"},
    {"--moe-z-loss-coeff", "router loss weight"},
    {"--moe-router-score-function", "router detail"},
    {"--moe-router-pre-softmax", "router detail"},
    {"--moe-router-topk-scaling-factor", "router detail"},
    {"--moe-router-bias-update-rate", "router detail"},
    {"--moe-router-dtype", "router detail"},
    {"--moe-router-fusion", "kernel fusion"},
    {"--moe-router-padding-for-fp8", "kernel detail"},
    {"--moe-permute-fusion", "kernel fusion"},
    {"--moe-grouped-gemm", "kernel choice (the model assumes grouped GEMMs)"},
    {"--moe-token-drop-policy", "router detail"},
    {"--moe-input-jitter-eps", "router detail"},
    {"--moe-per-layer-logging", "logging"},
    {"--use-nccl-ub", "communication implementation"},
    {"--fsdp-double-buffer", "communication implementation"},
    {"--init-model-with-meta-device", "initialisation"},
    {"--megatron-fsdp-", "FSDP implementation detail"},
    {"--ddp-", "bucketing detail"},
    {"--fp8-amax-", "FP8 scaling detail"},
    {"--fp8-margin", "FP8 scaling detail"},
    {"--fp8-interval", "FP8 scaling detail"},
    {"--use-rotary-position-embeddings", "position encoding detail"},
    {"--node_rank", "launcher"},
    {"--node-rank", "launcher"},
    {"--master_addr", "launcher"},
    {"--master_port", "launcher"},
    {"--master-addr", "launcher"},
    {"--master-port", "launcher"},
    {"--rdzv", "launcher"},
    {"--train-data-path", "data"},
    {"--valid-data-path", "data"},
    {"--test-data-path", "data"},
    {"--warmup", "learning-rate schedule"},
};

} // namespace

const Family* findFamily(const std::string& flag) {
    for (const Family& f : kNoEffectFamilies)
        if (flag.rfind(f.prefix, 0) == 0)
            return &f;
    return nullptr;
}

} // namespace moe::io::megatron
