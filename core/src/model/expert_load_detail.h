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
/// The multinomial counts of a sample, per MoE layer and token stream: what every layout with
/// the same token slots, streams, experts, routing and step draws, whatever its EP degree and
/// expert placement (the streams' seeds depend on none of those). Drawing them is most of a
/// sample's cost; spreading them over the EP ranks is cheap.
struct RoutingDraws {
    int layers = 0, groups = 0, experts = 0;
    std::vector<int32_t> counts; ///< [(layer * groups + group) * experts + expert]
    const int32_t* at(int layer, int group) const {
        return counts.data() + (static_cast<size_t>(layer) * groups + group) * experts;
    }
};
/// Whether `scenario`'s sample can be drawn as RoutingDraws (counts fit in 32 bits and the
/// routing draws at all: perfect balance takes the expected shares).
bool drawsRouting(const Scenario& scenario);
/// The sample's counts (drawsRouting(scenario) must hold).
void drawRoutingCounts(const Scenario& scenario, uint64_t step, RoutingDraws& draws);
/// sampleExpertLoad into `load`, a fresh ExpertLoad whose arrays may keep their capacity; with
/// `draws` (drawRoutingCounts of the same scenario and step), from those counts, which gives
/// the same sample. Without `detail`, popularity and tokens_per_expert stay empty. With
/// `group_peaks`, groupPeakRatios(load) there.
void drawExpertLoad(const Scenario& scenario, const Placement& placement, uint64_t step,
                    ExpertLoad& load, const RoutingDraws* draws = nullptr, bool detail = true,
                    std::vector<double>* group_peaks = nullptr);

} // namespace moe::expert_load_detail
