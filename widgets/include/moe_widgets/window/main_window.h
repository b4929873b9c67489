#pragma once
// The desktop app's window: one dock per view (editor, topology, heatmap, timeline, breakdown,
// memory, warnings, edit history), the File, Edit, View, Tools and Help menus, and a status bar
// with the step time, tokens/s, MFU and memory headroom. It owns the document, the evaluator, the
// shared view state and the theme, and is the only place that forwards results to the views. A
// scenario file dropped on it opens as File > Open would.
//
// Its code is split by concern: main_window.cpp (construction, results, status bar, recovery,
// close), main_window_docks.cpp (docks and their layout), main_window_menus.cpp (menus and
// actions), main_window_files.cpp (new, open, save, reload, recent files, drops),
// main_window_export.cpp (views, report) and main_window_tools.cpp (Tools: the layout search).

#include "moe/diagnostics.h"
#include "moe_widgets/common/theme.h"
#include "moe_widgets/document/evaluator.h"

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QMainWindow>
#include <QPointer>
#include <QString>
#include <QStringList>

class QActionGroup;
class QDockWidget;
class QDragEnterEvent;
class QDropEvent;
class QFileSystemWatcher;
class QLabel;
class QMenu;
class QToolBar;
class QUndoView;

namespace moe::widgets {

class Autosave;
class CompareView;
class HardwarePalette;
class LayoutSearchDialog;
class LayoutBar;
class PlacementGrid;
class ReportView;
class ScenarioDocument;
class ScenarioEditor;
class ViewState;
class WarningsView;
class WhatChangedView;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    struct Options {
        /// Restore and save the window layout and recent files with QSettings (off for
        /// screenshots, exports and tests, which want the default layout).
        bool use_settings = true;
        /// Watch the open file for changes on disk.
        bool watch_file = true;
        /// Keep unsaved edits in a recovery file (Autosave) in this directory; empty = off
        /// (tests, exports). The app passes Autosave::defaultDirectory().
        QString recovery_dir;
    };

    explicit MainWindow(QWidget* parent = nullptr);
    explicit MainWindow(const Options& options, QWidget* parent = nullptr);
    ~MainWindow() override;

    ScenarioDocument* document() const { return document_; }
    Evaluator* evaluator() const { return evaluator_; }
    ViewState* viewState() const { return state_; }
    ScenarioEditor* editor() const { return editor_; }
    WarningsView* warningsView() const { return warnings_; }
    CompareView* compareView() const { return compare_; }
    /// The "What changed" panel (old -> new step time and the items that moved after an edit);
    /// its summary is also the status bar's first field.
    WhatChangedView* whatChangedView() const { return what_changed_; }
    /// The drag-and-drop experiments: layout bar (toolbar), placement grid, hardware palette.
    LayoutBar* layoutBar() const { return layout_bar_; }
    PlacementGrid* placementGrid() const { return placement_grid_; }
    HardwarePalette* hardwarePalette() const { return hardware_palette_; }
    /// Every report view, in dock order (the editor and the history are not report views).
    const QList<ReportView*>& views() const { return views_; }
    QDockWidget* dockFor(const QString& view_id) const;
    /// Adds a report view in its own dock; it receives every result from now on.
    QDockWidget* addView(ReportView* view, Qt::DockWidgetArea area = Qt::RightDockWidgetArea);

    /// Opens a scenario file. On errors the current document stays, the problems are listed in
    /// the warnings panel, and false is returned.
    bool openFile(const QString& path);
    /// Recovery files left by a crashed or killed session: asks whether to restore the newest
    /// (with its time and edit count) unless `without_asking`; a restored file is removed, and
    /// so are the others when the user declines. Returns true when edits were restored.
    bool offerRecovery(bool without_asking = false);
    Autosave* autosave() const { return autosave_; }
    /// Evaluates the document on this thread and shows the result (start-up, export).
    void evaluateNow();
    /// Writes every view to `directory`/<view id>.<format> for each format ("svg", "png",
    /// "pdf"), and the topology as `directory`/topology.drawio (draw.io). Returns one line per
    /// problem (empty when everything was written).
    QStringList exportViews(const QString& directory, const QStringList& formats);
    /// Writes the design-review report (PDF or HTML by the suffix) of the current result,
    /// with the Compare panel's baseline when one is pinned. Empty string or the reason.
    QString exportReport(const QString& path);
    /// The newest result shown in the views.
    EvaluationResultPtr currentResult() const { return current_; }
    /// Status bar text (step time, tokens/s, MFU, memory headroom), for tests.
    QString statusSummary() const;
    /// Milliseconds from the last document change to the views having received its result.
    double lastUpdateMs() const { return last_update_ms_; }
    /// Milliseconds each view's showResult() took for the newest result, by view id.
    const QHash<QString, double>& lastViewMs() const { return view_ms_; }

