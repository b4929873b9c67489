// Layout search: ranking (objective, then a total order on the layout for deterministic ties;
// the tie rule that prefers less model parallelism) and the Pareto front.

#include "search_detail.h"

#include <array>
#include <limits>
#include <numeric>
#include <queue>
#include <tuple>

namespace moe::search_detail {

namespace {

/// Total order on candidates for deterministic ties: degrees, then order, schedule,
/// micro-batch, recompute, end-stage layer counts.
using LayoutKey = std::tuple<int, int, int, int, int, int, int, std::array<int, kDimCount>, int,
                             int, int, int, int>;
LayoutKey keyOf(const LayoutSpec& l, int micro_batch, Recompute rc) {
    std::array<int, kDimCount> order{};
    for (int i = 0; i < kDimCount; ++i)
        order[static_cast<size_t>(i)] = static_cast<int>(l.order[static_cast<size_t>(i)]);
    return {l.tp,
            l.cp,
            l.pp,
            l.vpp,
            l.dp,
            l.ep,
            l.etp,
            order,
            static_cast<int>(l.schedule),
            micro_batch,
            static_cast<int>(rc),
            l.first_stage_layers,
            l.last_stage_layers};
}

LayoutKey keyOf(const Evaluated& e) {
    return keyOf(e.layout, e.micro_batch, e.recompute);
}

bool better(const Evaluated& a, const Evaluated& b, SearchObjective objective) {
    const SearchFigures& x = a.figures;
    const SearchFigures& y = b.figures;
    switch (objective) {
    case SearchObjective::step_time:
        break;
    case SearchObjective::memory_headroom:
        if (x.margin_bytes != y.margin_bytes)
            return x.margin_bytes > y.margin_bytes;
        break;
    case SearchObjective::cross_node_traffic:
        if (x.cross_node_bytes != y.cross_node_bytes)
            return x.cross_node_bytes < y.cross_node_bytes;
        break;
    }
    if (x.step_time_s != y.step_time_s)
        return x.step_time_s < y.step_time_s;
    return keyOf(a) < keyOf(b);
}

/// Indices (into `all`, which is sorted by step time) of the layouts no other layout beats or
/// matches on all three of step time, memory margin and cross-node bytes.
std::vector<size_t> paretoFront(const std::vector<Evaluated>& all) {
    std::vector<size_t> order(all.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t i, size_t j) {
        const SearchFigures& a = all[i].figures;
        const SearchFigures& b = all[j].figures;
        if (a.step_time_s != b.step_time_s)
            return a.step_time_s < b.step_time_s;
        if (a.margin_bytes != b.margin_bytes)
            return a.margin_bytes > b.margin_bytes;
        if (a.cross_node_bytes != b.cross_node_bytes)
            return a.cross_node_bytes < b.cross_node_bytes;
        return keyOf(all[i]) < keyOf(all[j]);
    });
    std::vector<size_t> front;
    for (const size_t i : order) {
        const SearchFigures& p = all[i].figures;
        const bool dominated = std::any_of(front.begin(), front.end(), [&](size_t j) {
            const SearchFigures& q = all[j].figures;
            return q.step_time_s <= p.step_time_s && q.margin_bytes >= p.margin_bytes &&
                   q.cross_node_bytes <= p.cross_node_bytes;
        });
        if (!dominated)
            front.push_back(i);
    }
    return front;
}

} // namespace

/// GPUs one model replica is split over (the dense layers' model parallelism).
int modelParallelSize(const LayoutSpec& l) {
    return l.tp * l.cp * l.pp;
}

void rankEvaluated(std::vector<Evaluated>& all, const SearchOptions& options) {
    std::sort(all.begin(), all.end(), [&](const Evaluated& a, const Evaluated& b) {
        return better(a, b, options.objective);
    });
    // Only the cluster tied with the fastest is reordered, so the ranking stays a total order.
    if (options.objective == SearchObjective::step_time && options.tie_share > 0 && !all.empty()) {
        const double limit_s = all.front().figures.step_time_s * (1.0 + options.tie_share);
        const auto tied_end = std::find_if(all.begin(), all.end(), [&](const Evaluated& e) {
            return e.figures.step_time_s > limit_s;
        });
        std::stable_sort(all.begin(), tied_end, [](const Evaluated& a, const Evaluated& b) {
            return modelParallelSize(a.layout) < modelParallelSize(b.layout);
        });
    }
}

ReportedStepBound::ReportedStepBound(const SearchOptions& options, double input_step_s,
                                     const std::array<bool, 3>& varied)
    : ranked_(static_cast<size_t>(std::max(2, options.top_n)))
    , tie_share_(std::max(0.0, options.tie_share))
    , input_step_s_(input_step_s)
    , varied_(varied) {}

void ReportedStepBound::add(const Evaluated& e) {
    const double step_s = e.figures.step_time_s;
    if (smallest_s_.size() < ranked_) {
        smallest_s_.push(step_s);
    } else if (step_s < smallest_s_.top()) {
        smallest_s_.pop();
        smallest_s_.push(step_s);
    }
    fastest_s_ = std::min(fastest_s_, step_s);
    const std::array<int, 3> degrees = {e.layout.ep, e.layout.tp, e.layout.pp};
    for (size_t d = 0; d < 3; ++d) {
        auto& best = fastest_by_degree_[d];
        const auto it = std::find_if(best.begin(), best.end(),
                                     [&](const auto& b) { return b.first == degrees[d]; });
        if (it == best.end())
            best.emplace_back(degrees[d], step_s);
        else
            it->second = std::min(it->second, step_s);
    }
}

double ReportedStepBound::bound_s() const {
    constexpr double kUnknown = std::numeric_limits<double>::infinity();
    if (smallest_s_.size() < ranked_)
        return kUnknown;
    double bound_s = std::max(smallest_s_.top(), fastest_s_ * (1.0 + tie_share_));
    bound_s = std::max(bound_s, input_step_s_);
    // "Best with another EP / TP / PP" (explainAlternatives) is the first layout in the ranking
    // whose degree differs from the winner's: inside the near-tie window (already bounded), or
    // else the fastest with a degree other than the fastest layout's, i.e. the second-fastest
    // degree's fastest step.
    for (size_t d = 0; d < 3; ++d) {
        if (!varied_[d])
            continue;
        const std::vector<std::pair<int, double>>& best = fastest_by_degree_[d];
        if (best.size() < 2)
            return kUnknown;
        double first_s = kUnknown, second_s = kUnknown;
        for (const auto& [degree, step_s] : best) {
            if (step_s < first_s) {
                second_s = first_s;
                first_s = step_s;
            } else if (step_s < second_s) {
                second_s = step_s;
            }
        }
        bound_s = std::max(bound_s, second_s);
    }
    return bound_s;
}

std::vector<size_t> paretoFrontByStepTime(const std::vector<Evaluated>& all) {
    std::vector<size_t> front = paretoFront(all);
    std::sort(front.begin(), front.end(), [&](size_t a, size_t b) {
        return better(all[a], all[b], SearchObjective::step_time);
    });
    return front;
}

} // namespace moe::search_detail
