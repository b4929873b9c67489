#include "moe/validate.h"

#include "moe/format.h"
#include "moe/limits.h"
#include "moe/schema.h"

#include "degree_text.h"
#include "ranged_fields.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace moe {

namespace {

using limits::kMaxGpus;
using validate_detail::joined;
using validate_detail::product;

// Real-valued figures (bandwidths, TFLOPS, prices, times) are kept between these so that every
// time, cost and energy derived from them stays a finite double: the smallest positive figure
// divides at most ~1e20 bytes or FLOP, the largest multiplies at most ~1e20.
constexpr double kMinPositiveFigure = 1e-6;
constexpr double kMaxFigure = 1e15;

class Checker {
public:
    Checker(const Scenario& scenario, const SourceMap* source)
        : s_(scenario)
        , source_(source) {}

    Diagnostics run() {
        // Each section's own ranges first, then the rules that tie its fields to others, so
        // messages come in file order.
        for (const char* section : {"scenario", "cluster"})
            checkRanges(section);
        checkCluster();
        checkRanges("model");
        checkModel();
        checkPrecision();
        checkRanges("training");
        checkTraining();
        checkRanges("layout");
        checkLayout();
        checkExpertPlacement();
        checkRanges("routing");
        checkRouting();
        checkRanges({}); // any section without rules of its own
        return std::move(out_);
    }

private:
    const Scenario& s_;
    const SourceMap* source_;
    Diagnostics out_;

    // Facts established by earlier checks, so later rules that depend on a broken field are
    // skipped instead of piling a cascade of follow-up errors on top of its own.
    int64_t gpus_ = 0;          ///< 0 when the cluster shape is invalid
    int64_t micro_batches_ = 0; ///< per step and pipeline; 0 when unknown
    bool nodes_ok_ = false;
    bool layers_ok_ = false;
    bool dense_layers_ok_ = false;
    bool moe_ = false;   ///< valid expert count > 0
    bool dense_ = false; ///< expert count == 0
    bool needs_ffn_ = false;
    bool ep_ok_ = false;
    bool batch_ok_ = false; ///< global and micro-batch sizes within their bounds
    std::set<std::string, std::less<>> out_of_range_; ///< fields whose own range failed

    void report(Diagnostic::Severity severity, const std::string& field, std::string message) {
        Diagnostic d;
        d.severity = severity;
        d.field = field;
        d.message = std::move(message);
        if (source_) {
            d.file = source_->file;
            const SourceLocation loc = source_->find(field);
            d.line = loc.line;
            d.column = loc.column;
        }
        out_.push_back(std::move(d));
    }
    void error(const std::string& field, std::string message) {
        report(Diagnostic::Severity::error, field, std::move(message));
    }
    void warning(const std::string& field, std::string message) {
        report(Diagnostic::Severity::warning, field, std::move(message));
    }

    template <typename T> bool requireFinite(const std::string& field, T value) {
        if constexpr (std::is_floating_point_v<T>) {
            if (!std::isfinite(value)) {
                error(field, field + " = " + formatNumber(value) + " is not a finite number");
                return false;
            }
            if (std::abs(value) > kMaxFigure) {
                error(field, field + " = " + formatNumber(value) +
                                 " exceeds the supported maximum of " + formatNumber(kMaxFigure));
                return false;
            }
        }
        return true;
    }
    /// The documented upper bound of a size (limits.h); `value` is already known >= its minimum.
    bool requireAtMost(const std::string& field, int64_t value, int64_t max) {
        if (value <= max)
            return true;
        error(field, field + " = " + formatNumber(value) + " exceeds the supported maximum of " +
                         formatNumber(max));
        return false;
    }
    /// At least `min` and at most `max`; one message for each side.
    bool requireSize(const std::string& field, int64_t value, int64_t min, int64_t max) {
        return requireAtLeast(field, value, min) && requireAtMost(field, value, max);
    }
    template <typename T>
    bool requireAtLeast(const std::string& field, T value, std::type_identity_t<T> min) {
        if (!requireFinite(field, value))
            return false;
        if (value >= min)
            return true;
        error(field,
              field + " = " + formatNumber(value) + " must be at least " + formatNumber(min));
        return false;
    }
    template <typename T> bool requirePositive(const std::string& field, T value) {
        if constexpr (std::is_integral_v<T>) {
            return requireAtLeast(field, value, T{1});
        } else {
            if (!requireFinite(field, value))
                return false;
            if (value >= kMinPositiveFigure)
                return true;
            error(field, field + " = " + formatNumber(value) +
                             (value > 0 ? " is too small (the minimum is " +
                                              formatNumber(kMinPositiveFigure) + ")"
                                        : " must be greater than 0"));
            return false;
        }
    }
    template <typename T>
    bool requireBetween(const std::string& field, T value, std::type_identity_t<T> lo,
                        std::type_identity_t<T> hi) {
        if (!requireFinite(field, value))
            return false;
        if (value >= lo && value <= hi)
            return true;
        error(field, field + " = " + formatNumber(value) + " must be between " + formatNumber(lo) +
                         " and " + formatNumber(hi));
        return false;
    }
    /// "<divisor_name> = d does not divide <dividend_name> = n", blamed on `field`. Both values
    /// must already be known positive.
    void requireDivides(const std::string& field, const std::string& divisor_name, int64_t divisor,
                        const std::string& dividend_name, int64_t dividend,
                        const std::string& why = "") {
        if (dividend % divisor == 0)
            return;
        error(field, divisor_name + " = " + formatNumber(divisor) + " does not divide " +
                         dividend_name + " = " + formatNumber(dividend) + why);
    }

