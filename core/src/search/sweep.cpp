#include "moe/sweep.h"

#include "moe/edits.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace moe {

namespace {

Diagnostic error(const std::string& field, const std::string& message) {
    Diagnostic d;
    d.field = field;
    d.message = message;
    return d;
}

/// Splits on commas outside [...] and {...}.
std::vector<std::string> splitValues(const std::string& text) {
    std::vector<std::string> out;
    std::string current;
    int depth = 0;
    for (const char c : text) {
        if (c == '[' || c == '{')
            ++depth;
        else if ((c == ']' || c == '}') && depth > 0)
            --depth;
        if (c == ',' && depth == 0) {
            out.push_back(current);
            current.clear();
        } else {
            current += c;
        }
    }
    out.push_back(current);
    return out;
}

bool wholeNumber(const std::string& text, int64_t& value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size();
}

/// Expands "A..B" or "A..B:S" into its values; false when `item` is not a range.
bool expandRange(const std::string& item, std::vector<std::string>& out, std::string& problem) {
    const size_t dots = item.find("..");
    if (dots == std::string::npos)
        return false;
    const size_t colon = item.find(':', dots);
    int64_t from = 0, to = 0, step = 1;
    if (!wholeNumber(item.substr(0, dots), from) ||
        !wholeNumber(item.substr(dots + 2,
                                 colon == std::string::npos ? std::string::npos : colon - dots - 2),
                     to) ||
        (colon != std::string::npos && !wholeNumber(item.substr(colon + 1), step))) {
        problem = "range '" + item + "' needs whole numbers: A..B or A..B:STEP";
        return true;
    }
    if (step < 1 || to < from) {
        problem = "range '" + item + "' needs A <= B and a STEP of at least 1";
        return true;
    }
    if ((to - from) / step + 1 > kMaxSweepPoints) {
        problem =
            "range '" + item + "' has more than " + std::to_string(kMaxSweepPoints) + " values";
        return true;
    }
    for (int64_t v = from; v <= to; v += step)
        out.push_back(std::to_string(v));
    return true;
}

} // namespace

Diagnostics parseSweepAxis(const std::string& spec, SweepAxis& axis) {
    Diagnostics problems;
    const size_t eq = spec.find('=');
    const std::string key = eq == std::string::npos ? spec : spec.substr(0, eq);
    const std::optional<FieldPath> path = parseFieldPath(key);
    if (eq == std::string::npos || !path) {
        problems.push_back(error(key, "'" + spec + "' needs key=v1,v2,... (e.g. layout.ep=4,8)"));
        return problems;
    }
    // List elements ("layout.expert_placement[0].ep_ranks") are checked when loaded.
    if (path->dotted.find('[') == std::string::npos && !findScenarioField(path->dotted)) {
        problems.push_back(error(path->dotted, "unknown field '" + path->dotted +
                                                   "' (the scenario format lists the fields)"));
        return problems;
    }
    axis.key = path->dotted;
    axis.values.clear();
    for (const std::string& item : splitValues(spec.substr(eq + 1))) {
        std::string problem;
        if (item.empty())
            problem = "an empty value";
        else if (!expandRange(item, axis.values, problem))
            axis.values.push_back(item);
        if (!problem.empty()) {
            problems.push_back(error(axis.key, axis.key + ": " + problem));
            return problems;
        }
    }
    return problems;
}

int64_t SweepGrid::points() const {
    int64_t n = 1;
    for (const SweepAxis& a : axes)
        n *= static_cast<int64_t>(a.values.size());
    return n;
}

std::vector<std::pair<std::string, std::string>> SweepGrid::point(int64_t index) const {
    std::vector<std::pair<std::string, std::string>> out(axes.size());
    // Mixed radix, the last axis fastest.
    for (size_t i = axes.size(); i-- > 0;) {
        const auto n = static_cast<int64_t>(axes[i].values.size());
        out[i] = {axes[i].key, axes[i].values[static_cast<size_t>(index % n)]};
        index /= n;
    }
    return out;
}

