// Image files listed with their labels: `--data csv:TRAIN.csv[::VAL.csv]` (a CSV file with a header row) and
// Python's fastloop.Files(paths, labels). Both become LabeledFiles, an encoded split read and decoded as
// image folders are (same formats, same bad-image policy), with an InputError naming the file and line of
// any row that cannot be used.
#pragma once

#include "fastloop/data/sources/encoded_images.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fastloop {

/// One record of a CSV file: its fields and the line it starts on (1-based; a quoted field may span lines).
struct CsvRow {
  int64_t line = 0;
  std::vector<std::string> fields;
};

/// Parses RFC 4180 CSV: fields separated by ',', records by "\n" or "\r\n", a field in double quotes may hold
/// commas, line breaks and doubled quotes (core/text.h's csv_field writes them so). Blank lines are skipped
/// and a UTF-8 byte order mark at the start is dropped. A quote inside an unquoted field, text after a
/// closing quote or an unclosed quote throws InputError naming `name` and the line.
std::vector<CsvRow> csv_parse(const std::string& text, const std::string& name);

/// A CSV listing as read, before any file is looked at: paths resolved against `base_dir`, labels as class
/// indices, the class names, and each sample's line for error messages.
struct CsvListing {
  std::vector<std::string> paths;
  std::vector<int32_t> labels;
  std::vector<int64_t> lines;
  std::vector<std::string> classes;  // named labels: the names, sorted; integer labels: empty
  int64_t num_classes = 0;
  bool named = false;  // labels were class names (else class indices)
};

/// The samples of CSV `text` (file `name`, paths relative to `base_dir`). Columns: the ones headed `path` and
/// `label` (any case; other columns are ignored), or else, in a file of exactly two columns, the first (path)
/// and the second (label). Labels are all whole numbers >= 0 (class indices; num_classes = the largest + 1)
/// or all class names (sorted by name, as ImageFolder sorts its class folders). With `train` (a val file read
/// after train's), the labels must be of train's kind, a name one of train's classes, an index below its
/// num_classes. Throws InputError naming the file, the line and what to change.
CsvListing csv_listing_parse(const std::string& text, const std::string& name, const std::string& base_dir,
                             const CsvListing* train = nullptr);

class LabeledFiles final : public EncodedImages {
 public:
  /// Files with class indices in [0, num_classes). Each path must be an existing file with an image extension
  /// (torchvision's IMG_EXTENSIONS, as image folders); `where(i)` names sample i in the InputError otherwise
  /// ("train.csv line 3", "fastloop.Files: paths[2]").
  static std::shared_ptr<const LabeledFiles> make(std::vector<std::string> paths, const std::vector<int64_t>& labels,
                                                  int64_t num_classes,
                                                  const std::function<std::string(size_t)>& where);

  int64_t size() const override { return static_cast<int64_t>(paths_.size()); }
  int64_t label(int64_t i) const override { return labels_.at(static_cast<size_t>(i)); }
  std::string name(int64_t i) const override { return paths_.at(static_cast<size_t>(i)); }
  std::string_view bytes(int64_t i, std::string& scratch) const override;

 private:
  std::vector<std::string> paths_;
  std::vector<int32_t> labels_;
};

/// A CSV file's listing: reads `path` (InputError if it cannot) and parses it (csv_listing_parse), paths
/// relative to the CSV file's folder.
CsvListing csv_listing_read(const std::string& path, const CsvListing* train = nullptr);

/// The listing's files, each checked (LabeledFiles::make), errors naming "FILE line N".
std::shared_ptr<const LabeledFiles> csv_files_make(const CsvListing& listing, const std::string& csv_path);

} // namespace fastloop
