#include "report_text.h"

#include "text_table.h"

#include "moe/json_writer.h"

#include <algorithm>
#include <chrono>
#include <sstream>

namespace moe::cli {

namespace {

using Align = TextTable::Align;

const GroupKind kShownGroups[] = {GroupKind::tp, GroupKind::cp,  GroupKind::pp, GroupKind::dp,
                                  GroupKind::ep, GroupKind::etp, GroupKind::edp};

std::string groupLabel(GroupKind k) {
    switch (k) {
    case GroupKind::edp:
        return "expert-DP";
    case GroupKind::etp:
        return "expert-TP";
    default: {
        std::string name = toString(k);
        std::transform(name.begin(), name.end(), name.begin(), ::toupper);
        return name;
    }
    }
}

std::string fabricName(const ClusterSpec& c) {
    return c.fabric == Fabric::infiniband ? "InfiniBand" : "Ethernet";
}

/// Which link class a group rides, in the cluster's own words.
std::string ridesText(const ClusterSpec& c, const GroupSpan& span) {
    if (span.gpus <= 1)
        return "-";
    if (span.link_class == LinkClass::scale_up)
        return c.gpu.scale_up_fabric;
    // One member per domain: every byte leaves the domain.
    if (span.max_gpus_per_domain <= 1)
        return fabricName(c);
    return c.gpu.scale_up_fabric + " + " + fabricName(c);
}

std::string clusterLine(const Scenario& s) {
    const ClusterSpec& c = s.cluster;
    std::ostringstream o;
    o << c.gpuCount() << " x " << c.gpu.name << " in " << c.nodes << " nodes of " << c.gpus_per_node
      << " GPUs, " << c.rackCount() << " rack" << (c.rackCount() == 1 ? "" : "s") << " of up to "
      << c.nodes_per_rack << " nodes";
    return o.str();
}

std::string modelLine(const ModelSpec& m, const ParamCounts& p) {
    std::ostringstream o;
    o << m.name << ": " << m.layers << " layers";
    if (m.isMoe()) {
        o << " (" << m.moeLayers() << " MoE), " << m.experts << " experts top-" << m.top_k;
        if (m.shared_experts > 0)
            o << " + " << m.shared_experts << " shared";
    } else {
        o << " (dense)";
    }
    o << ", hidden " << m.hidden << ", seq " << m.seq_len << "; " << formatFixed(p.total / 1e9, 1)
      << "B parameters, " << formatFixed(p.active_per_token / 1e9, 1) << "B active per token";
    return o.str();
}

std::string layoutLine(const Scenario& s) {
    const LayoutSpec& l = s.layout;
    std::ostringstream o;
    o << "TP=" << l.tp << " CP=" << l.cp << " PP=" << l.pp;
    if (l.vpp > 1)
        o << " (x" << l.vpp << " virtual)";
    o << " DP=" << l.dp;
    if (s.model.isMoe())
        o << " | EP=" << l.ep << " expert-TP=" << l.etp << " expert-DP=" << l.expertDp();
    o << " | order " << toString(l.order) << ", " << toString(l.schedule);
    if (l.max_nodes_per_token > 0)
        o << ", at most " << l.max_nodes_per_token << " nodes per token";
    return o.str();
}

void writeSpanJson(JsonWriter& json, const GroupSpan& span) {
    json.beginObject()
        .field("gpus", span.gpus)
        .field("max_gpus_per_domain", span.max_gpus_per_domain)
        .field("domains", span.domains)
        .field("nodes", span.nodes)
        .field("racks", span.racks)
        .field("link_class", toString(span.link_class))
        .endObject();
}

} // namespace

std::string showText(const Scenario& s, const HardwareGraph& graph, const Placement& placement) {
    const ClusterSpec& c = s.cluster;
    std::ostringstream o;
    o << "Scenario   " << s.name << "\n";
    if (!s.description.empty())
        o << "           " << s.description << "\n";
    o << "Cluster    " << clusterLine(s) << "\n";
    o << "Scale-up   " << c.gpu.scale_up_fabric << ", " << formatCount(c.gpu.scale_up_gbps)
      << " GB/s per GPU per direction, domain = " << toString(c.scale_up_domain) << " ("
      << c.gpusPerScaleUpDomain() << " GPUs), " << graph.scale_up_switches << " switch domains\n";
    o << "Scale-out  " << c.nics_per_node << " x " << c.nic.name << " per node ("
      << formatFixed(c.nic.bandwidth_gbps, 0) << " GB/s each), " << fabricName(c) << " "
      << toString(c.fabric_topology) << ", oversubscription " << formatFixed(c.oversubscription, 1)
      << ":1; " << graph.leaves << " leaf and " << graph.spines << " spine switches\n";
    o << "Layout     " << layoutLine(s) << "\n\n";

    TextTable table(
        {"group", "degree", "groups", "GPUs/domain", "domains", "nodes", "racks", "rides"},
        {Align::left, Align::right, Align::right, Align::right, Align::right, Align::right,
         Align::right, Align::left});
    for (const GroupKind k : kShownGroups) {
        const GroupSpan& span = placement.spanOf(k);
        table.addRow({groupLabel(k), std::to_string(span.gpus),
                      std::to_string(placement.groupsOf(k).size()),
                      std::to_string(span.max_gpus_per_domain), std::to_string(span.domains),
                      std::to_string(span.nodes), std::to_string(span.racks), ridesText(c, span)});
    }
    o << table.render();
    o << "\nIn words:\n";
    for (const std::string& line : describeLayout(s, placement))
        o << "  " << line << "\n";
    return o.str();
}

std::string showJson(const Scenario& s, const HardwareGraph& graph, const Placement& placement) {
    JsonWriter json;
    json.beginObject().field("name", s.name);
    json.key("cluster")
        .beginObject()
        .field("gpus", s.cluster.gpuCount())
        .field("nodes", s.cluster.nodes)
        .field("racks", s.cluster.rackCount())
        .field("gpu", s.cluster.gpu.preset)
        .field("gpus_per_scale_up_domain", s.cluster.gpusPerScaleUpDomain())
        .field("scale_up_switches", graph.scale_up_switches)
        .field("nics", graph.nics)
        .field("leaves", graph.leaves)
        .field("spines", graph.spines)
        .field("links", static_cast<int64_t>(graph.links.size()))
        .endObject();
    json.key("groups").beginObject();
    for (const GroupKind k : kShownGroups) {
        json.key(toString(k)).beginObject();
        json.field("count", static_cast<int64_t>(placement.groupsOf(k).size()));
        json.key("span");
        writeSpanJson(json, placement.spanOf(k));
        json.endObject();
    }
    json.endObject();
    json.key("description").beginArray();
    for (const std::string& line : describeLayout(s, placement))
        json.value(line);
    json.endArray().endObject();
    return json.str() + "\n";
}

std::string reportText(const Scenario& s, const Report& r) {
    const ClusterSpec& c = s.cluster;
    std::ostringstream o;
    o << "MoE Planner report: " << s.name << "\n";
    o << "  Cluster  " << clusterLine(s) << "\n";
    o << "  Model    " << modelLine(s.model, r.params) << "\n";
    o << "  Layout   " << layoutLine(s) << "\n";
    for (const std::string& line : r.layout_description)
        o << "           " << line << "\n";

    const Throughput& t = r.throughput;
    o << "\nHeadline\n";
    TextTable head({"figure", "value"}, {Align::left, Align::right});
    head.addRow({"step time", formatSeconds(r.step_time_s)});
    head.addRow({"micro-batches per step", std::to_string(r.micro_batches)});
    head.addRow({"tokens per second", formatCount(t.tokens_per_s)});
    head.addRow({"tokens per second per GPU", formatCount(t.tokens_per_s_per_gpu)});
    head.addRow({"model TFLOPS per GPU", formatFixed(t.model_tflops_per_gpu, 0)});
    head.addRow({"MFU (vs BF16 peak)", formatFixed(t.mfu * 100, 1) + "%"});
    head.addRow({"memory per GPU (worst stage)", formatBytes(r.memory.total_bytes) + " of " +
                                                     formatBytes(r.memory.hbm_bytes) +
                                                     (r.memory.fits ? "" : "  DOES NOT FIT")});
    if (s.training.total_tokens > 0) {
        head.addRow({"time to train " + formatFixed(s.training.total_tokens / 1e12, 2) + "T tokens",
                     formatSeconds(t.time_to_train_s)});
        head.addRow({"GPU-hours", formatCount(t.gpu_hours)});
    }
    head.addRow({"GPU-hours per trillion tokens", formatCount(t.gpu_hours_per_trillion_tokens)});
    if (t.energy_kwh > 0)
        head.addRow({"energy", formatCount(t.energy_kwh / 1000) + " MWh"});
    if (t.cost_usd > 0)
        head.addRow({"cost", "$" + formatCount(t.cost_usd)});
    o << head.render("  ");

    o << "\nStep-time breakdown (critical path; slowest stage x micro-batches + pipeline)\n";
    TextTable steps({"item", "exposed", "share", "hidden by overlap"},
                    {Align::left, Align::right, Align::right, Align::right});
    for (int i = 0; i < kStepItemCount; ++i) {
        const double v = r.step.seconds[static_cast<size_t>(i)];
        const double hidden = r.step.overlapped_s[static_cast<size_t>(i)];
        if (v <= 0 && hidden <= 0)
            continue;
        steps.addRow({toString(static_cast<StepItem>(i)), formatSeconds(v),
                      formatFixed(r.step_time_s > 0 ? v / r.step_time_s * 100 : 0, 1) + "%",
                      hidden > 0 ? formatSeconds(hidden) : ""});
    }
    steps.addSeparator();
    steps.addRow({"step", formatSeconds(r.step_time_s), "100.0%", ""});
    o << steps.render("  ");

    o << "\nTraffic per GPU per step (slowest stage)\n";
    TextTable traffic(
        {"collective", "group", "calls", c.gpu.scale_up_fabric, fabricName(c), "time", "exposed"},
        {Align::left, Align::left});
    for (const Collective& col : r.collectives) {
        traffic.addRow({col.name, groupLabel(col.group) + "=" + std::to_string(col.group_size),
                        formatCount(col.calls_per_step), formatBytes(col.scale_up_bytes_per_gpu),
                        formatBytes(col.scale_out_bytes_per_gpu), formatSeconds(col.time_s),
                        formatSeconds(col.exposed_s)});
    }
    o << traffic.render("  ");

    o << "\nMemory per GPU (stage " << r.memory.stage << ", the least margin)\n";
    const MemoryBreakdown& m = r.memory;
    TextTable mem({"part", "bytes"}, {Align::left, Align::right});
    mem.addRow({"weights", formatBytes(m.weights_bytes)});
    mem.addRow({"gradients", formatBytes(m.gradients_bytes)});
    mem.addRow({"optimizer states", formatBytes(m.optimizer_bytes)});
    mem.addRow({"activations", formatBytes(m.activations_bytes)});
    mem.addRow({"dispatch buffers", formatBytes(m.dispatch_buffers_bytes)});
    mem.addRow({"workspace", formatBytes(m.workspace_bytes)});
    mem.addSeparator();
    mem.addRow({"total", formatBytes(m.total_bytes)});
    mem.addRow({"HBM", formatBytes(m.hbm_bytes)});
    mem.addRow({m.fits ? "margin" : "over by", formatBytes(std::abs(m.margin_bytes))});
    o << mem.render("  ");

    if (s.model.isMoe()) {
        const ExpertLoad& l = r.load;
        o << "\nExpert load (routing " << toString(s.routing.model) << ", seed " << s.routing.seed
          << ")\n";
        o << "  token slots per EP group per micro-batch: " << formatCount(l.slots_per_group)
          << " over " << s.layout.ep << " EP ranks\n";
        o << "  imbalance (busiest EP rank / mean): max " << formatFixed(l.max_imbalance, 2)
          << "x in MoE layer " << l.hottest_layer << ", mean over layers "
          << formatFixed(l.mean_imbalance, 2) << "x\n";
        if (!l.imbalance_per_group.empty()) {
            const auto [lo, hi] =
                std::minmax_element(l.imbalance_per_group.begin(), l.imbalance_per_group.end());
            o << "  per EP group (busiest rank / mean, averaged over layers): "
              << formatFixed(*lo, 2) << "x to " << formatFixed(*hi, 2) << "x over "
              << l.imbalance_per_group.size() << " sampled groups\n";
        }
        o << "  hottest GPU: " << l.hottestGpu(*r.placement)
          << "; dropped token slots: " << formatFixed(l.dropped_share * 100, 2) << "%\n";
    }

    o << "\nWarnings\n";
    if (r.warnings.empty())
        o << "  none\n";
    for (const DesignWarning& w : r.warnings)
        o << "  [" << toString(w.severity) << "] " << w.message << "\n";
    return o.str();
}

namespace {

void writeBreakdownJson(JsonWriter& json, const StepBreakdown& b) {
    json.beginObject();
    for (int i = 0; i < kStepItemCount; ++i) {
        json.key(toString(static_cast<StepItem>(i)))
            .beginObject()
            .field("exposed_s", b.seconds[static_cast<size_t>(i)])
            .field("overlapped_s", b.overlapped_s[static_cast<size_t>(i)])
            .endObject();
    }
    json.field("total_s", b.total_s).endObject();
}

void writeMemoryJson(JsonWriter& json, const MemoryBreakdown& m) {
    json.beginObject()
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

} // namespace

std::string reportJson(const Scenario& s, const Report& r) {
    JsonWriter json;
    json.beginObject().field("scenario", s.name).field("gpus", r.gpus);
    json.field("micro_batches", r.micro_batches).field("step_time_s", r.step_time_s);
    json.key("params")
        .beginObject()
        .field("total", r.params.total)
        .field("active_per_token", r.params.active_per_token)
        .endObject();
    const Throughput& t = r.throughput;
    json.key("throughput")
        .beginObject()
        .field("tokens_per_step", t.tokens_per_step)
        .field("tokens_per_s", t.tokens_per_s)
        .field("tokens_per_s_per_gpu", t.tokens_per_s_per_gpu)
        .field("model_tflops_per_gpu", t.model_tflops_per_gpu)
        .field("mfu", t.mfu)
        .field("time_to_train_s", t.time_to_train_s)
        .field("gpu_hours", t.gpu_hours)
        .field("gpu_hours_per_trillion_tokens", t.gpu_hours_per_trillion_tokens)
        .field("energy_kwh", t.energy_kwh)
        .field("cost_usd", t.cost_usd)
        .endObject();
    json.key("step");
    writeBreakdownJson(json, r.step);
    json.key("stages").beginArray();
    for (const StageResult& st : r.stages) {
        json.beginObject()
            .field("stage", st.layers.stage)
            .field("layers", st.layers.layers)
            .field("moe_layers", st.layers.moe_layers);
        json.key("per_micro_batch");
        writeBreakdownJson(json, st.per_micro_batch);
        json.key("memory");
        writeMemoryJson(json, st.memory);
        json.endObject();
    }
    json.endArray();
    json.key("collectives").beginArray();
    for (const Collective& c : r.collectives) {
        json.beginObject()
            .field("kind", toString(c.kind))
            .field("name", c.name)
            .field("group", toString(c.group))
            .field("group_size", c.group_size)
            .field("calls_per_step", c.calls_per_step)
            .field("bytes_per_gpu", c.bytes_per_gpu)
            .field("scale_up_bytes_per_gpu", c.scale_up_bytes_per_gpu)
            .field("scale_out_bytes_per_gpu", c.scale_out_bytes_per_gpu)
            .field("link_class", toString(c.link_class))
            .field("time_s", c.time_s)
            .field("exposed_s", c.exposed_s)
            .endObject();
    }
    json.endArray();
    json.key("memory");
    writeMemoryJson(json, r.memory);
    json.key("expert_load")
        .beginObject()
        .field("slots_per_group", r.load.slots_per_group)
        .field("max_imbalance", r.load.max_imbalance)
        .field("mean_imbalance", r.load.mean_imbalance)
        .field("dropped_share", r.load.dropped_share)
        .field("worst_group_imbalance", r.load.imbalance_per_group.empty()
                                            ? 1.0
                                            : *std::max_element(r.load.imbalance_per_group.begin(),
                                                                r.load.imbalance_per_group.end()))
        .field("hottest_layer", r.load.hottest_layer)
        .field("hottest_gpu", s.model.isMoe() ? r.load.hottestGpu(*r.placement) : -1)
        .endObject();
    // Per link class totals keep the JSON small for 2048-GPU clusters; per-link figures are
    // for the views.
    double up_bytes = 0, out_bytes = 0, max_util = 0;
    for (size_t i = 0; i < r.link_bytes.size(); ++i) {
        (r.graph->links[i].linkClass() == LinkClass::scale_up ? up_bytes : out_bytes) +=
            r.link_bytes[i];
        max_util = std::max(max_util, r.link_utilization[i]);
    }
    json.key("links")
        .beginObject()
        .field("count", static_cast<int64_t>(r.link_bytes.size()))
        .field("scale_up_bytes", up_bytes)
        .field("scale_out_bytes", out_bytes)
        .field("max_utilization", max_util)
        .endObject();
    json.key("warnings").beginArray();
    for (const DesignWarning& w : r.warnings) {
        json.beginObject()
            .field("severity", toString(w.severity))
            .field("code", w.code)
            .field("message", w.message)
            .endObject();
    }
    json.endArray();
    json.key("layout_description").beginArray();
    for (const std::string& line : r.layout_description)
        json.value(line);
    json.endArray().endObject();
    return json.str() + "\n";
}

namespace {

struct Headline {
    const char* name;
    double (*get)(const Report&);
    bool lower_is_better;
    std::string (*format)(double);
};

std::string fmtSeconds(double v) {
    return formatSeconds(v);
}
std::string fmtCount(double v) {
    return formatCount(v);
}
std::string fmtPercent(double v) {
    return formatFixed(v * 100, 1) + "%";
}
std::string fmtBytes(double v) {
    return formatBytes(v);
}
std::string fmtTflops(double v) {
    return formatFixed(v, 0);
}
std::string fmtRatio(double v) {
    return formatFixed(v, 2) + "x";
}

const std::vector<Headline>& headlines() {
    static const std::vector<Headline> list = {
        {"step time", [](const Report& r) { return r.step_time_s; }, true, fmtSeconds},
        {"tokens/s", [](const Report& r) { return r.throughput.tokens_per_s; }, false, fmtCount},
        {"tokens/s per GPU", [](const Report& r) { return r.throughput.tokens_per_s_per_gpu; },
         false, fmtCount},
        {"TFLOPS per GPU", [](const Report& r) { return r.throughput.model_tflops_per_gpu; }, false,
         fmtTflops},
        {"MFU", [](const Report& r) { return r.throughput.mfu; }, false, fmtPercent},
        {"memory per GPU", [](const Report& r) { return r.memory.total_bytes; }, true, fmtBytes},
        {"exposed all-to-all", [](const Report& r) { return r.step[StepItem::all_to_all]; }, true,
         fmtSeconds},
        {"pipeline bubble", [](const Report& r) { return r.step[StepItem::bubble]; }, true,
         fmtSeconds},
        {"exposed DP sync", [](const Report& r) { return r.step[StepItem::dp_sync]; }, true,
         fmtSeconds},
        {"max expert imbalance", [](const Report& r) { return r.load.max_imbalance; }, true,
         fmtRatio},
        {"time to train", [](const Report& r) { return r.throughput.time_to_train_s; }, true,
         fmtSeconds},
        {"GPU-hours", [](const Report& r) { return r.throughput.gpu_hours; }, true, fmtCount},
        {"cost", [](const Report& r) { return r.throughput.cost_usd; }, true, fmtCount},
    };
    return list;
}

} // namespace

std::string compareText(const Scenario& a, const Report& ra, const Scenario& b, const Report& rb) {
    std::ostringstream o;
    o << "A: " << a.name << " (" << layoutLine(a) << ")\n";
    o << "B: " << b.name << " (" << layoutLine(b) << ")\n\n";
    TextTable table({"figure", "A", "B", "delta", ""},
                    {Align::left, Align::right, Align::right, Align::right, Align::left});
    for (const Headline& h : headlines()) {
        const double va = h.get(ra), vb = h.get(rb);
        const bool better = h.lower_is_better ? vb < va : vb > va;
        const bool worse = h.lower_is_better ? vb > va : vb < va;
        table.addRow({h.name, h.format(va), h.format(vb), formatDeltaPercent(va, vb),
                      better  ? "B better"
                      : worse ? "B worse"
                              : ""});
    }
    o << table.render();
    return o.str();
}

std::string compareJson(const Scenario& a, const Report& ra, const Scenario& b, const Report& rb) {
    JsonWriter json;
    json.beginObject().field("a", a.name).field("b", b.name).key("figures").beginArray();
    for (const Headline& h : headlines()) {
        const double va = h.get(ra), vb = h.get(rb);
        json.beginObject()
            .field("name", h.name)
            .field("a", va)
            .field("b", vb)
            .field("delta", vb - va)
            .field("lower_is_better", h.lower_is_better)
            .endObject();
    }
    json.endArray().endObject();
    return json.str() + "\n";
}

std::string benchText(const std::vector<std::pair<std::string, Scenario>>& scenarios, int repeat) {
    using Clock = std::chrono::steady_clock;
    std::ostringstream o;
    TextTable table({"scenario", "GPUs", "runs", "evaluate median", "min", "max"}, {Align::left});
    for (const auto& [label, scenario] : scenarios) {
        // Warm up once, then pick a run count that takes about half a second in total.
        const auto t0 = Clock::now();
        Report warm = evaluate(scenario);
        const double first_s = std::chrono::duration<double>(Clock::now() - t0).count();
        const int runs = repeat > 0
                             ? repeat
                             : std::clamp(static_cast<int>(0.5 / std::max(first_s, 1e-6)), 5, 2000);
        std::vector<double> times;
        times.reserve(static_cast<size_t>(runs));
        double sink = warm.step_time_s;
        for (int i = 0; i < runs; ++i) {
            const auto start = Clock::now();
            const Report r = evaluate(scenario);
            times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
            sink += r.step_time_s;
        }
        std::sort(times.begin(), times.end());
        table.addRow({label, std::to_string(scenario.cluster.gpuCount()), std::to_string(runs),
                      formatSeconds(times[times.size() / 2]), formatSeconds(times.front()),
                      formatSeconds(times.back())});
        if (sink < 0)
            o << "";
    }
    o << "evaluate() on one core (includes graph, placement and routing sample)\n"
      << table.render("  ");
    return o.str();
}

} // namespace moe::cli
