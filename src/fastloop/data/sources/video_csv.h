// A CSV list of videos (`--data videocsv:TRAIN.csv[::VAL.csv]`): csv_files.h's `path` and `label` columns, and
// optional `start` and `end` columns, seconds (either may be empty: the video's begin / end) of the part of each
// video its clips are drawn from (video_range.h). Parsed before any video is opened, so that a bad
// time is named with its file, line and column.
#pragma once

#include "fastloop/data/sources/csv_files.h"
#include "fastloop/data/sources/video_range.h"

#include <string>
#include <vector>

namespace fastloop {

struct VideoCsvListing {
  CsvListing listing;               // paths, labels, lines and classes, as csv_listing_parse reads them
  std::vector<VideoRange> ranges;   // one per row, `where` its file and line ("train.csv line 3")
};

/// A `start` or `end` field: empty (spaces aside) is NaN; else a decimal number of seconds >= 0 (1.5, 10, 2.5e1).
/// InputError naming `where` and `column` for anything else (text, a negative number, nan, inf).
double video_csv_seconds(const std::string& field, const std::string& where, const std::string& column);

/// The rows of CSV `text` (file `name`, paths relative to `base_dir`, `train` as csv_listing_parse takes it), with
/// each row's range from the columns headed `start` and `end` (any case; either or both may be absent), checked by
/// video_range_check. InputError naming the file, line and column.
VideoCsvListing video_csv_parse(const std::string& text, const std::string& name, const std::string& base_dir,
                                const CsvListing* train = nullptr);

} // namespace fastloop
