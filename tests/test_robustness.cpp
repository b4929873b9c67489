// Issue 17 regressions ("nothing lost, nothing crashes"): each test is named after the problem it
// reproduces. Core only: escapes, the routing CSV reader, bounded reads, atomic writes and the
// text-preserving scenario editor.
#include "moe/atomic_file.h"
#include "moe/catalog.h"
#include "moe/evaluate.h"
#include "moe/routing_csv.h"
#include "moe/scenario_io.h"
#include "moe/scenario_text.h"
#include "moe/text.h"
#include "moe/timeline.h"
#include "test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/stat.h>

using namespace moe;

namespace {

std::string write(const QTemporaryDir& dir, const char* name, const std::string& text) {
    const std::string path = dir.filePath(name).toStdString();
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

/// Lines of `a` and `b` that differ (both must have the same number of lines).
int changedLines(const std::string& a, const std::string& b) {
    std::istringstream x(a), y(b);
    std::string la, lb;
    int changed = 0;
    while (std::getline(x, la)) {
        if (!std::getline(y, lb))
            return -1;
        changed += la != lb;
    }
    return std::getline(y, lb) ? -1 : changed;
}

} // namespace

class TestRobustness : public QObject {
    Q_OBJECT
private slots:
    // #1: nics_per_node 1e6 only warned; the graph came out empty and timeline segfaulted.
    void millionNicsPerNodeIsAnErrorNotAnEmptyGraph() {
        const LoadResult r = loadScenarioTextWithOverrides(
            defaultScenarioYaml(), "d.yaml", ".", {"cluster.scale_out.nics_per_node=1000000"});
        QVERIFY(!r.ok());
        QVERIFY(formatAll(r.diagnostics).find("exceeds the supported maximum of 64") !=
                std::string::npos);
        // At the bound the scenario evaluates and simulates with a real graph.
        const LoadResult ok = loadScenarioTextWithOverrides(defaultScenarioYaml(), "d.yaml", ".",
                                                            {"cluster.scale_out.nics_per_node=64"});
        QVERIFY2(ok.ok(), formatAll(ok.diagnostics).c_str());
        const Report report = evaluate(*ok.scenario);
        QVERIFY(std::isfinite(report.step_time_s) && report.step_time_s > 0);
        QVERIFY(!report.collectives.empty());
        const Timeline t = simulateTimeline(*ok.scenario, report);
        QVERIFY2(t.ok(), t.error.c_str());
    }

    // #2: a global batch of 4e12 truncated the micro-batch count to int.
    void hugeGlobalBatchIsRefusedNotTruncated() {
        std::string yaml = defaultScenarioYaml();
        yaml.replace(yaml.find("global_batch: 512"), 17, "global_batch: 4000000000000");
        const LoadResult r = loadScenarioText(yaml, "d.yaml");
        QVERIFY(!r.ok());
        QCOMPARE(r.diagnostics.front().format(),
                 std::string("d.yaml:50:3: error: training.global_batch = 4000000000000 exceeds "
                             "the supported maximum of 16777216"));
    }

