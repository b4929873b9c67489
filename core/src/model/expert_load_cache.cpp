// The routing samples kept between evaluations (ExpertLoadCache): what the layout search and
// the app's worker reuse while the routing, the experts and the token streams stay the same.
#include "moe/expert_load.h"

#include "expert_load_detail.h"

#include <bit>
#include <mutex>
#include <utility>

namespace moe {

using namespace expert_load_detail;

namespace {

/// What a sample of `scenario` at `step` is drawn from (two scenarios with one key draw the
/// same sample).
ExpertLoadCache::Key cacheKey(const Scenario& scenario, uint64_t step) {
    const SampleShape shape = sampleShape(scenario);
    ExpertLoadCache::Key key;
    key.routing = scenario.routing;
    key.experts = scenario.model.experts;
    key.moe_layers = scenario.model.moeLayers();
    key.capacity_factor = scenario.model.capacity_factor;
    key.ep = scenario.layout.ep;
    key.groups = shape.groups;
    key.token_slots = shape.slots;
    key.expert_placement = scenario.layout.expert_placement;
    key.step = step;
    return key;
}

} // namespace

uint64_t ExpertLoadCache::hashOf(const Key& key) {
    // FNV-1a over the numbers; keys equal in them and different elsewhere (the routing's
    // histogram, the expert placement) only cost a full comparison.
    uint64_t h = 0xcbf29ce484222325ULL;
    auto mix = [&](uint64_t v) { h = (h ^ v) * 0x100000001b3ULL; };
    mix(static_cast<uint64_t>(key.token_slots));
    mix(static_cast<uint64_t>(key.ep));
    mix(static_cast<uint64_t>(key.groups));
    mix(key.step);
    mix(static_cast<uint64_t>(key.experts));
    mix(static_cast<uint64_t>(key.moe_layers));
    mix(key.capacity_factor == 0 ? 0 : std::bit_cast<uint64_t>(key.capacity_factor)); // -0 == 0
    mix(key.detail);
    mix(key.routing.seed);
    mix(static_cast<uint64_t>(key.expert_placement.size()));
    return h;
}

std::shared_ptr<const SharedExpertLoad> ExpertLoadCache::find(const Key& key) const {
    const uint64_t h = hashOf(key);
    for (size_t i = 0; i < hashes_.size(); ++i)
        if (hashes_[i] == h && entries_[i].first == key)
            return entries_[i].second;
    return nullptr;
}

namespace {
size_t sampleBytes(const SharedExpertLoad& sample) {
    const ExpertLoad& load = sample.load;
    return sizeof(double) *
           (sample.group_peaks.size() + load.popularity.size() + load.tokens_per_expert.size() +
            load.rank_tokens.size() + load.imbalance_per_layer.size() +
            load.imbalance_per_group.size() + load.dropped_share_per_layer.size());
}
} // namespace

ExpertLoadCache::Draws ExpertLoadCache::findDraws(const DrawKey& key) const {
    for (const auto& [k, draws] : draws_)
        if (k == key)
            return draws;
    return nullptr;
}

void ExpertLoadCache::storeDraws(DrawKey key, Draws draws) {
    const size_t bytes = draws->counts.size() * sizeof(int32_t);
    if (bytes > kDrawBudgetBytes)
        return;
    while (!draws_.empty() && draw_bytes_ + bytes > kDrawBudgetBytes) {
        draw_bytes_ -= draws_.front().second->counts.size() * sizeof(int32_t);
        draws_.pop_front();
    }
    draws_.emplace_back(std::move(key), std::move(draws));
    draw_bytes_ += bytes;
}

void ExpertLoadCache::store(Key key, std::shared_ptr<const SharedExpertLoad> sample) {
    const size_t bytes = sampleBytes(*sample);
    if (bytes > kBudgetBytes)
        return;
    while (!entries_.empty() && bytes_ + bytes > kBudgetBytes) {
        bytes_ -= sampleBytes(*entries_.front().second);
        entries_.pop_front();
        hashes_.pop_front();
    }
    hashes_.push_back(hashOf(key));
    entries_.emplace_back(std::move(key), std::move(sample));
    bytes_ += bytes;
}

ExpertLoad sampleExpertLoad(const Scenario& scenario, const Placement& placement, uint64_t step,
                            ExpertLoadCache& cache) {
    if (!scenario.model.isMoe())
        return sampleExpertLoad(scenario, placement, step);
    ExpertLoad load = sharedExpertLoad(scenario, placement, step, cache)->load;
    // The one part that follows the pipeline split rather than the routing.
    load.stage_of_layer = stageOfMoeLayers(scenario.model, scenario.layout);
    return load;
}

namespace {

/// The sample's multinomial counts, from the cache (the shared store when there is one) or
/// drawn and kept there; null when the routing draws none (drawsRouting).
ExpertLoadCache::Draws routingDraws(const Scenario& scenario, uint64_t step,
                                    ExpertLoadCache& cache) {
    if (!drawsRouting(scenario))
        return nullptr;
    const SampleShape shape = sampleShape(scenario);
    ExpertLoadCache::DrawKey key;
    key.token_slots = shape.slots;
    key.groups = shape.groups;
    key.step = step;
    key.experts = scenario.model.experts;
    key.moe_layers = scenario.model.moeLayers();
    key.routing = scenario.routing;
    ExpertLoadCache& store = cache.shared ? cache.shared->cache : cache;
    {
        std::unique_lock<std::mutex> lock;
        if (cache.shared)
            lock = std::unique_lock<std::mutex>(cache.shared->mutex);
        if (ExpertLoadCache::Draws found = store.findDraws(key))
            return found;
    }
    auto draws = std::make_shared<RoutingDraws>();
    drawRoutingCounts(scenario, step, *draws);
    std::unique_lock<std::mutex> lock;
    if (cache.shared)
        lock = std::unique_lock<std::mutex>(cache.shared->mutex);
    if (ExpertLoadCache::Draws found = store.findDraws(key))
        return found; // another thread drew them meanwhile: one copy is kept
    store.storeDraws(std::move(key), draws);
    return draws;
}

} // namespace

std::shared_ptr<const SharedExpertLoad> sharedExpertLoad(const Scenario& scenario,
                                                         const Placement& placement, uint64_t step,
                                                         ExpertLoadCache& cache, bool detail) {
    if (!scenario.model.isMoe())
        return std::make_shared<const SharedExpertLoad>(); // nothing routed, as sampled
    ExpertLoadCache::Key key = cacheKey(scenario, step);
    key.detail = detail;
    std::shared_ptr<const SharedExpertLoad> hit;
    if (cache.shared) {
        const std::lock_guard<std::mutex> lock(cache.shared->mutex);
        hit = cache.shared->cache.find(key);
    } else {
        hit = cache.find(key);
    }
    if (hit) {
        ++cache.hits;
        return hit;
    }
    ++cache.misses;
    auto sample = std::make_shared<SharedExpertLoad>();
    if (detail) {
        sample->load = sampleExpertLoad(scenario, placement, step);
        sample->group_peaks = groupPeakRatios(sample->load);
    } else {
        // Without detail no per-rank or per-expert array is made (what pricing reads is the
        // group peaks and the per-layer figures).
        const ExpertLoadCache::Draws draws = routingDraws(scenario, step, cache);
        drawExpertLoad(scenario, placement, step, sample->load, draws.get(), /*detail=*/false,
                       &sample->group_peaks);
    }
    if (cache.shared) {
        const std::lock_guard<std::mutex> lock(cache.shared->mutex);
        cache.shared->cache.store(std::move(key), sample);
    } else {
        cache.store(std::move(key), sample);
    }
    return sample;
}

} // namespace moe
