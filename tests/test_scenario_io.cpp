// Scenario files: loading (every problem with its file, line and column), the documented
// defaults, --set overrides, saving (round trip, atomic replace) and the small enum helpers.
#include "moe/catalog.h"
#include "moe/diagnostics.h"
#include "moe/scenario.h"
#include "moe/scenario_io.h"
#include "test_support.h"

#include <QtTest>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sys/resource.h>

using namespace moe;

namespace {

// 2 nodes x 8 H100 = 16 GPUs; tp = cp = pp = 1, so dp is derived as 16.
const std::string kMinimal = R"(name: small
cluster:
  gpu: h100-sxm
  nodes: 2
model:
  layers: 4
  hidden: 256
  heads: 8
  seq_len: 512
  vocab: 1000
  ffn_hidden: 1024
  experts: 8
  top_k: 2
  expert_ffn_hidden: 512
training:
  global_batch: 64
layout:
  ep: 8
)";

// Everything toYaml has to keep: GPU and NIC overrides, MLA, precisions, explicit placement
// and a routing histogram. 4 nodes x 8 H200 = 32 GPUs, tp 2 x pp 2 -> dp 8; 2 MoE layers.
const std::string kEverything = R"(name: roundtrip-everything
description: "Overrides, MLA, placement and a histogram: all of it must survive a save"
cluster:
  gpu: h200-sxm
  gpu_overrides:
    name: H200 (derated)
    bf16_tflops: 900.5
    sm_count: 100
    price_usd: 0
  nodes: 4
  nodes_per_rack: 2
  scale_up:
    bandwidth_gbps: 400
    latency_us: 3.25
  scale_out:
    nic: cx8-800g
    nics_per_node: 4
    bandwidth_gbps: 90
    fabric: ethernet
    topology: fat-tree
    oversubscription: 2
    nodes_per_leaf: 2
  costs:
    gpu_hour_usd: 2.5
    electricity_usd_per_kwh: 0.12
    pue: 1.3
    node_overhead_w: 1500
model:
  name: tiny-mla
  layers: 3
  dense_layers: 1
  hidden: 512
  heads: 8
  attention: mla
  mla: {q_lora_rank: 256, kv_lora_rank: 128, qk_nope_head_dim: 64, qk_rope_head_dim: 32, v_head_dim: 64}
  seq_len: 1024
  vocab: 32000
  ffn_hidden: 2048
  experts: 4
  top_k: 2
  expert_ffn_hidden: 256
  shared_experts: 1
  capacity_factor: 1.25
  precision: {weights: bf16, activations: fp8, dispatch: fp8, compute: fp8, grads: fp32}
training:
  global_batch: 64
  micro_batch: 2
  total_tokens: 2.5e11
  optimizer: adamw
  zero_stage: 2
  recompute: full
layout:
  tp: 2
  pp: 2
  ep: 4
  order: tp-ep-cp-dp-pp
  schedule: gpipe
  max_nodes_per_token: 2
  expert_placement:
    - {expert: 0, ep_ranks: [0, 1]}
    - {expert: 3, ep_ranks: [2], layer: 1}
routing:
  model: histogram
  histogram_csv: routing_two_layers.csv
  balance: 0.25
  seed: 7
)";

LoadResult loadText(const std::string& yaml) {
    return loadScenarioText(yaml, "test.yaml", MOE_TEST_DATA_DIR);
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    if (at == std::string::npos)
        qFatal("test text lacks '%s'", from.c_str());
    return text.replace(at, from.size(), to);
}

/// Loads `yaml` and expects exactly one diagnostic, an error with this text and position.
void expectSingleError(const std::string& yaml, const std::string& message, int line, int column,
                       const std::string& field) {
    const LoadResult r = loadText(yaml);
    QVERIFY(!r.ok());
    QVERIFY2(r.diagnostics.size() == 1, formatAll(r.diagnostics).c_str());
    const Diagnostic& d = r.diagnostics.front();
    QCOMPARE(d.message, message);
    QCOMPARE(d.file, std::string("test.yaml"));
    QCOMPARE(d.line, line);
    QCOMPARE(d.column, column);
    QCOMPARE(d.field, field);
    QVERIFY(d.severity == Diagnostic::Severity::error);
}

std::vector<std::string> filesIn(const QString& dir) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir.toStdString()))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

void writeText(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

} // namespace

namespace QTest {
template <> char* toString(const std::string& s) {
    return qstrdup(s.c_str());
}
} // namespace QTest

