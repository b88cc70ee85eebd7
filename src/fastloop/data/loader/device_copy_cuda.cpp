// PinnedRing for CUDA: pinned buffers from LibTorch's caching host allocator, one side stream for the
// copies and one event per slot. Compiled only when LibTorch was built with CUDA (see CMakeLists.txt).
#include "fastloop/data/loader/device_copy.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <vector>

namespace fastloop {

namespace {

class CudaPinnedRing final : public PinnedRing {
 public:
  CudaPinnedRing(at::Device device, int64_t slots, const BatchLayout& layout)
      : device_(device), side_(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())) {
    const auto format = layout.channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
    const auto sizes = std::vector<int64_t>{layout.batch_size, layout.channels, layout.height, layout.width};
    for (int64_t s = 0; s < slots; ++s) {
      Slot slot;
      slot.host.images = at::empty(sizes, at::TensorOptions(layout.dtype).pinned_memory(true), format);
      slot.host.labels = at::empty({layout.batch_size}, at::TensorOptions(at::kLong).pinned_memory(true));
      slots_.push_back(std::move(slot));
    }
  }

  int64_t slots() const override { return static_cast<int64_t>(slots_.size()); }

  HostBatch acquire(int64_t slot) override {
    Slot& s = slots_.at(static_cast<size_t>(slot));
    // A worker thread waits here while the training thread may be capturing a CUDA graph in global mode,
    // which an event synchronize from any thread would invalidate; relaxed mode for this thread's call
    // keeps the capture valid (PyTorch fixed its NCCL watchdog the same way).
    c10::cuda::CUDAStreamCaptureModeGuard relaxed(cudaStreamCaptureModeRelaxed);
    s.copied.synchronize();  // no-op before the first copy
    return s.host;
  }

  std::pair<at::Tensor, at::Tensor> copy_to_device(int64_t slot, int64_t count) override {
    Slot& s = slots_.at(static_cast<size_t>(slot));
    c10::cuda::CUDAGuard device_guard(device_);
    const c10::cuda::CUDAStream compute = c10::cuda::getCurrentCUDAStream(device_.index());
    at::Tensor images, labels;
    {
      // Allocated and written on the side stream, so the copy overlaps whatever the compute stream runs.
      c10::cuda::CUDAStreamGuard stream_guard(side_);
      images = s.host.images.narrow(0, 0, count).to(device_, /*non_blocking=*/true);
      labels = s.host.labels.narrow(0, 0, count).to(device_, /*non_blocking=*/true);
      s.copied.record(side_);
    }
    s.copied.block(compute);
    // The allocator must not hand these blocks to the side stream again before the compute stream is done.
    images.record_stream(compute.unwrap());
    labels.record_stream(compute.unwrap());
    return {images, labels};
  }

 private:
  struct Slot {
    HostBatch host;
    at::cuda::CUDAEvent copied;  // recorded after the copy out of `host` was issued
  };

  at::Device device_;
  c10::cuda::CUDAStream side_;
  std::vector<Slot> slots_;
};

}  // namespace

namespace detail {
std::unique_ptr<PinnedRing> pinned_ring_make_cuda(at::Device device, int64_t slots, const BatchLayout& layout) {
  return std::make_unique<CudaPinnedRing>(device, slots, layout);
}
}  // namespace detail

} // namespace fastloop
