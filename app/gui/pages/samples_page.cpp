#include "app/gui/pages/samples_page.h"

#include "app/control/wire_text.h"
#include "app/gui/pages/empty_state.h"
#include "app/gui/pages/page_header.h"
#include "widgets/clip_timeline.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSlider>
#include <QStackedWidget>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

namespace tb::app {
namespace {

// Smallest side of one sample panel, in pixels.
constexpr int kMinCellSide = 48;
// Spacing of the grid: between columns, and between rows.
constexpr int kAcross = 16;
constexpr int kDown = 10;

}  // namespace

using widgets::ClipPlayer;

SamplesPage::SamplesPage(QWidget* parent) : QWidget(parent) {
  auto* header = new PageHeader(
      tr("Samples"),
      tr("Validation clips next to their reconstructions, at every step the run wrote them."),
      this);

  auto stepButton = [this](const char* name, QStyle::StandardPixmap icon, const QString& tip) {
    auto* b = new QToolButton(this);
    b->setObjectName(QString::fromLatin1(name));
    b->setIcon(style()->standardIcon(icon));
    b->setToolTip(tip);
    b->setAutoRaise(true);
    return b;
  };
  m_previousStep = stepButton("previousStep", QStyle::SP_ArrowLeft, tr("Previous sample step"));
  m_nextStep = stepButton("nextStep", QStyle::SP_ArrowRight, tr("Next sample step"));
  m_stepSlider = new QSlider(Qt::Horizontal, this);
  m_stepSlider->setObjectName(QStringLiteral("stepSlider"));
  m_stepSlider->setPageStep(1);
  m_stepSlider->setTickPosition(QSlider::TicksBelow);
  m_stepSlider->setToolTip(tr("Training step of the sample shown in every panel"));
  m_stepLabel = new QLabel(this);
  m_stepLabel->setObjectName(QStringLiteral("stepLabel"));
  m_stepLabel->setMinimumWidth(m_stepLabel->fontMetrics().horizontalAdvance(
      tr("step %1 \u00b7 %2 of %3").arg(99999999).arg(9999).arg(9999)));
  connect(m_stepSlider, &QSlider::valueChanged, this, [this](int index) {
    const QList<qint64> all = steps();
    if (index >= 0 && index < all.size()) setCurrentStep(all[index]);
  });
  connect(m_previousStep, &QToolButton::clicked, this,
          [this] { m_stepSlider->setValue(m_stepSlider->value() - 1); });
  connect(m_nextStep, &QToolButton::clicked, this,
          [this] { m_stepSlider->setValue(m_stepSlider->value() + 1); });

  m_follow = new QCheckBox(tr("Follow new samples"), this);
  m_follow->setObjectName(QStringLiteral("followSamples"));
  m_follow->setChecked(true);
  m_follow->setToolTip(tr("Show each new sample as the run writes it"));

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

  auto* toolbar = new QHBoxLayout;
  toolbar->setSpacing(6);
  toolbar->addWidget(new QLabel(tr("Step"), this));
  toolbar->addWidget(m_previousStep);
  toolbar->addWidget(m_stepSlider, 1);
  toolbar->addWidget(m_nextStep);
  toolbar->addWidget(m_stepLabel);
  toolbar->addSpacing(12);
  toolbar->addWidget(m_follow);
  toolbar->addSpacing(12);
  toolbar->addWidget(new QLabel(tr("Zoom"), this));
  toolbar->addWidget(m_zoomBox);
  m_stepSlider->setMinimumWidth(80);

  m_info = new QLabel(this);
  m_info->setObjectName(QStringLiteral("sampleInfo"));
  m_info->setForegroundRole(QPalette::PlaceholderText);
  m_info->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_info->setWordWrap(true);

  m_grid = new QWidget(this);
  m_grid->setObjectName(QStringLiteral("sampleGrid"));
  m_gridLayout = new QGridLayout(m_grid);
  m_gridLayout->setContentsMargins(0, 0, 0, 0);
  m_gridLayout->setHorizontalSpacing(kAcross);
  m_gridLayout->setVerticalSpacing(kDown);
  // One scroll area for the whole grid: at 2x and 4x the page scrolls, never each clip in a
  // box of its own. fitCells() sizes the cells from the space the area shows, and lays the
  // clips out in as many columns as make them largest; the grid sits centred at its top.
  auto* holder = new QWidget(this);
  auto* holderLayout = new QVBoxLayout(holder);
  holderLayout->setContentsMargins(0, 0, 0, 0);
  holderLayout->addWidget(m_grid, 0, Qt::AlignHCenter | Qt::AlignTop);
  m_gridHost = new QScrollArea(this);
  m_gridHost->setObjectName(QStringLiteral("sampleScroll"));
  m_gridHost->setFrameShape(QFrame::NoFrame);
  m_gridHost->setWidgetResizable(true);
  m_gridHost->setWidget(holder);
  m_gridHost->viewport()->installEventFilter(this);

  m_timeline = new widgets::ClipTimeline(this);
  m_timeline->setObjectName(QStringLiteral("samplesTimeline"));

  auto* content = new QWidget(this);
  auto* contentLayout = new QVBoxLayout(content);
  contentLayout->setContentsMargins(0, 0, 0, 0);
  contentLayout->setSpacing(10);
  contentLayout->addLayout(toolbar);
  contentLayout->addWidget(m_info);
  contentLayout->addWidget(m_gridHost, 1);
  contentLayout->addWidget(m_timeline);

  m_empty = new EmptyState({}, {}, this);
  m_stack = new QStackedWidget(this);
  m_stack->addWidget(m_empty);
  m_stack->addWidget(content);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(24, 20, 24, 20);
  layout->addWidget(header);
  layout->addWidget(m_stack, 1);

  m_poll.setInterval(kPollIntervalMs);
  connect(&m_poll, &QTimer::timeout, this, &SamplesPage::rescan);
  setRunDirectory({});
}

SamplesPage::~SamplesPage() = default;

QMap<qint64, QString> SamplesPage::listSampleFiles(const QString& samplesDir) {
  static const QRegularExpression kName(QStringLiteral("^step_(0|[1-9][0-9]{0,17})\\.gif$"));
  QMap<qint64, QString> files;
  const QDir dir(samplesDir);
  for (const QFileInfo& info : dir.entryInfoList({QStringLiteral("step_*.gif")}, QDir::Files)) {
    const QRegularExpressionMatch match = kName.match(info.fileName());
    if (match.hasMatch()) files.insert(match.captured(1).toLongLong(), info.absoluteFilePath());
  }
  return files;
}

int SamplesPage::clipRowsIn(QSize size) {
  const int side = size.width() / 2;
  if (side <= 0 || size.width() % 2 != 0 || size.height() % side != 0) return 1;
  return std::max(1, size.height() / side);
}

void SamplesPage::setRunDirectory(const QString& path) {
  m_runDir = path;
  m_files.clear();
  m_currentStep = -1;
  m_currentModified = {};
  m_currentSize = -1;
  m_loadError.clear();
  m_timeline->pause();
  rebuildPlayers(0);
  if (path.isEmpty()) {
    m_poll.stop();
  } else {
    m_poll.start();
    rescan();
  }
  updateStepControls();
  updateEmptyState();
}

QString SamplesPage::emptyHeadline() const { return m_empty->headline(); }

bool SamplesPage::isShowingSamples() const { return m_stack->currentIndex() == 1; }

bool SamplesPage::followsNewSamples() const { return m_follow->isChecked(); }

void SamplesPage::setFollowNewSamples(bool follow) { m_follow->setChecked(follow); }

void SamplesPage::rescan() {
  if (m_runDir.isEmpty()) return;
  const QMap<qint64, QString> files =
      listSampleFiles(pathText(runDirectoryAt(m_runDir).samplesDir()));
  const bool wasLatest = m_files.isEmpty() || m_currentStep == m_files.lastKey();
  if (files != m_files) {
    m_files = files;
    updateStepControls();
    Q_EMIT stepsChanged(static_cast<int>(files.size()));
    if (m_files.isEmpty()) {
      m_currentStep = -1;
      rebuildPlayers(0);
    } else if (m_currentStep < 0 || !m_files.contains(m_currentStep) ||
               (followsNewSamples() && wasLatest)) {
      setCurrentStep(m_files.lastKey());
    }
    updateStepControls();
    updateEmptyState();
    return;
  }
  // The same names: a sample rewritten in place (a resumed run) is read again.
  if (m_currentStep >= 0) {
    const QFileInfo info(m_files.value(m_currentStep));
    if (info.lastModified() != m_currentModified || info.size() != m_currentSize) loadCurrent();
  }
}

void SamplesPage::setCurrentStep(qint64 step) {
  if (!m_files.contains(step) || step == m_currentStep) return;
  m_currentStep = step;
  loadCurrent();
  updateStepControls();
  updateEmptyState();
  Q_EMIT currentStepChanged(step);
}

void SamplesPage::loadCurrent() {
  const QString path = m_files.value(m_currentStep);
  const QFileInfo info(path);
  m_currentModified = info.lastModified();
  m_currentSize = info.size();
  const widgets::ClipFrames frames = widgets::readAnimation(path, &m_loadError);
  if (frames.isEmpty()) {
    rebuildPlayers(0);
    m_info->setText(tr("Cannot show step %1: %2").arg(m_currentStep).arg(m_loadError));
    return;
  }
  m_loadError.clear();
  const QSize size = frames.front().size();
  const int rows = clipRowsIn(size);
  const int half = size.width() / 2;
  const int side = size.height() / rows;
  const bool fresh = rows * 2 != m_players.size();
  if (fresh) rebuildPlayers(rows);
  for (int r = 0; r < rows; ++r) {
    m_players[2 * r]->setFrames(widgets::cropFrames(frames, QRect(0, r * side, half, side)));
    m_players[2 * r + 1]->setFrames(
        widgets::cropFrames(frames, QRect(half, r * side, size.width() - half, side)));
  }
  // The clips play, as a GIF does in TensorBoard or a browser: a still first frame hides what
  // the tokenizer did (a causal tokenizer's frame 0 is often its worst). A new sample keeps
  // the frame and the play/pause the user chose.
  if (fresh) {
    fitCells();
    m_timeline->play();
  }
  m_info->setText(tr("%1 \u2014 %2 clip(s), %3 frame(s) of %4\u00d7%5")
                      .arg(QDir::toNativeSeparators(QDir(m_runDir).relativeFilePath(path)))
                      .arg(rows)
                      .arg(frames.size())
                      .arg(half)
                      .arg(side));
}

void SamplesPage::rebuildPlayers(int rows) {
  m_timeline->detachAll();
  for (ClipPlayer* player : m_players) delete player;
  for (QWidget* label : m_gridLabels) delete label;
  m_players.clear();
  m_gridLabels.clear();
  m_headings.clear();
  m_clipLabels.clear();
  if (rows <= 0) return;
  auto heading = [this](const QString& text, Qt::Alignment alignment) {
    auto* label = new QLabel(text, m_grid);
    QFont font = label->font();
    font.setBold(true);
    label->setFont(font);
    label->setAlignment(alignment);
    m_gridLabels.append(label);
    return label;
  };
  // Each clip: label | original | reconstruction, in square cells that fitCells() sizes and
  // places (several clips side by side when that makes them larger); one pair of headings
  // over each column of clips.
  for (int c = 0; c < rows; ++c) {
    m_headings.append(heading(tr("Original"), Qt::AlignHCenter));
    m_headings.append(heading(tr("Reconstruction"), Qt::AlignHCenter));
  }
  const auto zoom = static_cast<ClipPlayer::Zoom>(m_zoomBox->currentData().toInt());
  for (int r = 0; r < rows; ++r) {
    auto* label = new QLabel(tr("clip %1").arg(r + 1), m_grid);
    label->setForegroundRole(QPalette::PlaceholderText);
    label->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_gridLabels.append(label);
    m_clipLabels.append(label);
    for (int c = 0; c < 2; ++c) {
      auto* player = new ClipPlayer(m_grid);
      player->setObjectName(
          QStringLiteral("sample%1%2").arg(r).arg(c == 0 ? "Original" : "Reconstruction"));
      player->setZoom(zoom);
      m_players.append(player);
      m_timeline->attach(player);
    }
  }
  m_columns = 0;
  fitCells();
}

bool SamplesPage::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_gridHost->viewport() && event->type() == QEvent::Resize) fitCells();
  return QWidget::eventFilter(watched, event);
}