class TestScenarioIo : public QObject {
    Q_OBJECT

private slots:
    void loadsDefaultSample() {
        const LoadResult r = loadScenarioFile(test::samplePath("dgx-h100-8x8-moe16.yaml"));
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        QVERIFY2(r.diagnostics.empty(), formatAll(r.diagnostics).c_str());
        const Scenario& s = *r.scenario;
        QCOMPARE(s.name, std::string("dgx-h100-8x8-moe16"));
        QCOMPARE(s.cluster.gpu.preset, std::string("h100-sxm"));
        QCOMPARE(s.cluster.gpu.bf16_tflops, 989.0); // catalog value, not overridden
        QCOMPARE(s.cluster.gpu.scale_up_gbps, 450.0);
        QCOMPARE(s.cluster.gpuCount(), 64);
        QCOMPARE(s.cluster.nodes_per_rack, 4);
        QVERIFY(s.cluster.scale_up_domain == ScaleUpDomain::node);
        QCOMPARE(s.cluster.nic.preset, std::string("cx7-400g"));
        QCOMPARE(s.cluster.nic.bandwidth_gbps, 48.0);
        QCOMPARE(s.cluster.nics_per_node, 8);
        QVERIFY(s.cluster.fabric_topology == FabricTopology::rail_optimized);
        QCOMPARE(s.model.layers, 24);
        QCOMPARE(s.model.kv_heads, 8);
        QCOMPARE(s.model.experts, 16);
        QCOMPARE(s.model.top_k, 2);
        QVERIFY(s.model.grad_precision == Precision::fp32);
        QCOMPARE(s.training.global_batch, int64_t{512});
        QCOMPARE(s.training.total_tokens, 1.0e12);
        QVERIFY(s.training.recompute == Recompute::selective);
        QCOMPARE(s.layout.dp, 64);
        QCOMPARE(s.layout.ep, 8);
        QCOMPARE(toString(s.layout.order), std::string("tp-cp-ep-dp-pp"));
        QVERIFY(s.layout.schedule == PipelineSchedule::one_f_one_b);
        QVERIFY(s.routing.balancing == BalancingMethod::aux_loss);
        QVERIFY(s.routing.model == PopularityModel::published);
        QCOMPARE(s.routing.balance, 0.0);
        QCOMPARE(s.routing.seed, uint64_t{42});

        // Positions of keys, 1-based, as written in the sample.
        QCOMPARE(r.source.file, test::samplePath("dgx-h100-8x8-moe16.yaml"));
        QCOMPARE(r.source.fields.at("cluster.nodes").line, 17);
        QCOMPARE(r.source.fields.at("cluster.nodes").column, 3);
        QCOMPARE(r.source.fields.at("model").line, 29);
        QCOMPARE(r.source.fields.at("layout.ep").line, 62);
        // Not written: the nearest written parent.
        QCOMPARE(r.source.find("layout.expert_placement[3].expert").line, 57);
        QCOMPARE(r.source.find("nowhere").line, 0);
    }

    void builtInDefaultIsTheSample() {
        QCOMPARE(std::string(defaultScenarioYaml()),
                 test::readFile(test::samplePath("dgx-h100-8x8-moe16.yaml")));
        const LoadResult r = loadScenarioFile(test::samplePath("dgx-h100-8x8-moe16.yaml"));
        QVERIFY(r.ok());
        QVERIFY(defaultScenario() == *r.scenario);
        QCOMPARE(&defaultScenario(), &defaultScenario()); // parsed once
    }

    void presetAndDerivedDefaults() {
        const LoadResult r = loadText(kMinimal);
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        const Scenario& s = *r.scenario;
        QCOMPARE(s.cluster.gpus_per_node, 8);  // H100 node shape
        QCOMPARE(s.cluster.nodes_per_rack, 4); // H100 node shape
        QCOMPARE(s.cluster.gpu.scale_up_latency_us, 2.5);
        QCOMPARE(s.cluster.gpu.scale_up_fabric, std::string("NVLink"));
        QCOMPARE(s.cluster.nic.preset, std::string("cx7-400g"));
        QCOMPARE(s.cluster.nic.latency_us, 4.0);
        QCOMPARE(s.cluster.nics_per_node, 8); // = gpus_per_node
        QCOMPARE(s.model.kv_heads, 8);        // = heads
        QCOMPARE(s.layout.dp, 16);            // 16 GPUs / (tp*cp*pp = 1)
        QCOMPARE(s.layout.tp, 1);
        QCOMPARE(s.training.micro_batch, 1);
        QCOMPARE(s.training.zero_stage, 1);
        QCOMPARE(s.training.optimizer, std::string("adam"));
        QVERIFY(s.routing.model == PopularityModel::published);
        QVERIFY(s.routing.balancing == BalancingMethod::aux_loss);
        QCOMPARE(s.routing.seed, uint64_t{1});

        // GB200: 4 GPUs a tray, 18 trays sharing one NVLink domain.
        const LoadResult gb = loadText(replaced(
            replaced(replaced(kMinimal, "gpu: h100-sxm", "gpu: gb200"), "nodes: 2", "nodes: 18"),
            "global_batch: 64", "global_batch: 144"));
        QVERIFY2(gb.ok(), formatAll(gb.diagnostics).c_str());
        QCOMPARE(gb.scenario->cluster.gpus_per_node, 4);
        QCOMPARE(gb.scenario->cluster.nodes_per_rack, 18);
        QVERIFY(gb.scenario->cluster.scale_up_domain == ScaleUpDomain::rack);
        QCOMPARE(gb.scenario->layout.dp, 72);
    }

