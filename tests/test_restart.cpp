// Restarts that resume by themselves: `--resume auto` starts fresh without DIR/last.ckpt and continues from it
// when it is there, so one command serves the first start and every restart; under torchrun --max-restarts a
// rank SIGKILLed mid-run brings the group back from the last checkpoint, ending bitwise equal to a run never killed.
#include "test_support.h"
#include "fastloop/dist/launch.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/checkpoint.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

using namespace fastloop;
namespace fs = std::filesystem;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Classifier restored(const std::string& checkpoint) {
  auto model = model_make(ModelOptions("small_cnn").in_channels(1).num_classes(10));
  Checkpoint::read(checkpoint).restore(*model, nullptr, false);
  return model;
}

void expect_bitwise_equal(const std::string& a_path, const std::string& b_path) {
  auto a = restored(a_path), b = restored(b_path);
  auto pb = b->named_parameters(), bb = b->named_buffers();
  for (const auto& item : a->named_parameters()) EXPECT_TRUE(torch::equal(item.value(), pb[item.key()])) << item.key();
  for (const auto& item : a->named_buffers()) EXPECT_TRUE(torch::equal(item.value(), bb[item.key()])) << item.key();
}

/// The pid of the child of `parent` whose environment holds RANK=`rank` (torchrun's workers); -1 if none yet.
pid_t worker_of(pid_t parent, int rank) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::istringstream stat(read_file(entry.path() / "stat"));
    std::string pid, comm, state;
    pid_t ppid = 0;
    stat >> pid >> comm >> state >> ppid;  // comm ("(fastloop)") has no spaces here
    if (ppid != parent) continue;
    std::string environ = read_file(entry.path() / "environ");
    std::replace(environ.begin(), environ.end(), '\0', '\n');
    if (("\n" + environ).find("\nRANK=" + std::to_string(rank) + "\n") != std::string::npos) return std::stoi(name);
  }
  return -1;
}

}  // namespace

TEST(Restart, ResumeAutoStartsFreshWithoutACheckpointAndContinuesFromOne) {
  const test::TempDir tmp;
  const std::string run = "train --data synthetic:1x12x12:256 --batch-size 32 --threads 1 --device cpu --checkpoint-dir " +
                          tmp.path() + " --resume auto";
  const auto first = test::cli_run(run + " --epochs 1");
  ASSERT_EQ(first.code, 0) << first.output;
  EXPECT_NE(first.output.find("--resume auto: no " + tmp.path() + "/last.ckpt yet, starting fresh"), std::string::npos)
      << first.output;
  const auto again = test::cli_run(run + " --epochs 2");
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_NE(again.output.find("resumed from " + tmp.path() + "/last.ckpt at epoch 2, step 8"), std::string::npos)
      << again.output;

  const test::TempDir empty;  // `--resume` alone (on) still wants the checkpoint; a bad value names the choices
  const auto on = test::cli_run("train --data synthetic:1x12x12:64 --device cpu --checkpoint-dir " + empty.path() + " --resume");
  EXPECT_EQ(on.code, 2) << on.output;
  EXPECT_NE(on.output.find(empty.path() + "/last.ckpt"), std::string::npos) << on.output;
  const auto bad = test::cli_run("train --data synthetic:1x12x12:64 --device cpu --checkpoint-dir " + empty.path() +
                                 " --resume sometimes");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--resume"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("auto"), std::string::npos) << "the allowed values: " << bad.output;
}

// The same command under torchrun twice: once left alone, once with rank 1 SIGKILLed after a checkpoint;
// torchrun --max-restarts 1 starts the group again, --resume auto continues from DIR/last.ckpt.
TEST(Restart, TorchrunRestartsAGroupWithAKilledRankAndItEndsBitwiseEqualToARunNeverKilled) {
  FASTLOOP_SKIP_WITHOUT_VENV();
  const std::string torchrun = fs::path(FASTLOOP_PYTHON).parent_path() / "torchrun";
  if (!fs::exists(torchrun)) GTEST_SKIP() << "no torchrun next to " << FASTLOOP_PYTHON;
  const test::TempDir tmp;
  auto command = [&](const std::string& dir) {
    return std::vector<std::string>{torchrun, "--nproc-per-node", "2", "--max-restarts", "1", "--master-port",
                                    std::to_string(free_port()), "--no-python", FASTLOOP_CLI, "train",
                                    "--data", "synthetic:1x12x12:2048", "--batch-size", "8", "--epochs", "3",
                                    "--threads", "1", "--workers", "0", "--log-every", "1000", "--device", "cpu",
                                    "--dist-timeout-s", "60", "--checkpoint-dir", dir, "--checkpoint-every", "16",
                                    "--resume", "auto"};
  };
  const std::string never_killed = tmp.sub("never_killed"), killed = tmp.sub("killed");
  ASSERT_EQ(test::wait_exit(test::spawn(command(never_killed), {}, tmp / "never_killed.log")), 0)
      << read_file(tmp / "never_killed.log");

  const std::string log = tmp / "killed.log";
  const pid_t agent = test::spawn(command(killed), {}, log);
  pid_t victim = -1;
  for (int i = 0; i < 12000 && victim < 0; ++i) {  // 2 minutes at most: until rank 0 wrote a checkpoint
    if (fs::exists(killed + "/last.ckpt")) victim = worker_of(agent, 1);
    if (victim < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(victim, 0) << read_file(log);
  kill(victim, SIGKILL);
  ASSERT_EQ(test::wait_exit(agent), 0) << read_file(log);
  const std::string output = read_file(log);
  std::smatch resumed;
  ASSERT_TRUE(std::regex_search(output, resumed, std::regex("resumed from \\S+ at epoch \\d+, step (\\d+)"))) << output;
  const int64_t step = std::stoll(resumed[1]);
  EXPECT_GT(step, 0) << output;
  EXPECT_LT(step, 3 * 128) << "killed before the last step: " << output;  // 3 epochs x (1024 images / 8) per rank
  EXPECT_NE(output.find("after 384 steps"), std::string::npos) << output;
  expect_bitwise_equal(never_killed + "/last.ckpt", killed + "/last.ckpt");
}
