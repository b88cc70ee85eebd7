// Evaluation loop.
#include "fastloop/train/evaluate.h"

#include "fastloop/data/loader/loader.h"
#include "fastloop/dist/process_group.h"
#include "fastloop/models/fold_bn.h"
#include "fastloop/train/step.h"
#include "fastloop/train/tta.h"

#include <c10/core/InferenceMode.h>

#include <chrono>
#include <optional>

namespace fastloop {

LoaderOptions eval_loader_options(int64_t batch_size, int64_t workers, const EvalOptions& eval) {
  LoaderOptions options;  // no augmentation: AugmentOptions{} is off
  options.batch_size = batch_size;
  options.workers = workers;
  options.drop_last = false;
  options.sampler.shuffle = false;
  options.device = eval.device;  // batches made as training makes them: dtype, layout, pinned ring
  options.dtype = eval.amp.dtype;
  options.channels_last = eval.channels_last;
  options.pin_memory = eval.pin_memory;
  options.augment.pipeline = eval.transform;
  options.augment.fast_decode = eval.fast_decode;
  return options;
}

EvalResult evaluate(ClassifierImpl& model, const Dataset& dataset, int64_t batch_size, int64_t workers,
                    const EvalOptions& eval) {
  const auto start = std::chrono::steady_clock::now();
  const LoaderOptions options = eval_loader_options(batch_size, workers, eval);
  if (dataset.size() == 0) return {};  // no test split (an image folder without val/): nothing to evaluate
  Dataset shard = dataset;  // rank r of W: samples [r*N/W, (r+1)*N/W), so each sample counts once
  if (eval.group) {
    const int64_t n = dataset.size(), r = eval.group->rank(), w = eval.group->size();
    shard = dataset_slice(dataset, n * r / w, n * (r + 1) / w - n * r / w);
  }
  Loader loader(shard, options);
  loader.start_epoch(0);

  model.eval();
  std::optional<BatchNormFolding> folding;  // restores the exact weights when evaluation ends
  if (eval.fold_bn) folding.emplace(model);
  std::optional<c10::InferenceMode> guard;
  if (eval.inference_mode) guard.emplace();
  const auto batches_start = std::chrono::steady_clock::now();
  at::Tensor loss_sum_t = at::zeros({}, at::TensorOptions(eval.device).dtype(at::kDouble));
  at::Tensor correct_t = at::zeros({}, at::TensorOptions(eval.device).dtype(at::kLong));
  at::Tensor confusion;  // every rank the same shape, so the all-reduce below matches
  if (eval.confusion)
    confusion = at::zeros({dataset.num_classes, dataset.num_classes}, at::TensorOptions(eval.device).dtype(at::kLong));
  int64_t seen = 0, batches = 0;
  while (auto batch = loader.next()) {
    at::Tensor logits;
    {
      AutocastScope autocast(eval.device.type(), eval.amp.autocast, eval.amp.dtype);
      logits = tta_logits(model, batch->images, eval.tta);
    }
    logits = logits.detach();
    const int64_t n = batch->labels.size(0);
    loss_sum_t += classification_loss(logits, batch->labels, 0.0).to(at::kDouble) * static_cast<double>(n);
    const at::Tensor predicted = logits.argmax(1);
    correct_t += predicted.eq(batch->labels).sum();  // accumulated on the device: no sync per batch
    if (eval.confusion) {
      const int64_t k = dataset.num_classes;
      TORCH_CHECK(logits.size(1) == k, "evaluate: a confusion matrix needs the model's ", logits.size(1),
                  " outputs to be the data's ", k, " classes");
      confusion += at::bincount(batch->labels * k + predicted, {}, k * k).view({k, k});
    }
    seen += n;
    if (++batches == eval.max_batches) break;
  }
  loader.stop();
  at::Tensor sums = at::stack({loss_sum_t, correct_t.to(at::kDouble), at::scalar_tensor(static_cast<double>(seen),
                                                                                     loss_sum_t.options())});
  if (eval.group) eval.group->allreduce(sums, "evaluation all-reduce");
  if (confusion.defined() && eval.group) eval.group->allreduce(confusion, "confusion matrix all-reduce");
  sums = sums.cpu();
  const double loss_sum = sums[0].item<double>();
  const auto correct = static_cast<int64_t>(sums[1].item<double>());
  seen = static_cast<int64_t>(sums[2].item<double>());
  EvalResult result;
  result.samples = seen;
  result.tta = eval.tta;
  if (confusion.defined()) result.confusion = confusion.cpu();
  result.loss = seen ? loss_sum / static_cast<double>(seen) : 0.0;
  result.accuracy = seen ? static_cast<double>(correct) / static_cast<double>(seen) : 0.0;
  const auto end = std::chrono::steady_clock::now();
  result.seconds = std::chrono::duration<double>(end - start).count();
  result.batch_seconds = std::chrono::duration<double>(end - batches_start).count();
  return result;
}

} // namespace fastloop
