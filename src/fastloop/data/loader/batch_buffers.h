// Host memory for the batches a loader hands out, recycled: a tensor made here gives its memory back when its
// last reference goes, and the next batch of that size reuses it. A fresh 16 x 3 x 480 x 480 float batch is
// 44 MB the kernel maps and zeroes page by page (11k page faults): on 2 cores, a fifth of a worker's time on
// segmentation batches. A consumer that keeps its batches only makes the pool allocate anew. (Classification
// batches reuse the loader's fixed buffers, Loader::kept_; batches with targets have the sizes the pipeline gives.)
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace fastloop {

class BatchBuffers {
 public:
  /// Keeps at most `keep` idle buffers (the batches in flight: prefetch + workers, times the tensors of each).
  explicit BatchBuffers(size_t keep);

  /// An uninitialised contiguous CPU tensor, as at::empty, in a recycled buffer of exactly its bytes when
  /// there is one. Thread-safe; the tensor may outlive this object.
  at::Tensor empty(at::IntArrayRef sizes, at::ScalarType dtype);

 private:
  struct Pool {
    std::mutex mutex;
    std::vector<std::pair<void*, size_t>> idle;  // buffers and their bytes
    size_t keep = 0;
    void give_back(void* data, size_t bytes);
    ~Pool();
  };
  std::shared_ptr<Pool> pool_;
};

}  // namespace fastloop
