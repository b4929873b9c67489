#include "moe_widgets/report/what_changed_view.h"

#include "common/view_export.h"

#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/report/compare_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>

namespace moe::widgets {

namespace {

enum Column { ItemColumn, BeforeColumn, AfterColumn, ChangeColumn, ColumnCount };

QTableWidgetItem* cell(const QString& text, Qt::Alignment align = Qt::AlignRight) {
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(align | Qt::AlignVCenter);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    return item;
}

/// Every step item is a cost: less is better.
Verdict verdictOf(double delta_s) {
    return delta_s < 0 ? Verdict::better : delta_s > 0 ? Verdict::worse : Verdict::same;
}

} // namespace

WhatChangedView::WhatChangedView(ScenarioDocument* document, QWidget* parent)
    : QWidget(parent)
    , document_(document)
    , headline_(new QLabel(this))
    , caption_(new QLabel(this))
    , table_(new QTableWidget(0, ColumnCount, this)) {
    setObjectName(QStringLiteral("whatChangedView"));
    headline_->setObjectName(QStringLiteral("whatChangedHeadline"));
    QFont bold = headline_->font();
    bold.setBold(true);
    headline_->setFont(bold);
    headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    caption_->setObjectName(QStringLiteral("whatChangedCaption"));
    caption_->setForegroundRole(QPalette::PlaceholderText);
    // One line, so the table keeps its rows in a short dock; the tooltip has the rest.
    caption_->setMinimumWidth(40);
    setToolTip(tr("What moved the step time in the last edit (or undo, redo, routing sample), "
                  "against the previous state: the breakdown items whose exposed time changed "
                  "most. The Compare panel compares with a pinned baseline instead."));

    table_->setObjectName(QStringLiteral("whatChangedTable"));
    table_->setHorizontalHeaderLabels({tr("Item"), tr("Before"), tr("After"), tr("Change")});
    table_->verticalHeader()->hide();
    table_->setShowGrid(false);
    table_->setAlternatingRowColors(true);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setFocusPolicy(Qt::NoFocus);
    table_->setSelectionMode(QAbstractItemView::NoSelection);
    QHeaderView* header = table_->horizontalHeader();
    header->setSectionResizeMode(ItemColumn, QHeaderView::Stretch);
    for (int c : {BeforeColumn, AfterColumn, ChangeColumn})
        header->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    header->setHighlightSections(false);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 4, 6, 4);
    layout->setSpacing(3);
    layout->addWidget(headline_);
    layout->addWidget(caption_);
    layout->addWidget(table_, 1);

    if (document_) {
        connect(document_, &ScenarioDocument::replaced, this, [this] {
            restart_ = true;
            replaced_by_ = document_->scenario();
            history_index_ = 0;
            pending_cause_.clear();
        });
        // What the next result is about: the edit just made, undone or redone.
        connect(document_->undoStack(), &QUndoStack::indexChanged, this,
                &WhatChangedView::noteHistoryStep);
    }
    render();
}

QStringList WhatChangedView::summaries() const {
    QStringList out;
    if (!change_)
        return out;
    for (int n = kStatusItems; n >= 0; --n) {
        const QString line = QString::fromStdString(stepChangeSummary(*change_, n));
        if (out.isEmpty() || out.back() != line)
            out << line;
    }
    return out;
}

QSize WhatChangedView::sizeHint() const {
    // Small: the headline, a caption line and a few rows (the table scrolls for the rest).
    const int line = fontMetrics().height();
    return {320, line * 9};
}

void WhatChangedView::noteHistoryStep(int index) {
    // The stack also reports while it is cleared (open, reset) or destroyed with the document.
    const QUndoStack* stack = document_ ? document_->undoStack() : nullptr;
    if (!stack || index > stack->count())
        return;
    if (index > history_index_)
        pending_cause_ = stack->text(index - 1);
    else if (index < history_index_ && index < stack->count())
        pending_cause_ = tr("Undo %1").arg(stack->text(index));
    history_index_ = index;
}

