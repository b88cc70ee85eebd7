// One TrainConfig setting as text, by its TOML key, and a whole config as a TOML recipe: what
// `fastloop tune` varies and writes. Goes through config_fields(), like every other config path.
#pragma once

#include "fastloop/core/config.h"

#include <map>
#include <string>

namespace fastloop {

/// The value of the setting `key` ("perf.amp") as text: strings bare, bools true/false, numbers %g.
std::string config_field_text(const TrainConfig& config, const std::string& key);

/// Sets `key` from text; throws InputError for an unknown key or text that is not of its type.
void config_field_set(TrainConfig& config, const std::string& key, const std::string& text);

/// Every setting as a TOML recipe, one table per section; `comments` (by key) go above their lines.
std::string config_to_toml(const TrainConfig& config, const std::map<std::string, std::string>& comments = {});

} // namespace fastloop
