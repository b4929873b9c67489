// The schema table (moe/schema.h) is the one declaration of the scenario format: the committed
// reference (docs/format.md) is its output, every row is complete, and the loader, the editor's
// table and the range check read it (test_schema_dummy adds a row and sees it everywhere).
#include "moe/edits.h"
#include "moe/scenario_io.h"
#include "moe/schema.h"
#include "moe/validate.h"
#include "test_support.h"

#include <QtTest>

using namespace moe;

class TestSchema : public QObject {
    Q_OBJECT
private slots:
    // docs/format.md is generated; regenerate it with
    //   moe-plan schema --markdown -o docs/format.md
    void committedReferenceIsCurrent() {
        const std::string committed =
            test::readFile(std::string(MOE_SOURCE_DIR) + "/docs/format.md");
        QVERIFY2(committed == schemaMarkdown(),
                 "docs/format.md differs from `moe-plan schema --markdown`; regenerate it with "
                 "moe-plan schema --markdown -o docs/format.md");
    }

    void everyRowIsComplete() {
        const ScenarioSchema& schema = scenarioSchema();
        QVERIFY(schema.fields().size() > 80);
        for (const SchemaField& f : schema.fields()) {
            QVERIFY2(!f.help.empty(), f.path.c_str());
            QCOMPARE(f.section == "scenario" ? f.key : f.section + "." + f.key, f.path);
            QVERIFY2(schema.find(f.path) == &f, f.path.c_str());
            if (f.kind == FieldKind::choice)
                QVERIFY2(f.choices.size() >= 2, f.path.c_str());
            if (f.range.kind == Range::Kind::size || f.range.kind == Range::Kind::between)
                QVERIFY2(f.range.min <= f.range.max, f.path.c_str());
        }
        // Sections are keys of their parents, in file order: the GPU preset comes first in
        // cluster (every other cluster field refines it) and the NIC first in scale_out.
        const std::vector<SchemaEntry>& cluster = schema.children("cluster");
        QCOMPARE(cluster.front().key, std::string("gpu"));
        QCOMPARE(schema.children("cluster.scale_out").front().key, std::string("nic"));
        QVERIFY(schema.findSection("cluster.gpu_overrides"));
        QVERIFY(schema.find("layout.epp") == nullptr);
    }

    // Each field's text reads back through its own row to the same value, on every sample.
    void valuesReadBackThroughTheirRows() {
        for (const std::string& file : test::sampleFiles()) {
            const LoadResult loaded = loadScenarioFile(file);
            QVERIFY2(loaded.ok(), file.c_str());
            for (const SchemaField& f : scenarioSchema().fields()) {
                // A preset brings its figures, which the sample may refine.
                if (f.path == "cluster.gpu" || f.path == "cluster.scale_out.nic")
                    continue;
                Scenario copy = *loaded.scenario;
                const std::string problem = assignField(f, copy, fieldValue(f, *loaded.scenario));
                QVERIFY2(problem.empty(), (f.path + ": " + problem).c_str());
                QVERIFY2(copy == *loaded.scenario, (file + ": " + f.path).c_str());
                QCOMPARE(getScenarioField(copy, f.path).value(), fieldText(f, copy));
            }
        }
    }

    // The range check comes from the table: one step outside a row's range is refused with the
    // field's name, for every ranged field the validator checks on its own.
    void rangesComeFromTheTable() {
        const Scenario base = defaultScenario();
        for (const SchemaField& f : scenarioSchema().fields()) {
            if (f.range.kind == Range::Kind::none || f.range_checked_by_rules ||
                (f.applies && !f.applies(base)))
                continue;
            Scenario s = base;
            const FieldValue current = fieldValue(f, s);
            const double below = f.range.kind == Range::Kind::positive ? 0 : f.range.min - 1;
            const FieldValue outside = std::holds_alternative<double>(current)
                                           ? FieldValue(below)
                                           : FieldValue(static_cast<int64_t>(below));
            QVERIFY2(assignField(f, s, outside).empty(), f.path.c_str());
            const Diagnostics d = validateScenario(s);
            QVERIFY2(hasErrors(d), f.path.c_str());
            QCOMPARE(d.front().field, f.path);
        }
    }
};

QTEST_GUILESS_MAIN(TestSchema)
#include "test_schema.moc"
