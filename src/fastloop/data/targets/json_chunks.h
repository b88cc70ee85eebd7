// A large JSON file's top-level object read member by member, its big arrays handed out a few MiB of elements at a
// time: each chunk is made a JSON array in place (its delimiters overwritten with '[' and ']') inside a padded
// mapping, for simdjson to parse alone. The file is read from disk as the scan advances and the pages behind the
// current chunk are given back, so a 450 MB COCO file costs a few MiB of buffer and index instead of the file plus
// simdjson's index of all of it (4 bytes per structural character). Only the member values that are parsed get
// simdjson's full validation; skipped ones are checked for balanced brackets and strings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace fastloop {

/// JSON text inside a buffer with at least 64 readable bytes after it (simdjson's padding).
struct JsonSpan {
  const char* data = nullptr;
  size_t size = 0;
  size_t capacity = 0;      // bytes readable from data: size + padding at least
  size_t file_offset = 0;   // of data[0], for error messages
  size_t first_index = 0;   // an array chunk: the index of its first element in the whole array
};

class JsonChunks {
 public:
  /// Opens `path`; throws InputError naming it when it cannot be read or does not start a JSON object.
  explicit JsonChunks(const std::string& path);
  ~JsonChunks();
  JsonChunks(const JsonChunks&) = delete;
  JsonChunks& operator=(const JsonChunks&) = delete;

  /// The next member's key (raw, as written between its quotes); false after the closing '}'.
  bool member_next(std::string& key);
  /// The current member's value, whole.
  JsonSpan value();
  void value_skip();
  /// Whether the current member's value is an array; if so, array_chunk() gives its elements.
  bool array_begin();
  /// The next chunk of the array's elements as a JSON array "[e, e, ...]"; false after the last (the span stays
  /// valid until the next call).
  bool array_chunk(JsonSpan& out);

  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(size_t at, const std::string& what) const;
  char byte(size_t p) { return p < read_ ? data_[p] : byte_read(p); }
  char byte_read(size_t p);
  void ws_skip();
  void string_skip();
  void release_before(size_t offset);

  std::string path_;
  int fd_ = -1;
  char* data_ = nullptr;
  size_t size_ = 0, mapped_ = 0;
  size_t read_ = 0;       // bytes read from the file into data_
  size_t released_ = 0;   // bytes before this were given back
  size_t p_ = 0;          // the scan's position
  bool first_member_ = true;
  size_t delimiter_ = 0;  // array: the '[' or ',' before the next chunk's first element
  size_t next_index_ = 0;
  bool array_done_ = true;
};

} // namespace fastloop
