// eval_run(): checkpoint or weights, then data, then the model, then evaluate() (train/evaluate.h).
#include "fastloop/cli/eval_run.h"

#include "fastloop/core/config.h"
#include "fastloop/core/env.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/source.h"
#include "fastloop/io/weights.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/checkpoint.h"

#include <optional>

namespace fastloop {

EvalRun eval_run(const EvalRequest& request) {
  TrainConfig config;
  std::optional<Checkpoint> checkpoint;
  if (!request.checkpoint.empty()) {
    checkpoint.emplace(Checkpoint::read(request.checkpoint));
    config_from_json(config, checkpoint->config_json());
  } else if (request.init_from.empty() || request.model.empty() || request.data.empty()) {
    throw InputError("eval needs --checkpoint FILE, or --init-from FILE with --model NAME and --data SOURCE");
  } else {
    config.model.name = request.model;
    config.model.stem = request.stem;
    config.model.num_classes = request.num_classes;
  }
  if (!request.data.empty()) config.data.source = request.data;
  if (request.batch_size) config.data.batch_size = request.batch_size;
  if (request.image_size) config.data.image_size = request.image_size;
  if (!request.mean.empty()) config.data.mean = request.mean;
  if (!request.std.empty()) config.data.std = request.std;
  threads_apply(request.threads);
  const DatasetSplits data = data_load(config.data);
  Classifier model = model_make_for(config.model, data.test.channels(), data.test.num_classes);
  if (checkpoint) checkpoint->restore(*model, nullptr, /*rng=*/false);
  else model_state_load_file(*model, request.init_from);  // strict: every name and shape must match
  EvalOptions options;
  options.fold_bn = request.fold_bn;
  EvalRun run;
  run.result = evaluate(*model, data.test, config.data.batch_size, request.workers, options);
  run.model = checkpoint ? request.checkpoint : request.init_from;
  run.data = config.data.source;
  run.classes = data.test.classes;
  return run;
}

} // namespace fastloop