    void overridesOfPresetFields() {
        const LoadResult r = loadText(replaced(kMinimal, "  nodes: 2\n", R"(  nodes: 2
  gpu_overrides:
    name: H100 (capped)
    hbm_gb: 64
  gpus_per_node: 4
  scale_up:
    bandwidth_gbps: 300
    name: NVLink-C2C
  scale_out:
    nic: eth-400g
    latency_us: 9.5
)"));
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        const ClusterSpec& c = r.scenario->cluster;
        QCOMPARE(c.gpu.preset, std::string("h100-sxm"));
        QCOMPARE(c.gpu.name, std::string("H100 (capped)"));
        QCOMPARE(c.gpu.hbm_gb, 64.0);
        QCOMPARE(c.gpu.bf16_tflops, 989.0); // untouched preset value
        QCOMPARE(c.gpu.scale_up_gbps, 300.0);
        QCOMPARE(c.gpu.scale_up_latency_us, 2.5);
        QCOMPARE(c.gpu.scale_up_fabric, std::string("NVLink-C2C"));
        QCOMPARE(c.gpus_per_node, 4);
        QCOMPARE(c.nics_per_node, 4); // follows the overridden gpus_per_node
        QCOMPARE(c.nic.preset, std::string("eth-400g"));
        QCOMPARE(c.nic.bandwidth_gbps, 45.0);
        QCOMPARE(c.nic.latency_us, 9.5);
        QCOMPARE(r.scenario->layout.dp, 8); // 2 nodes x 4 GPUs
    }

    void syntaxErrorHasLineAndColumn() {
        // The over-indented "nodes" makes its colon (line 4, column 9) an illegal map value.
        const LoadResult r = loadText("name: x\ncluster:\n  gpu: h100-sxm\n   nodes: 8\n");
        QVERIFY(!r.ok());
        QCOMPARE(r.diagnostics.size(), std::size_t{1});
        QCOMPARE(r.diagnostics[0].message, std::string("YAML syntax error: illegal map value"));
        QCOMPARE(r.diagnostics[0].line, 4);
        QCOMPARE(r.diagnostics[0].column, 9);
        QCOMPARE(r.diagnostics[0].format(),
                 std::string("test.yaml:4:9: error: YAML syntax error: illegal map value"));
    }

    void unknownFieldSuggestsAndPoints() {
        expectSingleError(replaced(kMinimal, "layout:", "layuot:"),
                          "unknown field 'layuot' — did you mean 'layout'?", 17, 1, "layuot");
        expectSingleError(
            replaced(kMinimal, "  nodes: 2\n", "  nodes: 2\n  scale_out:\n    bandwith_gbps: 40\n"),
            "unknown field 'cluster.scale_out.bandwith_gbps' — did you mean "
            "'cluster.scale_out.bandwidth_gbps'?",
            6, 5, "cluster.scale_out.bandwith_gbps");
        // A prefix is enough to recognise the field.
        expectSingleError(
            replaced(kMinimal, "  nodes: 2\n", "  nodes: 2\n  scale_up:\n    bandwidth: 300\n"),
            "unknown field 'cluster.scale_up.bandwidth' — did you mean "
            "'cluster.scale_up.bandwidth_gbps'?",
            6, 5, "cluster.scale_up.bandwidth");
        // Nothing close: list what is allowed.
        expectSingleError(
            replaced(kMinimal, "  nodes: 2\n", "  nodes: 2\n  colour: green\n"),
            "unknown field 'cluster.colour' — expected one of: gpu, gpu_overrides, "
            "nodes, gpus_per_node, nodes_per_rack, rack_nodes, rack_power_limit_kw, scale_up, "
            "scale_out, costs, reliability",
            5, 3, "cluster.colour");
        expectSingleError(replaced(kMinimal, "  ep: 8\n", "  ep: 8\n  ep: 4\n"),
                          "duplicate field 'layout.ep' (first written on line 18)", 19, 3,
                          "layout.ep");
    }

    void wrongTypesAreNamed() {
        expectSingleError(replaced(kMinimal, "nodes: 2", "nodes: eight"),
                          "cluster.nodes: expected a whole number, got 'eight'", 4, 10,
                          "cluster.nodes");
        expectSingleError(replaced(kMinimal, "nodes: 2", "nodes: 8.5"),
                          "cluster.nodes: expected a whole number, got '8.5'", 4, 10,
                          "cluster.nodes");
        expectSingleError(replaced(kMinimal, "nodes: 2", "nodes: 3000000000"),
                          "cluster.nodes: expected a whole number from -2147483648 to "
                          "2147483647, got '3000000000'",
                          4, 10, "cluster.nodes");
        expectSingleError(replaced(kMinimal, "nodes: 2", "nodes: [2]"),
                          "cluster.nodes: expected a whole number, got a list", 4, 10,
                          "cluster.nodes");
        // An empty value points at its key.
        expectSingleError(replaced(kMinimal, "nodes: 2", "nodes:"),
                          "cluster.nodes: expected a whole number, got nothing", 4, 3,
                          "cluster.nodes");
        expectSingleError(replaced(kMinimal, "global_batch: 64",
                                   "global_batch: 64\n  "
                                   "total_tokens: lots"),
                          "training.total_tokens: expected a number, got 'lots'", 17, 17,
                          "training.total_tokens");
        expectSingleError(replaced(kMinimal, "ep: 8", "ep: 8\nrouting: {seed: -1}"),
                          "routing.seed: expected a whole number from 0 to 18446744073709551615, "
                          "got '-1'",
                          19, 17, "routing.seed");
        expectSingleError(replaced(kMinimal, "ep: 8", "ep: 8\n  order: tp-cp-ep-dp"),
                          "layout.order: expected tp, cp, ep, dp and pp each once, joined by '-' "
                          "(like tp-cp-ep-dp-pp), got 'tp-cp-ep-dp'",
                          19, 10, "layout.order");
        expectSingleError(replaced(kMinimal, "training:\n  global_batch: 64\n", "training: 5\n"),
                          "training: expected a map of fields, got '5'", 15, 11, "training");

        // Whole-valued floats are whole numbers; 1.0e12 is a float.
        const LoadResult r =
            loadText(replaced(replaced(kMinimal, "nodes: 2", "nodes: 2.0"), "global_batch: 64",
                              "global_batch: 6.4e1\n  total_tokens: 1.0e12"));
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        QCOMPARE(r.scenario->cluster.nodes, 2);
        QCOMPARE(r.scenario->training.global_batch, int64_t{64});
        QCOMPARE(r.scenario->training.total_tokens, 1.0e12);
    }

    void badEnumListsValues() {
        expectSingleError(replaced(kMinimal, "  nodes: 2\n",
                                   "  nodes: 2\n  scale_up:\n    "
                                   "domain: nod\n"),
                          "cluster.scale_up.domain: expected one of node | rack, got 'nod'", 6, 13,
                          "cluster.scale_up.domain");
        expectSingleError(replaced(kMinimal, "ep: 8", "ep: 8\n  schedule: 1f2b"),
                          "layout.schedule: expected one of gpipe | 1f1b | interleaved | "
                          "dualpipe, got '1f2b'",
                          19, 13, "layout.schedule");
        expectSingleError(replaced(kMinimal, "global_batch: 64",
                                   "global_batch: 64\n  "
                                   "optimizer: sgd"),
                          "training.optimizer: expected one of adam | adamw, got 'sgd'", 17, 14,
                          "training.optimizer");
    }

    void missingRequiredPointsAtParent() {
        expectSingleError(replaced(kMinimal, "  hidden: 256\n", ""),
                          "missing required field 'model.hidden'", 5, 1, "model.hidden");
        expectSingleError(replaced(kMinimal, "  top_k: 2\n", ""),
                          "missing required field 'model.top_k' (needed because model.experts "
                          "= 8)",
                          5, 1, "model.top_k");
        // A dense model needs the dense FFN size.
        expectSingleError(replaced(replaced(replaced(replaced(kMinimal, "  ffn_hidden: 1024\n", ""),
                                                     "  experts: 8\n", ""),
                                            "  top_k: 2\n  expert_ffn_hidden: 512\n", ""),
                                   "  ep: 8\n", "  tp: 1\n"),
                          "missing required field 'model.ffn_hidden' (needed because "
                          "model.experts = 0)",
                          5, 1, "model.ffn_hidden");
        expectSingleError(replaced(kMinimal, "ep: 8", "ep: 8\nrouting:\n  model: histogram"),
                          "missing required field 'routing.histogram_csv' (needed because "
                          "routing.model is histogram)",
                          19, 1, "routing.histogram_csv");
    }

    void unknownPresets() {
        expectSingleError(replaced(kMinimal, "gpu: h100-sxm", "gpu: h1000"),
                          "unknown GPU preset 'h1000' — known: h100-sxm, h800-sxm, h200-sxm, "
                          "b200, gb200, mi300x, a100-sxm",
                          3, 8, "cluster.gpu");
        expectSingleError(
            replaced(kMinimal, "  nodes: 2\n", "  nodes: 2\n  scale_out: {nic: cx9-1600g}\n"),
            "unknown NIC preset 'cx9-1600g' — known: cx7-400g, cx8-800g, eth-400g, cx6-200g", 5, 20,
            "cluster.scale_out.nic");
    }

    void mlaOnlyWithMlaAttention() {
        expectSingleError(
            replaced(kMinimal, "  heads: 8\n", "  heads: 8\n  mla: {kv_lora_rank: 64}\n"),
            "model.mla is set but model.attention is gqa; set attention: mla or "
            "remove mla",
            9, 3, "model.mla");
        const LoadResult r = loadText(replaced(kMinimal, "  heads: 8\n",
                                               "  heads: 8\n  attention: mla\n  mla: "
                                               "{kv_lora_rank: 64}\n"));
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        QCOMPARE(r.scenario->model.mla.kv_lora_rank, 64);
        QCOMPARE(r.scenario->model.mla.q_lora_rank, 1536); // default
    }

    void dpDerivation() {
        const LoadResult tp2 = loadText(replaced(kMinimal, "  ep: 8\n", "  tp: 2\n  ep: 8\n"));
        QVERIFY2(tp2.ok(), formatAll(tp2.diagnostics).c_str());
        QCOMPARE(tp2.scenario->layout.dp, 8); // 16 GPUs / tp 2

        expectSingleError(replaced(kMinimal, "  ep: 8\n", "  tp: 3\n  ep: 8\n"),
                          "layout.dp cannot be derived: tp*cp*pp = 3 does not divide the 16 GPUs",
                          17, 1, "layout.dp");
    }

    void everyProblemIsReported() {
        const std::string yaml = R"(name: three-problems
cluster:
  gpu: h100-sxm
  nodes: eight
  scale_out:
    nic: cx9
model:
  layers: 4
  hidden: 256
  heads: 8
  seq_len: 512
  vocab: 1000
  ffn_hidden: 1024
training:
  global_batch: 64
layuot:
  tp: 1
)";
        const LoadResult r = loadText(yaml);
        QVERIFY(!r.ok());
        QCOMPARE(formatAll(r.diagnostics),
                 std::string("test.yaml:4:10: error: cluster.nodes: expected a whole number, "
                             "got 'eight'\n"
                             "test.yaml:6:10: error: unknown NIC preset 'cx9' — known: cx7-400g, "
                             "cx8-800g, eth-400g, cx6-200g\n"
                             "test.yaml:16:1: error: unknown field 'layuot' — did you mean "
                             "'layout'?\n"));
        QVERIFY(hasErrors(r.diagnostics));
        QCOMPARE(r.source.fields.at("layuot").line, 16); // unknown keys are located too
    }

