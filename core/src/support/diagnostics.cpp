#include "moe/diagnostics.h"

#include <algorithm>

namespace moe {

std::string Diagnostic::format() const {
    // "file:line:col: " with unknown parts left out; a column without its line would read as
    // a line number, so it goes too.
    std::string location = file;
    if (line > 0) {
        if (!location.empty())
            location += ':';
        location += std::to_string(line);
        if (column > 0) {
            location += ':';
            location += std::to_string(column);
        }
    }
    std::string text = location.empty() ? std::string() : location + ": ";
    text += severity == Severity::error ? "error: " : "warning: ";
    text += message;
    return text;
}

bool hasErrors(const Diagnostics& diagnostics) {
    return std::any_of(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) {
        return d.severity == Diagnostic::Severity::error;
    });
}

std::string formatAll(const Diagnostics& diagnostics) {
    std::string text;
    for (const Diagnostic& d : diagnostics) {
        text += d.format();
        text += '\n';
    }
    return text;
}

} // namespace moe
