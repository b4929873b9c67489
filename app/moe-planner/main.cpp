// moe-planner: the MoE Planner desktop app. Also scriptable without a window:
//   moe-planner --export DIR [--format svg|png|pdf] [FILE.yaml]    every view to DIR
//   moe-planner --screenshot OUT.png [--test-set key=value] [FILE.yaml]  the window after first
//       paint (and after the edits)
//   moe-planner --bench [--repeat N] [FILE.yaml]                    start-up and edit latencies
//   moe-planner --report OUT.pdf|OUT.html [--baseline B.yaml] [FILE.yaml]  design-review report
//   moe-planner [--recover] [--test-set key=value ...] [--dump-scenario OUT.yaml] [FILE.yaml]
//       crash recovery (see moe_widgets/document/autosave.h; tests/test_app.cpp kills the app with
//       SIGKILL)
//   moe-planner --list-samples                                      samples for New from sample
#include "moe/diagnostics.h"
#include "moe/scenario_io.h"
#include "moe/scenario_text.h"
#include "moe_widgets/common/report_view.h"
#include "moe_widgets/document/autosave.h"
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/report/design_report.h"
#include "moe_widgets/topology/topology_view.h"
#include "moe_widgets/window/main_window.h"
#include "version.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QGraphicsView>
#include <QHash>
#include <QIcon>
#include <QScrollBar>
#include <QTimer>
#include <QWindow>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <sys/resource.h>

using moe::widgets::MainWindow;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;

/// Started first thing in main(), so "start to first paint" includes creating the app.
QElapsedTimer& startTimer() {
    static QElapsedTimer timer;
    return timer;
}

double msSinceStart() {
    return static_cast<double>(startTimer().nsecsElapsed()) / 1e6;
}

/// Calls `done` once the window has painted its first frame: at the first paint event of any
/// of its widgets, deferred until that backing-store flush has finished.
class FirstPaint : public QObject {
public:
    FirstPaint(QWidget* window, std::function<void(double)> done)
        : window_(window)
        , done_(std::move(done)) {
        qApp->installEventFilter(this);
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (!fired_ && event->type() == QEvent::Paint) {
            auto* widget = qobject_cast<QWidget*>(watched);
            if (widget && widget->window() == window_) {
                fired_ = true;
                qApp->removeEventFilter(this);
                QTimer::singleShot(0, this, [this] { done_(msSinceStart()); });
            }
        }
        return QObject::eventFilter(watched, event);
    }

private:
    QWidget* window_;
    std::function<void(double)> done_;
    bool fired_ = false;
};

void useDarkPalette(MainWindow& window) {
    window.setThemeChoice(moe::widgets::ThemeChoice::dark);
}

bool loadInto(MainWindow& window, const QString& file) {
    if (file.isEmpty())
        return true;
    const moe::Diagnostics diagnostics = window.document()->open(file);
    if (moe::hasErrors(diagnostics)) {
        std::fprintf(stderr, "%s", moe::formatAll(diagnostics).c_str());
        return false;
    }
    window.evaluateNow();
    return true;
}

int runExport(const QString& directory, const QStringList& formats, const QString& file) {
    MainWindow window(MainWindow::Options{false, false, {}});
    if (!loadInto(window, file))
        return kExitBadInput;
    window.resize(1600, 1000);
    QCoreApplication::processEvents();
    const QStringList problems = window.exportViews(directory, formats);
    for (const QString& problem : problems)
        std::fprintf(stderr, "moe-planner: %s\n", qPrintable(problem));
    if (!problems.isEmpty()) {
        // Only a complete export is announced as written.
        std::fprintf(stderr, "moe-planner: export to %s failed\n",
                     qPrintable(QDir::toNativeSeparators(directory)));
        return kExitBadInput;
    }
    // Every view in every format, the topology once per group overlay, and topology.drawio.
    std::printf("wrote %lld files to %s\n",
                static_cast<long long>(
                    (window.views().size() + moe::kGroupOverlays.size()) * formats.size() + 1),
                qPrintable(QDir::toNativeSeparators(directory)));
    return kExitOk;
}

