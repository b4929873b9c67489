#include "moe_widgets/report/design_report.h"

#include "common/view_export.h"
#include "moe/compare.h"
#include "moe_widgets/charts/breakdown_chart.h"
#include "moe_widgets/charts/heatmap_view.h"
#include "moe_widgets/charts/memory_chart.h"
#include "moe_widgets/document/scenario_document.h"
#include "moe_widgets/document/view_state.h"
#include "moe_widgets/report/compare_view.h"
#include "moe_widgets/timeline/gantt_view.h"
#include "moe_widgets/topology/topology_view.h"

#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgRenderer>
#include <QTemporaryDir>

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

namespace moe::widgets {

namespace {

constexpr int kBasePages = 8;
constexpr int kBaselinePages = 2;

const QColor kInk(0x1f, 0x23, 0x28);
const QColor kMuted(0x59, 0x63, 0x6e);
const QColor kRule(0xd0, 0xd7, 0xde);
const QColor kBand(0xf3, 0xf5, 0xf8);

struct Table {
    QStringList headers;
    std::vector<QStringList> rows;
    std::vector<bool> right;                  ///< per column: right-aligned
    std::vector<std::vector<QColor>> colours; ///< per row and column, invalid = ink
};

/// Everything the report shows, gathered once for both formats.
struct Content {
    QString name;
    QString description;
    QStringList summary_labels, summary_values;
    Table headlines;
    QStringList layout_lines;
    Table groups;
    Table memory;
    QString memory_note;
    Table warnings;
    Table comparison;
    Table fields;
    QString baseline_name;
    /// SVG documents of the views, by id: topology, breakdown, gantt, heatmap, memory, compare.
    QHash<QString, QByteArray> svgs;
    QHash<QString, QString> svg_problems;
};

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

QByteArray exportSvg(ReportView* view, const QString& dir, QString* problem) {
    const QString path = dir + QLatin1Char('/') + view->viewId() + QStringLiteral(".svg");
    *problem = view->exportTo(path);
    if (!problem->isEmpty())
        return {};
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *problem = QStringLiteral("cannot read %1").arg(path);
        return {};
    }
    return file.readAll();
}

/// The first page's key facts: cluster, network, model, layout, batch, file and date.
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

Table headlineTable(const Report& r) {
    Table t;
    t.headers = {QStringLiteral("Headline figure"), QStringLiteral("Value")};
    t.right = {false, true};
    for (const HeadlineFigure& h : headlineFigures())
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
        t.colours.back() = {QColor(0xc0, 0x1f, 0x2a), QColor(0xc0, 0x1f, 0x2a)};
    return t;
}

Table warningTable(const Report& r) {
    Table t;
    t.headers = {QStringLiteral("Severity"), QStringLiteral("Warning")};
    t.right = {false, false};
    for (const DesignWarning& w : r.warnings) {
        t.rows.push_back({qs(toString(w.severity)), qs(warningText(w))});
        const QColor colour =
            w.severity == DesignWarning::Severity::critical  ? QColor(0xc0, 0x1f, 0x2a)
            : w.severity == DesignWarning::Severity::warning ? QColor(0x9a, 0x67, 0x00)
                                                             : kMuted;
        t.colours.push_back({colour, QColor()});
    }
    return t;
}

/// With a baseline: its name, the figures side by side with verdicts, and the changed fields.
void addComparison(Content& out, const DesignReportInput& input) {
    const Scenario& s = input.current->scenario;
    const Report& r = input.current->report;
    if (input.baseline == nullptr)
        return;
    const EvaluationResult& base = *input.baseline;
    out.baseline_name = qs(base.scenario.name);
    if (!input.baseline_file.isEmpty())
        out.baseline_name += QStringLiteral(" (%1)").arg(QFileInfo(input.baseline_file).fileName());
    const Comparison cmp = compareDesigns(base.scenario, base.report, s, r);
    out.comparison.headers = {QStringLiteral("Figure"),  QStringLiteral("Baseline"),
                              QStringLiteral("Current"), QStringLiteral("Change"),
                              QStringLiteral("%"),       QStringLiteral("")};
    out.comparison.right = {false, true, true, true, true, false};
    QPalette light;
    light.setColor(QPalette::Base, Qt::white);
    light.setColor(QPalette::Text, kInk);
    for (const FigureDelta& d : cmp.figures) {
        const QString verdict = d.verdict == Verdict::better  ? QStringLiteral("better")
                                : d.verdict == Verdict::worse ? QStringLiteral("worse")
                                                              : QString();
        out.comparison.rows.push_back(
            {qs(d.figure->name), formatFigure(d.figure->format, d.baseline),
             formatFigure(d.figure->format, d.current),
             formatFigureDelta(d.figure->format, d.delta), formatRelative(d.relative), verdict});
        const QColor colour = verdictColor(d.verdict, light);
        out.comparison.colours.push_back({QColor(), QColor(), QColor(), colour, colour, colour});
    }
    out.fields.headers = {QStringLiteral("Scenario field"), QStringLiteral("Baseline"),
                          QStringLiteral("Current")};
    out.fields.right = {false, false, false};
    for (const FieldDifference& f : cmp.fields)
        out.fields.rows.push_back({qs(f.path), qs(f.baseline), qs(f.current)});
}

/// The diagrams: each view's own SVG export of this result.
void addDiagrams(Content& out, const DesignReportInput& input) {
    const Scenario& s = input.current->scenario;
    QTemporaryDir dir;
    ScenarioDocument document;
    document.reset(s);
    ViewState state;
    std::vector<std::unique_ptr<ReportView>> views;
    views.push_back(std::make_unique<TopologyView>(&document, &state));
    views.push_back(std::make_unique<BreakdownChart>(&document, &state));
    views.push_back(std::make_unique<GanttView>(&document, &state));
    views.push_back(std::make_unique<HeatmapView>(&document, &state));
    views.push_back(std::make_unique<MemoryChart>(&document, &state));
    for (const auto& view : views) {
        view->widget()->resize(1600, 900);
        view->showResult(input.current);
        QString problem;
        out.svgs.insert(view->viewId(), exportSvg(view.get(), dir.path(), &problem));
        if (!problem.isEmpty())
            out.svg_problems.insert(view->viewId(), problem);
    }
    if (input.baseline != nullptr) {
        CompareView compare(&document, &state);
        compare.resize(1600, 700);
        compare.showResult(input.current);
        compare.setBaseline(input.baseline);
        QString problem;
        out.svgs.insert(compare.viewId(), exportSvg(&compare, dir.path(), &problem));
        if (!problem.isEmpty())
            out.svg_problems.insert(compare.viewId(), problem);
    }
}

Content gather(const DesignReportInput& input) {
    const EvaluationResult& cur = *input.current;
    const Scenario& s = cur.scenario;
    const Report& r = cur.report;
    Content out;
    out.name = qs(s.name);
    out.description = qs(s.description);
    addSummary(out, input);
    out.headlines = headlineTable(r);
    out.layout_lines << layoutLine(s);
    for (const std::string& line : r.layout_description)
        out.layout_lines << qs(line);
    out.groups = groupTable(r, s.cluster);
    out.memory = memoryTable(r.memory);
    out.memory_note =
        QStringLiteral("Pipeline stage %1, the one with the least margin.").arg(r.memory.stage);
    out.warnings = warningTable(r);
    addComparison(out, input);
    addDiagrams(out, input);
    return out;
}

// ---------------------------------------------------------------------------------------------
// PDF

class PdfPages {
public:
    PdfPages(QPdfWriter& writer, QPainter& painter, QString name, int pages)
        : writer_(writer)
        , painter_(painter)
        , name_(std::move(name))
        , pages_(pages) {}

