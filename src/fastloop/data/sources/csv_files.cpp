// The CSV listing (RFC 4180, parsed here; core/text.h's csv_field writes the same quoting) and LabeledFiles,
// the encoded split of listed files. Everything that can be wrong with a row is found at load time, with
// the file and line, so a run never stops hours in on a typo in row 900,000.
#include "fastloop/data/sources/csv_files.h"

#include "fastloop/core/errors.h"
#include "fastloop/core/text.h"
#include "fastloop/data/sources/image_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace fastloop {
namespace {

// Labels as class indices: at most this many classes (a label of 2^31 would ask for a model that large).
constexpr int64_t kMaxClassIndex = 10'000'000;

std::string at_line(const std::string& name, int64_t line) { return name + " line " + std::to_string(line); }

// A whole decimal number >= 0 (digits only), or -1.
int64_t class_index(const std::string& text) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos) return -1;
  int64_t v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

// The (path, label) columns of the header, as csv_listing_parse documents the choice.
std::pair<size_t, size_t> columns_choose(const CsvRow& header, const std::string& name) {
  size_t path = header.fields.size(), label = header.fields.size();
  for (size_t i = 0; i < header.fields.size(); ++i) {
    const std::string field = ascii_lower(trim_blanks(header.fields[i]));
    if (field == "path" && path == header.fields.size()) path = i;
    if (field == "label" && label == header.fields.size()) label = i;
  }
  if (path < header.fields.size() && label < header.fields.size()) return {path, label};
  if (header.fields.size() == 2) return {0, 1};
  std::string found;
  for (const auto& f : header.fields) found += (found.empty() ? "'" : ", '") + f + "'";
  throw InputError(at_line(name, header.line) + ": the header row (" + found + ") names no 'path' and 'label' " +
                   "columns; name them so (other columns are ignored), or give exactly two columns: path, then label");
}

}  // namespace

std::vector<CsvRow> csv_parse(const std::string& text, const std::string& name) {
  std::vector<CsvRow> rows;
  size_t pos = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;  // Excel's UTF-8 byte order mark
  int64_t line = 1;
  while (pos < text.size()) {
    CsvRow row;
    row.line = line;
    std::string field;
    bool end_of_record = false;
    while (!end_of_record) {
      field.clear();
      if (pos < text.size() && text[pos] == '"') {  // quoted: up to the quote not followed by another
        const int64_t opened = line;
        ++pos;
        for (;;) {
          if (pos >= text.size())
            throw InputError(at_line(name, opened) + ": a quoted field is not closed; end it with '\"' (a quote " +
                             "inside a quoted field is written twice: \"\")");
          const char c = text[pos++];
          if (c == '"') {
            if (pos < text.size() && text[pos] == '"') field += '"', ++pos;
            else break;
          } else {
            if (c == '\n') ++line;
            field += c;
          }
        }
        if (pos < text.size() && text[pos] != ',' && text[pos] != '\n' && text[pos] != '\r')
          throw InputError(at_line(name, line) + ": text after the closing quote of a field; quote the whole field");
      } else {
        while (pos < text.size() && text[pos] != ',' && text[pos] != '\n' && text[pos] != '\r') {
          if (text[pos] == '"')
            throw InputError(at_line(name, line) + ": a quote inside an unquoted field; put the whole field in " +
                             "quotes and write the quote twice (\"a \"\"b\"\" c\")");
          field += text[pos++];
        }
      }
      row.fields.push_back(field);
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      end_of_record = true;
      if (pos < text.size() && text[pos] == '\r') ++pos;
      if (pos < text.size() && text[pos] == '\n') ++pos;
      ++line;
    }
    if (!(row.fields.size() == 1 && row.fields[0].empty())) rows.push_back(std::move(row));  // a blank line
  }
  return rows;
}