    void validationRunsAfterConversion() {
        // Converts cleanly but breaks a layout rule: the validator's diagnostic carries the
        // line of layout.ep from the source map.
        const LoadResult r = loadText(replaced(kMinimal, "ep: 8", "ep: 3"));
        QVERIFY(!r.ok());
        QVERIFY(hasErrors(r.diagnostics));
        const auto it = std::find_if(r.diagnostics.begin(), r.diagnostics.end(),
                                     [](const Diagnostic& d) { return d.field == "layout.ep"; });
        QVERIFY2(it != r.diagnostics.end(), formatAll(r.diagnostics).c_str());
        QCOMPARE(it->line, 18);
        QCOMPARE(it->file, std::string("test.yaml"));
    }

    void histogramCsv() {
        const LoadResult r = loadText(kEverything);
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        const std::vector<std::vector<double>> expected = {{4, 3, 2, 1}, {1, 1, 1, 5}};
        QVERIFY(r.scenario->routing.histogram == expected);
        QCOMPARE(r.scenario->routing.histogram_csv, std::string("routing_two_layers.csv"));

        const LoadResult bad =
            loadText(replaced(kEverything, "routing_two_layers.csv", "routing_bad.csv"));
        QVERIFY(!bad.ok());
        const std::string csv = std::string(MOE_TEST_DATA_DIR) + "/routing_bad.csv";
        QCOMPARE(formatAll(bad.diagnostics),
                 csv + ":3:4: error: expected a non-negative number, got 'x'\n" + csv +
                     ":4:3: error: expected a non-negative number, got '-2'\n" + csv +
                     ":5:5: error: expected a non-negative number, got nothing\n");
        QCOMPARE(bad.diagnostics[0].field, std::string("routing.histogram_csv"));

        const LoadResult missing =
            loadText(replaced(kEverything, "routing_two_layers.csv", "no_such.csv"));
        QCOMPARE(missing.diagnostics.size(), std::size_t{1});
        QCOMPARE(missing.diagnostics[0].message, "cannot read routing histogram '" +
                                                     std::string(MOE_TEST_DATA_DIR) +
                                                     "/no_such.csv': No such file or directory");
        QCOMPARE(missing.diagnostics[0].line, 64); // the histogram_csv key

        // With another popularity model the path is kept but not read: a warning, no error.
        const LoadResult unused =
            loadText(replaced(replaced(kEverything, "model: histogram", "model: zipf"),
                              "routing_two_layers.csv", "no_such.csv"));
        QVERIFY2(unused.ok(), formatAll(unused.diagnostics).c_str());
        QCOMPARE(unused.diagnostics.size(), std::size_t{1});
        QVERIFY(unused.diagnostics[0].severity == Diagnostic::Severity::warning);
        QCOMPARE(unused.diagnostics[0].format(),
                 std::string("test.yaml:64:3: warning: routing.histogram_csv is ignored because "
                             "routing.model is zipf"));
        QVERIFY(unused.scenario->routing.histogram.empty());
    }

