// The expert-load heatmap: its cells are the report's token counts (GPU x MoE layer, or
// expert x MoE layer) coloured by their ratio to the layer mean on the shared scale, a PP>1
// sample shows each stage's own layers (no filler), the core's top stragglers are listed and
// the first is the marked cell, the hottest cell is
// marked and tooltips give exact counts, "Next step" asks for the next routing resample, a
// clicked warning's GPUs are banded, and the exports are valid files that name the scenario.
#include "moe/evaluate.h"
#include "moe/load_stragglers.h"
#include "moe/scenario_io.h"
#include "moe_widgets/charts/heatmap_view.h"
#include "moe_widgets/common/palette.h"
#include "moe_widgets/document/view_state.h"
#include "widget_test_support.h"

#include <QFile>
#include <QImage>
#include <QLocale>
#include <QPushButton>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <qcustomplot.h>

#include <cmath>

using namespace moe;
using namespace moe::widgets;

namespace {

QString english(double value) {
    return QLocale(QLocale::English).toString(static_cast<qlonglong>(std::llround(value)));
}

} // namespace

class TestHeatmapView : public QObject {
    Q_OBJECT
private slots:
    void gpuMatrixIsTheReportsLoad() {
        const EvaluationResultPtr result = test::resultFor(defaultScenario());
        const ExpertLoad& load = result->report.load;
        const Placement& placement = *result->report.placement;
        HeatmapView view(nullptr, nullptr);
        view.showResult(result);
        // 64 GPUs x 24 MoE layers (the default has no dense layers and PP=1).
        QCOMPARE(view.columns(), 64);
        QCOMPARE(view.rows(), 24);
        for (int layer = 0; layer < 24; ++layer)
            for (int gpu = 0; gpu < 64; ++gpu)
                QCOMPARE(view.cellValue(gpu, layer), load.gpuTokens(placement, gpu, layer));
        // What the plot draws is the same matrix.
        auto* map = qobject_cast<QCPColorMap*>(view.plot()->plottable(0));
        QVERIFY(map);
        QCOMPARE(map->data()->keySize(), 64);
        QCOMPARE(map->data()->valueSize(), 24);
        // ... coloured by each cell's ratio to its layer's mean.
        QCOMPARE(map->data()->cell(5, 3), view.cellRatio(5, 3));
        QCOMPARE(view.cellRatio(5, 3), gpuLoadRatio(load, placement, 5, 3));
        // Every EP group of 8 receives all token slots of its micro-batch, so a layer's GPUs
        // average tokens per GPU per micro-batch x top-k (micro-batch x sequence / (TP x CP)).
        const Scenario& s = defaultScenario();
        const double per_gpu = double(s.training.micro_batch) * s.model.seq_len /
                               (s.layout.tp * s.layout.cp) * s.model.top_k;
        QVERIFY(per_gpu >= 8192);
        double sum = 0;
        for (int gpu = 0; gpu < 8; ++gpu)
            sum += view.cellValue(gpu, 0);
        QVERIFY2(std::abs(sum / 8 - per_gpu) < 1e-6, qPrintable(QString::number(sum / 8)));
    }

    void expertMatrixIsTheReportsLoad() {
        const EvaluationResultPtr result = test::resultFor(defaultScenario());
        HeatmapView view(nullptr, nullptr);
        view.showResult(result);
        view.setMode(HeatmapView::Mode::expert_by_layer);
        QCOMPARE(view.columns(), 16);
        QCOMPARE(view.rows(), 24);
        for (int layer = 0; layer < 24; ++layer)
            for (int e = 0; e < 16; ++e)
                QCOMPARE(
                    view.cellValue(e, layer),
                    result->report.load.tokens_per_expert[static_cast<size_t>(layer * 16 + e)]);
        QVERIFY(view.cellToolTip(3, 2).contains(QStringLiteral("Expert 3")));
        QVERIFY(view.cellToolTip(3, 2).contains(QStringLiteral("on EP rank 3"))); // 3 % 8
        view.setMode(HeatmapView::Mode::gpu_by_layer);
        QCOMPARE(view.columns(), 64);
    }

