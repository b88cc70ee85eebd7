// ModelInfo to and from JSON (nlohmann-json); model_info_for.cpp derives it from a run's config and data.
#include "fastloop/models/model_info.h"

#include "fastloop/core/errors.h"

#include <nlohmann/json.hpp>

namespace fastloop {
namespace {

constexpr int64_t kMaxSide = 1 << 16;  // pixels; larger sides are not images a model of ours was trained on

/// j[key] as an integer in [lo, hi]; a float, a string or an out-of-range number is malformed input.
int64_t int_field(const nlohmann::json& j, const char* key, int64_t lo, int64_t hi) {
  const auto& v = j.at(key);
  if (!v.is_number_integer()) throw InputError(std::string("\"") + key + "\" must be an integer, not " + v.dump());
  const bool fits = !v.is_number_unsigned() || v.get<uint64_t>() <= static_cast<uint64_t>(hi);
  const int64_t n = fits ? v.get<int64_t>() : hi;
  if (!fits || n < lo || n > hi)
    throw InputError(std::string("\"") + key + "\" = " + v.dump() + " is outside [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
  return n;
}

} // namespace

std::string model_info_to_json(const ModelInfo& info) {
  nlohmann::ordered_json j = {{"model", info.model},       {"classes", info.classes},   {"channels", info.channels},
                              {"height", info.height},     {"width", info.width},       {"image_files", info.image_files},
                              {"resize", info.resize},     {"mean", info.mean},         {"std", info.std},
                              {"channels_last", info.channels_last}, {"autocast", info.autocast}};
  if (!info.transform.empty()) j["transform"] = info.transform;  // older readers ignore it
  return j.dump();
}

ModelInfo model_info_from_json(const std::string& json, const std::string& where) {
  try {
    const auto j = nlohmann::json::parse(json);
    ModelInfo info;
    info.model = j.at("model").get<std::string>();
    info.classes = j.at("classes").get<std::vector<std::string>>();
    info.channels = int_field(j, "channels", 1, 4);
    info.height = int_field(j, "height", 1, kMaxSide);
    info.width = int_field(j, "width", 1, kMaxSide);
    info.image_files = j.at("image_files").get<bool>();
    info.resize = int_field(j, "resize", 0, kMaxSide);
    info.mean = j.at("mean").get<std::vector<float>>();
    info.std = j.at("std").get<std::vector<float>>();
    info.channels_last = j.at("channels_last").get<bool>();
    info.autocast = j.at("autocast").get<std::string>();
    info.transform = j.value("transform", std::string());  // absent before --eval-transform existed
    return info;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": its model info is malformed (" + e.what() + "); write it again with fastloop");
  } catch (const InputError& e) {
    throw InputError(where + ": its model info is malformed (" + e.what() + "); write it again with fastloop");
  }
}

} // namespace fastloop
