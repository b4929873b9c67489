// Layout search: candidate generation and pruning.
//
// The space: TP, CP and PP are divisors of the GPU count (PP up to the layer count, CP only while
// each CP rank keeps min_tokens_per_cp_rank tokens), DP is what is left, EP divides the expert
// count, expert-TP divides TP, the rank orders are
// tp-cp-ep-dp-pp and tp-cp-dp-ep-pp (plus the scenario's own) whenever they place groups
// differently, the schedules are 1F1B, interleaved (every virtual-stage count the layers allow:
// an even split, or else the balanced end stages of balancedEndStageLayers) and DualPipe (even
// PP), micro-batches are every divisor of the per-replica batch (up to max_micro_batch when
// set), and recompute is none, selective or full. The scenario's own values and pinned
// values are always added to their dimension.
//
// Pruning, cheapest first, each candidate counted under the first reason that applies: pins
// (integer compares), validateScenario (once per structure, schedule and micro-batch: order and
// recompute do not change validity), memoryPerGpu on every stage (once per recompute: order does
// not change memory), then two policy rules: a heavier recompute is skipped while a lighter one
// fits (it only adds compute; test_search checks it is never faster), and TP groups wider
// than a scale-up domain are searched only when nothing narrower fits (their collectives, several
// per layer, would ride the fabric; a planner never puts TP across nodes while an in-node layout
// fits). What is left gets its compute floor (stepComputeFloor_s, from layer costs built once per
// micro-batch and recompute) and, with SearchOptions::prune, goes through evaluate() only when
// that floor is within the slowest step the result reports (search_part.cpp).

#include "search_detail.h"

#include "moe/placement.h"
#include "moe/validate.h"

#include <charconv>
#include <cstdio>
#include <map>
#include <tuple>

