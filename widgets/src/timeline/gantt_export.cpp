// The step timeline as a slide (SVG, PNG or PDF): title and layout, the rows that fit the page,
// axis, grid, legend and a footer explaining the lanes.
#include "timeline/gantt_canvas.h"

#include <QFileInfo>
#include <QLabel>
#include <QPainter>

#include <algorithm>

namespace moe::widgets {

using charts::ChartTheme;
using namespace gantt;

namespace {

constexpr int kWidth = 1600;
constexpr int kMargin = 32;
constexpr int kExportLabelWidth = 330; ///< the row names and the hot-GPU wait, both headed
/// A slide's transfers (all-to-all, TP, CP, PP, gradient sync) are at least this wide and tall,
/// in logical pixels (4 device pixels in the 2x PNG): on the 2048-GPU DeepSeek-V3 sample one
/// pixel is 13 ms and an all-to-all lasts well under one.
constexpr double kMinTransferPx = 2.0;
/// Time 0 sits this far right of the label column, so that the "0 s" tick label clears the
/// column's heading.
constexpr int kAxisInset = 10;
constexpr int kSlideHeight = 900; ///< rows are chosen and scaled to fill this
constexpr int kHeaderHeight = 100;
constexpr int kFooterHeight = 28;

struct ExportFonts {
    QFont base, small, title, subtitle;
};

ExportFonts exportFonts(const QFont& widget_font) {
    ExportFonts f;
    f.base = widget_font;
    f.base.setFamily(QStringLiteral("DejaVu Sans"));
    f.base.setPixelSize(14);
    f.small = f.base;
    f.small.setPixelSize(12);
    f.title = f.base;
    f.title.setPixelSize(24);
    f.title.setBold(true);
    f.subtitle = f.base;
    f.subtitle.setPixelSize(15);
    return f;
}

/// The rows as on screen when they fit a slide; otherwise every stage, and under the stage of
/// the hottest GPU only that GPU's node and its GPUs (the hot GPU beside its waiting peers).
void chooseRows(const GanttData& d, std::vector<char>& open, GanttFrame& frame) {
    frame.build(d, open);
    if (frame.totalHeight() <= kSlideHeight)
        return;
    frame.visible.clear();
    for (size_t r = 0; r < d.rows.size(); ++r) {
        const GanttRow& row = d.rows[r];
        open[r] = row.hottest && row.level != GanttRow::Level::gpu ? 1 : 0;
        if (row.level == GanttRow::Level::stage) {
            frame.visible.push_back(static_cast<int>(r));
        } else if (row.level == GanttRow::Level::node && row.hottest) {
            for (int c = static_cast<int>(r); c < row.subtree_end; ++c)
                frame.visible.push_back(c);
        }
    }
    frame.layout();
}

/// Short charts open more groups while they fit (stages first, then nodes), then grow their
/// rows (up to 1.5x) to fill the slide instead of leaving it blank.
void fillSlide(const GanttData& d, int chrome_h, std::vector<char>& open, GanttFrame& frame) {
    if (chrome_h + frame.totalHeight() < kSlideHeight) {
        for (size_t k = 0; k < frame.visible.size(); ++k) {
            const auto r = static_cast<size_t>(frame.visible[k]);
            if (d.rows[r].level == GanttRow::Level::gpu || open[r] != 0)
                continue;
            open[r] = 1;
            GanttFrame bigger;
            bigger.build(d, open);
            if (chrome_h + bigger.totalHeight() <= kSlideHeight)
                frame = std::move(bigger);
            else
                open[r] = 0;
        }
        frame.expanded = &open;
    }
    if (frame.totalHeight() > 0 && chrome_h + frame.totalHeight() < kSlideHeight) {
        frame.scale =
            std::min(1.5, (static_cast<double>(kSlideHeight) - chrome_h) / frame.totalHeight());
        frame.layout();
    }
}

/// One page of the export: what it shows, laid out; paint() draws it on any device.
struct ExportPage {
    const EvaluationResult* result = nullptr;
    const GanttData* data = nullptr;
    ChartTheme theme = ChartTheme::light();
    ExportFonts fonts;
    QString caption;
    QString message; ///< drawn instead of the rows (the simulation failed)
    GanttTimeAxis axis;
    std::vector<char> open;
    GanttFrame frame;
    std::vector<LegendEntry> legend;
    int chart_w = kWidth - 2 * kMargin;
    int legend_h = 0;
    int rows_h = 0;
    int height = 0;

    void paint(QPainter& p) const {
        p.setRenderHint(QPainter::TextAntialiasing, true);
        p.fillRect(QRect(0, 0, kWidth, height), theme.background);
        paintHeader(p);
        const int chart_top = kMargin + kHeaderHeight;
        const QRect rows_rect(kMargin, chart_top + kAxisHeight, chart_w, rows_h);
        if (!message.isEmpty()) {
            p.setPen(theme.danger);
            p.setFont(fonts.base);
            p.drawText(rows_rect, Qt::AlignCenter | Qt::TextWordWrap, message);
        } else {
            paintChart(p, chart_top, rows_rect);
        }
        p.setPen(QPen(theme.grid, 1));
        p.drawLine(QPoint(kMargin, rows_rect.bottom() + 1),
                   QPoint(kMargin + chart_w, rows_rect.bottom() + 1));
        layoutLegend(&p, QRect(kMargin, rows_rect.bottom() + 18, chart_w, legend_h), legend, theme,
                     fonts.base);
        paintFooter(p);
    }

private:
    void paintHeader(QPainter& p) const {
        const Scenario& sc = result->scenario;
        const Report& rep = result->report;
        p.setPen(theme.text);
        p.setFont(fonts.title);
        p.drawText(QRect(kMargin, kMargin, chart_w, 32), Qt::AlignLeft | Qt::AlignTop,
                   GanttView::tr("Step timeline — %1").arg(QString::fromStdString(sc.name)));
        p.setFont(fonts.subtitle);
        p.drawText(QRect(kMargin, kMargin + 38, chart_w, 22), Qt::AlignLeft | Qt::AlignTop,
                   GanttView::tr("%1 × %2 · %3 · %4 micro-batches per step · MFU %5%")
                       .arg(rep.gpus)
                       .arg(QString::fromStdString(sc.cluster.gpu.name))
                       .arg(layoutSummary(sc))
                       .arg(rep.micro_batches)
                       .arg(rep.throughput.mfu * 100, 0, 'f', 1));
        p.setFont(fonts.small);
        p.setPen(theme.muted);
        p.drawText(QRect(kMargin, kMargin + 64, chart_w, 20), Qt::AlignLeft | Qt::AlignTop,
                   caption);
    }

