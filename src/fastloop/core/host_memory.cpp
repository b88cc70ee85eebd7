// host_memory_keep: glibc's mallopt, the only allocator knob this needs (other C libraries: no-op).
#include "fastloop/core/host_memory.h"

#include <sys/resource.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <climits>

namespace fastloop {

bool host_memory_keep(int64_t bytes) {
#if defined(__GLIBC__)
  const int threshold = static_cast<int>(std::min<int64_t>(bytes, INT_MAX / 2));
  // Blocks up to `threshold` come from the heap (not mmap), and up to twice that stays at the heap top.
  return mallopt(M_MMAP_THRESHOLD, threshold) == 1 && mallopt(M_TRIM_THRESHOLD, 2 * threshold) == 1;
#else
  (void)bytes;
  return false;
#endif
}

int64_t host_minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

} // namespace fastloop
