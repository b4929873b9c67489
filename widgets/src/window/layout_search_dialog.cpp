#include "moe_widgets/window/layout_search_dialog.h"

#include "common/view_export.h"
#include "moe_widgets/document/scenario_document.h"

#include "moe/diagnostics.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QTextBrowser>
#include <QThread>
#include <QVBoxLayout>

#include <atomic>

namespace moe::widgets {

/// What the worker thread and the dialog share for one search.
struct LayoutSearchDialog::Run {
    std::atomic<bool> cancel{false};
    std::atomic<int64_t> done{0};
    std::atomic<int64_t> total{0};
    std::atomic<bool> update_posted{false}; ///< a progress update waits in the event queue
    SearchResult result;                    ///< written by the worker before it finishes
};

namespace {

/// The fields the search varies (search.h: layout, micro-batch, recompute), copied from `from`.
void setSearchedFields(Scenario& to, const Scenario& from) {
    to.layout = from.layout;
    to.training.micro_batch = from.training.micro_batch;
    to.training.recompute = from.training.recompute;
}

/// The columns of moe-plan search's table, with the layout in words instead of one column per
/// degree.
enum Column {
    kRank,
    kStep,
    kTokens,
    kLayout,
    kCompute,
    kAllToAll,
    kTpCp,
    kPipeline,
    kDpSync,
    kImbalance,
    kMemory,
    kCrossNode,
    kColumnCount
};

QString dash(double seconds) {
    return seconds > 0 ? detail::formatSeconds(seconds) : QStringLiteral("-");
}

QString bulletList(const std::vector<std::string>& lines) {
    QString html = QStringLiteral("<ul style=\"margin-left: -20px\">");
    for (const std::string& line : lines)
        html += QStringLiteral("<li>%1</li>").arg(QString::fromStdString(line).toHtmlEscaped());
    return html + QStringLiteral("</ul>");
}

} // namespace

LayoutSearchDialog::LayoutSearchDialog(ScenarioDocument* document, QWidget* parent)
    : QDialog(parent)
    , document_(document)
    , intro_(new QLabel(this))
    , top_(new QSpinBox(this))
    , search_button_(new QPushButton(tr("&Search"), this))
    , cancel_button_(new QPushButton(tr("&Cancel search"), this))
    , progress_(new QProgressBar(this))
    , status_(new QLabel(this))
    , table_(new QTableWidget(0, kColumnCount, this))
    , explanation_title_(new QLabel(this))
    , explanation_(new QTextBrowser(this))
    , apply_button_(new QPushButton(tr("&Apply layout"), this)) {
    setObjectName(QStringLiteral("layoutSearchDialog"));
    setWindowTitle(tr("Search layouts"));
    intro_->setWordWrap(true);
    intro_->setText(
        tr("Tries every parallel layout of this cluster and model (TP, CP, PP and virtual "
           "stages, DP, EP, expert-TP, rank order, micro-batch, recompute, schedule), as "
           "<tt>moe-plan search</tt> does, and ranks those that fit by step time; layouts within "
           "%1 of the fastest go first to the least model parallelism.")
            .arg(detail::formatPercent(options_.tie_share)));
    top_->setRange(1, 200);
    top_->setValue(options_.top_n);
    top_->setPrefix(tr("Show the best "));
    top_->setToolTip(tr("How many ranked layouts to list"));
    search_button_->setObjectName(QStringLiteral("searchButton"));
    cancel_button_->setObjectName(QStringLiteral("cancelSearchButton"));
    cancel_button_->setEnabled(false);
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setFormat(tr("%v of %m structures"));
    status_->setWordWrap(true);
    status_->setTextFormat(Qt::PlainText);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    table_->setObjectName(QStringLiteral("rankedLayouts"));
    table_->setHorizontalHeaderLabels({tr("#"), tr("step"), tr("tokens/s"), tr("layout"),
                                       tr("compute"), tr("all-to-all"), tr("TP+CP"),
                                       tr("PP+bubble"), tr("DP sync"), tr("imbalance"),
                                       tr("memory/GPU"), tr("cross-node/GPU")});
    table_->horizontalHeaderItem(kRank)->setToolTip(tr("Rank; * = the scenario's own layout"));
    table_->horizontalHeaderItem(kCompute)->setToolTip(
        tr("Attention, dense FFN, router, expert compute and optimizer"));
    table_->horizontalHeaderItem(kCrossNode)
        ->setToolTip(tr("Bytes per GPU per step through the NIC (slowest stage)"));
    table_->verticalHeader()->hide();
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setWordWrap(true);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(kLayout, QHeaderView::Stretch);
    explanation_->setObjectName(QStringLiteral("searchExplanation"));
    explanation_->setOpenLinks(false);
    apply_button_->setObjectName(QStringLiteral("applyLayoutButton"));
    apply_button_->setToolTip(tr("Set the document's layout, micro-batch and recompute to the "
                                 "selected layout's (one undo step)"));
    auto* close = new QPushButton(tr("Close"), this);

    auto* controls = new QHBoxLayout;
    controls->addWidget(top_);
    controls->addWidget(search_button_);
    controls->addWidget(cancel_button_);
    controls->addWidget(progress_, 1);
    auto* lower = new QWidget(this);
    auto* lower_layout = new QVBoxLayout(lower);
    lower_layout->setContentsMargins(0, 0, 0, 0);
    lower_layout->addWidget(explanation_title_);
    lower_layout->addWidget(explanation_, 1);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(table_);
    split->addWidget(lower);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(apply_button_);
    buttons->addWidget(close);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro_);
    layout->addLayout(controls);
    layout->addWidget(status_);
    layout->addWidget(split, 1);
    layout->addLayout(buttons);

