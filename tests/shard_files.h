// Helpers for the tar and shard tests: reading a file whole, writing a small shard of (key, label, bytes)
// samples with fastloop's TarWriter, and running tests/tools/shard_peer.py (Python's tarfile / webdataset) for
// its JSON lines. Header-only, for tests/test_tar.cpp and tests/test_shards.cpp.
#pragma once

#include "data_files.h"
#include "fastloop/data/sources/tar.h"
#include "test_support.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fastloop::test_shards {

inline std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

inline std::string hex(std::string_view bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) out += {digits[c >> 4], digits[c & 15]};
  return out;
}

// Image bytes that say which sample they are (not a real JPEG: the shard layer never decodes).
inline std::string fake_image(int64_t i, size_t size = 300) {
  std::string b(size, '\0');
  for (size_t k = 0; k < size; ++k) b[k] = static_cast<char>((i * 31 + static_cast<int64_t>(k)) & 0xff);
  return b;
}

struct FakeSample {
  std::string key, ext;
  int64_t label;
  std::string bytes;
};

// Samples first..first+count, label i % classes, image size varying with i so members straddle blocks.
inline std::vector<FakeSample> fake_samples(int64_t first, int64_t count, int64_t classes = 5) {
  std::vector<FakeSample> out;
  for (int64_t i = first; i < first + count; ++i) {
    char key[32];
    std::snprintf(key, sizeof(key), "%06lld", static_cast<long long>(i));
    out.push_back({key, i % 3 == 0 ? "png" : "jpg", i % classes, fake_image(i, 100 + static_cast<size_t>(i * 37 % 900))});
  }
  return out;
}

inline void write_shard(const std::string& path, const std::vector<FakeSample>& samples) {
  TarWriter w(path);
  for (const FakeSample& s : samples) {
    w.add(s.key + "." + s.ext, s.bytes);
    w.add(s.key + ".cls", std::to_string(s.label));
  }
  w.close();
}

// Runs tests/tools/shard_peer.py with `args`; the JSON lines it printed (a test failure when it failed).
inline std::vector<nlohmann::json> peer_run(const std::string& args) {
  const auto r = test::shell_run(test::python_word() + " " + test::quoted(FASTLOOP_TEST_DIR "/tools/shard_peer.py") + " " + args);
  EXPECT_EQ(r.code, 0) << r.output;
  std::vector<nlohmann::json> lines;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] == '{') lines.push_back(nlohmann::json::parse(line));
  return lines;
}

} // namespace fastloop::test_shards
