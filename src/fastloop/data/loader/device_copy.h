// Host-to-device batch transfer for CUDA (the guide's pin_memory + non_blocking): loader workers fill a
// ring of pinned host buffers; each batch is copied non_blocking on a side stream and the compute stream
// waits on the copy's event. A slot is refilled only after the event of its previous copy completed.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <memory>

namespace fastloop {

/// What every batch of a loader looks like on the host.
struct BatchLayout {
  int64_t batch_size = 0;
  int64_t channels = 0, height = 0, width = 0;
  at::ScalarType dtype = at::kFloat;
  bool channels_last = false;
};

/// The host images and labels of one slot, full batch size; fill a prefix of them.
struct HostBatch {
  at::Tensor images;   // pinned, BatchLayout's dtype and memory format
  at::Tensor labels;   // pinned int64 [batch_size]
};

class PinnedRing {
 public:
  virtual ~PinnedRing() = default;
  virtual int64_t slots() const = 0;

  /// The buffers of `slot`, once the last copy out of them has finished (blocks until then).
  /// The caller must not acquire a slot whose copy has not been issued yet (the loader's window
  /// guarantees it: a batch leaves the window only after its copy was issued).
  virtual HostBatch acquire(int64_t slot) = 0;

  /// Issues the copy of the first `count` samples of `slot` to the device on the side stream
  /// (non_blocking), makes the caller's current stream wait on it and records the slot's event.
  /// Returns the device images and labels, safe to use on the current stream.
  virtual std::pair<at::Tensor, at::Tensor> copy_to_device(int64_t slot, int64_t count) = 0;
};

/// A ring of `slots` buffers for `device`; nullptr when this build has no CUDA or `device` is not CUDA.
std::unique_ptr<PinnedRing> pinned_ring_make(at::Device device, int64_t slots, const BatchLayout& layout);

/// Plain buffers for one batch of `count` samples in `layout` on the CPU (pageable memory).
HostBatch host_batch_empty(const BatchLayout& layout, int64_t count);

namespace detail {
/// Defined in device_copy_cuda.cpp, which CUDA builds alone compile.
std::unique_ptr<PinnedRing> pinned_ring_make_cuda(at::Device device, int64_t slots, const BatchLayout& layout);
}  // namespace detail

} // namespace fastloop
