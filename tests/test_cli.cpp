// The fastloop executable as a user runs it: exit codes, messages that name the flag, help,
// model listing, and a tiny train → metrics → eval round on synthetic data.
#include "test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <utility>

namespace fs = std::filesystem;

namespace {
using fastloop::test::cli_run;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST(Cli, UnknownFlagExitsTwoNamingIt) {
  auto r = cli_run("train --learning-rate 3");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.output, "--learning-rate")) << r.output;
}

TEST(Cli, BadChoiceExitsTwoListingAllowedValues) {
  auto r = cli_run("train --optim lbfgs");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.output, "--optim")) << r.output;
  EXPECT_TRUE(contains(r.output, "adamw")) << r.output;
}

TEST(Cli, OutOfRangeValueExitsTwoBeforeAnyWork) {
  auto r = cli_run("train --lr -1 --data cifar10:/nonexistent");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.output, "--lr")) << r.output;
  EXPECT_FALSE(contains(r.output, "nonexistent")) << "validated before loading data: " << r.output;
}

TEST(Cli, ANumberOutOfRangeInAnyCommandSaysWhatItMustBeInOneLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"predict --topk 0 x.jpg", "--topk: must be positive (got 0)"},
      {"tune --tune-warmup 0", "--tune-warmup: must be positive (got 0)"},
      {"bench latency --iterations 0", "--iterations: must be positive (got 0)"},
      {"models --num-classes -3", "--num-classes: must be positive (got -3)"},
      {"eval --threads -1 --checkpoint c.ckpt", "--threads: must be 0 or more (got -1)"},
      {"predict --batch-size two x.jpg", "--batch-size"}};
  for (const auto& [args, message] : cases) {
    auto r = cli_run(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_TRUE(contains(r.output, message)) << args << "\n" << r.output;
    EXPECT_LT(r.output.size(), 200u) << args << ": one short message, not CLI11's range up to DBL_MAX\n" << r.output;
  }
}

TEST(Cli, MissingDatasetExitsTwoNamingTheFile) {
  auto r = cli_run("train --data fashion-mnist:/nonexistent/dir");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.output, "/nonexistent/dir")) << r.output;
}

TEST(Cli, HelpOfEachCommandListsItsFlags) {
  auto r = cli_run("train --help");
  EXPECT_EQ(r.code, 0);
  for (const char* flag : {"--model", "--stem", "--num-classes", "--data", "--epochs", "--max-steps", "--batch-size",
                           "--lr", "--optim", "--schedule", "--seed", "--threads", "--metrics", "--checkpoint-dir",
                           "--checkpoint-every", "--resume", "--config"})
    EXPECT_TRUE(contains(r.output, flag)) << flag;
  EXPECT_EQ(cli_run("eval --help").code, 0);
  EXPECT_EQ(cli_run("models --help").code, 0);
  EXPECT_EQ(cli_run("").code, 2);
}

TEST(Cli, ModelsListsEveryModelWithItsParameterCount) {
  auto r = cli_run("models");
  EXPECT_EQ(r.code, 0);
  for (const char* name : {"resnet18", "resnet34", "resnet50", "resnet101", "mobilenet_v2", "small_cnn"})
    EXPECT_TRUE(contains(r.output, name)) << name;
  EXPECT_TRUE(contains(r.output, "11173962")) << r.output;
}

TEST(Cli, RecipeFlagsOverrideTheRecipe) {
  const fastloop::test::TempDir tmp;
  const fs::path dir = tmp.path();
  std::ofstream(dir / "r.toml") << "[optim]\nname = \"lbfgs\"\n";
  auto r = cli_run("train --config " + (dir / "r.toml").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.output, "r.toml")) << r.output;
}

TEST(Cli, TrainWritesMetricsAndCheckpointThatEvalReads) {
  const fastloop::test::TempDir tmp;
  const fs::path dir = tmp.path();
  const auto metrics = (dir / "m.jsonl").string();
  auto r = cli_run("train --data synthetic:1x12x12:256 --batch-size 32 --epochs 2 --threads 1 --device cpu --log-every 2 --metrics " +
                   metrics + " --checkpoint-dir " + dir.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "test accuracy")) << r.output;

  std::ifstream in(metrics);
  std::string line;
  int epochs = 0, steps = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    for (const char* key : {"epoch", "step", "train_loss", "img_per_s", "elapsed_s"}) EXPECT_TRUE(j.contains(key)) << line;
    if (j["kind"] == "epoch") {
      ++epochs;
      EXPECT_TRUE(j.contains("test_loss") && j.contains("test_acc")) << line;
    } else {
      ++steps;
    }
  }
  EXPECT_EQ(epochs, 2);
  EXPECT_EQ(steps, 8);  // 2 epochs x 8 steps, a line every 2

  auto e = cli_run("eval --checkpoint " + (dir / "last.ckpt").string());
  EXPECT_EQ(e.code, 0) << e.output;
  EXPECT_TRUE(contains(e.output, "test accuracy")) << e.output;

  std::ofstream(dir / "bad.ckpt") << "garbage";
  auto bad = cli_run("eval --checkpoint " + (dir / "bad.ckpt").string());
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(contains(bad.output, "bad.ckpt")) << bad.output;
}

TEST(Cli, OutThatCannotBeWrittenExitsTwoNamingItInEveryCommand) {
  const fastloop::test::TempDir tmp;
  const auto dir = fs::path(tmp.sub("cli_out"));
  std::ofstream(dir / "a_file") << "not a folder";
  const std::string blocked = (dir / "a_file" / "x").string();  // no folder can be made there, no file written
  const std::string tiny = " --data synthetic:1x12x12:64 --batch-size 16 --threads 1 --device cpu";
  ASSERT_EQ(cli_run("train --epochs 1" + tiny + " --checkpoint-dir " + dir.string()).code, 0);
  const std::vector<std::string> commands = {
      "bench loader --workers 0 --augment off --batches 1 --repeats 1 --warmup 0 --images 64 --batch-size 16 --out " + blocked,
      "bench --models small_cnn --rows baseline --repeat 1 --steps 1 --eval-steps 1 --warmup 0 --batch-size 4 "
      "--data synthetic:3x16x16:16 --device cpu --out " + blocked,
      "tune --trials 1 --tune-warmup 1 --tune-steps 1" + tiny + " --out " + blocked + ".toml",
      "export --checkpoint " + (dir / "last.ckpt").string() + " --out " + blocked + ".safetensors"};
  for (const auto& command : commands) {
    const auto r = cli_run(command);
    EXPECT_EQ(r.code, 2) << command << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "cannot write " + blocked)) << command << "\n" << r.output;
  }
}
