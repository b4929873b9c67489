#pragma once
// Helpers shared by the widget tests. Header-only, so the core tests (which link only moe_core
// and compile test_support.cpp) never see moe_widgets.
#include "moe/evaluate.h"
#include "moe/scenario_io.h"
#include "moe_widgets/document/evaluator.h"
#include "test_support.h"

#include <QtGlobal>

#include <cstdint>
#include <memory>
#include <string>

namespace moe::test {

/// A sample scenario from sample_clusters/; aborts the test when it does not load.
inline Scenario loadSample(const std::string& name) {
    const LoadResult loaded = loadScenarioFile(samplePath(name));
    if (!loaded.ok())
        qFatal("cannot load sample %s: %s", name.c_str(), formatAll(loaded.diagnostics).c_str());
    return *loaded.scenario;
}

/// What the Evaluator would publish for `scenario`, evaluated on the calling thread.
inline widgets::EvaluationResultPtr resultFor(const Scenario& scenario, uint64_t routing_step = 0,
                                              uint64_t generation = 1) {
    auto result = std::make_shared<widgets::EvaluationResult>();
    result->generation = generation;
    result->scenario = scenario;
    result->routing_step = routing_step;
    result->report = evaluate(scenario, routing_step);
    return result;
}

} // namespace moe::test