    /// The label column's headings, on the axis' line: what the rows are and, for MoE, the
    /// share of the step each GPU waits for its EP group's hottest GPU.
    void paintColumnHeads(QPainter& p, int chart_top) const {
        const GanttData& d = *data;
        const bool dual = std::any_of(d.rows.begin(), d.rows.end(),
                                      [](const GanttRow& r) { return r.partner_stage >= 0; });
        QFont head = fonts.small;
        head.setBold(true);
        p.setFont(head);
        p.setPen(theme.text);
        const QRect cell(kMargin + 8, chart_top, kExportLabelWidth - 13, kAxisHeight - 4);
        p.drawText(cell, Qt::AlignBottom | Qt::AlignLeft,
                   dual ? GanttView::tr("Rank › node › GPU") : GanttView::tr("Stage › node › GPU"));
        if (d.moe)
            p.drawText(cell, Qt::AlignBottom | Qt::AlignRight,
                       GanttView::tr("waiting for hot GPU"));
        p.setPen(QPen(theme.muted, 1));
        p.drawLine(QPointF(kMargin, chart_top + kAxisHeight - 0.5),
                   QPointF(kMargin + kExportLabelWidth, chart_top + kAxisHeight - 0.5));
    }

    void paintChart(QPainter& p, int chart_top, const QRect& rows_rect) const {
        const GanttData& d = *data;
        paintColumnHeads(p, chart_top);
        paintAxis(
            p,
            QRect(kMargin + kExportLabelWidth, chart_top, chart_w - kExportLabelWidth, kAxisHeight),
            axis, d, theme, fonts.small);
        RowStyle style;
        style.tree_marks = false;
        style.min_transfer_px = kMinTransferPx;
        paintRows(p, rows_rect, 0, kExportLabelWidth, axis, frame, theme, fonts.base, fonts.small,
                  style);
        p.save();
        const QRect grid(kMargin + kExportLabelWidth, rows_rect.top(), chart_w - kExportLabelWidth,
                         rows_h);
        p.setClipRect(grid);
        paintGrid(p, grid, axis, d, theme);
        p.restore();
    }

    void paintFooter(QPainter& p) const {
        p.setFont(fonts.small);
        p.setPen(theme.muted);
        p.drawText(QRect(kMargin, height - kMargin - 18, chart_w, 18), Qt::AlignLeft,
                   GanttView::tr("Under each row: the communication lane (all-to-all, TP, CP, "
                                 "PP; at least %1 px wide so that none vanishes) and the "
                                 "gradient-sync lane. Folded bands: colours = what the time went "
                                 "to, height = how busy.")
                       .arg(kMinTransferPx, 0, 'f', 0));
        p.drawText(QRect(kMargin, height - kMargin - 18, chart_w, 18), Qt::AlignRight,
                   QStringLiteral("MoE Planner"));
    }
};

} // namespace

QString GanttView::exportTo(const QString& path) {
    if (result_ == nullptr)
        return tr("nothing to export: no evaluation yet");
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != QLatin1String("svg") && suffix != QLatin1String("png") &&
        suffix != QLatin1String("pdf"))
        return tr("unknown export format \"%1\" (use .svg, .png or .pdf)").arg(suffix);

    const GanttData& d = canvas_->data;
    ExportPage page;
    page.result = result_.get();
    page.data = &d;
    page.fonts = exportFonts(font());
    page.caption = caption_->text();
    page.message = canvas_->message;
    page.open = d.expanded;
    chooseRows(d, page.open, page.frame);
    page.legend = legendEntries(d, page.theme);
    page.legend_h = layoutLegend(nullptr, QRect(kMargin, 0, page.chart_w, 0), page.legend,
                                 page.theme, page.fonts.base);
    const int chrome_h =
        kMargin + kHeaderHeight + kAxisHeight + 18 + page.legend_h + kFooterHeight + kMargin;
    if (page.message.isEmpty())
        fillSlide(d, chrome_h, page.open, page.frame);
    page.rows_h = page.message.isEmpty() ? page.frame.totalHeight() : 200;
    page.height = std::max(kSlideHeight, chrome_h + page.rows_h);
    page.axis = (canvas_->fitted ? GanttTimeAxis::fit(d.total_s(), 0, 1) : canvas_->axis)
                    .resized(kMargin + kExportLabelWidth + kAxisInset,
                             page.chart_w - kExportLabelWidth - kAxisInset - 10);

    // The page writer every view uses: SVG and PDF stay vector, PNG at twice the size.
    const QString title =
        tr("Step timeline — %1").arg(QString::fromStdString(result_->scenario.name));
    return detail::exportPage(path, QSizeF(kWidth, page.height), title,
                              [&](QPainter& p, const QRectF&) { page.paint(p); });
}

} // namespace moe::widgets
