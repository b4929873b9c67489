#include "moe_widgets/editor/scenario_editor.h"

#include "moe/edits.h"
#include "moe_widgets/document/scenario_document.h"

#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStyle>
#include <QStyledItemDelegate>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace moe::widgets {

namespace {

QString groupTitle(const QString& group) {
    if (group == "scenario")
        return ScenarioEditor::tr("Scenario");
    if (group == "cluster")
        return ScenarioEditor::tr("Cluster");
    if (group == "model")
        return ScenarioEditor::tr("Model");
    if (group == "training")
        return ScenarioEditor::tr("Training");
    if (group == "layout")
        return ScenarioEditor::tr("Layout");
    if (group == "routing")
        return ScenarioEditor::tr("Routing");
    return group;
}

QString groupTooltip(const QString& group) {
    if (group == "scenario")
        return ScenarioEditor::tr("Name and description of the scenario.");
    if (group == "cluster")
        return ScenarioEditor::tr("Hardware: GPUs, nodes, scale-up and scale-out fabrics, costs.");
    if (group == "model")
        return ScenarioEditor::tr("The transformer and its experts.");
    if (group == "training")
        return ScenarioEditor::tr("Batch, token budget, optimizer, ZeRO, recomputation.");
    if (group == "layout")
        return ScenarioEditor::tr(
            "Parallel degrees, rank order, pipeline schedule, expert placement.");
    if (group == "routing")
        return ScenarioEditor::tr(
            "How popular each expert is (drives all-to-all skew and the straggler).");
    return {};
}

/// The unit without its qualifiers ("GB/s per GPU per direction" -> "GB/s"), so the column
/// stays narrow; the tooltip has the whole unit.
QString shortUnit(const std::string& unit) {
    const QString text = QString::fromStdString(unit);
    const int per = text.indexOf(QStringLiteral(" per "));
    return per < 0 ? text : text.left(per);
}

/// False for a field the scenario ignores as it stands (it can still be set, e.g. before
/// switching attention to MLA).
bool fieldApplies(const Scenario& s, const std::string& path) {
    if (path.rfind("model.mla.", 0) == 0)
        return s.model.attention == AttentionKind::mla;
    if (path == "model.kv_heads")
        return s.model.attention == AttentionKind::gqa;
    if (path == "routing.zipf_alpha")
        return s.routing.model == PopularityModel::zipf;
    if (path == "routing.histogram_csv")
        return s.routing.model == PopularityModel::histogram;
    if (path == "layout.vpp")
        return s.layout.schedule == PipelineSchedule::interleaved;
    if (path == "model.ffn_hidden")
        return !s.model.isMoe() || s.model.dense_layers > 0;
    if (path == "model.shared_expert_ffn_hidden")
        return s.model.shared_experts > 0;
    if (path == "model.capacity_factor" || path == "model.top_k" ||
        path == "model.expert_ffn_hidden" || path == "layout.ep" || path == "layout.etp" ||
        path == "layout.max_nodes_per_token" || path == "layout.expert_placement" ||
        path == "model.precision.dispatch")
        return s.model.isMoe();
    return true;
}

QString formatLimit(double value) {
    return QString::number(value, 'g', 12);
}

QString rangeText(const FieldInfo& f) {
    const bool numeric = f.kind == FieldKind::integer || f.kind == FieldKind::number;
    if (!numeric || !f.min)
        return {};
    // The table's smallest positive step stands for "greater than 0".
    const bool positive_real = f.kind == FieldKind::number && *f.min > 0 && *f.min < 1;
    const bool bounded = f.max && *f.max < std::numeric_limits<int>::max();
    if (positive_real)
        return ScenarioEditor::tr("> 0");
    if (bounded)
        return ScenarioEditor::tr("%1 to %2").arg(formatLimit(*f.min), formatLimit(*f.max));
    return ScenarioEditor::tr("≥ %1").arg(formatLimit(*f.min));
}

QString fieldTooltip(const FieldInfo& f, const QString& refusal) {
    QString html = QStringLiteral("<b>%1</b>").arg(QString::fromStdString(f.path).toHtmlEscaped());
    if (f.required)
        html += ScenarioEditor::tr(" (required)");
    html += QStringLiteral("<br>") + QString::fromStdString(f.tooltip).toHtmlEscaped();
    if (!f.unit.empty())
        html +=
            ScenarioEditor::tr("<br>Unit: %1").arg(QString::fromStdString(f.unit).toHtmlEscaped());
    const QString range = rangeText(f);
    if (!range.isEmpty())
        html += ScenarioEditor::tr("<br>Range: %1").arg(range.toHtmlEscaped());
    if (!f.choices.empty()) {
        QStringList choices;
        for (const std::string& c : f.choices)
            choices << QString::fromStdString(c);
        html += (f.kind == FieldKind::choice ? ScenarioEditor::tr("<br>One of: %1")
                                             : ScenarioEditor::tr("<br>For example: %1"))
                    .arg(choices.join(QStringLiteral(", ")).toHtmlEscaped());
    }
    if (!refusal.isEmpty())
        html += ScenarioEditor::tr("<br><font color='#c0392b'>Refused: %1</font>")
                    .arg(refusal.toHtmlEscaped());
    return html;
}

/// Digits after the decimal point that `text` needs (capped), so an editor never rounds a
/// value it did not change.
int decimalsOf(const QString& text) {
    const int dot = text.indexOf('.');
    if (dot < 0 || text.contains('e', Qt::CaseInsensitive))
        return 0;
    return std::min<int>(static_cast<int>(text.size()) - dot - 1, 6);
}

QString reasonText(const Diagnostics& diagnostics) {
    QStringList lines;
    for (const Diagnostic& d : diagnostics) {
        if (d.severity == Diagnostic::Severity::error)
            lines << QString::fromStdString(d.message);
    }
    return lines.join('\n');
}

/// Creates the editor a field's kind calls for; spin boxes apply every step live under one
/// merge key per opened editor, so a scrub is one undo step.
class FieldDelegate : public QStyledItemDelegate {
public:
    FieldDelegate(ScenarioFieldsModel* model, QObject* parent)
        : QStyledItemDelegate(parent)
        , model_(model) {
        QObject::connect(model_, &ScenarioFieldsModel::refused, this,
                         [this](const QString& path) { tint(path, true); });
        QObject::connect(model_, &ScenarioFieldsModel::accepted, this,
                         [this](const QString& path) { tint(path, false); });
    }

    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option,
                          const QModelIndex& index) const override {
        const QString path = index.data(ScenarioFieldsModel::FieldPathRole).toString();
        const FieldInfo* info = findScenarioField(path.toStdString());
        if (!info)
            return QStyledItemDelegate::createEditor(parent, option, index);
        const QString key = path + QLatin1Char('#') + QString::number(++serial_);
        const QString current = index.data(Qt::EditRole).toString();
        QWidget* editor = nullptr;
        ScenarioFieldsModel* model = model_;
        switch (info->kind) {
        case FieldKind::integer: {
            auto* spin = new QSpinBox(parent);
            const double lo = info->min.value_or(std::numeric_limits<int>::min());
            const double hi = info->max.value_or(std::numeric_limits<int>::max());
            spin->setRange(static_cast<int>(std::max<double>(lo, std::numeric_limits<int>::min())),
                           static_cast<int>(std::min<double>(hi, std::numeric_limits<int>::max())));
            spin->setKeyboardTracking(false);
            spin->setAccelerated(true);
            QObject::connect(spin, &QSpinBox::valueChanged, spin, [model, path, key, spin] {
                if (spin->property("moe_ready").toBool())
                    model->setFieldValue(path, QString::number(spin->value()), key);
            });
            editor = spin;
            break;
        }
        case FieldKind::number: {
            auto* spin = new QDoubleSpinBox(parent);
            spin->setDecimals(std::max(info->decimals, decimalsOf(current)));
            spin->setRange(info->min.value_or(-1e18), info->max.value_or(1e18));
            // A "> 0" field may go down to its smallest shown step, not to 0.
            if (info->min && *info->min > 0 && *info->min < 1)
                spin->setMinimum(std::pow(10.0, -spin->decimals()));
            spin->setSingleStep(info->step);
            spin->setKeyboardTracking(false);
            spin->setAccelerated(true);
            QObject::connect(spin, &QDoubleSpinBox::valueChanged, spin, [model, path, key, spin] {
                if (spin->property("moe_ready").toBool())
                    model->setFieldValue(path, QString::number(spin->value(), 'g', 15), key);
            });
            editor = spin;
            break;
        }
        case FieldKind::choice: {
            auto* combo = new QComboBox(parent);
            for (const std::string& choice : info->choices)
                combo->addItem(QString::fromStdString(choice));
            // Each choice is its own undo step.
            QObject::connect(combo, &QComboBox::activated, combo, [model, path, combo] {
                model->setFieldValue(path, combo->currentText());
            });
            editor = combo;
            break;
        }
        case FieldKind::text:
            if (!info->choices.empty()) {
                auto* combo = new QComboBox(parent);
                combo->setEditable(true);
                for (const std::string& choice : info->choices)
                    combo->addItem(QString::fromStdString(choice));
                editor = combo;
                break;
            }
            editor = new QLineEdit(parent);
            break;
        case FieldKind::list:
            editor = new QLineEdit(parent);
            break;
        }
        editor->setProperty("moe_path", path);
        editor->setProperty("moe_key", key);
        editor->setToolTip(fieldTooltip(*info, {}));
        editors_.append(editor);
        return editor;
    }

