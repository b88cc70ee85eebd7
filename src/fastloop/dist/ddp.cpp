// Buckets, hooks and the all-reduce schedule of DistributedDataParallel. The hooks are autograd's
// post-accumulate-grad hooks: they run after .grad holds the whole accumulation cycle's gradient.
#include "fastloop/dist/ddp.h"

#include "fastloop/core/clock.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <atomic>
#include <functional>

namespace fastloop {

namespace {

struct GradReadyHook : torch::autograd::PostAccumulateGradHook {
  explicit GradReadyHook(std::function<void()> ready) : ready_(std::move(ready)) {}
  void operator()(const torch::autograd::Variable&) override { ready_(); }
  std::function<void()> ready_;
};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}
}  // namespace

DistributedDataParallel::DistributedDataParallel(torch::nn::Module& module, std::shared_ptr<ProcessGroup> group,
                                                 DdpOptions options)
    : module_(module), group_(std::move(group)), options_(options) {
  if (group_->work_device().is_cuda()) timer_ = std::make_unique<CommTimer>(group_->work_device());
  for (const auto& p : module_.parameters())
    if (p.requires_grad()) params_.push_back(Param{p, 0, at::Tensor(), false});

  // Backward produces gradients roughly in reverse registration order: buckets follow it, so the
  // first bucket fills (and starts reducing) while most of backward is still to run.
  std::vector<size_t> order(params_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = order.size() - 1 - i;
  int64_t bucket_bytes = 0;
  for (size_t i : order) {
    const at::Tensor& p = params_[i].tensor;
    const int64_t bytes = p.numel() * static_cast<int64_t>(p.element_size());
    // The first bucket is small (PyTorch's kDefaultFirstBucketBytes, 1 MiB): it fills from the last layers
    // and starts its all-reduce early in backward; the rest use bucket_bytes.
    const int64_t limit = buckets_.size() == 1 ? std::min(options_.first_bucket_bytes(), options_.bucket_bytes())
                                               : options_.bucket_bytes();
    const bool fits = !buckets_.empty() && bucket_bytes + bytes <= limit &&
                      params_[buckets_.back().params.front()].tensor.options().type_equal(p.options());
    if (!fits) {
      buckets_.emplace_back();
      bucket_bytes = 0;
    }
    buckets_.back().params.push_back(i);
    params_[i].bucket = buckets_.size() - 1;
    bucket_bytes += bytes;
  }
  for (auto& bucket : buckets_) {
    int64_t numel = 0;
    for (size_t i : bucket.params) numel += params_[i].tensor.numel();
    const at::Tensor& first = params_[bucket.params.front()].tensor;
    bucket.flat = at::zeros({numel}, first.options().requires_grad(false));
    int64_t offset = 0;
    for (size_t i : bucket.params) {
      Param& param = params_[i];
      // The slot takes the parameter's strides (channels_last included), so gradients, which follow
      // the parameter's layout, copy in and out element for element without a transpose.
      param.view = param.tensor.is_non_overlapping_and_dense()
                       ? bucket.flat.as_strided(param.tensor.sizes(), param.tensor.strides(), offset)
                       : bucket.flat.narrow(0, offset, param.tensor.numel()).view(param.tensor.sizes());
      offset += param.tensor.numel();
    }
    bucket.pending = bucket.params.size();
  }
  for (size_t i = 0; i < params_.size(); ++i)
    torch::autograd::impl::set_post_acc_grad_hooks(params_[i].tensor,
                                                   std::make_unique<GradReadyHook>([this, i] { on_gradient_ready(i); }));

  std::vector<at::Tensor> state;
  for (const auto& p : params_) state.push_back(p.tensor);
  for (const auto& b : module_.buffers()) state.push_back(b);
  group_->broadcast(state, "broadcast of rank 0's parameters and buffers");
}

DistributedDataParallel::~DistributedDataParallel() {
  for (auto& p : params_) torch::autograd::impl::set_post_acc_grad_hooks(p.tensor, nullptr);
}

DdpStats DistributedDataParallel::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  DdpStats stats = stats_;
  if (timer_) stats.span_s = timer_->span_s(), stats.exposed_s = timer_->exposed_s();
  return stats;
}

void DistributedDataParallel::prepare_micro_step(bool sync) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    sync_ = sync;
  }
  if (options_.broadcast_buffers()) sync_buffers();
}

void DistributedDataParallel::sync_buffers() {
  std::vector<at::Tensor> buffers = module_.buffers();
  if (!buffers.empty()) group_->broadcast(buffers, "broadcast of rank 0's buffers");
}

void DistributedDataParallel::on_gradient_ready(size_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!sync_) return;  // no_sync: the gradient stays local and adds up over the cycle
  Param& param = params_[index];
  if (param.ready) return;
  at::NoGradGuard no_grad;
  param.view.copy_(param.tensor.grad());
  param.ready = true;
  if (--buckets_[param.bucket].pending == 0) launch_ready_buckets();
}

void DistributedDataParallel::launch_ready_buckets() {
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) launch(buckets_[next_bucket_++]);
}

void DistributedDataParallel::launch(Bucket& bucket) {
  if (timer_ && &bucket == &buckets_.front()) timer_->first_launch();
  bucket.launched = Clock::now();
  bucket.work = group_->allreduce_async(bucket.flat);
  ++stats_.allreduces;
  auto done = std::make_shared<std::atomic<int64_t>>(0);  // ns since the clock's epoch; 0: not yet
  bucket.completed = done;
  try {
    bucket.work->getFuture()->addCallback([done](c10::ivalue::Future&) { done->store(now_ns()); });
  } catch (const std::exception&) {
    // A backend without futures: the completion time is taken when the wait returns.
  }
}

void DistributedDataParallel::finish_gradient_sync() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!sync_) return;
  at::NoGradGuard no_grad;
  // Parameters that took no part in this backward still reduce (zeros when they have no gradient),
  // so every rank issues the same collectives in the same order.
  for (auto& param : params_) {
    if (param.ready) continue;
    const at::Tensor& grad = param.tensor.grad();
    if (grad.defined()) param.view.copy_(grad);
    else param.view.zero_();
    param.ready = true;
    --buckets_[param.bucket].pending;
  }
  launch_ready_buckets();

  if (timer_) timer_->wait_begin();
  const auto wait_start = Clock::now();
  for (auto& bucket : buckets_) group_->wait(bucket.work, "gradient all-reduce");
  const int64_t all_done = now_ns();
  if (timer_) timer_->wait_end();
  else stats_.exposed_s += seconds_since(wait_start);
  const double world = static_cast<double>(group_->size());
  int64_t first_launch = all_done, last_done = 0;
  for (auto& bucket : buckets_) {
    bucket.flat.div_(world);
    const int64_t done = bucket.completed->load() ? bucket.completed->load() : all_done;
    const int64_t launched = std::chrono::duration_cast<std::chrono::nanoseconds>(bucket.launched.time_since_epoch()).count();
    first_launch = std::min(first_launch, launched), last_done = std::max(last_done, done);
    bucket.work.reset();
    bucket.pending = bucket.params.size();
  }
  for (auto& param : params_) {
    at::Tensor& grad = param.tensor.mutable_grad();
    if (grad.defined()) grad.copy_(param.view);
    else grad = param.view.clone(at::MemoryFormat::Preserve);
    param.ready = false;
  }
  if (!buckets_.empty() && !timer_) stats_.span_s += static_cast<double>(last_done - first_launch) * 1e-9;
  next_bucket_ = 0;
  ++stats_.syncs;
}

} // namespace fastloop
