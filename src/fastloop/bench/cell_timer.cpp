// The timed cell. Each training step is the library's step (train/step.h) opened at its phase
// boundaries, with a device sync at each so the split adds up to the step; evaluation is evaluate()'s
// loop with a choice of grad mode and BatchNorm folding. With a process group the model trains under
// DistributedDataParallel, each rank on its shard, and every repetition starts and ends at a barrier so
// rank 0's clock measures all ranks.
#include "fastloop/bench/cell_timer.h"

#include "fastloop/bench/device_probe.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/loader.h"
#include "fastloop/dist/ddp.h"
#include "fastloop/models/flops.h"
#include "fastloop/models/fold_bn.h"
#include "fastloop/models/mobilenet_v2.h"
#include "fastloop/models/registry.h"
#include "fastloop/models/resnet.h"
#include "fastloop/models/small_cnn.h"
#include "fastloop/train/amp.h"
#include "fastloop/train/cuda_graph.h"
#include "fastloop/train/optim.h"
#include "fastloop/train/runtime.h"
#include "fastloop/train/step.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <torch/utils.h>

#include <chrono>
#include <optional>

namespace fastloop {

namespace {

using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point from, Clock::time_point to) { return std::chrono::duration<double>(to - from).count(); }

/// model_make_for, with every stage's width moved by `width_delta` (the rec-model row).
Classifier model_make_with_width(const ModelConfig& config, int64_t channels, int64_t data_classes, int64_t width_delta) {
  if (width_delta == 0) return model_make_for(config, channels, data_classes);
  model_stems(config.name);  // InputError for an unknown name
  const int64_t classes = config.num_classes ? config.num_classes : data_classes;
  if (config.name.rfind("resnet", 0) == 0) {
    return ResNet(ResNetOptions(std::stoll(config.name.substr(6)))
                      .stem(config.stem).in_channels(channels).num_classes(classes).width_delta(width_delta))
        .ptr();
  }
  if (config.name == "mobilenet_v2") {
    return MobileNetV2(MobileNetV2Options().stem(config.stem).in_channels(channels).num_classes(classes)
                           .width_delta(width_delta)).ptr();
  }
  SmallCNNOptions options;
  return SmallCNN(options.in_channels(channels).num_classes(classes)
                      .stem_width(options.stem_width() + width_delta)
                      .stage1_width(options.stage1_width() + width_delta)
                      .stage2_width(options.stage2_width() + width_delta)).ptr();
}

LoaderOptions loader_options_for(const CellPlan& plan, bool train_split) {
  const TrainConfig& c = plan.config;
  LoaderOptions options;
  options.batch_size = c.data.batch_size;
  options.workers = c.data.workers;
  options.prefetch = c.data.prefetch;
  options.sampler.seed = static_cast<uint64_t>(c.run.seed);
  if (plan.group) options.sampler.rank = plan.group->rank(), options.sampler.world_size = plan.group->size();
  if (train_split) {
    options.augment = {c.data.augment, c.data.crop_pad, c.data.augment && c.data.flip};
    options.on_device = c.data.on_device;
  } else {
    options.sampler.shuffle = false;
    options.drop_last = plan.eval_steps > 0;  // whole test split: the last, partial batch too
  }
  // Where batches are delivered: the device, except on CUDA without non_blocking, where the step copies.
  const bool loader_delivers = !plan.device.is_cuda() || plan.non_blocking || options.on_device;
  options.device = loader_delivers ? plan.device : c10::Device(c10::kCPU);
  options.pin_memory = c.data.pin_memory && loader_delivers;
  options.dtype = c.perf.amp != "off" ? amp_dtype(c.perf.amp) : at::kFloat;
  options.channels_last = c.perf.channels_last;
  return options;
}

/// Batches without end: the next epoch starts when one runs out (the restart counts as data wait).
class BatchStream {
 public:
  BatchStream(const Dataset& dataset, const LoaderOptions& options, const std::string& batch_flag)
      : loader_(dataset, options) {
    if (loader_.batches_per_epoch() == 0)
      throw InputError(batch_flag + " " + std::to_string(options.batch_size) + " is larger than the " +
                       std::to_string(dataset.size()) + " images of the split");
    loader_.start_epoch(0);
  }
  Batch next() {
    auto batch = loader_.next();
    if (!batch) {
      loader_.start_epoch(++epoch_);
      batch = loader_.next();
    }
    return std::move(*batch);
  }
  int64_t batches_per_epoch() const { return loader_.batches_per_epoch(); }