    void everythingRoundTrips() {
        const LoadResult r = loadText(kEverything);
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        const Scenario& s = *r.scenario;
        QCOMPARE(s.cluster.gpu.name, std::string("H200 (derated)"));
        QCOMPARE(s.cluster.gpu.price_usd, 0.0);
        QCOMPARE(s.layout.dp, 8);
        QCOMPARE(s.layout.expert_placement.size(), std::size_t{2});
        QCOMPARE(s.cluster.gpu.sm_count, 100);
        QCOMPARE(s.layout.expert_placement[0].layer, -1);
        QVERIFY(s.layout.expert_placement[1].ep_ranks == std::vector<int>{2});
        QCOMPARE(r.source.fields.at("layout.expert_placement[1].layer").line, 61);
        QCOMPARE(r.source.fields.at("layout.expert_placement[1].layer").column, 34);

        const std::string yaml = toYaml(s);
        const LoadResult again = loadText(yaml);
        QVERIFY2(again.ok(), (formatAll(again.diagnostics) + yaml).c_str());
        QVERIFY2(*again.scenario == s, yaml.c_str());

        // Only what differs from the presets is written.
        QVERIFY2(yaml.find("gpu_overrides:\n    name: H200 (derated)\n    bf16_tflops: 900.5\n"
                           "    sm_count: 100\n    price_usd: 0\n") != std::string::npos,
                 yaml.c_str());
        QVERIFY(yaml.find("hbm_gb") == std::string::npos);
        QVERIFY(yaml.find("gpus_per_node") == std::string::npos);
        QVERIFY(yaml.find("  dp:") == std::string::npos); // derivable
        QVERIFY(yaml.find("total_tokens: 2.5e+11") != std::string::npos);
    }

