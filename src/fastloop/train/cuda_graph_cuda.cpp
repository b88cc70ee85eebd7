// GraphedStep for CUDA: static input buffers, a warm-up and the capture on a side stream with the
// autocast cast cache off (cached casts would be freed outside the graph's pool), replay on the current
// stream. The capture is exception-safe: a failure ends it and the caller trains eagerly.
// Compiled only when LibTorch was built with CUDA (see CMakeLists.txt).
#include "fastloop/train/cuda_graph.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <torch/cuda.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

namespace fastloop {

namespace {

/// A capture in progress: ended on every path (a throw mid-capture would otherwise leave the stream and
/// the allocator capturing), with autocast's cast cache off while it lasts (cached casts would be freed
/// outside the graph's pool) and restored after.
class CaptureScope {
 public:
  explicit CaptureScope(at::cuda::CUDAGraph& graph)
      : graph_(graph), cache_(at::autocast::is_autocast_cache_enabled()) {
    at::autocast::set_autocast_cache_enabled(false);
    graph_.capture_begin();
  }
  void end() {
    capturing_ = false;
    graph_.capture_end();
  }
  ~CaptureScope() {
    if (capturing_) {
      try {
        graph_.capture_end();  // throws for an invalidated capture: the capture is over either way
      } catch (const std::exception&) {
      }
    }
    at::autocast::set_autocast_cache_enabled(cache_);
  }
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

 private:
  at::cuda::CUDAGraph& graph_;
  bool cache_;
  bool capturing_ = true;
};

class CudaGraphedStep final : public GraphedStep {
 public:
  CudaGraphedStep(ClassifierImpl& model, const StepOptions& options, GradScaler& scaler, const at::Tensor& images,
                  const at::Tensor& labels)
      : model_(model), options_(options), scaler_(scaler), images_(images.clone()), labels_(labels.clone()) {
    const auto index = images.device().index();
    auto current = c10::cuda::getCurrentCUDAStream(index);
    auto side = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, index);
    at::cuda::CUDAEvent ready;
    ready.record(current);
    ready.block(side);
    {
      c10::cuda::CUDAStreamGuard guard(side);
      // As torch.cuda.make_graphed_callables: one eager micro-step on the capture's own stream first, so
      // per-stream state (cuBLAS workspaces, cuDNN plans) exists before the capture, then a sync and an
      // empty cache; the warm-up's gradients are dropped.
      train_micro_step(model_, images_, labels_, options_, 1, scaler_);
      model_.zero_grad(/*set_to_none=*/true);
      torch::cuda::synchronize(index);
      c10::cuda::CUDACachingAllocator::emptyCache();
      // Gradients are allocated inside the capture, from the graph's pool, and stay the .grad tensors.
      CaptureScope capture(graph_);
      loss_ = train_micro_step(model_, images_, labels_, options_, 1, scaler_);
      capture.end();
    }
    at::cuda::CUDAEvent captured;
    captured.record(side);
    captured.block(current);
  }

  at::Tensor run(const at::Tensor& images, const at::Tensor& labels) override {
    if (images.sizes() != images_.sizes() || images.strides() != images_.strides() || labels.sizes() != labels_.sizes()) {
      for (auto& p : model_.parameters())  // eager accumulation into the graph's gradients starts from zero
        if (p.grad().defined()) p.mutable_grad().zero_();
      return train_micro_step(model_, images, labels, options_, 1, scaler_);
    }
    images_.copy_(images, /*non_blocking=*/true);
    labels_.copy_(labels, /*non_blocking=*/true);
    graph_.replay();
    return loss_.clone();  // the next replay overwrites loss_
  }

 private:
  ClassifierImpl& model_;
  StepOptions options_;
  GradScaler& scaler_;
  at::Tensor images_, labels_, loss_;  // the graph's static inputs and output
  at::cuda::CUDAGraph graph_;
};

}  // namespace

namespace detail {
std::unique_ptr<GraphedStep> graphed_step_make_cuda(ClassifierImpl& model, const StepOptions& options,
                                                    GradScaler& scaler, const at::Tensor& images,
                                                    const at::Tensor& labels) {
  return std::make_unique<CudaGraphedStep>(model, options, scaler, images, labels);
}
}  // namespace detail

} // namespace fastloop
