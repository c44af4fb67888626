#pragma once
// MediaError: every failure of the media layer, with the file it concerns and the reason.

#include <stdexcept>
#include <string>

namespace tb::trainer::media {

/// Thrown by the decoder, encoder, image reader and writers. what() is "<path>: <reason>",
/// e.g. "clips/a.mp4: truncated: got 7 of 16 frames".
class MediaError : public std::runtime_error {
 public:
  MediaError(std::string path, std::string reason)
      : std::runtime_error(path + ": " + reason),
        m_path(std::move(path)),
        m_reason(std::move(reason)) {}

  const std::string& path() const noexcept { return m_path; }
  const std::string& reason() const noexcept { return m_reason; }

 private:
  std::string m_path;
  std::string m_reason;
};

}  // namespace tb::trainer::media
