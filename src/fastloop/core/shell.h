// Running a shell command for its standard output: one popen loop for the device probe, the PyTorch
// peers and anything else that asks another program. Each caller decides what a failure means.
#pragma once

#include <string>

namespace fastloop {

struct CommandOutput {
  bool started = false;  // popen succeeded (sh ran); when false, out is "" and status -1
  int status = -1;       // pclose's wait status: 0 when the command exited 0
  std::string out;       // everything it wrote to stdout (stderr is left to ours)
};

/// Runs `command` with sh and reads its stdout to the end.
CommandOutput command_output(const std::string& command);

/// `text` in single quotes for sh, embedded single quotes escaped: one word whatever it holds.
std::string shell_quote(const std::string& text);

} // namespace fastloop
