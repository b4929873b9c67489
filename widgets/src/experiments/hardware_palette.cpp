#include "moe_widgets/experiments/hardware_palette.h"

#include "experiments/experiment_support.h"
#include "moe/catalog.h"
#include "moe/edits.h"
#include "moe_widgets/document/scenario_document.h"

#include <QApplication>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace moe::widgets {

namespace {

constexpr int kMargin = 8;
constexpr int kItemWidth = 250;
constexpr int kItemHeight = 38;
constexpr int kTargetWidth = 262;
constexpr int kTargetHeight = 56;
constexpr int kGap = 6;
constexpr int kHeading = 20;
/// How many nodes (or racks) "Add" tries before it gives up looking for a valid count.
constexpr int kMaxAddTries = 64;

/// "H100" from "NVIDIA H100 SXM 80GB", "MI300X" from "AMD Instinct MI300X 192GB".
QString shortGpuName(const GpuSpec& gpu) {
    QString name = QString::fromStdString(gpu.name);
    for (const char* prefix : {"NVIDIA ", "AMD Instinct ", "AMD "})
        if (name.startsWith(QLatin1String(prefix)))
            name = name.mid(static_cast<int>(qstrlen(prefix)));
    return name.section(QLatin1Char(' '), 0, 0);
}

QString number(double value) {
    return QString::number(value, 'g', 6);
}

} // namespace

HardwarePalette::HardwarePalette(ScenarioDocument* document, QWidget* parent)
    : QWidget(parent)
    , document_(document) {
    setObjectName(QStringLiteral("hardwarePalette"));
    buildItems();

    canvas_ = new detail::HardwareCanvas(this);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(canvas_);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);

    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("hardwareStatus"));
    status_->setWordWrap(true);
    status_->setContentsMargins(6, 0, 6, 0);
    status_->hide();

    // The keyboard equivalent of every drag: what, where, Apply.
    item_box_ = new QComboBox(this);
    item_box_->setObjectName(QStringLiteral("hardwareItemBox"));
    for (const Item& item : std::as_const(items_))
        item_box_->addItem(item.title, item.id);
    target_box_ = new QComboBox(this);
    target_box_->setObjectName(QStringLiteral("hardwareTargetBox"));
    for (int t = 0; t < kTargetCount - 1; ++t) // "racks" is not a drop target
        target_box_->addItem(targetTitle(static_cast<Target>(t)), t);
    apply_ = new QPushButton(tr("Apply"), this);
    apply_->setObjectName(QStringLiteral("hardwareApplyButton"));
    apply_->setToolTip(tr("Apply the chosen item to the chosen target, as a drop would"));
    connect(apply_, &QPushButton::clicked, this, &HardwarePalette::applyKeyboardChoice);
    auto* row = new QHBoxLayout;
    row->setContentsMargins(4, 0, 4, 4);
    row->addWidget(item_box_, 3);
    row->addWidget(new QLabel(QStringLiteral("→"), this));
    row->addWidget(target_box_, 2);
    row->addWidget(apply_);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(3);
    layout->addWidget(scroll, 1);
    layout->addWidget(status_);
    layout->addLayout(row);

    connect(document_, &ScenarioDocument::scenarioChanged, this,
            &HardwarePalette::onScenarioChanged);
    layoutCanvas();
    onScenarioChanged();
}

HardwarePalette::~HardwarePalette() = default;

QWidget* HardwarePalette::canvas() const {
    return canvas_;
}

