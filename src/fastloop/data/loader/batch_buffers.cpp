// The recycled batch memory of batch_buffers.h: aligned buffers behind at::from_blob, whose deleter holds the
// pool, so a batch kept past its loader still frees its memory.
#include "fastloop/data/loader/batch_buffers.h"

#include <ATen/ATen.h>

#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdlib>

namespace fastloop {

constexpr size_t kBatchBufferAlignment = 64;  // bytes: c10's CPU allocator's

BatchBuffers::BatchBuffers(size_t keep) : pool_(std::make_shared<Pool>()) { pool_->keep = keep; }

at::Tensor BatchBuffers::empty(at::IntArrayRef sizes, at::ScalarType dtype) {
  size_t bytes = c10::elementSize(dtype);
  for (int64_t size : sizes) bytes *= static_cast<size_t>(size);
  bytes = std::max<size_t>(bytes, 1);
  void* data = nullptr;
  {
    std::lock_guard<std::mutex> lock(pool_->mutex);
    for (auto it = pool_->idle.begin(); it != pool_->idle.end(); ++it) {
      if (it->second != bytes) continue;
      data = it->first;
      pool_->idle.erase(it);
      break;
    }
  }
  if (!data) data = std::aligned_alloc(kBatchBufferAlignment, (bytes + kBatchBufferAlignment - 1) / kBatchBufferAlignment * kBatchBufferAlignment);
  TORCH_CHECK(data, "BatchBuffers: out of memory for a batch of ", bytes, " bytes");
  std::shared_ptr<Pool> pool = pool_;
  return at::from_blob(data, sizes, [pool, bytes](void* p) { pool->give_back(p, bytes); }, at::TensorOptions(dtype));
}

void BatchBuffers::Pool::give_back(void* data, size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (idle.size() < keep) {
      idle.emplace_back(data, bytes);
      return;
    }
  }
  std::free(data);
}

BatchBuffers::Pool::~Pool() {
  for (auto& [data, bytes] : idle) std::free(data);
}

}  // namespace fastloop
