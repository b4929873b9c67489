// Real topology in: nvidia-smi topo -m and NCCL topology XML dumps of an 8 x H100 HGX, a DGX
// A100 and a GB200 tray (tests/data/topology, see its README) become the node of a scenario;
// truncated matrices, unknown connections and XML that is not NCCL's are errors with lines.
#include "test_support.h"

#include "moe/io/nccl_topo.h"
#include "moe/io/nvidia_smi_topo.h"
#include "moe/scenario_io.h"

#include <QtTest>

using namespace moe;
using namespace moe::io;

namespace {

std::string data(const char* name) {
    return test::readFile(std::string(MOE_TEST_DATA_DIR) + "/topology/" + name);
}

NodeDescription node(const NodeParse& p) {
    if (!p.node)
        qWarning("%s", formatAll(p.diagnostics).c_str());
    return p.node.value_or(NodeDescription{});
}

Scenario sample(const char* name) {
    return loadScenarioFile(test::samplePath(name)).scenario.value_or(Scenario{});
}

NodeImport apply(const NodeDescription& n, const Scenario& base, int nodes = 0) {
    NodeImportOptions o;
    o.file_label = "dump";
    o.base = base;
    o.nodes = nodes;
    return applyNodeDescription(n, o);
}

const std::vector<std::string> kH100Rails = {"mlx5_0", "mlx5_3", "mlx5_4",  "mlx5_5",
                                             "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"};

} // namespace

