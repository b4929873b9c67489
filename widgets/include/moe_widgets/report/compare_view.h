#pragma once
// The Compare panel: a baseline design (the current one pinned, or a second file) against the
// newest result. Every headline figure of moe::headlineFigures() with baseline, current, delta
// and a sign colour (green better, red worse), the step breakdowns side by side, the baseline's
// topology and heatmap next to the current ones, the scenario fields that differ, and a list of
// kept variants ranked by step time. The figures, verdicts and field diff come from
// moe::compareDesigns, the same definition `moe-plan compare` prints.

#include "moe/compare.h"
#include "moe_widgets/common/report_view.h"

#include <QColor>
#include <QString>
#include <QWidget>

#include <vector>

class QCustomPlot;
class QLabel;
class QPalette;
class QPushButton;
class QTabWidget;
class QTableWidget;

namespace moe::widgets {

class Evaluator;
class ScenarioDocument;
class ViewState;
class TopologyView;
class HeatmapView;

/// A headline figure written as the app writes it ("2.39 s", "13.2 days", "1,234,567",
/// "41.2%").
QString formatFigure(FigureFormat format, double value);
/// A signed change of a figure ("+12.0 ms", "-1,234", "+1.5 pp" for percentages, "0").
QString formatFigureDelta(FigureFormat format, double delta);
/// "+12.3%" relative change, "0.0%" for none, "n/a" against a zero baseline.
QString formatRelative(double relative);
/// Text colour of a verdict, readable on `palette`'s base (green better, red worse).
QColor verdictColor(Verdict verdict, const QPalette& palette);

class CompareView : public QWidget, public ReportView {
    Q_OBJECT
public:
    /// Columns of figureTable().
    enum Column { figure_column, baseline_column, current_column, delta_column, relative_column };

    CompareView(ScenarioDocument* document, ViewState* state, QWidget* parent = nullptr);
    ~CompareView() override;

    QString viewId() const override { return QStringLiteral("compare"); }
    QString viewTitle() const override { return tr("Compare"); }
    QWidget* widget() override { return this; }
    void showResult(const EvaluationResultPtr& result) override;
    /// The breakdowns side by side (the current one alone without a baseline).
    QString exportTo(const QString& path) override;

    EvaluationResultPtr baseline() const { return baseline_; }
    EvaluationResultPtr current() const { return current_; }
    void setBaseline(const EvaluationResultPtr& baseline);
    void clearBaseline();
    /// Loads a scenario file and evaluates it off the GUI thread as the baseline (shown when
    /// baselineChanged() is emitted); an empty string, or the file's problems.
    QString openBaselineFile(const QString& path);
    /// A baseline file is being evaluated.
    bool baselinePending() const { return pending_baseline_ != 0; }
    /// Valid when both a baseline and a current result are there.
    bool hasComparison() const { return baseline_ != nullptr && current_ != nullptr; }
    const Comparison& comparison() const { return comparison_; }

    QTableWidget* figureTable() const { return figures_; }
    QTableWidget* fieldTable() const { return fields_; }
    QTableWidget* variantTable() const { return variants_table_; }
    QCustomPlot* breakdownPlot() const { return plot_; }

    /// Kept variants, best (shortest step time) first.
    int variantCount() const { return static_cast<int>(variants_.size()); }
    EvaluationResultPtr variant(int rank) const;

public slots:
    void pinCurrent();
    void openBaselineDialog();
    /// Keeps the current scenario and its result in the variant list.
    void keepVariant();
    void removeVariant(int rank);
    void makeVariantBaseline(int rank);
    /// Replaces the document's scenario with the variant's, as one undoable edit.
    bool loadVariant(int rank);

signals:
    void baselineChanged();

protected:
    void changeEvent(QEvent* event) override;

private:
    void rebuild();
    void rebuildFigures();
    void rebuildFields();
    void rebuildPlot(bool for_export);
    void rebuildVariants();
    void updateSideViews();
    int selectedVariant() const;
    void baselineEvaluated(const EvaluationResultPtr& result);

    ScenarioDocument* document_;
    ViewState* state_;
    EvaluationResultPtr current_;
    EvaluationResultPtr baseline_;
    Comparison comparison_;
    std::vector<EvaluationResultPtr> variants_; ///< ranked by step time

    QLabel* baseline_label_;
    QTabWidget* tabs_;
    QTableWidget* figures_;
    QTableWidget* fields_;
    QLabel* fields_label_;
    QCustomPlot* plot_;
    QTableWidget* variants_table_;
    QPushButton* variant_baseline_button_;
    QPushButton* variant_load_button_;
    QPushButton* variant_remove_button_;
    QWidget* side_page_;
    /// The baseline's views edit a private document and state, never the open scenario.
    ScenarioDocument* side_document_;
    ViewState* side_state_;
    TopologyView* baseline_topology_ = nullptr;
    HeatmapView* baseline_heatmap_ = nullptr;
    TopologyView* current_topology_ = nullptr;
    HeatmapView* current_heatmap_ = nullptr;
    bool side_dirty_ = true;
    /// Evaluates opened baseline files (created on first use); the generation of the file
    /// being evaluated, 0 when none (a pinned or kept baseline cancels a pending file).
    Evaluator* baseline_evaluator_ = nullptr;
    uint64_t pending_baseline_ = 0;
};

} // namespace moe::widgets
