#pragma once
// What expert_load.cpp (the sample) and expert_load_cache.cpp (the kept samples) share; private
// to core/src/model. Declarations only, so that expert_load.cpp can include it without an
// include cycle.

#include <cstdint>
#include <vector>

namespace moe {
struct ExpertLoad;
struct LayoutSpec;
struct ModelSpec;
struct Placement;
struct Scenario;
} // namespace moe

namespace moe::expert_load_detail {

struct SampleShape {
    int groups = 1;    ///< token streams sampled per layer
    int64_t slots = 0; ///< token slots per stream per micro-batch
};
/// The token streams sampled per layer and the slots each routes per micro-batch.
SampleShape sampleShape(const Scenario& scenario);
/// The pipeline stage holding each MoE layer: chunk c (chunkFirstLayers) runs on stage c % pp.
std::vector<int> stageOfMoeLayers(const ModelSpec& model, const LayoutSpec& layout);
/// sampleExpertLoad into `load`, a fresh ExpertLoad whose arrays may keep their capacity.
void drawExpertLoad(const Scenario& scenario, const Placement& placement, uint64_t step,
                    ExpertLoad& load);

} // namespace moe::expert_load_detail
