// `fastloop predict` as a library call: a trained model labels images — files, folders or a --data
// source — with its top-k classes by name. The evaluation transform comes with the model (ModelInfo from
// the checkpoint or an exported TorchScript file, or flags for bare weights); the loader's threads decode
// and batch; BatchNorm is folded where it can be, and a float32 model runs as its optimized inference graph.
#pragma once

#include "fastloop/models/model_info.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fastloop {

struct PredictRequest {
  std::string checkpoint;    // a checkpoint written by train; or
  std::string init_from;     // safetensors weights with `model` (a built-in or registered name); or
  std::string model;         // "torchscript:FILE.pt" alone (an export of fastloop's carries its ModelInfo)
  std::string stem = "cifar";
  int64_t num_classes = 0;   // weights / TorchScript without info: their classes (names "0", "1", ...)
  ImageSettings image{0, "", ""};  // weights / TorchScript without info: crop side (0: 224), mean and std
                                  // ("R,G,B"; empty: ImageNet's)
  std::vector<std::string> inputs;  // image files, folders (recursive), or one --data source per entry
  int64_t topk = 5;
  int64_t batch_size = 64;
  int64_t workers = 1;
  int64_t threads = 0;       // intra-op threads; 0: every usable core
  bool skip_bad_images = false;  // --bad-image-policy skip: report an undecodable image and go on
  bool fold_bn = true;       // fold BatchNorm into the conv before it where the model allows
  bool graph = true;         // float32: run the model's optimized inference graph (models/inference_graph.h)
};

struct Prediction {
  std::string path;                  // the file, "SHARD.tar:KEY", or "SOURCE#INDEX" for in-memory data
  std::vector<int64_t> indices;      // top-k class indices, most probable first
  std::vector<std::string> names;
  std::vector<float> probabilities;  // softmax
};

struct PredictSummary {
  int64_t images = 0;        // predicted
  std::vector<std::string> bad;  // undecodable images skipped (their paths)
  double seconds = 0.0;
  std::string eager_reason;  // why the model ran eagerly although `graph` was asked for ("" otherwise)
};

/// Predicts every input image in order, calling `emit` once per image (never for a bad one) and
/// `progress(images, seconds)` after every batch. Throws InputError for a bad request, model or input
/// (an undecodable image unless skip_bad_images, naming it).
PredictSummary predict_run(const PredictRequest& request, const std::function<void(const Prediction&)>& emit,
                           const std::function<void(int64_t, double)>& progress = {});

/// Batch-1 latency of predict's model path (`fastloop bench latency`): the model loaded, folded and set up
/// exactly as predict_run() does (threads, layout, autocast, InferenceMode), then one image of its input
/// shape through forward, softmax and top-k, `warmup` times untimed and `iterations` times timed.
/// Returns each timed iteration's seconds; decoding is not in it (predict's loader threads overlap that).
std::vector<double> predict_latency(const PredictRequest& request, int64_t warmup, int64_t iterations);

} // namespace fastloop
