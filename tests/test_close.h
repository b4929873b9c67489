#pragma once
// Relative comparison of computed figures with hand-derived ones (written to 10+ significant
// digits), for the Qt Test executables.
#include <QtTest>

#include <algorithm>
#include <cmath>

namespace moe::test {
inline bool close(double actual, double expected, double rel = 1e-9) {
    return std::abs(actual - expected) <= rel * std::max(1e-300, std::abs(expected)) ||
           (expected == 0 && actual == 0);
}
} // namespace moe::test

#define QCLOSE_REL(actual, expected, rel)                                                          \
    QVERIFY2(moe::test::close((actual), (expected), (rel)),                                        \
             qPrintable(QString("%1 = %2, expected %3")                                            \
                            .arg(#actual)                                                          \
                            .arg((actual), 0, 'g', 17)                                             \
                            .arg((expected), 0, 'g', 17)))
#define QCLOSE(actual, expected) QCLOSE_REL(actual, expected, 1e-9)
