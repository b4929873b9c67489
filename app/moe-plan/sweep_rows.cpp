#include "sweep_rows.h"

#include "json_output.h"
#include "version.h"

#include "moe/format.h"
#include "moe/step_costs.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>

namespace moe::cli {

namespace {

using ordered_json = nlohmann::ordered_json;

/// An override's value as a JSON number when it is one, so tables get numeric columns.
void writeValue(JsonWriter& json, const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    const bool numeric = !text.empty() && end == text.c_str() + text.size() &&
                         text.find_first_of("xXnN") == std::string::npos;
    if (numeric && formatNumber(v) == text)
        json.value(v);
    else
        json.value(text);
}

/// The figures of a row; null for every one when the point is invalid, so every row has the
/// same keys (and CSV the same columns).
void writeFigures(JsonWriter& json, const Report* r) {
    auto field = [&](const char* key, auto get) {
        if (r)
            json.field(key, get(*r));
        else
            json.key(key).null();
    };
    field("gpus", [](const Report& x) { return x.gpus; });
    field("micro_batches", [](const Report& x) { return x.micro_batches; });
    field("step_time_s", [](const Report& x) { return x.step_time_s; });
    field("tokens_per_s", [](const Report& x) { return x.throughput.tokens_per_s; });
    field("tokens_per_s_per_gpu",
          [](const Report& x) { return x.throughput.tokens_per_s_per_gpu; });
    field("model_tflops_per_gpu",
          [](const Report& x) { return x.throughput.model_tflops_per_gpu; });
    field("mfu", [](const Report& x) { return x.throughput.mfu; });
    field("memory_bytes", [](const Report& x) { return x.memory.total_bytes; });
    field("hbm_bytes", [](const Report& x) { return x.memory.hbm_bytes; });
    field("memory_margin_bytes", [](const Report& x) { return x.memory.margin_bytes; });
    field("fits", [](const Report& x) { return x.memory.fits; });
    field("max_expert_imbalance", [](const Report& x) { return x.load.max_imbalance; });
    field("time_to_train_s", [](const Report& x) { return x.throughput.time_to_train_s; });
    field("wall_time_s", [](const Report& x) { return x.economics.wall_time_s; });
    field("goodput", [](const Report& x) { return x.economics.reliability.goodput; });
    field("cost_usd", [](const Report& x) { return x.economics.cost_usd; });
    field("usd_per_trillion_tokens",
          [](const Report& x) { return x.economics.usd_per_trillion_tokens; });
    field("energy_kwh", [](const Report& x) { return x.economics.energy_kwh; });
    field("capital_usd", [](const Report& x) { return x.economics.capital.total_usd; });
    field("warnings", [](const Report& x) { return static_cast<int>(x.warnings.size()); });
    json.key("breakdown").beginObject();
    for (int i = 0; i < kStepItemCount; ++i) {
        if (r)
            json.field(keyOf(static_cast<StepItem>(i)), r->step.seconds[static_cast<size_t>(i)]);
        else
            json.key(keyOf(static_cast<StepItem>(i))).null();
    }
    json.endObject();
}

std::string csvCell(const ordered_json& v) {
    std::string text;
    if (v.is_null())
        return {};
    if (v.is_string())
        text = v.get<std::string>();
    else if (v.is_array())
        for (const ordered_json& item : v)
            text += (text.empty() ? "" : "; ") +
                    (item.is_string() ? item.get<std::string>() : item.dump());
    else
        text = v.dump();
    if (text.find_first_of(",\"\n\r") == std::string::npos)
        return text;
    std::string quoted = "\"";
    for (const char c : text)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

void flatten(const ordered_json& object, const std::string& prefix,
             std::vector<std::pair<std::string, const ordered_json*>>& out) {
    for (auto it = object.begin(); it != object.end(); ++it) {
        const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it.value().is_object())
            flatten(it.value(), key, out);
        else
            out.emplace_back(key, &it.value());
    }
}

} // namespace

std::string sweepStudy(const std::string& base_text, const SweepGrid& grid) {
    std::string key = base_text + "\nversion " + cmdline::version();
    for (const SweepAxis& a : grid.axes) {
        key += "\naxis " + a.key;
        for (const std::string& v : a.values)
            key += "\n  " + v;
    }
    // FNV-1a, 64 bits: a check against mixing up files, not a security measure.
    uint64_t hash = 1469598103934665603ull;
    for (const unsigned char c : key) {
        hash ^= c;
        hash *= 1099511628211ull;
    }
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
    return text;
}

std::string sweepRowJson(const SweepPoint& p, const std::string& study, int64_t points) {
    JsonWriter json(false);
    beginDocument(json, "sweep");
    json.field("study", study).field("point", p.index).field("points", points);
    json.key("overrides").beginObject();
    for (const auto& [key, value] : p.overrides) {
        json.key(key);
        writeValue(json, value);
    }
    json.endObject();
    if (p.loaded.ok()) {
        writeScenarioIdentity(json, *p.loaded.scenario);
    } else {
        json.key("scenario").null().key("layout");
        writeLayoutJson(json, nullptr);
    }
    json.field("ok", p.loaded.ok()).key("errors").beginArray();
    for (const Diagnostic& d : p.loaded.diagnostics)
        if (d.severity == Diagnostic::Severity::error)
            json.value(d.message);
    json.endArray();
    writeFigures(json, p.report);
    json.endObject();
    return json.str() + "\n";
}

std::string CsvRows::add(const std::string& json_row, std::string& problem) {
    ordered_json row;
    try {
        row = ordered_json::parse(json_row);
    } catch (const std::exception& e) {
        problem = std::string("not a JSON row: ") + e.what();
        return {};
    }
    std::vector<std::pair<std::string, const ordered_json*>> cells;
    flatten(row, "", cells);
    std::string out;
    if (columns_.empty()) {
        for (const auto& [key, value] : cells) {
            columns_.push_back(key);
            out += (out.empty() ? "" : ",") + csvCell(ordered_json(key));
        }
        out += "\n";
    }
    if (cells.size() != columns_.size()) {
        problem = "a row has " + std::to_string(cells.size()) + " columns, the first had " +
                  std::to_string(columns_.size());
        return {};
    }
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) {
        if (cells[i].first != columns_[i]) {
            problem = "a row has column '" + cells[i].first + "' where the first had '" +
                      columns_[i] + "'";
            return {};
        }
        line += (i == 0 ? "" : ",") + csvCell(*cells[i].second);
    }
    return out + line + "\n";
}

bool sweepRowKey(const std::string& json_row, std::string& study, int64_t& point, int64_t& points) {
    try {
        const nlohmann::json row = nlohmann::json::parse(json_row);
        if (row.value("command", "") != "sweep")
            return false;
        study = row.at("study").get<std::string>();
        point = row.at("point").get<int64_t>();
        points = row.at("points").get<int64_t>();
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

} // namespace moe::cli
