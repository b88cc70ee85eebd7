// Data spec parsing: the one place that maps a spec string to a reader, so the CLI, recipes and
// benchmarks accept the same forms and report a bad one the same way.
#include "fastloop/data/sources/source.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/sources/cifar.h"
#include "fastloop/data/sources/class_names.h"
#include "fastloop/data/sources/csv_files.h"
#include "fastloop/data/sources/idx.h"
#include "fastloop/data/sources/imagefolder.h"
#include "fastloop/data/sources/remote_shards.h"
#include "fastloop/data/sources/remote_url.h"
#include "fastloop/data/sources/shards.h"
#include "fastloop/data/sources/synthetic.h"
#include "fastloop/data/sources/video_sources.h"

#include <ATen/ATen.h>

#include <sys/stat.h>

#include <charconv>
#include <cstdlib>
#include <vector>

namespace fastloop {
namespace {

constexpr int64_t kSyntheticTrain = 2048;  // images
constexpr int64_t kSyntheticTest = 512;    // images
constexpr int64_t kSyntheticClasses = 10;
constexpr uint64_t kSyntheticSeed = 0;
constexpr int64_t kSyntheticMaxBytes = int64_t{16} << 30;  // both splits together

[[noreturn]] void fail_spec(const std::string& spec, const std::string& why) { data_spec_fail(spec, why); }

// A whole decimal number in [lo, hi], or fail naming the part.
int64_t parse_count(const std::string& spec, const std::string& text, const char* what, int64_t lo, int64_t hi) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) {
    fail_spec(spec, std::string("expected a whole number for ") + what + ", found '" + text + "'");
  }
  if (v < lo || v > hi) {
    fail_spec(spec, std::string(what) + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                        "], found " + std::to_string(v));
  }
  return v;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t pos; (pos = s.find(sep, start)) != std::string::npos; start = pos + 1) parts.push_back(s.substr(start, pos - start));
  parts.push_back(s.substr(start));
  return parts;
}

DatasetSplits synthetic_load(const std::string& spec, const std::string& args) {
  int64_t c = 3, h = 32, w = 32, n = kSyntheticTrain;
  if (!args.empty()) {
    const auto parts = split(args, ':');
    if (parts.size() > 2) fail_spec(spec, "expected synthetic:CxHxW or synthetic:CxHxW:N, found " + std::to_string(parts.size()) + " fields after 'synthetic'");
    const auto shape = split(parts[0], 'x');
    if (shape.size() != 3) fail_spec(spec, "expected the image shape as CxHxW (e.g. 3x32x32), found '" + parts[0] + "'");
    c = parse_count(spec, shape[0], "channels C", 1, 16);
    h = parse_count(spec, shape[1], "height H", 1, 4096);
    w = parse_count(spec, shape[2], "width W", 1, 4096);
    if (parts.size() == 2) n = parse_count(spec, parts[1], "train images N", 1, 100'000'000);
  }
  if ((n + kSyntheticTest) * c * h * w > kSyntheticMaxBytes) {
    fail_spec(spec, "needs " + std::to_string((n + kSyntheticTest) * c * h * w) + " bytes, more than the " +
                        std::to_string(kSyntheticMaxBytes) + " allowed; use fewer or smaller images");
  }
  Dataset all = synthetic_make(n + kSyntheticTest, c, h, w, kSyntheticClasses, kSyntheticSeed);
  DatasetSplits splits;
  splits.name = "synthetic";
  splits.train = all;
  splits.train.images = all.images.narrow(0, 0, n);
  splits.train.labels = all.labels.narrow(0, 0, n);
  splits.test = all;
  splits.test.images = all.images.narrow(0, n, kSyntheticTest);
  splits.test.labels = all.labels.narrow(0, n, kSyntheticTest);
  channel_stats(splits.train.images, splits.train.mean, splits.train.stddev);  // both splits use the train's
  splits.test.mean = splits.train.mean;
  splits.test.stddev = splits.train.stddev;
  return splits;
}

