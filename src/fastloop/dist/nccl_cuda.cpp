// ProcessGroupNCCL for CUDA builds; the collectives run on NCCL's own streams, ordered after the
// compute stream by the backend.
#include "fastloop/dist/nccl.h"

#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

namespace fastloop {

c10::intrusive_ptr<c10d::Backend> nccl_backend_make(const c10::intrusive_ptr<c10d::Store>& store, int64_t rank,
                                                    int64_t world_size, std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, static_cast<int>(rank), static_cast<int>(world_size),
                                                     options);
}

} // namespace fastloop
