// moe-live's windows: the menu and dialogs, the control panel (scenario, legend, replay plots,
// what-ifs) and the cluster map with its tooltips, built each frame with Dear ImGui.
#include "live_app.h"

#include "moe/edits.h"
#include "moe/format.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace moe::live {

namespace {

ImU32 rampColor(float t) {
    const uint32_t c = rampRgba(t); // 0xAABBGGRR, the same byte order as ImU32
    return static_cast<ImU32>(c);
}

} // namespace

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
    choiceRow("router balancing", "routing.balancing");
    choiceRow("expert popularity", "routing.model");
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
        if (gpu >= 0 && gpu < p.gpuCount() && gpu < static_cast<int>(gpu_metrics_.tokens.size())) {
            const RankCoords& rc = p.coordsOf(gpu);
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
            ImGui::Text("busiest MoE layer: %.2fx that layer's mean", gpu_metrics_.peak_ratio[gpu]);
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
    const bool load = metric_ == Metric::load;
    for (int i = 0; i < 64; ++i)
        dl->AddRectFilled(
            ImVec2(p0.x + w * i / 64, p0.y), ImVec2(p0.x + w * (i + 1) / 64, p0.y + h),
            load ? static_cast<ImU32>(packRgba(loadScaleColorAt(i / 63.0))) : rampColor(i / 63.0f));
    ImGui::Dummy(ImVec2(w, h));
    char lo[48], hi[48];
    switch (metric_) {
    case Metric::load: // the GPU's busiest MoE layer, x that layer's mean; 1x is neutral
        std::snprintf(lo, sizeof lo, "<=%.2fx", color_lo_);
        std::snprintf(hi, sizeof hi, ">=%.2fx layer mean", color_hi_);
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

} // namespace moe::live
