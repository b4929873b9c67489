#pragma once
// The shipped samples the calibration cases are built from, embedded at build time
// (core/CMakeLists.txt), so a case always is the sample users run.
namespace moe::calibration {
extern const char* const kGpt3SampleYaml;
extern const char* const kDeepSeekV3SampleYaml;
} // namespace moe::calibration
