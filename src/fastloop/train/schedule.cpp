// Learning-rate schedules. One-cycle follows torch.optim.lr_scheduler.OneCycleLR (div_factor 25,
// final_div_factor 1e4, cosine or linear annealing); cosine and linear decay to 0 after the warm-up, linear
// as PyTorch's LinearLR(1, 0) after a LinearLR warm-up (the budget-aware schedule of Li, Yumer and Ramanan,
// ICLR 2020).
#include "fastloop/train/schedule.h"

#include "fastloop/train/budget_plan.h"

#include <algorithm>
#include <cmath>

namespace fastloop {

namespace {
constexpr double kPi = 3.14159265358979323846;

double cosine_between(double from, double to, double fraction) {
  return to + (from - to) * 0.5 * (1.0 + std::cos(kPi * std::clamp(fraction, 0.0, 1.0)));
}

double linear_between(double from, double to, double fraction) {
  return from + (to - from) * std::clamp(fraction, 0.0, 1.0);
}
}  // namespace

LrSchedule::LrSchedule(const ScheduleConfig& config, double peak_lr, int64_t total_steps,
                       int64_t steps_per_epoch)
    : config_(config),
      peak_lr_(peak_lr),
      total_steps_(std::max<int64_t>(total_steps, 1)),
      steps_per_epoch_(std::max<int64_t>(steps_per_epoch, 1)),
      planned_total_(total_steps_) {}

void LrSchedule::replan(int64_t from, int64_t new_total) {
  new_total = std::max<int64_t>(new_total, 1);
  if (new_total == total_steps_) return;
  replans_.push_back({from, total_steps_, new_total});
  total_steps_ = new_total;
}

double LrSchedule::unwarped(int64_t step) const {
  double s = static_cast<double>(step);
  for (auto it = replans_.rbegin(); it != replans_.rend(); ++it) s = schedule_warp(s, it->from, it->old_total, it->new_total);
  return s;
}

double LrSchedule::onecycle_at(double s, double start, double peak, double end) const {
  const double total = static_cast<double>(planned_total_);
  const double rise_end = config_.pct_start * total - 1.0;
  const auto anneal = config_.anneal_strategy == "linear" ? linear_between : cosine_between;
  if (s <= rise_end) return anneal(start, peak, s / std::max(rise_end, 1.0));
  return anneal(peak, end, (s - rise_end) / (total - 1.0 - rise_end));
}

bool LrSchedule::cycles_momentum() const { return config_.name == "onecycle" && config_.cycle_momentum; }

double LrSchedule::momentum_at(int64_t step) const {
  return onecycle_at(unwarped(step), config_.max_momentum, config_.base_momentum, config_.max_momentum);
}

double LrSchedule::lr_at(int64_t step) const {
  const double s = unwarped(step);
  if (config_.name == "onecycle") {
    const double initial = peak_lr_ / 25.0, final_lr = initial / 1e4;
    return onecycle_at(s, initial, peak_lr_, final_lr);
  }
  const double warmup = config_.warmup_epochs * static_cast<double>(steps_per_epoch_);
  if (s < warmup) return peak_lr_ * (s + 1.0) / warmup;
  const double decayed = (s - warmup) / std::max(static_cast<double>(planned_total_) - warmup, 1.0);
  if (config_.name == "cosine") return cosine_between(peak_lr_, 0.0, decayed);
  if (config_.name == "linear") return linear_between(peak_lr_, 0.0, decayed);
  if (config_.name == "step") {
    const auto decays = static_cast<int64_t>(s) / (config_.step_epochs * steps_per_epoch_);
    return peak_lr_ * std::pow(config_.gamma, static_cast<double>(decays));
  }
  return peak_lr_;  // constant
}

} // namespace fastloop
