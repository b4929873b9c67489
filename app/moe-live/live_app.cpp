// moe-live's state: the scenario and its evaluation off the frame loop, edits and what-ifs, the
// replay, the map's colours, files and screenshots (the windows are in live_app_ui.cpp).
#include "live_app.h"

#include "cluster_resize.h"

#include "moe/edits.h"
#include "moe/scenario_io.h"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace moe::live {

namespace {

double msSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string firstError(const Diagnostics& diagnostics) {
    for (const Diagnostic& d : diagnostics)
        if (d.severity == Diagnostic::Severity::error)
            return d.message;
    return diagnostics.empty() ? std::string("invalid") : diagnostics.front().message;
}

std::vector<std::string> powersOfTwo(int lo, int hi) {
    std::vector<std::string> out;
    for (int64_t v = lo; v <= hi; v *= 2)
        out.push_back(std::to_string(v));
    return out;
}

/// The discrete what-ifs and the values offered for each. Every value is checked with
/// applyWhatIf, so a greyed button carries exactly the reason a file would be rejected.
std::vector<std::pair<std::string, std::vector<std::string>>> discreteFields(const Scenario& s) {
    const int gpus = s.cluster.gpuCount();
    const int experts = std::max(1, s.model.experts);
    std::vector<std::pair<std::string, std::vector<std::string>>> f;
    f.push_back({"cluster.nodes", powersOfTwo(1, 8192)});
    f.push_back({"cluster.gpus_per_node", {"4", "8", "16", "36", "72"}});
    f.push_back({"cluster.scale_up.domain", {"node", "rack"}});
    f.push_back({"layout.tp", powersOfTwo(1, std::min(gpus, 64))});
    f.push_back({"layout.pp", powersOfTwo(1, std::min(gpus, 64))});
    f.push_back({"layout.dp", powersOfTwo(1, gpus)});
    f.push_back({"layout.ep", powersOfTwo(1, std::min(gpus, std::max(experts, 1)))});
    f.push_back({"layout.etp", powersOfTwo(1, std::min(gpus, 8))});
    const FieldInfo* order = findScenarioField("layout.order");
    f.push_back({"layout.order", order ? order->choices : std::vector<std::string>{}});
    const FieldInfo* schedule = findScenarioField("layout.schedule");
    f.push_back({"layout.schedule", schedule ? schedule->choices : std::vector<std::string>{}});
    f.push_back({"layout.max_nodes_per_token", {"0", "1", "2", "4", "8"}});
    f.push_back({"model.experts", powersOfTwo(8, 512)});
    f.push_back({"model.top_k", {"1", "2", "4", "6", "8", "16"}});
    for (const char* path : {"routing.balancing", "routing.model"}) {
        const FieldInfo* field = findScenarioField(path);
        f.push_back({path, field ? field->choices : std::vector<std::string>{}});
    }
    return f;
}

/// What a what-if button does. Nodes and GPUs per node resize the cluster the way --gpus does
/// (dp and the global batch follow the GPU count): alone, a new GPU count no longer matches dp.
/// Every other field is set on its own. `effect` describes a resize ("" otherwise).
struct WhatIf {
    FieldEditResult edit;
    std::string effect;
};

WhatIf applyWhatIf(const Scenario& s, const std::string& path, const std::string& value,
                   const std::string& base_dir) {
    const bool nodes = path == "cluster.nodes";
    if (nodes || path == "cluster.gpus_per_node") {
        const int n = std::atoi(value.c_str());
        ClusterResize r = resizeCluster(s, nodes ? n : s.cluster.nodes,
                                        nodes ? s.cluster.gpus_per_node : n, base_dir);
        return {std::move(r.edit), std::move(r.summary)};
    }
    return {setScenarioField(s, path, value, base_dir), {}};
}

} // namespace

std::string directoryOf(const std::string& file) {
    const std::filesystem::path dir = std::filesystem::path(file).parent_path();
    return dir.empty() ? std::string(".") : dir.string();
}

const char* toString(Metric m) {
    switch (m) {
    case Metric::load:
        return "expert load";
    case Metric::a2a:
        return "all-to-all bytes received";
    case Metric::memory:
        return "memory use";
    case Metric::idle:
        return "idle time";
    }
    return "?";
}

std::optional<Scenario> scaleToGpus(const Scenario& s, int gpus, std::string& error,
                                    const std::string& base_dir) {
    const std::string label = "--gpus " + std::to_string(gpus);
    const int gpn = std::max(1, s.cluster.gpus_per_node);
    if (gpus <= 0 || gpus % gpn != 0) {
        error = label + ": not a multiple of the " + std::to_string(gpn) + " GPUs per node";
        return std::nullopt;
    }
    ClusterResize resized = resizeCluster(s, gpus / gpn, gpn, base_dir);
    if (!resized.edit.ok()) {
        for (Diagnostic& d : resized.edit.diagnostics)
            d.file = label;
        error = formatAll(resized.edit.diagnostics);
        return std::nullopt;
    }
    return resized.edit.scenario;
}

