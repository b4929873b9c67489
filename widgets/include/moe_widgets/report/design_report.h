#pragma once
// The design-review report: one file with everything a review needs. PDF pages (A4 landscape):
// title with the scenario summary and headline figures; the layout in words; the topology
// diagram; the step breakdown; the Gantt chart; the expert-load heatmap; memory per GPU (table
// and chart); warnings; and, given a baseline, the comparison (figures with deltas and the
// scenario fields that differ, then the breakdowns side by side). The HTML version has the same
// sections with the diagrams as inline SVG, for wikis. The diagrams are the views' own exports
// (ReportView::exportTo), so the report shows exactly what the app shows.

#include "moe_widgets/document/evaluator.h"

#include <QString>

namespace moe::widgets {

struct DesignReportInput {
    EvaluationResultPtr current;  ///< required
    EvaluationResultPtr baseline; ///< optional: adds the comparison pages
    QString source_file;          ///< shown on the title page, may be empty
    QString baseline_file;        ///< likewise
};

/// Pages of the PDF: 8, or 10 with a baseline.
int designReportPageCount(bool with_baseline);

/// Writes the report to `path`, PDF or HTML by the suffix (.pdf, .html or .htm). Needs a
/// QApplication (the views are widgets). Returns an empty string or the reason.
QString writeDesignReport(const QString& path, const DesignReportInput& input);

} // namespace moe::widgets