void HardwarePalette::buildItems() {
    const Catalog& catalog = builtinCatalog();
    for (const GpuSpec& gpu : catalog.gpus) {
        const Catalog::NodeShape* shape = catalog.findNodeShape(gpu.preset);
        if (!shape)
            continue;
        Item item;
        item.kind = ItemKind::node;
        item.id = QString::fromStdString(gpu.preset);
        const QString name = shortGpuName(gpu);
        if (shape->scale_up_domain == ScaleUpDomain::rack) {
            const int gpus = shape->gpus_per_node * shape->nodes_per_rack;
            item.title = tr("%1 NVL%2 rack").arg(name).arg(gpus);
            item.detail = tr("%1 trays × %2 GPUs · one %3-GPU %4 domain")
                              .arg(shape->nodes_per_rack)
                              .arg(shape->gpus_per_node)
                              .arg(gpus)
                              .arg(QString::fromStdString(gpu.scale_up_fabric));
        } else {
            const bool nvidia = gpu.scale_up_fabric == "NVLink";
            item.title = nvidia ? tr("%1 HGX node").arg(name) : tr("%1 node").arg(name);
            item.detail = tr("%1 GPUs · %2 GB HBM · %3 %4 GB/s")
                              .arg(shape->gpus_per_node)
                              .arg(number(gpu.hbm_gb))
                              .arg(QString::fromStdString(gpu.scale_up_fabric))
                              .arg(number(gpu.scale_up_gbps));
        }
        items_ << item;
    }
    // Scale-up link generations: the catalog's distinct (fabric, bandwidth) pairs.
    for (const GpuSpec& gpu : catalog.gpus) {
        const QString fabric = QString::fromStdString(gpu.scale_up_fabric);
        const QString id = QStringLiteral("scale-up:%1:%2").arg(number(gpu.scale_up_gbps), fabric);
        const int found = findItem(id);
        if (found >= 0) {
            items_[found].detail += QStringLiteral(", ") + shortGpuName(gpu);
            continue;
        }
        Item item;
        item.kind = ItemKind::scale_up_link;
        item.id = id;
        item.title = tr("%1 %2 GB/s").arg(fabric, number(gpu.scale_up_gbps));
        item.detail = tr("per GPU per direction, as on %1").arg(shortGpuName(gpu));
        item.scale_up_gbps = gpu.scale_up_gbps;
        item.scale_up_latency_us = gpu.scale_up_latency_us;
        item.fabric = fabric;
        items_ << item;
    }
    for (const NicSpec& nic : catalog.nics) {
        Item item;
        item.kind = ItemKind::nic;
        item.id = QString::fromStdString(nic.preset);
        // "ConnectX-7 400G InfiniBand" as the title, the "(NDR)" qualifier with the figures.
        const QString name = QString::fromStdString(nic.name);
        item.title = name.section(QStringLiteral(" ("), 0, 0);
        const QString qualifier = name.contains(QStringLiteral(" ("))
                                      ? name.section(QStringLiteral(" ("), 1).chopped(1)
                                      : QString();
        item.detail = tr("%1%2 Gb/s · %3 GB/s achievable")
                          .arg(qualifier.isEmpty() ? QString() : qualifier + QStringLiteral(" · "),
                               number(nic.speed_gbit), number(nic.bandwidth_gbps));
        items_ << item;
    }
}

int HardwarePalette::findItem(const QString& id) const {
    for (int i = 0; i < items_.size(); ++i)
        if (items_[i].id == id)
            return i;
    return -1;
}

void HardwarePalette::layoutCanvas() {
    item_rects_.clear();
    headings_.clear();
    int y = kMargin;
    std::optional<ItemKind> kind;
    for (const Item& item : std::as_const(items_)) {
        if (!kind || *kind != item.kind) {
            kind = item.kind;
            const QString heading = item.kind == ItemKind::node            ? tr("Node types")
                                    : item.kind == ItemKind::scale_up_link ? tr("Scale-up links")
                                                                           : tr("Scale-out NICs");
            if (!headings_.isEmpty())
                y += kGap;
            headings_.push_back({y, heading});
            y += kHeading;
        }
        item_rects_ << QRect(kMargin, y, kItemWidth, kItemHeight);
        y += kItemHeight + kGap;
    }
    target_rects_.clear();
    int ty = kMargin + kHeading;
    const int tx = kMargin + kItemWidth + 3 * kGap;
    for (int t = 0; t < kTargetCount; ++t) {
        target_rects_ << QRect(tx, ty, kTargetWidth, kTargetHeight);
        ty += kTargetHeight + kGap;
    }
}

QRect HardwarePalette::itemRect(int item) const {
    return item_rects_.value(item);
}

QRect HardwarePalette::targetRect(Target target) const {
    return target_rects_.value(static_cast<int>(target));
}