    /// Starts a page with its heading; returns the area left for content.
    QRectF begin(const QString& heading) {
        if (page_ > 0)
            writer_.newPage();
        ++page_;
        const QRectF full(0, 0, writer_.width(), writer_.height());
        const QRectF area = full.adjusted(kMargin, kMargin, -kMargin, -kMargin);
        QFont small = font(9);
        painter_.setFont(small);
        painter_.setPen(kMuted);
        painter_.drawText(area, Qt::AlignLeft | Qt::AlignTop,
                          QStringLiteral("MoE Planner design review — %1").arg(name_));
        painter_.drawText(area, Qt::AlignRight | Qt::AlignBottom,
                          QStringLiteral("Page %1 of %2").arg(page_).arg(pages_));
        QFont big = font(20, true);
        painter_.setFont(big);
        painter_.setPen(kInk);
        const double top = area.top() + QFontMetricsF(small).height() + 6;
        const QRectF heading_rect(area.left(), top, area.width(), QFontMetricsF(big).height());
        painter_.drawText(heading_rect, Qt::AlignLeft | Qt::AlignVCenter, heading);
        painter_.setPen(QPen(kRule, 1));
        const double rule = heading_rect.bottom() + 6;
        painter_.drawLine(QPointF(area.left(), rule), QPointF(area.right(), rule));
        return QRectF(area.left(), rule + 12, area.width(),
                      area.bottom() - QFontMetricsF(small).height() - 8 - (rule + 12));
    }

