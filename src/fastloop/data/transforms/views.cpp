// The seeds of several views per sample (views.h).
#include "fastloop/data/transforms/views.h"

#include "fastloop/data/loader/sampler.h"

#include <c10/util/Exception.h>

namespace fastloop {
namespace {

constexpr uint64_t kViewSalt = 0x76696577735eedULL;  // "views" + "eed": keeps view seeds off other streams

}  // namespace

uint64_t view_seed(uint64_t seed, int64_t view) {
  TORCH_CHECK(view >= 0, "view_seed: view must be >= 0, got ", view);
  if (view == 0) return seed;
  return hash_mix(seed, kViewSalt, static_cast<uint64_t>(view)) >> 1;  // >> 1: a non-negative int64
}

} // namespace fastloop
