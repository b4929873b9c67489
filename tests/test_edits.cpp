// Field-by-field edits (moe/edits.h): the metadata table covers every key of the format
// reference, values read back exactly, and setScenarioField accepts and refuses exactly what a file
// (or --set) would.
#include "moe/edits.h"
#include "moe/scenario_io.h"
#include "test_support.h"

#include <QtTest>

#include <algorithm>
#include <regex>
#include <set>

using namespace moe;

namespace {

/// The keys documented in the format reference (docs/format.md, generated from the schema
/// table), as dotted paths: one table per section, a row per key.
std::set<std::string> documentedKeys() {
    const std::string reference = test::readFile(std::string(MOE_SOURCE_DIR) + "/docs/format.md");
    std::set<std::string> keys;
    const std::regex heading(R"(^## `([\w.]+)`)");
    const std::regex row(R"(^\| `([a-z0-9_]+)` \|)");
    std::string section;
    std::size_t start = 0;
    while (start < reference.size()) {
        std::size_t stop = reference.find('\n', start);
        if (stop == std::string::npos)
            stop = reference.size();
        const std::string line = reference.substr(start, stop - start);
        start = stop + 1;
        std::smatch m;
        if (std::regex_search(line, m, heading))
            section = m[1];
        else if (line == "## Top level")
            section.clear();
        else if (std::regex_search(line, m, row))
            keys.insert(section.empty() ? std::string(m[1]) : section + "." + std::string(m[1]));
    }
    return keys;
}

std::string messages(const Diagnostics& diagnostics) {
    std::string text;
    for (const Diagnostic& d : diagnostics)
        text += d.field + ": " + d.message + "\n";
    return text;
}

bool mentions(const Diagnostics& diagnostics, const std::string& needle) {
    return std::any_of(diagnostics.begin(), diagnostics.end(), [&](const Diagnostic& d) {
        return d.severity == Diagnostic::Severity::error &&
               d.message.find(needle) != std::string::npos;
    });
}

Scenario loadSample(const std::string& name) {
    return loadScenarioFile(test::samplePath(name)).scenario.value_or(Scenario{});
}

} // namespace

class TestEdits : public QObject {
    Q_OBJECT
private slots:
    void scaledDataParallel() {
        // The default (64 GPUs, TP = CP = PP = 1, DP 64, EP 8) on 512: 64 nodes, DP 512, and the
        // global batch at the same sequences per replica, 512 x (batch / 64).
        const Scenario& s = defaultScenario();
        const int64_t per_replica = s.training.global_batch / s.layout.dp;
        const FieldEditResult r = moe::scaledDataParallel(s, 512);
        QVERIFY2(r.ok(), formatAll(r.diagnostics).c_str());
        QCOMPARE(r.scenario->cluster.nodes, 64);
        QCOMPARE(r.scenario->cluster.gpuCount(), 512);
        QCOMPARE(r.scenario->layout.dp, 512);
        QCOMPARE(r.scenario->layout.ep, s.layout.ep);
        QCOMPARE(r.scenario->training.global_batch, per_replica * 512);
        QCOMPARE(r.scenario->model, s.model);
        // Refusals say why: not whole nodes, not a multiple of TP x CP x PP, racks by hand,
        // and a layout the scaled DP cannot hold (EP 8 over 8 GPUs of DP 8 fits; EP 16 not).
        const auto reason = [](const FieldEditResult& f) {
            return f.diagnostics.empty() ? std::string() : f.diagnostics.front().message;
        };
        QVERIFY(reason(moe::scaledDataParallel(s, 100)).find("not whole nodes") !=
                std::string::npos);
        const FieldEditResult pp16 = setFields(
            s, {{"layout.pp", int64_t{16}}, {"layout.dp", int64_t{4}}, {"layout.ep", int64_t{4}}});
        QVERIFY2(pp16.ok(), formatAll(pp16.diagnostics).c_str());
        QVERIFY(reason(moe::scaledDataParallel(*pp16.scenario, 8)).find("TP x CP x PP = 16") !=
                std::string::npos);
        const FieldEditResult racks = setField(s, "cluster.rack_nodes", std::vector<int>{4, 4});
        QVERIFY2(racks.ok(), formatAll(racks.diagnostics).c_str());
        QVERIFY(reason(moe::scaledDataParallel(*racks.scenario, 512)).find("by hand") !=
                std::string::npos);
        QVERIFY(moe::scaledDataParallel(s, 8).ok());
        const FieldEditResult ep16 = setField(s, "layout.ep", int64_t{16});
        QVERIFY2(ep16.ok(), formatAll(ep16.diagnostics).c_str());
        QVERIFY(!moe::scaledDataParallel(*ep16.scenario, 8).ok());
    }

