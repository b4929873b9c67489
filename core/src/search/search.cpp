// Layout search: the names of its objectives and rejection reasons, the figures it ranks by,
// and the one-call search. The search itself runs in stages, each in its own file (see
// search_detail.h).

#include "moe/search.h"

namespace moe {

const char* toString(SearchObjective o) {
    switch (o) {
    case SearchObjective::step_time:
        return "step-time";
    case SearchObjective::memory_headroom:
        return "memory-headroom";
    case SearchObjective::cross_node_traffic:
        return "cross-node-traffic";
    }
    return "?";
}

std::optional<SearchObjective> parseSearchObjective(const std::string& s) {
    for (SearchObjective o : {SearchObjective::step_time, SearchObjective::memory_headroom,
                              SearchObjective::cross_node_traffic})
        if (s == toString(o))
            return o;
    return std::nullopt;
}

const char* toString(RejectReason r) {
    switch (r) {
    case RejectReason::pin:
        return "pin";
    case RejectReason::divisibility:
        return "divisibility";
    case RejectReason::batch:
        return "batch";
    case RejectReason::pipeline:
        return "pipeline";
    case RejectReason::other:
        return "other";
    case RejectReason::memory:
        return "memory";
    case RejectReason::recompute:
        return "recompute";
    case RejectReason::wide_tp:
        return "wide-tp";
    case RejectReason::bound:
        return "bound";
    case RejectReason::count:
        break;
    }
    return "?";
}

const char* describe(RejectReason r) {
    switch (r) {
    case RejectReason::pin:
        return "excluded by a pin";
    case RejectReason::divisibility:
        return "degrees do not divide GPUs, heads, FFN, experts or sequence";
    case RejectReason::batch:
        return "global batch not divisible by DP x micro-batch";
    case RejectReason::pipeline:
        return "pipeline schedule rule (stages, virtual stages, DualPipe, interleaving)";
    case RejectReason::other:
        return "other validation error";
    case RejectReason::memory:
        return "does not fit in HBM with the safety reserve";
    case RejectReason::recompute:
        return "heavier recompute while a lighter one fits (never faster)";
    case RejectReason::wide_tp:
        return "TP wider than a scale-up domain while narrower layouts fit";
    case RejectReason::bound:
        return "compute alone slower than every reported layout (pruned by bound)";
    case RejectReason::count:
        break;
    }
    return "?";
}

SearchFigures figuresOf(const Report& r) {
    SearchFigures f;
    f.step_time_s = r.step_time_s;
    f.tokens_per_s = r.throughput.tokens_per_s;
    f.tokens_per_s_per_gpu = r.throughput.tokens_per_s_per_gpu;
    f.mfu = r.throughput.mfu;
    f.memory_bytes = r.memory.total_bytes;
    f.hbm_bytes = r.memory.hbm_bytes;
    f.margin_bytes = r.memory.margin_bytes;
    f.fits = r.memory.fits;
    for (const Collective& c : r.collectives) {
        f.cross_node_bytes += c.scale_out_bytes_per_gpu;
        f.scale_up_bytes += c.scale_up_bytes_per_gpu;
    }
    f.micro_batches = r.micro_batches;
    f.step = r.step;
    return f;
}

SearchStepColumns stepColumnsOf(const SearchFigures& f) {
    const StepBreakdown& b = f.step;
    SearchStepColumns c;
    c.compute_s = b[StepItem::attention] + b[StepItem::dense_ffn] + b[StepItem::router] +
                  b[StepItem::expert_compute] + b[StepItem::optimizer];
    c.all_to_all_s = b[StepItem::all_to_all];
    c.tp_cp_s = b[StepItem::tp_comm] + b[StepItem::cp_comm];
    c.pipeline_s = b[StepItem::bubble] + b[StepItem::pp_comm];
    c.dp_sync_s = b[StepItem::dp_sync];
    c.imbalance_s = b[StepItem::imbalance_wait];
    return c;
}

std::string layoutSummary(const Scenario& s) {
    const LayoutSpec& l = s.layout;
    std::string out = "TP=" + std::to_string(l.tp) + " CP=" + std::to_string(l.cp) +
                      " PP=" + std::to_string(l.pp);
    if (l.vpp > 1)
        out += "x" + std::to_string(l.vpp);
    if (l.first_stage_layers > 0)
        out += " first-stage-layers=" + std::to_string(l.first_stage_layers);
    if (l.last_stage_layers > 0)
        out += " last-stage-layers=" + std::to_string(l.last_stage_layers);
    out += " DP=" + std::to_string(l.dp);
    if (s.model.isMoe()) {
        out += " EP=" + std::to_string(l.ep) + " ETP=" + std::to_string(l.etp) +
               " eDP=" + std::to_string(l.ep * l.etp > 0 ? l.expertDp() : 0);
    }
    out += ", " + toString(l.order) + ", " + toString(l.schedule) + ", micro-batch " +
           std::to_string(s.training.micro_batch) + ", recompute " + toString(s.training.recompute);
    return out;
}

SearchResult searchLayouts(const Scenario& input, const SearchOptions& options) {
    return mergeSearchParts(input, options, {searchPart(input, options)});
}

} // namespace moe