    // #3: /dev/zero as a scenario grew without limit; 40,000 unknown keys were quadratic.
    void devZeroAndFifoAreRefusedWithoutReading() {
        const LoadResult zero = loadScenarioFile("/dev/zero");
        QVERIFY(!zero.ok());
        QVERIFY(zero.diagnostics.front().message.find("not a regular file") != std::string::npos);
        QTemporaryDir dir;
        const std::string fifo = dir.filePath("fifo").toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        QVERIFY(!loadScenarioFile(fifo).ok()); // would block forever if it were opened to read
        const std::string big = write(dir, "big.yaml", std::string(17 * 1024 * 1024, '#'));
        const LoadResult large = loadScenarioFile(big);
        QVERIFY(large.diagnostics.front().message.find("larger than the supported maximum of 16 "
                                                       "MB") != std::string::npos);
        // A search part, machine-written and larger, has its own bound.
        std::string text;
        QCOMPARE(readFileBounded(big, text, limits::kMaxSearchPartBytes), std::string());
        QCOMPARE(text.size(), size_t{17} * 1024 * 1024);
        QCOMPARE(readFileBounded(big, text, 1024 * 1024),
                 std::string("the file is larger than the supported maximum of 1 MB"));
        QVERIFY(text.empty());
    }
    // Logs (Megatron's tokens-per-expert JSON Lines) stream line by line: a file larger than
    // the whole-file bound reads, a FIFO and /dev/zero are refused, one endless line is refused.
    void logLinesStreamWithABoundPerLine() {
        QTemporaryDir dir;
        std::string text = "a\r\nbb\n\n";
        const std::string line(1024 * 1024, 'x');
        for (int i = 0; i < 17; ++i)
            text += line + "\n";
        text += "last"; // no final newline
        const std::string path = write(dir, "log.jsonl", text);
        std::vector<std::pair<int, std::string>> short_lines;
        int long_lines = 0;
        const std::string problem = readFileLines(path, [&](int n, std::string_view l) {
            if (l.size() == line.size())
                ++long_lines;
            else
                short_lines.emplace_back(n, std::string(l));
        });
        QCOMPARE(problem, std::string());
        QCOMPARE(long_lines, 17);
        QCOMPARE(short_lines, (std::vector<std::pair<int, std::string>>{
                                  {1, "a\r"}, {2, "bb"}, {3, ""}, {21, "last"}}));
        const auto ignore = [](int, std::string_view) {};
        QCOMPARE(readFileLines("/dev/zero", ignore), std::string("not a regular file"));
        const std::string fifo = dir.filePath("fifo").toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        QCOMPARE(readFileLines(fifo, ignore), std::string("not a regular file"));
        const std::string endless = write(dir, "endless.jsonl", std::string(17 * 1024 * 1024, 'x'));
        QCOMPARE(readFileLines(endless, ignore),
                 std::string("line 1 is larger than the supported maximum of 16 MB"));
    }
    void fortyThousandUnknownKeysListTwentyThenACount() {
        std::string yaml = defaultScenarioYaml();
        std::string junk;
        for (int i = 0; i < 40000; ++i)
            junk += "  junk" + std::to_string(i) + ": 1\n";
        yaml.replace(yaml.find("layout:\n") + 8, 0, junk);
        const LoadResult r = loadScenarioText(yaml, "u.yaml");
        QCOMPARE(r.diagnostics.size(), std::size_t(21));
        QCOMPARE(r.diagnostics.back().message,
                 std::string("and 39980 more unknown fields in layout (only the first 20 are "
                             "listed)"));
    }

    // #4: failed writes replaced the old file or reported success.
    void failedWritesKeepTheOldFileAndSayWhy() {
        QTemporaryDir dir;
        const std::string file = write(dir, "file", "old");
        QCOMPARE(writeFileAtomically(file + "/child.json", "new"),
                 "cannot create a temporary file beside '" + file +
                     "/child.json': Not a directory");
        QCOMPARE(test::readFile(file), std::string("old"));
        QCOMPARE(writeFileAtomically("/dev/full", "new"),
                 std::string("cannot write '/dev/full': No space left on device"));
        QCOMPARE(writeFileAtomically(file, "new"), std::string());
        QCOMPARE(test::readFile(file), std::string("new"));
        QCOMPARE(std::distance(std::filesystem::directory_iterator(dir.path().toStdString()),
                               std::filesystem::directory_iterator{}),
                 1);
    }

