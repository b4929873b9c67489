#include "common/view_export.h"

#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>

#include <algorithm>
#include <cmath>

#include "moe/format.h"
#include "moe/text.h"

namespace moe::widgets::detail {

ExportFormat exportFormatOf(const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("svg"))
        return ExportFormat::svg;
    if (suffix == QLatin1String("png"))
        return ExportFormat::png;
    if (suffix == QLatin1String("pdf"))
        return ExportFormat::pdf;
    return ExportFormat::unknown;
}

QString checkWritten(const QString& path) {
    const QFileInfo info(path);
    if (!info.exists())
        return QStringLiteral("nothing was written to %1").arg(path);
    if (info.size() == 0)
        return QStringLiteral("%1 was written empty").arg(path);
    return {};
}

QString saveAtomically(const QString& path, const std::function<QString(QIODevice&)>& produce) {
    // A device or a pipe (/dev/full, a FIFO, a link to one) holds no file to lose, and QSaveFile
    // would rename its temporary file over the device node: write to it directly instead.
    const QFileInfo target(QFileInfo(path).canonicalFilePath());
    if (target.exists() && !target.isFile() && !target.isDir()) {
        QFile device(target.filePath());
        if (!device.open(QIODevice::WriteOnly))
            return QStringLiteral("cannot write %1: %2").arg(path, device.errorString());
        const QString problem = produce(device);
        device.close();
        if (!problem.isEmpty())
            return problem;
        return device.error() == QFileDevice::NoError
                   ? QString()
                   : QStringLiteral("cannot write %1: %2").arg(path, device.errorString());
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
    const QString problem = produce(file);
    if (!problem.isEmpty()) {
        file.cancelWriting();
        return problem;
    }
    // QSaveFile remembers a failed write (ENOSPC) and then refuses to commit.
    if (file.error() != QFileDevice::NoError) {
        const QString reason = file.errorString();
        file.cancelWriting();
        return QStringLiteral("cannot write %1: %2").arg(path, reason);
    }
    if (file.size() == 0) {
        file.cancelWriting();
        return QStringLiteral("%1 would be written empty; the old file is kept").arg(path);
    }
    if (!file.commit())
        return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
    return {};
}

QString xmlText(const QString& text) {
    return QString::fromStdString(escapeXml(text.toStdString()));
}

QString exportPage(const QString& path, const QSizeF& page_size, const QString& title,
                   const std::function<void(QPainter&, const QRectF&)>& paint) {
    const QRectF page(QPointF(0, 0), page_size);
    const ExportFormat format = exportFormatOf(path);
    if (format == ExportFormat::unknown)
        return QStringLiteral("unknown export format for %1 (use .svg, .png or .pdf)").arg(path);
    return saveAtomically(path, [&](QIODevice& device) -> QString {
        const QString failed = QStringLiteral("cannot render %1").arg(path);
        switch (format) {
        case ExportFormat::svg: {
            QSvgGenerator svg;
            svg.setOutputDevice(&device);
            svg.setSize(page_size.toSize());
            svg.setViewBox(page);
            svg.setTitle(xmlText(title));
            svg.setDescription(QStringLiteral("MoE Planner"));
            QPainter painter;
            if (!painter.begin(&svg))
                return failed;
            paint(painter, page);
            return painter.end() ? QString() : failed;
        }
        case ExportFormat::png: {
            // Twice the logical size: sharp on high-density screens and projectors.
            constexpr qreal kScale = 2.0;
            QImage image((page_size * kScale).toSize(), QImage::Format_ARGB32_Premultiplied);
            image.setDevicePixelRatio(kScale);
            image.fill(Qt::white);
            {
                QPainter painter(&image);
                paint(painter, page);
            }
            return image.save(&device, "PNG", kPngQuality) ? QString() : failed;
        }
        case ExportFormat::pdf: {
            QPdfWriter pdf(&device);
            pdf.setTitle(title);
            pdf.setCreator(QStringLiteral("MoE Planner"));
            // One point per logical pixel: the page keeps the view's proportions.
            pdf.setResolution(72);
            pdf.setPageSize(QPageSize(page_size, QPageSize::Point, title, QPageSize::ExactMatch));
            pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
            QPainter painter;
            if (!painter.begin(&pdf))
                return failed;
            const QRectF device_rect(0, 0, pdf.width(), pdf.height());
            painter.scale(device_rect.width() / page.width(), device_rect.height() / page.height());
            paint(painter, page);
            return painter.end() ? QString() : failed;
        }
        case ExportFormat::unknown:
            break;
        }
        return failed;
    });
}

bool isDark(const QPalette& palette) {
    return palette.color(QPalette::Base).lightness() < 128;
}

ViewTheme viewTheme(bool dark) {
    ViewTheme t;
    t.dark = dark;
    if (!dark) {
        t.background = QColor(0xFFFFFF);
        t.text = QColor(0x1F2933);
        t.muted = QColor(0x5B6775);
        t.pod_fill = QColor(0xF4F6F9);
        t.pod_border = QColor(0xC9D1DB);
        t.rack_fill = QColor(0xE6EAF0);
        t.rack_border = QColor(0x9AA5B4);
        t.node_fill = QColor(0xFFFFFF);
        t.node_border = QColor(0xB4BDC9);
        t.switch_fill = QColor(0x3E4A5B);
        t.switch_text = QColor(0xFFFFFF);
        t.idle_link = QColor(0xC3CAD4);
        t.highlight = QColor(0xE0007A);
        t.no_data = QColor(0xD5DAE1);
        t.grid = QColor(0xD8DEE4);
        t.lane = QColor(0xF3F5F7);
        t.accent = QColor(0x0969DA);
        t.critical = QColor(0xD6246E);
        t.danger = QColor(0xCF222E);
    } else {
        t.background = QColor(0x1C1F24);
        t.text = QColor(0xE6E9ED);
        t.muted = QColor(0xA3AEBA);
        t.pod_fill = QColor(0x23272D);
        t.pod_border = QColor(0x3C434D);
        t.rack_fill = QColor(0x2B3038);
        t.rack_border = QColor(0x56606D);
        t.node_fill = QColor(0x343A43);
        t.node_border = QColor(0x4F5865);
        t.switch_fill = QColor(0x8593A6);
        t.switch_text = QColor(0x101317);
        t.idle_link = QColor(0x5A6370);
        t.highlight = QColor(0xFF4FB0);
        t.no_data = QColor(0x4A515B);
        t.grid = QColor(0x3A4048);
        t.lane = QColor(0x262A30);
        t.accent = QColor(0x4493F8);
        t.critical = QColor(0xFF6FA8);
        t.danger = QColor(0xFF7B72);
    }
    return t;
}

ViewTheme ViewTheme::light() {
    return viewTheme(false);
}

ViewTheme ViewTheme::dark_theme() {
    return viewTheme(true);
}

ViewTheme ViewTheme::fromPalette(const QPalette& palette) {
    return viewTheme(isDark(palette));
}

QString formatBytes(double bytes) {
    return QString::fromStdString(moe::formatBytes(bytes));
}

QString formatCount(double value) {
    return QString::fromStdString(moe::formatCount(value));
}

QString formatCompact(double value) {
    return QString::fromStdString(moe::formatCompact(value));
}

QString formatPercent(double fraction) {
    return QString::fromStdString(moe::formatPercent(fraction));
}

QString formatSeconds(double seconds) {
    return QString::fromStdString(moe::formatSeconds(seconds));
}

QString formatGpuList(const std::vector<int>& gpus, int max_items) {
    if (gpus.empty())
        return QStringLiteral("none");
    if (gpus.size() == 1)
        return QString::number(gpus.front());
    bool contiguous = true;
    for (size_t i = 1; i < gpus.size() && contiguous; ++i)
        contiguous = gpus[i] == gpus[i - 1] + 1;
    if (contiguous)
        return QStringLiteral("%1–%2").arg(gpus.front()).arg(gpus.back());
    const int stride = gpus[1] - gpus[0];
    bool strided = stride > 0;
    for (size_t i = 1; i < gpus.size() && strided; ++i)
        strided = gpus[i] - gpus[i - 1] == stride;
    if (strided)
        return QStringLiteral("%1, %2, … %3 (stride %4)")
            .arg(gpus[0])
            .arg(gpus[1])
            .arg(gpus.back())
            .arg(stride);
    QStringList items;
    for (size_t i = 0; i < gpus.size() && static_cast<int>(i) < max_items; ++i)
        items << QString::number(gpus[i]);
    if (static_cast<int>(gpus.size()) > max_items)
        items << QStringLiteral("…");
    return items.join(QStringLiteral(", "));
}

} // namespace moe::widgets::detail
