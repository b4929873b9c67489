#include "moe/design_summary.h"

#include "moe/compare.h"
#include "moe/format.h"

#include <algorithm>
#include <cmath>

namespace moe {

const char* displayName(PipelineSchedule schedule) {
    switch (schedule) {
    case PipelineSchedule::gpipe:
        return "GPipe";
    case PipelineSchedule::one_f_one_b:
        return "1F1B";
    case PipelineSchedule::interleaved:
        return "interleaved 1F1B";
    case PipelineSchedule::dualpipe:
        return "DualPipe";
    }
    return "?";
}

namespace {

std::string plural(int n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

/// "EP 64 across 8 nodes over NVLink + InfiniBand"; "TP 1" for a dimension of degree 1.
std::string dimension(const char* name, int degree, GroupKind kind, const Placement& placement,
                      const ClusterSpec& cluster) {
    std::string s = std::string(name) + " " + std::to_string(degree);
    if (degree <= 1)
        return s;
    const GroupSpan& span = placement.spanOf(kind);
    return s + " " + spanPlaceWords(span, cluster) + " over " + spanLinkWords(span, cluster);
}

/// "16 experts over EP 8 = 2 per GPU, top-2".
std::string expertWords(const ModelSpec& m, const LayoutSpec& l) {
    std::string s = std::to_string(m.experts) + " experts over EP " + std::to_string(l.ep);
    const char* unit = l.etp > 1 ? " per EP rank" : " per GPU";
    if (l.ep > 0 && m.experts % l.ep == 0)
        s += " = " + std::to_string(m.experts / l.ep) + unit;
    else if (l.ep > 0)
        s += ", up to " + std::to_string((m.experts + l.ep - 1) / l.ep) + unit;
    if (l.etp > 1)
        s += " (each split over ETP " + std::to_string(l.etp) + ")";
    return s + ", top-" + std::to_string(m.top_k);
}

} // namespace

std::string layoutInWords(const Scenario& scenario, const Placement& placement) {
    const ClusterSpec& c = scenario.cluster;
    const LayoutSpec& l = scenario.layout;
    std::string hardware = std::to_string(c.gpuCount()) + " " + c.gpu.name + " GPUs in " +
                           plural(c.nodes, "node") + " of " + std::to_string(c.gpus_per_node);
    if (c.rackCount() > 1)
        hardware += " (" + std::to_string(c.rackCount()) + " racks)";
    if (!placement.placed())
        return hardware + "; the layout does not cover these GPUs, so it cannot be placed.";

    const bool moe = scenario.model.isMoe();
    const bool experts_placed = moe && placement.expertsPlaced();
    std::vector<std::string> dims;
    dims.push_back(dimension("TP", l.tp, GroupKind::tp, placement, c));
    if (l.cp > 1)
        dims.push_back(dimension("CP", l.cp, GroupKind::cp, placement, c));
    if (experts_placed) {
        dims.push_back(dimension("EP", l.ep, GroupKind::ep, placement, c));
        if (l.etp > 1)
            dims.push_back(dimension("ETP", l.etp, GroupKind::etp, placement, c));
    }
    std::string pp = "PP " + std::to_string(l.pp);
    if (l.pp > 1) {
        pp += std::string(" with ") + displayName(l.schedule);
        if (l.vpp > 1)
            pp += " (" + std::to_string(l.vpp) + " virtual stages per rank)";
        const GroupSpan& span = placement.spanOf(GroupKind::pp);
        pp += " " + spanPlaceWords(span, c) + " over " + spanLinkWords(span, c);
    }
    dims.push_back(pp);
    dims.push_back(dimension("DP", l.dp, GroupKind::dp, placement, c));
    if (experts_placed && l.expertDp() != l.dp)
        dims.push_back(dimension("expert-DP", l.expertDp(), GroupKind::edp, placement, c));

    std::string out = hardware + "; ";
    for (size_t i = 0; i < dims.size(); ++i)
        out += (i == 0 ? "" : ", ") + dims[i];
    if (moe && !experts_placed)
        out += "; the expert layers cannot be placed (EP x ETP does not divide TP x CP x DP)";
    else if (moe)
        out += "; " + expertWords(scenario.model, l);
    return out + ".";
}

namespace {

/// "EP" for the layout's degrees, the path inside its section for the rest.
std::string settingLabel(const std::string& path) {
    static const std::pair<const char*, const char*> kShort[] = {
        {"layout.tp", "TP"}, {"layout.cp", "CP"}, {"layout.pp", "PP"},   {"layout.vpp", "VPP"},
        {"layout.dp", "DP"}, {"layout.ep", "EP"}, {"layout.etp", "ETP"}, {"layout.order", "order"}};
    for (const auto& [full, label] : kShort)
        if (path == full)
            return label;
    const size_t dot = path.find('.');
    return dot == std::string::npos ? path : path.substr(dot + 1);
}

} // namespace

std::vector<SettingChange> settingChanges(const Scenario& baseline, const Scenario& current) {
    std::vector<SettingChange> out;
    for (const FieldDifference& f : diffScenarioFields(baseline, current))
        if (f.path != "name" && f.path != "description")
            out.push_back({f.path, settingLabel(f.path), f.baseline, f.current});
    std::stable_partition(out.begin(), out.end(),
                          [](const SettingChange& c) { return c.path.starts_with("layout."); });
    return out;
}

std::string describeChanges(const std::vector<SettingChange>& changes, ChangeStyle style,
                            int max_items) {
    if (changes.empty())
        return "same settings";
    constexpr size_t kLongValue = 20;
    std::string out;
    const int shown = std::min(static_cast<int>(changes.size()), std::max(1, max_items));
    for (int i = 0; i < shown; ++i) {
        const SettingChange& c = changes[static_cast<size_t>(i)];
        std::string item;
        if (c.baseline.size() > kLongValue || c.current.size() > kLongValue)
            item = c.label + (style == ChangeStyle::baseline ? " as before" : " changed");
        else if (style == ChangeStyle::arrow)
            item = c.label + " " + c.baseline + " \u2192 " + c.current;
        else
            item = c.label + "=" + (style == ChangeStyle::baseline ? c.baseline : c.current);
        out += (i == 0 ? "" : ", ") + item;
    }
    if (static_cast<int>(changes.size()) > shown)
        out += ", +" + std::to_string(changes.size() - static_cast<size_t>(shown)) + " more";
    return out;
}

BaselineVerdict verdictAgainstBaseline(const Report& baseline, const Report& current,
                                       int top_items) {
    BaselineVerdict v;
    v.baseline_step_s = baseline.step_time_s;
    v.current_step_s = current.step_time_s;
    if (baseline.step_time_s > 0)
        v.relative = (current.step_time_s - baseline.step_time_s) / baseline.step_time_s;
    for (int i = 0; i < kStepItemCount; ++i) {
        const double delta = current.step.seconds[static_cast<size_t>(i)] -
                             baseline.step.seconds[static_cast<size_t>(i)];
        if (delta != 0)
            v.top.push_back({static_cast<StepItem>(i), delta});
    }
    // Largest move first; ties keep the breakdown's order.
    std::stable_sort(v.top.begin(), v.top.end(), [](const auto& a, const auto& b) {
        return std::fabs(a.delta_s) > std::fabs(b.delta_s);
    });
    if (static_cast<int>(v.top.size()) > top_items)
        v.top.resize(static_cast<size_t>(std::max(0, top_items)));
    return v;
}

std::string describeVerdict(const BaselineVerdict& verdict, const std::string& baseline_name,
                            const std::vector<SettingChange>& changes) {
    std::string out;
    const std::string base = "baseline '" + baseline_name + "'";
    if (verdict.current_step_s == verdict.baseline_step_s)
        out = "same step time as " + base;
    else
        // One decimal, as the comparison table's "%" column writes the same change.
        out =
            formatFixed(std::fabs(verdict.relative) * 100, 1) + "%" +
            (verdict.current_step_s < verdict.baseline_step_s ? " faster than " : " slower than ") +
            base;
    if (!changes.empty())
        out += " (" + describeChanges(changes, ChangeStyle::arrow) + ")";
    for (size_t i = 0; i < verdict.top.size(); ++i) {
        const BaselineVerdict::Item& item = verdict.top[i];
        const std::string sign = item.delta_s > 0 ? "+" : "\u2212";
        out += (i == 0 ? ": " : ", ") + std::string(toString(item.item)) + " " + sign +
               formatSeconds(std::fabs(item.delta_s));
    }
    return out;
}

} // namespace moe
