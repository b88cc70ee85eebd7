// Data-parallel gradient synchronisation for a LibTorch module, as torch.nn.parallel.DistributedDataParallel:
// rank 0's parameters and buffers broadcast at start; gradients grouped into buckets (reverse
// registration order, the order backward produces them), each bucket all-reduced asynchronously from
// autograd's post-accumulate-grad hooks as soon as all its gradients are ready, so communication
// overlaps the rest of backward; averaged and copied back before the optimizer step.
#pragma once

#include "fastloop/dist/comm_timer.h"
#include "fastloop/dist/process_group.h"

#include <ATen/core/Tensor.h>
#include <torch/arg.h>
#include <torch/nn/module.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

namespace fastloop {

struct DdpOptions {
  /// Gradient bytes per all-reduce: larger buckets mean fewer collectives, smaller ones start earlier.
  TORCH_ARG(int64_t, bucket_bytes) = int64_t{25} << 20;  // 25 MiB, PyTorch's default
  /// The first bucket reduced (the last layers' gradients) is capped at this, so communication starts
  /// early in backward: PyTorch's kDefaultFirstBucketBytes.
  TORCH_ARG(int64_t, first_bucket_bytes) = int64_t{1} << 20;  // 1 MiB
  /// Rank 0's buffers (BatchNorm running statistics) copied to every rank before each forward.
  TORCH_ARG(bool, broadcast_buffers) = true;
};

/// What synchronisation cost, summed since construction.
struct DdpStats {
  int64_t allreduces = 0;      // bucket all-reduces launched
  int64_t syncs = 0;           // finish_gradient_sync() calls that reduced (optimizer steps)
  double span_s = 0.0;         // seconds from each step's first bucket launch to its last completion, summed:
                               // the wall time communication went on (NCCL: from events, see comm_timer.h)
  double exposed_s = 0.0;      // seconds finish_gradient_sync() blocked waiting (NCCL: the compute stream
                               // waited): the part of span_s not hidden
};

class DistributedDataParallel {
 public:
  /// Registers hooks on `module`'s parameters and broadcasts rank 0's state. `module` must outlive this
  /// object and already be on its device and in its memory format (gradient buckets mirror its strides).
  DistributedDataParallel(torch::nn::Module& module, std::shared_ptr<ProcessGroup> group, DdpOptions options = {});
  ~DistributedDataParallel();
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

  /// Call before each micro-step's forward. `sync` false (no_sync) leaves this micro-step's gradients
  /// local, to add up; only the last micro-step of an accumulation cycle reduces.
  void prepare_micro_step(bool sync);

  /// Copies rank 0's buffers to every rank (before each forward when broadcast_buffers, and before an
  /// evaluation, so every rank evaluates the model rank 0 checkpoints).
  void sync_buffers();

  /// Waits for every bucket, divides by the world size and writes the averages into .grad; before the
  /// optimizer step. Buckets whose gradients never became ready (unused parameters) are reduced here.
  void finish_gradient_sync();

  int64_t bucket_count() const { return static_cast<int64_t>(buckets_.size()); }
  DdpStats stats() const;

 private:
  struct Bucket {
    at::Tensor flat;                 // 1-D, the bucket's dtype and device
    std::vector<size_t> params;      // indices into params_
    size_t pending = 0;              // gradients still to arrive in this backward
    c10::intrusive_ptr<c10d::Work> work;
    std::chrono::steady_clock::time_point launched;
    std::shared_ptr<std::atomic<int64_t>> completed;  // ns, set by the work's callback; 0: not yet
  };
  struct Param {
    at::Tensor tensor;
    size_t bucket = 0;
    at::Tensor view;                 // its slot in the bucket, with the parameter's sizes and strides
    bool ready = false;
  };

  void on_gradient_ready(size_t index);
  void launch_ready_buckets();       // in bucket order, so every rank issues the same sequence
  void launch(Bucket& bucket);

  torch::nn::Module& module_;
  std::shared_ptr<ProcessGroup> group_;
  DdpOptions options_;
  std::vector<Param> params_;
  std::vector<Bucket> buckets_;
  size_t next_bucket_ = 0;
  bool sync_ = true;
  DdpStats stats_;
  std::unique_ptr<CommTimer> timer_;  // NCCL: the times come from events on the compute stream
  mutable std::mutex mutex_;         // hooks run on autograd's threads (one per device on CUDA)
};

} // namespace fastloop
