#include "search_parts.h"

#include "json_output.h"
#include "version.h"

#include "moe/format.h"
#include "moe/scenario_io.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace moe::cli {

namespace {

using nlohmann::json;

void writeMemory(JsonWriter& out, const MemoryBreakdown& m) {
    out.beginObject()
        .field("stage", m.stage)
        .field("weights_bytes", m.weights_bytes)
        .field("gradients_bytes", m.gradients_bytes)
        .field("optimizer_bytes", m.optimizer_bytes)
        .field("activations_bytes", m.activations_bytes)
        .field("dispatch_buffers_bytes", m.dispatch_buffers_bytes)
        .field("workspace_bytes", m.workspace_bytes)
        .field("total_bytes", m.total_bytes)
        .field("hbm_bytes", m.hbm_bytes)
        .field("margin_bytes", m.margin_bytes)
        .field("fits", m.fits)
        .endObject();
}

void writeArray(JsonWriter& out, const std::array<double, kStepItemCount>& values) {
    out.beginArray();
    for (const double v : values)
        out.value(v);
    out.endArray();
}

void writeFigures(JsonWriter& out, const SearchFigures& f) {
    out.beginObject()
        .field("step_time_s", f.step_time_s)
        .field("tokens_per_s", f.tokens_per_s)
        .field("tokens_per_s_per_gpu", f.tokens_per_s_per_gpu)
        .field("mfu", f.mfu)
        .field("memory_bytes", f.memory_bytes)
        .field("hbm_bytes", f.hbm_bytes)
        .field("margin_bytes", f.margin_bytes)
        .field("cross_node_bytes", f.cross_node_bytes)
        .field("scale_up_bytes", f.scale_up_bytes)
        .field("micro_batches", f.micro_batches)
        .field("fits", f.fits)
        .field("step_total_s", f.step.total_s)
        .key("step_s");
    writeArray(out, f.step.seconds);
    out.key("step_hidden_s");
    writeArray(out, f.step.overlapped_s);
    out.endObject();
}

/// A candidate's "layout" (the input's with these fields) and, beside it, "expert_placement":
/// whether the input's placements are kept ("input") or dropped ("none").
void writeLayout(JsonWriter& out, const Scenario& input, const LayoutSpec& l, int micro_batch,
                 Recompute recompute) {
    Scenario s = input;
    s.layout = l;
    s.training.micro_batch = micro_batch;
    s.training.recompute = recompute;
    writeLayoutJson(out, s);
    out.field("expert_placement",
              l.expert_placement == input.layout.expert_placement ? "input" : "none");
}

void writeOutcome(JsonWriter& out, const Scenario& input, const SearchStructureOutcome& o) {
    out.beginObject()
        .field("structure", o.structure)
        .field("inside_domain", o.inside_domain)
        .field("counted_only", o.counted_only)
        .field("candidates", o.candidates)
        .key("rejected")
        .beginObject();
    for (int r = 0; r < kRejectReasonCount; ++r) {
        const RejectionCount& c = o.rejected[static_cast<size_t>(r)];
        out.key(toString(static_cast<RejectReason>(r)))
            .beginObject()
            .field("count", c.count)
            .field("example", c.example)
            .endObject();
    }
    out.endObject().key("closest");
    if (o.closest.set) {
        out.beginObject().field("over_bytes", o.closest.over_bytes).key("layout");
        writeLayout(out, input, o.closest.layout, o.closest.micro_batch, o.closest.recompute);
        out.key("memory");
        writeMemory(out, o.closest.memory);
        out.endObject();
    } else {
        out.null();
    }
    out.key("evaluated").beginArray();
    for (const SearchEvaluated& e : o.evaluated) {
        out.beginObject().field("is_input", e.is_input).field("floor_s", e.floor_s).key("layout");
        writeLayout(out, input, e.layout, e.micro_batch, e.recompute);
        out.key("figures");
        writeFigures(out, e.figures);
        out.endObject();
    }
    out.endArray().endObject();
}

// ---- reading -----------------------------------------------------------------------------------

double number(const json& j) {
    // Non-finite figures were written as null.
    return j.is_null() ? std::numeric_limits<double>::quiet_NaN() : j.get<double>();
}

void readArray(const json& j, std::array<double, kStepItemCount>& into) {
    if (j.size() != into.size())
        throw std::runtime_error("a step breakdown has " + std::to_string(j.size()) +
                                 " items, this version has " + std::to_string(into.size()));
    for (size_t i = 0; i < into.size(); ++i)
        into[i] = number(j[i]);
}

SearchFigures readFigures(const json& j) {
    SearchFigures f;
    f.step_time_s = number(j.at("step_time_s"));
    f.tokens_per_s = number(j.at("tokens_per_s"));
    f.tokens_per_s_per_gpu = number(j.at("tokens_per_s_per_gpu"));
    f.mfu = number(j.at("mfu"));
    f.memory_bytes = number(j.at("memory_bytes"));
    f.hbm_bytes = number(j.at("hbm_bytes"));
    f.margin_bytes = number(j.at("margin_bytes"));
    f.cross_node_bytes = number(j.at("cross_node_bytes"));
    f.scale_up_bytes = number(j.at("scale_up_bytes"));
    f.micro_batches = j.at("micro_batches").get<int>();
    f.fits = j.at("fits").get<bool>();
    f.step.total_s = number(j.at("step_total_s"));
    readArray(j.at("step_s"), f.step.seconds);
    readArray(j.at("step_hidden_s"), f.step.overlapped_s);
    return f;
}

MemoryBreakdown readMemory(const json& j) {
    MemoryBreakdown m;
    m.stage = j.at("stage").get<int>();
    m.weights_bytes = number(j.at("weights_bytes"));
    m.gradients_bytes = number(j.at("gradients_bytes"));
    m.optimizer_bytes = number(j.at("optimizer_bytes"));
    m.activations_bytes = number(j.at("activations_bytes"));
    m.dispatch_buffers_bytes = number(j.at("dispatch_buffers_bytes"));
    m.workspace_bytes = number(j.at("workspace_bytes"));
    m.total_bytes = number(j.at("total_bytes"));
    m.hbm_bytes = number(j.at("hbm_bytes"));
    m.margin_bytes = number(j.at("margin_bytes"));
    m.fits = j.at("fits").get<bool>();
    return m;
}

template <typename T>
T parsed(const std::optional<T>& value, const std::string& text, const char* what) {
    if (!value)
        throw std::runtime_error(std::string("unknown ") + what + " '" + text + "'");
    return *value;
}

/// The "layout" and "expert_placement" of `parent`, as writeLayout wrote them.
LayoutSpec readLayout(const json& parent, const Scenario& input, int& micro_batch, Recompute& rc) {
    const json& j = parent.at("layout");
    LayoutSpec l = input.layout;
    l.tp = j.at("tp").get<int>();
    l.cp = j.at("cp").get<int>();
    l.pp = j.at("pp").get<int>();
    l.vpp = j.at("vpp").get<int>();
    l.first_stage_layers = j.at("first_stage_layers").get<int>();
    l.last_stage_layers = j.at("last_stage_layers").get<int>();
    l.dp = j.at("dp").get<int>();
    l.ep = j.at("ep").get<int>();
    l.etp = j.at("etp").get<int>();
    const std::string order = j.at("order").get<std::string>();
    l.order = parsed(parseRankOrder(order), order, "rank order");
    const std::string schedule = j.at("schedule").get<std::string>();
    l.schedule = parsed(parsePipelineSchedule(schedule), schedule, "schedule");
    if (parent.at("expert_placement").get<std::string>() != "input")
        l.expert_placement.clear();
    micro_batch = j.at("micro_batch").get<int>();
    const std::string recompute = j.at("recompute").get<std::string>();
    rc = parsed(parseRecompute(recompute), recompute, "recompute");
    return l;
}

SearchStructureOutcome readOutcome(const json& j, const Scenario& input) {
    SearchStructureOutcome o;
    o.structure = j.at("structure").get<int64_t>();
    o.inside_domain = j.at("inside_domain").get<bool>();
    o.counted_only = j.at("counted_only").get<bool>();
    o.candidates = j.at("candidates").get<int64_t>();
    for (int r = 0; r < kRejectReasonCount; ++r) {
        const json& c = j.at("rejected").at(toString(static_cast<RejectReason>(r)));
        o.rejected[static_cast<size_t>(r)] = {c.at("count").get<int64_t>(),
                                              c.at("example").get<std::string>()};
    }
    if (const json& c = j.at("closest"); !c.is_null()) {
        o.closest.set = true;
        o.closest.over_bytes = number(c.at("over_bytes"));
        o.closest.layout = readLayout(c, input, o.closest.micro_batch, o.closest.recompute);
        o.closest.memory = readMemory(c.at("memory"));
    }
    for (const json& e : j.at("evaluated")) {
        SearchEvaluated ev;
        ev.is_input = e.at("is_input").get<bool>();
        ev.floor_s = number(e.at("floor_s"));
        ev.layout = readLayout(e, input, ev.micro_batch, ev.recompute);
        ev.figures = readFigures(e.at("figures"));
        o.evaluated.push_back(std::move(ev));
    }
    return o;
}

} // namespace

