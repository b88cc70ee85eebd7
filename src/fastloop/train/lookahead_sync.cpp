// Lookahead's distributed start, apart from lookahead.cpp so that what checkpoints need of Lookahead (its
// state and archive) links without c10d: the checkpoint fuzz targets build checkpoint.cpp with it alone.
#include "fastloop/train/lookahead.h"

#include "fastloop/dist/process_group.h"

#include <ATen/ATen.h>

namespace fastloop {

void Lookahead::sync(ProcessGroup& group) {
  std::vector<at::Tensor> all = slow_;
  at::Tensor applied = at::full({1}, applied_, at::kLong);
  all.push_back(applied);
  group.broadcast(all, "broadcast of rank 0's Lookahead slow weights");
  applied_ = applied.item<int64_t>();
}

} // namespace fastloop
