#include "app/gui/pages/compare_page.h"

#include "app/control/compare_process.h"
#include "app/control/file_read_thread.h"
#include "app/gui/compare_report.h"
#include "app/gui/pages/compare_review.h"
#include "app/gui/pages/compare_setup_form.h"
#include "app/gui/pages/empty_state.h"
#include "app/gui/pages/page_header.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QScrollArea>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <optional>

namespace tb::app {
namespace {

// The form's width at first show: two fifths of the page, between the narrowest that
// reads and the width its folders and command want (the default window gives it that).
constexpr int kFormWidth = 420;
constexpr int kFormMinWidth = 300;
constexpr int kFormPercent = 40;

// The newest comparison of `run` (see setOpenRun), read from its files; nothing when
// there is none or it cannot be read (a half-written comparison).
std::optional<CompareReport> newestComparisonOf(const QString& run) {
  // <run>/compare itself (the trainer's own --out, as the quick start writes it), folders in
  // it, and the folders the Compare page writes beside the runs (comparisons/<stamp>) that
  // name this run among their tokenizers.
  const QDir compare(QDir(run).filePath(QStringLiteral("compare")));
  const QDir beside(
      QDir(CompareSetupForm::folderOutsideRuns(run)).filePath(QStringLiteral("comparisons")));
  const QByteArray runPath = QDir::cleanPath(QFileInfo(run).absoluteFilePath()).toUtf8();
  QString newest;
  QDateTime newestTime;
  auto consider = [&](const QString& folder, bool mustNameRun) {
    const QFileInfo metrics(QDir(folder).filePath(QStringLiteral("metrics.json")));
    if (!metrics.isFile() || (!newest.isEmpty() && metrics.lastModified() <= newestTime)) return;
    if (mustNameRun) {
      QFile file(metrics.filePath());
      if (!file.open(QIODevice::ReadOnly) || !file.readAll().contains(runPath)) return;
    }
    newest = folder;
    newestTime = metrics.lastModified();
  };
  consider(compare.path(), false);
  for (const QString& name : compare.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
    consider(compare.filePath(name), false);
  }
  for (const QString& name : beside.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
    consider(beside.filePath(name), true);
  }
  if (newest.isEmpty()) return std::nullopt;
  return CompareReport::load(newest);
}

}  // namespace

ComparePage::ComparePage(QWidget* parent) : QWidget(parent) {
  auto* header = new PageHeader(
      tr("Compare"),
      tr("The same clips through several tokenizers: original and reconstructions side by side, "
         "PSNR and SSIM under each (LPIPS with its weight files), per clip."),
      this);

  m_form = new CompareSetupForm;
  m_form->setObjectName(QStringLiteral("compareSetup"));
  auto* formScroll = new QScrollArea(this);
  formScroll->setObjectName(QStringLiteral("compareSetupScroll"));
  formScroll->setWidget(m_form);
  formScroll->setWidgetResizable(true);
  formScroll->setFrameShape(QFrame::NoFrame);
  formScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  formScroll->setMinimumWidth(280);

  m_review = new CompareReview(this);
  m_review->setObjectName(QStringLiteral("compareReview"));
  m_empty = new EmptyState({}, {}, this);
  m_stack = new QStackedWidget(this);
  m_stack->addWidget(m_empty);
  m_stack->addWidget(m_review);

  auto* splitter = new QSplitter(Qt::Horizontal, this);
  m_splitter = splitter;
  splitter->setChildrenCollapsible(false);
  splitter->addWidget(formScroll);
  splitter->addWidget(m_stack);
  splitter->setStretchFactor(0, 0);
  splitter->setStretchFactor(1, 1);
  splitter->setSizes({kFormWidth, 1000});
  splitter->setHandleWidth(12);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(24, 20, 24, 20);
  layout->addWidget(header);
  layout->addWidget(splitter, 1);

  m_process = new CompareProcess(this);
  m_reads = new FileReadThread(QStringLiteral("compare-page-reads"), this);
  connect(m_form, &CompareSetupForm::openFolderRequested, this, &ComparePage::chooseCompareFolder);
  connect(m_form, &CompareSetupForm::compareRequested, this, &ComparePage::startCompare);
  connect(m_form, &CompareSetupForm::cancelRequested, m_process, &CompareProcess::cancel);
  connect(m_process, &CompareProcess::stderrLine, m_form, &CompareSetupForm::appendLog);
  connect(m_process, &CompareProcess::succeeded, this, [this](const QString& directory) {
    m_form->setRunning(false);
    m_failed = false;
    const bool opened = openCompareFolder(directory);
    if (opened) {
      m_form->setStatus(tr("Compared into %1").arg(QDir::toNativeSeparators(directory)));
    }
    updateEmptyState();
    Q_EMIT compareFinished(opened);
  });
  connect(m_process, &CompareProcess::failed, this, [this](const QString& message) {
    m_form->setRunning(false);
    m_form->setStatus(message, true);
    m_failed = true;
    updateEmptyState();
    Q_EMIT compareFinished(false);
  });
  updateEmptyState();
}

ComparePage::~ComparePage() = default;

void ComparePage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (m_formPlaced || m_splitter->width() <= 0) return;
  // Once, at the size the page is first shown at: in a small window the review keeps room for
  // the clips and the per-clip table's columns. Dragging the handle decides after that.
  m_formPlaced = true;
  const int width = m_splitter->width() - m_splitter->handleWidth();
  const int form = std::clamp(width * kFormPercent / 100, kFormMinWidth, kFormWidth);
  m_splitter->setSizes({form, width - form});
}

