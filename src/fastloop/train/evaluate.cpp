// Evaluation loop.
#include "fastloop/train/evaluate.h"

#include "fastloop/data/loader.h"
#include "fastloop/train/step.h"

#include <c10/core/InferenceMode.h>

#include <chrono>

namespace fastloop {

EvalResult evaluate(ClassifierImpl& model, const Dataset& dataset, int64_t batch_size, int64_t workers) {
  const auto start = std::chrono::steady_clock::now();
  LoaderOptions options;
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
  while (auto batch = loader.next()) {
    auto logits = model.forward(batch->images);
    const int64_t n = batch->labels.size(0);
    loss_sum += classification_loss(logits, batch->labels, 0.0).item<double>() * static_cast<double>(n);
    correct += logits.argmax(1).eq(batch->labels).sum().item<int64_t>();
    seen += n;
  }
  EvalResult result;
  result.samples = seen;
  result.loss = seen ? loss_sum / static_cast<double>(seen) : 0.0;
  result.accuracy = seen ? static_cast<double>(correct) / static_cast<double>(seen) : 0.0;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

} // namespace fastloop
