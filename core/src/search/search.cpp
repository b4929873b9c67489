// Layout search.
//
// The space: TP, CP and PP are divisors of the GPU count (PP up to the layer count, CP only while
// each CP rank keeps min_tokens_per_cp_rank tokens), DP is what is left, EP divides the expert
// count, expert-TP is 1 or TP (Megatron-Core's two documented settings), the rank orders are
// tp-cp-ep-dp-pp and tp-cp-dp-ep-pp (plus the scenario's own) whenever they place groups
// differently, the schedules are 1F1B, interleaved (every virtual-stage count up to max_vpp
// that splits the layers evenly) and DualPipe (even PP), micro-batches are powers of two up to
// max_micro_batch, and recompute is none, selective or full. The scenario's own values and pinned
// values are always added to their dimension.
//
// Pruning, cheapest first, each candidate counted under the first reason that applies: pins
// (integer compares), validateScenario (once per structure, schedule and micro-batch: order and
// recompute do not change validity), memoryPerGpu on every stage (once per recompute: order does
// not change memory), then two policy rules: a heavier recompute is skipped while a lighter one
// fits (it only adds compute; test_search checks it is never faster), and TP x CP groups wider
// than a scale-up domain are searched only when nothing narrower fits (their collectives, several
// per layer, would ride the fabric; a planner never puts TP across nodes while an in-node layout
// fits). What is left goes through evaluate().
//
// Structures (degrees) are spread over worker threads and merged in enumeration order; ties are
// broken by a total order on the layout, so the result does not depend on the thread count.

#include "moe/search.h"

#include "moe/model_costs.h"
#include "moe/placement.h"
#include "moe/validate.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <numeric>
#include <thread>
#include <tuple>

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
        return "TP x CP wider than a scale-up domain while narrower layouts fit";
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

std::string layoutSummary(const Scenario& s) {
    const LayoutSpec& l = s.layout;
    std::string out = "TP=" + std::to_string(l.tp) + " CP=" + std::to_string(l.cp) +
                      " PP=" + std::to_string(l.pp);
    if (l.vpp > 1)
        out += "x" + std::to_string(l.vpp);
    out += " DP=" + std::to_string(l.dp);
    if (s.model.isMoe()) {
        out += " EP=" + std::to_string(l.ep) + " ETP=" + std::to_string(l.etp) +
               " eDP=" + std::to_string(l.ep * l.etp > 0 ? l.expertDp() : 0);
    }
    out += ", " + toString(l.order) + ", " + toString(l.schedule) + ", micro-batch " +
           std::to_string(s.training.micro_batch) + ", recompute " + toString(s.training.recompute);
    return out;
}

namespace {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// Pins

struct Pins {
    std::vector<int> tp, cp, pp, vpp, dp, ep, etp, micro_batch;
    std::vector<RankOrder> order;
    std::vector<PipelineSchedule> schedule;
    std::vector<Recompute> recompute;

    template <typename T> static bool allows(const std::vector<T>& values, const T& v) {
        return values.empty() || std::find(values.begin(), values.end(), v) != values.end();
    }
};

constexpr const char* kPinKeys =
    "layout.tp, layout.cp, layout.pp, layout.vpp, layout.dp, layout.ep, layout.etp, "
    "layout.order, layout.schedule, training.micro_batch, training.recompute";

Diagnostics parsePins(const std::vector<std::string>& pins, Pins& out) {
    Diagnostics diags;
    auto error = [&](const std::string& field, std::string message) {
        Diagnostic d;
        d.field = field;
        d.message = std::move(message);
        diags.push_back(std::move(d));
    };
    for (const std::string& pin : pins) {
        const size_t eq = pin.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == pin.size()) {
            error("pin", "pin '" + pin + "' is not key=value (e.g. layout.tp=1)");
            continue;
        }
        const std::string key = pin.substr(0, eq);
        const std::string value = pin.substr(eq + 1);
        const std::map<std::string, std::vector<int>*> ints = {
            {"layout.tp", &out.tp},   {"layout.cp", &out.cp},
            {"layout.pp", &out.pp},   {"layout.vpp", &out.vpp},
            {"layout.dp", &out.dp},   {"layout.ep", &out.ep},
            {"layout.etp", &out.etp}, {"training.micro_batch", &out.micro_batch}};
        if (const auto it = ints.find(key); it != ints.end()) {
            int v = 0;
            const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
            if (ec != std::errc() || ptr != value.data() + value.size() || v < 1)
                error(key, "pin " + key + " = '" + value + "' needs a whole number of at least 1");
            else
                it->second->push_back(v);
        } else if (key == "layout.order") {
            if (const auto o = parseRankOrder(value))
                out.order.push_back(*o);
            else
                error(key, "pin layout.order = '" + value +
                               "' must name tp, cp, ep, dp, pp once each, e.g. tp-cp-ep-dp-pp");
        } else if (key == "layout.schedule") {
            if (const auto s = parsePipelineSchedule(value))
                out.schedule.push_back(*s);
            else
                error(key, "pin layout.schedule = '" + value +
                               "' is not one of: gpipe, 1f1b, interleaved, dualpipe");
        } else if (key == "training.recompute") {
            if (const auto r = parseRecompute(value))
                out.recompute.push_back(*r);
            else
                error(key, "pin training.recompute = '" + value +
                               "' is not one of: none, selective, full");
        } else {
            error(key, "cannot pin '" + key + "'; pinnable keys: " + kPinKeys);
        }
    }
    return diags;
}

