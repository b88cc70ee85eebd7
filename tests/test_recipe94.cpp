// The Fashion-MNIST 94% recipe's ingredients against their references (tests/golden/recipe/random_erasing.json
// and tta.json from tests/tools/make_recipe94_golden.py): torchvision's RandomErasing boxes, airbench's test-time
// augmentation; and that they reach every path a batch takes (loader threads, device-resident data).
#include "golden_support.h"
#include "test_support.h"
#include "fastloop/core/config.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/transforms/augment.h"
#include "fastloop/data/loader/loader.h"
#include "fastloop/data/transforms/random_erasing.h"
#include "fastloop/data/loader/sampler.h"
#include "fastloop/train/tta.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cmath>
#include <fstream>

using namespace fastloop;
using nlohmann::json;

namespace {

json recipe94_golden(const std::string& name) { return test::recipe_golden(name); }

Dataset erasing_dataset(int64_t n, int64_t c, int64_t h, int64_t w) {
  Dataset d;
  d.images = torch::arange(n * c * h * w, torch::kLong).remainder(251).add(1).to(torch::kUInt8).reshape({n, c, h, w});
  d.labels = torch::arange(n, torch::kLong).remainder(10);
  d.num_classes = 10;
  d.mean.assign(static_cast<size_t>(c), 0.0f);  // pixel v reads v / 255 > 0: an erased (zero) pixel stands out
  d.stddev.assign(static_cast<size_t>(c), 1.0f);
  return d;
}

std::vector<Batch> erasing_epoch_batches(const Dataset& d, const LoaderOptions& options, int64_t epoch) {
  Loader loader(d, options);
  loader.start_epoch(epoch);
  std::vector<Batch> out;
  while (auto b = loader.next()) out.push_back(*b);
  return out;
}

/// logits = flatten(x) @ W, W[i, k] = sin(0.37 (i K + k) + 1): make_recipe94_golden.py's tta_case model.
struct LinearProbe : ClassifierImpl {
  explicit LinearProbe(int64_t features, int64_t classes)
      : weight(torch::sin(torch::arange(features * classes, torch::kFloat64).mul(0.37).add(1.0))
                   .to(torch::kFloat32)
                   .reshape({features, classes})) {}
  at::Tensor forward(at::Tensor x) override { return x.flatten(1).matmul(weight); }
  at::Tensor weight;
};

}  // namespace

TEST(RandomErasing, BoxesFollowTorchvisionsRandomErasingDistribution) {
  const json cases = recipe94_golden("random_erasing.json")["cases"];
  ASSERT_EQ(cases.size(), 3u);
  for (const json& g : cases) {
    const int64_t H = g["height"], W = g["width"], draws = g["draws"];
    const double p = g["p"];
    std::vector<std::vector<double>> values(5);  // top, left, height, width, area of the erased samples
    for (int64_t i = 0; i < draws; ++i) {
      const PixelRect box = random_erasing_box(p, H, W, 7, 3, i);
      if (box.height == 0) continue;
      ASSERT_TRUE(box.top >= 0 && box.left >= 0 && box.top + box.height <= H && box.left + box.width <= W &&
                  box.height < H && box.width < W)
          << "box outside " << H << "x" << W;
      for (auto [k, v] : {std::pair{0, box.top}, {1, box.left}, {2, box.height}, {3, box.width}, {4, box.height * box.width}})
        values[static_cast<size_t>(k)].push_back(static_cast<double>(v));
    }
    const double n = static_cast<double>(values[0].size());
    const double share = n / static_cast<double>(draws), want_share = g["erased_share"];
    // Two independent estimates: 5 standard errors of their difference.
    EXPECT_NEAR(share, want_share, 5 * std::sqrt(2 * want_share * (1 - want_share) / static_cast<double>(draws)))
        << H << "x" << W;
    const char* names[] = {"top", "left", "height", "width", "area"};
    for (size_t k = 0; k < 5; ++k) {
      double mean = 0;
      for (double v : values[k]) mean += v / n;
      const double want = g["mean"][names[k]], std = g["std"][names[k]];
      EXPECT_NEAR(mean, want, 5 * std * std::sqrt(2.0 / n)) << names[k] << " of the boxes in " << H << "x" << W;
    }
  }
}

TEST(RandomErasing, ZeroesExactlyTheDrawnBoxesInEveryLayoutAndDtype) {
  const std::vector<int64_t> indices{3, 17, 40, 41, 99, 1000};
  const auto n = static_cast<int64_t>(indices.size());
  for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    for (bool channels_last : {false, true}) {
      at::Tensor images = torch::ones({n, 3, 9, 11}, dtype);
      if (channels_last) images = images.contiguous(at::MemoryFormat::ChannelsLast);
      random_erasing_apply(images, indices.data(), n, 1.0, 5, 2);
      int64_t erased_images = 0;
      for (int64_t b = 0; b < n; ++b) {
        const PixelRect box = random_erasing_box(1.0, 9, 11, 5, 2, indices[static_cast<size_t>(b)]);
        at::Tensor want = torch::ones({3, 9, 11}, dtype);
        want.narrow(1, box.top, box.height).narrow(2, box.left, box.width).zero_();
        EXPECT_TRUE(torch::equal(images[b], want)) << "sample " << b;
        erased_images += box.height > 0;
      }
      EXPECT_GE(erased_images, n - 1) << "p = 1 erases unless 10 tries find no box";
      EXPECT_EQ(images.is_contiguous(at::MemoryFormat::ChannelsLast), channels_last);
    }
  }
}

