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

/// 8 nodes x 8 H100s (preset name and 80 GB HBM only) training a 24-layer, 16-expert top-2 MoE
/// with TP1 PP1 DP64 EP8, 512 sequences a step in micro-batches of 1: the model, batch and layout
/// of the built-in default scenario, built by hand so tests do not depend on the catalog or the
/// loader. Callers add the GPU, NIC and training details their checks need.
Scenario h100Moe16Scenario();
} // namespace moe::test