 private:
  Loader loader_;
  int64_t epoch_ = 0;
};

/// Host batches onto the device, blocking (the rows without non_blocking); pinned first with pin_memory.
at::Tensor to_device(const at::Tensor& t, const CellPlan& plan) {
  if (t.device() == plan.device) return t;
  return (plan.config.data.pin_memory ? t.pin_memory() : t).to(plan.device, /*non_blocking=*/false);
}

/// All ranks here before any goes on (nothing without a group).
void barrier(const CellPlan& plan) {
  if (!plan.group) return;
  at::Tensor token = at::zeros({1});
  plan.group->allreduce(token, "bench barrier");
}

/// Images of one step or batch of every rank.
int64_t all_ranks(const CellPlan& plan, int64_t images) { return plan.group ? images * plan.group->size() : images; }

struct Trainee {
  ClassifierImpl& model;
  torch::optim::Optimizer& optimizer;
  GradScaler& scaler;
  DistributedDataParallel* ddp = nullptr;  // with a group
  StepOptions step;
  bool capture = false;                // --cuda-graph: capture at the next step (after warm-up)
  std::unique_ptr<GraphedStep> graph;  // then every step replays it
};

/// One optimizer step of the row (accumulate micro-batches of B / N), its seconds added to `split`.
int64_t train_step_timed(Trainee& t, BatchStream& stream, const CellPlan& plan, TimeSplit& split) {
  const auto start = Clock::now();
  Batch batch = stream.next();
  const auto got = Clock::now();
  const at::Tensor images = to_device(batch.images, plan), labels = to_device(batch.labels, plan);
  device_synchronize(plan.device);
  const auto copied = Clock::now();
  split.data_wait += seconds(start, got);
  if (batch.images.device() != plan.device) split.copy += seconds(got, copied);  // else nothing was copied

  const int64_t micro_batches = plan.config.perf.accumulate;
  if (t.capture && !t.graph) {
    std::string why;
    t.graph = graphed_step_make(t.model, t.step, t.scaler, images, labels, micro_batches, &why);
    TORCH_CHECK(t.graph, "bench cuda-graph row: ", why);
    t.step.keep_gradients = true;  // the graph owns the gradient tensors
  }
  if (t.graph) {  // forward and backward are one replay: their time shows under forward
    const auto replay_start = Clock::now();
    t.graph->run(images, labels);
    device_synchronize(plan.device);
    split.forward += seconds(replay_start, Clock::now());
  }
  const auto image_parts = images.chunk(micro_batches), label_parts = labels.chunk(micro_batches);
  for (size_t m = 0; m < image_parts.size() && !t.graph; ++m) {
    const auto forward_start = Clock::now();
    if (t.ddp) t.ddp->prepare_micro_step(/*sync=*/m + 1 == image_parts.size());  // no_sync but the last
    at::Tensor loss;
    {
      AutocastScope autocast(plan.device.type(), t.step.autocast, t.step.autocast_dtype);
      loss = classification_loss(t.model.forward(image_parts[m]), label_parts[m], t.step.label_smoothing);
    }
    device_synchronize(plan.device);
    const auto backward_start = Clock::now();
    t.scaler.scale(micro_batches > 1 ? loss / static_cast<double>(micro_batches) : loss).backward();
    device_synchronize(plan.device);
    split.forward += seconds(forward_start, backward_start);
    split.backward += seconds(backward_start, Clock::now());
  }
  if (t.ddp) {  // what backward's all-reduces did not hide: waiting for them, then averaging
    const auto sync_start = Clock::now();
    t.ddp->finish_gradient_sync();
    device_synchronize(plan.device);
    split.communication += seconds(sync_start, Clock::now());
  }
  const auto optimizer_start = Clock::now();
  train_optimizer_step(t.optimizer, t.scaler, t.step);
  device_synchronize(plan.device);
  split.optimizer += seconds(optimizer_start, Clock::now());
  return labels.size(0);
}

/// One evaluation batch: forward (and the accuracy's argmax) as evaluate() runs it.
int64_t eval_batch(ClassifierImpl& model, BatchStream& stream, const CellPlan& plan) {
  Batch batch = stream.next();
  const at::Tensor images = to_device(batch.images, plan), labels = to_device(batch.labels, plan);
  at::Tensor logits;
  {
    AutocastScope autocast(plan.device.type(), plan.config.perf.amp != "off", amp_dtype(plan.config.perf.amp));
    logits = model.forward(images);
  }
  const auto correct = logits.argmax(1).eq(labels).sum();  // kept on the device, as in evaluate()
  (void)correct;
  return labels.size(0);
}

void train_measure(ClassifierImpl& model, DistributedDataParallel* ddp, const CellPlan& plan, const DatasetSplits& data,
                   CellTimes& times) {
  const TrainConfig& c = plan.config;
  auto optimizer = optimizer_make(c.optim, model.parameters(), c.perf.fused_optim);
  GradScaler scaler(GradScalerOptions().enabled(c.perf.amp == "fp16"));  // bf16 keeps fp32's range
  if (plan.group)  // every rank skips the same steps
    scaler.set_found_inf_reduce([&plan](at::Tensor& found) { plan.group->allreduce(found, "AMP inf/nan check", true); });
  Trainee trainee{model, *optimizer, scaler, ddp, StepOptions{}, false, nullptr};
  trainee.step.label_smoothing = c.optim.label_smoothing;
  trainee.step.autocast = c.perf.amp != "off";
  trainee.step.autocast_dtype = amp_dtype(c.perf.amp);
  trainee.step.set_to_none = c.perf.set_to_none;

  BatchStream stream(data.train, loader_options_for(plan, /*train_split=*/true), "--batch-size");
  const int64_t steps = plan.steps > 0 ? plan.steps : stream.batches_per_epoch();
  const int64_t warmup = plan.steps > 0 ? plan.warmup : plan.warmup * stream.batches_per_epoch();
  model.train();
  TimeSplit unused;
  for (int64_t s = 0; s < warmup; ++s) train_step_timed(trainee, stream, plan, unused);
  if (c.perf.cuda_graph) {  // one more untimed step captures the graph
    trainee.capture = true;
    train_step_timed(trainee, stream, plan, unused);
  }
  for (auto& rep : times.repetitions) {
    device_synchronize(plan.device);
    barrier(plan);
    const DdpStats before = ddp ? ddp->stats() : DdpStats{};
    const auto start = Clock::now();
    int64_t images = 0;
    for (int64_t s = 0; s < steps; ++s) images += train_step_timed(trainee, stream, plan, rep.split);
    device_synchronize(plan.device);
    barrier(plan);
    rep.train_img_per_s = static_cast<double>(all_ranks(plan, images)) / seconds(start, Clock::now());
    const double n = static_cast<double>(steps);
    for (double* part : {&rep.split.data_wait, &rep.split.copy, &rep.split.forward, &rep.split.backward,
                         &rep.split.optimizer, &rep.split.communication})
      *part /= n;
    if (ddp) {
      const DdpStats after = ddp->stats();
      rep.allreduces_per_step = static_cast<double>(after.allreduces - before.allreduces) / n;
      rep.comm_span_s = (after.span_s - before.span_s) / n;
      rep.comm_exposed_s = (after.exposed_s - before.exposed_s) / n;
    }
  }
}

void eval_measure(ClassifierImpl& model, const CellPlan& plan, const DatasetSplits& data, CellTimes& times) {
  BatchStream stream(data.test, loader_options_for(plan, /*train_split=*/false), "--batch-size");
  const int64_t steps = plan.eval_steps > 0 ? plan.eval_steps : stream.batches_per_epoch();
  model.eval();
  std::optional<BatchNormFolding> folding;  // restores the exact weights when it goes
  if (plan.fold_bn) folding.emplace(model);
  std::optional<c10::InferenceMode> no_autograd;
  if (!plan.eval_grad_mode) no_autograd.emplace();
  for (int64_t s = 0; s < plan.warmup; ++s) eval_batch(model, stream, plan);
  for (auto& rep : times.repetitions) {
    device_synchronize(plan.device);
    barrier(plan);
    const auto start = Clock::now();
    int64_t images = 0;
    for (int64_t s = 0; s < steps; ++s) images += eval_batch(model, stream, plan);
    device_synchronize(plan.device);
    barrier(plan);
    rep.eval_img_per_s = static_cast<double>(all_ranks(plan, images)) / seconds(start, Clock::now());
  }
}

}  // namespace

