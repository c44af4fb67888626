#include "app/gui/pages/empty_state.h"

#include <QLabel>
#include <QPalette>
#include <QVBoxLayout>

namespace tb::app {

EmptyState::EmptyState(const QString& headline, const QString& hint, QWidget* parent)
    : QWidget(parent) {
  m_headline = new QLabel(this);
  m_headline->setObjectName(QStringLiteral("emptyHeadline"));
  m_headline->setAlignment(Qt::AlignCenter);
  m_headline->setWordWrap(true);  // a run's name in it must not widen the window
  QFont headlineFont = m_headline->font();
  headlineFont.setPointSizeF(headlineFont.pointSizeF() * 1.4);
  m_headline->setFont(headlineFont);
  m_headline->setForegroundRole(QPalette::PlaceholderText);

  m_hint = new QLabel(this);
  m_hint->setObjectName(QStringLiteral("emptyHint"));
  m_hint->setAlignment(Qt::AlignCenter);
  m_hint->setWordWrap(true);
  m_hint->setForegroundRole(QPalette::PlaceholderText);

  auto* layout = new QVBoxLayout(this);
  layout->addStretch(1);
  layout->setSpacing(8);
  layout->addWidget(m_headline);
  layout->addWidget(m_hint);
  layout->addStretch(2);  // a little above centre reads as centred
  setText(headline, hint);
}

void EmptyState::setText(const QString& headline, const QString& hint) {
  m_headline->setText(headline);
  m_hint->setText(hint);
}

QString EmptyState::headline() const { return m_headline->text(); }

QString EmptyState::hint() const { return m_hint->text(); }

}  // namespace tb::app