    void minimalToYamlIsExact() {
        const LoadResult r = loadText(kMinimal);
        QVERIFY(r.ok());
        QCOMPARE(toYaml(*r.scenario),
                 std::string("# MoE Planner scenario. Fields equal to their preset or default are "
                             "left out.\n"
                             "name: small\n\n"
                             "cluster:\n  gpu: h100-sxm\n  nodes: 2\n\n"
                             "model:\n  layers: 4\n  hidden: 256\n  heads: 8\n  seq_len: 512\n"
                             "  vocab: 1000\n  ffn_hidden: 1024\n  experts: 8\n  top_k: 2\n"
                             "  expert_ffn_hidden: 512\n\n"
                             "training:\n  global_batch: 64\n\n"
                             "layout:\n  ep: 8\n"));
    }

    void editedScenarioRoundTrips() {
        // A scenario changed in code, as an editor would: values that no file has written yet.
        Scenario s = *loadText(kMinimal).scenario;
        s.description = "null";           // must be quoted to stay text
        s.model.name = "";                // empty stays empty
        s.cluster.gpu.hbm_tbps = 2.0 / 3; // needs all 17 digits
        s.cluster.nodes_per_rack = 1;
        s.routing.seed = 18446744073709551615ull;
        s.routing.zipf_alpha = 1e-300;
        const LoadResult again = loadText(toYaml(s));
        QVERIFY2(again.ok(), (formatAll(again.diagnostics) + toYaml(s)).c_str());
        QVERIFY2(*again.scenario == s, toYaml(s).c_str());
    }

