#pragma once
// The design-review report: one file with everything a review needs. PDF pages (A4 landscape):
// 1. the argument: the layout in words generated from the placement (layoutInWords), the
// headline figures (step, throughput, MFU, memory peak against HBM, time and cost to train),
// the verdict against the baseline if there is one, and the top warnings; with a baseline, the
// comparison at once (figures with deltas, the two sides labelled by what differs, the fields
// that differ, the breakdowns side by side); the details (cluster, model, batch, the scenario's
// description as the author's note, every headline figure); the layout in words line by line;
// the topology; the step breakdown; the Gantt chart; the expert-load heatmap; memory per GPU;
// every warning. The HTML version has the same sections with the diagrams as inline SVG, for
// wikis. The diagrams are the views' own exports (ReportView::exportTo), so the report shows
// exactly what the app shows.

#include "moe_widgets/document/evaluator.h"

#include <QString>

namespace moe::widgets {

struct DesignReportInput {
    EvaluationResultPtr current;  ///< required
    EvaluationResultPtr baseline; ///< optional: adds the comparison pages
    QString source_file;          ///< shown on the title page, may be empty
    QString baseline_file;        ///< likewise
};

/// Pages of the PDF: 9, or 11 with a baseline.
int designReportPageCount(bool with_baseline);

/// Writes the report to `path`, PDF or HTML by the suffix (.pdf, .html or .htm). Needs a
/// QApplication (the views are widgets). Returns an empty string or the reason.
QString writeDesignReport(const QString& path, const DesignReportInput& input);

} // namespace moe::widgets