Diagnostics makeSweepGrid(const std::vector<std::string>& grids,
                          const std::vector<std::string>& pins, SweepGrid& grid) {
    Diagnostics problems;
    grid.axes.clear();
    int64_t points = 1;
    auto add = [&](const std::string& spec, bool pin) {
        SweepAxis axis;
        Diagnostics d = parseSweepAxis(spec, axis);
        if (pin && d.empty() && axis.values.size() != 1)
            d.push_back(error(axis.key, "--pin " + spec +
                                            " needs one value (use --grid for "
                                            "several)"));
        for (const SweepAxis& a : grid.axes)
            if (d.empty() && a.key == axis.key)
                d.push_back(error(axis.key, axis.key + " is given twice"));
        if (d.empty() && points > kMaxSweepPoints / static_cast<int64_t>(axis.values.size()))
            d.push_back(error(axis.key, "the grid has more than " +
                                            std::to_string(kMaxSweepPoints) + " points"));
        if (!d.empty()) {
            problems.insert(problems.end(), d.begin(), d.end());
            return;
        }
        points *= static_cast<int64_t>(axis.values.size());
        grid.axes.push_back(std::move(axis));
    };
    for (const std::string& pin : pins)
        add(pin, true);
    for (const std::string& spec : grids)
        add(spec, false);
    return problems;
}

SweepRun runSweep(const std::string& base_text, const std::string& label,
                  const std::string& base_dir, const SweepGrid& grid, const SweepOptions& options,
                  const std::function<std::string(const SweepPoint&)>& row,
                  const std::function<void(const std::string&)>& emit) {
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t total = options.shard.size(grid.points());
    SweepRun run;
    unsigned threads = options.threads > 0 ? static_cast<unsigned>(options.threads)
                                           : std::max(1u, std::thread::hardware_concurrency());
    threads = static_cast<unsigned>(std::clamp<int64_t>(total, 1, threads));
    // Workers fill rows[k] for the shard's k-th point; this thread emits them in order.
    std::vector<std::string> rows(static_cast<size_t>(total));
    std::vector<char> ready(static_cast<size_t>(total), 0);
    std::mutex mutex;
    std::condition_variable cv;
    std::atomic<int64_t> next{0}, done{0}, invalid{0};
    std::atomic<bool> stop{false};
    auto work = [&] {
        EvaluationCache cache;
        for (int64_t k = next++; k < total && !stop; k = next++) {
            SweepPoint p;
            p.index = options.shard.index + k * options.shard.count;
            p.overrides = grid.point(p.index);
            std::vector<std::string> sets;
            for (const auto& [key, value] : p.overrides)
                sets.push_back(key + "=" + value);
            p.loaded = loadScenarioTextWithOverrides(base_text, label, base_dir, sets);
            Report report;
            if (p.loaded.ok()) {
                report = evaluate(*p.loaded.scenario, 0, cache);
                p.report = &report;
            } else {
                ++invalid;
            }
            std::string text = row(p);
            {
                const std::lock_guard<std::mutex> lock(mutex);
                rows[static_cast<size_t>(k)] = std::move(text);
                ready[static_cast<size_t>(k)] = 1;
            }
            cv.notify_one();
            const int64_t now = ++done;
            if (options.progress && !options.progress(now, total))
                stop = true;
        }
        cv.notify_one();
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back(work);
    for (int64_t k = 0; k < total; ++k) {
        std::string text;
        {
            std::unique_lock<std::mutex> lock(mutex);
            cv.wait(lock, [&] { return ready[static_cast<size_t>(k)] != 0 || stop.load(); });
            if (ready[static_cast<size_t>(k)] == 0)
                break;
            text = std::move(rows[static_cast<size_t>(k)]);
            rows[static_cast<size_t>(k)] = std::string();
        }
        emit(text);
        ++run.points;
    }
    for (std::thread& t : pool)
        t.join();
    run.interrupted = stop.load();
    run.invalid = invalid.load();
    run.threads = static_cast<int>(threads);
    run.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return run;
}

} // namespace moe