    void setEditorData(QWidget* editor, const QModelIndex& index) const override {
        // Only when the editor opens: later model updates (every live step, or a refusal that
        // leaves the model at the old value) must not yank the value out of the user's hands.
        if (editor->property("moe_ready").toBool())
            return;
        const QString value = index.data(Qt::EditRole).toString();
        if (auto* spin = qobject_cast<QSpinBox*>(editor))
            spin->setValue(value.toInt());
        else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(editor))
            dspin->setValue(value.toDouble());
        else if (auto* combo = qobject_cast<QComboBox*>(editor))
            combo->setCurrentText(value);
        else if (auto* line = qobject_cast<QLineEdit*>(editor))
            line->setText(value);
        else
            QStyledItemDelegate::setEditorData(editor, index);
        editor->setProperty("moe_ready", true);
    }

    void setModelData(QWidget* editor, QAbstractItemModel* model,
                      const QModelIndex& index) const override {
        const QString path = editor->property("moe_path").toString();
        if (path.isEmpty()) {
            QStyledItemDelegate::setModelData(editor, model, index);
            return;
        }
        const QString key = editor->property("moe_key").toString();
        if (auto* spin = qobject_cast<QSpinBox*>(editor))
            model_->setFieldValue(path, QString::number(spin->value()), key);
        else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(editor))
            model_->setFieldValue(path, QString::number(dspin->value(), 'g', 15), key);
        else if (auto* combo = qobject_cast<QComboBox*>(editor))
            model_->setFieldValue(path, combo->currentText());
        else if (auto* line = qobject_cast<QLineEdit*>(editor))
            model_->setFieldValue(path, line->text());
    }

    void destroyEditor(QWidget* editor, const QModelIndex& index) const override {
        editors_.removeAll(editor);
        QStyledItemDelegate::destroyEditor(editor, index);
    }

