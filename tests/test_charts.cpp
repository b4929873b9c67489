// The step Gantt, the breakdown chart and the memory chart: the Gantt's time <-> x mapping
// (data-driven), its rows (stage > node > GPU), the stacked bars summing to the report's
// figures, and every export writing a valid, non-empty SVG / PNG / PDF that names the scenario.
#include "moe/scenario_io.h"
#include "moe_widgets/charts/breakdown_chart.h"
#include "moe_widgets/charts/memory_chart.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/view_state.h"
#include "moe_widgets/timeline/gantt_view.h"
#include "widget_test_support.h"

#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QRegularExpression>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QtTest>
#include <qcustomplot.h>

#include <memory>
#include <set>

using namespace moe;
using namespace moe::widgets;

namespace {

std::unique_ptr<ReportView> makeView(const QString& id) {
    if (id == QLatin1String("gantt"))
        return std::make_unique<GanttView>(nullptr, nullptr);
    if (id == QLatin1String("breakdown"))
        return std::make_unique<BreakdownChart>(nullptr, nullptr);
    return std::make_unique<MemoryChart>(nullptr, nullptr);
}

int countLevel(const GanttView& view, GanttRow::Level level) {
    int n = 0;
    for (const GanttRow& row : view.rows())
        n += row.level == level ? 1 : 0;
    return n;
}

} // namespace

class TestCharts : public QObject {
    Q_OBJECT

    EvaluationResultPtr default_;
    EvaluationResultPtr deepseek_;

private slots:
    void initTestCase() {
        default_ = test::resultFor(defaultScenario());
        deepseek_ = test::resultFor(test::loadSample("deepseek-v3-2048xh800.yaml"));
        QCOMPARE(default_->report.gpus, 64);
        QCOMPARE(deepseek_->report.gpus, 2048);
    }

    // ---- time <-> x mapping ------------------------------------------------------------------

    void mapTimeToX_data() {
        QTest::addColumn<double>("start");
        QTest::addColumn<double>("end");
        QTest::addColumn<double>("x0");
        QTest::addColumn<double>("width");
        QTest::addColumn<double>("time");
        QTest::addColumn<double>("x");
        QTest::newRow("step start at the left edge")
            << 0.0 << 10.0 << 100.0 << 1000.0 << 0.0 << 100.0;
        QTest::newRow("step end at the right edge")
            << 0.0 << 10.0 << 100.0 << 1000.0 << 10.0 << 1100.0;
        QTest::newRow("middle") << 0.0 << 10.0 << 100.0 << 1000.0 << 5.0 << 600.0;
        QTest::newRow("zoomed window") << 2.0 << 4.0 << 0.0 << 200.0 << 3.0 << 100.0;
        QTest::newRow("left of the window") << 2.0 << 4.0 << 0.0 << 200.0 << 1.0 << -100.0;
        QTest::newRow("right of the window") << 2.0 << 4.0 << 0.0 << 200.0 << 5.0 << 300.0;
        QTest::newRow("microseconds") << 1e-6 << 3e-6 << 50.0 << 400.0 << 2.5e-6 << 350.0;
        QTest::newRow("17 s step on 1300 px")
            << 0.0 << 17.2162 << 220.0 << 1300.0 << 8.6081 << 870.0;
    }
    void mapTimeToX() {
        QFETCH(double, start);
        QFETCH(double, end);
        QFETCH(double, x0);
        QFETCH(double, width);
        QFETCH(double, time);
        QFETCH(double, x);
        GanttTimeAxis axis;
        axis.start_s = start;
        axis.end_s = end;
        axis.x0 = x0;
        axis.width = width;
        QVERIFY2(std::abs(axis.mapTimeToX(time) - x) < 1e-9,
                 qPrintable(QString::number(axis.mapTimeToX(time), 'g', 12)));
        // ... and back.
        QVERIFY(std::abs(axis.mapXToTime(x) - time) < 1e-12 * std::max(1.0, end));
    }

