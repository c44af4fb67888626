// libFuzzer target for the event protocol reader: the front end runs it on whatever a child
// process prints, so no input may crash it, and whatever it accepts must survive a round trip.
#include "core/event_protocol.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

using tb::core::DecodeResult;
using tb::core::EventLineSplitter;

void checkRoundTrip(const DecodeResult& first) {
  if (!first.ok()) {
    if (first.error()->message.empty()) std::abort();
    return;
  }
  const std::string encoded = tb::core::encodeEvent(*first.event());
  // Re-encoding may lengthen a line (1e5 -> 100000.0); past the limit it is rightly rejected.
  if (encoded.size() > tb::core::kMaxEventLineBytes) return;
  if (encoded.find('\n') != std::string::npos) std::abort();  // must stay one line
  const DecodeResult second = tb::core::decodeEventLine(encoded);
  if (!second.ok()) std::abort();
  if (second.event()->index() != first.event()->index()) std::abort();
  // After one trip the encoding is a fixed point.
  if (tb::core::encodeEvent(*second.event()) != encoded) std::abort();
}

std::vector<EventLineSplitter::Line> splitAll(std::string_view input, std::size_t cut) {
  EventLineSplitter splitter;
  std::vector<EventLineSplitter::Line> lines = splitter.feed(input.substr(0, cut));
  for (auto& line : splitter.feed(input.substr(cut))) lines.push_back(std::move(line));
  if (auto last = splitter.flush()) lines.push_back(std::move(*last));
  if (splitter.bufferedBytes() != 0) std::abort();
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  checkRoundTrip(tb::core::decodeEventLine(input));

  // The cut point comes from the input so the fuzzer explores it too.
  const std::size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  const std::vector<EventLineSplitter::Line> pieces = splitAll(input, cut);
  const std::vector<EventLineSplitter::Line> whole = splitAll(input, size);
  if (pieces.size() != whole.size()) std::abort();
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].text != whole[i].text || pieces[i].oversized != whole[i].oversized) std::abort();
    checkRoundTrip(tb::core::decodeEventLine(pieces[i]));
  }
  return 0;
}