// ---------------------------------------------------------------------------------------------
// Enumeration

std::vector<int> divisors(int64_t n) {
    std::vector<int> out;
    for (int64_t d = 1; d * d <= n; ++d) {
        if (n % d != 0)
            continue;
        out.push_back(static_cast<int>(d));
        if (d * d != n)
            out.push_back(static_cast<int>(n / d));
    }
    std::sort(out.begin(), out.end());
    return out;
}

template <typename T> void addUnique(std::vector<T>& v, const T& x) {
    if (std::find(v.begin(), v.end(), x) == v.end())
        v.push_back(x);
}

/// Degrees that do not depend on the schedule, micro-batch, order or recompute.
struct Structure {
    int tp = 1, cp = 1, pp = 1, dp = 1, ep = 1, etp = 1;
};

struct ScheduleChoice {
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    int vpp = 1;
    bool operator==(const ScheduleChoice&) const = default;
};

/// The ranks an order gives, with dimensions of degree 1 left out: two orders with the same
/// signature place every group on the same GPUs.
std::vector<int> orderSignature(const RankOrder& order, const LayoutSpec& l) {
    std::vector<int> sig;
    // An expert grid that does not fold over the GPUs is invalid whatever the order: keep every
    // order as its own (rejected) candidate.
    if (l.ep * l.etp <= 0 || (l.tp * l.cp * l.dp) % (l.ep * l.etp) != 0) {
        for (Dim d : order)
            sig.push_back(static_cast<int>(d));
        return sig;
    }
    const int edp = l.ep * l.etp > 0 ? (l.tp * l.cp * l.dp) / (l.ep * l.etp) : 0;
    for (Dim d : order) {
        const int size = d == Dim::tp ? l.tp : d == Dim::cp ? l.cp : d == Dim::dp ? l.dp : l.pp;
        if (d != Dim::ep && size > 1)
            sig.push_back(static_cast<int>(d) * 1'000'000 + size);
    }
    sig.push_back(-1);
    for (Dim d : order) {
        const int size = d == Dim::tp ? l.etp : d == Dim::ep ? l.ep : d == Dim::dp ? edp : l.pp;
        if (d != Dim::cp && size > 1)
            sig.push_back(static_cast<int>(d) * 1'000'000 + size);
    }
    return sig;
}

/// Total order on candidates for deterministic ties: degrees, then order, schedule,
/// micro-batch, recompute.
using LayoutKey =
    std::tuple<int, int, int, int, int, int, int, std::array<int, kDimCount>, int, int, int>;
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
            static_cast<int>(rc)};
}

using Evaluated = SearchEvaluated;
using MemoryMiss = SearchMemoryMiss;
/// What one structure contributes.
using Outcome = SearchStructureOutcome;

LayoutKey keyOf(const Evaluated& e) {
    return keyOf(e.layout, e.micro_batch, e.recompute);
}

MemoryBreakdown worstMemory(const Scenario& s) {
    MemoryBreakdown worst;
    bool first = true;
    for (const StageLayers& stage : splitLayers(s.model, s.layout)) {
        const MemoryBreakdown m = memoryPerGpu(s, stage);
        if (first || m.margin_bytes < worst.margin_bytes)
            worst = m;
        first = false;
    }
    return worst;
}