    void stageViewHasNoGreyFiller() {
        // DeepSeek-V3: 61 layers, 3 dense, PP=16 with end stages of 3 and 2 layers: stage 0
        // (GPUs 0..127, pp is the outermost rank dimension) holds the dense layers 0-2 only, so
        // no MoE layer; stage 1 (GPUs 128..255) holds MoE layer 0 first. The stage view puts
        // each MoE layer's own stage in its row: 2048 / 16 = 128 columns, column k of a row =
        // the k-th GPU of the stage holding its layer, so every cell is a GPU with its layer.
        // DualPipe stages hold two chunks of layers, so the rows are grouped by stage.
        const EvaluationResultPtr result =
            test::resultFor(test::loadSample("deepseek-v3-2048xh800.yaml"));
        const ExpertLoad& load = result->report.load;
        const Placement& placement = *result->report.placement;
        HeatmapView view(nullptr, nullptr);
        view.showResult(result);
        QCOMPARE(view.columns(), 128);
        QCOMPARE(view.rows(), 58);
        QCOMPARE(view.layerOfRow(0), 0);
        QCOMPARE(view.cellGpu(0, 0), 128);
        QCOMPARE(view.cellGpu(5, 0), 133);
        std::vector<int> layers;
        auto* map = qobject_cast<QCPColorMap*>(view.plot()->plottable(0));
        QVERIFY(map);
        for (int row = 0; row < 58; ++row) {
            const int layer = view.layerOfRow(row);
            layers.push_back(layer);
            // Grouped by stage: a row's stage is never below the previous row's.
            if (row > 0)
                QVERIFY(load.stage_of_layer[static_cast<size_t>(layer)] >=
                        load.stage_of_layer[static_cast<size_t>(view.layerOfRow(row - 1))]);
            for (int k = 0; k < 128; ++k) {
                const int gpu = view.cellGpu(k, row);
                QVERIFY(gpu >= 0);
                QCOMPARE(placement.coordsOf(gpu).pp,
                         load.stage_of_layer[static_cast<size_t>(layer)]);
                QVERIFY(std::isfinite(view.cellValue(k, row)));
                QCOMPARE(view.cellValue(k, row), load.gpuTokens(placement, gpu, layer));
                QCOMPARE(view.cellRatio(k, row), gpuLoadRatio(load, placement, gpu, layer));
                QVERIFY(std::isfinite(map->data()->cell(k, row))); // nothing drawn as no-data
            }
        }
        std::sort(layers.begin(), layers.end()); // every MoE layer once
        for (int layer = 0; layer < 58; ++layer)
            QCOMPARE(layers[static_cast<size_t>(layer)], layer);
        // The marked cell is the core's top straggler.
        const std::vector<LoadStraggler> top = topStragglers(result->report, 10);
        QVERIFY(!top.empty());
        QCOMPARE(view.layerOfRow(view.markedRow()), top.front().layer);
        QCOMPARE(view.cellGpu(view.markedColumn(), view.markedRow()), top.front().gpu);
        QVERIFY(view.cellToolTip(view.markedColumn(), view.markedRow())
                    .contains(QStringLiteral("the hottest GPU")));
    }

    /// The colour of a cell is its ratio on the shared scale: a cell at the layer mean (perfect
    /// balance: every cell is exactly 1) is the neutral colour, the hottest cell the hot end,
    /// and that is what the plot draws.
    void cellColoursFollowTheRatioScale() {
        Scenario even = defaultScenario();
        even.routing.balancing = BalancingMethod::perfect;
        HeatmapView flat(nullptr, nullptr);
        flat.showResult(test::resultFor(even));
        QCOMPARE(flat.cellRatio(7, 3), 1.0);
        QCOMPARE(flat.cellColor(7, 3), loadScaleColor(0.5));
        QVERIFY(flat.stragglers().empty()); // nobody above the mean

        const EvaluationResultPtr result = test::resultFor(defaultScenario());
        HeatmapView view(nullptr, nullptr);
        view.resize(900, 600);
        view.showResult(result);
        const int c = view.markedColumn(), r = view.markedRow();
        QCOMPARE(view.cellRatio(c, r), view.scaleHigh()); // the scale's hot end is the data's
        QVERIFY(view.scaleHigh() >= kLoadScaleMinHigh);
        QCOMPARE(view.cellColor(c, r), loadScaleColor(1.0));
        // The drawn pixels: the hottest cell's centre is the hot end, a ratio-1 cell neutral.
        QCustomPlot* plot = view.plot();
        plot->replot();
        const QImage image = plot->toPixmap(900, 600, 1.0).toImage();
        auto pixel = [&](int column, int row) {
            return image.pixelColor(
                static_cast<int>(std::lround(plot->xAxis->coordToPixel(column))),
                static_cast<int>(std::lround(plot->yAxis->coordToPixel(row))));
        };
        auto near = [](const QColor& a, const QColor& b) {
            return std::abs(a.red() - b.red()) <= 6 && std::abs(a.green() - b.green()) <= 6 &&
                   std::abs(a.blue() - b.blue()) <= 6;
        };
        QVERIFY2(near(pixel(c, r), loadScaleColor(1.0)), qPrintable(pixel(c, r).name()));
        HeatmapView flat_big(nullptr, nullptr);
        flat_big.showResult(test::resultFor(even));
        flat_big.plot()->replot();
        const QImage flat_image = flat_big.plot()->toPixmap(900, 600, 1.0).toImage();
        const QColor mid = flat_image.pixelColor(
            static_cast<int>(std::lround(flat_big.plot()->xAxis->coordToPixel(7))),
            static_cast<int>(std::lround(flat_big.plot()->yAxis->coordToPixel(3))));
        QVERIFY2(near(mid, loadScaleColor(0.5)), qPrintable(mid.name()));
    }