    /// The own range of every field of `section` ("": of the sections not listed in run()), from
    /// the schema table (schema.h), in table order. The rules below tie fields together and
    /// skip those whose own value is already refused.
    void checkRanges(std::string_view section) {
        for (const SchemaField* field : validate_detail::rangedFields(section)) {
            if (field->applies && !field->applies(s_))
                continue;
            if (!inRange(*field, fieldValue(*field, s_)))
                out_of_range_.insert(field->path);
        }
    }
    bool inRange(const SchemaField& field, const FieldValue& value) {
        const Range& r = field.range;
        if (const auto* real = std::get_if<double>(&value)) {
            switch (r.kind) {
            case Range::Kind::positive:
                return requirePositive(field.path, *real);
            case Range::Kind::at_least:
                return requireAtLeast(field.path, *real, r.min);
            case Range::Kind::size:
            case Range::Kind::between:
                return requireBetween(field.path, *real, r.min, r.max);
            case Range::Kind::none:
                return true;
            }
        }
        const auto* whole = std::get_if<int64_t>(&value);
        if (!whole)
            return true; // unsigned (routing.seed), text and lists have no range
        const auto bound = [](double b) { return static_cast<int64_t>(b); };
        switch (r.kind) {
        case Range::Kind::positive:
            return requirePositive(field.path, *whole);
        case Range::Kind::at_least:
            return requireAtLeast(field.path, *whole, bound(r.min));
        case Range::Kind::size:
            return requireSize(field.path, *whole, bound(r.min), bound(r.max));
        case Range::Kind::between:
            return requireBetween(field.path, *whole, bound(r.min), bound(r.max));
        case Range::Kind::none:
            break;
        }
        return true;
    }
    /// For the fields whose range a rule checks (range_checked_by_rules): the table's range.
    bool requireOwnRange(std::string_view path) {
        const SchemaField* field = scenarioSchema().find(path);
        return !field || inRange(*field, fieldValue(*field, s_));
    }
    /// The field's own range holds (checkRanges).
    bool ok(std::string_view field) const { return !out_of_range_.contains(field); }

    void checkCluster() {
        const ClusterSpec& c = s_.cluster;
        nodes_ok_ = ok("cluster.nodes");
        const bool gpn_ok = ok("cluster.gpus_per_node");
        const bool npr_ok = ok("cluster.nodes_per_rack");
        const bool nics_ok = ok("cluster.scale_out.nics_per_node");
        if (nodes_ok_ && gpn_ok) {
            const int64_t gpus = product({c.nodes, c.gpus_per_node});
            if (gpus > kMaxGpus)
                error("cluster.nodes",
                      "cluster: " + formatNumber(c.nodes) + " nodes x " +
                          formatNumber(c.gpus_per_node) + " GPUs = " + formatNumber(gpus) +
                          " GPUs exceeds the supported maximum of " + formatNumber(kMaxGpus));
            else
                gpus_ = gpus;
        }
        if (nodes_ok_ && nics_ok) {
            const int64_t nics = product({c.nodes, c.nics_per_node});
            if (nics > limits::kMaxNics)
                error("cluster.scale_out.nics_per_node",
                      "cluster: " + formatNumber(c.nodes) + " nodes x " +
                          formatNumber(c.nics_per_node) + " NICs = " + formatNumber(nics) +
                          " NICs exceeds the supported maximum of " +
                          formatNumber(limits::kMaxNics));
        }
        if (c.scale_up_domain == ScaleUpDomain::rack && nodes_ok_ && npr_ok &&
            c.nodes % c.nodes_per_rack != 0)
            error("cluster.nodes", "cluster.nodes = " + formatNumber(c.nodes) +
                                       " is not divisible by cluster.nodes_per_rack = " +
                                       formatNumber(c.nodes_per_rack) +
                                       " (cluster.scale_up.domain = rack needs whole racks)");
        if (nodes_ok_ && npr_ok)
            checkRackNodes(c);
        if (gpn_ok && nics_ok && c.gpus_per_node % c.nics_per_node != 0)
            warning(
                "cluster.scale_out.nics_per_node",
                "cluster.scale_out.nics_per_node = " + formatNumber(c.nics_per_node) +
                    " does not divide cluster.gpus_per_node = " + formatNumber(c.gpus_per_node) +
                    ", so some NICs serve more GPUs than others");
    }