/// Evaluates FILE (or the built-in default) and writes its design-review report, compared with
/// `baseline_file` when given. No window is created.
int runReport(const QString& out, const QString& file, const QString& baseline_file) {
    auto evaluateFile = [](const QString& path) -> moe::widgets::EvaluationResultPtr {
        auto result = std::make_shared<moe::widgets::EvaluationResult>();
        if (path.isEmpty()) {
            result->scenario = moe::defaultScenario();
        } else {
            const moe::LoadResult loaded = moe::loadScenarioFile(path.toStdString());
            if (!loaded.ok()) {
                std::fprintf(stderr, "%s", moe::formatAll(loaded.diagnostics).c_str());
                return nullptr;
            }
            result->scenario = *loaded.scenario;
        }
        result->report = moe::evaluate(result->scenario);
        return result;
    };
    moe::widgets::DesignReportInput input;
    input.current = evaluateFile(file);
    input.source_file = file;
    if (input.current == nullptr)
        return kExitBadInput;
    if (!baseline_file.isEmpty()) {
        input.baseline = evaluateFile(baseline_file);
        input.baseline_file = baseline_file;
        if (input.baseline == nullptr)
            return kExitBadInput;
    }
    const QString problem = moe::widgets::writeDesignReport(out, input);
    if (!problem.isEmpty()) {
        std::fprintf(stderr, "moe-planner: %s\n", qPrintable(problem));
        return kExitBadInput;
    }
    if (out.endsWith(QLatin1String(".pdf"), Qt::CaseInsensitive))
        std::printf("wrote %s (%d pages)\n", qPrintable(QDir::toNativeSeparators(out)),
                    moe::widgets::designReportPageCount(input.baseline != nullptr));
    else
        std::printf("wrote %s\n", qPrintable(QDir::toNativeSeparators(out)));
    return kExitOk;
}

/// Shows the window, waits for its first frame, then runs `then` and returns its exit code.
int withFirstFrame(MainWindow& window, const std::function<int(double)>& then) {
    int code = kExitOk;
    FirstPaint watcher(&window, [&](double first_paint_ms) {
        code = then(first_paint_ms);
        QCoreApplication::exit(code);
    });
    window.show();
    QApplication::exec();
    return code;
}

/// --overlay: the topology view's group overlay.
void showOverlay(MainWindow& window, std::optional<moe::GroupOverlay> overlay) {
    if (!overlay)
        return;
    for (moe::widgets::ReportView* view : window.views())
        if (auto* topology = dynamic_cast<moe::widgets::TopologyView*>(view))
            topology->setOverlay(overlay);
}

/// --test-set key=value ...: each an edit as if typed in the editor; problems on stderr.
void applyTestEdits(MainWindow& window, const QStringList& edits) {
    for (const QString& edit : edits) {
        const qsizetype eq = edit.indexOf('=');
        const moe::Diagnostics problems =
            window.document()->setField(edit.left(eq), edit.mid(eq + 1));
        if (eq < 0 || moe::hasErrors(problems))
            std::fprintf(stderr, "moe-planner: --test-set %s: %s\n", qPrintable(edit),
                         eq < 0 ? "expected key=value" : moe::formatAll(problems).c_str());
    }
}

/// `edits` (--test-set) are applied after the first frame and shown before the grab, so a
/// screenshot can show the window after an edit (the What changed panel, the status line).
int runScreenshot(const QString& out, const QSize& size, bool dark, const QString& file,
                  std::optional<moe::GroupOverlay> overlay, const QStringList& edits) {
    MainWindow window(MainWindow::Options{false, false, {}});
    if (!loadInto(window, file))
        return kExitBadInput;
    showOverlay(window, overlay);
    if (dark)
        useDarkPalette(window);
    window.resize(size);
    return withFirstFrame(window, [&](double first_paint_ms) {
        applyTestEdits(window, edits);
        // Let views settle what they schedule after the first frame (deferred layouts), and
        // the edits' result arrive (evaluated off the GUI thread).
        QElapsedTimer settle;
        settle.start();
        while (settle.elapsed() < 300 ||
               (settle.elapsed() < 10000 &&
                !(window.currentResult()->scenario == window.document()->scenario())))
            QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        const QPixmap pixmap = window.grab();
        if (pixmap.isNull() || !pixmap.save(out, "PNG")) {
            std::fprintf(stderr, "moe-planner: cannot write %s\n", qPrintable(out));
            return kExitBadInput;
        }
        std::printf("first paint %.0f ms after start; wrote %s (%dx%d)\n", first_paint_ms,
                    qPrintable(out), pixmap.width(), pixmap.height());
        return kExitOk;
    });
}

