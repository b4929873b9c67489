#pragma once
// Megatron-Core's tokens-per-expert logs summed into a routing CSV (routing.histogram_csv).
//
// What Megatron writes (Megatron-LM, read at commit 34560c44 of
// megatron/training/activation_logging.py and the MoE code it hooks):
// - `--save-tokens-per-expert-interval N` logs iteration i when (i + 1) % N == 0, under
//   "iter": i + 1 (training.py:3032-3033, 3111).
// - Every global rank appends to {save}/tokens_per_expert/rank{R}.jsonl, R =
//   torch.distributed.get_rank() (activation_logging.py:236-239), one line per (iteration,
//   layer): {"iter": 100, "block": "decoder", "layer": 3, "tpe": [[128, 64], [96, 80]]}; MTP
//   layers as "block": "mtp" with "mtp_idx" (activation_logging.py:241-251).
// - "layer" is N of the module name decoder.layers.N.mlp.experts.linear_fc1
//   (activation_logging.py:78-79): the index into TransformerBlock.layers, which holds only
//   the rank's own pipeline chunk, numbered from 0 (transformer_block.py:375-379 builds it with
//   build_layer(spec, i + 1); the global number adds get_transformer_layer_offset, line 344,
//   which is pp_rank * layers / pp without virtual stages, transformer_layer.py:210). So it is
//   LOCAL, counts dense layers too, and with virtual pipeline stages the chunks' layers share
//   one key: the hook factory ignores the chunk name (activation_logging.py:182, 199), so
//   chunk 0's layer 0 and chunk 1's layer 0 land in the same record and cannot be told apart.
// - "tpe" is a list with one entry per forward call of that layer's linear_fc1, i.e. per
//   micro-batch (twice per micro-batch when activation recompute re-runs the forward, since
//   the hooks stay registered through the backward; training.py:3084-3112), and each entry is
//   the second argument of TEGroupedLinear's forward (activation_logging.py:203-208): the
//   tokens_per_expert list TEGroupedMLP passes (experts.py:932-933), one count per LOCAL
//   expert of the rank (num_moe_experts / EP experts, EP rank r holding experts
//   r * local .. r * local + local - 1, moe_layer.py:187-195). The count is every token slot
//   the EP group (and its expert-TP group) routed to that expert in the micro-batch
//   (token_dispatcher.py:570-592 sums over tp x ep sources), so the ranks of one expert-TP
//   group log identical counts, and the EP ranks of one expert-data-parallel replica together
//   log the whole layer for that replica's tokens. With FP8/FP4 the counts are padded to the
//   recipe's alignment (experts.py:899), and only the TE grouped-GEMM path with host-side
//   counts logs at all (a tensor argument is not recorded, activation_logging.py:207).
//
// Ranks map to (pipeline stage, expert-TP, EP, expert-DP) coordinates with Megatron's
// RankGenerator over the scenario's layout.order (placeLayout's expert grid), local layers to
// global ones with splitLayers (Megatron's even split: layers divisible by pp, no virtual
// stages). The sum runs over micro-batches, iterations and expert-DP replicas; expert-TP ranks
// other than 0 are skipped because they repeat rank 0's counts.

#include "moe/diagnostics.h"
#include "moe/scenario.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace moe::io {

struct MegatronTpeOptions {
    /// Only this logged iteration (the "iter" field); all of them when unset.
    std::optional<int64_t> iteration;
};

struct MegatronTpeImport {
    /// counts[moe_layer][expert]: token slots summed over everything read.
    std::vector<std::vector<uint64_t>> counts;
    /// The routing CSV: a header expert_0,expert_1,... and one row of counts per MoE layer.
    std::string csv;
    /// What was read, summed and skipped, and any gaps, in words.
    std::vector<std::string> notes;
    Diagnostics diagnostics; ///< errors with the rank file's name and line
    bool ok() const { return !hasErrors(diagnostics) && !counts.empty(); }
};

/// Sums the rank files found at `paths` (a directory holding rank*.jsonl or a
/// tokens_per_expert/ folder of them, or rank files named rankN.jsonl) for `scenario`'s model
/// and layout. A scenario the logs cannot be mapped for (virtual pipeline stages, layers not
/// divisible by pp), a rank outside the layout, a malformed line, a layer or expert count that
/// does not match the layout, or a MoE layer no complete EP group logged is an error; expert-DP
/// replicas with missing rank files are left out and said so in the notes.
MegatronTpeImport importMegatronTpe(const std::vector<std::string>& paths, const Scenario& scenario,
                                    const MegatronTpeOptions& options);

} // namespace moe::io
