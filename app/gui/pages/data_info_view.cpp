#include "app/gui/pages/data_info_view.h"

#include "core/data_info.h"
#include "widgets/colours.h"

#include <QFileInfo>
#include <QFormLayout>
#include <QGraphicsOpacityEffect>
#include <QGroupBox>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QLocale>
#include <QPalette>
#include <QPixmap>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tb::app {
namespace {

constexpr int kPreviewMinHeight = 48;
constexpr int kPreviewMaxHeight = 96;
constexpr int kPreviewMaxWidth = 620;

QString count(double value) { return QLocale::c().toString(qint64(value)); }

// A strip of preview frames that narrows with its column (scaled down, never up) instead of
// setting the page's least width to the strip's.
class PreviewStrip : public QLabel {
 public:
  PreviewStrip(QPixmap full, QWidget* parent) : QLabel(parent), m_full(std::move(full)) {
    setObjectName(QStringLiteral("previewStrip"));
    setAlignment(Qt::AlignLeft | Qt::AlignTop);
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
    setPixmap(m_full);
  }
  QSize sizeHint() const override { return m_full.size(); }
  QSize minimumSizeHint() const override { return QSize(kMinWidth, heightForWidth(kMinWidth)); }
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override {
    return width >= m_full.width() ? m_full.height()
                                   : m_full.height() * width / std::max(1, m_full.width());
  }

 protected:
  void resizeEvent(QResizeEvent* event) override {
    QLabel::resizeEvent(event);
    const int width = std::min(this->width(), m_full.width());
    if (pixmap().width() != width) {
      setPixmap(width == m_full.width()
                    ? m_full
                    : m_full.scaledToWidth(std::max(1, width), Qt::SmoothTransformation));
    }
  }

 private:
  static constexpr int kMinWidth = 80;
  QPixmap m_full;
};

QTableWidget* makeTable(const QStringList& headers, QWidget* parent) {
  auto* table = new QTableWidget(0, static_cast<int>(headers.size()), parent);
  table->setHorizontalHeaderLabels(headers);
  table->verticalHeader()->hide();
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setAlternatingRowColors(true);
  table->setWordWrap(false);
  table->horizontalHeader()->setStretchLastSection(true);
  table->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 8);
  return table;
}

// Shows up to `maxRows` rows without scrolling, then scrolls.
void fitHeight(QTableWidget* table, int maxRows) {
  int rowsHeight = 0;
  for (int row = 0; row < std::min(table->rowCount(), maxRows); ++row) {
    rowsHeight += table->rowHeight(row);
  }
  if (rowsHeight == 0) rowsHeight = table->verticalHeader()->defaultSectionSize();
  table->setFixedHeight(table->horizontalHeader()->sizeHint().height() + rowsHeight +
                        2 * table->frameWidth());
}

}  // namespace

DataInfoView::DataInfoView(QWidget* parent) : QWidget(parent) {
  m_status = new QLabel(this);
  m_status->setObjectName(QStringLiteral("dataInfoStatus"));
  m_status->setWordWrap(true);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

  m_results = new QWidget(this);
  auto* countsWidget = new QWidget(m_results);
  m_form = new QFormLayout(countsWidget);
  m_form->setContentsMargins(0, 0, 0, 0);
  m_form->setHorizontalSpacing(16);
  m_form->setVerticalSpacing(6);
  addRow(QStringLiteral("type"), tr("Type"));
  addRow(QStringLiteral("path"), tr("Folder"));
  addRow(QStringLiteral("files"), tr("Files (train / validation)"));
  addRow(QStringLiteral("clips"), tr("Clips (train / validation)"));
  addRow(QStringLiteral("frames"), tr("Frames per file"));

  m_resolutions = makeTable({tr("Resolution"), tr("Files")}, m_results);
  m_resolutions->setObjectName(QStringLiteral("resolutionsTable"));
  m_resolutions->setColumnWidth(0, 160);
  auto* resolutionsGroup = new QGroupBox(tr("Resolutions"), m_results);
  auto* resolutionsLayout = new QVBoxLayout(resolutionsGroup);
  resolutionsLayout->addWidget(m_resolutions);

  m_skipped = makeTable({tr("File"), tr("Reason")}, m_results);
  m_skipped->setObjectName(QStringLiteral("skippedTable"));
  m_skipped->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  m_skippedGroup = new QGroupBox(tr("Skipped files"), m_results);
  auto* skippedLayout = new QVBoxLayout(m_skippedGroup);
  skippedLayout->addWidget(m_skipped);

  m_previewGroup = new QGroupBox(tr("Preview"), m_results);
  m_previewLayout = new QVBoxLayout(m_previewGroup);
  m_previewLayout->setSpacing(8);
  m_previewEmpty = new QLabel(tr("No preview frames."), m_previewGroup);
  m_previewEmpty->setForegroundRole(QPalette::PlaceholderText);
  m_previewLayout->addWidget(m_previewEmpty);

  auto* resultsLayout = new QVBoxLayout(m_results);
  resultsLayout->setContentsMargins(0, 0, 0, 0);
  resultsLayout->setSpacing(10);
  resultsLayout->addWidget(countsWidget);
  resultsLayout->addWidget(m_previewGroup);
  resultsLayout->addWidget(resolutionsGroup);
  resultsLayout->addWidget(m_skippedGroup);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(10);
  layout->addWidget(m_status);
  layout->addWidget(m_results);
  layout->addStretch(1);

  setUnavailable(tr("Not scanned yet."));
}

