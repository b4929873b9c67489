#pragma once
// The "What changed" panel: after every edit (and undo, redo, a routing sample), the old and new
// step time and the breakdown items that moved most, against the PREVIOUS result; nothing is
// pinned (the Compare panel compares with a pinned baseline). The comparison is the core's
// (moe/compare.h: compareSteps, stepChangeSummary); this panel only lays it out, and offers the
// one-line summary for the status bar. A document that is replaced (open, new from sample,
// restore) starts afresh: what came before is another scenario, not a previous state.

#include "moe/compare.h"
#include "moe_widgets/document/evaluator.h"

#include <QLabel>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <optional>

class QTableWidget;

namespace moe::widgets {

class ScenarioDocument;

class WhatChangedView : public QWidget {
    Q_OBJECT
public:
    /// Rows of the panel's table, and the most items the status line names.
    static constexpr int kTopItems = 6;
    static constexpr int kStatusItems = 3;

    explicit WhatChangedView(ScenarioDocument* document, QWidget* parent = nullptr);

    /// The comparison shown; empty until a result follows another of the same document.
    const std::optional<StepChange>& change() const { return change_; }
    /// The status-bar line ("Step 14.5 s → 15.2 s (+710 ms): all-to-all +473 ms, ..."), or "".
    QString summary() const { return summary_; }
    /// The same line with kStatusItems, ..., 1, 0 items, longest first (empty without a change):
    /// a narrow status bar shows the longest that fits.
    QStringList summaries() const;
    /// What caused the change, from the edit history ("EP 8 → 16", "Undo EP 8 → 16"), or "".
    QString cause() const { return cause_; }
    QTableWidget* table() const { return table_; }

    QSize sizeHint() const override;

public slots:
    /// Compares `result` with the previous one shown and renders the difference.
    void showResult(const moe::widgets::EvaluationResultPtr& result);

signals:
    void summaryChanged(const QString& summary);

private:
    void render();
    void noteHistoryStep(int index);

    QPointer<ScenarioDocument> document_;
    EvaluationResultPtr previous_;
    bool restart_ = true; ///< the next result is a new starting point (document replaced)
    std::optional<Scenario> replaced_by_; ///< the scenario that replaced the document
    int history_index_ = 0;
    QString pending_cause_;
    QString cause_;
    std::optional<StepChange> change_;
    QString summary_;
    QLabel* headline_;
    QLabel* caption_;
    QTableWidget* table_;
};

/// The status bar's line of a WhatChangedView: the longest of its summaries that fits the width
/// it is given (it never widens the window), the full one in the tooltip.
class WhatChangedLine : public QLabel {
    Q_OBJECT
public:
    explicit WhatChangedLine(const WhatChangedView* view, QWidget* parent = nullptr);
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void fit();

    QPointer<const WhatChangedView> view_;
    QStringList candidates_;
};

} // namespace moe::widgets