int HardwarePalette::itemAt(const QPoint& pos) const {
    for (int i = 0; i < item_rects_.size(); ++i)
        if (item_rects_[i].contains(pos))
            return i;
    return -1;
}

int HardwarePalette::targetAt(const QPoint& pos) const {
    for (int i = 0; i < target_rects_.size(); ++i)
        if (target_rects_[i].contains(pos))
            return i;
    return -1;
}

void HardwarePalette::onScenarioChanged() {
    if (!message_.isEmpty())
        setMessage({}, false); // a refusal is stale once the scenario changed
    canvas_->update();
}

void HardwarePalette::showResult(const EvaluationResultPtr& result) {
    result_ = result;
    canvas_->update();
}

void HardwarePalette::setMessage(const QString& message, bool refusal) {
    message_ = refusal ? message : QString();
    experiment::showStatus(status_, *this, message, refusal);
    emit messageChanged(message_);
}

QString HardwarePalette::targetTitle(Target target) const {
    switch (target) {
    case Target::replace:
        return tr("Replace the hardware");
    case Target::add:
        return tr("Add nodes");
    case Target::scale_up:
        return tr("Scale-up tier (NVLink)");
    case Target::scale_out:
        return tr("Scale-out tier (NICs)");
    case Target::racks:
        return tr("Nodes per rack");
    }
    return {};
}

QString HardwarePalette::targetState(Target target) const {
    const ClusterSpec& c = document_->scenario().cluster;
    const QString gpu = shortGpuName(c.gpu);
    switch (target) {
    case Target::replace:
        return tr("now %1 × %2 node%3 of %4 GPUs = %5 GPUs")
            .arg(c.nodes)
            .arg(gpu)
            .arg(c.nodes == 1 ? QString() : QStringLiteral("s"))
            .arg(c.gpus_per_node)
            .arg(c.gpuCount());
    case Target::add:
        return tr("now %1 nodes in %2").arg(c.nodes).arg(QString::fromStdString(c.describeRacks()));
    case Target::scale_up:
        return tr("now %1 %2 GB/s per GPU, %3 µs, %4 GPUs per domain")
            .arg(QString::fromStdString(c.gpu.scale_up_fabric), number(c.gpu.scale_up_gbps),
                 number(c.gpu.scale_up_latency_us))
            .arg(c.gpusPerScaleUpDomain());
    case Target::scale_out:
        return tr("now %1 × %2, %3 GB/s each")
            .arg(c.nics_per_node)
            .arg(QString::fromStdString(c.nic.preset), number(c.nic.bandwidth_gbps));
    case Target::racks:
        return c.scale_up_domain == ScaleUpDomain::rack
                   ? tr("%1 per rack = NVLink domain of %2 GPUs (wheel / ▲▼)")
                         .arg(c.nodes_per_rack)
                         .arg(c.gpusPerScaleUpDomain())
                   : tr("%1 fit a rack → %2; drag nodes between racks in the topology "
                        "(wheel / ▲▼)")
                         .arg(c.nodes_per_rack)
                         .arg(QString::fromStdString(c.describeRacks()));
    }
    return {};
}

