#include "moe_widgets/report/warnings_view.h"

#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/document/view_state.h"

#include <QApplication>
#include <QFileInfo>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QPainter>
#include <QPdfWriter>
#include <QStyle>
#include <QSvgGenerator>
#include <QTableView>
#include <QTextDocument>
#include <QVBoxLayout>

#include <algorithm>

namespace moe::widgets {

namespace {

int severityRank(const QString& severity) {
    if (severity == QLatin1String("error"))
        return 0;
    if (severity == QLatin1String("critical"))
        return 1;
    if (severity == QLatin1String("warning"))
        return 2;
    return 3;
}

QColor severityColor(const QString& severity) {
    switch (severityRank(severity)) {
    case 0:
    case 1:
        return QColor(0xd6, 0x3b, 0x2f);
    case 2:
        return QColor(0xe0, 0x8e, 0x0b);
    default:
        return QColor(0x3b, 0x7d, 0xd8);
    }
}

QString severityLabel(const QString& severity) {
    switch (severityRank(severity)) {
    case 0:
        return WarningsView::tr("Error");
    case 1:
        return WarningsView::tr("Critical");
    case 2:
        return WarningsView::tr("Warning");
    default:
        return WarningsView::tr("Info");
    }
}

/// "GPUs 0–7", "GPU 12", "GPUs 0, 8, 16 … (+5)".
QString gpuText(const QVector<int>& gpus) {
    if (gpus.isEmpty())
        return {};
    if (gpus.size() == 1)
        return WarningsView::tr("GPU %1").arg(gpus.front());
    QVector<int> sorted = gpus;
    std::sort(sorted.begin(), sorted.end());
    if (sorted.back() - sorted.front() + 1 == sorted.size())
        return WarningsView::tr("GPUs %1–%2").arg(sorted.front()).arg(sorted.back());
    QStringList shown;
    const int limit = std::min<int>(4, static_cast<int>(sorted.size()));
    for (int i = 0; i < limit; ++i)
        shown << QString::number(sorted[i]);
    QString text = WarningsView::tr("GPUs %1").arg(shown.join(QStringLiteral(", ")));
    if (sorted.size() > limit)
        text += WarningsView::tr(" … (%1 GPUs)").arg(sorted.size());
    return text;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// WarningsModel

WarningsModel::WarningsModel(QObject* parent)
    : QAbstractTableModel(parent) {}

void WarningsModel::setReport(const EvaluationResultPtr& result) {
    design_items_.clear();
    if (result) {
        for (const DesignWarning& w : result->report.warnings) {
            Item item;
            item.severity = QString::fromLatin1(toString(w.severity));
            item.code = QString::fromUtf8(toString(w.code));
            item.message = QString::fromStdString(warningText(w));
            item.gpus = QVector<int>(w.gpus.begin(), w.gpus.end());
            design_items_.append(item);
        }
        // Most severe first; the report's order within a severity.
        std::stable_sort(design_items_.begin(), design_items_.end(),
                         [](const Item& a, const Item& b) {
                             return severityRank(a.severity) < severityRank(b.severity);
                         });
    }
    rebuild();
}

void WarningsModel::setLoadProblems(const Diagnostics& diagnostics) {
    load_items_.clear();
    for (const Diagnostic& d : diagnostics) {
        Item item;
        item.severity = d.severity == Diagnostic::Severity::error ? QStringLiteral("error")
                                                                  : QStringLiteral("warning");
        item.code = QStringLiteral("file");
        item.message = QString::fromStdString(d.message);
        Diagnostic where = d;
        where.message.clear();
        // "file:line:col: error: " without the message, for the location column.
        QString location = QString::fromStdString(where.format());
        const int cut = location.lastIndexOf(QStringLiteral(": error:"));
        const int cut_warning = location.lastIndexOf(QStringLiteral(": warning:"));
        location = location.left(std::max(cut, cut_warning));
        item.location = location;
        item.field = QString::fromStdString(d.field);
        load_items_.append(item);
    }
    rebuild();
}

void WarningsModel::clearLoadProblems() {
    if (load_items_.isEmpty())
        return;
    load_items_.clear();
    rebuild();
}

void WarningsModel::rebuild() {
    beginResetModel();
    items_ = load_items_ + design_items_;
    load_count_ = static_cast<int>(load_items_.size());
    endResetModel();
}

int WarningsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(items_.size());
}

int WarningsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant WarningsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= items_.size())
        return {};
    const Item& item = items_[index.row()];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case SeverityColumn:
            return severityLabel(item.severity);
        case MessageColumn:
            return item.location.isEmpty() ? item.message : item.location + ": " + item.message;
        case GpusColumn:
            return gpuText(item.gpus);
        }
        return {};
    case Qt::ToolTipRole: {
        QString tip = item.message;
        if (!item.gpus.isEmpty())
            tip += tr("\nClick to highlight %1 in the topology and the heatmap.")
                       .arg(gpuText(item.gpus));
        if (!item.field.isEmpty())
            tip += tr("\nClick to show %1 in the editor.").arg(item.field);
        return tip;
    }
    case Qt::DecorationRole:
        if (index.column() != SeverityColumn)
            return {};
        switch (severityRank(item.severity)) {
        case 0:
        case 1:
            return QApplication::style()->standardIcon(QStyle::SP_MessageBoxCritical);
        case 2:
            return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
        default:
            return QApplication::style()->standardIcon(QStyle::SP_MessageBoxInformation);
        }
    case Qt::ForegroundRole:
        if (index.column() == SeverityColumn)
            return severityColor(item.severity);
        return {};
    case GpusRole: {
        QVariantList gpus;
        for (const int gpu : item.gpus)
            gpus << gpu;
        return gpus;
    }
    case CodeRole:
        return item.code;
    case FieldRole:
        return item.field;
    case SeverityRole:
        return item.severity;
    default:
        return {};
    }
}

