// Error types of fastloop. Library code throws; only the CLI catches, prints and picks the exit code.
// InputError is a problem the user can fix (a bad flag, a malformed file): the CLI exits 2 for it.
// RunError ends a run that cannot go on (its loss diverged, a batch does not fit in memory); its
// message says where it stopped, what was kept and what to change: the CLI exits 3 for it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace fastloop {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A malformed file: its path, the byte offset where reading failed and what was wrong there.
[[noreturn]] inline void input_fail_at(const std::string& path, int64_t offset, const std::string& what) {
  throw InputError(path + ": byte " + std::to_string(offset) + ": " + what);
}

} // namespace fastloop
