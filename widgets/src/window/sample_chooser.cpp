#include "moe_widgets/window/sample_chooser.h"

#include "moe/diagnostics.h"
#include "moe/scenario_io.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScreen>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace moe::widgets {

QList<SampleInfo> describeSamples(const QStringList& paths) {
    const Scenario builtin = defaultScenario();
    QList<SampleInfo> samples{{QString(), SampleChooser::tr("Built-in default"),
                               QString::fromStdString(builtin.description), true}};
    for (const QString& path : paths) {
        // Reading a sample is a YAML parse of a few kB (all of them: ~10 ms).
        const LoadResult loaded = loadScenarioFile(path.toStdString());
        SampleInfo info{path, QFileInfo(path).completeBaseName(), QString(), loaded.ok()};
        if (loaded.ok()) {
            info.name = QString::fromStdString(loaded.scenario->name);
            info.description = QString::fromStdString(loaded.scenario->description);
        } else {
            const auto error = std::find_if(
                loaded.diagnostics.begin(), loaded.diagnostics.end(),
                [](const Diagnostic& d) { return d.severity == Diagnostic::Severity::error; });
            if (error != loaded.diagnostics.end())
                info.description = SampleChooser::tr("does not load: %1")
                                       .arg(QString::fromStdString(error->message));
        }
        samples << info;
    }
    return samples;
}

SampleChooser::SampleChooser(const QList<SampleInfo>& samples, QWidget* parent)
    : QDialog(parent)
    , samples_(samples)
    , list_(new QTreeWidget(this)) {
    setObjectName(QStringLiteral("sampleChooser"));
    setWindowTitle(tr("New from sample"));
    auto* intro = new QLabel(
        tr("Start a new scenario from a sample. It opens untitled: Save asks where to keep it, "
           "so the sample stays as shipped."),
        this);
    intro->setWordWrap(true);

    list_->setColumnCount(2);
    list_->setHeaderLabels({tr("Sample"), tr("Description")});
    list_->setRootIsDecorated(false);
    list_->setUniformRowHeights(true);
    list_->setAlternatingRowColors(true);
    list_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    list_->header()->setStretchLastSection(true);
    for (const SampleInfo& sample : samples_) {
        auto* item = new QTreeWidgetItem(list_, {sample.name, sample.description});
        item->setToolTip(0, sample.path.isEmpty() ? tr("Compiled into the program")
                                                  : QDir::toNativeSeparators(sample.path));
        item->setToolTip(1, sample.description);
        if (!sample.loads)
            item->setFlags(item->flags() & ~Qt::ItemIsEnabled);
    }

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("&New"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(list_, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
        if (item->flags() & Qt::ItemIsEnabled)
            accept();
    });
    const auto enableOk = [this, buttons] {
        QTreeWidgetItem* current = list_->currentItem();
        buttons->button(QDialogButtonBox::Ok)
            ->setEnabled(current != nullptr && (current->flags() & Qt::ItemIsEnabled));
    };
    connect(list_, &QTreeWidget::currentItemChanged, this, enableOk);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addWidget(list_, 1);
    layout->addWidget(buttons);
    // Wide enough for the descriptions (they run to ~110 characters) and tall enough for every
    // row, within the screen; a longer one is elided and in full in its tooltip.
    const int rows_height = list_->header()->sizeHint().height() +
                            list_->topLevelItemCount() * list_->sizeHintForRow(0) +
                            2 * list_->frameWidth();
    const QAbstractItemView* view = list_; // sizeHintForColumn is public there
    const int wanted_width = view->sizeHintForColumn(0) + view->sizeHintForColumn(1) + 48;
    const QSize screen = this->screen() ? this->screen()->availableSize() : QSize(1280, 800);
    list_->setMinimumHeight(std::min(rows_height + 4, screen.height() / 2));
    resize(std::clamp(wanted_width, 640, screen.width() * 9 / 10), sizeHint().height());
    list_->setCurrentItem(list_->topLevelItem(0));
    enableOk();
}

QString SampleChooser::chosenPath() const {
    const int row = list_->indexOfTopLevelItem(list_->currentItem());
    return row >= 0 && row < samples_.size() ? samples_[row].path : QString();
}

bool SampleChooser::selectPath(const QString& path) {
    for (int row = 0; row < samples_.size(); ++row) {
        if (samples_[row].path == path) {
            list_->setCurrentItem(list_->topLevelItem(row));
            return true;
        }
    }
    return false;
}

} // namespace moe::widgets
