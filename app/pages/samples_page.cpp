#include "app/pages/samples_page.h"

#include "app/pages/empty_state.h"
#include "app/pages/page_header.h"

#include <QDir>
#include <QFileInfo>
#include <QVBoxLayout>

namespace tb::app {

SamplesPage::SamplesPage(QWidget* parent) : QWidget(parent) {
  auto* header = new PageHeader(
      tr("Samples"), tr("Reconstructions next to their inputs, at every step a run wrote them."),
      this);
  m_empty = new EmptyState({}, {}, this);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(24, 20, 24, 20);
  layout->addWidget(header);
  layout->addWidget(m_empty, 1);
  setRunDirectory({});
}

void SamplesPage::setRunDirectory(const QString& path) {
  if (path.isEmpty()) {
    m_empty->setText(tr("No run open"),
                     tr("Open a run directory to see the GIF and PNG samples it wrote."));
  } else {
    m_empty->setText(tr("No samples shown for %1").arg(QFileInfo(path).fileName()),
                     tr("Reading the samples of %1 is not available in this version.")
                         .arg(QDir::toNativeSeparators(path)));
  }
}

QString SamplesPage::emptyHeadline() const { return m_empty->headline(); }

}  // namespace tb::app
