#include "core/config_io.h"

#include <gtest/gtest.h>

namespace tb::core {
namespace {

std::vector<std::string> errorLines(std::string_view text) {
  std::vector<std::string> out;
  for (const auto& e : parseRunConfig(text).errors) out.push_back(e.toString());
  return out;
}

// One bad document -> exactly the expected error lines.
struct Case {
  const char* name;
  const char* json;
  std::vector<std::string> expected;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class ConfigValidation : public ::testing::TestWithParam<Case> {};

TEST_P(ConfigValidation, ReportsExactlyTheExpectedErrors) {
  EXPECT_EQ(errorLines(GetParam().json), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, ConfigValidation,
    ::testing::Values(
        Case{"below_min",
             R"({"train": {"batch_size": 0}})",
             {"train.batch_size: must be >= 1, got 0"}},
        Case{"above_max",
             R"({"train": {"adam_beta1": 1.5}})",
             {"train.adam_beta1: must be <= 0.999999, got 1.5"}},
        Case{"not_positive", R"({"train": {"lr": 0}})", {"train.lr: must be > 0, got 0"}},
        Case{"negative",
             R"({"train": {"warmup_steps": -5}})",
             {"train.warmup_steps: must be >= 0, got -5"}},
        Case{"wrong_type_int",
             R"({"train": {"batch_size": "four"}})",
             {"train.batch_size: expected an integer, got string \"four\""}},
        Case{"fractional_int",
             R"({"train": {"batch_size": 2.5}})",
             {"train.batch_size: expected an integer, got 2.5"}},
        Case{"wrong_type_bool",
             R"({"train": {"ema": 1}})",
             {"train.ema: expected true or false, got 1"}},
        Case{"wrong_type_number",
             R"({"train": {"lr": "fast"}})",
             {"train.lr: expected a number, got string \"fast\""}},
        Case{"wrong_type_string",
             R"({"data": {"path": 3}})",
             {"data.path: expected a string, got 3"}},
        Case{"list_element",
             R"({"train": {"checkpoint_keep": [100, "x"]}})",
             {"train.checkpoint_keep[1]: expected an integer, got string \"x\""}},
        Case{"list_element_range",
             R"({"train": {"checkpoint_keep": [100, 0]}})",
             {"train.checkpoint_keep[1]: must be >= 1, got 0"}},
        Case{"list_length",
             R"({"model": {"input_conv_kernel": [7, 7]}})",
             {"model.input_conv_kernel: must have 3 entries, got 2"}},
        Case{"section_not_object", R"({"train": 5})", {"train: expected an object, got 5"}},
        Case{"unknown_key_suggestion",
             R"({"train": {"bach_size": 4}})",
             {"train.bach_size: unknown key (did you mean \"batch_size\"?)"}},
        Case{"unknown_key_no_suggestion",
             R"({"train": {"zzzzzzzz": 4}})",
             {"train.zzzzzzzz: unknown key"}},
        Case{"unknown_section",
             R"({"trian": {}})",
             {"trian: unknown key (did you mean \"train\"?)"}},
        Case{"unknown_nested",
             R"({"model": {"quantizer": {"codebok_size": 4}}})",
             {"model.quantizer.codebok_size: unknown key (did you mean \"codebook_size\"?)"}},
        Case{"bad_choice",
             R"({"model": {"kind": "magvit"}})",
             {"model.kind: must be one of \"magvit2\", \"vqgan\", got \"magvit\" (did you mean "
              "\"magvit2\"?)"}},
        Case{"bad_version",
             R"({"version": 2})",
             {"version: unsupported schema version 2 (this build reads version 1)"}},
        Case{"not_object", R"([1, 2])", {"expected a JSON object at the top level, got a list"}},
        Case{"unknown_layer",
             R"({"model": {"layers": ["residual", "atend_space"]}})",
             {"model.layers[1]: unknown layer \"atend_space\" (did you mean \"attend_space\"?)"}},
        Case{"layer_missing_count",
             R"({"model": {"layers": ["consecutive_residual"]}})",
             {"model.layers[0]: layer \"consecutive_residual\" needs a count: "
              "[\"consecutive_residual\", n]"}},
        Case{"layer_extra_argument",
             R"({"model": {"layers": [["attend_space", 2]]}})",
             {"model.layers[0]: layer \"attend_space\" takes no argument, got 2"}},
        Case{"layer_bad_shape",
             R"({"model": {"layers": [["residual", "x"]]}})",
             {"model.layers[0]: expected a layer name or a [name, integer] pair, got a list"}},
        Case{"image_size_vs_compress_space",
             R"({"data": {"image_size": 65}})",
             {"data.image_size: must be divisible by 2 (1 compress_space layers), got 65"}},
        Case{"num_frames_vs_compress_time",
             R"({"data": {"num_frames": 16}})",
             {"data.num_frames: must be 1 + k * 2 (1 compress_time layers), got 16"}},
        Case{"max_below_init",
             R"({"model": {"init_dim": 64, "max_dim": 32}})",
             {"model.max_dim: must be >= model.init_dim (64), got 32"}},
        Case{"even_kernel",
             R"({"model": {"input_conv_kernel": [4, 4, 3]}})",
             {"model.input_conv_kernel[1]: spatial kernel sizes must be odd, got 4"}},
        Case{"lfq_power_of_two",
             R"({"model": {"quantizer": {"codebook_size": 1000}}})",
             {"model.quantizer.codebook_size: must be a power of two for lfq, got 1000"}},
        Case{"data_path_required",
             R"({"data": {"type": "videos"}})",
             {"data.path: required when data.type is \"videos\""}},
        Case{"images_one_frame",
             R"({"data": {"type": "images", "path": "/x"}})",
             {"data.num_frames: must be 1 when data.type is \"images\", got 17"}},
        Case{"cond_needs_dim",
             R"({"model": {"layers": ["cond_residual"]}})",
             {"model.layers[0]: layer \"cond_residual\" needs model.dim_cond > 0"}},
        Case{"world_needs_strategy",
             R"({"distributed": {"nproc_per_node": 2}})",
             {"distributed.strategy: must be \"ddp\", \"zero1\", \"zero2\" or \"zero3\" with 2 "
              "processes (nproc_per_node x nnodes)"}},
        Case{"node_rank",
             R"({"distributed": {"strategy": "ddp", "nnodes": 2, "node_rank": 2}})",
             {"distributed.node_rank: must be < distributed.nnodes (2), got 2"}},
        Case{"activation_checkpointing",
             R"({"train": {"activation_checkpointing": ["atend_time"]}})",
             {"train.activation_checkpointing: unknown layer type \"atend_time\" (a MAGVIT-v2 "
              "layer name or "
              "\"all\") (did you mean \"attend_time\"?)"}},
        Case{"vqgan_levels",
             R"({"model": {"kind": "vqgan"}, "data": {"image_size": 40}})",
             {"data.image_size: must be divisible by 16 (5 VQGAN levels), got 40"}},
        // 1e308 validated; the run then skipped non-finite steps and blamed train.lr.
        Case{"weight_decay_range",
             R"({"train": {"weight_decay": 1e308}})",
             {"train.weight_decay: must be <= 10, got 1e+308",
              "train.weight_decay: must be below 1 / train.lr (10000): AdamW multiplies the "
              "weights by 1 - lr x weight_decay every step"}},
        Case{"weight_decay_times_lr",
             R"({"train": {"lr": 0.5, "weight_decay": 2}})",
             {"train.weight_decay: must be below 1 / train.lr (2): AdamW multiplies the weights "
              "by 1 - lr x weight_decay every step"}},
        Case{"loss_weight_range",
             R"({"loss": {"perceptual_weight": 1e300}})",
             {"loss.perceptual_weight: must be <= 10000, got 1e+300"}}),
    [](const ::testing::TestParamInfo<Case>& p) { return std::string(p.param.name); });

TEST(ConfigValidationFsq, ProductMismatchIsReported) {
  const auto lines =
      errorLines(R"({"model": {"quantizer": {"type": "fsq", "codebook_size": 512}}})");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "model.quantizer.codebook_size: must equal the product of fsq_levels (1000) for fsq, "
            "got 512");
}

TEST(ConfigValidationSyntax, InvalidJsonIsOneDocumentError) {
  const auto load = parseRunConfig(std::string_view("{\"train\": {"));
  ASSERT_EQ(load.errors.size(), 1u);
  EXPECT_TRUE(load.errors[0].path.empty());
  EXPECT_EQ(load.errors[0].message.rfind("invalid JSON: ", 0), 0u) << load.errors[0].message;
}

TEST(ConfigValidationSyntax, NumberPastDoubleIsAnErrorNotACrash) {
  // nlohmann reports 1e999 as out_of_range, not parse_error; found by fuzz_run_config.
  const auto load = parseRunConfig(std::string_view(R"({"train": {"lr": 1e999}})"));
  ASSERT_EQ(load.errors.size(), 1u);
  EXPECT_NE(load.errors[0].message.find("number overflow"), std::string::npos)
      << load.errors[0].message;
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  EXPECT_FALSE(applyOverride(doc, "train.lr=1e999"));
  EXPECT_EQ(doc["train"]["lr"], "1e999");  // kept as text, then rejected by the typed reader
}

// A document nested 100,000 deep crashed train with a stack overflow: `--set` adds a key to an
// object, which copies its other values, and copying recurses once per level.
TEST(ConfigValidationSyntax, HostileNestingIsOneErrorNotACrash) {
  const int depth = 100000;
  const std::string deep =
      R"({"train": {"lr": )" + std::string(depth, '[') + std::string(depth, ']') + "}}";
  const auto load = parseRunConfig(std::string_view(deep));
  ASSERT_EQ(load.errors.size(), 1u);
  EXPECT_EQ(load.errors[0].toString(), "JSON nested deeper than 64 levels");
  nlohmann::ordered_json doc;
  EXPECT_TRUE(readConfigDocument(deep, doc));
  // The limit sits well above what a configuration needs: a wrong value 64 deep is still read
  // (and reported by the typed reader).
  const std::string limit =
      R"({"train": {"lr": )" + std::string(62, '[') + std::string(62, ']') + "}}";
  const auto at_limit = parseRunConfig(std::string_view(limit));
  ASSERT_EQ(at_limit.errors.size(), 1u);
  EXPECT_EQ(at_limit.errors[0].path, "train.lr");
}

// validate-config accepted /dev/zero as a weight file, which the trainer then read without end.
TEST(ConfigValidationFiles, AWeightPathThatIsThereButNoRegularFileIsAnError) {
  const auto lines = errorLines(R"({"loss": {"lpips_backbone": "/dev/zero", "lpips_lin": "/"}})");
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "loss.lpips_backbone: /dev/zero is a character device, not a weight file",
                       "loss.lpips_lin: / is a directory, not a weight file"}));
  // A file that is not there (yet, or on this machine) is the trainer's to report.
  EXPECT_TRUE(
      errorLines(
          R"({"loss": {"lpips_backbone": "/nonexistent/a.pth", "lpips_lin": "/nonexistent/b.pth"}})")
          .empty());
}

TEST(ConfigValidationSeveral, EveryErrorIsReportedReadingFirstThenRules) {
  const auto lines = errorLines(R"({"train": {"batch_size": -1, "lr": "x", "warmup_step": 3}})");
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "train.lr: expected a number, got string \"x\"",
                       "train.warmup_step: unknown key (did you mean \"warmup_steps\"?)",
                       "train.batch_size: must be >= 1, got -1"}));
}

TEST(ConfigValidationCode, ValidateChecksConfigsBuiltInCode) {
  RunConfig c;
  c.train.grad_accum = 0;
  c.loss.adversarial_weight = -1;
  const auto errors = validate(c);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].toString(), "loss.adversarial_weight: must be >= 0, got -1");
  EXPECT_EQ(errors[1].toString(), "train.grad_accum: must be >= 1, got 0");
  EXPECT_TRUE(validate(RunConfig{}).empty());
}

}  // namespace
}  // namespace tb::core