private:
    /// Marks an open editor whose value was refused, so the problem is visible where the user
    /// is typing, and unmarks it once a value is accepted.
    void tint(const QString& path, bool refused) {
        for (const QPointer<QWidget>& editor : std::as_const(editors_)) {
            if (!editor || editor->property("moe_path").toString() != path)
                continue;
            QPalette palette = editor->parentWidget() ? editor->parentWidget()->palette()
                                                      : QApplication::palette();
            if (refused) {
                const QColor base = palette.color(QPalette::Base);
                const QColor red(0xd6, 0x3b, 0x2f);
                palette.setColor(QPalette::Base,
                                 QColor::fromRgbF(0.75f * base.redF() + 0.25f * red.redF(),
                                                  0.75f * base.greenF() + 0.25f * red.greenF(),
                                                  0.75f * base.blueF() + 0.25f * red.blueF()));
            }
            editor->setPalette(palette);
        }
    }

    ScenarioFieldsModel* model_;
    mutable int serial_ = 0;
    mutable QList<QPointer<QWidget>> editors_;
};

} // namespace

// ---------------------------------------------------------------------------------------------
// ScenarioFieldsModel

ScenarioFieldsModel::ScenarioFieldsModel(ScenarioDocument* document, QObject* parent)
    : QAbstractItemModel(parent)
    , document_(document) {
    // Root, then per group its fields in file order, with one node per sub-section
    // ("scale_up") so each row shows a short key.
    nodes_.append(Node{});
    auto child = [this](int parent_node, const QString& title, int field) {
        Node node;
        node.parent = parent_node;
        node.row = static_cast<int>(nodes_[parent_node].children.size());
        node.title = title;
        node.field = field;
        nodes_.append(node);
        const int id = static_cast<int>(nodes_.size()) - 1;
        nodes_[parent_node].children.append(id);
        return id;
    };
    const std::vector<FieldInfo>& fields = scenarioFields();
    QHash<QString, int> sections; // "cluster" or "cluster.scale_up" -> node
    for (int i = 0; i < static_cast<int>(fields.size()); ++i) {
        const QString group = QString::fromStdString(fields[i].group);
        if (!sections.contains(group)) {
            sections.insert(group, child(0, group, -1));
            nodes_.back().group = true;
        }
        int parent_node = sections.value(group);
        const QStringList parts = QString::fromStdString(fields[i].key).split('.');
        QString prefix = group;
        for (int p = 0; p + 1 < parts.size(); ++p) {
            prefix += '.' + parts[p];
            if (!sections.contains(prefix))
                sections.insert(prefix, child(parent_node, parts[p], -1));
            parent_node = sections.value(prefix);
        }
        field_nodes_.insert(QString::fromStdString(fields[i].path),
                            child(parent_node, parts.back(), i));
    }
    refreshValues();
    if (document_)
        connect(document_, &ScenarioDocument::scenarioChanged, this,
                &ScenarioFieldsModel::onScenarioChanged);
}