    connect(search_button_, &QPushButton::clicked, this, &LayoutSearchDialog::start);
    connect(cancel_button_, &QPushButton::clicked, this, &LayoutSearchDialog::cancel);
    connect(apply_button_, &QPushButton::clicked, this, [this] {
        if (const QString problem = applyRow(table_->currentRow()); !problem.isEmpty())
            status_->setText(problem);
    });
    connect(close, &QPushButton::clicked, this, &QDialog::reject);
    connect(table_, &QTableWidget::itemSelectionChanged, this, [this] {
        showExplanation();
        updateApply();
    });
    connect(document_, &ScenarioDocument::scenarioChanged, this, [this] {
        fillTable();
        updateApply();
    });
    updateApply();
    // Wide enough for the table's figures and a layout in words; never more than the screen.
    QSize size(1180, 720);
    if (const QScreen* screen = parent ? parent->screen() : nullptr)
        size = size.boundedTo(screen->availableGeometry().size() * 0.92);
    resize(size);
}

LayoutSearchDialog::~LayoutSearchDialog() {
    abandonRun();
}

void LayoutSearchDialog::abandonRun() {
    if (!thread_)
        return;
    thread_->disconnect(this);
    run_->cancel = true;
    thread_->wait();
    delete thread_;
    thread_ = nullptr;
}

void LayoutSearchDialog::start() {
    abandonRun();
    searched_ = document_->scenario();
    options_.top_n = top_->value();
    auto run = std::make_shared<Run>();
    run_ = run;
    SearchOptions options = options_;
    // Called on the search's threads, one call at a time: keep the figures and post one
    // update at a time to the GUI thread.
    options.progress = [run, this](int64_t done, int64_t total) {
        run->done = done;
        run->total = total;
        if (!run->update_posted.exchange(true))
            QMetaObject::invokeMethod(this, &LayoutSearchDialog::onProgress, Qt::QueuedConnection);
        return !run->cancel.load();
    };
    thread_ = QThread::create(
        [run, scenario = searched_, options] { run->result = searchLayouts(scenario, options); });
    connect(thread_, &QThread::finished, this, &LayoutSearchDialog::onFinished);
    done_ = total_ = 0;
    progress_->setRange(0, 0); // busy until the first structure reports the total
    status_->setText(
        tr("Searching the layouts of %1…").arg(QString::fromStdString(searched_.name)));
    search_button_->setEnabled(false);
    cancel_button_->setEnabled(true);
    updateApply();
    thread_->start();
}