    /// The list under the map is the core's topStragglers, hottest first.
    void stragglersListIsTheCores() {
        const EvaluationResultPtr result = test::resultFor(defaultScenario());
        HeatmapView view(nullptr, nullptr);
        view.showResult(result);
        const std::vector<LoadStraggler> top = topStragglers(result->report, 10);
        QCOMPARE(int(view.stragglers().size()), int(top.size()));
        QVERIFY(!top.empty());
        const QTableWidget* table = view.stragglersTable();
        QCOMPARE(table->rowCount(), int(top.size()));
        QCOMPARE(table->item(0, 0)->text().section(' ', 0, 0), QString::number(top[0].gpu));
        QCOMPARE(table->item(0, 1)->text(), QString::number(top[0].node));
        QCOMPARE(table->item(0, 2)->text(), QString::number(top[0].layer));
        QCOMPARE(table->item(0, 3)->text(), QString::number(top[0].ratio, 'f', 2) + "×");
        QCOMPARE(view.cellGpu(view.markedColumn(), view.markedRow()), top[0].gpu);
        QCOMPARE(view.markedRow(), top[0].layer);
    }

    void hottestCellIsMarkedWithExactCounts() {
        const EvaluationResultPtr result = test::resultFor(defaultScenario());
        HeatmapView view(nullptr, nullptr);
        view.showResult(result);
        double best = -1;
        for (int layer = 0; layer < view.rows(); ++layer)
            for (int gpu = 0; gpu < view.columns(); ++gpu)
                best = std::max(best, view.cellValue(gpu, layer));
        QCOMPARE(view.cellValue(view.markedColumn(), view.markedRow()), best);
        const QString tip = view.cellToolTip(view.markedColumn(), view.markedRow());
        QVERIFY2(tip.contains(english(best)), qPrintable(tip));
        QVERIFY(tip.contains(QStringLiteral("the hottest GPU")));
        QVERIFY(
            view.summaryText().contains(QStringLiteral("hottest GPU %1").arg(view.markedColumn())));
        // The ratio the summary gives is the report's worst imbalance.
        QVERIFY(
            view.summaryText().contains(QString::number(result->report.load.max_imbalance, 'f', 2) +
                                        QStringLiteral("× the layer mean")));
        // A plain cell: its exact count and its experts (EP rank 5: experts 5 and 13).
        const QString plain = view.cellToolTip(5, 3);
        QVERIFY(plain.contains(english(view.cellValue(5, 3))));
        QVERIFY(plain.contains(QStringLiteral("experts here: 5, 13")));
        QVERIFY(view.cellToolTip(64, 0).isEmpty());
    }

