// CommTimer on the device-generic c10::Event (cudaEvent_t with timing on CUDA), so no CUDA header is needed.
#include "fastloop/dist/comm_timer.h"

#include <c10/core/impl/VirtualGuardImpl.h>

namespace fastloop {

CommTimer::StepEvents::StepEvents(c10::DeviceType type)
    : launch(type, c10::EventFlag::BACKEND_DEFAULT),  // BACKEND_DEFAULT: timing enabled
      begin(type, c10::EventFlag::BACKEND_DEFAULT),
      end(type, c10::EventFlag::BACKEND_DEFAULT) {}

void CommTimer::record(c10::Event& event) const {
  c10::impl::VirtualGuardImpl guard(device_.type());
  event.record(guard.getStream(device_));
}

void CommTimer::first_launch() {
  if (!recording_) recording_ = std::make_unique<StepEvents>(device_.type());
  record(recording_->launch);
}

void CommTimer::wait_begin() {
  if (!recording_) first_launch();  // no bucket launched during backward: all of them go now
  record(recording_->begin);
}

void CommTimer::wait_end() {
  record(recording_->end);
  collect();  // the step before: its events happened long ago, so this does not wait
  done_ = std::move(recording_);
}

void CommTimer::collect() {
  if (!done_) return;
  done_->end.synchronize();
  span_s_ += done_->launch.elapsedTime(done_->end) * 1e-3;  // milliseconds
  exposed_s_ += done_->begin.elapsedTime(done_->end) * 1e-3;
  done_.reset();
}

double CommTimer::span_s() {
  collect();
  return span_s_;
}

double CommTimer::exposed_s() {
  collect();
  return exposed_s_;
}

} // namespace fastloop
