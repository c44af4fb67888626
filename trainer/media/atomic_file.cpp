#include "trainer/media/atomic_file.h"

#include "trainer/media/media_error.h"

#include <atomic>
#include <fstream>
#include <system_error>

#include <unistd.h>

namespace tb::trainer::media {

namespace {
std::atomic<unsigned> g_counter{0};
}

AtomicFile::AtomicFile(std::filesystem::path target) : m_target(std::move(target)) {
  std::filesystem::path dir = m_target.parent_path();
  std::string name = "." + m_target.filename().string() + ".tmp-" + std::to_string(::getpid()) +
                     "-" + std::to_string(g_counter.fetch_add(1));
  m_temp = dir.empty() ? std::filesystem::path(name) : dir / name;
}

AtomicFile::~AtomicFile() {
  if (!m_committed) {
    std::error_code ec;
    std::filesystem::remove(m_temp, ec);
  }
}

void AtomicFile::commit() {
  std::error_code ec;
  std::filesystem::rename(m_temp, m_target, ec);
  if (ec)
    throw MediaError(m_target.string(), "cannot rename temporary file into place: " + ec.message());
  m_committed = true;
}

void writeFileAtomically(const std::filesystem::path& target, const std::string& bytes) {
  AtomicFile file(target);
  {
    std::ofstream out(file.tempPath(), std::ios::binary | std::ios::trunc);
    out << bytes;
    if (!out.flush()) throw MediaError(target.string(), "cannot write (disk full or not writable?)");
  }
  file.commit();
}

}  // namespace tb::trainer::media
