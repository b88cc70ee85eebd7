// pack csv: each row of the CSV files (data/sources/caption_csv.h reads them) becomes KEY.EXT (the image file's
// bytes) + KEY.cls (with labels) + KEY.txt (the caption) + KEY.json (the other columns, as strings, img2dataset's
// layout): shards for fastloop.Loader(..., fields=("jpg;png;webp", "txt", "json")).
#include "pack_csv.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/sources/caption_csv.h"
#include "fastloop/data/sources/shard_index_file.h"
#include "fastloop/data/sources/shards.h"
#include "fastloop/data/sources/tar.h"

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

std::vector<CaptionCsvSample> csv_samples(const std::string& csv, const CsvListing* train, CsvListing& listing) {
  const std::string base = std::filesystem::path(csv).parent_path().string();
  return caption_csv_parse(file_read(csv, "pack"), csv, base.empty() ? "." : base, train, listing);
}

int64_t csv_pack_split(const std::vector<CaptionCsvSample>& samples, const std::vector<size_t>& order, const std::string& out,
                       const std::string& split, int64_t shard_bytes, bool captions) {
  std::unique_ptr<TarWriter> shard;
  int64_t shards = 0;
  std::string scratch;
  for (size_t k = 0; k < order.size(); ++k) {
    const CaptionCsvSample& s = samples[order[k]];
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
  const std::vector<CaptionCsvSample> train = csv_samples(train_csv, nullptr, train_listing);
  const bool captions = std::any_of(train.begin(), train.end(), [](const CaptionCsvSample& s) { return !s.caption.empty(); });
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw InputError("pack: cannot create " + out + " (" + ec.message() + ")");
  std::vector<size_t> order(train.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937_64 rng(seed);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[static_cast<size_t>(rng() % i)]);
  const int64_t shards = csv_pack_split(train, order, out, "train", shard_bytes, captions);
  if (!val_csv.empty()) {
    const std::vector<CaptionCsvSample> val = csv_samples(val_csv, &train_listing, val_listing);
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
