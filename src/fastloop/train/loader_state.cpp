// The train loader's state as JSON (fastloop.Loader.state_dict()'s fields) and the check that it fits a run.
#include "fastloop/train/loader_state.h"

#include "fastloop/core/errors.h"

#include <nlohmann/json.hpp>

namespace fastloop {

namespace {

using Json = nlohmann::ordered_json;

Json identity_to_json(const LoaderIdentity& id) {
  return Json{{"source", id.source},   {"split", id.split},         {"samples", id.samples},
              {"num_classes", id.num_classes}, {"seed", id.seed},   {"batch_size", id.batch_size},
              {"shuffle", id.shuffle}, {"drop_last", id.drop_last}, {"shuffle_buffer", id.shuffle_buffer}};
}

template <typename T>
T field(const Json& json, const char* name, const std::string& where) {
  const auto it = json.find(name);
  if (it == json.end()) throw InputError(where + ": the loader state has no \"" + std::string(name) + "\"");
  try {
    return it->get<T>();
  } catch (const Json::exception&) {
    throw InputError(where + ": the loader state's \"" + std::string(name) + "\" is " + it->dump() +
                     ", not a value of its type");
  }
}

}  // namespace

LoaderIdentity loader_identity_of(const TrainConfig& config, const Dataset& train, const LoaderOptions& options) {
  LoaderIdentity id;
  id.source = config.data.source;
  id.samples = train.size();
  id.num_classes = train.num_classes;
  id.seed = static_cast<int64_t>(options.sampler.seed);
  id.batch_size = options.batch_size;
  id.shuffle = options.sampler.shuffle;
  id.drop_last = options.drop_last;
  id.shuffle_buffer = config.data.shuffle_buffer;
  return id;
}

std::string loader_state_to_json(const LoaderState& state) {
  Json json{{"version", kLoaderStateVersion},
            {"epoch", state.epoch},
            {"position", state.position.taken},
            {"order_world_size", state.position.order_world_size},
            {"world_size", state.world_size}};
  json.update(identity_to_json(state.identity));
  return json.dump();
}

LoaderState loader_state_from_json(const std::string& text, const std::string& where) {
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::exception& e) {
    throw InputError(where + ": the loader state is not JSON (" + e.what() + ")");
  }
  if (!json.is_object()) throw InputError(where + ": the loader state is not a JSON object");
  const auto version = field<int64_t>(json, "version", where);
  if (version != kLoaderStateVersion)
    throw InputError(where + ": a loader state of version " + std::to_string(version) + "; this fastloop reads version " +
                     std::to_string(kLoaderStateVersion));
  LoaderState state;
  state.epoch = field<int64_t>(json, "epoch", where);
  state.position = {field<int64_t>(json, "position", where), field<int64_t>(json, "order_world_size", where)};
  state.world_size = field<int64_t>(json, "world_size", where);
  if (state.epoch < 0 || state.position.taken < 0 || state.position.order_world_size < 1 || state.world_size < 1)
    throw InputError(where + ": the loader state's epoch " + std::to_string(state.epoch) + ", position " +
                     std::to_string(state.position.taken) + ", order_world_size " +
                     std::to_string(state.position.order_world_size) + " and world_size " +
                     std::to_string(state.world_size) + " must be >= 0, 0, 1 and 1");
  LoaderIdentity& id = state.identity;
  id.source = field<std::string>(json, "source", where);
  id.split = field<std::string>(json, "split", where);
  id.samples = field<int64_t>(json, "samples", where);
  id.num_classes = field<int64_t>(json, "num_classes", where);
  id.seed = field<int64_t>(json, "seed", where);
  id.batch_size = field<int64_t>(json, "batch_size", where);
  id.shuffle = field<bool>(json, "shuffle", where);
  id.drop_last = field<bool>(json, "drop_last", where);
  id.shuffle_buffer = field<int64_t>(json, "shuffle_buffer", where);
  return state;
}

std::vector<std::string> loader_identity_differences(const LoaderIdentity& saved, const LoaderIdentity& here) {
  const Json a = identity_to_json(saved), b = identity_to_json(here);
  std::vector<std::string> differ;
  for (const auto& item : a.items()) {
    const Json& there = b.at(item.key());
    if (item.value() != there)
      differ.push_back(item.key() + " is " + item.value().dump() + " in the checkpoint, " + there.dump() + " here");
  }
  return differ;
}

} // namespace fastloop
