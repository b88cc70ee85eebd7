// Setting TrainConfig fields by name from a program (fastloop.train(**fields) in Python): a key is the
// TOML key ("optim.lr"), the field's name alone where it is unique ("lr", "epochs") or its flag
// ("--max-steps", "max_steps"); values are typed, checked as a recipe's are.
#pragma once

#include "fastloop/core/config.h"

#include <cstdint>
#include <string>
#include <variant>

namespace fastloop {

using ConfigValue = std::variant<bool, int64_t, double, std::string>;

/// Sets the field `key` names to `value`: an int64 sets a float field too, nothing else converts. Returns
/// the field's flag ("--lr"), which counts as given for --perf auto. Throws InputError naming the key and
/// the known ones (an unknown key), or the key and the expected type (a wrong type), or the allowed values.
std::string config_set(TrainConfig& config, const std::string& key, const ConfigValue& value);

} // namespace fastloop
