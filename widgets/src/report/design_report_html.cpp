// The design-review report as one HTML file for wikis: the PDF's sections in the same order,
// the diagrams as inline SVG (each in a <div class="figure" id="fig-ID">). Every text from the
// scenario is escaped; the page has no script.
#include "design_report_content.h"

#include "common/view_export.h"

namespace moe::widgets::report {

namespace {

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
QString inlineSvg(const Diagram& d) {
    if (d.svg.isEmpty())
        return QStringLiteral("<p class=\"muted\">(diagram unavailable: %1)</p>\n")
            .arg(esc(d.problem.isEmpty() ? QStringLiteral("no data") : d.problem));
    QString text = QString::fromUtf8(d.svg);
    const qsizetype start = text.indexOf(QStringLiteral("<svg"));
    if (start > 0)
        text = text.mid(start);
    return QStringLiteral("<div class=\"figure\" id=\"fig-%1\">\n%2\n</div>\n")
        .arg(esc(d.id), text);
}

QString section(const Diagram& d) {
    return QStringLiteral("<h2>%1</h2>\n").arg(esc(d.title)) + inlineSvg(d);
}

QString definitions(const QStringList& labels, const QStringList& values) {
    QString o = QStringLiteral("<dl>\n");
    for (int i = 0; i < labels.size(); ++i)
        o += QStringLiteral("<dt>%1</dt><dd>%2</dd>\n").arg(esc(labels[i]), esc(values.value(i)));
    return o + QStringLiteral("</dl>\n");
}

/// Page 1 of the PDF: the layout in words, the verdict, the headline figures, the top warnings.
QString firstPage(const Content& c) {
    QString o = QStringLiteral("<h1>Design review: %1</h1>\n").arg(esc(c.name));
    o += QStringLiteral("<section id=\"summary\">\n<h2>Layout</h2>\n<p class=\"layout\">%1</p>\n")
             .arg(esc(c.layout_words));
    if (!c.verdict.isEmpty())
        o += QStringLiteral("<h2>Against the baseline</h2>\n<p class=\"verdict\">%1</p>\n")
                 .arg(esc(c.verdict));
    o += QStringLiteral("<h2>Headline figures</h2>\n") + definitions(c.key_labels, c.key_values);
    o += QStringLiteral("<h2>Top warnings</h2>\n");
    if (c.top_warnings.isEmpty())
        o += QStringLiteral("<p>No design warnings.</p>\n");
    else {
        o += QStringLiteral("<ul>\n");
        for (int i = 0; i < c.top_warnings.size(); ++i)
            o += QStringLiteral("<li style=\"color:%1\">%2</li>\n")
                     .arg(c.top_warning_colours[static_cast<size_t>(i)].name(),
                          esc(c.top_warnings[i]));
        o += QStringLiteral("</ul>\n");
        if (c.more_warnings > 0)
            o += QStringLiteral("<p class=\"muted\">… and %1 more under Warnings.</p>\n")
                     .arg(c.more_warnings);
    }
    return o + QStringLiteral("</section>\n");
}

} // namespace

QString writeHtml(const QString& path, const Content& c) {
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
             ".layout{font-size:1.15em}.verdict{font-size:1.1em;font-weight:bold}\n"
             ".figure svg{max-width:100%;height:auto;border:1px solid #d0d7de}\n"
             "dl{display:grid;grid-template-columns:max-content auto;gap:.3em 1em}"
             "dt{font-weight:bold}dd{margin:0}\n"
             "</style>\n</head>\n<body>\n")
             .arg(esc(c.name));
    o += firstPage(c);
    if (c.with_baseline) {
        o += QStringLiteral("<h2>Comparison with the baseline</h2>\n<p class=\"muted\">%1</p>\n")
                 .arg(esc(c.baseline_note));
        o += htmlTable(c.comparison);
        o += c.fields.rows.empty()
                 ? QStringLiteral("<p>Scenario fields that differ: none.</p>\n")
                 : QStringLiteral("<h3>Scenario fields that differ</h3>\n") + htmlTable(c.fields);
        o += section(c.compare);
    }
    o += QStringLiteral("<h2>Design details</h2>\n") +
         definitions(c.summary_labels, c.summary_values);
    if (!c.author_note.isEmpty())
        o +=
            QStringLiteral("<h3>Author's note</h3>\n<p class=\"muted\">The scenario's description, "
                           "free text, not checked against the layout: %1</p>\n")
                .arg(esc(c.author_note));
    o += QStringLiteral("<h3>Headline figures</h3>\n") + htmlTable(c.headlines);
    o += QStringLiteral("<h2>Layout in words</h2>\n<ul>\n");
    for (const QString& line : c.layout_lines)
        o += QStringLiteral("<li>%1</li>\n").arg(esc(line));
    o += QStringLiteral("</ul>\n") + htmlTable(c.groups);
    for (const Diagram& d : c.topology)
        o += section(d);
    for (const Diagram& d : c.diagrams)
        o += section(d);
    o += QStringLiteral("<h2>Memory per GPU</h2>\n<p class=\"muted\">%1</p>\n")
             .arg(esc(c.memory_note)) +
         htmlTable(c.memory) + inlineSvg(c.memory_chart);
    o += QStringLiteral("<h2>Warnings</h2>\n");
    o += c.warnings.rows.empty() ? QStringLiteral("<p>No design warnings.</p>\n")
                                 : htmlTable(c.warnings);
    o += QStringLiteral("<p class=\"muted\">Written by MoE Planner.</p>\n</body>\n</html>\n");
    return detail::saveAtomically(path, [&](QIODevice& device) {
        const QByteArray bytes = o.toUtf8();
        return device.write(bytes) == bytes.size()
                   ? QString()
                   : QStringLiteral("cannot write %1: %2").arg(path, device.errorString());
    });
}

} // namespace moe::widgets::report
