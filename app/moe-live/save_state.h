#pragma once
// What moe-live knows about saving: the scenario as last opened or saved (to show an unsaved
// flag), the file it came from (to ask before a save replaces a different file), and that file's
// text (a save rewrites only the changed values, keeping comments; moe/scenario_text.h). No
// ImGui here, so test_moe_live checks it without a window.
#include "moe/scenario.h"
#include "moe/scenario_text.h"

#include <optional>
#include <string>

namespace moe::live {

class SaveState {
public:
    /// The document now is `path` as on disk (re-read, so --set and --gpus count as unsaved
    /// edits), or the built-in default when `path` is empty or does not load.
    void opened(const std::string& path);
    /// True when `current` differs from what was opened or last saved.
    bool modified(const Scenario& current) const;
    /// True when saving to `path` would replace an existing file other than the one the
    /// scenario came from: ask first.
    bool overwriteNeedsConfirm(const std::string& path) const;
    /// Saves atomically, editing the origin's text; on success `path` becomes the document's
    /// file. Returns "" or the reason.
    std::string save(const Scenario& scenario, const std::string& path);
    const std::string& path() const { return path_; }

private:
    std::string path_;
    std::optional<Scenario> saved_;
    ScenarioSource origin_;
};

} // namespace moe::live
