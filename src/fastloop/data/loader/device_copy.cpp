// The device-independent half of device_copy.h: plain host buffers, and the choice of a pinned ring only
// when the build has CUDA (the CUDA half lives in device_copy_cuda.cpp).
#include "fastloop/data/loader/device_copy.h"

#include "fastloop/core/compat.h"

#include <ATen/ATen.h>

namespace fastloop {

HostBatch host_batch_empty(const BatchLayout& layout, int64_t count) {
  const auto format = layout.channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
  return {at::empty({count, layout.channels, layout.height, layout.width}, at::TensorOptions(layout.dtype), format),
          at::empty({count}, at::kLong)};
}

std::unique_ptr<PinnedRing> pinned_ring_make(at::Device device, int64_t slots, const BatchLayout& layout) {
  TORCH_CHECK(slots >= 1, "pinned_ring_make: slots must be >= 1, got ", slots);
  if constexpr (compat::kBuiltWithCuda) {
    if (device.is_cuda()) return detail::pinned_ring_make_cuda(device, slots, layout);
  }
  return nullptr;
}

} // namespace fastloop
