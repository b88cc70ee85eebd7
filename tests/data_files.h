// Helpers for the dataset-reader tests: the temp dir (temp_dir.h), IDX / gzip / CIFAR file builders and the
// InputError message of a call. Header-only, for tests/test_idx.cpp and tests/test_cifar_synthetic.cpp.
#pragma once

#include "fastloop/core/errors.h"
#include "temp_dir.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace fastloop::test_data {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

// A fresh directory, removed with everything in it at the end of a test that passed.
using TempDir = ::fastloop::test::TempDir;

inline void put_be32(Bytes& b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
}
inline void put_le(Bytes& b, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// Pixel i of image k is (k * 7 + i) mod 256, so every position is checkable.
inline Bytes idx_images(uint32_t n, uint32_t rows, uint32_t cols, uint32_t magic = 0x00000803) {
  Bytes b;
  put_be32(b, magic);
  put_be32(b, n);
  put_be32(b, rows);
  put_be32(b, cols);
  for (uint32_t k = 0; k < n; ++k)
    for (uint32_t i = 0; i < rows * cols; ++i) b.push_back(static_cast<uint8_t>(k * 7 + i));
  return b;
}

inline Bytes idx_labels(const Bytes& labels) {
  Bytes b;
  put_be32(b, 0x00000801);
  put_be32(b, static_cast<uint32_t>(labels.size()));
  b.insert(b.end(), labels.begin(), labels.end());
  return b;
}

inline uint32_t crc32_of(const Bytes& data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t byte : data) {
    crc ^= byte;
    for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
  }
  return ~crc;
}

// One gzip member with stored (uncompressed) deflate blocks: valid gzip without linking zlib here.
inline Bytes gzip_member(const Bytes& data) {
  Bytes out = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
  size_t pos = 0;
  do {
    const size_t len = std::min<size_t>(65535, data.size() - pos);
    out.push_back(pos + len == data.size() ? 1 : 0);  // BFINAL, BTYPE = stored
    put_le(out, static_cast<uint32_t>(len), 2);
    put_le(out, static_cast<uint32_t>(~len & 0xFFFF), 2);
    out.insert(out.end(), data.begin() + pos, data.begin() + pos + len);
    pos += len;
  } while (pos < data.size());
  put_le(out, crc32_of(data), 4);
  put_le(out, static_cast<uint32_t>(data.size()), 4);
  return out;
}

inline void write_file(const std::string& path, const Bytes& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  ASSERT_TRUE(f.good()) << path;
}

inline Bytes slice(const Bytes& b, size_t from, size_t to) { return Bytes(b.begin() + from, b.begin() + to); }

// The InputError message f throws, or a test failure.
inline std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected InputError, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected InputError, nothing was thrown";
  return "";
}

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "missing '" << (part) << "' in: " << (text)

// ---------------------------------------------------------------------------------------------- IDX

} // namespace fastloop::test_data
