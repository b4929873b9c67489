#include "moe/scenario.h"

#include <algorithm>
#include <string_view>
#include <utility>

namespace moe {

namespace {

// One name table per enum, indexed by the enumerator's value, so toString and parse cannot
// disagree about a spelling.
constexpr const char* kPrecisionNames[] = {"fp32", "bf16", "fp16", "fp8"};
constexpr const char* kScaleUpDomainNames[] = {"node", "rack"};
constexpr const char* kFabricNames[] = {"infiniband", "ethernet"};
constexpr const char* kFabricTopologyNames[] = {"fat-tree", "rail-optimized"};
constexpr const char* kAttentionKindNames[] = {"gqa", "mla"};
constexpr const char* kRecomputeNames[] = {"none", "selective", "full"};
constexpr const char* kMlpKindNames[] = {"swiglu", "gelu"};
constexpr const char* kAttentionKernelNames[] = {"flash", "unfused"};
constexpr const char* kTpActivationsNames[] = {"sequence-parallel", "replicated"};
constexpr const char* kFp8RecipeNames[] = {"delayed", "tensorwise", "blockwise", "mxfp8"};
constexpr const char* kDpOverlapNames[] = {"none", "grad-reduce", "grad-reduce-and-param-gather"};
constexpr const char* kEpOverlapNames[] = {"none", "combined-1f1b"};
constexpr const char* kMoeDispatcherNames[] = {"alltoall", "deepep", "hybridep"};
constexpr const char* kDimNames[] = {"tp", "cp", "ep", "dp", "pp"};
constexpr const char* kPipelineScheduleNames[] = {"gpipe", "1f1b", "interleaved", "dualpipe"};
constexpr const char* kPopularityModelNames[] = {"uniform", "zipf", "histogram", "published"};
constexpr const char* kBalancingMethodNames[] = {"aux_loss", "aux_free", "none", "perfect"};

template <typename E, std::size_t N> const char* nameOf(const char* const (&names)[N], E value) {
    const auto index = static_cast<std::size_t>(value);
    return index < N ? names[index] : "?";
}

template <typename E, std::size_t N>
std::optional<E> parseName(const char* const (&names)[N], const std::string& s) {
    for (std::size_t i = 0; i < N; ++i) {
        if (s == names[i])
            return static_cast<E>(i);
    }
    return std::nullopt;
}

} // namespace

std::vector<int> ClusterSpec::nodesInRacks() const {
    std::vector<int> racks;
    int left = std::max(0, nodes);
    for (const int listed : rack_nodes) {
        if (left == 0)
            break;
        const int n = std::clamp(listed, 1, left);
        racks.push_back(n);
        left -= n;
    }
    const int capacity = std::max(1, nodes_per_rack);
    for (; left > 0; left -= std::min(left, capacity))
        racks.push_back(std::min(left, capacity));
    return racks;
}

std::string ClusterSpec::describeRacks() const {
    const std::vector<int> racks = nodesInRacks();
    const std::string count =
        std::to_string(racks.size()) + (racks.size() == 1 ? " rack" : " racks");
    // Runs of equal racks, so thousands of racks stay one short phrase.
    std::vector<std::pair<int, int>> runs; // (racks, nodes in each)
    for (const int nodes_in_rack : racks) {
        if (runs.empty() || runs.back().second != nodes_in_rack)
            runs.emplace_back(0, nodes_in_rack);
        ++runs.back().first;
    }
    if (runs.size() <= 1) {
        const int n = runs.empty() ? 0 : runs.front().second;
        const std::string room = n < nodes_per_rack
                                     ? " (room for " + std::to_string(nodes_per_rack) + ")"
                                     : std::string();
        return count + " of " + std::to_string(n) + (n == 1 ? " node" : " nodes") + room;
    }
    std::string text = count + " (";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        text += i ? " + " : "";
        if (runs[i].first > 1)
            text += std::to_string(runs[i].first) + " x ";
        text += std::to_string(runs[i].second);
    }
    return text + " nodes, up to " + std::to_string(std::max(1, nodes_per_rack)) + " each)";
}

double bytesPerElement(Precision p) {
    switch (p) {
    case Precision::fp32:
        return 4.0;
    case Precision::bf16:
    case Precision::fp16:
        return 2.0;
    case Precision::fp8:
        return 1.0;
    }
    return 2.0;
}

