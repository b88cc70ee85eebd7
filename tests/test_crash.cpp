// Crash consistency: `fastloop train` killed with SIGKILL at random moments (also while writing a
// checkpoint) always leaves a loadable checkpoint that --resume continues to the end, and a clean
// finish leaves no temporary files. FASTLOOP_CRASH_TRIALS sets the trials (default 4; long mode: 50).
#include "fastloop/train/checkpoint.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

namespace fs = std::filesystem;

namespace {
std::vector<std::string> train_args(const std::string& dir, bool resume) {
  std::vector<std::string> args = {FASTLOOP_CLI, "train", "--data", "synthetic:1x12x12:512", "--batch-size", "16",
                                   "--epochs", "2", "--threads", "1", "--checkpoint-dir", dir,
                                   "--checkpoint-every", "1", "--log-every", "1000", "--device", "cpu"};
  if (resume) args.push_back("--resume");
  return args;
}

}  // namespace

using fastloop::test::spawn;
using fastloop::test::wait_exit;

TEST(Crash, SigkillAtRandomMomentsAlwaysLeavesAResumableCheckpoint) {
  const int trials = std::getenv("FASTLOOP_CRASH_TRIALS") ? std::atoi(std::getenv("FASTLOOP_CRASH_TRIALS")) : 4;
  std::mt19937 rng(12345);
  int kills_after_a_checkpoint = 0, kills_during_a_write = 0;
  const fastloop::test::TempDir tmp;
  for (int trial = 0; trial < trials; ++trial) {
    const auto dir = tmp.sub("trial_" + std::to_string(trial));
    const auto checkpoint = dir + "/last.ckpt";
    // Kill the run after a random delay, then again while it resumes, until a run finishes.
    for (int attempt = 0; attempt < 20; ++attempt) {
      const pid_t pid = spawn(train_args(dir, fs::exists(checkpoint)));
      const int delay_ms = std::uniform_int_distribution<int>(150, 1500)(rng);
      bool finished = false;
      for (int waited = 0; waited < delay_ms; waited += 10) {
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid) {
          ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "trial " << trial << " exit " << status;
          finished = true;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (finished) break;
      kill(pid, SIGKILL);
      wait_exit(pid);
      kills_during_a_write += fs::exists(checkpoint + ".tmp." + std::to_string(pid));  // its temporary file: mid-write
      if (fs::exists(checkpoint)) {
        ++kills_after_a_checkpoint;
        EXPECT_NO_THROW(fastloop::Checkpoint::read(checkpoint)) << "trial " << trial << " attempt " << attempt;
      }
    }
    // One last uninterrupted resume must finish the run.
    ASSERT_EQ(wait_exit(spawn(train_args(dir, fs::exists(checkpoint)))), 0) << "trial " << trial;
    EXPECT_EQ(fastloop::Checkpoint::read(checkpoint).position().epoch, 2);
    for (const auto& entry : fs::directory_iterator(dir))
      EXPECT_EQ(entry.path().filename(), "last.ckpt") << "left behind after a clean finish: " << entry.path();
  }
  EXPECT_GE(kills_after_a_checkpoint, trials) << "runs must be killed mid-training, not only before or after";
  std::printf("[ crash ] %d trials, %d kills after a checkpoint existed, %d of them while one was being written\n",
              trials, kills_after_a_checkpoint, kills_during_a_write);
}
