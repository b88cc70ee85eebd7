// PhaseRecorder: device syncs at phase boundaries (CUDA; CPU ops have finished when they return).
#include "fastloop/train/phase_recorder.h"

#include <torch/cuda.h>

namespace fastloop {

namespace {
void device_wait(c10::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}
}  // namespace

TimeSplit& TimeSplit::operator/=(double n) {
  for (double* part : {&data_wait, &copy, &forward, &backward, &optimizer, &communication}) *part /= n;
  return *this;
}

void PhaseRecorder::restart() {
  device_wait(device_);
  last_ = std::chrono::steady_clock::now();
}

void PhaseRecorder::mark(Phase phase) {
  device_wait(device_);
  const auto now = std::chrono::steady_clock::now();
  split.*phase += std::chrono::duration<double>(now - last_).count();
  last_ = now;
}

} // namespace fastloop
