// libFuzzer target for checkpoint files (Checkpoint::read): any file must read or throw InputError.
// Each input is tried twice: as it is (the FLCKPT01 header, size and CRC-32 checks), and with the size
// and CRC fixed up to match the payload, so mutations reach the archive reader behind the CRC.
// Not fuzzed: Checkpoint::restore (loading into a model), which only runs on an archive that read()
// accepted, and LibTorch's own code is not instrumented (its crashes would still show as a SEGV).
#include "fastloop/core/errors.h"
#include "fastloop/train/checkpoint.h"
#include "fuzz_files.h"

#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

void read_one(const std::string& path, const uint8_t* data, size_t size) {
  fastloop::fuzz::write_file(path, data, size);
  try {
    const fastloop::Checkpoint ckpt = fastloop::Checkpoint::read(path);
    (void)ckpt.config_json().size();
  } catch (const fastloop::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fastloop::fuzz::ScratchDir scratch;
  const std::string path = scratch / "last.ckpt";
  read_one(path, data, size);
  if (size < 24) return 0;
  std::vector<uint8_t> fixed(data, data + size);
  const uint64_t payload = size - 24;
  for (int i = 0; i < 8; ++i) fixed[8 + i] = static_cast<uint8_t>(payload >> (8 * i));
  const uint32_t crc = static_cast<uint32_t>(crc32(0L, fixed.data() + 24, static_cast<uInt>(payload)));
  for (int i = 0; i < 8; ++i) fixed[16 + i] = i < 4 ? static_cast<uint8_t>(crc >> (8 * i)) : 0;
  read_one(path, fixed.data(), fixed.size());
  return 0;
}