void ComparePage::setOpenRun(const QString& run) {
  const QString clean = run.isEmpty() ? QString() : QDir::cleanPath(run);
  if (clean == m_openRun) return;
  m_openRun = clean;
  const quint64 generation = ++m_reviewGeneration;
  m_form->setOpenRun(clean);
  // The review of the previous run goes (a comparison running stays: its result opens when it
  // is done); the empty state says what the new run has until its comparison is found.
  m_review->setReport(std::nullopt);
  m_stack->setCurrentWidget(m_empty);
  if (!m_process->isRunning()) {
    m_failed = false;
    m_form->setStatus({});
  }
  updateEmptyState();
  if (clean.isEmpty()) return;
  m_reads->read([clean] { return newestComparisonOf(clean); },
                [this, generation](const std::optional<CompareReport>& report) {
                  // Another run opened, or a review shown (by the user or a comparison), since.
                  if (report && generation == m_reviewGeneration) showReport(*report);
                });
}

void ComparePage::setTrainerPath(const QString& trainer) { m_form->setTrainerPath(trainer); }

bool ComparePage::openCompareFolder(const QString& directory) {
  QString error;
  std::optional<CompareReport> report = CompareReport::load(directory, &error);
  if (!report) {
    m_form->setStatus(error, true);
    return false;
  }
  showReport(*report);
  return true;
}

void ComparePage::showReport(const CompareReport& report) {
  ++m_reviewGeneration;
  m_review->setReport(report);
  m_stack->setCurrentWidget(m_review);
  m_form->setStatus(tr("Showing %1").arg(QDir::toNativeSeparators(report.directory())));
  Q_EMIT compareFolderOpened(report.directory());
}

bool ComparePage::waitForReads(int timeoutMs) { return m_reads->waitForReads(timeoutMs); }

bool ComparePage::startCompare() {
  if (m_process->isRunning()) {
    m_form->setStatus(tr("A comparison is already running."), true);
    return false;
  }
  QString problem;
  const std::optional<CompareRequest> request = m_form->request(&problem);
  if (!request) {
    m_form->setStatus(problem, true);
    return false;
  }
  const QString outDir = compareOutDir(*request);
  if (!QDir().mkpath(outDir)) {
    m_form->setStatus(tr("Cannot create %1").arg(QDir::toNativeSeparators(outDir)), true);
    return false;
  }
  m_form->clearLog();
  m_form->setRunning(true);
  m_form->setStatus(tr("Comparing %1 tokenizer(s) on %2 clip(s)\u2026")
                        .arg(request->command.entries.size())
                        .arg(request->command.clips));
  m_process->start(*request);
  m_failed = false;
  updateEmptyState();
  return true;
}

QString ComparePage::emptyHeadline() const { return m_empty->headline(); }

bool ComparePage::isShowingReview() const { return m_stack->currentWidget() == m_review; }

void ComparePage::chooseCompareFolder() {
  const QString start = m_openRun.isEmpty() ? QString()
                                            : QDir(CompareSetupForm::folderOutsideRuns(m_openRun))
                                                  .filePath(QStringLiteral("comparisons"));
  const QString directory =
      QFileDialog::getExistingDirectory(this, tr("Open Compare Folder"), start);
  if (!directory.isEmpty()) openCompareFolder(directory);
}

void ComparePage::updateEmptyState() {
  if (m_process->isRunning()) {
    m_empty->setText(tr("Comparing\u2026"),
                     tr("tokenbench-trainer compare is running; its messages appear on the "
                        "left, and the result opens here when it is done."));
  } else if (m_failed) {
    m_empty->setText(tr("The comparison failed"),
                     tr("The trainer's message is on the left, under the Compare button."));
  } else if (m_openRun.isEmpty()) {
    m_empty->setText(tr("Nothing to compare"),
                     tr("Open a compare folder, or add runs or checkpoint folders on the left and "
                        "press Compare."));
  } else {
    const QString name = QFileInfo(m_openRun).fileName();
    m_empty->setText(tr("No comparison of %1 yet").arg(name),
                     tr("Press Compare to run %1 and the other tokenizers listed on the left on "
                        "the same clips, or open a compare folder.")
                         .arg(name));
  }
}

}  // namespace tb::app
