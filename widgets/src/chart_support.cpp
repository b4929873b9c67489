#include "chart_support.h"

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
    bool ok = false;
    switch (detail::exportFormatOf(path)) {
    case detail::ExportFormat::svg: {
        QSvgGenerator generator;
        generator.setFileName(path);
        generator.setSize(QSize(width, height));
        generator.setViewBox(QRect(0, 0, width, height));
        generator.setTitle(title);
        generator.setDescription(QStringLiteral("MoE Planner"));
        QCPPainter painter;
        ok = painter.begin(&generator);
        if (ok) {
            painter.setMode(QCPPainter::pmVectorized);
            painter.setMode(QCPPainter::pmNoCaching);
            plot->toPainter(&painter, width, height);
            ok = painter.end();
        }
        break;
    }
    case detail::ExportFormat::png:
        ok = plot->savePng(path, width, height, 2.0, detail::kPngQuality);
        break;
    case detail::ExportFormat::pdf:
        ok = plot->savePdf(path, width, height, QCP::epNoCosmetic, QStringLiteral("MoE Planner"),
                           title);
        break;
    case detail::ExportFormat::unknown:
        return QStringLiteral("unknown export format for %1 (use .svg, .png or .pdf)").arg(path);
    }
    if (!ok)
        return QStringLiteral("cannot write %1").arg(path);
    return checkWritten(path);
}

} // namespace moe::widgets::charts
