// --resize-min: progressive resizing, as FFCV's ResNet recipes train (low resolution early, the full side
// from --resize-end of the run on): the training batch's side as a pure function of the optimizer step,
// the batch resized on the device by ATen's antialiased bilinear kernel, and the schedule kept in step
// with a --time-budget re-plan the way the learning rate's is. Evaluation always sees the full side.
#pragma once

#include "fastloop/core/config.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace fastloop {

/// The sides of progressive resizing (DataConfig's resize_min, resize_start, resize_end).
struct ResizeOptions {
  int64_t min_side = 0;  // pixels at first; 0: off
  double start = 0.0;    // fraction of the run's optimizer steps where the side starts to grow
  double end = 0.75;     // fraction where it is full
  bool on() const { return min_side > 0; }
};

ResizeOptions resize_options(const DataConfig& data);

/// Sides between --resize-min and the full one are multiples of this: FFCV rounds to 32 for ImageNet; 4
/// suits 28-32 px images through two 2x2 max-pools.
constexpr int64_t kResizeMultiple = 4;

/// The training batch's side at `fraction` of the run: min_side before `start`, then growing linearly to
/// `full_side` at `end`, rounded down to a multiple of 4 (never below min_side, never above full_side), and
/// full_side from `end` on. full_side when off or when min_side >= full_side.
int64_t resize_side_at(const ResizeOptions& options, int64_t full_side, double fraction);

/// The side at optimizer step `step` (0-based) of a run of `total_steps`: resize_side_at(step / total).
int64_t resize_side(const ResizeOptions& options, int64_t full_side, int64_t step, int64_t total_steps);

/// `images` [B, C, H, W] resized to height `side` (width in proportion: `side` for square images) by
/// antialiased bilinear interpolation (torch.nn.functional.interpolate(mode="bilinear", align_corners=False,
/// antialias=True)), in their own dtype and memory format (channels_last stays channels_last). Returns
/// `images` itself when the side is already theirs.
at::Tensor resize_batch(const at::Tensor& images, int64_t side);

/// A run's resize schedule over its optimizer steps. A --time-budget re-plan at step `from` compresses
/// (or stretches) the rest of the ramp onto the new length as LrSchedule does (schedule_warp): the side
/// is continuous at `from` and the ramp still ends at the same share of what is left.
class ResizeSchedule {
 public:
  ResizeSchedule() = default;
  ResizeSchedule(const ResizeOptions& options, int64_t total_steps);

  bool on() const { return options_.on(); }
  const ResizeOptions& options() const { return options_; }

  /// The fraction of the run (as first planned) that step `step` takes after the re-plans.
  double fraction(int64_t step) const;
  /// The side of step `step` for batches of `full_side`.
  int64_t side(int64_t full_side, int64_t step) const {
    return resize_side_at(options_, full_side, fraction(step));
  }

  /// From optimizer step `from` on, the run ends at `new_total` steps.
  void replan(int64_t from, int64_t new_total);

 private:
  struct Replan {
    int64_t from, old_total, new_total;
  };
  ResizeOptions options_;
  int64_t total_steps_ = 1;
  int64_t planned_total_ = 1;  // the clock the fractions run on
  std::vector<Replan> replans_;
};

} // namespace fastloop
