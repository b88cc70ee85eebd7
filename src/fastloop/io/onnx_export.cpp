// onnx_from_torchscript(): runs the embedded python/fastloop/_onnx_export.py with `python -c`, its stderr captured so
// a failure comes back as the converter's own last line.
#include "fastloop/io/onnx_export.h"

#include "fastloop/core/python_path.h"

#include "fastloop/core/errors.h"
#include "fastloop/core/shell.h"
#include "fastloop/onnx_export_script.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

namespace fastloop {
namespace {

/// The last non-empty line of `text` (a Python traceback's or the script's "onnx_export: ..." line).
std::string onnx_last_line(const std::string& text) {
  size_t end = text.find_last_not_of("\r\n ");
  if (end == std::string::npos) return "";
  const size_t begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1, end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

}  // namespace

void onnx_from_torchscript(const std::string& torchscript_path, const std::string& path, const OnnxExportOptions& options) {
  const std::string python = python_interpreter(options.python);
  const std::string command = shell_quote(python) + " -c " + shell_quote(kOnnxExportScript) + " --torchscript " +
                              shell_quote(torchscript_path) + " --out " + shell_quote(path) + " --opset " +
                              std::to_string(options.opset) + " 2>&1";
  const CommandOutput run = command_output(command);
  if (!run.started) throw InputError("export --format onnx: cannot start " + python);
  if (run.status == 0) return;
  const int code = WIFEXITED(run.status) ? WEXITSTATUS(run.status) : -1;
  std::string reason = onnx_last_line(run.out);
  if (code == 127 || reason.empty()) reason = python + " did not run (exit " + std::to_string(code) + ")";
  throw InputError("export --format onnx: " + reason +
                   (code == 127 ? "; set FASTLOOP_PYTHON to a python with torch and onnx" : ""));
}

} // namespace fastloop
