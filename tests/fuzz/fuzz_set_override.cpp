// libFuzzer target: `--set key=value` parsing, both as a load override of the built-in default
// and as a text edit (moe-plan edit). Each input line is one assignment. Seed corpus:
// tests/fuzz/set_seeds/.
#include "moe/scenario_io.h"
#include "moe/scenario_text.h"

#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> assignments;
    std::size_t start = 0;
    while (start <= text.size() && assignments.size() < 8) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        assignments.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    moe::loadScenarioTextWithOverrides(moe::defaultScenarioYaml(), "fuzz", "/nonexistent",
                                       assignments);
    const moe::ScenarioTextEdit edit =
        moe::editScenarioText(moe::defaultScenarioYaml(), assignments);
    moe::loadScenarioText(edit.text, "fuzz-edited", "/nonexistent");
    return 0;
}