int ScenarioFieldsModel::nodeOf(const QModelIndex& index) const {
    return index.isValid() ? static_cast<int>(index.internalId()) : 0;
}

QModelIndex ScenarioFieldsModel::index(int row, int column, const QModelIndex& parent) const {
    if (column < 0 || column >= ColumnCount || row < 0 ||
        (parent.isValid() && parent.column() != 0))
        return {};
    const Node& node = nodes_[nodeOf(parent)];
    if (row >= node.children.size())
        return {};
    return createIndex(row, column, static_cast<quintptr>(node.children[row]));
}

QModelIndex ScenarioFieldsModel::parent(const QModelIndex& child) const {
    const int node = nodeOf(child);
    if (node == 0 || nodes_[node].parent == 0)
        return {};
    const int parent_node = nodes_[node].parent;
    return createIndex(nodes_[parent_node].row, 0, static_cast<quintptr>(parent_node));
}

int ScenarioFieldsModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() && parent.column() != 0)
        return 0;
    return static_cast<int>(nodes_[nodeOf(parent)].children.size());
}

int ScenarioFieldsModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

QVariant ScenarioFieldsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid())
        return {};
    const Node& node = nodes_[nodeOf(index)];
    if (node.field < 0) {
        if (index.column() == FieldColumn && role == Qt::DisplayRole)
            return node.group ? groupTitle(node.title) : node.title;
        if (role == Qt::ToolTipRole && node.group)
            return groupTooltip(node.title);
        if (role == Qt::FontRole && node.group) {
            QFont font;
            font.setBold(true);
            return font;
        }
        if (role == FieldPathRole)
            return QString();
        return {};
    }
    const FieldInfo& f = scenarioFields()[node.field];
    const QString path = QString::fromStdString(f.path);
    const QString refusal = refusals_.value(path);
    switch (role) {
    case FieldPathRole:
        return path;
    case RefusalRole:
        return refusal;
    case Qt::ToolTipRole: {
        QString tip = fieldTooltip(f, refusal);
        const QString& value = values_.value(node.field);
        // Long values (a description, a placement list) do not fit the column.
        if (index.column() == ValueColumn && value.size() > 16)
            tip = QStringLiteral("<i>%1</i><br>").arg(value.toHtmlEscaped()) + tip;
        if (!applies_.value(node.field, true))
            tip += tr("<br><i>Not used by this scenario (see the field's description).</i>");
        return tip;
    }
    case Qt::DisplayRole:
    case Qt::EditRole:
        if (index.column() == FieldColumn)
            return node.title;
        if (index.column() == UnitColumn)
            return shortUnit(f.unit);
        return values_.value(node.field);
    case Qt::DecorationRole:
        if (index.column() == ValueColumn && !refusal.isEmpty())
            return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
        return {};
    case Qt::ForegroundRole:
        // Units, and fields the scenario ignores (MLA sizes of a GQA model...), are muted.
        if (index.column() == UnitColumn || !applies_.value(node.field, true))
            return QApplication::palette().brush(QPalette::Disabled, QPalette::Text);
        return {};
    default:
        return {};
    }
}

