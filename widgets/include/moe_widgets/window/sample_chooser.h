#pragma once
// File > New from sample… (Ctrl+N): the shipped samples with their one-line descriptions (the
// scenario's `description:` field), and the built-in default first. The chosen sample becomes a
// new, untitled document (MainWindow::newFromSample).

#include <QDialog>
#include <QList>
#include <QString>
#include <QStringList>

class QTreeWidget;

namespace moe::widgets {

struct SampleInfo {
    QString path;        ///< empty: the built-in default scenario
    QString name;        ///< the scenario's name (the file's base name if it does not load)
    QString description; ///< its one-line description, or why it does not load
    bool loads = true;
};

/// The built-in default, then each file's name and description, in the order given.
QList<SampleInfo> describeSamples(const QStringList& paths);

class SampleChooser : public QDialog {
    Q_OBJECT
public:
    explicit SampleChooser(const QList<SampleInfo>& samples, QWidget* parent = nullptr);

    /// The selected sample's path; empty for the built-in default.
    QString chosenPath() const;
    /// Selects the row of `path` (empty: the built-in default); false when it is not listed.
    bool selectPath(const QString& path);
    const QList<SampleInfo>& samples() const { return samples_; }
    QTreeWidget* list() const { return list_; }

private:
    QList<SampleInfo> samples_;
    QTreeWidget* list_;
};

} // namespace moe::widgets
