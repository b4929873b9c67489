#pragma once
// Internals of the Megatron argument import and export, shared by its files (not installed):
// the rule table's row type, the import state the rules write to, and the helpers the reader,
// the importer and the exporters share.
//
//   megatron_shell.cpp    reads launch scripts into flags (readMegatronArgs)
//   megatron_rules.cpp    the table: one rule per Megatron-Core argument, flag families
//   megatron_import.cpp   flags -> scenario (importMegatronArgs, describeImport)
//   megatron_export.cpp   scenario -> argument arrays and NeMo recipe

#include "moe/diagnostics.h"
#include "moe/io/megatron_args.h"
#include "moe/scenario.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace moe::io::megatron {

// ---------------------------------------------------------------------------------------------
// The mapping table. One row per flag: its arity, what becomes of it and, when mapped, how it
// sets the scenario (and how export writes it back). Adding a scenario field for a flag that
// is "not modelled yet" is a one-line change: replace notModelled(...) by intField(...).

enum class Arity { none, one, many };
enum class Group { model, moe, training, parallel };

struct ImportState;
using IntRef = int& (*)(Scenario&);
using ApplyFn = std::function<void(ImportState&, const MegatronFlag&, FlagReport&)>;
using WriteFn = std::function<void(const Scenario&, std::vector<std::string>&)>;

struct Rule {
    std::string flag;
    Arity arity = Arity::one;
    FlagStatus status = FlagStatus::no_effect;
    std::string note;
    Group group = Group::model;
    bool optional_value = false; ///< an unresolved variable in its value is not an error
    ApplyFn apply;
    WriteFn write; ///< export: appends "--flag value" lines
};

/// Where a scenario field's value came from, for messages.
struct Origin {
    int line = 0;
    std::string flag;
};

struct ImportState {
    const MegatronImportOptions* options = nullptr;
    Scenario s;
    Diagnostics diagnostics;
    std::map<std::string, Origin> origin; ///< scenario path -> flag that set it
    std::vector<std::string> notes;       ///< warnings in words
    std::set<std::string> unresolved;     ///< variables mapped flags need
    /// Flags whose outcome finish() decided from the others: flag -> (status, note).
    std::map<std::string, std::pair<FlagStatus, std::string>> outcome;
    int gpus_per_node = 8; ///< of the cluster the result will have

    // Flags whose effect depends on others, resolved in finish().
    bool gqa = false, swiglu = false, mla = false;
    std::optional<int> query_groups, ffn, kv_channels, etp, moe_ffn, topk, shared_size;
    std::optional<int> layers_per_virtual_stage, virtual_stages;
    std::optional<MegatronFlag> moe_layer_freq;
    std::optional<int64_t> train_iters, train_samples, global_batch, vocab;
    int vocab_divisible_by = 128;
    bool bf16 = false, fp16 = false, fp8 = false, grads_bf16 = false;
    bool distributed_optimizer = false, fsdp = false;
    bool overlap_grad_reduce = false, overlap_param_gather = false;
    bool sequence_parallel = false;
    bool overlap_moe_ep_comm = false;
    /// --moe-token-dispatcher-type and the flex dispatcher's backend (Megatron-Core's default
    /// backend is deepep; --moe-enable-deepep is its older spelling).
    std::string dispatcher_type = "alltoall", flex_backend = "deepep";
    /// Router balancing: --moe-router-load-balancing-type, expert bias, forced balance.
    std::string load_balancing = "aux_loss";
    bool expert_bias = false, force_balance = false;
    std::string sharding = "optim_grads_params";
    std::optional<int> router_groups, router_group_topk;
    std::string recompute;
    bool tp_pp_dp_mapping = false;
    std::optional<int> torchrun_nnodes, torchrun_nproc;

    void error(const MegatronFlag& flag, const std::string& message) {
        Diagnostic d;
        d.file = options->file_label;
        d.line = flag.line;
        d.message = flag.name + ": " + message;
        diagnostics.push_back(std::move(d));
    }
    void set(const std::string& path, const MegatronFlag& flag) {
        origin[path] = {flag.line, flag.name};
    }
};

/// Flags that change nothing the planner estimates, by family (one line each).
struct Family {
    const char* prefix;
    const char* why;
};

/// Every rule, built once.
const std::vector<Rule>& rules();
const Rule* findRule(const std::string& flag);
/// The no-effect family a flag without a rule belongs to, or nullptr (an unknown flag).
const Family* findFamily(const std::string& flag);

/// --moe-layer-freq for the model's leading dense layers: "1", or "([0]*d+[1]*(l-d))".
std::string layerFreqText(const ModelSpec& m);
/// The largest divisor d of 128 with vocab divisible by d*tp (Megatron pads the vocabulary to
/// a multiple of make-vocab-size-divisible-by x TP).
int vocabDivisor(int vocab, int tp);
/// `s` without leading and trailing blanks.
std::string trim(const std::string& s);
/// The values joined by spaces.
std::string joined(const std::vector<std::string>& values);
/// The flag's single value, or an error (missing, or several where one is due).
std::optional<std::string> single(ImportState& st, const MegatronFlag& flag);
/// The flag's single value as a whole number >= min, or an error naming the flag.
std::optional<int64_t> wholeNumber(ImportState& st, const MegatronFlag& flag, int64_t min = 0);
/// The EP group's span in nodes when it fills whole nodes (Megatron's expert groups for
/// group-limited routing are then the nodes), else 0.
int epNodeSpan(const LayoutSpec& layout, int gpus_per_node);

/// The import before the scenario is loaded: the state the rules wrote and a report per flag.
struct Built {
    ImportState state;
    std::vector<FlagReport> reports;
    std::vector<std::string> cluster_overrides;
};
Built buildFromFlags(const MegatronArgs& args, const MegatronImportOptions& options);
/// Quotes a --set value when the field is free text, so "a: b" stays text.
std::string assignmentFor(const std::string& path, const std::string& value);

} // namespace moe::io::megatron
