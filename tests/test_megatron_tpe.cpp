// Megatron-Core tokens-per-expert logs (rank{R}.jsonl) summed into a routing CSV: ranks mapped
// to pipeline stage / EP rank / expert-DP replica by the scenario's rank order, stage-local
// layers to MoE layers by the layer split, sums over micro-batches, iterations and replicas.
// The fixture (tests/data/megatron_tpe) is PP2 x DP4, EP2 (expert-DP 2), 6 layers of which 2
// dense, 4 experts: rank = ep + 2*edp + 4*pp; stage 0's local layer 2 is MoE layer 0, stage 1's
// local layers 0, 1, 2 are MoE layers 1, 2, 3. EP rank 0 holds experts 0-1, EP rank 1 2-3.
#include "moe/io/megatron_tpe.h"
#include "moe/routing_csv.h"
#include "moe/scenario_io.h"
#include "test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>

using namespace moe;
using namespace moe::io;

namespace {

namespace fs = std::filesystem;

const std::string kDir = MOE_TEST_DATA_DIR "/megatron_tpe";
const std::string kLogs = kDir + "/tokens_per_expert";

// The hand derivation. Per line, the tpe entries summed over the 2 micro-batches, per local
// expert, as [iteration 10] + [iteration 20]:
//   MoE layer 0 (stage 0, local 2):
//     rank 0 (EP0, edp0): [3276+3272, 2044+2048] = [6548, 4092] + [3276+3272, 2048+2044] = [6548,
//     4092] rank 2 (EP0, edp1): [3280+3272, 2044+2044] = [6552, 4088] + [3276+3276, 2048+2048] =
//     [6552, 4096] rank 1 (EP1, edp0): [1636+1636, 1236+1236] = [3272, 2472] + [1636+1632,
//     1232+1244] = [3268, 2476] rank 3 (EP1, edp1): [1640+1640, 1228+1236] = [3280, 2464] +
//     [1640+1640, 1228+1228] = [3280, 2456] expert 0 = 6548+6548+6552+6552 = 26200, expert 1 =
//     4092+4092+4088+4096 = 16368, expert 2 = 3272+3268+3280+3280 = 13100, expert 3 =
//     2472+2476+2464+2456 = 9868
//   MoE layer 1 (stage 1, local 0):
//     rank 4: [1636, 3268] + [1636, 3276]   rank 6: [1640, 3272] + [1632, 3272]
//     rank 5: [4912, 6568] + [4916, 6556]   rank 7: [4912, 6560] + [4916, 6564]
//     -> 6544, 13088, 19656, 26248
//   MoE layer 2 (stage 1, local 1):
//     rank 4: [4088, 4100] + [4092, 4092]   rank 6: [4096, 4088] + [4092, 4096]
//     rank 5: [4100, 4096] + [4096, 4104]   rank 7: [4096, 4104] + [4088, 4108]
//     -> 16368, 16376, 16380, 16412
//   MoE layer 3 (stage 1, local 2):
//     rank 4: [9000, 2456] + [9008, 2460]   rank 6: [9012, 2452] + [9008, 2452]
//     rank 5: [2452, 2476] + [2456, 2460]   rank 7: [2456, 2464] + [2452, 2472]
//     -> 36028, 9820, 9816, 9872
// Each row adds up to 8192 slots x 2 micro-batches x 2 iterations x 2 replicas = 65536.
const char* kExpectedCsv = "expert_0,expert_1,expert_2,expert_3\n"
                           "26200,16368,13100,9868\n"
                           "6544,13088,19656,26248\n"
                           "16368,16376,16380,16412\n"
                           "36028,9820,9816,9872\n";

Scenario fixtureScenario() {
    const LoadResult r = loadScenarioFile(kDir + "/pp2-dp4-ep2.yaml");
    if (!r.ok())
        qFatal("%s", formatAll(r.diagnostics).c_str());
    return *r.scenario;
}

std::string rankPath(int rank) {
    return kLogs + "/rank" + std::to_string(rank) + ".jsonl";
}

/// Copies the fixture's rank files except `leave_out` into `dir`.
void copyRanks(const QTemporaryDir& dir, const std::vector<int>& leave_out) {
    for (int r = 0; r < 8; ++r)
        if (std::find(leave_out.begin(), leave_out.end(), r) == leave_out.end())
            fs::copy_file(rankPath(r), dir.filePath(QString("rank%1.jsonl").arg(r)).toStdString());
}

void append(const QTemporaryDir& dir, int rank, const std::string& lines) {
    std::ofstream(dir.filePath(QString("rank%1.jsonl").arg(rank)).toStdString(), std::ios::app)
        << lines;
}

std::string notes(const MegatronTpeImport& r) {
    std::string text;
    for (const std::string& n : r.notes)
        text += n + "\n";
    return text;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

/// "file:line:col: message" of each error, with the file's folder left out.
std::vector<std::string> errors(const MegatronTpeImport& r) {
    std::vector<std::string> out;
    for (const Diagnostic& d : r.diagnostics)
        out.push_back(fs::path(d.file).filename().string() + ":" + std::to_string(d.line) + ":" +
                      std::to_string(d.column) + ": " + d.message);
    return out;
}

} // namespace

class TestMegatronTpe : public QObject {
    Q_OBJECT
private slots:
    void fixtureSumsToTheHandDerivedCsv() {
        const MegatronTpeImport r = importMegatronTpe({kLogs}, fixtureScenario(), {});
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        QCOMPARE(r.csv, std::string(kExpectedCsv));
        QCOMPARE(r.counts.size(), std::size_t(4));
        const std::string n = notes(r);
        QVERIFY2(contains(n, "Read 8 rank files (ranks 0, 1, 2, 3, 4, 5, 6, 7) of the layout's 8 "
                             "ranks: PP=2, EP=2, expert-TP=1, expert-DP=2, order tp-cp-ep-dp-pp"),
                 n.c_str());
        // 2 lines per stage-0 rank, 6 per stage-1 rank, 2 iterations: 4*2 + 4*6 = 32 lines of 2
        // micro-batch entries each.
        QVERIFY2(contains(n, "Summed 32 lines: iterations 10, 20, 64 micro-batch entries, 4 MoE "
                             "layers x 4 experts"),
                 n.c_str());
        QVERIFY2(contains(n, "Skipped 2 MTP lines"), n.c_str());
        // 2 entries per line is what the batch gives (16 / (4 x 2)): no remark about it.
        QVERIFY2(!contains(n, "micro-batch entries;"), n.c_str());

        // The CSV is a routing histogram: long rows of raw counts load as they are.
        const RoutingHistogramCsv csv = parseRoutingHistogramCsv(r.csv, "tpe.csv");
        QVERIFY(csv.ok());
        QCOMPARE(csv.rows[3], (std::vector<double>{36028, 9820, 9816, 9872}));
    }

