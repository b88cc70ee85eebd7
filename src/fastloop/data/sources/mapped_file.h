// A file mapped read-only (mmap) for the life of the object: tar shards read in place, the page cache holding
// what was read (shards.h, field_shards.h).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fastloop {

class MappedFile {
 public:
  /// Maps `path`; InputError naming it when it cannot be opened, is not a regular file or cannot be mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  /// The file's bytes (empty for an empty file).
  std::string_view view() const { return {data_ ? data_ : "", size_}; }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

} // namespace fastloop
