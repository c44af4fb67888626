#include "app/gui/pages/runs_page.h"

#include "app/control/file_read_thread.h"
#include "app/gui/pages/empty_state.h"
#include "app/gui/pages/page_header.h"
#include "app/gui/window_settings.h"
#include "widgets/colours.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QPainter>
#include <QPixmap>
#include <QPushButton>
#include <QSet>
#include <QSortFilterProxyModel>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>
#include <iterator>

namespace tb::app {
namespace {

constexpr int kPathRole = Qt::UserRole + 1;
constexpr int kSortRole = Qt::UserRole + 2;
const QString kMissing = QStringLiteral("\u2014");
// The first byte of the table's saved header state: the columns' layout it was saved with (a
// state of another layout, with its sort column an index, is not restored onto this one).
// 0x0a: ten columns, Location last; 0x4a: ten columns, Location second.
constexpr char kTableLayout = 0x40 + RunsPage::ColumnCount;

QColor statusColor(RunSummary::Status status) {
  namespace colours = widgets::colours;
  switch (status) {
    case RunSummary::Status::Running:
      return colours::running();
    case RunSummary::Status::Completed:
      return colours::done();
    case RunSummary::Status::Failed:
      return colours::failed();
    case RunSummary::Status::Interrupted:
      return colours::attention();
    case RunSummary::Status::Stopped:
    case RunSummary::Status::New:
      return colours::idle();
  }
  return {};
}

QIcon statusDot(const QColor& color) {
  QPixmap pixmap(12, 12);
  pixmap.fill(Qt::transparent);
  QPainter painter(&pixmap);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(Qt::NoPen);
  painter.setBrush(color);
  painter.drawEllipse(QRectF(1.5, 1.5, 9, 9));
  return QIcon(pixmap);
}

// Sorting ranks: what needs attention first when sorted ascending.
int statusRank(RunSummary::Status status) {
  switch (status) {
    case RunSummary::Status::Running:
      return 0;
    case RunSummary::Status::Failed:
      return 1;
    case RunSummary::Status::Interrupted:
      return 2;
    case RunSummary::Status::Stopped:
      return 3;
    case RunSummary::Status::Completed:
      return 4;
    case RunSummary::Status::New:
      return 5;
  }
  return 6;
}

void setCell(QStandardItem* item, const QString& text, const QVariant& sortValue) {
  if (item->text() != text) item->setText(text);
  if (item->data(kSortRole) != sortValue) item->setData(sortValue, kSortRole);
}

void setNumber(QStandardItem* item, const std::optional<double>& value, int decimals) {
  // A missing value sorts below every number.
  setCell(item, value ? QString::number(*value, 'f', decimals) : kMissing,
          value ? QVariant(*value) : QVariant(-1e300));
}

}  // namespace

RunsPage::RunsPage(QWidget* parent)
    : QWidget(parent), m_reads(new FileReadThread(QStringLiteral("RunsPage"), this)) {
  auto* header = new PageHeader(
      tr("Runs"),
      tr("Every run in a runs folder, live or finished, local or on a cluster file system. "
         "Double-click a run to open it; select runs and Overlay on Monitor to compare "
         "their curves."),
      this);

  auto* folderLabel = new QLabel(tr("Runs folder"), this);
  m_folderEdit = new QLineEdit(this);
  m_folderEdit->setObjectName(QStringLiteral("runsFolder"));
  m_folderEdit->setToolTip(tr("Press Enter to browse the folder typed here"));
  auto* choose = new QPushButton(tr("Choose\u2026"), this);
  choose->setObjectName(QStringLiteral("chooseRunsFolder"));
  auto* reload = new QPushButton(tr("Refresh"), this);
  reload->setObjectName(QStringLiteral("refreshRuns"));
  m_overlay = new QPushButton(tr("Overlay on Monitor"), this);
  m_overlay->setObjectName(QStringLiteral("overlayRuns"));
  m_overlay->setToolTip(
      tr("Draw the selected runs' curves over the open run's on the Monitor page (select "
         "several with Ctrl or Shift)"));
  connect(m_overlay, &QPushButton::clicked, this, &RunsPage::overlaySelected);
  m_count = new QLabel(this);
  m_count->setObjectName(QStringLiteral("runCount"));
  m_count->setMinimumWidth(70);
  m_count->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
  auto* folderRow = new QHBoxLayout;
  folderRow->setSpacing(8);
  folderRow->addWidget(folderLabel);
  folderRow->addWidget(m_folderEdit, 1);
  folderRow->addWidget(choose);
  folderRow->addWidget(reload);
  folderRow->addWidget(m_overlay);
  folderRow->addWidget(m_count);

  m_model = new QStandardItemModel(0, ColumnCount, this);
  m_model->setHorizontalHeaderLabels({tr("Name"), tr("Location"), tr("Status"), tr("Step"),
                                      tr("Best PSNR"), tr("Best SSIM"), tr("Best LPIPS"),
                                      tr("Best rFID"), tr("Best rFVD"), tr("Modified")});
  m_model->horizontalHeaderItem(Location)->setToolTip(
      tr("The folder the run is in: grey in the runs folder, black for a run opened from "
         "elsewhere"));
  for (int column : {Step, Psnr, Ssim, Lpips, Rfid, Rfvd}) {
    m_model->horizontalHeaderItem(column)->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  }
  m_model->horizontalHeaderItem(Step)->setToolTip(
      tr("The step the run reached: its done event's, else its last progress or checkpoint "
         "(metrics.jsonl rows come only every train.log_every steps)"));
  m_model->horizontalHeaderItem(Psnr)->setToolTip(tr("Highest valid/psnr (dB)"));
  m_model->horizontalHeaderItem(Ssim)->setToolTip(tr("Highest valid/ssim"));
  m_model->horizontalHeaderItem(Lpips)->setToolTip(tr("Lowest valid/lpips"));
  const QString frechet =
      tr("Lowest %1 (eval.every_steps) on the run's eval.clips held-out clips. It depends on N "
         "and the data: compare it with runs evaluated on the same clips, not with papers' "
         "figures (50,000 images; UCF-101's 3,783 test clips)");
  m_model->horizontalHeaderItem(Rfid)->setToolTip(frechet.arg(QStringLiteral("valid/rfid")));
  m_model->horizontalHeaderItem(Rfvd)->setToolTip(frechet.arg(QStringLiteral("valid/rfvd")));
  m_proxy = new QSortFilterProxyModel(this);
  m_proxy->setSourceModel(m_model);
  m_proxy->setSortRole(kSortRole);
  m_proxy->setSortCaseSensitivity(Qt::CaseInsensitive);

  m_view = new QTreeView(this);
  m_view->setObjectName(QStringLiteral("runTable"));
  m_view->setModel(m_proxy);
  m_view->setRootIsDecorated(false);
  m_view->setUniformRowHeights(true);
  // A long name or folder keeps its start and its end: "/mnt/cluster/…/runs".
  m_view->setTextElideMode(Qt::ElideMiddle);
  m_view->setAlternatingRowColors(true);
  m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
  m_view->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(m_view, &QWidget::customContextMenuRequested, this, &RunsPage::showContextMenu);
  m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_view->setSortingEnabled(true);
  m_view->sortByColumn(Modified, Qt::DescendingOrder);
  QHeaderView* columns = m_view->header();
  columns->setStretchLastSection(true);
  columns->setSectionsMovable(false);
  // Every column but the last (Modified stretches), in Column order: at 1024 px the name, the
  // location, the status, the step and the first scores are in view.
  constexpr int kWidths[] = {180, 170, 100, 70, 85, 85, 85, 80, 80};
  static_assert(std::size(kWidths) == Modified, "one width per column before Modified");
  for (int column = 0; column < Modified; ++column) {
    columns->resizeSection(column, kWidths[column]);
  }

  m_empty = new EmptyState(QString(), QString(), this);
  m_stack = new QStackedWidget(this);
  m_stack->addWidget(m_empty);
  m_stack->addWidget(m_view);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(24, 20, 24, 20);
  layout->setSpacing(12);
  layout->addWidget(header);
  layout->addLayout(folderRow);
  layout->addWidget(m_stack, 1);

  connect(m_folderEdit, &QLineEdit::returnPressed, this,
          [this] { setFolder(m_folderEdit->text()); });
  connect(choose, &QPushButton::clicked, this, &RunsPage::chooseFolder);
  connect(reload, &QPushButton::clicked, this, &RunsPage::refresh);
  connect(m_view, &QTreeView::activated, this, [this](const QModelIndex& index) {
    Q_EMIT openRequested(m_proxy->index(index.row(), Name).data(kPathRole).toString());
  });
  connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &RunsPage::updateOverlayButton);

