#include "app/gui/pages/compare_review.h"

#include "app/gui/pages/compare_header_view.h"
#include "app/gui/pages/compare_sort_proxy_model.h"
#include "app/gui/pages/compare_table_model.h"
#include "widgets/clip_timeline.h"
#include "widgets/color_scale_bar.h"
#include "widgets/difference_map.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLinearGradient>
#include <QMessageBox>
#include <QPainter>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSplitter>
#include <QStyle>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace tb::app {
namespace {

using widgets::ClipPlayer;

// How the height is shared between the clips and the per-clip table.
constexpr int kClipsShare = 7;
constexpr int kTableShare = 3;
// The table keeps room for its header and this many rows (more scroll), however small the
// window; a Source column wider than this many characters is elided.
constexpr int kTableRows = 6;
constexpr int kSourceChars = 16;
// Layout of the exported grid, in pixels.
constexpr int kGridMargin = 16;
constexpr int kGridGap = 12;
constexpr int kGridFontPx = 13;

QString panelName(const CompareReport& report, int panel) {
  return panel == 0 ? QObject::tr("original") : report.tokenizerName(panel - 1);
}

}  // namespace

CompareReview::CompareReview(QWidget* parent) : QWidget(parent) {
  m_clipBox = new QComboBox(this);
  m_clipBox->setObjectName(QStringLiteral("clipChooser"));
  m_clipBox->setMinimumContentsLength(14);
  m_clipBox->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  connect(m_clipBox, &QComboBox::currentIndexChanged, this, &CompareReview::setCurrentClip);

  m_zoomBox = new QComboBox(this);
  m_zoomBox->setObjectName(QStringLiteral("zoom"));
  for (ClipPlayer::Zoom zoom :
       {ClipPlayer::Zoom::Fit, ClipPlayer::Zoom::X1, ClipPlayer::Zoom::X2, ClipPlayer::Zoom::X4}) {
    m_zoomBox->addItem(ClipPlayer::zoomName(zoom), static_cast<int>(zoom));
  }
  m_zoomBox->setToolTip(
      tr("Fit: as large as the space allows; 1x, 2x, 4x: whole pixels (nearest "
         "neighbour), scrolling when larger than the space"));
  connect(m_zoomBox, &QComboBox::currentIndexChanged, this, [this](int index) {
    setZoom(static_cast<ClipPlayer::Zoom>(m_zoomBox->itemData(index).toInt()));
  });

  m_heatmapToggle = new QCheckBox(tr("Difference heatmap"), this);
  m_heatmapToggle->setObjectName(QStringLiteral("heatmapToggle"));
  connect(m_heatmapToggle, &QCheckBox::toggled, this, &CompareReview::setHeatmapVisible);

  m_exportGrid = new QPushButton(tr("Export Grid PNG\u2026"), this);
  m_exportGrid->setObjectName(QStringLiteral("exportGrid"));
  m_exportGrid->setToolTip(
      tr("Save the panels at the current frame, with names and metrics, "
         "as one PNG"));
  connect(m_exportGrid, &QPushButton::clicked, this, &CompareReview::chooseGridFile);
  m_exportFiles = new QPushButton(tr("Export Files\u2026"), this);
  m_exportFiles->setObjectName(QStringLiteral("exportFiles"));
  m_exportFiles->setToolTip(
      tr("Copy the metrics (JSON, CSV), grid.png, the clip GIFs and the "
         "lossless frames to a folder"));
  connect(m_exportFiles, &QPushButton::clicked, this, &CompareReview::chooseExportFolder);

  auto* toolbar = new QHBoxLayout;
  toolbar->setSpacing(8);
  toolbar->addWidget(new QLabel(tr("Clip"), this));
  toolbar->addWidget(m_clipBox);
  toolbar->addSpacing(8);
  toolbar->addWidget(new QLabel(tr("Zoom"), this));
  toolbar->addWidget(m_zoomBox);
  toolbar->addSpacing(8);
  toolbar->addWidget(m_heatmapToggle);
  toolbar->addStretch(1);

  m_info = new QLabel(this);
  m_info->setObjectName(QStringLiteral("compareInfo"));
  m_info->setForegroundRole(QPalette::PlaceholderText);
  m_info->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_info->setWordWrap(true);
  m_lpipsNote = new QLabel(this);
  m_lpipsNote->setObjectName(QStringLiteral("lpipsNote"));
  m_lpipsNote->setWordWrap(true);
  m_lpipsNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_lpipsNote->setText(
      tr("No LPIPS: this comparison was made without LPIPS weight files. Give them as Backbone "
         "and Linear on the left (a run's loss.lpips_backbone and loss.lpips_lin fill them in)."));
  m_lpipsNote->setToolTip(
      tr("LPIPS needs two weight files, which Tokenbench does not ship: the torchvision "
         "backbone (alex or vgg) and the lpips package's linear layers, saved as plain dicts. "
         "docs/evaluation.md (\"LPIPS weights\") shows the five lines of Python that make "
         "them. The Compare form fills them from the open run's configuration when it names "
         "files that exist."));
  m_lpipsNote->hide();

  m_playerRow = new QWidget(this);
  m_playerLayout = new QHBoxLayout(m_playerRow);
  m_playerLayout->setContentsMargins(0, 0, 0, 0);
  m_playerLayout->setSpacing(12);

  m_scaleBar = new widgets::ColorScaleBar(this);
  m_scaleBar->setObjectName(QStringLiteral("heatmapScale"));
  m_scaleBar->setCaption(tr("|reconstruction \u2212 original| (8-bit levels)"));
  m_scaleBar->setToolTip(
      tr("Per pixel: |reconstruction \u2212 original|, mean over RGB, in 8-bit levels"));
  m_scaleBar->hide();

  m_timeline = new widgets::ClipTimeline(this);
  m_timeline->setObjectName(QStringLiteral("compareTimeline"));

  auto* top = new QWidget(this);
  auto* topLayout = new QVBoxLayout(top);
  topLayout->setContentsMargins(0, 0, 0, 0);
  topLayout->setSpacing(8);
  topLayout->addWidget(m_playerRow, 1);
  topLayout->addWidget(m_scaleBar, 0, Qt::AlignHCenter);
  topLayout->addWidget(m_timeline);

  m_model = new CompareTableModel(this);
  m_proxy = new CompareSortProxyModel(this);
  m_proxy->setSourceModel(m_model);
  m_table = new QTableView(this);
  m_table->setObjectName(QStringLiteral("clipTable"));
  // Tokenizer names once over their metrics' columns: the columns are as narrow as numbers.
  m_table->setHorizontalHeader(new CompareHeaderView(m_table));
  m_table->setModel(m_proxy);
  m_table->setSortingEnabled(true);
  m_table->sortByColumn(CompareTableModel::kClipColumn, Qt::AscendingOrder);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->setAlternatingRowColors(true);
  m_table->verticalHeader()->hide();
  // Rows as tall as their text: more of them in a small window.
  m_table->verticalHeader()->setMinimumSectionSize(m_table->fontMetrics().height() + 6);
  m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  m_table->setWordWrap(false);
  m_table->setTextElideMode(Qt::ElideMiddle);  // long sources; the tooltip has them whole
  connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (!current.isValid()) return;
            const int clip = m_model->clipAt(m_proxy->mapToSource(current).row());
            if (clip >= 0) setCurrentClip(clip);
          });

  m_splitter = new QSplitter(Qt::Vertical, this);
  m_splitter->setChildrenCollapsible(false);
  m_splitter->addWidget(top);
  m_splitter->addWidget(m_table);
  // The clips are what the page is for: most of the height goes to them, at any window size,
  // the table keeps room for a handful of rows (it scrolls, and the handle moves).
  m_splitter->setStretchFactor(0, kClipsShare);
  m_splitter->setStretchFactor(1, kTableShare);
  m_splitter->setSizes({560 * kClipsShare, 560 * kTableShare});

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(8);
  // The exports share the line of the comparison's description: the toolbar stays narrow
  // enough for the review beside the Compare form in a small window.
  auto* infoRow = new QHBoxLayout;
  infoRow->setSpacing(8);
  infoRow->addWidget(m_info, 1);
  infoRow->addWidget(m_exportGrid, 0, Qt::AlignTop);
  infoRow->addWidget(m_exportFiles, 0, Qt::AlignTop);
  layout->addLayout(toolbar);
  layout->addLayout(infoRow);
  layout->addWidget(m_lpipsNote);
  layout->addWidget(m_splitter, 1);
  setReport(std::nullopt);
}

