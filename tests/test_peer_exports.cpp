// Peers: Calculon (export, import, its own example files, and the real Calculon run on our export
// when it is available), ASTRA-sim 2.0 network/system files, and the draw.io diagram (validated as
// mxGraph XML with pugixml).
#include "test_support.h"

#include "moe/io/astra_sim.h"
#include "moe/io/calculon.h"
#include "moe/io/drawio.h"
#include "moe/scenario_io.h"
#include "moe/topology.h"

#include <QtTest>

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <pugixml.hpp>
#include <yaml-cpp/yaml.h>

#include <map>
#include <set>

using namespace moe;
using namespace moe::io;

namespace {

Scenario sample(const char* name) {
    const LoadResult r = loadScenarioFile(test::samplePath(name));
    if (!r.ok())
        qWarning("%s", formatAll(r.diagnostics).c_str());
    return r.scenario.value_or(Scenario{});
}

QJsonObject object(const std::string& text) {
    return QJsonDocument::fromJson(QByteArray::fromStdString(text)).object();
}

std::string calculonData(const char* name) {
    return test::readFile(std::string(MOE_TEST_DATA_DIR) + "/calculon/" + name);
}

bool writeFile(const QString& path, const std::string& text) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(text.data(), static_cast<qint64>(text.size())) ==
                                               static_cast<qint64>(text.size());
}

/// How to run Calculon here: {program, arguments before "llm", PYTHONPATH}, or empty.
struct CalculonCommand {
    QString program;
    QStringList prefix;
    QString pythonpath;
};
/// MOE_CALCULON_PYTHON, else Debian's interpreter (its python3-numpy), else python3 on PATH.
QString calculonPython() {
    const QString chosen = qEnvironmentVariable("MOE_CALCULON_PYTHON");
    if (!chosen.isEmpty())
        return chosen;
    if (QFile::exists(QStringLiteral("/usr/bin/python3")))
        return QStringLiteral("/usr/bin/python3");
    return QStandardPaths::findExecutable(QStringLiteral("python3"));
}

std::optional<CalculonCommand> findCalculon() {
    const QString dir = qEnvironmentVariable("MOE_CALCULON_DIR");
    const QString python = calculonPython();
    if (!dir.isEmpty() && !python.isEmpty() && QFile::exists(dir + "/bin/calculon"))
        return CalculonCommand{python, {dir + "/bin/calculon"}, dir};
    const QString installed = QStandardPaths::findExecutable(QStringLiteral("calculon"));
    if (!installed.isEmpty())
        return CalculonCommand{installed, {}, {}};
    return std::nullopt;
}

} // namespace

class TestPeerExports : public QObject {
    Q_OBJECT

private slots:
    // Calculon -------------------------------------------------------------------------------

    void calculonDenseExport() {
        const CalculonExport e = exportCalculon(sample("dense-70b-64xh100.yaml"));
        QVERIFY2(e.files, formatAll(e.diagnostics).c_str());
        const QJsonObject model = object(e.files->model_json);
        QCOMPARE(model["hidden"].toInt(), 8192);
        // SwiGLU 28672 = Calculon's 2-matrix MLP of 1.5 x 28672 = 43008 (same FLOPs, weights).
        QCOMPARE(model["feedforward"].toInt(), 43008);
        QCOMPARE(model["seq_size"].toInt(), 8192);
        QCOMPARE(model["attn_heads"].toInt(), 64);
        QCOMPARE(model["attn_size"].toInt(), 128);
        QCOMPARE(model["num_blocks"].toInt(), 80);
        const QJsonObject exe = object(e.files->execution_json);
        QCOMPARE(exe.keys().size(), 23); // exactly Calculon's Execution.fields()
        QCOMPARE(exe["num_procs"].toInt(), 64);
        QCOMPARE(exe["tensor_par"].toInt(), 8);
        QCOMPARE(exe["pipeline_par"].toInt(), 4);
        QCOMPARE(exe["data_par"].toInt(), 2);
        QCOMPARE(exe["tensor_par_net"].toInt(), 0); // TP8 inside a node: NVLink
        QCOMPARE(exe["pipeline_par_net"].toInt(), 1);
        QCOMPARE(exe["data_par_net"].toInt(), 1);
        QCOMPARE(exe["batch_size"].toInt(), 128);
        QCOMPARE(exe["pipeline_interleaving"].toInt(), 5);
        QCOMPARE(exe["activation_recompute"].toString(), QStringLiteral("attn_only"));
        QCOMPARE(exe["datatype"].toString(), QStringLiteral("bfloat16"));
        QCOMPARE(exe["optimizer_sharding"].toBool(), true);
        const QJsonObject sys = object(e.files->system_json);
        QCOMPARE(sys["matrix"]["bfloat16"]["tflops"].toDouble(), 989.0);
        // 80 GB = 80e9 / 2^30 GiB in Calculon's units.
        QCOMPARE(sys["mem1"]["GiB"].toDouble(), 80e9 / 1073741824.0);
        QCOMPARE(sys["mem1"]["GBps"].toDouble(), 3350.0);
        const QJsonArray nets = sys["networks"].toArray();
        QCOMPARE(nets.size(), 2);
        QCOMPARE(nets[0]["bandwidth"].toDouble(), 450.0);
        QCOMPARE(nets[0]["size"].toInt(), 8);
        // Per GPU: 8 x 400 Gb/s NICs for 8 GPUs = 50 GB/s at line rate.
        QCOMPARE(nets[1]["bandwidth"].toDouble(), 50.0);
        QCOMPARE(nets[1]["size"].toInt(), 64);
    }

