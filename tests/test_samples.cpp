// The sample scenarios in sample_clusters/: each one loads without errors, survives a save and
// reload unchanged, and carries the figures its header comment claims.
#include "moe/model_costs.h"
#include "moe/scenario_io.h"
#include "test_support.h"

#include <QtTest>

#include <cmath>
#include <filesystem>
#include <optional>
#include <string>

using namespace moe;

namespace {

std::string baseName(const std::string& path) {
    return std::filesystem::path(path).stem().string();
}

/// Names the top-level parts of two scenarios that differ, so a failed comparison says where.
std::string differences(const Scenario& a, const Scenario& b) {
    std::string out;
    auto note = [&](bool same, const char* part) {
        if (!same)
            out += std::string(out.empty() ? "" : ", ") + part;
    };
    note(a.name == b.name, "name");
    note(a.description == b.description, "description");
    note(a.cluster.gpu == b.cluster.gpu, "cluster.gpu");
    note(a.cluster.nic == b.cluster.nic, "cluster.scale_out.nic");
    note(a.cluster == b.cluster, "cluster");
    note(a.model == b.model, "model");
    note(a.training == b.training, "training");
    note(a.layout == b.layout, "layout");
    note(a.routing == b.routing, "routing");
    return out.empty() ? "none" : out;
}

/// Loads a sample by file name; fails the calling test (returning nullopt) with the
/// diagnostics when it does not load.
std::optional<Scenario> loadSample(const std::string& name) {
    const LoadResult r = loadScenarioFile(test::samplePath(name));
    if (!r.ok()) {
        qWarning("%s", formatAll(r.diagnostics).c_str());
        return std::nullopt;
    }
    return r.scenario;
}

} // namespace

class TestSamples : public QObject {
    Q_OBJECT

private:
    void addSampleRows() {
        QTest::addColumn<QString>("path");
        for (const std::string& path : test::sampleFiles())
            QTest::newRow(baseName(path).c_str()) << QString::fromStdString(path);
    }

private slots:
    void theExpectedSamplesExist() {
        const std::vector<std::string> files = test::sampleFiles();
        QStringList names;
        for (const std::string& f : files)
            names << QString::fromStdString(baseName(f));
        for (const char* expected :
             {"dgx-h100-8x8-moe16", "16gpu-nodes-4x16-moe16", "deepseek-v3-2048xh800",
              "gb200-nvl72-deepseek-v3", "b200-1024-deepseek-v3", "mixtral-8x7b-32xh100",
              "dense-70b-64xh100", "dgx-a100-1024-gpt3-175b"}) {
            QVERIFY2(names.contains(QString::fromLatin1(expected)), expected);
        }
    }

    void loadsWithoutErrors_data() { addSampleRows(); }
    void loadsWithoutErrors() {
        QFETCH(QString, path);
        const LoadResult r = loadScenarioFile(path.toStdString());
        const std::string diagnostics = formatAll(r.diagnostics);
        QVERIFY2(!hasErrors(r.diagnostics), diagnostics.c_str());
        QVERIFY2(r.ok(), diagnostics.c_str());
        if (!r.diagnostics.empty())
            qInfo("warnings for %s:\n%s", qPrintable(path), diagnostics.c_str());
    }

    // The header comment is the sample's documentation: it must start with the sample's own
    // name, and the scenario's name must match the file so the UI and the CLI agree.
    void headerAndNameMatchTheFile_data() { addSampleRows(); }
    void headerAndNameMatchTheFile() {
        QFETCH(QString, path);
        const std::string file = path.toStdString();
        const std::string text = test::readFile(file);
        const std::string expected_header = "# " + baseName(file) + " \xE2\x80\x94 ";
        QVERIFY2(text.rfind(expected_header, 0) == 0, "first line must be '# <name> — <what>'");
        const LoadResult r = loadScenarioFile(file);
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        QCOMPARE(QString::fromStdString(r.scenario->name), QString::fromStdString(baseName(file)));
        QVERIFY(!r.scenario->description.empty());
    }

    void roundTripsThroughSave_data() { addSampleRows(); }
    void roundTripsThroughSave() {
        QFETCH(QString, path);
        const LoadResult first = loadScenarioFile(path.toStdString());
        QVERIFY2(first.ok(), formatAll(first.diagnostics).c_str());

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string saved = dir.filePath(QFileInfo(path).fileName()).toStdString();
        const std::string error = saveScenarioFile(*first.scenario, saved);
        QVERIFY2(error.empty(), error.c_str());
        QCOMPARE(QString::fromStdString(test::readFile(saved)),
                 QString::fromStdString(toYaml(*first.scenario)));

        const LoadResult second = loadScenarioFile(saved);
        const std::string yaml = toYaml(*first.scenario);
        QVERIFY2(second.ok(), (formatAll(second.diagnostics) + "\n" + yaml).c_str());
        const std::string message =
            "differs after save and reload in: " + differences(*first.scenario, *second.scenario) +
            "\n" + yaml;
        QVERIFY2(*first.scenario == *second.scenario, message.c_str());
        // Saving is a fixed point: the reloaded scenario writes the same text.
        QCOMPARE(QString::fromStdString(toYaml(*second.scenario)), QString::fromStdString(yaml));
    }