double median(std::vector<double> values) {
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

/// Frame times of the topology diagram while the user zooms (whole cluster in view) and pans
/// (zoomed in to GPU cells, and to full detail): each frame moves the view, then repaints the
/// viewport synchronously.
void benchTopologyFrames(MainWindow& window) {
    auto* topology = window.findChild<moe::widgets::TopologyView*>();
    if (topology == nullptr || topology->graphicsView() == nullptr ||
        !topology->graphicsView()->isVisible())
        return;
    QGraphicsView* view = topology->graphicsView();
    const auto frames = [&](const std::function<void(int)>& move) {
        std::vector<double> ms;
        for (int i = 0; i < 30; ++i) {
            QElapsedTimer timer;
            timer.start();
            move(i);
            view->viewport()->repaint();
            ms.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e6);
        }
        return ms;
    };
    const auto report = [](const char* what, const std::vector<double>& ms) {
        std::printf("  topology %s: median %.1f ms, max %.1f ms per frame\n", what, median(ms),
                    *std::max_element(ms.begin(), ms.end()));
    };
    topology->fitAll();
    view->viewport()->repaint();
    report("zoom, whole cluster", frames([&](int i) {
               const double f = i % 2 == 0 ? 1.05 : 1 / 1.05;
               view->scale(f, f);
           }));
    const int gpus = window.document()->scenario().cluster.gpuCount();
    for (const double tile_px : {8.0, 56.0}) {
        topology->zoomToGpu(gpus / 2, tile_px);
        view->viewport()->repaint();
        const std::vector<double> ms = frames([&](int i) {
            QScrollBar* bar = i % 10 < 5 ? view->horizontalScrollBar() : view->verticalScrollBar();
            bar->setValue(bar->value() + (i % 20 < 10 ? 24 : -24));
        });
        report(tile_px < 28 ? "pan, GPU cells" : "pan, full detail", ms);
    }
    topology->fitAll();
}

int runBench(int repeat, const QString& file) {
    MainWindow window(MainWindow::Options{false, false, {}});
    if (!loadInto(window, file))
        return kExitBadInput;
    window.resize(1600, 1000);
    return withFirstFrame(window, [&](double first_paint_ms) {
        std::printf("scenario: %s (%d GPUs)\n", window.document()->scenario().name.c_str(),
                    window.document()->scenario().cluster.gpuCount());
        std::printf("start to first paint: %.0f ms\n", first_paint_ms);
        // Each edit: set the field, wait for the newest result to reach every view, then repaint
        // the whole window synchronously (what the user sees).
        const double alpha = window.document()->scenario().routing.zipf_alpha;
        std::vector<double> total_ms, model_ms, deliver_ms, set_ms, views_ms;
        QHash<QString, std::vector<double>> per_view_ms;
        for (int i = 0; i < repeat; ++i) {
            const QString value = QString::number(alpha + (i % 2 == 0 ? 0.1 : 0.0), 'g', 12);
            QEventLoop loop;
            QObject::connect(&window, &MainWindow::resultShown, &loop, &QEventLoop::quit);
            QElapsedTimer timer;
            timer.start();
            if (moe::hasErrors(window.document()->setField("routing.zipf_alpha", value)))
                return kExitBadInput;
            set_ms.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e6);
            loop.exec();
            deliver_ms.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e6);
            double views = 0;
            for (auto it = window.lastViewMs().begin(); it != window.lastViewMs().end(); ++it) {
                per_view_ms[it.key()].push_back(it.value());
                views += it.value();
            }
            views_ms.push_back(views);
            window.repaint();
            total_ms.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e6);
            model_ms.push_back(window.currentResult()->evaluate_ms);
        }
        std::printf("edit (routing.zipf_alpha) to every view repainted: median %.1f ms, max %.1f "
                    "ms over %d edits\n",
                    median(total_ms), *std::max_element(total_ms.begin(), total_ms.end()), repeat);
        std::printf("  of which evaluate(): median %.2f ms; result delivered to the views: "
                    "median %.1f ms\n",
                    median(model_ms), median(deliver_ms));
        std::printf("  setField (validate the edit): median %.2f ms; every view's showResult(): "
                    "median %.1f ms\n",
                    median(set_ms), median(views_ms));
        for (auto it = per_view_ms.begin(); it != per_view_ms.end(); ++it)
            std::printf("    %-10s showResult median %.2f ms\n", qPrintable(it.key()),
                        median(it.value()));
        benchTopologyFrames(window);
        rusage usage{};
        getrusage(RUSAGE_SELF, &usage);
        std::printf("peak memory (max RSS): %.0f MB\n", usage.ru_maxrss / 1024.0);
        return kExitOk;
    });
}

