// moe-plan compare's text and JSON: the headline figures of A and B with deltas and verdicts,
// the step-time items that moved (moe/compare.h's compareSteps), and the fields that differ.
#include "json_output.h"
#include "report_text.h"
#include "text_table.h"

#include "moe/compare.h"
#include "moe/format.h"
#include "moe/json_writer.h"

#include <cmath>
#include <sstream>

namespace moe::cli {

namespace {

using Align = TextTable::Align;

/// The CLI's writing of each headline format (the list itself is moe::headlineFigures()).
std::string formatFigure(FigureFormat format, double v) {
    switch (format) {
    case FigureFormat::seconds:
        return formatSeconds(v, UnitStyle::ascii);
    case FigureFormat::percent:
        return formatFixed(v * 100, 1) + "%";
    case FigureFormat::bytes:
        return formatBytes(v, UnitStyle::ascii);
    case FigureFormat::tflops:
        return formatFixed(v, 0);
    case FigureFormat::ratio:
        return formatFixed(v, 2) + "x";
    case FigureFormat::usd:
        // Whole dollars with the currency, as the app's Compare panel writes them.
        return (v < 0 ? "-$" : "$") + formatCount(std::round(std::fabs(v)));
    case FigureFormat::count:
        break;
    }
    return formatCount(v);
}

/// The items of B's step that moved against A's, largest first.
void writeStepChangeText(std::ostringstream& o, const StepChange& change) {
    o << "\nWhat changed the step (B against A): " << stepChangeSummary(change, 3, UnitStyle::ascii)
      << "\n";
    if (change.items.empty())
        return;
    TextTable items({"item", "A", "B", "change"},
                    {Align::left, Align::right, Align::right, Align::right});
    for (const StepItemChange& c : change.items)
        items.addRow({briefName(c.item), formatSeconds(c.before_s, UnitStyle::ascii),
                      formatSeconds(c.after_s, UnitStyle::ascii),
                      formatSecondsDelta(c.delta_s, UnitStyle::ascii)});
    o << items.render("  ");
}

} // namespace

std::string compareText(const Scenario& a, const Report& ra, const Scenario& b, const Report& rb) {
    const Comparison cmp = compareDesigns(a, ra, b, rb);
    std::ostringstream o;
    o << "A: " << a.name << " (" << layoutLine(a) << ")\n";
    o << "B: " << b.name << " (" << layoutLine(b) << ")\n\n";
    TextTable table({"figure", "A", "B", "delta", ""},
                    {Align::left, Align::right, Align::right, Align::right, Align::left});
    for (const FigureDelta& d : cmp.figures) {
        const HeadlineFigure& h = *d.figure;
        table.addRow({h.name, formatFigure(h.format, d.baseline), formatFigure(h.format, d.current),
                      formatDeltaPercent(d.baseline, d.current),
                      d.verdict == Verdict::better  ? "B better"
                      : d.verdict == Verdict::worse ? "B worse"
                                                    : ""});
    }
    o << table.render();
    writeStepChangeText(o, compareSteps(ra, rb));
    o << "\nScenario fields that differ";
    if (cmp.fields.empty()) {
        o << ": none\n";
    } else {
        o << " (" << cmp.fields.size() << ")\n";
        TextTable fields({"field", "A", "B"});
        for (const FieldDifference& f : cmp.fields)
            fields.addRow({f.path, f.baseline, f.current});
        o << fields.render("  ");
    }
    return o.str();
}

std::string compareJson(const Scenario& a, const Report& ra, const Scenario& b, const Report& rb) {
    const Comparison cmp = compareDesigns(a, ra, b, rb);
    JsonWriter json;
    beginDocument(json, "compare");
    json.field("a", a.name).field("b", b.name).key("layout_a");
    writeLayoutJson(json, a);
    json.key("layout_b");
    writeLayoutJson(json, b);
    json.key("figures").beginArray();
    for (const FigureDelta& d : cmp.figures) {
        json.beginObject()
            .field("name", d.figure->name)
            .field("a", d.baseline)
            .field("b", d.current)
            .field("delta", d.delta)
            .field("lower_is_better", d.figure->lower_is_better)
            .field("verdict", toString(d.verdict));
        if (d.figure->format == FigureFormat::usd)
            json.field("currency", "USD");
        json.endObject();
    }
    json.endArray();
    const StepChange change = compareSteps(ra, rb);
    json.key("step_change")
        .beginObject()
        .field("a_s", change.before_s)
        .field("b_s", change.after_s)
        .field("delta_s", change.delta_s)
        .key("items")
        .beginArray();
    for (const StepItemChange& c : change.items)
        json.beginObject()
            .field("item", keyOf(c.item))
            .field("a_s", c.before_s)
            .field("b_s", c.after_s)
            .field("delta_s", c.delta_s)
            .endObject();
    json.endArray().endObject();
    json.key("fields").beginArray();
    for (const FieldDifference& f : cmp.fields)
        json.beginObject()
            .field("path", f.path)
            .field("a", f.baseline)
            .field("b", f.current)
            .endObject();
    json.endArray().endObject();
    return json.str() + "\n";
}

} // namespace moe::cli
