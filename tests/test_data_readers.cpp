// Dataset readers: IDX (plain and gzip), CIFAR-10 binary, synthetic data and data specs. Each test writes
// small files into its own temp dir; every malformed case checks that the message names the file and offset.
#include "fastloop/core/errors.h"
#include "fastloop/data/cifar.h"
#include "fastloop/data/idx.h"
#include "fastloop/data/source.h"
#include "fastloop/data/synthetic.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace fastloop {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

// A fresh directory, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "fastloop_data_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void put_be32(Bytes& b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
}
void put_le(Bytes& b, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// Pixel i of image k is (k * 7 + i) mod 256, so every position is checkable.
Bytes idx_images(uint32_t n, uint32_t rows, uint32_t cols, uint32_t magic = 0x00000803) {
  Bytes b;
  put_be32(b, magic);
  put_be32(b, n);
  put_be32(b, rows);
  put_be32(b, cols);
  for (uint32_t k = 0; k < n; ++k)
    for (uint32_t i = 0; i < rows * cols; ++i) b.push_back(static_cast<uint8_t>(k * 7 + i));
  return b;
}

Bytes idx_labels(const Bytes& labels) {
  Bytes b;
  put_be32(b, 0x00000801);
  put_be32(b, static_cast<uint32_t>(labels.size()));
  b.insert(b.end(), labels.begin(), labels.end());
  return b;
}

uint32_t crc32_of(const Bytes& data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t byte : data) {
    crc ^= byte;
    for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
  }
  return ~crc;
}

// One gzip member with stored (uncompressed) deflate blocks: valid gzip without linking zlib here.
Bytes gzip_member(const Bytes& data) {
  Bytes out = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
  size_t pos = 0;
  do {
    const size_t len = std::min<size_t>(65535, data.size() - pos);
    out.push_back(pos + len == data.size() ? 1 : 0);  // BFINAL, BTYPE = stored
    put_le(out, static_cast<uint32_t>(len), 2);
    put_le(out, static_cast<uint32_t>(~len & 0xFFFF), 2);
    out.insert(out.end(), data.begin() + pos, data.begin() + pos + len);
    pos += len;
  } while (pos < data.size());
  put_le(out, crc32_of(data), 4);
  put_le(out, static_cast<uint32_t>(data.size()), 4);
  return out;
}

void write_file(const std::string& path, const Bytes& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  ASSERT_TRUE(f.good()) << path;
}

Bytes slice(const Bytes& b, size_t from, size_t to) { return Bytes(b.begin() + from, b.begin() + to); }

// The InputError message f throws, or a test failure.
std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected InputError, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected InputError, nothing was thrown";
  return "";
}

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "missing '" << (part) << "' in: " << (text)

// ---------------------------------------------------------------------------------------------- IDX

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

TEST(IdxReader, LoadsRealFashionMnistInWellUnderASecond) {
  const std::string dir = kFashionMnistDefaultDir;
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " does not exist (Fashion-MNIST is not installed on this machine)";
  const auto start = std::chrono::steady_clock::now();
  const DatasetSplits s = fashion_mnist_load(dir);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[          ] Fashion-MNIST train+test loaded in %.3f s\n", seconds);
  RecordProperty("load_seconds", std::to_string(seconds));
  EXPECT_EQ(s.train.images.sizes(), at::IntArrayRef({60000, 1, 28, 28}));
  EXPECT_EQ(s.test.images.sizes(), at::IntArrayRef({10000, 1, 28, 28}));
  EXPECT_EQ(s.train.labels.bincount().min().item<int64_t>(), 6000);  // balanced: 6000 per class
  EXPECT_NEAR(s.train.mean[0], 0.2860, 5e-4);
  EXPECT_NEAR(s.train.stddev[0], 0.3530, 5e-4);
  EXPECT_LT(seconds, 3.0);  // generous for a shared CI machine; ~0.2 s on one idle core
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