bool hasFlag(int argc, char** argv, const char* flag) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], flag) == 0)
            return true;
    }
    return false;
}

/// Exporting and help need no screen; without one (CI, ssh) Qt would refuse to start. False
/// (after saying so) when a window is wanted and there is no display.
bool prepareScreen(int argc, char** argv) {
    const bool headless = hasFlag(argc, argv, "--export") || hasFlag(argc, argv, "--report") ||
                          hasFlag(argc, argv, "--help") || hasFlag(argc, argv, "-h") ||
                          hasFlag(argc, argv, "--version") || hasFlag(argc, argv, "-v") ||
                          hasFlag(argc, argv, "--list-samples");
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        if (headless) {
            qputenv("QT_QPA_PLATFORM", "offscreen");
        } else if (qEnvironmentVariableIsEmpty("DISPLAY") &&
                   qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")) {
            std::fprintf(stderr, "moe-planner: no display (DISPLAY and WAYLAND_DISPLAY are unset). "
                                 "Run it under xvfb-run, or write the views with "
                                 "--export DIR.\n");
            return false;
        }
    }
    return true;
}

void setApplicationIdentity() {
    QCoreApplication::setOrganizationName(QStringLiteral("MoE Planner"));
    QCoreApplication::setApplicationName(QStringLiteral("moe-planner"));
    QCoreApplication::setApplicationVersion(QString::fromLatin1(moe::cmdline::version()));
    QApplication::setApplicationDisplayName(QStringLiteral("MoE Planner"));
    // The installed desktop entry and icon (packaging/): Wayland compositors match the window
    // to moe-planner.desktop by this name; the icon theme has the icon when installed.
    QGuiApplication::setDesktopFileName(QStringLiteral("moe-planner"));
    QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral("moe-planner")));
}

/// The command line's options, in the order --help lists them.
struct PlannerOptions {
    const QCommandLineOption export_dir{
        QStringLiteral("export"),
        QStringLiteral("Write every view to DIR without showing a window, then exit."),
        QStringLiteral("DIR")};
    const QCommandLineOption format{
        QStringLiteral("format"),
        QStringLiteral("Export format: svg, png or pdf; several separated by commas (default: "
                       "svg,png,pdf)."),
        QStringLiteral("FORMAT"), QStringLiteral("svg,png,pdf")};
    const QCommandLineOption screenshot{
        QStringLiteral("screenshot"),
        QStringLiteral("Show the window, save it as a PNG after the first paint, then exit."),
        QStringLiteral("OUT.png")};
    const QCommandLineOption size{
        QStringLiteral("size"), QStringLiteral("Window size for --screenshot (default 1600x1000)."),
        QStringLiteral("WxH"), QStringLiteral("1600x1000")};
    const QCommandLineOption dark{QStringLiteral("dark"), QStringLiteral("Use the dark palette.")};
    const QCommandLineOption bench{
        QStringLiteral("bench"),
        QStringLiteral("Print start-to-first-paint and edit-to-repaint times, then exit.")};
    const QCommandLineOption repeat{QStringLiteral("repeat"),
                                    QStringLiteral("Edits timed by --bench (default 20)."),
                                    QStringLiteral("N"), QStringLiteral("20")};
    const QCommandLineOption report{
        QStringLiteral("report"),
        QStringLiteral("Write the design-review report (PDF or HTML by the suffix) without showing "
                       "a window, then exit."),
        QStringLiteral("OUT.pdf")};
    const QCommandLineOption baseline{
        QStringLiteral("baseline"),
        QStringLiteral("With --report: compare with this scenario (adds the comparison pages)."),
        QStringLiteral("B.yaml")};
    const QCommandLineOption recover{
        QStringLiteral("recover"),
        QStringLiteral("Restore the newest unsaved edits left by a crashed or killed session "
                       "without asking (otherwise the window asks).")};
    const QCommandLineOption test_set{
        QStringLiteral("test-set"),
        QStringLiteral("After start, apply key=value as an edit in the window, as if typed in the "
                       "editor (for scripts and the crash-recovery test; with --screenshot, "
                       "before the grab; repeatable)."),
        QStringLiteral("key=value")};
    const QCommandLineOption dump{
        QStringLiteral("dump-scenario"),
        QStringLiteral("After start (and --recover, --test-set), write the window's scenario to "
                       "OUT.yaml as Save would, without saving the document, then exit."),
        QStringLiteral("OUT.yaml")};
    const QCommandLineOption overlay{
        QStringLiteral("overlay"),
        QStringLiteral("Colour the topology's GPUs by their group of one parallel dimension: tp, "
                       "ep, edp, dp, pp or cp (the window and --screenshot)."),
        QStringLiteral("NAME")};
    const QCommandLineOption list_samples{
        QStringLiteral("list-samples"),
        QStringLiteral("Print the sample scenarios File > New from sample offers (installed ones "
                       "under ../share/moe-planner next to the program), one path a line, then "
                       "exit.")};