void SamplesPage::fitCells() {
  const int clips = static_cast<int>(m_players.size()) / 2;
  if (clips == 0) return;
  int labelWidth = 0;
  int headingHeight = 0;
  for (QWidget* label : std::as_const(m_clipLabels)) {
    labelWidth = std::max(labelWidth, label->sizeHint().width());
  }
  for (QWidget* heading : std::as_const(m_headings)) {
    headingHeight = std::max(headingHeight, heading->sizeHint().height());
  }
  const QSize space = m_gridHost->viewport()->size();
  // The side of a cell with `columns` clips side by side, each clip label | original | recon.
  auto widthSide = [&](int columns) {
    return (space.width() - columns * labelWidth - (3 * columns - 1) * kAcross) / (2 * columns);
  };
  auto heightSide = [&](int columns) {
    const int rows = (clips + columns - 1) / columns;
    return (space.height() - headingHeight - rows * kDown) / rows;
  };
  const auto zoom = static_cast<ClipPlayer::Zoom>(m_zoomBox->currentData().toInt());
  const int factor = ClipPlayer::zoomFactor(zoom);
  const QSize frame = m_players.front()->frameSize();
  int side = kMinCellSide;
  int columns = 1;
  if (factor > 0 && !frame.isEmpty()) {
    // Whole pixels: the cells are the frames' size; as many clips across as fit, and the page
    // scrolls down the rest.
    side = std::max(frame.width(), frame.height()) * factor;
    while (columns < clips && widthSide(columns + 1) >= side) ++columns;
  } else {
    // Fit: the number of columns that gives the largest cells with every clip in view.
    for (int c = 1; c <= clips; ++c) {
      const int candidate = std::min(widthSide(c), heightSide(c));
      if (candidate > side || c == 1) {
        side = std::max(kMinCellSide, candidate);
        columns = c;
      }
    }
  }
  for (ClipPlayer* player : m_players) player->setFixedSize(side, side);
  if (columns == m_columns) return;
  m_columns = columns;
  for (QWidget* widget : std::as_const(m_gridLabels)) m_gridLayout->removeWidget(widget);
  for (ClipPlayer* player : std::as_const(m_players)) m_gridLayout->removeWidget(player);
  for (int c = 0; c < static_cast<int>(m_headings.size()) / 2; ++c) {
    const bool used = c < columns;
    m_headings[2 * c]->setVisible(used);
    m_headings[2 * c + 1]->setVisible(used);
    if (used) {
      m_gridLayout->addWidget(m_headings[2 * c], 0, 3 * c + 1);
      m_gridLayout->addWidget(m_headings[2 * c + 1], 0, 3 * c + 2);
    }
  }
  for (int clip = 0; clip < clips; ++clip) {
    const int row = 1 + clip / columns;
    const int column = 3 * (clip % columns);
    m_gridLayout->addWidget(m_clipLabels[clip], row, column);
    m_gridLayout->addWidget(m_players[2 * clip], row, column + 1);
    m_gridLayout->addWidget(m_players[2 * clip + 1], row, column + 2);
  }
}

