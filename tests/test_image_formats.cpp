// Every format torchvision's ImageFolder lists through the CLI: a folder mixing WebP, BMP, PPM/PGM and
// TIFF (with JPEG and PNG) trains with loader workers, evaluates from its checkpoint, packs into shards
// that keep each file's extension and trains from those; a TIFF PIL opens but fastloop does not decode
// stops training with its name, and --bad-image-policy skip steps over it. Files: the decoder's goldens.
#include "fastloop/data/sources/image_files.h"
#include "fastloop/data/sources/shards.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <tuple>

namespace fastloop {
namespace {

namespace fs = std::filesystem;

// DIR/train/{a,b}/ with 4 images each and DIR/val/ with 2 + 3, in every format but JPEG/PNG's too.
std::string mixed_folder_make(const std::string& dir) {
  const std::string golden = std::string(FASTLOOP_TEST_DIR) + "/golden/images/";
  const std::vector<std::tuple<const char*, const char*, std::vector<const char*>>> files = {
      {"train", "a", {"lossy.webp", "animated.webp", "rgb.bmp", "rle8.bmp"}},
      {"train", "b", {"rgb.ppm", "gray.pgm", "lzw.tif", "deflate.tiff"}},
      {"val", "a", {"lossless.webp", "rgb565.bmp"}},
      {"val", "b", {"jpeg.tif", "maxval1000.pgm", "rgb.jpg"}}};
  for (const auto& [split, cls, names] : files) {
    fs::create_directories(fs::path(dir) / split / cls);
    for (const char* f : names) fs::copy_file(golden + f, fs::path(dir) / split / cls / f);
  }
  return dir;
}

// "test accuracy A% (loss L, N images) after S steps": {N, S}, or {-1, -1} when the line is missing.
std::pair<int64_t, int64_t> images_and_steps(const std::string& output) {
  std::smatch m;
  if (!std::regex_search(output, m, std::regex(R"(test accuracy [0-9.]+% \(loss [0-9.]+, (\d+) images\) after (\d+) steps)")))
    return {-1, -1};
  return {std::stoll(m[1]), std::stoll(m[2])};
}

const std::string kRun = " --model resnet18 --stem imagenet --image-size 32 --batch-size 4 --epochs 1 --device cpu --threads 1";

TEST(ImageFormats, AFolderMixingEveryFormatTrainsEvaluatesAndPacksIntoShardsThatTrain) {
  const test::TempDir tmp;
  const std::string dir = mixed_folder_make(tmp.sub("mixed"));
  const auto trained = test::cli_run("train --data imagefolder:" + dir + kRun + " --workers 2 --checkpoint-dir " + dir + "/ckpt");
  ASSERT_EQ(trained.code, 0) << trained.output;
  EXPECT_EQ(images_and_steps(trained.output), std::make_pair(int64_t{5}, int64_t{2})) << trained.output;

  const auto evaluated = test::cli_run("eval --threads 1 --batch-size 4 --checkpoint " + dir + "/ckpt/last.ckpt");
  ASSERT_EQ(evaluated.code, 0) << evaluated.output;
  EXPECT_NE(evaluated.output.find("5 images"), std::string::npos) << evaluated.output;

  const auto packed = test::cli_run("pack " + dir + " " + dir + "/shards");
  ASSERT_EQ(packed.code, 0) << packed.output;
  std::ifstream in(dir + "/shards/train-000000.tar", std::ios::binary);
  const std::string tar{std::istreambuf_iterator<char>(in), {}};
  std::set<std::string> extensions;
  for (const ShardSample& s : shard_index(tar, "train-000000.tar")) extensions.insert(s.image.substr(s.image.find('.') + 1));
  EXPECT_EQ(extensions, (std::set<std::string>{"webp", "bmp", "ppm", "pgm", "tif", "tiff"}));

  const auto sharded = test::cli_run("train --data shards:" + dir + "/shards --shuffle-buffer 4 --workers 2" + kRun);
  ASSERT_EQ(sharded.code, 0) << sharded.output;
  EXPECT_EQ(images_and_steps(sharded.output), std::make_pair(int64_t{5}, int64_t{2})) << sharded.output;
}

TEST(ImageFormats, ATiffFastloopDoesNotDecodeStopsTrainingByNameAndSkipStepsOverIt) {
  const test::TempDir tmp;
  const std::string dir = mixed_folder_make(tmp.sub("float_tiff"));
  fs::copy_file(std::string(FASTLOOP_TEST_DIR) + "/golden/images/float.tif", fs::path(dir) / "train" / "a" / "float.tif");
  const std::string all_in_one_batch = " --model resnet18 --stem imagenet --image-size 32 --batch-size 9 --epochs 1"
                                       " --device cpu --threads 1 --data imagefolder:" + dir;
  const auto stopped = test::cli_run("train" + all_in_one_batch);
  EXPECT_EQ(stopped.code, 2) << stopped.output;
  EXPECT_NE(stopped.output.find("float.tif"), std::string::npos) << stopped.output;
  EXPECT_NE(stopped.output.find("floating-point"), std::string::npos) << stopped.output;
  EXPECT_NE(stopped.output.find("--bad-image-policy skip"), std::string::npos) << stopped.output;

  const auto skipped = test::cli_run("train --bad-image-policy skip" + all_in_one_batch);
  EXPECT_EQ(skipped.code, 0) << skipped.output;
}

TEST(ImageFormats, ShardsTakeEveryExtensionImageFoldersList) {
  for (const char* ext : kImageExtensions) EXPECT_TRUE(shard_image_extension(std::string(ext).substr(1))) << ext;
  EXPECT_FALSE(shard_image_extension("cls"));
  EXPECT_FALSE(shard_image_extension("gif"));  // not in torchvision's IMG_EXTENSIONS either
}

}  // namespace
}  // namespace fastloop
