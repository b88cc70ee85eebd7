// libFuzzer target for ModelInfo JSON (models/model_info.h) as checkpoints and TorchScript exports carry it
// and eval, predict and fastloop.model_info read it: any text parses or throws InputError, and what parses
// writes back to JSON that parses to the same fields.
#include "fastloop/core/errors.h"
#include "fastloop/models/model_info.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const fastloop::ModelInfo info = fastloop::model_info_from_json(text, "fuzz");
    const std::string again = fastloop::model_info_to_json(fastloop::model_info_from_json(fastloop::model_info_to_json(info), "fuzz"));
    if (again != fastloop::model_info_to_json(info)) std::abort();  // a round trip must not change it
  } catch (const fastloop::InputError&) {
  }
  return 0;
}