    void roundTrip_data() {
        QTest::addColumn<double>("start");
        QTest::addColumn<double>("end");
        QTest::addColumn<double>("width");
        QTest::newRow("whole default step") << 0.0 << 2.9 << 1100.0;
        QTest::newRow("DeepSeek step") << 0.0 << 26.7 << 1300.0;
        QTest::newRow("deep zoom") << 12.000001 << 12.000002 << 1300.0;
        QTest::newRow("one pixel") << 0.0 << 1.0 << 1.0;
    }
    void roundTrip() {
        QFETCH(double, start);
        QFETCH(double, end);
        QFETCH(double, width);
        GanttTimeAxis axis;
        axis.start_s = start;
        axis.end_s = end;
        axis.x0 = 220;
        axis.width = width;
        for (int i = 0; i <= 20; ++i) {
            const double x = axis.x0 + width * i / 20.0;
            // Within a thousandth of a pixel even 1 us into a 12 s step (double precision).
            QVERIFY(std::abs(axis.mapTimeToX(axis.mapXToTime(x)) - x) < 1e-3);
            const double t = start + (end - start) * i / 20.0;
            QVERIFY(std::abs(axis.mapXToTime(axis.mapTimeToX(t)) - t) <=
                    1e-12 * std::max(1.0, end));
        }
    }

    void zoom_data() {
        QTest::addColumn<double>("factor");
        QTest::addColumn<double>("anchor_x");
        QTest::addColumn<double>("start");
        QTest::addColumn<double>("end");
        // The axis shows [0, 10] s over x = 0..1000.
        QTest::newRow("2x at the centre") << 2.0 << 500.0 << 2.5 << 7.5;
        QTest::newRow("2x at the left edge") << 2.0 << 0.0 << 0.0 << 5.0;
        QTest::newRow("2x at the right edge") << 2.0 << 1000.0 << 5.0 << 10.0;
        QTest::newRow("4x at x=100 keeps t=1 under it") << 4.0 << 100.0 << 0.75 << 3.25;
        QTest::newRow("zoom out past the step clamps") << 0.5 << 500.0 << 0.0 << 10.0;
        QTest::newRow("no narrower than the minimum span")
            << 1e9 << 500.0 << 5.0 - 5e-4 << 5.0 + 5e-4;
        QTest::newRow("anchor outside the chart clamps to its edge") << 2.0 << -300.0 << 0.0 << 5.0;
        QTest::newRow("nonsense factor keeps the window") << -1.0 << 500.0 << 0.0 << 10.0;
    }
    void zoom() {
        QFETCH(double, factor);
        QFETCH(double, anchor_x);
        QFETCH(double, start);
        QFETCH(double, end);
        const GanttTimeAxis axis = GanttTimeAxis::fit(10.0, 0.0, 1000.0);
        const GanttTimeAxis z = axis.zoomed(factor, anchor_x, 10.0, 1e-3);
        QVERIFY2(
            std::abs(z.start_s - start) < 1e-9 && std::abs(z.end_s - end) < 1e-9,
            qPrintable(
                QStringLiteral("[%1, %2]").arg(z.start_s, 0, 'g', 12).arg(z.end_s, 0, 'g', 12)));
        QCOMPARE(z.x0, axis.x0);
        QCOMPARE(z.width, axis.width);
    }

    void pan_data() {
        QTest::addColumn<double>("dx");
        QTest::addColumn<double>("start");
        QTest::addColumn<double>("end");
        // The window [2, 4] s over 200 px of a 10 s step: 100 px = 1 s.
        QTest::newRow("later by 100 px") << 100.0 << 3.0 << 5.0;
        QTest::newRow("earlier by 50 px") << -50.0 << 1.5 << 3.5;
        QTest::newRow("clamped at the start") << -1000.0 << 0.0 << 2.0;
        QTest::newRow("clamped at the end") << 10000.0 << 8.0 << 10.0;
    }
    void pan() {
        QFETCH(double, dx);
        QFETCH(double, start);
        QFETCH(double, end);
        GanttTimeAxis axis;
        axis.start_s = 2;
        axis.end_s = 4;
        axis.x0 = 30;
        axis.width = 200;
        const GanttTimeAxis p = axis.panned(dx, 10.0);
        QVERIFY(std::abs(p.start_s - start) < 1e-12);
        QVERIFY(std::abs(p.end_s - end) < 1e-12);
    }

