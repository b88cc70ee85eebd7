// libFuzzer target for the CSV listings of `--data csv:TRAIN.csv[::VAL.csv]` (data/sources/csv_files.h): any text
// parses or throws InputError; the rows, written back with core/text.h's csv_field, parse to the same fields;
// and a listing that parses is consistent (a label per path, each below num_classes; a val file read against
// it keeps its classes). The same text as `fastloop pack csv:` reads it (data/sources/caption_csv.h): parses or
// throws InputError, a sample per row, each one's JSON an object that parses. And as `--data videocsv:` reads it
// (data/sources/video_csv.h): a range per sample, each start and end NaN or finite and >= 0, end after start; each
// field read as a time on its own is NaN, a number >= 0 or an InputError.
#include "fastloop/core/errors.h"
#include "fastloop/core/text.h"
#include "fastloop/data/sources/caption_csv.h"
#include "fastloop/data/sources/csv_files.h"
#include "fastloop/data/sources/video_csv.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "csv fuzzer: %s\n", what);
    std::abort();
  }
}

// The rows as csv_field writes them, after a byte order mark (the parser drops one, so a field that itself
// begins with one survives).
std::string csv_write(const std::vector<fastloop::CsvRow>& rows) {
  std::string out = "\xEF\xBB\xBF";
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.fields.size(); ++i) out += (i ? "," : "") + fastloop::csv_field(row.fields[i]);
    out += "\r\n";
  }
  return out;
}

// `fastloop pack csv:`'s reading of the text: InputError or a sample per row, with a label exactly when the
// header has a label column, and JSON that parses back to an object of strings.
void caption_csv_check(const std::string& text, size_t rows) {
  fastloop::CsvListing listing;
  std::vector<fastloop::CaptionCsvSample> samples;
  try {
    samples = fastloop::caption_csv_parse(text, "fuzz.csv", "base", nullptr, listing);
  } catch (const fastloop::InputError&) {
    return;
  }
  check(rows >= 2 && samples.size() == rows - 1, "pack csv: not a sample per row after the header");
  for (const auto& s : samples) {
    check(!s.path.empty(), "pack csv: an empty path");
    check((s.label >= 0) == (samples.front().label >= 0), "pack csv: labels on some rows only");
    check(s.label < 0 || s.label < listing.num_classes, "pack csv: a label outside [0, num_classes)");
    const nlohmann::json json = nlohmann::json::parse(s.json, nullptr, false);
    check(json.is_object(), "pack csv: its JSON is not an object");
    for (const auto& item : json.items()) check(item.value().is_string(), "pack csv: a JSON value is not a string");
  }
}

// `--data videocsv:`'s reading of the text: InputError, or the listing csv_listing_parse makes with a checked range
// per sample.
void video_csv_check(const std::string& text, const std::vector<fastloop::CsvRow>& rows) {
  for (const auto& row : rows)
    for (const auto& field : row.fields) {
      try {
        const double seconds = fastloop::video_csv_seconds(field, "fuzz.csv line 1", "start");
        check(std::isnan(seconds) || (std::isfinite(seconds) && seconds >= 0), "a time that is negative or not finite");
      } catch (const fastloop::InputError&) {
      }
    }
  fastloop::VideoCsvListing videos;
  try {
    videos = fastloop::video_csv_parse(text, "fuzz.csv", "base");
  } catch (const fastloop::InputError&) {
    return;
  }
  check(videos.ranges.size() == videos.listing.paths.size(), "videocsv: not a range per sample");
  for (const auto& r : videos.ranges) {
    check(std::isnan(r.start) || (std::isfinite(r.start) && r.start >= 0), "videocsv: a bad start");
    check(std::isnan(r.end) || (std::isfinite(r.end) && r.end >= 0), "videocsv: a bad end");
    check(std::isnan(r.start) || std::isnan(r.end) || r.end > r.start, "videocsv: an end not after its start");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  size_t row_count = 0;
  try {
    row_count = fastloop::csv_parse(text, "fuzz.csv").size();
  } catch (const fastloop::InputError&) {
  }
  caption_csv_check(text, row_count);
  std::vector<fastloop::CsvRow> rows;
  try {
    rows = fastloop::csv_parse(text, "fuzz.csv");
  } catch (const fastloop::InputError&) {
    return 0;
  }
  int64_t last_line = 0;
  for (const auto& row : rows) {
    check(row.line > last_line, "line numbers do not increase");
    check(!row.fields.empty(), "a row without fields");
    last_line = row.line;
  }
  video_csv_check(text, rows);
  const std::vector<fastloop::CsvRow> again = fastloop::csv_parse(csv_write(rows), "again.csv");  // must not throw
  check(again.size() == rows.size(), "written back, the rows parse to another count");
  for (size_t r = 0; r < rows.size(); ++r) check(again[r].fields == rows[r].fields, "written back, a row changed");

  fastloop::CsvListing listing;
  try {
    listing = fastloop::csv_listing_parse(text, "fuzz.csv", "base");
  } catch (const fastloop::InputError&) {
    return 0;
  }
  check(!listing.paths.empty(), "a listing without samples");
  check(listing.labels.size() == listing.paths.size() && listing.lines.size() == listing.paths.size(),
        "paths, labels and lines differ in count");
  check(!listing.named || static_cast<int64_t>(listing.classes.size()) == listing.num_classes, "classes != num_classes");
  for (size_t i = 0; i < listing.paths.size(); ++i) {
    check(listing.labels[i] >= 0 && listing.labels[i] < listing.num_classes, "a label outside [0, num_classes)");
    check(!listing.paths[i].empty(), "an empty path");
  }
  // The same file read as its own val file keeps train's classes and labels.
  const fastloop::CsvListing val = fastloop::csv_listing_parse(text, "fuzz.csv", "base", &listing);
  check(val.labels == listing.labels && val.num_classes == listing.num_classes, "a file read against itself changed");
  return 0;
}