// The square side of encoded splits before their transforms are known (data/transforms/split_size.h sets the
// size a transform ends in): --image-size, or the built-in transforms' default.
int64_t image_side(const DataOptions& options) { return options.image.size > 0 ? options.image.size : kImageSizeDefault; }

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// An encoded split with no samples: the test split of an image folder without val/.
class NoImages final : public EncodedImages {
 public:
  int64_t size() const override { return 0; }
  int64_t label(int64_t) const override { throw std::out_of_range("NoImages::label: the split is empty"); }
  std::string name(int64_t) const override { return {}; }
  std::string_view bytes(int64_t, std::string&) const override { throw std::out_of_range("NoImages::bytes: the split is empty"); }
};

DatasetSplits imagefolder_load(const std::string& spec, std::string dir, const DataOptions& options) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!is_dir(dir + "/train"))
    fail_spec(spec, "no folder " + dir + "/train; an image folder holds train/CLASS/IMAGE (and val/CLASS/IMAGE)");
  const auto train = ImageFolder::list(dir + "/train");
  DatasetSplits splits;
  splits.name = "imagefolder";
  splits.train.encoded = train;
  splits.train.num_classes = static_cast<int64_t>(train->classes().size());
  splits.train.image_height = splits.train.image_width = image_side(options);
  splits.train.skip_bad_images = options.skip_bad_images;
  splits.train.mean.assign(std::begin(kImageNetMean), std::end(kImageNetMean));
  splits.train.stddev.assign(std::begin(kImageNetStd), std::end(kImageNetStd));
  splits.train.classes = train->classes();
  splits.test = splits.train;
  if (is_dir(dir + "/val")) {
    splits.test.encoded = ImageFolder::list(dir + "/val", &train->classes());
  } else {
    splits.test.encoded = std::make_shared<NoImages>();
  }
  return splits;
}

// A shards split pair (local or remote) with the run's image size, policy and ImageNet's statistics.
DatasetSplits shard_splits_make(std::shared_ptr<const EncodedImages> train, std::shared_ptr<const EncodedImages> val,
                                int64_t num_classes, std::vector<std::string> classes, const DataOptions& options) {
  DatasetSplits splits;
  splits.name = "shards";
  splits.train.encoded = std::move(train);
  splits.train.num_classes = num_classes;
  splits.train.classes = std::move(classes);
  splits.train.image_height = splits.train.image_width = image_side(options);
  splits.train.skip_bad_images = options.skip_bad_images;
  splits.train.mean.assign(std::begin(kImageNetMean), std::end(kImageNetMean));
  splits.train.stddev.assign(std::begin(kImageNetStd), std::end(kImageNetStd));
  splits.test = splits.train;
  splits.test.encoded = val ? std::move(val) : std::make_shared<NoImages>();
  return splits;
}

// WebDataset shards (data/sources/shards.h; remote ones data/sources/remote_shards.h): the train split in
// webdataset's order, val (if any) in file order.
DatasetSplits shards_splits_load(const std::string& spec, const std::string& arg, const DataOptions& options) {
  if (options.shuffle_buffer < 1) fail_spec(spec, "--shuffle-buffer must be at least 1 sample");
  if (remote_url_is_remote(arg)) {
    RemoteShardOptions remote;
    remote.shuffle_buffer = options.shuffle_buffer;
    remote.cache_dir = options.cache_dir;
    remote.cache_bytes = options.cache_mib << 20;
    remote.fetch.timeout_s = options.timeout_s;
    RemoteShardSplits shards = remote_shards_load(arg, remote);
    return shard_splits_make(shards.train, shards.val, shards.num_classes, shards.classes, options);
  }
  ShardSplits shards = shards_load(arg, options.shuffle_buffer);
  return shard_splits_make(shards.train, shards.val, shards.num_classes, shards.classes, options);
}

// An encoded split of listed files with the run's image size, policy and ImageNet's statistics; the test split
// starts as a copy and gets its own files.
DatasetSplits listed_splits(std::shared_ptr<const EncodedImages> files, int64_t num_classes,
                            std::vector<std::string> classes, const DataOptions& options) {
  DatasetSplits splits;
  splits.train.encoded = std::move(files);
  splits.train.num_classes = num_classes;
  splits.train.classes = std::move(classes);
  splits.train.image_height = splits.train.image_width = image_side(options);
  splits.train.skip_bad_images = options.skip_bad_images;
  splits.train.mean.assign(std::begin(kImageNetMean), std::end(kImageNetMean));
  splits.train.stddev.assign(std::begin(kImageNetStd), std::end(kImageNetStd));
  splits.test = splits.train;
  return splits;
}

