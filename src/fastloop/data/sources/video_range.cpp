// A video's part (video_range.h): its checks and how messages write it.
#include "fastloop/data/sources/video_range.h"

#include "fastloop/core/errors.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace fastloop {

std::string seconds_repr(double seconds) {
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, seconds);
    if (std::strtod(text, nullptr) == seconds) break;
  }
  return text;
}

std::string VideoRange::repr() const {
  std::string text = "[";
  text += std::isnan(start) ? std::string("begin") : seconds_repr(start) + " s";
  text += ", ";
  text += std::isnan(end) ? std::string("end") : seconds_repr(end) + " s";
  return text + ")";
}

void video_range_check(const VideoRange& range) {
  const std::string where = range.where.empty() ? std::string("range") : range.where;
  for (const auto& [column, value] : {std::pair<const char*, double>{"start", range.start}, {"end", range.end}}) {
    const std::string at = where + ", column '" + column + "': ";
    if (!std::isnan(value) && !std::isfinite(value))
      throw InputError(at + "not a number of seconds; give seconds from the video's begin (1.5), or leave it empty");
    if (value < 0)
      throw InputError(at + seconds_repr(value) + " is negative; times are seconds from the video's begin, >= 0");
  }
  if (range.end <= range.start)
    throw InputError(where + ", column 'end': " + seconds_repr(range.end) + " is not after the start (" +
                     seconds_repr(range.start) + "); a range is [start, end) seconds, end > start");
}

} // namespace fastloop
