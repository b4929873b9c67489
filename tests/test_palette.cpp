// The shared palette: every step item has its own colour, collectives reuse their step item's
// colour, and the utilization ramp is ordered and clamped.
#include "moe_widgets/palette.h"

#include <QtTest>

#include <set>

using namespace moe;
using namespace moe::widgets;

class TestPalette : public QObject {
    Q_OBJECT
private slots:
    void stepItemsAreDistinct() {
        std::set<QRgb> seen;
        for (int i = 0; i < kStepItemCount; ++i)
            seen.insert(stepItemColor(static_cast<StepItem>(i)).rgb());
        QCOMPARE(static_cast<int>(seen.size()), kStepItemCount);
    }
    void collectivesMatchTheirStepItem() {
        QCOMPARE(collectiveColor(CollectiveKind::moe_dispatch),
                 stepItemColor(StepItem::all_to_all));
        QCOMPARE(collectiveColor(CollectiveKind::edp_sync), stepItemColor(StepItem::dp_sync));
        QCOMPARE(collectiveColor(CollectiveKind::tp_collective), stepItemColor(StepItem::tp_comm));
    }
    void utilizationRampIsOrderedAndClamped() {
        // Lightness grows monotonically along the ramp (dark purple -> yellow).
        double previous = -1;
        for (int i = 0; i <= 20; ++i) {
            const double lightness = utilizationColor(i / 20.0).lightnessF();
            QVERIFY2(lightness >= previous - 0.02, qPrintable(QString::number(i)));
            previous = lightness;
        }
        QCOMPARE(utilizationColor(-3).rgb(), utilizationColor(0).rgb());
        QCOMPARE(utilizationColor(7).rgb(), utilizationColor(1).rgb());
        QCOMPARE(utilizationColor(std::nan("")).rgb(), utilizationColor(1).rgb());
        QCOMPARE(utilizationColor(0).rgb(), QColor(0x440154).rgb());
    }
};

QTEST_GUILESS_MAIN(TestPalette)
#include "test_palette.moc"
