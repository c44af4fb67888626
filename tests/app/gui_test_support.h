#pragma once
// Helpers the window's tests share: files and stand-in trainer scripts on disk, and answering
// the modal dialogs a test's clicks open.

#include "app/control/trainer_location.h"

#include <QAbstractButton>
#include <QApplication>
#include <QDialog>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QString>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QWidget>

#include <functional>

namespace tb::app::testing {

/// Writes (or with `append` appends) `bytes` to `path`, making its folder; false on failure.
inline bool writeFile(const QString& path, const QByteArray& bytes, bool append = false) {
  QDir().mkpath(QFileInfo(path).path());
  QFile file(path);
  return file.open(append ? QIODevice::Append : QIODevice::WriteOnly) &&
         file.write(bytes) == bytes.size();
}

/// An executable shell script `name` in `dir` standing in for tokenbench-trainer; "" on failure.
inline QString writeScript(const QTemporaryDir& dir, const QString& name, const QByteArray& body) {
  const QString path = dir.filePath(name);
  if (!writeFile(path, "#!/bin/sh\n" + body)) return {};
  QFile::setPermissions(path,
                        QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
  return path;
}

/// The trainer at `path`, as --trainer names it.
inline TrainerLocation trainerAt(const QString& path) {
  TrainerLocation location;
  location.path = path;
  location.origin = QStringLiteral("--trainer");
  return location;
}

/// Runs `act` on the next modal dialog as soon as it opens (QFileDialog, QMessageBox...).
inline void onNextDialog(std::function<void(QWidget*)> act) {
  auto* poll = new QTimer;
  poll->setInterval(20);
  QObject::connect(poll, &QTimer::timeout, [poll, act = std::move(act)] {
    if (QWidget* dialog = QApplication::activeModalWidget()) {
      poll->stop();
      poll->deleteLater();
      act(dialog);
    }
  });
  poll->start();
}

/// Clicks the button called `text`; a dialog without one is closed (so that a test that meets
/// the wrong dialog fails instead of waiting for ever).
inline void clickButton(QWidget* box, const QString& text) {
  for (QAbstractButton* button : box->findChildren<QAbstractButton*>()) {
    if (button->text() == text) {
      button->click();
      return;
    }
  }
  if (auto* dialog = qobject_cast<QDialog*>(box)) dialog->reject();
  QFAIL(qPrintable(QStringLiteral("no button \"%1\"").arg(text)));
}

}  // namespace tb::app::testing