void DataInfoView::addRow(const QString& key, const QString& label) {
  auto* value = new QLabel(QStringLiteral("\u2014"), m_form->parentWidget());
  value->setObjectName(QStringLiteral("dataInfo:") + key);
  value->setTextInteractionFlags(Qt::TextSelectableByMouse);
  value->setWordWrap(true);
  m_form->addRow(new QLabel(label, m_form->parentWidget()), value);
  m_values.insert(key, value);
}

void DataInfoView::setUnavailable(const QString& reason) {
  m_status->show();
  m_state = State::Empty;
  m_problem.clear();
  m_status->setPalette(QPalette());
  m_status->setForegroundRole(QPalette::PlaceholderText);
  m_status->setText(reason);
  setResultsVisible(false, false);
}

void DataInfoView::setComputing() {
  m_status->show();
  m_state = State::Computing;
  m_status->setPalette(QPalette());
  m_status->setForegroundRole(QPalette::PlaceholderText);
  m_status->setText(tr("scanning\u2026"));
  setResultsVisible(m_values.value(QStringLiteral("type"))->text() != QStringLiteral("\u2014"),
                    true);
}

bool DataInfoView::setResult(const QByteArray& json) {
  std::string problem;
  const std::optional<core::DataInfo> info =
      core::parseDataInfo(std::string_view(json.constData(), json.size()), &problem);
  if (!info) {
    setError(
        tr("data-info printed something other than the expected JSON object (%1): %2")
            .arg(QString::fromStdString(problem), QString::fromUtf8(json.left(200)).trimmed()));
    return false;
  }
  m_state = State::Ready;
  const QString type = QString::fromStdString(info->type);
  const QString path = QString::fromStdString(info->path);
  const qint64 fileCount = info->files;
  const qint64 trainClips = info->train_clips;
  const auto skippedFiles = static_cast<qint64>(info->skipped.size());
  m_problem.clear();
  m_validationWarning.clear();
  if (trainClips > 0 && info->valid_clips == 0 && !path.isEmpty()) {
    // Validation takes whole files; with one usable file (or a valid_fraction that rounds to
    // none) it gets none, and the run would say nothing about it.
    m_validationWarning =
        info->valid_path.empty()
            ? tr("no validation clips: validation takes whole files of %1, and %2 none for "
                 "it, so validation, sample GIFs and rFID/rFVD would be off. Set a validation "
                 "folder, or add files.")
                  .arg(path, fileCount == 1 ? tr("its only usable file leaves")
                                            : tr("its %1 usable files leave").arg(fileCount))
            : tr("no validation clips in %1: validation, sample GIFs and rFID/rFVD would be off.")
                  .arg(QString::fromStdString(info->valid_path));
  }
  if (fileCount == 0 && skippedFiles == 0) {
    m_problem = tr("no %1 found in %2")
                    .arg(type == QLatin1String("images") ? tr("images") : tr("videos"), path);
  } else if (trainClips == 0) {
    m_problem = skippedFiles > 0
                    ? tr("no usable clip in %1: every file was skipped (%2; see Dataset)")
                          .arg(path)
                          .arg(skippedFiles == 1 ? tr("1 file") : tr("%1 files").arg(skippedFiles))
                    : tr("no training clip in %1 (too few frames for the clip length?)").arg(path);
  }
  const QString trainText =
      trainClips == 1 ? tr("1 training clip")
                      : tr("%1 training clips").arg(count(static_cast<double>(trainClips)));
  const QString filesText =
      fileCount == 1 ? tr("1 file") : tr("%1 files").arg(count(static_cast<double>(fileCount)));
  m_checked = path.isEmpty() ? tr("procedural clips, %1").arg(trainText)
                             : tr("%1, %2").arg(filesText, trainText);
  m_values[QStringLiteral("type")]->setText(type);
  m_values[QStringLiteral("path")]->setText(path.isEmpty() ? tr("(none: procedural clips)") : path);
  m_values[QStringLiteral("files")]->setText(
      tr("%1  (%2 / %3)")
          .arg(count(static_cast<double>(info->files)),
               count(static_cast<double>(info->train_files)),
               count(static_cast<double>(info->valid_files))));
  m_values[QStringLiteral("clips")]->setText(
      tr("%1 / %2").arg(count(static_cast<double>(info->train_clips)),
                        count(static_cast<double>(info->valid_clips))));
  const auto minFrames = static_cast<double>(info->min_frames);
  const auto maxFrames = static_cast<double>(info->max_frames);
  m_values[QStringLiteral("frames")]->setText(
      (minFrames == maxFrames ? count(minFrames)
                              : tr("%1 \u2013 %2").arg(count(minFrames), count(maxFrames))) +
      tr("  (%1 in all)").arg(count(static_cast<double>(info->total_frames))));

  const auto& resolutions = info->resolutions;
  m_resolutions->setRowCount(static_cast<int>(resolutions.size()));
  for (int row = 0; row < static_cast<int>(resolutions.size()); ++row) {
    const core::DataInfo::Resolution& r = resolutions[static_cast<std::size_t>(row)];
    m_resolutions->setItem(row, 0,
                           new QTableWidgetItem(tr("%1 \u00d7 %2").arg(r.width).arg(r.height)));
    auto* files = new QTableWidgetItem(count(static_cast<double>(r.files)));
    m_resolutions->setItem(row, 1, files);
  }
  fitHeight(m_resolutions, 5);

  const auto& skipped = info->skipped;
  m_skipped->setRowCount(static_cast<int>(skipped.size()));
  for (int row = 0; row < static_cast<int>(skipped.size()); ++row) {
    const core::DataInfo::Skipped& s = skipped[static_cast<std::size_t>(row)];
    const QString file = QString::fromStdString(s.path);
    auto* fileItem = new QTableWidgetItem(QFileInfo(file).fileName());
    fileItem->setToolTip(file);
    auto* reasonItem = new QTableWidgetItem(QString::fromStdString(s.reason));
    reasonItem->setToolTip(reasonItem->text());
    m_skipped->setItem(row, 0, fileItem);
    m_skipped->setItem(row, 1, reasonItem);
  }
  // The file column takes what it needs (within limits); reasons get the rest, elided, whole in
  // their tooltips.
  m_skipped->resizeColumnToContents(0);
  m_skipped->setColumnWidth(0, std::clamp(m_skipped->columnWidth(0), 120, 220));
  fitHeight(m_skipped, 6);
  m_skippedGroup->setTitle(skipped.empty() ? tr("Skipped files: none")
                                           : tr("Skipped files: %1").arg(skipped.size()));
  m_skipped->setVisible(!skipped.empty());

  clearPreviews();
  for (const core::DataInfo::Preview& p : info->preview) {
    const QImage image(QString::fromStdString(p.png));
    if (image.isNull()) continue;
    int height = std::clamp(image.height(), kPreviewMinHeight, kPreviewMaxHeight);
    int width = image.width() * height / std::max(1, image.height());
    if (width > kPreviewMaxWidth) {
      width = kPreviewMaxWidth;
      height = image.height() * width / std::max(1, image.width());
    }
    // Small frames are enlarged without smoothing so that pixels stay pixels.
    const Qt::TransformationMode mode =
        height > image.height() ? Qt::FastTransformation : Qt::SmoothTransformation;
    auto* strip = new PreviewStrip(
        QPixmap::fromImage(image.scaled(width, height, Qt::IgnoreAspectRatio, mode)),
        m_previewGroup);
    const QString source = QString::fromStdString(p.source);
    strip->setToolTip(source);
    auto* caption =
        new QLabel(QFileInfo(source).fileName().isEmpty() ? source : QFileInfo(source).fileName(),
                   m_previewGroup);
    caption->setObjectName(QStringLiteral("previewCaption"));
    caption->setForegroundRole(QPalette::PlaceholderText);
    m_previewLayout->addWidget(strip);
    m_previewLayout->addWidget(caption);
    ++m_previewCount;
  }
  m_previewEmpty->setVisible(m_previewCount == 0);

  m_status->setText(QString());
  m_status->hide();
  setResultsVisible(true, false);
  return true;
}

