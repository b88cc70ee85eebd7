// The rows of a CSV of image paths with captions (`fastloop pack csv:list.csv OUT`), read as the samples of
// image-caption shards: a header row with a `path` column (relative to the CSV file), optionally `label` (class
// indices or names, as --data csv: reads them), `caption` (or `text`), and any other columns (kept as a JSON
// object of strings, img2dataset's KEY.json). Parsing only: no file is looked at (fuzz/csv_fuzzer.cpp runs it).
#pragma once

#include "fastloop/data/sources/csv_files.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

/// One row: the image path, its label (-1: the file has no label column), caption and other columns as JSON.
struct CaptionCsvSample {
  std::string path;
  int64_t label = -1;
  std::string caption;
  std::string json;  // {"COLUMN": "VALUE", ...}: every column but path and label
  int64_t line = 0;
};

/// The samples of CSV `text` (file `name`, paths relative to `base_dir`); with a label column, `listing` gets its
/// labels and classes (csv_listing_parse, read against `train`'s for a val file). Header names match in any case,
/// blanks around them ignored. InputError naming the file and line for a missing header or path column, a row of
/// another field count than the header's, a bad label, or a field that is not UTF-8 text (JSON holds only that).
std::vector<CaptionCsvSample> caption_csv_parse(const std::string& text, const std::string& name,
                                                const std::string& base_dir, const CsvListing* train,
                                                CsvListing& listing);

}  // namespace fastloop