QVariant ScenarioFieldsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case FieldColumn:
        return tr("Field");
    case ValueColumn:
        return tr("Value");
    case UnitColumn:
        return tr("Unit");
    default:
        return {};
    }
}

Qt::ItemFlags ScenarioFieldsModel::flags(const QModelIndex& index) const {
    if (!index.isValid())
        return Qt::NoItemFlags;
    Qt::ItemFlags flags = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    const bool field = nodes_[nodeOf(index)].field >= 0;
    if (field && index.column() == ValueColumn)
        flags |= Qt::ItemIsEditable;
    if (field)
        flags |= Qt::ItemNeverHasChildren;
    return flags;
}

bool ScenarioFieldsModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != Qt::EditRole || !(flags(index) & Qt::ItemIsEditable))
        return false;
    return setFieldValue(index.data(FieldPathRole).toString(), value.toString());
}

bool ScenarioFieldsModel::setFieldValue(const QString& path, const QString& value,
                                        const QString& merge_key) {
    if (!document_)
        return false;
    const Diagnostics diagnostics = document_->setField(path, value, merge_key);
    if (!hasErrors(diagnostics)) {
        // onScenarioChanged cleared every refusal if the scenario changed; an unchanged value
        // still clears this field's own.
        if (refusals_.remove(path))
            emit dataChanged(indexOfField(path, FieldColumn), indexOfField(path, UnitColumn));
        emit accepted(path);
        return true;
    }
    const QString reason = reasonText(diagnostics);
    refusals_.insert(path, reason);
    emit dataChanged(indexOfField(path, FieldColumn), indexOfField(path, UnitColumn));
    emit refused(path, value, reason);
    return false;
}

QModelIndex ScenarioFieldsModel::indexOfField(const QString& path, int column) const {
    const auto it = field_nodes_.constFind(path);
    if (it == field_nodes_.constEnd())
        return {};
    return createIndex(nodes_[*it].row, column, static_cast<quintptr>(*it));
}

void ScenarioFieldsModel::onScenarioChanged() {
    // Only rows whose text changed are announced: a view re-measures and repaints every row it
    // is told about, which for the whole table costs more than the model's evaluation.
    const QStringList before = values_;
    const QVector<bool> applied = applies_;
    refreshValues();
    const QHash<QString, QString> old_refusals = refusals_;
    // Any accepted change may have made an earlier refusal's reason moot.
    refusals_.clear();
    for (auto it = field_nodes_.constBegin(); it != field_nodes_.constEnd(); ++it) {
        const int field = nodes_[*it].field;
        if (before.value(field) == values_.value(field) &&
            applied.value(field) == applies_.value(field) && !old_refusals.contains(it.key()))
            continue;
        const QModelIndex first = createIndex(nodes_[*it].row, 0, static_cast<quintptr>(*it));
        emit dataChanged(first, first.siblingAtColumn(ColumnCount - 1));
    }
}

void ScenarioFieldsModel::refreshValues() {
    const std::vector<FieldInfo>& fields = scenarioFields();
    values_.resize(static_cast<qsizetype>(fields.size()));
    applies_.resize(static_cast<qsizetype>(fields.size()));
    for (std::size_t i = 0; i < fields.size(); ++i) {
        const auto at = static_cast<qsizetype>(i);
        values_[at] =
            document_ ? QString::fromStdString(
                            getScenarioField(document_->scenario(), fields[i].path).value_or(""))
                      : QString();
        applies_[at] = !document_ || fieldApplies(document_->scenario(), fields[i].path);
    }
}

// ---------------------------------------------------------------------------------------------
// ScenarioEditor