void WhatChangedView::showResult(const EvaluationResultPtr& result) {
    if (!result || result == previous_)
        return;
    if (restart_) {
        // The new starting point is the replacing scenario's result, or (when an edit came
        // before it was evaluated, and the evaluator skipped it) the document's current state;
        // a result still in flight from before the replacement is neither.
        const bool replacing = replaced_by_ && result->scenario == *replaced_by_;
        if (document_ && !replacing && !(result->scenario == document_->scenario()))
            return;
        restart_ = false;
        replaced_by_.reset();
        previous_ = result;
        change_.reset();
        cause_.clear(); // an edit made meanwhile keeps its pending cause
        render();
        return;
    }
    change_ = compareSteps(previous_->report, result->report);
    previous_ = result;
    cause_ = pending_cause_;
    pending_cause_.clear();
    render();
}

void WhatChangedView::render() {
    if (!change_) {
        summary_.clear();
        headline_->setText(
            previous_ ? tr("Step %1").arg(detail::formatSeconds(previous_->report.step_time_s))
                      : QString());
        caption_->setText(tr("Edit to see what moves the step time."));
        table_->setRowCount(0);
        emit summaryChanged(summary_);
        return;
    }
    const StepChange& c = *change_;
    summary_ = QString::fromStdString(stepChangeSummary(c, kStatusItems));
    headline_->setText(tr("Step %1 → %2 (%3)")
                           .arg(detail::formatSeconds(c.before_s), detail::formatSeconds(c.after_s),
                                QString::fromStdString(formatSecondsDelta(c.delta_s))));
    const int moved = static_cast<int>(c.items.size());
    const QString what = moved == 0   ? tr("no item moved")
                         : moved == 1 ? tr("1 item moved")
                                      : tr("%1 items moved").arg(moved);
    caption_->setText(cause_.isEmpty() ? what : tr("After “%1” · %2").arg(cause_, what));
    const int rows = std::min(moved, kTopItems);
    table_->setRowCount(rows);
    for (int row = 0; row < rows; ++row) {
        const StepItemChange& item = c.items[static_cast<size_t>(row)];
        auto* name = cell(QString::fromUtf8(toString(item.item)), Qt::AlignLeft);
        QPixmap swatch(10, 10);
        swatch.fill(stepItemColor(item.item));
        name->setIcon(QIcon(swatch));
        name->setData(Qt::UserRole, static_cast<int>(item.item));
        table_->setItem(row, ItemColumn, name);
        table_->setItem(row, BeforeColumn, cell(detail::formatSeconds(item.before_s)));
        table_->setItem(row, AfterColumn, cell(detail::formatSeconds(item.after_s)));
        auto* delta = cell(QString::fromStdString(formatSecondsDelta(item.delta_s)));
        delta->setData(Qt::UserRole, item.delta_s);
        delta->setForeground(verdictColor(verdictOf(item.delta_s), palette()));
        table_->setItem(row, ChangeColumn, delta);
    }
    emit summaryChanged(summary_);
}

WhatChangedLine::WhatChangedLine(const WhatChangedView* view, QWidget* parent)
    : QLabel(parent)
    , view_(view) {
    setObjectName(QStringLiteral("whatChangedLabel"));
    setContentsMargins(4, 0, 8, 0);
    connect(view, &WhatChangedView::summaryChanged, this, [this](const QString& summary) {
        candidates_ = view_ ? view_->summaries() : QStringList();
        setToolTip(summary);
        fit();
    });
}

QSize WhatChangedLine::sizeHint() const {
    // Only what is left beside the permanent figures: the text adapts to the width, never the
    // other way round.
    return {40, QLabel::sizeHint().height()};
}

QSize WhatChangedLine::minimumSizeHint() const {
    return sizeHint();
}

void WhatChangedLine::resizeEvent(QResizeEvent* event) {
    QLabel::resizeEvent(event);
    fit();
}

void WhatChangedLine::fit() {
    const int room = contentsRect().width();
    QString shown = candidates_.isEmpty() ? QString() : candidates_.back();
    for (const QString& line : std::as_const(candidates_)) {
        if (fontMetrics().horizontalAdvance(line) <= room) {
            shown = line;
            break;
        }
    }
    if (text() != shown)
        setText(shown);
}

} // namespace moe::widgets