const char* toString(Precision p) {
    return nameOf(kPrecisionNames, p);
}
const char* toString(ScaleUpDomain d) {
    return nameOf(kScaleUpDomainNames, d);
}
const char* toString(Fabric f) {
    return nameOf(kFabricNames, f);
}
const char* displayName(Fabric f) {
    return f == Fabric::infiniband ? "InfiniBand" : "Ethernet";
}
const char* toString(FabricTopology t) {
    return nameOf(kFabricTopologyNames, t);
}
const char* toString(AttentionKind a) {
    return nameOf(kAttentionKindNames, a);
}
const char* toString(Recompute r) {
    return nameOf(kRecomputeNames, r);
}
const char* toString(MlpKind k) {
    return nameOf(kMlpKindNames, k);
}
const char* toString(AttentionKernel k) {
    return nameOf(kAttentionKernelNames, k);
}
const char* toString(TpActivations t) {
    return nameOf(kTpActivationsNames, t);
}
const char* toString(Fp8Recipe r) {
    return nameOf(kFp8RecipeNames, r);
}
const char* toString(DpOverlap o) {
    return nameOf(kDpOverlapNames, o);
}

const char* toString(EpOverlap o) {
    return nameOf(kEpOverlapNames, o);
}
const char* toString(MoeDispatcher d) {
    return nameOf(kMoeDispatcherNames, d);
}
const char* toString(Dim d) {
    return nameOf(kDimNames, d);
}
const char* toString(PipelineSchedule s) {
    return nameOf(kPipelineScheduleNames, s);
}
const char* toString(PopularityModel m) {
    return nameOf(kPopularityModelNames, m);
}
const char* toString(BalancingMethod b) {
    return nameOf(kBalancingMethodNames, b);
}

std::string toString(const RankOrder& order) {
    std::string text;
    for (const Dim d : order) {
        if (!text.empty())
            text += '-';
        text += toString(d);
    }
    return text;
}

std::optional<Precision> parsePrecision(const std::string& s) {
    return parseName<Precision>(kPrecisionNames, s);
}
std::optional<ScaleUpDomain> parseScaleUpDomain(const std::string& s) {
    return parseName<ScaleUpDomain>(kScaleUpDomainNames, s);
}
std::optional<Fabric> parseFabric(const std::string& s) {
    return parseName<Fabric>(kFabricNames, s);
}
std::optional<FabricTopology> parseFabricTopology(const std::string& s) {
    return parseName<FabricTopology>(kFabricTopologyNames, s);
}
std::optional<AttentionKind> parseAttentionKind(const std::string& s) {
    return parseName<AttentionKind>(kAttentionKindNames, s);
}
std::optional<Recompute> parseRecompute(const std::string& s) {
    return parseName<Recompute>(kRecomputeNames, s);
}
std::optional<MlpKind> parseMlpKind(const std::string& s) {
    return parseName<MlpKind>(kMlpKindNames, s);
}
std::optional<AttentionKernel> parseAttentionKernel(const std::string& s) {
    return parseName<AttentionKernel>(kAttentionKernelNames, s);
}
std::optional<TpActivations> parseTpActivations(const std::string& s) {
    return parseName<TpActivations>(kTpActivationsNames, s);
}
std::optional<Fp8Recipe> parseFp8Recipe(const std::string& s) {
    return parseName<Fp8Recipe>(kFp8RecipeNames, s);
}
std::optional<Dim> parseDim(const std::string& s) {
    return parseName<Dim>(kDimNames, s);
}
std::optional<PipelineSchedule> parsePipelineSchedule(const std::string& s) {
    return parseName<PipelineSchedule>(kPipelineScheduleNames, s);
}
std::optional<PopularityModel> parsePopularityModel(const std::string& s) {
    return parseName<PopularityModel>(kPopularityModelNames, s);
}
std::optional<BalancingMethod> parseBalancingMethod(const std::string& s) {
    return parseName<BalancingMethod>(kBalancingMethodNames, s);
}

std::optional<RankOrder> parseRankOrder(const std::string& s) {
    RankOrder order{};
    bool seen[kDimCount] = {};
    std::size_t count = 0;
    std::size_t start = 0;
    while (true) {
        const std::size_t dash = s.find('-', start);
        const std::string part =
            s.substr(start, dash == std::string::npos ? std::string::npos : dash - start);
        const std::optional<Dim> dim = parseDim(part);
        if (!dim || count == kDimCount || seen[static_cast<int>(*dim)])
            return std::nullopt;
        seen[static_cast<int>(*dim)] = true;
        order[count++] = *dim;
        if (dash == std::string::npos)
            break;
        start = dash + 1;
    }
    if (count != kDimCount)
        return std::nullopt;
    return order;
}

int degree(const LayoutSpec& layout, Dim d) {
    switch (d) {
    case Dim::tp:
        return layout.tp;
    case Dim::cp:
        return layout.cp;
    case Dim::ep:
        return layout.ep;
    case Dim::dp:
        return layout.dp;
    case Dim::pp:
        return layout.pp;
    }
    return 1;
}

} // namespace moe
