// libFuzzer target for the safetensors parser: any input must parse or throw InputError, never crash,
// leak or read out of bounds (built with -fsanitize=fuzzer,address,undefined by scripts/fuzz.sh).
#include "fastloop/core/errors.h"
#include "fastloop/io/safetensors.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const fastloop::SafetensorsHeader header = fastloop::safetensors_parse(data, size, "fuzz");
    // Touch every accepted byte range so ASan checks the parser's bounds promise.
    volatile uint8_t sink = 0;
    for (const auto& t : header.tensors)
      for (size_t i = 0; i < t.nbytes; ++i) sink = sink ^ data[t.offset + i];
    (void)sink;
  } catch (const fastloop::InputError&) {
  }
  return 0;
}
