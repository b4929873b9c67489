#pragma once
// What every JSON document moe-plan writes starts with, so a result can be traced back to the
// tool and to what it evaluated: "schema_version" (of the documents' shape, schemas/), "tool",
// "tool_version", "command", and for an evaluated scenario its effective "scenario" name and
// "layout" (the numeric layout: degrees, micro-batch, schedule, recompute).

#include "moe/diagnostics.h"
#include "moe/json_writer.h"
#include "moe/scenario.h"

#include <string>

namespace moe::cli {

/// Bumped when a document changes shape incompatibly (a key removed, renamed or retyped).
constexpr int kJsonSchemaVersion = 1;

/// Opens the document's object and writes schema_version, tool, tool_version and command.
void beginDocument(JsonWriter& json, const std::string& command);
/// beginDocument, then "scenario" and "layout" of `s`.
void beginDocument(JsonWriter& json, const std::string& command, const Scenario& s);

/// "scenario": name and "layout": {...} of `s`, into the open object.
void writeScenarioIdentity(JsonWriter& json, const Scenario& s);
/// The layout object: tp, cp, pp, vpp, dp, ep, etp, edp, order, schedule, micro_batch,
/// recompute.
void writeLayoutJson(JsonWriter& json, const Scenario& s);
/// The same keys, every one null without a scenario (a sweep row's invalid point, so every
/// row has the same keys and CSV the same columns).
void writeLayoutJson(JsonWriter& json, const Scenario* s);

/// One diagnostic: severity, file, line, column, field, message (and "text", as printed).
void writeDiagnosticJson(JsonWriter& json, const Diagnostic& d);

} // namespace moe::cli
