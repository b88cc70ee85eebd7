// safetensors parsing and writing. The parser treats every byte as hostile: it bounds the header length
// before allocating, checks UTF-8 and JSON, and validates every tensor's dtype, shape and byte range
// against the buffer before anyone dereferences it. Each violation is one InputError.
#include "fastloop/io/safetensors.h"

#include "fastloop/core/errors.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace fastloop {

// Tensor bytes are written and read as the host holds them; the format is little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors I/O assumes a little-endian host");

namespace {

constexpr size_t kLengthBytes = 8;  // the u64 header length in front of the JSON

/// A value for an error message: quoted and cut, so a hostile 100 MB name cannot flood the terminal.
std::string name_shown(const std::string& s) {
  constexpr size_t kMax = 80;
  std::string out = "'";
  out.append(s, 0, std::min(s.size(), kMax));
  out += s.size() > kMax ? "...'" : "'";
  return out;
}

std::string shown(const nlohmann::json& j) {
  std::string s = j.dump();
  return s.size() > 80 ? s.substr(0, 80) + "..." : s;
}

/// Offset of the first byte that is not valid UTF-8 (RFC 3629: no overlongs, surrogates or > U+10FFFF),
/// or `size` when all are valid.
size_t utf8_invalid_at(const uint8_t* s, size_t size) {
  size_t i = 0;
  while (i < size) {
    const uint8_t c = s[i];
    size_t extra = 0;
    uint8_t lo = 0x80, hi = 0xBF;  // range of the first continuation byte
    if (c < 0x80) { ++i; continue; }
    if (c >= 0xC2 && c <= 0xDF) extra = 1;
    else if (c == 0xE0) { extra = 2; lo = 0xA0; }
    else if (c >= 0xE1 && c <= 0xEC) extra = 2;
    else if (c == 0xED) { extra = 2; hi = 0x9F; }
    else if (c >= 0xEE && c <= 0xEF) extra = 2;
    else if (c == 0xF0) { extra = 3; lo = 0x90; }
    else if (c >= 0xF1 && c <= 0xF3) extra = 3;
    else if (c == 0xF4) { extra = 3; hi = 0x8F; }
    else return i;
    if (size - i <= extra) return i;
    if (s[i + 1] < lo || s[i + 1] > hi) return i;
    for (size_t k = 2; k <= extra; ++k)
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
    i += extra + 1;
  }
  return size;
}

/// A non-negative JSON integer that fits `limit`, or an InputError saying which field of which tensor.
uint64_t unsigned_field(const nlohmann::json& j, uint64_t limit, const std::string& where) {
  if (!j.is_number_unsigned()) throw InputError(where + " must be a non-negative integer, not " + shown(j));
  const uint64_t v = j.get<uint64_t>();
  if (v > limit) throw InputError(where + " = " + std::to_string(v) + " is larger than " + std::to_string(limit));
  return v;
}

struct Range {
  uint64_t begin, end;
  size_t index;
};

}  // namespace

size_t safetensors_dtype_size(const std::string& dtype) {
  static const std::map<std::string, size_t> kSizes = {{"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2},
                                                       {"I64", 8}, {"I32", 4}, {"I16", 2}, {"I8", 1},
                                                       {"U8", 1},  {"BOOL", 1}};
  auto it = kSizes.find(dtype);
  return it == kSizes.end() ? 0 : it->second;
}

const SafetensorsTensor* SafetensorsHeader::find(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

namespace {

/// The JSON header of the file in [data, data + size): its length bounded by the buffer and
/// kSafetensorsMaxHeaderBytes, its bytes UTF-8, its text a JSON object. Sets `header_len` (bytes).
nlohmann::json safetensors_header_json(const uint8_t* data, size_t size, const std::string& file,
                                       uint64_t& header_len) {
  if (size < kLengthBytes)
    throw InputError(file + "is " + std::to_string(size) + " bytes, too short for the 8-byte header length");
  header_len = 0;
  for (size_t i = 0; i < kLengthBytes; ++i) header_len |= static_cast<uint64_t>(data[i]) << (8 * i);
  if (header_len > size - kLengthBytes)
    throw InputError(file + "header length " + std::to_string(header_len) + " is larger than the " +
                     std::to_string(size - kLengthBytes) + " bytes after it (truncated or not safetensors)");
  if (header_len > kSafetensorsMaxHeaderBytes)
    throw InputError(file + "header length " + std::to_string(header_len) + " exceeds the " +
                     std::to_string(kSafetensorsMaxHeaderBytes) + "-byte maximum");
  const uint8_t* text = data + kLengthBytes;
  if (header_len == 0 || text[0] != '{')
    throw InputError(file + "header must be a JSON object starting with '{'");
  const size_t bad = utf8_invalid_at(text, header_len);
  if (bad != header_len)
    throw InputError(file + "header is not valid UTF-8 at byte " + std::to_string(kLengthBytes + bad) +
                     " (value 0x" + [&] { char b[3]; std::snprintf(b, 3, "%02X", text[bad]); return std::string(b); }() + ")");
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text, text + header_len);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file + "header is not valid JSON: " + e.what());
  }
  if (!root.is_object()) throw InputError(file + "header is not a JSON object");
  return root;
}