int SamplesPage::clipColumns() const { return m_columns; }

void SamplesPage::setZoom(ClipPlayer::Zoom zoom) {
  const int index = m_zoomBox->findData(static_cast<int>(zoom));
  if (index >= 0 && index != m_zoomBox->currentIndex()) {
    const QSignalBlocker block(m_zoomBox);
    m_zoomBox->setCurrentIndex(index);
  }
  for (ClipPlayer* player : m_players) player->setZoom(zoom);
  fitCells();
}

void SamplesPage::updateStepControls() {
  const QList<qint64> all = steps();
  const int index = static_cast<int>(all.indexOf(m_currentStep));
  {
    const QSignalBlocker block(m_stepSlider);
    m_stepSlider->setRange(0, std::max(0, static_cast<int>(all.size()) - 1));
    m_stepSlider->setValue(std::max(0, index));
  }
  m_stepSlider->setEnabled(all.size() > 1);
  m_previousStep->setEnabled(index > 0);
  m_nextStep->setEnabled(index >= 0 && index + 1 < all.size());
  m_stepLabel->setText(
      index >= 0 ? tr("step %1 \u00b7 %2 of %3").arg(m_currentStep).arg(index + 1).arg(all.size())
                 : tr("no step"));
}

void SamplesPage::updateEmptyState() {
  if (m_runDir.isEmpty()) {
    m_empty->setText(tr("No run open"),
                     tr("Open a run directory to see the sample GIFs it wrote."));
    m_stack->setCurrentIndex(0);
  } else if (m_files.isEmpty()) {
    m_empty->setText(tr("No samples yet in %1").arg(QFileInfo(m_runDir).fileName()),
                     tr("A run writes samples/step_N.gif at each validation (every "
                        "train.sample_every steps); they appear here as they are written."));
    m_stack->setCurrentIndex(0);
  } else {
    m_stack->setCurrentIndex(1);
  }
}

}  // namespace tb::app