std::vector<FieldAssignment> HardwarePalette::dropAssignments(int index, Target target,
                                                              QString* refusal) const {
    const auto refuse = [&](const QString& why) {
        if (refusal)
            *refusal = why;
        return std::vector<FieldAssignment>();
    };
    if (index < 0 || index >= items_.size())
        return refuse(tr("nothing to drop"));
    const Item& item = items_[index];
    const Scenario& s = document_->scenario();
    const ClusterSpec& c = s.cluster;
    const Catalog& catalog = builtinCatalog();
    switch (target) {
    case Target::replace: {
        if (item.kind != ItemKind::node)
            return refuse(tr("%1 is a link type: drop it on its tier").arg(item.title));
        const GpuSpec* gpu = catalog.findGpu(item.id.toStdString());
        const Catalog::NodeShape* shape = catalog.findNodeShape(item.id.toStdString());
        if (!gpu || !shape)
            return refuse(tr("%1 is not in the catalog").arg(item.id));
        // The new type comes with its own node shape and NVLink; the GPU count is kept, rounded
        // up to whole nodes, and to whole racks when the rack is the NVLink domain.
        const int gpn = std::max(1, shape->gpus_per_node);
        int nodes = (c.gpuCount() + gpn - 1) / gpn;
        if (shape->scale_up_domain == ScaleUpDomain::rack) {
            const int npr = std::max(1, shape->nodes_per_rack);
            nodes = (nodes + npr - 1) / npr * npr;
        }
        return {{"cluster.gpu", item.id.toStdString()},
                {"cluster.gpus_per_node", int64_t{gpn}},
                {"cluster.nodes_per_rack", int64_t{shape->nodes_per_rack}},
                {"cluster.scale_up.domain", std::string(toString(shape->scale_up_domain))},
                {"cluster.scale_up.bandwidth_gbps", gpu->scale_up_gbps},
                {"cluster.scale_up.latency_us", gpu->scale_up_latency_us},
                {"cluster.scale_up.name", gpu->scale_up_fabric},
                {"cluster.nodes", int64_t{nodes}},
                // Racks of the new shape are filled in turn; the old per-rack counts describe
                // other racks.
                {"cluster.rack_nodes", std::vector<int>{}}};
    }
    case Target::add: {
        if (item.kind != ItemKind::node)
            return refuse(tr("%1 is a link type: drop it on its tier").arg(item.title));
        if (item.id.toStdString() != c.gpu.preset)
            return refuse(tr("the scenario describes one node type (%1); drop %2 on \"Replace\" "
                             "to change it")
                              .arg(shortGpuName(c.gpu), item.title));
        // One node at a time (one rack for a rack-scale domain); the smallest addition the
        // layout accepts (dp follows the GPU count, and global_batch % dp must still hold).
        const int unit =
            c.scale_up_domain == ScaleUpDomain::rack ? std::max(1, c.nodes_per_rack) : 1;
        for (int k = 1; k <= kMaxAddTries; ++k) {
            const std::vector<FieldAssignment> fields{
                {"cluster.nodes", int64_t{c.nodes} + int64_t{k} * unit}};
            if (document_->previewFields(fields).ok())
                return fields;
        }
        return {{"cluster.nodes", int64_t{c.nodes} + unit}};
    }
    case Target::scale_up:
        if (item.kind != ItemKind::scale_up_link)
            return refuse(
                item.kind == ItemKind::nic
                    ? tr("%1 is a scale-out NIC: drop it on the scale-out tier").arg(item.title)
                    : tr("%1 is a node type: drop it on \"Replace\" or \"Add\"").arg(item.title));
        return {{"cluster.scale_up.bandwidth_gbps", item.scale_up_gbps},
                {"cluster.scale_up.latency_us", item.scale_up_latency_us},
                {"cluster.scale_up.name", item.fabric.toStdString()}};
    case Target::scale_out:
        if (item.kind != ItemKind::nic)
            return refuse(
                item.kind == ItemKind::scale_up_link
                    ? tr("%1 is a scale-up link: drop it on the scale-up tier").arg(item.title)
                    : tr("%1 is a node type: drop it on \"Replace\" or \"Add\"").arg(item.title));
        return {{"cluster.scale_out.nic", item.id.toStdString()}};
    case Target::racks:
        return refuse(tr("change nodes per rack with the wheel or the arrows on that target"));
    }
    return refuse(tr("unknown target"));
}