    /// cluster.rack_nodes: each listed rack holds 1..nodes_per_rack nodes, together no more than
    /// the cluster has. A rack-wide NVLink domain is the whole rack, so there every rack is full.
    void checkRackNodes(const ClusterSpec& c) {
        int64_t placed = 0;
        for (std::size_t r = 0; r < c.rack_nodes.size(); ++r) {
            const std::string field = "cluster.rack_nodes[" + formatNumber(r) + "]";
            const int n = c.rack_nodes[r];
            placed += n;
            if (n < 1)
                error(field, field + " = " + formatNumber(n) + ": a rack holds at least one node");
            else if (n > c.nodes_per_rack)
                error(field, field + " = " + formatNumber(n) + " is more than a rack holds " +
                                 "(cluster.nodes_per_rack = " + formatNumber(c.nodes_per_rack) +
                                 ")");
            else if (c.scale_up_domain == ScaleUpDomain::rack && n != c.nodes_per_rack)
                error(field, field + " = " + formatNumber(n) +
                                 ": with cluster.scale_up.domain = rack a rack is one NVLink "
                                 "domain, so every rack holds cluster.nodes_per_rack = " +
                                 formatNumber(c.nodes_per_rack) + " nodes");
        }
        if (placed > c.nodes)
            error("cluster.rack_nodes",
                  "cluster.rack_nodes places " + formatNumber(placed) +
                      " nodes but the cluster has cluster.nodes = " + formatNumber(c.nodes));
    }

    void checkModel() {
        const ModelSpec& m = s_.model;
        layers_ok_ = ok("model.layers");
        dense_layers_ok_ = ok("model.dense_layers");
        const bool hidden_ok = ok("model.hidden");
        const bool heads_ok = ok("model.heads");
        // The MLA dimensions' ranges apply with MLA only (schema: onlyWhen).
        if (m.attention == AttentionKind::gqa && ok("model.kv_heads") && heads_ok)
            requireDivides("model.kv_heads", "model.kv_heads", m.kv_heads, "model.heads", m.heads);
        if (m.head_dim == 0 && hidden_ok && heads_ok && m.hidden % m.heads != 0)
            error("model.heads", "model.hidden = " + formatNumber(m.hidden) +
                                     " is not divisible by model.heads = " + formatNumber(m.heads) +
                                     "; set model.head_dim to give the head size");

        if (ok("model.experts")) {
            moe_ = m.experts > 0;
            dense_ = !moe_;
        }
        const std::string experts_note = " (model.experts = " + formatNumber(m.experts) + ")";
        needs_ffn_ = dense_ || (moe_ && m.dense_layers > 0);
        if (dense_) {
            if (m.top_k != 0)
                error("model.top_k", "model.top_k = " + formatNumber(m.top_k) +
                                         " must be 0 for a dense model" + experts_note);
            requireOwnRange("model.expert_ffn_hidden");
            if (m.ffn_hidden <= 0)
                error("model.ffn_hidden", "model.ffn_hidden = " + formatNumber(m.ffn_hidden) +
                                              " must be greater than 0 for a dense model" +
                                              experts_note);
            else
                requireAtMost("model.ffn_hidden", m.ffn_hidden, limits::kMaxFfnHidden);
            return;
        }
        if (!moe_) {
            requireOwnRange("model.ffn_hidden");
            return;
        }
        if (m.top_k < 1)
            error("model.top_k", "model.top_k = " + formatNumber(m.top_k) +
                                     " must be at least 1 for a MoE model" + experts_note);
        else if (m.top_k > m.experts)
            error("model.top_k", "model.top_k = " + formatNumber(m.top_k) +
                                     " exceeds model.experts = " + formatNumber(m.experts));
        else
            requireAtMost("model.top_k", m.top_k, limits::kMaxTopK);
        if (layers_ok_ && dense_layers_ok_ && m.dense_layers < m.layers)
            if (product({m.experts, m.moeLayers()}) > limits::kMaxExpertLayerCells)
                error("model.experts",
                      "model: " + formatNumber(m.experts) + " experts x " +
                          formatNumber(m.moeLayers()) +
                          " MoE layers = " + formatNumber(product({m.experts, m.moeLayers()})) +
                          " exceeds the supported maximum of " +
                          formatNumber(limits::kMaxExpertLayerCells) + " (expert, layer) pairs");
        if (m.expert_ffn_hidden > limits::kMaxFfnHidden)
            requireAtMost("model.expert_ffn_hidden", m.expert_ffn_hidden, limits::kMaxFfnHidden);
        else if (m.expert_ffn_hidden <= 0)
            error("model.expert_ffn_hidden",
                  "model.expert_ffn_hidden = " + formatNumber(m.expert_ffn_hidden) +
                      " must be greater than 0 for a MoE model" + experts_note);
        if (layers_ok_ && dense_layers_ok_ && m.dense_layers >= m.layers)
            error("model.dense_layers",
                  "model.dense_layers = " + formatNumber(m.dense_layers) +
                      " must be less than model.layers = " + formatNumber(m.layers) +
                      " so that the MoE model has MoE layers");
        if (needs_ffn_ && m.ffn_hidden <= 0)
            error("model.ffn_hidden", "model.ffn_hidden = " + formatNumber(m.ffn_hidden) +
                                          " must be greater than 0 because model.dense_layers = " +
                                          formatNumber(m.dense_layers) +
                                          " (those layers use the dense FFN)");
        else if (needs_ffn_)
            requireAtMost("model.ffn_hidden", m.ffn_hidden, limits::kMaxFfnHidden);
        else
            requireOwnRange("model.ffn_hidden");
    }

