// caption_csv_parse: the rows of `fastloop pack csv:` files as samples (see caption_csv.h), on csv_files.h's
// RFC 4180 parser and listing; the other columns' JSON by nlohmann::json.
#include "fastloop/data/sources/caption_csv.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/sources/field_values.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace fastloop {
namespace {

std::string header_name(const std::string& field) {
  std::string s;
  for (const char c : field) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t begin = s.find_first_not_of(" \t");
  return begin == std::string::npos ? "" : s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

}  // namespace

std::vector<CaptionCsvSample> caption_csv_parse(const std::string& text, const std::string& name,
                                                const std::string& base_dir, const CsvListing* train,
                                                CsvListing& listing) {
  const std::vector<CsvRow> rows = csv_parse(text, name);
  if (rows.size() < 2)
    throw InputError(name + ": expected a header row (path[,label][,caption],...) and a row per image");
  const CsvRow& header = rows[0];
  std::vector<std::string> names;
  for (const std::string& f : header.fields) names.push_back(header_name(f));
  const auto column = [&](std::initializer_list<const char*> wanted) {
    for (const char* w : wanted) {
      const auto at = std::find(names.begin(), names.end(), w);
      if (at != names.end()) return static_cast<size_t>(at - names.begin());
    }
    return names.size();
  };
  const size_t path = column({"path"}), label = column({"label"}), caption = column({"caption", "text"});
  if (path == names.size())
    throw InputError(name + " line " + std::to_string(header.line) + ": no 'path' column in its header row");
  for (const std::string& f : header.fields)
    if (!field_utf8_valid(f)) throw InputError(name + " line " + std::to_string(header.line) + ": not UTF-8 text");
  if (label != names.size()) listing = csv_listing_parse(text, name, base_dir, train);
  std::vector<CaptionCsvSample> out;
  for (size_t r = 1; r < rows.size(); ++r) {
    const CsvRow& row = rows[r];
    const std::string where = name + " line " + std::to_string(row.line);
    if (row.fields.size() != names.size())
      throw InputError(where + ": " + std::to_string(row.fields.size()) + " fields, the header has " +
                       std::to_string(names.size()));
    CaptionCsvSample sample;
    sample.line = row.line;
    const std::filesystem::path file(row.fields[path]);
    sample.path = file.is_absolute() ? file.string() : (std::filesystem::path(base_dir) / file).string();
    if (label != names.size()) sample.label = listing.labels.at(r - 1);  // one per row: csv_listing_parse's rows
    if (caption != names.size()) sample.caption = row.fields[caption];
    nlohmann::json others = nlohmann::json::object();
    for (size_t c = 0; c < names.size(); ++c) {
      if (c == path || c == label) continue;
      if (!field_utf8_valid(row.fields[c]))
        throw InputError(where + ": column '" + header.fields[c] + "' is not UTF-8 text; save the file as UTF-8");
      others[header.fields[c]] = row.fields[c];
    }
    sample.json = others.dump();
    out.push_back(std::move(sample));
  }
  return out;
}

}  // namespace fastloop