void LayoutSearchDialog::cancel() {
    if (!thread_)
        return;
    run_->cancel = true;
    cancel_button_->setEnabled(false);
    status_->setText(tr("Cancelling…"));
}

void LayoutSearchDialog::onProgress() {
    if (!run_)
        return;
    run_->update_posted = false;
    done_ = run_->done;
    total_ = run_->total;
    progress_->setRange(0, static_cast<int>(total_));
    progress_->setValue(static_cast<int>(done_));
}

void LayoutSearchDialog::onFinished() {
    thread_->wait();
    delete thread_;
    thread_ = nullptr;
    result_ = std::move(run_->result);
    onProgress();
    if (total_ == 0) { // refused before the first structure: no busy bar left running
        progress_->setRange(0, 1);
        progress_->setValue(0);
    }
    search_button_->setEnabled(true);
    cancel_button_->setEnabled(false);
    if (result_.interrupted) {
        status_->setText(
            tr("Cancelled after %1 of %2 structures; nothing ranked.").arg(done_).arg(total_));
    } else if (!result_.ok()) {
        status_->setText(tr("The search cannot run: %1")
                             .arg(QString::fromStdString(formatAll(result_.diagnostics))));
    } else {
        const int64_t pruned = result_.rejectedCount(RejectReason::bound);
        status_->setText(
            tr("Searched %1 candidates in %2 on %3 threads: %4 evaluated%5, %6 ranked%7.")
                .arg(detail::formatCount(static_cast<double>(result_.candidates)),
                     detail::formatSeconds(result_.elapsed_s), QString::number(result_.threads),
                     detail::formatCount(static_cast<double>(result_.evaluated)),
                     pruned > 0 ? tr(" (%1 more that fit are slower than every ranked layout)")
                                      .arg(detail::formatCount(static_cast<double>(pruned)))
                                : QString(),
                     QString::number(result_.ranked.size()),
                     result_.found() ? QString() : tr(": no layout fits")));
    }
    fillTable();
    if (table_->rowCount() > 0) {
        table_->selectRow(0);
        table_->setFocus();
    }
    showExplanation();
    updateApply();
    emit searchFinished();
}

void LayoutSearchDialog::fillTable() {
    const int selected = table_->currentRow();
    table_->setRowCount(0);
    if (result_.interrupted || !result_.ok())
        return;
    table_->setRowCount(static_cast<int>(result_.ranked.size()));
    for (int row = 0; row < table_->rowCount(); ++row) {
        const SearchCandidate& c = result_.ranked[static_cast<size_t>(row)];
        const SearchFigures& f = c.figures;
        const SearchStepColumns col = stepColumnsOf(f);
        const QString texts[kColumnCount] = {QString::number(c.rank) +
                                                 (c.is_input ? QStringLiteral("*") : QString()),
                                             detail::formatSeconds(f.step_time_s),
                                             detail::formatCount(f.tokens_per_s),
                                             QString::fromStdString(layoutSummary(c.scenario)),
                                             detail::formatSeconds(col.compute_s),
                                             dash(col.all_to_all_s),
                                             dash(col.tp_cp_s),
                                             dash(col.pipeline_s),
                                             dash(col.dp_sync_s),
                                             dash(col.imbalance_s),
                                             detail::formatBytes(f.memory_bytes),
                                             detail::formatBytes(f.cross_node_bytes)};
        const bool current = rowIsCurrent(row);
        for (int column = 0; column < kColumnCount; ++column) {
            auto* item = new QTableWidgetItem(texts[column]);
            item->setTextAlignment(column == kLayout ? Qt::AlignLeft | Qt::AlignVCenter
                                                     : Qt::AlignRight | Qt::AlignVCenter);
            if (current) {
                QFont font = item->font();
                font.setBold(true);
                item->setFont(font);
                item->setToolTip(tr("The document's current layout"));
            }
            table_->setItem(row, column, item);
        }
    }
    table_->resizeRowsToContents();
    if (selected >= 0 && selected < table_->rowCount())
        table_->selectRow(selected);
}

