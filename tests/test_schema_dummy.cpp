// Built with MOE_SCHEMA_TEST_FIELD (tests/CMakeLists.txt): the scenario format with one extra
// row in the schema table, routing.schema_test_field (whole number, 2 to 7, default 4, unit
// "widgets"), and its member. Nothing else declares it, yet the loader, the saver, --set, the
// editor's table, typed edits, the range check and the reference all know it.
#include "moe/edits.h"
#include "moe/scenario_io.h"
#include "moe/schema.h"
#include "moe/validate.h"

#include <QtTest>

using namespace moe;

namespace {

const char* const kYaml = R"(name: dummy
cluster:
  gpu: h100-sxm
  nodes: 2
model:
  layers: 4
  hidden: 1024
  heads: 8
  seq_len: 1024
  vocab: 32000
  ffn_hidden: 4096
training:
  global_batch: 16
routing:
  schema_test_field: 6
)";

std::string messages(const Diagnostics& diagnostics) {
    std::string text;
    for (const Diagnostic& d : diagnostics)
        text += d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " +
                d.field + ": " + d.message + "\n";
    return text;
}

} // namespace

class TestSchemaDummy : public QObject {
    Q_OBJECT
private slots:
    void loaderAndSaverKnowTheField() {
        const LoadResult loaded = loadScenarioText(kYaml, "dummy.yaml");
        QVERIFY2(loaded.ok(), messages(loaded.diagnostics).c_str());
        QCOMPARE(loaded.scenario->routing.schema_test_field, 6);
        QCOMPARE(loaded.source.find("routing.schema_test_field").line, 15);
        // Saved because it differs from its default (4), and read back.
        const std::string saved = toYaml(*loaded.scenario);
        QVERIFY2(saved.find("schema_test_field: 6") != std::string::npos, saved.c_str());
        QVERIFY(*loadScenarioText(saved, "saved.yaml").scenario == *loaded.scenario);
        // At its default it is left out.
        Scenario plain = *loaded.scenario;
        plain.routing.schema_test_field = 4;
        QVERIFY(toYaml(plain).find("schema_test_field") == std::string::npos);
    }

    void setOverridesAndRangesKnowTheField() {
        const LoadResult set = loadScenarioTextWithOverrides(kYaml, "dummy.yaml", ".",
                                                             {"routing.schema_test_field=3"});
        QVERIFY2(set.ok(), messages(set.diagnostics).c_str());
        QCOMPARE(set.scenario->routing.schema_test_field, 3);

        // Out of range in the file: the range check names the field and its line.
        std::string yaml = kYaml;
        yaml.replace(yaml.find("schema_test_field: 6"), 20, "schema_test_field: 9");
        const LoadResult high = loadScenarioText(yaml, "dummy.yaml");
        QVERIFY(!high.ok());
        QCOMPARE(high.diagnostics.size(), std::size_t(1));
        QCOMPARE(high.diagnostics[0].field, std::string("routing.schema_test_field"));
        QCOMPARE(high.diagnostics[0].line, 15);
        QCOMPARE(high.diagnostics[0].message,
                 std::string("routing.schema_test_field = 9 exceeds the supported maximum of 7"));
        const LoadResult low = loadScenarioTextWithOverrides(kYaml, "dummy.yaml", ".",
                                                             {"routing.schema_test_field=1"});
        QVERIFY(!low.ok());
        QCOMPARE(low.diagnostics[0].message,
                 std::string("routing.schema_test_field = 1 must be at least 2"));
        QCOMPARE(low.diagnostics[0].file, std::string("--set"));
        // Not a whole number: the loader's strict reading, with the field's name.
        const LoadResult text = loadScenarioTextWithOverrides(kYaml, "dummy.yaml", ".",
                                                              {"routing.schema_test_field=many"});
        QVERIFY(!text.ok());
        QVERIFY2(text.diagnostics[0].message.find("routing.schema_test_field: expected a whole "
                                                  "number") != std::string::npos,
                 messages(text.diagnostics).c_str());
        // A misspelling is caught with a suggestion.
        const LoadResult typo =
            loadScenarioTextWithOverrides(kYaml, "dummy.yaml", ".", {"routing.schema_test_fild=3"});
        QVERIFY(!typo.ok());
        QVERIFY2(messages(typo.diagnostics).find("did you mean 'routing.schema_test_field'") !=
                     std::string::npos,
                 messages(typo.diagnostics).c_str());
    }

    void editorTableAndEditsKnowTheField() {
        const FieldInfo* info = findScenarioField("routing.schema_test_field");
        QVERIFY(info);
        QCOMPARE(info->kind, FieldKind::integer);
        QCOMPARE(info->unit, std::string("widgets"));
        QCOMPARE(info->min.value(), 2.0);
        QCOMPARE(info->max.value(), 7.0);
        QCOMPARE(info->group, std::string("routing"));
        const Scenario s = *loadScenarioText(kYaml, "dummy.yaml").scenario;
        QCOMPARE(getScenarioField(s, "routing.schema_test_field").value(), std::string("6"));
        const FieldEditResult edit = setScenarioField(s, "routing.schema_test_field", "5");
        QVERIFY2(edit.ok(), messages(edit.diagnostics).c_str());
        QCOMPARE(edit.scenario->routing.schema_test_field, 5);
        QVERIFY(!setScenarioField(s, "routing.schema_test_field", "8").ok());
    }

    void referenceListsTheField() {
        const std::string markdown = schemaMarkdown();
        QVERIFY2(markdown.find("| `schema_test_field` | whole number | widgets | 2 to 7 | `4` |") !=
                     std::string::npos,
                 markdown.c_str());
    }
};

QTEST_GUILESS_MAIN(TestSchemaDummy)
#include "test_schema_dummy.moc"