QString HardwarePalette::dropDescription(int index, Target target) const {
    QString refusal;
    const std::vector<FieldAssignment> fields = dropAssignments(index, target, &refusal);
    if (fields.empty())
        return tr("Refused: %1").arg(refusal);
    const FieldEditResult preview = document_->previewFields(fields);
    if (!preview.ok())
        return tr("Refused: %1").arg(experiment::firstError(preview.diagnostics));
    const Scenario& next = *preview.scenario;
    if (next == document_->scenario())
        return tr("No change: the cluster already has it");
    const ClusterSpec& c = next.cluster;
    switch (target) {
    case Target::replace:
    case Target::add:
        return tr("Drop: %1 × %2 nodes of %3 GPUs = %4 GPUs, dp %5")
            .arg(c.nodes)
            .arg(shortGpuName(c.gpu))
            .arg(c.gpus_per_node)
            .arg(c.gpuCount())
            .arg(next.layout.dp);
    case Target::scale_up:
        return tr("Drop: scale-up %1 GB/s per GPU").arg(number(c.gpu.scale_up_gbps));
    case Target::scale_out:
        return tr("Drop: scale-out %1, %2 GB/s per NIC")
            .arg(QString::fromStdString(c.nic.name), number(c.nic.bandwidth_gbps));
    case Target::racks:
        break;
    }
    return {};
}

bool HardwarePalette::applyAssignments(const QString& text,
                                       const std::vector<FieldAssignment>& assignments) {
    const Diagnostics diagnostics = document_->setFields(text, assignments);
    if (hasErrors(diagnostics)) {
        setMessage(tr("Not applied: %1").arg(experiment::firstError(diagnostics)), true);
        return false;
    }
    setMessage({}, false);
    return true;
}

bool HardwarePalette::drop(int index, Target target) {
    QString refusal;
    const std::vector<FieldAssignment> fields = dropAssignments(index, target, &refusal);
    if (fields.empty()) {
        setMessage(tr("Not applied: %1").arg(refusal), true);
        return false;
    }
    const Item& item = items_[index];
    QString text;
    switch (target) {
    case Target::replace:
        text = tr("Replace the hardware with %1").arg(item.title);
        break;
    case Target::add:
        text = tr("Add %1 nodes").arg(item.title);
        break;
    case Target::scale_up:
        text = tr("Scale-up link: %1").arg(item.title);
        break;
    case Target::scale_out:
        text = tr("Scale-out NIC: %1").arg(item.title);
        break;
    case Target::racks:
        break;
    }
    if (document_->previewFields(fields).scenario == document_->scenario()) {
        setMessage(tr("No change: the cluster already has %1").arg(item.title), false);
        return false;
    }
    return applyAssignments(text, fields);
}

bool HardwarePalette::stepNodesPerRack(int direction) {
    const ClusterSpec& c = document_->scenario().cluster;
    QString first_reason;
    for (int v = c.nodes_per_rack + direction; v >= 1 && v <= std::max(c.nodes, 1);
         v += direction) {
        const std::vector<FieldAssignment> fields{{"cluster.nodes_per_rack", int64_t{v}}};
        const FieldEditResult preview = document_->previewFields(fields);
        if (preview.ok())
            return applyAssignments(tr("Nodes per rack %1 → %2").arg(c.nodes_per_rack).arg(v),
                                    fields);
        if (first_reason.isEmpty())
            first_reason = experiment::firstError(preview.diagnostics);
    }
    setMessage(first_reason.isEmpty()
                   ? tr("Not applied: no nodes-per-rack value %1 %2 within %3 nodes")
                         .arg(direction > 0 ? tr("above") : tr("below"))
                         .arg(c.nodes_per_rack)
                         .arg(c.nodes)
                   : tr("Not applied: %1").arg(first_reason),
               true);
    return false;
}

void HardwarePalette::setKeyboardChoice(int item, Target target) {
    item_box_->setCurrentIndex(item);
    target_box_->setCurrentIndex(target_box_->findData(static_cast<int>(target)));
}

void HardwarePalette::applyKeyboardChoice() {
    drop(item_box_->currentIndex(), static_cast<Target>(target_box_->currentData().toInt()));
}

// ---------------------------------------------------------------------------------------------
// HardwareCanvas