TEST(RandomErasing, LoaderAndDeviceDataBatchesAreTheUnerasedOnesWithTheBoxesZeroed) {
  const Dataset d = erasing_dataset(50, 1, 12, 10);
  LoaderOptions options;
  options.batch_size = 8;
  options.drop_last = false;
  options.augment = augment_crop_flip(2);
  options.sampler.seed = 11;
  const auto plain = erasing_epoch_batches(d, options, 4);
  options.augment.erase = 0.5;
  const auto order = sampler_epoch_indices(d.size(), 4, options.sampler);
  int64_t erased = 0;
  for (int64_t workers : {0, 2}) {
    for (bool on_device : {false, true}) {
      options.workers = workers;
      options.on_device = on_device;
      const auto got = erasing_epoch_batches(d, options, 4);
      ASSERT_EQ(got.size(), plain.size());
      for (size_t i = 0; i < got.size(); ++i) {
        at::Tensor want = plain[i].images.clone();
        random_erasing_apply(want, order.data() + i * 8, want.size(0), 0.5, 11, 4);
        EXPECT_TRUE(torch::equal(got[i].images, want)) << "batch " << i << ", workers " << workers << ", on device "
                                                       << on_device;
        erased += got[i].images.ne(plain[i].images).flatten(1).any(1).sum().item<int64_t>();
      }
    }
  }
  EXPECT_GT(erased, 4 * 10) << "about half of 4 x 50 samples erased";
  EXPECT_LT(erased, 4 * 40);
}

TEST(AlternatingFlip, EachImageIsFlippedInAlternateEpochsFromARandomStart) {
  AugmentOptions options;
  options.flip = true;
  options.alternate_flip = true;
  int64_t flipped_first = 0;
  for (int64_t index = 0; index < 1000; ++index) {
    const bool first = augment_draw(options, 9, 0, index).flip;
    flipped_first += first;
    for (int64_t epoch = 1; epoch < 6; ++epoch)
      ASSERT_EQ(augment_draw(options, 9, epoch, index).flip, first != static_cast<bool>(epoch % 2))
          << "sample " << index << ", epoch " << epoch;
  }
  EXPECT_GT(flipped_first, 430);
  EXPECT_LT(flipped_first, 570);
  options.flip = false;
  EXPECT_FALSE(augment_draw(options, 9, 1, 0).flip || augment_draw(options, 9, 2, 0).flip);
}

TEST(Tta, LogitsEqualAirbenchsInferOnALinearModelInEitherLayout) {
  const json g = recipe94_golden("tta.json");
  const auto shape = g["input_shape"].get<std::vector<int64_t>>();
  const int64_t numel = shape[0] * shape[1] * shape[2] * shape[3];
  LinearProbe model(shape[1] * shape[2] * shape[3], g["classes"].get<int64_t>());
  const at::Tensor x = torch::sin(torch::arange(numel, torch::kFloat64).mul(0.11).add(0.3)).to(torch::kFloat32).reshape(shape);
  for (bool channels_last : {false, true}) {
    const at::Tensor input = channels_last ? x.contiguous(at::MemoryFormat::ChannelsLast) : x;
    for (const std::string mode : {"off", "flip", "flip-translate"}) {
      const at::Tensor want = torch::tensor(g[mode].get<std::vector<double>>(), torch::kFloat32);
      const at::Tensor got = tta_logits(model, input, mode).flatten();
      EXPECT_TRUE(torch::allclose(got, want, 1e-5, 1e-5)) << mode << (channels_last ? " (channels_last)" : "") << ": "
                                                          << (got - want).abs().max().item<double>();
    }
  }
  EXPECT_THROW(tta_logits(model, x, "sideways"), c10::Error);
}

TEST(Tta, AutoMirrorsOnlyTheDefaultRecipeWhereItWasMeasured) {
  DataConfig data;  // the defaults: Fashion-MNIST, tta auto, the built-in augmentation with its flip
  EXPECT_EQ(tta_mode(data), "flip");
  data.source = "fashion-mnist:/data/fm";
  EXPECT_EQ(tta_mode(data), "flip");
  data.flip = false;
  EXPECT_EQ(tta_mode(data), "off");
  data.flip = true, data.augment = false;
  EXPECT_EQ(tta_mode(data), "off");
  data.augment = true;
  data.transform = "RandomCrop(28, padding=2), RandomHorizontalFlip()";  // the user's own pipeline: not measured
  EXPECT_EQ(tta_mode(data), "off");
  data.transform.clear();
  // Other data sets evaluate one forward per image, flipped in training or not (torchvision's references do).
  for (const std::string source : {"cifar10:/data/cifar", "imagefolder:/data/pets", "shards:/data/s", "synthetic",
                                   "mnist:/data/mnist", "csv:/data/train.csv"}) {
    data.source = source;
    EXPECT_EQ(tta_mode(data), "off") << source;
  }
  data.flip = false;  // a given mode is itself, whatever the training did
  for (const std::string mode : {"off", "flip", "flip-translate"}) {
    data.tta = mode;
    EXPECT_EQ(tta_mode(data), mode);
  }
  LinearProbe model(4, 2);  // "auto" is the config's word, resolved before any logits are taken
  EXPECT_THROW(tta_logits(model, torch::zeros({1, 1, 2, 2}), "auto"), c10::Error);
}

TEST(Recipe94Config, BadProbabilityOrTtaModeIsRefusedByName) {
  TrainConfig config;
  config.data.random_erasing = 1.5;
  try {
    config_validate(config);
    ADD_FAILURE() << "--random-erasing 1.5 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--random-erasing"), std::string::npos) << e.what();
  }
  const test::TempDir tmp;
  const std::string recipe = tmp.path() + "/tta.toml";
  std::ofstream(recipe) << "[data]\ntta = \"sideways\"\n";
  TrainConfig from_file;
  try {
    config_load_toml(from_file, recipe);
    ADD_FAILURE() << "tta = sideways was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("flip-translate"), std::string::npos) << e.what();
  }
}
