#pragma once
// Experts onto GPUs: the EP ranks of the first EP group as columns (labelled with their GPU and
// node) and the experts each one holds as chips, coloured by the tokens each replica receives
// (the report's expert load). Experiments, each one undoable edit of layout.expert_placement,
// re-evaluated live (load, traffic and the heatmap follow):
// - drag an expert chip onto another rank: the expert moves there;
// - Ctrl-drag: the expert is replicated onto that rank (its tokens split evenly);
// - keyboard: arrows select a chip; M (or Shift+Right / Shift+Left) moves the selected replica
//   to the next (previous) rank, R (or Ctrl+Shift+Right / Left) replicates it there, Delete
//   removes the selected replica (never the last one);
// - "Reset placement" returns every expert to round-robin.
// The layer box chooses what is edited: every MoE layer (entries without `layer`) or one MoE
// layer. Refused edits show the rule's reason and change nothing. Drags are mouse
// press/move/release inside the widget (no QDrag), so they are testable with QTest.

#include "moe/scenario.h"
#include "moe_widgets/common/key_bindings.h"
#include "moe_widgets/document/evaluator.h"
#include "moe_widgets/document/scenario_document.h"

#include <QWidget>

#include <optional>
#include <vector>

class QComboBox;
class QLabel;
class QPainter;
class QPushButton;
class QScrollArea;

namespace moe {
struct ParallelGroup;
}

namespace moe::widgets {

class ScenarioDocument;
class PlacementGrid;
namespace experiment {
struct Fonts;
}

namespace detail {

/// The painted grid inside PlacementGrid's scroll area; it takes the mouse and keyboard.
class PlacementCanvas : public QWidget {
    Q_OBJECT
public:
    explicit PlacementCanvas(PlacementGrid* grid);
    QSize sizeHint() const override;
    /// The keys keyPressEvent handles, for Help > Keyboard shortcuts.
    static QList<KeyBinding> keyBindings();

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool event(QEvent* event) override;

private:
    friend class moe::widgets::PlacementGrid;
    /// Token loads the colours are relative to.
    struct Loads {
        double expert_mean = 0; ///< mean token slots per expert
        double rank_mean = 0;   ///< mean token slots per EP rank
        int hottest_rank = -1;
    };
    Loads loads() const;
    void paintColumn(QPainter& p, const experiment::Fonts& fonts, int rank,
                     const std::vector<ParallelGroup>* ep_groups, const Loads& load) const;
    void paintChip(QPainter& p, const experiment::Fonts& fonts, int expert, int rank,
                   double expert_mean) const;
    void paintDraggedChip(QPainter& p, const experiment::Fonts& fonts) const;

    PlacementGrid* grid_;
    std::optional<std::pair<int, int>> pressed_; ///< expert, rank
    QPoint press_pos_;
    QPoint drag_pos_;
    bool dragging_ = false;
    int drop_rank_ = -1;
    bool drop_replicate_ = false;
    QString drop_preview_;
    bool drop_valid_ = false;
};

} // namespace detail

class PlacementGrid : public QWidget {
    Q_OBJECT
public:
    explicit PlacementGrid(ScenarioDocument* document, QWidget* parent = nullptr);
    ~PlacementGrid() override;

    /// The painted grid (mouse and keyboard go there).
    QWidget* canvas() const;
    /// -1 = the placement of every MoE layer, else one MoE layer (0 = first MoE layer).
    int layer() const { return layer_; }
    void setLayer(int moe_layer);

    /// The EP ranks holding each expert, as the scenario places them for layer().
    const std::vector<std::vector<int>>& ranksOfExpert() const { return ranks_of_expert_; }
    /// The experts on each EP rank, ascending.
    std::vector<std::vector<int>> expertsOnRank() const;
    /// The chip of `expert` on `rank` in canvas coordinates (empty when it is not there).
    QRect chipRect(int expert, int rank) const;
    /// Column of `rank` in canvas coordinates.
    QRect columnRect(int rank) const;

    std::optional<std::pair<int, int>> selection() const { return selection_; }
    void select(int expert, int rank);

    /// Edits (one undo step each); they return whether the edit was applied.
    bool moveExpert(int expert, int from_rank, int to_rank);
    bool replicateExpert(int expert, int to_rank);
    bool removeReplica(int expert, int rank);
    bool resetPlacement();

    /// The refusal shown now ("" after an applied edit).
    QString message() const;

public slots:
    void showResult(const moe::widgets::EvaluationResultPtr& result);

signals:
    void messageChanged(const QString& message);

private:
    friend class detail::PlacementCanvas;
    void onScenarioChanged();
    void rebuildLayers();
    void recompute();
    bool applyRanks(const QString& text, int expert, std::vector<int> ranks);
    /// Applies a typed edit as one undo step, or shows why it was refused.
    bool applyEdit(const QString& text, const ScenarioDocument::Edit& edit);
    void setMessage(const QString& message, bool refusal);
    /// Token slots per micro-batch expert `e` receives in layer() (mean over MoE layers for
    /// "all"), from the newest report; negative when no matching report is there yet.
    double expertTokens(int expert) const;
    double rankTokens(int rank) const;
    bool resultMatches() const;
    std::optional<std::pair<int, int>> chipAt(const QPoint& pos) const;
    int rankAt(const QPoint& pos) const;

    ScenarioDocument* document_;
    EvaluationResultPtr result_;
    QComboBox* layer_box_ = nullptr;
    QPushButton* reset_ = nullptr;
    QLabel* status_ = nullptr;
    QScrollArea* scroll_ = nullptr;
    detail::PlacementCanvas* canvas_ = nullptr;

    int layer_ = -1;
    int ep_ = 1;
    int experts_ = 0;
    std::vector<std::vector<int>> ranks_of_expert_;
    std::optional<std::pair<int, int>> selection_;
    QString message_;
};

} // namespace moe::widgets