bool startsWith(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

RejectReason classify(const Diagnostic& d) {
    const bool schedule = d.message.find("schedule") != std::string::npos;
    if (schedule || d.field == "layout.vpp" ||
        (d.field == "layout.pp" && d.message.find("exceeds model.layers") != std::string::npos))
        return RejectReason::pipeline;
    if (d.field == "training.global_batch")
        return RejectReason::batch;
    if (startsWith(d.field, "layout.") || startsWith(d.field, "model."))
        return RejectReason::divisibility;
    return RejectReason::other;
}

std::string gb(double bytes) {
    const double v = bytes / 1e9;
    char buf[32];
    std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f GB" : "%.1f GB", v);
    return buf;
}

/// HBM a layout may use: all of it minus the reserve share (SearchOptions::memory_reserve_share).
double usableHbm_bytes(const MemoryBreakdown& m, double reserve_share) {
    return m.hbm_bytes * (1.0 - std::clamp(reserve_share, 0.0, 0.5));
}

bool fitsWithReserve(const MemoryBreakdown& m, double reserve_share) {
    return m.total_bytes <= usableHbm_bytes(m, reserve_share);
}

/// "80.0 GB of HBM" or, with a reserve, "76.0 GB (80.0 GB of HBM less the 5% reserve)".
std::string usableHbmText(const MemoryBreakdown& m, double reserve_share) {
    if (reserve_share <= 0.0)
        return gb(m.hbm_bytes) + " of HBM";
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.0f%%", reserve_share * 100.0);
    return gb(usableHbm_bytes(m, reserve_share)) + " (" + gb(m.hbm_bytes) + " of HBM less the " +
           pct + " reserve)";
}

class Searcher {
public:
    Searcher(const Scenario& input, const SearchOptions& options, const Pins& pins)
        : in_(input)
        , opt_(options)
        , pins_(pins) {
        gpus_ = input.cluster.gpuCount();
        moe_ = input.model.isMoe();
        max_pp_ = std::max(1, input.model.layers);
        if (options.max_pp > 0)
            max_pp_ = std::min(max_pp_, options.max_pp);
        orders_ = {RankOrder{Dim::tp, Dim::cp, Dim::ep, Dim::dp, Dim::pp},
                   RankOrder{Dim::tp, Dim::cp, Dim::dp, Dim::ep, Dim::pp}};
        addUnique(orders_, input.layout.order);
        for (const RankOrder& o : pins.order)
            addUnique(orders_, o);
        buildStructures();
    }

    const std::vector<Structure>& structures() const { return structures_; }

    /// TP x CP ranks are innermost, so they share a scale-up domain when their product divides
    /// the domain's GPU count.
    bool insideDomain(const Structure& st) const {
        return in_.cluster.gpusPerScaleUpDomain() % (st.tp * st.cp) == 0;
    }

    /// Prunes and evaluates every candidate of one structure; with `only_count`, counts them as
    /// wide_tp (after pins) without looking further. `cache` belongs to the calling thread.
    Outcome run(const Structure& st, bool only_count, EvaluationCache& cache) const {
        Outcome out;
        Scenario sc = in_;
        LayoutSpec& lay = sc.layout;
        lay.tp = st.tp;
        lay.cp = st.cp;
        lay.pp = st.pp;
        lay.dp = st.dp;
        lay.ep = st.ep;
        lay.etp = st.etp;
        // Explicit expert placements name EP ranks of the scenario's own EP degree.
        if (st.ep != in_.layout.ep)
            lay.expert_placement.clear();

        // Orders that give distinct placements for these degrees.
        std::vector<RankOrder> orders;
        std::vector<std::vector<int>> signatures;
        for (const RankOrder& o : orders_) {
            std::vector<int> sig = orderSignature(o, lay);
            if (std::find(signatures.begin(), signatures.end(), sig) != signatures.end())
                continue;
            signatures.push_back(std::move(sig));
            orders.push_back(o);
        }
        const std::vector<ScheduleChoice> schedules = schedulesFor(st.pp);
        const std::vector<int> mbs = microBatchesFor(st.dp);
        constexpr Recompute kRecomputes[] = {Recompute::none, Recompute::selective,
                                             Recompute::full};
        const int64_t n_orders = static_cast<int64_t>(orders.size());
        const int64_t per_mb = n_orders * 3;
        out.candidates = static_cast<int64_t>(schedules.size() * mbs.size()) * per_mb;

        auto reject = [&](RejectReason r, int64_t n, auto example) {
            RejectionCount& c = out.rejected[static_cast<size_t>(r)];
            c.count += n;
            if (c.example.empty())
                c.example = example();
        };
        auto outside_pins = [&] {
            return "TP=" + std::to_string(st.tp) + " CP=" + std::to_string(st.cp) +
                   " PP=" + std::to_string(st.pp) + " DP=" + std::to_string(st.dp) +
                   " EP=" + std::to_string(st.ep) + " ETP=" + std::to_string(st.etp) +
                   " (or a schedule, micro-batch, order or recompute of it) is outside the pins";
        };

        if (!Pins::allows(pins_.tp, st.tp) || !Pins::allows(pins_.cp, st.cp) ||
            !Pins::allows(pins_.pp, st.pp) || !Pins::allows(pins_.dp, st.dp) ||
            !Pins::allows(pins_.ep, st.ep) || !Pins::allows(pins_.etp, st.etp)) {
            reject(RejectReason::pin, out.candidates, outside_pins);
            return out;
        }
        if (only_count) {
            reject(RejectReason::wide_tp, out.candidates, [&] {
                return "TP=" + std::to_string(st.tp) + " x CP=" + std::to_string(st.cp) +
                       " spans more than one " +
                       std::to_string(in_.cluster.gpusPerScaleUpDomain()) + "-GPU scale-up domain";
            });
            return out;
        }

        for (const ScheduleChoice& sch : schedules) {
            lay.schedule = sch.schedule;
            lay.vpp = sch.vpp;
            for (const int mb : mbs) {
                sc.training.micro_batch = mb;
                if (!Pins::allows(pins_.schedule, sch.schedule) ||
                    !Pins::allows(pins_.vpp, sch.vpp) || !Pins::allows(pins_.micro_batch, mb)) {
                    reject(RejectReason::pin, per_mb, outside_pins);
                    continue;
                }
                lay.order = orders.front();
                sc.training.recompute = Recompute::none;
                const Diagnostics diags = validateScenario(sc);
                const auto error =
                    std::find_if(diags.begin(), diags.end(), [](const Diagnostic& d) {
                        return d.severity == Diagnostic::Severity::error;
                    });
                if (error != diags.end()) {
                    reject(classify(*error), per_mb, [&] { return error->message; });
                    continue;
                }
                bool lighter_fits = false;
                for (const Recompute rc : kRecomputes) {
                    sc.training.recompute = rc;
                    std::vector<RankOrder> allowed;
                    for (const RankOrder& o : orders)
                        if (Pins::allows(pins_.order, o))
                            allowed.push_back(o);
                    const int64_t n_allowed = static_cast<int64_t>(allowed.size());
                    if (!Pins::allows(pins_.recompute, rc)) {
                        reject(RejectReason::pin, n_orders, outside_pins);
                        continue;
                    }
                    if (n_allowed < n_orders)
                        reject(RejectReason::pin, n_orders - n_allowed, outside_pins);
                    if (allowed.empty())
                        continue;
                    const MemoryBreakdown mem = worstMemory(sc);
                    if (!fitsWithReserve(mem, opt_.memory_reserve_share)) {
                        reject(RejectReason::memory, n_allowed, [&] {
                            return layoutSummary(sc) + " needs " + gb(mem.total_bytes) +
                                   " per GPU (stage " + std::to_string(mem.stage) + "), over " +
                                   usableHbmText(mem, opt_.memory_reserve_share);
                        });
                        const double over =
                            mem.total_bytes - usableHbm_bytes(mem, opt_.memory_reserve_share);
                        if (!out.closest.set || over < out.closest.over_bytes) {
                            out.closest = {over, lay, mb, rc, mem, true};
                            out.closest.layout.order = allowed.front();
                        }
                        continue;
                    }
                    const bool dominated = lighter_fits;
                    lighter_fits = true;
                    for (const RankOrder& o : allowed) {
                        lay.order = o;
                        const bool is_input = isInput(sc);
                        if (dominated && !is_input) {
                            reject(RejectReason::recompute, 1, [&] {
                                return layoutSummary(sc) +
                                       " is skipped: a lighter recompute fits and is faster";
                            });
                            continue;
                        }
                        Evaluated e;
                        e.layout = lay;
                        e.micro_batch = mb;
                        e.recompute = rc;
                        e.figures = figuresOf(evaluate(sc, 0, cache));
                        e.is_input = is_input;
                        out.evaluated.push_back(std::move(e));
                    }
                }
            }
        }
        return out;
    }

private:
    const Scenario& in_;
    const SearchOptions& opt_;
    const Pins& pins_;
    int gpus_ = 1;
    bool moe_ = false;
    int max_pp_ = 1;
    std::vector<RankOrder> orders_;
    std::vector<Structure> structures_;

    bool isInput(const Scenario& sc) const {
        return sc.layout == in_.layout && sc.training.micro_batch == in_.training.micro_batch &&
               sc.training.recompute == in_.training.recompute;
    }

    void buildStructures() {
        if (gpus_ < 1)
            return;
        const ModelSpec& m = in_.model;
        for (const int tp : divisors(gpus_)) {
            std::vector<int> cps;
            for (const int cp : divisors(gpus_ / tp))
                if (cp == 1 || cp == in_.layout.cp ||
                    (pins_.cp.size() && Pins::allows(pins_.cp, cp)) ||
                    int64_t{m.seq_len} >= int64_t{cp} * opt_.min_tokens_per_cp_rank)
                    cps.push_back(cp);
            for (const int cp : cps) {
                for (const int pp : divisors(gpus_ / (tp * cp))) {
                    if (pp > max_pp_ && !(pins_.pp.size() && Pins::allows(pins_.pp, pp)))
                        continue;
                    const int dp = gpus_ / (tp * cp * pp);
                    const int64_t dense_ranks = int64_t{tp} * cp * dp;
                    std::vector<int> eps = {1};
                    if (moe_) {
                        eps.clear();
                        for (const int ep : divisors(m.experts))
                            if (ep <= dense_ranks)
                                eps.push_back(ep);
                    }
                    // Expert-TP 1 (experts whole, the usual choice with EP) or equal to TP
                    // (Megatron-Core's default); the scenario's own and pins besides.
                    std::vector<int> etps = {1};
                    if (moe_) {
                        addUnique(etps, tp);
                        if (tp == in_.layout.tp)
                            addUnique(etps, in_.layout.etp);
                    }
                    for (const int etp : pins_.etp)
                        if (moe_ && etp <= dense_ranks)
                            addUnique(etps, etp);
                    std::sort(etps.begin(), etps.end());
                    for (const int ep : eps)
                        for (const int etp : etps)
                            structures_.push_back({tp, cp, pp, dp, ep, etp});
                }
            }
        }
    }

    std::vector<ScheduleChoice> schedulesFor(int pp) const {
        std::vector<ScheduleChoice> out;
        const ScheduleChoice own{in_.layout.schedule, in_.layout.vpp};
        if (pp <= 1) {
            // Without a pipeline every schedule runs the same; keep the scenario's own name.
            out.push_back(in_.layout.pp <= 1 && in_.layout.vpp == 1
                              ? own
                              : ScheduleChoice{PipelineSchedule::one_f_one_b, 1});
            return out;
        }
        out.push_back({PipelineSchedule::one_f_one_b, 1});
        const int layers = in_.model.layers;
        std::vector<int> vpps;
        for (int v = 2; v <= opt_.max_vpp; ++v)
            vpps.push_back(v);
        for (const int v : pins_.vpp)
            if (v > 1)
                addUnique(vpps, v);
        if (in_.layout.vpp > 1)
            addUnique(vpps, in_.layout.vpp);
        std::sort(vpps.begin(), vpps.end());
        for (const int v : vpps)
            if (int64_t{pp} * v <= layers && layers % (pp * v) == 0)
                out.push_back({PipelineSchedule::interleaved, v});
        if (pp % 2 == 0)
            out.push_back({PipelineSchedule::dualpipe, 1});
        for (const PipelineSchedule s : pins_.schedule)
            if (s == PipelineSchedule::gpipe)
                addUnique(out, ScheduleChoice{s, 1});
        addUnique(out, own);
        return out;
    }

    std::vector<int> microBatchesFor(int dp) const {
        std::vector<int> out;
        const int64_t batch = in_.training.global_batch;
        if (batch >= 1 && batch % dp == 0) {
            for (int64_t d = 1; d <= opt_.max_micro_batch && d <= batch / dp; d *= 2)
                if ((batch / dp) % d == 0)
                    out.push_back(static_cast<int>(d));
        }
        if (out.empty())
            out.push_back(1);
        addUnique(out, std::max(1, in_.training.micro_batch));
        for (const int mb : pins_.micro_batch)
            addUnique(out, mb);
        std::sort(out.begin(), out.end());
        return out;
    }
};

// ---------------------------------------------------------------------------------------------
// Ranking and the Pareto front

/// GPUs one model replica is split over (the dense layers' model parallelism).
int modelParallelSize(const LayoutSpec& l) {
    return l.tp * l.cp * l.pp;
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

// ---------------------------------------------------------------------------------------------
// Explanation

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

struct LinkWords {
    std::string up;     ///< "NVLink"
    std::string out;    ///< "InfiniBand"
    std::string domain; ///< "node" or "rack"
    bool rack = false;
};

LinkWords wordsOf(const ClusterSpec& c) {
    LinkWords w;
    w.up = c.gpu.scale_up_fabric.empty() ? "the scale-up links" : c.gpu.scale_up_fabric;
    w.out = displayName(c.fabric);
    w.rack = c.scale_up_domain == ScaleUpDomain::rack;
    w.domain = w.rack ? "rack" : "node";
    return w;
}

/// Where a group sits, e.g. "inside one node", "one GPU per node on 8 nodes",
/// "across 2 nodes (8 GPUs in each)".
std::string whereSpan(const GroupSpan& s, const LinkWords& w) {
    if (s.gpus <= 1)
        return "on one GPU";
    if (s.domains <= 1)
        return "inside one " + w.domain;
    const int units = w.rack ? s.racks : s.nodes;
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
std::string linksOf(double up_bytes, double out_bytes, const LinkWords& w) {
    if (out_bytes <= 0)
        return w.up + " only";
    if (up_bytes <= 0)
        return w.out + " only";
    return w.up + " + " + w.out + " (" + fmt("%.0f%%", 100 * out_bytes / (up_bytes + out_bytes)) +
           " of the bytes on " + w.out + ")";
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
    const LinkWords w = wordsOf(s.cluster);
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

Scenario withLayout(const Scenario& base, const LayoutSpec& l, int micro_batch, Recompute rc) {
    Scenario s = base;
    s.layout = l;
    s.training.micro_batch = micro_batch;
    s.training.recompute = rc;
    return s;
}

/// What memory forced: for each dimension the winner raised above its cheapest value, whether
/// the next smaller value fits.
void explainMemory(const Scenario& win, const SearchFigures& wf, double reserve_share,
                   std::vector<std::string>& lines) {
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
        lines.push_back("Memory forced nothing: the winner has " + headroom);
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
    const LinkWords w = wordsOf(alt.cluster);
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
    const LinkWords w = wordsOf(alt.cluster);
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
        const std::string link = a.out > 0 ? w.out : w.up;
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

} // namespace

Diagnostics checkPins(const std::vector<std::string>& pins) {
    Pins p;
    return parsePins(pins, p);
}

namespace {

/// Runs `indices` of `structures` on up to `threads` workers; stops early once `stop` is set.
void runStructures(const Searcher& searcher, const std::vector<size_t>& indices, bool only_count,
                   unsigned threads, std::vector<Outcome>& outcomes,
                   const std::function<bool()>& step) {
    std::atomic<size_t> next{0};
    std::atomic<bool> stop{false};
    auto work = [&] {
        // The figures need no per-link bytes; the graph and routing samples are shared by the
        // thread's candidates.
        EvaluationCache cache;
        cache.link_traffic = false;
        for (size_t i = next++; i < indices.size() && !stop; i = next++) {
            outcomes[indices[i]] =
                searcher.run(searcher.structures()[indices[i]], only_count, cache);
            if (!step())
                stop = true;
        }
    };
    const unsigned n =
        only_count ? 1u
                   : std::min<unsigned>(threads,
                                        static_cast<unsigned>(std::max<size_t>(1, indices.size())));
    if (n <= 1) {
        work();
        return;
    }
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < n; ++t)
        pool.emplace_back(work);
    for (std::thread& t : pool)
        t.join();
}

} // namespace

SearchPart searchPart(const Scenario& input, const SearchOptions& options, SearchShard shard) {
    const auto t0 = Clock::now();
    const std::clock_t cpu0 = std::clock();
    SearchPart part;
    part.shard = shard;
    Pins pins;
    part.diagnostics = parsePins(options.pins, pins);
    // The search replaces the layout, micro-batch and recompute, so errors there are what it
    // fixes; anything else (cluster, model, a non-positive batch) it cannot.
    for (Diagnostic& d : validateScenario(input)) {
        if (d.severity != Diagnostic::Severity::error || startsWith(d.field, "layout.") ||
            d.field == "training.micro_batch" ||
            (d.field == "training.global_batch" && input.training.global_batch >= 1))
            continue;
        part.diagnostics.push_back(std::move(d));
    }
    if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) {
        Diagnostic d;
        d.message = "shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count) +
                    ": needs 0 <= index < count";
        part.diagnostics.push_back(d);
    }
    if (hasErrors(part.diagnostics))
        return part;

    const Searcher searcher(input, options, pins);
    const std::vector<Structure>& structures = searcher.structures();
    part.structures = static_cast<int64_t>(structures.size());
    // Phase 1: TP x CP inside a scale-up domain. Phase 2, only when nothing there fits: the
    // rest, whose TP or CP collectives (several per layer) would cross the fabric.
    std::vector<size_t> inside, wide;
    for (size_t i = static_cast<size_t>(shard.index); i < structures.size();
         i += static_cast<size_t>(shard.count))
        (searcher.insideDomain(structures[i]) ? inside : wide).push_back(i);
    unsigned threads = options.threads > 0 ? static_cast<unsigned>(options.threads)
                                           : std::max(1u, std::thread::hardware_concurrency());
    threads = std::max<unsigned>(
        1, std::min<unsigned>(
               threads, static_cast<unsigned>(std::max<size_t>(1, inside.size() + wide.size()))));
    part.threads = static_cast<int>(threads);
    const int64_t total = static_cast<int64_t>(inside.size() + wide.size());
    std::atomic<int64_t> done{0};
    std::atomic<bool> go_on{true};
    const std::function<bool()> step = [&] {
        const int64_t now = ++done;
        if (options.progress && !options.progress(std::min(now, total), total))
            go_on = false;
        return go_on.load();
    };
    std::vector<Outcome> searched(structures.size()), counted(structures.size());
    runStructures(searcher, inside, false, threads, searched, step);
    part.found_inside = std::any_of(inside.begin(), inside.end(),
                                    [&](size_t i) { return !searched[i].evaluated.empty(); });
    // Wide structures are counted always (cheap), and searched when this shard found nothing
    // narrower: the merge knows whether any shard did.
    const std::function<bool()> quiet = [&] { return go_on.load(); };
    if (go_on)
        runStructures(searcher, wide, true, 1, counted, part.found_inside ? step : quiet);
    if (go_on && !part.found_inside)
        runStructures(searcher, wide, false, threads, searched, step);
    if (!go_on) {
        part.interrupted = true;
        return part;
    }
    for (size_t i = static_cast<size_t>(shard.index); i < structures.size();
         i += static_cast<size_t>(shard.count)) {
        const bool in = searcher.insideDomain(structures[i]);
        if (in || !part.found_inside) {
            Outcome o = std::move(searched[i]);
            o.structure = static_cast<int64_t>(i);
            o.inside_domain = in;
            part.outcomes.push_back(std::move(o));
        }
        if (!in) {
            Outcome o = std::move(counted[i]);
            o.structure = static_cast<int64_t>(i);
            o.inside_domain = false;
            o.counted_only = true;
            part.outcomes.push_back(std::move(o));
        }
    }
    part.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
    part.cpu_s = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    return part;
}

namespace {

/// The outcome that counts for each structure, in enumeration order; an error names what the
/// parts miss or repeat.
std::vector<const Outcome*> outcomesInOrder(const std::vector<SearchPart>& parts,
                                            Diagnostics& problems) {
    const int64_t n = parts.empty() ? 0 : parts.front().structures;
    std::vector<const Outcome*> searched(static_cast<size_t>(n)), counted(static_cast<size_t>(n));
    std::vector<bool> inside(static_cast<size_t>(n), false);
    bool found_inside = false;
    auto problem = [&](const std::string& message) {
        Diagnostic d;
        d.message = message;
        problems.push_back(d);
    };
    for (const SearchPart& p : parts) {
        found_inside = found_inside || p.found_inside;
        if (p.structures != n) {
            problem("the parts come from different searches (" + std::to_string(n) + " and " +
                    std::to_string(p.structures) + " structures)");
            return {};
        }
        for (const Outcome& o : p.outcomes) {
            if (o.structure < 0 || o.structure >= n) {
                problem("structure #" + std::to_string(o.structure) + " is out of range");
                return {};
            }
            const auto i = static_cast<size_t>(o.structure);
            const Outcome*& slot = o.counted_only ? counted[i] : searched[i];
            if (slot != nullptr) {
                problem("structure #" + std::to_string(o.structure) +
                        " is in two parts: merge each shard once");
                return {};
            }
            slot = &o;
            inside[i] = o.inside_domain;
        }
    }
    std::vector<const Outcome*> out;
    int64_t missing = 0, first_missing = -1;
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
        const Outcome* o = inside[i] || !found_inside ? searched[i] : counted[i];
        if (o == nullptr && ++missing == 1)
            first_missing = static_cast<int64_t>(i);
        out.push_back(o);
    }
    if (missing > 0)
        problem("the parts miss " + std::to_string(missing) + " of " + std::to_string(n) +
                " structures (the first is #" + std::to_string(first_missing) +
                "): merge every shard of the same search");
    return missing > 0 ? std::vector<const Outcome*>{} : out;
}

} // namespace

SearchResult searchLayouts(const Scenario& input, const SearchOptions& options) {
    return mergeSearchParts(input, options, {searchPart(input, options)});
}

SearchResult mergeSearchParts(const Scenario& input, const SearchOptions& options,
                              const std::vector<SearchPart>& parts) {
    const auto t0 = Clock::now();
    const std::clock_t cpu0 = std::clock();
    SearchResult result;
    for (const SearchPart& p : parts) {
        if (hasErrors(p.diagnostics)) {
            result.diagnostics = p.diagnostics;
            return result;
        }
        result.interrupted = result.interrupted || p.interrupted;
    }
    if (result.interrupted)
        return result;
    const std::vector<const Outcome*> outcomes = outcomesInOrder(parts, result.diagnostics);
    if (hasErrors(result.diagnostics))
        return result;

    // Merge in enumeration order.
    std::vector<Evaluated> all;
    MemoryMiss closest;
    for (const Outcome* o : outcomes) {
        result.candidates += o->candidates;
        for (int r = 0; r < kRejectReasonCount; ++r) {
            RejectionCount& into = result.rejected[static_cast<size_t>(r)];
            into.count += o->rejected[static_cast<size_t>(r)].count;
            if (into.example.empty())
                into.example = o->rejected[static_cast<size_t>(r)].example;
        }
        if (o->closest.set && (!closest.set || o->closest.over_bytes < closest.over_bytes))
            closest = o->closest;
        for (const Evaluated& e : o->evaluated)
            all.push_back(e);
    }
    result.evaluated = static_cast<int64_t>(all.size());
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

    auto candidate = [&](const Evaluated& e, int rank) {
        SearchCandidate c;
        c.scenario = withLayout(input, e.layout, e.micro_batch, e.recompute);
        c.figures = e.figures;
        c.rank = rank;
        c.is_input = e.is_input;
        return c;
    };
    const size_t top = static_cast<size_t>(std::max(0, options.top_n));
    for (size_t i = 0; i < all.size() && i < top; ++i)
        result.ranked.push_back(candidate(all[i], static_cast<int>(i) + 1));
    {
        std::vector<size_t> front = paretoFront(all);
        result.pareto_total = static_cast<int64_t>(front.size());
        std::sort(front.begin(), front.end(), [&](size_t a, size_t b) {
            return better(all[a], all[b], SearchObjective::step_time);
        });
        for (size_t i = 0; i < front.size() && i < static_cast<size_t>(options.max_pareto); ++i)
            result.pareto.push_back(candidate(all[front[i]], static_cast<int>(front[i]) + 1));
    }

    // The scenario's own layout, ranked or not.
    if (!hasErrors(validateScenario(input))) {
        SearchCandidate c;
        c.scenario = input;
        c.figures = figuresOf(evaluate(input));
        c.is_input = true;
        for (size_t i = 0; i < all.size(); ++i)
            if (all[i].is_input)
                c.rank = static_cast<int>(i) + 1;
        result.input = std::move(c);
    }

    // Explanation.
    std::vector<std::string>& lines = result.explanation;
    const ClusterSpec& cl = input.cluster;
    const LinkWords w = wordsOf(cl);
    {
        const int per_domain = cl.gpusPerScaleUpDomain();
        const int domains = std::max(1, cl.gpuCount() / std::max(1, per_domain));
        const double out_gbps = cl.nic.bandwidth_gbps * cl.nics_per_node /
                                std::max(1, cl.gpus_per_node) / std::max(1.0, cl.oversubscription);
        std::string line = "Cluster: " + std::to_string(cl.gpuCount()) +
                           " GPUs = " + std::to_string(domains) + " " + w.domain +
                           (domains == 1 ? "" : "s") + " x " + std::to_string(per_domain) +
                           " GPUs; " + w.up + " " + fmt("%.0f", cl.gpu.scale_up_gbps) +
                           " GB/s per GPU inside a " + w.domain;
        if (domains > 1)
            line += ", " + w.out + " " + fmt("%.0f", out_gbps) + " GB/s per GPU across " +
                    w.domain + "s (" +
                    fmt("%.1f", cl.gpu.scale_up_gbps / std::max(1e-9, out_gbps)) +
                    "x less), so the chattiest collectives belong inside a " + w.domain;
        lines.push_back(line);
    }
    if (all.empty()) {
        std::string reasons;
        for (int r = 0; r < kRejectReasonCount; ++r) {
            const RejectionCount& c = result.rejected[static_cast<size_t>(r)];
            if (c.count > 0)
                reasons += (reasons.empty() ? "" : ", ") +
                           std::string(toString(static_cast<RejectReason>(r))) + " " +
                           count(static_cast<double>(c.count));
        }
        lines.push_back("No valid layout: all " + count(static_cast<double>(result.candidates)) +
                        " candidates were rejected" +
                        (reasons.empty() ? "" : " (" + reasons + ")"));
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
    } else {
        const Scenario winner =
            withLayout(input, all.front().layout, all.front().micro_batch, all.front().recompute);
        const Report wr = evaluate(winner);
        const SearchFigures wf = figuresOf(wr);
        lines.push_back("Best (" + std::string(toString(options.objective)) + "): " +
                        layoutSummary(winner) + " - " + seconds(wf.step_time_s) + " per step, " +
                        count(wf.tokens_per_s) + " tokens/s, MFU " + fmt("%.1f%%", wf.mfu * 100) +
                        ", " + gb(wf.memory_bytes) + " of " + gb(wf.hbm_bytes) + " per GPU");
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
                            std::to_string(modelParallelSize(fastest->layout)) +
                            " GPUs instead of " +
                            std::to_string(modelParallelSize(all.front().layout)) +
                            ": at equal speed the search prefers less model parallelism");
        }
        for (const std::string& d : wr.layout_description)
            lines.push_back("Layout: " + d);
        explainCollectives(winner, wr, lines);
        explainMemory(winner, wf, options.memory_reserve_share, lines);

        // Runner-up, then the best layouts that change EP, TP or PP, when they differ.
        std::vector<size_t> shown;
        auto show = [&](size_t i, const std::string& label) {
            if (i >= all.size() || std::find(shown.begin(), shown.end(), i) != shown.end())
                return;
            shown.push_back(i);
            const Scenario alt =
                withLayout(input, all[i].layout, all[i].micro_batch, all[i].recompute);
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
        show(first_with([&](const LayoutSpec& l) { return l.tp != wl.tp; }),
             "Best with another TP");
        show(first_with([&](const LayoutSpec& l) { return l.pp != wl.pp; }),
             "Best with another PP");
    }
    if (result.input) {
        const SearchCandidate& in = *result.input;
        if (!in.figures.fits)
            lines.push_back(
                "The scenario's own layout does not fit: " + gb(in.figures.memory_bytes) + " > " +
                gb(in.figures.hbm_bytes) + " per GPU");
        else if (in.rank == 1)
            lines.push_back("The scenario's own layout is the winner");
        else if (!all.empty())
            lines.push_back(
                "The scenario's own layout " +
                (in.rank > 0
                     ? "ranks #" + std::to_string(in.rank) + " of " + count(double(all.size()))
                     : std::string("was excluded from the ranking (pins or search limits)")) +
                ": " + seconds(in.figures.step_time_s) + " per step, " +
                percent(in.figures.step_time_s / all.front().figures.step_time_s - 1.0) +
                " against the winner");
    }

    // Parts run side by side on their machines: the slowest sets the elapsed time.
    result.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
    result.cpu_s = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    double slowest_s = 0;
    for (const SearchPart& p : parts) {
        slowest_s = std::max(slowest_s, p.elapsed_s);
        result.cpu_s += p.cpu_s;
        result.threads = std::max(result.threads, p.threads);
    }
    result.elapsed_s += slowest_s;
    if (result.elapsed_s > 0) {
        result.evaluated_per_s = static_cast<double>(result.evaluated) / result.elapsed_s;
        result.candidates_per_s = static_cast<double>(result.candidates) / result.elapsed_s;
    }
    return result;
}

} // namespace moe
