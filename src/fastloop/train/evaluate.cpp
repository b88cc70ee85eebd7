// Evaluation loop.
#include "fastloop/train/evaluate.h"

#include "fastloop/data/loader.h"
#include "fastloop/dist/process_group.h"
#include "fastloop/models/fold_bn.h"
#include "fastloop/train/step.h"

#include <c10/core/InferenceMode.h>

#include <chrono>
#include <optional>

namespace fastloop {

EvalResult evaluate(ClassifierImpl& model, const Dataset& dataset, int64_t batch_size, int64_t workers,
                    const EvalOptions& eval) {
  const auto start = std::chrono::steady_clock::now();
  LoaderOptions options;  // no augmentation: AugmentOptions{} is off
  options.batch_size = batch_size;
  options.workers = workers;
  options.drop_last = false;
  options.sampler.shuffle = false;
  Dataset shard = dataset;  // rank r of W: samples [r*N/W, (r+1)*N/W), so each sample counts once
  if (eval.group) {
    const int64_t n = dataset.size(), r = eval.group->rank(), w = eval.group->size();
    shard.images = dataset.images.narrow(0, n * r / w, n * (r + 1) / w - n * r / w);
    shard.labels = dataset.labels.narrow(0, n * r / w, n * (r + 1) / w - n * r / w);
  }
  Loader loader(shard, options);
  loader.start_epoch(0);

  model.eval();
  std::optional<BatchNormFolding> folding;  // restores the exact weights when evaluation ends
  if (eval.fold_bn) folding.emplace(model);
  c10::InferenceMode guard;
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
  if (eval.group) {
    at::Tensor sums = at::tensor({loss_sum, static_cast<double>(correct), static_cast<double>(seen)}, at::kDouble);
    eval.group->allreduce(sums, "evaluation all-reduce");
    loss_sum = sums[0].item<double>();
    correct = static_cast<int64_t>(sums[1].item<double>());
    seen = static_cast<int64_t>(sums[2].item<double>());
  }
  EvalResult result;
  result.samples = seen;
  result.loss = seen ? loss_sum / static_cast<double>(seen) : 0.0;
  result.accuracy = seen ? static_cast<double>(correct) / static_cast<double>(seen) : 0.0;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

} // namespace fastloop
