// GraphedStep for CUDA: static input buffers, capture on a side stream with the autocast cast cache
// off (cached casts would be freed outside the graph's pool), replay on the current stream.
// Compiled only when LibTorch was built with CUDA (see CMakeLists.txt).
#include "fastloop/train/cuda_graph.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

namespace fastloop {

namespace {

class CudaGraphedStep final : public GraphedStep {
 public:
  CudaGraphedStep(ClassifierImpl& model, const StepOptions& options, GradScaler& scaler, const at::Tensor& images,
                  const at::Tensor& labels)
      : model_(model), options_(options), scaler_(scaler), images_(images.clone()), labels_(labels.clone()) {
    // Gradients are allocated inside the capture, from the graph's pool, and stay the .grad tensors.
    model_.zero_grad(/*set_to_none=*/true);
    const bool cache = at::autocast::is_autocast_cache_enabled();
    at::autocast::set_autocast_cache_enabled(false);
    auto current = c10::cuda::getCurrentCUDAStream(images.device().index());
    auto side = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, images.device().index());
    at::cuda::CUDAEvent ready;
    ready.record(current);
    ready.block(side);
    {
      c10::cuda::CUDAStreamGuard guard(side);
      graph_.capture_begin();
      loss_ = train_micro_step(model_, images_, labels_, options_, 1, scaler_);
      graph_.capture_end();
    }
    at::cuda::CUDAEvent captured;
    captured.record(side);
    captured.block(current);
    at::autocast::set_autocast_cache_enabled(cache);
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
