// The on-disk cache of video frame indices (see video_index_file.h).
#include "fastloop/data/codecs/video_index_file.h"

#include <zlib.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

namespace fastloop {
namespace {

constexpr char kMagic[8] = {'F', 'L', 'V', 'I', 'D', 'X', '\r', '\n'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kMaxKey = 4096, kMaxCodec = 64;
constexpr int64_t kMaxSide = 1 << 16, kMaxStream = 1 << 16;
constexpr int64_t kStaleTempSeconds = 15 * 60;  // a writer's temporary file untouched this long: its writer died

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_i64(std::string& out, int64_t value) {
  const auto v = static_cast<uint64_t>(value);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t crc_of(std::string_view bytes) {
  return static_cast<uint32_t>(crc32_z(0L, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

// Reads fields in order; any read past the end leaves it failed (and every later read too).
class Fields {
 public:
  explicit Fields(std::string_view bytes) : bytes_(bytes) {}
  uint64_t u(int width) {
    if (failed_ || bytes_.size() - at_ < static_cast<size_t>(width)) return failed_ = true, 0;
    uint64_t v = 0;
    for (int i = 0; i < width; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes_[at_ + i])) << (8 * i);
    at_ += static_cast<size_t>(width);
    return v;
  }
  uint32_t u32() { return static_cast<uint32_t>(u(4)); }
  int64_t i64() { return static_cast<int64_t>(u(8)); }
  std::string text(uint32_t max) {
    const uint32_t n = u32();
    if (failed_ || n > max || bytes_.size() - at_ < n) return failed_ = true, std::string();
    std::string out(bytes_.substr(at_, n));
    at_ += n;
    return out;
  }
  size_t left() const { return bytes_.size() - at_; }
  bool failed() const { return failed_; }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
  bool failed_ = false;
};

bool printable(const std::string& s) {
  for (unsigned char c : s)
    if (c <= 0x20 || c >= 0x7f) return false;
  return !s.empty();
}

// The per-frame fields as video_index_make leaves them: times ascending, groups ascending from 0, one seek
// timestamp per group.
bool frames_valid(const VideoIndex& index) {
  for (size_t i = 0; i < index.pts.size(); ++i) {
    if (index.start_group[i] < 0) return false;
    if (i == 0) continue;
    if (index.pts[i] < index.pts[i - 1] || index.start_group[i] < index.start_group[i - 1]) return false;
    if (index.start_group[i] == index.start_group[i - 1] && index.start_key[i] != index.start_key[i - 1]) return false;
  }
  return true;
}

std::string absolute_of(const std::string& path) {
  if (path.find("://") != std::string::npos) return path;  // a remote shard's member (video_member.h): a URL
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return ec ? path : absolute.lexically_normal().string();
}

bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n <= 0) return false;
    data += n, size -= static_cast<size_t>(n);
  }
  return true;
}

// Removes the temporary files of writers that died mid-write (once per process and folder).
void sweep_stale_temporaries(const std::string& dir) {
  static std::mutex mutex;
  static std::string swept;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (swept == dir) return;
    swept = dir;
  }
  const auto now = std::filesystem::file_time_type::clock::now();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().rfind(".tmp-", 0) != 0) continue;
    std::error_code stat_ec;
    const auto written = std::filesystem::last_write_time(entry.path(), stat_ec);
    if (!stat_ec && now - written > std::chrono::seconds(kStaleTempSeconds))
      std::filesystem::remove(entry.path(), stat_ec);  // another process may have swept it first
  }
}

}  // namespace

