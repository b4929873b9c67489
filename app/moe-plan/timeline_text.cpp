#include "timeline_text.h"

#include "json_output.h"
#include "progress.h"
#include "report_text.h"
#include "scenario_input.h"
#include "text_table.h"

#include "moe/atomic_file.h"
#include "moe/format.h"
#include "moe/json_writer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <ostream>
#include <sstream>

namespace moe::cli {

namespace {

using Align = TextTable::Align;

/// CPU time of this thread: the benchmark's "one core", unaffected by other processes.
double threadCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct TimelineBench {
    size_t operations = 0;
    double cpu_median_s = 0, cpu_first_s = 0, wall_median_s = 0;
};

TimelineBench benchTimeline(const Scenario& s, const Report& report) {
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
    return {operations, cpu[cpu.size() / 2], first_cpu, wall[wall.size() / 2]};
}

std::string benchText(const Scenario& s, const Report& report, const TimelineBench& b) {
    TextTable table({"scenario", "GPUs", "stages", "micro-batches", "operations", "CPU median",
                     "CPU first run", "wall median"},
                    {Align::left});
    table.addRow({s.name, std::to_string(report.gpus), std::to_string(s.layout.pp),
                  std::to_string(report.micro_batches),
                  formatCount(static_cast<double>(b.operations)),
                  formatSeconds(b.cpu_median_s, UnitStyle::ascii),
                  formatSeconds(b.cpu_first_s, UnitStyle::ascii),
                  formatSeconds(b.wall_median_s, UnitStyle::ascii)});
    return "timeline: simulating one step on one core (timelineInput + simulateTimeline; 20 runs "
           "after a first, cold one)\n" +
           table.render("  ");
}

std::string benchJson(const Scenario& s, const Report& report, const TimelineBench& b) {
    JsonWriter json;
    beginDocument(json, "timeline", s);
    json.key("bench")
        .beginObject()
        .field("gpus", report.gpus)
        .field("stages", s.layout.pp)
        .field("micro_batches", report.micro_batches)
        .field("operations", static_cast<int64_t>(b.operations))
        .field("cpu_median_s", b.cpu_median_s)
        .field("cpu_first_s", b.cpu_first_s)
        .field("wall_median_s", b.wall_median_s)
        .endObject()
        .endObject();
    return json.str() + "\n";
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
    // The closed form's error: closed form - simulated, and as a share of the simulated step
    // (below a millionth of the step it is rounding, in part the float per-GPU shares, and
    // prints as 0).
    const auto error = [&](double closed_s, double simulated_s) {
        const double e = closed_s - simulated_s;
        if (std::fabs(e) < 1e-6 * t.step_time_s)
            return std::string("0");
        const double share = 100.0 * e / std::max(t.step_time_s, 1e-30);
        return formatSeconds(e, UnitStyle::ascii) + " (" + (share >= 0 ? "+" : "") +
               formatFixed(share, 2) + "%)";
    };
    o << "  Step time " << formatSeconds(t.step_time_s, UnitStyle::ascii)
      << " simulated; evaluate()'s closed form "
      << formatSeconds(report.step_time_s, UnitStyle::ascii) << ", error "
      << error(report.step_time_s, t.step_time_s) << "\n\n";

    // The simulated step in evaluate()'s accounting, item by item against the closed form.
    const TimelineRow& reference = t.rows[static_cast<size_t>(t.reference_row)];
    TextTable table(
        {"item", "simulated", "share", "closed form", "error (of step)", "hidden by overlap"},
        {Align::left});
    for (int i = 0; i < kStepItemCount; ++i) {
        const double sim = t.breakdown.seconds[static_cast<size_t>(i)];
        const double closed = report.step.seconds[static_cast<size_t>(i)];
        const double hidden = t.breakdown.overlapped_s[static_cast<size_t>(i)];
        if (sim <= 0 && closed <= 0)
            continue;
        table.addRow({toString(static_cast<StepItem>(i)), formatSeconds(sim, UnitStyle::ascii),
                      formatFixed(100.0 * sim / std::max(t.step_time_s, 1e-30), 1) + "%",
                      formatSeconds(closed, UnitStyle::ascii), error(closed, sim),
                      hidden > 0 ? formatSeconds(hidden, UnitStyle::ascii) : ""});
    }
    table.addSeparator();
    table.addRow({"step", formatSeconds(t.step_time_s, UnitStyle::ascii), "100.0%",
                  formatSeconds(report.step_time_s, UnitStyle::ascii),
                  error(report.step_time_s, t.step_time_s), ""});
    o << "Step-time breakdown: the simulated step as stage " << reference.stage;
    if (t.lanes > 1)
        o << " (lane " << reference.lane << ")";
    o << " sees it, the GPUs the critical path (" << t.critical_path.size()
      << " operations) runs through most; closed form = evaluate()\n"
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
        o << "\n  Hottest GPU " << hot << " (stage " << report.placement->coordsOf(hot).pp
          << "): waits " << formatSeconds(hot_wait, UnitStyle::ascii)
          << " per step for its EP group; GPU " << waiter << " of the same group idles "
          << formatSeconds(most_wait, UnitStyle::ascii)
          << " waiting for the group's hottest ranks\n";
    }