class TestNodeImport : public QObject {
    Q_OBJECT

private slots:
    void nvidiaSmiDgxH100() {
        const NodeDescription n = node(parseNvidiaSmiTopo(data("dgx-h100.topo.txt"), "h100"));
        QCOMPARE(n.gpus, 8);
        QCOMPARE(n.nvlinks_per_gpu, 18);
        QVERIFY(n.nvswitch);
        QVERIFY(n.all_pairs_nvlink);
        QVERIFY(!n.nvswitch_outside_node.has_value()); // the matrix cannot say
        // The NIC behind each GPU's PCIe switch (PXB), named from the NIC legend; the two
        // storage ports on each socket are not rails.
        QCOMPARE(n.rail_nics, kH100Rails);
        QCOMPARE(n.other_nics, (std::vector<std::string>{"mlx5_1", "mlx5_2", "mlx5_7", "mlx5_8"}));
        QCOMPARE(n.gpu_nic, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
        QCOMPARE(n.nic_speed_gbit, 0.0);

        // On the default (8 x DGX H100) the node is the same: nothing changes.
        const Scenario base = defaultScenario();
        const NodeImport r = apply(n, base);
        QVERIFY2(r.scenario, formatAll(r.diagnostics).c_str());
        QVERIFY(r.scenario->cluster == base.cluster);
    }

    void nvidiaSmiDgxA100() {
        const NodeDescription n = node(parseNvidiaSmiTopo(data("dgx-a100.topo.txt"), "a100"));
        QCOMPARE(n.gpus, 8);
        QCOMPARE(n.nvlinks_per_gpu, 12);
        QVERIFY(n.nvswitch);
        // Two GPUs and two NICs per PCIe switch: each GPU takes the less used of its two.
        QCOMPARE(n.rail_nics.size(), std::size_t(8));
        QCOMPARE(n.gpu_nic, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
        QCOMPARE(n.other_nics, (std::vector<std::string>{"mlx5_8", "mlx5_9"}));
        // 12 NVLinks x 25 GB/s (NVLink 3 and 4 alike) = 300 GB/s per direction, the A100's
        // published 600 GB/s in both directions.
        const NodeImport r = apply(n, defaultScenario());
        QVERIFY2(r.scenario, formatAll(r.diagnostics).c_str());
        QCOMPARE(r.scenario->cluster.gpu.scale_up_gbps, 300.0);
        QCOMPARE(r.scenario->cluster.nics_per_node, 8);
    }

    void nvidiaSmiGb200TrayKeepsWhatItCannotSee() {
        const NodeDescription n = node(parseNvidiaSmiTopo(data("gb200-tray.topo.txt"), "gb200"));
        QCOMPARE(n.gpus, 4);
        QCOMPARE(n.nvlinks_per_gpu, 18);
        QVERIFY(n.rail_nics.empty()); // every GPU-NIC path is SYS
        QCOMPARE(n.other_nics.size(), std::size_t(6));
        QCOMPARE(n.gpu_nic, (std::vector<int>{-1, -1, -1, -1}));
        // On the GB200 NVL72 sample: the rack domain, 900 GB/s (NVLink 5 of the gb200 preset)
        // and 4 NICs per tray stay; nothing changes.
        const Scenario base = sample("gb200-nvl72-deepseek-v3.yaml");
        const NodeImport r = apply(n, base);
        QVERIFY2(r.scenario, formatAll(r.diagnostics).c_str());
        QVERIFY(r.scenario->cluster == base.cluster);
        bool kept_nics = false;
        for (const std::string& c : r.changes)
            kept_nics = kept_nics || c.find("nics_per_node stays 4") != std::string::npos;
        QVERIFY(kept_nics);
    }

    void ncclHgxH100() {
        const NodeDescription n = node(parseNcclTopo(data("hgx-h100.nccl.xml"), "hgx"));
        QCOMPARE(n.gpus, 8);
        QCOMPARE(n.sm, 90);
        QCOMPARE(n.gpu_pci_device, std::string("0x2330"));
        QCOMPARE(n.gpu_preset, std::string("h100-sxm"));
        QCOMPARE(n.nvlinks_per_gpu, 18); // 5 + 5 + 4 + 4 to the four NVSwitches
        QVERIFY(n.nvswitch);
        QCOMPARE(n.nvswitch_outside_node, std::optional<bool>(false));
        QCOMPARE(n.rail_nics.size(), std::size_t(8));
        QCOMPARE(n.nic_speed_gbit, 400.0); // speed="400000" Mb/s
        QCOMPARE(n.gpu_nic, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
        const Scenario base = defaultScenario();
        const NodeImport r = apply(n, base);
        QVERIFY2(r.scenario, formatAll(r.diagnostics).c_str());
        QVERIFY(r.scenario->cluster == base.cluster);
    }

    void ncclDgxA100() {
        const NodeDescription n = node(parseNcclTopo(data("dgx-a100.nccl.xml"), "a100"));
        QCOMPARE(n.sm, 80);
        QCOMPARE(n.gpu_model, std::string("A100 SXM4 80GB"));
        QCOMPARE(n.gpu_preset, std::string()); // not in the catalog
        QCOMPARE(n.nvlinks_per_gpu, 12);       // 2 to each of six NVSwitches
        QCOMPARE(n.nic_speed_gbit, 200.0);
        QCOMPARE(n.rail_nics.size(), std::size_t(8));
        // Both GPUs of a switch see both NICs at PIX: GPU 2k takes NIC 2k, GPU 2k+1 NIC 2k+1.
        QCOMPARE(n.gpu_nic, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
        const NodeImport r = apply(n, defaultScenario());
        QVERIFY2(r.scenario, formatAll(r.diagnostics).c_str());
        const ClusterSpec& c = r.scenario->cluster;
        QCOMPARE(c.gpu.preset, std::string("h100-sxm")); // kept, with a note
        QCOMPARE(c.gpu.scale_up_gbps, 300.0);            // 12 x 25 (sm 80)
        // 200 Gb/s HDR has no preset: cx7-400g's achievable 48 of 50 GB/s, scaled: 25 x 0.96.
        QCOMPARE(c.nic.bandwidth_gbps, 24.0);
    }

    void ncclGb200TrayIsRackScale() {
        const NodeDescription n = node(parseNcclTopo(data("gb200-tray.nccl.xml"), "gb200"));
        QCOMPARE(n.gpus, 4);
        QCOMPARE(n.sm, 100);
        QCOMPARE(n.gpu_preset, std::string("gb200"));
        QCOMPARE(n.nvswitch_outside_node, std::optional<bool>(true)); // C2C + sm 100
        // NICs on each Grace's PCIe, reached over NVLink-C2C: two per Grace, one per GPU.
        QCOMPARE(n.rail_nics, (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}));
        QCOMPARE(n.gpu_nic, (std::vector<int>{0, 1, 2, 3}));
        // From the default 8 x DGX H100: the GB200 preset, 4 GPUs a tray, a rack domain; 18 trays
        // make one NVL72 rack (the base's 64 GPUs would not fill whole racks).
        NodeImport r = apply(n, defaultScenario());
        QVERIFY(!r.scenario);
        QVERIFY2(formatAll(r.diagnostics).find("not divisible by cluster.nodes_per_rack = 18") !=
                     std::string::npos,
                 formatAll(r.diagnostics).c_str());
        Scenario base = defaultScenario();
        base.layout.dp = 72; // 18 trays x 4 GPUs
        base.training.global_batch = 576;
        r = apply(n, base, 18);
        QVERIFY2(r.scenario, formatAll(r.diagnostics).c_str());
        const ClusterSpec& c = r.scenario->cluster;
        QCOMPARE(c.gpu.preset, std::string("gb200"));
        QCOMPARE(c.gpus_per_node, 4);
        QCOMPARE(c.nodes, 18);
        QCOMPARE(c.scale_up_domain, ScaleUpDomain::rack);
        QCOMPARE(c.gpusPerScaleUpDomain(), 72);
        QCOMPARE(c.gpu.scale_up_gbps, 900.0); // 18 NVLink 5 links x 50 GB/s
        QCOMPARE(c.nics_per_node, 4);
        QCOMPARE(c.nic.preset, std::string("cx7-400g"));
    }

    // Bad inputs ------------------------------------------------------------------------------

    void truncatedMatrix() {
        const std::string full = data("dgx-h100.topo.txt");
        // Cut in the middle of GPU5's row (line 7).
        const std::size_t row = full.find("\nGPU5\t") + 1;
        const NodeParse p = parseNvidiaSmiTopo(full.substr(0, row + 40), "cut.txt");
        QVERIFY(!p.node);
        QCOMPARE(formatAll(p.diagnostics),
                 std::string("cut.txt:7: error: GPU5 has 7 of 20 cells (no value for GPU7): the "
                             "matrix is truncated\n"));
        // Whole rows missing.
        const NodeParse rows = parseNvidiaSmiTopo(full.substr(0, row), "rows.txt");
        QVERIFY(!rows.node);
        QCOMPARE(
            formatAll(rows.diagnostics),
            std::string("rows.txt:6: error: only 5 of the 8 GPU rows: the matrix is truncated\n"));
    }

    void unknownConnection() {
        std::string text = data("dgx-a100.topo.txt");
        const std::size_t at = text.find("NV12", text.find("\nGPU3\t"));
        text.replace(at, 4, "NVX");
        const NodeParse p = parseNvidiaSmiTopo(text, "odd.txt");
        QVERIFY(!p.node);
        QCOMPARE(formatAll(p.diagnostics),
                 std::string("odd.txt:5:6: error: GPU3 / GPU0: unknown connection 'NVX' (expected "
                             "X, NV#, PIX, PXB, PHB, NODE or SYS)\n"));
        const NodeParse none = parseNvidiaSmiTopo("GPU utilization 100%\n", "none.txt");
        QVERIFY(!none.node);
        QVERIFY(formatAll(none.diagnostics).find("is this the output of 'nvidia-smi topo -m'?") !=
                std::string::npos);
    }

    void partialNvlinkIsRefused() {
        // Two pairs of GPUs bridged by NVLink, the pairs over PCIe: no single NVLink domain.
        const std::string text = "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\n"
                                 "GPU0\t X \tNV4\tSYS\tSYS\t0-31\n"
                                 "GPU1\tNV4\t X \tSYS\tSYS\t0-31\n"
                                 "GPU2\tSYS\tSYS\t X \tNV4\t32-63\n"
                                 "GPU3\tSYS\tSYS\tNV4\t X \t32-63\n";
        const NodeParse p = parseNvidiaSmiTopo(text, "pcie.txt");
        QVERIFY(p.node);
        QVERIFY(!p.node->all_pairs_nvlink);
        const NodeImport r = apply(*p.node, defaultScenario());
        QVERIFY(!r.scenario);
        QVERIFY(formatAll(r.diagnostics).find("not every GPU pair is connected by NVLink") !=
                std::string::npos);
    }

    void xmlThatIsNotNcclsOrNotXml() {
        NodeParse p =
            parseNcclTopo("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\">\n"
                          "  <rect/>\n</svg>\n",
                          "picture.svg");
        QVERIFY(!p.node);
        QCOMPARE(formatAll(p.diagnostics),
                 std::string("picture.svg:2: error: not an NCCL topology dump: the root element is "
                             "<svg>, expected <system version=\"1\"> (the file NCCL_TOPO_DUMP_FILE "
                             "writes)\n"));
        p = parseNcclTopo("<system version=\"1\">\n  <cpu numaid=\"0\">\n    <pci busid=\"0\">\n"
                          "  </cpu>\n</system>\n",
                          "broken.xml");
        QVERIFY(!p.node);
        QVERIFY2(formatAll(p.diagnostics).rfind("broken.xml:4: error: not well-formed XML: ", 0) ==
                     0,
                 formatAll(p.diagnostics).c_str());
        p = parseNcclTopo("<system version=\"1\">\n  <cpu numaid=\"0\">\n"
                          "    <pci busid=\"0000:18:00.0\">\n      <gpu dev=\"0\" rank=\"0\"/>\n"
                          "    </pci>\n  </cpu>\n</system>\n",
                          "nosm.xml");
        QVERIFY(!p.node);
        QCOMPARE(formatAll(p.diagnostics),
                 std::string("nosm.xml:4: error: <gpu> needs whole-number dev and sm attributes "
                             "(NCCL writes both), missing or not a number: sm\n"));
    }
};

QTEST_GUILESS_MAIN(TestNodeImport)
#include "test_node_import.moc"
