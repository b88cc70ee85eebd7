// Helpers shared by the test files: running a command line (the fastloop executable or any shell line)
// for its exit code and output, and a fresh temporary folder.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

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

/// Runs the fastloop executable with `args` (shell syntax).
inline CommandResult cli_run(const std::string& args) { return shell_run(std::string(FASTLOOP_CLI) + " " + args); }

/// An empty folder under GoogleTest's temporary directory.
inline std::string fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::path(testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

} // namespace fastloop::test
