// IDX reader (MNIST, Fashion-MNIST). zlib's gz* functions read plain files transparently, so one path
// serves both; the payload is read in one call into the tensor's storage. Header counts are trusted
// only as far as the file could hold them (its size, or for gzip its trailer and deflate's ratio limit).
#include "fastloop/data/sources/idx.h"

#include "fastloop/core/errors.h"

#include <ATen/ATen.h>
#include <zlib.h>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>

namespace fastloop {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803;  // uint8, 3 dimensions
constexpr uint32_t kLabelsMagic = 0x00000801;  // uint8, 1 dimension
constexpr int64_t kMaxDeflateRatio = 1032;     // deflate never expands more than this per input byte
constexpr int64_t kGzipChunk = int64_t{1} << 30;  // bytes per gzread call (its length is an unsigned int)

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08X", v);
  return buf;
}

// "uint8, 3 dimensions" for an IDX magic number; IDX stores the element type in byte 2, the rank in byte 3.
std::string describe_magic(uint32_t magic) {
  if ((magic & 0xFFFF0000u) != 0) return "not an IDX file";
  const uint32_t type = (magic >> 8) & 0xFF, ndim = magic & 0xFF;
  const char* name = type == 0x08 ? "uint8" : type == 0x09 ? "int8" : type == 0x0B ? "int16" : type == 0x0C ? "int32"
                   : type == 0x0D ? "float32" : type == 0x0E ? "float64" : "unknown type";
  return std::string(name) + ", " + std::to_string(ndim) + (ndim == 1 ? " dimension" : " dimensions");
}

bool file_exists(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A plain or gzip file read front to back, counting uncompressed bytes.
class ByteReader {
 public:
  explicit ByteReader(std::string path) : path_(std::move(path)) {
    struct stat st{};
    if (::stat(path_.c_str(), &st) != 0) {
      throw InputError(path_ + ": cannot open (" + std::strerror(errno) +
                       "); check the path, or download the dataset into that directory");
    }
    if (!S_ISREG(st.st_mode)) throw InputError(path_ + ": is not a regular file; check the path");
    file_size_ = st.st_size;
    read_gzip_trailer();
    open();
  }
  ~ByteReader() { close(); }
  ByteReader(const ByteReader&) = delete;
  ByteReader& operator=(const ByteReader&) = delete;

  const std::string& path() const { return path_; }
  int64_t offset() const { return offset_; }
  bool gzip() const { return gzip_; }
  int64_t file_size() const { return file_size_; }

  // Reads up to n bytes into dst; fewer only at the end of the data.
  int64_t read(void* dst, int64_t n) {
    auto* out = static_cast<uint8_t*>(dst);
    int64_t got = 0;
    while (got < n) {
      const int r = gzread(file_, out + got, static_cast<unsigned>(std::min(n - got, kGzipChunk)));
      if (r < 0) input_fail_at(path_, offset_ + got, "cannot decompress (" + zlib_error() + "); re-download the file");
      if (r == 0) break;
      got += r;
    }
    offset_ += got;
    return got;
  }

  // Reads and discards the rest; returns how many bytes there were.
  int64_t skip_rest() {
    std::vector<uint8_t> scratch(static_cast<size_t>(std::clamp<int64_t>(max_size(), 4096, 1 << 20)));  // bytes
    int64_t total = 0;
    for (int64_t got; (got = read(scratch.data(), static_cast<int64_t>(scratch.size()))) > 0;) total += got;
    return total;
  }

  void rewind() {
    close();
    open();
  }

  // How many uncompressed bytes the file can hold at most: exact for plain files, deflate's limit for gzip.
  int64_t max_size() const { return gzip_ ? file_size_ * kMaxDeflateRatio : file_size_; }

  // Whether total is consistent with the gzip trailer (uncompressed size mod 2^32 of the last member).
  bool trailer_agrees(int64_t total) const {
    return !gzip_ || (has_isize_ && isize_ == static_cast<uint32_t>(total));
  }

  // zlib's note on why the data ended, or "" when it ended cleanly.
  std::string end_note() {
    int err = Z_OK;
    const char* msg = gzerror(file_, &err);
    return err == Z_OK ? "" : std::string(" (") + msg + ")";
  }

 private:
  void open() {
    file_ = gzopen(path_.c_str(), "rb");
    if (!file_) throw InputError(path_ + ": cannot open (" + std::strerror(errno) + "); check the path and permissions");
    // bytes; the default 8 KiB makes inflate several times slower, and a small file needs no more than its
    // size (zlib allocates this for input and twice it for output on every open)
    gzbuffer(file_, static_cast<unsigned>(std::clamp<int64_t>(file_size_, 8 << 10, 1 << 20)));
    offset_ = 0;
  }
  void close() {
    if (file_) gzclose(file_);
    file_ = nullptr;
  }
  void read_gzip_trailer() {
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path_.c_str(), "rb"), &std::fclose);
    if (!f) throw InputError(path_ + ": cannot open (" + std::strerror(errno) + "); check the path and permissions");
    std::array<uint8_t, 4> b{};
    gzip_ = std::fread(b.data(), 1, 2, f.get()) == 2 && b[0] == 0x1f && b[1] == 0x8b;
    if (gzip_ && file_size_ >= 18 && std::fseek(f.get(), -4, SEEK_END) == 0 &&
        std::fread(b.data(), 1, 4, f.get()) == 4) {
      isize_ = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t{b[3]} << 24);
      has_isize_ = true;
    }
  }
  std::string zlib_error() {
    int err = Z_OK;
    return gzerror(file_, &err);
  }

  std::string path_;
  gzFile file_ = nullptr;
  int64_t offset_ = 0;  // uncompressed bytes read so far
  int64_t file_size_ = 0;  // bytes on disk
  bool gzip_ = false;
  bool has_isize_ = false;
  uint32_t isize_ = 0;
};

