// Tar reader and writer (see tar.h for why hand-written). The reader follows Python's tarfile in what
// it accepts (signed or unsigned checksums, octal fields padded with spaces or NULs, base-256 sizes,
// the same member types carrying data) but is stricter about what it rejects: a header that fails its
// checksum ends tarfile's listing silently, here it is an error, since a shard silently cut short would
// train on less data than it has.
#include "fastloop/data/sources/tar.h"

#include "fastloop/core/errors.h"

#include <cerrno>
#include <cstring>
#include <optional>

namespace fastloop {
namespace {

constexpr int64_t kBlock = 512;                 // bytes per tar block
constexpr int64_t kMaxNameBytes = 64 * 1024;    // a longer pax path or GNU long name is not a file name
constexpr int64_t kMaxOctal11 = (int64_t{1} << 33) - 1;  // largest size 11 octal digits hold

// Header field offsets and widths (POSIX ustar).
struct Field {
  int offset, width;
};
constexpr Field kName{0, 100}, kMode{100, 8}, kUid{108, 8}, kGid{116, 8}, kSize{124, 12}, kMtime{136, 12},
    kChksum{148, 8}, kType{156, 1}, kMagic{257, 6}, kVersion{263, 2}, kDevMajor{329, 8}, kDevMinor{337, 8},
    kPrefix{345, 155};

[[noreturn]] void fail_at(const std::string& path, int64_t offset, const std::string& what) {
  throw InputError(path + ": tar header at byte " + std::to_string(offset) + ": " + what +
                   "; the file is not a valid tar archive (re-create it, e.g. with `fastloop pack`)");
}

std::string_view field(const char* header, Field f) { return {header + f.offset, static_cast<size_t>(f.width)}; }

// Text up to the first NUL.
std::string text_field(std::string_view raw) { return std::string(raw.substr(0, raw.find('\0'))); }

// An octal number as tar writes it (digits padded with spaces or NULs; empty is 0), or base-256 when the
// first byte has its high bit set (GNU, for sizes of 8 GiB and more). nullopt when malformed.
std::optional<int64_t> parse_number(std::string_view raw) {
  const auto first = static_cast<unsigned char>(raw[0]);
  if (first == 0x80 || first == 0xff) {
    if (first == 0xff) return std::nullopt;  // negative: no size or time here may be
    int64_t v = 0;
    for (size_t i = 1; i < raw.size(); ++i) {
      if (v > (INT64_MAX >> 8)) return std::nullopt;
      v = (v << 8) | static_cast<unsigned char>(raw[i]);
    }
    return v;
  }
  raw = raw.substr(0, raw.find('\0'));
  while (!raw.empty() && raw.front() == ' ') raw.remove_prefix(1);
  while (!raw.empty() && raw.back() == ' ') raw.remove_suffix(1);
  int64_t v = 0;
  for (char c : raw) {
    if (c < '0' || c > '7') return std::nullopt;
    v = v * 8 + (c - '0');  // at most 12 digits: no overflow
  }
  return v;
}

bool all_zero(const char* block, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (block[i] != 0) return false;
  return true;
}

// tar's checksum treats the checksum field as spaces; old writers summed signed chars, so both count.
bool checksum_ok(const char* header, int64_t stored) {
  int64_t unsigned_sum = 0, signed_sum = 0;
  for (int i = 0; i < kBlock; ++i) {
    const bool in_field = i >= kChksum.offset && i < kChksum.offset + kChksum.width;
    unsigned_sum += in_field ? ' ' : static_cast<unsigned char>(header[i]);
    signed_sum += in_field ? ' ' : static_cast<signed char>(header[i]);
  }
  return stored == unsigned_sum || stored == signed_sum;
}

// What a pax extended header overrides for the next member ("%d %s=%s\n" records).
struct PaxOverrides {
  std::optional<std::string> path;
  std::optional<int64_t> size;
};

void parse_pax(std::string_view data, PaxOverrides& out, const std::string& path, int64_t at) {
  while (!data.empty() && data.front() != '\0') {
    size_t digits = 0;
    int64_t length = 0;
    while (digits < data.size() && digits < 19 && data[digits] >= '0' && data[digits] <= '9')
      length = length * 10 + (data[digits++] - '0');
    if (digits == 0 || length <= static_cast<int64_t>(digits) + 3 || length > static_cast<int64_t>(data.size()) ||
        data[digits] != ' ' || data[length - 1] != '\n')
      fail_at(path, at, "malformed pax extended header record");
    const std::string_view record = data.substr(digits + 1, length - digits - 2);  // "key=value"
    const size_t eq = record.find('=');
    if (eq == std::string_view::npos || eq == 0) fail_at(path, at, "pax record without 'key=value'");
    const std::string_view key = record.substr(0, eq), value = record.substr(eq + 1);
    if (key == "path") {
      out.path = std::string(value);
    } else if (key == "size") {
      int64_t v = 0;
      if (value.empty() || value.size() > 18) fail_at(path, at, "pax size is not a decimal number");
      for (char c : value) {
        if (c < '0' || c > '9') fail_at(path, at, "pax size is not a decimal number");
        v = v * 10 + (c - '0');
      }
      out.size = v;
    }
    data.remove_prefix(static_cast<size_t>(length));
  }
}

// Member types whose size counts data blocks that follow (Python's tarfile: regular files and unknown
// types; links, directories, devices and FIFOs have none whatever their size field says).
bool has_data(char type) { return std::strchr("123456", type) == nullptr || type == '\0'; }

int64_t padded(int64_t size) { return (size + kBlock - 1) / kBlock * kBlock; }

} // namespace

std::vector<TarMember> tar_list(std::string_view archive, const std::string& path, bool* ended) {
  std::vector<TarMember> members;
  const auto total = static_cast<int64_t>(archive.size());
  PaxOverrides pending;
  bool has_pending = false;  // a pax header or GNU long name waits for its member
  int64_t pos = 0;
  if (ended) *ended = false;
  while (pos < total) {
    const int64_t left = total - pos;
    const char* header = archive.data() + pos;
    if (ended && left < kBlock) return members;  // the rest of the header is still to come
    if (all_zero(header, std::min(left, kBlock))) {  // end-of-archive block (or zero padding)
      if (ended) *ended = true;
      return members;
    }
    if (left < kBlock) fail_at(path, pos, "truncated: " + std::to_string(left) + " bytes of a 512-byte header");
    const auto stored_sum = parse_number(field(header, kChksum));
    if (!stored_sum || !checksum_ok(header, *stored_sum)) fail_at(path, pos, "checksum mismatch");
    auto size = parse_number(field(header, kSize));
    if (!size) fail_at(path, pos, "size field is not an octal number");
    for (Field f : {kMode, kUid, kGid, kMtime})
      if (!parse_number(field(header, f))) fail_at(path, pos, "numeric field at byte " + std::to_string(f.offset) + " is not octal");
    const char type = header[kType.offset];
    const bool pax = type == 'x' || type == 'X' || type == 'g';
    if (!pax && type != 'L' && pending.size) size = *pending.size;
    const int64_t data_at = pos + kBlock;
    const int64_t data_size = has_data(type) ? *size : 0;
    if (ended && data_size > total - data_at) return members;  // the member's data is still to come
    if (data_size > total - data_at) {
      fail_at(path, pos, "member of " + std::to_string(data_size) + " bytes runs past the end of the file (" +
                             std::to_string(total - data_at) + " bytes left): the file is truncated");
    }
    const std::string_view data = archive.substr(static_cast<size_t>(data_at), static_cast<size_t>(data_size));
    if (type == 'x' || type == 'X') {
      parse_pax(data, pending, path, pos);
      has_pending = true;
    } else if (type == 'L') {
      if (data_size > kMaxNameBytes) fail_at(path, pos, "GNU long name of " + std::to_string(data_size) + " bytes");
      pending.path = text_field(data);
      has_pending = true;
    } else if (type != 'g' && type != 'K') {  // a member (a global pax header or long link name is skipped)
      std::string name = text_field(field(header, kName));
      if (field(header, kMagic) == std::string_view("ustar\0", 6)) {  // POSIX: the prefix holds the leading path
        const std::string prefix = text_field(field(header, kPrefix));
        if (!prefix.empty()) name = prefix + "/" + name;
      }
      if (pending.path) name = *pending.path;
      if (pending.path && pending.path->size() > static_cast<size_t>(kMaxNameBytes)) fail_at(path, pos, "pax path too long");
      const bool regular = type == '0' || type == '7' || (type == '\0' && (name.empty() || name.back() != '/'));
      if (regular) members.push_back({std::move(name), data_at, data_size});
      pending = {};
      has_pending = false;
    }
    pos = data_at + padded(data_size);
  }
  if (ended) return members;  // more may come
  if (has_pending) fail_at(path, pos, "a pax header or GNU long name is not followed by its member");
  return members;
}

TarWriter::TarWriter(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "wb");
  if (!file_) throw InputError(path_ + ": cannot create (" + std::strerror(errno) + ")");
}