CsvListing csv_listing_parse(const std::string& text, const std::string& name, const std::string& base_dir,
                             const CsvListing* train) {
  const std::vector<CsvRow> rows = csv_parse(text, name);
  if (rows.empty()) throw InputError(name + ": empty; expected a header row (path,label) and a row per image");
  const auto [path_column, label_column] = columns_choose(rows[0], name);
  if (rows.size() == 1) throw InputError(name + ": no rows after the header; add a row per image (path,label)");
  CsvListing listing;
  std::vector<std::string> names;  // each row's label as written
  int64_t first_index = -1, first_name = -1;  // the line of the first integer label and of the first name
  for (size_t r = 1; r < rows.size(); ++r) {
    const CsvRow& row = rows[r];
    if (row.fields.size() != rows[0].fields.size())
      throw InputError(at_line(name, row.line) + ": " + std::to_string(row.fields.size()) + " fields, the header has " +
                       std::to_string(rows[0].fields.size()) + "; every row needs one field per column (quote a " +
                       "field that holds a comma)");
    const std::string path = trim_blanks(row.fields[path_column]);
    const std::string label = trim_blanks(row.fields[label_column]);
    if (path.empty()) throw InputError(at_line(name, row.line) + ": the path is empty; give the image file's path");
    if (path.find('\0') != std::string::npos)
      throw InputError(at_line(name, row.line) + ": the path holds a NUL byte; give the image file's path");
    if (label.empty()) throw InputError(at_line(name, row.line) + ": the label is empty; give a class name or index");
    const bool is_index = class_index(label) >= 0;
    if (label[0] == '-' && class_index(label.substr(1)) >= 0)
      throw InputError(at_line(name, row.line) + ": label " + label + " is negative; class indices start at 0");
    int64_t& first = is_index ? first_index : first_name;
    if (first < 0) first = row.line;
    if (first_index >= 0 && first_name >= 0)
      throw InputError(at_line(name, row.line) + ": label '" + label + "' is " + (is_index ? "an index" : "a name") +
                       " but line " + std::to_string(is_index ? first_name : first_index) + "'s is " +
                       (is_index ? "a name" : "an index") + "; labels are all class indices (0, 1, ...) or all " +
                       "class names");
    if (is_index && class_index(label) >= kMaxClassIndex)
      throw InputError(at_line(name, row.line) + ": class index " + label + " is too large (at most " +
                       std::to_string(kMaxClassIndex - 1) + "); number the classes from 0");
    const bool relative = path[0] != '/' && !base_dir.empty();
    listing.paths.push_back(relative ? base_dir + (base_dir.back() == '/' ? "" : "/") + path : path);
    listing.lines.push_back(row.line);
    names.push_back(label);
  }
  listing.named = first_name >= 0;
  if (train && train->named != listing.named)
    throw InputError(at_line(name, listing.lines[0]) + ": labels are class " + (listing.named ? "names" : "indices") +
                     " but the train file's are class " + (train->named ? "names" : "indices") + "; use the same kind " +
                     "in both so that class indices agree");
  if (listing.named) {
    listing.classes = train ? train->classes : names;
    if (!train) {
      std::sort(listing.classes.begin(), listing.classes.end());
      listing.classes.erase(std::unique(listing.classes.begin(), listing.classes.end()), listing.classes.end());
    }
    listing.num_classes = static_cast<int64_t>(listing.classes.size());
  } else {
    listing.num_classes = train ? train->num_classes : 0;
  }
  for (size_t i = 0; i < names.size(); ++i) {
    int64_t index = 0;
    if (listing.named) {
      const auto it = std::lower_bound(listing.classes.begin(), listing.classes.end(), names[i]);
      if (it == listing.classes.end() || *it != names[i])
        throw InputError(at_line(name, listing.lines[i]) + ": class '" + names[i] + "' is not one of the train " +
                         "file's " + std::to_string(listing.classes.size()) + " classes; use the train file's names");
      index = it - listing.classes.begin();
    } else {
      index = class_index(names[i]);
      if (train && index >= train->num_classes)
        throw InputError(at_line(name, listing.lines[i]) + ": class index " + names[i] + " is not below the train " +
                         "file's " + std::to_string(train->num_classes) + " classes");
      if (!train) listing.num_classes = std::max(listing.num_classes, index + 1);
    }
    listing.labels.push_back(static_cast<int32_t>(index));
  }
  return listing;
}

std::shared_ptr<const LabeledFiles> LabeledFiles::make(std::vector<std::string> paths, const std::vector<int64_t>& labels,
                                                       int64_t num_classes,
                                                       const std::function<std::string(size_t)>& where) {
  auto files = std::shared_ptr<LabeledFiles>(new LabeledFiles());
  if (paths.size() != labels.size())
    throw InputError(where(paths.size()) + ": " + std::to_string(paths.size()) + " paths but " +
                     std::to_string(labels.size()) + " labels; give one label per path");
  if (paths.empty()) throw InputError(where(0) + ": no files; give at least one image file and its label");
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    if (labels[i] < 0 || labels[i] >= num_classes)
      throw InputError(where(i) + ": label " + std::to_string(labels[i]) + " is not a class index in [0, " +
                       std::to_string(num_classes) + ")");
    if (path.find('\0') != std::string::npos) throw InputError(where(i) + ": the path holds a NUL byte");
    if (!image_file_name(path))
      throw InputError(where(i) + ": " + path + " is not an image file (extensions, as image folders: .jpg .jpeg " +
                       ".png .ppm .bmp .pgm .tif .tiff .webp)");
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      throw InputError(where(i) + ": " + path + ": " + (errno == ENOENT ? "no such file" : std::strerror(errno)) +
                       "; check the path");
    if (!S_ISREG(st.st_mode)) throw InputError(where(i) + ": " + path + " is not a file");
    files->labels_.push_back(static_cast<int32_t>(labels[i]));
  }
  files->paths_ = std::move(paths);
  return files;
}

std::string_view LabeledFiles::bytes(int64_t i, std::string& scratch) const { return image_file_read(name(i), scratch); }

CsvListing csv_listing_read(const std::string& path, const CsvListing* train) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("CSV file " + path + ": cannot open (" + std::strerror(errno) + "); check that it exists");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError("CSV file " + path + ": cannot read it");
  const size_t slash = path.rfind('/');  // the paths in it are relative to its folder
  const std::string base_dir = slash == std::string::npos ? "" : path.substr(0, std::max<size_t>(slash, 1));
  return csv_listing_parse(text.str(), path, base_dir, train);
}

std::shared_ptr<const LabeledFiles> csv_files_make(const CsvListing& listing, const std::string& csv_path) {
  const std::vector<int64_t> labels(listing.labels.begin(), listing.labels.end());
  return LabeledFiles::make(listing.paths, labels, listing.num_classes,
                            [&](size_t i) { return i < listing.lines.size() ? at_line(csv_path, listing.lines[i]) : csv_path; });
}

} // namespace fastloop