    /// FP8 needs FP8 tensor cores: a GPU whose fp8_tflops is 0 (A100) has none, so FP8 GEMMs
    /// are refused rather than priced at a zero peak.
    void checkPrecision() {
        const GpuSpec& gpu = s_.cluster.gpu;
        checkFp8Recipe();
        if (!ok("cluster.gpu_overrides.fp8_tflops") || gpu.fp8_tflops > 0)
            return;
        const std::string no_fp8 = gpu.name + " has no FP8 tensor cores";
        if (s_.model.compute_precision == Precision::fp8)
            error("model.precision.compute",
                  "model.precision.compute = fp8, but " + no_fp8 + "; use bf16");
        // The dispatch payload is only bytes on the wire, so FP8 there is possible in software,
        // but the experts then dequantize to BF16, a cost the model does not charge.
        if (s_.model.dispatch_precision == Precision::fp8)
            warning("model.precision.dispatch",
                    "model.precision.dispatch = fp8, but " + no_fp8 +
                        ": the experts would dequantize the tokens to BF16, which is not "
                        "modelled; use bf16");
    }

    /// MXFP8's block scales are applied by the tensor cores, which only Blackwell's have (the
    /// catalog's mxfp8 capability); a recipe without FP8 GEMMs has nothing to scale.
    void checkFp8Recipe() {
        const ModelSpec& m = s_.model;
        const GpuSpec& gpu = s_.cluster.gpu;
        const std::string recipe = toString(m.fp8_recipe);
        if (m.compute_precision != Precision::fp8) {
            if (m.fp8_recipe != ModelSpec{}.fp8_recipe)
                warning("model.precision.fp8_recipe",
                        "model.precision.fp8_recipe = " + recipe +
                            " has no effect: model.precision.compute = " +
                            toString(m.compute_precision) + ", not fp8");
            return;
        }
        if (m.fp8_recipe == Fp8Recipe::mxfp8 && !gpu.mxfp8)
            error("model.precision.fp8_recipe",
                  "model.precision.fp8_recipe = mxfp8, but " + gpu.name +
                      " has no MXFP8 tensor cores (block scales in hardware: Blackwell, e.g. b200, "
                      "gb200); use blockwise, tensorwise or delayed");
    }

    void checkTraining() {
        const TrainingSpec& t = s_.training;
        batch_ok_ = ok("training.global_batch") && ok("training.micro_batch");
        if (t.optimizer != "adam" && t.optimizer != "adamw")
            error("training.optimizer",
                  "training.optimizer = \"" + t.optimizer + "\" is not one of: adam, adamw");
    }

