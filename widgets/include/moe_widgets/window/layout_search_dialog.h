#pragma once
// Tools > Search layouts… (Ctrl+Shift+L): the core's layout search (what `moe-plan search` runs)
// on the open scenario, off the GUI thread with a progress bar and a Cancel that stops it; the
// ranked layouts with the figures the CLI prints, the explanation of the selected one (the
// search's own words, explainRanked), and Apply, which sets the document's layout, micro-batch
// and recompute to the selected layout's as one undo step.

#include "moe/scenario.h"
#include "moe/search.h"

#include <QDialog>
#include <QString>

#include <memory>

class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTextBrowser;
class QThread;

namespace moe::widgets {

class ScenarioDocument;

class LayoutSearchDialog : public QDialog {
    Q_OBJECT
public:
    explicit LayoutSearchDialog(ScenarioDocument* document, QWidget* parent = nullptr);
    /// Stops a running search and waits for it.
    ~LayoutSearchDialog() override;

    /// The options of the next search (the progress callback is the dialog's own). The top-N
    /// spin box sets top_n.
    SearchOptions& options() { return options_; }
    /// Searches the document's scenario as it is now; a running search is cancelled first.
    void start();
    /// Asks the running search to stop; it does at the next structure boundary.
    void cancel();
    bool isRunning() const { return thread_ != nullptr; }
    /// The last finished search (interrupted when it was cancelled).
    const SearchResult& result() const { return result_; }
    /// The scenario the last search ran on.
    const Scenario& searched() const { return searched_; }
    /// Structures done and in all, as the progress bar last showed them.
    int64_t progressDone() const { return done_; }
    int64_t progressTotal() const { return total_; }
    /// Sets the document's layout, micro-batch and recompute to ranked row `row`'s as one undo
    /// step. Returns an empty string or why not (nothing changed).
    QString applyRow(int row);

    QTableWidget* table() const { return table_; }
    QTextBrowser* explanation() const { return explanation_; }
    QProgressBar* progressBar() const { return progress_; }
    QPushButton* searchButton() const { return search_button_; }
    QPushButton* cancelButton() const { return cancel_button_; }
    QPushButton* applyButton() const { return apply_button_; }
    QLabel* statusLabel() const { return status_; }

signals:
    /// A search ended (finished or cancelled); result() holds it.
    void searchFinished();

protected:
    void hideEvent(QHideEvent* event) override;

private:
    struct Run;
    /// Stops the running search, if any, and waits for it without showing its result.
    void abandonRun();
    void onProgress();
    void onFinished();
    void fillTable();
    void showExplanation();
    void updateApply();
    /// The searched scenario with the document's layout fields: equal to searched_ while only
    /// the layout changed since the search.
    bool documentStillSearched() const;
    bool rowIsCurrent(int row) const;

    ScenarioDocument* document_;
    SearchOptions options_;
    SearchResult result_;
    Scenario searched_;
    std::shared_ptr<Run> run_;
    QThread* thread_ = nullptr;
    int64_t done_ = 0;
    int64_t total_ = 0;

    QLabel* intro_;
    QSpinBox* top_;
    QPushButton* search_button_;
    QPushButton* cancel_button_;
    QProgressBar* progress_;
    QLabel* status_;
    QTableWidget* table_;
    QLabel* explanation_title_;
    QTextBrowser* explanation_;
    QPushButton* apply_button_;
};

} // namespace moe::widgets