QVariant WarningsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case SeverityColumn:
        return tr("Severity");
    case MessageColumn:
        return tr("Message");
    case GpusColumn:
        return tr("About");
    default:
        return {};
    }
}

// ---------------------------------------------------------------------------------------------
// WarningsView

WarningsView::WarningsView(ScenarioDocument* document, ViewState* state, QWidget* parent)
    : QWidget(parent)
    , document_(document)
    , state_(state)
    , model_(new WarningsModel(this))
    , summary_(new QLabel(this))
    , table_(new QTableView(this)) {
    setObjectName(QStringLiteral("warningsView"));
    table_->setModel(model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setWordWrap(true);
    table_->setAlternatingRowColors(true);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setSectionResizeMode(WarningsModel::SeverityColumn,
                                                     QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(WarningsModel::MessageColumn,
                                                     QHeaderView::Stretch);
    table_->horizontalHeader()->setSectionResizeMode(WarningsModel::GpusColumn,
                                                     QHeaderView::ResizeToContents);
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    connect(table_, &QTableView::clicked, this,
            [this](const QModelIndex& index) { activateRow(index.row()); });
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (current.isValid())
                    activateRow(current.row());
            });
    connect(model_, &QAbstractItemModel::modelReset, this, &WarningsView::updateSummary);

    summary_->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(4);
    layout->addWidget(summary_);
    layout->addWidget(table_, 1);
    updateSummary();
}

void WarningsView::showResult(const EvaluationResultPtr& result) {
    result_ = result;
    model_->setReport(result);
}

void WarningsView::setLoadProblems(const Diagnostics& diagnostics, const QString& file) {
    failed_file_ = file;
    model_->setLoadProblems(diagnostics);
}

void WarningsView::clearLoadProblems() {
    failed_file_.clear();
    model_->clearLoadProblems();
}

void WarningsView::activateRow(int row) {
    const QModelIndex index = model_->index(row, 0);
    if (!index.isValid())
        return;
    QVector<int> gpus;
    for (const QVariant& gpu : index.data(WarningsModel::GpusRole).toList())
        gpus << gpu.toInt();
    if (state_) {
        if (gpus.isEmpty())
            state_->clearHighlight();
        else
            state_->setHighlight(gpus, index.data(WarningsModel::CodeRole).toString());
    }
    const QString field = index.data(WarningsModel::FieldRole).toString();
    if (!field.isEmpty())
        emit fieldActivated(field);
}

void WarningsView::updateSummary() {
    int counts[4] = {0, 0, 0, 0};
    for (const WarningsModel::Item& item : model_->items())
        ++counts[severityRank(item.severity)];
    QStringList parts;
    if (model_->loadProblemCount() > 0)
        parts << tr("%1 could not be opened (%n problem(s)); the previous scenario is still open.",
                    nullptr, model_->loadProblemCount())
                     .arg(QFileInfo(failed_file_).fileName());
    if (counts[1])
        parts << tr("%n critical", nullptr, counts[1]);
    if (counts[2])
        parts << tr("%n warning(s)", nullptr, counts[2]);
    if (counts[3])
        parts << tr("%n note(s)", nullptr, counts[3]);
    if (model_->items().isEmpty())
        parts << tr("No design warnings.");
    summary_->setText(parts.join(QStringLiteral(" · ")));
}