    void niceTicks_data() {
        QTest::addColumn<double>("span");
        QTest::addColumn<int>("max_ticks");
        QTest::addColumn<double>("step");
        QTest::newRow("10 s, 5 ticks") << 10.0 << 5 << 2.0;
        QTest::newRow("10 s, 10 ticks") << 10.0 << 10 << 1.0;
        QTest::newRow("17.2 s, 8 ticks") << 17.2 << 8 << 5.0;
        QTest::newRow("26.7 s, 13 ticks") << 26.7 << 13 << 5.0;
        QTest::newRow("2.9 s, 11 ticks") << 2.9 << 11 << 0.5;
        QTest::newRow("3 ms, 6 ticks") << 0.003 << 6 << 0.0005;
        QTest::newRow("exactly one step") << 1.0 << 1 << 1.0;
        QTest::newRow("degenerate span") << 0.0 << 5 << 1.0;
    }
    void niceTicks() {
        QFETCH(double, span);
        QFETCH(int, max_ticks);
        QFETCH(double, step);
        QVERIFY2(std::abs(niceTickStep(span, max_ticks) - step) < 1e-12 * std::max(1.0, step),
                 qPrintable(QString::number(niceTickStep(span, max_ticks), 'g', 12)));
    }

    // ---- Gantt rows ---------------------------------------------------------------------------

    void ganttRowsDefault() {
        GanttView view(nullptr, nullptr);
        view.showResult(default_);
        QVERIFY(view.timeline() != nullptr);
        QVERIFY2(view.timeline()->ok(), view.timeline()->error.c_str());
        // 8 nodes x 8 GPUs, one pipeline stage: 1 stage row + 8 node rows + 64 GPU rows.
        QCOMPARE(countLevel(view, GanttRow::Level::stage), 1);
        QCOMPARE(countLevel(view, GanttRow::Level::node), 8);
        QCOMPARE(countLevel(view, GanttRow::Level::gpu), 64);
        QCOMPARE(static_cast<int>(view.rows().size()), 73);
        // Opened by default: the stage (8 nodes) and the hottest GPU's node (8 GPUs).
        QCOMPARE(static_cast<int>(view.visibleRows().size()), 1 + 8 + 8);
        const int hottest = default_->report.load.hottestGpu(*default_->report.placement);
        bool hot_visible = false;
        for (const int r : view.visibleRows())
            hot_visible = hot_visible || view.rows()[static_cast<size_t>(r)].gpu == hottest;
        QVERIFY(hot_visible);
        view.collapseAll();
        QCOMPARE(static_cast<int>(view.visibleRows().size()), 1);
        view.expandAll();
        QCOMPARE(static_cast<int>(view.visibleRows().size()), 73);
        view.collapseAll();
        view.setExpanded(0, true);
        QCOMPARE(static_cast<int>(view.visibleRows().size()), 9);
        // Every GPU row draws the simulated row of its token stream; each GPU appears once.
        std::set<int> seen;
        for (const GanttRow& row : view.rows()) {
            if (row.level != GanttRow::Level::gpu)
                continue;
            QCOMPARE(row.timeline_row, view.timeline()->rowOfGpu(row.gpu));
            QCOMPARE(row.node, row.gpu / 8);
            seen.insert(row.gpu);
        }
        QCOMPARE(static_cast<int>(seen.size()), 64);
    }