    void saveDirectoryFolderAndFilesGiveTheSame() {
        const Scenario s = fixtureScenario();
        std::vector<std::string> files;
        for (int r = 7; r >= 0; --r)
            files.push_back(rankPath(r));
        for (const std::vector<std::string>& paths :
             {std::vector<std::string>{kDir}, std::vector<std::string>{kLogs}, files}) {
            const MegatronTpeImport r = importMegatronTpe(paths, s, {});
            QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
            QCOMPARE(r.csv, std::string(kExpectedCsv));
        }
    }

    void oneIteration() {
        // Iteration 20 alone: the second term of each sum above, e.g. MoE layer 0 expert 0 =
        // 6548 + 6552 = 13100, expert 1 = 4092 + 4096, expert 2 = 3268 + 3280, expert 3 =
        // 2476 + 2456; MoE layer 3 expert 0 = 9008 + 9008.
        MegatronTpeOptions o;
        o.iteration = 20;
        const MegatronTpeImport r = importMegatronTpe({kLogs}, fixtureScenario(), o);
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        QCOMPARE(r.counts[0], (std::vector<uint64_t>{13100, 8188, 6548, 4932}));
        QCOMPARE(r.counts[3][0], uint64_t(18016));
        QVERIFY(contains(notes(r), "Skipped 16 lines of other iterations (--iter 20)"));
        o.iteration = 15;
        const MegatronTpeImport none = importMegatronTpe({kLogs}, fixtureScenario(), o);
        QCOMPARE(errors(none),
                 std::vector<std::string>{":0:0: no decoder line of iteration 15 (the logs hold "
                                          "iterations 10, 20)"});
    }

    void rankOrderDecidesTheStage() {
        // Megatron's --use-tp-pp-dp-mapping (tp-cp-ep-pp-dp) makes rank 4 = pp 0, edp 1: its
        // local layer 0 is then dense layer 0, which cannot carry expert counts.
        Scenario s = fixtureScenario();
        s.layout.order = *parseRankOrder("tp-cp-ep-pp-dp");
        const MegatronTpeImport r = importMegatronTpe({kLogs}, s, {});
        QVERIFY(!r.ok());
        // Ranks 2 and 3 move to stage 1 (whose local layer 2 is MoE too); 4 and 5 to stage 0.
        QCOMPARE(errors(r).front(),
                 std::string("rank4.jsonl:1:34: layer 0 of pipeline stage 0 is layer 0, dense in "
                             "the scenario (model.dense_layers = 2), but it has expert counts"));
        QCOMPARE(r.diagnostics.size(), std::size_t(8)); // layers 0 and 1, 2 iterations, 2 ranks
    }

