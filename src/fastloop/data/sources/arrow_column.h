// One Arrow binary column (a Parquet row group's image bytes, a chunk of a Hugging Face dataset's Arrow
// table) taken over through the C data interface (arrow_c_data.h): its buffers are read in place, and the
// producer's release callback runs when the last owner lets go.
#pragma once

#include "fastloop/data/sources/arrow_c_data.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace fastloop {

class ArrowBinaryColumn {
 public:
  /// Takes `array` over (its release moves here: the producer's struct is left released) as a column of
  /// type `format`: "z" (binary, int32 offsets) or "Z" (large_binary, int64 offsets). `name` says where it
  /// comes from in messages ("train-0.parquet, row group 3"). Throws InputError naming it for another
  /// format, a layout that is not a binary array's, or a null value (an image cell with no bytes). The
  /// array is released when the throw leaves.
  ArrowBinaryColumn(ArrowArray&& array, const std::string& format, std::string name);
  ~ArrowBinaryColumn();
  ArrowBinaryColumn(ArrowBinaryColumn&& other) noexcept;
  ArrowBinaryColumn& operator=(ArrowBinaryColumn&&) = delete;
  ArrowBinaryColumn(const ArrowBinaryColumn&) = delete;
  ArrowBinaryColumn& operator=(const ArrowBinaryColumn&) = delete;

  int64_t size() const { return array_.length; }
  /// Bytes of all its values together.
  int64_t data_size() const;
  /// The bytes of row `i` (in [0, size())), a view into the producer's buffer, valid while this lives.
  std::string_view value(int64_t i) const;
  const std::string& name() const { return name_; }

 private:
  void check_values() const;

  ArrowArray array_{};
  bool large_ = false;
  std::string name_;
};

} // namespace fastloop
