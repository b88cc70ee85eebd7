#include "fastloop/core/python_path.h"

#include <unistd.h>

#include <cstdlib>

namespace fastloop {

std::string python_interpreter(const std::string& given) {
  if (!given.empty()) return given;
  const char* env = std::getenv("FASTLOOP_PYTHON");
  if (env && *env) return env;
  if (::access("./.venv/bin/python", X_OK) == 0) return "./.venv/bin/python";
  return "python3";
}

} // namespace fastloop