CompareReview::~CompareReview() = default;

void CompareReview::setReport(const std::optional<CompareReport>& report) {
  m_report = report;
  m_panels.clear();
  m_heatmaps.clear();
  m_currentClip = -1;
  m_model->setReport(report);
  m_table->resizeColumnsToContents();
  const int sourceWidth = fontMetrics().averageCharWidth() * kSourceChars;
  if (m_table->columnWidth(CompareTableModel::kSourceColumn) > sourceWidth)
    m_table->setColumnWidth(CompareTableModel::kSourceColumn, sourceWidth);
  // Where LPIPS is missing, say why: the header and the panels only name what the report has.
  m_lpipsNote->setVisible(report && !report->metrics().contains(CompareMetric::Lpips));
  fitTableHeight();
  {
    const QSignalBlocker block(m_clipBox);
    m_clipBox->clear();
    if (report) {
      for (const core::CompareClip& clip : report->clips()) {
        m_clipBox->addItem(
            tr("clip %1 \u00b7 %2").arg(clip.index).arg(QString::fromStdString(clip.source)));
      }
    }
  }
  rebuildPlayers();
  const bool any = report && !report->clips().empty();
  m_clipBox->setEnabled(any);
  m_exportGrid->setEnabled(any);
  m_exportFiles->setEnabled(report.has_value());
  if (any) {
    setCurrentClip(0);
    m_timeline->play();  // as the Samples page: the clips play, a still frame 0 hides too much
  } else {
    m_info->setText(report ? tr("This comparison holds no clips.") : QString());
    showPanels();
  }
}