    void calculonMoeIsTheDenseEquivalent() {
        const CalculonExport e = exportCalculon(defaultScenario());
        QVERIFY(e.files);
        // 24 MoE layers of top-2 x 8192: one token runs 16384 of SwiGLU, 1.5 x = 24576.
        QCOMPARE(object(e.files->model_json)["feedforward"].toInt(), 24576);
        // DeepSeek-V3: a MoE layer's token runs 8 x 2048 routed + 2048 shared = 18432, the same
        // as the 3 dense layers' 18432, so the mean is 18432 and x 1.5 = 27648 (TP 1).
        const CalculonExport ds = exportCalculon(sample("deepseek-v3-2048xh800.yaml"));
        QVERIFY(ds.files);
        QCOMPARE(object(ds.files->model_json)["feedforward"].toInt(), 27648);
        QCOMPARE(object(ds.files->model_json)["attn_size"].toInt(), 128); // MLA v_head_dim
        std::string notes;
        for (const std::string& n : ds.files->notes)
            notes += n + "\n";
        QVERIFY2(notes.find("MoE: Calculon has no experts or routing") != std::string::npos,
                 notes.c_str());
        QVERIFY(notes.find("MLA: exported as multi-head attention") != std::string::npos);
        QVERIFY(notes.find("schedule dualpipe: Calculon runs 1F1B") != std::string::npos);
    }

    void calculonRoundTripOfADenseSample() {
        const Scenario s = sample("dense-70b-64xh100.yaml");
        const CalculonExport e = exportCalculon(s);
        QVERIFY(e.files);
        CalculonImportOptions o;
        o.base = s;
        const CalculonImport r =
            importCalculon(e.files->model_json, e.files->execution_json, e.files->system_json, o);
        QVERIFY2(r.scenario, formatAll(r.diagnostics).c_str());
        QVERIFY(r.scenario->cluster == s.cluster);
        QVERIFY(r.scenario->layout == s.layout);
        QVERIFY(r.scenario->training == s.training);
        // What Calculon cannot carry: GQA's 8 KV heads come back as multi-head attention.
        ModelSpec expected = s.model;
        expected.kv_heads = expected.heads;
        expected.name = "model";
        QVERIFY(r.scenario->model == expected);
    }

