// CIFAR-10 binary reader, synthetic data and data specs, on small files each test writes.
#include "fastloop/data/sources/cifar.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/data/sources/synthetic.h"
#include "data_files.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace fastloop {
namespace {

using namespace test_data;
namespace fs = std::filesystem;
// count records; record r has label (r + salt) % 10 and pixel i = (r * 3 + i + salt) mod 256.
Bytes cifar_records(int count, int salt) {
  Bytes b;
  for (int r = 0; r < count; ++r) {
    b.push_back(static_cast<uint8_t>((r + salt) % 10));
    for (int i = 0; i < 3072; ++i) b.push_back(static_cast<uint8_t>(r * 3 + i + salt));
  }
  return b;
}

void write_cifar(const std::string& dir, int per_file = 2) {
  for (int f = 1; f <= 5; ++f) write_file(dir + "/data_batch_" + std::to_string(f) + ".bin", cifar_records(per_file, f));
  write_file(dir + "/test_batch.bin", cifar_records(3, 0));
}

TEST(CifarReader, LoadsBatchesInOrderWithLabelsAndPixels) {
  TempDir dir;
  write_cifar(dir.path());
  const DatasetSplits s = cifar10_load(dir.path());
  EXPECT_EQ(s.name, "cifar10");
  ASSERT_EQ(s.train.images.sizes(), at::IntArrayRef({10, 3, 32, 32}));
  ASSERT_EQ(s.test.images.sizes(), at::IntArrayRef({3, 3, 32, 32}));
  EXPECT_TRUE(s.train.labels.equal(at::tensor(std::vector<int64_t>{1, 2, 2, 3, 3, 4, 4, 5, 5, 6})));
  // Train row 5 is record 1 of data_batch_3 (salt 3); channel 2, y 4, x 7 is pixel 2*1024 + 4*32 + 7.
  EXPECT_EQ(s.train.images[5][2][4][7].item<int64_t>(), (1 * 3 + 2 * 1024 + 4 * 32 + 7 + 3) % 256);
  EXPECT_EQ(s.test.images[2][0][0][0].item<int64_t>(), 6);
  EXPECT_EQ(s.train.mean.size(), 3u);
  EXPECT_FLOAT_EQ(s.train.stddev[2], 0.2616f);
}

TEST(CifarReader, FindsBatchesInsideCifar10BatchesBinSubfolder) {
  TempDir dir;
  fs::create_directory(dir / "cifar-10-batches-bin");
  write_cifar(dir / "cifar-10-batches-bin");
  EXPECT_EQ(cifar10_load(dir.path()).train.size(), 10);
}

TEST(CifarReader, RejectsSizeThatIsNotAMultipleOf3073) {
  TempDir dir;
  write_cifar(dir.path());
  write_file(dir / "data_batch_4.bin", slice(cifar_records(2, 0), 0, 3073 + 100));
  const std::string msg = input_error_of([&] { cifar10_load(dir.path()); });
  EXPECT_CONTAINS(msg, dir / "data_batch_4.bin: byte 3073: expected a size that is a multiple of 3073");
  EXPECT_CONTAINS(msg, "found 3173 bytes: 1 records and 100 bytes left over");
  EXPECT_CONTAINS(msg, "re-download");
}

TEST(CifarReader, RejectsLabelOutOfRangeWithByteOffset) {
  TempDir dir;
  write_cifar(dir.path());
  Bytes test = cifar_records(3, 0);
  test[2 * 3073] = 10;
  write_file(dir / "test_batch.bin", test);
  EXPECT_CONTAINS(input_error_of([&] { cifar10_load(dir.path()); }),
                  dir / "test_batch.bin: byte 6146: label 10 of record 2 is not < 10 classes");
}

TEST(CifarReader, RejectsMissingBatchEmptyFileAndMissingDirectory) {
  TempDir dir;
  write_cifar(dir.path());
  fs::remove(dir / "data_batch_3.bin");
  EXPECT_CONTAINS(input_error_of([&] { cifar10_load(dir.path()); }), dir / "data_batch_3.bin: cannot open");
  write_file(dir / "data_batch_3.bin", {});
  EXPECT_CONTAINS(input_error_of([&] { cifar10_load(dir.path()); }), dir / "data_batch_3.bin: byte 0: expected records");
  EXPECT_CONTAINS(input_error_of([] { cifar10_load("/nonexistent/cifar"); }), "/nonexistent/cifar: CIFAR-10 directory not found");
  TempDir empty;
  EXPECT_CONTAINS(input_error_of([&] { cifar10_load(empty.path()); }), "cifar-10-binary.tar.gz");
}

// ---------------------------------------------------------------------------------------- synthetic

TEST(SyntheticData, SameSeedGivesSameBytesAndDifferentSeedDifferentBytes) {
  const Dataset a = synthetic_make(64, 3, 8, 8, 10, 42);
  const Dataset b = synthetic_make(64, 3, 8, 8, 10, 42);
  const Dataset c = synthetic_make(64, 3, 8, 8, 10, 43);
  EXPECT_TRUE(a.images.equal(b.images));
  EXPECT_TRUE(a.labels.equal(b.labels));
  EXPECT_FALSE(a.images.equal(c.images));
  EXPECT_FALSE(a.labels.equal(c.labels));
}

TEST(SyntheticData, HasShapesLabelsAndStatisticsOfAValidDataset) {
  const Dataset d = synthetic_make(500, 1, 28, 28, 7, 1);
  EXPECT_EQ(d.images.sizes(), at::IntArrayRef({500, 1, 28, 28}));
  EXPECT_EQ(d.images.scalar_type(), at::kByte);
  EXPECT_EQ(d.num_classes, 7);
  EXPECT_GE(d.labels.min().item<int64_t>(), 0);
  EXPECT_EQ(d.labels.max().item<int64_t>(), 6);
  EXPECT_GT(d.labels.bincount().min().item<int64_t>(), 30);  // every class present, roughly balanced
  ASSERT_EQ(d.mean.size(), 1u);
  EXPECT_NEAR(d.mean[0], d.images.to(at::kDouble).mean().item<double>() / 255, 1e-5);
}

TEST(SyntheticData, ClassesAreLearnableByNearestClassMean) {
  const Dataset d = synthetic_make(1200, 3, 16, 16, 10, 7);
  const at::Tensor x = d.images.to(at::kFloat).flatten(1);
  const at::Tensor train_x = x.narrow(0, 0, 1000), test_x = x.narrow(0, 1000, 200);
  const at::Tensor train_y = d.labels.narrow(0, 0, 1000), test_y = d.labels.narrow(0, 1000, 200);
  std::vector<at::Tensor> means;
  for (int64_t k = 0; k < 10; ++k) means.push_back(train_x.index({train_y == k}).mean(0));
  const at::Tensor predicted = at::cdist(test_x, at::stack(means)).argmin(1);
  EXPECT_GT(predicted.eq(test_y).to(at::kFloat).mean().item<float>(), 0.9f);
}

// ------------------------------------------------------------------------------------------ specs

TEST(DataSource, ParsesSyntheticDefaultsShapeAndTrainCount) {
  const DatasetSplits d = data_load("synthetic");
  EXPECT_EQ(d.name, "synthetic");
  EXPECT_EQ(d.train.images.sizes(), at::IntArrayRef({2048, 3, 32, 32}));
  EXPECT_EQ(d.test.images.sizes(), at::IntArrayRef({512, 3, 32, 32}));
  EXPECT_TRUE(d.test.images.is_contiguous());
  EXPECT_EQ(d.train.num_classes, 10);
  const DatasetSplits s = data_load("synthetic:1x28x20:100");
  EXPECT_EQ(s.train.images.sizes(), at::IntArrayRef({100, 1, 28, 20}));
  EXPECT_EQ(s.test.size(), 512);
  EXPECT_EQ(s.test.mean, s.train.mean);
}

TEST(DataSource, LoadsMnistAndCifarFromTheirDirectories) {
  TempDir dir;
  write_file(dir / "train-images-idx3-ubyte", idx_images(4, 3, 3));
  write_file(dir / "train-labels-idx1-ubyte", idx_labels({1, 2, 3, 4}));
  write_file(dir / "t10k-images-idx3-ubyte", idx_images(2, 3, 3));
  write_file(dir / "t10k-labels-idx1-ubyte", idx_labels({5, 6}));
  EXPECT_EQ(data_load("mnist:" + dir.path()).name, "mnist");
  EXPECT_EQ(data_load("fashion-mnist:" + dir.path()).train.size(), 4);
  TempDir cifar;
  write_cifar(cifar.path());
  EXPECT_EQ(data_load("cifar10:" + cifar.path()).test.size(), 3);
}

TEST(DataSource, RejectsBadSpecsNamingTheSpecAndListingTheForms) {
  for (const std::string spec : {"imagenet", "", "mnist", "cifar10", "fashion-mnist:", "synthetic:", "synthetic:3x32",
                                 "synthetic:3x32x32x1", "synthetic:0x32x32", "synthetic:3xAx32", "synthetic:3x32x32:",
                                 "synthetic:3x32x32:-5", "synthetic:3x32x32:10:1", "synthetic:17x32x32",
                                 "synthetic:3x4096x4096:100000", "CIFAR10:/data"}) {
    const std::string msg = input_error_of([&] { data_load(spec); });
    EXPECT_CONTAINS(msg, "data spec '" + spec + "'");
    EXPECT_CONTAINS(msg, "allowed forms: fashion-mnist[:DIR], mnist:DIR, cifar10:DIR, synthetic[:CxHxW[:N]]");
  }
}

} // namespace
} // namespace fastloop
