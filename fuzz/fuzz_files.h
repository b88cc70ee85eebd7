// Scratch files for the fuzz targets whose parsers read paths, not buffers: one private directory per
// fuzzer process under $TMPDIR, which scripts/fuzz.sh points at a folder in /dev/shm (so 1M executions do
// not touch a disk) and removes afterwards, since libFuzzer does not always run destructors at exit.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace fastloop::fuzz {

class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "fastloop_fuzz_XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) std::abort();
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes size bytes to path, replacing it; aborts (a fuzzer finding) when the scratch disk fails.
inline void write_file(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) std::abort();
}

}  // namespace fastloop::fuzz
