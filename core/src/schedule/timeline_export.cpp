// The timeline's exports: the GPUs to show, the Chrome trace event format and CSV.

#include "moe/format.h"
#include "moe/json_writer.h"
#include "moe/timeline.h"

#include <algorithm>

namespace moe {

// ---- exports -------------------------------------------------------------------------------

std::vector<int> defaultTraceGpus(const Timeline& t, size_t max_spans) {
    std::vector<int> all;
    size_t spans = 0;
    std::vector<int> first(t.rows.size(), -1), hottest(t.rows.size(), -1);
    std::vector<double> best(t.rows.size(), -1.0);
    // Layers whose expert GEMMs each row runs, to rank its GPUs by their own load.
    std::vector<std::vector<int>> row_layers(t.rows.size());
    for (size_t r = 0; r < t.rows.size(); ++r) {
        for (const Span& s : t.rows[r].spans)
            if (s.kind == SpanKind::expert && !s.backward && s.microbatch == 0)
                row_layers[r].push_back(s.layer);
    }
    for (int g = 0; g < t.gpus; ++g) {
        const int r = t.rowOfGpu(g);
        if (r < 0)
            continue;
        all.push_back(g);
        spans += t.rows[static_cast<size_t>(r)].spans.size();
        if (first[static_cast<size_t>(r)] < 0)
            first[static_cast<size_t>(r)] = g;
        double load = 0;
        for (const int l : row_layers[static_cast<size_t>(r)])
            load += t.expertShare(g, l);
        if (load > best[static_cast<size_t>(r)]) {
            best[static_cast<size_t>(r)] = load;
            hottest[static_cast<size_t>(r)] = g;
        }
    }
    if (spans <= max_spans)
        return all;
    std::vector<int> picked;
    for (size_t r = 0; r < t.rows.size(); ++r) {
        if (first[r] >= 0)
            picked.push_back(first[r]);
        if (hottest[r] >= 0 && hottest[r] != first[r])
            picked.push_back(hottest[r]);
    }
    std::sort(picked.begin(), picked.end());
    return picked;
}

namespace {

const char* passName(const Span& s) {
    return s.backward ? "backward" : "forward";
}

std::string threadName(int gpu, TimelineStream stream) {
    return "GPU " + std::to_string(gpu) + " " + toString(stream);
}

} // namespace

std::string chromeTraceJson(const Timeline& t, const std::vector<int>& gpus) {
    JsonWriter json(false);
    json.beginObject();
    json.field("displayTimeUnit", "ms");
    json.key("otherData").beginObject();
    json.field("generator", "moe-plan timeline");
    json.field("schedule", toString(t.schedule));
    json.field("step_time_s", t.step_time_s);
    json.field("stages", t.stages);
    json.field("micro_batches", t.micro_batches);
    json.endObject();
    json.key("traceEvents").beginArray();
    // Metadata first: processes are nodes, threads are GPU streams (tid = gpu * streams + s).
    std::vector<int> nodes;
    for (const int g : gpus)
        if (nodes.empty() || nodes.back() != t.nodeOfGpu(g))
            nodes.push_back(t.nodeOfGpu(g));
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    for (const int n : nodes) {
        json.beginObject()
            .field("name", "process_name")
            .field("ph", "M")
            .field("pid", n)
            .key("args")
            .beginObject()
            .field("name", "node " + std::to_string(n))
            .endObject()
            .endObject();
        json.beginObject()
            .field("name", "process_sort_index")
            .field("ph", "M")
            .field("pid", n)
            .key("args")
            .beginObject()
            .field("sort_index", n)
            .endObject()
            .endObject();
    }
    for (const int g : gpus) {
        const int row = t.rowOfGpu(g);
        if (row < 0)
            continue;
        bool used[kTimelineStreamCount] = {};
        for (const Span& s : t.rows[static_cast<size_t>(row)].spans)
            used[static_cast<int>(s.stream)] = true;
        for (int s = 0; s < kTimelineStreamCount; ++s) {
            if (!used[s])
                continue;
            const int tid = g * kTimelineStreamCount + s;
            json.beginObject()
                .field("name", "thread_name")
                .field("ph", "M")
                .field("pid", t.nodeOfGpu(g))
                .field("tid", tid)
                .key("args")
                .beginObject()
                .field("name", threadName(g, static_cast<TimelineStream>(s)))
                .endObject()
                .endObject();
            json.beginObject()
                .field("name", "thread_sort_index")
                .field("ph", "M")
                .field("pid", t.nodeOfGpu(g))
                .field("tid", tid)
                .key("args")
                .beginObject()
                .field("sort_index", tid)
                .endObject()
                .endObject();
        }
    }
    for (const int g : gpus) {
        const int pid = t.nodeOfGpu(g);
        for (const Span& s : t.spansForGpu(g)) {
            json.beginObject();
            json.field("name", std::string(toString(s.kind)) + (s.backward ? " bwd" : ""));
            json.field("cat", isCommunication(s.kind) ? "communication" : "compute");
            json.field("ph", "X");
            json.field("ts", s.start_s * 1e6);
            json.field("dur", s.duration_s() * 1e6);
            json.field("pid", pid);
            json.field("tid", g * kTimelineStreamCount + static_cast<int>(s.stream));
            json.key("args").beginObject();
            json.key("layer");
            if (s.layer >= 0)
                json.value(s.layer);
            else
                json.null();
            json.key("microbatch");
            if (s.microbatch >= 0)
                json.value(s.microbatch);
            else
                json.null();
            json.field("bytes", s.bytes);
            json.field("pass", passName(s));
            json.endObject();
            json.endObject();
        }
    }
    json.endArray();
    json.endObject();
    return json.str();
}

std::string timelineCsv(const Timeline& t, const std::vector<int>& gpus) {
    std::string out = "gpu,node,stream,kind,pass,layer,microbatch,start_s,end_s,bytes\n";
    for (const int g : gpus) {
        const std::string prefix = std::to_string(g) + "," + std::to_string(t.nodeOfGpu(g)) + ",";
        for (const Span& s : t.spansForGpu(g)) {
            out += prefix;
            out += toString(s.stream);
            out += ',';
            out += toString(s.kind);
            out += ',';
            out += passName(s);
            out += ',';
            out += std::to_string(s.layer);
            out += ',';
            out += std::to_string(s.microbatch);
            out += ',';
            out += formatNumber(s.start_s);
            out += ',';
            out += formatNumber(s.end_s);
            out += ',';
            out += formatNumber(s.bytes);
            out += '\n';
        }
    }
    return out;
}

} // namespace moe
