// The steady clock the trainer, the bench, the tuner and DDP time with, and seconds since a time point.
#pragma once

#include <chrono>

namespace fastloop {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace fastloop