  // The header's state is saved behind its column count: a state from a build with other
  // columns (the sort column is an index) is not restored onto these.
  const WindowSettings settings;
  const QByteArray tableState = settings.runsTableState();
  if (!tableState.isEmpty() && tableState.front() == kTableLayout) {
    columns->restoreState(tableState.mid(1));
  }
  const QString remembered = settings.runsFolder();
  m_folder = QDir::cleanPath(remembered.isEmpty() ? QDir::current().filePath(QStringLiteral("runs"))
                                                  : remembered);
  m_folderEdit->setText(QDir::toNativeSeparators(m_folder));

  m_timer.setInterval(kDefaultRefreshMs);
  connect(&m_timer, &QTimer::timeout, this, [this] {
    if (m_reads->pendingReads() == 0) refresh();  // a slow file system: do not pile up reads
  });
  m_timer.start();
  refresh();
}

RunsPage::~RunsPage() {
  WindowSettings settings;
  settings.setRunsTableState(kTableLayout + m_view->header()->saveState());
}

void RunsPage::setFolder(const QString& path) {
  m_folder =
      QDir::cleanPath(QFileInfo(QDir::fromNativeSeparators(path.trimmed())).absoluteFilePath());
  m_folderEdit->setText(QDir::toNativeSeparators(m_folder));
  WindowSettings settings;
  settings.setRunsFolder(m_folder);
  refresh();
}