namespace detail {

namespace {

/// The topology view under a global position, if any (drops on the diagram).
bool overTopology(const QPoint& global) {
    for (QWidget* w = QApplication::widgetAt(global); w; w = w->parentWidget())
        if (w->inherits("moe::widgets::TopologyView"))
            return true;
    return false;
}

HardwarePalette::Target topologyTarget(HardwarePalette::ItemKind kind) {
    switch (kind) {
    case HardwarePalette::ItemKind::node:
        return HardwarePalette::Target::replace;
    case HardwarePalette::ItemKind::scale_up_link:
        return HardwarePalette::Target::scale_up;
    case HardwarePalette::ItemKind::nic:
        return HardwarePalette::Target::scale_out;
    }
    return HardwarePalette::Target::replace;
}

QColor kindColor(HardwarePalette::ItemKind kind) {
    switch (kind) {
    case HardwarePalette::ItemKind::node:
        return QColor(0x3b, 0x7d, 0xd8);
    case HardwarePalette::ItemKind::scale_up_link:
        return QColor(0x2f, 0xa0, 0x5a);
    case HardwarePalette::ItemKind::nic:
        return QColor(0xe0, 0x7b, 0x22);
    }
    return QColor(Qt::gray);
}

} // namespace

HardwareCanvas::HardwareCanvas(HardwarePalette* palette)
    : QWidget(palette)
    , palette_(palette) {
    setObjectName(QStringLiteral("hardwareCanvas"));
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setAccessibleName(tr("Hardware palette"));
    setAccessibleDescription(tr("Drag a node or link type onto a target. Keyboard: the boxes "
                                "below with Apply; Up and Down change nodes per rack."));
}

QSize HardwareCanvas::sizeHint() const {
    int bottom = 0;
    for (const QRect& r : palette_->item_rects_)
        bottom = std::max(bottom, r.bottom());
    for (const QRect& r : palette_->target_rects_)
        bottom = std::max(bottom, r.bottom());
    return {kMargin * 2 + kItemWidth + 3 * kGap + kTargetWidth, bottom + kMargin};
}

QSize HardwareCanvas::minimumSizeHint() const {
    return sizeHint();
}

void HardwareCanvas::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette& pal = palette();
    p.fillRect(rect(), pal.color(QPalette::Base));
    QFont base = font();
    QFont small = base;
    small.setPointSizeF(base.pointSizeF() * 0.85);
    QFont bold = base;
    bold.setBold(true);
    const QColor muted = experiment::mutedText(pal, QPalette::AlternateBase);

    p.setFont(bold);
    p.setPen(pal.color(QPalette::Text));
    for (const auto& [y, text] : palette_->headings_)
        p.drawText(QRect(kMargin, y, kItemWidth, kHeading), Qt::AlignLeft | Qt::AlignVCenter, text);
    const QRect first_target = palette_->target_rects_.value(0);
    p.drawText(QRect(first_target.left(), kMargin, kTargetWidth, kHeading),
               Qt::AlignLeft | Qt::AlignVCenter, tr("Drop targets"));

    const auto& items = palette_->items_;
    const std::string preset = palette_->document_->scenario().cluster.gpu.preset;
    const std::string nic = palette_->document_->scenario().cluster.nic.preset;
    for (int i = 0; i < items.size(); ++i) {
        const QRect r = palette_->item_rects_[i];
        const auto& item = items[i];
        const QColor accent = kindColor(item.kind);
        const bool in_use =
            (item.kind == HardwarePalette::ItemKind::node && item.id.toStdString() == preset) ||
            (item.kind == HardwarePalette::ItemKind::nic && item.id.toStdString() == nic);
        const QColor face = experiment::chipFace(pal, accent, in_use ? 0.28 : 0.12);
        p.setOpacity(dragging_ && i == pressed_ ? 0.4 : 1.0);
        p.setPen(QPen(accent, in_use ? 2 : 1));
        p.setBrush(face);
        p.drawRoundedRect(QRectF(r).adjusted(0.5, 0.5, -0.5, -0.5), 5, 5);
        p.fillRect(QRect(r.left() + 3, r.top() + 6, 4, r.height() - 12), accent);
        const QColor text = experiment::textOn(face);
        p.setPen(text);
        p.setFont(bold);
        const QString title = in_use ? tr("%1 ✓").arg(item.title) : item.title;
        p.drawText(QRect(r.left() + 12, r.top() + 2, r.width() - 16, 18),
                   Qt::AlignLeft | Qt::AlignVCenter,
                   p.fontMetrics().elidedText(title, Qt::ElideRight, r.width() - 16));
        p.setFont(small);
        p.drawText(QRect(r.left() + 12, r.top() + 19, r.width() - 16, 16),
                   Qt::AlignLeft | Qt::AlignVCenter,
                   p.fontMetrics().elidedText(item.detail, Qt::ElideRight, r.width() - 16));
    }
    p.setOpacity(1.0);

