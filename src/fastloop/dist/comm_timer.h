// Where a step's gradient communication went on a CUDA device, from events on the compute stream.
// ProcessGroupNCCL completes a work's future when the collective is queued and its wait() only makes
// the current stream wait, so host clocks say nothing there; events recorded on the compute stream when
// the first bucket is launched, when backward has been queued and after the waits measure, once they
// have happened, the span of communication and the part of it the compute stream sat waiting for.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Event.h>

#include <memory>

namespace fastloop {

class CommTimer {
 public:
  explicit CommTimer(c10::Device device) : device_(device) {}

  void first_launch();  // the step's first bucket goes to the collective stream
  void wait_begin();    // backward is queued; the optimizer step waits for the buckets from here
  void wait_end();      // the buckets' results are usable on the compute stream

  /// Seconds summed over the finished steps (waiting for the last one's events): communication's span
  /// (first launch → wait end) and the part exposed to the compute stream (wait begin → wait end).
  double span_s();
  double exposed_s();

 private:
  struct StepEvents {
    c10::Event launch, begin, end;
    explicit StepEvents(c10::DeviceType type);
  };
  void record(c10::Event& event) const;
  void collect();  // adds done_'s times to the sums

  double span_s_ = 0.0, exposed_s_ = 0.0;

  c10::Device device_;
  std::unique_ptr<StepEvents> recording_;  // this step's
  std::unique_ptr<StepEvents> done_;       // the last finished step's, not collected yet
};

} // namespace fastloop
