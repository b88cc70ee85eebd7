// Batches sized by the transform (data/transforms/split_size.h): the size each operation leaves (fixed, the
// input's, or unknown), a pipeline's, the rules against a given --image-size and their messages, and an image
// folder whose evaluation split takes its --eval-transform's size with no --image-size.
#include "fastloop/core/config.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/loader/loader.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/data/transforms/pipeline.h"
#include "fastloop/data/transforms/split_size.h"
#include "data_files.h"
#include "golden_support.h"
#include "test_support.h"

#include <algorithm>
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace fs = std::filesystem;
using namespace fastloop;

namespace {

ImageSize size_of(const std::string& spec, ImageSize in = {}) { return Pipeline(spec).output_size(in); }

std::string error_of(const std::string& transform, int64_t size) {
  try {
    transform_image_size(transform, size);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SplitSize, EachOperationSaysWhatSizeItLeaves) {
  const std::vector<std::pair<std::string, ImageSize>> fixed{
      {"Resize(160), CenterCrop(128), ToTensor()", {128, 128}},
      {"RandomResizedCrop((96, 128)), RandomHorizontalFlip(), TrivialAugmentWide()", {96, 128}},
      {"Resize((100, 120)), ColorJitter(0.4, 0.4, 0.4)", {100, 120}},
      {"CenterCrop(64), Pad(4)", {72, 72}},
      {"CenterCrop(64), Pad((1, 2, 3, 4))", {70, 68}},  // left, top, right, bottom
      {"RandomCrop(40, padding=4), RandomRotation(30), GaussianBlur(3)", {40, 40}},
      {"CenterCrop(64), RandomApply([ColorJitter(0.2)], p=0.5)", {64, 64}},
      {"Compose([Resize(80), CenterCrop(64)]), RandomErasing()", {64, 64}},
      {"Resize(50), RandomChoice([CenterCrop(32), Resize((32, 32))])", {32, 32}},
      {"CenterCrop(48), RandomOrder([ColorJitter(0.1), RandomHorizontalFlip()])", {48, 48}}};
  for (const auto& [spec, want] : fixed) EXPECT_EQ(size_of(spec), want) << spec;
  // Sizes that follow each image or each draw are unknown.
  for (const std::string spec : {"Resize(160)", "RandomHorizontalFlip(), ToTensor()", "Resize(size=None, max_size=80)",
                                 "CenterCrop(64), RandomRotation(30, expand=True)", "CenterCrop(64), RandomApply([CenterCrop(32)])",
                                 "RandomChoice([CenterCrop(32), CenterCrop(40)])", "RandomOrder([CenterCrop(32), Pad(2)])"})
    EXPECT_FALSE(size_of(spec).known()) << spec;
  // With the input's size known, a size that follows the image is computed as torchvision does.
  EXPECT_EQ(size_of("Resize(160)", {200, 300}), (ImageSize{160, 240}));
  EXPECT_EQ(size_of("RandomHorizontalFlip()", {20, 30}), (ImageSize{20, 30}));
  EXPECT_EQ(size_of("Pad(3)", {20, 30}), (ImageSize{26, 36}));
}

TEST(SplitSize, AGivenSizeMustAgreeAndAVaryingOneIsRefusedSayingWhatToAdd) {
  EXPECT_EQ(transform_image_size("", 0), (ImageSize{kImageSizeDefault, kImageSizeDefault}));  // the built-in ones
  EXPECT_EQ(transform_image_size("", 96), (ImageSize{96, 96}));
  EXPECT_EQ(transform_image_size("Resize(160), CenterCrop(128), ToTensor()", 0), (ImageSize{128, 128}));
  EXPECT_EQ(transform_image_size("Resize(160), CenterCrop(128), ToTensor()", 128), (ImageSize{128, 128}));
  EXPECT_EQ(transform_image_size("Resize(64), ToTensor()", 64), (ImageSize{64, 64}));  // checked per image
  const std::string disagree = error_of("Resize(160), CenterCrop(128), ToTensor()", 224);
  EXPECT_CONTAINS(disagree, "--transform ends in 128 x 128 images, but --image-size is 224");
  EXPECT_CONTAINS(disagree, "leave --image-size out");
  const std::string varies = error_of("Resize(160), ToTensor()", 0);
  EXPECT_CONTAINS(varies, "--transform Resize(size=160");
  EXPECT_CONTAINS(varies, "size follows each image's");
  EXPECT_CONTAINS(varies, "CenterCrop(224)");
  EXPECT_CONTAINS(varies, "or give --image-size");
}

TEST(SplitSize, AnImageFolderTakesEachSplitsSizeFromItsTransform) {
  const test::TempDir tmp;
  const fs::path dir = tmp.sub("folder");
  const char* files[] = {"rgb.jpg", "gray.jpg", "rgb.png", "palette.png"};  // sizes differ
  for (const char* split : {"train", "val"})
    for (int c = 0; c < 2; ++c) {
      fs::create_directories(dir / split / std::to_string(c));
      for (const char* f : files) fs::copy_file(test::kImageGoldenDir + f, dir / split / std::to_string(c) / f);
    }
  DataConfig config;
  config.source = "imagefolder:" + dir.string();
  config.transform = "RandomResizedCrop((24, 32)), ToTensor()";
  config.eval_transform = "Resize(40), CenterCrop(30), ToTensor()";
  DatasetSplits splits = data_load(config);
  splits_size_resolve(splits, config);
  EXPECT_EQ(splits.train.height(), 24);
  EXPECT_EQ(splits.train.width(), 32);
  EXPECT_EQ(splits.test.height(), 30);
  EXPECT_EQ(splits.test.width(), 30);
  LoaderOptions options;
  options.batch_size = 8;
  options.workers = 2;
  options.augment.pipeline = std::make_shared<const Pipeline>(config.eval_transform);
  Loader loader(splits.test, options);
  loader.start_epoch(0);
  const auto batch = loader.next();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->images.sizes(), (std::vector<int64_t>{8, 3, 30, 30}));
  // A run's own image size beside a transform of another size stops before any data is read.
  config.image.size = 64;
  EXPECT_THROW(splits_size_resolve(splits, config), InputError);
  // A transform whose size follows each image's takes the first image's size (the loader names the first image
  // that differs), as DataLoader's collate stacks images while their sizes agree.
  config.image.size = 0;
  config.eval_transform = "Resize(40), ToTensor()";
  splits_size_resolve(splits, config);
  EXPECT_EQ(std::min(splits.test.height(), splits.test.width()), 40);
}

}  // namespace