    void checkLayout() {
        const LayoutSpec& l = s_.layout;
        const ModelSpec& m = s_.model;
        const TrainingSpec& t = s_.training;
        const bool tp_ok = ok("layout.tp");
        const bool cp_ok = ok("layout.cp");
        const bool pp_ok = ok("layout.pp");
        const bool dp_ok = ok("layout.dp");
        const bool vpp_ok = ok("layout.vpp");
        ep_ok_ = ok("layout.ep");
        const bool etp_ok = ok("layout.etp");

        checkOrder(l.order);
        if (ok("layout.max_nodes_per_token") && nodes_ok_ &&
            l.max_nodes_per_token > s_.cluster.nodes)
            error("layout.max_nodes_per_token",
                  "layout.max_nodes_per_token = " + formatNumber(l.max_nodes_per_token) +
                      " exceeds cluster.nodes = " + formatNumber(s_.cluster.nodes));

        if (tp_ok && cp_ok && pp_ok && dp_ok && gpus_ > 0) {
            const int64_t ranks = product({l.tp, l.cp, l.pp, l.dp});
            if (ranks != gpus_)
                error("layout.dp", "layout: tp*cp*pp*dp = " + joined({l.tp, l.cp, l.pp, l.dp}) +
                                       " = " + formatNumber(ranks) +
                                       " does not equal the cluster's " + formatNumber(gpus_) +
                                       " GPUs (" + formatNumber(s_.cluster.nodes) + " nodes x " +
                                       formatNumber(s_.cluster.gpus_per_node) + " GPUs)");
        }

        const std::string dense_note = " must be 1 for a dense model (model.experts = 0)";
        if (dense_ && ep_ok_ && l.ep != 1)
            error("layout.ep", "layout.ep = " + formatNumber(l.ep) + dense_note);
        if (dense_ && etp_ok && l.etp != 1)
            error("layout.etp", "layout.etp = " + formatNumber(l.etp) + dense_note);
        if (moe_ && ep_ok_ && etp_ok && tp_ok && cp_ok && dp_ok) {
            const int64_t expert_ranks = product({l.ep, l.etp});
            const int64_t dense_ranks = product({l.tp, l.cp, l.dp});
            if (dense_ranks % expert_ranks != 0)
                error("layout.ep", "layout.ep*etp = " + joined({l.ep, l.etp}) + " = " +
                                       formatNumber(expert_ranks) +
                                       " does not divide tp*cp*dp = " + formatNumber(dense_ranks) +
                                       " (the expert grid folds over the same GPUs)");
        }
        if (moe_ && ep_ok_)
            requireDivides("layout.ep", "layout.ep", l.ep, "model.experts", m.experts);
        if (moe_ && etp_ok && m.expert_ffn_hidden > 0)
            requireDivides("layout.etp", "layout.etp", l.etp, "model.expert_ffn_hidden",
                           m.expert_ffn_hidden);

        if (tp_ok)
            checkTensorParallel(l.tp);
        if (cp_ok && l.cp > 1 && m.seq_len >= 1 && m.seq_len % (2 * int64_t{l.cp}) != 0)
            error("layout.cp", "model.seq_len = " + formatNumber(m.seq_len) +
                                   " is not divisible by 2*layout.cp = " + joined({2, l.cp}) +
                                   " = " + formatNumber(2 * int64_t{l.cp}) +
                                   " (context parallelism splits each sequence into 2*cp "
                                   "chunks)");

        if (dp_ok && batch_ok_) {
            const int64_t per_step = product({l.dp, t.micro_batch});
            if (t.global_batch % per_step != 0)
                error("training.global_batch",
                      "training.global_batch = " + formatNumber(t.global_batch) +
                          " is not divisible by layout.dp * training.micro_batch = " +
                          formatNumber(l.dp) + " * " + formatNumber(t.micro_batch));
            else if (t.global_batch / per_step > limits::kMaxMicroBatchesPerStep)
                error("training.global_batch",
                      "training.global_batch / (layout.dp * training.micro_batch) = " +
                          formatNumber(t.global_batch / per_step) +
                          " micro-batches per step exceeds the supported maximum of " +
                          formatNumber(limits::kMaxMicroBatchesPerStep));
            else
                micro_batches_ = t.global_batch / per_step;
        }
        if (pp_ok && vpp_ok)
            checkPipeline();
    }

    void checkOrder(const RankOrder& order) {
        std::array<int, kDimCount> seen{};
        for (Dim d : order) {
            const int i = static_cast<int>(d);
            // Only reachable from code that casts integers to Dim; the name would be garbage.
            if (i < 0 || i >= kDimCount) {
                error("layout.order", "layout.order contains an unknown dimension");
                return;
            }
            ++seen[i];
        }
        for (int count : seen)
            if (count != 1) {
                error("layout.order", "layout.order = " + toString(order) +
                                          " must name each of tp, cp, ep, dp, pp exactly once");
                return;
            }
    }