// csv:TRAIN.csv[::VAL.csv] (data/sources/csv_files.h): VAL's labels are read against TRAIN's classes.
DatasetSplits csv_splits_load(const std::string& spec, const std::string& arg, const DataOptions& options) {
  const size_t sep = arg.find("::");
  const std::string train_csv = arg.substr(0, sep);
  const std::string val_csv = sep == std::string::npos ? "" : arg.substr(sep + 2);
  if (train_csv.empty() || (sep != std::string::npos && val_csv.empty()))
    fail_spec(spec, "expected csv:TRAIN.csv or csv:TRAIN.csv::VAL.csv");
  const CsvListing train = csv_listing_read(train_csv);
  DatasetSplits splits = listed_splits(csv_files_make(train, train_csv), train.num_classes, train.classes, options);
  splits.name = "csv";
  if (val_csv.empty()) {
    splits.test.encoded = std::make_shared<NoImages>();
  } else {
    const CsvListing val = csv_listing_read(val_csv, &train);
    splits.test.encoded = csv_files_make(val, val_csv);
  }
  return splits;
}

// "R,G,B" (or one value for every channel) as `channels` floats, each checked by `ok`.
std::vector<float> parse_channels(const std::string& text, const char* flag, int64_t channels, bool (*ok)(float),
                                  const char* range) {
  std::vector<float> values;
  for (const auto& part : split(text, ',')) {
    char* end = nullptr;
    const float v = std::strtof(part.c_str(), &end);
    if (part.empty() || end != part.c_str() + part.size() || !ok(v))
      throw InputError(std::string(flag) + " '" + text + "': '" + part + "' is not a number " + range);
    values.push_back(v);
  }
  if (values.size() == 1) values.assign(static_cast<size_t>(channels), values[0]);
  if (static_cast<int64_t>(values.size()) != channels)
    throw InputError(std::string(flag) + " '" + text + "': " + std::to_string(values.size()) + " values for " +
                     std::to_string(channels) + " channels; give one per channel (or one for all)");
  return values;
}

// --mean / --std replace the dataset's own statistics in both splits.
void normalization_apply(DatasetSplits& splits, const DataOptions& options) {
  const int64_t channels = splits.train.channels();
  if (!options.image.mean.empty()) {
    splits.train.mean = splits.test.mean = parse_channels(
        options.image.mean, "--mean", channels, [](float v) { return v >= 0.f && v <= 1.f; }, "in [0, 1]");
  }
  if (!options.image.std.empty()) {
    splits.train.stddev = splits.test.stddev = parse_channels(
        options.image.std, "--std", channels, [](float v) { return v > 0.f && v <= 10.f; }, "in (0, 10]");
  }
}

DatasetSplits data_load_kind(const std::string& spec, const DataOptions& options);

} // namespace

DatasetSplits data_load(const std::string& spec, const DataOptions& options) {
  DatasetSplits splits = data_load_kind(spec, options);
  if (splits.train.classes.empty()) {  // the sets that ship no names of their own
    splits.train.classes = splits.name == "fashion-mnist" ? class_names_fashion_mnist()
                           : splits.name == "mnist"       ? class_names_mnist()
                           : splits.name == "cifar10"     ? class_names_cifar10()
                                                          : class_names_numbered(splits.train.num_classes);
  }
  splits.test.classes = splits.train.classes;
  normalization_apply(splits, options);
  return splits;
}

DatasetSplits data_load(const std::string& spec) { return data_load(spec, DataOptions{}); }

bool data_in_memory(const std::string& spec) {
  const std::string kind = spec.substr(0, spec.find(':'));
  return kind == "fashion-mnist" || kind == "mnist" || kind == "cifar10" || kind == "synthetic";
}