std::string searchFingerprint(const Scenario& s, const SearchOptions& options) {
    std::string key = toYaml(s);
    for (const std::string& pin : options.pins)
        key += "\npin " + pin;
    // The pruning bound follows the ranked count and the objective: parts pruned for another
    // would not hold every layout the merge ranks.
    key += "\ntop " + std::to_string(options.top_n) + "\nprune " + std::to_string(options.prune) +
           "\nobjective " + toString(options.objective);
    key += "\nmax_pp " + std::to_string(options.max_pp) + "\nreserve " +
           formatNumber(options.memory_reserve_share) + "\nversion " + cmdline::version();
    // FNV-1a, 64 bits: a check against mixing up files, not a security measure.
    uint64_t hash = 1469598103934665603ull;
    for (const unsigned char c : key) {
        hash ^= c;
        hash *= 1099511628211ull;
    }
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
    return text;
}

std::string searchPartJson(const Scenario& s, const SearchPart& part,
                           const std::string& fingerprint) {
    JsonWriter out(false);
    beginDocument(out, "search-part", s);
    out.field("search", fingerprint)
        .key("shard")
        .beginObject()
        .field("index", part.shard.index)
        .field("count", part.shard.count)
        .endObject()
        .field("structures", part.structures)
        .field("found_inside", part.found_inside)
        .field("elapsed_s", part.elapsed_s)
        .field("cpu_s", part.cpu_s)
        .field("threads", part.threads)
        .key("outcomes")
        .beginArray();
    for (const SearchStructureOutcome& o : part.outcomes)
        writeOutcome(out, s, o);
    out.endArray().endObject();
    return out.str() + "\n";
}