    void checkTensorParallel(int tp) {
        const ModelSpec& m = s_.model;
        if (m.heads >= 1)
            requireDivides("layout.tp", "layout.tp", tp, "model.heads", m.heads);
        if (m.attention == AttentionKind::gqa && m.kv_heads >= 1 && m.kv_heads % tp != 0 &&
            tp % m.kv_heads != 0)
            error("layout.tp", "layout.tp = " + formatNumber(tp) +
                                   " and model.kv_heads = " + formatNumber(m.kv_heads) +
                                   " do not divide one another (TP must either split the KV "
                                   "heads or replicate them evenly)");
        if (needs_ffn_ && m.ffn_hidden > 0)
            requireDivides("layout.tp", "layout.tp", tp, "model.ffn_hidden", m.ffn_hidden);
        // Shared experts run like a dense FFN on the attention's TP group.
        if (moe_ && m.shared_experts > 0 && m.effectiveSharedFfn() > 0) {
            const bool own = m.shared_expert_ffn_hidden > 0;
            requireDivides("layout.tp", "layout.tp", tp,
                           own ? "model.shared_expert_ffn_hidden" : "model.expert_ffn_hidden",
                           m.effectiveSharedFfn(), own ? "" : " (the shared experts' FFN size)");
        }
    }

    /// Megatron-Core's uneven pipeline (transformer_config.py, transformer_block.py
    /// get_num_layers_to_build): the first / last stage hold the given layers, the stages between
    /// them an equal share of the rest, and every stage at least one layer per virtual stage.
    /// Megatron-Core also wants each end stage's count divisible by vpp; the planner splits it
    /// as evenly as possible (what --pipeline-model-parallel-layout expresses), so a 61-layer
    /// model can interleave. False when the split is impossible.
    bool checkUnevenStages() {
        const LayoutSpec& l = s_.layout;
        if (!layers_ok_)
            return false;
        const int layers = s_.model.layers;
        const int vpp = std::max(1, l.vpp);
        if (l.pp < 2) {
            error(l.first_stage_layers > 0 ? "layout.first_stage_layers"
                                           : "layout.last_stage_layers",
                  "layout.first_stage_layers and last_stage_layers need layout.pp >= 2 (it is " +
                      formatNumber(l.pp) + ")");
            return false;
        }
        int rest = layers, middle = l.pp;
        for (const auto& [field, count] :
             {std::pair<const char*, int>{"layout.first_stage_layers", l.first_stage_layers},
              std::pair<const char*, int>{"layout.last_stage_layers", l.last_stage_layers}}) {
            if (count <= 0)
                continue;
            if (count < vpp) {
                error(field, std::string(field) + " = " + formatNumber(count) +
                                 " is fewer than layout.vpp = " + formatNumber(vpp) +
                                 " (every virtual stage needs at least one layer)");
                return false;
            }
            rest -= count;
            --middle;
        }
        const std::string split =
            "model.layers = " + formatNumber(layers) +
            " less layout.first_stage_layers = " + formatNumber(l.first_stage_layers) +
            " and last_stage_layers = " + formatNumber(l.last_stage_layers) + " leaves " +
            formatNumber(rest) + " layers for the " + formatNumber(middle) + " stages between";
        const char* field =
            l.last_stage_layers > 0 ? "layout.last_stage_layers" : "layout.first_stage_layers";
        if (rest < 0 || (middle == 0 && rest != 0)) {
            error(field, split + " (the end stages must hold all the layers the others do not)");
            return false;
        }
        if (middle > 0 && (rest % middle != 0 || rest < int64_t{middle} * vpp)) {
            error(field, split + ": they need an equal share of at least layout.vpp = " +
                             formatNumber(vpp) + " each (Megatron-Core splits them evenly)");
            return false;
        }
        return true;
    }

