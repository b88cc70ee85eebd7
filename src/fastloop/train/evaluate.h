// Evaluation of a classifier on a dataset split: mean loss and top-1 accuracy, under InferenceMode.
#pragma once

#include "fastloop/data/sources/dataset.h"
#include "fastloop/data/loader/loader.h"
#include "fastloop/models/classifier.h"
#include "fastloop/train/amp.h"

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

namespace fastloop {

class ProcessGroup;

struct EvalResult {
  double loss = 0.0;      // mean cross-entropy, no label smoothing
  double accuracy = 0.0;  // top-1, fraction in [0, 1]
  int64_t samples = 0;
  double seconds = 0.0;
  at::Tensor confusion;   // EvalOptions::confusion: int64 [classes, classes], row = true class, column = predicted
  std::string tta = "off";  // the test-time augmentation used (EvalOptions::tta): one forward per image when off
  double batch_seconds = 0.0;  // the batches alone: from the first batch to the result, without the loader's
                               // start and the BatchNorm folding (the bench's rate, as the PyTorch peer's)
};

struct EvalOptions {
  c10::Device device = c10::kCPU;  // where the loader delivers batches and the model runs
  bool channels_last = false;      // batches NHWC
  AmpPolicy amp;                   // autocast, and batches made in its dtype
  bool pin_memory = true;          // CUDA: the loader's pinned ring (false: blocking copies of host batches)
  bool fold_bn = false;            // BatchNorms folded into their convs while evaluating (models/fold_bn.h)
  bool inference_mode = true;      // false: autograd records the forward (what the bench's no-grad row compares)
  std::string tta = "off";         // test-time augmentation (tta.h): off | flip | flip-translate
  bool confusion = false;          // also count the confusion matrix (eval's per-class accuracy)
  int64_t max_batches = 0;         // 0: the whole split; else only its first batches (the bench's timed evaluation)
  std::shared_ptr<const Pipeline> transform;  // --eval-transform's pipeline; null: the built-in (Resize + CenterCrop)
  bool fast_decode = false;        // --decode fast: JPEGs at a reduced DCT scale (AugmentOptions::fast_decode)
  /// Distributed runs: each rank evaluates its contiguous share of the split and the sums are
  /// all-reduced, so every rank returns the accuracy over the whole split.
  ProcessGroup* group = nullptr;
};

/// The loader evaluation reads a split with: every sample once, in order, no augmentation, the last
/// batch partial; batches on `eval.device` in its autocast dtype and layout (fastloop.Loader's val split).
LoaderOptions eval_loader_options(int64_t batch_size, int64_t workers, const EvalOptions& eval);

/// Evaluates every sample of `dataset` once, in order, without augmentation, under InferenceMode.
/// `seconds` counts the loader's start and the final device sync: what an evaluation costs a run.
/// Leaves the model in eval mode.
EvalResult evaluate(ClassifierImpl& model, const Dataset& dataset, int64_t batch_size, int64_t workers,
                    const EvalOptions& options = {});

} // namespace fastloop
