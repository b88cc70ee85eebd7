// Kineto through LibTorch's C++ entry points (torch/csrc/autograd/profiler_kineto.h): prepare and enable
// at step A, disable at step B, ProfilerResult::save writes the Chrome trace JSON.
#include "fastloop/train/profile.h"

#include "fastloop/core/errors.h"

#include <ATen/record_function.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace fastloop {

namespace prof = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

ProfileSteps profile_steps_parse(const std::string& text) {
  long long first = 0, end = 0;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%lld:%lld%c", &first, &end, &extra) != 2 || first < 0 || first >= end)
    throw InputError("--profile-steps " + text + ": must be A:B with 0 <= A < B (records optimizer steps A..B-1), "
                     "e.g. 10:12");
  return {first, end};
}

StepProfiler::StepProfiler(const std::string& path, const std::string& steps, c10::Device device, int64_t total_steps)
    : path_(path), cuda_(device.is_cuda()) {
  if (path_.empty()) return;
  steps_ = profile_steps_parse(steps);
  if (steps_.first >= total_steps)
    throw InputError("--profile-steps " + steps + ": the run has " + std::to_string(total_steps) +
                     " optimizer steps (0.." + std::to_string(total_steps - 1) + "); choose A below that");
  // Found unwritable now, not after the steps were recorded.
  if (!std::ofstream(path_)) throw InputError("--profile " + path_ + ": cannot write this file; check the folder");
}

StepProfiler::~StepProfiler() {
  if (!active_) return;
  step_range_.reset();
  prof::disableProfiler();  // a run that threw mid-profile: leave the profiler off, write nothing
}

void StepProfiler::step_begins(int64_t step) {
  if (path_.empty() || written_ || step_range_ || step < steps_.first || step >= steps_.end) return;
  if (!active_) {
    // Input shapes on; no stacks, memory or FLOP counts, which would cost the steps being measured.
    const ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/true);
    std::set<ActivityType> activities{ActivityType::CPU};
    if (cuda_) activities.insert(ActivityType::CUDA);
    prof::prepareProfiler(config, activities);
    prof::enableProfiler(config, activities);
    active_ = true;
  }
  step_name_ = "ProfilerStep#" + std::to_string(step);
  step_range_ = std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE);
  if (step_range_->isActive()) step_range_->before(step_name_.c_str());
}

void StepProfiler::step_done(int64_t steps_done) {
  if (!active_) return;
  step_range_.reset();  // ends the step's range
  if (steps_done >= steps_.end) stop_and_save();
}

bool StepProfiler::finish() {
  if (active_) stop_and_save();
  return written_;
}

void StepProfiler::stop_and_save() {
  step_range_.reset();
  std::unique_ptr<prof::ProfilerResult> result = prof::disableProfiler();
  active_ = false;
  written_ = true;
  result->save(path_);
  std::error_code error;
  if (std::filesystem::file_size(path_, error) == 0 || error)
    throw RunError("--profile " + path_ + ": the profiler wrote no trace (is this LibTorch built with Kineto?)");
  std::printf("profile: wrote %s (optimizer steps %lld..%lld); open it in https://ui.perfetto.dev\n", path_.c_str(),
              static_cast<long long>(steps_.first), static_cast<long long>(steps_.end - 1));
  std::fflush(stdout);
}

} // namespace fastloop
