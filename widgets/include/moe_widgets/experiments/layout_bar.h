#pragma once
// The layout bar: the five parallel dimensions as chips in rank order (layout.order, innermost
// = fastest-varying first), each with its degree and where its groups land (NVLink or across
// nodes, from the newest report). Experiments, each one undoable edit re-evaluated live:
// - drag a chip to another position: layout.order changes (drag EP outside DP and the
//   all-to-all leaves NVLink);
// - wheel over a chip, its arrows, or Up/Down/+/- on the focused chip: the degree steps to the
//   neighbouring valid one (TP, CP, PP: dp follows the GPU count; EP: expert-DP follows;
//   DP: nodes are added or removed, since dp = GPUs / (tp*cp*pp)); Shift changes ETP on the
//   EP chip;
// - Left/Right move the focus, Ctrl+Left/Right move the focused chip.
// Candidates the rules refuse are listed greyed with the reason (tooltip); a refused edit is
// shown in red with its reason and nothing changes. Drags are plain mouse press/move/release
// (no QDrag), so they are testable with QTest.

#include "moe/edits.h"
#include "moe/scenario.h"
#include "moe_widgets/common/key_bindings.h"
#include "moe_widgets/document/evaluator.h"

#include <QVector>
#include <QWidget>

#include <optional>

class QPainter;

namespace moe::widgets {

class ScenarioDocument;
namespace experiment {
struct Fonts;
}

class LayoutBar : public QWidget {
    Q_OBJECT
public:
    /// A degree the focused chip could step to, and whether the rules accept it.
    struct Candidate {
        int degree = 1;
        bool valid = false;
        QString reason; ///< the first error when !valid
    };

    explicit LayoutBar(ScenarioDocument* document, QWidget* parent = nullptr);
    /// The keys (and wheel) keyPressEvent and wheelEvent handle, for Help > Keyboard shortcuts.
    static QList<KeyBinding> keyBindings();
    ~LayoutBar() override;

    /// Where each chip is drawn now (widget coordinates); `etp` for the EP chip's ETP arrows.
    QRect chipRect(Dim d) const;
    /// The up / down arrow of a chip (click = step the degree).
    QRect arrowRect(Dim d, bool up) const;
    RankOrder order() const;
    Dim focusedDim() const { return focus_; }
    void setFocusedDim(Dim d);
    /// The nearest candidate degrees below and above the current one (up to the first valid
    /// one in each direction, at most a few refused ones on the way), ascending.
    QVector<Candidate> candidates(Dim d, bool etp = false) const;
    /// The refusal shown now ("" when the last edit went through).
    QString message() const { return message_; }

    /// Moves dimension `d` to position `index` of the order (0 = innermost). Returns whether
    /// the edit was applied; a refusal is shown in the bar.
    bool moveDim(Dim d, int index);
    /// Steps the degree of `d` (or ETP) to the neighbouring valid candidate in `direction`
    /// (+1 up, -1 down). Returns whether an edit was applied.
    bool stepDegree(Dim d, int direction, bool etp = false);
    /// Sets a degree exactly (the edit of a step); refused values leave the scenario as it is.
    bool setDegree(Dim d, int degree, bool etp = false);

    /// The fields a degree change writes: "layout.tp=2", or "cluster.nodes=16" for DP.
    std::vector<FieldAssignment> degreeAssignments(Dim d, int degree, bool etp = false) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

public slots:
    void showResult(const moe::widgets::EvaluationResultPtr& result);

signals:
    void messageChanged(const QString& message);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool event(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void onScenarioChanged();
    void layoutChips();
    int indexOf(Dim d) const;
    std::optional<Dim> chipAt(const QPoint& pos) const;
    int insertionIndex(int x) const;
    QString chipTooltip(Dim d) const;
    QString spanText(Dim d) const;
    void setMessage(const QString& message);
    bool applyAssignments(const QString& text, const std::vector<FieldAssignment>& assignments);
    int currentDegree(Dim d, bool etp) const;
    QVector<int> degreeSequence(Dim d, bool etp) const;

    // Painting, part by part.
    void paintEndLabels(QPainter& p, const experiment::Fonts& fonts) const;
    /// Where each chip is drawn, innermost first.
    QVector<std::pair<Dim, QRect>> placedChips() const;
    void paintChip(QPainter& p, const experiment::Fonts& fonts, Dim d, QRect r, bool lifted) const;
    void paintStatus(QPainter& p, const experiment::Fonts& fonts) const;

    ScenarioDocument* document_;
    EvaluationResultPtr result_;
    RankOrder order_{};
    QVector<QRect> chip_rects_; ///< by position in order_
    QRect status_rect_;
    Dim focus_ = Dim::ep;
    QString message_;

    // Drag state.
    std::optional<Dim> pressed_;
    QPoint press_pos_;
    bool dragging_ = false;
    int drag_x_ = 0;
    int drop_index_ = -1;
    QString drop_preview_; ///< the order a drop gives, and whether it would be refused
};

} // namespace moe::widgets