void LayoutSearchDialog::showExplanation() {
    const int row = table_->currentRow();
    if (result_.interrupted || !result_.ok()) {
        explanation_title_->clear();
        explanation_->clear();
        return;
    }
    if (!result_.found()) {
        explanation_title_->setText(tr("<b>Why nothing fits</b>"));
        explanation_->setHtml(bulletList(result_.explanation));
        return;
    }
    if (row < 0 || row >= static_cast<int>(result_.ranked.size())) {
        explanation_title_->setText(tr("Select a layout to see why it ranks where it does."));
        explanation_->clear();
        return;
    }
    explanation_title_->setText(row == 0 ? tr("<b>Why this layout</b>")
                                         : tr("<b>#%1 against the winner</b>").arg(row + 1));
    explanation_->setHtml(bulletList(explainRanked(result_, options_, static_cast<size_t>(row))));
}

bool LayoutSearchDialog::documentStillSearched() const {
    Scenario now = document_->scenario();
    setSearchedFields(now, searched_);
    return now == searched_;
}

bool LayoutSearchDialog::rowIsCurrent(int row) const {
    if (row < 0 || row >= static_cast<int>(result_.ranked.size()))
        return false;
    Scenario now = document_->scenario();
    setSearchedFields(now, result_.ranked[static_cast<size_t>(row)].scenario);
    return now == document_->scenario();
}

void LayoutSearchDialog::updateApply() {
    const int row = table_->currentRow();
    const bool have = !thread_ && row >= 0 && row < static_cast<int>(result_.ranked.size());
    const bool fresh = have && documentStillSearched();
    apply_button_->setEnabled(fresh && !rowIsCurrent(row));
    if (have && !fresh)
        apply_button_->setToolTip(tr("The scenario changed since this search (not only its "
                                     "layout): search again"));
    else if (have && rowIsCurrent(row))
        apply_button_->setToolTip(tr("This is already the document's layout"));
    else
        apply_button_->setToolTip(tr("Set the document's layout, micro-batch and recompute to "
                                     "the selected layout's (one undo step)"));
    apply_button_->setText(have ? tr("&Apply layout #%1").arg(row + 1) : tr("&Apply layout"));
}

QString LayoutSearchDialog::applyRow(int row) {
    if (thread_)
        return tr("A search is running.");
    if (row < 0 || row >= static_cast<int>(result_.ranked.size()))
        return tr("No ranked layout is selected.");
    if (!documentStillSearched())
        return tr("The scenario changed since this search (not only its layout): search again.");
    if (rowIsCurrent(row))
        return tr("Layout #%1 is already the document's layout.").arg(row + 1);
    const Scenario& chosen = result_.ranked[static_cast<size_t>(row)].scenario;
    const Diagnostics problems =
        document_->edit(tr("Apply searched layout #%1").arg(row + 1),
                        [&chosen](Scenario& s) { setSearchedFields(s, chosen); });
    if (hasErrors(problems))
        return QString::fromStdString(formatAll(problems));
    status_->setText(tr("Applied layout #%1: %2 (Edit > Undo restores the previous one).")
                         .arg(row + 1)
                         .arg(QString::fromStdString(layoutSummary(chosen))));
    return {};
}

void LayoutSearchDialog::hideEvent(QHideEvent* event) {
    cancel(); // a closed dialog does not keep the CPU busy
    QDialog::hideEvent(event);
}

} // namespace moe::widgets