    void checkPipeline() {
        const LayoutSpec& l = s_.layout;
        const int layers = s_.model.layers;
        const int64_t stages = product({l.pp, l.vpp});
        const bool interleaved = l.schedule == PipelineSchedule::interleaved;
        bool stages_fit = layers_ok_;
        if (layers_ok_ && stages > layers) {
            stages_fit = false;
            error(l.vpp > 1 && l.pp <= layers ? "layout.vpp" : "layout.pp",
                  "layout.pp*vpp = " + formatNumber(stages) +
                      " exceeds model.layers = " + formatNumber(layers));
        }
        if (l.vpp > 1 && !interleaved)
            error("layout.vpp", "layout.vpp = " + formatNumber(l.vpp) +
                                    " needs layout.schedule = interleaved (it is " +
                                    toString(l.schedule) + ")");
        const std::string micro_batches =
            "training.global_batch / (layout.dp * training.micro_batch) = " +
            formatNumber(s_.training.global_batch) + " / (" + formatNumber(l.dp) + " * " +
            formatNumber(s_.training.micro_batch) + ") = " + formatNumber(micro_batches_);
        const bool uneven = l.first_stage_layers > 0 || l.last_stage_layers > 0;
        if (uneven)
            stages_fit = checkUnevenStages() && stages_fit;
        if (interleaved) {
            if (stages_fit && !uneven && layers % stages != 0)
                error("layout.vpp", "model.layers = " + formatNumber(layers) +
                                        " is not divisible by layout.pp*vpp = " +
                                        joined({l.pp, l.vpp}) + " = " + formatNumber(stages) +
                                        " (the interleaved schedule gives each virtual stage "
                                        "the same number of layers; layout.first_stage_layers "
                                        "and last_stage_layers make the end stages uneven)");
            if (micro_batches_ > 0 && micro_batches_ % l.pp != 0)
                error("training.global_batch",
                      "layout.schedule = interleaved needs a number of micro-batches that is a "
                      "multiple of layout.pp = " +
                          formatNumber(l.pp) + ", but " + micro_batches);
            if (l.vpp == 1)
                warning("layout.vpp", "layout.schedule = interleaved with layout.vpp = 1 runs "
                                      "like 1f1b; set layout.vpp > 1 to interleave");
        }
        if (l.schedule == PipelineSchedule::dualpipe) {
            if (l.pp % 2 != 0)
                error("layout.pp", "layout.pp = " + formatNumber(l.pp) +
                                       " must be even for layout.schedule = dualpipe");
            else if (micro_batches_ > 0 && micro_batches_ < 2 * int64_t{l.pp})
                error("training.global_batch",
                      "layout.schedule = dualpipe needs at least 2*layout.pp = " +
                          formatNumber(2 * int64_t{l.pp}) + " micro-batches, but " + micro_batches);
            else if (micro_batches_ > 0 && micro_batches_ % 2 != 0)
                // DualPipe feeds half of the micro-batches from each end of the pipeline.
                error("training.global_batch",
                      "layout.schedule = dualpipe needs an even number of micro-batches (half "
                      "enter from each end), but " +
                          micro_batches);
        }
        checkEpOverlap();
    }

    /// Megatron-Core's combined 1F1B schedules only the interleaved pipeline and no pipeline
    /// (pipeline_parallel/combined_1f1b.py); DualPipe pairs its passes anyway.
    void checkEpOverlap() {
        const LayoutSpec& l = s_.layout;
        if (s_.training.ep_overlap == EpOverlap::none)
            return;
        const std::string what = "training.ep_overlap = combined-1f1b";
        if (!moe_ || l.ep < 2)
            error("training.ep_overlap",
                  what + " overlaps the expert-parallel all-to-all, but " +
                      (moe_ ? "layout.ep = " + formatNumber(l.ep) + " has none"
                            : std::string("the model has no MoE layers")));
        else if (l.schedule == PipelineSchedule::dualpipe)
            error("training.ep_overlap",
                  what + " is for 1F1B pipelines; layout.schedule = dualpipe already runs its "
                         "passes in overlapped pairs (set training.ep_overlap = none)");
        else if (l.pp > 1 && !(l.schedule == PipelineSchedule::interleaved && l.vpp > 1))
            error("training.ep_overlap",
                  what +
                      " needs layout.schedule = interleaved with layout.vpp > 1 when "
                      "layout.pp > 1 (Megatron-Core pairs passes only in the interleaved "
                      "schedule), but layout.schedule = " +
                      std::string(toString(l.schedule)) + ", layout.vpp = " + formatNumber(l.vpp));
    }

