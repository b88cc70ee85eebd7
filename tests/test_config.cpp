// TrainConfig: recipes, validation messages and the JSON form stored in checkpoints.
#include "fastloop/core/config.h"
#include "fastloop/core/errors.h"
#include "temp_dir.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

using namespace fastloop;

namespace {
std::string write_temp(const test::TempDir& dir, const std::string& name, const std::string& text) {
  std::string path = dir / name;
  std::ofstream(path) << text;
  return path;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Config, DefaultRecipeFileMatchesBuiltInDefaults) {
  TrainConfig from_file;
  config_load_toml(from_file, FASTLOOP_TEST_DIR "/../recipes/fashion_mnist.toml");
  // `fastloop train` with no flags is the default recipe: the built-in defaults are its settings, field by field.
  EXPECT_EQ(config_to_json(from_file), config_to_json(TrainConfig{}));
  EXPECT_EQ(TrainConfig{}.perf.mode, "auto");
  EXPECT_EQ(TrainConfig{}.run.epochs, 8);
}

TEST(Config, SeedRecipeSetsBatch128AndResNet18) {
  TrainConfig config;
  config_load_toml(config, FASTLOOP_TEST_DIR "/../recipes/cifar10_resnet18_seed001.toml");
  EXPECT_EQ(config.data.batch_size, 128);
  EXPECT_EQ(config.model.name, "resnet18");
  EXPECT_EQ(config.run.epochs, 5);
}

TEST(Config, ImageFolderRecipeIsTorchvisionsResNet50ReferenceShape) {
  TrainConfig from_file;
  config_load_toml(from_file, FASTLOOP_TEST_DIR "/../recipes/imagefolder_resnet50.toml");
  config_validate(from_file);
  // Every field the recipe sets beyond the built-in defaults; the rest of the file is the default.
  TrainConfig expected;
  expected.data.source = "imagefolder:data/images";
  expected.data.batch_size = 256;
  expected.data.workers = 8;
  expected.data.image.size = 224;
  expected.model.name = "resnet50";
  expected.model.stem = "imagenet";
  expected.optim.weight_decay = 1e-4;
  expected.optim.label_smoothing = 0.1;
  expected.schedule.name = "cosine";
  expected.schedule.warmup_epochs = 5.0;
  expected.perf.amp = "bf16";
  expected.run.epochs = 90;
  EXPECT_EQ(config_to_json(from_file), config_to_json(expected));
  EXPECT_EQ(from_file.data.image.size, 224);  // as torchvision's reference recipe
  EXPECT_TRUE(from_file.perf.channels_last);
}

TEST(Config, RecipeRejectsUnknownKeyNamingIt) {
  const test::TempDir tmp;
  auto path = write_temp(tmp, "unknown.toml", "[optim]\nlearning_rate = 0.1\n");
  TrainConfig config;
  auto msg = message_of([&] { config_load_toml(config, path); });
  EXPECT_NE(msg.find("optim.learning_rate"), std::string::npos) << msg;
  EXPECT_NE(msg.find("optim.lr"), std::string::npos) << "should list the known keys: " << msg;
}

TEST(Config, RecipeRejectsWrongTypeAndBadChoice) {
  const test::TempDir tmp;
  TrainConfig config;
  auto msg = message_of([&] { config_load_toml(config, write_temp(tmp, "type.toml", "[data]\nbatch_size = \"big\"\n")); });
  EXPECT_NE(msg.find("data.batch_size"), std::string::npos) << msg;
  msg = message_of([&] { config_load_toml(config, write_temp(tmp, "choice.toml", "[optim]\nname = \"lbfgs\"\n")); });
  EXPECT_NE(msg.find("sgd, adamw"), std::string::npos) << msg;
}

TEST(Config, RecipeSyntaxErrorNamesLine) {
  const test::TempDir tmp;
  TrainConfig config;
  auto msg = message_of([&] { config_load_toml(config, write_temp(tmp, "syntax.toml", "[run]\nepochs = = 3\n")); });
  EXPECT_NE(msg.find("syntax.toml:2"), std::string::npos) << msg;
}

// Found by the config fuzzer: toml++ 3.3 asserted (aborting builds without NDEBUG, such as
// scripts/sanitize.sh's) on a table header that holds only a comment.
TEST(Config, RecipeTableHeaderWithOnlyACommentIsASyntaxError) {
  const test::TempDir tmp;
  TrainConfig config;
  for (const char* text : {"[  # pixels\nflip = true\n", "[run]\nepochs = 2\n[[ # x\n", "[\n"}) {
    auto msg = message_of([&] { config_load_toml(config, write_temp(tmp, "header.toml", text)); });
    EXPECT_NE(msg.find("not a valid TOML recipe"), std::string::npos) << text << ": " << msg;
  }
}

// Found by the config fuzzer: toml++ 3.3's "is this whitespace?" tables reached __builtin_unreachable for
// non-ASCII characters such as U+00E9 and U+FEBF (undefined behaviour; UBSan aborts in scripts/sanitize.sh).
TEST(Config, RecipeNonAsciiOutsideStringsIsASyntaxErrorAndInsideStringsIsKept) {
  const test::TempDir tmp;
  TrainConfig config;
  for (const char* text : {"\xEF\xBA\xBFtop = 1\n", "[run]\nepochs = 2\xC3\xA9\n", "[run]\n\xE3\x81\x82 = 1\n"}) {
    auto msg = message_of([&] { config_load_toml(config, write_temp(tmp, "unicode.toml", text)); });
    EXPECT_NE(msg.find("not a valid TOML recipe"), std::string::npos) << text << ": " << msg;
  }
  config_load_toml(config, write_temp(tmp, "path.toml", "[run]\nmetrics = \"/home/Jos\xC3\xA9/m.jsonl\"  # caf\xC3\xA9\n"));
  EXPECT_EQ(config.run.metrics, "/home/Jos\xC3\xA9/m.jsonl");
}

TEST(Config, RecipeIntegerIsAcceptedForFloatField) {
  const test::TempDir tmp;
  TrainConfig config;
  config_load_toml(config, write_temp(tmp, "int.toml", "[optim]\nlr = 1\n"));
  EXPECT_DOUBLE_EQ(config.optim.lr, 1.0);
}

TEST(Config, ValidationNamesTheFlag) {
  TrainConfig config;
  config.data.batch_size = 0;
  EXPECT_NE(message_of([&] { config_validate(config); }).find("--batch-size"), std::string::npos);
  for (const char* resume : {"on", "auto"}) {
    config = TrainConfig{};
    config.run.resume = resume;
    EXPECT_NE(message_of([&] { config_validate(config); }).find("--resume: needs --checkpoint-dir"), std::string::npos)
        << resume;
  }
  EXPECT_NO_THROW(config_validate(TrainConfig{}));
}

// run.resume was a boolean: recipes and checkpoints that say true/false still load (true: on, false: off).
TEST(Config, ResumeIsOnOffOrAutoAndItsOldBooleanFormStillLoads) {
  const test::TempDir tmp;
  TrainConfig config;
  EXPECT_EQ(config.run.resume, "off");
  config_load_toml(config, write_temp(tmp, "auto.toml", "[run]\nresume = \"auto\"\n"));
  EXPECT_EQ(config.run.resume, "auto");
  config_load_toml(config, write_temp(tmp, "true.toml", "[run]\nresume = true\n"));
  EXPECT_EQ(config.run.resume, "on");
  config_load_toml(config, write_temp(tmp, "false.toml", "[run]\nresume = false\n"));
  EXPECT_EQ(config.run.resume, "off");
  const auto msg = message_of([&] { config_load_toml(config, write_temp(tmp, "bad.toml", "[run]\nresume = \"maybe\"\n")); });
  EXPECT_NE(msg.find("run.resume = 'maybe' is not one of: off, on, auto"), std::string::npos) << msg;

  TrainConfig from_old_checkpoint;
  config_from_json(from_old_checkpoint, R"({"run.resume": true, "run.epochs": 3})");
  EXPECT_EQ(from_old_checkpoint.run.resume, "on");
  EXPECT_EQ(from_old_checkpoint.run.epochs, 3);
  config.run.resume = "auto";
  TrainConfig round_trip;
  config_from_json(round_trip, config_to_json(config));
  EXPECT_EQ(round_trip.run.resume, "auto");
}

TEST(Config, JsonRoundTripKeepsEveryField) {
  TrainConfig config;
  config.optim.lr = 0.0123;
  config.model.name = "resnet50";
  config.data.flip = false;
  config.run.max_steps = 77;
  TrainConfig back;
  config_from_json(back, config_to_json(config));
  EXPECT_EQ(config_to_json(back), config_to_json(config));
}

TEST(Config, EveryFieldHasOneFlagAndOneKey) {
  TrainConfig config;
  auto fields = config_fields(config);
  std::set<std::string> flags, keys;
  for (const auto& f : fields) {
    EXPECT_TRUE(flags.insert(f.flag).second) << f.flag;
    EXPECT_TRUE(keys.insert(f.key).second) << f.key;
    EXPECT_EQ(f.flag.rfind("--", 0), 0u);
  }
}
