// JsonChunks: an anonymous mapping of the file's size (+ padding) filled by pread as the scan reaches it, and
// given back (MADV_DONTNEED) behind the chunk being parsed; a byte scanner that knows strings and brackets only.
#include "fastloop/data/targets/json_chunks.h"

#include "fastloop/core/errors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fastloop {
namespace {

constexpr size_t kPadding = 64;               // bytes: simdjson's SIMDJSON_PADDING
constexpr size_t kReadStep = size_t{8} << 20; // bytes read from the file at a time
constexpr size_t kChunk = size_t{4} << 20;    // bytes of array elements per chunk
constexpr size_t kPage = 4096;

bool ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

} // namespace

JsonChunks::JsonChunks(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw InputError(path + ": cannot open the annotation file (" + std::strerror(errno) + "); check the path");
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw InputError(path + ": cannot read the annotation file (not a regular file)");
  }
  size_ = static_cast<size_t>(st.st_size);
  mapped_ = (size_ + kPadding + kPage - 1) / kPage * kPage;
  void* map = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED) {
    ::close(fd_);
    throw InputError(path + ": cannot map " + std::to_string(mapped_) + " bytes for the annotation file (" + std::strerror(errno) + ")");
  }
  data_ = static_cast<char*>(map);
  ws_skip();
  if (size_ == 0 || byte(p_) != '{')
    throw InputError(path + ": the file must be a JSON object with \"images\" and \"annotations\" lists; fix the COCO "
                     "annotation file");
  ++p_;
}

JsonChunks::~JsonChunks() {
  if (data_) ::munmap(data_, mapped_);
  if (fd_ >= 0) ::close(fd_);
}

void JsonChunks::fail(size_t at, const std::string& what) const {
  throw InputError(path_ + ": not valid JSON near byte " + std::to_string(at) + ": " + what +
                   "; check that the file is complete (not cut) and is a COCO annotation file");
}

char JsonChunks::byte_read(size_t p) {
  if (p >= size_) fail(size_, "the file ends early");
  while (read_ <= p) {
    const size_t want = std::min(kReadStep, size_ - read_);
    const ssize_t n = ::pread(fd_, data_ + read_, want, static_cast<off_t>(read_));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw InputError(path_ + ": cannot read the annotation file (" + std::string(n < 0 ? std::strerror(errno) : "it shrank") + ")");
    read_ += static_cast<size_t>(n);
  }
  return data_[p];
}

void JsonChunks::ws_skip() {
  while (p_ < size_ && ws(byte(p_))) ++p_;
}

void JsonChunks::string_skip() {  // at '"'
  const size_t begin = p_++;
  for (;;) {
    if (p_ >= size_) fail(begin, "a string that never ends");
    const char c = byte(p_++);
    if (c == '\\') ++p_;
    else if (c == '"') return;
  }
}

void JsonChunks::value_skip() {
  ws_skip();
  const size_t begin = p_;
  const char first = byte(p_);
  if (first == '"') return string_skip();
  if (first != '{' && first != '[') {
    while (p_ < size_ && !ws(byte(p_)) && byte(p_) != ',' && byte(p_) != '}' && byte(p_) != ']') ++p_;
    if (p_ == begin) fail(begin, std::string("a value was expected, not '") + first + "'");
    return;
  }
  int64_t depth = 0;
  for (;;) {
    if (p_ >= size_) fail(begin, "a list or object that never closes");
    const char c = byte(p_);
    if (c == '"') {
      string_skip();
      continue;
    }
    ++p_;
    if (c == '{' || c == '[') ++depth;
    else if ((c == '}' || c == ']') && --depth == 0) return;
  }
}

bool JsonChunks::member_next(std::string& key) {
  ws_skip();
  char c = byte(p_);
  if (!first_member_) {
    if (c == ',') ++p_, ws_skip(), c = byte(p_);
    else if (c != '}') fail(p_, "',' or '}' was expected after a member of the top-level object");
  }
  if (c == '}') {
    ++p_;
    ws_skip();
    if (p_ != size_) fail(p_, "the file has more after its top-level object");
    return false;
  }
  first_member_ = false;
  if (c != '"') fail(p_, "a key (a string) was expected in the top-level object");
  const size_t begin = p_;
  string_skip();
  key.assign(data_ + begin + 1, p_ - begin - 2);
  ws_skip();
  if (byte(p_) != ':') fail(p_, "':' was expected after the key \"" + key + "\"");
  ++p_;
  ws_skip();
  return true;
}

JsonSpan JsonChunks::value() {
  const size_t begin = p_;
  value_skip();
  return {data_ + begin, p_ - begin, mapped_ - begin, begin, 0};
}

bool JsonChunks::array_begin() {
  if (byte(p_) != '[') return false;
  delimiter_ = p_++;
  next_index_ = 0;
  array_done_ = false;
  ws_skip();
  if (byte(p_) == ']') ++p_, array_done_ = true;  // empty
  return true;
}

bool JsonChunks::array_chunk(JsonSpan& out) {
  if (array_done_) return false;
  const size_t begin = delimiter_;
  release_before(begin);
  size_t count = 0;
  for (;;) {
    value_skip();
    ++count;
    ws_skip();
    const char c = byte(p_);
    if (c != ',' && c != ']') fail(p_, "',' or ']' was expected after an element of a list");
    delimiter_ = p_++;
    if (c == ']') {
      array_done_ = true;
      break;
    }
    if (p_ - begin >= kChunk) break;
  }
  data_[begin] = '[';
  data_[delimiter_] = ']';
  out = {data_ + begin, delimiter_ - begin + 1, mapped_ - begin, begin, next_index_};
  next_index_ += count;
  return true;
}

void JsonChunks::release_before(size_t offset) {
  const size_t end = offset / kPage * kPage;
  if (end <= released_) return;
  ::madvise(data_ + released_, end - released_, MADV_DONTNEED);  // never read again: zeros if it were
  released_ = end;
}

} // namespace fastloop