std::optional<VideoSourceStamp> video_source_stamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return VideoSourceStamp{static_cast<int64_t>(st.st_size),
                          static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

std::string video_index_encode(const VideoIndex& index, const std::string& key, const VideoSourceStamp& stamp) {
  std::string out(kMagic, sizeof(kMagic));
  put_u32(out, kVersion);
  put_i64(out, stamp.bytes), put_i64(out, stamp.mtime_ns);
  put_u32(out, static_cast<uint32_t>(key.size())), out += key;
  put_u32(out, static_cast<uint32_t>(index.stream));
  put_u32(out, static_cast<uint32_t>(index.codec.size())), out += index.codec;
  for (int64_t v : {index.height, index.width, index.time_base_num, index.time_base_den, index.end}) put_i64(out, v);
  put_i64(out, index.frames());
  for (size_t i = 0; i < index.pts.size(); ++i)
    put_i64(out, index.pts[i]), put_i64(out, index.start_key[i]), put_i64(out, index.start_group[i]);
  put_u32(out, crc_of(out));
  return out;
}

std::optional<VideoIndexFile> video_index_decode(std::string_view bytes) {
  if (bytes.size() < sizeof(kMagic) + 4 || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) return std::nullopt;
  const std::string_view body = bytes.substr(0, bytes.size() - 4);
  Fields crc(bytes.substr(body.size()));
  if (crc.u32() != crc_of(body)) return std::nullopt;
  Fields in(body.substr(sizeof(kMagic)));
  if (in.u32() != kVersion) return std::nullopt;
  VideoIndexFile file;
  file.stamp.bytes = in.i64(), file.stamp.mtime_ns = in.i64();
  file.key = in.text(kMaxKey);
  VideoIndex& index = file.index;
  index.path = file.key;
  index.stream = static_cast<int32_t>(in.u32());
  index.codec = in.text(kMaxCodec);
  index.height = in.i64(), index.width = in.i64();
  index.time_base_num = in.i64(), index.time_base_den = in.i64(), index.end = in.i64();
  const auto frames = static_cast<uint64_t>(in.i64());
  if (in.failed() || file.key.empty() || file.stamp.bytes < 0 || !printable(index.codec) || index.stream < 0 ||
      index.stream >= kMaxStream || index.height < 0 || index.height > kMaxSide || index.width < 0 ||
      index.width > kMaxSide || index.time_base_num <= 0 || index.time_base_den <= 0 || frames < 1 ||
      frames != in.left() / 24 || in.left() % 24 != 0)
    return std::nullopt;
  index.pts.resize(frames), index.start_key.resize(frames), index.start_group.resize(frames);
  for (size_t i = 0; i < frames; ++i)
    index.pts[i] = in.i64(), index.start_key[i] = in.i64(), index.start_group[i] = in.i64();
  if (in.failed() || in.left() != 0 || !frames_valid(index)) return std::nullopt;
  return file;
}

std::string video_index_cache_dir() {
  const char* cache = std::getenv("FASTLOOP_CACHE");
  if (cache && *cache) return std::string(cache) + "/video-index";
  const char* home = std::getenv("HOME");
  return home && *home ? std::string(home) + "/.cache/fastloop/video-index" : std::string();
}

std::string video_index_cache_file(const std::string& path) {
  const std::string dir = video_index_cache_dir();
  if (dir.empty()) return std::string();
  const std::string key = absolute_of(path);
  uint64_t h = 1469598103934665603ULL;  // FNV-1a, as the shard cache names its files
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ULL;
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  std::string base = key.substr(key.rfind('/') + 1).substr(0, 100);
  for (char& c : base)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
      c = '_';
  return dir + "/" + hex + "-" + base + ".vidx";
}

std::optional<VideoIndex> video_index_cache_read(const std::string& path, const VideoSourceStamp& stamp) {
  const std::string file = video_index_cache_file(path);
  if (file.empty()) return std::nullopt;
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string bytes;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < (int64_t{1} << 32);
  if (ok) {
    bytes.resize(static_cast<size_t>(st.st_size));
    for (size_t at = 0; ok && at < bytes.size();) {
      const ssize_t n = ::read(fd, &bytes[at], bytes.size() - at);
      ok = n > 0;
      at += ok ? static_cast<size_t>(n) : 0;
    }
  }
  ::close(fd);
  std::optional<VideoIndexFile> parsed = ok ? video_index_decode(bytes) : std::nullopt;
  if (!parsed || parsed->stamp != stamp || parsed->key != absolute_of(path)) return std::nullopt;
  parsed->index.path = path;
  return std::move(parsed->index);
}

bool video_index_cache_write(const VideoIndex& index, const std::string& path, const VideoSourceStamp& stamp) {
  const std::string file = video_index_cache_file(path);
  if (file.empty()) return false;
  const std::string dir = video_index_cache_dir();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return false;
  sweep_stale_temporaries(dir);
  static std::atomic<uint64_t> serial{0};  // temporary names unique within the process, pid across them
  const std::string temp = dir + "/.tmp-" + std::to_string(::getpid()) + "-" + std::to_string(serial++) + "-" +
                           file.substr(dir.size() + 1);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const std::string bytes = video_index_encode(index, absolute_of(path), stamp);
  const bool ok = write_all(fd, bytes.data(), bytes.size());
  ::close(fd);
  if (!ok || ::rename(temp.c_str(), file.c_str()) != 0) {
    ::unlink(temp.c_str());
    return false;
  }
  return true;
}

} // namespace fastloop
