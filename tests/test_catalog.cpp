// The embedded hardware catalog: every preset parses, names its datasheet, and its figures are
// the datasheet ones (per-direction bandwidths, dense TFLOPS; resources/catalog.yaml quotes each
// sheet in the entry's `source`).
#include "moe/catalog.h"

#include <QtTest>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

using namespace moe;

class TestCatalog : public QObject {
    Q_OBJECT
private slots:
    void presetsExist_data() {
        QTest::addColumn<QString>("id");
        for (const char* id :
             {"h100-sxm", "h800-sxm", "h200-sxm", "b200", "gb200", "mi300x", "a100-sxm"})
            QTest::newRow(id) << QString(id);
    }
    void presetsExist() {
        QFETCH(QString, id);
        const Catalog& catalog = builtinCatalog();
        const GpuSpec* gpu = catalog.findGpu(id.toStdString());
        QVERIFY(gpu);
        QVERIFY(gpu->bf16_tflops > 0);
        // FP8 peak is twice BF16 on every GPU that has FP8 (dense); datasheets round to +-1.
        // A100 has no FP8 tensor cores: 0.
        if (id == "a100-sxm")
            QCOMPARE(gpu->fp8_tflops, 0.0);
        else
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
    void a100() {
        // A100 datasheet, 80GB SXM column: BF16 312 TFLOPS dense (624 is with sparsity), no FP8,
        // 80 GB HBM2e at 2,039 GB/s, NVLink 600 GB/s bidirectional = 300 GB/s each way, 400 W.
        const Catalog& catalog = builtinCatalog();
        const GpuSpec* a100 = catalog.findGpu("a100-sxm");
        QVERIFY(a100);
        QCOMPARE(a100->name, std::string("NVIDIA A100 SXM 80GB"));
        QCOMPARE(a100->bf16_tflops, 312.0);
        QCOMPARE(a100->fp8_tflops, 0.0);
        QCOMPARE(a100->hbm_gb, 80.0);
        QCOMPARE(a100->hbm_tbps, 2.039);
        QCOMPARE(a100->scale_up_gbps, 300.0);
        QCOMPARE(a100->power_w, 400.0);
        // DGX A100: 8 GPUs on NVSwitch; 6.5 kW max - 8 x 400 W - 8 x 20 W NICs = 3,140 W, which
        // the catalog rounds down to 3,100.
        const Catalog::NodeShape* dgx = catalog.findNodeShape("a100-sxm");
        QVERIFY(dgx);
        QCOMPARE(dgx->gpus_per_node, 8);
        QCOMPARE(dgx->scale_up_domain, ScaleUpDomain::node);
        QCOMPARE(dgx->node_overhead_w, 3100.0);
        // HDR 200 Gb/s = 25 GB/s line rate; NCCL reaches ~24 GB/s per NIC.
        const NicSpec* hdr = catalog.findNic("cx6-200g");
        QVERIFY(hdr);
        QCOMPARE(hdr->speed_gbit, 200.0);
        QCOMPARE(hdr->bandwidth_gbps, 24.0);
        QVERIFY(hdr->bandwidth_gbps <= hdr->speed_gbit / 8);
        // 64 ports' worth of 40-port QM8700s: 1.6 x $20K and 1.6 x 400 W.
        QCOMPARE(hdr->switch_usd, 32000.0);
        QCOMPARE(hdr->switch_w, 640.0);
    }
    void everyEntryNamesItsSource() {
        const Catalog& catalog = builtinCatalog();
        QCOMPARE(catalog.entry_sources.size(), catalog.gpus.size() + catalog.nics.size());
        std::vector<std::string> ids;
        for (const GpuSpec& gpu : catalog.gpus)
            ids.push_back(gpu.preset);
        for (const NicSpec& nic : catalog.nics)
            ids.push_back(nic.preset);
        for (const std::string& id : ids) {
            const std::string* source = catalog.sourceOf(id);
            QVERIFY2(source, id.c_str());
            // A datasheet's name, not a placeholder.
            QVERIFY2(source->size() > 40, id.c_str());
        }
        QVERIFY(!catalog.sourceOf("h1000"));
    }
    void readerRules() {
        const std::string nic = "nics:\n  - {id: n, name: N, source: NIC brief, speed_gbit: 400, "
                                "bandwidth_gbps: 48, latency_us: 4, power_w: 25, price_usd: 1, "
                                "switch_usd: 1, switch_w: 1, cable_usd: 1}\n";
        const std::string node = "node: {gpus_per_node: 8, nodes_per_rack: 4, scale_up_domain: "
                                 "node, server_usd: 1, rack_usd: 1, node_overhead_w: 1, "
                                 "rack_overhead_w: 0}";
        const auto gpuYaml = [&](const std::string& extra) {
            return "gpus:\n  - {id: g, name: G, bf16_tflops: 312, hbm_gb: 80, hbm_tbps: 2, "
                   "scale_up_gbps: 300, scale_up_latency_us: 3, scale_up_fabric: NVLink, "
                   "power_w: 400, price_usd: 1, " +
                   extra + node + "}\n" + nic;
        };
        const auto withSms = [&](const std::string& extra) {
            return gpuYaml("sm_count: 108, " + extra);
        };
        // fp8_tflops absent: a GPU without FP8 tensor cores.
        const Catalog noFp8 = parseCatalog(withSms("source: GPU sheet, "));
        QCOMPARE(noFp8.gpus.at(0).sm_count, 108);
        QCOMPARE(noFp8.gpus.at(0).fp8_tflops, 0.0);
        QCOMPARE(*noFp8.sourceOf("g"), std::string("GPU sheet"));
        QCOMPARE(*noFp8.sourceOf("n"), std::string("NIC brief"));
        QCOMPARE(parseCatalog(withSms("source: s, fp8_tflops: 624, ")).gpus.at(0).fp8_tflops,
                 624.0);
        QVERIFY_THROWS_EXCEPTION(std::logic_error, parseCatalog(withSms("")));
        QVERIFY_THROWS_EXCEPTION(std::logic_error, parseCatalog(withSms("source: ' ', ")));
        QVERIFY_THROWS_EXCEPTION(std::logic_error,
                                 parseCatalog(withSms("source: s, fp8_tflops: -1, ")));
        // sm_count is required and positive (it sets GEMM wave quantization).
        QVERIFY_THROWS_EXCEPTION(std::logic_error, parseCatalog(gpuYaml("source: s, ")));
        QVERIFY_THROWS_EXCEPTION(std::logic_error,
                                 parseCatalog(gpuYaml("source: s, sm_count: 0, ")));
    }
    void smCounts() {
        // The SM (AMD: CU) counts the catalog cites next to each entry.
        const std::pair<const char*, int> expected[] = {
            {"a100-sxm", 108}, {"h100-sxm", 132}, {"h800-sxm", 132}, {"h200-sxm", 132},
            {"b200", 148},     {"gb200", 148},    {"mi300x", 304}};
        for (const auto& [id, sms] : expected) {
            const GpuSpec* gpu = builtinCatalog().findGpu(id);
            QVERIFY2(gpu, id);
            QCOMPARE(gpu->sm_count, sms);
        }
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
