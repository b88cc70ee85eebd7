// libFuzzer target for TOML recipes (config_load_toml, then config_validate and config_to_json as the CLI
// does): any file must load or throw InputError, never crash or escape with another exception type.
#include "fastloop/core/config.h"
#include "fastloop/core/errors.h"
#include "fuzz_files.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fastloop::fuzz::ScratchDir scratch;
  const std::string path = scratch / "recipe.toml";
  fastloop::fuzz::write_file(path, data, size);
  fastloop::TrainConfig config;
  try {
    fastloop::config_load_toml(config, path);
    fastloop::config_validate(config);
    // A config that validated is stored in checkpoints as JSON and read back on resume.
    fastloop::TrainConfig back;
    fastloop::config_from_json(back, fastloop::config_to_json(config));
  } catch (const fastloop::InputError&) {
  }
  return 0;
}
