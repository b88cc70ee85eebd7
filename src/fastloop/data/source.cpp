// Data spec parsing: the one place that maps a spec string to a reader, so the CLI, recipes and
// benchmarks accept the same forms and report a bad one the same way.
#include "fastloop/data/source.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/cifar.h"
#include "fastloop/data/idx.h"
#include "fastloop/data/synthetic.h"

#include <ATen/ATen.h>

#include <charconv>
#include <vector>

namespace fastloop {
namespace {

constexpr int64_t kSyntheticTrain = 2048;  // images
constexpr int64_t kSyntheticTest = 512;    // images
constexpr int64_t kSyntheticClasses = 10;
constexpr uint64_t kSyntheticSeed = 0;
constexpr int64_t kSyntheticMaxBytes = int64_t{16} << 30;  // both splits together

[[noreturn]] void fail_spec(const std::string& spec, const std::string& why) {
  throw InputError("data spec '" + spec + "': " + why + "; allowed forms: " + kDataSpecForms);
}

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

} // namespace

DatasetSplits data_load(const std::string& spec) {
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
  fail_spec(spec, "unknown dataset '" + kind + "'");
}

} // namespace fastloop
