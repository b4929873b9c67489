#pragma once
// moe-plan's commands. Exit codes: 0 success, 1 bad input (scenario errors), 2 usage errors.

#include <iosfwd>
#include <string>
#include <vector>

namespace moe::cli {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

} // namespace moe::cli
