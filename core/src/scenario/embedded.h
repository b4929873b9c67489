#pragma once
// Texts embedded at build time (see core/CMakeLists.txt).
namespace moe::embedded {
extern const char* const kCatalogYaml;
extern const char* const kDefaultScenarioYaml;
} // namespace moe::embedded
