#include "moe_widgets/document/autosave.h"

#include "moe_widgets/document/scenario_document.h"

#include "moe/scenario_text.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QStandardPaths>
#include <QUndoStack>

#include <algorithm>
#include <cerrno>

#include <signal.h>

namespace moe::widgets {

namespace {

const QString kHeader = QStringLiteral("# moe-planner recovery");
const QString kFileKey = QStringLiteral("# file: ");
const QString kSavedKey = QStringLiteral("# saved: ");
const QString kEditsKey = QStringLiteral("# edits: ");
const QString kPidKey = QStringLiteral("# pid: ");

bool processRuns(qint64 pid) {
    // Signal 0 checks existence; EPERM means it runs as another user.
    return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

} // namespace

Autosave::Autosave(ScenarioDocument* document, QString directory, QObject* parent)
    : QObject(parent)
    , document_(document)
    , directory_(std::move(directory)) {
    burst_.setSingleShot(true);
    burst_.setInterval(kBurstQuietMs);
    max_age_.setSingleShot(true);
    max_age_.setInterval(kMaxAgeMs);
    connect(&burst_, &QTimer::timeout, this, [this] { writeNow(); });
    connect(&max_age_, &QTimer::timeout, this, [this] { writeNow(); });
    connect(document_->undoStack(), &QUndoStack::indexChanged, this, &Autosave::onIndexChanged);
    connect(document_, &ScenarioDocument::modifiedChanged, this, [this](bool modified) {
        if (!modified)
            remove();
    });
}

Autosave::~Autosave() = default;

QString Autosave::defaultDirectory() {
    const QString state = qEnvironmentVariable("XDG_STATE_HOME");
    if (!state.isEmpty())
        return state + QStringLiteral("/moe-planner/recovery");
    return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) +
           QStringLiteral("/recovery");
}

QString Autosave::path() const {
    return QDir(directory_)
        .filePath(QString::number(QCoreApplication::applicationPid()) + QStringLiteral(".yaml"));
}

void Autosave::onIndexChanged() {
    burst_.start(); // restarts: written once the burst has been quiet for a second
    if (!max_age_.isActive())
        max_age_.start(); // but never later than 30 s after the first unsaved edit
}

QString Autosave::writeNow() {
    burst_.stop();
    max_age_.stop();
    if (!document_->isModified()) {
        remove();
        return {};
    }
    if (!QDir().mkpath(directory_))
        return QObject::tr("cannot create %1").arg(directory_);
    const ScenarioSource origin = document_->origin();
    const std::string dir = document_->filePath().isEmpty()
                                ? QDir::currentPath().toStdString()
                                : QFileInfo(document_->filePath()).absolutePath().toStdString();
    const std::string body = scenarioTextFor(document_->scenario(), origin, dir).text;
    QString header = kHeader + '\n';
    header += kFileKey + document_->filePath() + '\n';
    header += kSavedKey + QDateTime::currentDateTimeUtc().toString(Qt::ISODate) + '\n';
    header += kEditsKey + QString::number(document_->unsavedEdits()) + '\n';
    header += kPidKey + QString::number(QCoreApplication::applicationPid()) + '\n';
    QSaveFile file(path());
    if (!file.open(QIODevice::WriteOnly))
        return QObject::tr("cannot write %1: %2").arg(path(), file.errorString());
    file.write(header.toUtf8());
    file.write(body.data(), static_cast<qint64>(body.size()));
    if (!file.commit())
        return QObject::tr("cannot write %1: %2").arg(path(), file.errorString());
    return {};
}

void Autosave::remove() {
    burst_.stop();
    max_age_.stop();
    QFile::remove(path());
}

bool Autosave::readEntry(const QString& path, RecoveryEntry& entry) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return false;
    if (QString::fromUtf8(file.readLine()).trimmed() != kHeader)
        return false;
    entry.path = path;
    for (int i = 0; i < 4; ++i) {
        const QString line = QString::fromUtf8(file.readLine()).chopped(1);
        if (line.startsWith(kFileKey))
            entry.file_path = line.mid(kFileKey.size());
        else if (line.startsWith(kSavedKey))
            entry.saved_at = QDateTime::fromString(line.mid(kSavedKey.size()), Qt::ISODate);
        else if (line.startsWith(kEditsKey))
            entry.edits = line.mid(kEditsKey.size()).toInt();
        else if (line.startsWith(kPidKey))
            entry.pid = line.mid(kPidKey.size()).toLongLong();
    }
    return entry.saved_at.isValid();
}

std::vector<RecoveryEntry> Autosave::orphans(const QString& directory) {
    std::vector<RecoveryEntry> entries;
    const QDir dir(directory);
    for (const QString& name : dir.entryList({QStringLiteral("*.yaml")}, QDir::Files)) {
        RecoveryEntry entry;
        if (readEntry(dir.filePath(name), entry) && !processRuns(entry.pid))
            entries.push_back(entry);
    }
    std::sort(entries.begin(), entries.end(), [](const RecoveryEntry& a, const RecoveryEntry& b) {
        return a.saved_at > b.saved_at;
    });
    return entries;
}

} // namespace moe::widgets
