#pragma once
// Small helpers shared by the test executables.
#include <string>
#include <vector>

namespace moe::test {
std::string readFile(const std::string& path);
/// Every *.yaml under sample_clusters/ (recursively), sorted.
std::vector<std::string> sampleFiles();
std::string samplePath(const std::string& name);
} // namespace moe::test
