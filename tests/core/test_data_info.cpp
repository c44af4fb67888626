#include "core/data_info.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace tb::core {
namespace {

// A shards run with a separate validation folder, a skipped file and a preview, in the
// trainer's format (every optional part present).
std::string goldenDocument() {
  std::ifstream in(std::string(TB_TEST_DATA_DIR) + "/golden/data_info_v1.json", std::ios::binary);
  std::string line;
  std::getline(in, line);
  return line;
}

TEST(DataInfo, ReadsTheGoldenDocumentAndWritesItBackByteForByte) {
  const std::string golden = goldenDocument();
  ASSERT_FALSE(golden.empty());
  std::string error;
  const std::optional<DataInfo> info = parseDataInfo(golden, &error);
  ASSERT_TRUE(info) << error;
  EXPECT_EQ(info->type, "shards");
  EXPECT_EQ(info->valid_path, "/data/valid");
  EXPECT_EQ(info->files, 12);
  EXPECT_EQ(info->train_clips, 340);
  EXPECT_EQ(info->min_frames, 48);
  EXPECT_EQ(info->max_frames, 300);
  EXPECT_EQ(info->total_frames, 1620);
  ASSERT_EQ(info->resolutions.size(), 2u);
  EXPECT_EQ(info->resolutions[1].width, 1280);
  EXPECT_EQ(info->resolutions[1].files, 3);
  ASSERT_EQ(info->skipped.size(), 1u);
  EXPECT_EQ(info->skipped[0].reason, "no video stream");
  ASSERT_TRUE(info->shards);
  EXPECT_EQ(info->shards->clips, 340);
  EXPECT_EQ(info->shards->bytes, 92274688);
  ASSERT_TRUE(info->valid_shards);
  EXPECT_EQ(info->valid_shards->count, 1);
  ASSERT_EQ(info->preview.size(), 1u);
  EXPECT_EQ(info->preview[0].png, "/tmp/preview/preview_0.png");
  EXPECT_EQ(toJson(*info).dump(), golden);
}

TEST(DataInfo, OptionalPartsAreLeftOutAndOlderDocumentsRead) {
  DataInfo synthetic;
  synthetic.type = "synthetic";
  synthetic.files = 512;
  synthetic.resolutions = {{32, 32, 512}};
  const std::string text = toJson(synthetic).dump();
  EXPECT_EQ(text.find("valid_path"), std::string::npos);
  EXPECT_EQ(text.find("shards"), std::string::npos);
  const std::optional<DataInfo> back = parseDataInfo(text);
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->shards);
  EXPECT_EQ(toJson(*back).dump(), text);
  // What trainers before the version printed (the fake trainer's answer).
  EXPECT_TRUE(parseDataInfo(
      R"({"type":"synthetic","path":"","files":512,"train_files":461,"valid_files":51,)"
      R"("train_clips":461,"valid_clips":51,"frames":{"min":5,"max":5,"total":2560},)"
      R"("resolutions":[{"width":32,"height":32,"files":512}],"skipped":[],"preview":[]})"));
}

TEST(DataInfo, RefusalsNameTheField) {
  struct Case {
    std::string from, to, reason;
  };
  for (const Case& c : {Case{"\"version\":1", "\"version\":7", "version 7"},
                        Case{"\"frames\"", "\"frame\"", "missing \"frames\""},
                        Case{"\"files\":12", "\"files\":1.5", "\"files\" is not an integer"},
                        Case{"\"verified\":false", "\"verified\":0", "\"verified\" is not"},
                        Case{"\"skipped\":[{", "\"skipped\":[1,{", "\"skipped\" holds"}}) {
    std::string text = goldenDocument();
    text.replace(text.find(c.from), c.from.size(), c.to);
    std::string error;
    EXPECT_FALSE(parseDataInfo(text, &error)) << text;
    EXPECT_NE(error.find(c.reason), std::string::npos) << error;
    EXPECT_EQ(error.rfind("data-info: ", 0), 0u) << error;
  }
}

}  // namespace
}  // namespace tb::core