void RunsPage::chooseFolder() {
  const QString path = QFileDialog::getExistingDirectory(this, tr("Choose Runs Folder"), m_folder);
  if (!path.isEmpty()) {
    setFolder(path);
  }
}

bool RunsPage::addRunDirectory(const QString& path) {
  const QString clean = QDir::cleanPath(path);
  if (m_opened.contains(clean)) {
    return false;
  }
  m_opened.append(clean);
  refresh();
  return true;
}

void RunsPage::setCurrentRun(const QString& path) {
  m_current = QDir::cleanPath(path);
  for (int row = 0; row < m_model->rowCount(); ++row) {
    const bool current = m_model->item(row, Name)->data(kPathRole).toString() == m_current;
    for (int column = 0; column < ColumnCount; ++column) {
      QStandardItem* item = m_model->item(row, column);
      QFont font = item->font();
      if (font.bold() != current) {
        font.setBold(current);
        item->setFont(font);
      }
    }
  }
  updateOverlayButton();
}

void RunsPage::setRefreshIntervalMs(int ms) { m_timer.setInterval(ms); }

void RunsPage::selectRuns(const QStringList& paths) {
  QItemSelection selection;
  for (int row = 0; row < m_proxy->rowCount(); ++row) {
    if (paths.contains(pathAt(row))) {
      selection.select(m_proxy->index(row, 0), m_proxy->index(row, ColumnCount - 1));
    }
  }
  m_view->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
}

QStringList RunsPage::selectedRuns() const {
  QList<int> rows;
  for (const QModelIndex& index : m_view->selectionModel()->selectedRows(Name)) {
    rows.append(index.row());
  }
  std::sort(rows.begin(), rows.end());
  QStringList paths;
  for (int row : rows) paths.append(pathAt(row));
  return paths;
}

bool RunsPage::overlaySelected() {
  QStringList paths = selectedRuns();
  paths.removeAll(m_current);  // the open run is drawn anyway
  if (paths.isEmpty() || m_current.isEmpty()) return false;
  Q_EMIT overlayRequested(paths);
  return true;
}

void RunsPage::updateOverlayButton() {
  QStringList others = selectedRuns();
  others.removeAll(m_current);
  m_overlay->setEnabled(!m_current.isEmpty() && !others.isEmpty());
}

void RunsPage::showContextMenu(const QPoint& position) {
  const QModelIndex index = m_view->indexAt(position);
  if (!index.isValid()) return;
  const QString path = m_proxy->index(index.row(), Name).data(kPathRole).toString();
  if (!selectedRuns().contains(path)) selectRuns({path});
  QMenu menu(this);
  menu.addAction(tr("Open"), this, [this, path] { Q_EMIT openRequested(path); });
  QAction* overlay = menu.addAction(tr("Overlay on Monitor"), this, &RunsPage::overlaySelected);
  overlay->setEnabled(m_overlay->isEnabled());
  menu.exec(m_view->viewport()->mapToGlobal(position));
}

int RunsPage::sourceRowOf(const QString& path) const {
  for (int row = 0; row < m_model->rowCount(); ++row) {
    if (m_model->item(row, Name)->data(kPathRole).toString() == path) return row;
  }
  return -1;
}

void RunsPage::refresh() {
  // The folder is listed and every run read on the page's reading thread: a runs folder on a
  // hung network file system (or a FIFO where a run's file should be) never holds the window.
  struct Listing {
    QStringList paths;
    QVector<RunSummary> summaries;
  };
  m_reads->read(
      [folder = m_folder, opened = m_opened, reader = m_reader] {
        Listing listing;
        listing.paths = RunSummaryReader::runDirectoriesIn(folder);
        for (const QString& path : opened) {
          if (!listing.paths.contains(path) && QFileInfo(path).isDir()) listing.paths.append(path);
        }
        reader->keepOnly(listing.paths);
        for (const QString& path : std::as_const(listing.paths)) {
          listing.summaries.append(reader->read(path));
        }
        return listing;
      },
      [this](const Listing& listing) { showListing(listing.paths, listing.summaries); });
}

bool RunsPage::waitForReads(int timeoutMs) { return m_reads->waitForReads(timeoutMs); }