    void ganttRowsDeepSeek() {
        GanttView view(nullptr, nullptr);
        view.showResult(deepseek_);
        QVERIFY2(view.timeline()->ok(), view.timeline()->error.c_str());
        // PP=16 is the slowest dimension: stage s = GPUs 128s..128s+127 = 16 nodes of 8.
        QCOMPARE(countLevel(view, GanttRow::Level::stage), 16);
        QCOMPARE(countLevel(view, GanttRow::Level::node), 256);
        QCOMPARE(countLevel(view, GanttRow::Level::gpu), 2048);
        const GanttRow& stage3 = view.rows()[static_cast<size_t>(3 * (1 + 16 + 128))];
        QCOMPARE(stage3.level, GanttRow::Level::stage);
        QCOMPARE(stage3.stage, 3);
        QCOMPARE(stage3.gpus.front(), 384);
        QCOMPARE(stage3.gpus.back(), 511);
        // 16 stage rows, the hottest GPU's stage opened (16 nodes) and its node (8 GPUs).
        QCOMPARE(static_cast<int>(view.visibleRows().size()), 16 + 16 + 8);
        view.collapseAll();
        QCOMPARE(static_cast<int>(view.visibleRows().size()), 16);
        const int row = view.revealGpu(1000); // stage 7, node 125
        QVERIFY(row >= 0);
        QCOMPARE(view.rows()[static_cast<size_t>(row)].gpu, 1000);
        QCOMPARE(view.rows()[static_cast<size_t>(row)].stage, 7);
        QCOMPARE(view.rows()[static_cast<size_t>(row)].node, 125);
        QCOMPARE(static_cast<int>(view.visibleRows().size()), 16 + 16 + 8);

        // DualPipe: a row is a rank running stages s and 15-s, and its tooltip says so.
        QCOMPARE(deepseek_->scenario.layout.schedule, PipelineSchedule::dualpipe);
        GanttView fresh(nullptr, nullptr); // scrolled to the top, unlike `view` after revealGpu
        fresh.resize(1400, 700);
        fresh.showResult(deepseek_);
        fresh.collapseAll();
        fresh.setExpanded(0, true);
        const QString rank = fresh.toolTipAt(QPoint(40, 26 + 2));
        QVERIFY2(rank.contains(QLatin1String("Rank 0 (stages 0 + 15, 128 GPUs)")),
                 qPrintable(rank));
        QString node;
        for (int y = 26 + 2; y < 700 && !node.contains(QLatin1String("node")); y += 2)
            node = fresh.toolTipAt(QPoint(40, y));
        QVERIFY2(node.contains(QLatin1String("Rank 0 (stages 0 + 15), node 0 (8 GPUs)")),
                 qPrintable(node));
        QVERIFY2(!node.contains(QLatin1String("Stage")), qPrintable(node));
    }

    void ganttAxisAndTooltips() {
        GanttView view(nullptr, nullptr);
        view.resize(1400, 700);
        view.showResult(default_);
        const Timeline& tl = *view.timeline();
        QVERIFY(tl.step_time_s > 0);
        QVERIFY(!tl.critical_path.empty());
        // Fitted to the whole simulated step, the one step time the view shows.
        const double total = tl.step_time_s;
        QCOMPARE(view.timeAxis().start_s, 0.0);
        QVERIFY(std::abs(view.timeAxis().end_s - total) < 1e-12);
        view.zoomTime(4.0, view.timeAxis().x0);
        QVERIFY(std::abs(view.timeAxis().span_s() - total / 4) < 1e-9);
        view.fitTime();
        QVERIFY(std::abs(view.timeAxis().span_s() - total) < 1e-12);
        // The header shows one step time (the simulated one); the closed form is in its
        // tooltip with how far it is from the simulation.
        const auto* caption = view.findChild<QLabel*>(QStringLiteral("ganttCaption"));
        QVERIFY(caption);
        QVERIFY2(caption->text().startsWith(QLatin1String("Simulated step ")) &&
                     caption->text().count(QLatin1String(" s ")) +
                             caption->text().count(QLatin1String(" ms ")) ==
                         1 &&
                     !caption->text().contains(QLatin1String("evaluate")),
                 qPrintable(caption->text()));
        QVERIFY(caption->toolTip().contains(QLatin1String("closed form")));

        // The label of the first row, then the first compute span of the stage row.
        const QString label = view.toolTipAt(QPoint(40, 26 + 10));
        QVERIFY2(label.contains(QLatin1String("Stage 0")), qPrintable(label));
        const GanttRow& stage = view.rows().front();
        const auto& spans = tl.rows[static_cast<size_t>(stage.timeline_row)].spans;
        const Span* first = nullptr;
        for (const Span& s : spans)
            if (s.stream == TimelineStream::compute && s.microbatch == 0) {
                first = &s;
                break;
            }
        QVERIFY(first != nullptr);
        view.zoomTime(1e4, view.timeAxis().mapTimeToX(first->start_s));
        const int x =
            static_cast<int>(view.timeAxis().mapTimeToX((first->start_s + first->end_s) / 2));
        const QString tip = view.toolTipAt(QPoint(x, 26 + 10));
        QVERIFY2(tip.contains(QLatin1String("micro-batch 1")), qPrintable(tip));
        QVERIFY2(tip.contains(QLatin1String("forward")), qPrintable(tip));
    }