namespace moe {

namespace search_detail {

namespace {

constexpr const char* kPinKeys =
    "layout.tp, layout.cp, layout.pp, layout.vpp, layout.dp, layout.ep, layout.etp, "
    "layout.order, layout.schedule, training.micro_batch, training.recompute";

} // namespace

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

namespace {

template <typename T> void addUnique(std::vector<T>& v, const T& x) {
    if (std::find(v.begin(), v.end(), x) == v.end())
        v.push_back(x);
}

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

} // namespace

MemoryBreakdown worstMemory(const Scenario& s) {
    return worstMemory(s, splitLayers(s.model, s.layout, /*with_indices=*/false),
                       countParams(s.model));
}

MemoryBreakdown worstMemory(const Scenario& s, const std::vector<StageLayers>& stages,
                            const ParamCounts& params) {
    MemoryBreakdown worst;
    bool first = true;
    for (const StageLayers& stage : stages) {
        const MemoryBreakdown m = memoryPerGpu(s, stage, params);
        if (first || m.margin_bytes < worst.margin_bytes)
            worst = m;
        first = false;
    }
    return worst;
}

bool startsWith(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

namespace {

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

} // namespace

std::string gb(double bytes) {
    const double v = bytes / 1e9;
    char buf[32];
    std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f GB" : "%.1f GB", v);
    return buf;
}

namespace {

/// HBM a layout may use: all of it minus the reserve share (SearchOptions::memory_reserve_share).
double usableHbm_bytes(const MemoryBreakdown& m, double reserve_share) {
    return m.hbm_bytes * (1.0 - std::clamp(reserve_share, 0.0, 0.5));
}

} // namespace

bool fitsWithReserve(const MemoryBreakdown& m, double reserve_share) {
    return m.total_bytes <= usableHbm_bytes(m, reserve_share);
}

double inputStep_s(const Scenario& input, const SearchOptions& options) {
    if (hasErrors(validateScenario(input)) ||
        !fitsWithReserve(worstMemory(input), options.memory_reserve_share))
        return -1;
    return evaluate(input).step_time_s;
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

// ---- the searcher ----------------------------------------------------------------------------

Searcher::Searcher(const Scenario& input, const SearchOptions& options, const Pins& pins)
    : in_(input)
    , opt_(options)
    , pins_(pins) {
    gpus_ = input.cluster.gpuCount();
    moe_ = input.model.isMoe();
    params_ = countParams(input.model);
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

/// One structure's candidates while Searcher::run prunes and evaluates them: the scenario being
/// varied, the orders that place groups differently, and the outcome so far.
struct Searcher::StructureRun {
    const Structure& st;
    EvaluationCache& cache;
    Scenario sc;
    std::vector<RankOrder> orders;
    int64_t n_orders = 0;
    int64_t per_mb = 0; ///< candidates per schedule and micro-batch
    Outcome out;
    /// The compute costs of the micro-batch and recompute being searched, for the compute
    /// floors: they do not depend on the order or schedule, except whether passes are paired
    /// (the communication kernels' SMs).
    struct ComputeCosts {
        bool paired = false;
        LayerPassCosts layer;
        MoeCosts moe;
        double micro_batches = 1;
    };
    std::vector<ComputeCosts> compute; ///< cleared for each micro-batch and recompute
    const std::vector<StageLayers>* stages = nullptr; ///< the schedule's split (no indices)

    /// Counts `n` candidates under `r`; `example()` words the first of them.
    template <typename Example> void reject(RejectReason r, int64_t n, Example example) {
        RejectionCount& c = out.rejected[static_cast<size_t>(r)];
        c.count += n;
        if (c.example.empty())
            c.example = example();
    }
    std::string outsidePins() const {
        return "TP=" + std::to_string(st.tp) + " CP=" + std::to_string(st.cp) +
               " PP=" + std::to_string(st.pp) + " DP=" + std::to_string(st.dp) +
               " EP=" + std::to_string(st.ep) + " ETP=" + std::to_string(st.etp) +
               " (or a schedule, micro-batch, order or recompute of it) is outside the pins";
    }
    void rejectOutsidePins(int64_t n) {
        reject(RejectReason::pin, n, [&] { return outsidePins(); });
    }
};

Outcome Searcher::run(const Structure& st, bool only_count, EvaluationCache& cache) const {
    StructureRun run{st, cache, in_, {}, 0, 0, {}, {}, nullptr};
    LayoutSpec& lay = run.sc.layout;
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
    std::vector<std::vector<int>> signatures;
    for (const RankOrder& o : orders_) {
        std::vector<int> sig = orderSignature(o, lay);
        if (std::find(signatures.begin(), signatures.end(), sig) != signatures.end())
            continue;
        signatures.push_back(std::move(sig));
        run.orders.push_back(o);
    }
    const std::vector<ScheduleChoice> schedules = schedulesFor(st.pp);
    // The stage split follows the schedule only: made once, read for every micro-batch.
    std::vector<std::vector<StageLayers>> splits(schedules.size());
    const std::vector<int> mbs = microBatchesFor(st.dp);
    run.n_orders = static_cast<int64_t>(run.orders.size());
    run.per_mb = run.n_orders * 3; // recompute none, selective, full
    run.out.candidates = static_cast<int64_t>(schedules.size() * mbs.size()) * run.per_mb;

    if (!pinsAllow(st)) {
        run.rejectOutsidePins(run.out.candidates);
        return std::move(run.out);
    }
    if (only_count) {
        run.reject(RejectReason::wide_tp, run.out.candidates, [&] {
            return "TP=" + std::to_string(st.tp) + " spans more than one " +
                   std::to_string(in_.cluster.gpusPerScaleUpDomain()) + "-GPU scale-up domain";
        });
        return std::move(run.out);
    }

    // Micro-batch outermost: the routing sample follows the micro-batch, not the schedule, so
    // each is drawn once per structure (the evaluation cache keeps only the latest few).
    for (const int mb : mbs) {
        run.sc.training.micro_batch = mb;
        for (size_t k = 0; k < schedules.size(); ++k) {
            const ScheduleChoice& sch = schedules[k];
            lay.schedule = sch.schedule;
            lay.vpp = sch.vpp;
            lay.first_stage_layers = sch.first_stage_layers;
            lay.last_stage_layers = sch.last_stage_layers;
            if (!Pins::allows(pins_.schedule, sch.schedule) || !Pins::allows(pins_.vpp, sch.vpp) ||
                !Pins::allows(pins_.micro_batch, mb)) {
                run.rejectOutsidePins(run.per_mb);
                continue;
            }
            if (splits[k].empty())
                splits[k] = splitLayers(in_.model, lay, /*with_indices=*/false);
            run.stages = &splits[k];
            searchMicroBatch(run, mb);
        }
    }
    return std::move(run.out);
}

/// The candidates of one schedule and micro-batch: validity (checked once: order and recompute
/// do not change it), then each recompute, lightest first.
void Searcher::searchMicroBatch(StructureRun& run, int mb) const {
    constexpr Recompute kRecomputes[] = {Recompute::none, Recompute::selective, Recompute::full};
    run.sc.layout.order = run.orders.front();
    run.sc.training.recompute = Recompute::none;
    const Diagnostics diags = validateScenario(run.sc);
    const auto error = std::find_if(diags.begin(), diags.end(), [](const Diagnostic& d) {
        return d.severity == Diagnostic::Severity::error;
    });
    if (error != diags.end()) {
        run.reject(classify(*error), run.per_mb, [&] { return error->message; });
        return;
    }
    bool lighter_fits = false;
    for (const Recompute rc : kRecomputes)
        if (searchRecompute(run, rc, mb, lighter_fits))
            lighter_fits = true;
}

/// The orders of one recompute: pins, memory (checked once: order does not change it), the
/// lighter-recompute rule when `dominated`, then evaluate(). True when the recompute fits.
bool Searcher::searchRecompute(StructureRun& run, Recompute rc, int mb, bool dominated) const {
    Scenario& sc = run.sc;
    LayoutSpec& lay = sc.layout;
    sc.training.recompute = rc;
    std::vector<RankOrder> allowed;
    for (const RankOrder& o : run.orders)
        if (Pins::allows(pins_.order, o))
            allowed.push_back(o);
    const int64_t n_allowed = static_cast<int64_t>(allowed.size());
    if (!Pins::allows(pins_.recompute, rc)) {
        run.rejectOutsidePins(run.n_orders);
        return false;
    }
    if (n_allowed < run.n_orders)
        run.rejectOutsidePins(run.n_orders - n_allowed);
    if (allowed.empty())
        return false;
    run.compute.clear();
    const MemoryBreakdown mem = worstMemory(sc, *run.stages, params_);
    if (!fitsWithReserve(mem, opt_.memory_reserve_share)) {
        run.reject(RejectReason::memory, n_allowed, [&] {
            return layoutSummary(sc) + " needs " + gb(mem.total_bytes) + " per GPU (stage " +
                   std::to_string(mem.stage) + "), over " +
                   usableHbmText(mem, opt_.memory_reserve_share);
        });
        const double over = mem.total_bytes - usableHbm_bytes(mem, opt_.memory_reserve_share);
        MemoryMiss& closest = run.out.closest;
        if (!closest.set || over < closest.over_bytes) {
            closest = {over, lay, mb, rc, mem, true};
            closest.layout.order = allowed.front();
        }
        return false;
    }
    double floor_s = -1; // the same for every order
    for (const RankOrder& o : allowed) {
        lay.order = o;
        const bool is_input = isInput(sc);
        if (dominated && !is_input) {
            run.reject(RejectReason::recompute, 1, [&] {
                return layoutSummary(sc) + " is skipped: a lighter recompute fits and is faster";
            });
            continue;
        }
        if (floor_s < 0)
            floor_s = computeFloor_s(run);
        Evaluated e;
        e.layout = lay;
        e.micro_batch = mb;
        e.recompute = rc;
        e.is_input = is_input;
        e.floor_s = floor_s;
        run.out.evaluated.push_back(std::move(e));
    }
    return true;
}

/// stepComputeFloor_s of the candidate in run.sc, from the stage split of its schedule and the
/// layer costs of its micro-batch and recompute (built once for both kinds of passes).
double Searcher::computeFloor_s(StructureRun& run) const {
    const Scenario& sc = run.sc;
    const bool paired = pairsPasses(sc);
    auto costs =
        std::find_if(run.compute.begin(), run.compute.end(),
                     [&](const StructureRun::ComputeCosts& c) { return c.paired == paired; });
    if (costs == run.compute.end()) {
        const StepCostModel model = buildComputeCostModel(sc);
        run.compute.push_back({paired, model.layer, model.moe, model.micro_batches});
        costs = run.compute.end() - 1;
    }
    std::vector<double> stage_compute_s;
    for (const StageLayers& stage : *run.stages) {
        stage_compute_s.push_back(computeItems_s(stageMeanCompute(
            costs->layer, costs->moe, stage, sc.model.isMoe() ? stage.moe_layers : 0)));
    }
    return stepComputeFloor_s(stage_compute_s, costs->micro_batches,
                              sc.layout.schedule == PipelineSchedule::dualpipe);
}

void Searcher::evaluateCandidate(Evaluated& e, Scenario& scratch, EvaluationCache& cache) const {
    scratch.layout = e.layout;
    scratch.training.micro_batch = e.micro_batch;
    scratch.training.recompute = e.recompute;
    e.figures = figuresOf(evaluate(scratch, 0, cache));
}

std::array<bool, 3> Searcher::variedDimensions(bool inside_only) const {
    std::array<bool, 3> varied{};
    const Structure* first = nullptr;
    for (const Structure& st : structures_) {
        if ((inside_only && !insideDomain(st)) || !pinsAllow(st))
            continue;
        if (!first)
            first = &st;
        varied[0] = varied[0] || (moe_ && st.ep != first->ep);
        varied[1] = varied[1] || st.tp != first->tp;
        varied[2] = varied[2] || st.pp != first->pp;
    }
    return varied;
}

bool Searcher::pinsAllow(const Structure& st) const {
    return Pins::allows(pins_.tp, st.tp) && Pins::allows(pins_.cp, st.cp) &&
           Pins::allows(pins_.pp, st.pp) && Pins::allows(pins_.dp, st.dp) &&
           Pins::allows(pins_.ep, st.ep) && Pins::allows(pins_.etp, st.etp);
}

bool Searcher::isInput(const Scenario& sc) const {
    return sc.layout == in_.layout && sc.training.micro_batch == in_.training.micro_batch &&
           sc.training.recompute == in_.training.recompute;
}

void Searcher::buildStructures() {
    if (gpus_ < 1)
        return;
    const ModelSpec& m = in_.model;
    for (const int tp : divisors(gpus_)) {
        std::vector<int> cps;
        for (const int cp : divisors(gpus_ / tp))
            if (cp == 1 || cp == in_.layout.cp || (pins_.cp.size() && Pins::allows(pins_.cp, cp)) ||
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
                // Expert-TP: every divisor of TP (1 keeps experts whole, TP is Megatron-Core's
                // default, the ones between split them over part of the TP group); the
                // scenario's own and pins besides.
                std::vector<int> etps = {1};
                if (moe_) {
                    etps = divisors(tp);
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
    // Neighbours share routing samples (the threads keep their recent ones). A sample's
    // multinomial counts, most of its cost, read only the token slots of an EP group,
    // ep * etp / (tp * cp) * micro-batch * seq * top_k, and a sample reads EP besides; neither
    // reads the pipeline. So: by ep * etp / (tp * cp) (equal ratios draw the same counts for the
    // same micro-batch, whatever EP), then by EP, then the degrees, pipeline depth innermost.
    std::stable_sort(
        structures_.begin(), structures_.end(), [](const Structure& a, const Structure& b) {
            if (const int64_t slots = compareTokenSlots(a, b); slots != 0)
                return slots < 0;
            return std::tie(a.ep, a.tp, a.cp, a.etp) < std::tie(b.ep, b.tp, b.cp, b.etp);
        });
}

int64_t compareTokenSlots(const Structure& a, const Structure& b) {
    return int64_t{a.ep} * a.etp * b.tp * b.cp - int64_t{b.ep} * b.etp * a.tp * a.cp;
}

std::vector<ScheduleChoice> Searcher::schedulesFor(int pp) const {
    std::vector<ScheduleChoice> out;
    const LayoutSpec& in = in_.layout;
    const ScheduleChoice own{in.schedule, in.vpp, in.first_stage_layers, in.last_stage_layers};
    if (pp <= 1) {
        // Without a pipeline every schedule runs the same; keep the scenario's own name.
        out.push_back(in.pp <= 1 && in.vpp == 1 ? own
                                                : ScheduleChoice{PipelineSchedule::one_f_one_b});
        return out;
    }
    out.push_back({PipelineSchedule::one_f_one_b});
    const int layers = in_.model.layers;
    std::vector<int> vpps;
    const int max_vpp = opt_.max_vpp > 0 ? opt_.max_vpp : layers / pp;
    for (int v = 2; v <= max_vpp; ++v)
        vpps.push_back(v);
    for (const int v : pins_.vpp)
        if (v > 1)
            addUnique(vpps, v);
    if (in.vpp > 1)
        addUnique(vpps, in.vpp);
    std::sort(vpps.begin(), vpps.end());
    for (const int v : vpps) {
        if (int64_t{pp} * v > layers)
            continue;
        if (layers % (pp * v) == 0)
            out.push_back({PipelineSchedule::interleaved, v});
        else if (const auto ends = balancedEndStageLayers(layers, pp, v))
            out.push_back({PipelineSchedule::interleaved, v, ends->first, ends->second});
    }
    if (pp % 2 == 0)
        out.push_back({PipelineSchedule::dualpipe});
    for (const PipelineSchedule s : pins_.schedule)
        if (s == PipelineSchedule::gpipe)
            addUnique(out, ScheduleChoice{s});
    // The scenario's own split belongs to its own pipeline depth; at other depths its
    // interleaving is among the virtual-stage counts above.
    if (pp == in.pp)
        addUnique(out, own);
    else if (in.schedule != PipelineSchedule::interleaved)
        addUnique(out, ScheduleChoice{in.schedule, in.vpp});
    return out;
}

std::vector<int> Searcher::microBatchesFor(int dp) const {
    std::vector<int> out;
    const int64_t batch = in_.training.global_batch;
    if (batch >= 1 && batch % dp == 0) {
        const int64_t per_replica = batch / dp;
        const int64_t cap = opt_.max_micro_batch > 0 ? opt_.max_micro_batch : per_replica;
        for (const int d : divisors(per_replica))
            if (d <= cap)
                out.push_back(d);
    }
    if (out.empty())
        out.push_back(1);
    addUnique(out, std::max(1, in_.training.micro_batch));
    for (const int mb : pins_.micro_batch)
        addUnique(out, mb);
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace search_detail

std::optional<std::pair<int, int>> balancedEndStageLayers(int layers, int pp, int vpp) {
    if (pp < 2 || vpp < 1 || layers < 1 || layers % (int64_t{pp} * vpp) == 0)
        return std::nullopt;
    // The end stages share what the middle stages leave, the last one the lighter.
    const auto split = [&](int64_t ends) -> std::optional<std::pair<int, int>> {
        const int64_t last = ends / 2;
        if (last < vpp)
            return std::nullopt;
        return std::pair<int, int>{static_cast<int>(ends - last), static_cast<int>(last)};
    };
    if (pp == 2)
        return split(layers);
    // The middle stages' share m: ceil(layers / pp) is the fewest that keeps each end stage at
    // most m (their sum, layers - (pp-2)m, is then at most 2m); a smaller m only when an end
    // stage would otherwise get fewer than vpp layers.
    for (int m = (layers + pp - 1) / pp; m >= vpp; --m)
        if (const auto ends = split(layers - int64_t{pp - 2} * m))
            return ends;
    return std::nullopt;
}

Diagnostics checkPins(const std::vector<std::string>& pins) {
    search_detail::Pins p;
    return search_detail::parsePins(pins, p);
}

} // namespace moe