ScenarioEditor::ScenarioEditor(ScenarioDocument* document, ViewState* /*state*/, QWidget* parent)
    : QWidget(parent)
    , document_(document)
    , model_(new ScenarioFieldsModel(document, this))
    , proxy_(new QSortFilterProxyModel(this))
    , filter_(new QLineEdit(this))
    , tree_(new QTreeView(this))
    , problem_(new QLabel(this)) {
    setObjectName(QStringLiteral("scenarioEditor"));
    proxy_->setSourceModel(model_);
    proxy_->setRecursiveFilteringEnabled(true);
    proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    proxy_->setFilterKeyColumn(ScenarioFieldsModel::FieldColumn);
    proxy_->setFilterRole(ScenarioFieldsModel::FieldPathRole);

    filter_->setPlaceholderText(tr("Filter fields (e.g. bandwidth, layout.)"));
    filter_->setClearButtonEnabled(true);
    connect(filter_, &QLineEdit::textChanged, this, &ScenarioEditor::setFilter);

    tree_->setModel(proxy_);
    tree_->setItemDelegate(new FieldDelegate(model_, tree_));
    tree_->setAlternatingRowColors(true);
    tree_->setUniformRowHeights(true);
    tree_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::SelectedClicked |
                           QAbstractItemView::EditKeyPressed | QAbstractItemView::AnyKeyPressed);
    tree_->expandAll();
    // Names and units never change: measure them once (ResizeToContents would re-measure every
    // row on every edit), and give the values the rest.
    tree_->header()->setStretchLastSection(false);
    tree_->resizeColumnToContents(ScenarioFieldsModel::FieldColumn);
    tree_->resizeColumnToContents(ScenarioFieldsModel::UnitColumn);
    // A few long names ("gpu_failures_per_million_h") and units must not squeeze the values
    // into "h1..." in a default-width dock: cap both (they elide; the tooltip has the rest).
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('M'));
    for (const auto& [column, cap_em] : {std::pair{ScenarioFieldsModel::FieldColumn, 15},
                                         std::pair{ScenarioFieldsModel::UnitColumn, 7}})
        tree_->header()->resizeSection(column,
                                       std::min(tree_->header()->sectionSize(column), cap_em * em));
    tree_->header()->setSectionResizeMode(ScenarioFieldsModel::FieldColumn,
                                          QHeaderView::Interactive);
    tree_->header()->setSectionResizeMode(ScenarioFieldsModel::ValueColumn, QHeaderView::Stretch);
    tree_->header()->setSectionResizeMode(ScenarioFieldsModel::UnitColumn,
                                          QHeaderView::Interactive);
    // One click on a value starts editing it: the editor is for quick what-ifs.
    connect(tree_, &QTreeView::clicked, this, [this](const QModelIndex& index) {
        if (index.column() == ScenarioFieldsModel::ValueColumn &&
            (index.flags() & Qt::ItemIsEditable))
            tree_->edit(index);
    });

    problem_->setWordWrap(true);
    problem_->setTextFormat(Qt::PlainText);
    problem_->setVisible(false);
    problem_->setObjectName(QStringLiteral("editorProblem"));
    problem_->setFrameShape(QFrame::StyledPanel);
    problem_->setMargin(6);

    connect(model_, &ScenarioFieldsModel::refused, this, &ScenarioEditor::showRefusal);
    connect(model_, &ScenarioFieldsModel::accepted, this, [this] {
        problem_->clear();
        problem_->setVisible(false);
    });

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);
    layout->addWidget(filter_);
    layout->addWidget(tree_, 1);
    layout->addWidget(problem_);
}

QString ScenarioEditor::problemText() const {
    return problem_->text();
}

void ScenarioEditor::showRefusal(const QString& path, const QString& value, const QString& reason) {
    problem_->setText(tr("%1 = %2 was not applied:\n%3").arg(path, value, reason));
    QPalette palette = problem_->palette();
    palette.setColor(QPalette::WindowText, QColor(0xd6, 0x3b, 0x2f));
    problem_->setPalette(palette);
    problem_->setVisible(true);
}

void ScenarioEditor::revealField(const QString& path) {
    if (!filter_->text().isEmpty() && !path.contains(filter_->text(), Qt::CaseInsensitive))
        filter_->clear();
    const QModelIndex source = model_->indexOfField(path, ScenarioFieldsModel::FieldColumn);
    const QModelIndex index = proxy_->mapFromSource(source);
    if (!index.isValid())
        return;
    for (QModelIndex ancestor = index.parent(); ancestor.isValid(); ancestor = ancestor.parent())
        tree_->expand(ancestor);
    tree_->scrollTo(index, QAbstractItemView::PositionAtCenter);
    tree_->setCurrentIndex(index);
}

void ScenarioEditor::setFilter(const QString& text) {
    proxy_->setFilterFixedString(text);
    tree_->expandAll();
}

} // namespace moe::widgets
