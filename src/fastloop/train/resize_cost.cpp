// The step cost of progressive resizing (resize_cost.h): linear in the side's area between two timed
// sides, and its exact mean over the schedule's pieces of constant side.
#include "fastloop/train/resize_cost.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace fastloop {

double ResizeStepCosts::factor(int64_t side) const {
  if (!on()) return 1.0;
  const auto area = [](int64_t s) { return static_cast<double>(s) * static_cast<double>(s); };
  const double grown = (area(side) - area(options.min_side)) / (area(full_side) - area(options.min_side));
  const double min_factor = min_s / full_s;
  return min_factor + (1.0 - min_factor) * std::clamp(grown, 0.0, 1.0);
}

double ResizeStepCosts::mean_factor(double from) const {
  if (!on()) return 1.0;
  from = std::clamp(from, 0.0, 1.0);
  if (from >= 1.0) return factor(resize_side_at(options, full_side, 1.0));
  // The side is constant between these fractions: the ramp's ends and where it passes each multiple of 4.
  std::vector<double> edges = {0.0, options.start, options.end, 1.0};
  const double span = static_cast<double>(full_side - options.min_side);
  for (int64_t m = (options.min_side / kResizeMultiple + 1) * kResizeMultiple; m < full_side; m += kResizeMultiple)
    edges.push_back(options.start + (options.end - options.start) * static_cast<double>(m - options.min_side) / span);
  std::sort(edges.begin(), edges.end());
  double sum = 0.0;
  for (size_t i = 0; i + 1 < edges.size(); ++i) {
    const double begin = std::max(edges[i], from), end = edges[i + 1];
    if (end <= begin) continue;
    const int64_t side = resize_side_at(options, full_side, 0.5 * (edges[i] + edges[i + 1]));
    sum += (end - begin) * factor(side);
  }
  return sum / (1.0 - from);
}

ResizeCostModel::ResizeCostModel(const ResizeStepCosts& costs, int64_t total_steps)
    : costs_(costs), schedule_(costs.options, total_steps) {}

double ResizeCostModel::work(int64_t steps) {
  if (!on()) return static_cast<double>(steps);
  if (steps < worked_steps_) work_ = 0.0, worked_steps_ = 0;
  for (; worked_steps_ < steps; ++worked_steps_)
    work_ += costs_.factor(schedule_.side(costs_.full_side, worked_steps_));
  return work_;
}

double ResizeCostModel::step_s_after(int64_t step, double full_step_s) const {
  return on() ? full_step_s * costs_.mean_factor(schedule_.fraction(step)) : full_step_s;
}

std::string ResizeCostModel::json() const {
  nlohmann::ordered_json out;
  out["min_side"] = costs_.options.min_side;
  out["full_side"] = costs_.full_side;
  out["min_step_s"] = costs_.min_s;
  out["full_step_s"] = costs_.full_s;
  out["mean_factor"] = costs_.mean_factor(0.0);
  return out.dump();
}

std::string ResizeCostModel::text() const {
  char text[160];
  std::snprintf(text, sizeof(text),
                "; --resize-min %lld: %.3g ms per step at %lld px to %.3g ms at %lld px, %.3g ms on average",
                static_cast<long long>(costs_.options.min_side), 1e3 * costs_.min_s,
                static_cast<long long>(costs_.options.min_side), 1e3 * costs_.full_s,
                static_cast<long long>(costs_.full_side), 1e3 * costs_.planned_step_s());
  return text;
}

} // namespace fastloop