void CompareReview::fitTableHeight() {
  // Room for the header, the rows up to kTableRows (the mean row among them) and a horizontal
  // scroll bar when the columns are wider than the table: the clips give up the height.
  const int rows = std::min(m_model->rowCount(), kTableRows);
  int columns = 0;
  for (int c = 0; c < m_model->columnCount(); ++c) columns += m_table->columnWidth(c);
  const bool scrolls = columns > m_table->viewport()->width() && m_table->viewport()->width() > 0;
  const int height =
      m_table->horizontalHeader()->sizeHint().height() +
      rows * m_table->verticalHeader()->defaultSectionSize() + 2 * m_table->frameWidth() +
      (scrolls ? style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, m_table) : 0);
  m_table->setMinimumHeight(height);
}

void CompareReview::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitTableHeight();
}

void CompareReview::rebuildPlayers() {
  m_timeline->detachAll();
  for (ClipPlayer* player : m_players) delete player;
  m_players.clear();
  if (!m_report) return;
  const auto zoom = static_cast<ClipPlayer::Zoom>(m_zoomBox->currentData().toInt());
  for (int panel = 0; panel <= m_report->tokenizerCount(); ++panel) {
    auto* player = new ClipPlayer(m_playerRow);
    player->setObjectName(QStringLiteral("panel%1").arg(panel));
    player->setTitle(panelName(*m_report, panel));
    player->setZoom(zoom);
    if (panel > 0) {
      const core::CompareTokenizer& t = m_report->tokenizers()[static_cast<std::size_t>(panel - 1)];
      player->setToolTip(tr("%1: %2 (%3 weights)\n%4")
                             .arg(QString::fromStdString(t.name), tokenizerSummary(t),
                                  QString::fromStdString(t.weights),
                                  QString::fromStdString(t.checkpoint)));
    }
    m_playerLayout->addWidget(player, 1);
    m_players.append(player);
    m_timeline->attach(player);
  }
}

void CompareReview::setCurrentClip(int clip) {
  if (!m_report || clip < 0 || clip >= m_report->clipCount() || clip == m_currentClip) return;
  m_currentClip = clip;
  {
    const QSignalBlocker block(m_clipBox);
    m_clipBox->setCurrentIndex(clip);
  }
  loadClip();
  selectTableRow();
  Q_EMIT currentClipChanged(clip);
}