    void missingRankFileLeavesItsReplicaOut() {
        // Without rank 7 (EP1 of stage 1, replica 1) stage 1's layers come from replica 0
        // (ranks 4 and 5) alone: MoE layer 1 = rank 4 [1636 + 1636, 3268 + 3276] and rank 5
        // [4912 + 4916, 6568 + 6556]. Stage 0 still has both replicas.
        QTemporaryDir dir;
        copyRanks(dir, {7});
        const MegatronTpeImport r =
            importMegatronTpe({dir.path().toStdString()}, fixtureScenario(), {});
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        QCOMPARE(r.counts[0], (std::vector<uint64_t>{26200, 16368, 13100, 9868}));
        QCOMPARE(r.counts[1], (std::vector<uint64_t>{3272, 6544, 9828, 13124}));
        const std::string n = notes(r);
        QVERIFY2(contains(n, "MoE layer 1 (layer 3, local layer 0 of pipeline stage 1): 1 of 2 "
                             "replicas (no log from rank 7)"),
                 n.c_str());
        QVERIFY2(!contains(n, "MoE layer 0 ("), n.c_str());
    }

    void anEpRankMissingInEveryReplicaIsAnError() {
        QTemporaryDir dir;
        copyRanks(dir, {1, 3});
        const MegatronTpeImport r =
            importMegatronTpe({dir.path().toStdString()}, fixtureScenario(), {});
        QVERIFY(!r.ok());
        QVERIFY(r.csv.empty());
        QCOMPARE(errors(r), std::vector<std::string>{
                                ":0:0: MoE layer 0 (layer 2, local layer 2 of pipeline stage 0): "
                                "no expert-data-parallel replica has the logs of all its EP "
                                "ranks; missing: ranks 1, 3"});
    }

    void iterationsNotEveryRankLoggedAreLeftOut() {
        // Rank 0 ran one iteration further than the others before the job stopped: summing it
        // would favour experts 0-1 of MoE layer 0, so iteration 30 is left out.
        QTemporaryDir dir;
        copyRanks(dir, {});
        append(dir, 0,
               "{\"iter\": 30, \"block\": \"decoder\", \"layer\": 2, \"tpe\": [[9000, 1]]}\n");
        const MegatronTpeImport r =
            importMegatronTpe({dir.path().toStdString()}, fixtureScenario(), {});
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        QCOMPARE(r.csv, std::string(kExpectedCsv));
        QVERIFY(contains(notes(r), "Left out iterations 30: not every rank file logged them"));
    }

    void expertTensorParallelRanksAreSkipped() {
        // TP2 x DP2 x PP2 with EP2 and expert-TP 2 (expert-DP 1): rank = etp + 2*ep + 4*pp, so
        // ranks 1, 3, 5, 7 are expert-TP rank 1 and repeat their partner's counts. Read this
        // way, rank 0's file is EP0 and rank 2's EP1 of stage 0: MoE layer 0 = rank 0
        // [6548 + 6548, 4092 + 4092] then rank 2 [6552 + 6552, 4088 + 4096].
        Scenario s = fixtureScenario();
        s.layout.tp = 2;
        s.layout.dp = 2;
        s.layout.etp = 2;
        const MegatronTpeImport r = importMegatronTpe({kLogs}, s, {});
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        QCOMPARE(r.counts[0], (std::vector<uint64_t>{13096, 8184, 13104, 8184}));
        QVERIFY2(contains(notes(r), "Skipped 4 files of expert-TP ranks > 0 (ranks 1, 3, 5, 7): "
                                    "they log the same counts as expert-TP rank 0"),
                 notes(r).c_str());
    }

