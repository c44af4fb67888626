#include "app/pages/compare_page.h"

#include "app/pages/empty_state.h"
#include "app/pages/page_header.h"

#include <QVBoxLayout>

namespace tb::app {

ComparePage::ComparePage(QWidget* parent) : QWidget(parent) {
  auto* header = new PageHeader(
      tr("Compare"), tr("Runs side by side: curves, PSNR, SSIM, LPIPS and codebook usage."), this);
  m_empty = new EmptyState({}, {}, this);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(24, 20, 24, 20);
  layout->addWidget(header);
  layout->addWidget(m_empty, 1);
  setOpenRunCount(0);
}

void ComparePage::setOpenRunCount(int count) {
  if (count < 2) {
    m_empty->setText(tr("Nothing to compare"),
                     tr("Open two or more run directories to compare them here."));
  } else {
    m_empty->setText(tr("%1 runs open").arg(count),
                     tr("Comparing runs is not available in this version."));
  }
}

QString ComparePage::emptyHeadline() const { return m_empty->headline(); }

}  // namespace tb::app
