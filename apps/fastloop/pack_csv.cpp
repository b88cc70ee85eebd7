// pack csv: a header row with a `path` column (relative to the CSV file), optionally `label` (class indices or
// names, as --data csv: reads them), `caption` (or `text`), and any other columns. Each row becomes KEY.EXT (the
// image file's bytes) + KEY.cls (with labels) + KEY.txt (the caption) + KEY.json (the other columns, as strings,
// img2dataset's layout): shards for fastloop.Loader(..., fields=("jpg;png;webp", "txt", "json")).
#include "pack_csv.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/sources/csv_files.h"
#include "fastloop/data/sources/shard_index_file.h"
#include "fastloop/data/sources/shards.h"
#include "fastloop/data/sources/tar.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>

namespace fastloop {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string file_read(const std::string& path, const std::string& where) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(where + ": cannot read " + path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// One CSV file's rows as samples: the image path, its members besides the image, and the label (-1: none).
struct CsvSample {
  std::string path;
  int64_t label = -1;
  std::string caption;
  std::string json;
};

std::vector<CsvSample> csv_samples(const std::string& csv, const CsvListing* train, CsvListing& listing) {
  const std::string text = file_read(csv, "pack");
  const std::vector<CsvRow> rows = csv_parse(text, csv);
  if (rows.size() < 2) throw InputError(csv + ": expected a header row (path[,label][,caption],...) and a row per image");
  std::vector<std::string> names;
  for (const std::string& f : rows[0].fields) names.push_back(lower(f));
  const auto column = [&](std::initializer_list<const char*> wanted) {
    for (const char* w : wanted) {
      const auto at = std::find(names.begin(), names.end(), w);
      if (at != names.end()) return static_cast<size_t>(at - names.begin());
    }
    return names.size();
  };
  const size_t path = column({"path"}), label = column({"label"}), caption = column({"caption", "text"});
  if (path == names.size()) throw InputError(csv + ": no 'path' column in its header (" + text.substr(0, 80) + ")");
  const std::string base = std::filesystem::path(csv).parent_path().string();
  if (label != names.size()) listing = csv_listing_parse(text, csv, base.empty() ? "." : base, train);
  std::vector<CsvSample> out;
  for (size_t r = 1; r < rows.size(); ++r) {
    const CsvRow& row = rows[r];
    if (row.fields.size() != names.size())
      throw InputError(csv + " line " + std::to_string(row.line) + ": " + std::to_string(row.fields.size()) +
                       " fields, the header has " + std::to_string(names.size()));
    CsvSample sample;
    const std::filesystem::path file(row.fields[path]);
    sample.path = file.is_absolute() || base.empty() ? file.string() : (std::filesystem::path(base) / file).string();
    if (label != names.size()) sample.label = listing.labels.at(r - 1);
    if (caption != names.size()) sample.caption = row.fields[caption];
    nlohmann::json others = nlohmann::json::object();
    for (size_t c = 0; c < names.size(); ++c)
      if (c != path && c != label) others[rows[0].fields[c]] = row.fields[c];
    sample.json = others.dump();
    out.push_back(std::move(sample));
  }
  return out;
}

int64_t csv_pack_split(const std::vector<CsvSample>& samples, const std::vector<size_t>& order, const std::string& out,
                       const std::string& split, int64_t shard_bytes, bool captions) {
  std::unique_ptr<TarWriter> shard;
  int64_t shards = 0;
  std::string scratch;
  for (size_t k = 0; k < order.size(); ++k) {
    const CsvSample& s = samples[order[k]];
    std::string ext = lower(std::filesystem::path(s.path).extension().string());
    if (ext.empty() || !shard_image_extension(ext.substr(1)))
      throw InputError(s.path + ": not an image extension of torchvision's ImageFolder; fix the CSV row");
    const std::string bytes = file_read(s.path, "pack");
    const int64_t need = 4 * 512 + static_cast<int64_t>(bytes.size() + s.caption.size() + s.json.size()) + 3 * 512;
    if (shard && shard->bytes() + need > shard_bytes) shard.reset();
    if (!shard) {
      char name[32];
      std::snprintf(name, sizeof(name), "%s-%06lld.tar", split.c_str(), static_cast<long long>(shards++));
      shard = std::make_unique<TarWriter>(out + "/" + name);
      std::printf("%s\n", shard->path().c_str());
    }
    char key[32];
    std::snprintf(key, sizeof(key), "%08zu", k);
    shard->add(std::string(key) + ext, bytes);
    if (s.label >= 0) shard->add(std::string(key) + ".cls", std::to_string(s.label));
    if (captions) shard->add(std::string(key) + ".txt", s.caption);
    shard->add(std::string(key) + ".json", s.json);
  }
  if (shard) shard->close();
  return shards;
}

}  // namespace

int pack_csv_run(const std::string& spec, const std::string& out, int64_t shard_bytes, uint64_t seed) {
  const std::string arg = spec.substr(4);
  const size_t sep = arg.find("::");
  const std::string train_csv = arg.substr(0, sep), val_csv = sep == std::string::npos ? "" : arg.substr(sep + 2);
  CsvListing train_listing, val_listing;
  const std::vector<CsvSample> train = csv_samples(train_csv, nullptr, train_listing);
  const bool captions = std::any_of(train.begin(), train.end(), [](const CsvSample& s) { return !s.caption.empty(); });
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw InputError("pack: cannot create " + out + " (" + ec.message() + ")");
  std::vector<size_t> order(train.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937_64 rng(seed);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[static_cast<size_t>(rng() % i)]);
  const int64_t shards = csv_pack_split(train, order, out, "train", shard_bytes, captions);
  if (!val_csv.empty()) {
    const std::vector<CsvSample> val = csv_samples(val_csv, &train_listing, val_listing);
    order.resize(val.size());
    std::iota(order.begin(), order.end(), size_t{0});
    csv_pack_split(val, order, out, "val", shard_bytes, captions);
  }
  const bool labelled = train.front().label >= 0;
  if (labelled) {
    std::ofstream classes(out + "/classes.txt");
    const std::vector<std::string>& names = train_listing.classes;  // empty: class indices
    for (int64_t c = 0; c < train_listing.num_classes; ++c)
      classes << (names.empty() ? std::to_string(c) : names[static_cast<size_t>(c)]) << "\n";
  }
  shard_index_write(out);  // for remote shards: counts samples with or without classes
  std::printf("packed %zu train images%s into %lld shards\n", train.size(), captions ? " with captions" : "",
              static_cast<long long>(shards));
  std::printf("read with fastloop.Loader(\"shards:%s\", fields=(\"jpg;png;webp\", \"txt\", \"json\"))\n", out.c_str());
  return 0;
}

}  // namespace fastloop