    void importsCalculonsOwnExample() {
        CalculonImportOptions o;
        o.model_label = "megatron-1T.json";
        o.base = defaultScenario();
        const CalculonImport r = importCalculon(calculonData("megatron-1T.json"),
                                                calculonData("3072_t4_p64_d12_mbs4_full.json"),
                                                calculonData("a100_80g.json"), o);
        QVERIFY2(r.scenario, formatAll(r.diagnostics).c_str());
        const Scenario& s = *r.scenario;
        QCOMPARE(s.model.name, std::string("megatron-1T"));
        QCOMPARE(s.model.layers, 128);
        QCOMPARE(s.model.hidden, 25600);
        QCOMPARE(s.model.heads, 160);
        QCOMPARE(s.model.head_dim, 0); // 25600 / 160 = 160 = attn_size
        QCOMPARE(s.model.seq_len, 2048);
        // 2/3 of 102400 = 68266.7, to a multiple of TP 4: 68268.
        QCOMPARE(s.model.ffn_hidden, 68268);
        QVERIFY(!s.model.isMoe());
        QCOMPARE(s.model.weight_precision, Precision::fp16);
        QCOMPARE(s.layout.tp, 4);
        QCOMPARE(s.layout.pp, 64);
        QCOMPARE(s.layout.dp, 12);
        QCOMPARE(s.training.global_batch, int64_t(3072));
        QCOMPARE(s.training.micro_batch, 4);
        QCOMPARE(s.training.recompute, Recompute::full);
        QCOMPARE(s.training.zero_stage, 1);
        // The A100 system: 3072 GPUs in nodes of 8 (its NVLink tier), 312 TFLOPS, 80 GiB.
        QCOMPARE(s.cluster.gpuCount(), 3072);
        QCOMPARE(s.cluster.gpus_per_node, 8);
        QCOMPARE(s.cluster.gpu.bf16_tflops, 312.0);
        QCOMPARE(s.cluster.gpu.hbm_gb, 85.8993459);
        QCOMPARE(s.cluster.gpu.hbm_tbps, 2.048);
    }

    void calculonBadInputs() {
        CalculonImportOptions o;
        o.base = defaultScenario();
        const std::string model = calculonData("megatron-1T.json");
        const std::string exe = calculonData("3072_t4_p64_d12_mbs4_full.json");
        const std::string sys = calculonData("a100_80g.json");
        CalculonImport r = importCalculon("{\n  \"hidden\": 4,\n  oops\n}\n", exe, sys, o);
        QVERIFY(!r.scenario);
        QVERIFY2(formatAll(r.diagnostics).rfind("model.json:3: error: not valid JSON: ", 0) == 0,
                 formatAll(r.diagnostics).c_str());
        std::string bad = exe;
        bad.replace(bad.find("\"tensor_par\": 4"), 15, "\"tensor_par\": \"4\"");
        r = importCalculon(model, bad, sys, o);
        QVERIFY(!r.scenario);
        QCOMPARE(formatAll(r.diagnostics),
                 std::string("execution.json:3: error: \"tensor_par\": expected a whole number of "
                             "at least 1, got \"4\"\n"));
        bad = exe;
        bad.replace(bad.find("\"num_procs\": 3072"), 17, "\"num_procs\": 3000");
        r = importCalculon(model, bad, sys, o);
        QVERIFY(!r.scenario);
        QVERIFY2(formatAll(r.diagnostics)
                         .find("\"num_procs\" 3000 is not tensor x pipeline x "
                               "data = 3072") != std::string::npos,
                 formatAll(r.diagnostics).c_str());
        r = importCalculon("{\"hidden\": 4}", exe, sys, o);
        QVERIFY(formatAll(r.diagnostics).find("model.json: error: missing key \"feedforward\"") !=
                std::string::npos);
    }

