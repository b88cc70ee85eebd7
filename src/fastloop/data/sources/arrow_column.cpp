#include "fastloop/data/sources/arrow_column.h"

#include "fastloop/core/errors.h"

#include <utility>

namespace fastloop {

namespace {

void release(ArrowArray& array) {
  if (array.release != nullptr) array.release(&array);
  array.release = nullptr;
}

bool valid_bit(const void* validity, int64_t i) {
  return validity == nullptr || (static_cast<const uint8_t*>(validity)[i / 8] >> (i % 8)) & 1;
}

template <typename Offset>
int64_t offset_at(const void* offsets, int64_t i) {
  return static_cast<int64_t>(static_cast<const Offset*>(offsets)[i]);
}

}  // namespace

ArrowBinaryColumn::ArrowBinaryColumn(ArrowArray&& array, const std::string& format, std::string name)
    : array_(array), large_(format == "Z"), name_(std::move(name)) {
  array.release = nullptr;  // ours now
  try {
    if (format != "z" && format != "Z")
      throw InputError(name_ + ": an Arrow column of format '" + format +
                       "' where image bytes (binary or large_binary) were expected");
    if (array_.n_buffers != 3 || array_.n_children != 0 || array_.length < 0 || array_.offset < 0 ||
        (array_.length > 0 && (array_.buffers == nullptr || array_.buffers[1] == nullptr)))
      throw InputError(name_ + ": the Arrow binary column is malformed (" + std::to_string(array_.n_buffers) +
                       " buffers, " + std::to_string(array_.n_children) + " children)");
    check_values();
  } catch (...) {
    release(array_);
    throw;
  }
}

ArrowBinaryColumn::~ArrowBinaryColumn() { release(array_); }

ArrowBinaryColumn::ArrowBinaryColumn(ArrowBinaryColumn&& other) noexcept
    : array_(other.array_), large_(other.large_), name_(std::move(other.name_)) {
  other.array_.release = nullptr;
}

// Every row has bytes (no null), and its offsets run forward: a view never reaches outside the buffer.
void ArrowBinaryColumn::check_values() const {
  if (array_.length == 0) return;
  const void* validity = array_.buffers[0];
  const void* offsets = array_.buffers[1];
  int64_t previous = large_ ? offset_at<int64_t>(offsets, array_.offset) : offset_at<int32_t>(offsets, array_.offset);
  if (previous < 0) throw InputError(name_ + ": the Arrow binary column's offsets are malformed (negative)");
  for (int64_t i = 0; i < array_.length; ++i) {
    const int64_t at = array_.offset + i;
    if (array_.null_count != 0 && !valid_bit(validity, at))
      throw InputError(name_ + ", row " + std::to_string(i) +
                       ": the image cell is null (no bytes); drop the row or store the image's encoded file there");
    const int64_t next = large_ ? offset_at<int64_t>(offsets, at + 1) : offset_at<int32_t>(offsets, at + 1);
    if (next < previous) throw InputError(name_ + ", row " + std::to_string(i) + ": the Arrow offsets run backwards");
    previous = next;
  }
  if (previous > 0 && array_.buffers[2] == nullptr)
    throw InputError(name_ + ": the Arrow binary column has offsets but no data buffer");
}

int64_t ArrowBinaryColumn::data_size() const {
  if (array_.length == 0) return 0;
  const void* offsets = array_.buffers[1];
  const int64_t first = array_.offset, last = array_.offset + array_.length;
  return large_ ? offset_at<int64_t>(offsets, last) - offset_at<int64_t>(offsets, first)
                : offset_at<int32_t>(offsets, last) - offset_at<int32_t>(offsets, first);
}

std::string_view ArrowBinaryColumn::value(int64_t i) const {
  const int64_t at = array_.offset + i;
  const void* offsets = array_.buffers[1];
  const int64_t begin = large_ ? offset_at<int64_t>(offsets, at) : offset_at<int32_t>(offsets, at);
  const int64_t end = large_ ? offset_at<int64_t>(offsets, at + 1) : offset_at<int32_t>(offsets, at + 1);
  if (begin == end) return {};
  return {static_cast<const char*>(array_.buffers[2]) + begin, static_cast<size_t>(end - begin)};
}

} // namespace fastloop
