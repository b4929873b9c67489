#pragma once
// The data one frame of the step timeline draws (on screen or in an export), private to
// timeline/: the rows with their simulated spans and critical path (GanttData), and the rows of
// the expanded tree laid out top to bottom (GanttFrame).

#include "timeline/gantt_style.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace moe::widgets {

struct SpanList {
    const std::vector<Span>* spans = nullptr;
    double max_duration_s = 0;
    double wait_s = 0; ///< GPU rows: time spent waiting for the EP group's hottest GPU
};

struct GanttData {
    std::shared_ptr<const Timeline> timeline;
    std::vector<GanttRow> rows;
    std::vector<char> expanded;
    std::vector<char> highlight;
    /// Per simulated row: the longest span (for culling), and per lane (compute, transfers,
    /// gradient sync; laneOf) the critical path's intervals, merged where they touch.
    std::vector<double> row_max_duration;
    using Intervals = std::vector<std::pair<double, double>>;
    std::vector<std::array<Intervals, 3>> critical;
    struct Hop {
        int from_row = 0;
        int to_row = 0;
        double time_s = 0;
    };
    std::vector<Hop> hops;
    double report_step_s = 0;
    bool moe = false;
    int selected_gpu = -1;
    bool show_critical = true;

    struct GpuSpans {
        std::vector<Span> spans;
        double max_duration_s = 0;
        double wait_s = 0;
    };
    /// GPU rows' own schedules, simulated rows adjusted to each GPU's load when first drawn.
    mutable std::unordered_map<int, GpuSpans> gpu_spans;

    double total_s() const {
        const double simulated = timeline != nullptr ? timeline->step_time_s : 0.0;
        return std::max(simulated > 0 ? simulated : report_step_s, 1e-9);
    }

    SpanList spansOf(const GanttRow& row) const {
        if (timeline == nullptr || !timeline->ok())
            return {};
        if (row.level == GanttRow::Level::gpu && moe) {
            auto it = gpu_spans.find(row.gpu);
            if (it == gpu_spans.end()) {
                if (gpu_spans.size() > 512)
                    gpu_spans.clear();
                GpuSpans own;
                own.spans = timeline->spansForGpu(row.gpu);
                for (const Span& s : own.spans) {
                    own.max_duration_s = std::max(own.max_duration_s, s.duration_s());
                    if (s.kind == SpanKind::wait)
                        own.wait_s += s.duration_s();
                }
                it = gpu_spans.emplace(row.gpu, std::move(own)).first;
            }
            return {&it->second.spans, it->second.max_duration_s, it->second.wait_s};
        }
        if (row.timeline_row < 0 || row.timeline_row >= static_cast<int>(timeline->rows.size()))
            return {};
        return {&timeline->rows[static_cast<size_t>(row.timeline_row)].spans,
                row_max_duration[static_cast<size_t>(row.timeline_row)]};
    }

    /// Index of the first span that may end after `time_s`.
    static size_t firstSpan(const SpanList& list, double time_s) {
        const auto& spans = *list.spans;
        const double from = time_s - list.max_duration_s;
        return static_cast<size_t>(
            std::partition_point(spans.begin(), spans.end(),
                                 [&](const Span& s) { return s.start_s < from; }) -
            spans.begin());
    }
};

struct GanttFrame {
    const GanttData* data = nullptr;
    const std::vector<char>* expanded = nullptr;
    std::vector<int> visible;
    std::vector<int> row_top; ///< per visible row, plus the total height at the end
    double scale = 1.0;       ///< row heights (exports fill their page)

    int heightOf(const GanttRow& row) const {
        return static_cast<int>(std::lround(gantt::rowHeight(row.level) * scale));
    }

    /// The rows of the expanded tree.
    void build(const GanttData& d, const std::vector<char>& open) {
        data = &d;
        expanded = &open;
        visible.clear();
        for (size_t i = 0; i < d.rows.size();) {
            visible.push_back(static_cast<int>(i));
            const bool group = d.rows[i].level != GanttRow::Level::gpu;
            i = group && open[i] == 0 ? static_cast<size_t>(d.rows[i].subtree_end) : i + 1;
        }
        layout();
    }
    void layout() {
        row_top.resize(visible.size() + 1);
        int y = 0;
        for (size_t i = 0; i < visible.size(); ++i) {
            row_top[i] = y;
            y += heightOf(data->rows[static_cast<size_t>(visible[i])]);
        }
        row_top[visible.size()] = y;
    }
    int totalHeight() const { return row_top.empty() ? 0 : row_top.back(); }
    /// Visible index at content y, or -1.
    int rowAtY(int y) const {
        if (visible.empty() || y < 0 || y >= totalHeight())
            return -1;
        const auto it = std::upper_bound(row_top.begin(), row_top.end() - 1, y);
        return static_cast<int>(it - row_top.begin()) - 1;
    }
};

} // namespace moe::widgets
