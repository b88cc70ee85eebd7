// `fastloop pack`: an image folder becomes WebDataset shards that GNU tar and Python's webdataset read
// with the same samples, labels (ImageFolder's class indices) and bytes; shards stay under --shard-mb;
// bad folders exit 2 naming the path; and the loader over the packed shards gives the same batches for
// any worker count, in the shards' epoch order.
#include "fastloop/data/loader/loader.h"
#include "fastloop/data/sources/shards.h"
#include "fastloop/data/sources/source.h"

#include "data_files.h"
#include "shard_files.h"
#include "test_support.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

namespace fastloop {
namespace {

namespace fs = std::filesystem;
using namespace test_data;
using namespace test_shards;

// DIR/{train,val}/CLASS/ of fake image bytes (pack never decodes); bytes → class index, per split.
struct FakeFolder {
  std::string dir;
  std::map<std::string, int64_t> train, val;
};

FakeFolder fake_folder(const std::string& dir, int per_class, size_t image_bytes = 300) {
  FakeFolder f{dir, {}, {}};
  const char* classes[] = {"ant", "bee", "cat"};  // sorted: indices 0, 1, 2
  int64_t n = 0;
  for (const char* split : {"train", "val"}) {
    for (int64_t c = 0; c < 3; ++c) {
      fs::create_directories(fs::path(f.dir) / split / classes[c]);
      for (int k = 0; k < (std::string(split) == "val" ? 1 : per_class); ++k) {
        const std::string bytes = fake_image(n++, image_bytes);
        const char* ext = k % 2 ? "PNG" : "jpeg";
        write_all(f.dir + "/" + split + "/" + classes[c] + "/img" + std::to_string(k) + "." + ext, bytes);
        (std::string(split) == "train" ? f.train : f.val)[bytes] = c;
      }
    }
  }
  return f;
}

std::map<std::string, int64_t> split_contents(const ShardImages& images) {
  std::map<std::string, int64_t> out;
  std::string scratch;
  for (int64_t i = 0; i < images.size(); ++i) out[std::string(images.bytes(i, scratch))] = images.label(i);
  return out;
}

TEST(Pack, WritesShardsThatTarAndWebdatasetReadWithImageFolderLabels) {
  const test::TempDir tmp;
  const FakeFolder f = fake_folder(tmp.sub("pack_basic"), 4);
  const std::string out = f.dir + "/shards";
  const auto r = test::cli_run("pack " + f.dir + " " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("packed 12 train images of 3 classes into 1 shards, 3 val images into 1 shards"), std::string::npos) << r.output;
  EXPECT_EQ(read_all(out + "/classes.txt"), "ant\nbee\ncat\n");
  const auto tar = test::shell_run("tar tf " + out + "/train-000000.tar | head -2");
  EXPECT_TRUE(tar.output == "00000000.jpeg\n00000000.cls\n" || tar.output == "00000000.png\n00000000.cls\n") << tar.output;
  const ShardSplits splits = shards_load(out, 8);
  EXPECT_EQ(split_contents(*splits.train), f.train);
  ASSERT_TRUE(splits.val);
  EXPECT_EQ(split_contents(*splits.val), f.val);
  FASTLOOP_SKIP_WITHOUT_VENV();
  std::map<std::string, int64_t> python;
  for (const auto& line : peer_run("webdataset " + out + "/train-000000.tar")) {
    std::string bytes;
    const std::string h = line["hex"];
    for (size_t k = 0; k < h.size(); k += 2) bytes.push_back(static_cast<char>(std::stoi(h.substr(k, 2), nullptr, 16)));
    python[bytes] = line["cls"];
  }
  EXPECT_EQ(python, f.train);
}

TEST(Pack, SplitsShardsAtShardMbAndShufflesTheTrainImages) {
  const test::TempDir tmp;
  const FakeFolder f = fake_folder(tmp.sub("pack_split"), 6, 300 * 1024);  // 18 train images of 300 KiB
  const std::string out = f.dir + "/shards";
  const auto r = test::cli_run("pack " + f.dir + " " + out + " --shard-mb 1");
  ASSERT_EQ(r.code, 0) << r.output;
  const ShardSplits splits = shards_load(out, 8);
  EXPECT_EQ(splits.train->paths().size(), 6u);  // 3 images of 300 KiB (+ headers) fit in 1 MiB
  for (const std::string& p : splits.train->paths()) EXPECT_LE(fs::file_size(p), 1u << 20) << p;
  EXPECT_EQ(split_contents(*splits.train), f.train);
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < splits.train->size(); ++i) labels.push_back(splits.train->label(i));
  EXPECT_FALSE(std::is_sorted(labels.begin(), labels.end())) << "train images are shuffled across shards";
  const auto again = test::cli_run("pack " + f.dir + " " + out);
  EXPECT_EQ(again.code, 2);
  EXPECT_NE(again.output.find("already holds shards"), std::string::npos) << again.output;
}

TEST(Pack, BadFoldersExitTwoNamingThePath) {
  const test::TempDir tmp;
  const FakeFolder f = fake_folder(tmp.sub("pack_bad"), 2);
  write_all(f.dir + "/train/bee/odd.bmp", "BM");  // every ImageFolder extension packs, untouched (decoded when read)
  const auto bmp = test::cli_run("pack " + f.dir + " " + f.dir + "/out");
  EXPECT_EQ(bmp.code, 0) << bmp.output;
  const auto missing = test::cli_run("pack " + f.dir + "/nothing " + f.dir + "/out2");
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.output.find("no folder " + f.dir + "/nothing/train"), std::string::npos) << missing.output;
  const auto spec = test::cli_run("train --data 'shards:" + f.dir + "/none-{0..3}.tar' --device cpu --epochs 1");
  EXPECT_EQ(spec.code, 2);
  EXPECT_NE(spec.output.find(f.dir + "/none-0.tar"), std::string::npos) << spec.output;
}

