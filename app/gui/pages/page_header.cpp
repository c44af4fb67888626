#include "app/gui/pages/page_header.h"

#include <QEvent>
#include <QLabel>
#include <QPalette>
#include <QVBoxLayout>

namespace tb::app {

PageHeader::PageHeader(const QString& title, const QString& description, QWidget* parent)
    : QWidget(parent) {
  m_title = new QLabel(title, this);
  m_title->setObjectName(QStringLiteral("pageTitle"));
  QFont titleFont = m_title->font();
  titleFont.setPointSizeF(titleFont.pointSizeF() * 1.6);
  titleFont.setBold(true);
  m_title->setFont(titleFont);

  m_description = new QLabel(description, this);
  m_description->setObjectName(QStringLiteral("pageDescription"));
  m_description->setWordWrap(true);
  m_description->setForegroundRole(QPalette::PlaceholderText);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 8);
  layout->setSpacing(4);
  layout->addWidget(m_title);
  layout->addWidget(m_description);
  if (parent != nullptr) parent->installEventFilter(this);
}

bool PageHeader::eventFilter(QObject* watched, QEvent* event) {
  if (watched == parentWidget() && event->type() == QEvent::Resize) {
    const bool compact = parentWidget()->height() < kCompactPageHeight;
    if (isHidden() != compact) setHidden(compact);
  }
  return QWidget::eventFilter(watched, event);
}

QString PageHeader::title() const { return m_title->text(); }

QString PageHeader::description() const { return m_description->text(); }

}  // namespace tb::app
