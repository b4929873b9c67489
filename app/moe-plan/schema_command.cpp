// moe-plan schema: the scenario format from the schema table (core/include/moe/schema.h), as a
// plain list or as the Markdown reference committed as docs/format.md.
#include "cli_commands.h"
#include "moe/schema.h"
#include "scenario_input.h"

#include <memory>
#include <sstream>

namespace moe::cli {

namespace {

struct SchemaOptions {
    bool markdown = false;
    std::string output;
};

/// One line per field: path, type, unit, range and default.
std::string schemaText(const ScenarioSchema& schema) {
    std::ostringstream out;
    for (const SchemaField& f : schema.fields()) {
        out << f.path << "  " << describeType(f);
        if (!f.unit.empty())
            out << "  [" << f.unit << "]";
        if (const std::string range = describeRange(f); !range.empty())
            out << "  " << range;
        out << "  default: " << describeDefault(f) << "\n";
    }
    return out.str();
}

int runSchema(const SchemaOptions& o, CommandIo& io) {
    const ScenarioSchema& schema = scenarioSchema();
    const std::string text = o.markdown ? schemaMarkdown(schema) : schemaText(schema);
    if (o.output.empty() || o.output == "-") {
        io.out() << text;
        return kExitOk;
    }
    if (const std::string problem = writeOutput(o.output, text, io.out()); !problem.empty())
        return io.fail(kExitBadInput, problem);
    io.out() << "wrote " << o.output << "\n";
    return kExitOk;
}

} // namespace

void addSchemaCommand(CLI::App& app, CommandTable& table) {
    auto o = std::make_shared<SchemaOptions>();
    CLI::App* c = table.add(app, "schema",
                            "Lists every field of the scenario format with its type, unit, range "
                            "and default; --markdown writes the reference (docs/format.md).",
                            [o](CommandIo& io) { return runSchema(*o, io); });
    c->add_flag("--markdown", o->markdown, "the format reference in Markdown");
    c->add_option("-o,--output", o->output, "write it here ('-' = standard output)")
        ->type_name("OUT");
}

} // namespace moe::cli
