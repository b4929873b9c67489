// moe-live: an immediate-mode explorer for very large MoE clusters (Dear ImGui + GLFW +
// OpenGL 3.3), linking moe_core only.
//
//   moe-live [FILE.yaml] [--set key=value ...] [--gpus N] [--metric load|a2a|memory|idle]
//            [--play] [--frames N] [--screenshot OUT.png] [--size WxH] [--bench] [--version]
#include "live_app.h"
#include "version.h"

#include "moe/edits.h"
#include "moe/scenario_io.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <stb_image_write.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

using namespace moe;
using namespace moe::live;

namespace {

const char* kUsage =
    "Usage: moe-live [FILE.yaml] [options]\n"
    "\n"
    "Explores a Mixture-of-Experts training cluster of up to tens of thousands of GPUs live: a\n"
    "map of every GPU coloured by expert load, all-to-all traffic, memory or idle time, the\n"
    "step replayed over time, and what-ifs applied as you type.\n"
    "\n"
    "Options:\n"
    "  --set key=value     override a field (same syntax and checks as moe-plan --set)\n"
    "  --gpus N            scale the cluster to N GPUs (nodes, dp and global batch scale)\n"
    "  --metric M          colour the map by load | a2a | memory | idle\n"
    "  --play              start the replay playing\n"
    "  --frames N          run N frames (replay playing), then exit\n"
    "  --screenshot PNG    save the last frame as PNG and exit (one frame unless --frames)\n"
    "  --size WxH          window size in pixels (default 1600x1000)\n"
    "  --bench             print evaluate, replay and frame-building times, then exit\n"
    "  --version           print the version and exit\n"
    "  -h, --help          print this help and exit\n"
    "\n"
    "Without FILE the built-in default scenario is used.\n";

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double cpu_s() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/// Writes the framebuffer's RGB content as PNG (top row first).
bool writeScreenshot(const std::string& path, int w, int h) {
    std::vector<unsigned char> pixels(static_cast<size_t>(w) * h * 3);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, pixels.data());
    stbi_flip_vertically_on_write(1); // GL's rows run bottom-up
    return stbi_write_png(path.c_str(), w, h, 3, pixels.data(), w * 3) != 0;
}

struct FrameTimes {
    double build_ms = 0;     ///< ImGui NewFrame .. Render, map colours and replay included
    double build_cpu_ms = 0; ///< the same in this thread's CPU time
    double gpu_ms = 0;       ///< GL submission and the rasterizer (glFinish)
};

FrameTimes runFrame(GLFWwindow* window, LiveApp& app, bool finish) {
    FrameTimes t;
    glfwPollEvents();
    int fb_w = 0, fb_h = 0;
    glfwGetFramebufferSize(window, &fb_w, &fb_h);
    const double t0 = now_s(), c0 = cpu_s();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    app.buildFrame(fb_w, fb_h);
    ImGui::Render();
    const double t1 = now_s();
    t.build_cpu_ms = (cpu_s() - c0) * 1e3;
    glViewport(0, 0, fb_w, fb_h);
    glClearColor(0.10f, 0.10f, 0.12f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    app.renderMap(fb_w, fb_h);
    glViewport(0, 0, fb_w, fb_h);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (finish)
        glFinish();
    t.build_ms = (t1 - t0) * 1e3;
    t.gpu_ms = (now_s() - t1) * 1e3;
    return t;
}

int benchCpu(const Scenario& s) {
    std::printf("moe-live bench: %s, %d GPUs (one core, wall time; cpu = this thread's CPU)\n",
                s.name.c_str(), s.cluster.gpuCount());
    std::vector<double> wall, cpu;
    Report report;
    for (int i = 0; i < 5; ++i) {
        const double w0 = now_s(), c0 = cpu_s();
        report = evaluate(s);
        wall.push_back((now_s() - w0) * 1e3);
        cpu.push_back((cpu_s() - c0) * 1e3);
    }
    std::printf("  evaluate()                      median %8.2f ms   (cpu %.2f ms, 5 runs)\n",
                median(wall), median(cpu));
    auto model = std::make_shared<ReplayModel>(s, report);
    Replay replay(model);
    double w0 = now_s(), c0 = cpu_s();
    for (int i = 0; i < 1000; ++i)
        replay.advance();
    std::printf(
        "  replay, 1000 steps, no drawing  %8.3f s    (cpu %.3f s)  p50 %.4f s  p99 %.4f s\n",
        now_s() - w0, cpu_s() - c0, replay.p50().back(), replay.p99().back());
    GpuStepMetrics gpus;
    wall.clear();
    for (int i = 0; i < 20; ++i) {
        w0 = now_s();
        replay.advance(&gpus);
        wall.push_back((now_s() - w0) * 1e3);
    }
    std::printf("  replay step + per-GPU metrics   median %8.2f ms\n", median(wall));
    return 0;
}

/// Reads one --metric value; false for an unknown name.
bool parseMetric(const std::string& v, Metric& metric) {
    if (v == "load")
        metric = Metric::load;
    else if (v == "a2a")
        metric = Metric::a2a;
    else if (v == "memory")
        metric = Metric::memory;
    else if (v == "idle")
        metric = Metric::idle;
    else
        return false;
    return true;
}

/// Reads the command line into `o`; an exit status when the program is done (help, version,
/// a usage error), else nullopt.
std::optional<int> parseCommandLine(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "moe-live: %s needs a value\n%s", a.c_str(), kUsage);
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (a == "--version") {
            std::printf("moe-live %s\n", moe::cmdline::version());
            return 0;
        } else if (a == "--set") {
            o.overrides.push_back(next());
        } else if (a == "--gpus") {
            o.gpus = std::atoi(next().c_str());
        } else if (a == "--frames") {
            o.frames = std::max(1, std::atoi(next().c_str()));
            o.play = true;
        } else if (a == "--screenshot") {
            o.screenshot = next();
        } else if (a == "--size") {
            const std::string v = next();
            if (std::sscanf(v.c_str(), "%dx%d", &o.width, &o.height) != 2 || o.width < 200 ||
                o.height < 200) {
                std::fprintf(stderr, "moe-live: --size %s: expected WxH, at least 200x200\n",
                             v.c_str());
                return 2;
            }
        } else if (a == "--metric") {
            const std::string v = next();
            if (!parseMetric(v, o.metric)) {
                std::fprintf(stderr, "moe-live: --metric %s: expected load|a2a|memory|idle\n",
                             v.c_str());
                return 2;
            }
        } else if (a == "--play") {
            o.play = true;
        } else if (a == "--bench") {
            o.bench = true;
        } else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "moe-live: unknown option %s\n%s", a.c_str(), kUsage);
            return 2;
        } else if (o.file.empty()) {
            o.file = a;
        } else {
            std::fprintf(stderr, "moe-live: one scenario file only\n%s", kUsage);
            return 2;
        }
    }
    if (!o.screenshot.empty() && o.frames == 0)
        o.frames = 1;
    return std::nullopt;
}