void WarningsView::paintPage(QPainter& painter, const QRectF& page) const {
    const QColor text(0x20, 0x24, 0x2a);
    const QColor muted(0x5f, 0x66, 0x70);
    painter.fillRect(page, Qt::white);
    const qreal margin = 48;
    qreal y = page.top() + margin;
    QFont title_font = painter.font();
    title_font.setPixelSize(30);
    title_font.setBold(true);
    painter.setFont(title_font);
    painter.setPen(text);
    const QString name =
        result_ ? QString::fromStdString(result_->scenario.name) : QStringLiteral("—");
    painter.drawText(QRectF(page.left() + margin, y, page.width() - 2 * margin, 40),
                     Qt::AlignLeft | Qt::AlignVCenter, tr("Design warnings — %1").arg(name));
    y += 48;
    QFont body = painter.font();
    body.setPixelSize(18);
    body.setBold(false);
    painter.setFont(body);
    painter.setPen(muted);
    painter.drawText(QRectF(page.left() + margin, y, page.width() - 2 * margin, 28),
                     Qt::AlignLeft | Qt::AlignVCenter, summary_->text());
    y += 44;

    // Legend: what the colours mean.
    qreal x = page.left() + margin;
    for (const QString& severity :
         {QStringLiteral("critical"), QStringLiteral("warning"), QStringLiteral("info")}) {
        painter.setBrush(severityColor(severity));
        painter.setPen(Qt::NoPen);
        painter.drawRoundedRect(QRectF(x, y + 5, 16, 16), 3, 3);
        painter.setPen(text);
        const QString label = severityLabel(severity);
        painter.drawText(QRectF(x + 22, y, 160, 26), Qt::AlignLeft | Qt::AlignVCenter, label);
        x += 40 + painter.fontMetrics().horizontalAdvance(label);
    }
    y += 40;

    const qreal gpu_width = 260;
    const qreal chip_width = 110;
    const qreal message_width = page.width() - 2 * margin - chip_width - gpu_width - 24;
    for (const WarningsModel::Item& item : model_->items()) {
        const QString message =
            item.location.isEmpty() ? item.message : item.location + ": " + item.message;
        const QRectF measured = painter.fontMetrics().boundingRect(
            QRect(0, 0, static_cast<int>(message_width), 10000), Qt::TextWordWrap, message);
        const qreal row_height = std::max<qreal>(34, measured.height() + 12);
        if (y + row_height > page.bottom() - margin)
            break;
        painter.setPen(Qt::NoPen);
        painter.setBrush(severityColor(item.severity));
        painter.drawRoundedRect(QRectF(page.left() + margin, y + 4, chip_width - 12, 26), 5, 5);
        painter.setPen(Qt::white);
        painter.drawText(QRectF(page.left() + margin, y + 4, chip_width - 12, 26), Qt::AlignCenter,
                         severityLabel(item.severity));
        painter.setPen(text);
        painter.drawText(
            QRectF(page.left() + margin + chip_width, y + 6, message_width, row_height),
            Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop, message);
        painter.setPen(muted);
        painter.drawText(QRectF(page.right() - margin - gpu_width, y + 6, gpu_width, row_height),
                         Qt::AlignRight | Qt::AlignTop, gpuText(item.gpus));
        y += row_height + 6;
        painter.setPen(QColor(0xe3, 0xe6, 0xea));
        painter.drawLine(QPointF(page.left() + margin, y - 3),
                         QPointF(page.right() - margin, y - 3));
    }
}

QString WarningsView::exportTo(const QString& path) {
    // Slide-sized and white regardless of the screen theme: exports go into documents.
    const QSize page(1600, std::max(900, 260 + 60 * static_cast<int>(model_->items().size())));
    const QString suffix = QFileInfo(path).suffix().toLower();
    const QString title = tr("Design warnings");
    if (suffix == QLatin1String("svg")) {
        QSvgGenerator svg;
        svg.setFileName(path);
        svg.setSize(page);
        svg.setViewBox(QRect(QPoint(0, 0), page));
        svg.setTitle(title);
        QPainter painter;
        if (!painter.begin(&svg))
            return tr("cannot write %1").arg(path);
        paintPage(painter, QRectF(QPointF(0, 0), page));
        painter.end();
    } else if (suffix == QLatin1String("pdf")) {
        QPdfWriter pdf(path);
        pdf.setTitle(title);
        pdf.setResolution(96);
        pdf.setPageSize(QPageSize(QSizeF(page), QPageSize::Point));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        QPainter painter;
        if (!painter.begin(&pdf))
            return tr("cannot write %1").arg(path);
        // The page is in points; scale the 96-dpi layout onto it.
        const QRect target = painter.viewport();
        painter.scale(target.width() / qreal(page.width()), target.height() / qreal(page.height()));
        paintPage(painter, QRectF(QPointF(0, 0), page));
        painter.end();
    } else if (suffix == QLatin1String("png")) {
        QImage image(page * 2, QImage::Format_ARGB32_Premultiplied);
        image.setDevicePixelRatio(2);
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setRenderHint(QPainter::TextAntialiasing);
        paintPage(painter, QRectF(QPointF(0, 0), page));
        painter.end();
        if (!image.save(path, "PNG"))
            return tr("cannot write %1").arg(path);
    } else {
        return tr("unknown export format '%1' (use .svg, .png or .pdf)").arg(suffix);
    }
    if (QFileInfo(path).size() <= 0)
        return tr("%1 was not written").arg(path);
    return {};
}

} // namespace moe::widgets
