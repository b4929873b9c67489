// Routing histogram CSV layouts as people save them (issue 18): the plain weights table, raw
// token counts in it, pandas' index column, and the long (tidy) table of (layer, expert, count)
// rows. Each layout is a converter of splitCsv's records; every error names the line and column.
#include "moe/expert_load.h"
#include "moe/routing_csv.h"
#include "moe/scenario_io.h"
#include "moe/topology.h"
#include "test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

using namespace moe;

namespace {

using Rows = std::vector<std::vector<double>>;

/// "line:column: message" of every diagnostic, for compact comparisons.
std::vector<std::string> positions(const RoutingHistogramCsv& csv) {
    std::vector<std::string> out;
    for (const Diagnostic& d : csv.diagnostics)
        out.push_back(std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.message);
    return out;
}

} // namespace

class TestRoutingCsv : public QObject {
    Q_OBJECT
private slots:
    // --- weights (wide) --------------------------------------------------------------------

    void rawTokenCountsAreWeights() {
        // Raw counts per expert, as a profiler dumps them: only their ratios matter, so they
        // load unchanged (no rescaling, exact up to 2^53) and route like the reduced weights.
        const RoutingHistogramCsv counts = parseRoutingHistogramCsv(
            "expert_0,expert_1,expert_2,expert_3\n6442450944,2147483648,2147483648,2147483648\n",
            "counts.csv");
        QVERIFY(counts.ok());
        QCOMPARE(counts.layout, RoutingCsvLayout::weights);
        QCOMPARE(counts.rows, (Rows{{6442450944.0, 2147483648.0, 2147483648.0, 2147483648.0}}));

        // Through the routing model: 16 experts, expert 0 counted 3 * 2^31 tokens and the 15
        // others 2^31 each, so p(0) = 3 / (3 + 15) = 1/6 and p(e) = 1/18 for the rest; the same
        // as the weights 3,1,1,...
        Scenario s = test::h100Moe16Scenario();
        s.routing.model = PopularityModel::histogram;
        std::string raw = "6442450944";
        for (int e = 1; e < 16; ++e)
            raw += ",2147483648";
        s.routing.histogram = parseRoutingHistogramCsv(raw + "\n", "raw.csv").rows;
        const Placement p = placeLayout(s);
        const ExpertLoad load = sampleExpertLoad(s, p);
        QCOMPARE(load.popularity[0], 1.0 / 6.0);
        QCOMPARE(load.popularity[1], 1.0 / 18.0);
        s.routing.histogram = {{3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}};
        const ExpertLoad reduced = sampleExpertLoad(s, p);
        QCOMPARE(reduced.popularity, load.popularity);
    }

    void withoutHeaderAFirstColumnOfNumbersIsAWeight() {
        // 0,1,2 could be an index or expert 0's weights; without a header nothing says which,
        // and dropping a column would silently lose an expert.
        const RoutingHistogramCsv csv = parseRoutingHistogramCsv("0,5,5\n1,5,5\n", "h.csv");
        QVERIFY(csv.ok());
        QCOMPARE(csv.layout, RoutingCsvLayout::weights);
        QCOMPARE(csv.rows, (Rows{{0, 5, 5}, {1, 5, 5}}));
    }

    // --- index column -------------------------------------------------------------------------

    void pandasDefaultIndexColumnIsDropped() {
        // df.to_csv("h.csv") with the default RangeIndex: an unnamed first column 0, 1, ...
        const RoutingHistogramCsv csv =
            parseRoutingHistogramCsv(",expert_0,expert_1,expert_2\n0,12.5,3,0\n1,1,2,3\n", "h.csv");
        QVERIFY2(csv.ok(), formatAll(csv.diagnostics).c_str());
        QCOMPARE(csv.layout, RoutingCsvLayout::index_column);
        QVERIFY(csv.had_header);
        QCOMPARE(csv.rows, (Rows{{12.5, 3, 0}, {1, 2, 3}}));
    }

    void indexColumnNamesAndRowOrder() {
        // A re-saved pandas frame ("Unnamed: 0"), with BOM and CRLF, and a 'layer' column of
        // 1-based layer numbers written out of order: rows follow the layer numbers.
        const RoutingHistogramCsv unnamed =
            parseRoutingHistogramCsv("\xEF\xBB\xBFUnnamed: 0,e0,e1\r\n0,1,2\r\n1,3,4\r\n", "h.csv");
        QVERIFY(unnamed.ok());
        QCOMPARE(unnamed.layout, RoutingCsvLayout::index_column);
        QCOMPARE(unnamed.rows, (Rows{{1, 2}, {3, 4}}));
        const RoutingHistogramCsv layers =
            parseRoutingHistogramCsv("layer,e0,e1\n3,30,31\n1,10,11\n2,20,21\n", "h.csv");
        QVERIFY(layers.ok());
        QCOMPARE(layers.rows, (Rows{{10, 11}, {20, 21}, {30, 31}}));
        for (const char* name : {"index", "moe_layer", "MoE_Layer", "\"layer\""}) {
            const RoutingHistogramCsv named =
                parseRoutingHistogramCsv(std::string(name) + ",a,b\n0,1,2\n", "h.csv");
            QVERIFY2(named.ok() && named.rows == (Rows{{1, 2}}), name);
        }
    }

