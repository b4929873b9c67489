#include "scenario_input.h"

#include "moe/atomic_file.h"
#include "moe/limits.h"
#include "moe/scenario_io.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <ostream>

#include <unistd.h>

namespace moe::cli {

namespace {

/// Standard input, read once (two '-' arguments see the same text).
struct StdinText {
    bool read = false;
    std::string text;
    std::string problem;
};

StdinText& stdinText() {
    static StdinText cached;
    if (cached.read)
        return cached;
    cached.read = true;
    char buffer[65536];
    while (true) {
        const ssize_t got = ::read(STDIN_FILENO, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            cached.problem = std::string("cannot read standard input: ") + std::strerror(errno);
            break;
        }
        if (got == 0)
            break;
        cached.text.append(buffer, static_cast<size_t>(got));
        if (cached.text.size() > static_cast<size_t>(limits::kMaxInputFileBytes)) {
            cached.text.clear();
            cached.problem = "standard input is larger than the supported maximum of " +
                             std::to_string(limits::kMaxInputFileBytes / (1024 * 1024)) + " MB";
            break;
        }
    }
    return cached;
}

} // namespace

std::string directoryOf(const std::string& path) {
    if (path == "-")
        return ".";
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
}

std::string readScenarioText(const std::string& path, ScenarioText& into) {
    into.base_dir = directoryOf(path);
    if (path.empty()) {
        into.text = defaultScenarioYaml();
        into.label = "<built-in default>";
        return {};
    }
    if (path == "-") {
        const StdinText& in = stdinText();
        into.text = in.text;
        into.label = "<stdin>";
        return in.problem;
    }
    into.label = path;
    return readFileBounded(path, into.text);
}

namespace {

/// The key of a "key=value" override in canonical form ("layout.ep"), or "" when malformed.
std::string overrideKey(const std::string& assignment) {
    const std::size_t equals = assignment.find('=');
    if (equals == std::string::npos)
        return {};
    const std::optional<FieldPath> path = parseFieldPath(assignment.substr(0, equals));
    return path ? path->dotted : std::string();
}

/// Whether one dotted path holds the other ("layout" and "layout.ep", "layout.ep" itself).
bool nested(const std::string& a, const std::string& b) {
    const std::string& inner = a.size() >= b.size() ? a : b;
    const std::string& outer = a.size() >= b.size() ? b : a;
    return inner.starts_with(outer) && (inner.size() == outer.size() ||
                                        inner[outer.size()] == '.' || inner[outer.size()] == '[');
}

/// Problems the core names "--set" (every override) that come from one of `own` (applied
/// last, so they win over an earlier --set of the same field) are named `own_label` instead.
void relabelOverrides(Diagnostics& diagnostics, const std::vector<std::string>& own,
                      const std::string& own_label) {
    for (Diagnostic& d : diagnostics) {
        if (d.file != "--set")
            continue;
        for (const std::string& assignment : own) {
            const std::string key = overrideKey(assignment);
            const bool ours = d.field.empty() ? d.message.find(assignment) != std::string::npos
                                              : !key.empty() && nested(d.field, key);
            if (ours) {
                d.file = own_label;
                break;
            }
        }
    }
}

} // namespace

std::optional<Scenario> loadScenarioArg(const std::string& path,
                                        const std::vector<std::string>& overrides, CommandIo& io,
                                        const std::vector<std::string>& own_overrides,
                                        const std::string& own_label) {
    std::vector<std::string> all = overrides;
    all.insert(all.end(), own_overrides.begin(), own_overrides.end());
    if (path.empty() && all.empty())
        return defaultScenario();
    LoadResult result;
    if (path != "-" && !path.empty()) {
        // The core reads the file itself, so its messages name it as usual.
        result = loadScenarioWithOverrides(path, all);
    } else {
        ScenarioText source;
        if (const std::string problem = readScenarioText(path, source); !problem.empty()) {
            io.fail(kExitBadInput, problem);
            return std::nullopt;
        }
        result = loadScenarioTextWithOverrides(source.text, source.label, source.base_dir, all);
    }
    relabelOverrides(result.diagnostics, own_overrides, own_label);
    io.report(result.diagnostics);
    return result.scenario;
}

std::string writeOutput(const std::string& path, std::string_view text, std::ostream& out) {
    if (path == "-") {
        out << text;
        out.flush();
        return out ? std::string() : std::string("cannot write to standard output");
    }
    return writeFileAtomically(path, text);
}

} // namespace moe::cli