    void checkExpertPlacement() {
        const LayoutSpec& l = s_.layout;
        const ModelSpec& m = s_.model;
        if (l.expert_placement.empty())
            return;
        if (!moe_) {
            if (dense_)
                error("layout.expert_placement",
                      "layout.expert_placement places experts, but model.experts = 0 (a dense "
                      "model has none)");
            return;
        }
        const bool layers_known = layers_ok_ && dense_layers_ok_ && m.dense_layers < m.layers;
        // (expert, layer) -> first entry placing it, to catch contradicting entries.
        std::map<std::pair<int, int>, size_t> placed;
        for (size_t i = 0; i < l.expert_placement.size(); ++i) {
            const ExpertPlacement& p = l.expert_placement[i];
            const std::string path = "layout.expert_placement[" + formatNumber(i) + "]";
            bool in_range = true;
            if (p.expert < 0 || p.expert >= m.experts) {
                in_range = false;
                error(path + ".expert", path + ".expert = " + formatNumber(p.expert) +
                                            " is out of range 0.." + formatNumber(m.experts - 1) +
                                            " (model.experts = " + formatNumber(m.experts) + ")");
            }
            if (p.layer != -1 && layers_known && (p.layer < 0 || p.layer >= m.moeLayers())) {
                in_range = false;
                error(path + ".layer", path + ".layer = " + formatNumber(p.layer) +
                                           " is out of range 0.." +
                                           formatNumber(m.moeLayers() - 1) + " (the model has " +
                                           formatNumber(m.moeLayers()) + " MoE layers)");
            }
            checkEpRanks(path, p.ep_ranks);
            if (!in_range)
                continue;
            const auto [it, fresh] = placed.try_emplace({p.expert, p.layer}, i);
            if (!fresh)
                error(path, path + " places expert " + formatNumber(p.expert) + " again " +
                                (p.layer < 0 ? std::string("for every MoE layer")
                                             : "for MoE layer " + formatNumber(p.layer)) +
                                ", after layout.expert_placement[" + formatNumber(it->second) +
                                "]");
        }
    }

    void checkEpRanks(const std::string& path, const std::vector<int>& ranks) {
        const std::string field = path + ".ep_ranks";
        if (ranks.empty()) {
            error(field, field + " is empty; list at least one EP rank");
            return;
        }
        const int ep = s_.layout.ep;
        std::set<int> seen;
        for (int r : ranks) {
            if (ep_ok_ && (r < 0 || r >= ep))
                error(field, field + " contains " + formatNumber(r) + ", out of range 0.." +
                                 formatNumber(ep - 1) + " (layout.ep = " + formatNumber(ep) + ")");
            else if (!seen.insert(r).second)
                error(field, field + " lists EP rank " + formatNumber(r) + " more than once");
        }
    }

    void checkRouting() {
        const RoutingSpec& r = s_.routing;
        if (moe_ && r.model == PopularityModel::published && r.balancing == BalancingMethod::none)
            error("routing.model",
                  "routing.balancing = none has no published expert-load spread to sample "
                  "(no publication measures an unbalanced router we could use): set "
                  "routing.model to histogram (your measured loads), zipf (a what-if skew) or "
                  "uniform");
        if (r.model != PopularityModel::histogram || !moe_)
            return;
        const std::string field = "routing.histogram_csv";
        if (r.histogram.empty()) {
            error(field, r.histogram_csv.empty()
                             ? "routing.model = histogram needs routing.histogram_csv"
                             : field + " = " + r.histogram_csv + " has no rows of weights");
            return;
        }
        const std::string name = field + " = " + r.histogram_csv;
        const ModelSpec& m = s_.model;
        const size_t rows = r.histogram.size();
        if (layers_ok_ && dense_layers_ok_ && m.moeLayers() > 0 && rows != 1 &&
            rows != static_cast<size_t>(m.moeLayers()))
            error(field, name + " has " + formatNumber(rows) +
                             " rows; it needs 1 (for every layer) or one per MoE layer (" +
                             formatNumber(m.moeLayers()) + ")");
        for (size_t i = 0; i < rows; ++i) {
            const std::vector<double>& row = r.histogram[i];
            const std::string where = name + " row " + formatNumber(i + 1);
            if (row.size() != static_cast<size_t>(m.experts)) {
                error(field, where + " has " + formatNumber(row.size()) +
                                 " weights; it needs one per expert (model.experts = " +
                                 formatNumber(m.experts) + ")");
                continue;
            }
            double sum = 0;
            bool bad = false;
            for (double w : row) {
                if (!std::isfinite(w) || w < 0) {
                    error(field, where + " has the weight " + formatNumber(w) +
                                     "; weights must be finite and not negative");
                    bad = true;
                    break;
                }
                sum += w;
            }
            if (!bad && !std::isfinite(sum))
                error(field, where + " has weights adding up to more than 1.8e308, the largest "
                                     "number; scale them down (only their ratios matter)");
            else if (!bad && !(sum > 0))
                error(field, where + " has weights summing to 0; at least one must be positive");
        }
    }
};

} // namespace

Diagnostics validateScenario(const Scenario& scenario, const SourceMap* source) {
    return Checker(scenario, source).run();
}

} // namespace moe
