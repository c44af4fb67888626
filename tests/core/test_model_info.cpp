#include "core/model_info.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace tb::core {
namespace {

// What the real trainer printed for the default configuration (model-info, compacted).
std::string goldenDocument() {
  std::ifstream in(std::string(TB_TEST_DATA_DIR) + "/golden/model_info_v1.json", std::ios::binary);
  std::string line;
  std::getline(in, line);
  return line;
}

TEST(ModelInfo, ReadsTheGoldenDocumentAndWritesItBackByteForByte) {
  const std::string golden = goldenDocument();
  ASSERT_FALSE(golden.empty());
  std::string error;
  const std::optional<ModelInfo> info = parseModelInfo(golden, &error);
  ASSERT_TRUE(info) << error;
  EXPECT_EQ(info->kind, "magvit2");
  EXPECT_EQ(info->tokenizer_params, 1355795);
  EXPECT_EQ(info->encoder_params + info->decoder_params + info->quantizer_params,
            info->tokenizer_params);
  EXPECT_EQ(info->discriminator_params, 14125909);
  EXPECT_EQ(info->input_shape, (std::vector<std::int64_t>{3, 5, 32, 32}));
  EXPECT_EQ(info->token_grid, (std::vector<std::int64_t>{3, 16, 16}));
  EXPECT_EQ(info->tokens_per_clip, 768);
  EXPECT_DOUBLE_EQ(info->bits_per_token, 8.0);
  EXPECT_DOUBLE_EQ(info->compression_ratio, 16.0);
  EXPECT_DOUBLE_EQ(info->forward_flops_per_clip, 3406823424.0);
  EXPECT_EQ(info->batch_size, 4);
  EXPECT_EQ(info->peak_training_memory_bytes, 308803200);
  EXPECT_EQ(toJson(*info).dump(), golden);
}

TEST(ModelInfo, DocumentsWithoutAVersionStillReadOthersAreRefusedNamingTheField) {
  std::string unversioned = goldenDocument();
  unversioned.replace(unversioned.find("\"version\":1,"), 12, "");
  EXPECT_TRUE(parseModelInfo(unversioned));

  struct Case {
    std::string from, to, reason;
  };
  for (const Case& c : {Case{"\"version\":1", "\"version\":2", "version 2"},
                        Case{"\"token_grid\"", "\"grid\"", "missing \"token_grid\""},
                        Case{"\"batch_size\":4", "\"batch_size\":\"4\"", "\"batch_size\" is not"},
                        Case{"[3,16,16]", "[3,16.5,16]", "\"token_grid\" holds a non-integer"},
                        Case{"{\"tokenizer\"", "{\"tok\"", "missing \"tokenizer\""}}) {
    std::string text = goldenDocument();
    text.replace(text.find(c.from), c.from.size(), c.to);
    std::string error;
    EXPECT_FALSE(parseModelInfo(text, &error)) << text;
    EXPECT_NE(error.find(c.reason), std::string::npos) << error;
  }
  std::string error;
  EXPECT_FALSE(parseModelInfo("tokenizer: 12", &error));
  EXPECT_NE(error.find("model-info: "), std::string::npos);
  EXPECT_FALSE(parseModelInfo("[1,2]"));
}

}  // namespace
}  // namespace tb::core
