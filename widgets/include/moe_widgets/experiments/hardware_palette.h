#pragma once
// The hardware palette: node types (one per catalog GPU with its node shape: H100, H200, B200
// HGX nodes, the GB200 NVL72 rack, ...) and link types (the catalog's NICs, and the scale-up
// bandwidths of its GPUs' NVLink generations) as tiles to drag onto targets:
// - a node type on "Replace": the cluster's GPU preset and node shape become that type's,
//   keeping the GPU count (rounded up to whole racks for a rack-scale domain);
// - a node type on "Add": more nodes of the cluster's type (the smallest addition the layout
//   accepts: one node, or one rack for a rack-scale domain, at a time); the scenario describes
//   a homogeneous cluster, so a different type is refused with that reason;
// - a link type on its tier: a NIC on "Scale-out" sets cluster.scale_out.nic, a scale-up link
//   on "Scale-up" sets the GPU's scale-up bandwidth, latency and fabric name;
// - "Nodes per rack" (wheel, arrows or Up/Down on the focused target) re-racks the nodes: the
//   homogeneous form of "moving nodes between racks". It only regroups the drawing and the
//   rack count for node-scale NVLink; with a rack-scale domain it resizes the NVLink domain.
// A node tile dropped on the topology view replaces the hardware, a link tile on it goes to
// its tier. Keyboard: the item and target boxes with Apply. Each drop is one undoable edit
// re-evaluated live; refused drops show the reason and change nothing. Drags are mouse
// press/move/release (no QDrag), so they are testable with QTest.

#include "moe_widgets/common/key_bindings.h"
#include "moe_widgets/document/evaluator.h"
#include "moe_widgets/document/scenario_document.h"

#include <QWidget>

#include <optional>

class QComboBox;
class QLabel;
class QPushButton;

namespace moe::widgets {

class ScenarioDocument;
class HardwarePalette;

namespace detail {

class HardwareCanvas : public QWidget {
    Q_OBJECT
public:
    explicit HardwareCanvas(HardwarePalette* palette);
    /// The keys keyPressEvent handles, for Help > Keyboard shortcuts.
    static QList<KeyBinding> keyBindings();
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool event(QEvent* event) override;

private:
    friend class moe::widgets::HardwarePalette;
    HardwarePalette* palette_;
    int pressed_ = -1;
    QPoint press_pos_;
    QPoint drag_pos_;
    bool dragging_ = false;
    int hover_target_ = -1;
    bool over_topology_ = false;
    QString preview_;
    bool preview_valid_ = false;
    int focus_target_ = -1; ///< keyboard focus on the targets (nodes per rack steps)
};

} // namespace detail

class HardwarePalette : public QWidget {
    Q_OBJECT
public:
    enum class ItemKind { node, scale_up_link, nic };
    struct Item {
        ItemKind kind = ItemKind::node;
        QString id;    ///< GPU preset, NIC preset, or "scale-up:<gbps>:<fabric>"
        QString title; ///< "H100 HGX node"
        QString detail;
        double scale_up_gbps = 0;
        double scale_up_latency_us = 0;
        QString fabric;
    };
    enum class Target { replace, add, scale_up, scale_out, racks };
    static constexpr int kTargetCount = 5;

    explicit HardwarePalette(ScenarioDocument* document, QWidget* parent = nullptr);
    ~HardwarePalette() override;

    const QVector<Item>& items() const { return items_; }
    int findItem(const QString& id) const;
    /// Tiles and targets in canvas coordinates.
    QWidget* canvas() const;
    QRect itemRect(int item) const;
    QRect targetRect(Target target) const;

    /// The fields a drop writes ("cluster.gpu=b200", ...), or empty with `refusal` set when the
    /// drop makes no sense physically (a NIC on the scale-up tier, another node type on Add).
    std::vector<FieldAssignment> dropAssignments(int item, Target target,
                                                 QString* refusal = nullptr) const;
    /// A sentence describing what the drop does ("8 x B200 HGX node = 64 GPUs").
    QString dropDescription(int item, Target target) const;
    /// Applies a drop (one undo step). Returns whether it was applied.
    bool drop(int item, Target target);
    /// Re-racks: nodes per rack to the neighbouring value in `direction` the rules accept.
    bool stepNodesPerRack(int direction);

    /// The refusal shown now ("" after an applied edit).
    QString message() const { return message_; }
    /// The drop the keyboard row applies.
    void setKeyboardChoice(int item, Target target);

public slots:
    void showResult(const moe::widgets::EvaluationResultPtr& result);
    void applyKeyboardChoice();

signals:
    void messageChanged(const QString& message);

private:
    friend class detail::HardwareCanvas;
    void buildItems();
    void onScenarioChanged();
    void layoutCanvas();
    void setMessage(const QString& message, bool refusal);
    QString targetTitle(Target target) const;
    QString targetState(Target target) const;
    int targetAt(const QPoint& pos) const;
    int itemAt(const QPoint& pos) const;
    bool applyAssignments(const QString& text, const std::vector<FieldAssignment>& assignments);

    ScenarioDocument* document_;
    EvaluationResultPtr result_;
    QVector<Item> items_;
    QVector<QRect> item_rects_;
    QVector<QRect> target_rects_;
    QVector<std::pair<int, QString>> headings_; ///< y, text
    detail::HardwareCanvas* canvas_ = nullptr;
    QComboBox* item_box_ = nullptr;
    QComboBox* target_box_ = nullptr;
    QPushButton* apply_ = nullptr;
    QLabel* status_ = nullptr;
    QString message_;
};

} // namespace moe::widgets
