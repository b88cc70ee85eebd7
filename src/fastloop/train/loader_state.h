// The train loader's place in a run, in the form fastloop.Loader.state_dict() gives it: the epoch, the samples
// of its global order all ranks took, the ranks that order was made for, and what the state must agree with
// (data, seed, batch size, ...). A checkpoint keeps it as JSON under "loader_state"; a resume starts there.
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/data/loader/loader_options.h"
#include "fastloop/data/loader/sampler.h"
#include "fastloop/data/sources/dataset.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

/// The version fastloop.Loader.state_dict() writes and reads (python/fastloop/_loader.py's _STATE_VERSION).
constexpr int64_t kLoaderStateVersion = 1;

/// What a state must agree with: the arguments that fix the epochs' order and the data set's extent
/// (fastloop.Loader's `_identity()`, field for field).
struct LoaderIdentity {
  std::string source;           // the --data text
  std::string split = "train";
  int64_t samples = 0;
  int64_t num_classes = 0;
  int64_t seed = 0;
  int64_t batch_size = 0;       // per rank
  bool shuffle = true;
  bool drop_last = true;
  int64_t shuffle_buffer = 0;   // samples (tar shards' streaming shuffle)
};

struct LoaderState {
  int64_t epoch = 0;
  EpochPosition position;      // {taken: fastloop.Loader's "position", order_world_size}
  int64_t world_size = 1;      // the ranks that saved it
  LoaderIdentity identity;
};

/// The identity of a run's train loader: `config`'s source and seed, `train`'s extent, `options`' batch.
LoaderIdentity loader_identity_of(const TrainConfig& config, const Dataset& train, const LoaderOptions& options);

/// {"version", "epoch", "position", "order_world_size", "world_size", then the identity's fields}: the dict
/// fastloop.Loader.state_dict() returns, as JSON.
std::string loader_state_to_json(const LoaderState& state);

/// Reads loader_state_to_json()'s text (or a fastloop.Loader.state_dict() dumped as JSON); throws InputError
/// naming `where` and what is missing or malformed.
LoaderState loader_state_from_json(const std::string& json, const std::string& where);

/// "seed is 1 in the checkpoint, 2 here" for each identity field that differs; empty when they agree.
std::vector<std::string> loader_identity_differences(const LoaderIdentity& saved, const LoaderIdentity& here);

} // namespace fastloop