    void everySampleRoundTrips() {
        const std::vector<std::string> samples = test::sampleFiles();
        QVERIFY(!samples.empty());
        for (const std::string& path : samples) {
            const LoadResult r = loadScenarioFile(path);
            QVERIFY2(r.ok(), (path + "\n" + formatAll(r.diagnostics)).c_str());
            const std::string yaml = toYaml(*r.scenario);
            const LoadResult again = loadScenarioText(
                yaml, path + " (saved)", std::filesystem::path(path).parent_path().string());
            QVERIFY2(again.ok(), (path + "\n" + formatAll(again.diagnostics) + yaml).c_str());
            QVERIFY2(*again.scenario == *r.scenario, (path + "\n" + yaml).c_str());
        }
    }

    void saveWritesAndReplaces() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath("scenario.yaml").toStdString();
        writeText(path, "old content\n");
        const Scenario& s = defaultScenario();
        QCOMPARE(saveScenarioFile(s, path), std::string());
        QCOMPARE(test::readFile(path), toYaml(s));
        QVERIFY(filesIn(dir.path()) == std::vector<std::string>{"scenario.yaml"});
        const LoadResult r = loadScenarioFile(path);
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        QVERIFY(*r.scenario == s);
    }

    void failedSaveKeepsTheOriginal() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath("scenario.yaml").toStdString();
        const std::string original = test::readFile(test::samplePath("dgx-h100-8x8-moe16.yaml"));
        writeText(path, original);

        // Make every write past 16 bytes fail (EFBIG), even for root, which ignores
        // permissions: the temporary file cannot be completed.
        rlimit saved{};
        QCOMPARE(getrlimit(RLIMIT_FSIZE, &saved), 0);
        const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
        rlimit tiny = saved;
        tiny.rlim_cur = 16;
        QCOMPARE(setrlimit(RLIMIT_FSIZE, &tiny), 0);
        const std::string error = saveScenarioFile(defaultScenario(), path);
        setrlimit(RLIMIT_FSIZE, &saved);
        std::signal(SIGXFSZ, previous_handler);

        QVERIFY2(error.starts_with("cannot write '" + path + ".tmp-"), error.c_str());
        QVERIFY2(error.ends_with("': File too large"), error.c_str());
        QCOMPARE(test::readFile(path), original);
        QVERIFY(filesIn(dir.path()) == std::vector<std::string>{"scenario.yaml"});

        // A directory in the way: nothing is replaced and no temporary file is left.
        const std::string taken = dir.filePath("taken").toStdString();
        std::filesystem::create_directory(taken);
        QCOMPARE(saveScenarioFile(defaultScenario(), taken),
                 "cannot write '" + taken + "': Is a directory");
        QVERIFY(std::filesystem::is_directory(taken));
        QVERIFY((filesIn(dir.path()) == std::vector<std::string>{"scenario.yaml", "taken"}));

        const std::string nowhere = dir.filePath("missing/scenario.yaml").toStdString();
        QCOMPARE(saveScenarioFile(defaultScenario(), nowhere),
                 "cannot create a temporary file beside '" + nowhere +
                     "': No such file or directory");
    }

    void unreadableFile() {
        const LoadResult r = loadScenarioFile("/nonexistent/scenario.yaml");
        QVERIFY(!r.ok());
        QCOMPARE(formatAll(r.diagnostics),
                 std::string("/nonexistent/scenario.yaml: error: cannot read file: No such file "
                             "or directory\n"));
    }

    void commandLineOverrides() {
        const std::string sample = test::samplePath("dgx-h100-8x8-moe16.yaml");
        const LoadResult r = loadScenarioWithOverrides(
            sample, {"layout.ep=16", "cluster.gpu_overrides.hbm_gb=141", "routing.model=uniform",
                     "layout.expert_placement=[{expert: 0, ep_ranks: [1, 2]}]",
                     "layout.expert_placement[0].layer=3"});
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        QCOMPARE(r.scenario->layout.ep, 16);
        QCOMPARE(r.scenario->cluster.gpu.hbm_gb, 141.0);
        QVERIFY(r.scenario->routing.model == PopularityModel::uniform);
        QCOMPARE(r.scenario->layout.expert_placement.size(), std::size_t{1});
        QVERIFY(r.scenario->layout.expert_placement[0].ep_ranks == (std::vector<int>{1, 2}));
        QCOMPARE(r.scenario->layout.expert_placement[0].layer, 3);
        QCOMPARE(r.scenario->model.experts, 16); // untouched

        const LoadResult bad = loadScenarioWithOverrides(
            sample, {"layout.ep", "layout.epp=2", "layout.ep=abc", "name.x=1"});
        QVERIFY(!bad.ok());
        QCOMPARE(formatAll(bad.diagnostics),
                 std::string("--set: error: malformed override 'layout.ep': expected "
                             "field=value, e.g. layout.ep=16\n"
                             "--set: error: override 'name.x=1': name is not a map\n"
                             "--set: error: layout.ep: expected a whole number, got 'abc'\n"
                             "--set: error: unknown field 'layout.epp' — did you mean "
                             "'layout.ep'?\n"));

        // Overrides go through validation like the file does.
        const LoadResult invalid = loadScenarioWithOverrides(sample, {"layout.ep=12"});
        QVERIFY(!invalid.ok());
        QVERIFY(std::any_of(invalid.diagnostics.begin(), invalid.diagnostics.end(),
                            [](const Diagnostic& d) { return d.field == "layout.ep"; }));
    }

    void diagnosticFormat() {
        Diagnostic d;
        d.message = "broken";
        QCOMPARE(d.format(), std::string("error: broken"));
        d.file = "a.yaml";
        QCOMPARE(d.format(), std::string("a.yaml: error: broken"));
        d.column = 7; // a column without a line is left out
        QCOMPARE(d.format(), std::string("a.yaml: error: broken"));
        d.line = 3;
        QCOMPARE(d.format(), std::string("a.yaml:3:7: error: broken"));
        d.severity = Diagnostic::Severity::warning;
        d.file.clear();
        QCOMPARE(d.format(), std::string("3:7: warning: broken"));
        QVERIFY(!hasErrors({d}));
        Diagnostic e;
        e.message = "bad";
        QVERIFY(hasErrors({d, e}));
        QCOMPARE(formatAll({d, e}), std::string("3:7: warning: broken\nerror: bad\n"));
        QCOMPARE(formatAll({}), std::string());
    }

    void enumNames() {
        QCOMPARE(std::string(toString(Precision::fp8)), std::string("fp8"));
        QCOMPARE(std::string(toString(FabricTopology::fat_tree)), std::string("fat-tree"));
        QCOMPARE(std::string(toString(PipelineSchedule::one_f_one_b)), std::string("1f1b"));
        QVERIFY(parsePipelineSchedule("dualpipe") == PipelineSchedule::dualpipe);
        QVERIFY(parseFabricTopology("rail-optimized") == FabricTopology::rail_optimized);
        QVERIFY(parseRecompute("selective") == Recompute::selective);
        QVERIFY(parsePopularityModel("histogram") == PopularityModel::histogram);
        QVERIFY(parsePopularityModel("published") == PopularityModel::published);
        QVERIFY(parseBalancingMethod("aux_free") == BalancingMethod::aux_free);
        QVERIFY(parseBalancingMethod("perfect") == BalancingMethod::perfect);
        QVERIFY(!parseBalancingMethod("aux-free"));
        QVERIFY(parseAttentionKind("mla") == AttentionKind::mla);
        QVERIFY(parseFabric("ethernet") == Fabric::ethernet);
        QVERIFY(parseScaleUpDomain("rack") == ScaleUpDomain::rack);
        QVERIFY(parseDim("ep") == Dim::ep);
        QVERIFY(!parsePrecision("BF16").has_value());
        QVERIFY(!parseFabric("").has_value());
        QCOMPARE(bytesPerElement(Precision::fp32), 4.0);
        QCOMPARE(bytesPerElement(Precision::bf16), 2.0);
        QCOMPARE(bytesPerElement(Precision::fp16), 2.0);
        QCOMPARE(bytesPerElement(Precision::fp8), 1.0);
    }

    void rankOrders() {
        const auto order = parseRankOrder("pp-dp-ep-cp-tp");
        QVERIFY(order.has_value());
        QVERIFY((*order == RankOrder{Dim::pp, Dim::dp, Dim::ep, Dim::cp, Dim::tp}));
        QCOMPARE(toString(*order), std::string("pp-dp-ep-cp-tp"));
        QCOMPARE(toString(LayoutSpec{}.order), std::string("tp-cp-ep-dp-pp"));
        for (const char* bad : {"", "tp-cp-ep-dp", "tp-tp-ep-dp-pp", "tp-cp-ep-dp-pp-tp",
                                "tp-cp-ep-dp-pp-", "tp--cp-ep-dp-pp", "tp,cp,ep,dp,pp"})
            QVERIFY2(!parseRankOrder(bad).has_value(), bad);

        LayoutSpec layout;
        layout.tp = 2;
        layout.cp = 3;
        layout.ep = 4;
        layout.dp = 5;
        layout.pp = 6;
        QCOMPARE(degree(layout, Dim::tp), 2);
        QCOMPARE(degree(layout, Dim::cp), 3);
        QCOMPARE(degree(layout, Dim::ep), 4);
        QCOMPARE(degree(layout, Dim::dp), 5);
        QCOMPARE(degree(layout, Dim::pp), 6);
    }
};

QTEST_GUILESS_MAIN(TestScenarioIo)
#include "test_scenario_io.moc"