    // The reproductions and every crash the fuzzers find (tests/fuzz/regressions), replayed
    // through the plain loader: each is refused with an error, or loads and evaluates finitely.
    void fuzzRegressionInputsLoadWithoutCrashing() {
        int files = 0;
        for (const auto& entry :
             std::filesystem::directory_iterator(MOE_SOURCE_DIR "/tests/fuzz/regressions")) {
            const std::string path = entry.path().string();
            ++files;
            if (entry.path().extension() == ".csv") {
                parseRoutingHistogramCsv(test::readFile(path), path);
                continue;
            }
            const LoadResult r = loadScenarioFile(path);
            if (r.ok())
                QVERIFY2(std::isfinite(evaluate(*r.scenario).step_time_s), path.c_str());
            else
                QVERIFY2(hasErrors(r.diagnostics), path.c_str());
        }
        QVERIFY(files >= 5);
    }

    // #5: '&' in a name made SVGs invalid; '<script>' became live markup.
    void userTextIsEscapedForEveryFormat() {
        QCOMPARE(escapeXml("a & <script>\"'"), std::string("a &amp; &lt;script&gt;&quot;&#39;"));
        QCOMPARE(escapeXml("bell\x07"), std::string("bell"));
        QCOMPARE(escapeJson("q\"\\\n\x01"), std::string("\"q\\\"\\\\\\n\\u0001\""));
        QCOMPARE(escapeCsvField("a,b"), std::string("\"a,b\""));
        QCOMPARE(escapeCsvField("say \"hi\""), std::string("\"say \"\"hi\"\"\""));
        QCOMPARE(escapeCsvField("=cmd()"), std::string("'=cmd()"));
        QCOMPARE(escapeCsvField("-3.5"), std::string("-3.5"));
    }
    void jsonWriterEmitsValidUtf8Only() {
        // A lone continuation byte, a truncated sequence, an overlong '/', a surrogate.
        const std::string bad = "a\x80 b\xE2\x82 c\xC0\xAF d\xED\xA0\x80 \xE2\x82\xAC";
        const std::string out = escapeJson(bad);
        QCOMPARE(validUtf8(out), out);
        QVERIFY(out.find("\xE2\x82\xAC") != std::string::npos); // the euro sign survives
        QVERIFY(out.find("\xEF\xBF\xBD") != std::string::npos); // U+FFFD for the rest
    }

    // #7: overflowing weights became uniform routing; a spreadsheet's CSV was refused with an
    // invisible character in the message.
    void overflowingHistogramWeightsAreAnError() {
        const RoutingHistogramCsv csv = parseRoutingHistogramCsv("1e308,1e308,1\n", "h.csv");
        QVERIFY(!csv.ok());
        QCOMPARE(csv.diagnostics.front().line, 1);
        QVERIFY(csv.diagnostics.front().message.find("add up to more than 1.8e308") !=
                std::string::npos);
    }
    void spreadsheetCsvWithBomAndHeaderLoads() {
        const RoutingHistogramCsv csv = parseRoutingHistogramCsv("\xEF\xBB\xBF"
                                                                 "expert_0,expert_1\r\n3,1\r\n",
                                                                 "h.csv");
        QVERIFY(csv.ok());
        QVERIFY(csv.had_header);
        QCOMPARE(csv.rows, (std::vector<std::vector<double>>{{3, 1}}));
    }
    void csvMessagesShowInvisibleCharacters() {
        const RoutingHistogramCsv csv = parseRoutingHistogramCsv("1,\xE2\x80\x8B"
                                                                 "2,\x01\n",
                                                                 "h.csv");
        QCOMPARE(csv.diagnostics.size(), std::size_t(2));
        QCOMPARE(csv.diagnostics[0].message,
                 std::string("expected a non-negative number, got '<U+200B>2'"));
        QCOMPARE(csv.diagnostics[0].column, 3);
        QCOMPARE(csv.diagnostics[1].message,
                 std::string("expected a non-negative number, got '\\x01'"));
    }

