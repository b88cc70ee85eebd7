// libFuzzer target for the archive inside a checkpoint: the input's header size and CRC-32 are fixed up to
// match its payload, so every mutation reaches LibTorch's zip and pickle readers through Checkpoint::read,
// which must turn whatever they throw into InputError. LibTorch is not instrumented: its out-of-bounds
// reads would only show as crashes. Slow (LibTorch imports a module per input): run it for a time budget.
#include "fastloop/core/errors.h"
#include "fastloop/train/checkpoint.h"
#include "fuzz_files.h"

#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fastloop::fuzz::ScratchDir scratch;
  if (size < 24) return 0;
  std::vector<uint8_t> fixed(data, data + size);
  const uint64_t payload = size - 24;  // bytes after the 24-byte header
  for (int i = 0; i < 8; ++i) fixed[8 + i] = static_cast<uint8_t>(payload >> (8 * i));
  const uint32_t crc = static_cast<uint32_t>(crc32(0L, fixed.data() + 24, static_cast<uInt>(payload)));
  for (int i = 0; i < 8; ++i) fixed[16 + i] = i < 4 ? static_cast<uint8_t>(crc >> (8 * i)) : 0;
  const std::string path = scratch / "last.ckpt";
  fastloop::fuzz::write_file(path, fixed.data(), fixed.size());
  try {
    const fastloop::Checkpoint ckpt = fastloop::Checkpoint::read(path);
    (void)ckpt.config_json().size();
  } catch (const fastloop::InputError&) {
  }
  return 0;
}
