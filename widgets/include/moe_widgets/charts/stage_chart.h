#pragma once
// What the step-breakdown and memory charts share: a QCustomPlot with a title, a subtitle, the
// bars and a legend row under them; the pipeline stage of the selected GPU marked; tooltips;
// a rebuild when the palette or the size changes; export at slide size in the light theme.
// Subclasses fill the plot in rebuild() and describe a bar in toolTipAt().

#include "moe_widgets/common/report_view.h"

#include <QFont>
#include <QString>
#include <QWidget>

#include <vector>

class QCustomPlot;
class QCPBars;
class QCPTextElement;

namespace moe::widgets {

class ScenarioDocument;
class ViewState;

class StageChart : public QWidget, public ReportView {
    Q_OBJECT
public:
    ~StageChart() override;

    QWidget* widget() override { return this; }
    void showResult(const EvaluationResultPtr& result) override;
    QString exportTo(const QString& path) override;

    QCustomPlot* plot() const { return plot_; }

protected:
    static constexpr int kExportWidth = 1600;
    static constexpr int kExportHeight = 900;

    StageChart(ScenarioDocument* document, ViewState* state, const QString& object_name,
               QWidget* parent);

    /// Refills the plot from result_ (never null when called); for_export lays it out for a
    /// kExportWidth x kExportHeight slide in the light theme.
    virtual void rebuild(bool for_export) = 0;
    /// HTML for the bar under `pos`, or empty.
    virtual QString toolTipAt(const QPoint& pos) const = 0;
    /// Title of the exported file (its metadata).
    virtual QString exportTitle() const = 0;

    /// Fonts of one layout: the base (tick labels), the title and the small one (the rest).
    struct Fonts {
        QFont base, title, small;
    };
    Fonts fonts(bool for_export) const;
    QCPTextElement* titleElement() const;
    QCPTextElement* subtitleElement() const;
    /// Clears the plot for a rebuild; false (after an empty replot) when there is no result.
    bool clearForRebuild();

    void changeEvent(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

    ScenarioDocument* document_;
    ViewState* state_;
    EvaluationResultPtr result_;
    QCustomPlot* plot_;
    std::vector<QCPBars*> bars_; ///< stacked, bottom first
    int selected_stage_ = -1;    ///< pipeline stage of the selected GPU, or -1

private:
    int stageOfSelectedGpu(int gpu) const;
};

} // namespace moe::widgets
