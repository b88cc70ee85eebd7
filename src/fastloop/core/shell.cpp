// See shell.h.
#include "fastloop/core/shell.h"

#include <cstdio>
#include <memory>

namespace fastloop {

CommandOutput command_output(const std::string& command) {
  CommandOutput result;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return result;
  result.started = true;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), pipe.get())) result.out.append(buffer, n);
  result.status = pclose(pipe.release());
  return result;
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

} // namespace fastloop