/// The "__metadata__" entry: an object of strings.
SafetensorsMetadata safetensors_metadata_of(const nlohmann::json& entry, const std::string& file) {
  if (!entry.is_object()) throw InputError(file + "__metadata__ must be an object of strings, not " + shown(entry));
  SafetensorsMetadata metadata;
  for (const auto& [key, value] : entry.items()) {
    if (!value.is_string())
      throw InputError(file + "__metadata__ " + name_shown(key) + " must be a string, not " + shown(value));
    metadata[key] = value.get<std::string>();
  }
  return metadata;
}

/// One tensor's entry, checked: dtype known, shape of non-negative dims whose product fits 64 bits,
/// data_offsets [begin, end] inside the data section of `data_size` bytes holding exactly its bytes.
/// `data_begin` is the data section's offset in the file.
SafetensorsTensor safetensors_tensor_of(const std::string& name, const nlohmann::json& entry, const std::string& file,
                                        uint64_t data_begin, uint64_t data_size) {
  const std::string where = file + "tensor " + name_shown(name);
  if (!entry.is_object()) throw InputError(where + " must be an object, not " + shown(entry));
  for (const char* field : {"dtype", "shape", "data_offsets"})
    if (!entry.contains(field)) throw InputError(where + " has no \"" + field + "\"");
  SafetensorsTensor t;
  t.name = name;
  const auto& dtype = entry.at("dtype");
  if (!dtype.is_string()) throw InputError(where + ": dtype must be a string, not " + shown(dtype));
  t.dtype = dtype.get<std::string>();
  const size_t element = safetensors_dtype_size(t.dtype);
  if (element == 0)
    throw InputError(where + ": unknown dtype " + name_shown(t.dtype) + " (known: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL)");
  const auto& shape = entry.at("shape");
  if (!shape.is_array()) throw InputError(where + ": shape must be an array, not " + shown(shape));
  uint64_t numel = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    const uint64_t dim = unsigned_field(shape[d], INT64_MAX, where + ": shape[" + std::to_string(d) + "]");
    if (__builtin_mul_overflow(numel, dim, &numel) || numel > static_cast<uint64_t>(INT64_MAX))
      throw InputError(where + ": shape " + shown(shape) + " has more elements than fit in 64 bits");
    t.shape.push_back(static_cast<int64_t>(dim));
  }
  const auto& offsets = entry.at("data_offsets");
  if (!offsets.is_array() || offsets.size() != 2)
    throw InputError(where + ": data_offsets must be [begin, end], not " + shown(offsets));
  const uint64_t begin = unsigned_field(offsets[0], data_size, where + ": data_offsets begin");
  const uint64_t end = unsigned_field(offsets[1], data_size, where + ": data_offsets end");
  if (begin > end)
    throw InputError(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                     "] begin after end");
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<uint64_t>(element), &nbytes) || nbytes != end - begin)
    throw InputError(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] hold " +
                     std::to_string(end - begin) + " bytes, but " + t.dtype + " " + shown(shape) + " needs " +
                     std::to_string(numel) + " x " + std::to_string(element));
  t.offset = static_cast<size_t>(data_begin + begin);
  t.nbytes = static_cast<size_t>(nbytes);
  return t;
}

/// The reference implementation requires the ranges to tile the data section exactly; so do we, so that
/// every file fastloop accepts, Python's safetensors accepts too.
void safetensors_check_tiling(std::vector<Range> ranges, const std::vector<SafetensorsTensor>& tensors,
                              const std::string& file, uint64_t data_size) {
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  uint64_t covered = 0;
  const SafetensorsTensor* previous = nullptr;
  for (const auto& r : ranges) {
    const auto& t = tensors[r.index];
    if (r.begin < covered)
      throw InputError(file + "tensor " + name_shown(t.name) + ": data_offsets [" + std::to_string(r.begin) + ", " +
                       std::to_string(r.end) + "] overlap tensor " + name_shown(previous->name) + " ending at " +
                       std::to_string(covered));
    if (r.begin > covered)
      throw InputError(file + "tensor " + name_shown(t.name) + ": data_offsets begin " + std::to_string(r.begin) +
                       " leaves bytes [" + std::to_string(covered) + ", " + std::to_string(r.begin) +
                       ") of the data section unused");
    covered = r.end;
    previous = &t;
  }
  if (covered != data_size)
    throw InputError(file + "data section is " + std::to_string(data_size) + " bytes but the tensors cover " +
                     std::to_string(covered) + " (trailing bytes or a wrong header length)");
}

}  // namespace

