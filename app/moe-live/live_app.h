#pragma once
// moe-live's state and its ImGui user interface. The scenario is edited only through the core
// edit functions (setScenarioField, the --set override path), evaluated off the UI thread, and
// replayed step by step with moe::Replay; the map is one instanced draw (cluster_map.h).

#include "cluster_map.h"
#include "save_state.h"

#include "moe/evaluate.h"
#include "moe/evaluation_worker.h"
#include "moe/replay.h"
#include "moe/scenario.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace moe::live {

enum class Metric { load, a2a, memory, idle };
const char* toString(Metric m);

struct Options {
    std::string file;                   ///< empty = the built-in default scenario
    std::vector<std::string> overrides; ///< --set key=value, applied like moe-plan's --set
    int gpus = 0;                       ///< --gpus N: scale the cluster to N GPUs (0 = as is)
    int frames = 0;                     ///< run this many frames, then exit (0 = interactive)
    std::string screenshot;             ///< write the last frame here (PNG) and exit
    int width = 1600, height = 1000;
    bool bench = false;
    bool play = false; ///< start the replay playing (implied by --frames)
    Metric metric = Metric::load;
};

/// The directory relative paths in `file` resolve against ("." for a bare name or none).
std::string directoryOf(const std::string& file);

/// Loads the scenario the options name (file or built-in, overrides, --gpus scaling). Returns
/// the scenario or fills `error` with every diagnostic.
std::optional<Scenario> loadFromOptions(const Options& options, std::string& error);

/// `scenario` scaled to `gpus` GPUs: nodes = gpus / gpus_per_node, and dp and the global batch
/// scaled by the same factor (resizeCluster). Nullopt (and `error`) when it does not divide or
/// the result does not validate. `base_dir` resolves a relative routing histogram.
std::optional<Scenario> scaleToGpus(const Scenario& scenario, int gpus, std::string& error,
                                    const std::string& base_dir = ".");

/// One discrete what-if value and whether the scenario accepts it ("" = valid, else why not).
struct Candidate {
    std::string value;
    std::string reason;
    std::string effect; ///< what else the button changes ("" = only its field)
};

/// What one evaluation job produces (on a worker thread).
struct Evaluated {
    Scenario scenario;
    std::shared_ptr<const Report> report;
    std::shared_ptr<const ReplayModel> model;
    std::map<std::string, std::vector<Candidate>> candidates; ///< per field path
    double evaluate_ms = 0;
    double candidates_ms = 0;
};
/// Evaluates `scenario` and its what-if candidates with `cache`. nullopt when `job` (the worker's,
/// if any) says the worker is stopping.
std::optional<Evaluated> evaluateJob(const Scenario& scenario, const std::string& base_dir,
                                     EvaluationCache& cache, const EvaluationJob* job = nullptr);

class LiveApp {
public:
    explicit LiveApp(const Options& options);
    /// Installs a first scenario synchronously (so the first frame already shows it).
    void start(const Scenario& scenario, const std::string& base_dir);
    const char* initGl() { return map_.init(); }

    /// Builds the frame's ImGui windows and the map colours (between ImGui::NewFrame and
    /// ImGui::Render). fb_w/fb_h: framebuffer size in pixels.
    void buildFrame(int fb_w, int fb_h);
    /// Draws the map with OpenGL (after glClear, before ImGui's draw data).
    void renderMap(int fb_w, int fb_h);

    /// A screenshot path the menu asked for since the last call (empty = none).
    std::string takeScreenshotRequest();

    /// True when the shown (or queued) scenario differs from its file: the menu bar says so.
    bool modified() const { return save_state_.modified(editBase()); }
    /// The window was asked to close: true when it may (nothing unsaved, or the user chose Save
    /// or Discard), else false and the "Unsaved changes" dialog opens.
    bool confirmClose();
    /// True once the user answered the close dialog with Save (succeeded) or Discard.
    bool closeApproved() const { return close_approved_; }

    // For the headless runs and the benchmark.
    int gpuCount() const { return layout_.gpus; }
    int cellsDrawn() const { return map_.instances(); }
    std::array<int, 4> mapRect() const { return {map_x_, map_y_, map_w_, map_h_}; }
    void setPlaying(bool playing) { playing_ = playing; }
    /// Advances the replay one step and recolours the map (what a playing frame does).
    void stepReplay();
    /// Recolours the map from the current metrics (the CPU side of the map draw).
    void updateMapColors();
    const Report& report() const { return *current_.report; }
    const Scenario& scenario() const { return current_.scenario; }
    /// Replaces the whole evaluation synchronously (benchmark: per-frame re-evaluation), of
    /// `edited` when given (a slider moved this frame), else of the current scenario.
    void reevaluateNow(const Scenario* edited = nullptr);
    double lastEvaluateMs() const { return current_.evaluate_ms; }
    double candidatesMs() const { return current_.candidates_ms; }

private:
    void install(Evaluated evaluated);
    void pollJob();
    const Scenario& editBase() const;
    void requestEdit(const std::string& path, const std::string& value);
    void submit(const Scenario& scenario);
    void openFile();
    /// Saves to the path in the panel, asking first when that would replace another file.
    void requestSave();
    void saveNow();
    void uiDialogs();
    void uiMenu();
    void uiControls();
    void uiReplay();
    void uiLegend();
    void uiWhatIfs();
    void uiMap(int fb_w, int fb_h);
    bool choiceRow(const char* label, const std::string& path);
    void sliderField(const char* label, const std::string& path, float lo, float hi, bool log,
                     const char* format);
    const std::vector<float>& metricValues() const;

    Options options_;
    std::string base_dir_ = ".";
    /// For evaluations on the GUI thread: the hardware graph and routing samples carry over
    /// from frame to frame while only other fields change (the worker has its own).
    EvaluationCache frame_cache_;
    Evaluated current_;
    std::unique_ptr<Replay> replay_;
    GpuStepMetrics gpu_metrics_;
    /// The newest scenario submitted to the worker and not installed yet: edits build on it.
    std::optional<Scenario> submitted_;
    uint64_t submitted_generation_ = 0;
    LatestResult<Evaluated> finished_; ///< the worker's newest result, taken by pollJob()

    ClusterMap map_;
    MapLayout layout_;
    std::string racks_text_; ///< ClusterSpec::describeRacks of the shown scenario
    MapCamera camera_;
    bool camera_fitted_ = false;
    int map_x_ = 0, map_y_ = 0, map_w_ = 0, map_h_ = 0;
    Metric metric_ = Metric::load;
    float color_lo_ = 0, color_hi_ = 1;
    std::vector<int> hottest_; ///< GPUs outlined

    bool playing_ = false;
    int steps_per_frame_ = 1;
    bool reevaluate_every_frame_ = false;
    std::string edit_error_;
    std::string file_message_;
    char path_buf_[1024] = {};
    SaveState save_state_;
    bool confirm_overwrite_ = false; ///< open the "Replace file?" dialog
    bool confirm_close_ = false;     ///< open the "Unsaved changes" dialog
    bool close_approved_ = false;
    char shot_buf_[1024] = "moe-live.png";
    std::string screenshot_request_;
    double replay_ms_ = 0, colors_ms_ = 0;
    /// Last: its thread is joined before the members its jobs use are destroyed.
    EvaluationWorker worker_;
};

} // namespace moe::live
