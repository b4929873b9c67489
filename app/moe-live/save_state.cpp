#include "save_state.h"

#include "moe/atomic_file.h"
#include "moe/scenario_io.h"

#include <filesystem>

namespace moe::live {

namespace {

namespace fs = std::filesystem;

std::string directoryOf(const std::string& path) {
    const fs::path parent = fs::path(path).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
}

bool sameFile(const std::string& a, const std::string& b) {
    std::error_code ec;
    return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

} // namespace

void SaveState::opened(const std::string& path) {
    path_ = path;
    saved_.reset();
    origin_ = {};
    if (!path.empty() && readFileBounded(path, origin_.text).empty()) {
        origin_.base_dir = directoryOf(path);
        LoadResult loaded = loadScenarioText(origin_.text, path, origin_.base_dir);
        if (loaded.ok()) {
            saved_ = std::move(*loaded.scenario);
            return;
        }
    }
    origin_ = {defaultScenarioYaml(), "."};
    saved_ = defaultScenario();
}

bool SaveState::modified(const Scenario& current) const {
    return !saved_ || current != *saved_;
}

bool SaveState::overwriteNeedsConfirm(const std::string& path) const {
    std::error_code ec;
    return fs::exists(path, ec) && (path_.empty() || !sameFile(path, path_));
}

std::string SaveState::save(const Scenario& scenario, const std::string& path) {
    const std::string problem = saveScenarioText(scenario, origin_, path);
    if (!problem.empty())
        return problem;
    opened(path);
    return {};
}

} // namespace moe::live
