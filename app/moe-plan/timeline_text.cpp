#include "timeline_text.h"

#include "text_table.h"

#include "moe/atomic_file.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <ostream>
#include <sstream>

namespace moe::cli {

namespace {

using Align = TextTable::Align;

const char* kindLabel(SpanKind k) {
    switch (k) {
    case SpanKind::attention:
        return "attention";
    case SpanKind::dense_ffn:
        return "dense FFN & shared experts";
    case SpanKind::router:
        return "router";
    case SpanKind::expert:
        return "expert GEMMs (mean load)";
    case SpanKind::lm_head:
        return "LM head";
    case SpanKind::weight_grad:
        return "weight gradients (split off backward)";
    case SpanKind::optimizer:
        return "optimizer";
    case SpanKind::wait:
        return "imbalance (hottest GPU's extra)";
    case SpanKind::tp:
        return "TP collectives";
    case SpanKind::cp:
        return "CP KV exchange";
    case SpanKind::dispatch:
        return "MoE dispatch";
    case SpanKind::combine:
        return "MoE combine";
    case SpanKind::pp_send:
        return "PP send/recv";
    case SpanKind::grad_sync:
        return "gradient sync (exposed)";
    case SpanKind::param_gather:
        return "weight all-gather (exposed)";
    case SpanKind::count:
        break;
    }
    return "?";
}

/// CPU time of this thread: the benchmark's "one core", unaffected by other processes.
double threadCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

bool writeFile(const std::string& path, const std::string& text, std::ostream& err) {
    const std::string problem = writeFileAtomically(path, text);
    if (problem.empty())
        return true;
    err << "moe-plan timeline: " << problem << "\n";
    return false;
}

std::string benchText(const Scenario& s, const Report& report) {
    using Clock = std::chrono::steady_clock;
    std::vector<double> wall, cpu;
    double first_cpu = 0;
    size_t operations = 0;
    for (int i = 0; i < 21; ++i) {
        const double c0 = threadCpuSeconds();
        const auto w0 = Clock::now();
        const Timeline t = simulateTimeline(s, report);
        const double c1 = threadCpuSeconds();
        if (i == 0)
            first_cpu = c1 - c0;
        else {
            wall.push_back(std::chrono::duration<double>(Clock::now() - w0).count());
            cpu.push_back(c1 - c0);
        }
        operations = t.operations;
    }
    std::sort(wall.begin(), wall.end());
    std::sort(cpu.begin(), cpu.end());
    std::ostringstream o;
    TextTable table({"scenario", "GPUs", "stages", "micro-batches", "operations", "CPU median",
                     "CPU first run", "wall median"},
                    {Align::left});
    table.addRow({s.name, std::to_string(report.gpus), std::to_string(s.layout.pp),
                  std::to_string(report.micro_batches),
                  formatCount(static_cast<double>(operations)), formatSeconds(cpu[cpu.size() / 2]),
                  formatSeconds(first_cpu), formatSeconds(wall[wall.size() / 2])});
    o << "timeline: simulating one step on one core (timelineInput + simulateTimeline; 20 runs "
         "after a first, cold one)\n"
      << table.render("  ");
    return o.str();
}

} // namespace

std::vector<int> parseGpuList(const std::string& text, int gpus, std::string& error) {
    std::vector<int> out;
    if (text == "all") {
        for (int g = 0; g < gpus; ++g)
            out.push_back(g);
        return out;
    }
    auto number = [&](const std::string& s, int& value) {
        size_t used = 0;
        try {
            value = std::stoi(s, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        return used > 0 && used == s.size() && value >= 0 && value < gpus;
    };
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        const size_t dash = item.find('-');
        int lo = 0, hi = 0;
        const bool ok = dash == std::string::npos
                            ? number(item, lo) && number(item, hi)
                            : number(item.substr(0, dash), lo) && number(item.substr(dash + 1), hi);
        if (!ok || hi < lo) {
            error = "--gpus: '" + item + "' is not a GPU or range of GPUs 0.." +
                    std::to_string(gpus - 1);
            return {};
        }
        for (int g = lo; g <= hi; ++g)
            out.push_back(g);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (out.empty())
        error = "--gpus: no GPU given";
    return out;
}

std::string timelineText(const Scenario& s, const Report& report, const Timeline& t,
                         const StepTimeDistribution& d) {
    std::ostringstream o;
    o << "Step timeline: " << s.name << " (" << toString(t.schedule) << ", " << t.stages << " stage"
      << (t.stages == 1 ? "" : "s") << ", " << t.micro_batches << " micro-batches)\n";
    o << "  Simulated " << t.rows.size() << " distinct rows (" << t.stages << " stage"
      << (t.stages == 1 ? "" : "s") << " x " << t.lanes << " routing lane"
      << (t.lanes == 1 ? "" : "s") << ") for " << t.gpus << " GPUs, "
      << formatCount(static_cast<double>(t.operations)) << " operations\n";
    o << "  Step time " << formatSeconds(t.step_time_s) << " simulated; evaluate() closed form "
      << formatSeconds(report.step_time_s) << " ("
      << formatDeltaPercent(report.step_time_s, t.step_time_s) << ")\n\n";

    TextTable table({"critical path", "time", "share"}, {Align::left});
    std::vector<std::pair<double, int>> items;
    for (int k = 0; k < kSpanKindCount; ++k)
        if (t.critical_s[static_cast<size_t>(k)] > 0)
            items.emplace_back(t.critical_s[static_cast<size_t>(k)], k);
    std::sort(items.begin(), items.end(), std::greater<>());
    for (const auto& [seconds, k] : items)
        table.addRow({kindLabel(static_cast<SpanKind>(k)), formatSeconds(seconds),
                      formatFixed(100.0 * seconds / std::max(t.step_time_s, 1e-30), 1) + "%"});
    table.addSeparator();
    table.addRow({"step", formatSeconds(t.step_time_s), "100.0%"});
    o << "Critical path (" << t.critical_path.size() << " operations, by item)\n"
      << table.render("  ");

    // Where the path ends: the last operations that decide the step's length.
    if (!t.critical_path.empty()) {
        o << "  ends with:";
        const size_t n = t.critical_path.size();
        const size_t first = n > 3 ? n - 3 : 0;
        for (size_t i = first; i < n; ++i) {
            const CriticalStep& c = t.critical_path[i];
            const TimelineRow& row = t.rows[static_cast<size_t>(c.row)];
            const Span& span = row.spans[static_cast<size_t>(c.span)];
            o << (i == first ? " " : " -> ") << toString(span.kind)
              << (span.backward ? " bwd" : "");
            if (span.layer >= 0)
                o << " L" << span.layer;
            if (span.microbatch >= 0)
                o << " mb" << span.microbatch;
            o << " (stage " << row.stage << ")";
        }
        o << "\n";
    }

    // Per-GPU variation inside the hottest EP group.
    if (s.model.isMoe() && report.placement && t.lanes >= 1) {
        const int hot = report.load.hottestGpu(*report.placement);
        const ParallelGroup& group = report.placement->groupOf(GroupKind::ep, hot);
        double most_wait = 0, hot_wait = 0;
        int waiter = hot;
        for (const int g : group.gpus) {
            double wait = 0;
            for (const Span& span : t.spansForGpu(g))
                if (span.kind == SpanKind::wait)
                    wait += span.duration_s();
            if (g == hot)
                hot_wait = wait;
            if (wait > most_wait) {
                most_wait = wait;
                waiter = g;
            }
        }
        o << "\n  Hottest GPU " << hot << " (stage " << report.placement->coords[hot].pp
          << "): waits " << formatSeconds(hot_wait) << " per step for its EP group; GPU " << waiter
          << " of the same group idles " << formatSeconds(most_wait)
          << " waiting for the group's hottest ranks\n";
    }

    if (!d.simulated_s.empty()) {
        o << "\nStep time over " << d.simulated_s.size() << " routing sample"
          << (d.simulated_s.size() == 1 ? "" : "s") << ": p50 " << formatSeconds(d.p50_s)
          << "  p90 " << formatSeconds(d.p90_s) << "  p99 " << formatSeconds(d.p99_s) << "  (mean "
          << formatSeconds(d.mean_s) << "; evaluate() p50 "
          << formatSeconds(percentile(d.evaluated_s, 0.5)) << ")\n";
    }
    return o.str();
}

int runTimeline(const Scenario& s, const TimelineCommand& c, std::ostream& out, std::ostream& err) {
    const Report report = evaluate(s);
    if (c.bench) {
        out << benchText(s, report);
        return 0;
    }
    const Timeline t = simulateTimeline(s, report);
    if (!t.ok()) {
        err << "moe-plan timeline: " << t.error << "\n";
        return 1;
    }
    std::vector<int> gpus;
    if (c.gpus.empty()) {
        gpus = defaultTraceGpus(t);
    } else {
        std::string problem;
        gpus = parseGpuList(c.gpus, t.gpus, problem);
        if (!problem.empty()) {
            err << "moe-plan timeline: " << problem << "\n";
            return 2;
        }
    }
    const StepTimeDistribution d = sampleStepTimes(s, c.steps);
    out << timelineText(s, report, t, d);
    if (!d.error.empty())
        err << "moe-plan timeline: step-time samples: " << d.error << "\n";

    auto describe = [&](const char* what, const std::string& path, size_t bytes) {
        out << what << " " << path << " (" << gpus.size() << " of " << t.gpus << " GPUs, "
            << formatBytes(static_cast<double>(bytes)) << ")";
        if (static_cast<int>(gpus.size()) < t.gpus && c.gpus.empty())
            out << "; the first and the hottest GPU of each row (--gpus all for every GPU)";
        out << "\n";
    };
    if (!c.trace_path.empty()) {
        const std::string json = chromeTraceJson(t, gpus);
        if (!writeFile(c.trace_path, json, err))
            return 1;
        describe("Trace written to", c.trace_path, json.size());
    }
    if (!c.csv_path.empty()) {
        const std::string csv = timelineCsv(t, gpus);
        if (!writeFile(c.csv_path, csv, err))
            return 1;
        describe("Spans written to", c.csv_path, csv.size());
    }
    return 0;
}

} // namespace moe::cli