    void defaultSampleIsTheBuiltinDefault() {
        const auto sample = loadSample("dgx-h100-8x8-moe16.yaml");
        QVERIFY(sample);
        QVERIFY2(*sample == defaultScenario(),
                 ("differs in: " + differences(*sample, defaultScenario())).c_str());
        const LoadResult embedded = loadScenarioText(defaultScenarioYaml(), "<default>");
        QVERIFY2(embedded.ok(), formatAll(embedded.diagnostics).c_str());
        QVERIFY(*embedded.scenario == *sample);
        // The figures the default's header describes.
        QCOMPARE(sample->cluster.gpuCount(), 64);
        QCOMPARE(sample->layout.expertDp(), 8);
        QCOMPARE(sample->cluster.gpusPerScaleUpDomain(), 8);
    }

    void sixteenGpuNodes() {
        const auto s = loadSample("16gpu-nodes-4x16-moe16.yaml");
        QVERIFY(s);
        QCOMPARE(s->cluster.gpuCount(), 64);
        QCOMPARE(s->cluster.nodes, 4);
        QCOMPARE(s->cluster.gpusPerScaleUpDomain(), 16);
        QCOMPARE(s->cluster.nics_per_node, 16);
        QCOMPARE(s->layout.ep, 16);
        QCOMPARE(s->layout.expertDp(), 4); // 64 / 16
        // Same model and training as the default; the routing differs only in its balancing
        // method (the sample shows the textbook layout under a loss-free balanced router).
        QVERIFY(s->model == defaultScenario().model);
        QVERIFY(s->training == defaultScenario().training);
        RoutingSpec routing = s->routing;
        QCOMPARE(routing.balancing, BalancingMethod::aux_free);
        QCOMPARE(defaultScenario().routing.balancing, BalancingMethod::aux_loss);
        routing.balancing = defaultScenario().routing.balancing;
        QVERIFY(routing == defaultScenario().routing);
    }

    void deepseekV3OnH800() {
        const auto s = loadSample("deepseek-v3-2048xh800.yaml");
        QVERIFY(s);
        QCOMPARE(s->cluster.gpuCount(), 2048);
        QCOMPARE(s->cluster.gpu.preset, std::string("h800-sxm"));
        QCOMPARE(s->cluster.gpu.scale_up_gbps, 200.0); // catalog: 400 GB/s bidirectional
        QCOMPARE(s->cluster.nic.preset, std::string("cx7-400g"));
        QCOMPARE(s->cluster.gpu_hour_usd, 2.0);
        QCOMPARE(s->model.moeLayers(), 58); // 61 layers, first 3 dense
        QCOMPARE(s->model.attention, AttentionKind::mla);
        QCOMPARE(s->model.mla.kv_lora_rank, 512);
        QCOMPARE(s->model.mla.qk_rope_head_dim, 64);
        QCOMPARE(s->model.experts, 256);
        QCOMPARE(s->model.top_k, 8);
        QCOMPARE(s->model.effectiveSharedFfn(), 2048);
        QCOMPARE(s->model.dispatch_precision, Precision::fp8);
        QCOMPARE(s->model.compute_precision, Precision::fp8);
        QCOMPARE(s->model.weight_precision, Precision::bf16);
        QCOMPARE(s->model.grad_precision, Precision::fp32);
        QCOMPARE(s->training.total_tokens, 14.8e12);
        QCOMPARE(s->training.global_batch, int64_t{15360});
        QCOMPARE(s->layout.pp, 16);
        QCOMPARE(s->layout.ep, 64);
        QCOMPARE(s->layout.expertDp(), 2); // 128 / 64
        QCOMPARE(s->layout.schedule, PipelineSchedule::dualpipe);
        QCOMPARE(s->layout.max_nodes_per_token, 4);
        QCOMPARE(toString(s->layout.order), std::string("tp-cp-ep-dp-pp"));
        // The report's method (sections 2.1.2, 4.2): auxiliary-loss-free balancing, sampled
        // from its published spread; no Zipf skew, no blend.
        QCOMPARE(s->routing.balancing, BalancingMethod::aux_free);
        QCOMPARE(s->routing.model, PopularityModel::published);
        QCOMPARE(s->routing.balance, 0.0);
    }

    void gb200Nvl72() {
        const auto s = loadSample("gb200-nvl72-deepseek-v3.yaml");
        QVERIFY(s);
        QCOMPARE(s->cluster.gpuCount(), 2048);
        QCOMPARE(s->cluster.gpu.preset, std::string("gb200"));
        QCOMPARE(s->cluster.scale_up_domain, ScaleUpDomain::rack);
        QCOMPARE(s->cluster.gpusPerScaleUpDomain(), 64); // 16 active trays x 4
        QCOMPARE(s->cluster.rackCount(), 32);
        QCOMPARE(s->cluster.nic.preset, std::string("cx8-800g"));
        QCOMPARE(s->cluster.nics_per_node, 4);
        QCOMPARE(s->layout.ep, s->cluster.gpusPerScaleUpDomain()); // EP = one NVLink domain
        QCOMPARE(s->layout.expertDp(), 2);
    }

