// IDX reader (MNIST / Fashion-MNIST), plain and gzip. Each test writes small files into its own temp
// dir; every malformed case checks that the message names the file and the byte offset.
#include "fastloop/data/sources/idx.h"
#include "data_files.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace fastloop {
namespace {

using namespace test_data;
namespace fs = std::filesystem;

TEST(IdxReader, LoadsPlainFilesWithValuesShapesAndLabels) {
  TempDir dir;
  write_file(dir / "img", idx_images(3, 4, 5));
  write_file(dir / "lbl", idx_labels({2, 0, 9}));
  const Dataset ds = idx_load(dir / "img", dir / "lbl", 10);
  ASSERT_EQ(ds.images.sizes(), at::IntArrayRef({3, 1, 4, 5}));
  EXPECT_EQ(ds.images.scalar_type(), at::kByte);
  EXPECT_TRUE(ds.images.is_contiguous());
  EXPECT_EQ(ds.images[2][0][1][3].item<int64_t>(), (2 * 7 + 1 * 5 + 3) % 256);
  EXPECT_EQ(ds.labels.scalar_type(), at::kLong);
  EXPECT_TRUE(ds.labels.equal(at::tensor(std::vector<int64_t>{2, 0, 9})));
  EXPECT_EQ(ds.num_classes, 10);
  ASSERT_EQ(ds.mean.size(), 1u);
  const double mean = ds.images.to(at::kDouble).mean().item<double>() / 255;
  EXPECT_NEAR(ds.mean[0], mean, 1e-5);
  EXPECT_NEAR(ds.stddev[0], (ds.images.to(at::kDouble) / 255).std(/*unbiased=*/false).item<double>(), 1e-5);
}

TEST(IdxReader, LoadsGzipFilesIdenticallyToPlainFiles) {
  TempDir dir;
  const Bytes images = idx_images(300, 28, 28);  // > 64 KiB: several stored blocks
  const Bytes labels = idx_labels(Bytes(300, 7));
  write_file(dir / "img", images);
  write_file(dir / "lbl", labels);
  write_file(dir / "img.gz", gzip_member(images));
  write_file(dir / "lbl.gz", gzip_member(labels));
  const Dataset plain = idx_load(dir / "img", dir / "lbl", 10);
  const Dataset gz = idx_load(dir / "img.gz", dir / "lbl.gz", 10);
  EXPECT_TRUE(plain.images.equal(gz.images));
  EXPECT_TRUE(plain.labels.equal(gz.labels));
}

TEST(IdxReader, LoadsMultiMemberGzipWhoseTrailerCountsOnlyTheLastMember) {
  TempDir dir;
  const Bytes images = idx_images(10, 6, 6);
  Bytes gz = gzip_member(slice(images, 0, 100));
  const Bytes rest = gzip_member(slice(images, 100, images.size()));
  gz.insert(gz.end(), rest.begin(), rest.end());
  write_file(dir / "img.gz", gz);
  write_file(dir / "lbl", idx_labels(Bytes(10, 1)));
  write_file(dir / "img", images);
  EXPECT_TRUE(idx_load(dir / "img.gz", dir / "lbl", 10).images.equal(idx_load(dir / "img", dir / "lbl", 10).images));
}

TEST(IdxReader, FashionMnistLoadPrefersPlainFilesAndFallsBackToGzip) {
  TempDir dir;
  write_file(dir / "train-images-idx3-ubyte", idx_images(4, 3, 3));
  write_file(dir / "train-images-idx3-ubyte.gz", gzip_member(idx_images(5, 3, 3)));  // ignored: plain exists
  write_file(dir / "train-labels-idx1-ubyte.gz", gzip_member(idx_labels({1, 2, 3, 4})));
  write_file(dir / "t10k-images-idx3-ubyte.gz", gzip_member(idx_images(2, 3, 3)));
  write_file(dir / "t10k-labels-idx1-ubyte", idx_labels({5, 6}));
  const DatasetSplits s = fashion_mnist_load(dir.path());
  EXPECT_EQ(s.name, "fashion-mnist");
  EXPECT_EQ(s.train.size(), 4);
  EXPECT_EQ(s.test.size(), 2);
  EXPECT_TRUE(s.test.labels.equal(at::tensor(std::vector<int64_t>{5, 6})));
  EXPECT_EQ(s.test.mean, s.train.mean);  // the test split is normalized with the train statistics
}

TEST(IdxReader, LoadsRealFashionMnistWithItsKnownStatistics) {
  const std::string dir = kFashionMnistDefaultDir;
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " does not exist (Fashion-MNIST is not installed on this machine)";
  const DatasetSplits s = fashion_mnist_load(dir);
  EXPECT_EQ(s.train.images.sizes(), at::IntArrayRef({60000, 1, 28, 28}));
  EXPECT_EQ(s.test.images.sizes(), at::IntArrayRef({10000, 1, 28, 28}));
  EXPECT_EQ(s.train.labels.bincount().min().item<int64_t>(), 6000);  // balanced: 6000 per class
  EXPECT_NEAR(s.train.mean[0], 0.2860, 5e-4);
  EXPECT_NEAR(s.train.stddev[0], 0.3530, 5e-4);
}

TEST(IdxReader, RejectsMissingFileNamingThePath) {
  TempDir dir;
  write_file(dir / "lbl", idx_labels({1}));
  const std::string msg = input_error_of([&] { idx_load(dir / "nope-images", dir / "lbl", 10); });
  EXPECT_CONTAINS(msg, dir / "nope-images");
  EXPECT_CONTAINS(msg, "check the path");
}

TEST(IdxReader, RejectsMissingDatasetDirectoryAndMissingFile) {
  EXPECT_CONTAINS(input_error_of([] { fashion_mnist_load("/nonexistent/fmnist"); }), "/nonexistent/fmnist: dataset directory not found");
  TempDir dir;
  const std::string msg = input_error_of([&] { fashion_mnist_load(dir.path()); });
  EXPECT_CONTAINS(msg, dir / "train-images-idx3-ubyte");
  EXPECT_CONTAINS(msg, ".gz");
}

TEST(IdxReader, RejectsWrongMagicAtByteZero) {
  TempDir dir;
  const Bytes labels = idx_labels({1, 2});
  write_file(dir / "train-labels-idx1-ubyte.gz", gzip_member(labels));
  write_file(dir / "img", idx_images(2, 2, 2));
  // The files swapped: the labels file where the images belong, and the other way round.
  std::string msg = input_error_of([&] { idx_load(dir / "train-labels-idx1-ubyte.gz", dir / "img", 10); });
  EXPECT_CONTAINS(msg, dir / "train-labels-idx1-ubyte.gz: byte 0: expected IDX magic 0x00000803 (images");
  EXPECT_CONTAINS(msg, "found 0x00000801");
  write_file(dir / "lbl.gz", gzip_member(idx_images(2, 2, 2)));
  msg = input_error_of([&] { idx_load(dir / "img", dir / "lbl.gz", 10); });
  EXPECT_CONTAINS(msg, "lbl.gz: byte 0: expected IDX magic 0x00000801 (labels");
  EXPECT_CONTAINS(msg, "found 0x00000803");
  write_file(dir / "junk", Bytes{'h', 'e', 'l', 'l', 'o', '!', '!', '!'});
  EXPECT_CONTAINS(input_error_of([&] { idx_load(dir / "junk", dir / "img", 10); }), "found 0x68656C6C (not an IDX file)");
}

TEST(IdxReader, RejectsWrongDimensionCount) {
  TempDir dir;
  Bytes images;
  put_be32(images, 0x00000802);  // uint8, 2 dimensions
  put_be32(images, 2);
  put_be32(images, 4);
  images.resize(images.size() + 8, 0);
  write_file(dir / "img", images);
  write_file(dir / "lbl", idx_labels({1, 2}));
  const std::string msg = input_error_of([&] { idx_load(dir / "img", dir / "lbl", 10); });
  EXPECT_CONTAINS(msg, dir / "img: byte 0:");
  EXPECT_CONTAINS(msg, "3 dimensions");
  EXPECT_CONTAINS(msg, "found 0x00000802 (uint8, 2 dimensions)");
}

TEST(IdxReader, RejectsTruncatedHeader) {
  TempDir dir;
  write_file(dir / "img", slice(idx_images(1, 2, 2), 0, 10));  // magic, count, half of rows
  write_file(dir / "lbl", idx_labels({1}));
  const std::string msg = input_error_of([&] { idx_load(dir / "img", dir / "lbl", 10); });
  EXPECT_CONTAINS(msg, dir / "img: byte 10: expected the 4-byte dimension size, found the end of the data");
  EXPECT_CONTAINS(msg, "re-download");
}

TEST(IdxReader, RejectsTruncatedImagesWithByteOffset) {
  TempDir dir;
  const Bytes images = slice(idx_images(5, 4, 4), 0, 16 + 3 * 16 + 5);  // 3 images and 5 pixels of 5 images
  write_file(dir / "img", images);
  write_file(dir / "img.gz", gzip_member(images));
  write_file(dir / "lbl", idx_labels(Bytes(5, 0)));
  for (const std::string name : {"img", "img.gz"}) {
    const std::string msg = input_error_of([&] { idx_load(dir / name, dir / "lbl", 10); });
    EXPECT_CONTAINS(msg, dir / name + ": byte 69: expected 80 bytes of 5 images of 4x4 pixels");
    EXPECT_CONTAINS(msg, "found the end of the data after 53");
    EXPECT_CONTAINS(msg, "truncated");
  }
}

TEST(IdxReader, RejectsTruncatedCompressedStream) {
  TempDir dir;
  const Bytes gz = gzip_member(idx_images(5, 4, 4));
  write_file(dir / "img.gz", slice(gz, 0, gz.size() - 30));  // cut inside the deflate data
  write_file(dir / "lbl", idx_labels(Bytes(5, 0)));
  const std::string msg = input_error_of([&] { idx_load(dir / "img.gz", dir / "lbl", 10); });
  EXPECT_CONTAINS(msg, dir / "img.gz: byte ");
  EXPECT_CONTAINS(msg, "re-download");
}

TEST(IdxReader, RejectsCorruptCompressedData) {
  TempDir dir;
  Bytes gz = gzip_member(idx_images(5, 4, 4));
  gz[gz.size() - 9] ^= 0xFF;  // the last data byte: the data no longer matches its CRC-32
  write_file(dir / "img.gz", gz);
  write_file(dir / "lbl", idx_labels(Bytes(5, 0)));
  const std::string msg = input_error_of([&] { idx_load(dir / "img.gz", dir / "lbl", 10); });
  EXPECT_CONTAINS(msg, dir / "img.gz: byte ");
  EXPECT_CONTAINS(msg, "re-download");
}

TEST(IdxReader, RejectsTrailingGarbageWithByteOffset) {
  TempDir dir;
  Bytes images = idx_images(2, 3, 3);
  images.insert(images.end(), {1, 2, 3, 4, 5});
  write_file(dir / "img", images);
  write_file(dir / "img.gz", gzip_member(images));
  write_file(dir / "lbl", idx_labels({0, 1}));
  for (const std::string name : {"img", "img.gz"}) {
    const std::string msg = input_error_of([&] { idx_load(dir / name, dir / "lbl", 10); });
    EXPECT_CONTAINS(msg, dir / name + ": byte 34: expected the end of the file after 2 images of 3x3 pixels, found 5 more bytes");
  }
  Bytes labels = idx_labels({0, 1});
  labels.push_back(9);
  write_file(dir / "lbl", labels);
  write_file(dir / "img", idx_images(2, 3, 3));
  EXPECT_CONTAINS(input_error_of([&] { idx_load(dir / "img", dir / "lbl", 10); }),
                  dir / "lbl: byte 10: expected the end of the file after 2 labels, found 1 more bytes");
}

TEST(IdxReader, RejectsHugeHeaderCountWithoutAllocatingIt) {
  TempDir dir;
  Bytes images = idx_images(2, 28, 28);
  images[4] = images[5] = images[6] = images[7] = 0xFF;  // 4294967295 images: 3.4 TB claimed
  write_file(dir / "img", images);
  write_file(dir / "img.gz", gzip_member(images));
  write_file(dir / "lbl", idx_labels({0, 1}));
  for (const std::string name : {"img", "img.gz"}) {
    const std::string msg = input_error_of([&] { idx_load(dir / name, dir / "lbl", 10); });
    EXPECT_CONTAINS(msg, dir / name + ": byte 1584: expected 3367254359280 bytes of 4294967295 images");
  }
  images = idx_images(2, 28, 28);
  images[7] = 200;  // 200 images: within deflate's ratio for the .gz, but its trailer disagrees
  write_file(dir / "img.gz", gzip_member(images));
  EXPECT_CONTAINS(input_error_of([&] { idx_load(dir / "img.gz", dir / "lbl", 10); }), "img.gz: byte 1584: expected 156800 bytes");
}

TEST(IdxReader, RejectsZeroSizedDimension) {
  TempDir dir;
  write_file(dir / "img", idx_images(2, 0, 3));
  write_file(dir / "lbl", idx_labels({0, 1}));
  EXPECT_CONTAINS(input_error_of([&] { idx_load(dir / "img", dir / "lbl", 10); }), dir / "img: byte 8: expected dimension 1");
}

TEST(IdxReader, RejectsImageLabelCountMismatch) {
  TempDir dir;
  write_file(dir / "img", idx_images(3, 2, 2));
  write_file(dir / "lbl", idx_labels({0, 1}));
  const std::string msg = input_error_of([&] { idx_load(dir / "img", dir / "lbl", 10); });
  EXPECT_CONTAINS(msg, dir / "lbl: byte 4: expected 3 labels (the count in " + dir / "img" + "), found 2");
  EXPECT_CONTAINS(msg, "re-download both");
}

TEST(IdxReader, RejectsLabelOutOfRangeWithByteOffset) {
  TempDir dir;
  write_file(dir / "img", idx_images(5, 2, 2));
  write_file(dir / "lbl.gz", gzip_member(idx_labels({0, 1, 2, 12, 3})));
  const std::string msg = input_error_of([&] { idx_load(dir / "img", dir / "lbl.gz", 10); });
  EXPECT_CONTAINS(msg, dir / "lbl.gz: byte 11: label 12 of image 3 is not < 10 classes");
}

// -------------------------------------------------------------------------------------------- CIFAR

} // namespace
} // namespace fastloop
