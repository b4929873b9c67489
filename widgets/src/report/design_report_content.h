#pragma once
// What the design-review report shows, gathered once (design_report.cpp) and written as PDF
// (design_report_pdf.cpp) or HTML (design_report_html.cpp). Internal to the report.

#include <QByteArray>
#include <QColor>
#include <QString>
#include <QStringList>

#include <vector>

namespace moe::widgets::report {

inline const QColor kInk(0x1f, 0x23, 0x28);
inline const QColor kMuted(0x59, 0x63, 0x6e);
inline const QColor kRule(0xd0, 0xd7, 0xde);
inline const QColor kBand(0xf3, 0xf5, 0xf8);
inline const QColor kRed(0xc0, 0x1f, 0x2a);

struct Table {
    QStringList headers;
    std::vector<QStringList> rows;
    std::vector<bool> right;                  ///< per column: right-aligned
    std::vector<std::vector<QColor>> colours; ///< per row and column, invalid = ink
};

/// One diagram: a view's SVG export, or why there is none. Each takes a page of the PDF.
struct Diagram {
    QString id;    ///< "topology", "breakdown", ...; the HTML figure's id is "fig-<id>"
    QString title; ///< the page's heading
    QByteArray svg;
    QString problem;
};

/// Everything the report shows, in the order of its pages.
struct Content {
    QString name;
    bool with_baseline = false;

    // Page 1: the argument.
    QString layout_words;     ///< layoutInWords: generated from the layout
    QStringList key_labels;   ///< the headline figures of page 1...
    QStringList key_values;   ///< ...and their values
    QString verdict;          ///< against the baseline, empty without one
    QStringList top_warnings; ///< the most severe few
    std::vector<QColor> top_warning_colours;
    int more_warnings = 0; ///< not on page 1

    // With a baseline: the comparison, early.
    QString baseline_label, current_label; ///< "Baseline: EP=8", "Current: EP=16"
    QString baseline_note;                 ///< its name, file and what differs
    Table comparison;
    Table fields;
    Diagram compare;

    // Details.
    QStringList summary_labels, summary_values;
    QString author_note; ///< the scenario's free-text description, shown as the author's
    Table headlines;
    QStringList layout_lines;
    Table groups;
    std::vector<Diagram> topology; ///< addTopologyDiagrams: one page each
    std::vector<Diagram> diagrams; ///< breakdown, Gantt, heatmap
    Table memory;
    QString memory_note;
    Diagram memory_chart;
    Table warnings;
};

/// The PDF's pages for this content.
int pageCount(const Content& c);
QString writePdf(const QString& path, const Content& c);
QString writeHtml(const QString& path, const Content& c);

} // namespace moe::widgets::report
