#include "core/config_io.h"
#include "core/config_schema.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

namespace tb::core {
namespace {

TEST(RunConfig, DefaultsRoundTripThroughJson) {
  RunConfig defaults;
  const std::string text = toJsonText(defaults);
  ConfigLoad load = parseRunConfig(std::string_view(text));
  ASSERT_TRUE(load.ok()) << load.errors.front().toString();
  EXPECT_EQ(toJsonText(load.config), text);
  EXPECT_TRUE(changedKeys(defaults, load.config).empty());
}

TEST(RunConfig, NonDefaultValuesSurviveRoundTrip) {
  RunConfig c;
  c.data.type = DataType::Videos;
  c.data.path = "/clips";
  c.train.lr = 3.5e-4;
  c.train.checkpoint_keep = {1000, 5000};
  c.train.activation_checkpointing = {"attend_space"};
  c.model.layers = {{"residual", {}}, {"compress_space", 64}, {"consecutive_residual", 3}};
  c.data.image_size = 64;
  c.distributed.gpu_ids = {0, 1};
  ConfigLoad load = parseRunConfig(toJson(c));
  ASSERT_TRUE(load.ok()) << load.errors.front().toString();
  EXPECT_EQ(load.config.data.path, "/clips");
  EXPECT_DOUBLE_EQ(load.config.train.lr, 3.5e-4);
  EXPECT_EQ(load.config.train.checkpoint_keep, (std::vector<int>{1000, 5000}));
  EXPECT_EQ(load.config.model.layers, c.model.layers);
  EXPECT_EQ(load.config.distributed.gpu_ids, (std::vector<int>{0, 1}));
  EXPECT_TRUE(changedKeys(c, load.config).empty());
}

// Choice keys are enums in code and names in documents: written by name, read back to the same
// value, and the schema (the window's drop-downs, the reference) lists the table's names.
TEST(RunConfig, ChoiceKeysAreWrittenAndReadByTheirTableNames) {
  RunConfig c;
  c.model.kind = ModelKind::Vqgan;
  c.model.quantizer.type = QuantizerType::Vq;
  c.train.schedule = Schedule::CosineBudget;
  c.distributed.strategy = Strategy::Zero3;
  const auto j = toJson(c);
  EXPECT_EQ(j["model"]["kind"], "vqgan");
  EXPECT_EQ(j["model"]["quantizer"]["type"], "vq");
  EXPECT_EQ(j["train"]["schedule"], "cosine_budget");
  EXPECT_EQ(j["distributed"]["strategy"], "zero3");
  const ConfigLoad load = parseRunConfig(j);
  ASSERT_TRUE(load.ok()) << load.errors.front().toString();
  EXPECT_EQ(load.config.model.kind, ModelKind::Vqgan);
  EXPECT_EQ(load.config.model.quantizer.type, QuantizerType::Vq);
  EXPECT_EQ(load.config.train.schedule, Schedule::CosineBudget);
  EXPECT_EQ(load.config.distributed.strategy, Strategy::Zero3);
  EXPECT_EQ(changedKeys(RunConfig{}, load.config),
            (std::vector<std::string>{"model.kind", "model.quantizer.type", "train.schedule",
                                      "distributed.strategy"}));

  for (const auto& field : configSchema()) {
    if (field.path == "distributed.strategy") {
      EXPECT_EQ(field.spec.allowed(), choiceNames<Strategy>());
    }
    if (field.path == "model.discriminator.type") {
      EXPECT_EQ(field.spec.allowed(), (std::vector<std::string>{"frame", "patchgan", "video"}));
    }
  }
  for (const auto& name : choiceNames<Precision>())
    EXPECT_STREQ(choiceName(*parseChoice<Precision>(name)), name.c_str());
  EXPECT_FALSE(parseChoice<Precision>("fp8"));
  EXPECT_THROW(parseChoiceOrThrow<Precision>("--precision", "fp8"), std::invalid_argument);
}

TEST(RunConfig, AnUnknownChoiceIsRefusedWhenReadAndKeepsTheDefault) {
  const ConfigLoad load =
      parseRunConfig(std::string_view(R"({"train": {"precision": "bf61"}, "loss": {"recon": 3}})"));
  ASSERT_EQ(load.errors.size(), 2u);
  EXPECT_EQ(load.errors[0].toString(), "loss.recon: expected a string, got 3");
  EXPECT_EQ(load.errors[1].toString(),
            "train.precision: must be one of \"fp32\", \"bf16\", \"fp16\", \"auto\", got \"bf61\" "
            "(did you "
            "mean \"bf16\"?)");
  EXPECT_EQ(load.config.train.precision, Precision::Fp32);
}

const FieldInfo& schemaField(const std::string& path) {
  static const std::vector<FieldInfo> schema = configSchema();
  for (const auto& f : schema)
    if (f.path == path) return f;
  throw std::out_of_range(path);
}

TEST(ConfigSchema, KeysHaveLabelsAndGroupsForForms) {
  EXPECT_EQ(fieldLabel(schemaField("train.discr_lr")), "Discriminator learning rate");
  EXPECT_EQ(fieldLabel(schemaField("data.num_frames")), "Number of frames");
  EXPECT_EQ(fieldLabel(schemaField("model.attn_num_mem_kv")), "Attention memory key/values");
  EXPECT_EQ(fieldLabel(schemaField("train.time_budget_s")), "Time budget");
  EXPECT_EQ(fieldLabel(schemaField("distributed.bucket_mb")), "Bucket");
  EXPECT_EQ(fieldLabel(schemaField("eval.fid_weights")), "rFID weights");
  EXPECT_EQ(fieldGroup(schemaField("train.lr")), "Optimisation");
  EXPECT_EQ(fieldGroup(schemaField("model.quantizer.vq_beta")), "Quantizer");
  EXPECT_EQ(fieldGroup(schemaField("distributed.zero3_units")), "Other: distributed");
}

TEST(ConfigSchema, KeysThatOnlyMatterForSomeValuesOfOthersSayWhen) {
  RunConfig c;
  const auto& r1_every = schemaField("loss.r1_every");
  ASSERT_TRUE(r1_every.spec.condition());
  EXPECT_STREQ(r1_every.spec.condition()->text,
               "loss.adversarial_weight > 0 and loss.r1_weight > 0");
  EXPECT_TRUE(fieldApplies(r1_every, c));
  c.loss.r1_weight = 0;
  EXPECT_FALSE(fieldApplies(r1_every, c));
  EXPECT_FALSE(fieldApplies(schemaField("model.quantizer.vq_beta"), c));
  c.model.quantizer.type = QuantizerType::Vq;
  EXPECT_TRUE(fieldApplies(schemaField("model.quantizer.vq_beta"), c));
  EXPECT_FALSE(fieldApplies(schemaField("data.path"), c));
  c.data.type = DataType::Videos;
  EXPECT_TRUE(fieldApplies(schemaField("data.path"), c));
  EXPECT_TRUE(fieldApplies(schemaField("train.lr"), c));  // no condition
}

TEST(RunConfig, LayersAreWrittenAsMagvit2PytorchUsersWriteThem) {
  RunConfig c;
  c.model.layers = {{"residual", {}}, {"consecutive_residual", 2}};
  const auto j = toJson(c);
  EXPECT_EQ(j["model"]["layers"].dump(), R"(["residual",["consecutive_residual",2]])");
}

TEST(RunConfig, PartialDocumentKeepsDefaults) {
  ConfigLoad load = parseRunConfig(std::string_view(R"({"train": {"batch_size": 7}})"));
  ASSERT_TRUE(load.ok());
  EXPECT_EQ(load.config.train.batch_size, 7);
  EXPECT_EQ(load.config.train.grad_accum, RunConfig{}.train.grad_accum);
  EXPECT_EQ(changedKeys(RunConfig{}, load.config), std::vector<std::string>{"train.batch_size"});
}

TEST(RunConfig, SchemaListsEveryLeafWithItsDefault) {
  const auto schema = configSchema();
  const auto doc = toJson(RunConfig{});
  std::set<std::string> paths;
  for (const auto& f : schema) {
    EXPECT_TRUE(paths.insert(f.path).second) << "duplicate " << f.path;
    EXPECT_FALSE(f.spec.doc().empty()) << f.path << " has no documentation";
    // Walk the written document along the path: the schema's default is what toJson writes.
    const nlohmann::ordered_json* node = &doc;
    std::size_t start = 0;
    while (true) {
      const auto dot = f.path.find('.', start);
      node = &node->at(
          f.path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    EXPECT_EQ(*node, f.default_value) << f.path;
  }
  for (const char* required : {"data.type",
                               "data.path",
                               "data.image_size",
                               "data.num_frames",
                               "model.kind",
                               "model.init_dim",
                               "model.max_dim",
                               "model.layers",
                               "model.quantizer.type",
                               "model.quantizer.codebook_size",
                               "train.batch_size",
                               "train.grad_accum",
                               "train.lr",
                               "train.warmup_steps",
                               "train.max_steps",
                               "train.precision",
                               "train.threads",
                               "train.checkpoint_every",
                               "train.checkpoint_total_limit",
                               "train.checkpoint_keep",
                               "distributed.strategy",
                               "distributed.backend",
                               "distributed.nproc_per_node",
                               "distributed.nnodes",
                               "distributed.node_rank",
                               "distributed.master_addr",
                               "distributed.master_port",
                               "distributed.gpu_ids",
                               "distributed.timeout_s",
                               "version"}) {
    EXPECT_EQ(paths.count(required), 1u) << required;
  }
  EXPECT_EQ(configSections().front(), "data");
}

TEST(RunConfig, LoadFromFileAndUnreadableFile) {
  const auto dir = std::filesystem::temp_directory_path() / "tb_test_run_config";
  std::filesystem::create_directories(dir);
  const auto file = dir / "config.json";
  {
    std::ofstream out(file);
    out << R"({"version": 1, "train": {"max_steps": 12}})";
  }
  ConfigLoad load = loadRunConfig(file);
  ASSERT_TRUE(load.ok());
  EXPECT_EQ(load.config.train.max_steps, 12);
  ConfigLoad missing = loadRunConfig(dir / "nope.json");
  ASSERT_EQ(missing.errors.size(), 1u);
  EXPECT_NE(missing.errors[0].message.find("nope.json"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(RunConfig, OverridesParseValuesAsJsonOrString) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  EXPECT_FALSE(applyOverride(doc, "train.lr=1e-3"));
  EXPECT_FALSE(applyOverride(doc, "data.path=/clips/a b"));
  EXPECT_FALSE(applyOverride(doc, "model.layers=[\"residual\",[\"consecutive_residual\",2]]"));
  EXPECT_FALSE(applyOverride(doc, "train.ema=false"));
  ConfigLoad load = parseRunConfig(doc);
  ASSERT_TRUE(load.ok()) << load.errors.front().toString();
  EXPECT_DOUBLE_EQ(load.config.train.lr, 1e-3);
  EXPECT_EQ(load.config.data.path, "/clips/a b");
  EXPECT_FALSE(load.config.train.ema);
  ASSERT_EQ(load.config.model.layers.size(), 2u);
  EXPECT_EQ(load.config.model.layers[1].arg, 2);

  auto bad = applyOverride(doc, "no-equals-sign");
  ASSERT_TRUE(bad);
  EXPECT_NE(bad->message.find("key.path=value"), std::string::npos);
  auto through_leaf = applyOverride(doc, "train.lr.x=1");
  ASSERT_TRUE(through_leaf);
  EXPECT_EQ(through_leaf->path, "train.lr");
  auto typo = applyOverride(doc, "train.bach_size=3");
  EXPECT_FALSE(typo);  // the key is checked when the document is parsed
  ConfigLoad typo_load = parseRunConfig(doc);
  ASSERT_EQ(typo_load.errors.size(), 1u);
  EXPECT_EQ(typo_load.errors[0].path, "train.bach_size");
}

TEST(RunConfig, ResumeSafeKeysAreSchemaKeys) {
  std::set<std::string> paths;
  for (const auto& f : configSchema()) paths.insert(f.path);
  for (const auto& k : resumeSafeKeys()) EXPECT_EQ(paths.count(k), 1u) << k;
}

TEST(RunConfig, EditDistanceAndSuggestions) {
  EXPECT_EQ(editDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(editDistance("trian", "train"), 1u);
  EXPECT_EQ(editDistance("", "abc"), 3u);
  EXPECT_EQ(editDistance("same", "same"), 0u);
  EXPECT_EQ(closestMatch("bach_size", {"batch_size", "lr"}),
            std::optional<std::string>("batch_size"));
  EXPECT_EQ(closestMatch("zzz", {"batch_size", "lr"}), std::nullopt);
}

}  // namespace
}  // namespace tb::core
