#pragma once
// Upper bounds of every size in a scenario, and of the files the tools read. Validation refuses
// anything larger with a message naming the field and the bound, so whatever validates can be
// evaluated, simulated, searched, exported and opened in bounded time and memory: the bounds are
// sized so that evaluate(), the timeline simulation and the layout search each stay within about
// 2 GB and 30 s at the bound on one core of a 2020s desktop (docs/scenario.md lists the
// measured figures). They are far above any real training run (the largest published ones use
// ~100K GPUs, 256 experts, 128 layers), so they only catch typos and hostile files.

#include <cstdint>

namespace moe::limits {

/// Scenario and routing CSV files larger than this are refused before parsing (a 2,048-GPU
/// DeepSeek scenario is 5 KB; a 1,024-layer x 16,384-expert histogram of 8-digit weights is
/// ~150 MB, so real histograms stay far below). Reads stop at this size, so /dev/zero or a
/// FIFO cannot make a reader grow without limit.
constexpr int64_t kMaxInputFileBytes = 16 * 1024 * 1024;
/// A search part (moe-plan search --shard) is machine-written, ~1 KB per evaluated layout: a
/// shard of a 2,048-GPU DeepSeek-V3 search over 3 machines is ~18 MB, so parts get their own
/// bound, a million layouts' worth.
constexpr int64_t kMaxSearchPartBytes = int64_t{1024} * 1024 * 1024;

/// Unknown keys listed one by one; the rest are counted in one closing message.
constexpr int kMaxListedUnknownKeys = 20;

// Cluster. Placement, topology and the models keep one entry per GPU (and per NIC), so the GPU
// count bounds their memory: at 131,072 GPUs evaluate() takes ~0.2 s and 120 MB.
constexpr int64_t kMaxGpus = 131'072;
constexpr int64_t kMaxGpusPerNode = 1'024;
constexpr int64_t kMaxNodesPerRack = 1'024;
constexpr int64_t kMaxNicsPerNode = 64;
/// NICs in the whole cluster (nodes x nics_per_node): the hardware graph has a vertex and a
/// link per NIC.
constexpr int64_t kMaxNics = 2 * kMaxGpus;

// Model. Sizes multiply into FLOP and byte counts kept in doubles; the bounds keep every
// intermediate product below 2^53 so no count loses precision, and expert load tables
// (experts x MoE layers) within a few hundred MB.
constexpr int64_t kMaxLayers = 1'024;
constexpr int64_t kMaxExperts = 16'384;
/// experts x MoE layers: the expert-load model keeps a few doubles per (expert, layer).
constexpr int64_t kMaxExpertLayerCells = 1'048'576;
constexpr int64_t kMaxTopK = 1'024;
constexpr int64_t kMaxSharedExperts = 1'024;
constexpr int64_t kMaxHidden = 262'144;
constexpr int64_t kMaxHeads = 16'384;
constexpr int64_t kMaxHeadDim = 16'384;
constexpr int64_t kMaxFfnHidden = 4'194'304;
constexpr int64_t kMaxMlaRank = 262'144;
constexpr int64_t kMaxVocab = 16'777'216;
constexpr int64_t kMaxSeqLen = 16'777'216;

// Training. The timeline simulates every micro-batch of a step on every stage, so their count
// bounds its time.
constexpr int64_t kMaxGlobalBatch = 16'777'216;
constexpr int64_t kMaxMicroBatch = 65'536;
constexpr int64_t kMaxMicroBatchesPerStep = 16'384;

} // namespace moe::limits
