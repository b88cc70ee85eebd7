// ProcessGroupNCCL for CUDA builds; the collectives run on NCCL's own streams, ordered after the
// compute stream by the backend. A lost peer is reported by ProcessGroup::wait_host() after the
// timeout with fastloop's message; NCCL's watchdog gets a minute more, as the backstop that ends the
// process (TORCH_NCCL_ASYNC_ERROR_HANDLING's default) if the host is stuck where fastloop does not poll.
#include "fastloop/dist/nccl.h"

#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

namespace fastloop {

c10::intrusive_ptr<c10d::Backend> nccl_backend_make(const c10::intrusive_ptr<c10d::Store>& store, int64_t rank,
                                                    int64_t world_size, std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout + std::chrono::minutes(1);
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, static_cast<int>(rank), static_cast<int>(world_size),
                                                     options);
}

} // namespace fastloop
