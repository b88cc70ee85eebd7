// TensorBoard event files of scalars (--tensorboard DIR), readable by TensorBoard, W&B and others that
// ingest tfevents. Hand-written: an event file is TFRecord framing (length, masked CRC-32C of the length,
// data, masked CRC-32C of the data) around protobuf `Event` messages, and for scalars only five protobuf
// fields are needed; no packaged C++ writer exists without protobuf code generation, which this build has
// no use for otherwise. Field numbers: tensorboard/compat/proto/event.proto and summary.proto.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

namespace fastloop {

/// CRC-32C (Castagnoli), as TFRecord framing uses it before masking.
uint32_t crc32c(const void* data, size_t size);
/// TFRecord's masked CRC: the CRC rotated right by 15 bits plus 0xa282ead8.
uint32_t crc32c_masked(const void* data, size_t size);

/// One TFRecord: uint64 length (little-endian), masked CRC of those 8 bytes, the data, masked CRC of the data.
std::string tfrecord_frame(const std::string& data);

/// An `Event{wall_time, step, summary{value{tag, simple_value}}}` as protobuf bytes.
std::string tensorboard_scalar_event(double wall_time, int64_t step, const std::string& tag, float value);

/// Appends scalar events to a new file `events.out.tfevents.<seconds>.<host>.<pid>.<n>` in a directory
/// (created when missing); the first record names the file version, the second marks a (re)start at
/// `start_step` so TensorBoard drops points a resumed run writes again. Buffered until flush().
class TensorBoardWriter {
 public:
  TensorBoardWriter(const std::string& dir, int64_t start_step);
  void scalar(const std::string& tag, double value, int64_t step);
  void flush();
  const std::string& path() const { return path_; }

 private:
  void write(const std::string& event);
  std::string path_;
  std::ofstream out_;
};

} // namespace fastloop
