#include "chart_support.h"

#include <QFileInfo>
#include <QSvgGenerator>
#include <qcustomplot.h>

#include <cmath>

namespace moe::widgets::charts {

namespace {
/// Three significant digits without exponent notation.
QString threeDigits(double v) {
    const double a = std::fabs(v);
    const int decimals = a >= 100 ? 0 : a >= 10 ? 1 : 2;
    return QString::number(v, 'f', decimals);
}
} // namespace

QString formatDuration(double seconds) {
    if (!std::isfinite(seconds))
        return QStringLiteral("—");
    const double a = std::fabs(seconds);
    if (a == 0)
        return QStringLiteral("0 s");
    if (a >= 1)
        return threeDigits(seconds) + QStringLiteral(" s");
    if (a >= 1e-3)
        return threeDigits(seconds * 1e3) + QStringLiteral(" ms");
    if (a >= 1e-6)
        return threeDigits(seconds * 1e6) + QStringLiteral(" µs");
    return threeDigits(seconds * 1e9) + QStringLiteral(" ns");
}

QString formatBytes(double bytes) {
    if (!std::isfinite(bytes))
        return QStringLiteral("—");
    const double a = std::fabs(bytes);
    if (a >= 1e12)
        return threeDigits(bytes / 1e12) + QStringLiteral(" TB");
    if (a >= 1e9)
        return threeDigits(bytes / 1e9) + QStringLiteral(" GB");
    if (a >= 1e6)
        return threeDigits(bytes / 1e6) + QStringLiteral(" MB");
    if (a >= 1e3)
        return threeDigits(bytes / 1e3) + QStringLiteral(" kB");
    return QString::number(bytes, 'f', 0) + QStringLiteral(" B");
}

ChartTheme ChartTheme::light() {
    ChartTheme t;
    t.background = QColor(0xFFFFFF);
    t.text = QColor(0x1F2328);
    t.muted = QColor(0x59636E);
    t.grid = QColor(0xD8DEE4);
    t.lane = QColor(0xF3F5F7);
    t.accent = QColor(0x0969DA);
    t.critical = QColor(0xD6246E); // magenta: no data series uses it
    t.danger = QColor(0xCF222E);
    t.dark = false;
    return t;
}

ChartTheme ChartTheme::dark_theme() {
    ChartTheme t;
    t.background = QColor(0x1E2126);
    t.text = QColor(0xE6EDF3);
    t.muted = QColor(0x9BA6B2);
    t.grid = QColor(0x3A4048);
    t.lane = QColor(0x262A30);
    t.accent = QColor(0x4493F8);
    t.critical = QColor(0xFF6FA8);
    t.danger = QColor(0xFF7B72);
    t.dark = true;
    return t;
}

ChartTheme ChartTheme::fromPalette(const QPalette& palette) {
    return palette.color(QPalette::Window).lightness() < 128 ? dark_theme() : light();
}

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

QColor textOn(const QColor& background) {
    // Relative luminance (sRGB approximation) decides black or white text.
    const double l =
        0.2126 * background.redF() + 0.7152 * background.greenF() + 0.0722 * background.blueF();
    return l > 0.55 ? QColor(0x1F2328) : QColor(0xFFFFFF);
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

QString checkWritten(const QString& path) {
    const QFileInfo info(path);
    if (!info.exists())
        return QStringLiteral("could not write %1").arg(path);
    if (info.size() == 0)
        return QStringLiteral("%1 was written empty").arg(path);
    return {};
}

QString exportPlot(QCustomPlot* plot, const QString& path, int width, int height,
                   const QString& title) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    bool ok = false;
    if (suffix == QLatin1String("svg")) {
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
    } else if (suffix == QLatin1String("png")) {
        ok = plot->savePng(path, width, height, 1.0);
    } else if (suffix == QLatin1String("pdf")) {
        ok = plot->savePdf(path, width, height, QCP::epNoCosmetic, QStringLiteral("MoE Planner"),
                           title);
    } else {
        return QStringLiteral("unknown export format \"%1\" (use .svg, .png or .pdf)").arg(suffix);
    }
    if (!ok)
        return QStringLiteral("could not write %1").arg(path);
    return checkWritten(path);
}

} // namespace moe::widgets::charts
