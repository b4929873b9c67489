#include "bench.h"

#include "json_output.h"
#include "text_table.h"

#include "moe/edits.h"
#include "moe/evaluate.h"
#include "moe/format.h"
#include "moe/search.h"

#include <algorithm>
#include <chrono>
#include <sstream>

namespace moe::cli {

std::vector<BenchInput> scalingInputs(const std::vector<BenchInput>& shapes) {
    std::vector<BenchInput> out;
    for (const BenchInput& shape : shapes) {
        for (const int gpus : kScalingGpus) {
            const FieldEditResult scaled = scaledDataParallel(shape.scenario, gpus);
            BenchInput input{shape.label, shape.scenario, "", gpus};
            if (scaled.ok())
                input.scenario = *scaled.scenario;
            else
                input.refused = scaled.diagnostics.empty() ? std::string("not valid")
                                                           : scaled.diagnostics.front().message;
            out.push_back(std::move(input));
        }
    }
    return out;
}

std::vector<BenchRow> benchEvaluate(const std::vector<BenchInput>& inputs, int repeat) {
    using Clock = std::chrono::steady_clock;
    std::vector<BenchRow> rows;
    for (const BenchInput& input : inputs) {
        if (!input.refused.empty())
            continue;
        // Warm up once, then pick a run count that takes about half a second in total.
        const auto t0 = Clock::now();
        const Report warm = evaluate(input.scenario);
        const double first_s = std::chrono::duration<double>(Clock::now() - t0).count();
        const int runs = repeat > 0
                             ? repeat
                             : std::clamp(static_cast<int>(0.5 / std::max(first_s, 1e-6)), 5, 2000);
        std::vector<double> times;
        times.reserve(static_cast<size_t>(runs));
        // Summing the results keeps the optimizer from dropping the runs.
        volatile double sink = warm.step_time_s;
        for (int i = 0; i < runs; ++i) {
            const auto start = Clock::now();
            const Report r = evaluate(input.scenario);
            times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
            sink = sink + r.step_time_s;
        }
        std::sort(times.begin(), times.end());
        std::vector<double> detail_times;
        for (int i = 0; i < std::min(runs, 5); ++i) {
            const Report r = evaluate(input.scenario);
            const auto start = Clock::now();
            sink = sink + static_cast<double>(r.graph()->links.size()) +
                   static_cast<double>(r.linkBytes().size());
            detail_times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
        }
        std::sort(detail_times.begin(), detail_times.end());
        rows.push_back({&input, runs, times[times.size() / 2], times.front(), times.back(),
                        detail_times[detail_times.size() / 2]});
    }
    return rows;
}

std::string benchText(const std::vector<BenchRow>& rows) {
    TextTable table({"scenario", "GPUs", "runs", "evaluate median", "min", "max", "graph + links"},
                    {TextTable::Align::left});
    for (const BenchRow& r : rows)
        table.addRow({r.input->label, std::to_string(r.input->scenario.cluster.gpuCount()),
                      std::to_string(r.runs), formatSeconds(r.median_s, UnitStyle::ascii),
                      formatSeconds(r.min_s, UnitStyle::ascii),
                      formatSeconds(r.max_s, UnitStyle::ascii),
                      formatSeconds(r.detail_median_s, UnitStyle::ascii)});
    return "evaluate() on one core (includes placement and routing sample; \"graph + links\" is\n"
           "what a view pays once, on first reading the hardware graph and the per-link bytes)\n" +
           table.render("  ");
}

std::vector<SearchBenchRow> benchSearch(const std::vector<BenchInput>& inputs, int repeat) {
    std::vector<SearchBenchRow> rows;
    SearchOptions options;
    options.threads = 1;
    for (const BenchInput& input : inputs) {
        if (!input.refused.empty())
            continue;
        SearchBenchRow row{&input, repeat > 0 ? repeat : 3};
        std::vector<double> cpu_s;
        for (int i = 0; i < row.runs; ++i) {
            const SearchResult r = searchLayouts(input.scenario, options);
            cpu_s.push_back(r.cpu_s);
            row.candidates = r.candidates;
            row.evaluated = r.evaluated;
            row.pruned = r.rejectedCount(RejectReason::bound);
        }
        std::sort(cpu_s.begin(), cpu_s.end());
        row.median_cpu_s = cpu_s[cpu_s.size() / 2];
        row.min_cpu_s = cpu_s.front();
        rows.push_back(row);
    }
    return rows;
}

std::string searchBenchText(const std::vector<SearchBenchRow>& rows) {
    TextTable table({"scenario", "GPUs", "runs", "search median", "min", "candidates", "evaluated",
                     "pruned by bound", "candidates/s"},
                    {TextTable::Align::left});
    for (const SearchBenchRow& r : rows)
        table.addRow({r.input->label, std::to_string(r.input->scenario.cluster.gpuCount()),
                      std::to_string(r.runs), formatSeconds(r.median_cpu_s, UnitStyle::ascii),
                      formatSeconds(r.min_cpu_s, UnitStyle::ascii),
                      formatCount(static_cast<double>(r.candidates)),
                      formatCount(static_cast<double>(r.evaluated)),
                      formatCount(static_cast<double>(r.pruned)),
                      formatCount(static_cast<double>(r.candidates) / r.median_cpu_s)});
    return "moe-plan search on one thread (CPU time; the default options: top 10, pruning by "
           "bound)\n" +
           table.render("  ");
}

std::string refusedText(const std::vector<BenchInput>& inputs) {
    std::string text;
    for (const BenchInput& input : inputs) {
        if (!input.refused.empty())
            text += "  " + input.label + " at " + std::to_string(input.refused_gpus) +
                    " GPUs: not timed, " + input.refused + "\n";
    }
    return text.empty() ? text : "Sizes the layout shape does not fit:\n" + text;
}

std::string benchJson(const std::vector<BenchRow>& rows, const std::vector<SearchBenchRow>& search,
                      const std::vector<BenchInput>& inputs) {
    JsonWriter json;
    beginDocument(json, "bench");
    json.key("refused").beginArray();
    for (const BenchInput& input : inputs) {
        if (!input.refused.empty())
            json.beginObject()
                .field("label", input.label)
                .field("gpus", input.refused_gpus)
                .field("reason", input.refused)
                .endObject();
    }
    json.endArray();
    json.key("results").beginArray();
    // Each timed scenario: its label, identity, size and run count, then its figures.
    auto beginRow = [&json](const BenchInput& input, int runs) -> JsonWriter& {
        json.beginObject().field("label", input.label);
        writeScenarioIdentity(json, input.scenario);
        return json.field("gpus", input.scenario.cluster.gpuCount()).field("runs", runs);
    };
    for (const BenchRow& r : rows) {
        beginRow(*r.input, r.runs)
            .field("median_s", r.median_s)
            .field("min_s", r.min_s)
            .field("max_s", r.max_s)
            .field("detail_median_s", r.detail_median_s)
            .endObject();
    }
    json.endArray();
    json.key("search").beginArray();
    for (const SearchBenchRow& r : search) {
        beginRow(*r.input, r.runs)
            .field("median_cpu_s", r.median_cpu_s)
            .field("min_cpu_s", r.min_cpu_s)
            .field("candidates", r.candidates)
            .field("evaluated", r.evaluated)
            .field("pruned", r.pruned)
            .endObject();
    }
    json.endArray().endObject();
    return json.str() + "\n";
}

} // namespace moe::cli