/// An OpenGL 3.3 core window with Dear ImGui on it; nullptr (after saying why) without one.
GLFWwindow* openWindow(const Options& o) {
    glfwSetErrorCallback([](int code, const char* text) {
        std::fprintf(stderr, "moe-live: GLFW error %d: %s\n", code, text);
    });
    if (!glfwInit()) {
        std::fprintf(stderr, "moe-live: no display (GLFW could not initialize); run under "
                             "xvfb-run for headless use\n");
        return nullptr;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_SAMPLES, 0); // exact cell edges: the smoke test counts cells by pixel
    GLFWwindow* window = glfwCreateWindow(o.width, o.height, "moe-live", nullptr, nullptr);
    if (!window) {
        std::fprintf(stderr, "moe-live: could not create an OpenGL 3.3 core window\n");
        glfwTerminate();
        return nullptr;
    }
    glfwMakeContextCurrent(window);
    const bool headless = o.frames > 0 || o.bench;
    glfwSwapInterval(headless ? 0 : 1);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr; // no imgui.ini beside the user's files
    ImGui::StyleColorsDark();
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 330 core");
    return window;
}

void closeWindow(GLFWwindow* window) {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
}

/// --bench: frames with the replay playing: CPU build time (replay step, map colours, ImGui
/// draw lists) and GL + software rasterizer time, reported separately; then the same with a
/// full evaluate() in every frame, and with a slider dragged.
void benchFrames(GLFWwindow* window, LiveApp& app) {
    app.setPlaying(true);
    std::vector<double> build, build_cpu, gpu, eval_build, eval_build_cpu;
    for (int f = 0; f < 60; ++f) {
        const FrameTimes t = runFrame(window, app, true);
        glfwSwapBuffers(window);
        if (f >= 5) {
            build.push_back(t.build_ms);
            build_cpu.push_back(t.build_cpu_ms);
            gpu.push_back(t.gpu_ms);
        }
    }
    std::vector<double> colors;
    for (int f = 0; f < 20; ++f) {
        const double t0 = now_s();
        app.updateMapColors();
        colors.push_back((now_s() - t0) * 1e3);
    }
    for (int f = 0; f < 10; ++f) {
        const double t0 = now_s(), c0 = cpu_s();
        app.reevaluateNow();
        const double eval_ms = (now_s() - t0) * 1e3, eval_cpu_ms = (cpu_s() - c0) * 1e3;
        const FrameTimes t = runFrame(window, app, true);
        glfwSwapBuffers(window);
        eval_build.push_back(eval_ms + t.build_ms);
        eval_build_cpu.push_back(eval_cpu_ms + t.build_cpu_ms);
    }
    // A slider dragged: every frame edits Zipf alpha (setScenarioField, the same edit the slider
    // makes) and re-evaluates the edited scenario.
    std::vector<double> drag, drag_cpu;
    const Scenario before_drag = app.scenario();
    for (int f = 0; f < 10; ++f) {
        const double t0 = now_s(), c0 = cpu_s();
        const FieldEditResult edit =
            setScenarioField(before_drag, "routing.zipf_alpha", f % 2 == 0 ? "0.9" : "1.1");
        if (!edit.ok())
            break;
        app.reevaluateNow(&*edit.scenario);
        const double eval_ms = (now_s() - t0) * 1e3, eval_cpu_ms = (cpu_s() - c0) * 1e3;
        const FrameTimes t = runFrame(window, app, true);
        glfwSwapBuffers(window);
        drag.push_back(eval_ms + t.build_ms);
        drag_cpu.push_back(eval_cpu_ms + t.build_cpu_ms);
    }
    std::printf("  what-if buttons checked         %8.2f ms  (one validated edit per "
                "offered value, on the worker thread after each edit)\n",
                app.candidatesMs());
    std::printf("  map colours (instance buffer)   median %8.2f ms  (%d cells)\n", median(colors),
                app.cellsDrawn());
    std::printf("  frame build, replay playing     median %8.2f ms   (cpu %.2f ms: "
                "replay step, colours, ImGui draw lists)\n",
                median(build), median(build_cpu));
    std::printf("  frame build + evaluate()        median %8.2f ms   (cpu %.2f ms: "
                "per-frame re-evaluation)\n",
                median(eval_build), median(eval_build_cpu));
    if (!drag.empty())
        std::printf("  frame build + edit + evaluate() median %8.2f ms   (cpu %.2f ms: "
                    "a Zipf-alpha slider dragged, one edit per frame)\n",
                    median(drag), median(drag_cpu));
    std::printf("  GL submit + Mesa rasterizer     median %8.2f ms  (excluded from "
                "the 16 ms budget)\n",
                median(gpu));
}