    void selectionAndHighlightFollowViewState() {
        ViewState state;
        GanttView gantt(nullptr, &state);
        BreakdownChart breakdown(nullptr, &state);
        MemoryChart memory(nullptr, &state);
        gantt.showResult(deepseek_);
        breakdown.showResult(deepseek_);
        memory.showResult(deepseek_);
        gantt.collapseAll();
        QCOMPARE(static_cast<int>(gantt.visibleRows().size()), 16);
        // Selecting GPU 1000 (stage 7, node 125) elsewhere opens its stage and node here ...
        state.setSelectedGpu(1000);
        bool shown = false;
        for (const int r : gantt.visibleRows())
            shown = shown || gantt.rows()[static_cast<size_t>(r)].gpu == 1000;
        QVERIFY(shown);
        QCOMPARE(static_cast<int>(gantt.visibleRows().size()), 16 + 16 + 8);
        // ... and the charts mark stage 7.
        const auto stage_tick = [](QCPAxis* axis, int key) {
            const auto ticker = qSharedPointerCast<QCPAxisTickerText>(axis->ticker());
            return ticker->ticks().value(key);
        };
        QVERIFY(stage_tick(breakdown.plot()->yAxis, 1 + 7).startsWith(QStringLiteral("● Stage 7")));
        QVERIFY(!stage_tick(breakdown.plot()->yAxis, 1 + 6).startsWith(QStringLiteral("●")));
        QVERIFY(stage_tick(memory.plot()->xAxis, 7).startsWith(QStringLiteral("● ")));
        // A new result keeps the selection.
        memory.showResult(deepseek_);
        QVERIFY(stage_tick(memory.plot()->xAxis, 7).startsWith(QStringLiteral("● ")));
        state.setSelectedGpu(-1);
        QVERIFY(!stage_tick(memory.plot()->xAxis, 7).startsWith(QStringLiteral("●")));
        // Highlighting a group (a clicked warning) does not change the rows shown.
        state.setHighlight({1487, 1488}, QStringLiteral("hot EP group"));
        QCOMPARE(static_cast<int>(gantt.visibleRows().size()), 16 + 16 + 8);
    }

    // ---- stacked bars -------------------------------------------------------------------------

    void breakdownSumsToStepTime_data() {
        QTest::addColumn<QString>("sample");
        QTest::newRow("default") << QString();
        QTest::newRow("deepseek-v3-2048xh800") << QStringLiteral("deepseek");
    }
    void breakdownSumsToStepTime() {
        QFETCH(QString, sample);
        const EvaluationResultPtr result = sample.isEmpty() ? default_ : deepseek_;
        const Report& report = result->report;
        BreakdownChart chart(nullptr, nullptr);
        chart.showResult(result);
        QCOMPARE(chart.categoryCount(), 1 + static_cast<int>(report.stages.size()));
        QVERIFY(chart.categoryLabel(0).startsWith(QLatin1String("Step")));
        QVERIFY(std::abs(chart.stackedSeconds(0) - report.step_time_s) <=
                1e-9 * report.step_time_s);
        for (size_t s = 0; s < report.stages.size(); ++s) {
            const double expected = report.stages[s].per_micro_batch.total_s * report.micro_batches;
            QVERIFY(std::abs(chart.stackedSeconds(static_cast<int>(s) + 1) - expected) <=
                    1e-9 * expected);
        }
        // One stacked series per step item present, coloured by the shared palette, each on
        // top of the previous one.
        int present = 0;
        for (int i = 0; i < kStepItemCount; ++i) {
            bool any = report.step.seconds[static_cast<size_t>(i)] > 0;
            for (const StageResult& st : report.stages)
                any = any || st.per_micro_batch.seconds[static_cast<size_t>(i)] > 0;
            present += any ? 1 : 0;
        }
        QCOMPARE(chart.plot()->plottableCount(), present);
        QCPBars* previous = nullptr;
        for (int p = 0; p < chart.plot()->plottableCount(); ++p) {
            auto* bars = qobject_cast<QCPBars*>(chart.plot()->plottable(p));
            QVERIFY(bars != nullptr);
            const auto item = static_cast<StepItem>(bars->property("moe_item").toInt());
            QCOMPARE(bars->brush().color(), stepItemColor(item));
            QCOMPARE(bars->barBelow(), previous);
            previous = bars;
        }
    }

