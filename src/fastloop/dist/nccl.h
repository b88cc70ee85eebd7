// The NCCL backend, built only against a CUDA LibTorch (nccl_cuda.cpp): ProcessGroupNCCL.hpp needs
// CUDA and NCCL headers that a CPU build lacks, so nothing else includes it.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <cstdint>

namespace fastloop {

/// ProcessGroupNCCL over `store`; collectives give up after `timeout`. Defined in CUDA builds only.
c10::intrusive_ptr<c10d::Backend> nccl_backend_make(const c10::intrusive_ptr<c10d::Store>& store, int64_t rank,
                                                    int64_t world_size, std::chrono::milliseconds timeout);

} // namespace fastloop