void CompareReview::loadClip() {
  m_heatmaps.clear();
  m_panels = m_report->loadPanels(m_currentClip, &m_lossless, &m_panelError);
  m_scaleMax = 0;
  if (m_lossless) {
    double largest = 0;
    for (int k = 1; k < m_panels.size(); ++k) {
      largest = std::max(largest, widgets::maxMeanAbsoluteDifference(m_panels[0], m_panels[k]));
    }
    m_scaleMax = widgets::roundScaleMax(largest);
  }
  const bool available = isHeatmapAvailable();
  m_heatmapToggle->setEnabled(available);
  m_heatmapToggle->setToolTip(
      available ? tr("Show |reconstruction \u2212 original| per pixel (mean over R, G, B) on one "
                     "colour scale for every tokenizer")
                : tr("Needs the lossless frames (clip_<k>/<name>.png) that newer trainers write; "
                     "the GIFs are palette-quantised, so their differences would mislead"));
  if (!available && m_heatmap) {
    m_heatmap = false;
    const QSignalBlocker block(m_heatmapToggle);
    m_heatmapToggle->setChecked(false);
    Q_EMIT heatmapVisibleChanged(false);
  }
  showPanels();

  const core::CompareClip& clip = m_report->clips()[static_cast<std::size_t>(m_currentClip)];
  QString text = tr("%1 \u2014 %2 tokenizer(s), %3 clip(s)")
                     .arg(QDir::toNativeSeparators(m_report->directory()))
                     .arg(m_report->tokenizerCount())
                     .arg(m_report->clipCount());
  // Where each tokenizer comes from; its grid and bits stand under its panel.
  QStringList sources;
  for (const core::CompareTokenizer& t : m_report->tokenizers())
    sources << QString::fromStdString(t.name) + QStringLiteral(": ") + describeTokenizer(t);
  text += QStringLiteral("\n") + sources.join(QStringLiteral(" \u00b7 "));
  if (!m_panelError.isEmpty()) {
    text += QStringLiteral("\n") + tr("Cannot show clip %1: %2").arg(clip.index).arg(m_panelError);
  } else if (!m_lossless) {
    text += QStringLiteral("\n") + tr("Frames from clip_%1.gif (palette-quantised): this folder "
                                      "has no lossless PNG frames.")
                                       .arg(clip.index, 3, 10, QLatin1Char('0'));
  }
  m_info->setText(text);
}

bool CompareReview::isHeatmapAvailable() const {
  return m_report && m_lossless && m_panels.size() >= 2;
}

void CompareReview::setHeatmapVisible(bool visible) {
  visible = visible && isHeatmapAvailable();
  if (visible == m_heatmap) {
    const QSignalBlocker block(m_heatmapToggle);
    m_heatmapToggle->setChecked(visible);
    return;
  }
  m_heatmap = visible;
  {
    const QSignalBlocker block(m_heatmapToggle);
    m_heatmapToggle->setChecked(visible);
  }
  showPanels();
  Q_EMIT heatmapVisibleChanged(visible);
}

void CompareReview::setZoom(ClipPlayer::Zoom zoom) {
  const int index = m_zoomBox->findData(static_cast<int>(zoom));
  if (index >= 0 && index != m_zoomBox->currentIndex()) {
    const QSignalBlocker block(m_zoomBox);
    m_zoomBox->setCurrentIndex(index);
  }
  for (ClipPlayer* player : m_players) player->setZoom(zoom);
}

QStringList CompareReview::captionFor(int panel) const {
  if (!m_report || m_currentClip < 0) return {};
  const core::CompareClip& clip = m_report->clips()[static_cast<std::size_t>(m_currentClip)];
  if (panel == 0) {
    QStringList lines{QString::fromStdString(clip.source)};
    if (!m_panels.isEmpty() && !m_panels[0].isEmpty()) {
      const QSize size = m_panels[0].front().size();
      lines << tr("%1\u00d7%2, %3 frame(s)")
                   .arg(size.width())
                   .arg(size.height())
                   .arg(m_panels[0].size());
    }
    return lines;
  }
  QStringList lines;
  if (static_cast<std::size_t>(panel - 1) >= clip.scores.size()) return lines;
  const core::CompareScores& scores = clip.scores[static_cast<std::size_t>(panel - 1)];
  for (CompareMetric metric : m_report->metrics()) {
    lines << QStringLiteral("%1 %2").arg(
        CompareReport::metricName(metric),
        CompareReport::formatMetric(metric, metricValue(scores, metric)));
  }
  const QString grid = tokenGridText(m_report->tokenizers()[static_cast<std::size_t>(panel - 1)]);
  if (!grid.isEmpty()) lines << grid;
  return lines;
}