CellTimes cell_run(const CellPlan& plan, const DatasetSplits& data) {
  TORCH_CHECK(plan.repeat >= 1, "cell_run: repeat must be >= 1, got ", plan.repeat);
  const TrainConfig& c = plan.config;
  runtime_apply(c.perf, c.run.threads);
  CellTimes times;
  times.repetitions.resize(static_cast<size_t>(plan.repeat));

  memory_peak_reset(plan.device);
  torch::manual_seed(static_cast<uint64_t>(c.run.seed));
  Classifier model = model_make_with_width(c.model, data.train.channels(), data.train.num_classes, plan.width_delta);
  model->to(plan.device);
  if (c.perf.channels_last) module_to_channels_last(*model);
  times.forward_flops = model_forward_flops(*model, {data.train.channels(), data.train.height(), data.train.width()});

  std::unique_ptr<DistributedDataParallel> ddp;  // after the model's device and memory format: buckets mirror them
  if (plan.group) {
    const auto bucket_bytes = static_cast<int64_t>(c.dist.bucket_mb * 1024 * 1024);
    ddp = std::make_unique<DistributedDataParallel>(
        *model, plan.group, DdpOptions().bucket_bytes(bucket_bytes).broadcast_buffers(c.dist.broadcast_buffers));
    times.buckets = ddp->bucket_count();
  }
  if (plan.train) train_measure(*model, ddp.get(), plan, data, times);
  times.train_peak_bytes = plan.train ? memory_peak_bytes(plan.device) : 0.0;

  memory_peak_reset(plan.device);
  if (ddp) ddp->sync_buffers();  // every rank evaluates rank 0's model
  eval_measure(*model, plan, data, times);
  times.eval_peak_bytes = memory_peak_bytes(plan.device);
  return times;
}

} // namespace fastloop