    void gpt3OnDgxA100() {
        // Megatron-LM's 175B example: 1024 A100 = 128 DGX A100, TP8 x PP16 x DP8, batch 1536.
        const auto s = loadSample("dgx-a100-1024-gpt3-175b.yaml");
        QVERIFY(s);
        QCOMPARE(s->cluster.gpuCount(), 1024);
        QCOMPARE(s->cluster.gpu.preset, std::string("a100-sxm"));
        QCOMPARE(s->cluster.nic.preset, std::string("cx6-200g"));
        QCOMPARE(s->layout.tp * s->layout.pp * s->layout.dp, 1024);
        QCOMPARE(s->training.global_batch, 1536);
        // GPT-3's GeLU MLP (2 x h x 4h), Megatron's dropout 0.1 and unfused attention:
        // 96 x (4h^2 + 8h^2 + 2h) + 2 x 51200 x h (untied embedding and head) = 174.0B +
        // 1.26B = 175.2B parameters.
        const double h = 12288;
        QCOMPARE(s->model.ffn_hidden, 4 * 12288);
        QCOMPARE(s->model.mlp, MlpKind::gelu);
        QCOMPARE(s->model.dropout, 0.1);
        QCOMPARE(s->training.attention_kernel, AttentionKernel::unfused);
        const double expected = 96 * (12 * h * h + 2 * h) + 2 * 51200 * h;
        QVERIFY(std::abs(countParams(s->model).total - expected) / expected < 1e-3);
    }

    void b200() {
        const auto s = loadSample("b200-1024-deepseek-v3.yaml");
        QVERIFY(s);
        QCOMPARE(s->cluster.gpuCount(), 1024);
        QCOMPARE(s->cluster.gpu.preset, std::string("b200"));
        QCOMPARE(s->cluster.gpu.hbm_gb, 180.0);
        QCOMPARE(s->layout.dp, 64);
        QCOMPARE(s->layout.expertDp(), 1); // 64 / 64
    }

    // The three DeepSeek-V3 samples differ only in hardware and layout, so comparisons between
    // them are about the machine, not the workload.
    void deepseekVariantsShareTheWorkload() {
        const auto h800 = loadSample("deepseek-v3-2048xh800.yaml");
        const auto gb200 = loadSample("gb200-nvl72-deepseek-v3.yaml");
        const auto b200 = loadSample("b200-1024-deepseek-v3.yaml");
        QVERIFY(h800 && gb200 && b200);
        // Except the FP8 scaling recipe, which follows the GPU: DeepSeek's blockwise on H800,
        // MXFP8 (hardware block scales) on Blackwell.
        QCOMPARE(h800->model.fp8_recipe, Fp8Recipe::blockwise);
        QCOMPARE(gb200->model.fp8_recipe, Fp8Recipe::mxfp8);
        QCOMPARE(b200->model.fp8_recipe, Fp8Recipe::mxfp8);
        ModelSpec h800_model = h800->model;
        h800_model.fp8_recipe = Fp8Recipe::mxfp8;
        QVERIFY(h800_model == gb200->model);
        QVERIFY(h800_model == b200->model);
        QVERIFY(h800->training == gb200->training);
        QVERIFY(h800->training == b200->training);
        QVERIFY(h800->routing == gb200->routing);
        QVERIFY(h800->routing == b200->routing);
    }

    void mixtral() {
        const auto s = loadSample("mixtral-8x7b-32xh100.yaml");
        QVERIFY(s);
        QCOMPARE(s->cluster.gpuCount(), 32);
        QCOMPARE(s->model.moeLayers(), 32);
        QCOMPARE(s->model.experts, 8);
        QCOMPARE(s->model.top_k, 2);
        QCOMPARE(s->layout.ep, 8);
        QCOMPARE(s->layout.pp, 2);
        QCOMPARE(s->layout.expertDp(), 2); // 16 / 8
        // EP fits inside one node.
        QVERIFY(s->layout.ep <= s->cluster.gpusPerScaleUpDomain());
    }

    void dense70b() {
        const auto s = loadSample("dense-70b-64xh100.yaml");
        QVERIFY(s);
        QCOMPARE(s->cluster.gpuCount(), 64);
        QVERIFY(!s->model.isMoe());
        QCOMPARE(s->model.moeLayers(), 0);
        QCOMPARE(s->layout.tp, 8);
        QCOMPARE(s->layout.pp, 4);
        QCOMPARE(s->layout.dp, 2);
        QCOMPARE(s->layout.vpp, 5);
        QCOMPARE(s->layout.schedule, PipelineSchedule::interleaved);
        QCOMPARE(s->model.layers % (s->layout.pp * s->layout.vpp), 0);
        QCOMPARE(s->routing.model, PopularityModel::published); // routing section omitted
    }
};

QTEST_GUILESS_MAIN(TestSamples)
#include "test_samples.moc"
