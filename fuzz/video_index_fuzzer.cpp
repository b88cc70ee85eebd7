// libFuzzer target for the video index cache files ($FASTLOOP_CACHE/video-index/*.vidx, data/codecs/video_index_file.h):
// any bytes parse or are refused, never a crash, an allocation their length does not justify, or a read out of
// bounds. Each input is tried as it is and with its CRC-32 fixed up (so mutations reach the fields behind it). A
// parsed file must hold the index's invariants, encode back to the same bytes, and survive the cache's write and
// read under the key and stamp it names. Seeded with the cache files of small H.264, HEVC, VP9 and MPEG-4 videos
// (tests/fuzz_corpus/video_index/).
#include "fastloop/data/codecs/video_index_file.h"

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace {

void check(std::string_view bytes) {
  const std::optional<fastloop::VideoIndexFile> file = fastloop::video_index_decode(bytes);
  if (!file) return;
  const fastloop::VideoIndex& index = file->index;
  if (index.frames() < 1 || index.start_key.size() != index.pts.size() || index.start_group.size() != index.pts.size() ||
      index.time_base_num <= 0 || index.time_base_den <= 0)
    std::abort();
  for (size_t i = 1; i < index.pts.size(); ++i)
    if (index.pts[i] < index.pts[i - 1] || index.start_group[i] < index.start_group[i - 1]) std::abort();
  if (fastloop::video_index_encode(index, file->key, file->stamp) != bytes) std::abort();  // one encoding per index
  const std::string& key = file->key;  // written and read back only under a key as the cache makes them
  if (key.front() != '/' || key.find('\0') != std::string::npos || std::filesystem::path(key).lexically_normal().string() != key)
    return;
  if (!fastloop::video_index_cache_write(index, key, file->stamp)) return;
  const std::optional<fastloop::VideoIndex> read = fastloop::video_index_cache_read(key, file->stamp);
  if (!read || read->pts != index.pts || read->start_key != index.start_key || read->codec != index.codec) std::abort();
  fastloop::VideoSourceStamp other = file->stamp;
  ++other.mtime_ns;
  if (fastloop::video_index_cache_read(key, other)) std::abort();  // a stale file is never trusted
  std::remove(fastloop::video_index_cache_file(key).c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* tmp = std::getenv("TMPDIR");
  setenv("FASTLOOP_CACHE", (std::string(tmp ? tmp : "/tmp") + "/fastloop-video-index-fuzz").c_str(), 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  check(bytes);
  if (bytes.size() >= 16) {  // the CRC-32 of what precedes it, fixed up
    const auto crc = static_cast<uint32_t>(crc32_z(0L, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size() - 4));
    for (int i = 0; i < 4; ++i) bytes[bytes.size() - 4 + static_cast<size_t>(i)] = static_cast<char>((crc >> (8 * i)) & 0xff);
    check(bytes);
  }
  return 0;
}
