// Tar archives as WebDataset shards use them: a reader that lists the regular files of an archive held
// in memory (an mmap of the shard) as (name, offset, size), and a writer of plain ustar archives that
// GNU tar, Python's tarfile and webdataset read.
// Hand-written, not libarchive (Debian's libarchive-dev would do the format): a shard is read through
// a mapping, and what the loader needs is each member's data offset in that mapping, which libarchive's
// streaming API does not give (it copies data out through archive_read_data). ustar is 512-byte blocks
// with fixed octal fields, so the reader is small, checks every header it trusts, and is fuzzed
// (fuzz/tar_fuzzer.cpp) like the other parsers; and no machine needs one more -dev package.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace fastloop {

struct TarMember {
  std::string name;     // full path inside the archive (pax "path" or GNU long name when present)
  int64_t offset = 0;   // bytes from the archive's start to the member's data
  int64_t size = 0;     // bytes of data
};

/// The regular files of the tar archive `archive`, in archive order. Honours POSIX ustar prefixes, pax
/// extended headers ("path", "size"; global headers are skipped) and GNU long names; directories, links
/// and other special members are skipped. Stops at the end-of-archive zero block or at the end of the
/// bytes. A malformed header (bad checksum, a non-octal field, a member running past the end, a
/// truncated block) throws InputError naming `path` and the header's byte offset.
/// With `ended` (not null), `archive` is the part of an archive received so far: the listing stops without
/// an error at a header or member its end cuts short, and `*ended` says whether the end-of-archive block
/// was in it (every member is then listed).
std::vector<TarMember> tar_list(std::string_view archive, const std::string& path, bool* ended = nullptr);

/// webdataset's base_plus_ext of a member's name: `key` is everything before the first '.' of its last path
/// component, `ext` the rest, lower-cased; false for a name without one (webdataset skips such members).
bool tar_member_key(const std::string& name, std::string& key, std::string& ext);

/// Writes a plain ustar archive: regular files, mode 0644, owner 0, mtime 0 (so packing the same input
/// twice gives the same bytes). Names up to 255 bytes (split into ustar's prefix and name fields).
/// A file that cannot be written throws InputError naming it.
class TarWriter {
 public:
  explicit TarWriter(std::string path);
  ~TarWriter();
  TarWriter(const TarWriter&) = delete;
  TarWriter& operator=(const TarWriter&) = delete;

  void add(const std::string& name, std::string_view data);
  /// Writes the end-of-archive blocks and closes the file; the destructor closes without them.
  void close();
  /// Bytes written so far (headers, data and padding).
  int64_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }

 private:
  void write(const void* data, size_t size);

  std::string path_;
  std::FILE* file_ = nullptr;
  int64_t bytes_ = 0;
};

} // namespace fastloop
