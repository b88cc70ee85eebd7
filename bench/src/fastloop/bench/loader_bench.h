// `fastloop bench loader`: images/s of the loader alone (no model) over a grid of worker counts and
// augmentation on/off, on CIFAR-shaped synthetic data or on a --data source (an image folder or tar
// shards: decode + RandomResizedCrop + flip, or Resize + CenterCrop), the CPU cost per image, and
// optionally the same cells through PyTorch's DataLoader (bench/peers/loader_peer.py) for a ratio column. On
// image data it also times a ResNet50 training step at the same size and says whether the loader keeps up.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

struct LoaderBenchOptions {
  std::vector<int64_t> workers{0, 1, 2};
  int64_t batch_size = 128;
  std::string augment = "both";     // both | on | off
  int64_t batches = 0;              // timed batches per repetition of a cell; 0: 300 (synthetic), 20 (images)
  int64_t warmup = 5;               // untimed batches first (thread start, first touch)
  int64_t repeats = 3;              // the median repetition is reported
  int64_t images = 10000;           // synthetic dataset size; epochs restart as in training
  int64_t python_batches = 0;       // timed batches per cell for the PyTorch peer; 0: 40 (synthetic), 20 (images)
  std::string data;                 // empty: CIFAR-shaped synthetic data; else a --data spec (imagefolder:DIR, ...)
  int64_t image_size = 224;         // image data: output side, pixels
  std::string decode = "exact";     // image data: JPEG decoding, as fastloop train's --decode (exact | fast)
  std::string step_model = "resnet50";  // image data: the model the loader must keep up with; "": not timed
  int64_t step_batch = 32;          // images per timed training step
  bool decode_limit = false;        // image data: also time the decode alone per cell (decode_limit_img_per_s)
};

struct LoaderBenchRow {
  int64_t workers = 0;
  bool augment = false;
  double img_per_s = 0.0;           // median over repeats, wall clock
  double cpu_us_per_img = 0.0;      // process CPU time per image, all threads, same repetition
  double decode_img_per_s = 0.0;    // the decode alone, same JPEGs, regions, scale and threads; 0: not measured
  double pytorch_img_per_s = 0.0;   // 0: not measured
  double pytorch_cpu_us_per_img = 0.0;  // the peer's process and workers; 0: not measured
};

struct AssembleBenchRow {
  std::string dtype;                // float32 | float16 | bfloat16
  bool channels_last = false;
  double us_per_img = 0.0;          // one thread, augmented (crop + flip + normalize), median
};

struct LoaderBenchResult {
  LoaderBenchOptions options;
  std::vector<LoaderBenchRow> rows;
  std::vector<AssembleBenchRow> assemble;
  std::string pytorch_version;      // empty: no PyTorch peer run
  std::string machine;              // CPU model and usable cores
  int64_t cores = 0;                // usable cores
  std::string libtorch_version;
  std::string data;                 // what was loaded, in words
  bool encoded = false;             // image files decoded per sample (image folder, shards)
  double step_img_per_s = 0.0;      // step_model's training rate at image_size; 0: not timed
  std::string step_device;
};

LoaderBenchResult loader_bench_run(const LoaderBenchOptions& options);

/// Runs `python peer_script` with the same cells and fills pytorch_img_per_s; throws naming the command
/// when it fails or prints no JSON.
void loader_bench_compare_python(LoaderBenchResult& result, const std::string& python, const std::string& peer_script);

/// Whether the loader keeps up with step_model's training, in one paragraph ("" when not timed).
std::string loader_bench_verdict(const LoaderBenchResult& result);

std::string loader_bench_json(const LoaderBenchResult& result);
std::string loader_bench_markdown(const LoaderBenchResult& result);

} // namespace fastloop