    void nextStepAsksForTheNextSample() {
        ViewState state;
        HeatmapView view(nullptr, &state);
        const EvaluationResultPtr first = test::resultFor(defaultScenario(), 0, 1);
        view.showResult(first);
        QSignalSpy spy(&view, &HeatmapView::resampleRequested);
        QVERIFY(view.nextStepButton()->isEnabled());
        QTest::mouseClick(view.nextStepButton(), Qt::LeftButton);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy.at(0).at(0).value<uint64_t>(), uint64_t{1});
        QCOMPARE(state.routingStep(), uint64_t{1});
        // The main window answers with step 1's result: the load moves.
        view.showResult(test::resultFor(defaultScenario(), 1, 2));
        QCOMPARE(view.routingStep(), uint64_t{1});
        QVERIFY(view.summaryText().startsWith(QStringLiteral("routing step 1")));
        int moved = 0;
        const Report& r0 = first->report;
        for (int gpu = 0; gpu < 64; ++gpu)
            moved += view.cellValue(gpu, 0) != r0.load.gpuTokens(*r0.placement, gpu, 0) ? 1 : 0;
        QVERIFY(moved > 0);
        QTest::mouseClick(view.nextStepButton(), Qt::LeftButton);
        QCOMPARE(spy.at(1).at(0).value<uint64_t>(), uint64_t{2});
        view.requestFirstStep();
        QCOMPARE(spy.at(2).at(0).value<uint64_t>(), uint64_t{0});
        QCOMPARE(state.routingStep(), uint64_t{0});
    }

    void highlightedGpusAreBanded() {
        ViewState state;
        HeatmapView view(nullptr, &state);
        view.showResult(test::resultFor(defaultScenario()));
        auto bands = [&] {
            QVector<QCPItemRect*> rects;
            for (int i = 0; i < view.plot()->itemCount(); ++i)
                if (auto* rect = qobject_cast<QCPItemRect*>(view.plot()->item(i)))
                    rects << rect;
            return rects;
        };
        QVERIFY(bands().isEmpty());
        // Two runs: 8..15 and 40.
        state.setHighlight({8, 9, 10, 11, 12, 13, 14, 15, 40}, QStringLiteral("EP group"));
        const QVector<QCPItemRect*> rects = bands();
        QCOMPARE(rects.size(), 2);
        QCOMPARE(rects[0]->topLeft->coords().x(), 7.5);
        QCOMPARE(rects[0]->bottomRight->coords().x(), 15.5);
        QCOMPARE(rects[1]->topLeft->coords().x(), 39.5);
        state.clearHighlight();
        QVERIFY(bands().isEmpty());
    }

    void denseModelHasNoMatrix() {
        HeatmapView view(nullptr, nullptr);
        view.showResult(test::resultFor(test::loadSample("dense-70b-64xh100.yaml")));
        QCOMPARE(view.columns(), 0);
        QVERIFY(!view.nextStepButton()->isEnabled());
        QCOMPARE(view.markedColumn(), -1);
    }

    void exportsAreValid() {
        HeatmapView view(nullptr, nullptr);
        view.resize(900, 500);
        view.showResult(test::resultFor(defaultScenario()));
        QTemporaryDir dir;
        const QString svg = dir.filePath(QStringLiteral("heatmap.svg"));
        QCOMPARE(view.exportTo(svg), QString());
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(file.readAll());
        QVERIFY(text.startsWith(QStringLiteral("<?xml")));
        QVERIFY(text.contains(QStringLiteral("viewBox=\"0 0 1600 900\"")));
        QVERIFY(text.contains(QStringLiteral("dgx-h100-8x8-moe16")));
        QVERIFY(text.contains(QStringLiteral("layer mean"))); // colour scale
        QVERIFY(text.contains(QStringLiteral("<image")));     // the matrix

        const QString png = dir.filePath(QStringLiteral("heatmap.png"));
        const QRect viewport = view.plot()->viewport();
        QCOMPARE(view.exportTo(png), QString());
        const QImage image(png);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() >= 1600 && image.height() >= 900);
        // The widget keeps its own size after a slide-sized export.
        QCOMPARE(view.plot()->viewport(), viewport);

        const QString pdf = dir.filePath(QStringLiteral("heatmap.pdf"));
        QCOMPARE(view.exportTo(pdf), QString());
        QFile pdf_file(pdf);
        QVERIFY(pdf_file.open(QIODevice::ReadOnly));
        const QByteArray bytes = pdf_file.readAll();
        QVERIFY(bytes.startsWith("%PDF-"));
        QVERIFY(bytes.size() > 5000);

        QVERIFY(view.exportTo(dir.filePath(QStringLiteral("heatmap.txt"))).contains("format"));
    }
};

QTEST_MAIN(TestHeatmapView)
#include "test_heatmap_view.moc"
