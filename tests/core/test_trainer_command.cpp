#include "core/trainer_command.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tb::core {
namespace {

using Words = std::vector<std::string>;

TEST(TrainerCommand, TrainArgumentsInTheTrainersUsageOrder) {
  TrainCommand command;
  command.config_file = "/runs/a/config.json";
  command.run_dir = "/runs/a";
  command.time_budget = "20m";
  command.control_stdin = true;
  EXPECT_EQ(trainArguments(command), (Words{"train", "--config", "/runs/a/config.json", "--run-dir",
                                            "/runs/a", "--time-budget", "20m", "--control-stdin"}));
  TrainCommand preset;
  preset.preset = "demo";
  preset.run_dir = "runs/d";
  preset.sets = {"train.lr=1e-4", "data.path=/v"};
  EXPECT_EQ(trainArguments(preset), (Words{"train", "--preset", "demo", "--run-dir", "runs/d",
                                           "--set", "train.lr=1e-4", "--set", "data.path=/v"}));
  TrainCommand resume;
  resume.run_dir = "runs/b";
  resume.resume = true;
  EXPECT_EQ(trainArguments(resume), (Words{"train", "--run-dir", "runs/b", "--resume"}));
}

TEST(TrainerCommand, CompareArgumentsPassLpipsOnlyWithBothWeightFiles) {
  CompareCommand command;
  command.entries = {{"a", "/runs/a"}, {"b", "/runs/b/checkpoints/step_10"}};
  command.out_dir = "/tmp/cmp";
  command.clips = 8;
  command.lpips_backbone = "alex.pth";
  EXPECT_EQ(compareArguments(command),
            (Words{"compare", "--checkpoint", "a=/runs/a", "--checkpoint",
                   "b=/runs/b/checkpoints/step_10", "--out", "/tmp/cmp", "--clips", "8"}));
  command.lpips_lin = "lin.pth";
  command.data_dir = "/data";
  command.data_type = "images";
  EXPECT_EQ(compareArguments(command),
            (Words{"compare", "--checkpoint", "a=/runs/a", "--checkpoint",
                   "b=/runs/b/checkpoints/step_10", "--out", "/tmp/cmp", "--data", "/data",
                   "--data-type", "images", "--clips", "8", "--lpips-net", "alex",
                   "--lpips-backbone", "alex.pth", "--lpips-lin", "lin.pth"}));
}

TEST(TrainerCommand, CompareArgumentsPassTheDeviceAndRawWeightsOnlyWhenAsked) {
  CompareCommand command;
  command.entries = {{"a", "/runs/a"}};
  command.out_dir = "/o";
  const Words plain{"compare", "--checkpoint", "a=/runs/a", "--out", "/o", "--clips", "4"};
  EXPECT_EQ(compareArguments(command), plain);
  command.device = "cuda:1";
  command.raw_weights = true;
  Words asked = plain;
  asked.insert(asked.end(), {"--raw-weights", "--device", "cuda:1"});
  EXPECT_EQ(compareArguments(command), asked);
}

TEST(TrainerCommand, CompareEntriesAreNamePathWithAFileNameSafeName) {
  EXPECT_EQ(parseCompareEntry("vq-f16.1=/runs/a=b"),
            (std::pair<std::string, std::string>{"vq-f16.1", "/runs/a=b"}));
  for (const char* bad :
       {"no-equals-sign", "=/x", "a=", "original=/x", ".hidden=/x", "a b=/x", "caf\xc3\xa9=/x"}) {
    try {
      parseCompareEntry(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--checkpoint \"") + bad + "\""),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(compareEntryNameProblem("magvit2"), "");
  EXPECT_NE(compareEntryNameProblem(""), "");
}

TEST(TrainerCommand, ShellQuotingKeepsPlainWordsAndQuotesTheRest) {
  EXPECT_EQ(shellQuote("/runs/a-1_b.json"), "/runs/a-1_b.json");
  EXPECT_EQ(shellQuote("--set=x:1,y+2@3%"), "--set=x:1,y+2@3%");
  EXPECT_EQ(shellQuote(""), "''");
  EXPECT_EQ(shellQuote("my run"), "'my run'");
  EXPECT_EQ(shellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(shellQuote("$HOME"), "'$HOME'");
  EXPECT_EQ(shellQuote("caf\xc3\xa9"), "'caf\xc3\xa9'");
  EXPECT_EQ(shellCommandLine("/opt/tb trainer", {"train", "--run-dir", "a b"}),
            "'/opt/tb trainer' train --run-dir 'a b'");
}

}  // namespace
}  // namespace tb::core
