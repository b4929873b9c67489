#include "command_io.h"

#include "json_output.h"

#include <ostream>

namespace moe::cli {

CommandIo::CommandIo(std::ostream& out, std::ostream& err, std::string command, bool json)
    : out_(out)
    , err_(err)
    , command_(std::move(command))
    , json_(json) {}

void CommandIo::report(const Diagnostics& diagnostics) {
    for (const Diagnostic& d : diagnostics) {
        if (json_)
            diagnostics_.push_back(d);
        else
            err_ << d.format() << "\n";
    }
}

void CommandIo::note(const std::string& line, bool to_err) {
    if (json_)
        notes_.push_back(line);
    else
        (to_err ? err_ : out_) << line << "\n";
}

int CommandIo::fail(int status, const std::string& message) {
    const std::string prefix = command_.empty() ? "moe-plan" : "moe-plan " + command_;
    if (json_)
        message_ += (message_.empty() ? "" : "\n") + prefix + ": " + message;
    else
        err_ << prefix << ": " << message << "\n";
    return status;
}

int CommandIo::finish(int status) {
    if (!json_ || (status == kExitOk && diagnostics_.empty() && notes_.empty() && message_.empty()))
        return status;
    JsonWriter json;
    beginDocument(json, command_.empty() ? "moe-plan" : command_);
    json.field("status", status);
    if (message_.empty())
        json.key("message").null();
    else
        json.field("message", message_);
    json.key("diagnostics").beginArray();
    for (const Diagnostic& d : diagnostics_)
        writeDiagnosticJson(json, d);
    json.endArray().key("notes").beginArray();
    for (const std::string& n : notes_)
        json.value(n);
    json.endArray().endObject();
    err_ << json.str() << "\n";
    diagnostics_.clear();
    notes_.clear();
    message_.clear();
    return status;
}

} // namespace moe::cli