    void tableCoversTheDocumentedFormat() {
        std::set<std::string> documented = documentedKeys();
        QVERIFY2(documented.size() > 60, "docs/format.md tables not found");
        std::set<std::string> table;
        for (const FieldInfo& f : scenarioFields())
            table.insert(f.path);
        for (const std::string& key : documented)
            QVERIFY2(table.count(key), ("documented but not editable: " + key).c_str());
        for (const std::string& key : table)
            QVERIFY2(documented.count(key), ("editable but not documented: " + key).c_str());
        QCOMPARE(table.size(), scenarioFields().size()); // no duplicates
    }

    void metadataIsComplete() {
        const std::vector<std::string> groups = {"scenario", "cluster", "model",
                                                 "training", "layout",  "routing"};
        std::size_t group_index = 0;
        for (const FieldInfo& f : scenarioFields()) {
            QVERIFY2(!f.tooltip.empty(), f.path.c_str());
            // Groups appear in file order, each once.
            while (group_index < groups.size() && groups[group_index] != f.group)
                ++group_index;
            QVERIFY2(group_index < groups.size(), f.path.c_str());
            QCOMPARE(f.group == "scenario" ? f.key : f.group + "." + f.key, f.path);
            if (f.kind == FieldKind::choice)
                QVERIFY2(f.choices.size() >= 2, f.path.c_str());
            if (f.kind == FieldKind::integer || f.kind == FieldKind::number)
                QVERIFY2(f.min.has_value(), f.path.c_str());
        }
        const FieldInfo* bw = findScenarioField("cluster.scale_up.bandwidth_gbps");
        QVERIFY(bw);
        QCOMPARE(bw->unit, std::string("GB/s per GPU per direction"));
        QCOMPARE(bw->group, std::string("cluster"));
        QCOMPARE(bw->key, std::string("scale_up.bandwidth_gbps"));
        const FieldInfo* stage = findScenarioField("training.zero_stage");
        QVERIFY(stage && stage->min && stage->max);
        QCOMPARE(*stage->min, 0.0);
        QCOMPARE(*stage->max, 3.0);
        const FieldInfo* gpu = findScenarioField("cluster.gpu");
        QVERIFY(gpu);
        QVERIFY(std::count(gpu->choices.begin(), gpu->choices.end(), "gb200") == 1);
        QVERIFY(findScenarioField("layout.epp") == nullptr);
    }

    void readsTheDefault() {
        const Scenario& s = defaultScenario();
        QCOMPARE(getScenarioField(s, "layout.ep").value(), std::string("8"));
        QCOMPARE(getScenarioField(s, "layout.dp").value(), std::string("64"));
        QCOMPARE(getScenarioField(s, "layout.order").value(), std::string("tp-cp-ep-dp-pp"));
        QCOMPARE(getScenarioField(s, "layout.schedule").value(), std::string("1f1b"));
        QCOMPARE(getScenarioField(s, "cluster.gpu").value(), std::string("h100-sxm"));
        QCOMPARE(getScenarioField(s, "cluster.scale_up.bandwidth_gbps").value(),
                 std::string("450"));
        QCOMPARE(getScenarioField(s, "cluster.scale_out.topology").value(),
                 std::string("rail-optimized"));
        QCOMPARE(getScenarioField(s, "routing.balancing").value(), std::string("aux_loss"));
        QCOMPARE(getScenarioField(s, "routing.model").value(), std::string("published"));
        QCOMPARE(getScenarioField(s, "training.total_tokens").value(), std::string("1e+12"));
        QCOMPARE(getScenarioField(s, "model.precision.grads").value(), std::string("fp32"));
        QCOMPARE(getScenarioField(s, "layout.expert_placement").value(), std::string("[]"));
        QVERIFY(!getScenarioField(s, "layout.epp").has_value());
    }

