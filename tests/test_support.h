// Helpers shared by the test files: running a command line (the fastloop executable or any shell line)
// for its exit code and output, starting a process to wait for or kill, the skip of tests that need the
// venv, and the tiny training run most tests start from. A test's own temporary folder: temp_dir.h.
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/core/shell.h"
#include "temp_dir.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace fastloop::test {

struct CommandResult {
  int code = -1;        // exit code; -1 when the command was killed or could not start
  std::string output;   // stdout and stderr together
};

/// Runs `command` with sh, stderr into stdout.
inline CommandResult shell_run(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

/// `path` as one shell word, whatever folder the clone or the build lives in (a space, a quote).
inline std::string quoted(const std::string& path) { return shell_quote(path); }

/// The fastloop executable as a shell word.
inline std::string cli_word() { return quoted(FASTLOOP_CLI); }

/// The venv's Python as a shell word.
inline std::string python_word() { return quoted(FASTLOOP_PYTHON); }

/// Runs the fastloop executable with `args` (shell syntax).
inline CommandResult cli_run(const std::string& args) { return shell_run(cli_word() + " " + args); }

/// The project venv's Python (scripts/setup.sh makes it) is there: tests that run PyTorch or a Python
/// tool start with FASTLOOP_SKIP_WITHOUT_VENV(), which reports a skip, never a silent pass.
inline bool venv_present() { return std::filesystem::exists(FASTLOOP_PYTHON); }
#define FASTLOOP_SKIP_WITHOUT_VENV()   \
  if (!::fastloop::test::venv_present()) \
  GTEST_SKIP() << "needs the project venv at " FASTLOOP_PYTHON " (scripts/setup.sh makes it)"

/// Starts `args` (args[0]: a path, or a name looked up in PATH) as a child process; the caller waits
/// (wait_exit) or kills it. The distributed environment this test runs in is cleared, then `env` set.
/// stdout and stderr go to `log`; with no log, stdout is discarded and stderr stays ours.
inline pid_t spawn(const std::vector<std::string>& args, const std::vector<std::pair<std::string, std::string>>& env = {},
                   const std::string& log = "") {
  const pid_t pid = fork();
  if (pid == 0) {
    for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                             "SLURM_NTASKS", "SLURM_PROCID"})
      unsetenv(name);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    if (log.empty()) {
      if (!freopen("/dev/null", "w", stdout)) _exit(126);
    } else {
      if (!freopen(log.c_str(), "w", stdout)) _exit(126);
      dup2(fileno(stdout), STDERR_FILENO);
    }
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

/// Waits for `pid`: its exit code, or 128 + the signal that ended it. One still running after `limit_s`
/// (a hang) is killed and reported as -9, distinct from any exit of its own.
inline int wait_exit(pid_t pid, int limit_s = 240) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -9;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

/// small_cnn on `images` synthetic 1x12x12 images, batches of `batch_size`, one epoch, one thread, CPU:
/// a whole run in about a second. Tests set what they exercise on top.
inline TrainConfig tiny_config(int64_t images = 512, int64_t batch_size = 32) {
  TrainConfig config;
  config.data.source = "synthetic:1x12x12:";
  config.data.source += std::to_string(images);  // appended: GCC 12 warns (-Warray-bounds) on "literal" + string&&
  config.data.batch_size = batch_size;
  config.model.name = "small_cnn";
  config.run.epochs = 1;
  config.run.threads = 1;
  config.perf.device = "cpu";  // bitwise and multi-rank expectations hold on the CPU (a GPU machine's `auto` is CUDA)
  return config;
}

} // namespace fastloop::test
