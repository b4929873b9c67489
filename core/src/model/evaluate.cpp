// The performance model's report: the step priced by the one cost model (step_costs.h), and
// around it the collectives of the slowest stage, the bytes on every link, memory, throughput,
// the economics of the run and the design warnings.

#include "moe/evaluate.h"

#include "moe/collectives.h"
#include "moe/design_warnings.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace moe {

namespace {

/// Bytes on every link: each group adds its members' per-step bytes, by its own stage; the
/// utilization divides them by what the link carries in one step.
LinkTraffic linkTraffic(const HardwareGraph& graph, const Placement& placement,
                        const StepCostModel& model, double step_time_s) {
    LinkTraffic traffic;
    const double m = model.micro_batches;
    const double pp_bytes = 2.0 * m * model.layout.vpp * model.pp_message_bytes;
    traffic.bytes.assign(graph.links.size(), 0.0);
    std::vector<int> members; // reused: no allocation per group
    auto load_links = [&](GroupKind kind, auto bytes_of) {
        if (placement.axis(kind).size <= 1)
            return;
        for (int gi = 0; gi < placement.groupCount(kind); ++gi) {
            const int stage = placement.coordsOf(placement.memberGpu(kind, gi, 0)).pp;
            const StageCosts& st = model.stages[static_cast<size_t>(stage)];
            const auto [up, out] = bytes_of(st.traffic, st.sync);
            if (up + out <= 0)
                continue;
            placement.membersOf(kind, gi, members);
            addLinkBytes(graph, members, up, out, traffic.bytes);
        }
    };
    load_links(GroupKind::ep, [&](const StageTraffic& t, const StageSync&) {
        return std::pair{(t.a2a_dispatch_up + t.a2a_combine_up) * m,
                         (t.a2a_dispatch_out + t.a2a_combine_out) * m};
    });
    load_links(GroupKind::tp, [&](const StageTraffic& t, const StageSync&) {
        return std::pair{t.tp_up * m, t.tp_out * m};
    });
    load_links(GroupKind::cp, [&](const StageTraffic& t, const StageSync&) {
        return std::pair{t.cp_up * m, t.cp_out * m};
    });
    load_links(GroupKind::dp, [&](const StageTraffic&, const StageSync& sync) {
        return std::pair{sync.dp_bytes_up, sync.dp_bytes_out};
    });
    load_links(GroupKind::edp, [&](const StageTraffic&, const StageSync& sync) {
        return std::pair{sync.edp_bytes_up, sync.edp_bytes_out};
    });
    load_links(GroupKind::pp, [&](const StageTraffic&, const StageSync&) {
        return model.pp_scale_out ? std::pair{0.0, pp_bytes} : std::pair{pp_bytes, 0.0};
    });
    traffic.utilization.resize(traffic.bytes.size());
    for (size_t i = 0; i < traffic.bytes.size(); ++i) {
        const double capacity = graph.links[i].bandwidth_gbps * 1e9 * step_time_s;
        traffic.utilization[i] = capacity > 0 ? traffic.bytes[i] / capacity : 0.0;
    }
    return traffic;
}

/// The report's link traffic, counted when first read (Report::linkTraffic).
std::shared_ptr<const OnDemand<LinkTraffic>> linkTrafficOnDemand(const Report& report) {
    return onDemand([graph = report.hardware_graph, placement = report.placement,
                     model = report.costs, step_time_s = report.step_time_s] {
        return linkTraffic(graph->get(), *placement, *model, step_time_s);
    });
}

/// The collectives of the slowest stage, per step and per GPU.
void addCollectives(Report& report, const Scenario& s, const StepCostModel& model,
                    const StepPrice& price) {
    const Placement& placement = *report.placement;
    const StageCosts& worst = model.stages[static_cast<size_t>(price.slowest_stage)];
    const StageTraffic& t = worst.traffic;
    const StepBreakdown& worst_mb =
        price.stage_per_micro_batch[static_cast<size_t>(price.slowest_stage)];
    const double m = model.micro_batches;
    const int mi = report.micro_batches;
    auto add = [&](CollectiveKind kind, std::string name, GroupKind group, int calls, double up,
                   double out, double time_s, double exposed_s) {
        if (up + out <= 0 && time_s <= 0)
            return;
        Collective c;
        c.kind = kind;
        c.name = std::move(name);
        c.group = group;
        c.group_size = placement.spanOf(group).gpus;
        c.calls_per_step = calls;
        c.scale_up_bytes_per_gpu = up;
        c.scale_out_bytes_per_gpu = out;
        c.bytes_per_gpu = up + out;
        c.link_class = out > 0 ? LinkClass::scale_out : LinkClass::scale_up;
        c.time_s = time_s;
        c.exposed_s = exposed_s;
        report.collectives.push_back(std::move(c));
    };
    const double a2a_exposed_share = t.a2a_s() > 0 ? worst_mb[StepItem::all_to_all] / t.a2a_s() : 0;
    add(CollectiveKind::moe_dispatch, "MoE dispatch all-to-all (fwd+bwd)", GroupKind::ep,
        t.a2a_calls / 2 * mi, t.a2a_dispatch_up * m, t.a2a_dispatch_out * m, t.a2a_dispatch_s * m,
        t.a2a_dispatch_s * m * a2a_exposed_share);
    add(CollectiveKind::moe_combine, "MoE combine all-to-all (fwd+bwd)", GroupKind::ep,
        t.a2a_calls / 2 * mi, t.a2a_combine_up * m, t.a2a_combine_out * m, t.a2a_combine_s * m,
        t.a2a_combine_s * m * a2a_exposed_share);
    add(CollectiveKind::tp_collective, "TP all-gather / reduce-scatter", GroupKind::tp,
        t.tp_calls * mi, t.tp_up * m, t.tp_out * m, t.tp_s * m, report.step[StepItem::tp_comm]);
    add(CollectiveKind::cp_exchange, "CP ring KV exchange", GroupKind::cp, t.cp_calls * mi,
        t.cp_up * m, t.cp_out * m, t.cp_s * m, report.step[StepItem::cp_comm]);
    const LayoutSpec& lay = s.layout;
    const double pp_bytes = 2.0 * m * lay.vpp * model.pp_message_bytes;
    add(CollectiveKind::pp_send_recv, "PP send/recv", GroupKind::pp,
        lay.pp > 1 ? 2 * mi * lay.vpp : 0, model.pp_scale_out ? 0 : pp_bytes,
        model.pp_scale_out ? pp_bytes : 0, 2.0 * m * lay.vpp * model.pp_send_s,
        report.step[StepItem::pp_comm]);
    // The dense and expert syncs share each bucket; the exposed sync splits by their times.
    const StageSync& sync = worst.sync;
    const double sync_s = sync.dp_s() + sync.edp_s();
    const double dense_share = sync_s > 0 ? sync.dp_s() / sync_s : 0.0;
    const double exposed_sync = report.step[StepItem::dp_sync];
    add(CollectiveKind::dp_sync, "DP gradient sync (dense)", GroupKind::dp,
        s.training.zero_stage >= 1 ? 2 : 1, sync.dp_bytes_up, sync.dp_bytes_out, sync.dp_s(),
        exposed_sync * dense_share);
    add(CollectiveKind::edp_sync, "expert-DP gradient sync", GroupKind::edp,
        s.training.zero_stage >= 1 ? 2 : 1, sync.edp_bytes_up, sync.edp_bytes_out, sync.edp_s(),
        exposed_sync * (1.0 - dense_share));
}

/// placeLayout reads the degrees, the rank order, the expert placement entries, the expert
/// count and the MoE layer count; whatever else the layout holds (schedule, interleaving, the
/// end stages' layer counts, node-limited routing) leaves the placement as it is.
LayoutSpec placementInputs(const LayoutSpec& layout) {
    LayoutSpec key = layout;
    key.vpp = 1;
    key.first_stage_layers = 0;
    key.last_stage_layers = 0;
    key.schedule = PipelineSchedule::one_f_one_b;
    key.max_nodes_per_token = 0;
    return key;
}

std::shared_ptr<const Placement> placementFor(const Scenario& s,
                                              const std::shared_ptr<const GraphOnDemand>& graph,
                                              EvaluationCache* cache) {
    if (!cache)
        return std::make_shared<const Placement>(placeLayout(s));
    EvaluationCache::PlacedLayout entry{graph, placementInputs(s.layout), s.model.experts,
                                        s.model.moeLayers(), nullptr};
    auto& recent = cache->placements;
    for (auto it = recent.begin(); it != recent.end(); ++it) {
        if (it->graph == entry.graph && it->layout == entry.layout &&
            it->experts == entry.experts && it->moe_layers == entry.moe_layers) {
            std::rotate(recent.begin(), it, it + 1); // most recently used first
            return recent.front().placement;
        }
    }
    entry.placement = std::make_shared<const Placement>(placeLayout(s));
    if (recent.size() >= EvaluationCache::kRecentPlacements)
        recent.pop_back();
    recent.insert(recent.begin(), std::move(entry));
    return recent.front().placement;
}

Report evaluateWith(const Scenario& s, uint64_t routing_step, EvaluationCache* cache) {
    Report report;
    report.gpus = s.cluster.gpuCount();
    report.micro_batches = microBatchesPerStep(s);
    report.params = countParams(s.model);
    std::shared_ptr<const GraphOnDemand> graph;
    if (cache && cache->graph && cache->graph_cluster == s.cluster) {
        graph = cache->graph;
        report.hardware = cache->hardware;
    } else {
        graph = onDemand([cluster = s.cluster] { return buildHardwareGraph(cluster); });
        report.hardware = hardwareShape(s.cluster);
        if (cache) {
            cache->graph = graph;
            cache->graph_cluster = s.cluster;
            cache->hardware = report.hardware;
        }
    }
    const std::shared_ptr<const Placement> placement = placementFor(s, graph, cache);
    report.hardware_graph = graph;
    report.placement = placement;
    const bool figures_only = cache && cache->figures_only;
    if (!figures_only)
        report.layout_description = describeLayout(s, *placement);
    std::shared_ptr<const SharedExpertLoad> shared_load; // priced in place of report.load
    if (s.model.isMoe()) {
        if (figures_only)
            shared_load = sharedExpertLoad(s, *placement, routing_step, cache->loads,
                                           /*detail=*/false);
        else
            report.load = cache ? sampleExpertLoad(s, *placement, routing_step, cache->loads)
                                : sampleExpertLoad(s, *placement, routing_step);
    }

    auto model = std::make_shared<const StepCostModel>(buildStepCostModel(s, *placement));
    report.costs = model;
    const StepPrice price = shared_load
                                ? priceStep(*model, shared_load->load, &shared_load->group_peaks)
                                : priceStep(*model, report.load);
    report.slowest_stage = price.slowest_stage;
    report.step = price.step;
    report.step_time_s = price.step_time_s;
    report.optimizer_phase = price.optimizer_phase;
    report.dualpipe_phases = price.dualpipe_phases;
    report.stages.reserve(model->stages.size());
    for (size_t i = 0; i < model->stages.size(); ++i) {
        StageResult result;
        result.layers = model->stages[i].layers;
        result.per_micro_batch = price.stage_per_micro_batch[i];
        result.memory = memoryPerGpu(s, result.layers, report.params);
        report.stages.push_back(std::move(result));
    }
    addCollectives(report, s, *model, price);
    report.link_traffic = linkTrafficOnDemand(report);

    // Memory: the stage with the least margin.
    report.memory = report.stages.front().memory;
    for (const StageResult& st : report.stages) {
        if (st.memory.margin_bytes < report.memory.margin_bytes)
            report.memory = st.memory;
    }

    // Throughput and totals.
    Throughput& t = report.throughput;
    t.tokens_per_step = static_cast<double>(s.training.global_batch) * s.model.seq_len;
    if (report.step_time_s > 0) {
        t.tokens_per_s = t.tokens_per_step / report.step_time_s;
        t.tokens_per_s_per_gpu = t.tokens_per_s / report.gpus;
        t.model_tflops_per_gpu = modelFlopsPerToken(s.model) * t.tokens_per_s_per_gpu / 1e12;
        t.mfu = t.model_tflops_per_gpu / s.cluster.gpu.bf16_tflops;
        t.time_to_train_s = s.training.total_tokens / t.tokens_per_s;
        t.gpu_hours = t.time_to_train_s * report.gpus / 3600.0;
        t.gpu_hours_per_trillion_tokens = 1e12 / t.tokens_per_s * report.gpus / 3600.0;
    }

    if (figures_only)
        return report;
    EconomicsInput run;
    run.gpus = report.gpus;
    run.parameters = report.params.total;
    run.tokens_per_s = t.tokens_per_s;
    run.tokens_per_s_per_gpu = t.tokens_per_s_per_gpu;
    run.time_to_train_s = t.time_to_train_s;
    run.hardware = &report.hardware;
    report.economics = computeEconomics(s, run);
    report.warnings = designWarnings(s, report); // last: it reads everything
    return report;
}

} // namespace

Report evaluate(const Scenario& s, uint64_t routing_step) {
    return evaluateWith(s, routing_step, nullptr);
}

Report evaluate(const Scenario& s, uint64_t routing_step, EvaluationCache& cache) {
    return evaluateWith(s, routing_step, &cache);
}

} // namespace moe