    void malformedLinesAreErrorsWithLineAndColumn() {
        QTemporaryDir dir;
        copyRanks(dir, {4});
        append(dir, 4,
               "{\"iter\": 10, \"block\": \"decoder\", \"layer\": 0, \"tpe\": [[1, 2]]}\n"
               "{\"iter\": 10, \"block\": \"decoder\", \"layer\": 1, \"tpe\": [[1, 2, 3]]}\n"
               "\n"
               "{\"iter\": 10, \"block\": \"decoder\", \"layer\": 2, \"tpe\": [[1, -2]]}\n"
               "{\"iter\": 10, \"block\": \"decoder\", \"layer\": 3, \"tpe\": [[1, 2]]}\n"
               "{\"iter\": 10, \"block\": \"decoder\", \"layer\": 0, \"tpe\": [[1, 2]]}\n"
               "{\"iter\": 10, \"block\": \"encoder\", \"layer\": 0, \"tpe\": [[1, 2]]}\n"
               "{\"iter\": 10, \"block\": \"decoder\", \"layer\": 1, \"tpe\": [[1, 2]\n"
               "[1, 2]\n"
               "{\"iter\": \"10\", \"block\": \"decoder\", \"layer\": 1, \"tpe\": [[1, 2]]}\n");
        const MegatronTpeImport r =
            importMegatronTpe({dir.path().toStdString()}, fixtureScenario(), {});
        QVERIFY(!r.ok());
        const std::vector<std::string> e = errors(r);
        QCOMPARE(e.size(), std::size_t(8));
        QCOMPARE(e[0], std::string("rank4.jsonl:2:46: micro-batch 0 of \"tpe\" has 3 counts, but "
                                   "rank 4 (EP rank 0 of pipeline stage 1) holds 2 experts "
                                   "(model.experts / layout.ep)"));
        QCOMPARE(e[1], std::string("rank4.jsonl:4:46: micro-batch 0 of \"tpe\" has -2 where a "
                                   "token count (a whole number >= 0) belongs"));
        QCOMPARE(e[2], std::string("rank4.jsonl:5:34: layer 3 is not in pipeline stage 1, which "
                                   "holds 3 layers in the scenario's layout (local 0..2)"));
        QCOMPARE(e[3], std::string("rank4.jsonl:6:2: iteration 10 of layer 0 is logged twice in "
                                   "this file (was the iteration run again?); keep one of the "
                                   "lines"));
        QCOMPARE(e[4], std::string("rank4.jsonl:7:14: \"block\" must be \"decoder\" or \"mtp\""));
        QCOMPARE(e[5], std::string("rank4.jsonl:8:59: not valid JSON: syntax error while parsing "
                                   "array - unexpected end of input; expected ']'"));
        QCOMPARE(e[6], std::string("rank4.jsonl:9:0: expected a JSON object per line"));
        QCOMPARE(e[7], std::string("rank4.jsonl:10:2: \"iter\" must be a whole number >= 0"));
    }

    void countsThatOverflowAreAnError() {
        // 2^64 - 1 plus anything overflows: within one line's micro-batches, and across lines.
        QTemporaryDir dir;
        copyRanks(dir, {});
        append(dir, 0,
               "{\"iter\": 30, \"block\": \"decoder\", \"layer\": 2, \"tpe\": "
               "[[18446744073709551615, 0], [1, 0]]}\n"
               "{\"iter\": 40, \"block\": \"decoder\", \"layer\": 2, \"tpe\": "
               "[[18446744073709551615, 0]]}\n");
        const MegatronTpeImport r =
            importMegatronTpe({dir.path().toStdString()}, fixtureScenario(), {});
        QCOMPARE(errors(r), (std::vector<std::string>{
                                "rank0.jsonl:3:46: the token counts of \"tpe\" overflow a 64-bit "
                                "sum",
                                "rank0.jsonl:4:46: the token counts of layer 2 overflow a 64-bit "
                                "sum"}));
    }

    void layoutsTheLogsCannotBeMappedForAreErrors() {
        Scenario vpp = fixtureScenario();
        vpp.layout.vpp = 2;
        const MegatronTpeImport a = importMegatronTpe({kLogs}, vpp, {});
        QVERIFY(!a.ok());
        QVERIFY(
            contains(a.diagnostics.front().message, "virtual pipeline stages (layout.vpp = 2)"));
        Scenario uneven = fixtureScenario();
        uneven.model.layers = 7;
        const MegatronTpeImport b = importMegatronTpe({kLogs}, uneven, {});
        QVERIFY(contains(b.diagnostics.front().message,
                         "model.layers = 7 does not divide over layout.pp = 2"));
        Scenario small = fixtureScenario();
        small.cluster.gpus_per_node = 4;
        small.layout.dp = 2;
        small.layout.ep = 1;
        const MegatronTpeImport c = importMegatronTpe({kLogs}, small, {});
        QCOMPARE(errors(c).front(),
                 std::string("rank4.jsonl:0:0: rank 4 is not in the "
                             "scenario's layout of 4 ranks (tp x cp x dp x pp)"));
        QTemporaryDir dir;
        const std::string odd = dir.filePath("tpe-rank0.jsonl").toStdString();
        std::ofstream(odd) << "\n";
        const MegatronTpeImport d =
            importMegatronTpe({odd, dir.path().toStdString()}, fixtureScenario(), {});
        QCOMPARE(errors(d), (std::vector<std::string>{
                                "tpe-rank0.jsonl:0:0: cannot tell the rank of this file: Megatron "
                                "names its tokens-per-expert logs rankN.jsonl",
                                dir.path().section('/', -1).toStdString() +
                                    ":0:0: no rankN.jsonl files here (Megatron writes them to "
                                    "{save}/tokens_per_expert/ with "
                                    "--save-tokens-per-expert-interval)"}));
    }
};

QTEST_GUILESS_MAIN(TestMegatronTpe)
#include "test_megatron_tpe.moc"
