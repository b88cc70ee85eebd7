// The safetensors file format (huggingface/safetensors): a parser hardened for untrusted files and an
// atomic writer. Standard library + nlohmann-json only, so the libFuzzer target builds without LibTorch;
// at::Tensor conversion lives in io/weights.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fastloop {

/// Header entries longer than this are refused before any allocation (bytes; the reference reader's bound).
constexpr uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;

/// `__metadata__`: a flat map of strings, as the format allows.
using SafetensorsMetadata = std::map<std::string, std::string>;

/// Bytes per element of a safetensors dtype name (F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL); 0 if unknown.
size_t safetensors_dtype_size(const std::string& dtype);

/// One tensor of a parsed file: where its little-endian bytes lie in the buffer that was parsed.
struct SafetensorsTensor {
  std::string name;
  std::string dtype;           // "F32", ...
  std::vector<int64_t> shape;
  size_t offset = 0;           // bytes from the start of the parsed buffer (not of the data section)
  size_t nbytes = 0;
};

/// A parsed header: tensors in file order of their data, plus the metadata.
struct SafetensorsHeader {
  std::vector<SafetensorsTensor> tensors;
  SafetensorsMetadata metadata;
  /// The tensor called `name`, or nullptr.
  const SafetensorsTensor* find(const std::string& name) const;
};

/// Parses and validates a whole safetensors file held in memory. Never reads outside [data, data + size).
/// Throws InputError naming `name_for_errors`, the tensor and the offending value on: a header length
/// larger than the file or kSafetensorsMaxHeaderBytes; a header that is not UTF-8, not a JSON object or
/// does not start with '{'; an unknown dtype; a missing or mistyped dtype/shape/data_offsets; negative
/// or overflowing shapes; offsets outside the data section, begin > end, overlapping ranges, a size
/// other than dtype size x elements; and - as the reference implementation - holes between tensors or
/// unused bytes at the end of the data section (data section must be covered exactly).
SafetensorsHeader safetensors_parse(const uint8_t* data, size_t size, const std::string& name_for_errors);

/// A file read whole into memory and parsed; `bytes` holds what `header` offsets point into.
struct SafetensorsFile {
  std::string path;
  std::vector<uint8_t> bytes;
  SafetensorsHeader header;
  const uint8_t* data(const SafetensorsTensor& tensor) const { return bytes.data() + tensor.offset; }
};

/// Reads and parses `path`; throws InputError when it cannot be read or is malformed.
SafetensorsFile safetensors_read(const std::string& path);

/// A tensor to write: its bytes (little-endian, contiguous, row-major) are not copied.
struct SafetensorsView {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t nbytes = 0;
};

/// The file image: 8-byte little-endian header length, the JSON header padded with spaces to a
/// multiple of 8, then each tensor's bytes in the given order. Throws InputError on a bad view
/// (unknown dtype, nbytes != dtype size x elements, duplicate or reserved name).
std::vector<uint8_t> safetensors_serialize(const std::vector<SafetensorsView>& tensors,
                                           const SafetensorsMetadata& metadata);

/// Writes safetensors_serialize() to `path` through a temporary file, fsync and rename, so `path` is
/// either the old file or the complete new one. Throws InputError ("cannot write …", naming the file)
/// when it cannot be written: `fastloop export --out` exits 2 for it, as every --out does.
void safetensors_write(const std::string& path, const std::vector<SafetensorsView>& tensors,
                       const SafetensorsMetadata& metadata);

} // namespace fastloop
