#include "core/config_reference.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace tb::core {
namespace {

const std::string kReferencePath = TB_TEST_DATA_DIR "/../docs/configuration.md";

FieldInfo fieldAt(const std::string& path) {
  for (auto& f : configSchema()) {
    if (f.path == path) return f;
  }
  ADD_FAILURE() << "no key " << path;
  return FieldInfo{path, FieldType::Bool, nullptr, FieldSpec("")};
}

std::size_t countOccurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The checked-in document is exactly what the schema generates. When a key, default, range or
// description changes, regenerate the document in the same commit.
TEST(ConfigReference, CheckedInDocumentMatchesTheSchema) {
  const std::string expected = configReferenceMarkdown();
  std::ifstream in(kReferencePath, std::ios::binary);
  const std::string actual((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in && actual == expected) return;

  // Leave the expected text beside the test for builds without the trainer, and name the first
  // line that differs.
  std::ofstream("configuration.md.expected", std::ios::binary) << expected;
  std::istringstream a(actual), e(expected);
  std::string line_a, line_e;
  int line = 0;
  while (true) {
    ++line;
    const bool more_a = static_cast<bool>(std::getline(a, line_a));
    const bool more_e = static_cast<bool>(std::getline(e, line_e));
    if (!more_a && !more_e) break;
    if (!more_a || !more_e || line_a != line_e) break;
  }
  EXPECT_TRUE(in) << "cannot read " << kReferencePath;
  FAIL() << "docs/configuration.md differs from the schema at line " << line
         << ":\n  file:   " << line_a << "\n  schema: " << line_e
         << "\nrun `tokenbench-trainer config-reference > docs/configuration.md` "
            "(or copy configuration.md.expected from the test's build folder)";
}

TEST(ConfigReference, EveryKeyHasExactlyOneRow) {
  const std::string text = configReferenceMarkdown();
  const auto schema = configSchema();
  ASSERT_GT(schema.size(), 100u);
  for (const auto& f : schema) {
    EXPECT_EQ(countOccurrences(text, "\n| `" + f.path + "` | "), 1u) << f.path;
  }
  EXPECT_NE(text.find("This reference has " + std::to_string(schema.size()) + " keys."),
            std::string::npos);
}

TEST(ConfigReference, EverySectionHasAHeadingInSchemaOrder) {
  const std::string text = configReferenceMarkdown();
  std::size_t previous = text.find("## Top level\n");
  ASSERT_NE(previous, std::string::npos);
  for (const auto& section : configSections()) {
    const auto at = text.find("\n## `" + section + "`\n");
    ASSERT_NE(at, std::string::npos) << section;
    EXPECT_GT(at, previous) << section;
    previous = at;
  }
  EXPECT_NE(text.find("| `magvit2-readme` | "), std::string::npos);
}

TEST(ConfigReference, EveryTableRowHasSixCells) {
  std::istringstream lines(configReferenceMarkdown());
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("| `", 0) != 0 || line.find("` | ") == std::string::npos) continue;
    if (countOccurrences(line, " | ") == 1) continue;  // the presets table has two cells
    std::size_t pipes = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++pipes;
    }
    EXPECT_EQ(pipes, 7u) << line;
    ++rows;
  }
  EXPECT_EQ(rows, static_cast<int>(configSchema().size()));
}

TEST(ConfigReference, RangesReadAsWritten) {
  EXPECT_EQ(describeRange(fieldAt("data.image_size")), "8 to 4096");
  EXPECT_EQ(describeRange(fieldAt("train.lr")), "> 0, <= 1");
  EXPECT_EQ(describeRange(fieldAt("train.grad_clip")), "0 to 1000000");
  EXPECT_EQ(describeRange(fieldAt("model.quantizer.vq_beta")), "0 to 10000");
  EXPECT_EQ(describeRange(fieldAt("loss.adaptive_weight_max")), "> 0, <= 1000000");
  EXPECT_EQ(describeRange(fieldAt("data.type")), "`synthetic`, `videos`, `images`, `shards`");
  EXPECT_EQ(describeRange(fieldAt("model.input_conv_kernel")), "each 1 to 15; length 3");
  EXPECT_EQ(describeRange(fieldAt("model.quantizer.codebook_size")), "2 to 16777216");
  EXPECT_EQ(describeRange(fieldAt("train.adam_beta2")), "0 to 0.999999");
  EXPECT_EQ(describeRange(fieldAt("data.path")), "");
}

TEST(ConfigReference, DefaultsAreCompactJson) {
  EXPECT_EQ(describeDefault(fieldAt("model.input_conv_kernel")), "[7, 7, 7]");
  EXPECT_EQ(describeDefault(fieldAt("data.type")), "\"synthetic\"");
  EXPECT_EQ(describeDefault(fieldAt("train.lr")), "0.0001");
  EXPECT_EQ(describeDefault(fieldAt("data.hflip")), "true");
  EXPECT_EQ(describeDefault(fieldAt("train.checkpoint_keep")), "[]");
  EXPECT_EQ(describeDefault(fieldAt("model.layers")),
            "[\"residual\", \"compress_space\", [\"consecutive_residual\", 1], \"compress_time\", "
            "\"residual\"]");
}

}  // namespace
}  // namespace tb::core