void RunsPage::showListing(const QStringList& paths, const QVector<RunSummary>& summaries) {
  const QSet<QString> listed(paths.cbegin(), paths.cend());
  for (int row = m_model->rowCount() - 1; row >= 0; --row) {
    const QString path = m_model->item(row, Name)->data(kPathRole).toString();
    if (!listed.contains(path)) m_model->removeRow(row);
  }
  for (const RunSummary& summary : summaries) updateRow(summary);
  setCurrentRun(m_current);
  updateEmptyState(static_cast<int>(paths.size()));
  updateOverlayButton();
}

void RunsPage::updateRow(const RunSummary& summary) {
  int row = sourceRowOf(summary.path);
  if (row < 0) {
    QList<QStandardItem*> items;
    for (int column = 0; column < ColumnCount; ++column) {
      auto* item = new QStandardItem;
      if (column == Step || column == Psnr || column == Ssim || column == Lpips || column == Rfid ||
          column == Rfvd) {
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      }
      items.append(item);
    }
    items[Name]->setData(summary.path, kPathRole);
    items[Name]->setToolTip(QDir::toNativeSeparators(summary.path));
    m_model->appendRow(items);
    row = m_model->rowCount() - 1;
  }
  auto item = [this, row](Column column) { return m_model->item(row, column); };
  setCell(item(Name), summary.name, summary.name.toLower());
  const QString status = RunSummaryReader::statusName(summary.status);
  if (item(Status)->text() != status) {
    item(Status)->setIcon(statusDot(statusColor(summary.status)));
    item(Status)->setForeground(statusColor(summary.status));
  }
  setCell(item(Status), status, statusRank(summary.status));
  setCell(item(Step), summary.step ? QLocale().toString(*summary.step) : kMissing,
          summary.step ? QVariant(*summary.step) : QVariant(qint64(-1)));
  setNumber(item(Psnr), summary.bestPsnr, 2);
  setNumber(item(Ssim), summary.bestSsim, 4);
  // Lower LPIPS is better: a missing one sorts above every number.
  setCell(item(Lpips), summary.bestLpips ? QString::number(*summary.bestLpips, 'f', 4) : kMissing,
          summary.bestLpips ? QVariant(*summary.bestLpips) : QVariant(1e300));
  setCell(item(Rfid), summary.bestRfid ? QString::number(*summary.bestRfid, 'f', 2) : kMissing,
          summary.bestRfid ? QVariant(*summary.bestRfid) : QVariant(1e300));
  setCell(item(Rfvd), summary.bestRfvd ? QString::number(*summary.bestRfvd, 'f', 2) : kMissing,
          summary.bestRfvd ? QVariant(*summary.bestRfvd) : QVariant(1e300));
  setCell(item(Modified),
          summary.modified.isValid() ? summary.modified.toString(QStringLiteral("yyyy-MM-dd HH:mm"))
                                     : kMissing,
          summary.modified.isValid() ? QVariant(summary.modified.toMSecsSinceEpoch())
                                     : QVariant(qint64(0)));
  const QString folder = QFileInfo(summary.path).absolutePath();
  const QString location = QDir::toNativeSeparators(folder);
  setCell(item(Location), location, location);
  const bool elsewhere = QDir::cleanPath(folder) != m_folder;
  item(Location)->setToolTip(elsewhere ? tr("%1 (outside the runs folder)").arg(location)
                                       : location);
  const QBrush foreground =
      elsewhere ? palette().brush(QPalette::Text) : palette().brush(QPalette::PlaceholderText);
  if (item(Location)->foreground() != foreground) item(Location)->setForeground(foreground);
}

void RunsPage::updateEmptyState(int runs) {
  m_count->setText(runs == 1 ? tr("1 run") : tr("%1 runs").arg(runs));
  if (runs > 0) {
    m_stack->setCurrentWidget(m_view);
    return;
  }
  const QString folder = QDir::toNativeSeparators(m_folder);
  if (!QFileInfo(m_folder).isDir()) {
    m_empty->setText(tr("No runs folder at %1").arg(folder),
                     tr("Choose a folder of run directories, or launch a run: its folder "
                        "appears here."));
  } else {
    m_empty->setText(tr("No runs in %1").arg(folder),
                     tr("A run directory is a folder with a config.json. Launch a run, choose "
                        "another folder, or open one with File \u25b8 Open Run Directory\u2026"));
  }
  m_stack->setCurrentWidget(m_empty);
}

int RunsPage::rowCount() const { return m_proxy->rowCount(); }

QString RunsPage::cellText(int row, Column column) const {
  return m_proxy->index(row, column).data().toString();
}

QString RunsPage::pathAt(int row) const {
  return m_proxy->index(row, Name).data(kPathRole).toString();
}

}  // namespace tb::app
