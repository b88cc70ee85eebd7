// CIFAR-10 binary reader. File sizes are checked before anything is allocated; records are read in
// blocks and their pixels copied once into the images tensor's storage, labels into an int64 tensor.
#include "fastloop/data/sources/cifar.h"

#include "fastloop/core/errors.h"

#include <ATen/ATen.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace fastloop {
namespace {

constexpr int64_t kClasses = 10;
constexpr int64_t kPixels = 3 * 32 * 32;          // bytes per image, CHW
constexpr int64_t kRecord = 1 + kPixels;          // bytes per record: label, then pixels
constexpr int64_t kRecordsPerRead = 1024;         // records per fread (about 3 MiB)

bool is_file(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The folder holding the batches: dir itself or its cifar-10-batches-bin subfolder.
std::string find_batches_dir(const std::string& dir) {
  if (is_file(dir + "/data_batch_1.bin")) return dir;
  if (is_file(dir + "/cifar-10-batches-bin/data_batch_1.bin")) return dir + "/cifar-10-batches-bin";
  struct stat st{};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw InputError(dir + ": CIFAR-10 directory not found; check the path (cifar10:DIR)");
  }
  throw InputError(dir + "/data_batch_1.bin: not found (nor in " + dir +
                   "/cifar-10-batches-bin); expected data_batch_1..5.bin and test_batch.bin of the binary version; "
                   "download cifar-10-binary.tar.gz from https://www.cs.toronto.edu/~kriz/cifar.html and extract it there");
}

// Checks a file's size and returns its record count.
int64_t count_records(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    throw InputError(path + ": cannot open (" + std::strerror(errno) +
                     "); expected all of data_batch_1..5.bin and test_batch.bin; check the path or re-extract the archive");
  }
  const int64_t size = st.st_size;
  if (size == 0) input_fail_at(path, 0, "expected records of 3073 bytes (1 label + 3072 pixels), found an empty file; re-download");
  if (size % kRecord != 0) {
    input_fail_at(path, size - size % kRecord,
            "expected a size that is a multiple of 3073 bytes (1 label + 3072 pixels per record), found " +
                std::to_string(size) + " bytes: " + std::to_string(size / kRecord) + " records and " +
                std::to_string(size % kRecord) + " bytes left over; the file is truncated or not the binary "
                "version of CIFAR-10, re-download cifar-10-binary.tar.gz");
  }
  return size / kRecord;
}

// Reads the records of one file into images/labels (pointers to the first row this file fills).
void read_records(const std::string& path, int64_t count, uint8_t* images, int64_t* labels) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw InputError(path + ": cannot open (" + std::strerror(errno) + "); check the path and permissions");
  std::vector<uint8_t> block(static_cast<size_t>(std::min(kRecordsPerRead, count) * kRecord));
  for (int64_t done = 0; done < count;) {
    const int64_t want = std::min(kRecordsPerRead, count - done);
    const size_t got = std::fread(block.data(), 1, static_cast<size_t>(want * kRecord), f.get());
    if (static_cast<int64_t>(got) != want * kRecord) {
      // The size was checked, so the file changed underneath or the read failed.
      input_fail_at(path, done * kRecord + static_cast<int64_t>(got),
              "expected " + std::to_string(count * kRecord) + " bytes, found the end of the data (" +
                  std::strerror(errno) + "); was the file being written? re-download it");
    }
    for (int64_t i = 0; i < want; ++i) {
      const uint8_t* rec = block.data() + i * kRecord;
      const int64_t row = done + i;
      if (rec[0] >= kClasses) {
        input_fail_at(path, row * kRecord, "label " + std::to_string(rec[0]) + " of record " + std::to_string(row) +
                                         " is not < 10 classes; the file is corrupt or not CIFAR-10 "
                                         "(CIFAR-100's records are 3074 bytes), re-download it");
      }
      labels[row] = rec[0];
      std::memcpy(images + row * kPixels, rec + 1, kPixels);
    }
    done += want;
  }
}

Dataset load_split(const std::vector<std::string>& paths) {
  std::vector<int64_t> counts;
  int64_t total = 0;
  for (const auto& p : paths) total += counts.emplace_back(count_records(p));
  Dataset ds;
  ds.num_classes = kClasses;
  ds.images = at::empty({total, 3, 32, 32}, at::kByte);
  ds.labels = at::empty({total}, at::kLong);
  ds.mean = {0.4914f, 0.4822f, 0.4465f};
  ds.stddev = {0.2470f, 0.2435f, 0.2616f};
  int64_t row = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    read_records(paths[i], counts[i], ds.images.data_ptr<uint8_t>() + row * kPixels, ds.labels.data_ptr<int64_t>() + row);
    row += counts[i];
  }
  return ds;
}

} // namespace

DatasetSplits cifar10_load(const std::string& dir) {
  const std::string base = find_batches_dir(dir);
  std::vector<std::string> train_paths;
  for (int i = 1; i <= 5; ++i) train_paths.push_back(base + "/data_batch_" + std::to_string(i) + ".bin");
  DatasetSplits splits;
  splits.name = "cifar10";
  splits.train = load_split(train_paths);
  splits.test = load_split({base + "/test_batch.bin"});
  return splits;
}

} // namespace fastloop
