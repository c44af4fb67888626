#pragma once

#include <QLabel>
#include <QString>

namespace tb::widgets {

/// A label that never widens its window: it shows its text cut to its width with an ellipsis
/// (where the elide mode says), and the whole text in its tooltip while cut. Its minimum width
/// is minimumTextWidth() (the ellipsis alone by default); its size hint is the whole text on
/// one line, so a layout with room to spare shows it uncut. With maximumLines() above one, a
/// text too long for one line wraps at word boundaries onto up to that many lines, the last one
/// elided; the label is always as tall as those lines, so a longer text never moves anything.
class ElidedLabel : public QLabel {
  Q_OBJECT

 public:
  explicit ElidedLabel(QWidget* parent = nullptr);
  explicit ElidedLabel(const QString& text, QWidget* parent = nullptr);

  /// The whole text (QLabel::text() is what is shown, perhaps cut).
  QString fullText() const { return m_fullText; }
  void setFullText(const QString& text);
  /// Whether the text shown is cut.
  bool isElided() const { return m_elided; }
  /// Lines the text may take before it is cut (1 by default; right elision only).
  void setMaximumLines(int lines);
  int maximumLines() const { return m_maxLines; }

  void setElideMode(Qt::TextElideMode mode);
  Qt::TextElideMode elideMode() const { return m_mode; }
  /// The narrowest the label may get, in pixels (default: room for the ellipsis).
  void setMinimumTextWidth(int pixels);
  /// A tooltip shown whatever the width ("" = the full text while it is cut, else none).
  void setFixedToolTip(const QString& toolTip);

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void resizeEvent(QResizeEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  void elide();
  QString wrapped(int width, bool* cut) const;

  QString m_fullText;
  QString m_fixedToolTip;
  Qt::TextElideMode m_mode = Qt::ElideRight;
  int m_minimumTextWidth = -1;
  int m_maxLines = 1;
  bool m_elided = false;
};

}  // namespace tb::widgets
