// The bounded, shareable folder of fetched shards (see shard_cache.h).
#include "fastloop/data/sources/shard_cache.h"

#include "fastloop/core/errors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

namespace fastloop {
namespace {

constexpr const char* kSuffix = ".shard";

bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n <= 0) return false;
    data += n, size -= static_cast<size_t>(n);
  }
  return true;
}

} // namespace

ShardCache::ShardCache(std::string dir, int64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec || !std::filesystem::is_directory(dir_))
    throw InputError("--data-cache " + dir_ + ": cannot create the folder (" + ec.message() + ")");
  if (max_bytes_ <= 0) throw InputError("--data-cache-size must be > 0 bytes");
  sweep_stale_temporaries();
}

void ShardCache::sweep_stale_temporaries() const {
  const auto now = std::filesystem::file_time_type::clock::now();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    if (entry.path().filename().string().rfind(".tmp-", 0) != 0) continue;
    std::error_code stat_ec;
    const auto written = std::filesystem::last_write_time(entry.path(), stat_ec);
    if (!stat_ec && now - written > std::chrono::seconds(kStaleTempSeconds))
      std::filesystem::remove(entry.path(), stat_ec);  // another rank may have swept it first
  }
}

std::string ShardCache::file_name(const std::string& url) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : url) h = (h ^ c) * 1099511628211ULL;
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  std::string base = url.substr(url.rfind('/') + 1);
  for (char& c : base)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
      c = '_';
  return std::string(hex) + "-" + base.substr(0, 100) + kSuffix;
}

bool ShardCache::get(const std::string& url, int64_t bytes, std::string& out) const {
  const std::string path = dir_ + "/" + file_name(url);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && st.st_size == bytes;
  if (ok) {
    out.resize(static_cast<size_t>(bytes));
    size_t at = 0;
    while (ok && at < out.size()) {
      const ssize_t n = ::read(fd, &out[at], out.size() - at);
      ok = n > 0;
      at += ok ? static_cast<size_t>(n) : 0;
    }
    if (ok) ::futimens(fd, nullptr);  // now: the LRU order
  }
  ::close(fd);
  if (!ok) out.clear();
  return ok;
}

void ShardCache::put(const std::string& url, const std::string& data) const {
  if (static_cast<int64_t>(data.size()) > max_bytes_) return;
  static std::atomic<uint64_t> serial{0};  // temporary names unique within the process, pid across them
  const std::string name = file_name(url);
  const std::string temp = dir_ + "/.tmp-" + std::to_string(::getpid()) + "-" + std::to_string(serial++) + "-" + name;
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const bool ok = write_all(fd, data.data(), data.size());
  ::close(fd);
  if (!ok || ::rename(temp.c_str(), (dir_ + "/" + name).c_str()) != 0) {
    ::unlink(temp.c_str());
    return;
  }
  evict(name);
}

void ShardCache::evict(const std::string& keep) const {
  struct File {
    std::filesystem::path path;
    int64_t bytes;
    int64_t mtime_ns;
  };
  std::vector<File> files;
  int64_t total = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    struct stat st {};
    if (name.size() < 7 || name.compare(name.size() - 6, 6, kSuffix) != 0 || ::stat(entry.path().c_str(), &st) != 0)
      continue;
    files.push_back({entry.path(), static_cast<int64_t>(st.st_size),
                     static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec});
    total += static_cast<int64_t>(st.st_size);
  }
  std::sort(files.begin(), files.end(), [](const File& a, const File& b) { return a.mtime_ns < b.mtime_ns; });
  for (const File& f : files) {
    if (total <= max_bytes_) break;
    if (f.path.filename() == keep) continue;
    if (::unlink(f.path.c_str()) == 0 || errno == ENOENT) total -= f.bytes;  // ENOENT: another rank evicted it
  }
}

} // namespace fastloop