    /// The sample scenarios File > New from sample offers (and `moe-planner --list-samples`
    /// prints): MOE_SAMPLES_DIR, else ../share/moe-planner/sample_clusters next to the program,
    /// else (only for a program in the build tree) the source tree's.
    static QStringList sampleFiles();
    /// Files the window opens as scenarios (by suffix: .yaml, .yml), as the Open dialog offers.
    static bool isScenarioFileName(const QString& path);

    /// File > New from sample… (Ctrl+N): shows the sample chooser (a SampleChooser child of the
    /// window, not modal to the application); the chosen sample becomes a new untitled document.
    void showNewFromSample();
    /// Replaces the document with the sample at `path` (empty: the built-in default) as a new,
    /// untitled scenario: Save asks where to put it, so the sample stays as shipped. Asks first
    /// when there are unsaved edits; false when cancelled or the sample does not load.
    bool newFromSample(const QString& path);

    /// Tools > Search layouts… (Ctrl+Shift+L): shows the layout search dialog (one per window)
    /// and starts a search of the document when it has not run one yet.
    LayoutSearchDialog* showLayoutSearch();

    ThemeController* theme() const { return theme_; }
    /// Sets View > Theme (System, Light or Dark) and applies it; not saved (the menu saves a
    /// choice the user makes).
    void setThemeChoice(ThemeChoice choice);

signals:
    /// After every view's showResult() ran for `result`.
    void resultShown(const moe::widgets::EvaluationResultPtr& result);

protected:
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createViews();
    void createMenus();
    void createFileMenu();
    void createEditMenu();
    void createViewMenu();
    void createThemeMenu(QMenu* parent);
    void createToolsMenu(); ///< main_window_tools.cpp
    void createStatusBar();
    void createFileWatcher();
    void arrangeDocks();
    void sizeDocks();
    void rememberDefaultLayout();
    void resetLayout();
    QDockWidget* addDock(QWidget* widget, const QString& id, const QString& title,
                         Qt::DockWidgetArea area);
    void requestEvaluation();
    void showResultInViews(const EvaluationResultPtr& result);
    void updateStatus(const EvaluationResultPtr& result);
    void updateTitle();
    void updateRecentMenu();
    void addRecentFile(const QString& path);
    void watchFile();
    void onFileChangedOnDisk(const QString& path);
    bool maybeSave();
    /// maybeSave(), then openFile(): File > Open, recent files, reload and drops.
    bool openAfterAsking(const QString& path);
    void openDropped(const QStringList& paths);
    void showLoadProblems(const Diagnostics& diagnostics, const QString& path);
    bool saveDocument();
    bool saveDocumentAs();
    void openDialog();
    void exportDialog();
    void exportReportDialog();
    void restoreLayout();
    void saveLayout();

    Options options_;
    ScenarioDocument* document_;
    Autosave* autosave_ = nullptr;
    Evaluator* evaluator_;
    ViewState* state_;
    ScenarioEditor* editor_ = nullptr;
    WarningsView* warnings_ = nullptr;
    CompareView* compare_ = nullptr;
    WhatChangedView* what_changed_ = nullptr;
    LayoutBar* layout_bar_ = nullptr;
    QToolBar* layout_toolbar_ = nullptr;
    PlacementGrid* placement_grid_ = nullptr;
    HardwarePalette* hardware_palette_ = nullptr;
    QUndoView* history_ = nullptr;
    ThemeController* theme_ = nullptr;
    QActionGroup* theme_actions_ = nullptr;
    QList<ReportView*> views_;
    QList<QDockWidget*> docks_;
    QByteArray default_state_;
    EvaluationResultPtr current_;

    QMenu* recent_menu_ = nullptr;
    QMenu* view_menu_ = nullptr;
    QLabel* change_label_ = nullptr; ///< what the last edit changed (WhatChangedView)
    QLabel* step_label_ = nullptr;
    QLabel* throughput_label_ = nullptr;
    QLabel* mfu_label_ = nullptr;
    QLabel* memory_label_ = nullptr;
    QLabel* economics_label_ = nullptr;
    QLabel* timing_label_ = nullptr;
    QFileSystemWatcher* watcher_ = nullptr;
    bool asking_reload_ = false;
    bool layout_restored_ = false; ///< from QSettings; else the default sizes apply on show
    bool shown_ = false;

    QElapsedTimer change_timer_; ///< since the last document change (update latency)
    double last_update_ms_ = 0;
    QHash<QString, double> view_ms_;
};

} // namespace moe::widgets