    for (int t = 0; t < HardwarePalette::kTargetCount; ++t) {
        const auto target = static_cast<HardwarePalette::Target>(t);
        const QRect r = palette_->target_rects_[t];
        const bool hover = dragging_ && t == hover_target_;
        QColor face = pal.color(QPalette::AlternateBase);
        if (hover)
            face = experiment::chipFace(
                pal, preview_valid_ ? QColor(0x2f, 0xa0, 0x5a) : experiment::refusalColor(pal),
                0.3);
        p.setBrush(face);
        const bool focused = hasFocus() && t == focus_target_;
        p.setPen(QPen(focused ? pal.color(QPalette::Highlight) : pal.color(QPalette::Mid),
                      focused ? 2.5 : 1.2,
                      target == HardwarePalette::Target::racks ? Qt::SolidLine : Qt::DashLine));
        p.drawRoundedRect(QRectF(r).adjusted(0.5, 0.5, -0.5, -0.5), 6, 6);
        p.setPen(experiment::textOn(face));
        p.setFont(bold);
        p.drawText(QRect(r.left() + 10, r.top() + 4, r.width() - 20, 18),
                   Qt::AlignLeft | Qt::AlignVCenter, palette_->targetTitle(target));
        p.setFont(small);
        QString state = palette_->targetState(target);
        if (hover)
            state = preview_;
        p.setPen(hover ? experiment::textOn(face) : muted);
        const int stepper = target == HardwarePalette::Target::racks ? 28 : 0;
        p.drawText(QRect(r.left() + 10, r.top() + 22, r.width() - 20 - stepper, r.height() - 24),
                   Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, state);
        if (target == HardwarePalette::Target::racks) {
            // Steppers.
            p.setPen(pal.color(QPalette::Text));
            p.setFont(bold);
            p.drawText(QRect(r.right() - 26, r.top() + 2, 22, 18), Qt::AlignCenter,
                       QStringLiteral("▲"));
            p.drawText(QRect(r.right() - 26, r.top() + 20, 22, 18), Qt::AlignCenter,
                       QStringLiteral("▼"));
        }
    }

    if (dragging_ && pressed_ >= 0) {
        QRect r = palette_->item_rects_[pressed_];
        r.moveCenter(drag_pos_);
        p.setOpacity(0.85);
        const QColor accent = kindColor(items[pressed_].kind);
        p.setPen(QPen(accent, 2));
        p.setBrush(experiment::chipFace(pal, accent, 0.35));
        p.drawRoundedRect(QRectF(r), 5, 5);
        p.setPen(experiment::textOn(experiment::chipFace(pal, accent, 0.35)));
        p.setFont(bold);
        p.drawText(r, Qt::AlignCenter, items[pressed_].title);
        p.setOpacity(1.0);
    }
}

void HardwareCanvas::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton)
        return;
    setFocus(Qt::MouseFocusReason);
    const QPoint pos = event->position().toPoint();
    const QRect racks = palette_->targetRect(HardwarePalette::Target::racks);
    if (racks.contains(pos)) {
        focus_target_ = static_cast<int>(HardwarePalette::Target::racks);
        if (pos.x() >= racks.right() - 28)
            palette_->stepNodesPerRack(pos.y() < racks.top() + 20 ? +1 : -1);
        update();
        return;
    }
    pressed_ = palette_->itemAt(pos);
    press_pos_ = pos;
    dragging_ = false;
    if (pressed_ >= 0)
        palette_->item_box_->setCurrentIndex(pressed_);
}

