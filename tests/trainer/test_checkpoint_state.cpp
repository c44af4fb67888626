// A checkpoint's state.json, and the files it says the checkpoint has, checked before a resume
// restores anything: a step of 1.5, 999, 2^70 or -5 used to resume (rewriting complete
// checkpoints, "completing" without training, wrapping), a deleted discriminator was replaced by
// a fresh one, and parse errors quoted the parser.
#include "tests/trainer/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace tb::trainer {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using testing::errorEventOf;
using testing::freshDir;
using testing::RunResult;
using testing::tinyConfig;
using testing::train;

std::string readText(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void writeText(const fs::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
}

/// Every file under `dir` with its bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) files[entry.path().string()] = readText(entry.path());
  return files;
}

TEST(CheckpointState, EveryBadFieldIsRefusedNamingTheFileAndFieldBeforeAnythingIsWritten) {
  core::RunConfig config = tinyConfig();
  config.train.max_steps = 4;
  config.train.checkpoint_every = 2;
  const fs::path dir = freshDir("state_fields");
  ASSERT_EQ(train(config, dir).code, 0);
  const fs::path state = dir / "checkpoints" / "step_4" / "state.json";
  const std::string good = readText(state);
  const Json original = Json::parse(good);
  const auto checkpoints = snapshot(dir / "checkpoints");
  const std::string metrics = readText(dir / "metrics.jsonl");
  config.train.max_steps = 6;

  auto withField = [&](const std::string& key, const Json& value) {
    Json j = original;
    j[key] = value;
    return j.dump(2);
  };
  auto without = [&](const std::string& key) {
    Json j = original;
    j.erase(key);
    return j.dump(2);
  };
  std::string huge = good;
  huge.replace(huge.find("\"step\": 4"), 9, "\"step\": 1180591620717411303424");  // 2^70
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty (the checkpoint was not written completely)"},
      {good.substr(0, good.size() / 2), "ends before its JSON does (cut short?) at line"},
      {good.substr(0, good.find("ema_active") + 3), "ends before its JSON does (cut short?)"},
      {"{\"step\": 4, oops}", "is not valid JSON at line 1, column 13"},
      {"[1, 2]", "holds array, not an object of fields"},
      {withField("step", 1.5), "step: must be a whole number, got 1.5"},
      {withField("step", 999), "step: 999, but the folder is step_4"},
      {huge, "step: must be a whole number, got 1.1805916207174113e+21"},
      {withField("step", -5), "step: must be >= 0, got -5"},
      {withField("step", "4"), "step: must be a whole number, got \"4\""},
      {without("step"), "step: missing"},
      {withField("lr_scale", 0), "lr_scale: must be in (0.0, 1.0], got 0"},
      {withField("elapsed_s", -1), "elapsed_s: must be in [0.0, "},
      {withField("ema_active", "yes"), "ema_active: must be true or false, got \"yes\""},
      {withField("batches", -3), "batches: must be >= 0, got -3"},
      {withField("lecam", 7), "lecam: must be an object, got 7"}};
  for (const auto& [text, expected] : cases) {
    SCOPED_TRACE(expected);
    writeText(state, text);
    const RunResult r = train(config, dir, /*resume=*/true);
    writeText(state, good);
    EXPECT_EQ(r.code, 1);
    const std::string error = errorEventOf(r);
    EXPECT_EQ(error.rfind("checkpoint_unreadable: " + state.string() + ": " + expected, 0), 0u)
        << error;
    // Nothing already saved changed, nothing was added.
    EXPECT_EQ(snapshot(dir / "checkpoints"), checkpoints);
    EXPECT_EQ(readText(dir / "metrics.jsonl"), metrics);
  }
  // The good file still resumes.
  EXPECT_EQ(train(config, dir, /*resume=*/true).code, 0);
  fs::remove_all(dir);
}

TEST(CheckpointState, AMissingDiscriminatorIsRefusedNotReplaced) {
  core::RunConfig config = testing::withTinyGan(tinyConfig(), 0);
  config.train.max_steps = 2;
  config.train.checkpoint_every = 2;
  const fs::path dir = freshDir("lost_discriminator");
  ASSERT_EQ(train(config, dir).code, 0);
  const fs::path step = dir / "checkpoints" / "step_2";
  const std::string discr = readText(step / "discriminator.safetensors");
  EXPECT_EQ(Json::parse(readText(step / "state.json"))["discriminator"], true);
  fs::remove(step / "discriminator.safetensors");
  config.train.max_steps = 3;
  const std::string expected =
      "checkpoint_unreadable: " + (step / "discriminator.safetensors").string() +
      ": missing, though the checkpoint was written with a discriminator";
  RunResult r = train(config, dir, /*resume=*/true);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(errorEventOf(r).rfind(expected, 0), 0u) << errorEventOf(r);

  // A checkpoint from before "discriminator" was recorded: its discriminator optimizer says so.
  Json state = Json::parse(readText(step / "state.json"));
  state.erase("discriminator");
  writeText(step / "state.json", state.dump(2));
  r = train(config, dir, /*resume=*/true);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(errorEventOf(r).rfind(expected, 0), 0u) << errorEventOf(r);

  writeText(step / "discriminator.safetensors", discr);
  EXPECT_EQ(train(config, dir, /*resume=*/true).code, 0);
  fs::remove_all(dir);
}

TEST(CheckpointState, ACheckpointFromBeforeTheGanStartsItsDiscriminatorFresh) {
  core::RunConfig config = tinyConfig();  // no GAN: no discriminator in the checkpoint
  config.train.max_steps = 2;
  config.train.checkpoint_every = 2;
  const fs::path dir = freshDir("gan_later");
  ASSERT_EQ(train(config, dir).code, 0);
  EXPECT_FALSE(fs::exists(dir / "checkpoints" / "step_2" / "discriminator.safetensors"));
  config = testing::withTinyGan(config, 0);
  config.train.max_steps = 3;
  const RunResult r = train(config, dir, /*resume=*/true);
  EXPECT_EQ(r.code, 0) << errorEventOf(r);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tb::trainer
