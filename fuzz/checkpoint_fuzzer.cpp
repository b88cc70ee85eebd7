// libFuzzer target for checkpoint files (Checkpoint::read) as they are on disk: any file must read or
// throw InputError. Mutations mostly stop at fastloop's own layer (the FLCKPT01 header, size, CRC-32);
// checkpoint_archive_fuzzer.cpp fixes size and CRC up to fuzz the archive behind them.
// Not fuzzed: Checkpoint::restore (loading into a model), which only runs on an archive read() accepted.
#include "fastloop/core/errors.h"
#include "fastloop/train/checkpoint.h"
#include "fuzz_files.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fastloop::fuzz::ScratchDir scratch;
  const std::string path = scratch / "last.ckpt";
  fastloop::fuzz::write_file(path, data, size);
  try {
    const fastloop::Checkpoint ckpt = fastloop::Checkpoint::read(path);
    (void)ckpt.config_json().size();
  } catch (const fastloop::InputError&) {
  }
  return 0;
}
