// Layout search: the explanation of the result - the cluster, why the winner wins (its
// collectives, its memory, what each alternative changes and loses) or why nothing fits, and
// where the scenario's own layout stands.

#include "search_detail.h"

#include "moe/validate.h"

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <numeric>

namespace moe::search_detail {

namespace {

std::string fmt(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string seconds(double s) {
    const double a = std::abs(s);
    if (a >= 1.0)
        return fmt(a >= 100 ? "%.0f s" : a >= 10 ? "%.1f s" : "%.2f s", s);
    if (a >= 1e-3)
        return fmt(a >= 0.1 ? "%.0f ms" : a >= 0.01 ? "%.1f ms" : "%.2f ms", s * 1e3);
    return fmt("%.0f us", s * 1e6);
}

std::string percent(double fraction) {
    return fmt("%+.0f%%", fraction * 100);
}

std::string count(double v) {
    const long long n = std::llround(v);
    std::string digits = std::to_string(n < 0 ? -n : n);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return (n < 0 ? "-" : "") + out;
}

/// Where a group sits, e.g. "inside one node", "one GPU per node on 8 nodes",
/// "across 2 nodes (8 GPUs in each)".
std::string whereSpan(const GroupSpan& s, const FabricWords& w) {
    if (s.gpus <= 1)
        return "on one GPU";
    if (s.domains <= 1)
        return "inside one " + w.domain;
    const int units = w.rack_domain ? s.racks : s.nodes;
    if (s.max_gpus_per_domain <= 1)
        return "one GPU per " + w.domain + " on " + std::to_string(units) + " " + w.domain + "s";
    return "across " + std::to_string(units) + " " + w.domain + "s (" +
           std::to_string(s.max_gpus_per_domain) + " GPUs in each)";
}

std::string groupName(GroupKind k) {
    switch (k) {
    case GroupKind::tp:
        return "TP";
    case GroupKind::cp:
        return "CP";
    case GroupKind::dp:
        return "DP";
    case GroupKind::pp:
        return "PP";
    case GroupKind::ep:
        return "EP";
    case GroupKind::etp:
        return "expert-TP";
    case GroupKind::edp:
        return "expert-DP";
    }
    return "?";
}

/// Link(s) that carry a collective's bytes, from its byte split.
std::string linksOf(double up_bytes, double out_bytes, const FabricWords& w) {
    if (out_bytes <= 0)
        return w.scale_up + " only";
    if (up_bytes <= 0)
        return w.scale_out + " only";
    return w.scale_up + " + " + w.scale_out + " (" +
           fmt("%.0f%%", 100 * out_bytes / (up_bytes + out_bytes)) + " of the bytes on " +
           w.scale_out + ")";
}

struct CollectiveSum {
    double up = 0, out = 0, time_s = 0, exposed_s = 0;
    GroupKind group = GroupKind::ep;
    int size = 0;
    bool present = false;
};

CollectiveSum sumOf(const Report& r, std::initializer_list<CollectiveKind> kinds) {
    CollectiveSum s;
    for (const Collective& c : r.collectives) {
        if (std::find(kinds.begin(), kinds.end(), c.kind) == kinds.end())
            continue;
        s.up += c.scale_up_bytes_per_gpu;
        s.out += c.scale_out_bytes_per_gpu;
        s.time_s += c.time_s;
        s.exposed_s += c.exposed_s;
        s.group = c.group;
        s.size = c.group_size;
        s.present = true;
    }
    return s;
}

/// "where each collective lands and why", one line per collective of the winner.
void explainCollectives(const Scenario& s, const Report& r, std::vector<std::string>& lines) {
    const FabricWords w = fabricWords(s.cluster);
    struct Item {
        const char* label;
        std::initializer_list<CollectiveKind> kinds;
    };
    const Item items[] = {
        {"MoE all-to-all (dispatch + combine)",
         {CollectiveKind::moe_dispatch, CollectiveKind::moe_combine}},
        {"TP all-gather / reduce-scatter", {CollectiveKind::tp_collective}},
        {"CP KV exchange", {CollectiveKind::cp_exchange}},
        {"PP send/recv", {CollectiveKind::pp_send_recv}},
        {"dense gradient sync", {CollectiveKind::dp_sync}},
        {"expert gradient sync", {CollectiveKind::edp_sync}},
    };
    for (const Item& item : items) {
        const CollectiveSum c = sumOf(r, item.kinds);
        if (!c.present || c.up + c.out <= 0)
            continue;
        const GroupSpan& span = r.placement->spanOf(c.group);
        std::string line = std::string(item.label) + " over " + groupName(c.group) + "=" +
                           std::to_string(c.size) + " " + whereSpan(span, w) + ": " +
                           linksOf(c.up, c.out, w) + ", " + gb(c.up + c.out) +
                           " per GPU per step, " + seconds(c.time_s);
        if (c.exposed_s >= c.time_s * 0.999)
            line += ", all of it on the critical path";
        else if (c.exposed_s <= 0)
            line += ", hidden behind compute";
        else
            line += ", " + seconds(c.exposed_s) + " of it exposed";
        lines.push_back(line);
    }
}

} // namespace

Scenario withLayout(const Scenario& base, const LayoutSpec& l, int micro_batch, Recompute rc) {
    Scenario s = base;
    s.layout = l;
    s.training.micro_batch = micro_batch;
    s.training.recompute = rc;
    return s;
}

namespace {

/// What memory forced: for each dimension the winner raised above its cheapest value, whether
/// the next smaller value fits.
void explainMemory(const Scenario& win, const SearchFigures& wf, double reserve_share,
                   std::vector<std::string>& lines, const std::string& who = "the winner") {
    const LayoutSpec& l = win.layout;
    const int gpus = win.cluster.gpuCount();
    std::vector<std::string> forced;
    std::vector<std::string> chosen;
    auto probe = [&](const std::string& label, Scenario v, const std::string& winner_label) {
        if (hasErrors(validateScenario(v)))
            return;
        const MemoryBreakdown m = worstMemory(v);
        if (!fitsWithReserve(m, reserve_share)) {
            forced.push_back(label + " does not fit: " + gb(m.total_bytes) + " > " +
                             usableHbmText(m, reserve_share) + " per GPU (stage " +
                             std::to_string(m.stage) + "), so " + winner_label);
        } else {
            chosen.push_back(label + " fits too (" + gb(m.total_bytes) + ")");
        }
    };
    auto next_lower = [](const std::vector<int>& values, int current) {
        int best = 0;
        for (const int v : values)
            if (v < current)
                best = std::max(best, v);
        return best;
    };
    auto rederive = [&](LayoutSpec& v) { v.dp = gpus / std::max(1, v.tp * v.cp * v.pp); };
    // Model-parallel degrees: a smaller one leaves more GPUs to DP.
    struct Dimension {
        const char* name;
        int LayoutSpec::*field;
    };
    const Dimension dims[] = {{"TP", &LayoutSpec::tp},
                              {"PP", &LayoutSpec::pp},
                              {"CP", &LayoutSpec::cp},
                              {"EP", &LayoutSpec::ep},
                              {"ETP", &LayoutSpec::etp}};
    for (const Dimension& d : dims) {
        const int current = l.*d.field;
        if (current <= 1)
            continue;
        const int lower = next_lower(divisors(current), current);
        if (lower < 1)
            continue;
        Scenario v = win;
        v.layout.*d.field = lower;
        if (d.field == &LayoutSpec::tp)
            v.layout.etp = std::gcd(v.layout.etp, lower);
        if (d.field == &LayoutSpec::pp) {
            v.layout.vpp = 1;
            if (v.layout.schedule != PipelineSchedule::gpipe)
                v.layout.schedule = PipelineSchedule::one_f_one_b;
        }
        if (d.field == &LayoutSpec::ep && lower < l.ep)
            v.layout.expert_placement.clear();
        rederive(v.layout);
        const std::string name = d.name;
        probe(name + "=" + std::to_string(lower), v, name + "=" + std::to_string(current));
    }
    if (win.training.recompute != Recompute::none) {
        Scenario v = win;
        v.training.recompute = Recompute::none;
        probe("recompute none", v, std::string("recompute ") + toString(win.training.recompute));
    }
    // A smaller micro-batch always fits better; mention the micro-batch only when memory is
    // the reason it is not larger.
    {
        Scenario v = win;
        v.training.micro_batch = win.training.micro_batch * 2;
        if (!hasErrors(validateScenario(v))) {
            const MemoryBreakdown m = worstMemory(v);
            if (!fitsWithReserve(m, reserve_share))
                forced.push_back("micro-batch " + std::to_string(v.training.micro_batch) +
                                 " does not fit: " + gb(m.total_bytes) + " > " +
                                 usableHbmText(m, reserve_share) + " per GPU, so micro-batch " +
                                 std::to_string(win.training.micro_batch));
        }
    }
    const std::string headroom = gb(wf.margin_bytes) + " of " + gb(wf.hbm_bytes) + " to spare (" +
                                 gb(wf.memory_bytes) + " used on the tightest GPU)";
    if (forced.empty()) {
        lines.push_back("Memory forced nothing: " + who + " has " + headroom);
    } else {
        for (const std::string& f : forced)
            lines.push_back("Memory: " + f);
        lines.push_back("Memory left: " + headroom);
    }
    for (const std::string& c : chosen)
        lines.push_back("Chosen for speed, not memory: " + c);
}

/// How `alt` differs from `win`, in words with where the changed groups sit.
std::string differences(const Scenario& win, const Scenario& alt, const Report& alt_report) {
    const LayoutSpec& a = alt.layout;
    const LayoutSpec& b = win.layout;
    const FabricWords w = fabricWords(alt.cluster);
    std::vector<std::string> parts;
    auto span_of = [&](GroupKind k) { return alt_report.placement->spanOf(k); };
    if (a.tp != b.tp)
        parts.push_back("TP=" + std::to_string(a.tp) +
                        (a.tp > 1 ? " " + whereSpan(span_of(GroupKind::tp), w) : ""));
    if (a.cp != b.cp)
        parts.push_back("CP=" + std::to_string(a.cp) +
                        (a.cp > 1 ? " " + whereSpan(span_of(GroupKind::cp), w) : ""));
    if (a.pp != b.pp || a.vpp != b.vpp || a.schedule != b.schedule) {
        std::string p = "PP=" + std::to_string(a.pp);
        if (a.vpp > 1)
            p += "x" + std::to_string(a.vpp);
        if (a.pp > 1)
            p += std::string(" ") + toString(a.schedule);
        parts.push_back(p);
    }
    if (alt.model.isMoe() && (a.ep != b.ep || a.etp != b.etp || a.order != b.order)) {
        std::string e = "EP=" + std::to_string(a.ep);
        if (a.ep > 1)
            e += " " + whereSpan(span_of(GroupKind::ep), w);
        e += ", expert-DP=" + std::to_string(a.expertDp());
        if (a.etp != b.etp)
            e += ", ETP=" + std::to_string(a.etp);
        if (a.order != b.order)
            e += ", order " + toString(a.order);
        parts.push_back(e);
    }
    if (alt.training.micro_batch != win.training.micro_batch)
        parts.push_back("micro-batch " + std::to_string(alt.training.micro_batch));
    if (alt.training.recompute != win.training.recompute)
        parts.push_back(std::string("recompute ") + toString(alt.training.recompute));
    std::string out;
    for (const std::string& p : parts)
        out += (out.empty() ? "" : ", ") + p;
    return out.empty() ? "the same layout" : out;
}

/// What `alt` loses against the winner: the step item that grew most, and on which link; when
/// that item grew much more than the step, also what the alternative wins back elsewhere.
std::string loss(const Scenario& alt, const Report& win_r, const Report& alt_r) {
    const FabricWords w = fabricWords(alt.cluster);
    const double delta = alt_r.step_time_s - win_r.step_time_s;
    if (delta <= 0)
        return "ties with the winner on step time";
    std::string out = percent(delta / win_r.step_time_s) + " step time (+" + seconds(delta) + ")";
    int worst = -1, best = -1;
    double worst_delta = 0, best_delta = 0;
    for (int i = 0; i < kStepItemCount; ++i) {
        const double d =
            alt_r.step.seconds[static_cast<size_t>(i)] - win_r.step.seconds[static_cast<size_t>(i)];
        if (d > worst_delta) {
            worst_delta = d;
            worst = i;
        }
        if (d < best_delta) {
            best_delta = d;
            best = i;
        }
    }
    if (worst < 0)
        return out;
    const bool offset = best >= 0 && worst_delta > 1.5 * delta;
    const std::string lead = offset ? "; it saves " + seconds(-best_delta) + " of " +
                                          toString(static_cast<StepItem>(best)) + " but pays "
                                    : "; most of it is ";
    const StepItem item = static_cast<StepItem>(worst);
    auto comm = [&](std::initializer_list<CollectiveKind> kinds, const char* what) {
        const CollectiveSum a = sumOf(alt_r, kinds);
        const CollectiveSum b = sumOf(win_r, kinds);
        const std::string link = a.out > 0 ? w.scale_out : w.scale_up;
        if (b.time_s > 0)
            return lead + percent(a.time_s / b.time_s - 1.0) + " " + what + " time on " + link +
                   " (" + seconds(b.time_s) + " -> " + seconds(a.time_s) + ")";
        return lead + what + " on " + link + " (" + seconds(a.time_s) + " new)";
    };
    switch (item) {
    case StepItem::all_to_all:
        return out +
               comm({CollectiveKind::moe_dispatch, CollectiveKind::moe_combine}, "all-to-all");
    case StepItem::tp_comm:
        return out + comm({CollectiveKind::tp_collective}, "TP collective");
    case StepItem::cp_comm:
        return out + comm({CollectiveKind::cp_exchange}, "CP exchange");
    case StepItem::pp_comm:
        return out + comm({CollectiveKind::pp_send_recv}, "pipeline send");
    case StepItem::dp_sync:
        return out + comm({CollectiveKind::dp_sync, CollectiveKind::edp_sync}, "gradient sync");
    case StepItem::imbalance_wait:
        return out + lead + "imbalance wait (+" + seconds(worst_delta) +
               ": the hottest EP rank holds " + fmt("%.2f", alt_r.load.max_imbalance) +
               "x the mean load, vs " + fmt("%.2f", win_r.load.max_imbalance) + "x)";
    default:
        return out + lead + toString(item) + " (+" + seconds(worst_delta) + ")";
    }
}

/// The cluster's scale-up domains and the bandwidth gap between inside and across them.
std::string clusterLine(const ClusterSpec& cl) {
    const FabricWords w = fabricWords(cl);
    const int per_domain = cl.gpusPerScaleUpDomain();
    const int domains = std::max(1, cl.gpuCount() / std::max(1, per_domain));
    const double out_gbps = cl.nic.bandwidth_gbps * cl.nics_per_node /
                            std::max(1, cl.gpus_per_node) / std::max(1.0, cl.oversubscription);
    std::string line =
        "Cluster: " + std::to_string(cl.gpuCount()) + " GPUs = " + std::to_string(domains) + " " +
        w.domain + (domains == 1 ? "" : "s") + " x " + std::to_string(per_domain) + " GPUs; " +
        w.scale_up + " " + fmt("%.0f", cl.gpu.scale_up_gbps) + " GB/s per GPU inside a " + w.domain;
    if (domains > 1)
        line += ", " + w.scale_out + " " + fmt("%.0f", out_gbps) + " GB/s per GPU across " +
                w.domain + "s (" + fmt("%.1f", cl.gpu.scale_up_gbps / std::max(1e-9, out_gbps)) +
                "x less), so the chattiest collectives belong inside a " + w.domain;
    return line;
}

/// Why nothing fits: the rejections by reason, an example of each, and the closest miss.
void explainNoLayout(const Scenario& input, const SearchOptions& options, const MemoryMiss& closest,
                     const SearchResult& result, std::vector<std::string>& lines) {
    std::string reasons;
    for (int r = 0; r < kRejectReasonCount; ++r) {
        const RejectionCount& c = result.rejected[static_cast<size_t>(r)];
        if (c.count > 0)
            reasons += (reasons.empty() ? "" : ", ") +
                       std::string(toString(static_cast<RejectReason>(r))) + " " +
                       count(static_cast<double>(c.count));
    }
    lines.push_back("No valid layout: all " + count(static_cast<double>(result.candidates)) +
                    " candidates were rejected" + (reasons.empty() ? "" : " (" + reasons + ")"));
    for (int r = 0; r < kRejectReasonCount; ++r) {
        const RejectionCount& c = result.rejected[static_cast<size_t>(r)];
        if (c.count > 0 && !c.example.empty())
            lines.push_back(std::string(describe(static_cast<RejectReason>(r))) + ", e.g. " +
                            c.example);
    }
    if (closest.set) {
        const Scenario s =
            withLayout(input, closest.layout, closest.micro_batch, closest.recompute);
        lines.push_back("Closest to fitting: " + layoutSummary(s) + " needs " +
                        gb(closest.memory.total_bytes) + " per GPU on stage " +
                        std::to_string(closest.memory.stage) + ", " + gb(closest.over_bytes) +
                        " over " + usableHbmText(closest.memory, options.memory_reserve_share));
    }
}

/// The runner-up, then the best layouts that change EP, TP or PP, when they differ.
void explainAlternatives(const Scenario& input, const std::vector<Evaluated>& all,
                         const Scenario& winner, const Report& wr,
                         std::vector<std::string>& lines) {
    std::vector<size_t> shown;
    auto show = [&](size_t i, const std::string& label) {
        if (i >= all.size() || std::find(shown.begin(), shown.end(), i) != shown.end())
            return;
        shown.push_back(i);
        const Scenario alt = withLayout(input, all[i].layout, all[i].micro_batch, all[i].recompute);
        const Report ar = evaluate(alt);
        lines.push_back(label + " (#" + std::to_string(i + 1) +
                        "): " + differences(winner, alt, ar) + ": " + loss(alt, wr, ar));
    };
    shown.push_back(0);
    if (all.size() > 1)
        show(1, "Runner-up");
    auto first_with = [&](auto differs) {
        for (size_t i = 1; i < all.size(); ++i)
            if (differs(all[i].layout))
                return i;
        return all.size();
    };
    const LayoutSpec& wl = all.front().layout;
    if (input.model.isMoe())
        show(first_with([&](const LayoutSpec& l) { return l.ep != wl.ep; }),
             "Best with another EP");
    show(first_with([&](const LayoutSpec& l) { return l.tp != wl.tp; }), "Best with another TP");
    show(first_with([&](const LayoutSpec& l) { return l.pp != wl.pp; }), "Best with another PP");
}

/// A layout and its figures: "TP=1 ... recompute none - 1.23 s per step, 456,789 tokens/s, MFU
/// 41.0%, 60.1 GB of 80.0 GB per GPU".
std::string headline(const Scenario& s, const SearchFigures& f) {
    return layoutSummary(s) + " - " + seconds(f.step_time_s) + " per step, " +
           count(f.tokens_per_s) + " tokens/s, MFU " + fmt("%.1f%%", f.mfu * 100) + ", " +
           gb(f.memory_bytes) + " of " + gb(f.hbm_bytes) + " per GPU";
}

/// Why the winner wins: its figures, a near-tie the tie rule passed over, its layout, its
/// collectives and memory, and what the alternatives lose.
void explainWinner(const Scenario& input, const SearchOptions& options,
                   const std::vector<Evaluated>& all, std::vector<std::string>& lines) {
    const Scenario winner =
        withLayout(input, all.front().layout, all.front().micro_batch, all.front().recompute);
    const Report wr = evaluate(winner);
    const SearchFigures wf = figuresOf(wr);
    lines.push_back("Best (" + std::string(toString(options.objective)) +
                    "): " + headline(winner, wf));
    const auto fastest =
        std::min_element(all.begin(), all.end(), [](const Evaluated& a, const Evaluated& b) {
            return a.figures.step_time_s < b.figures.step_time_s;
        });
    if (options.objective == SearchObjective::step_time &&
        fastest->figures.step_time_s < wf.step_time_s) {
        const double gain_s = wf.step_time_s - fastest->figures.step_time_s;
        lines.push_back("Near-tie: #" + std::to_string(fastest - all.begin() + 1) + " (" +
                        layoutSummary(withLayout(input, fastest->layout, fastest->micro_batch,
                                                 fastest->recompute)) +
                        ") is " + seconds(gain_s) + " faster (" +
                        fmt("%.2f%%", 100.0 * gain_s / wf.step_time_s) + "), within the " +
                        fmt("%.1f%%", 100.0 * options.tie_share) +
                        " tie margin, but splits each model replica over TP x CP x PP = " +
                        std::to_string(modelParallelSize(fastest->layout)) + " GPUs instead of " +
                        std::to_string(modelParallelSize(all.front().layout)) +
                        ": at equal speed the search prefers less model parallelism");
    }
    for (const std::string& d : wr.layout_description)
        lines.push_back("Layout: " + d);
    explainCollectives(winner, wr, lines);
    explainMemory(winner, wf, options.memory_reserve_share, lines);
    explainAlternatives(input, all, winner, wr, lines);
}

/// Where the scenario's own layout stands: not fitting, the winner, or its rank.
void explainInputLayout(const SearchCandidate& in, const std::vector<Evaluated>& all,
                        int64_t fitting, std::vector<std::string>& lines) {
    if (!in.figures.fits)
        lines.push_back("The scenario's own layout does not fit: " + gb(in.figures.memory_bytes) +
                        " > " + gb(in.figures.hbm_bytes) + " per GPU");
    else if (in.rank == 1)
        lines.push_back("The scenario's own layout is the winner");
    else if (!all.empty())
        lines.push_back(
            "The scenario's own layout " +
            (in.rank > 0 ? "ranks #" + std::to_string(in.rank) + " of " + count(double(fitting))
                         : std::string("was excluded from the ranking (pins or search limits)")) +
            ": " + seconds(in.figures.step_time_s) + " per step, " +
            percent(in.figures.step_time_s / all.front().figures.step_time_s - 1.0) +
            " against the winner");
}

} // namespace

std::vector<std::string> explainSearch(const Scenario& input, const SearchOptions& options,
                                       const std::vector<Evaluated>& all, const MemoryMiss& closest,
                                       const SearchResult& result) {
    std::vector<std::string> lines;
    lines.push_back(clusterLine(input.cluster));
    if (all.empty())
        explainNoLayout(input, options, closest, result, lines);
    else
        explainWinner(input, options, all, lines);
    if (result.input)
        explainInputLayout(*result.input, all,
                           result.evaluated + result.rejectedCount(RejectReason::bound), lines);
    return lines;
}

} // namespace moe::search_detail

namespace moe {

std::vector<std::string> explainRanked(const SearchResult& result, const SearchOptions& options,
                                       size_t index) {
    using namespace search_detail;
    if (index >= result.ranked.size())
        return {};
    if (index == 0)
        return result.explanation;
    // The words of the explanation's alternatives ("Runner-up (#2): ..."), with the candidate's
    // own layout, collectives and memory, as the explanation gives them for the winner.
    const SearchCandidate& c = result.ranked[index];
    const Scenario& winner = result.ranked.front().scenario;
    const Report wr = evaluate(winner);
    const Report cr = evaluate(c.scenario);
    const SearchFigures cf = figuresOf(cr);
    std::vector<std::string> lines;
    lines.push_back("#" + std::to_string(c.rank) + ": " + headline(c.scenario, cf));
    lines.push_back("Against the winner (#1): " + differences(winner, c.scenario, cr) + ": " +
                    loss(c.scenario, wr, cr));
    if (cf.step_time_s < wr.step_time_s)
        lines.push_back("Ranked below the winner though " +
                        seconds(wr.step_time_s - cf.step_time_s) + " faster: within the " +
                        fmt("%.1f%%", 100.0 * options.tie_share) +
                        " tie margin the search prefers less model parallelism, and it splits "
                        "each model replica over TP x CP x PP = " +
                        std::to_string(modelParallelSize(c.scenario.layout)) + " GPUs instead of " +
                        std::to_string(modelParallelSize(winner.layout)));
    if (c.is_input)
        lines.push_back("This is the scenario's own layout");
    for (const std::string& d : cr.layout_description)
        lines.push_back("Layout: " + d);
    explainCollectives(c.scenario, cr, lines);
    explainMemory(c.scenario, cf, options.memory_reserve_share, lines, "this layout");
    return lines;
}

} // namespace moe
