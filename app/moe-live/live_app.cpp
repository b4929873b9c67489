// moe-live's user interface: controls, replay plots, the cluster map's colours and tooltips.
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

std::string formatBytes(double bytes) {
    char buf[64];
    const char* units[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (std::abs(bytes) >= 1000 && u < 4) {
        bytes /= 1000;
        ++u;
    }
    std::snprintf(buf, sizeof buf, "%.3g %s", bytes, units[u]);
    return buf;
}

ImU32 rampColor(float t) {
    const uint32_t c = rampRgba(t); // 0xAABBGGRR, the same byte order as ImU32
    return static_cast<ImU32>(c);
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
    cache.link_traffic = false;
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
    frame_cache_.link_traffic = false;
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
        return gpu_metrics_.load_factor;
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
    map_.setValues(v, lo, hi);
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

void LiveApp::uiDialogs() {
    if (confirm_overwrite_) {
        ImGui::OpenPopup("Replace file?");
        confirm_overwrite_ = false;
    }
    if (confirm_close_) {
        ImGui::OpenPopup("Unsaved changes");
        confirm_close_ = false;
    }
    if (ImGui::BeginPopupModal("Replace file?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::Text("%s already exists and is not the file this scenario came from.", path_buf_);
        ImGui::Text("Replace it?");
        if (ImGui::Button("Replace")) {
            saveNow();
            ImGui::CloseCurrentPopup();
        }
        ImGui::SameLine();
        if (ImGui::Button("Cancel"))
            ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
    }
    if (ImGui::BeginPopupModal("Unsaved changes", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
        ImGui::Text("The scenario has unsaved changes. Save them to %s?", path_buf_);
        if (ImGui::Button("Save")) {
            saveNow();
            close_approved_ = !modified();
            ImGui::CloseCurrentPopup();
        }
        ImGui::SameLine();
        if (ImGui::Button("Discard")) {
            close_approved_ = true;
            ImGui::CloseCurrentPopup();
        }
        ImGui::SameLine();
        if (ImGui::Button("Cancel"))
            ImGui::CloseCurrentPopup();
        ImGui::EndPopup();
    }
}

std::string LiveApp::takeScreenshotRequest() {
    std::string s;
    s.swap(screenshot_request_);
    return s;
}

void LiveApp::buildFrame(int fb_w, int fb_h) {
    pollJob();
    if (reevaluate_every_frame_)
        reevaluateNow();
    if (playing_)
        stepReplay();
    uiMenu();
    uiDialogs();
    const float menu_h = ImGui::GetFrameHeight();
    const float panel_w = std::min(430.0f, fb_w * 0.45f);
    map_x_ = static_cast<int>(panel_w);
    map_y_ = static_cast<int>(menu_h);
    map_w_ = std::max(0, fb_w - map_x_);
    map_h_ = std::max(0, fb_h - map_y_);
    ImGui::SetNextWindowPos(ImVec2(0, menu_h));
    ImGui::SetNextWindowSize(ImVec2(panel_w, static_cast<float>(fb_h) - menu_h));
    ImGui::Begin("moe-live", nullptr,
                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                     ImGuiWindowFlags_NoTitleBar);
    uiControls();
    uiLegend();
    uiReplay();
    uiWhatIfs();
    ImGui::End();
    uiMap(fb_w, fb_h);
}

void LiveApp::uiMenu() {
    if (!ImGui::BeginMainMenuBar())
        return;
    if (ImGui::BeginMenu("File")) {
        if (ImGui::MenuItem("Open scenario (path in the panel)"))
            openFile();
        if (ImGui::MenuItem("Save scenario"))
            requestSave();
        if (ImGui::MenuItem("Save screenshot")) {
            screenshot_request_ = shot_buf_;
            file_message_ = std::string("screenshot ") + shot_buf_;
        }
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Color by")) {
        for (Metric m : {Metric::load, Metric::a2a, Metric::memory, Metric::idle})
            if (ImGui::MenuItem(toString(m), nullptr, metric_ == m)) {
                metric_ = m;
                updateMapColors();
            }
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("View")) {
        if (ImGui::MenuItem("Fit map"))
            camera_fitted_ = false;
        ImGui::EndMenu();
    }
    const Report& r = *current_.report;
    ImGui::Text("   %s%s  |  %d GPUs  |  step %.3f s (evaluate)  |  evaluate %.1f ms%s",
                current_.scenario.name.c_str(), modified() ? " (unsaved changes)" : "", r.gpus,
                r.step_time_s, current_.evaluate_ms, submitted_ ? "  |  evaluating..." : "");
    ImGui::EndMainMenuBar();
}

void LiveApp::uiControls() {
    if (!ImGui::CollapsingHeader("Scenario", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    ImGui::InputText("file", path_buf_, sizeof path_buf_);
    if (ImGui::Button("Open"))
        openFile();
    ImGui::SameLine();
    if (ImGui::Button(modified() ? "Save*" : "Save"))
        requestSave();
    ImGui::SameLine();
    if (ImGui::Button("Screenshot"))
        screenshot_request_ = shot_buf_;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-1);
    ImGui::InputText("##shot", shot_buf_, sizeof shot_buf_);
    if (!file_message_.empty())
        ImGui::TextWrapped("%s", file_message_.c_str());

    const Report& r = *current_.report;
    const Scenario& s = current_.scenario;
    ImGui::TextWrapped("%d GPUs = %d nodes x %d, %s", r.gpus, s.cluster.nodes,
                       s.cluster.gpus_per_node, racks_text_.c_str());
    ImGui::Text("TP%d CP%d PP%d DP%d EP%d ETP%d  %s", s.layout.tp, s.layout.cp, s.layout.pp,
                s.layout.dp, s.layout.ep, s.layout.etp, toString(s.layout.order).c_str());
    ImGui::Text("step %.3f s   MFU %.1f%%   %.0f tok/s/GPU", r.step_time_s, r.throughput.mfu * 100,
                r.throughput.tokens_per_s_per_gpu);
    ImGui::Text("memory %.1f / %.1f GB%s", r.memory.total_bytes / 1e9, r.memory.hbm_bytes / 1e9,
                r.memory.fits ? "" : "  (does not fit)");
    ImGui::Text("eval %.1f ms  replay %.2f ms  colours %.2f ms  frame %.1f ms",
                current_.evaluate_ms, replay_ms_, colors_ms_,
                1000.0f / std::max(1.0f, ImGui::GetIO().Framerate));
    ImGui::Checkbox("re-evaluate every frame", &reevaluate_every_frame_);
}

void LiveApp::uiReplay() {
    if (!ImGui::CollapsingHeader("Replay", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    if (ImGui::Button(playing_ ? "Pause" : "Play"))
        playing_ = !playing_;
    ImGui::SameLine();
    if (ImGui::Button("Step"))
        stepReplay();
    ImGui::SameLine();
    if (ImGui::Button("Restart")) {
        replay_->reset();
        replay_->advance(&gpu_metrics_);
        updateMapColors();
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-1);
    ImGui::SliderInt("##speed", &steps_per_frame_, 1, 20, "%d steps/frame");
    const StepSample& last = replay_->last();
    const std::vector<double>& times = replay_->stepTimes();
    ImGui::Text("step %llu: %.4f s  p50 %.4f  p99 %.4f  max imbalance %.2fx",
                static_cast<unsigned long long>(last.step), last.step_time_s, replay_->p50().back(),
                replay_->p99().back(), last.max_imbalance);

    // Step time per step with its running p50 (cyan) and p99 (orange): one draw-list polyline
    // each over the last 400 steps.
    const ImVec2 size(ImGui::GetContentRegionAvail().x, 110);
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(p0, ImVec2(p0.x + size.x, p0.y + size.y), IM_COL32(20, 20, 26, 255));
    const size_t n = times.size();
    const size_t first = n > 400 ? n - 400 : 0;
    double lo = 1e300, hi = -1e300;
    for (size_t i = first; i < n; ++i) {
        lo = std::min({lo, times[i], replay_->p50()[i]});
        hi = std::max({hi, times[i], replay_->p99()[i]});
    }
    if (hi <= lo)
        hi = lo + std::max(1e-6, std::abs(lo) * 0.01);
    const auto point = [&](size_t i, double v) {
        const float span = static_cast<float>(std::max<size_t>(n - first, 2) - 1);
        const float x = p0.x + 4 + (size.x - 8) * static_cast<float>(i - first) / span;
        const float y = p0.y + size.y - 4 - (size.y - 8) * static_cast<float>((v - lo) / (hi - lo));
        return ImVec2(x, y);
    };
    std::vector<ImVec2> line;
    const std::pair<const std::vector<double>*, ImU32> series[] = {
        {&times, IM_COL32(220, 220, 220, 255)},
        {&replay_->p50(), IM_COL32(80, 200, 230, 255)},
        {&replay_->p99(), IM_COL32(250, 150, 60, 255)}};
    for (const auto& [values, color] : series) {
        line.clear();
        for (size_t i = first; i < n; ++i)
            line.push_back(point(i, (*values)[i]));
        if (line.size() >= 2)
            dl->AddPolyline(line.data(), static_cast<int>(line.size()), color, 0, 1.5f);
    }
    char label[96];
    std::snprintf(label, sizeof label, "%.4f s", hi);
    dl->AddText(ImVec2(p0.x + 4, p0.y + 2), IM_COL32(160, 160, 160, 255), label);
    std::snprintf(label, sizeof label, "%.4f s", lo);
    dl->AddText(ImVec2(p0.x + 4, p0.y + size.y - 16), IM_COL32(160, 160, 160, 255), label);
    ImGui::Dummy(size);
    ImGui::TextColored(ImVec4(0.86f, 0.86f, 0.86f, 1), "step time");
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(0.31f, 0.78f, 0.9f, 1), "running p50");
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(0.98f, 0.59f, 0.24f, 1), "running p99");

    // Imbalance per MoE layer of this step (busiest EP rank / mean).
    std::vector<float> per_layer(last.imbalance_per_layer.begin(), last.imbalance_per_layer.end());
    if (!per_layer.empty()) {
        const float top = *std::max_element(per_layer.begin(), per_layer.end());
        char overlay[64];
        std::snprintf(overlay, sizeof overlay, "imbalance per layer (max %.2fx)", top);
        ImGui::PlotHistogram("##imb", per_layer.data(), static_cast<int>(per_layer.size()), 0,
                             overlay, 1.0f, std::max(1.01f, top),
                             ImVec2(ImGui::GetContentRegionAvail().x, 70));
    }
}

bool LiveApp::choiceRow(const char* label, const std::string& path) {
    const auto it = current_.candidates.find(path);
    if (it == current_.candidates.end())
        return false;
    const std::optional<std::string> current = getScenarioField(current_.scenario, path);
    ImGui::TextUnformatted(label);
    bool clicked = false;
    ImGui::PushID(path.c_str());
    float x = ImGui::GetCursorPosX();
    const float right = ImGui::GetContentRegionAvail().x + ImGui::GetCursorPosX();
    for (size_t i = 0; i < it->second.size(); ++i) {
        const Candidate& c = it->second[i];
        const float w = ImGui::CalcTextSize(c.value.c_str()).x + 10;
        if (i > 0) {
            if (x + w + 4 < right)
                ImGui::SameLine(0, 4);
            else
                x = ImGui::GetCursorPosX();
        }
        const bool selected = current && *current == c.value;
        const bool invalid = !c.reason.empty();
        ImGui::PushID(static_cast<int>(i));
        ImGui::BeginDisabled(invalid);
        if (selected)
            ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.2f, 0.5f, 0.3f, 1));
        if (ImGui::Button(c.value.c_str(), ImVec2(w, 0)) && !selected) {
            requestEdit(path, c.value);
            clicked = true;
        }
        if (selected)
            ImGui::PopStyleColor();
        ImGui::EndDisabled();
        if ((invalid || !c.effect.empty()) &&
            ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
            const char* sep = invalid && !c.effect.empty() ? "\n" : "";
            ImGui::SetTooltip("%s%s%s", c.effect.c_str(), sep, c.reason.c_str());
        }
        ImGui::PopID();
        x = ImGui::GetItemRectMax().x - ImGui::GetWindowPos().x + 4;
    }
    ImGui::PopID();
    return clicked;
}

void LiveApp::sliderField(const char* label, const std::string& path, float lo, float hi, bool log,
                          const char* format) {
    // The newest edit, not the last evaluated one: a drag must not snap back while the worker
    // evaluates.
    const std::optional<std::string> text = getScenarioField(editBase(), path);
    float value = text ? std::strtof(text->c_str(), nullptr) : lo;
    ImGui::SetNextItemWidth(-150);
    if (ImGui::SliderFloat(label, &value, lo, hi, format,
                           log ? ImGuiSliderFlags_Logarithmic : ImGuiSliderFlags_None)) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.4g", value);
        requestEdit(path, buf);
    }
    if (ImGui::IsItemHovered()) {
        const FieldInfo* info = findScenarioField(path);
        if (info)
            ImGui::SetTooltip("%s\n%s", path.c_str(), info->tooltip.c_str());
    }
}

void LiveApp::uiWhatIfs() {
    if (!ImGui::CollapsingHeader("What-ifs", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    ImGui::TextDisabled("greyed values are invalid: hover for the reason");
    if (!edit_error_.empty())
        ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "%s", edit_error_.c_str());
    choiceRow("nodes", "cluster.nodes");
    choiceRow("GPUs per node", "cluster.gpus_per_node");
    choiceRow("scale-up domain", "cluster.scale_up.domain");
    sliderField("NVLink GB/s", "cluster.scale_up.bandwidth_gbps", 10, 2000, true, "%.0f");
    sliderField("NIC GB/s", "cluster.scale_out.bandwidth_gbps", 5, 400, true, "%.1f");
    choiceRow("EP", "layout.ep");
    choiceRow("TP", "layout.tp");
    choiceRow("PP", "layout.pp");
    choiceRow("DP", "layout.dp");
    choiceRow("ETP", "layout.etp");
    choiceRow("rank order", "layout.order");
    choiceRow("schedule", "layout.schedule");
    choiceRow("node limit (max nodes per token)", "layout.max_nodes_per_token");
    choiceRow("experts", "model.experts");
    choiceRow("top-k", "model.top_k");
    sliderField("Zipf alpha", "routing.zipf_alpha", 0, 2, false, "%.2f");
    sliderField("balance", "routing.balance", 0, 1, false, "%.2f");
    sliderField("capacity factor", "model.capacity_factor", 0, 4, false, "%.2f");
    ImGui::TextDisabled("(capacity 0 = dropless; %.1f ms to check the candidates)",
                        current_.candidates_ms);
}

void LiveApp::uiMap(int fb_w, int fb_h) {
    (void)fb_w;
    (void)fb_h;
    if (map_w_ <= 0 || map_h_ <= 0)
        return;
    if (!camera_fitted_) {
        const float aspect = static_cast<float>(map_w_) / map_h_;
        const MapLayout fresh = MapLayout::make(layout_.gpus, layout_.gpus_per_node,
                                                layout_.rack_nodes, layout_.nodes_per_rack, aspect);
        if (fresh.racks_per_row != layout_.racks_per_row) {
            layout_ = fresh;
            map_.setLayout(layout_);
            updateMapColors();
        }
        camera_.fit(layout_, static_cast<float>(map_w_), static_cast<float>(map_h_));
        camera_fitted_ = true;
    }
    ImGuiIO& io = ImGui::GetIO();
    const ImVec2 mouse = io.MousePos;
    // Headless runs (--frames) ignore the pointer: Xvfb parks it mid-screen.
    const bool in_map = options_.frames == 0 && !io.WantCaptureMouse && mouse.x >= map_x_ &&
                        mouse.y >= map_y_ && mouse.x < map_x_ + map_w_ && mouse.y < map_y_ + map_h_;
    if (in_map) {
        if (io.MouseWheel != 0)
            camera_.zoomAt(std::pow(1.2f, io.MouseWheel), mouse.x - map_x_, mouse.y - map_y_);
        if (ImGui::IsMouseDragging(ImGuiMouseButton_Left) ||
            ImGui::IsMouseDragging(ImGuiMouseButton_Right)) {
            camera_.origin_x -= io.MouseDelta.x / camera_.scale;
            camera_.origin_y -= io.MouseDelta.y / camera_.scale;
        }
        if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left))
            camera_fitted_ = false;
    }

    // Overlays on the background draw list: under the windows, over the map.
    ImDrawList* bg = ImGui::GetBackgroundDrawList();
    bg->PushClipRect(
        ImVec2(static_cast<float>(map_x_), static_cast<float>(map_y_)),
        ImVec2(static_cast<float>(map_x_ + map_w_), static_cast<float>(map_y_ + map_h_)));
    // A partly filled rack gets a dim frame at its capacity, so its free slots read as free
    // rack space rather than as the end of the map. Grey, so it never counts as a cell; on the
    // rack's edge, which the inset cells keep clear of and the fitted view keeps on screen.
    for (const int rack : layout_.partial_racks) {
        const auto [wx, wy] = layout_.rackOrigin(rack);
        const ImVec2 lo(map_x_ + (wx - camera_.origin_x) * camera_.scale,
                        map_y_ + (wy - camera_.origin_y) * camera_.scale);
        const ImVec2 hi(lo.x + layout_.rack_w * camera_.scale,
                        lo.y + layout_.rack_h * camera_.scale);
        if (hi.x < map_x_ || hi.y < map_y_ || lo.x > map_x_ + map_w_ || lo.y > map_y_ + map_h_)
            continue;
        bg->AddRect(lo, hi, IM_COL32(96, 96, 104, 255));
    }
    // Hottest GPUs: white outlines at least 6 pixels wide, so they show at any zoom.
    for (const int gpu : hottest_) {
        const auto [wx, wy] = layout_.cellOrigin(gpu);
        const float cx = map_x_ + (wx + 0.5f - camera_.origin_x) * camera_.scale;
        const float cy = map_y_ + (wy + 0.5f - camera_.origin_y) * camera_.scale;
        const float half = std::max(3.0f, camera_.scale * 0.5f) + 1.0f;
        bg->AddRect(ImVec2(cx - half, cy - half), ImVec2(cx + half, cy + half),
                    IM_COL32(255, 255, 255, 255), 0, 0, 1.5f);
    }
    bg->PopClipRect();

    if (in_map) {
        const float wx = camera_.origin_x + (mouse.x - map_x_) / camera_.scale;
        const float wy = camera_.origin_y + (mouse.y - map_y_) / camera_.scale;
        const int gpu = layout_.gpuAt(wx, wy);
        const Placement& p = current_.model->placement();
        if (gpu >= 0 && gpu < static_cast<int>(p.coords.size()) &&
            gpu < static_cast<int>(gpu_metrics_.tokens.size())) {
            const RankCoords& rc = p.coords[static_cast<size_t>(gpu)];
            const int node = gpu / layout_.gpus_per_node;
            const int rack = layout_.node_rack[static_cast<size_t>(node)];
            ImGui::BeginTooltip();
            ImGui::Text("GPU %d  (node %d, rack %d: %d of %d nodes)", gpu, node, rack,
                        layout_.rack_nodes[static_cast<size_t>(rack)], layout_.nodes_per_rack);
            ImGui::Text("TP %d  CP %d  DP %d  PP %d  |  EP %d  ETP %d  EDP %d", rc.tp, rc.cp, rc.dp,
                        rc.pp, rc.ep, rc.etp, rc.edp);
            ImGui::Separator();
            ImGui::Text("step %llu", static_cast<unsigned long long>(replay_->last().step));
            ImGui::Text("token slots / micro-batch: %.0f  (%.2fx mean)", gpu_metrics_.tokens[gpu],
                        gpu_metrics_.load_factor[gpu]);
            ImGui::Text("all-to-all received: %s / step",
                        formatBytes(gpu_metrics_.a2a_recv_bytes[gpu]).c_str());
            ImGui::Text("idle: %.3f s / step", gpu_metrics_.idle_s[gpu]);
            ImGui::Text("memory: %.0f%% of HBM", gpu_metrics_.memory_share[gpu] * 100);
            if (std::find(hottest_.begin(), hottest_.end(), gpu) != hottest_.end())
                ImGui::TextColored(ImVec4(1, 0.8f, 0.3f, 1), "one of the 8 hottest GPUs");
            ImGui::EndTooltip();
        }
    }
}

void LiveApp::uiLegend() {
    if (!ImGui::CollapsingHeader("Map", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    int m = static_cast<int>(metric_);
    const char* names[] = {toString(Metric::load), toString(Metric::a2a), toString(Metric::memory),
                           toString(Metric::idle)};
    ImGui::SetNextItemWidth(-60);
    if (ImGui::Combo("colour", &m, names, 4)) {
        metric_ = static_cast<Metric>(m);
        updateMapColors();
    }
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    const float w = 260, h = 12;
    for (int i = 0; i < 64; ++i)
        dl->AddRectFilled(ImVec2(p0.x + w * i / 64, p0.y),
                          ImVec2(p0.x + w * (i + 1) / 64, p0.y + h), rampColor(i / 63.0f));
    ImGui::Dummy(ImVec2(w, h));
    char lo[48], hi[48];
    switch (metric_) {
    case Metric::load:
        std::snprintf(lo, sizeof lo, "%.2fx", color_lo_);
        std::snprintf(hi, sizeof hi, "%.2fx mean", color_hi_);
        break;
    case Metric::a2a:
        std::snprintf(lo, sizeof lo, "%s", formatBytes(color_lo_).c_str());
        std::snprintf(hi, sizeof hi, "%s", formatBytes(color_hi_).c_str());
        break;
    case Metric::memory:
        std::snprintf(lo, sizeof lo, "%.0f%%", color_lo_ * 100);
        std::snprintf(hi, sizeof hi, "%.0f%% of HBM", color_hi_ * 100);
        break;
    case Metric::idle:
        std::snprintf(lo, sizeof lo, "%.3f s", color_lo_);
        std::snprintf(hi, sizeof hi, "%.3f s", color_hi_);
        break;
    }
    ImGui::Text("%s", lo);
    ImGui::SameLine(w - ImGui::CalcTextSize(hi).x + 8);
    ImGui::Text("%s", hi);
    ImGui::Text("%d cells, 8 hottest outlined; wheel zooms, drag pans", map_.instances());
}

void LiveApp::renderMap(int fb_w, int fb_h) {
    map_.draw(camera_, map_x_, map_y_, map_w_, map_h_, fb_w, fb_h);
}

} // namespace moe::live