std::optional<Scenario> loadFromOptions(const Options& o, std::string& error) {
    LoadResult r = o.file.empty()
                       ? loadScenarioTextWithOverrides(defaultScenarioYaml(), "<built-in default>",
                                                       ".", o.overrides)
                       : loadScenarioWithOverrides(o.file, o.overrides);
    if (!r.ok()) {
        error = formatAll(r.diagnostics);
        return std::nullopt;
    }
    if (o.gpus > 0)
        return scaleToGpus(*r.scenario, o.gpus, error, directoryOf(o.file));
    return r.scenario;
}

std::optional<Evaluated> evaluateJob(const Scenario& scenario, const std::string& base_dir,
                                     EvaluationCache& cache, const EvaluationJob* job) {
    Evaluated e;
    e.scenario = scenario;
    auto t0 = std::chrono::steady_clock::now();
    auto report = std::make_shared<Report>(evaluate(scenario, 0, cache));
    e.evaluate_ms = msSince(t0);
    e.model = std::make_shared<ReplayModel>(scenario, *report);
    e.report = std::move(report);
    t0 = std::chrono::steady_clock::now();
    for (const auto& [path, values] : discreteFields(scenario)) {
        if (job != nullptr && job->stopping())
            return std::nullopt;
        std::vector<Candidate>& out = e.candidates[path];
        const std::optional<std::string> current = getScenarioField(scenario, path);
        for (const std::string& v : values) {
            Candidate c{v, "", ""};
            if (!current || *current != v) {
                const WhatIf w = applyWhatIf(scenario, path, v, base_dir);
                if (!w.edit.ok())
                    c.reason = firstError(w.edit.diagnostics);
                c.effect = w.effect;
            }
            out.push_back(std::move(c));
        }
    }
    e.candidates_ms = msSince(t0);
    return e;
}

LiveApp::LiveApp(const Options& options)
    : options_(options)
    , metric_(options.metric)
    , playing_(options.play) {
    std::snprintf(path_buf_, sizeof path_buf_, "%s", options.file.c_str());
    if (!options.screenshot.empty())
        std::snprintf(shot_buf_, sizeof shot_buf_, "%s", options.screenshot.c_str());
}

void LiveApp::start(const Scenario& scenario, const std::string& base_dir) {
    base_dir_ = base_dir;
    save_state_.opened(options_.file);
    EvaluationCache cache;
    install(*evaluateJob(scenario, base_dir_, cache));
}

void LiveApp::install(Evaluated evaluated) {
    const ClusterSpec& cluster = evaluated.scenario.cluster;
    const std::vector<int> rack_nodes = cluster.nodesInRacks();
    const bool reshaped = !current_.report || cluster.gpuCount() != layout_.gpus ||
                          cluster.gpus_per_node != layout_.gpus_per_node ||
                          cluster.nodes_per_rack != layout_.nodes_per_rack ||
                          rack_nodes != layout_.rack_nodes;
    racks_text_ = cluster.describeRacks();
    current_ = std::move(evaluated);
    replay_ = std::make_unique<Replay>(current_.model);
    replay_->advance(&gpu_metrics_);
    if (reshaped) {
        const float aspect = map_w_ > 0 && map_h_ > 0 ? static_cast<float>(map_w_) / map_h_ : 1.3f;
        layout_ = MapLayout::make(current_.scenario.cluster.gpuCount(),
                                  current_.scenario.cluster.gpus_per_node, rack_nodes,
                                  current_.scenario.cluster.nodes_per_rack, aspect);
        map_.setLayout(layout_);
        camera_fitted_ = false;
    }
    updateMapColors();
}

void LiveApp::submit(const Scenario& scenario) {
    // The newest edit wins: the worker drops a request still waiting behind the running one.
    submitted_ = scenario;
    submitted_generation_ =
        worker_.submit([this, scenario, base_dir = base_dir_](EvaluationJob& job) {
            if (std::optional<Evaluated> e = evaluateJob(scenario, base_dir, job.cache, &job))
                finished_.offer(job.generation, std::move(*e));
        });
}

void LiveApp::pollJob() {
    std::optional<std::pair<uint64_t, Evaluated>> done = finished_.take();
    if (!done)
        return;
    if (done->first == submitted_generation_)
        submitted_.reset();
    install(std::move(done->second));
}

