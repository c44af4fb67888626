#pragma once

#include <QByteArray>
#include <QHash>
#include <QString>
#include <QWidget>

class QFormLayout;
class QGroupBox;
class QLabel;
class QTableWidget;
class QVBoxLayout;

namespace tb::app {

/// What `tokenbench-trainer data-info` found in a configuration's dataset: file and clip counts
/// per split, frames per file, a table of resolutions, the files it skipped and why, and preview
/// strips (a few clips' frames left to right, as PNG files the trainer wrote).
class DataInfoView : public QWidget {
  Q_OBJECT

 public:
  enum class State { Empty, Computing, Ready, Failed };

  explicit DataInfoView(QWidget* parent = nullptr);

  void setUnavailable(const QString& reason);
  void setComputing();
  /// Shows data-info's JSON; false (and a failure shown) when it is not the expected object.
  bool setResult(const QByteArray& json);
  void setError(const QString& message);

  State state() const { return m_state; }
  QString statusText() const;
  /// Why the data shown cannot train a run (no file found, or every file skipped); "" when it
  /// can, or nothing was shown yet.
  QString problem() const { return m_problem; }
  /// What the data allows but a run would miss: no validation clip (validation, samples and
  /// rFID/rFVD would be off). Empty when there is nothing to say.
  QString validationWarning() const { return m_validationWarning; }
  /// What the last scan found, for a summary ("12 files, 11 training clips"); "" unless a scan's
  /// result is shown.
  QString checkedText() const { return m_state == State::Ready ? m_checked : QString(); }
  /// Shown value of "type", "path", "files", "clips" or "frames".
  QString valueText(const QString& key) const;
  /// Rows of the resolutions table ("640 \u00d7 360", files) and the skipped table (path, reason).
  int resolutionRowCount() const;
  int skippedRowCount() const;
  QString skippedReason(int row) const;
  /// Preview strips shown (images that loaded).
  int previewCount() const;

 private:
  void addRow(const QString& key, const QString& label);
  void clearPreviews();
  void setResultsVisible(bool visible, bool dimmed);

  State m_state = State::Empty;
  QString m_problem;
  QString m_validationWarning;
  QString m_checked;
  QLabel* m_status = nullptr;
  QWidget* m_results = nullptr;
  QFormLayout* m_form = nullptr;
  QHash<QString, QLabel*> m_values;
  QTableWidget* m_resolutions = nullptr;
  QGroupBox* m_skippedGroup = nullptr;
  QTableWidget* m_skipped = nullptr;
  QGroupBox* m_previewGroup = nullptr;
  QVBoxLayout* m_previewLayout = nullptr;
  QLabel* m_previewEmpty = nullptr;
  int m_previewCount = 0;
};

}  // namespace tb::app