/// Saves the window's framebuffer; false when the file cannot be written.
bool saveFramebuffer(GLFWwindow* window, const std::string& path) {
    int w = 0, h = 0;
    glfwGetFramebufferSize(window, &w, &h);
    return writeScreenshot(path, w, h);
}

/// --frames N [--screenshot PNG]: N frames without waiting for input, the last one saved.
int runScriptedFrames(GLFWwindow* window, LiveApp& app, const Options& o) {
    int status = 0;
    for (int f = 0; f < o.frames; ++f) {
        runFrame(window, app, false);
        if (f + 1 == o.frames && !o.screenshot.empty() && !saveFramebuffer(window, o.screenshot)) {
            std::fprintf(stderr, "moe-live: could not write %s\n", o.screenshot.c_str());
            status = 1;
        }
        glfwSwapBuffers(window);
    }
    const auto rect = app.mapRect();
    std::printf("moe-live: %d GPUs, %d cells drawn, %d frames, map %d %d %d %d\n", app.gpuCount(),
                app.cellsDrawn(), o.frames, rect[0], rect[1], rect[2], rect[3]);
    std::fflush(stdout);
    return status;
}

/// The interactive loop, until the window closes (unsaved changes ask first).
void runInteractive(GLFWwindow* window, LiveApp& app) {
    while (!app.closeApproved()) {
        // Closing with unsaved changes asks Save / Discard / Cancel first.
        if (glfwWindowShouldClose(window)) {
            if (app.confirmClose())
                break;
            glfwSetWindowShouldClose(window, GLFW_FALSE);
        }
        runFrame(window, app, false);
        const std::string shot = app.takeScreenshotRequest();
        if (!shot.empty() && !saveFramebuffer(window, shot))
            std::fprintf(stderr, "moe-live: could not write %s\n", shot.c_str());
        glfwSwapBuffers(window);
    }
}

/// The explorer on an open window: bench, scripted frames or the interactive loop.
int runApp(GLFWwindow* window, const Options& o, const Scenario& scenario,
           const std::string& base_dir) {
    LiveApp app(o);
    const char* gl_error = app.initGl();
    if (gl_error && *gl_error) {
        std::fprintf(stderr, "moe-live: %s\n", gl_error);
        return 3;
    }
    app.start(scenario, base_dir);
    if (o.bench) {
        benchFrames(window, app);
        return 0;
    }
    if (o.frames > 0)
        return runScriptedFrames(window, app, o);
    runInteractive(window, app);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    if (const std::optional<int> done = parseCommandLine(argc, argv, o))
        return *done;

    std::string error;
    const std::optional<Scenario> scenario = loadFromOptions(o, error);
    if (!scenario) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 1;
    }
    const std::string base_dir = directoryOf(o.file);
    if (o.bench)
        benchCpu(*scenario);

    GLFWwindow* window = openWindow(o);
    if (!window)
        return o.bench ? 0 : 3;
    const int status = runApp(window, o, *scenario, base_dir);
    closeWindow(window);
    return status;
}
