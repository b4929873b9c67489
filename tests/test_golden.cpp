// Golden figures: what evaluate() reports for the built-in default and every shipped sample
// (step time and each item of its breakdown, the optimizer phase, memory, throughput, traffic,
// time and cost), held within 0.1%. Any change to the model's outputs shows here, by sample and
// figure; a change that means to move them (new physics) regenerates the file and says so in
// its commit:
//     MOE_UPDATE_GOLDEN=1 build/dev/tests/test_golden
// rewrites tests/data/golden/samples.tsv (atomically) from the current model.
#include "moe/atomic_file.h"
#include "moe/evaluate.h"
#include "moe/scenario_io.h"
#include "test_support.h"

#include <QtTest>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace moe;

namespace {

using Figures = std::vector<std::pair<std::string, double>>;

/// One sample's figures, by name.
Figures figuresOf(const Report& r) {
    Figures f;
    f.emplace_back("step_time_s", r.step_time_s);
    for (int i = 0; i < kStepItemCount; ++i) {
        const auto item = static_cast<StepItem>(i);
        f.emplace_back(std::string("step.") + toString(item), r.step[item]);
    }
    f.emplace_back("optimizer_phase_s", r.optimizer_phase.total_s());
    f.emplace_back("memory.total_bytes", r.memory.total_bytes);
    f.emplace_back("memory.activations_bytes", r.memory.activations_bytes);
    f.emplace_back("memory.dispatch_buffers_bytes", r.memory.dispatch_buffers_bytes);
    f.emplace_back("tokens_per_s", r.throughput.tokens_per_s);
    f.emplace_back("mfu", r.throughput.mfu);
    f.emplace_back("gpu_hours", r.throughput.gpu_hours);
    double scale_up_bytes = 0, scale_out_bytes = 0;
    for (const Collective& c : r.collectives) {
        scale_up_bytes += c.scale_up_bytes_per_gpu;
        scale_out_bytes += c.scale_out_bytes_per_gpu;
    }
    f.emplace_back("collectives.scale_up_bytes_per_gpu", scale_up_bytes);
    f.emplace_back("collectives.scale_out_bytes_per_gpu", scale_out_bytes);
    double link_bytes = 0;
    for (const double b : r.linkBytes())
        link_bytes += b;
    f.emplace_back("links.bytes", link_bytes);
    f.emplace_back("economics.usd_per_h", r.economics.usd_per_h);
    f.emplace_back("economics.wall_time_s", r.economics.wall_time_s);
    return f;
}

/// Every scenario the golden file covers, by name relative to sample_clusters/.
std::vector<std::pair<std::string, Scenario>> goldenScenarios() {
    std::vector<std::pair<std::string, Scenario>> out;
    out.emplace_back("<built-in default>", defaultScenario());
    const std::filesystem::path root(MOE_SAMPLES_DIR);
    for (const std::string& path : test::sampleFiles()) {
        const LoadResult r = loadScenarioFile(path);
        if (!r.ok())
            qFatal("%s", formatAll(r.diagnostics).c_str());
        out.emplace_back(std::filesystem::relative(path, root).generic_string(), *r.scenario);
    }
    return out;
}

std::string goldenPath() {
    return std::string(MOE_TEST_DATA_DIR) + "/golden/samples.tsv";
}

std::string formatFigures(const std::vector<std::pair<std::string, Figures>>& all) {
    std::string text = "# sample\tfigure\tvalue (tests/test_golden.cpp; regenerate with "
                       "MOE_UPDATE_GOLDEN=1)\n";
    char value[64];
    for (const auto& [sample, figures] : all) {
        for (const auto& [name, v] : figures) {
            std::snprintf(value, sizeof value, "%.17g", v);
            text += sample + "\t" + name + "\t" + value + "\n";
        }
    }
    return text;
}

std::map<std::pair<std::string, std::string>, double> parseGolden(const std::string& text) {
    std::map<std::pair<std::string, std::string>, double> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#')
            continue;
        const size_t a = line.find('\t');
        const size_t b = line.find('\t', a + 1);
        if (a == std::string::npos || b == std::string::npos)
            continue;
        out[{line.substr(0, a), line.substr(a + 1, b - a - 1)}] = std::stod(line.substr(b + 1));
    }
    return out;
}

/// Within 0.1% of the golden value, or both below 1e-12 (an item that is zero stays zero).
bool agrees(double value, double golden) {
    if (std::fabs(value) < 1e-12 && std::fabs(golden) < 1e-12)
        return true;
    return std::fabs(value - golden) <= 1e-3 * std::max(std::fabs(value), std::fabs(golden));
}

} // namespace

class TestGolden : public QObject {
    Q_OBJECT

private slots:
    void everySampleMatchesItsGoldenFigures() {
        std::vector<std::pair<std::string, Figures>> all;
        for (const auto& [name, scenario] : goldenScenarios())
            all.emplace_back(name, figuresOf(evaluate(scenario)));
        if (const char* update = std::getenv("MOE_UPDATE_GOLDEN"); update && *update == '1') {
            const std::string error = writeFileAtomically(goldenPath(), formatFigures(all));
            QVERIFY2(error.empty(), error.c_str());
            QSKIP("golden figures rewritten; check the diff of tests/data/golden/samples.tsv");
        }
        const auto golden = parseGolden(test::readFile(goldenPath()));
        QVERIFY2(!golden.empty(), "tests/data/golden/samples.tsv is missing or empty");
        std::string problems;
        size_t compared = 0;
        for (const auto& [sample, figures] : all) {
            for (const auto& [name, value] : figures) {
                const auto it = golden.find({sample, name});
                if (it == golden.end()) {
                    problems += sample + " " + name + ": not in the golden file\n";
                    continue;
                }
                ++compared;
                if (!agrees(value, it->second))
                    problems += sample + " " + name + ": " + std::to_string(value) + ", golden " +
                                std::to_string(it->second) + "\n";
            }
        }
        if (compared != golden.size())
            problems += "the golden file has figures no sample reports (a sample removed?)\n";
        QVERIFY2(problems.empty(),
                 qPrintable(QString::fromStdString(
                     problems + "If the change means to move them: MOE_UPDATE_GOLDEN=1 "
                                "tests/test_golden, and say so in the commit.")));
    }

    void agreementIsRelative() {
        QVERIFY(agrees(1000.0, 1000.9));
        QVERIFY(!agrees(1000.0, 1001.1));
        QVERIFY(agrees(0.0, 1e-13));
        QVERIFY(!agrees(0.0, 1e-6));
    }
};

QTEST_GUILESS_MAIN(TestGolden)
#include "test_golden.moc"