bool data_is_video(const std::string& spec) {
  const std::string kind = spec.substr(0, spec.find(':'));
  return kind == "videofolder" || kind == "videocsv";
}

DatasetSplits data_load(const DataConfig& config) {
  DataOptions options;
  options.image = config.image;
  options.skip_bad_images = config.bad_image_policy == "skip";
  options.shuffle_buffer = config.shuffle_buffer;
  options.cache_dir = config.cache;
  options.cache_mib = config.cache_size;
  options.timeout_s = config.timeout;
  options.clip = config.clip;
  options.transform = config.transform;
  options.eval_transform = config.eval_transform;
  return data_load(config.source, options);
}

DatasetSplits files_load(std::vector<std::string> paths, const std::vector<int64_t>& labels,
                         std::vector<std::string> classes, const DataOptions& options) {
  int64_t num_classes = static_cast<int64_t>(classes.size());
  if (classes.empty())
    for (int64_t label : labels) num_classes = std::max(num_classes, label + 1);
  auto files = LabeledFiles::make(std::move(paths), labels, num_classes,
                                  [](size_t i) { return "fastloop.Files: paths[" + std::to_string(i) + "]"; });
  DatasetSplits splits = encoded_load(files, std::move(classes), options);
  splits.name = "files";
  return splits;
}

DatasetSplits encoded_load(std::shared_ptr<const EncodedImages> images, std::vector<std::string> classes,
                           const DataOptions& options, int64_t num_classes) {
  if (num_classes <= 0) {
    num_classes = static_cast<int64_t>(classes.size());
    for (int64_t i = 0; i < images->size(); ++i) num_classes = std::max(num_classes, images->label(i) + 1);
  }
  if (classes.empty()) classes = class_names_numbered(num_classes);
  DatasetSplits splits = listed_splits(std::move(images), num_classes, std::move(classes), options);
  splits.name = "encoded";
  normalization_apply(splits, options);
  return splits;
}

namespace {

DatasetSplits data_load_kind(const std::string& spec, const DataOptions& options) {
  const size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const bool has_arg = colon != std::string::npos;
  const std::string arg = has_arg ? spec.substr(colon + 1) : "";
  if (has_arg && arg.empty()) fail_spec(spec, "nothing after ':'");
  if (kind == "fashion-mnist") return fashion_mnist_load(has_arg ? arg : kFashionMnistDefaultDir);
  if (kind == "mnist") {
    if (!has_arg) fail_spec(spec, "mnist needs its directory: mnist:DIR");
    DatasetSplits splits = fashion_mnist_load(arg);
    splits.name = "mnist";
    return splits;
  }
  if (kind == "cifar10") {
    if (!has_arg) fail_spec(spec, "cifar10 needs its directory: cifar10:DIR");
    return cifar10_load(arg);
  }
  if (kind == "synthetic") return synthetic_load(spec, arg);
  if (kind == "imagefolder") {
    if (!has_arg) fail_spec(spec, "imagefolder needs its directory: imagefolder:DIR");
    return imagefolder_load(spec, arg, options);
  }
  if (kind == "csv") {
    if (!has_arg) fail_spec(spec, "csv needs its file: csv:TRAIN.csv or csv:TRAIN.csv::VAL.csv");
    return csv_splits_load(spec, arg, options);
  }
  if (kind == "shards") {
    if (!has_arg) fail_spec(spec, "shards needs its folder or pattern: shards:DIR or shards:TRAIN_PATTERN[::VAL_PATTERN]");
    return shards_splits_load(spec, arg, options);
  }
  if (kind == "videofolder") {
    if (!has_arg) fail_spec(spec, "videofolder needs its directory: videofolder:DIR");
    return video_folder_load(spec, arg, options);
  }
  if (kind == "videocsv") {
    if (!has_arg) fail_spec(spec, "videocsv needs its file: videocsv:TRAIN.csv or videocsv:TRAIN.csv::VAL.csv");
    return video_csv_load(spec, arg, options);
  }
  fail_spec(spec, "unknown dataset '" + kind + "'");
}

} // namespace

} // namespace fastloop
