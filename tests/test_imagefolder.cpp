// Image folders: the listing equals torchvision's ImageFolder (classes, order, extensions; golden from
// tests/tools/make_image_goldens.py), bad folders and files are InputErrors naming the path, the loader makes
// the same batches with any number of workers, --bad-image-policy skip counts, and `fastloop train`
// trains and evaluates an --stem imagenet model on a generated folder.
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/imagefolder.h"
#include "fastloop/data/loader/loader.h"
#include "fastloop/data/sources/source.h"
#include "golden_support.h"
#include "test_support.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace fs = std::filesystem;
using namespace fastloop;

namespace {


void touch(const fs::path& path) {
  fs::create_directories(path.parent_path());
  std::ofstream(path).put('\0');
}

// DIR/{train,val}/{cat,dog}/ with JPEGs and PNGs of every kind the decoder handles (copies of the goldens).
std::string image_folder_make(const std::string& dir, bool with_val = true) {
  const char* cat[] = {"rgb.jpg", "gray.jpg", "cmyk.jpg", "progressive.jpg", "rgb444.jpg"};
  const char* dog[] = {"rgb.png", "rgba.png", "palette.png", "gray16.png", "gray.png"};
  for (const char* split : {"train", "val"}) {
    if (std::string(split) == "val" && !with_val) continue;
    fs::create_directories(fs::path(dir) / split / "cat"), fs::create_directories(fs::path(dir) / split / "dog");
    for (const char* f : cat) fs::copy_file(test::kImageGoldenDir + f, fs::path(dir) / split / "cat" / f);
    for (const char* f : dog) fs::copy_file(test::kImageGoldenDir + f, fs::path(dir) / split / "dog" / f);
  }
  return dir;
}

std::string folder_load_error(const std::string& spec) {
  try {
    data_load(spec);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::vector<Batch> epoch_batches(const Dataset& data, LoaderOptions options) {
  Loader loader(data, options);
  loader.start_epoch(1);
  std::vector<Batch> out;
  while (auto b = loader.next()) out.push_back(*b);
  return out;
}

LoaderOptions train_options(int64_t workers) {
  LoaderOptions o;
  o.batch_size = 3;
  o.workers = workers;
  o.drop_last = false;
  o.augment = augment_crop_flip(0);
  o.sampler.seed = 11;
  return o;
}

}  // namespace

TEST(ImageFolder, ListsClassesAndFilesAsTorchvisionDoes) {
  const test::TempDir tmp;
  const auto golden = nlohmann::json::parse(std::ifstream(test::kImageGoldenDir + "goldens.json"))["folder"];
  const std::string root = tmp.sub("imagefolder_listing");
  for (const auto& rel : golden["files"]) touch(fs::path(root) / rel.get<std::string>());
  const auto folder = ImageFolder::list(root);
  EXPECT_EQ(folder->classes(), golden["classes"].get<std::vector<std::string>>());
  ASSERT_EQ(folder->size(), static_cast<int64_t>(golden["samples"].size()));
  for (int64_t i = 0; i < folder->size(); ++i) {
    EXPECT_EQ(folder->relative_path(i), golden["samples"][i][0].get<std::string>()) << i;
    EXPECT_EQ(folder->label(i), golden["samples"][i][1].get<int64_t>()) << i;
  }
}

TEST(ImageFolder, BadFoldersAreInputErrorsNamingThePath) {
  const test::TempDir tmp;
  const std::string root = tmp.sub("imagefolder_bad");
  EXPECT_NE(folder_load_error("imagefolder:" + root).find(root + "/train"), std::string::npos);  // no train/
  fs::create_directories(fs::path(root) / "train");
  EXPECT_NE(folder_load_error("imagefolder:" + root).find("no class folders"), std::string::npos);
  touch(fs::path(root) / "train" / "a" / "x.jpg");
  touch(fs::path(root) / "train" / "b" / "readme.txt");  // a class folder without images
  const std::string empty = folder_load_error("imagefolder:" + root);
  EXPECT_NE(empty.find(root + "/train/b"), std::string::npos) << empty;
  EXPECT_NE(folder_load_error("imagefolder:/nonexistent/images").find("/nonexistent/images"), std::string::npos);
}

TEST(ImageFolder, ValMustHaveTrainsClassesAndWithoutValTheTestSplitIsEmpty) {
  const test::TempDir tmp;
  const std::string dir = image_folder_make(tmp.sub("imagefolder_val"));
  const DatasetSplits both = data_load("imagefolder:" + dir);
  EXPECT_EQ(both.train.size(), 10); EXPECT_EQ(both.test.size(), 10); EXPECT_EQ(both.train.num_classes, 2);
  EXPECT_EQ(both.train.channels(), 3); EXPECT_EQ(both.train.height(), 224); EXPECT_EQ(both.train.width(), 224);
  EXPECT_FLOAT_EQ(both.train.mean[0], 0.485f); EXPECT_FLOAT_EQ(both.train.stddev[2], 0.225f);  // ImageNet's

  DataOptions options;
  options.image.size = 32, options.image.mean = "0.5", options.image.std = "0.25,0.5,1";
  const DatasetSplits custom = data_load("imagefolder:" + dir, options);
  EXPECT_EQ(custom.test.height(), 32);
  EXPECT_FLOAT_EQ(custom.test.mean[1], 0.5f); EXPECT_FLOAT_EQ(custom.test.stddev[0], 0.25f);
  options.image.mean = "0.5,0.5";
  EXPECT_THROW(data_load("imagefolder:" + dir, options), InputError);

  fs::create_directories(fs::path(dir) / "val" / "zebra" );
  touch(fs::path(dir) / "val" / "zebra" / "z.jpg");
  EXPECT_NE(folder_load_error("imagefolder:" + dir).find("class folders differ"), std::string::npos);

  const DatasetSplits train_only = data_load("imagefolder:" + image_folder_make(tmp.sub("imagefolder_noval"), false));
  EXPECT_EQ(train_only.train.size(), 10);
  EXPECT_EQ(train_only.test.size(), 0);
  EXPECT_EQ(train_only.test.channels(), 3);
}

TEST(ImageFolderLoader, BatchesAreTheSameForAnyWorkerCountDtypeAndLayout) {
  const test::TempDir tmp;
  DataOptions options;
  options.image.size = 24;
  const Dataset data = data_load("imagefolder:" + image_folder_make(tmp.sub("imagefolder_workers")), options).train;
  const auto serial = epoch_batches(data, train_options(0));
  ASSERT_EQ(serial.size(), 4u);  // 10 images in batches of 3, the last partial
  EXPECT_EQ(serial[0].images.sizes(), (std::vector<int64_t>{3, 3, 24, 24}));
  LoaderOptions nhwc = train_options(2);
  nhwc.channels_last = true, nhwc.dtype = at::kBFloat16;
  for (const auto& other : {epoch_batches(data, train_options(3)), epoch_batches(data, nhwc)}) {
    ASSERT_EQ(other.size(), serial.size());
    for (size_t b = 0; b < serial.size(); ++b) {
      EXPECT_TRUE(other[b].labels.equal(serial[b].labels));
      EXPECT_TRUE(at::allclose(other[b].images.to(at::kFloat), serial[b].images, 0.02, 0.02)) << b;
    }
  }
  // A different epoch draws other crops; evaluation (no augmentation) is Resize + CenterCrop.
  Loader loader(data, train_options(0));
  loader.start_epoch(2);
  EXPECT_FALSE(loader.next()->images.equal(serial[0].images));
  LoaderOptions eval = train_options(1);
  eval.augment = {};
  const auto a = epoch_batches(data, eval), b = epoch_batches(data, eval);
  EXPECT_TRUE(a[0].images.equal(b[0].images));
  EXPECT_LT(a[0].images.abs().max().item<float>(), 3.0f);  // normalised with ImageNet's statistics
}

TEST(ImageFolderLoader, BadImagesStopTheRunNamingTheFileOrAreSkippedAndCounted) {
  const test::TempDir tmp;
  const std::string dir = image_folder_make(tmp.sub("imagefolder_badimage"), false);
  fs::copy_file(test::kImageGoldenDir + "truncated.jpg", fs::path(dir) / "train" / "cat" / "zz_truncated.jpg");
  fs::create_symlink(fs::path(dir) / "gone.jpg", fs::path(dir) / "train" / "dog" / "zz_gone.jpg");  // unreadable
  DataOptions options;
  options.image.size = 16;
  Dataset data = data_load("imagefolder:" + dir, options).train;
  LoaderOptions o = train_options(2);
  o.sampler.shuffle = false;
  o.batch_size = 12;
  Loader loader(data, o);
  loader.start_epoch(0);
  try {
    loader.next();
    FAIL() << "a truncated image must stop the run";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_TRUE(what.find("zz_truncated.jpg") != std::string::npos || what.find("zz_gone.jpg") != std::string::npos) << what;
  }
  data.skip_bad_images = true;
  Loader skipping(data, o);
  skipping.start_epoch(0);
  const auto batch = skipping.next();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->labels.size(0), 12);
  EXPECT_EQ(skipping.bad_images_skipped(), 2);
}

TEST(ImageFolderCli, TrainsAndEvaluatesAnImagenetStemModel) {
  const test::TempDir tmp;
  const std::string dir = image_folder_make(tmp.sub("imagefolder_cli"));
  const auto r = test::cli_run("train --data imagefolder:" + dir +
                               " --model resnet18 --stem imagenet --image-size 32 --batch-size 4 --epochs 1"
                               " --workers 2 --channels-last --amp bf16 --device cpu --threads 1 --log-every 1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("test accuracy"), std::string::npos) << r.output;

  const std::string noval = image_folder_make(tmp.sub("imagefolder_cli_noval"), false);
  const auto t = test::cli_run("train --data imagefolder:" + noval +
                               " --model resnet18 --stem imagenet --image-size 32 --batch-size 4 --epochs 1 --device cpu --threads 1");
  ASSERT_EQ(t.code, 0) << t.output;
  EXPECT_NE(t.output.find("evaluation is skipped"), std::string::npos) << t.output;

  fs::copy_file(test::kImageGoldenDir + "truncated.jpg", fs::path(noval) / "train" / "cat" / "bad.jpg");
  const auto bad = test::cli_run("train --data imagefolder:" + noval +  // one batch of all 11: bad.jpg is in it
                                 " --model resnet18 --stem imagenet --image-size 32 --batch-size 11 --epochs 1 --device cpu --threads 1");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("bad.jpg"), std::string::npos) << bad.output;
}
