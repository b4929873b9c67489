// The embedded hardware catalog: every preset parses, and its figures are the datasheet ones
// from shared/guide/model.md (per-direction bandwidths, dense TFLOPS).
#include "moe/catalog.h"

#include <QtTest>

#include <cmath>

using namespace moe;

class TestCatalog : public QObject {
    Q_OBJECT
private slots:
    void presetsExist_data() {
        QTest::addColumn<QString>("id");
        for (const char* id : {"h100-sxm", "h800-sxm", "h200-sxm", "b200", "gb200", "mi300x"})
            QTest::newRow(id) << QString(id);
    }
    void presetsExist() {
        QFETCH(QString, id);
        const Catalog& catalog = builtinCatalog();
        const GpuSpec* gpu = catalog.findGpu(id.toStdString());
        QVERIFY(gpu);
        QVERIFY(gpu->bf16_tflops > 0);
        // FP8 peak is twice BF16 on every listed GPU (dense); datasheets round to +-1.
        QVERIFY(std::abs(gpu->fp8_tflops - 2 * gpu->bf16_tflops) <= 1.0);
        QVERIFY(gpu->hbm_gb > 0 && gpu->hbm_tbps > 0 && gpu->scale_up_gbps > 0);
        QVERIFY(catalog.findNodeShape(id.toStdString()));
    }
    void datasheetFigures() {
        const Catalog& catalog = builtinCatalog();
        // H100 "NVLink 900 GB/s" is the bidirectional total: 450 GB/s each way.
        QCOMPARE(catalog.findGpu("h100-sxm")->scale_up_gbps, 450.0);
        QCOMPARE(catalog.findGpu("h800-sxm")->scale_up_gbps, 200.0);
        QCOMPARE(catalog.findGpu("h200-sxm")->hbm_gb, 141.0);
        QCOMPARE(catalog.findGpu("b200")->bf16_tflops, 2250.0);
        QCOMPARE(catalog.findGpu("gb200")->hbm_gb, 186.0);
        QCOMPARE(catalog.findGpu("mi300x")->scale_up_fabric, std::string("Infinity Fabric"));
        // NDR 400 Gb/s = 50 GB/s line rate per direction; the catalog holds the achievable rate.
        const NicSpec* ndr = catalog.findNic("cx7-400g");
        QVERIFY(ndr);
        QCOMPARE(ndr->speed_gbit, 400.0);
        QVERIFY(ndr->bandwidth_gbps <= ndr->speed_gbit / 8 && ndr->bandwidth_gbps >= 46);
        QVERIFY(catalog.findNic("cx8-800g"));
        QVERIFY(catalog.findNic("eth-400g"));
    }
    void nvl72Shape() {
        const Catalog::NodeShape* shape = builtinCatalog().findNodeShape("gb200");
        QVERIFY(shape);
        QCOMPARE(shape->gpus_per_node * shape->nodes_per_rack, 72);
        QCOMPARE(shape->scale_up_domain, ScaleUpDomain::rack);
    }
    void unknownPresetIsNull() {
        QVERIFY(!builtinCatalog().findGpu("h1000"));
        QVERIFY(!builtinCatalog().findNic("cx9"));
    }
};

QTEST_GUILESS_MAIN(TestCatalog)
#include "test_catalog.moc"
