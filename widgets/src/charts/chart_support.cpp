#include "charts/chart_support.h"

#include <QPageSize>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <qcustomplot.h>

namespace moe::widgets::charts {

QString wrapToWidth(const QString& text, const QFont& font, int width) {
    const QFontMetrics fm(font);
    QStringList out;
    for (const QString& paragraph : text.split(QLatin1Char('\n'))) {
        QString line;
        for (const QString& word : paragraph.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
            const QString candidate = line.isEmpty() ? word : line + QLatin1Char(' ') + word;
            if (!line.isEmpty() && fm.horizontalAdvance(candidate) > width) {
                out << line;
                line = word;
            } else {
                line = candidate;
            }
        }
        out << line;
    }
    return out.join(QLatin1Char('\n'));
}

void applyTheme(QCustomPlot* plot, const ChartTheme& theme) {
    plot->setBackground(theme.background);
    for (QCPAxisRect* rect : plot->axisRects()) {
        rect->setBackground(theme.background);
        for (QCPAxis* axis : rect->axes()) {
            axis->setBasePen(QPen(theme.muted, 1));
            axis->setTickPen(QPen(theme.muted, 1));
            axis->setSubTickPen(QPen(theme.muted, 1));
            axis->setTickLabelColor(theme.text);
            axis->setLabelColor(theme.text);
            axis->grid()->setPen(QPen(theme.grid, 1, Qt::DotLine));
            axis->grid()->setSubGridPen(QPen(theme.grid, 1, Qt::DotLine));
            axis->grid()->setZeroLinePen(QPen(theme.grid, 1));
        }
    }
    if (plot->legend) {
        plot->legend->setBrush(theme.background);
        plot->legend->setBorderPen(Qt::NoPen);
        plot->legend->setTextColor(theme.text);
    }
    for (int i = 0; i < plot->plotLayout()->elementCount(); ++i) {
        auto* text = qobject_cast<QCPTextElement*>(plot->plotLayout()->elementAt(i));
        if (text != nullptr)
            text->setTextColor(text->property("moe_muted").toBool() ? theme.muted : theme.text);
    }
}

QString exportPlot(QCustomPlot* plot, const QString& path, int width, int height,
                   const QString& title) {
    const detail::ExportFormat format = detail::exportFormatOf(path);
    if (format == detail::ExportFormat::unknown)
        return QStringLiteral("unknown export format for %1 (use .svg, .png or .pdf)").arg(path);
    return detail::saveAtomically(path, [&](QIODevice& device) -> QString {
        const QString failed = QStringLiteral("cannot render %1").arg(path);
        // Vector output paints the plot like QCustomPlot's own savePdf, onto our device.
        auto paintVector = [&](QPaintDevice& target) {
            QCPPainter painter;
            if (!painter.begin(&target))
                return false;
            painter.setMode(QCPPainter::pmVectorized);
            painter.setMode(QCPPainter::pmNoCaching);
            plot->toPainter(&painter, width, height);
            return painter.end();
        };
        switch (format) {
        case detail::ExportFormat::svg: {
            QSvgGenerator generator;
            generator.setOutputDevice(&device);
            generator.setSize(QSize(width, height));
            generator.setViewBox(QRect(0, 0, width, height));
            generator.setTitle(detail::xmlText(title));
            generator.setDescription(QStringLiteral("MoE Planner"));
            return paintVector(generator) ? QString() : failed;
        }
        case detail::ExportFormat::png:
            return plot->toPixmap(width, height, 2.0).save(&device, "PNG", detail::kPngQuality)
                       ? QString()
                       : failed;
        case detail::ExportFormat::pdf: {
            QPdfWriter pdf(&device);
            pdf.setCreator(QStringLiteral("MoE Planner"));
            pdf.setTitle(title);
            pdf.setResolution(72);
            pdf.setPageSize(
                QPageSize(QSizeF(width, height), QPageSize::Point, title, QPageSize::ExactMatch));
            pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
            return paintVector(pdf) ? QString() : failed;
        }
        case detail::ExportFormat::unknown:
            break;
        }
        return failed;
    });
}

} // namespace moe::widgets::charts
