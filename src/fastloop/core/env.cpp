// Machine and process facts.
#include "fastloop/core/env.h"

#include <ATen/Parallel.h>

#include <sched.h>

#include <thread>

namespace fastloop {

int64_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

void threads_apply(int64_t threads) {
  at::set_num_threads(static_cast<int>(threads > 0 ? threads : usable_cores()));
}

} // namespace fastloop