    // Writing back what was read changes nothing, for every field of every sample: the getters,
    // the quoting of text and the --set path agree.
    void everyFieldRoundTrips_data() {
        QTest::addColumn<QString>("file");
        for (const std::string& file : test::sampleFiles())
            QTest::newRow(file.substr(file.rfind('/') + 1).c_str()) << QString::fromStdString(file);
    }
    void everyFieldRoundTrips() {
        QFETCH(QString, file);
        const LoadResult loaded = loadScenarioFile(file.toStdString());
        QVERIFY(loaded.ok());
        const Scenario& s = *loaded.scenario;
        const std::string dir = file.toStdString().substr(0, file.toStdString().rfind('/'));
        for (const FieldInfo& f : scenarioFields()) {
            const std::string value = getScenarioField(s, f.path).value();
            if (f.kind == FieldKind::choice)
                QVERIFY2(std::count(f.choices.begin(), f.choices.end(), value) == 1,
                         (f.path + " = " + value).c_str());
            if ((f.kind == FieldKind::integer || f.kind == FieldKind::number) && f.min)
                QVERIFY2(std::stod(value) >= *f.min, (f.path + " = " + value).c_str());
            if ((f.kind == FieldKind::integer || f.kind == FieldKind::number) && f.max)
                QVERIFY2(std::stod(value) <= *f.max, (f.path + " = " + value).c_str());
            // MLA dimensions may only be written with attention: mla.
            if (f.path.rfind("model.mla.", 0) == 0 && s.model.attention != AttentionKind::mla)
                continue;
            const FieldEditResult edited = setScenarioField(s, f.path, value, dir);
            QVERIFY2(edited.ok(),
                     (f.path + " = " + value + "\n" + messages(edited.diagnostics)).c_str());
            QVERIFY2(*edited.scenario == s, (f.path + " = " + value).c_str());
        }
    }

    void setsOneField() {
        const Scenario& s = defaultScenario();
        const FieldEditResult r = setScenarioField(s, "layout.ep", "16");
        QVERIFY2(r.ok(), messages(r.diagnostics).c_str());
        Scenario expected = s;
        expected.layout.ep = 16;
        QVERIFY(*r.scenario == expected);

        const FieldEditResult alpha = setScenarioField(s, "routing.zipf_alpha", " 1.25 ");
        QVERIFY(alpha.ok());
        QCOMPARE(alpha.scenario->routing.zipf_alpha, 1.25);

        const FieldEditResult nic = setScenarioField(s, "cluster.scale_out.nic", "cx8-800g");
        QVERIFY(nic.ok());
        QCOMPARE(nic.scenario->cluster.nic.bandwidth_gbps, 96.0);
    }

    // Fields whose default follows others behave as in a file that leaves them out.
    void dependentDefaultsFollow() {
        const Scenario& s = defaultScenario();
        const FieldEditResult tp = setScenarioField(s, "layout.tp", "2");
        QVERIFY2(tp.ok(), messages(tp.diagnostics).c_str());
        QCOMPARE(tp.scenario->layout.dp, 32); // 64 GPUs / tp 2
        const FieldEditResult gpu = setScenarioField(s, "cluster.gpu", "b200");
        QVERIFY2(gpu.ok(), messages(gpu.diagnostics).c_str());
        QCOMPARE(gpu.scenario->cluster.gpu.bf16_tflops, 2250.0);
        QCOMPARE(gpu.scenario->cluster.gpu.scale_up_gbps, 900.0);
        QCOMPARE(gpu.scenario->cluster.gpu.hbm_gb, 180.0);
    }

    void textIsTakenLiterally() {
        const std::string name = "what-if: EP 16 # \"fast\" \\ yes";
        const FieldEditResult r = setScenarioField(defaultScenario(), "description", name);
        QVERIFY2(r.ok(), messages(r.diagnostics).c_str());
        QCOMPARE(r.scenario->description, name);
        const FieldEditResult n = setScenarioField(defaultScenario(), "model.name", "");
        QVERIFY(n.ok());
        QCOMPARE(n.scenario->model.name, std::string());
    }