    void breakdownLabelsNeverOverlap_data() {
        QTest::addColumn<int>("width");
        QTest::addColumn<int>("height");
        QTest::newRow("default dock") << 430 << 370;
        QTest::newRow("short dock") << 360 << 260;
        QTest::newRow("tall") << 900 << 900;
    }
    void breakdownLabelsNeverOverlap() {
        // DeepSeek has 16 stages: at the default dock size not every stage fits a label, and
        // the ones shown must keep a text line apart (they used to overlap).
        QFETCH(int, width);
        QFETCH(int, height);
        BreakdownChart chart(nullptr, nullptr);
        chart.resize(width, height);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.showResult(deepseek_);
        QCOMPARE(chart.categoryCount(), 17);
        const QVector<int> shown = chart.labelledCategories();
        QVERIFY(shown.size() >= 2);
        QCOMPARE(shown.front(), 0); // the step always
        const QFontMetrics fm(chart.plot()->yAxis->tickLabelFont());
        for (int i = 1; i < shown.size(); ++i) {
            const double gap = std::abs(chart.plot()->yAxis->coordToPixel(shown[i]) -
                                        chart.plot()->yAxis->coordToPixel(shown[i - 1]));
            QVERIFY2(gap >= fm.height(), qPrintable(QStringLiteral("%1 and %2: %3 px apart")
                                                        .arg(shown[i - 1])
                                                        .arg(shown[i])
                                                        .arg(gap)));
        }
        // Thinned evenly, and every label when there is room.
        if (height >= 900)
            QCOMPARE(shown.size(), 17);
        else
            QVERIFY(shown.size() < 17);
    }

    void memoryStacksToTotals() {
        for (const EvaluationResultPtr& result : {default_, deepseek_}) {
            const Report& report = result->report;
            MemoryChart chart(nullptr, nullptr);
            chart.showResult(result);
            QCOMPARE(chart.stageCount(), static_cast<int>(report.stages.size()));
            for (size_t s = 0; s < report.stages.size(); ++s) {
                const MemoryBreakdown& m = report.stages[s].memory;
                QVERIFY(std::abs(chart.stackedBytes(static_cast<int>(s)) - m.total_bytes) <=
                        1e-9 * m.total_bytes);
            }
            QVERIFY(std::abs(chart.hbmLineBytes() - report.memory.hbm_bytes) < 1.0);
            QCOMPARE(report.memory.hbm_bytes, 80e9); // H100 and H800 both carry 80 GB
        }
    }

    // ---- exports ------------------------------------------------------------------------------

    void exports_data() {
        QTest::addColumn<QString>("view");
        QTest::addColumn<QString>("sample");
        for (const char* view : {"gantt", "breakdown", "memory"}) {
            QTest::newRow(qPrintable(QStringLiteral("%1 default").arg(view)))
                << QString::fromLatin1(view) << QString();
            QTest::newRow(qPrintable(QStringLiteral("%1 deepseek").arg(view)))
                << QString::fromLatin1(view) << QStringLiteral("deepseek");
        }
    }
    void exports() {
        QFETCH(QString, view);
        QFETCH(QString, sample);
        const EvaluationResultPtr result = sample.isEmpty() ? default_ : deepseek_;
        const QString name = QString::fromStdString(result->scenario.name);
        std::unique_ptr<ReportView> v = makeView(view);
        QCOMPARE(v->viewId(), view);
        QVERIFY(!v->viewTitle().isEmpty());
        QVERIFY(v->widget() != nullptr);
        v->showResult(result);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());