SafetensorsHeader safetensors_parse(const uint8_t* data, size_t size, const std::string& name_for_errors) {
  const std::string file = name_for_errors + ": ";
  uint64_t header_len = 0;
  const nlohmann::json root = safetensors_header_json(data, size, file, header_len);
  const uint64_t data_begin = kLengthBytes + header_len;
  const uint64_t data_size = size - data_begin;
  SafetensorsHeader header;
  std::vector<Range> ranges;
  for (const auto& [name, entry] : root.items()) {
    if (name == "__metadata__") {
      header.metadata = safetensors_metadata_of(entry, file);
      continue;
    }
    SafetensorsTensor t = safetensors_tensor_of(name, entry, file, data_begin, data_size);
    const uint64_t begin = t.offset - data_begin;
    ranges.push_back({begin, begin + t.nbytes, header.tensors.size()});
    header.tensors.push_back(std::move(t));
  }
  safetensors_check_tiling(std::move(ranges), header.tensors, file, data_size);
  // Data order; an empty tensor sorts before the one starting at the same offset, as writers lay them out.
  std::stable_sort(header.tensors.begin(), header.tensors.end(), [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.nbytes < b.nbytes;
  });
  return header;
}

SafetensorsFile safetensors_read(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw InputError(path + ": cannot open safetensors file: " + std::strerror(errno));
  SafetensorsFile file;
  file.path = path;
  const std::streamoff size = in.tellg();
  if (size < 0) throw InputError(path + ": cannot read the size of the file");
  file.bytes.resize(static_cast<size_t>(size));
  in.seekg(0);
  if (size > 0 && !in.read(reinterpret_cast<char*>(file.bytes.data()), size))
    throw InputError(path + ": read failed after " + std::to_string(in.gcount()) + " of " + std::to_string(size) + " bytes");
  file.header = safetensors_parse(file.bytes.data(), file.bytes.size(), path);
  return file;
}

std::vector<uint8_t> safetensors_serialize(const std::vector<SafetensorsView>& tensors,
                                           const SafetensorsMetadata& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    const size_t element = safetensors_dtype_size(t.dtype);
    if (element == 0) throw InputError("safetensors: tensor " + name_shown(t.name) + " has unknown dtype " + name_shown(t.dtype));
    if (t.name == "__metadata__" || header.contains(t.name))
      throw InputError("safetensors: tensor name " + name_shown(t.name) + " is reserved or used twice");
    uint64_t numel = 1;
    for (int64_t d : t.shape) numel *= static_cast<uint64_t>(d);
    if (numel * element != t.nbytes)
      throw InputError("safetensors: tensor " + name_shown(t.name) + " has " + std::to_string(t.nbytes) +
                       " bytes, its shape needs " + std::to_string(numel * element));
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.nbytes}}};
    offset += t.nbytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned
  std::vector<uint8_t> out;
  out.reserve(kLengthBytes + text.size() + offset);
  for (size_t i = 0; i < kLengthBytes; ++i) out.push_back(static_cast<uint8_t>(uint64_t{text.size()} >> (8 * i)));
  out.insert(out.end(), text.begin(), text.end());
  for (const auto& t : tensors) {
    const auto* bytes = static_cast<const uint8_t*>(t.data);
    if (t.nbytes) out.insert(out.end(), bytes, bytes + t.nbytes);
  }
  return out;
}

void safetensors_write(const std::string& path, const std::vector<SafetensorsView>& tensors,
                       const SafetensorsMetadata& metadata) {
  const std::vector<uint8_t> image = safetensors_serialize(tensors, metadata);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError("cannot write " + tmp + ": " + std::strerror(errno) + " (is the directory writable?)");
  size_t done = 0;
  while (done < image.size()) {
    const ssize_t n = ::write(fd, image.data() + done, image.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      throw InputError("cannot write " + tmp + ": " + why + " (is the disk full?)");
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const std::string why = std::strerror(errno);
  if (::close(fd) != 0 || !synced) {
    ::unlink(tmp.c_str());
    throw InputError("cannot write " + tmp + ": fsync/close failed: " + why);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string rename_why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw InputError("cannot write " + path + ": renaming " + tmp + " to it failed: " + rename_why);
  }
}

} // namespace fastloop