    void refusesInvalidValuesWithTheReason() {
        const Scenario& s = defaultScenario();
        const FieldEditResult ep = setScenarioField(s, "layout.ep", "12");
        QVERIFY(!ep.ok());
        QVERIFY2(mentions(ep.diagnostics, "layout.ep = 12 does not divide model.experts = 16"),
                 messages(ep.diagnostics).c_str());
        for (const Diagnostic& d : ep.diagnostics)
            QCOMPARE(d.line, 0); // no positions in text the user never saw

        const FieldEditResult topology = setScenarioField(s, "cluster.scale_out.topology", "rail");
        QVERIFY(!topology.ok());
        QVERIFY2(mentions(topology.diagnostics, "expected one of fat-tree | rail-optimized"),
                 messages(topology.diagnostics).c_str());

        const FieldEditResult tp = setScenarioField(s, "layout.tp", "two");
        QVERIFY(!tp.ok());
        QVERIFY2(mentions(tp.diagnostics, "expected a whole number, got 'two'"),
                 messages(tp.diagnostics).c_str());

        const FieldEditResult typo = setScenarioField(s, "layout.epp", "2");
        QVERIFY(!typo.ok());
        QVERIFY2(mentions(typo.diagnostics, "did you mean 'layout.ep'"),
                 messages(typo.diagnostics).c_str());

        const FieldEditResult empty = setScenarioField(s, "layout.ep", "  ");
        QVERIFY(!empty.ok());
        QVERIFY(mentions(empty.diagnostics, "a value is needed"));
    }

    // The ranges in the table are the validator's: one step outside each is refused.
    void rangesMatchValidation_data() {
        QTest::addColumn<QString>("file");
        QTest::newRow("gqa") << "dgx-h100-8x8-moe16.yaml";
        QTest::newRow("mla") << "deepseek-v3-2048xh800.yaml";
    }
    void rangesMatchValidation() {
        QFETCH(QString, file);
        const Scenario s = loadSample(file.toStdString());
        const bool mla = s.model.attention == AttentionKind::mla;
        for (const FieldInfo& f : scenarioFields()) {
            if (f.kind != FieldKind::integer && f.kind != FieldKind::number)
                continue;
            // Each attention kind ignores the other's fields (MLA ignores kv_heads; the mla.*
            // fields may not even be written with GQA), so each is checked where it counts.
            if (mla ? f.path == "model.kv_heads" : f.path.rfind("model.mla.", 0) == 0)
                continue;
            if (f.min) {
                const double below = *f.min > 0 && *f.min < 1 ? 0.0 : *f.min - 1;
                const std::string value = f.kind == FieldKind::integer
                                              ? std::to_string(static_cast<long long>(below))
                                              : std::to_string(below);
                QVERIFY2(!setScenarioField(s, f.path, value).ok(), (f.path + "=" + value).c_str());
            }
            if (f.max && *f.max < 1e9) {
                const std::string value = f.kind == FieldKind::integer
                                              ? std::to_string(static_cast<long long>(*f.max + 1))
                                              : std::to_string(*f.max + 0.5);
                QVERIFY2(!setScenarioField(s, f.path, value).ok(), (f.path + "=" + value).c_str());
            }
        }
    }

    void listsAreYaml() {
        const Scenario& s = defaultScenario();
        const FieldEditResult r = setScenarioField(s, "layout.expert_placement",
                                                   "[{expert: 3, ep_ranks: [0, 1], layer: 2}]");
        QVERIFY2(r.ok(), messages(r.diagnostics).c_str());
        QCOMPARE(r.scenario->layout.expert_placement.size(), std::size_t(1));
        QCOMPARE(r.scenario->layout.expert_placement[0].ep_ranks, (std::vector<int>{0, 1}));
        QCOMPARE(getScenarioField(*r.scenario, "layout.expert_placement").value(),
                 std::string("[{expert: 3, ep_ranks: [0, 1], layer: 2}]"));
        const FieldEditResult bad =
            setScenarioField(s, "layout.expert_placement", "[{expert: 3, ep_ranks: [9]}]");
        QVERIFY(!bad.ok());
    }