        const QString svg = dir.filePath(view + QStringLiteral(".svg"));
        QCOMPARE(v->exportTo(svg), QString());
        QSvgRenderer renderer(svg);
        QVERIFY(renderer.isValid());
        QVERIFY(renderer.defaultSize().width() >= 1600);
        QVERIFY(renderer.defaultSize().height() >= 900);
        QFile svg_file(svg);
        QVERIFY(svg_file.open(QIODevice::ReadOnly));
        const QByteArray svg_text = svg_file.readAll();
        QVERIFY2(svg_text.contains(name.toUtf8()), "the SVG names the scenario");
        // A DualPipe Gantt row is a rank running two stages' chunks: the last one pairs with 0.
        const bool dual_gantt = view == QLatin1String("gantt") &&
                                result->scenario.layout.schedule == PipelineSchedule::dualpipe;
        if (view == QLatin1String("gantt")) {
            // It keys its critical path, outlined in the critical-path colour (ViewTheme's
            // magenta #d6246e, which no span uses) with a dashed connector.
            QVERIFY(svg_text.contains("critical path (outlined; dashed: to another stage)"));
            QVERIFY(svg_text.contains("stroke=\"#d6246e\""));
            // Fit for a slide: no tree triangles (the screen's ▸/▾, closed three-point paths;
            // a slide cannot open a row) and headed label columns.
            static const QRegularExpression triangle(
                R"(<path[^>]* d="M([\d.]+),([\d.]+) L[\d.]+,[\d.]+ L[\d.]+,[\d.]+ L\1,\2")");
            QVERIFY2(!triangle.match(QString::fromUtf8(svg_text)).hasMatch(),
                     "tree triangles in the Gantt export");
            QVERIFY(svg_text.contains(dual_gantt ? "Rank › node › GPU" : "Stage › node › GPU"));
            QVERIFY(svg_text.contains("waiting for hot GPU"));
        }
        const QByteArray last_stage = (view == QLatin1String("memory") ? QStringLiteral("%1")
                                       : dual_gantt ? QStringLiteral("Rank %1 · stages %1 + 0")
                                                    : QStringLiteral("Stage %1"))
                                          .arg(result->report.stages.size() - 1)
                                          .toUtf8();
        QVERIFY2(svg_text.contains(last_stage), "the SVG shows the last pipeline stage");

        const QString png = dir.filePath(view + QStringLiteral(".png"));
        QCOMPARE(v->exportTo(png), QString());
        const QImage image(png);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() >= 1600 && image.height() >= 900);
        // Every view's PNG is twice its page (the SVG's view box): sharp on a projector.
        QCOMPARE(image.size(), renderer.viewBox().size() * 2);
        // Not a blank page: many distinct colours.
        std::set<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7)
                colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 8, qPrintable(QString::number(colours.size())));

        const QString pdf = dir.filePath(view + QStringLiteral(".pdf"));
        QCOMPARE(v->exportTo(pdf), QString());
        QFile pdf_file(pdf);
        QVERIFY(pdf_file.open(QIODevice::ReadOnly));
        const QByteArray pdf_bytes = pdf_file.readAll();
        QVERIFY(pdf_bytes.startsWith("%PDF-"));
        QVERIFY(pdf_bytes.trimmed().endsWith("%%EOF"));
        QVERIFY(pdf_bytes.size() > 4000);

        QVERIFY(!v->exportTo(dir.filePath(view + QStringLiteral(".bmp"))).isEmpty());

        // Keep the PNGs for looking at them when asked to.
        const QByteArray keep = qgetenv("MOE_CHART_PNG_DIR");
        if (!keep.isEmpty())
            QFile::copy(png, QStringLiteral("%1/%2-%3.png")
                                 .arg(QString::fromLocal8Bit(keep), view,
                                      sample.isEmpty() ? QStringLiteral("default") : sample));
    }

    void nothingToExportBeforeAResult() {
        for (const char* id : {"gantt", "breakdown", "memory"}) {
            std::unique_ptr<ReportView> v = makeView(QString::fromLatin1(id));
            QTemporaryDir dir;
            QVERIFY(!v->exportTo(dir.filePath(QStringLiteral("x.svg"))).isEmpty());
        }
    }

    // ---- speed (printed for the report) -------------------------------------------------------

    void showAndPaintTimes() {
        for (const EvaluationResultPtr& result : {default_, deepseek_}) {
            for (const char* id : {"gantt", "breakdown", "memory"}) {
                std::unique_ptr<ReportView> v = makeView(QString::fromLatin1(id));
                v->widget()->resize(1400, 800);
                v->showResult(result); // first show builds the widgets
                QElapsedTimer timer;
                timer.start();
                v->showResult(result);
                const QPixmap shot = v->widget()->grab();
                const qint64 ms = timer.elapsed();
                QVERIFY(!shot.isNull());
                qInfo("%s %s: showResult + paint %lld ms", id, result->scenario.name.c_str(), ms);
                QVERIFY2(ms < 2000, "a view must redraw well under the 200 ms budget's order");
            }
        }
    }
};

QTEST_MAIN(TestCharts)
#include "test_charts.moc"
