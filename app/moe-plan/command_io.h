#pragma once
// Where a moe-plan command writes. Results go to standard output; problems, warnings and notes
// to standard error as text, or, with --json, as one JSON document on standard error at the end
// ("status", "message", "diagnostics", "notes"; schemas/error.schema.json), so a script reads
// both streams as JSON.

#include "moe/diagnostics.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace moe::cli {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;
/// Stopped by SIGINT (128 + 2, what a shell reports for a process killed by it).
constexpr int kExitInterrupted = 130;

class CommandIo {
public:
    CommandIo(std::ostream& out, std::ostream& err, std::string command, bool json);

    std::ostream& out() { return out_; }
    /// For progress on a terminal only; everything else goes through the calls below.
    std::ostream& err() { return err_; }
    bool json() const { return json_; }
    const std::string& command() const { return command_; }

    /// Load and validation problems, as "file:line:col: error: message" lines or JSON.
    void report(const Diagnostics& diagnostics);
    /// What happened beside the result ("Trace written to t.json"): standard output as text
    /// (`to_err` for commands whose output is data), the JSON document's "notes" otherwise.
    void note(const std::string& line, bool to_err = false);
    /// "moe-plan <command>: message" (or the JSON "message"); returns `status`.
    int fail(int status, const std::string& message);
    /// Ends the command: with --json, writes the document to standard error when there is
    /// anything to say. Returns `status`.
    int finish(int status);

private:
    std::ostream& out_;
    std::ostream& err_;
    std::string command_;
    bool json_;
    Diagnostics diagnostics_;
    std::vector<std::string> notes_;
    std::string message_;
};

} // namespace moe::cli
