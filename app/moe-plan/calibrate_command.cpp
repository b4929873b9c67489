// moe-plan calibrate: the built-in published reference runs (core/include/moe/calibration.h),
// published vs predicted with the signed error, and the mean and max |error| per group.
#include "cli_commands.h"
#include "json_output.h"
#include "text_table.h"

#include "moe/calibration.h"
#include "moe/format.h"

#include <algorithm>
#include <memory>
#include <sstream>

namespace moe::cli {

namespace {

struct CalibrateOptions {
    bool json = false;
    std::string case_id;
};

std::string signedPercent(double percent) {
    return (percent >= 0 ? "+" : "") + formatFixed(percent, 1) + "%";
}

std::string targetText(const CalibrationGroupSummary& s) {
    std::string text = "target";
    if (s.target_mean_abs_percent > 0)
        text += " mean <= " + formatFixed(s.target_mean_abs_percent, 0) + "%";
    if (s.target_max_abs_percent > 0)
        text += std::string(s.target_mean_abs_percent > 0 ? "," : "") +
                " max <= " + formatFixed(s.target_max_abs_percent, 0) + "%";
    return text + (s.meetsTarget() ? ": met" : ": not met");
}

std::string calibrationTable(const CalibrationRun& run) {
    TextTable table({"case", "published", "predicted", "error", "what"},
                    {TextTable::Align::left, TextTable::Align::right, TextTable::Align::right,
                     TextTable::Align::right, TextTable::Align::left});
    std::string group;
    for (const CalibrationResult& r : run.results) {
        const CalibrationCase& c = *r.reference;
        if (!group.empty() && c.group != group)
            table.addSeparator();
        group = c.group;
        const int decimals = c.unit == "s" ? 3 : 1;
        const std::string published = formatFixed(c.published, decimals) + " " + c.unit;
        if (r.compared) {
            table.addRow({c.id, published, formatFixed(r.predicted, decimals) + " " + c.unit,
                          signedPercent(r.error_percent), c.title});
        } else {
            table.addRow({c.id, published, "-", "-", c.title + " (not compared)"});
        }
    }
    return table.render();
}

std::string calibrationText(const CalibrationRun& run) {
    std::ostringstream out;
    out << calibrationTable(run) << "\n";
    for (const CalibrationGroupSummary& s : run.summary) {
        out << s.group << ": " << s.compared << " of " << s.cases << " cases compared";
        if (s.compared > 0) {
            out << ", mean |error| " << formatFixed(s.mean_abs_error_percent, 1)
                << "%, max |error| " << formatFixed(s.max_abs_error_percent, 1) << "%";
        }
        if (s.hasTarget())
            out << "; " << targetText(s);
        out << "\n";
    }
    bool heading = false;
    for (const CalibrationResult& r : run.results) {
        if (r.compared)
            continue;
        if (!heading)
            out << "\nNot compared:\n";
        heading = true;
        out << "  " << r.reference->id << ": " << r.reference->note << "\n";
    }
    // A compared case's note states how its figure was read (one line per distinct note).
    std::vector<std::pair<std::string, std::string>> notes; // (note, case ids)
    for (const CalibrationResult& r : run.results) {
        if (!r.compared || r.reference->note.empty())
            continue;
        auto it = std::find_if(notes.begin(), notes.end(),
                               [&](const auto& n) { return n.first == r.reference->note; });
        if (it == notes.end())
            notes.emplace_back(r.reference->note, r.reference->id);
        else
            it->second += ", " + r.reference->id;
    }
    if (!notes.empty())
        out << "\nNotes:\n";
    for (const auto& [note, ids] : notes)
        out << "  " << ids << ": " << note << "\n";
    out << "\nSources:\n";
    std::string last_source;
    for (const CalibrationResult& r : run.results) {
        if (r.reference->source != last_source)
            out << "  " << r.reference->group << ": " << r.reference->source << "\n";
        last_source = r.reference->source;
    }
    if (run.targetGroups() > 0) {
        out << "\nTargets (issue 15): " << run.targetsMet() << " of " << run.targetGroups()
            << " groups met"
            << (run.targetsMet() == run.targetGroups() ? ".\n"
                                                       : "; the model is not calibrated yet.\n");
    }
    return out.str();
}

std::string calibrationJson(const CalibrationRun& run) {
    JsonWriter json;
    beginDocument(json, "calibrate");
    json.field("calibrated", run.targetGroups() > 0 && run.targetsMet() == run.targetGroups())
        .key("cases")
        .beginArray();
    for (const CalibrationResult& r : run.results) {
        const CalibrationCase& c = *r.reference;
        json.beginObject()
            .field("id", c.id)
            .field("group", c.group)
            .field("title", c.title)
            .field("source", c.source)
            .field("metric", std::string(toString(c.metric)))
            .field("unit", c.unit)
            .field("published", c.published)
            .field("compared", r.compared);
        if (r.compared)
            json.field("predicted", r.predicted).field("error_percent", r.error_percent);
        else
            json.key("predicted").null().key("error_percent").null();
        json.field("note", c.note).endObject();
    }
    json.endArray().key("summary").beginArray();
    for (const CalibrationGroupSummary& s : run.summary) {
        json.beginObject()
            .field("group", s.group)
            .field("cases", s.cases)
            .field("compared", s.compared);
        if (s.compared > 0) {
            json.field("mean_abs_error_percent", s.mean_abs_error_percent)
                .field("max_abs_error_percent", s.max_abs_error_percent);
        } else {
            json.key("mean_abs_error_percent").null().key("max_abs_error_percent").null();
        }
        const auto bound = [&](const char* key, double percent) {
            if (percent > 0)
                json.field(key, percent);
            else
                json.key(key).null();
        };
        bound("target_mean_abs_error_percent", s.target_mean_abs_percent);
        bound("target_max_abs_error_percent", s.target_max_abs_percent);
        if (s.hasTarget())
            json.field("meets_target", s.meetsTarget());
        else
            json.key("meets_target").null();
        json.endObject();
    }
    json.endArray().endObject();
    return json.str() + "\n";
}

int runCalibrate(const CalibrateOptions& o, CommandIo& io) {
    const CalibrationRun run = runCalibration(o.case_id);
    if (run.results.empty())
        return io.fail(kExitBadInput,
                       "unknown case '" + o.case_id + "' (moe-plan calibrate lists them)");
    io.out() << (io.json() ? calibrationJson(run) : calibrationText(run));
    return kExitOk;
}

} // namespace

void addCalibrateCommand(CLI::App& app, CommandTable& table) {
    auto o = std::make_shared<CalibrateOptions>();
    CLI::App* c = table.add(app, "calibrate",
                            "Runs the built-in published reference runs (Megatron-LM SC21 Table 1, "
                            "GPT-3 175B, DeepSeek-V3 on 2048 H800, DeepEP) and prints published "
                            "vs predicted, the signed error, and the mean and max |error| per "
                            "group.",
                            [o](CommandIo& io) { return runCalibrate(*o, io); });
    c->add_option("--case", o->case_id, "only this case (an id from the table, e.g. sc21-1.7b)")
        ->type_name("ID");
    addJsonFlag(c, o->json, "every case and the summary");
}

} // namespace moe::cli
