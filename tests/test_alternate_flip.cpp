// --alternate-flip (airbench's flip rule) where it applies: the built-in flip of in-memory data. With a
// --transform pipeline, or image files (which run through the built-in pipeline), train_setup refuses `on` with
// an InputError naming the combination, instead of training with random flips the user did not ask for; `auto`
// (the default) alternates where it applies and flips at random elsewhere.
#include "cat_dog_folder.h"
#include "data_files.h"

#include "fastloop/core/config.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/train/setup.h"

#include <gtest/gtest.h>

namespace fastloop {
namespace {

using test_data::input_error_of;

TrainConfig alternate_flip_config(const std::string& source) {
  TrainConfig config;
  config.data.source = source;
  config.data.alternate_flip = "on";
  config.data.batch_size = 4;
  config.data.image.size = 16;
  return config;
}

TEST(AlternateFlip, AcceptedForInMemoryDataWithTheBuiltInFlip) {
  const TrainConfig config = alternate_flip_config("synthetic:3x8x8:16");
  const DatasetSplits data = data_load(config.data);
  const TrainSetup setup = train_setup(config, data.train, c10::kCPU, nullptr);
  EXPECT_TRUE(setup.train_loader.augment.alternate_flip);
  EXPECT_TRUE(setup.train_loader.augment.flip);
  EXPECT_EQ(setup.train_loader.augment.pipeline, nullptr);
}

TEST(AlternateFlip, RefusedWithATransformPipeline) {
  TrainConfig config = alternate_flip_config("synthetic:3x8x8:16");
  config.data.transform = "RandomHorizontalFlip(p=0.5), ToTensor()";
  const DatasetSplits data = data_load(config.data);
  const std::string message = input_error_of([&] { train_setup(config, data.train, c10::kCPU, nullptr); });
  EXPECT_CONTAINS(message, "--alternate-flip is not supported with a --transform pipeline");
  EXPECT_CONTAINS(message, "RandomHorizontalFlip(p=0.5), ToTensor()");
  EXPECT_CONTAINS(message, "Give --alternate-flip off or auto");
  config.data.alternate_flip = "off";  // the same pipeline alone is fine
  EXPECT_NE(train_setup(config, data.train, c10::kCPU, nullptr).train_loader.augment.pipeline, nullptr);
}

TEST(AlternateFlip, RefusedForImageFilesAndAcceptedWithoutAFlip) {
  const test::TempDir tmp;
  TrainConfig config = alternate_flip_config("imagefolder:" + test::cat_dog_folder_write(tmp.sub("folder")));
  const DatasetSplits data = data_load(config.data);
  ASSERT_TRUE(data.train.encoded);
  const std::string message = input_error_of([&] { train_setup(config, data.train, c10::kCPU, nullptr); });
  EXPECT_CONTAINS(message, "--alternate-flip is not supported with image files and shards (imagefolder:");
  config.data.flip = false;  // nothing to alternate: the flag changes nothing and is not an error
  EXPECT_NO_THROW(train_setup(config, data.train, c10::kCPU, nullptr));
}

TEST(AlternateFlip, AutoAlternatesInMemoryDataAndFlipsImageFilesAtRandom) {
  TrainConfig config = alternate_flip_config("synthetic:3x8x8:16");
  config.data.alternate_flip = "auto";
  DatasetSplits data = data_load(config.data);
  EXPECT_TRUE(train_setup(config, data.train, c10::kCPU, nullptr).train_loader.augment.alternate_flip);
  config.data.alternate_flip = "off";
  EXPECT_FALSE(train_setup(config, data.train, c10::kCPU, nullptr).train_loader.augment.alternate_flip);

  const test::TempDir tmp;
  config = alternate_flip_config("imagefolder:" + test::cat_dog_folder_write(tmp.sub("folder")));
  config.data.alternate_flip = "auto";
  data = data_load(config.data);
  const TrainSetup setup = train_setup(config, data.train, c10::kCPU, nullptr);
  EXPECT_FALSE(setup.train_loader.augment.alternate_flip);
  EXPECT_TRUE(setup.train_loader.augment.flip);
}

}  // namespace
}  // namespace fastloop
