#include "json_output.h"

#include "version.h"

namespace moe::cli {

void beginDocument(JsonWriter& json, const std::string& command) {
    json.beginObject()
        .field("schema_version", kJsonSchemaVersion)
        .field("tool", "moe-plan")
        .field("tool_version", cmdline::version())
        .field("command", command);
}

void beginDocument(JsonWriter& json, const std::string& command, const Scenario& s) {
    beginDocument(json, command);
    writeScenarioIdentity(json, s);
}

void writeScenarioIdentity(JsonWriter& json, const Scenario& s) {
    json.field("scenario", s.name).key("layout");
    writeLayoutJson(json, s);
}

void writeLayoutJson(JsonWriter& json, const Scenario& s) {
    const LayoutSpec& l = s.layout;
    json.beginObject()
        .field("tp", l.tp)
        .field("cp", l.cp)
        .field("pp", l.pp)
        .field("vpp", l.vpp)
        .field("dp", l.dp)
        .field("ep", l.ep)
        .field("etp", l.etp);
    // An expert grid that does not fold over the GPUs has no expert-DP degree.
    if (l.ep * l.etp > 0 && (l.tp * l.cp * l.dp) % (l.ep * l.etp) == 0)
        json.field("edp", l.expertDp());
    else
        json.key("edp").null();
    json.field("order", toString(l.order))
        .field("schedule", toString(l.schedule))
        .field("micro_batch", s.training.micro_batch)
        .field("recompute", toString(s.training.recompute))
        .endObject();
}

void writeDiagnosticJson(JsonWriter& json, const Diagnostic& d) {
    json.beginObject()
        .field("severity", d.severity == Diagnostic::Severity::error ? "error" : "warning")
        .field("file", d.file)
        .field("line", d.line)
        .field("column", d.column)
        .field("field", d.field)
        .field("message", d.message)
        .field("text", d.format())
        .endObject();
}

} // namespace moe::cli
