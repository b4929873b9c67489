// The shared palette: every step item has its own colour, collectives reuse their step item's
// colour, the utilization ramp is ordered and clamped, links and spans keep their contrast on
// the light and the dark background, and labels on a fill pick the readable ink.
#include "moe_widgets/common/palette.h"

#include <QtTest>

#include <cmath>
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
    void contrastRatioIsWcag() {
        // Hand-derived: white luminance 1, black 0 -> (1 + 0.05) / (0 + 0.05) = 21.
        QCOMPARE(contrastRatio(Qt::white, Qt::black), 21.0);
        QCOMPARE(contrastRatio(Qt::black, Qt::white), 21.0);
        QCOMPARE(contrastRatio(QColor(0x777777), QColor(0x777777)), 1.0);
        // #777777: channel 0.4667 -> ((0.4667 + 0.055) / 1.055)^2.4 = 0.1845; vs white
        // 1.05 / 0.2345 = 4.48 (the classic "just under 4.5:1" grey).
        QVERIFY(std::abs(contrastRatio(QColor(0x777777), Qt::white) - 4.48) < 0.01);
    }
    void linksReadOnBothBackgrounds() {
        // The light theme's background is white, the dark theme's #1C1F24 (view_export.cpp).
        const QColor dark_bg(0x1C1F24);
        for (int i = 0; i <= 20; ++i) {
            const double u = i / 20.0;
            QVERIFY2(contrastRatio(linkColor(u, true), dark_bg) >= 3.0,
                     qPrintable(QString::number(u)));
            // Light: the ramp itself; from 60% up the dark variant is the ramp too.
            QCOMPARE(linkColor(u, false).rgb(), utilizationColor(u).rgb());
            if (u >= 0.6)
                QCOMPARE(linkColor(u, true).rgb(), utilizationColor(u).rgb());
        }
        // Idle: the ramp's #440154 mixed 45% toward white = #9873A1 (rounded per channel).
        const QColor idle = linkColor(0, true);
        QVERIFY(std::abs(idle.red() - 0x98) <= 1 && std::abs(idle.green() - 0x73) <= 1 &&
                std::abs(idle.blue() - 0xA1) <= 1);
        // Hue order is kept: the lifted ramp still runs purple -> teal -> green.
        QVERIFY(linkColor(0, true).hueF() > linkColor(0.5, true).hueF());
    }
    void waitAndStepItemsReadOnBothBackgrounds() {
        // Span fills need 3:1 against both chart backgrounds to be told from the page; the
        // wait span is the one that used to fade into the dark background.
        const QColor wait = stepItemColor(StepItem::imbalance_wait);
        QVERIFY(contrastRatio(wait, Qt::white) >= 3.0);
        QVERIFY(contrastRatio(wait, QColor(0x1C1F24)) >= 3.0);
        QVERIFY(contrastRatio(wait, stepItemColor(StepItem::bubble)) >= 1.5);
    }
    void textOnPicksTheReadableInk() {
        QCOMPARE(textOn(Qt::white).rgb(), QColor(0x1F2328).rgb());
        QCOMPARE(textOn(QColor(0x440154)).rgb(), QColor(Qt::white).rgb());
        QCOMPARE(textOn(QColor(0xFDE725)).rgb(), QColor(0x1F2328).rgb());
        for (int i = 0; i < kStepItemCount; ++i) {
            const QColor fill = stepItemColor(static_cast<StepItem>(i));
            QVERIFY2(contrastRatio(textOn(fill), fill) >= 3.0, qPrintable(QString::number(i)));
        }
    }
};

QTEST_GUILESS_MAIN(TestPalette)
#include "test_palette.moc"