    if (!d.simulated_s.empty()) {
        o << "\nStep time over " << d.simulated_s.size() << " routing sample"
          << (d.simulated_s.size() == 1 ? "" : "s") << ": p50 "
          << formatSeconds(d.p50_s, UnitStyle::ascii) << "  p90 "
          << formatSeconds(d.p90_s, UnitStyle::ascii) << "  p99 "
          << formatSeconds(d.p99_s, UnitStyle::ascii) << "  (mean "
          << formatSeconds(d.mean_s, UnitStyle::ascii) << "; evaluate() p50 "
          << formatSeconds(percentile(d.evaluated_s, 0.5), UnitStyle::ascii) << ")\n";
    }
    return o.str();
}

std::string timelineJson(const Scenario& s, const Report& report, const Timeline& t,
                         const StepTimeDistribution& d) {
    JsonWriter json;
    beginDocument(json, "timeline", s);
    json.field("schedule", toString(t.schedule))
        .field("stages", t.stages)
        .field("lanes", t.lanes)
        .field("micro_batches", t.micro_batches)
        .field("gpus", t.gpus)
        .field("operations", static_cast<int64_t>(t.operations));
    writeStepFields(json, t.step_time_s, t.breakdown);
    const TimelineRow& reference = t.rows[static_cast<size_t>(t.reference_row)];
    json.key("reference")
        .beginObject()
        .field("row", t.reference_row)
        .field("stage", reference.stage)
        .field("lane", reference.lane)
        .endObject();
    json.key("closed_form").beginObject();
    writeStepFields(json, report.step_time_s, report.step);
    json.endObject();
    json.key("error")
        .beginObject()
        .field("step_s", report.step_time_s - t.step_time_s)
        .field("step_relative", t.step_time_s > 0 ? report.step_time_s / t.step_time_s - 1 : 0.0);
    json.key("breakdown_s").beginObject();
    for (int i = 0; i < kStepItemCount; ++i)
        json.field(keyOf(static_cast<StepItem>(i)),
                   report.step.seconds[static_cast<size_t>(i)] -
                       t.breakdown.seconds[static_cast<size_t>(i)]);
    json.endObject().endObject();
    json.key("critical_path")
        .beginObject()
        .field("operations", static_cast<int64_t>(t.critical_path.size()));
    json.key("ends_with").beginArray();
    const size_t n = t.critical_path.size();
    for (size_t i = n > 3 ? n - 3 : 0; i < n; ++i) {
        const CriticalStep& c = t.critical_path[i];
        const TimelineRow& row = t.rows[static_cast<size_t>(c.row)];
        const Span& span = row.spans[static_cast<size_t>(c.span)];
        json.beginObject()
            .field("kind", toString(span.kind))
            .field("pass", span.backward ? "backward" : "forward")
            .field("layer", span.layer)
            .field("microbatch", span.microbatch)
            .field("stage", row.stage)
            .field("start_s", span.start_s)
            .field("end_s", span.end_s)
            .endObject();
    }
    json.endArray().endObject();
    if (!d.simulated_s.empty()) {
        json.key("distribution")
            .beginObject()
            .field("steps", static_cast<int64_t>(d.simulated_s.size()))
            .field("p50_s", d.p50_s)
            .field("p90_s", d.p90_s)
            .field("p99_s", d.p99_s)
            .field("mean_s", d.mean_s)
            .field("evaluate_p50_s", percentile(d.evaluated_s, 0.5))
            .endObject();
    }
    json.endObject();
    return json.str() + "\n";
}

int runTimeline(const Scenario& s, const TimelineCommand& c, CommandIo& io) {
    const Report report = evaluate(s);
    if (c.bench) {
        const TimelineBench b = benchTimeline(s, report);
        io.out() << (io.json() ? benchJson(s, report, b) : benchText(s, report, b));
        return kExitOk;
    }
    const Timeline t = simulateTimeline(s, report);
    if (!t.ok())
        return io.fail(kExitBadInput, t.error);
    std::vector<int> gpus;
    if (c.gpus.empty()) {
        gpus = defaultTraceGpus(t);
    } else {
        std::string problem;
        gpus = parseGpuList(c.gpus, t.gpus, problem);
        if (!problem.empty())
            return io.fail(kExitUsage, problem);
    }
    StepTimeDistribution d;
    {
        ProgressLine progress(io.err(), "timeline", "routing samples");
        TimelineOptions options;
        options.progress = progress.callback();
        d = sampleStepTimes(s, c.steps, options);
    }
    if (d.interrupted)
        return io.fail(kExitInterrupted, d.error + "; nothing written");
    // Data on standard output ('-') keeps the notes and summary off it.
    const bool data_on_stdout = c.trace_path == "-" || c.csv_path == "-";
    if (!data_on_stdout)
        io.out() << (io.json() ? timelineJson(s, report, t, d) : timelineText(s, report, t, d));
    if (!d.error.empty())
        io.fail(kExitOk, "step-time samples: " + d.error);

    auto write = [&](const char* what, const std::string& path, const std::string& text) {
        if (const std::string problem = writeOutput(path, text, io.out()); !problem.empty()) {
            io.fail(kExitBadInput, problem);
            return false;
        }
        std::string line = std::string(what) + " " + (path == "-" ? "standard output" : path) +
                           " (" + std::to_string(gpus.size()) + " of " + std::to_string(t.gpus) +
                           " GPUs, " +
                           formatBytes(static_cast<double>(text.size()), UnitStyle::ascii) + ")";
        if (static_cast<int>(gpus.size()) < t.gpus && c.gpus.empty())
            line += "; the first and the hottest GPU of each row (--gpus all for every GPU)";
        // Keep --json output (and data on standard output) machine-readable.
        io.note(line, data_on_stdout);
        return true;
    };
    if (!c.trace_path.empty() && !write("Trace written to", c.trace_path, chromeTraceJson(t, gpus)))
        return kExitBadInput;
    if (!c.csv_path.empty() && !write("Spans written to", c.csv_path, timelineCsv(t, gpus)))
        return kExitBadInput;
    return kExitOk;
}

} // namespace moe::cli
