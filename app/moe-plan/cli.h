#pragma once
// moe-plan's command line. Exit codes: 0 success, 1 bad input (scenario errors), 2 usage errors,
// 130 interrupted (SIGINT).

#include <iosfwd>
#include <string>
#include <vector>

namespace moe::cli {

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

} // namespace moe::cli
