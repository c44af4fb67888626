#include "core/control_message.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace tb::core {
namespace {

std::vector<std::string> goldenLines() {
  std::ifstream in(std::string(TB_TEST_DATA_DIR) + "/golden/control_v1.ndjson", std::ios::binary);
  EXPECT_TRUE(in.is_open());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// tests/golden/control_v1.ndjson holds one line per message, in this order; the front end's
// RunController test checks that the bytes it writes to the trainer's stdin are these lines.
const std::vector<ControlMessage> kGoldenMessages = {ControlMessage::Stop,
                                                     ControlMessage::Checkpoint};

TEST(ControlMessage, EncoderWritesTheGoldenLines) {
  const std::vector<std::string> golden = goldenLines();
  ASSERT_EQ(golden.size(), kGoldenMessages.size());
  for (std::size_t i = 0; i < golden.size(); ++i) {
    EXPECT_EQ(encodeControlMessage(kGoldenMessages[i]), golden[i]);
  }
}

TEST(ControlMessage, DecoderReadsTheGoldenLines) {
  const std::vector<std::string> golden = goldenLines();
  ASSERT_EQ(golden.size(), kGoldenMessages.size());
  for (std::size_t i = 0; i < golden.size(); ++i) {
    std::string error;
    EXPECT_EQ(decodeControlLine(golden[i], &error), kGoldenMessages[i]) << error;
    EXPECT_EQ(decodeControlLine(golden[i] + "\r"), kGoldenMessages[i]);
  }
}

TEST(ControlMessage, UnversionedLinesOfOlderFrontEndsStillWork) {
  EXPECT_EQ(decodeControlLine(R"({"type":"stop"})"), ControlMessage::Stop);
  EXPECT_EQ(decodeControlLine(R"({"type":"checkpoint","note":"extra fields are ignored"})"),
            ControlMessage::Checkpoint);
}

TEST(ControlMessage, RefusesWhatItDoesNotKnowAndSaysWhy) {
  struct Case {
    const char* line;
    const char* reason;
  };
  for (const Case& c :
       {Case{R"({"v":2,"type":"stop"})", "version 2"},
        Case{R"({"v":"1","type":"stop"})", "version \"1\""},
        Case{R"({"v":1,"type":"pause"})", "unknown control message type \"pause\""},
        Case{R"({"v":1})", "no string \"type\""}, Case{R"(["stop"])", "not a JSON object"},
        Case{"stop", "not a JSON object"}, Case{"", "not a JSON object"}}) {
    std::string error;
    EXPECT_FALSE(decodeControlLine(c.line, &error).has_value()) << c.line;
    EXPECT_NE(error.find(c.reason), std::string::npos) << c.line << " -> " << error;
  }
  EXPECT_FALSE(decodeControlLine(std::string(100, '[')).has_value());
}

}  // namespace
}  // namespace tb::core