    int page() const { return page_; }

    static QFont font(double points, bool bold = false) {
        QFont f(QStringLiteral("DejaVu Sans"));
        f.setPixelSize(static_cast<int>(points + 0.5)); // 72 dpi: one pixel per point
        f.setBold(bold);
        // No shaping means no ligatures, so text copied (or pdftotext'ed) from the report
        // reads "fi", not the single glyph "ﬁ".
        f.setStyleStrategy(QFont::PreferNoShaping);
        return f;
    }

private:
    static constexpr double kMargin = 36;
    QPdfWriter& writer_;
    QPainter& painter_;
    QString name_;
    int pages_;
    int page_ = 0;
};

/// Wrapped text from the top of `rect`; returns the height used.
double drawText(QPainter& p, const QRectF& rect, const QString& text, const QFont& font,
                const QColor& colour = kInk) {
    p.setFont(font);
    p.setPen(colour);
    const QRectF used = p.boundingRect(rect, Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop, text);
    p.drawText(rect, Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop, text);
    return std::min(used.height(), rect.height());
}

/// A table from the top of `rect`. Columns get their content's width; when that is too wide,
/// the widest ones are capped at a common width and wrap. Rows that do not fit are summarised
/// in a last line. Returns the height used.
double drawTable(QPainter& p, const QRectF& rect, const Table& t, const QFont& font) {
    if (t.headers.isEmpty())
        return 0;
    QFont bold = font;
    bold.setBold(true);
    const QFontMetricsF fm(font, p.device()), fmb(bold, p.device());
    const int cols = static_cast<int>(t.headers.size());
    constexpr double kPad = 6;
    constexpr double kSlack = 2; // metrics and the PDF's text layout differ by a hair
    std::vector<double> widths(static_cast<size_t>(cols), 0);
    for (int c = 0; c < cols; ++c) {
        double w = fmb.horizontalAdvance(t.headers[c]);
        for (const QStringList& row : t.rows)
            w = std::max(w, fm.horizontalAdvance(row.value(c)));
        widths[static_cast<size_t>(c)] = w + kSlack;
    }
    // The first column (the row's name) keeps its width up to 45% of the table; the others
    // share the rest by water-filling: the largest common cap that makes them fit.
    const double avail = rect.width() - 2 * kPad * cols;
    double total = 0;
    for (const double w : widths)
        total += w;
    if (total > avail && avail > 0 && cols > 1) {
        widths[0] = std::min(widths[0], avail * 0.45);
        const double rest = avail - widths[0];
        std::vector<double> sorted(widths.begin() + 1, widths.end());
        std::sort(sorted.begin(), sorted.end());
        double below = 0;
        double cap = rest / static_cast<double>(sorted.size());
        for (size_t i = 0; i < sorted.size(); ++i) {
            const double share = (rest - below) / static_cast<double>(sorted.size() - i);
            if (sorted[i] > share) {
                cap = share;
                break;
            }
            below += sorted[i];
            cap = sorted[i];
        }
        for (size_t c = 1; c < widths.size(); ++c)
            widths[c] = std::min(widths[c], cap);
    }
    double table_w = 0;
    for (const double w : widths)
        table_w += w + 2 * kPad;
    const double line = fm.height() + 5;
    constexpr int kFlags = Qt::AlignTop | Qt::TextWordWrap;
    double y = rect.top();
    auto row_height = [&](const QStringList& cells, const QFont& f) {
        p.setFont(f);
        double h = line;
        for (int c = 0; c < cols; ++c) {
            const QRectF probe = p.boundingRect(QRectF(0, 0, widths[static_cast<size_t>(c)], 1e4),
                                                kFlags, cells.value(c));
            h = std::max(h, probe.height() + 5);
        }
        return h;
    };
    auto draw_row = [&](const QStringList& cells, const QFont& f,
                        const std::vector<QColor>* colours, bool band, double h) {
        if (band)
            p.fillRect(QRectF(rect.left(), y, table_w, h), kBand);
        double x = rect.left();
        p.setFont(f);
        for (int c = 0; c < cols; ++c) {
            const double w = widths[static_cast<size_t>(c)];
            const QColor colour = colours != nullptr && c < static_cast<int>(colours->size()) &&
                                          (*colours)[static_cast<size_t>(c)].isValid()
                                      ? (*colours)[static_cast<size_t>(c)]
                                      : kInk;
            p.setPen(colour);
            const bool right =
                c < static_cast<int>(t.right.size()) && t.right[static_cast<size_t>(c)];
            p.drawText(QRectF(x + kPad, y + 2.5, w, h - 2.5),
                       (right ? Qt::AlignRight : Qt::AlignLeft) | kFlags, cells.value(c));
            x += w + 2 * kPad;
        }
        y += h;
    };
    draw_row(t.headers, bold, nullptr, false, row_height(t.headers, bold));
    p.setPen(QPen(kRule, 1));
    p.drawLine(QPointF(rect.left(), y), QPointF(rect.left() + table_w, y));
    for (size_t i = 0; i < t.rows.size(); ++i) {
        const double h = row_height(t.rows[i], font);
        const bool last = i + 1 == t.rows.size();
        if (y + h + (last ? 0 : line) > rect.bottom()) {
            p.setFont(font);
            p.setPen(kMuted);
            p.drawText(QRectF(rect.left() + kPad, y + 2.5, rect.width(), line), Qt::AlignLeft,
                       QStringLiteral("… and %1 more (see the app)").arg(t.rows.size() - i));
            y += line;
            break;
        }
        draw_row(t.rows[i], font, i < t.colours.size() ? &t.colours[i] : nullptr, i % 2 == 1, h);
    }
    return y - rect.top();
}

/// An SVG scaled to fit `rect` with its proportions, centred horizontally.
void drawSvg(QPainter& p, const QRectF& rect, const QByteArray& svg, const QString& problem) {
    QSvgRenderer renderer(svg);
    if (svg.isEmpty() || !renderer.isValid()) {
        drawText(p, rect,
                 QStringLiteral("(diagram unavailable: %1)")
                     .arg(problem.isEmpty() ? QStringLiteral("no data") : problem),
                 PdfPages::font(11), kMuted);
        return;
    }
    QSizeF size = renderer.viewBoxF().size();
    if (size.isEmpty())
        size = renderer.defaultSize();
    size.scale(rect.size(), Qt::KeepAspectRatio);
    const QRectF target(rect.left() + (rect.width() - size.width()) / 2, rect.top(), size.width(),
                        size.height());
    renderer.render(&p, target);
}

QString paintPdf(QIODevice& device, const QString& path, const Content& c, bool with_baseline);

QString writePdf(const QString& path, const Content& c, bool with_baseline) {
    return detail::saveAtomically(
        path, [&](QIODevice& device) { return paintPdf(device, path, c, with_baseline); });
}

QString paintPdf(QIODevice& device, const QString& path, const Content& c, bool with_baseline) {
    QPdfWriter writer(&device);
    writer.setTitle(QStringLiteral("Design review: %1").arg(c.name));
    writer.setCreator(QStringLiteral("MoE Planner"));
    writer.setResolution(72); // one unit per point
    writer.setPageLayout(
        QPageLayout(QPageSize(QPageSize::A4), QPageLayout::Landscape, QMarginsF(0, 0, 0, 0)));
    QPainter p;
    if (!p.begin(&writer))
        return QStringLiteral("cannot write %1").arg(path);
    p.setRenderHint(QPainter::Antialiasing);
    PdfPages pages(writer, p, c.name, designReportPageCount(with_baseline));
    const QFont body = PdfPages::font(11);
    const QFont label = PdfPages::font(11, true);

    // 1. Title: summary on the left, headline figures on the right.
    QRectF area = pages.begin(QStringLiteral("Design review: %1").arg(c.name));
    double y = area.top();
    if (!c.description.isEmpty())
        y += drawText(p, QRectF(area.left(), y, area.width(), 60), c.description,
                      PdfPages::font(12), kMuted) +
             10;
    const double left_w = area.width() * 0.52;
    double ly = y;
    for (int i = 0; i < c.summary_labels.size(); ++i) {
        drawText(p, QRectF(area.left(), ly, 80, 40), c.summary_labels[i], label);
        ly +=
            drawText(p, QRectF(area.left() + 84, ly, left_w - 100, 80), c.summary_values[i], body) +
            8;
    }
    drawTable(p, QRectF(area.left() + left_w, y, area.width() - left_w, area.bottom() - y),
              c.headlines, PdfPages::font(10));

    // 2. Layout in words.
    area = pages.begin(QStringLiteral("Layout in words"));
    y = area.top();
    for (const QString& line : c.layout_lines)
        y += drawText(p, QRectF(area.left(), y, area.width(), 80), line, PdfPages::font(12)) + 6;
    y += 12;
    drawTable(p, QRectF(area.left(), y, area.width(), area.bottom() - y), c.groups, body);

    // 3-6. The diagrams.
    const std::pair<const char*, const char*> diagrams[] = {
        {"topology", "Topology"},
        {"breakdown", "Step-time breakdown"},
        {"gantt", "Step timeline (Gantt)"},
        {"heatmap", "Expert load heatmap"},
    };
    for (const auto& [id, title] : diagrams) {
        area = pages.begin(QString::fromUtf8(title));
        drawSvg(p, area, c.svgs.value(QString::fromUtf8(id)),
                c.svg_problems.value(QString::fromUtf8(id)));
    }

    // 7. Memory: the table and the per-stage chart.
    area = pages.begin(QStringLiteral("Memory per GPU"));
    y = area.top();
    y += drawText(p, QRectF(area.left(), y, area.width(), 30), c.memory_note, body, kMuted) + 8;
    const double table_w = 240;
    drawTable(p, QRectF(area.left(), y, table_w, area.bottom() - y), c.memory, body);
    drawSvg(p,
            QRectF(area.left() + table_w + 20, y, area.width() - table_w - 20, area.bottom() - y),
            c.svgs.value(QStringLiteral("memory")), c.svg_problems.value(QStringLiteral("memory")));

    // 8. Warnings.
    area = pages.begin(QStringLiteral("Warnings"));
    if (c.warnings.rows.empty())
        drawText(p, area, QStringLiteral("No design warnings."), PdfPages::font(12));
    else
        drawTable(p, area, c.warnings, body);

    if (with_baseline) {
        // 9. Comparison figures and the fields that differ.
        area = pages.begin(QStringLiteral("Comparison with the baseline"));
        y = area.top();
        y += drawText(p, QRectF(area.left(), y, area.width(), 40),
                      QStringLiteral("Baseline: %1. Change = current − baseline; green is better, "
                                     "red is worse.")
                          .arg(c.baseline_name),
                      body, kMuted) +
             10;
        const double figures_w = area.width() * 0.6;
        drawTable(p, QRectF(area.left(), y, figures_w, area.bottom() - y), c.comparison,
                  PdfPages::font(10));
        const QRectF right(area.left() + figures_w + 16, y, area.width() - figures_w - 16,
                           area.bottom() - y);
        if (c.fields.rows.empty())
            drawText(p, right, QStringLiteral("Scenario fields that differ: none."), body);
        else
            drawTable(p, right, c.fields, PdfPages::font(9));
        // 10. Breakdowns side by side.
        area = pages.begin(QStringLiteral("Step breakdown: baseline vs current"));
        drawSvg(p, area, c.svgs.value(QStringLiteral("compare")),
                c.svg_problems.value(QStringLiteral("compare")));
    }
    const int written = pages.page();
    if (!p.end())
        return QStringLiteral("cannot finish %1").arg(path);
    Q_ASSERT(written == designReportPageCount(with_baseline));
    Q_UNUSED(written);
    return {};
}

// ---------------------------------------------------------------------------------------------
// HTML

QString esc(const QString& s) {
    return s.toHtmlEscaped();
}

QString htmlTable(const Table& t) {
    if (t.rows.empty())
        return {};
    QString o = QStringLiteral("<table>\n<tr>");
    for (const QString& h : t.headers)
        o += QStringLiteral("<th>%1</th>").arg(esc(h));
    o += QStringLiteral("</tr>\n");
    for (size_t i = 0; i < t.rows.size(); ++i) {
        o += QStringLiteral("<tr>");
        for (int c = 0; c < t.headers.size(); ++c) {
            QString style;
            if (c < static_cast<int>(t.right.size()) && t.right[static_cast<size_t>(c)])
                style += QStringLiteral("text-align:right;");
            if (i < t.colours.size() && c < static_cast<int>(t.colours[i].size()) &&
                t.colours[i][static_cast<size_t>(c)].isValid())
                style += QStringLiteral("color:%1;font-weight:bold;")
                             .arg(t.colours[i][static_cast<size_t>(c)].name());
            o += style.isEmpty() ? QStringLiteral("<td>")
                                 : QStringLiteral("<td style=\"%1\">").arg(style);
            o += esc(t.rows[i].value(c)) + QStringLiteral("</td>");
        }
        o += QStringLiteral("</tr>\n");
    }
    return o + QStringLiteral("</table>\n");
}

/// The SVG document without its XML prologue, so it can sit inline in HTML.
QString inlineSvg(const QByteArray& svg, const QString& problem) {
    if (svg.isEmpty())
        return QStringLiteral("<p class=\"muted\">(diagram unavailable: %1)</p>\n")
            .arg(esc(problem.isEmpty() ? QStringLiteral("no data") : problem));
    QString text = QString::fromUtf8(svg);
    const qsizetype start = text.indexOf(QStringLiteral("<svg"));
    if (start > 0)
        text = text.mid(start);
    return QStringLiteral("<div class=\"figure\">\n%1\n</div>\n").arg(text);
}

QString writeHtml(const QString& path, const Content& c, bool with_baseline) {
    QString o;
    o += QStringLiteral(
             "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
             "<title>Design review: %1</title>\n<style>\n"
             "body{font-family:'DejaVu Sans',Arial,sans-serif;color:#1f2328;max-width:1200px;"
             "margin:2em auto;padding:0 1em;line-height:1.4}\n"
             "h1{font-size:1.8em}h2{border-bottom:1px solid #d0d7de;padding-bottom:.2em;"
             "margin-top:2em}\n"
             "table{border-collapse:collapse;margin:.5em 0}th,td{padding:.25em .7em;"
             "text-align:left;vertical-align:top}th{border-bottom:1px solid #d0d7de}\n"
             "tr:nth-child(even) td{background:#f3f5f8}.muted{color:#59636e}\n"
             ".figure svg{max-width:100%;height:auto;border:1px solid #d0d7de}\n"
             "dl{display:grid;grid-template-columns:max-content auto;gap:.3em 1em}"
             "dt{font-weight:bold}dd{margin:0}\n"
             "</style>\n</head>\n<body>\n")
             .arg(esc(c.name));
    o += QStringLiteral("<h1>Design review: %1</h1>\n").arg(esc(c.name));
    if (!c.description.isEmpty())
        o += QStringLiteral("<p class=\"muted\">%1</p>\n").arg(esc(c.description));
    o += QStringLiteral("<dl>\n");
    for (int i = 0; i < c.summary_labels.size(); ++i)
        o += QStringLiteral("<dt>%1</dt><dd>%2</dd>\n")
                 .arg(esc(c.summary_labels[i]), esc(c.summary_values[i]));
    o += QStringLiteral("</dl>\n<h2>Headline figures</h2>\n") + htmlTable(c.headlines);
    o += QStringLiteral("<h2>Layout in words</h2>\n<ul>\n");
    for (const QString& line : c.layout_lines)
        o += QStringLiteral("<li>%1</li>\n").arg(esc(line));
    o += QStringLiteral("</ul>\n") + htmlTable(c.groups);
    const std::pair<const char*, const char*> diagrams[] = {
        {"topology", "Topology"},
        {"breakdown", "Step-time breakdown"},
        {"gantt", "Step timeline (Gantt)"},
        {"heatmap", "Expert load heatmap"},
    };
    for (const auto& [id, title] : diagrams)
        o += QStringLiteral("<h2>%1</h2>\n").arg(QString::fromUtf8(title)) +
             inlineSvg(c.svgs.value(QString::fromUtf8(id)),
                       c.svg_problems.value(QString::fromUtf8(id)));
    o += QStringLiteral("<h2>Memory per GPU</h2>\n<p class=\"muted\">%1</p>\n")
             .arg(esc(c.memory_note)) +
         htmlTable(c.memory) +
         inlineSvg(c.svgs.value(QStringLiteral("memory")),
                   c.svg_problems.value(QStringLiteral("memory")));
    o += QStringLiteral("<h2>Warnings</h2>\n");
    o += c.warnings.rows.empty() ? QStringLiteral("<p>No design warnings.</p>\n")
                                 : htmlTable(c.warnings);
    if (with_baseline) {
        o += QStringLiteral("<h2>Comparison with the baseline</h2>\n<p class=\"muted\">Baseline: "
                            "%1. Change = current − baseline; green is better, red is worse.</p>\n")
                 .arg(esc(c.baseline_name));
        o += htmlTable(c.comparison);
        o += c.fields.rows.empty()
                 ? QStringLiteral("<p>Scenario fields that differ: none.</p>\n")
                 : QStringLiteral("<h3>Scenario fields that differ</h3>\n") + htmlTable(c.fields);
        o += inlineSvg(c.svgs.value(QStringLiteral("compare")),
                       c.svg_problems.value(QStringLiteral("compare")));
    }
    o += QStringLiteral("<p class=\"muted\">Written by MoE Planner.</p>\n</body>\n</html>\n");
    return detail::saveAtomically(path, [&](QIODevice& device) {
        const QByteArray bytes = o.toUtf8();
        return device.write(bytes) == bytes.size()
                   ? QString()
                   : QStringLiteral("cannot write %1: %2").arg(path, device.errorString());
    });
}

} // namespace

int designReportPageCount(bool with_baseline) {
    return kBasePages + (with_baseline ? kBaselinePages : 0);
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
    const bool with_baseline = input.baseline != nullptr;
    return pdf ? writePdf(path, content, with_baseline) : writeHtml(path, content, with_baseline);
}

} // namespace moe::widgets