uint32_t read_be32(ByteReader& r, const char* what) {
  const int64_t at = r.offset();
  uint8_t b[4];
  const int64_t got = r.read(b, 4);
  if (got != 4) {
    input_fail_at(r.path(), at + got, std::string("expected the 4-byte ") + what + ", found the end of the data" +
                                    r.end_note() + "; the file is truncated, re-download it");
  }
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

// Reads the magic number and the dimensions; checks both against what the caller expects.
std::vector<int64_t> read_header(ByteReader& r, uint32_t magic, const char* kind, const char* dim_names) {
  const uint32_t found = read_be32(r, "IDX magic number");
  if (found != magic) {
    input_fail_at(r.path(), 0, "expected IDX magic " + hex32(magic) + " (" + kind + ": " + describe_magic(magic) +
                             "), found " + hex32(found) + " (" + describe_magic(found) + "); check that this is the " +
                             kind + " file and not another one, or re-download it");
  }
  const int64_t ndim = magic & 0xFF;
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < ndim; ++i) {
    const int64_t at = r.offset();
    const uint32_t d = read_be32(r, "dimension size");
    if (d == 0) input_fail_at(r.path(), at, "expected dimension " + std::to_string(i) + " of " + dim_names + " > 0, found 0; re-download the file");
    dims.push_back(d);
  }
  return dims;
}

// Checks that exactly `payload` bytes follow the header before anything is allocated for them. For a
// gzip file whose trailer disagrees (truncated, trailing data, or several members) it decompresses once
// to count, never holding more than a scratch buffer.
void check_payload_size(ByteReader& r, int64_t payload, const std::string& what) {
  const int64_t header = r.offset();
  const int64_t total = header + payload;
  int64_t actual = -1;  // uncompressed size, when known before reading
  if (!r.gzip()) {
    actual = r.file_size();
  } else if (total > r.max_size() || !r.trailer_agrees(total)) {
    actual = header + r.skip_rest();
    r.rewind();
    std::vector<uint8_t> head(static_cast<size_t>(header));
    r.read(head.data(), header);
  }
  if (actual >= 0 && actual < total) {
    input_fail_at(r.path(), actual, "expected " + std::to_string(payload) + " bytes of " + what + " after the " +
                                  std::to_string(header) + "-byte header, found the end of the data after " +
                                  std::to_string(actual - header) + "; the file is truncated, re-download it");
  }
  if (actual > total) {
    input_fail_at(r.path(), total, "expected the end of the file after " + what + ", found " +
                                 std::to_string(actual - total) +
                                 " more bytes; the header's count does not match the data, re-download the file");
  }
}

// Reads exactly n bytes into dst (size checked beforehand; this catches what the checks could not see).
void read_payload(ByteReader& r, uint8_t* dst, int64_t n, const std::string& what) {
  const int64_t header = r.offset();
  const int64_t got = r.read(dst, n);
  if (got != n) {
    input_fail_at(r.path(), header + got, "expected " + std::to_string(n) + " bytes of " + what + " after the " +
                                        std::to_string(header) + "-byte header, found the end of the data after " +
                                        std::to_string(got) + r.end_note() + "; the file is truncated, re-download it");
  }
  uint8_t extra[4096];
  if (const int64_t more = r.read(extra, sizeof(extra)); more > 0) {
    const int64_t rest = more + r.skip_rest();
    input_fail_at(r.path(), header + n, "expected the end of the file after " + what + ", found " + std::to_string(rest) +
                                      " more bytes; the header's count does not match the data, re-download the file");
  }
}

std::string pick_file(const std::string& dir, const std::string& name) {
  const std::string plain = dir + "/" + name;
  if (file_exists(plain)) return plain;
  if (file_exists(plain + ".gz")) return plain + ".gz";
  struct stat st{};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw InputError(dir + ": dataset directory not found; check the path, or download the dataset there");
  }
  throw InputError(plain + ": not found (nor " + name + ".gz); expected the four IDX files of MNIST/Fashion-MNIST in " +
                   dir + "; check the path or re-download");
}

} // namespace

