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

std::optional<Scenario> loadScenarioArg(const std::string& path,
                                        const std::vector<std::string>& overrides, CommandIo& io) {
    if (path.empty() && overrides.empty())
        return defaultScenario();
    if (path != "-" && !path.empty()) {
        // The core reads the file itself, so its messages name it as usual.
        const LoadResult result = loadScenarioWithOverrides(path, overrides);
        io.report(result.diagnostics);
        return result.scenario;
    }
    ScenarioText source;
    if (const std::string problem = readScenarioText(path, source); !problem.empty()) {
        io.fail(kExitBadInput, problem);
        return std::nullopt;
    }
    const LoadResult result =
        loadScenarioTextWithOverrides(source.text, source.label, source.base_dir, overrides);
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