void CompareReview::showPanels() {
  if (m_heatmap && m_heatmaps.isEmpty()) {
    for (int k = 1; k < m_panels.size(); ++k) {
      m_heatmaps.append(widgets::differenceFrames(m_panels[0], m_panels[k], m_scaleMax));
    }
  }
  for (int panel = 0; panel < m_players.size(); ++panel) {
    ClipPlayer* player = m_players[panel];
    const bool heat = m_heatmap && panel > 0 && panel - 1 < m_heatmaps.size();
    if (panel < m_panels.size()) {
      player->setFrames(heat ? m_heatmaps[panel - 1] : m_panels[panel]);
    } else {
      player->setPlaceholderText(m_panelError.isEmpty() ? tr("No frames") : m_panelError);
      player->clear();
    }
    player->setTitle(heat ? tr("%1 \u00b7 difference").arg(panelName(*m_report, panel))
                          : panelName(*m_report, panel));
    player->setCaptionLines(captionFor(panel));
  }
  m_scaleBar->setMaximum(m_scaleMax > 0 ? m_scaleMax : 255.0);
  m_scaleBar->setVisible(m_heatmap);
}

void CompareReview::selectTableRow() {
  const int row = m_model->rowOfClip(m_currentClip);
  if (row < 0) return;
  const QModelIndex index = m_proxy->mapFromSource(m_model->index(row, 0));
  if (m_table->selectionModel()->currentIndex().row() == index.row()) return;
  const QSignalBlocker block(m_table->selectionModel());
  m_table->selectionModel()->setCurrentIndex(
      index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  m_table->viewport()->update();
}

QImage CompareReview::gridImage() const {
  if (!m_report || m_panels.isEmpty() || m_panels[0].isEmpty()) return {};
  const int columns = static_cast<int>(m_panels.size());
  const int t = m_timeline->frameIndex();
  auto frameOf = [t](const widgets::ClipFrames& frames) {
    return frames[std::clamp(t, 0, static_cast<int>(frames.size()) - 1)];
  };
  const QSize frameSize = m_panels[0].front().size();
  const int factor = std::max(1, (kGridMinCellWidth + frameSize.width() - 1) / frameSize.width());
  const QSize cell = frameSize * factor;
  const bool heat = m_heatmap && m_heatmaps.size() == columns - 1;

  QFont font;
  font.setPixelSize(kGridFontPx);
  QFont bold = font;
  bold.setBold(true);
  const QFontMetrics metrics(font);
  const int line = metrics.height();
  int captionLines = 0;
  for (int p = 0; p < columns; ++p)
    captionLines = std::max<int>(captionLines, captionFor(p).size());
  const int headerH = line + 6;
  const int titleH = line + 4;
  const int captionH = captionLines * line + 6;
  const int heatH = heat ? cell.height() + kGridGap : 0;
  const int width = std::max(2 * kGridMargin + columns * cell.width() + (columns - 1) * kGridGap,
                             2 * kGridMargin + 360);
  const int height = 2 * kGridMargin + headerH + titleH + cell.height() + captionH + heatH;

  QImage image(width, height, QImage::Format_RGB32);
  image.fill(Qt::white);
  QPainter painter(&image);
  painter.setRenderHint(QPainter::TextAntialiasing);
  painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
  const core::CompareClip& clip = m_report->clips()[static_cast<std::size_t>(m_currentClip)];
  painter.setFont(font);
  painter.setPen(QColor(0x55, 0x55, 0x55));
  painter.drawText(QRect(kGridMargin, kGridMargin, width - 2 * kGridMargin, line),
                   Qt::AlignLeft | Qt::AlignVCenter,
                   metrics.elidedText(tr("clip %1 \u00b7 %2 \u00b7 frame %3 / %4")
                                          .arg(clip.index)
                                          .arg(QString::fromStdString(clip.source))
                                          .arg(std::min(t, int(m_panels[0].size()) - 1) + 1)
                                          .arg(m_panels[0].size()),
                                      Qt::ElideMiddle, width - 2 * kGridMargin));
  for (int p = 0; p < columns; ++p) {
    const int x = kGridMargin + p * (cell.width() + kGridGap);
    int y = kGridMargin + headerH;
    painter.setFont(bold);
    painter.setPen(Qt::black);
    painter.drawText(
        QRect(x, y, cell.width(), titleH), Qt::AlignHCenter | Qt::AlignTop,
        QFontMetrics(bold).elidedText(panelName(*m_report, p), Qt::ElideRight, cell.width()));
    y += titleH;
    painter.drawImage(QRect(QPoint(x, y), cell), frameOf(m_panels[p]));
    y += cell.height() + 4;
    painter.setFont(font);
    for (const QString& text : captionFor(p)) {
      painter.drawText(QRect(x, y, cell.width(), line), Qt::AlignHCenter | Qt::AlignVCenter,
                       metrics.elidedText(text, Qt::ElideMiddle, cell.width()));
      y += line;
    }
    if (!heat) continue;
    const int heatY = kGridMargin + headerH + titleH + cell.height() + captionH + kGridGap;
    if (p > 0) {
      painter.drawImage(QRect(QPoint(x, heatY), cell), frameOf(m_heatmaps[p - 1]));
      continue;
    }
    // The legend in the original's column: what the colours mean.
    painter.setPen(Qt::black);
    painter.drawText(QRect(x, heatY, cell.width(), 2 * line), Qt::AlignLeft | Qt::TextWordWrap,
                     tr("|recon \u2212 original|"));
    const QRect bar(x, heatY + 2 * line + 4, cell.width(), 12);
    QLinearGradient gradient(bar.topLeft(), bar.topRight());
    for (int i = 0; i <= 16; ++i)
      gradient.setColorAt(i / 16.0, QColor(widgets::infernoColor(i / 16.0)));
    painter.fillRect(bar, gradient);
    painter.drawText(QRect(x, bar.bottom() + 2, cell.width(), line), Qt::AlignLeft,
                     QStringLiteral("0"));
    painter.drawText(QRect(x, bar.bottom() + 2, cell.width(), line), Qt::AlignRight,
                     QString::number(m_scaleMax, 'f', 0));
  }
  painter.end();
  return image;
}

bool CompareReview::exportGrid(const QString& path, QString* error) const {
  const QImage image = gridImage();
  if (image.isNull()) {
    if (error != nullptr) *error = tr("Nothing to export: no comparison is shown.");
    return false;
  }
  if (!image.save(path, "PNG")) {
    if (error != nullptr) *error = tr("Cannot write %1").arg(QDir::toNativeSeparators(path));
    return false;
  }
  return true;
}

int CompareReview::exportFiles(const QString& directory, QString* error) const {
  auto fail = [&](const QString& why) {
    if (error != nullptr) *error = why;
    return -1;
  };
  if (!m_report) return fail(tr("Nothing to export: no comparison is shown."));
  const QDir source(m_report->directory());
  const QDir target(directory);
  if (QDir::cleanPath(target.absolutePath()) == QDir::cleanPath(source.absolutePath())) {
    return fail(tr("%1 is the compare folder itself.").arg(QDir::toNativeSeparators(directory)));
  }
  int copied = 0;
  for (const QString& relative : m_report->outputFiles()) {
    const QString to = target.filePath(relative);
    if (!QDir().mkpath(QFileInfo(to).absolutePath())) {
      return fail(
          tr("Cannot create %1").arg(QDir::toNativeSeparators(QFileInfo(to).absolutePath())));
    }
    if (QFileInfo::exists(to) && !QFile::remove(to)) {
      return fail(tr("Cannot replace %1").arg(QDir::toNativeSeparators(to)));
    }
    if (!QFile::copy(source.filePath(relative), to)) {
      return fail(tr("Cannot copy %1 to %2")
                      .arg(QDir::toNativeSeparators(source.filePath(relative)),
                           QDir::toNativeSeparators(to)));
    }
    ++copied;
  }
  return copied;
}

void CompareReview::chooseGridFile() {
  if (!m_report || m_currentClip < 0) return;
  const QString suggested =
      QDir(m_report->directory())
          .filePath(QStringLiteral("review_clip_%1.png")
                        .arg(m_report->clips()[static_cast<std::size_t>(m_currentClip)].index, 3,
                             10, QLatin1Char('0')));
  const QString path = QFileDialog::getSaveFileName(this, tr("Export Grid PNG"), suggested,
                                                    tr("PNG images (*.png)"));
  if (path.isEmpty()) return;
  QString error;
  if (!exportGrid(path, &error)) QMessageBox::warning(this, tr("Export Grid PNG"), error);
}

void CompareReview::chooseExportFolder() {
  if (!m_report) return;
  const QString directory = QFileDialog::getExistingDirectory(this, tr("Export Files To"));
  if (directory.isEmpty()) return;
  QString error;
  const int copied = exportFiles(directory, &error);
  if (copied < 0) {
    QMessageBox::warning(this, tr("Export Files"), error);
  } else {
    m_info->setText(
        m_info->text() + QLatin1Char('\n') +
        tr("Copied %1 file(s) to %2").arg(copied).arg(QDir::toNativeSeparators(directory)));
  }
}

}  // namespace tb::app