    void indexColumnDuplicatesGapsAndNonIntegersAreErrors() {
        const RoutingHistogramCsv duplicate =
            parseRoutingHistogramCsv("layer,e0,e1\n0,1,1\n1,2,2\n0,3,3\n", "h.csv");
        QCOMPARE(positions(duplicate),
                 std::vector<std::string>{
                     "4:1: layer 0 appears twice in index column 'layer' (also on line 2)"});
        QCOMPARE(duplicate.diagnostics[0].file, std::string("h.csv"));
        QCOMPARE(duplicate.diagnostics[0].field, std::string("routing.histogram_csv"));

        const RoutingHistogramCsv gap =
            parseRoutingHistogramCsv(",e0,e1\n0,1,1\n3,2,2\n4,2,2\n", "h.csv");
        QCOMPARE(positions(gap),
                 std::vector<std::string>{"3:1: row 3 follows 0: rows 1 to 2 are missing (the "
                                          "rows must be consecutive)"});

        const RoutingHistogramCsv fraction =
            parseRoutingHistogramCsv("index,e0,e1\n0.5,1,1\n,1,1\n", "h.csv");
        QCOMPARE(positions(fraction),
                 (std::vector<std::string>{
                     "2:1: expected a whole number in index column 'index', got '0.5'",
                     "3:1: expected a whole number in index column 'index', got nothing"}));
    }

    void indexColumnWeightErrorsKeepTheirColumns() {
        const RoutingHistogramCsv csv =
            parseRoutingHistogramCsv(",expert_0,expert_1\n0,1,x\n1,-1,2\n", "h.csv");
        QCOMPARE(positions(csv),
                 (std::vector<std::string>{"2:5: expected a non-negative number, got 'x'",
                                           "3:3: expected a non-negative number, got '-1'"}));
    }

    // --- long (tidy) table --------------------------------------------------------------------

    void longTableIsPivotedAndSummedOverIterations() {
        // Two iterations of 2 layers x 3 experts; the pair (layer 1, expert 2) is missing in
        // iteration 200 (a row per non-zero count) and 'rank' is ignored. By hand:
        //   layer 0: e0 = 10 + 30 = 40, e1 = 5 + 5 = 10, e2 = 1 + 0 = 1
        //   layer 1: e0 = 7 + 8 = 15,   e1 = 0 + 2 = 2,  e2 = 9 (iteration 100 only)
        const char* text = "iteration,layer,expert,tokens,rank\n"
                           "100,0,0,10,0\n100,0,1,5,0\n100,0,2,1,0\n"
                           "100,1,0,7,1\n100,1,1,0,1\n100,1,2,9,1\n"
                           "200,0,0,30,0\n200,0,1,5,0\n"
                           "200,1,0,8,1\n200,1,1,2,1\n";
        const RoutingHistogramCsv csv = parseRoutingHistogramCsv(text, "long.csv");
        QVERIFY2(csv.ok(), formatAll(csv.diagnostics).c_str());
        QCOMPARE(csv.layout, RoutingCsvLayout::long_counts);
        QCOMPARE(csv.rows, (Rows{{40, 10, 1}, {15, 2, 9}}));
    }

    void longTableColumnsInAnyOrder() {
        // No iteration column, the count first and named 'count', layers from 3 (global layer
        // numbers after 3 dense layers), an unnamed pandas index in front; expert 1 of layer 4
        // is missing and counts 0.
        const RoutingHistogramCsv csv = parseRoutingHistogramCsv(
            ",count,expert,layer\n0,4,0,3\n1,6,1,3\n2,8,0,4\n", "long.csv");
        QVERIFY2(csv.ok(), formatAll(csv.diagnostics).c_str());
        QCOMPARE(csv.rows, (Rows{{4, 6}, {8, 0}}));
        // 'tokens' wins over a normalized 'weight' column.
        const RoutingHistogramCsv both = parseRoutingHistogramCsv(
            "layer,expert,weight,tokens\n0,0,0.25,1\n0,1,0.75,3000\n", "long.csv");
        QCOMPARE(both.rows, (Rows{{1, 3000}}));
    }

