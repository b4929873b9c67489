#pragma once
// Crash recovery for the desktop app. While the document has unsaved edits, its scenario is
// written (atomically, QSaveFile) to a recovery file in the user's state directory: one second
// after each burst of undo steps ends, and at least every 30 s during a long burst, so no edit is
// more than 30 s from being safe. A clean state (saved, or every edit undone) and a clean close
// remove the file. A file left behind by a process that no longer runs means a crash or a kill:
// the next start offers to restore it, with the time it was written and the edit count.
//
// The file is the scenario text as Save would write it (the origin's comments kept), after a
// header of comment lines naming the original file, the time and the edit count, so it loads as
// an ordinary scenario too.
// The core names a member `slots`, which Qt's headers define as a keyword macro: core headers
// must come first, also for files that include this header before other widgets headers.
#include "moe/evaluate.h"

#include <QDateTime>
#include <QObject>
#include <QString>
#include <QTimer>

#include <vector>

namespace moe::widgets {

class ScenarioDocument;

struct RecoveryEntry {
    QString path;      ///< the recovery file
    QString file_path; ///< the scenario file it belongs to (empty: never saved)
    QDateTime saved_at;
    int edits = 0;
    qint64 pid = 0; ///< the process that wrote it
};

// No Q_OBJECT: it declares no signals or slots, and staying out of moc keeps the widgets' moc
// compilation unit free of a Qt header ahead of the core's (which use `slots` as a name).
class Autosave : public QObject {
public:
    /// Burst end and longest gap between writes while editing.
    static constexpr int kBurstQuietMs = 1000;
    static constexpr int kMaxAgeMs = 30000;

    Autosave(ScenarioDocument* document, QString directory, QObject* parent = nullptr);
    ~Autosave() override;

    /// $XDG_STATE_HOME/moe-planner/recovery when XDG_STATE_HOME is set, else the application's
    /// local data directory (QStandardPaths::AppLocalDataLocation) + /recovery.
    static QString defaultDirectory();
    /// This process's recovery file.
    QString path() const;
    /// Writes the recovery file now when the document has unsaved edits, removes it when not.
    /// Returns "" or the reason it could not be written.
    QString writeNow();
    /// Removes this process's recovery file (a clean close).
    void remove();

    /// Recovery files in `directory` whose writer no longer runs, newest first.
    static std::vector<RecoveryEntry> orphans(const QString& directory);
    /// Reads the header of a recovery file; false when it is not one.
    static bool readEntry(const QString& path, RecoveryEntry& entry);

private:
    void onIndexChanged();

    ScenarioDocument* document_;
    QString directory_;
    QTimer burst_;
    QTimer max_age_;
};

} // namespace moe::widgets