void LiveApp::reevaluateNow(const Scenario* edited) {
    if (edited)
        current_.scenario = *edited;
    const auto t0 = std::chrono::steady_clock::now();
    auto report = std::make_shared<Report>(evaluate(current_.scenario, 0, frame_cache_));
    current_.evaluate_ms = msSince(t0);
    current_.model = std::make_shared<ReplayModel>(current_.scenario, *report);
    current_.report = std::move(report);
    // The running replay keeps its own model until the next install; only the figures change.
}

void LiveApp::requestEdit(const std::string& path, const std::string& value) {
    const WhatIf w = applyWhatIf(editBase(), path, value, base_dir_);
    if (!w.edit.ok()) {
        edit_error_ = path + " = " + value + ": " + firstError(w.edit.diagnostics);
        return;
    }
    edit_error_.clear();
    submit(*w.edit.scenario);
}

const Scenario& LiveApp::editBase() const {
    // Edits stack on the newest scenario: submitted (waiting or being evaluated), else shown.
    if (submitted_)
        return *submitted_;
    return current_.scenario;
}

void LiveApp::stepReplay() {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < steps_per_frame_; ++i)
        replay_->advance(i + 1 == steps_per_frame_ ? &gpu_metrics_ : nullptr);
    replay_ms_ = msSince(t0);
    updateMapColors();
}

const std::vector<float>& LiveApp::metricValues() const {
    switch (metric_) {
    case Metric::load:
        return gpu_metrics_.peak_ratio;
    case Metric::a2a:
        return gpu_metrics_.a2a_recv_bytes;
    case Metric::memory:
        return gpu_metrics_.memory_share;
    case Metric::idle:
        return gpu_metrics_.idle_s;
    }
    return gpu_metrics_.load_factor;
}

void LiveApp::updateMapColors() {
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<float>& v = metricValues();
    float lo = 0, hi = 1;
    if (!v.empty()) {
        const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
        lo = *mn;
        hi = *mx;
    }
    if (metric_ == Metric::memory) { // a fixed scale: 0 .. full HBM (or more, if it overflows)
        lo = 0;
        hi = std::max(1.0f, hi);
    }
    if (hi - lo < 1e-6f * std::max(1.0f, std::abs(hi)))
        lo = hi - std::max(1e-6f, std::abs(hi) * 0.01f); // a flat map is drawn at the top colour
    color_lo_ = lo;
    color_hi_ = hi;
    if (metric_ == Metric::load) { // the shared expert-load scale, neutral at the layer mean
        const LoadRatioScale scale = loadRatioScale(v.empty() ? 1.0 : hi);
        color_lo_ = static_cast<float>(scale.low());
        color_hi_ = static_cast<float>(scale.high);
        map_.setLoadRatios(v, scale);
    } else {
        map_.setValues(v, lo, hi);
    }
    // The eight GPUs with the highest expert load (token slots / their mean) get an outline.
    const std::vector<float>& tokens = gpu_metrics_.load_factor;
    hottest_.clear();
    if (!tokens.empty()) {
        std::vector<int> idx(tokens.size());
        for (size_t i = 0; i < idx.size(); ++i)
            idx[i] = static_cast<int>(i);
        const size_t k = std::min<size_t>(8, idx.size());
        std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(),
                          [&](int a, int b) { return tokens[a] > tokens[b]; });
        if (tokens[idx[0]] > 0)
            hottest_.assign(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k));
    }
    colors_ms_ = msSince(t0);
}

void LiveApp::openFile() {
    LoadResult r = loadScenarioFile(path_buf_);
    if (!r.ok()) {
        file_message_ = formatAll(r.diagnostics);
        return;
    }
    base_dir_ = directoryOf(path_buf_);
    file_message_ = std::string("opened ") + path_buf_;
    save_state_.opened(path_buf_);
    submit(*r.scenario);
}

void LiveApp::requestSave() {
    if (save_state_.overwriteNeedsConfirm(path_buf_))
        confirm_overwrite_ = true;
    else
        saveNow();
}

void LiveApp::saveNow() {
    const std::string err = save_state_.save(editBase(), path_buf_);
    file_message_ = err.empty() ? std::string("saved ") + path_buf_ : err;
    base_dir_ = err.empty() ? directoryOf(path_buf_) : base_dir_;
}

bool LiveApp::confirmClose() {
    if (close_approved_ || !modified())
        return true;
    confirm_close_ = true;
    return false;
}

std::string LiveApp::takeScreenshotRequest() {
    std::string s;
    s.swap(screenshot_request_);
    return s;
}

void LiveApp::renderMap(int fb_w, int fb_h) {
    map_.draw(camera_, map_x_, map_y_, map_w_, map_h_, fb_w, fb_h);
}

} // namespace moe::live
