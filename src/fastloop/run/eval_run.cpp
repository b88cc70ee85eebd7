// eval_run(): checkpoint or weights, then data, then the model, then evaluate() (train/evaluate.h).
#include "fastloop/run/eval_run.h"

#include "fastloop/core/config.h"
#include "fastloop/core/env.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/data/transforms/pipeline.h"
#include "fastloop/data/transforms/split_size.h"
#include "fastloop/io/weights.h"
#include "fastloop/models/model_info.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/tta.h"
#include "fastloop/train/video_run.h"

#include <nlohmann/json.hpp>

#include <cmath>
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
  config.data.image = image_settings_override(config.data.image, request.image);
  if (!request.tta.empty()) config.data.tta = request.tta;
  threads_apply(request.threads);
  DatasetSplits data = data_load(config.data);
  splits_size_resolve(data, config.data);
  const bool video = split_is_video(data.test);
  if (video) video_run_check(config);
  Classifier model = model_make_for(config.model, data.test.channels(), data.test.num_classes);
  if (checkpoint) checkpoint->restore(*model, nullptr, /*rng=*/false);
  else model_state_load_file(*model, request.init_from);  // strict: every name and shape must match
  if (video && data.test.size() > 0)  // a clip of the test split's size before the first video is decoded
    model_check_forward(*model, config.model.name, video_clip_shape(data.test),
                        config.model.num_classes ? config.model.num_classes : data.test.num_classes,
                        at::MemoryFormat::Contiguous, video_model_input(data.test));
  EvalOptions options;
  options.fold_bn = request.fold_bn;
  options.confusion = true;
  options.tta = tta_mode(config.data);
  options.fast_decode = config.data.decode == "fast";
  if (!config.data.eval_transform.empty()) options.transform = std::make_shared<const Pipeline>(config.data.eval_transform);
  EvalRun run;
  run.result = evaluate(*model, data.test, config.data.batch_size, request.workers, options);
  run.model = checkpoint ? request.checkpoint : request.init_from;
  run.data = config.data.source;
  run.classes = data.test.classes;
  if (checkpoint && !checkpoint->model_info_json().empty())
    run.classes = model_info_from_json(checkpoint->model_info_json(), request.checkpoint).classes;
  run.classes.resize(static_cast<size_t>(data.test.num_classes));
  return run;
}

ModelInfo checkpoint_model_info(const Checkpoint& checkpoint, const TrainConfig& config, const std::string& path) {
  if (!checkpoint.model_info_json().empty()) return model_info_from_json(checkpoint.model_info_json(), path);
  return model_info_for(config, data_load(config.data).train);
}

std::vector<std::pair<std::string, double>> eval_per_class(const EvalRun& run) {
  std::vector<std::pair<std::string, double>> rows;
  const at::Tensor& m = run.result.confusion;
  for (int64_t c = 0; c < m.size(0); ++c) {
    const auto total = m[c].sum().item<int64_t>();
    rows.emplace_back(run.classes.at(static_cast<size_t>(c)),
                      total ? static_cast<double>(m[c][c].item<int64_t>()) / static_cast<double>(total) : std::nan(""));
  }
  return rows;
}

std::string eval_run_json(const EvalRun& run) {
  nlohmann::ordered_json j = {{"accuracy", run.result.accuracy}, {"loss", run.result.loss},
                              {"samples", run.result.samples},   {"model", run.model},
                              {"data", run.data},                {"classes", run.classes}};
  nlohmann::ordered_json per_class = nlohmann::ordered_json::object();
  for (const auto& [name, accuracy] : eval_per_class(run))
    per_class[name] = std::isnan(accuracy) ? nlohmann::ordered_json() : nlohmann::ordered_json(accuracy);
  j["per_class_accuracy"] = per_class;
  const at::Tensor m = run.result.confusion.contiguous();
  std::vector<std::vector<int64_t>> rows;
  for (int64_t r = 0; r < m.size(0); ++r) rows.emplace_back(m[r].data_ptr<int64_t>(), m[r].data_ptr<int64_t>() + m.size(1));
  j["confusion"] = rows;
  return j.dump(2) + "\n";
}

} // namespace fastloop
