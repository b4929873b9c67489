// libFuzzer target: the scenario loader and validation on arbitrary bytes, and evaluate() on
// whatever validates ("validation is the gate": anything accepted must evaluate to finite
// figures without crashing). Seed corpus: sample_clusters/.
#include "moe/evaluate.h"
#include "moe/scenario_io.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const moe::LoadResult result = moe::loadScenarioText(text, "fuzz.yaml", "/nonexistent");
    if (result.ok()) {
        const moe::Report report = moe::evaluate(*result.scenario);
        if (!std::isfinite(report.step_time_s))
            std::abort(); // a validated scenario must give finite figures
    }
    return 0;
}