    // #8: saving dropped every comment and explicit default.
    void noOpEditIsByteIdenticalForEverySample() {
        for (const std::string& path : test::sampleFiles()) {
            const std::string text = test::readFile(path);
            const ScenarioTextEdit edit = editScenarioText(text, {});
            QVERIFY(edit.ok());
            QCOMPARE(edit.text, text);
            // Saving the loaded scenario unchanged gives the same bytes too.
            const LoadResult loaded = loadScenarioFile(path);
            QVERIFY2(loaded.ok(), path.c_str());
            const std::string dir = std::filesystem::path(path).parent_path().string();
            const ScenarioTextResult saved = scenarioTextFor(*loaded.scenario, {text, dir}, dir);
            QVERIFY2(saved.preserved, path.c_str());
            QCOMPARE(saved.text, text);
        }
    }
    void setEpChangesExactlyOneLine() {
        const std::string text = test::readFile(test::samplePath("dgx-h100-8x8-moe16.yaml"));
        const ScenarioTextEdit edit = editScenarioText(text, {"layout.ep=16"});
        QVERIFY(edit.ok());
        QCOMPARE(changedLines(text, edit.text), 1);
        QVERIFY(edit.text.find("  ep: 16\n") != std::string::npos);
    }
    void savingAnEditKeepsCommentsAndDefaults() {
        const std::string path = test::samplePath("dgx-h100-8x8-moe16.yaml");
        const std::string text = test::readFile(path);
        const LoadResult loaded = loadScenarioFile(path);
        QVERIFY(loaded.ok());
        Scenario changed = *loaded.scenario;
        changed.cluster.gpu = *builtinCatalog().findGpu("b200");
        changed.training.zero_stage = 2;
        changed.cluster.pue = 1.25; // a key the file does not have
        const std::string dir = std::filesystem::path(path).parent_path().string();
        const ScenarioTextResult saved = scenarioTextFor(changed, {text, dir}, dir);
        QVERIFY(saved.preserved);
        const LoadResult back = loadScenarioText(saved.text, "s.yaml", dir);
        QVERIFY2(back.ok(), formatAll(back.diagnostics).c_str());
        QVERIFY(*back.scenario == changed);
        // Every comment line and the explicit defaults survive.
        QVERIFY(saved.text.find("# dgx-h100-8x8-moe16 — the built-in default") !=
                std::string::npos);
        QVERIFY(saved.text.find("  dense_layers: 0\n") != std::string::npos);
        QVERIFY(saved.text.find("  costs:\n    pue: 1.25\n") != std::string::npos);
    }

    // #6: a relative routing.histogram_csv stayed relative to the old folder.
    void relativeHistogramPathIsRebasedWhenWrittenElsewhere() {
        QCOMPARE(rebaseRelativePath("h.csv", "/a/b", "/a/c"), std::string("../b/h.csv"));
        QCOMPARE(rebaseRelativePath("h.csv", "/a/b", "/a/b"), std::string("h.csv"));
        QCOMPARE(rebaseRelativePath("/x/h.csv", "/a/b", "/c"), std::string("/x/h.csv"));
        QTemporaryDir a, b;
        std::string weights = "8";
        for (int e = 1; e < 16; ++e)
            weights += ",1";
        write(a, "h.csv", weights + "\n");
        std::string yaml = defaultScenarioYaml();
        yaml.replace(yaml.find("  balancing: aux_loss\n"), 21,
                     "  model: histogram\n  histogram_csv: h.csv\n");
        const std::string from = a.path().toStdString(), to = b.path().toStdString();
        const LoadResult original = loadScenarioText(yaml, "s.yaml", from);
        QVERIFY2(original.ok(), formatAll(original.diagnostics).c_str());
        const ScenarioTextResult moved = scenarioTextFor(*original.scenario, {yaml, from}, to);
        QVERIFY(moved.preserved);
        QVERIFY(moved.text.find("histogram_csv: ../" + a.path().section('/', -1).toStdString() +
                                "/h.csv\n") != std::string::npos);
        const LoadResult there = loadScenarioText(moved.text, "t.yaml", to);
        QVERIFY2(there.ok(), formatAll(there.diagnostics).c_str());
        QVERIFY(there.scenario->routing.histogram == original.scenario->routing.histogram);
    }
};

QTEST_GUILESS_MAIN(TestRobustness)
#include "test_robustness.moc"
