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
    writeLayoutJson(json, &s);
}

void writeLayoutJson(JsonWriter& json, const Scenario* s) {
    auto number = [&](const char* key, auto get) {
        if (s)
            json.field(key, get(*s));
        else
            json.key(key).null();
    };
    json.beginObject();
    number("tp", [](const Scenario& x) { return x.layout.tp; });
    number("cp", [](const Scenario& x) { return x.layout.cp; });
    number("pp", [](const Scenario& x) { return x.layout.pp; });
    number("vpp", [](const Scenario& x) { return x.layout.vpp; });
    number("first_stage_layers", [](const Scenario& x) { return x.layout.first_stage_layers; });
    number("last_stage_layers", [](const Scenario& x) { return x.layout.last_stage_layers; });
    number("dp", [](const Scenario& x) { return x.layout.dp; });
    number("ep", [](const Scenario& x) { return x.layout.ep; });
    number("etp", [](const Scenario& x) { return x.layout.etp; });
    // An expert grid that does not fold over the GPUs has no expert-DP degree.
    const LayoutSpec* l = s ? &s->layout : nullptr;
    if (l && l->ep * l->etp > 0 && (l->tp * l->cp * l->dp) % (l->ep * l->etp) == 0)
        json.field("edp", l->expertDp());
    else
        json.key("edp").null();
    number("order", [](const Scenario& x) { return toString(x.layout.order); });
    number("schedule", [](const Scenario& x) { return toString(x.layout.schedule); });
    number("micro_batch", [](const Scenario& x) { return x.training.micro_batch; });
    number("recompute", [](const Scenario& x) { return toString(x.training.recompute); });
    json.endObject();
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
