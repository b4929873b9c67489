// The one number-formatting module (moe/format.h): every expected string below is worked out by
// hand from the rule it tests.
#include "moe/format.h"

#include <QtTest>

#include <cmath>
#include <limits>

using namespace moe;

class TestFormat : public QObject {
    Q_OBJECT
private slots:
    void shortestNumbersReadBack() {
        QCOMPARE(formatNumber(0.6), std::string("0.6")); // not 0.59999999999999998
        QCOMPARE(formatNumber(1e12), std::string("1e+12"));
        QCOMPARE(formatNumber(450.0), std::string("450"));
        QCOMPARE(formatNumber(-3), std::string("-3"));
        QCOMPARE(formatNumber(uint64_t{18446744073709551615ULL}),
                 std::string("18446744073709551615"));
        for (const double x : {0.1, 1.0 / 3, 2.5e-7, 123456.789, 1e308})
            QCOMPARE(std::stod(formatNumber(x)), x);
    }

    void threeSignificantDigits() {
        QCOMPARE(threeSignificant(123.4), std::string("123"));
        QCOMPARE(threeSignificant(12.34), std::string("12.3"));
        QCOMPARE(threeSignificant(1.234), std::string("1.23"));
        // 99.96 rounds to 100.0 with one decimal: the decade changes, so no decimal.
        QCOMPARE(threeSignificant(99.96), std::string("100"));
        QCOMPARE(threeSignificant(9.996), std::string("10.0"));
        QCOMPARE(threeSignificant(-45.67), std::string("-45.7"));
    }

    void seconds() {
        // The views: seconds upward, then ms, µs, ns.
        QCOMPARE(formatSeconds(17.24), std::string("17.2 s"));
        QCOMPARE(formatSeconds(7200), std::string("7200 s"));
        QCOMPARE(formatSeconds(0.6412), std::string("641 ms"));
        QCOMPARE(formatSeconds(4.034e-3), std::string("4.03 ms"));
        QCOMPARE(formatSeconds(12.0e-6), std::string("12.0 µs"));
        QCOMPARE(formatSeconds(5e-9), std::string("5.00 ns"));
        QCOMPARE(formatSeconds(0), std::string("0 s"));
        QCOMPARE(formatSeconds(std::numeric_limits<double>::quiet_NaN()), std::string("–"));
        // Terminals: ASCII units, hours up to two days, then days.
        QCOMPARE(formatSeconds(447e-6, UnitStyle::ascii), std::string("447 us"));
        QCOMPARE(formatSeconds(2.36, UnitStyle::ascii), std::string("2.36 s"));
        QCOMPARE(formatSeconds(5400, UnitStyle::ascii), std::string("1.50 h")); // 5400/3600
        QCOMPARE(formatSeconds(3 * 86400, UnitStyle::ascii), std::string("3.00 days"));
        QCOMPARE(formatSeconds(0, UnitStyle::ascii), std::string("0"));
    }

    void bytes() {
        QCOMPARE(formatBytes(71.7e9), std::string("71.7 GB"));
        QCOMPARE(formatBytes(512), std::string("512 B"));
        QCOMPARE(formatBytes(45.6e3), std::string("45.6 kB"));
        QCOMPARE(formatBytes(45.6e3, UnitStyle::ascii), std::string("45.6 KB"));
        // 99.96 kB: three significant digits round to the next decade, so no decimal (moe-plan
        // printed "100.0 KB" while it had its own copy of this formatter).
        QCOMPARE(formatBytes(99.96e3, UnitStyle::ascii), std::string("100 KB"));
        QCOMPARE(formatBytes(1.5e12), std::string("1.50 TB"));
        QCOMPARE(formatBytes(3.2e6), std::string("3.20 MB"));
    }

    void countsAndShares() {
        QCOMPARE(formatCount(13885), std::string("13,885"));
        QCOMPARE(formatCount(1234567.4), std::string("1,234,567")); // >= 1000: whole
        QCOMPARE(formatCount(12.5), std::string("12.5"));
        QCOMPARE(formatCount(-4200), std::string("-4,200"));
        QCOMPARE(formatCount(999), std::string("999"));
        QCOMPARE(formatCompact(1.234e6), std::string("1.23M"));
        QCOMPARE(formatCompact(45600), std::string("45.6K"));
        QCOMPARE(formatCompact(789), std::string("789"));
        QCOMPARE(formatPercent(0.537), std::string("54%"));
        QCOMPARE(formatPercent(0.035), std::string("3.5%"));
        QCOMPARE(formatFixed(2.0 / 3, 3), std::string("0.667"));
    }
};

QTEST_GUILESS_MAIN(TestFormat)
#include "test_format.moc"
