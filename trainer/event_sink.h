#pragma once
// Where rank 0 writes protocol events: one NDJSON line per event (core/event_protocol.h).

#include "core/event_protocol.h"

#include <mutex>
#include <string>

namespace tb::trainer {

/// Appends whole NDJSON lines to `fd` (opened with O_APPEND) or nothing: a write cut short (a
/// full disk) is truncated away again, so the file never ends inside a line. Returns false when
/// the lines were not written.
bool appendWholeLines(int fd, const std::string& lines);

/// Cuts an unterminated last line off the file open as `fd` (its writer was killed mid-line, or
/// wrote on a full disk), so the next line appended starts on a line of its own.
void dropUnterminatedLine(int fd);

class EventSink {
 public:
  /// Events go to file descriptor `fd`; a disabled sink (ranks other than 0) drops them.
  explicit EventSink(int fd, bool enabled = true);

  /// Takes stdout for events: the events keep a private duplicate of file descriptor 1, and
  /// descriptor 1 itself is pointed at stderr, so anything a library prints on stdout ends up
  /// in the human log instead of corrupting the event stream.
  static EventSink claimStdout(bool enabled = true);

  /// Writes the event and its '\n' in one write, from any thread. Returns false when the
  /// stream is gone (the reader closed the pipe); the trainer keeps going on its files.
  bool emit(const core::Event& event);

  bool enabled() const { return m_enabled; }

  /// Also appends every event to `file` (the run's events.jsonl), so a window that opens the run
  /// later sees the warnings, errors and endings the stream carried; the events emitted before
  /// (hello, start-up warnings) are written first. A line left unterminated at the end of the
  /// file is dropped first. Returns false (and keeps streaming) when the file cannot be opened.
  bool alsoAppendTo(const std::string& file);

  EventSink(EventSink&& other) noexcept;
  EventSink& operator=(EventSink&&) = delete;
  ~EventSink();

 private:
  int m_fd;
  int m_file_fd = -1;
  std::string m_before_file;  ///< events emitted while no file was attached
  bool m_enabled;
  std::mutex m_mutex;
};

}  // namespace tb::trainer
