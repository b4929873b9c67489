// The design-review report as PDF (A4 landscape, one unit per point): page 1 argues (the
// layout in words, the headline figures, the verdict against the baseline, the top warnings);
// with a baseline the comparison follows at once; then the details, the layout in words, the
// diagrams, memory and every warning.
#include "design_report_content.h"

#include "common/view_export.h"

#include <QFontMetricsF>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgRenderer>

#include <algorithm>
#include <cmath>
#include <vector>

namespace moe::widgets::report {

namespace {

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
void drawSvg(QPainter& p, const QRectF& rect, const Diagram& d) {
    const QByteArray& svg = d.svg;
    const QString& problem = d.problem;
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

/// Page 1: the argument, in reading order down the left column; the figures on the right.
void paintFirstPage(PdfPages& pages, QPainter& p, const Content& c) {
    const QRectF area = pages.begin(QStringLiteral("Design review: %1").arg(c.name));
    const QFont body = PdfPages::font(11);
    const QFont label = PdfPages::font(11, true);
    const double left_w = area.width() * 0.56;
    const QRectF left(area.left(), area.top(), left_w - 18, area.height());
    double y = left.top();
    auto section = [&](const QString& title) {
        y += drawText(p, QRectF(left.left(), y, left.width(), 20), title, label, kMuted) + 4;
    };
    section(QStringLiteral("Layout"));
    y +=
        drawText(p, QRectF(left.left(), y, left.width(), 150), c.layout_words, PdfPages::font(13)) +
        14;
    if (!c.verdict.isEmpty()) {
        section(QStringLiteral("Against the baseline"));
        y += drawText(p, QRectF(left.left(), y, left.width(), 90), c.verdict, PdfPages::font(12)) +
             14;
    }
    section(QStringLiteral("Top warnings"));
    if (c.top_warnings.isEmpty())
        y += drawText(p, QRectF(left.left(), y, left.width(), 20),
                      QStringLiteral("No design warnings."), body) +
             6;
    for (int i = 0; i < c.top_warnings.size() && y < left.bottom() - 20; ++i)
        y += drawText(p, QRectF(left.left(), y, left.width(), left.bottom() - y), c.top_warnings[i],
                      body, c.top_warning_colours[static_cast<size_t>(i)]) +
             6;
    if (c.more_warnings > 0)
        drawText(p, QRectF(left.left(), y, left.width(), 20),
                 QStringLiteral("… and %1 more on the Warnings page.").arg(c.more_warnings), body,
                 kMuted);

    Table figures;
    figures.headers = {QStringLiteral("Headline figure"), QStringLiteral("Value")};
    figures.right = {false, false};
    for (int i = 0; i < c.key_labels.size(); ++i)
        figures.rows.push_back({c.key_labels[i], c.key_values[i]});
    drawTable(p, QRectF(area.left() + left_w, area.top(), area.width() - left_w, area.height()),
              figures, PdfPages::font(12));
}

/// The comparison with the baseline: its figures and the fields that differ, then the
/// breakdowns side by side.
void paintComparison(PdfPages& pages, QPainter& p, const Content& c) {
    QRectF area = pages.begin(QStringLiteral("Comparison with the baseline"));
    const QFont body = PdfPages::font(11);
    double y = area.top();
    y += drawText(p, QRectF(area.left(), y, area.width(), 40), c.baseline_note, body, kMuted) + 10;
    const double figures_w = area.width() * 0.62;
    drawTable(p, QRectF(area.left(), y, figures_w, area.bottom() - y), c.comparison,
              PdfPages::font(9));
    const QRectF right(area.left() + figures_w + 16, y, area.width() - figures_w - 16,
                       area.bottom() - y);
    if (c.fields.rows.empty())
        drawText(p, right, QStringLiteral("Scenario fields that differ: none."), body);
    else
        drawTable(p, right, c.fields, PdfPages::font(9));
    area = pages.begin(c.compare.title);
    drawSvg(p, area, c.compare);
}

QString paintPdf(QIODevice& device, const QString& path, const Content& c) {
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
    PdfPages pages(writer, p, c.name, pageCount(c));
    const QFont body = PdfPages::font(11);
    const QFont label = PdfPages::font(11, true);

    paintFirstPage(pages, p, c);
    if (c.with_baseline)
        paintComparison(pages, p, c);

    // Details: the key facts and the author's note on the left, every headline figure right.
    QRectF area = pages.begin(QStringLiteral("Design details"));
    const double left_w = area.width() * 0.55;
    double y = area.top();
    for (int i = 0; i < c.summary_labels.size(); ++i) {
        drawText(p, QRectF(area.left(), y, 80, 40), c.summary_labels[i], label);
        y += drawText(p, QRectF(area.left() + 84, y, left_w - 100, 80), c.summary_values[i], body) +
             8;
    }
    if (!c.author_note.isEmpty()) {
        y += 8;
        y += drawText(p, QRectF(area.left(), y, left_w - 16, 20),
                      QStringLiteral("Author's note (the scenario's description, free text; not "
                                     "checked against the layout)"),
                      label, kMuted) +
             4;
        drawText(p, QRectF(area.left(), y, left_w - 16, area.bottom() - y), c.author_note, body,
                 kMuted);
    }
    drawTable(p, QRectF(area.left() + left_w, area.top(), area.width() - left_w, area.height()),
              c.headlines, PdfPages::font(10));

    // The layout in words, line by line, and the groups.
    area = pages.begin(QStringLiteral("Layout in words"));
    y = area.top();
    for (const QString& line : c.layout_lines)
        y += drawText(p, QRectF(area.left(), y, area.width(), 80), line, PdfPages::font(12)) + 6;
    y += 12;
    drawTable(p, QRectF(area.left(), y, area.width(), area.bottom() - y), c.groups, body);

    for (const Diagram& d : c.topology)
        drawSvg(p, pages.begin(d.title), d);
    for (const Diagram& d : c.diagrams)
        drawSvg(p, pages.begin(d.title), d);

    // Memory: the table and the per-stage chart.
    area = pages.begin(QStringLiteral("Memory per GPU"));
    y = area.top();
    y += drawText(p, QRectF(area.left(), y, area.width(), 30), c.memory_note, body, kMuted) + 8;
    const double table_w = 240;
    drawTable(p, QRectF(area.left(), y, table_w, area.bottom() - y), c.memory, body);
    drawSvg(p,
            QRectF(area.left() + table_w + 20, y, area.width() - table_w - 20, area.bottom() - y),
            c.memory_chart);

    area = pages.begin(QStringLiteral("Warnings"));
    if (c.warnings.rows.empty())
        drawText(p, area, QStringLiteral("No design warnings."), PdfPages::font(12));
    else
        drawTable(p, area, c.warnings, body);

    const int written = pages.page();
    if (!p.end())
        return QStringLiteral("cannot finish %1").arg(path);
    Q_ASSERT(written == pageCount(c));
    Q_UNUSED(written);
    return {};
}

} // namespace

QString writePdf(const QString& path, const Content& c) {
    return detail::saveAtomically(path,
                                  [&](QIODevice& device) { return paintPdf(device, path, c); });
}

} // namespace moe::widgets::report
