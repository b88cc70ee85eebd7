// Evaluation loop.
#include "fastloop/train/evaluate.h"

#include "fastloop/data/loader.h"
#include "fastloop/train/step.h"

#include <c10/core/InferenceMode.h>

#include <chrono>

namespace fastloop {

EvalResult evaluate(ClassifierImpl& model, const Dataset& dataset, int64_t batch_size, int64_t workers,
                    const EvalOptions& eval) {
  const auto start = std::chrono::steady_clock::now();
  LoaderOptions options;  // no augmentation: AugmentOptions{} is off
  options.batch_size = batch_size;
  options.workers = workers;
  options.drop_last = false;
  options.sampler.shuffle = false;
  Loader loader(dataset, options);
  loader.start_epoch(0);

  c10::InferenceMode guard;
  model.eval();
  double loss_sum = 0.0;
  int64_t correct = 0, seen = 0;
  at::Tensor loss_sum_t = at::zeros({}, at::TensorOptions(eval.device).dtype(at::kDouble));
  at::Tensor correct_t = at::zeros({}, at::TensorOptions(eval.device).dtype(at::kLong));
  while (auto batch = loader.next()) {
    auto images = batch->images.to(eval.device, /*non_blocking=*/true);
    auto labels = batch->labels.to(eval.device, /*non_blocking=*/true);
    if (eval.channels_last) images = images.contiguous(at::MemoryFormat::ChannelsLast);
    at::Tensor logits;
    {
      AutocastScope autocast(eval.device.type(), eval.autocast, eval.autocast_dtype);
      logits = model.forward(images);
    }
    logits = logits.to(at::kFloat);
    const int64_t n = labels.size(0);
    loss_sum_t += classification_loss(logits, labels, 0.0).to(at::kDouble) * static_cast<double>(n);
    correct_t += logits.argmax(1).eq(labels).sum();  // accumulated on the device: no sync per batch
    seen += n;
  }
  loss_sum = loss_sum_t.item<double>();
  correct = correct_t.item<int64_t>();
  EvalResult result;
  result.samples = seen;
  result.loss = seen ? loss_sum / static_cast<double>(seen) : 0.0;
  result.accuracy = seen ? static_cast<double>(correct) / static_cast<double>(seen) : 0.0;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

} // namespace fastloop
