// Every `build/fastloop` line of the README's "Using it" block runs as written, in order, in a fresh folder
// that links the repository's recipes/ (ckpt/ and m.jsonl land there): training lines get a short
// --max-steps, synthetic data 512 images, cifar10:DIR a small CIFAR-10 made here.
#include "test_support.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fastloop {
namespace {

/// The lines of the first ```sh block after `heading`, "build/fastloop" ones only, without their comments.
std::vector<std::string> readme_commands(const std::string& heading) {
  std::ifstream in(FASTLOOP_TEST_DIR "/../README.md");
  std::vector<std::string> commands;
  bool in_section = false, in_block = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_section = line == heading;
    if (!in_section) continue;
    if (line.rfind("```", 0) == 0) {
      if (in_block) break;
      in_block = true;
      continue;
    }
    if (!in_block || line.rfind("build/fastloop ", 0) != 0) continue;
    commands.push_back(std::regex_replace(line, std::regex("\\s+#.*$"), ""));
  }
  return commands;
}

/// 5 train batches of `per_file` records and a test batch of 50, in CIFAR-10's binary format.
void cifar_write(const std::string& dir, int per_file) {
  auto batch = [](const std::string& path, int records) {
    std::ofstream out(path, std::ios::binary);
    for (int r = 0; r < records; ++r) {
      out.put(static_cast<char>(r % 10));
      for (int i = 0; i < 3072; ++i) out.put(static_cast<char>((r * 7 + i) % 256));
    }
  };
  for (int f = 1; f <= 5; ++f) batch(dir + "/data_batch_" + std::to_string(f) + ".bin", per_file);
  batch(dir + "/test_batch.bin", 50);
}

/// The command as the test runs it: the CLI built here, a small CIFAR-10, training lines short.
std::string runnable(std::string command, const std::string& cifar) {
  command = std::regex_replace(command, std::regex("^build/fastloop"), FASTLOOP_CLI);
  command = std::regex_replace(command, std::regex("cifar10:DIR"), "cifar10:" + cifar);
  command = std::regex_replace(command, std::regex("(synthetic:\\d+x\\d+x\\d+)( |$)"), "$1:512$2");  // a short test split
  const bool trains = std::regex_search(command, std::regex(" train( |$)")) && command.find("--help") == std::string::npos;
  if (trains) {
    command = std::regex_replace(command, std::regex(" --max-steps \\d+"), "");
    command += command.find("--resume") != std::string::npos ? " --max-steps 4" : " --max-steps 2";
  }
  return command;
}

TEST(Readme, EveryCommandOfUsingItRunsAsWritten) {
  const auto commands = readme_commands("## Using it");
  ASSERT_GE(commands.size(), 8u) << "the README's \"Using it\" block lost its commands";
  EXPECT_EQ(commands.front(), "build/fastloop train") << "the README's first command is the default recipe";
  const test::TempDir tmp;
  const std::string cifar = tmp.sub("cifar10");
  cifar_write(cifar, 64);  // 320 train images: more than the seed recipe's batch of 128 twice
  const std::string work = tmp.sub("work");  // the repository root as the commands see it: its recipes/
  std::filesystem::create_directory_symlink(FASTLOOP_TEST_DIR "/../recipes", work + "/recipes");
  for (const auto& command : commands) {
    const auto r = test::shell_run("cd " + work + " && " + runnable(command, cifar));
    EXPECT_EQ(r.code, 0) << command << "\n" << r.output;
    if (command == "build/fastloop train") {  // no flags: the default recipe, --perf auto included
      EXPECT_NE(r.output.find("perf auto:"), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("fashion-mnist"), std::string::npos) << r.output;
    }
    if (command.rfind("build/fastloop models", 0) == 0) {
      EXPECT_NE(r.output.find("resnet18"), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("no imagenet stem"), std::string::npos) << "small_cnn has the cifar stem only\n" << r.output;
    }
    if (command.find("--resume") != std::string::npos) {
      EXPECT_NE(r.output.find("resumed from ckpt/last.ckpt"), std::string::npos) << r.output;
    }
  }
}

}  // namespace
}  // namespace fastloop
