// Design warnings: what a finished report says is wrong or risky in the design, with the
// thresholds of warnings.h. The warnings' codes, figures and text are warnings.cpp's.

#include "moe/design_warnings.h"

#include "moe/economics.h"

#include <algorithm>

namespace moe {

namespace {

using Sev = DesignWarning::Severity;

void add(std::vector<DesignWarning>& out, Sev severity, WarningFigures figures,
         std::vector<int> gpus = {}) {
    const WarningCode code = codeOf(figures);
    out.push_back({severity, code, std::move(figures), std::move(gpus)});
}

/// Racks over cluster.rack_power_limit_kw: the feed or the cooling cannot carry them.
void rackPower(const ClusterSpec& c, const Report& report, std::vector<DesignWarning>& out) {
    if (c.rack_power_limit_kw <= 0 || report.hardware.racks == 0)
        return;
    const std::vector<int> rack_nodes = c.nodesInRacks();
    const int gpus_per_node = report.hardware.gpus_per_node;
    const std::vector<double> rack_w = rackPowerW(c);
    const double limit_w = c.rack_power_limit_kw * 1000;
    RackPowerOver f;
    f.limit_kw = c.rack_power_limit_kw;
    std::vector<int> gpus;
    int first_node = 0;
    for (int rack = 0; rack < static_cast<int>(rack_w.size()); first_node += rack_nodes[rack++]) {
        if (rack_w[rack] <= limit_w * (1 + warning_threshold::kRackPowerSlack))
            continue;
        if (f.racks_over++ == 0) {
            f.first_rack = rack;
            f.first_rack_kw = rack_w[rack] / 1000;
            f.first_rack_nodes = rack_nodes[rack];
        }
        for (int gpu = first_node * gpus_per_node;
             gpu < (first_node + rack_nodes[rack]) * gpus_per_node; ++gpu)
            gpus.push_back(gpu);
    }
    if (f.racks_over > 0)
        add(out, Sev::critical, f, std::move(gpus));
}

} // namespace

std::vector<DesignWarning> designWarnings(const Scenario& s, const Report& report) {
    std::vector<DesignWarning> out;
    if (!report.placement)
        return out;
    const Placement& placement = *report.placement;
    const ClusterSpec& c = s.cluster;
    const GroupSpan& ep = placement.spanOf(GroupKind::ep);
    if (s.model.isMoe() && ep.domains > 1) {
        EpCrossesDomain f;
        f.ep_gpus = ep.gpus;
        f.ep_nodes = ep.nodes;
        f.fabric = displayName(c.fabric);
        f.scale_up_fabric = c.gpu.scale_up_fabric;
        if (report.costs) {
            f.scale_out_gbps = report.costs->rates.scale_out.bandwidth_gbps;
            f.scale_up_gbps = report.costs->rates.scale_up.bandwidth_gbps;
        }
        add(out, Sev::warning, f, placement.membersOf(GroupKind::ep, 0));
    }
    const GroupSpan& tp = placement.spanOf(GroupKind::tp);
    if (tp.gpus > 1 && tp.domains > 1)
        add(out, Sev::critical, TpCrossesDomain{tp.gpus, tp.domains, displayName(c.fabric)},
            placement.membersOf(GroupKind::tp, 0));
    if (s.model.isMoe() && report.load.max_imbalance >= warning_threshold::kStragglerImbalance) {
        const int hot = report.load.hottestGpu(placement);
        add(out, Sev::warning, Straggler{hot, report.load.max_imbalance, report.load.hottest_layer},
            {hot});
    }
    const MemoryBreakdown& mem = report.memory;
    if (!mem.fits)
        add(out, Sev::critical, MemoryOver{mem.stage, mem.total_bytes, mem.hbm_bytes});
    else if (mem.margin_bytes < warning_threshold::kMemoryTightShare * mem.hbm_bytes)
        add(out, Sev::warning, MemoryTight{mem.stage, mem.total_bytes, mem.hbm_bytes});
    const double step = report.step_time_s;
    if (step > 0 && report.step[StepItem::bubble] > warning_threshold::kBubbleShare * step)
        add(out, Sev::warning, LargeBubble{report.step[StepItem::bubble] / step});
    if (step > 0 && report.step[StepItem::dp_sync] > warning_threshold::kExposedSyncShare * step)
        add(out, Sev::warning, ExposedSync{report.step[StepItem::dp_sync] / step});
    if (report.load.dropped_share > 0)
        add(out, Sev::warning, TokensDropped{report.load.dropped_share});
    rackPower(c, report, out);
    if (s.model.isMoe()) {
        const double per_expert = report.load.slots_per_group / std::max(1, s.model.experts);
        if (per_expert < kTinyExpertGemmTokens)
            add(out, Sev::info, TinyExpertGemms{per_expert});
    }
    const Economics& e = report.economics;
    if (e.valid && e.reliability.goodput < warning_threshold::kLowGoodput) {
        const ReliabilityFigures& r = e.reliability;
        add(out, Sev::warning,
            LowGoodput{r.goodput, r.checkpoint_overhead, r.failure_overhead, r.mtbf_s / 3600,
                       r.checkpoint_write_s / 60, r.recovery_s / 60});
    }
    // Most severe first, so a list cut short still shows what breaks the design.
    std::stable_sort(out.begin(), out.end(), [](const DesignWarning& a, const DesignWarning& b) {
        return a.severity > b.severity;
    });
    return out;
}

} // namespace moe
