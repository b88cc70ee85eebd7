// predict_run(): the model and its ModelInfo (checkpoint, weights + flags, or TorchScript + extra file),
// BatchNorm folded and, in float32, its optimized inference graph (models/inference_graph.h); then per
// input group (the files and folders together; each --data source alone) a Dataset in the model's
// evaluation transform, the loader without augmentation, and top-k of the softmax per image.
#include "fastloop/run/predict_run.h"

#include "fastloop/run/eval_run.h"
#include "fastloop/core/env.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/class_names.h"
#include "fastloop/data/sources/image_files.h"
#include "fastloop/data/loader/loader.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/data/transforms/pipeline.h"
#include "fastloop/io/weights.h"
#include "fastloop/models/fold_bn.h"
#include "fastloop/models/inference_graph.h"
#include "fastloop/models/registry.h"
#include "fastloop/models/torchscript.h"
#include "fastloop/train/amp.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/evaluate.h"
#include "fastloop/train/runtime.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <torch/script.h>

#include <chrono>
#include <memory>
#include <optional>

namespace fastloop {
namespace {

using Forward = std::function<at::Tensor(const at::Tensor&)>;

struct PredictModel {
  Forward forward;
  ModelInfo info;
  Classifier classifier;  // built-in or registered models (null for TorchScript)
  std::optional<torch::jit::Module> script;
  std::unique_ptr<BatchNormFolding> folding;  // after `classifier`: unfolds it before it goes
  std::string eager_reason;  // why the model runs eagerly rather than as its inference graph ("" when it does not)
};

ModelInfo info_from_flags(const PredictRequest& r, const std::string& model) {
  ModelInfo info;
  info.model = model;
  info.channels = 3;
  info.height = info.width = r.image.size ? r.image.size : kImageSizeDefault;
  info.image_files = true;
  info.resize = info.height * 256 / 224;
  info.mean.assign(std::begin(kImageNetMean), std::end(kImageNetMean));
  info.std.assign(std::begin(kImageNetStd), std::end(kImageNetStd));
  if (r.num_classes < 1) throw InputError("predict: --num-classes is needed with --init-from or a TorchScript file without fastloop's info");
  info.classes = class_names_numbered(r.num_classes);
  if (!r.image.mean.empty() || !r.image.std.empty()) {  // parsed as a --data spec's --mean/--std are
    DataOptions options;
    options.image.mean = r.image.mean;
    options.image.std = r.image.std;
    const DatasetSplits probe = data_load("synthetic:3x1x1:1", options);
    info.mean = probe.train.mean;
    info.std = probe.train.stddev;
  }
  return info;
}

PredictModel model_load(const PredictRequest& r) {
  PredictModel m;
  if (!r.checkpoint.empty()) {
    Checkpoint checkpoint = Checkpoint::read(r.checkpoint);
    TrainConfig config;
    config_from_json(config, checkpoint.config_json());
    m.info = checkpoint_model_info(checkpoint, config, r.checkpoint);
    m.classifier = model_make_for(config.model, m.info.channels, static_cast<int64_t>(m.info.classes.size()));
    checkpoint.restore(*m.classifier, nullptr, /*rng=*/false);
  } else if (is_torchscript_name(r.model)) {
    const std::string path = r.model.substr(std::string(kTorchScriptPrefix).size());
    torch::jit::ExtraFilesMap extra{{kModelInfoExtraFile, ""}};
    try {
      m.script = torch::jit::load(path, c10::Device(c10::kCPU), extra);
    } catch (const c10::Error& e) {
      throw InputError("predict: " + path + " could not be loaded as TorchScript (" +
                       std::string(e.what_without_backtrace()).substr(0, 200) + ")");
    }
    m.info = extra[kModelInfoExtraFile].empty() ? info_from_flags(r, r.model)
                                                : model_info_from_json(extra[kModelInfoExtraFile], path);
    m.script->eval();
    m.forward = [module = *m.script](const at::Tensor& x) mutable { return module.forward({x}).toTensor(); };
    return m;
  } else if (!r.init_from.empty() && !r.model.empty()) {
    m.info = info_from_flags(r, r.model);
    ModelConfig config;
    config.name = r.model;
    config.stem = r.stem;
    config.num_classes = r.num_classes;
    m.classifier = model_make_for(config, m.info.channels, r.num_classes);
    model_state_load_file(*m.classifier, r.init_from);  // strict: every name and shape must match
  } else {
    throw InputError("predict needs --checkpoint FILE, --init-from FILE with --model NAME and --num-classes N, "
                     "or --model torchscript:FILE");
  }
  m.classifier->eval();
  if (m.info.channels_last) module_to_channels_last(*m.classifier);
  m.forward = [model = m.classifier](const at::Tensor& x) { return model->forward(x); };
  return m;
}

/// A random batch of one image of the model's input shape, in its layout.
at::Tensor one_image(const ModelInfo& info) {
  const at::Tensor image = at::randn({1, info.channels, info.height, info.width});
  return info.channels_last ? image.contiguous(at::MemoryFormat::ChannelsLast) : image;
}

/// The model as predict runs it: loaded, BatchNorm folded where it can be, and in float32 (unless
/// --no-graph) its optimized inference graph; a model the graph cannot take runs eagerly, saying why.
PredictModel model_prepare(const PredictRequest& r) {
  PredictModel m = model_load(r);
  if (r.fold_bn && m.classifier && fold_bn_unavailable(*m.classifier).empty())
    m.folding = std::make_unique<BatchNormFolding>(*m.classifier);
  if (!r.graph) return m;
  if (amp_policy(m.info.autocast).autocast) {
    m.eager_reason = "it was trained under " + m.info.autocast + " autocast, which the graph would leave out";
    return m;
  }
  std::string why_not;
  auto graph = m.script ? inference_graph(*m.script, why_not)
                        : inference_graph(*m.classifier, one_image(m.info), why_not);
  if (!graph) {
    m.eager_reason = "LibTorch could not make its inference graph: " + why_not;
    return m;
  }
  m.forward = [module = *graph](const at::Tensor& x) mutable { return module.forward({x}).toTensor(); };
  return m;
}

bool is_data_spec(const std::string& input) {
  for (const char* kind : {"imagefolder:", "shards:", "csv:", "cifar10:", "mnist:", "fashion-mnist", "synthetic",
                           "videofolder:", "videocsv:"})
    if (input.rfind(kind, 0) == 0) return true;
  return false;
}

/// The split a --data source is predicted on: its test split, or its train split when it has none.
Dataset dataset_of_spec(const std::string& spec, const ModelInfo& info) {
  if (data_is_video(spec))
    throw InputError("predict " + spec + ": fastloop predict classifies images, not video clips; evaluate a video "
                     "model with fastloop eval --checkpoint FILE --data " + spec);
  DataOptions options;
  options.image.size = info.height;
  DatasetSplits splits = data_load(spec, options);
  Dataset d = splits.test.size() > 0 ? splits.test : splits.train;
  if (d.encoded) d.image_width = info.width;  // the model's input, as its evaluation transform made it
  return d;
}

std::string sample_path(const Dataset& d, const std::string& group, int64_t i) {
  return d.encoded ? d.encoded->name(i) : group + "#" + std::to_string(i);
}

}  // namespace

std::vector<double> predict_latency(const PredictRequest& r, int64_t warmup, int64_t iterations) {
  threads_apply(r.threads);
  PredictModel m = model_prepare(r);
  const AmpPolicy amp = amp_policy(m.info.autocast);
  const int64_t k = std::min<int64_t>(r.topk, static_cast<int64_t>(m.info.classes.size()));
  const at::Tensor image = one_image(m.info);
  c10::InferenceMode guard;
  std::vector<double> seconds;
  for (int64_t i = 0; i < warmup + iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    at::Tensor logits;
    {
      AutocastScope autocast(at::kCPU, amp.autocast, amp.dtype);
      logits = m.forward(image);
    }
    const auto top = at::softmax(logits.to(at::kFloat), 1).topk(k, 1);
    (void)std::get<1>(top).data_ptr<int64_t>();  // the result is read, as predict reads it
    if (i >= warmup) seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return seconds;
}

PredictSummary predict_run(const PredictRequest& r, const std::function<void(const Prediction&)>& emit,
                           const std::function<void(int64_t, double)>& progress) {
  if (r.inputs.empty()) throw InputError("predict: give image files, folders or a --data source to label");
  if (r.topk < 1) throw InputError("predict: --topk must be at least 1");
  threads_apply(r.threads);
  PredictModel m = model_prepare(r);
  std::vector<std::string> files;
  std::vector<std::pair<std::string, Dataset>> groups;
  for (const auto& input : r.inputs) {
    if (is_data_spec(input)) groups.emplace_back(input, dataset_of_spec(input, m.info));
    else files.push_back(input);
  }
  if (!files.empty()) {
    if (!m.info.image_files)
      throw InputError("predict: this model was trained on " + std::to_string(m.info.channels) + "x" +
                       std::to_string(m.info.height) + "x" + std::to_string(m.info.width) + " in-memory images, not "
                       "image files; give it a --data source of that kind (e.g. the one it was trained on)");
    Dataset d;
    d.encoded = ImageFiles::list(files);
    d.image_height = m.info.height;
    d.image_width = m.info.width;
    d.num_classes = 1;
    groups.insert(groups.begin(), {"files", d});
  }
  EvalOptions eval;
  eval.channels_last = m.info.channels_last;
  eval.amp = amp_policy(m.info.autocast);
  if (!m.info.transform.empty()) eval.transform = std::make_shared<const Pipeline>(m.info.transform);  // as trained
  const int64_t k = std::min<int64_t>(r.topk, static_cast<int64_t>(m.info.classes.size()));
  PredictSummary summary;
  summary.eager_reason = m.eager_reason;
  const auto start = std::chrono::steady_clock::now();
  c10::InferenceMode guard;
  for (auto& [group, d] : groups) {
    if (d.encoded) d.mean = m.info.mean, d.stddev = m.info.std;  // the model's normalisation, not the data's
    d.skip_bad_images = false;
    d.mark_bad_images = r.skip_bad_images;
    Loader loader(d, eval_loader_options(r.batch_size, r.workers, eval));
    loader.start_epoch(0);
    int64_t next = 0;
    while (auto batch = loader.next()) {
      at::Tensor logits;
      {
        AutocastScope autocast(at::kCPU, eval.amp.autocast, eval.amp.dtype);
        logits = m.forward(batch->images);
      }
      const auto [probs, indices] = at::softmax(logits.to(at::kFloat), 1).topk(k, 1);
      const auto p = probs.accessor<float, 2>();
      const auto ix = indices.accessor<int64_t, 2>();
      const auto labels = batch->labels.accessor<int64_t, 1>();
      for (int64_t b = 0; b < batch->labels.size(0); ++b, ++next) {
        if (labels[b] < 0) {
          summary.bad.push_back(sample_path(d, group, next));
          continue;
        }
        Prediction row{sample_path(d, group, next), {}, {}, {}};
        for (int64_t j = 0; j < k; ++j) {
          row.indices.push_back(ix[b][j]);
          row.names.push_back(m.info.classes.at(static_cast<size_t>(ix[b][j])));
          row.probabilities.push_back(p[b][j]);
        }
        emit(row);
        ++summary.images;
      }
      summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (progress) progress(summary.images, summary.seconds);
    }
  }
  return summary;
}

} // namespace fastloop
