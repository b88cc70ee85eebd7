// The part of a video its clips are drawn from, as a CSV list's `start` and `end` columns give it (video_csv.h);
// video_samplers.h keeps each sampler's clips inside it. Apart from the samplers (no LibTorch) so that the CSV
// parser and its fuzz target can check ranges alone.
#pragma once

#include <cmath>
#include <limits>
#include <string>

namespace fastloop {

/// [start, end) seconds of a video's presentation times, NaN for its begin / its end; `where` names the row in
/// messages ("train.csv line 3"). Under the index samplers a clip takes the frames whose pts lie in [start, end), as
/// if the video were cut there (clips start inside them, frames past them filled by the policy); under the time
/// samplers it is torchcodec's sampling_range_start = start, sampling_range_end = end - (frames_per_clip - 1) *
/// seconds_between_frames, so that every frame's time lies in [start, end).
struct VideoRange {
  double start = std::numeric_limits<double>::quiet_NaN();
  double end = std::numeric_limits<double>::quiet_NaN();
  std::string where;

  bool whole() const { return std::isnan(start) && std::isnan(end); }
  /// "[1.5 s, 3 s)", "[begin, 3 s)", "[1.5 s, end)".
  std::string repr() const;
};

/// A range's own values: start and end each NaN or a finite number >= 0, end > start. InputError naming
/// range.where and the column ('start', 'end') otherwise.
void video_range_check(const VideoRange& range);

/// Seconds as Python's repr writes them (torchcodec's messages): the fewest digits that read back the same.
std::string seconds_repr(double seconds);

} // namespace fastloop
