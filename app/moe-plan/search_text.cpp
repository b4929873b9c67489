#include "search_text.h"

#include "json_output.h"
#include "text_table.h"

#include "moe/format.h"
#include "moe/json_writer.h"

#include <sstream>

namespace moe::cli {

namespace {

using Align = TextTable::Align;

std::string orderText(const RankOrder& order) {
    return toString(order);
}

std::string scheduleText(const LayoutSpec& l) {
    if (l.pp <= 1)
        return "-";
    std::string s = toString(l.schedule);
    if (l.vpp > 1)
        s += " x" + std::to_string(l.vpp);
    // Uneven end stages: the first and last stage's layer counts (0 = the even share).
    if (l.first_stage_layers > 0 || l.last_stage_layers > 0)
        s += " ends " + std::to_string(l.first_stage_layers) + "/" +
             std::to_string(l.last_stage_layers);
    return s;
}

std::string rankText(const SearchCandidate& c) {
    return std::to_string(c.rank) + (c.is_input ? "*" : "");
}

std::string dash(double seconds) {
    return seconds > 0 ? formatSeconds(seconds, UnitStyle::ascii) : "-";
}

TextTable candidateTable(const Scenario& s) {
    std::vector<std::string> headers = {"#", "TP", "CP", "PP", "DP"};
    if (s.model.isMoe()) {
        headers.insert(headers.end(), {"EP", "ETP", "eDP", "order"});
    }
    headers.insert(headers.end(),
                   {"schedule", "mb", "recompute", "step", "tokens/s", "compute", "all-to-all",
                    "TP+CP", "PP+bubble", "DP sync", "imbalance", "memory/GPU", "cross-node/GPU"});
    std::vector<Align> aligns(headers.size(), Align::right);
    for (size_t i = 0; i < headers.size(); ++i)
        if (headers[i] == "order" || headers[i] == "schedule" || headers[i] == "recompute")
            aligns[i] = Align::left;
    return TextTable(headers, aligns);
}

void addCandidateRow(TextTable& table, const SearchCandidate& c) {
    const Scenario& s = c.scenario;
    const LayoutSpec& l = s.layout;
    const SearchFigures& f = c.figures;
    const SearchStepColumns col = stepColumnsOf(f);
    std::vector<std::string> row = {rankText(c), std::to_string(l.tp), std::to_string(l.cp),
                                    std::to_string(l.pp), std::to_string(l.dp)};
    if (s.model.isMoe()) {
        row.insert(row.end(), {std::to_string(l.ep), std::to_string(l.etp),
                               std::to_string(l.expertDp()), orderText(l.order)});
    }
    row.insert(row.end(),
               {scheduleText(l), std::to_string(s.training.micro_batch),
                toString(s.training.recompute), formatSeconds(f.step_time_s, UnitStyle::ascii),
                formatCount(f.tokens_per_s), formatSeconds(col.compute_s, UnitStyle::ascii),
                dash(col.all_to_all_s), dash(col.tp_cp_s), dash(col.pipeline_s),
                dash(col.dp_sync_s), dash(col.imbalance_s),
                formatBytes(f.memory_bytes, UnitStyle::ascii) + (f.fits ? "" : " !"),
                formatBytes(f.cross_node_bytes, UnitStyle::ascii)});
    table.addRow(std::move(row));
}

void writeFiguresJson(JsonWriter& json, const SearchFigures& f) {
    json.beginObject()
        .field("step_time_s", f.step_time_s)
        .field("tokens_per_s", f.tokens_per_s)
        .field("tokens_per_s_per_gpu", f.tokens_per_s_per_gpu)
        .field("mfu", f.mfu)
        .field("memory_bytes", f.memory_bytes)
        .field("hbm_bytes", f.hbm_bytes)
        .field("margin_bytes", f.margin_bytes)
        .field("fits", f.fits)
        .field("cross_node_bytes_per_gpu", f.cross_node_bytes)
        .field("scale_up_bytes_per_gpu", f.scale_up_bytes)
        .field("micro_batches", f.micro_batches);
    json.key("step").beginObject();
    for (int i = 0; i < kStepItemCount; ++i)
        json.field(keyOf(static_cast<StepItem>(i)), f.step.seconds[static_cast<size_t>(i)]);
    json.endObject().endObject();
}

void writeCandidateJson(JsonWriter& json, const SearchCandidate& c) {
    json.beginObject().field("rank", c.rank).field("is_input", c.is_input);
    json.key("layout");
    writeLayoutJson(json, c.scenario);
    json.field("summary", layoutSummary(c.scenario));
    json.key("figures");
    writeFiguresJson(json, c.figures);
    json.endObject();
}

} // namespace

std::string searchText(const Scenario& s, const SearchResult& r) {
    const ClusterSpec& c = s.cluster;
    std::ostringstream o;
    o << "Layout search: " << s.name << " (" << c.gpuCount() << " x " << c.gpu.name << " in "
      << c.nodes << " nodes of " << c.gpus_per_node << " GPUs)\n";
    o << "  Searched " << formatCount(static_cast<double>(r.candidates)) << " candidates in "
      << formatSeconds(r.elapsed_s, UnitStyle::ascii) << " on " << r.threads << " thread"
      << (r.threads == 1 ? "" : "s") << " (CPU " << formatSeconds(r.cpu_s, UnitStyle::ascii)
      << "): " << formatCount(static_cast<double>(r.evaluated)) << " evaluated, "
      << formatCount(r.evaluated_per_s) << " evaluations/s, " << formatCount(r.candidates_per_s)
      << " candidates/s\n";

    if (r.found()) {
        const int64_t pruned = r.rejectedCount(RejectReason::bound);
        o << "\nRanked by step time, best first (top " << r.ranked.size() << " of "
          << formatCount(static_cast<double>(r.evaluated + pruned)) << " that fit";
        if (pruned > 0)
            o << ", " << formatCount(static_cast<double>(pruned))
              << " of them pruned by bound: slower than every layout shown";
        o << "; * = the scenario's own layout)\n";
        TextTable table = candidateTable(s);
        for (const SearchCandidate& cand : r.ranked)
            addCandidateRow(table, cand);
        if (r.input && (r.input->rank == 0 || r.input->rank > static_cast<int>(r.ranked.size()))) {
            table.addSeparator();
            SearchCandidate in = *r.input;
            addCandidateRow(table, in);
        }
        o << table.render("  ");

        o << "\nPareto front over step time, memory headroom and cross-node traffic: "
          << r.pareto_total << " layout" << (r.pareto_total == 1 ? "" : "s");
        if (r.pareto_bound_s > 0)
            o << " up to " << formatSeconds(r.pareto_bound_s, UnitStyle::ascii)
              << " per step (the front goes on among the layouts pruned by bound; --no-prune "
                 "evaluates them)";
        if (static_cast<int64_t>(r.pareto.size()) < r.pareto_total)
            o << " (the " << r.pareto.size() << " fastest shown)";
        o << "\n";
        TextTable front({"#", "layout", "step", "memory margin", "cross-node/GPU"},
                        {Align::left, Align::left});
        for (const SearchCandidate& cand : r.pareto)
            front.addRow({rankText(cand), layoutSummary(cand.scenario),
                          formatSeconds(cand.figures.step_time_s, UnitStyle::ascii),
                          formatBytes(cand.figures.margin_bytes, UnitStyle::ascii),
                          formatBytes(cand.figures.cross_node_bytes, UnitStyle::ascii)});
        o << front.render("  ");
    }

    o << "\n" << (r.found() ? "Why this layout" : "Why nothing fits") << "\n";
    for (const std::string& line : r.explanation)
        o << "  - " << line << "\n";

    o << "\nCandidates not evaluated, by the first reason that applied\n";
    TextTable rejected({"reason", "count", "meaning", "e.g."},
                       {Align::left, Align::right, Align::left, Align::left});
    int64_t total = 0;
    for (int i = 0; i < kRejectReasonCount; ++i) {
        const RejectionCount& rc = r.rejected[static_cast<size_t>(i)];
        if (rc.count == 0)
            continue;
        total += rc.count;
        rejected.addRow({toString(static_cast<RejectReason>(i)),
                         formatCount(static_cast<double>(rc.count)),
                         describe(static_cast<RejectReason>(i)), rc.example});
    }
    rejected.addSeparator();
    rejected.addRow({"total", formatCount(static_cast<double>(total)),
                     "of " + formatCount(static_cast<double>(r.candidates)) + " candidates", ""});
    o << rejected.render("  ");
    return o.str();
}

std::string searchJson(const Scenario& s, const SearchResult& r) {
    JsonWriter json;
    beginDocument(json, "search", s);
    json.field("found", r.found());
    json.field("candidates", r.candidates)
        .field("evaluated", r.evaluated)
        .field("elapsed_s", r.elapsed_s)
        .field("cpu_s", r.cpu_s)
        .field("evaluated_per_s", r.evaluated_per_s)
        .field("candidates_per_s", r.candidates_per_s)
        .field("threads", r.threads);
    json.key("rejected").beginObject();
    for (int i = 0; i < kRejectReasonCount; ++i) {
        const RejectionCount& rc = r.rejected[static_cast<size_t>(i)];
        json.key(toString(static_cast<RejectReason>(i)))
            .beginObject()
            .field("count", rc.count)
            .field("example", rc.example)
            .endObject();
    }
    json.endObject();
    json.key("ranked").beginArray();
    for (const SearchCandidate& c : r.ranked)
        writeCandidateJson(json, c);
    json.endArray();
    json.field("pareto_total", r.pareto_total);
    json.field("pareto_bound_s", r.pareto_bound_s);
    json.key("pareto").beginArray();
    for (const SearchCandidate& c : r.pareto)
        writeCandidateJson(json, c);
    json.endArray();
    json.key("input");
    if (r.input)
        writeCandidateJson(json, *r.input);
    else
        json.null();
    json.key("explanation").beginArray();
    for (const std::string& line : r.explanation)
        json.value(line);
    json.endArray().endObject();
    return json.str() + "\n";
}

} // namespace moe::cli