    void addTo(QCommandLineParser& parser) const {
        parser.setApplicationDescription(
            QStringLiteral("Plan Mixture-of-Experts training clusters: topology, expert load, step "
                           "timeline and breakdown, editable live."));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addPositionalArgument(
            QStringLiteral("file"), QStringLiteral("Scenario to open (default: the built-in one)."),
            QStringLiteral("[FILE.yaml]"));
        parser.addOptions({export_dir, format, screenshot, size, dark, bench, repeat, report,
                           baseline, recover, test_set, dump, overlay, list_samples});
    }
};

/// --export DIR [--format ...]: every view to DIR.
int runExportMode(const QCommandLineParser& parser, const PlannerOptions& o, const QString& file) {
    QStringList formats;
    for (const QString& format : parser.value(o.format).split(',', Qt::SkipEmptyParts)) {
        const QString f = format.trimmed().toLower();
        if (f != QLatin1String("svg") && f != QLatin1String("png") && f != QLatin1String("pdf")) {
            std::fprintf(stderr, "moe-planner: unknown format '%s' (use svg, png or pdf)\n",
                         qPrintable(format));
            return kExitUsage;
        }
        formats << f;
    }
    return runExport(parser.value(o.export_dir), formats, file);
}

/// --screenshot OUT.png [--size WxH]: the window after its first paint.
/// --overlay NAME, checked: std::nullopt without it; false in `ok` for an unknown name.
std::optional<moe::GroupOverlay> overlayOption(const QCommandLineParser& parser,
                                               const PlannerOptions& o, bool& ok) {
    ok = true;
    if (!parser.isSet(o.overlay))
        return std::nullopt;
    const QString name = parser.value(o.overlay).trimmed().toLower();
    for (const moe::GroupOverlay overlay : moe::kGroupOverlays)
        if (name == QLatin1String(moe::toString(overlay)))
            return overlay;
    std::fprintf(stderr, "moe-planner: unknown overlay '%s' (use tp, ep, edp, dp, pp or cp)\n",
                 qPrintable(parser.value(o.overlay)));
    ok = false;
    return std::nullopt;
}

int runScreenshotMode(const QCommandLineParser& parser, const PlannerOptions& o,
                      const QString& file) {
    const QStringList parts = parser.value(o.size).split('x');
    const QSize size(parts.value(0).toInt(), parts.value(1).toInt());
    if (parts.size() != 2 || size.width() < 200 || size.height() < 200) {
        std::fprintf(stderr, "moe-planner: --size expects WxH, e.g. 1600x1000\n");
        return kExitUsage;
    }
    bool ok = true;
    const std::optional<moe::GroupOverlay> overlay = overlayOption(parser, o, ok);
    if (!ok)
        return kExitUsage;
    return runScreenshot(parser.value(o.screenshot), size, parser.isSet(o.dark), file, overlay,
                         parser.values(o.test_set));
}

