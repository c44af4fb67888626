#include "app/gui/user_guide_dialog.h"

#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScreen>
#include <QStyle>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTextDocument>
#include <QUrl>
#include <QVBoxLayout>

namespace tb::app {
namespace {

constexpr int kWidth = 880;
constexpr int kHeight = 560;  // fits a 1024x640 screen with a title bar and a panel

// Reads the documents' Markdown as Markdown wherever a link leads (the desktop's MIME database
// may not know .md), and takes links relative to the document shown, as a click does.
class GuideBrowser : public QTextBrowser {
 public:
  using QTextBrowser::QTextBrowser;

 protected:
  void doSetSource(const QUrl& url, QTextDocument::ResourceType type) override {
    const QUrl resolved = url.isRelative() && source().isValid() ? source().resolved(url) : url;
    if (resolved.isLocalFile() && resolved.path().endsWith(QLatin1String(".md")))
      type = QTextDocument::MarkdownResource;
    QTextBrowser::doSetSource(resolved, type);
  }
};

// Gives the headings of the document shown the anchors GitHub gives them, so that links such
// as "#the-run-directory" and "other.md#a-heading" land on their heading.
void addHeadingAnchors(QTextDocument* document) {
  for (QTextBlock block = document->begin(); block.isValid(); block = block.next()) {
    if (block.blockFormat().headingLevel() == 0) continue;
    QTextCursor cursor(block);
    cursor.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
    QTextCharFormat anchor;
    anchor.setAnchor(true);
    anchor.setAnchorNames({UserGuideDialog::headingAnchor(block.text())});
    cursor.mergeCharFormat(anchor);
  }
}

}  // namespace

UserGuideDialog::UserGuideDialog(const QString& path, QWidget* parent) : QDialog(parent) {
  setObjectName(QStringLiteral("userGuideDialog"));
  setWindowTitle(tr("Tokenbench User Guide"));
  m_browser = new GuideBrowser(this);
  m_browser->setObjectName(QStringLiteral("userGuideBrowser"));
  m_browser->setOpenExternalLinks(true);  // web links: the desktop's browser
  m_browser->setOpenLinks(true);          // links between the documents: here
  // Every document shown (a link, Back, Forward) gets its anchors, then goes to its heading.
  connect(m_browser, &QTextBrowser::sourceChanged, this, [this](const QUrl& url) {
    addHeadingAnchors(m_browser->document());
    if (url.hasFragment()) m_browser->scrollToAnchor(url.fragment());
  });

  m_back = new QPushButton(style()->standardIcon(QStyle::SP_ArrowBack), tr("Back"), this);
  m_back->setEnabled(false);
  m_forward = new QPushButton(style()->standardIcon(QStyle::SP_ArrowForward), tr("Forward"), this);
  m_forward->setEnabled(false);
  auto* home = new QPushButton(tr("Contents"), this);
  m_external = new QPushButton(tr("Open in Browser"), this);
  m_external->setObjectName(QStringLiteral("openGuideExternally"));
  m_external->setToolTip(tr("Open the document shown with the desktop's program for it"));
  connect(m_browser, &QTextBrowser::backwardAvailable, m_back, &QWidget::setEnabled);
  connect(m_browser, &QTextBrowser::forwardAvailable, m_forward, &QWidget::setEnabled);
  connect(m_back, &QPushButton::clicked, m_browser, &QTextBrowser::backward);
  connect(m_forward, &QPushButton::clicked, m_browser, &QTextBrowser::forward);
  connect(home, &QPushButton::clicked, m_browser, &QTextBrowser::home);
  connect(m_external, &QPushButton::clicked, this, &UserGuideDialog::openInBrowser);
  m_note = new QLabel(this);
  m_note->setForegroundRole(QPalette::PlaceholderText);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);
  auto* navigation = new QHBoxLayout;
  navigation->addWidget(m_back);
  navigation->addWidget(m_forward);
  navigation->addWidget(home);
  navigation->addStretch(1);
  navigation->addWidget(m_note);
  auto* bottom = new QHBoxLayout;
  bottom->addWidget(m_external);
  bottom->addStretch(1);
  bottom->addWidget(buttons);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(navigation);
  layout->addWidget(m_browser, 1);
  layout->addLayout(bottom);

  if (path.isEmpty()) {
    m_browser->setPlainText(
        tr("The user guide (docs/user-guide.md) is not installed here. It is "
           "part of Tokenbench's sources and of its packages "
           "(share/doc/tokenbench)."));
    m_external->setEnabled(false);
    home->setEnabled(false);
  } else {
    m_browser->setSearchPaths({QFileInfo(path).absolutePath()});
    m_browser->setSource(QUrl::fromLocalFile(QFileInfo(path).absoluteFilePath()),
                         QTextDocument::MarkdownResource);
  }

  // Fits a 1024x640 screen (less a title bar).
  QSize size(kWidth, kHeight);
  if (const QScreen* screen =
          parent != nullptr ? parent->screen() : QGuiApplication::primaryScreen())
    size = size.boundedTo(screen->availableSize() - QSize(40, 60));
  resize(size);
}

QString UserGuideDialog::currentPath() const { return m_browser->source().toLocalFile(); }

QString UserGuideDialog::headingAnchor(const QString& heading) {
  QString anchor;
  for (const QChar c : heading.trimmed().toLower()) {
    if (c.isLetterOrNumber() || c == QLatin1Char('-') || c == QLatin1Char('_')) {
      anchor += c;
    } else if (c == QLatin1Char(' ')) {
      anchor += QLatin1Char('-');
    }
  }
  return anchor;
}

void UserGuideDialog::openInBrowser() {
  const QString path = currentPath();
  if (!QDesktopServices::openUrl(QUrl::fromLocalFile(path))) {
    m_note->setText(tr("No program to open %1 was found.").arg(QDir::toNativeSeparators(path)));
  }
}

}  // namespace tb::app