    // Moving a node between racks, a typed edit: the default's two full racks of 4
    // (nodes_per_rack 4).
    void movingNodesBetweenRacks() {
        using Racks = std::vector<int>;
        Scenario s = defaultScenario();
        // Into a full rack: the capacity rule refuses it and says why.
        QCOMPARE(rackNodesAfterMove(s.cluster, 0, 1).value(), (Racks{3, 5}));
        const FieldEditResult refused = moveNodeBetweenRacks(s, 0, 1);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.diagnostics.front().message,
                 std::string("cluster.rack_nodes[1] = 5 is more than a rack holds "
                             "(cluster.nodes_per_rack = 4)"));
        // Into a new rack after the last one, then back: the emptied rack disappears.
        QCOMPARE(rackNodesAfterMove(s.cluster, 0, 2).value(), (Racks{3, 4, 1}));
        FieldEditResult r = moveNodeBetweenRacks(s, 0, 2);
        QVERIFY2(r.ok(), messages(r.diagnostics).c_str());
        QCOMPARE(r.scenario->cluster.rackCount(), 3);
        QCOMPARE(r.scenario->cluster.rack_nodes, (Racks{3, 4, 1}));
        QCOMPARE(rackNodesAfterMove(r.scenario->cluster, 2, 0).value(), (Racks{4, 4}));
        QCOMPARE(rackNodesAfterMove(r.scenario->cluster, 2, 1).value(), (Racks{3, 5}));
        // The typed edit and the text one agree.
        const FieldEditResult typed = setField(s, "cluster.rack_nodes", FieldValue(Racks{3, 4, 1}));
        const FieldEditResult text = setScenarioField(s, "cluster.rack_nodes", "[3, 4, 1]");
        QVERIFY(typed.ok() && text.ok() && *typed.scenario == *text.scenario);
        // Nothing to move: same rack, or a rack that does not exist.
        QVERIFY(!rackNodesAfterMove(s.cluster, 1, 1));
        QVERIFY(!rackNodesAfterMove(s.cluster, 2, 0));
        QVERIFY(!rackNodesAfterMove(s.cluster, 0, 3));
        QVERIFY(!moveNodeBetweenRacks(s, 1, 1).ok());
        // A rack-wide NVLink domain (NVL72) is a fixed unit: a tray cannot change racks.
        s.cluster.scale_up_domain = ScaleUpDomain::rack;
        const FieldEditResult nvl = moveNodeBetweenRacks(s, 0, 2);
        QVERIFY(!nvl.ok());
        QVERIFY2(messages(nvl.diagnostics).find("a rack is one NVLink domain") != std::string::npos,
                 messages(nvl.diagnostics).c_str());
    }

    // A typed value of the wrong type is refused with the field's name; the typed and the text
    // paths agree with the file's reading (the text path is the loader's strict reader).
    void typedEditsCheckTheType() {
        const Scenario& s = defaultScenario();
        const FieldEditResult wrong = setField(s, "layout.ep", FieldValue(std::string("eight")));
        QVERIFY(!wrong.ok());
        QVERIFY2(mentions(wrong.diagnostics, "layout.ep: expected a whole number"),
                 messages(wrong.diagnostics).c_str());
        const FieldEditResult ep = setField(s, "layout.ep", FieldValue(int64_t{16}));
        QVERIFY2(ep.ok(), messages(ep.diagnostics).c_str());
        QVERIFY(*ep.scenario == *setScenarioField(s, "layout.ep", "16").scenario);
        const FieldEditResult schedule =
            setField(s, "layout.schedule", FieldValue(std::string("zigzag")));
        QVERIFY(!schedule.ok());
        QVERIFY(mentions(schedule.diagnostics, "expected one of gpipe | 1f1b"));
        QVERIFY(!setField(s, "layout.epp", FieldValue(int64_t{2})).ok());
    }

    // Fields only valid together change together: the default's 16 experts over EP = 8; 12
    // experts alone do not divide over EP = 8 (12 mod 8 = 4), 12 experts with EP = 4 do.
    void setsFieldsTogether() {
        const Scenario& s = defaultScenario();
        QVERIFY(!setField(s, "model.experts", FieldValue(int64_t{12})).ok());
        const FieldEditResult both =
            setFields(s, {{"model.experts", int64_t{12}}, {"layout.ep", int64_t{4}}});
        QVERIFY2(both.ok(), messages(both.diagnostics).c_str());
        QCOMPARE(both.scenario->model.experts, 12);
        QCOMPARE(both.scenario->layout.ep, 4);
        // The same as the --set text path with both overrides.
        const FieldEditResult text = setFieldAsOverride(
            *setFieldAsOverride(s, "layout.ep", "4").scenario, "model.experts", "12");
        QVERIFY(text.ok() && *text.scenario == *both.scenario);
        // Racks of 5 with a 40 kW limit: 8 nodes fill a rack of 5 and one of 3.
        const FieldEditResult racks = setFields(
            s, {{"cluster.nodes_per_rack", int64_t{5}}, {"cluster.rack_power_limit_kw", 40.0}});
        QVERIFY2(racks.ok(), messages(racks.diagnostics).c_str());
        QCOMPARE(racks.scenario->cluster.nodesInRacks(), (std::vector<int>{5, 3}));
        QCOMPARE(racks.scenario->cluster.rack_power_limit_kw, 40.0);
        // One bad assignment refuses the whole edit and names its field.
        const FieldEditResult bad =
            setFields(s, {{"layout.tp", int64_t{2}}, {"layout.epp", int64_t{32}}});
        QVERIFY(!bad.ok());
        QVERIFY(mentions(bad.diagnostics, "layout.epp"));
    }

    // The default places 16 experts round-robin over EP = 8: expert e on EP rank e mod 8, so
    // experts 3 and 11 share rank 3.
    void movesExperts() {
        using Ranks = std::vector<int>;
        const Scenario& s = defaultScenario();
        QCOMPARE(expertRanks(s, -1)[3], (Ranks{3}));
        QCOMPARE(expertRanks(s, -1)[11], (Ranks{3}));
        // Every layer: one entry, seen by every MoE layer.
        const FieldEditResult moved = moveExpert(s, -1, 3, 3, 5);
        QVERIFY2(moved.ok(), messages(moved.diagnostics).c_str());
        QCOMPARE(moved.scenario->layout.expert_placement.size(), std::size_t{1});
        QCOMPARE(moved.scenario->layout.expert_placement[0].layer, -1);
        QCOMPARE(moved.scenario->layout.expert_placement[0].ep_ranks, (Ranks{5}));
        QCOMPARE(expertRanks(*moved.scenario, 7)[3], (Ranks{5}));
        // Moving back restates round-robin: the entry goes away and the scenario is the original.
        const FieldEditResult back = moveExpert(*moved.scenario, -1, 3, 5, 3);
        QVERIFY(back.ok());
        QVERIFY(back.scenario->layout.expert_placement.empty());
        QVERIFY(*back.scenario == s);
        // One layer only: layer 2 moves, the others keep round-robin.
        const FieldEditResult layer2 = moveExpert(s, 2, 3, 3, 4);
        QVERIFY(layer2.ok());
        QCOMPARE(expertRanks(*layer2.scenario, 2)[3], (Ranks{4}));
        QCOMPARE(expertRanks(*layer2.scenario, 1)[3], (Ranks{3}));
        QCOMPARE(expertRanks(*layer2.scenario, -1)[3], (Ranks{3}));
        // Replicas: ranks sorted, duplicates dropped.
        const FieldEditResult replicated = setExpertRanks(s, -1, 3, {5, 3, 3});
        QVERIFY(replicated.ok());
        QCOMPARE(expertRanks(*replicated.scenario, -1)[3], (Ranks{3, 5}));
        // The typed edit and the text one agree.
        const std::string written =
            getScenarioField(*replicated.scenario, "layout.expert_placement").value();
        const FieldEditResult text = setScenarioField(s, "layout.expert_placement", written);
        QVERIFY(text.ok() && *text.scenario == *replicated.scenario);
        // Refusals say why.
        QVERIFY(mentions(moveExpert(s, -1, 3, 4, 5).diagnostics, "expert 3 is not on EP rank 4"));
        QVERIFY(
            mentions(moveExpert(s, -1, 3, 3, 3).diagnostics, "expert 3 is already on EP rank 3"));
        QVERIFY(mentions(moveExpert(s, -1, 16, 0, 1).diagnostics, "expert 16 does not exist"));
        QVERIFY(mentions(moveExpert(s, 24, 3, 3, 4).diagnostics, "MoE layer 24 does not exist"));
        QVERIFY(!moveExpert(s, -1, 3, 3, 8).ok()); // EP rank 8 of 0..7: the validator refuses
        QVERIFY(mentions(setExpertRanks(s, -1, 3, {}).diagnostics, "at least one EP rank"));
    }
};

QTEST_GUILESS_MAIN(TestEdits)
#include "test_edits.moc"