std::string readSearchPart(const std::string& text, const Scenario& input,
                           const std::string& fingerprint, SearchPart& part) {
    try {
        const json j = json::parse(text);
        if (j.value("command", "") != "search-part")
            return "not a part written by 'moe-plan search --shard'";
        if (j.at("schema_version").get<int>() != kJsonSchemaVersion)
            return "written in schema version " + j.at("schema_version").dump() +
                   ", this moe-plan reads " + std::to_string(kJsonSchemaVersion);
        if (j.at("search").get<std::string>() != fingerprint)
            return "from another search (scenario, --set, --pin, --max-pp, --reserve, --top, "
                   "--no-prune or the moe-plan version differ); merge with the options the "
                   "shards ran with";
        part.shard = {j.at("shard").at("index").get<int>(), j.at("shard").at("count").get<int>()};
        part.structures = j.at("structures").get<int64_t>();
        part.found_inside = j.at("found_inside").get<bool>();
        part.elapsed_s = number(j.at("elapsed_s"));
        part.cpu_s = number(j.at("cpu_s"));
        part.threads = j.at("threads").get<int>();
        for (const json& o : j.at("outcomes"))
            part.outcomes.push_back(readOutcome(o, input));
    } catch (const std::exception& e) {
        return std::string("not a readable search part: ") + e.what();
    }
    return {};
}

} // namespace moe::cli
