// libFuzzer target for the safetensors reader: any input either fails with SafetensorsError or
// parses into tensors whose bytes are readable and which the writer turns into a file that
// parses back to the same tensors and metadata.

#include "core/safetensors.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "fuzz_safetensors: %s %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tb::core;
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  SafetensorsView view;
  try {
    view = SafetensorsView::parse(input);
  } catch (const SafetensorsError&) {
    return 0;  // rejected cleanly; anything else escaping is a bug and crashes the fuzzer
  }

  // Touch every byte the view hands out, so AddressSanitizer checks the bounds.
  std::uint64_t sum = 0;
  std::uint64_t covered = 0;
  SafetensorsWriter writer;
  try {
    for (const TensorInfo& tensor : view.tensors()) {
      const std::string_view bytes = view.data(tensor);
      for (const char byte : bytes) sum += static_cast<unsigned char>(byte);
      covered += bytes.size();
      writer.add(tensor.name, tensor.dtype, tensor.shape, bytes.data(), bytes.size());
    }
    for (const auto& [key, value] : view.metadata()) writer.setMetadata(key, value);
  } catch (const SafetensorsError& e) {
    fail("writer refused what the reader accepted:", e.what());
  }
  if (covered != view.dataBuffer().size()) fail("tensors do not cover the data buffer");

  std::string again;
  SafetensorsView reparsed;
  try {
    again = writer.serialize();
    reparsed = SafetensorsView::parse(again);
  } catch (const SafetensorsError& e) {
    fail("re-serialized file rejected:", e.what());
  }
  if (reparsed.tensors().size() != view.tensors().size()) fail("tensor count changed");
  if (reparsed.metadata() != view.metadata()) fail("metadata changed");
  std::uint64_t sumAgain = 0;
  for (const TensorInfo& tensor : view.tensors()) {
    const TensorInfo* copy = reparsed.find(tensor.name);
    if (copy == nullptr) fail("tensor lost:", tensor.name);
    if (copy->dtype != tensor.dtype || copy->shape != tensor.shape)
      fail("tensor changed:", tensor.name);
    const std::string_view bytes = reparsed.data(*copy);
    if (bytes != view.data(tensor)) fail("tensor bytes changed:", tensor.name);
    for (const char byte : bytes) sumAgain += static_cast<unsigned char>(byte);
    if (copy->begin % dtypeSize(copy->dtype) != 0) fail("tensor misaligned:", tensor.name);
  }
  if (sumAgain != sum) fail("byte sum changed");
  if (writer.serialize() != again) fail("serialize() is not deterministic");
  return 0;
}
