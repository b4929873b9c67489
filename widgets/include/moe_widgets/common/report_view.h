#pragma once
// What every panel of the main window implements, so the window, the headless export and the
// tests treat them alike.

#include "moe_widgets/document/evaluator.h"

#include <QString>

class QWidget;

namespace moe::widgets {

class ReportView {
public:
    virtual ~ReportView() = default;
    /// Stable id used for dock object names, settings and export file names ("topology").
    virtual QString viewId() const = 0;
    virtual QString viewTitle() const = 0;
    virtual QWidget* widget() = 0;
    /// Renders the newest result. Must be cheap: it runs on the GUI thread after every edit.
    virtual void showResult(const EvaluationResultPtr& result) = 0;
    /// Writes the view to `path`; format from the suffix (.svg, .png, .pdf), vector where the
    /// view is vector, sized for slides (1600x900 at least) with a title and a legend. Returns
    /// an empty string or the reason.
    virtual QString exportTo(const QString& path) = 0;
};

} // namespace moe::widgets
