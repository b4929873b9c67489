// The documentation tells the truth (issue 19): docs/scenario.md's annotated default loads to
// exactly the shipped default scenario, and its error examples are what `moe-plan validate`
// prints today on the files in docs/examples/, run from the repository root as the page says.
#include "moe/scenario_io.h"
#include "test_support.h"

#include <QProcess>
#include <QtTest>

#include <sstream>

using namespace moe;

namespace {

const std::string kGuide = std::string(MOE_SOURCE_DIR) + "/docs/scenario.md";
const std::string kShippedDefault = "dgx-h100-8x8-moe16.yaml";

/// The body of the first fenced block after `marker` (an HTML comment in the page), without
/// its fence lines; empty when the marker or the block is missing.
std::string blockAfter(const std::string& page, const std::string& marker) {
    const std::size_t at = page.find(marker);
    if (at == std::string::npos)
        return {};
    const std::size_t fence = page.find("```", at);
    const std::size_t body = page.find('\n', fence);
    const std::size_t close = page.find("\n```", body);
    if (fence == std::string::npos || body == std::string::npos || close == std::string::npos)
        return {};
    return page.substr(body + 1, close - body);
}

std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

struct Run {
    std::string output; ///< stdout and stderr together, as a terminal shows them
    int exit_code = -1;
};

Run runFromSourceDir(const QStringList& args) {
    QProcess p;
    p.setWorkingDirectory(QStringLiteral(MOE_SOURCE_DIR));
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral(MOE_PLAN_EXE), args);
    if (!p.waitForFinished(60000))
        return {};
    return {p.readAll().toStdString(), p.exitCode()};
}

/// One `$ moe-plan ...` line of an example block and the lines printed after it.
struct Example {
    QStringList args;
    std::string expected;
};

/// "$ moe-plan validate FILE   # comment" lines start an example; the lines up to the next
/// "$" are its output.
std::vector<Example> examplesIn(const std::string& block) {
    std::vector<Example> examples;
    for (const std::string& line : splitLines(block)) {
        if (line.rfind("$ moe-plan ", 0) == 0) {
            const std::string command = line.substr(2, line.find('#') - 2);
            QStringList words =
                QString::fromStdString(command).split(QLatin1Char(' '), Qt::SkipEmptyParts);
            words.removeFirst(); // the program
            examples.push_back({words, {}});
        } else if (!examples.empty()) {
            examples.back().expected += line + "\n";
        }
    }
    return examples;
}

} // namespace

class TestDocs : public QObject {
    Q_OBJECT
private slots:
    void annotatedDefaultIsTheShippedDefault() {
        const std::string yaml =
            blockAfter(test::readFile(kGuide), "<!-- test_docs: annotated default -->");
        QVERIFY2(!yaml.empty(), "annotated default block not found in docs/scenario.md");
        const LoadResult documented = loadScenarioText(yaml, "docs/scenario.md");
        QVERIFY2(documented.ok(), "the annotated default does not load");
        const LoadResult shipped = loadScenarioFile(test::samplePath(kShippedDefault));
        QVERIFY(shipped.ok());
        // Every field (operator== over the whole value), so a changed micro_batch or balance in
        // either file fails here; and the built-in default is that same file.
        QVERIFY2(*documented.scenario == *shipped.scenario,
                 ("the annotated default differs from the shipped one:\n" +
                  toYaml(*documented.scenario) + "\nvs\n" + toYaml(*shipped.scenario))
                     .c_str());
        QVERIFY(*shipped.scenario == defaultScenario());
    }

    void errorExamplesAreWhatValidatePrints() {
        const std::string block =
            blockAfter(test::readFile(kGuide), "<!-- test_docs: validate examples -->");
        const std::vector<Example> examples = examplesIn(block);
        QVERIFY2(examples.size() >= 4, "validate examples not found in docs/scenario.md");
        for (const Example& example : examples) {
            QCOMPARE(example.args.value(0), QStringLiteral("validate"));
            const Run run = runFromSourceDir(example.args);
            QCOMPARE(run.exit_code, 1);
            QCOMPARE(QString::fromStdString(run.output), QString::fromStdString(example.expected));
        }
    }

    // The page calls each example "the default with one or two lines changed".
    void examplesAreTheDefaultWithALineOrTwoChanged() {
        const std::vector<std::string> shipped =
            splitLines(test::readFile(test::samplePath(kShippedDefault)));
        const std::vector<Example> examples =
            examplesIn(blockAfter(test::readFile(kGuide), "<!-- test_docs: validate examples -->"));
        QVERIFY(!examples.empty());
        for (const Example& example : examples) {
            const std::string path =
                std::string(MOE_SOURCE_DIR) + "/" + example.args.value(1).toStdString();
            const std::vector<std::string> broken = splitLines(test::readFile(path));
            QCOMPARE(broken.size(), shipped.size());
            std::size_t changed = 0;
            for (std::size_t i = 0; i < broken.size(); ++i)
                changed += broken[i] != shipped[i] ? 1 : 0;
            QVERIFY2(changed >= 1 && changed <= 2, path.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestDocs)
#include "test_docs.moc"