    void longTableErrorsNameLineAndColumn() {
        const RoutingHistogramCsv duplicate =
            parseRoutingHistogramCsv("layer,expert,tokens\n0,0,1\n0,1,2\n0,0,3\n", "long.csv");
        QCOMPARE(positions(duplicate),
                 std::vector<std::string>{"4:1: layer 0, expert 0 appears twice (also on line 2)"});
        const RoutingHistogramCsv per_iteration =
            parseRoutingHistogramCsv("iter,layer,expert,tokens\n5,0,0,1\n5,0,0,3\n", "long.csv");
        QCOMPARE(positions(per_iteration),
                 std::vector<std::string>{
                     "3:3: layer 0, expert 0, iteration '5' appears twice (also on line 2)"});

        const RoutingHistogramCsv cells = parseRoutingHistogramCsv(
            "layer, expert, tokens\n0, 1.5, 2\n-1, 0, 2\n0, 0, many\n0, 1\n", "long.csv");
        QCOMPARE(positions(cells),
                 (std::vector<std::string>{
                     "2:4: expected an expert number from 0 to 16383, got '1.5'",
                     "3:1: expected a layer number (a whole number >= 0), got '-1'",
                     "4:7: expected a non-negative number, got 'many'",
                     "5:4: this row has 2 cells; the header's 'tokens' column is number 3"}));

        const RoutingHistogramCsv gap =
            parseRoutingHistogramCsv("layer,expert,tokens\n0,0,1\n2,0,1\n", "long.csv");
        QCOMPARE(positions(gap),
                 std::vector<std::string>{"3:1: layer 2 follows 0: layer 1 is missing (the "
                                          "layers must be consecutive)"});
    }

    void longTableWithoutCountColumnIsNotLong() {
        // layer and expert but no count: the first name 'layer' marks an index column, and
        // 'expert' is then a weight column whose header is just a name.
        const std::vector<CsvRecord> records = splitCsv("layer,expert,share\n0,1,2\n");
        QCOMPARE(detectRoutingCsvLayout(records), RoutingCsvLayout::index_column);
        const RoutingHistogramCsv direct = histogramFromLongTable(records, "long.csv");
        QCOMPARE(positions(direct),
                 std::vector<std::string>{
                     "1:1: a long routing table needs a header with the columns layer, expert and "
                     "one of tokens, tokens_per_expert, count or weight"});
    }

    void fixtureFilesLoad() {
        // The test data (also seeds of fuzz_routing_csv). pandas: BOM, CRLF, unnamed index.
        const std::string pandas = MOE_TEST_DATA_DIR "/routing_pandas_index.csv";
        const RoutingHistogramCsv indexed =
            parseRoutingHistogramCsv(test::readFile(pandas), pandas);
        QVERIFY2(indexed.ok(), formatAll(indexed.diagnostics).c_str());
        QCOMPARE(indexed.rows, (Rows{{1204, 893, 0, 77}, {15.5, 2.25, 3, 900}}));
        // Long, by hand: layer 0 e0 = 1204 + 1000 (two iterations), e1 = 893, e2 missing = 0,
        // e3 = 77; layer 1 e0 = 15, e1 missing = 0, e2 = 3, e3 = 900.
        const std::string tidy = MOE_TEST_DATA_DIR "/routing_long.csv";
        const RoutingHistogramCsv long_rows = parseRoutingHistogramCsv(test::readFile(tidy), tidy);
        QVERIFY2(long_rows.ok(), formatAll(long_rows.diagnostics).c_str());
        QCOMPARE(long_rows.layout, RoutingCsvLayout::long_counts);
        QCOMPARE(long_rows.rows, (Rows{{2204, 893, 0, 77}, {15, 0, 3, 900}}));
    }

    // --- through the scenario loader ----------------------------------------------------------

    void everyLayoutLoadsAsRoutingHistogramCsv() {
        // The loader reads routing.histogram_csv through parseRoutingHistogramCsv: the same
        // 16-expert row in the three layouts gives the same histogram.
        QTemporaryDir dir;
        std::string header = "expert_0", values = "3";
        std::string long_text = "layer,expert,tokens\n0,0,3\n";
        for (int e = 1; e < 16; ++e) {
            header += ",expert_" + std::to_string(e);
            values += ",1";
            long_text += "0," + std::to_string(e) + ",1\n";
        }
        const std::pair<const char*, std::string> files[] = {
            {"wide.csv", header + "\n" + values + "\n"},
            {"indexed.csv", "," + header + "\n0," + values + "\n"},
            {"long.csv", long_text},
        };
        for (const auto& [name, text] : files) {
            const std::string path = dir.filePath(name).toStdString();
            std::ofstream(path, std::ios::binary) << text;
            const LoadResult r = loadScenarioTextWithOverrides(
                defaultScenarioYaml(), "d.yaml", ".",
                {"routing.model=histogram", "routing.histogram_csv=" + path});
            QVERIFY2(r.ok(), (name + std::string(": ") + formatAll(r.diagnostics)).c_str());
            QCOMPARE(r.scenario->routing.histogram,
                     (Rows{{3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}));
        }
    }
};

QTEST_GUILESS_MAIN(TestRoutingCsv)
#include "test_routing_csv.moc"