    void runsInCalculonItself() {
        const std::optional<CalculonCommand> calculon = findCalculon();
        if (!calculon)
            QSKIP("Calculon is not installed: set MOE_CALCULON_DIR to a checkout of "
                  "https://github.com/calculon-ai/calculon (it runs with Debian's python3, "
                  "python3-numpy, python3-pandas and python3-psutil), or put 'calculon' on PATH");
        if (calculon->prefix.size() == 1) { // run through python: are its modules there?
            QProcess check;
            check.start(calculon->program, {"-c", "import numpy, pandas, psutil"});
            if (!check.waitForFinished(30000) || check.exitCode() != 0)
                QSKIP(qPrintable(calculon->program +
                                 " lacks numpy, pandas or psutil, which Calculon imports: install "
                                 "python3-numpy python3-pandas python3-psutil (Debian) or set "
                                 "MOE_CALCULON_PYTHON"));
        }
        QTemporaryDir dir;
        for (const char* name :
             {"dense-70b-64xh100.yaml", "dgx-h100-8x8-moe16.yaml", "mixtral-8x7b-32xh100.yaml"}) {
            const CalculonExport e = exportCalculon(sample(name));
            QVERIFY(e.files);
            const QString base = dir.filePath(QString::fromUtf8(name));
            QVERIFY(writeFile(base + ".model.json", e.files->model_json));
            QVERIFY(writeFile(base + ".execution.json", e.files->execution_json));
            QVERIFY(writeFile(base + ".system.json", e.files->system_json));
            QProcess p;
            if (!calculon->pythonpath.isEmpty()) {
                QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
                env.insert(QStringLiteral("PYTHONPATH"), calculon->pythonpath);
                p.setProcessEnvironment(env);
            }
            p.start(calculon->program,
                    calculon->prefix + QStringList{"llm", base + ".model.json",
                                                   base + ".execution.json", base + ".system.json",
                                                   base + ".out.json"});
            QVERIFY(p.waitForFinished(120000));
            const QString output =
                QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
            QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0,
                     qPrintable(QStringLiteral("%1: %2").arg(QString::fromUtf8(name), output)));
            QFile out(base + ".out.json");
            QVERIFY(out.open(QIODevice::ReadOnly));
            const QJsonObject stats = QJsonDocument::fromJson(out.readAll()).object();
            const double step_s = stats["total_time"].toDouble();
            QVERIFY2(step_s > 0, name);
            qInfo("%s: Calculon's step %.2f s, %.2f sequences/s", name, step_s,
                  stats["sample_rate"].toDouble());
        }
    }

    // ASTRA-sim ------------------------------------------------------------------------------

    void astraSimNetworkAndSystem() {
        const AstraSimExport e = exportAstraSim(sample("deepseek-v3-2048xh800.yaml"));
        QVERIFY2(e.files, formatAll(e.diagnostics).c_str());
        // The keys and list lengths ASTRA-sim's NetworkParser requires.
        const YAML::Node net = YAML::Load(e.files->network_yaml);
        QCOMPARE(net.size(), std::size_t(4));
        for (const char* key : {"topology", "npus_count", "bandwidth", "latency"}) {
            QVERIFY2(net[key] && net[key].IsSequence() && net[key].size() == 2, key);
        }
        QCOMPARE(net["topology"][0].as<std::string>(), std::string("Switch"));
        QCOMPARE(net["npus_count"][0].as<int>(), 8);   // one H800 node's NVLink
        QCOMPARE(net["npus_count"][1].as<int>(), 256); // nodes, one switch per rail
        QCOMPARE(net["npus_count"][0].as<int>() * net["npus_count"][1].as<int>(), 2048);
        QCOMPARE(net["bandwidth"][0].as<double>(), 200.0); // H800 NVLink, GB/s per direction
        QCOMPARE(net["bandwidth"][1].as<double>(), 48.0);  // one 400G NIC per GPU, achievable
        QCOMPARE(net["latency"][1].as<double>(), 4000.0);  // ns
        const QJsonObject sys = object(e.files->system_json);
        for (const char* key : {"all-reduce-implementation", "all-gather-implementation",
                                "reduce-scatter-implementation", "all-to-all-implementation"})
            QCOMPARE(sys[key].toArray().size(), 2); // one algorithm per dimension
        QCOMPARE(sys["all-to-all-implementation"].toArray()[0].toString(),
                 QStringLiteral("direct"));
        QCOMPARE(sys["local-mem-bw"].toDouble(), 3350.0);
        QCOMPARE(sys["peak-perf"].toDouble(), 1979.0); // FP8 GEMMs
        QCOMPARE(object(e.files->remote_memory_json)["memory-type"].toString(),
                 QStringLiteral("NO_MEMORY_EXPANSION"));

        // A GB200 NVL72 sample: the rack is the first dimension; 2048 GPUs = 32 racks of 64.
        const AstraSimExport gb = exportAstraSim(sample("gb200-nvl72-deepseek-v3.yaml"));
        QVERIFY(gb.files);
        const YAML::Node g = YAML::Load(gb.files->network_yaml);
        QCOMPARE(g["npus_count"][0].as<int>(), 64);
        QCOMPARE(g["npus_count"][1].as<int>(), 32);
        QCOMPARE(g["bandwidth"][0].as<double>(), 900.0);

        // One node: one dimension; one GPU: an error (ASTRA-sim needs two NPUs a dimension).
        Scenario one = defaultScenario();
        one.cluster.nodes = 1;
        QCOMPARE(YAML::Load(exportAstraSim(one).files->network_yaml)["topology"].size(),
                 std::size_t(1));
        one.cluster.gpus_per_node = 1;
        QVERIFY(!exportAstraSim(one).files);
    }

    // draw.io --------------------------------------------------------------------------------

    void drawioIsAValidDiagramOfTheGraph() {
        const Scenario s = defaultScenario();
        const std::string xml = exportDrawio(s);
        pugi::xml_document doc;
        QVERIFY(doc.load_string(xml.c_str()));
        const pugi::xml_node model = doc.child("mxfile").child("diagram").child("mxGraphModel");
        QVERIFY(model);
        const pugi::xml_node root = model.child("root");
        std::map<std::string, pugi::xml_node> cells;
        int edges = 0;
        std::map<std::string, int> prefixes;
        for (const pugi::xml_node cell : root.children("mxCell")) {
            const std::string id = cell.attribute("id").value();
            QVERIFY2(cells.emplace(id, cell).second, ("duplicate id " + id).c_str());
        }
        for (const auto& [id, cell] : cells) {
            if (id == "0")
                continue;
            QVERIFY2(cells.count(cell.attribute("parent").value()), id.c_str());
            if (cell.attribute("edge").as_bool()) {
                ++edges;
                QVERIFY2(cells.count(cell.attribute("source").value()), id.c_str());
                QVERIFY2(cells.count(cell.attribute("target").value()), id.c_str());
                QVERIFY(cell.child("mxGeometry").attribute("relative").as_bool());
            } else if (cell.attribute("vertex").as_bool()) {
                const pugi::xml_node g = cell.child("mxGeometry");
                QVERIFY2(g && g.attribute("width").as_int() > 0 &&
                             g.attribute("height").as_int() > 0,
                         id.c_str());
                ++prefixes[id.substr(0, id.find('-'))];
            }
        }
        const HardwareGraph graph = buildHardwareGraph(s.cluster);
        QCOMPARE(prefixes["gpu"], 64);
        QCOMPARE(prefixes["nic"], 64);
        QCOMPARE(prefixes["nvswitch"], 8);
        QCOMPARE(prefixes["node"], 8);
        QCOMPARE(prefixes["rack"], 2);
        QCOMPARE(prefixes["leaf"], graph.leaves);
        QCOMPARE(prefixes["spine"], graph.spines);
        // Every link of the graph, parallel uplinks merged into one labelled connector.
        std::set<std::pair<int, int>> pairs;
        for (const Link& l : graph.links)
            pairs.insert({l.a, l.b});
        QCOMPARE(edges, static_cast<int>(pairs.size()));
        QVERIFY(xml.find("shape=mxgraph.networks.switch") != std::string::npos);
        QVERIFY(xml.find("value=\"450 GB/s\"") != std::string::npos); // an NVLink connector
        // Names are escaped, not copied as markup.
        Scenario odd = s;
        odd.name = "a&b <x>";
        pugi::xml_document doc2;
        QVERIFY(doc2.load_string(exportDrawio(odd).c_str()));
        QCOMPARE(std::string(doc2.child("mxfile").child("diagram").attribute("name").value())
                     .substr(0, 7),
                 std::string("a&b <x>"));
    }

    void drawioCompactsLargeClusters() {
        const Scenario s = sample("deepseek-v3-2048xh800.yaml");
        const std::string xml = exportDrawio(s);
        pugi::xml_document doc;
        QVERIFY(doc.load_string(xml.c_str()));
        int gpu_boxes = 0, node_gpu_boxes = 0;
        for (const pugi::xpath_node& x : doc.select_nodes("//mxCell[@vertex='1']")) {
            const std::string id = x.node().attribute("id").value();
            gpu_boxes += id.rfind("gpu-", 0) == 0;
            node_gpu_boxes += id.rfind("gpus-", 0) == 0;
        }
        QCOMPARE(gpu_boxes, 0);
        QCOMPARE(node_gpu_boxes, 256); // one "8 x GPU" box per node
        QVERIFY(xml.find("value=\"8 x GPU\"") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestPeerExports)
#include "test_peer_exports.moc"
