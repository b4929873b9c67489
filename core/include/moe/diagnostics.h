#pragma once
// Problems found in user input, with where they are. Loading and validation collect every
// problem instead of stopping at the first, so a user fixes a file in one pass.

#include <string>
#include <vector>

namespace moe {

struct Diagnostic {
    enum class Severity { error, warning };
    Severity severity = Severity::error;
    std::string file;  ///< empty when the scenario did not come from a file
    int line = 0;      ///< 1-based; 0 = unknown
    int column = 0;    ///< 1-based; 0 = unknown
    std::string field; ///< dotted path, e.g. "layout.ep"
    std::string message;

    /// "file:line:col: error: message" (parts that are unknown are left out).
    std::string format() const;
};

using Diagnostics = std::vector<Diagnostic>;

bool hasErrors(const Diagnostics& diagnostics);
std::string formatAll(const Diagnostics& diagnostics);

} // namespace moe