void DataInfoView::setError(const QString& message) {
  m_status->show();
  m_state = State::Failed;
  m_problem = message;
  m_status->setText(message);
  QPalette palette = m_status->palette();
  palette.setColor(QPalette::WindowText, widgets::colours::error());
  m_status->setPalette(palette);
  m_status->setForegroundRole(QPalette::WindowText);
  setResultsVisible(false, false);
}

QString DataInfoView::statusText() const { return m_status->text(); }

QString DataInfoView::valueText(const QString& key) const {
  const QLabel* label = m_values.value(key);
  return label == nullptr ? QString() : label->text();
}

int DataInfoView::resolutionRowCount() const { return m_resolutions->rowCount(); }

int DataInfoView::skippedRowCount() const { return m_skipped->rowCount(); }

QString DataInfoView::skippedReason(int row) const {
  const QTableWidgetItem* item = m_skipped->item(row, 1);
  return item == nullptr ? QString() : item->text();
}

int DataInfoView::previewCount() const { return m_previewCount; }

void DataInfoView::clearPreviews() {
  for (QLabel* label : m_previewGroup->findChildren<QLabel*>()) {
    if (label != m_previewEmpty) delete label;
  }
  m_previewCount = 0;
}

void DataInfoView::setResultsVisible(bool visible, bool dimmed) {
  m_results->setVisible(visible);
  if (dimmed) {
    auto* effect = new QGraphicsOpacityEffect(m_results);
    effect->setOpacity(0.45);
    m_results->setGraphicsEffect(effect);
  } else {
    m_results->setGraphicsEffect(nullptr);
  }
}

}  // namespace tb::app