TarWriter::~TarWriter() {
  if (file_) std::fclose(file_);
}

void TarWriter::write(const void* data, size_t size) {
  if (size > 0 && std::fwrite(data, 1, size, file_) != size)
    throw InputError(path_ + ": cannot write (" + std::strerror(errno) + ")");
  bytes_ += static_cast<int64_t>(size);
}

void TarWriter::add(const std::string& name, std::string_view data) {
  if (!file_) throw InputError(path_ + ": add() after close()");
  std::string prefix, base = name;
  if (name.size() > static_cast<size_t>(kName.width)) {  // ustar: split at a '/' into prefix and name
    const size_t cut = name.rfind('/', static_cast<size_t>(kPrefix.width));
    if (cut == std::string::npos || name.size() - cut - 1 > static_cast<size_t>(kName.width) || cut == 0)
      throw InputError(path_ + ": member name '" + name + "' is too long for a ustar header (255 bytes, split at a '/')");
    prefix = name.substr(0, cut);
    base = name.substr(cut + 1);
  }
  if (static_cast<int64_t>(data.size()) > kMaxOctal11)
    throw InputError(path_ + ": member '" + name + "' is 8 GiB or larger, more than a ustar header holds");
  char header[kBlock] = {};
  auto put = [&](Field f, const std::string& s) { std::memcpy(header + f.offset, s.data(), std::min<size_t>(s.size(), f.width)); };
  auto octal = [](int64_t v, int digits) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "%0*llo", digits, static_cast<unsigned long long>(v));
    return std::string(buf);
  };
  put(kName, base);
  put(kMode, octal(0644, 7));
  put(kUid, octal(0, 7));
  put(kGid, octal(0, 7));
  put(kSize, octal(static_cast<int64_t>(data.size()), 11));
  put(kMtime, octal(0, 11));
  header[kType.offset] = '0';
  std::memcpy(header + kMagic.offset, "ustar\0", 6);
  std::memcpy(header + kVersion.offset, "00", 2);
  put(kDevMajor, octal(0, 7));
  put(kDevMinor, octal(0, 7));
  put(kPrefix, prefix);
  std::memset(header + kChksum.offset, ' ', kChksum.width);
  int64_t sum = 0;
  for (char c : header) sum += static_cast<unsigned char>(c);
  std::string chksum = octal(sum, 6);
  chksum.push_back('\0');  // "%06o\0 " as GNU tar and Python write it; the last space stays
  put(kChksum, chksum);
  write(header, kBlock);
  write(data.data(), data.size());
  static const char zeros[kBlock] = {};
  write(zeros, static_cast<size_t>(padded(static_cast<int64_t>(data.size())) - static_cast<int64_t>(data.size())));
}

void TarWriter::close() {
  if (!file_) return;
  static const char zeros[2 * kBlock] = {};
  write(zeros, sizeof(zeros));  // end of archive: two zero blocks
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) throw InputError(path_ + ": cannot write (" + std::strerror(errno) + ")");
}

bool tar_member_key(const std::string& name, std::string& key, std::string& ext) {
  const size_t slash = name.rfind('/');
  const size_t dot = name.find('.', slash == std::string::npos ? 0 : slash + 1);
  if (dot == std::string::npos || dot == 0 || (slash != std::string::npos && dot == slash + 1)) return false;
  key = name.substr(0, dot);
  ext = name.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return true;
}

} // namespace fastloop
