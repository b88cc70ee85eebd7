// TFRecord framing and the few protobuf fields of a scalar `Event` (see tensorboard.h for why by hand).
#include "fastloop/io/tensorboard.h"

#include "fastloop/core/errors.h"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <filesystem>

namespace fastloop {

namespace {

// Protobuf wire types and the field numbers used (event.proto, summary.proto).
constexpr uint32_t kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;
constexpr uint32_t kEventWallTime = 1, kEventStep = 2, kEventFileVersion = 3, kEventSummary = 5, kEventSessionLog = 7;
constexpr uint32_t kSummaryValue = 1, kValueTag = 1, kValueSimpleValue = 2;
constexpr uint32_t kSessionLogStatus = 1, kSessionLogStart = 1;

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) out += static_cast<char>((v & 0x7f) | 0x80), v >>= 7;
  out += static_cast<char>(v);
}
void put_key(std::string& out, uint32_t field, uint32_t wire) { put_varint(out, (field << 3) | wire); }
template <typename T>
void put_fixed(std::string& out, T v) {  // little-endian, as on every machine this builds for
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  out.append(bytes, sizeof(T));
}
void put_bytes(std::string& out, uint32_t field, const std::string& bytes) {
  put_key(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out += bytes;
}

std::string event_head(double wall_time, int64_t step) {
  std::string event;
  put_key(event, kEventWallTime, kFixed64);
  put_fixed(event, wall_time);
  put_key(event, kEventStep, kVarint);
  put_varint(event, static_cast<uint64_t>(step));  // negative int64: ten bytes, two's complement
  return event;
}

double wall_time_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::array<uint32_t, 256> crc32c_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = c & 1 ? 0x82f63b78u ^ (c >> 1) : c >> 1;  // reflected Castagnoli polynomial
    table[i] = c;
  }
  return table;
}

std::string new_event_file(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error || !std::filesystem::is_directory(dir))
    throw InputError("--tensorboard " + dir + ": cannot create the folder" + (error ? ": " + error.message() : "") +
                     "; give a writable folder");
  char host[256] = "localhost";
  ::gethostname(host, sizeof(host) - 1);
  const auto seconds = static_cast<long long>(wall_time_now());
  const std::string stem = dir + "/events.out.tfevents." + std::to_string(seconds) + "." + host + "." +
                           std::to_string(::getpid()) + ".";
  for (int n = 0;; ++n)  // a new file per start, also for two starts in one second
    if (!std::filesystem::exists(stem + std::to_string(n))) return stem + std::to_string(n);
}

}  // namespace

uint32_t crc32c(const void* data, size_t size) {
  static const std::array<uint32_t, 256> table = crc32c_table();
  uint32_t crc = 0xffffffffu;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

uint32_t crc32c_masked(const void* data, size_t size) {
  const uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string tfrecord_frame(const std::string& data) {
  std::string record;
  put_fixed(record, static_cast<uint64_t>(data.size()));
  put_fixed(record, crc32c_masked(record.data(), 8));
  record += data;
  put_fixed(record, crc32c_masked(data.data(), data.size()));
  return record;
}

std::string tensorboard_scalar_event(double wall_time, int64_t step, const std::string& tag, float value) {
  std::string summary_value;
  put_bytes(summary_value, kValueTag, tag);
  put_key(summary_value, kValueSimpleValue, kFixed32);
  put_fixed(summary_value, value);
  std::string summary;
  put_bytes(summary, kSummaryValue, summary_value);
  std::string event = event_head(wall_time, step);
  put_bytes(event, kEventSummary, summary);
  return event;
}

TensorBoardWriter::TensorBoardWriter(const std::string& dir, int64_t start_step) : path_(new_event_file(dir)) {
  out_.open(path_, std::ios::binary);
  if (!out_) throw InputError("--tensorboard " + dir + ": cannot create " + path_ + "; give a writable folder");
  std::string version = event_head(wall_time_now(), 0);
  put_bytes(version, kEventFileVersion, "brain.Event:2");
  write(version);
  // SessionLog START at the first step of this start: TensorBoard discards older points from this step on.
  std::string session_log;
  put_key(session_log, kSessionLogStatus, kVarint);
  put_varint(session_log, kSessionLogStart);
  std::string start = event_head(wall_time_now(), start_step);
  put_bytes(start, kEventSessionLog, session_log);
  write(start);
  flush();
}

void TensorBoardWriter::scalar(const std::string& tag, double value, int64_t step) {
  write(tensorboard_scalar_event(wall_time_now(), step, tag, static_cast<float>(value)));
}

void TensorBoardWriter::flush() { out_.flush(); }

void TensorBoardWriter::write(const std::string& event) { out_ << tfrecord_frame(event); }

} // namespace fastloop
