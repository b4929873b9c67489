#include <QtTest>
// placeholder: being written
class Test_cli : public QObject {
    Q_OBJECT
};
QTEST_GUILESS_MAIN(Test_cli)
#include "test_cli.moc"
