#include "moe_widgets/report/design_report.h"

#include "common/view_export.h"
#include "design_report_content.h"
#include "moe/compare.h"
#include "moe/design_summary.h"
#include "moe/group_overlay.h"
#include "moe_widgets/charts/breakdown_chart.h"
#include "moe_widgets/charts/heatmap_view.h"
#include "moe_widgets/charts/memory_chart.h"
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/document/view_state.h"
#include "moe_widgets/report/compare_view.h"
#include "moe_widgets/timeline/gantt_view.h"
#include "moe_widgets/topology/topology_view.h"
#include "topology/topology_model.h"

#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <memory>
#include <vector>

namespace moe::widgets {

namespace {

using namespace report;

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

QString layoutLine(const Scenario& s) {
    const LayoutSpec& l = s.layout;
    QString o = QStringLiteral("TP=%1 CP=%2 PP=%3").arg(l.tp).arg(l.cp).arg(l.pp);
    if (l.vpp > 1)
        o += QStringLiteral(" (x%1 virtual)").arg(l.vpp);
    o += QStringLiteral(" DP=%1").arg(l.dp);
    if (s.model.isMoe())
        o += QStringLiteral(" | EP=%1 expert-TP=%2 expert-DP=%3")
                 .arg(l.ep)
                 .arg(l.etp)
                 .arg(l.expertDp());
    o += QStringLiteral(" | order %1, %2").arg(qs(toString(l.order)), qs(toString(l.schedule)));
    return o;
}

QString groupName(GroupKind k) {
    switch (k) {
    case GroupKind::edp:
        return QStringLiteral("expert-DP");
    case GroupKind::etp:
        return QStringLiteral("expert-TP");
    default:
        return qs(toString(k)).toUpper();
    }
}

/// A view's SVG export of this result as a diagram of the report.
/// The diagram an export wrote to `path` (`problem`: what the export said went wrong).
Diagram readDiagram(const QString& id, const QString& title, const QString& path,
                    const QString& problem) {
    Diagram d{id, title, {}, problem};
    if (!d.problem.isEmpty())
        return d;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        d.problem = QStringLiteral("cannot read %1").arg(path);
        return d;
    }
    d.svg = file.readAll();
    return d;
}

QString diagramPath(const QString& dir, const QString& id) {
    return dir + QLatin1Char('/') + id + QStringLiteral(".svg");
}

Diagram exportDiagram(ReportView* view, const QString& dir, const QString& id,
                      const QString& title) {
    const QString path = diagramPath(dir, id);
    return readDiagram(id, title, path, view->exportTo(path));
}

/// The details page's key facts: cluster, network, model, layout, batch, file and date.
void addSummary(Content& out, const DesignReportInput& input) {
    const EvaluationResult& cur = *input.current;
    const Scenario& s = cur.scenario;
    const Report& r = cur.report;
    const ClusterSpec& c = s.cluster;
    auto add = [&out](const QString& label, const QString& value) {
        out.summary_labels << label;
        out.summary_values << value;
    };
    add(QStringLiteral("Cluster"), QStringLiteral("%1 × %2 in %3 nodes of %4 GPUs, %5")
                                       .arg(c.gpuCount())
                                       .arg(qs(c.gpu.name))
                                       .arg(c.nodes)
                                       .arg(c.gpus_per_node)
                                       .arg(qs(c.describeRacks())));
    add(QStringLiteral("Network"),
        QStringLiteral("%1 %2 GB/s per GPU per direction; %3 × %4 per node, %5, "
                       "oversubscription %6:1")
            .arg(qs(c.gpu.scale_up_fabric))
            .arg(detail::formatCount(c.gpu.scale_up_gbps))
            .arg(c.nics_per_node)
            .arg(qs(c.nic.name))
            .arg(QString::fromLatin1(displayName(c.fabric)))
            .arg(c.oversubscription, 0, 'f', 1));
    const ModelSpec& m = s.model;
    QString model = QStringLiteral("%1: %2 layers").arg(qs(m.name)).arg(m.layers);
    if (m.isMoe())
        model += QStringLiteral(" (%1 MoE), %2 experts top-%3")
                     .arg(m.moeLayers())
                     .arg(m.experts)
                     .arg(m.top_k);
    model += QStringLiteral(", hidden %1, seq %2; %3B parameters, %4B active per token")
                 .arg(m.hidden)
                 .arg(m.seq_len)
                 .arg(r.params.total / 1e9, 0, 'f', 1)
                 .arg(r.params.active_per_token / 1e9, 0, 'f', 1);
    add(QStringLiteral("Model"), model);
    add(QStringLiteral("Layout"), layoutLine(s));
    add(QStringLiteral("Batch"), QStringLiteral("%1 micro-batches per step; %2 tokens per step")
                                     .arg(r.micro_batches)
                                     .arg(detail::formatCount(r.throughput.tokens_per_step)));
    if (!input.source_file.isEmpty())
        add(QStringLiteral("File"), QFileInfo(input.source_file).fileName());
    add(QStringLiteral("Generated"),
        QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyy-MM-dd HH:mm 'UTC'")));
}

/// A figure that is 0 only because the run is not configured (no training.total_tokens, no
/// prices): money and the run's totals. Such rows are left out rather than shown as "$0".
bool unconfigured(const HeadlineFigure& h, double value) {
    if (value != 0)
        return false;
    const QString name = QString::fromUtf8(h.name);
    return h.format == FigureFormat::usd || name.startsWith(QLatin1String("time to train")) ||
           name == QLatin1String("GPU-hours") || name.startsWith(QLatin1String("energy"));
}

Table headlineTable(const Report& r) {
    Table t;
    t.headers = {QStringLiteral("Headline figure"), QStringLiteral("Value")};
    t.right = {false, true};
    for (const HeadlineFigure& h : headlineFigures())
        if (!unconfigured(h, h.get(r)))
            t.rows.push_back({qs(h.name), formatFigure(h.format, h.get(r))});
    t.rows.push_back(
        {QStringLiteral("memory fits"),
         r.memory.fits
             ? QStringLiteral("yes (%1 headroom)").arg(detail::formatBytes(r.memory.margin_bytes))
             : QStringLiteral("NO: %1 over HBM").arg(detail::formatBytes(-r.memory.margin_bytes))});
    return t;
}

/// Per parallel group: its degree, how many there are, and what they span and ride on.
Table groupTable(const Report& r, const ClusterSpec& c) {
    Table t;
    t.headers = {QStringLiteral("Group"),  QStringLiteral("Degree"),
                 QStringLiteral("Groups"), QStringLiteral("GPUs per domain"),
                 QStringLiteral("Nodes"),  QStringLiteral("Racks"),
                 QStringLiteral("Rides")};
    t.right = {false, true, true, true, true, true, false};
    if (r.placement != nullptr) {
        for (const GroupKind k : {GroupKind::tp, GroupKind::cp, GroupKind::pp, GroupKind::dp,
                                  GroupKind::ep, GroupKind::etp, GroupKind::edp}) {
            const GroupSpan& span = r.placement->spanOf(k);
            const QString rides = span.gpus <= 1 ? QStringLiteral("-")
                                  : span.link_class == LinkClass::scale_up
                                      ? qs(c.gpu.scale_up_fabric)
                                      : QString::fromLatin1(displayName(c.fabric));
            t.rows.push_back({groupName(k), QString::number(span.gpus),
                              QString::number(r.placement->groupsOf(k).size()),
                              QString::number(span.max_gpus_per_domain),
                              QString::number(span.nodes), QString::number(span.racks), rides});
        }
    }
    return t;
}

/// The tightest stage's memory per GPU by part, with its margin (red when over HBM).
Table memoryTable(const MemoryBreakdown& mem) {
    Table t;
    t.headers = {QStringLiteral("Part"), QStringLiteral("Per GPU")};
    t.right = {false, true};
    const std::pair<const char*, double> parts[] = {
        {"weights", mem.weights_bytes},
        {"gradients", mem.gradients_bytes},
        {"optimizer states", mem.optimizer_bytes},
        {"activations", mem.activations_bytes},
        {"dispatch buffers", mem.dispatch_buffers_bytes},
        {"workspace", mem.workspace_bytes},
        {"total", mem.total_bytes},
        {"HBM", mem.hbm_bytes},
    };
    for (const auto& [name, bytes] : parts)
        t.rows.push_back({QString::fromUtf8(name), detail::formatBytes(bytes)});
    t.rows.push_back({mem.fits ? QStringLiteral("margin") : QStringLiteral("over by"),
                      detail::formatBytes(std::abs(mem.margin_bytes))});
    t.colours.assign(t.rows.size(), {});
    if (!mem.fits)
        t.colours.back() = {kRed, kRed};
    return t;
}

QColor severityColour(DesignWarning::Severity severity) {
    return severity == DesignWarning::Severity::critical  ? kRed
           : severity == DesignWarning::Severity::warning ? QColor(0x9a, 0x67, 0x00)
                                                          : kMuted;
}

Table warningTable(const Report& r) {
    Table t;
    t.headers = {QStringLiteral("Severity"), QStringLiteral("Warning")};
    t.right = {false, false};
    for (const DesignWarning& w : r.warnings) {
        t.rows.push_back({qs(toString(w.severity)), qs(warningText(w))});
        t.colours.push_back({severityColour(w.severity), QColor()});
    }
    return t;
}

/// Page 1: the layout in words, the figures a review starts from, the verdict against the
/// baseline and the most severe warnings. Every sentence is generated from the evaluation.
void addFirstPage(Content& out, const DesignReportInput& input) {
    const EvaluationResult& cur = *input.current;
    const Report& r = cur.report;
    out.layout_words = r.placement != nullptr ? qs(layoutInWords(cur.scenario, *r.placement))
                                              : QStringLiteral("(no placement)");
    auto add = [&out](const QString& label, const QString& value) {
        out.key_labels << label;
        out.key_values << value;
    };
    add(QStringLiteral("step time"), formatFigure(FigureFormat::seconds, r.step_time_s));
    add(QStringLiteral("tokens/s"), formatFigure(FigureFormat::count, r.throughput.tokens_per_s));
    add(QStringLiteral("MFU"), formatFigure(FigureFormat::percent, r.throughput.mfu));
    const MemoryBreakdown& m = r.memory;
    add(QStringLiteral("memory peak"),
        QStringLiteral("%1 of %2 HBM (stage %3): %4")
            .arg(detail::formatBytes(m.total_bytes), detail::formatBytes(m.hbm_bytes))
            .arg(m.stage)
            .arg(m.fits ? QStringLiteral("%1 headroom").arg(detail::formatBytes(m.margin_bytes))
                        : QStringLiteral("OVER by %1").arg(detail::formatBytes(-m.margin_bytes))));
    const Economics& e = r.economics;
    const QString unset = QStringLiteral("not configured (training.total_tokens)");
    add(QStringLiteral("time to train"),
        e.wall_time_s > 0 ? QStringLiteral("%1 with failures and checkpoints (%2 without)")
                                .arg(formatFigure(FigureFormat::seconds, e.wall_time_s),
                                     formatFigure(FigureFormat::seconds, e.compute_time_s))
                          : unset);
    add(QStringLiteral("cost to train"),
        e.cost_usd > 0 ? QStringLiteral("%1 USD (%2 per GPU-hour, %3)")
                             .arg(formatFigure(FigureFormat::usd, e.cost_usd),
                                  QStringLiteral("$") + QString::number(e.usd_per_gpu_hour, 'f', 2),
                                  e.rental ? QStringLiteral("rented") : QStringLiteral("owned"))
                       : unset);
    constexpr int kTopWarnings = 3;
    for (const DesignWarning& w : r.warnings) {
        if (out.top_warnings.size() == kTopWarnings) {
            ++out.more_warnings;
            continue;
        }
        out.top_warnings << qs(toString(w.severity)) + QStringLiteral(": ") + qs(warningText(w));
        out.top_warning_colours.push_back(severityColour(w.severity));
    }
}

/// A side of the comparison named by what differs: "Baseline: EP=8", "Current: EP=16" (never
/// two columns with the same name, as two designs of one scenario would have).
QString comparisonSideLabel(const std::vector<SettingChange>& changes, bool baseline) {
    const QString side = baseline ? QStringLiteral("Baseline") : QStringLiteral("Current");
    if (changes.empty())
        return side + QStringLiteral(" (same settings)");
    return side + QStringLiteral(": ") +
           qs(describeChanges(changes, baseline ? ChangeStyle::baseline : ChangeStyle::current, 1));
}

/// With a baseline: the verdict, the two sides labelled by what differs, the figures side by
/// side with verdicts (unconfigured money left out), and the changed fields.
void addComparison(Content& out, const DesignReportInput& input, const QString& dir) {
    if (input.baseline == nullptr)
        return;
    const Scenario& s = input.current->scenario;
    const Report& r = input.current->report;
    const EvaluationResult& base = *input.baseline;
    out.with_baseline = true;
    const std::vector<SettingChange> changes = settingChanges(base.scenario, s);
    out.verdict =
        qs(describeVerdict(verdictAgainstBaseline(base.report, r), base.scenario.name, changes));
    out.baseline_label = comparisonSideLabel(changes, true);
    out.current_label = comparisonSideLabel(changes, false);
    out.baseline_note = QStringLiteral("Baseline: '%1'").arg(qs(base.scenario.name));
    if (!input.baseline_file.isEmpty())
        out.baseline_note += QStringLiteral(" (%1)").arg(QFileInfo(input.baseline_file).fileName());
    out.baseline_note += QStringLiteral("; what differs: %1. Change = current − baseline; green "
                                        "is better, red is worse.")
                             .arg(qs(describeChanges(changes, ChangeStyle::arrow, 6)));
    const Comparison cmp = compareDesigns(base.scenario, base.report, s, r);
    out.comparison.headers = {QStringLiteral("Figure"), out.baseline_label,  out.current_label,
                              QStringLiteral("Change"), QStringLiteral("%"), QString()};
    out.comparison.right = {false, true, true, true, true, false};
    QPalette light;
    light.setColor(QPalette::Base, Qt::white);
    light.setColor(QPalette::Text, kInk);
    for (const FigureDelta& d : cmp.figures) {
        if (unconfigured(*d.figure, d.baseline) && unconfigured(*d.figure, d.current))
            continue;
        const QString verdict = d.verdict == Verdict::better  ? QStringLiteral("better")
                                : d.verdict == Verdict::worse ? QStringLiteral("worse")
                                                              : QString();
        // Configured on one side only: that side says so, and there is no change to show.
        const bool one_sided =
            unconfigured(*d.figure, d.baseline) || unconfigured(*d.figure, d.current);
        auto value = [&d](double v) {
            return unconfigured(*d.figure, v) ? QStringLiteral("not configured")
                                              : formatFigure(d.figure->format, v);
        };
        out.comparison.rows.push_back(
            {qs(d.figure->name), value(d.baseline), value(d.current),
             one_sided ? QStringLiteral("n/a") : formatFigureDelta(d.figure->format, d.delta),
             one_sided ? QStringLiteral("n/a") : formatRelative(d.relative),
             one_sided ? QString() : verdict});
        const QColor colour = one_sided ? QColor() : verdictColor(d.verdict, light);
        out.comparison.colours.push_back({QColor(), QColor(), QColor(), colour, colour, colour});
    }
    out.fields.headers = {QStringLiteral("Scenario field"), QStringLiteral("Baseline"),
                          QStringLiteral("Current")};
    out.fields.right = {false, false, false};
    for (const FieldDifference& f : cmp.fields)
        out.fields.rows.push_back({qs(f.path), qs(f.baseline), qs(f.current)});

    ScenarioDocument document;
    document.reset(s);
    ViewState state;
    CompareView compare(&document, &state);
    compare.resize(1600, 700);
    compare.showResult(input.current);
    compare.setBaseline(input.baseline);
    out.compare = exportDiagram(&compare, dir, QStringLiteral("compare"),
                                QStringLiteral("Step breakdown: baseline vs current"));
}

/// Topology pages: the plain diagram, then each group overlay (TP, EP, expert DP, DP, PP
/// stage or DualPipe rank, CP) with its legend of where each group spans. kTopologyDiagrams
/// counts them (the PDF's page count).
constexpr int kTopologyDiagrams = 1 + static_cast<int>(kGroupOverlays.size());
void addTopologyDiagrams(Content& out, TopologyView& view, const QString& dir, bool dualpipe) {
    out.topology.push_back(
        exportDiagram(&view, dir, QStringLiteral("topology"), QStringLiteral("Topology")));
    for (const GroupOverlay overlay : kGroupOverlays) {
        const QString id = QStringLiteral("topology-") + QString::fromLatin1(toString(overlay));
        const QString path = diagramPath(dir, id);
        out.topology.push_back(readDiagram(
            id, QStringLiteral("Topology: %1 groups").arg(detail::overlayName(overlay, dualpipe)),
            path, view.exportOverlayTo(path, overlay)));
    }
}

/// The diagrams: each view's own SVG export of this result.
void addDiagrams(Content& out, const DesignReportInput& input, const QString& dir) {
    const Scenario& s = input.current->scenario;
    ScenarioDocument document;
    document.reset(s);
    ViewState state;
    TopologyView topology(&document, &state);
    topology.widget()->resize(1600, 900);
    topology.showResult(input.current);
    addTopologyDiagrams(out, topology, dir, s.layout.schedule == PipelineSchedule::dualpipe);
    BreakdownChart breakdown(&document, &state);
    GanttView gantt(&document, &state);
    HeatmapView heatmap(&document, &state);
    const std::pair<ReportView*, const char*> views[] = {
        {&breakdown, "Step-time breakdown"},
        {&gantt, "Step timeline (Gantt)"},
        {&heatmap, "Expert load heatmap"},
    };
    for (const auto& [view, title] : views) {
        view->widget()->resize(1600, 900);
        view->showResult(input.current);
        out.diagrams.push_back(exportDiagram(view, dir, view->viewId(), QString::fromUtf8(title)));
    }
    MemoryChart memory(&document, &state);
    memory.widget()->resize(1600, 900);
    memory.showResult(input.current);
    out.memory_chart =
        exportDiagram(&memory, dir, QStringLiteral("memory"), QStringLiteral("Memory per GPU"));
}

Content gather(const DesignReportInput& input) {
    const EvaluationResult& cur = *input.current;
    const Scenario& s = cur.scenario;
    const Report& r = cur.report;
    Content out;
    out.name = qs(s.name);
    addFirstPage(out, input);
    addSummary(out, input);
    out.author_note = qs(s.description);
    out.headlines = headlineTable(r);
    out.layout_lines << layoutLine(s);
    for (const std::string& line : r.layout_description)
        out.layout_lines << qs(line);
    out.groups = groupTable(r, s.cluster);
    out.memory = memoryTable(r.memory);
    out.memory_note =
        QStringLiteral("Pipeline stage %1, the one with the least margin.").arg(r.memory.stage);
    out.warnings = warningTable(r);
    QTemporaryDir dir;
    addComparison(out, input, dir.path());
    addDiagrams(out, input, dir.path());
    return out;
}

} // namespace

namespace report {

int pageCount(const Content& c) {
    // Title; comparison and its chart; details; layout in words; topology; the other diagrams;
    // memory; warnings.
    return 1 + (c.with_baseline ? 2 : 0) + 1 + 1 + static_cast<int>(c.topology.size()) +
           static_cast<int>(c.diagrams.size()) + 1 + 1;
}

} // namespace report

int designReportPageCount(bool with_baseline) {
    constexpr int kOtherDiagrams = 3; // breakdown, Gantt, heatmap
    return 5 + kTopologyDiagrams + kOtherDiagrams + (with_baseline ? 2 : 0);
}

QString writeDesignReport(const QString& path, const DesignReportInput& input) {
    if (input.current == nullptr)
        return QStringLiteral("nothing to report: no evaluation yet");
    const QString suffix = QFileInfo(path).suffix().toLower();
    const bool pdf = suffix == QLatin1String("pdf");
    const bool html = suffix == QLatin1String("html") || suffix == QLatin1String("htm");
    if (!pdf && !html)
        return QStringLiteral("unknown report format \"%1\" (use .pdf or .html)").arg(suffix);
    const Content content = gather(input);
    Q_ASSERT(report::pageCount(content) == designReportPageCount(input.baseline != nullptr));
    return pdf ? report::writePdf(path, content) : report::writeHtml(path, content);
}

} // namespace moe::widgets
