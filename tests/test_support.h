#pragma once
// Small helpers shared by the test executables.
#include "moe/scenario.h"

#include <string>
#include <vector>

namespace moe::test {
std::string readFile(const std::string& path);
/// Every *.yaml under sample_clusters/ (recursively), sorted.
std::vector<std::string> sampleFiles();
std::string samplePath(const std::string& name);

/// `nodes` x 8 H100 SXM on NVLink (450 GB/s, 3 us), 8 NICs of 48 GB/s (4 us) per node on
/// InfiniBand. Built by hand so tests do not depend on the catalog.
ClusterSpec h100Nodes(int nodes);
/// The divisors of n, ascending.
std::vector<int> divisorsOf(int n);

/// 8 nodes x 8 H100s (preset name and 80 GB HBM only) training a 24-layer, 16-expert top-2 MoE
/// with TP1 PP1 DP64 EP8, 512 sequences a step in micro-batches of 1: the model, batch and layout
/// of the built-in default scenario, built by hand so tests do not depend on the catalog or the
/// loader. Callers add the GPU, NIC and training details their checks need.
Scenario h100Moe16Scenario();

// The hand-worked scenario of test_evaluate and test_step_costs: 2 nodes x 4 GPUs with round
// datasheet figures (1000 TFLOPS BF16, 4 TB/s HBM, 400 GB/s NVLink at 2 us, one 50 GB/s NIC
// per GPU at 4 us), a 2-layer MoE (8 experts, top-2, hidden 1024, seq 1024). EP=4 is
// innermost (order tp-cp-ep-dp-pp), so an EP group is one node and its all-to-all is all
// NVLink; expert-DP = tp*cp*dp/ep = 8/4 = 2 pairs GPU g with GPU g+4 on the other node, so the
// expert gradient sync is all NIC.
extern const char* const kHandYaml;

/// Achievable rates of the hand scenario: its datasheet overrides times the efficiency
/// constants documented in step_costs.cpp (GEMM 0.70, flash attention forward 0.60 and backward
/// 0.55, HBM 0.80, NVLink 0.80, NIC 0.90 with one NIC per GPU).
namespace hand {
constexpr double kGemm = 1000e12 * 0.70;    // 7e14 FLOP/s
constexpr double kAttn = 1000e12 * 0.60;    // 6e14 FLOP/s, forward
constexpr double kAttnBwd = 1000e12 * 0.55; // 5.5e14 FLOP/s, backward
constexpr double kHbm = 4e12 * 0.80;        // 3.2e12 B/s
constexpr double kUp = 400e9 * 0.80;        // 320e9 B/s per GPU
constexpr double kOut = 50e9 * 0.90;        // 45e9 B/s per GPU (nics_per_node = gpus_per_node)
constexpr double kAlphaUp = 2e-6;
constexpr double kAlphaOut = 4e-6;
/// The hand scenario's GPU is the h100-sxm preset: 132 SMs. One wave of 128 x 256 output tiles
/// with a k-long reduction takes one tile's work, 2 x 128 x 256 x k FLOPs, at one SM's share of
/// the sustained GEMM rate, kGemm / 132 (step_costs.h, gemmTileEfficiency and gemm_s).
constexpr double waveTime_s(double k) {
    return 2.0 * 128 * 256 * k / (kGemm / 132.0);
}
/// One layer's forward expert GEMMs on an EP rank of the hand scenario holding `slots` token
/// slots over its 2 experts (h = f = 1024, BF16), worked out as step_costs.h's groupedGemm_s
/// describes it: per expert t = slots / 2 rows padded to max(128, t + 64); gate + up
/// (1024 -> 2048) and down (1024 -> 1024) each the larger of 2 x 2 x rows x n x 1024 FLOPs at
/// `gemm` and their A, B and C bytes at kHbm; plus 4 permute passes of 2 KiB per slot.
double handExpertGemm_s(double slots, double gemm = kGemm);
} // namespace hand
} // namespace moe::test