void HardwareCanvas::mouseMoveEvent(QMouseEvent* event) {
    if (pressed_ < 0 || !(event->buttons() & Qt::LeftButton))
        return;
    const QPoint pos = event->position().toPoint();
    if (!dragging_ && (pos - press_pos_).manhattanLength() < QApplication::startDragDistance())
        return;
    dragging_ = true;
    drag_pos_ = pos;
    const int target = palette_->targetAt(pos);
    const bool topology = target < 0 && overTopology(event->globalPosition().toPoint());
    if (target != hover_target_ || topology != over_topology_) {
        hover_target_ = target;
        over_topology_ = topology;
        preview_.clear();
        preview_valid_ = false;
        std::optional<HardwarePalette::Target> t;
        if (target >= 0)
            t = static_cast<HardwarePalette::Target>(target);
        else if (topology)
            t = topologyTarget(palette_->items_[pressed_].kind);
        if (t && *t != HardwarePalette::Target::racks) {
            preview_ = palette_->dropDescription(pressed_, *t);
            preview_valid_ = !preview_.startsWith(tr("Refused"));
        }
        palette_->status_->setText(preview_);
        palette_->status_->setVisible(!preview_.isEmpty() || !palette_->message_.isEmpty());
    }
    update();
}

void HardwareCanvas::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton)
        return;
    const int item = pressed_;
    const bool was_dragging = dragging_;
    const QPoint pos = event->position().toPoint();
    pressed_ = -1;
    dragging_ = false;
    hover_target_ = -1;
    over_topology_ = false;
    preview_.clear();
    palette_->setMessage(palette_->message_, !palette_->message_.isEmpty());
    if (item >= 0 && was_dragging) {
        const int target = palette_->targetAt(pos);
        if (target >= 0 && target != static_cast<int>(HardwarePalette::Target::racks)) {
            palette_->drop(item, static_cast<HardwarePalette::Target>(target));
        } else if (target < 0 && overTopology(event->globalPosition().toPoint())) {
            palette_->drop(item, topologyTarget(palette_->items_[item].kind));
        }
    }
    update();
}

void HardwareCanvas::wheelEvent(QWheelEvent* event) {
    const QRect racks = palette_->targetRect(HardwarePalette::Target::racks);
    if (!racks.contains(event->position().toPoint()) || event->angleDelta().y() == 0) {
        event->ignore();
        return;
    }
    palette_->stepNodesPerRack(event->angleDelta().y() > 0 ? +1 : -1);
    event->accept();
}

QList<KeyBinding> HardwareCanvas::keyBindings() {
    return {{QObject::tr("Up / Down, + / -, wheel over the racks"),
             QObject::tr("one node per rack more or fewer")}};
}

void HardwareCanvas::keyPressEvent(QKeyEvent* event) {
    switch (event->key()) {
    case Qt::Key_Up:
    case Qt::Key_Plus:
        palette_->stepNodesPerRack(+1);
        break;
    case Qt::Key_Down:
    case Qt::Key_Minus:
        palette_->stepNodesPerRack(-1);
        break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    focus_target_ = static_cast<int>(HardwarePalette::Target::racks);
    update();
    event->accept();
}

bool HardwareCanvas::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int item = palette_->itemAt(help->pos());
        const int target = palette_->targetAt(help->pos());
        if (item >= 0) {
            const auto& it = palette_->items_[item];
            QToolTip::showText(help->globalPos(),
                               tr("<b>%1</b><br>%2<br>Drag onto a target (or the topology view).")
                                   .arg(it.title.toHtmlEscaped(), it.detail.toHtmlEscaped()),
                               this, palette_->item_rects_[item]);
        } else if (target >= 0) {
            const auto t = static_cast<HardwarePalette::Target>(target);
            QString text = tr("<b>%1</b><br>%2")
                               .arg(palette_->targetTitle(t).toHtmlEscaped(),
                                    palette_->targetState(t).toHtmlEscaped());
            if (t == HardwarePalette::Target::racks)
                text += tr("<br>How many nodes a rack holds. To move one node to another rack, "
                           "drag it there in the topology view (or Alt+Left / Alt+Right).");
            QToolTip::showText(help->globalPos(), text, this, palette_->target_rects_[target]);
        } else {
            QToolTip::hideText();
        }
        return true;
    }
    return QWidget::event(event);
}

} // namespace detail

} // namespace moe::widgets