Dataset idx_load(const std::string& images_path, const std::string& labels_path, int64_t num_classes) {
  TORCH_CHECK(num_classes > 0 && num_classes <= 256, "idx_load: num_classes must be in [1, 256], got ", num_classes);
  Dataset ds;
  ds.num_classes = num_classes;
  {
    ByteReader r(images_path);
    const auto dims = read_header(r, kImagesMagic, "images", "(count, rows, cols)");
    int64_t plane = 0, payload = 0;  // bytes; an absurd header count saturates and is then caught as truncation
    if (__builtin_mul_overflow(dims[1], dims[2], &plane) || __builtin_mul_overflow(dims[0], plane, &payload)) {
      payload = INT64_MAX / 2;
    }
    const std::string what = std::to_string(dims[0]) + " images of " + std::to_string(dims[1]) + "x" +
                             std::to_string(dims[2]) + " pixels";
    check_payload_size(r, payload, what);
    ds.images = at::empty({dims[0], 1, dims[1], dims[2]}, at::kByte);
    read_payload(r, ds.images.data_ptr<uint8_t>(), payload, what);
  }
  {
    ByteReader r(labels_path);
    const int64_t n = read_header(r, kLabelsMagic, "labels", "(count)")[0];
    if (n != ds.images.size(0)) {
      input_fail_at(labels_path, 4, "expected " + std::to_string(ds.images.size(0)) + " labels (the count in " + images_path +
                                  "), found " + std::to_string(n) + "; the two files do not belong together, re-download both");
    }
    const std::string what = std::to_string(n) + " labels";
    check_payload_size(r, n, what);
    std::vector<uint8_t> raw(static_cast<size_t>(n));
    const int64_t header = r.offset();
    read_payload(r, raw.data(), n, what);
    ds.labels = at::empty({n}, at::kLong);
    int64_t* out = ds.labels.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      if (raw[i] >= num_classes) {
        input_fail_at(labels_path, header + i, "label " + std::to_string(raw[i]) + " of image " + std::to_string(i) +
                                             " is not < " + std::to_string(num_classes) +
                                             " classes; the file is corrupt or the class count is wrong");
      }
      out[i] = raw[i];
    }
  }
  channel_stats(ds.images, ds.mean, ds.stddev);
  return ds;
}

DatasetSplits fashion_mnist_load(const std::string& dir) {
  DatasetSplits splits;
  splits.name = "fashion-mnist";
  // All four paths first, in order, so a missing file is reported before any work and always the same one.
  const std::string train_images = pick_file(dir, "train-images-idx3-ubyte");
  const std::string train_labels = pick_file(dir, "train-labels-idx1-ubyte");
  const std::string test_images = pick_file(dir, "t10k-images-idx3-ubyte");
  const std::string test_labels = pick_file(dir, "t10k-labels-idx1-ubyte");
  splits.train = idx_load(train_images, train_labels, 10);
  splits.test = idx_load(test_images, test_labels, 10);
  if (splits.test.height() != splits.train.height() || splits.test.width() != splits.train.width()) {
    throw InputError(dir + ": test images are " + std::to_string(splits.test.height()) + "x" +
                     std::to_string(splits.test.width()) + " but train images " + std::to_string(splits.train.height()) +
                     "x" + std::to_string(splits.train.width()) + "; the files come from different datasets, re-download");
  }
  splits.test.mean = splits.train.mean;  // normalize with the statistics the model was trained on
  splits.test.stddev = splits.train.stddev;
  return splits;
}

void channel_stats(const at::Tensor& images, std::vector<float>& mean, std::vector<float>& stddev) {
  TORCH_CHECK(images.dim() == 4 && images.scalar_type() == at::kByte && images.is_contiguous(),
              "channel_stats: expected contiguous uint8 [N, C, H, W], got ", images.sizes(), " ", images.scalar_type());
  const int64_t n = images.size(0), c = images.size(1), plane = images.size(2) * images.size(3);
  const uint8_t* p = images.data_ptr<uint8_t>();
  // A histogram per channel: exact integer counts, one pass over the bytes.
  std::vector<std::array<int64_t, 256>> hist(static_cast<size_t>(c));
  for (auto& h : hist) h.fill(0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch, p += plane) {
      auto& h = hist[ch];
      for (int64_t k = 0; k < plane; ++k) ++h[p[k]];
    }
  }
  mean.assign(static_cast<size_t>(c), 0.f);
  stddev.assign(static_cast<size_t>(c), 0.f);
  const double count = static_cast<double>(n * plane);
  for (int64_t ch = 0; ch < c && count > 0; ++ch) {
    double s = 0, s2 = 0;
    for (int v = 0; v < 256; ++v) {
      const double x = v / 255.0;
      s += hist[ch][v] * x;
      s2 += hist[ch][v] * x * x;
    }
    const double m = s / count;
    mean[ch] = static_cast<float>(m);
    // Floor at one grey level so a constant channel normalizes to 0 instead of dividing by zero.
    stddev[ch] = static_cast<float>(std::max(1.0 / 255.0, std::sqrt(std::max(0.0, s2 / count - m * m))));
  }
}

} // namespace fastloop
