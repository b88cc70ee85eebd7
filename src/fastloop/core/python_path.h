// Which Python runs fastloop's Python side (the PyTorch peers of the benchmarks, the ONNX conversion): one
// rule for every command, so a user sets it once.
#pragma once

#include <string>

namespace fastloop {

/// `given` when it is not empty (a --python flag), else $FASTLOOP_PYTHON, else ./.venv/bin/python where it
/// exists (the project's venv, whose torch fastloop is built against), else python3.
std::string python_interpreter(const std::string& given = "");

} // namespace fastloop
