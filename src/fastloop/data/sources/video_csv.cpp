// The video CSV list (video_csv.h): csv_listing_parse's rows, and the start and end columns read here. Times are
// plain seconds; std::from_chars reads them as Python's float() does the same digits, locale aside.
#include "fastloop/data/sources/video_csv.h"

#include "fastloop/core/errors.h"
#include "fastloop/core/text.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace fastloop {
double video_csv_seconds(const std::string& field, const std::string& where, const std::string& column) {
  const std::string text = trim_blanks(field);
  if (text.empty()) return std::numeric_limits<double>::quiet_NaN();
  double value = 0;
  const char* begin = text.data() + (text[0] == '+' ? 1 : 0);  // from_chars takes no '+', Python's float() does
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  const std::string at = where + ", column '" + column + "': ";
  // Digits, a point and an exponent only: from_chars also reads "nan" and "inf", which are no times
  if (text.find_first_not_of("0123456789.eE+-") != std::string::npos || ec != std::errc() || ptr != end ||
      !std::isfinite(value))
    throw InputError(at + "'" + text.substr(0, 40) + "' is not a number of seconds; write seconds from the video's begin "
                     "(1.5), or leave the field empty for the video's " + (column == "start" ? "begin" : "end"));
  if (value < 0) throw InputError(at + text + " is negative; times are seconds from the video's begin, >= 0");
  return value;
}

VideoCsvListing video_csv_parse(const std::string& text, const std::string& name, const std::string& base_dir,
                                const CsvListing* train) {
  VideoCsvListing out;
  out.listing = csv_listing_parse(text, name, base_dir, train);
  const std::vector<CsvRow> rows = csv_parse(text, name);  // the same rows: rows[i + 1] is sample i's
  size_t start_column = rows[0].fields.size(), end_column = start_column;
  for (size_t i = 0; i < rows[0].fields.size(); ++i) {
    const std::string head = ascii_lower(trim_blanks(rows[0].fields[i]));
    if (head == "start" && start_column == rows[0].fields.size()) start_column = i;
    if (head == "end" && end_column == rows[0].fields.size()) end_column = i;
  }
  for (size_t i = 0; i < out.listing.paths.size(); ++i) {
    const CsvRow& row = rows[i + 1];
    VideoRange range;
    range.where = name + " line " + std::to_string(row.line);
    if (start_column < row.fields.size()) range.start = video_csv_seconds(row.fields[start_column], range.where, "start");
    if (end_column < row.fields.size()) range.end = video_csv_seconds(row.fields[end_column], range.where, "end");
    video_range_check(range);
    out.ranges.push_back(std::move(range));
  }
  return out;
}

} // namespace fastloop
