#include "report_text.h"

#include "json_output.h"
#include "text_table.h"

#include "moe/format.h"
#include "moe/json_writer.h"

#include <algorithm>
#include <cmath>
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

/// Which link class a group rides, in the cluster's own words.
std::string ridesText(const ClusterSpec& c, const GroupSpan& span) {
    if (span.gpus <= 1)
        return "-";
    if (span.link_class == LinkClass::scale_up)
        return c.gpu.scale_up_fabric;
    // One member per domain: every byte leaves the domain.
    if (span.max_gpus_per_domain <= 1)
        return std::string(displayName(c.fabric));
    return c.gpu.scale_up_fabric + " + " + std::string(displayName(c.fabric));
}

std::string clusterLine(const Scenario& s) {
    const ClusterSpec& c = s.cluster;
    std::ostringstream o;
    o << c.gpuCount() << " x " << c.gpu.name << " in " << c.nodes << " nodes of " << c.gpus_per_node
      << " GPUs, " << c.describeRacks();
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
      << formatFixed(c.nic.bandwidth_gbps, 0) << " GB/s each), "
      << std::string(displayName(c.fabric)) << " " << toString(c.fabric_topology)
      << ", oversubscription " << formatFixed(c.oversubscription, 1) << ":1; " << graph.leaves
      << " leaf and " << graph.spines << " spine switches\n";
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
    beginDocument(json, "show", s);
    json.field("name", s.name);
    json.key("cluster")
        .beginObject()
        .field("gpus", s.cluster.gpuCount())
        .field("nodes", s.cluster.nodes)
        .field("racks", s.cluster.rackCount())
        .field("racks_text", s.cluster.describeRacks())
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

namespace {

/// Durations people plan with: seconds below two minutes, then minutes, hours and days.
std::string formatDuration(double seconds) {
    if (seconds >= 120 && seconds < 3600)
        return formatFixed(seconds / 60, seconds < 600 ? 1 : 0) + " min";
    return formatSeconds(seconds, UnitStyle::ascii);
}

std::string formatUsd(double usd) {
    if (usd >= 1e6)
        return "$" + formatFixed(usd / 1e6, usd < 1e8 ? 2 : 0) + "M";
    return "$" + formatCount(std::round(usd)); // whole dollars below $1M
}

std::string formatPower(double watts) {
    return watts >= 1e6 ? formatFixed(watts / 1e6, 2) + " MW" : formatFixed(watts / 1e3, 1) + " kW";
}

/// Days, goodput, failures and checkpoints (reliability.h's figures).
void addReliabilityRows(TextTable& table, const Scenario& s, const Economics& e) {
    const ReliabilityFigures& f = e.reliability;
    const ClusterSpec& c = s.cluster;
    if (e.wall_time_s > 0) {
        table.addRow({"days to train " + formatFixed(s.training.total_tokens / 1e12, 2) +
                          "T tokens (expected)",
                      formatFixed(e.days, 1) + " days (" +
                          formatFixed(e.compute_time_s / 86400, 1) + " without failures)"});
    }
    table.addRow({"goodput", formatFixed(f.goodput * 100, 1) + "% (checkpoints " +
                                 formatFixed(f.checkpoint_overhead * 100, 1) + "%, failures " +
                                 formatFixed(f.failure_overhead * 100, 1) + "%)"});
    table.addRow({"cluster MTBF",
                  f.mtbf_s > 0
                      ? formatDuration(f.mtbf_s) + " (" + formatFixed(f.failures_per_h * 24, 2) +
                            " failures per day: GPUs " + formatFixed(f.gpu_failures_per_h * 24, 2) +
                            ", nodes " + formatFixed(f.node_failures_per_h * 24, 2) + ")"
                      : "no failures modelled"});
    if (e.expected_failures > 0)
        table.addRow({"expected failures during the run",
                      e.expected_failures < 10 ? formatFixed(e.expected_failures, 1)
                                               : formatCount(std::round(e.expected_failures))});
    table.addRow({"checkpoint", formatBytes(f.checkpoint_bytes, UnitStyle::ascii) +
                                    ", written in " + formatDuration(f.checkpoint_write_s) +
                                    " at " +
                                    formatFixed(c.reliability.checkpoint_write_gbps_per_node, 2) +
                                    " GB/s per node"});
    table.addRow(
        {"checkpoint every",
         f.interval_s > 0
             ? formatDuration(f.interval_s) +
                   (f.interval_is_optimal
                        ? " (Young/Daly optimum; Young: " + formatDuration(f.young_interval_s) + ")"
                        : " (fixed; optimum " + formatDuration(f.optimal_interval_s) + ")")
             : std::string("never (nothing fails)")});
    table.addRow({"recovery per failure",
                  formatDuration(f.recovery_s) + " (detect " +
                      formatDuration(c.reliability.detection_s) + " + restart " +
                      formatDuration(c.reliability.restart_s) + " + read checkpoint " +
                      formatDuration(f.checkpoint_read_s) + ")"});
}

/// The run's cost, GPU-hours and energy, and the cost per token, day and hour.
void addCostRows(TextTable& table, const Economics& e) {
    if (e.wall_time_s > 0) {
        table.addRow({"cost of the run", formatUsd(e.cost_usd) + " (expected: failures and "
                                                                 "checkpoints included)"});
        table.addRow({"GPU-hours (expected)", formatCount(e.gpu_hours)});
        table.addRow({"energy", formatCount(e.energy_kwh / 1000) + " MWh"});
    }
    table.addRow({"cost per trillion tokens", formatUsd(e.usd_per_trillion_tokens)});
    table.addRow({"cost per day", formatUsd(e.usd_per_day) + " ($" +
                                      formatFixed(e.usd_per_gpu_hour, 2) + " per GPU-hour)"});
    if (e.rental && e.energy_usd_per_h > 0)
        table.addRow({"per hour", formatUsd(e.usd_per_h) + " (rental " +
                                      formatUsd(e.rental_usd_per_h) + " + energy " +
                                      formatUsd(e.energy_usd_per_h) + ")"});
    else if (e.rental)
        table.addRow({"per hour", formatUsd(e.usd_per_h) +
                                      " (rental; electricity included in the GPU-hour price)"});
    else
        table.addRow({"per hour", formatUsd(e.usd_per_h) + " (capital " +
                                      formatUsd(e.amortized_usd_per_h) + " + energy " +
                                      formatUsd(e.energy_usd_per_h) + ")"});
}

/// Power drawn (facility, per rack) and the electricity price.
void addPowerRows(TextTable& table, const Scenario& s, const Economics& e) {
    const ClusterSpec& c = s.cluster;
    const PowerDraw& p = e.power;
    table.addRow({"power", formatPower(p.facility_w) + " at PUE " + formatFixed(c.pue, 2) +
                               " (GPUs " + formatPower(p.gpus_w) + ", nodes " +
                               formatPower(p.nodes_w) + ", network " +
                               formatPower(p.nics_w + p.switches_w) +
                               (p.racks_w > 0 ? ", racks " + formatPower(p.racks_w) : "") + ")"});
    if (p.hottest_rack >= 0) {
        table.addRow(
            {"rack power",
             "up to " + formatPower(p.hottest_rack_w) + " per rack (rack " +
                 std::to_string(p.hottest_rack) + ")" +
                 (c.rack_power_limit_kw > 0 ? ", limit " + formatPower(c.rack_power_limit_kw * 1000)
                                            : std::string())});
    }
    table.addRow({"electricity",
                  e.rental && e.electricity_usd_per_kwh <= 0
                      ? std::string("included in the GPU-hour price")
                      : "$" + formatFixed(e.electricity_usd_per_kwh, 3) + " per kWh" +
                            (e.electricity_estimated ? " (estimate: US industrial average)" : "")});
}

/// The capital cost and what it is made of.
void addCapitalRows(TextTable& table, const Scenario& s, const Economics& e) {
    const ClusterSpec& c = s.cluster;
    const CapitalCost& k = e.capital;
    table.addRow({"capital", formatUsd(k.total_usd) + (e.rental ? " (not charged: rented)" : "")});
    table.addRow({"  GPUs, servers, NICs", formatUsd(k.gpus_usd) + ", " + formatUsd(k.servers_usd) +
                                               ", " + formatUsd(k.nics_usd)});
    table.addRow({"  switches, cables, racks",
                  std::to_string(k.switches) + " x " + formatUsd(c.nic.switch_usd) + ", " +
                      std::to_string(k.cables) + " x " + formatUsd(c.nic.cable_usd) + ", " +
                      std::to_string(k.racks) + " x " + formatUsd(c.rack_usd)});
}

/// Goodput, days and cost of smaller and larger clusters ("*" marks this one).
std::string scaleSweepText(const Economics& e, const Report& r) {
    std::ostringstream o;
    if (!e.scale_sweep.empty()) {
        o << "\n  What if the cluster were smaller or larger (tokens/s per GPU held constant)\n";
        TextTable scale(
            {"GPUs", "MTBF", "checkpoint every", "goodput", "days", "cost", "per trillion tokens"},
            {Align::right, Align::right, Align::right, Align::right, Align::right, Align::right,
             Align::right});
        for (const ScalePoint& sp : e.scale_sweep) {
            scale.addRow({formatCount(sp.gpus) + (sp.gpus == r.gpus ? " *" : ""),
                          sp.mtbf_s > 0 ? formatDuration(sp.mtbf_s) : "-",
                          sp.interval_s > 0 ? formatDuration(sp.interval_s) : "-",
                          formatFixed(sp.goodput * 100, 1) + "%",
                          sp.days > 0 ? formatFixed(sp.days, 1) : "-",
                          sp.cost_usd > 0 ? formatUsd(sp.cost_usd) : "-",
                          formatUsd(sp.usd_per_trillion_tokens)});
        }
        o << scale.render("  ");
    }
    return o.str();
}

/// Goodput and time lost per day around the chosen checkpoint interval.
std::string intervalSweepText(const Economics& e) {
    std::ostringstream o;
    // The interval sweep at 1/4x, 1/2x, 1x, 2x and 4x the centre (the sweep spans 1/16x..16x
    // in 48 equal log steps, so 2x is 6 steps).
    if (e.interval_sweep.size() == 49) {
        o << "\n  Checkpoint interval vs time lost (goodput; hours lost per day)\n";
        TextTable sweep({"every", "goodput", "lost per day"},
                        {Align::right, Align::right, Align::right});
        for (const std::size_t i : {12u, 18u, 24u, 30u, 36u}) {
            const IntervalPoint& ip = e.interval_sweep[i];
            sweep.addRow({formatDuration(ip.interval_s) + (i == 24 ? " *" : ""),
                          formatFixed(ip.goodput * 100, 1) + "%",
                          formatFixed(ip.lost_h_per_day, 2) + " h"});
        }
        o << sweep.render("  ");
    }
    return o.str();
}

/// "Time, cost and reliability": the economics the core computed (economics.h), as text.
std::string economicsText(const Scenario& s, const Report& r) {
    const Economics& e = r.economics;
    if (!e.valid)
        return {};
    std::ostringstream o;
    o << "\nTime, cost and reliability (cost basis: " << costBasisText(s, e)
      << "; prices are the catalog's estimates unless the scenario overrides them)\n";
    TextTable table({"figure", "value"}, {Align::left, Align::left});
    addReliabilityRows(table, s, e);
    addCostRows(table, e);
    addPowerRows(table, s, e);
    addCapitalRows(table, s, e);
    o << table.render("  ");
    o << scaleSweepText(e, r);
    o << intervalSweepText(e);
    return o.str();
}

} // namespace

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
    head.addRow({"step time", formatSeconds(r.step_time_s, UnitStyle::ascii)});
    head.addRow({"micro-batches per step", std::to_string(r.micro_batches)});
    head.addRow({"tokens per second", formatCount(t.tokens_per_s)});
    head.addRow({"tokens per second per GPU", formatCount(t.tokens_per_s_per_gpu)});
    head.addRow({"model TFLOPS per GPU", formatFixed(t.model_tflops_per_gpu, 0)});
    head.addRow({"MFU (vs BF16 peak)", formatFixed(t.mfu * 100, 1) + "%"});
    head.addRow({"memory per GPU (worst stage)",
                 formatBytes(r.memory.total_bytes, UnitStyle::ascii) + " of " +
                     formatBytes(r.memory.hbm_bytes, UnitStyle::ascii) +
                     (r.memory.fits ? "" : "  DOES NOT FIT")});
    if (s.training.total_tokens > 0) {
        head.addRow({"time to train " + formatFixed(s.training.total_tokens / 1e12, 2) + "T tokens",
                     formatSeconds(t.time_to_train_s, UnitStyle::ascii)});
        head.addRow({"GPU-hours", formatCount(t.gpu_hours)});
    }
    head.addRow({"GPU-hours per trillion tokens", formatCount(t.gpu_hours_per_trillion_tokens)});
    // Energy and cost of the run are in "Time, cost and reliability", with failures counted.
    o << head.render("  ");

    o << "\nStep-time breakdown (exposed time; slowest stage, or DualPipe rank, x micro-batches + "
         "pipeline)\n";
    TextTable steps({"item", "exposed", "share", "hidden by overlap"},
                    {Align::left, Align::right, Align::right, Align::right});
    for (int i = 0; i < kStepItemCount; ++i) {
        const double v = r.step.seconds[static_cast<size_t>(i)];
        const double hidden = r.step.overlapped_s[static_cast<size_t>(i)];
        if (v <= 0 && hidden <= 0)
            continue;
        steps.addRow({toString(static_cast<StepItem>(i)), formatSeconds(v, UnitStyle::ascii),
                      formatFixed(r.step_time_s > 0 ? v / r.step_time_s * 100 : 0, 1) + "%",
                      hidden > 0 ? formatSeconds(hidden, UnitStyle::ascii) : ""});
    }
    steps.addSeparator();
    steps.addRow({"step", formatSeconds(r.step_time_s, UnitStyle::ascii), "100.0%", ""});
    o << steps.render("  ");
    const OptimizerPhase& op = r.optimizer_phase;
    o << "  optimizer phase (after the last backward; DP overlap: "
      << toString(s.training.dp_overlap) << "): " << formatSeconds(op.total_s(), UnitStyle::ascii)
      << " = gradient sync " << formatSeconds(op.grad_sync_s, UnitStyle::ascii) << " + optimizer "
      << formatSeconds(op.optimizer_s, UnitStyle::ascii) << " (gradient-norm all-reduce "
      << formatSeconds(op.grad_norm_allreduce_s, UnitStyle::ascii) << ") + weight all-gather "
      << formatSeconds(op.param_gather_s, UnitStyle::ascii) << "\n";

    o << "\nTraffic per GPU per step (slowest stage)\n";
    TextTable traffic({"collective", "group", "calls", c.gpu.scale_up_fabric,
                       std::string(displayName(c.fabric)), "time", "exposed"},
                      {Align::left, Align::left});
    for (const Collective& col : r.collectives) {
        traffic.addRow({col.name, groupLabel(col.group) + "=" + std::to_string(col.group_size),
                        formatCount(col.calls_per_step),
                        formatBytes(col.scale_up_bytes_per_gpu, UnitStyle::ascii),
                        formatBytes(col.scale_out_bytes_per_gpu, UnitStyle::ascii),
                        formatSeconds(col.time_s, UnitStyle::ascii),
                        formatSeconds(col.exposed_s, UnitStyle::ascii)});
    }
    o << traffic.render("  ");

    o << "\nMemory per GPU (stage " << r.memory.stage << ", the least margin)\n";
    const MemoryBreakdown& m = r.memory;
    TextTable mem({"part", "bytes"}, {Align::left, Align::right});
    mem.addRow({"weights", formatBytes(m.weights_bytes, UnitStyle::ascii)});
    mem.addRow({"gradients", formatBytes(m.gradients_bytes, UnitStyle::ascii)});
    mem.addRow({"optimizer states", formatBytes(m.optimizer_bytes, UnitStyle::ascii)});
    mem.addRow({"activations", formatBytes(m.activations_bytes, UnitStyle::ascii)});
    mem.addRow({"dispatch buffers", formatBytes(m.dispatch_buffers_bytes, UnitStyle::ascii)});
    mem.addRow({"workspace", formatBytes(m.workspace_bytes, UnitStyle::ascii)});
    mem.addSeparator();
    mem.addRow({"total", formatBytes(m.total_bytes, UnitStyle::ascii)});
    mem.addRow({"HBM", formatBytes(m.hbm_bytes, UnitStyle::ascii)});
    mem.addRow(
        {m.fits ? "margin" : "over by", formatBytes(std::abs(m.margin_bytes), UnitStyle::ascii)});
    o << mem.render("  ");

    if (s.model.isMoe()) {
        const ExpertLoad& l = r.load;
        o << "\nExpert load (" << toString(s.routing.balancing) << " balancing, routing "
          << toString(s.routing.model) << ", seed " << s.routing.seed << ")\n";
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

    o << economicsText(s, r);

    o << "\nWarnings\n";
    if (r.warnings.empty())
        o << "  none\n";
    for (const DesignWarning& w : r.warnings)
        o << "  [" << toString(w.severity) << "] " << warningText(w) << "\n";
    return o.str();
}

namespace {

void writeBreakdownJson(JsonWriter& json, const StepBreakdown& b) {
    json.beginObject();
    for (int i = 0; i < kStepItemCount; ++i) {
        json.key(keyOf(static_cast<StepItem>(i)))
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

void writeEconomicsJson(JsonWriter& json, const Scenario& s, const Economics& e) {
    const ReliabilityFigures& f = e.reliability;
    const CapitalCost& k = e.capital;
    const PowerDraw& p = e.power;
    json.key("economics")
        .beginObject()
        .field("valid", e.valid)
        .field("rental", e.rental)
        .field("electricity_usd_per_kwh", e.electricity_usd_per_kwh)
        .field("electricity_estimated", e.electricity_estimated)
        .field("days", e.days)
        .field("compute_time_s", e.compute_time_s)
        .field("wall_time_s", e.wall_time_s)
        .field("checkpoint_time_s", e.checkpoint_time_s)
        .field("lost_time_s", e.lost_time_s)
        .field("expected_failures", e.expected_failures)
        .field("gpu_hours", e.gpu_hours)
        .field("energy_kwh", e.energy_kwh)
        .field("cost_usd", e.cost_usd)
        .field("cost_basis", costBasisText(s, e))
        .field("usd_per_trillion_tokens", e.usd_per_trillion_tokens)
        .field("usd_per_h", e.usd_per_h)
        .field("usd_per_day", e.usd_per_day)
        .field("usd_per_gpu_hour", e.usd_per_gpu_hour)
        .field("amortized_usd_per_h", e.amortized_usd_per_h)
        .field("rental_usd_per_h", e.rental_usd_per_h)
        .field("energy_usd_per_h", e.energy_usd_per_h);
    json.key("capital")
        .beginObject()
        .field("gpus_usd", k.gpus_usd)
        .field("servers_usd", k.servers_usd)
        .field("nics_usd", k.nics_usd)
        .field("switches", k.switches)
        .field("switches_usd", k.switches_usd)
        .field("cables", k.cables)
        .field("cables_usd", k.cables_usd)
        .field("racks", k.racks)
        .field("racks_usd", k.racks_usd)
        .field("total_usd", k.total_usd)
        .endObject();
    json.key("power")
        .beginObject()
        .field("gpus_w", p.gpus_w)
        .field("nodes_w", p.nodes_w)
        .field("nics_w", p.nics_w)
        .field("switches_w", p.switches_w)
        .field("racks_w", p.racks_w)
        .field("it_w", p.it_w)
        .field("facility_w", p.facility_w);
    json.key("rack_w").beginArray();
    for (const double w : rackPowerW(s.cluster))
        json.value(w);
    json.endArray().endObject();
    json.key("reliability")
        .beginObject()
        .field("failures_per_h", f.failures_per_h)
        .field("mtbf_s", f.mtbf_s)
        .field("checkpoint_bytes", f.checkpoint_bytes)
        .field("checkpoint_write_s", f.checkpoint_write_s)
        .field("recovery_s", f.recovery_s)
        .field("young_interval_s", f.young_interval_s)
        .field("optimal_interval_s", f.optimal_interval_s)
        .field("interval_s", f.interval_s)
        .field("goodput", f.goodput)
        .field("checkpoint_overhead", f.checkpoint_overhead)
        .field("failure_overhead", f.failure_overhead)
        .endObject();
    json.key("scale_sweep").beginArray();
    for (const ScalePoint& sp : e.scale_sweep)
        json.beginObject()
            .field("gpus", sp.gpus)
            .field("mtbf_s", sp.mtbf_s)
            .field("interval_s", sp.interval_s)
            .field("goodput", sp.goodput)
            .field("days", sp.days)
            .field("cost_usd", sp.cost_usd)
            .field("usd_per_trillion_tokens", sp.usd_per_trillion_tokens)
            .endObject();
    json.endArray().key("interval_sweep").beginArray();
    for (const IntervalPoint& ip : e.interval_sweep)
        json.beginObject()
            .field("interval_s", ip.interval_s)
            .field("goodput", ip.goodput)
            .field("lost_h_per_day", ip.lost_h_per_day)
            .endObject();
    json.endArray().endObject();
}

} // namespace

void writeStepFields(JsonWriter& json, double step_time_s, const StepBreakdown& b) {
    json.field("step_time_s", step_time_s);
    json.key("breakdown").beginObject();
    for (int i = 0; i < kStepItemCount; ++i)
        json.field(keyOf(static_cast<StepItem>(i)), b.seconds[static_cast<size_t>(i)]);
    json.endObject();
    json.key("hidden_s").beginObject();
    for (int i = 0; i < kStepItemCount; ++i)
        json.field(keyOf(static_cast<StepItem>(i)), b.overlapped_s[static_cast<size_t>(i)]);
    json.endObject();
}

std::string reportJson(const Scenario& s, const Report& r) {
    JsonWriter json;
    beginDocument(json, "evaluate", s);
    json.field("gpus", r.gpus);
    json.field("micro_batches", r.micro_batches);
    writeStepFields(json, r.step_time_s, r.step);
    json.key("optimizer_phase")
        .beginObject()
        .field("grad_sync_s", r.optimizer_phase.grad_sync_s)
        .field("optimizer_s", r.optimizer_phase.optimizer_s)
        .field("grad_norm_allreduce_s", r.optimizer_phase.grad_norm_allreduce_s)
        .field("param_gather_s", r.optimizer_phase.param_gather_s)
        .field("total_s", r.optimizer_phase.total_s())
        .endObject();
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
        .endObject();
    writeEconomicsJson(json, s, r.economics);
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
    for (size_t i = 0; i < r.linkBytes().size(); ++i) {
        (r.graph()->links[i].linkClass() == LinkClass::scale_up ? up_bytes : out_bytes) +=
            r.linkBytes()[i];
        max_util = std::max(max_util, r.linkUtilization()[i]);
    }
    json.key("links")
        .beginObject()
        .field("count", static_cast<int64_t>(r.linkBytes().size()))
        .field("scale_up_bytes", up_bytes)
        .field("scale_out_bytes", out_bytes)
        .field("max_utilization", max_util)
        .endObject();
    json.key("warnings").beginArray();
    for (const DesignWarning& w : r.warnings) {
        json.beginObject()
            .field("severity", toString(w.severity))
            .field("code", toString(w.code))
            .field("message", warningText(w))
            .endObject();
    }
    json.endArray();
    json.key("layout_description").beginArray();
    for (const std::string& line : r.layout_description)
        json.value(line);
    json.endArray().endObject();
    return json.str() + "\n";
}

} // namespace moe::cli