/// --bench [--repeat N]: start-up and edit latencies.
int runBenchMode(const QCommandLineParser& parser, const PlannerOptions& o, const QString& file) {
    bool ok = false;
    const int repeat = parser.value(o.repeat).toInt(&ok);
    if (!ok || repeat < 1) {
        std::fprintf(stderr, "moe-planner: --repeat expects a positive number\n");
        return kExitUsage;
    }
    return runBench(repeat, file);
}

/// --test-set key=value ...: edits applied once the window runs, as if typed in the editor.
void scheduleTestEdits(MainWindow& window, const QStringList& edits) {
    if (edits.isEmpty())
        return;
    QTimer::singleShot(0, &window, [&window, edits] { applyTestEdits(window, edits); });
}

/// --dump-scenario OUT.yaml: the window's scenario written as Save would, then exit.
void scheduleScenarioDump(MainWindow& window, const QString& out) {
    QTimer::singleShot(0, &window, [&window, out] {
        const moe::widgets::ScenarioDocument* doc = window.document();
        const std::string problem =
            moe::saveScenarioText(doc->scenario(), doc->origin(), out.toStdString());
        if (!problem.empty())
            std::fprintf(stderr, "moe-planner: %s\n", problem.c_str());
        // Not a clean close: a restored session keeps its recovery file until saved.
        QCoreApplication::exit(problem.empty() ? kExitOk : kExitBadInput);
    });
}

/// The desktop app: the window, crash recovery and the scripted edits.
int runWindow(const QCommandLineParser& parser, const PlannerOptions& o, const QString& file) {
    MainWindow::Options options;
    options.recovery_dir = moe::widgets::Autosave::defaultDirectory();
    bool ok = true;
    const std::optional<moe::GroupOverlay> overlay = overlayOption(parser, o, ok);
    if (!ok)
        return kExitUsage;
    MainWindow window(options);
    if (parser.isSet(o.dark))
        useDarkPalette(window);
    if (!file.isEmpty())
        window.openFile(file); // problems are listed in the window's warnings panel
    showOverlay(window, overlay);
    window.show();
    // After a crash or a kill the window offers the unsaved edits it left behind.
    const bool recover = parser.isSet(o.recover);
    QTimer::singleShot(0, &window, [&window, recover] { window.offerRecovery(recover); });
    scheduleTestEdits(window, parser.values(o.test_set));
    if (parser.isSet(o.dump))
        scheduleScenarioDump(window, parser.value(o.dump));
    return QApplication::exec();
}

} // namespace

int main(int argc, char** argv) {
    startTimer().start();
    if (!prepareScreen(argc, argv))
        return kExitUsage;
    QApplication app(argc, argv);
    setApplicationIdentity();

    QCommandLineParser parser;
    const PlannerOptions o;
    o.addTo(parser);
    if (!parser.parse(QCoreApplication::arguments())) {
        std::fprintf(stderr, "moe-planner: %s\n", qPrintable(parser.errorText()));
        return kExitUsage;
    }
    if (parser.isSet(QStringLiteral("help")))
        parser.showHelp(kExitOk);
    if (parser.isSet(QStringLiteral("version")))
        parser.showVersion();
    if (parser.isSet(o.list_samples)) {
        for (const QString& path : MainWindow::sampleFiles())
            std::printf("%s\n", qPrintable(QDir::toNativeSeparators(path)));
        return kExitOk;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() > 1) {
        std::fprintf(stderr, "moe-planner: expected at most one scenario file, got %lld\n",
                     static_cast<long long>(positional.size()));
        return kExitUsage;
    }
    const QString file = positional.value(0);
    if (parser.isSet(o.export_dir))
        return runExportMode(parser, o, file);
    if (parser.isSet(o.report))
        return runReport(parser.value(o.report), file, parser.value(o.baseline));
    if (parser.isSet(o.baseline)) {
        std::fprintf(stderr, "moe-planner: --baseline needs --report\n");
        return kExitUsage;
    }
    if (parser.isSet(o.screenshot))
        return runScreenshotMode(parser, o, file);
    if (parser.isSet(o.bench))
        return runBenchMode(parser, o, file);
    return runWindow(parser, o, file);
}
