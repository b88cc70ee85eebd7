// See out_file.h.
#include "fastloop/core/out_file.h"

#include "fastloop/core/errors.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace fastloop {

void out_file_write(const std::string& path, const std::string& text) {
  errno = 0;
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) {
    const std::string why = errno ? std::string(std::strerror(errno)) + "; " : std::string();
    throw InputError("--out: cannot write " + path + ": " + why + "does its folder exist and is it writable?");
  }
}

} // namespace fastloop