std::vector<Batch> epoch_batches(const Dataset& data, int64_t workers) {
  LoaderOptions o;
  o.batch_size = 3;
  o.workers = workers;
  o.drop_last = false;
  o.augment = augment_crop_flip(0);
  o.sampler.seed = 5;
  Loader loader(data, o);
  loader.start_epoch(1);
  std::vector<Batch> out;
  while (auto b = loader.next()) out.push_back(*b);
  return out;
}

TEST(Pack, LoaderGivesTheSameBatchesInTheShardOrderForAnyWorkerCount) {
  const test::TempDir tmp;
  const std::string dir = tmp.sub("pack_loader");
  const std::string golden = std::string(FASTLOOP_TEST_DIR) + "/golden/images/";
  int n = 0;
  for (const char* cls : {"cat", "dog"})
    for (const char* f : {"rgb.jpg", "gray.jpg", "progressive.jpg", "rgb.png", "palette.png"}) {
      fs::create_directories(fs::path(dir) / "train" / cls);
      fs::copy_file(golden + f, fs::path(dir) / "train" / cls / (std::to_string(n++) + f));
    }
  const auto r = test::cli_run("pack " + dir + " " + dir + "/shards --shard-mb 1");
  ASSERT_EQ(r.code, 0) << r.output;
  DataOptions options;
  options.image.size = 24;
  options.shuffle_buffer = 4;
  const DatasetSplits splits = data_load("shards:" + dir + "/shards", options);
  EXPECT_EQ(splits.test.size(), 0);  // no val/: no test split
  const auto serial = epoch_batches(splits.train, 0);
  const auto order = *splits.train.encoded->epoch_order(5, 1, 0, 1);
  std::vector<int64_t> want;
  for (int64_t i : order) want.push_back(splits.train.encoded->label(i));
  std::vector<int64_t> got;
  for (const Batch& b : serial)
    for (int64_t k = 0; k < b.labels.size(0); ++k) got.push_back(b.labels[k].item<int64_t>());
  EXPECT_EQ(got, want);
  for (int64_t workers : {1, 3}) {
    const auto other = epoch_batches(splits.train, workers);
    ASSERT_EQ(other.size(), serial.size());
    for (size_t b = 0; b < serial.size(); ++b) {
      EXPECT_TRUE(other[b].labels.equal(serial[b].labels));
      EXPECT_TRUE(other[b].images.equal(serial[b].images)) << "batch " << b << ", " << workers << " workers";
    }
  }
}

} // namespace
} // namespace fastloop
