// `fastloop pack DIR OUT [--shard-mb 256]`: an image folder (DIR/train/CLASS/IMAGE, DIR/val/...) as
// WebDataset tar shards OUT/train-000000.tar ... and OUT/val-000000.tar ..., for `--data shards:OUT`.
// Each sample is KEY.jpg|png|webp|bmp|... (the file's bytes, untouched) + KEY.cls (its class index as text)
// + KEY.txt / KEY.json when a caption or metadata file of the image's name sits beside it (IMAGE.txt, IMAGE.json),
// classes numbered as torchvision's ImageFolder numbers them (OUT/classes.txt lists them in order). The
// train images are shuffled once (seeded) before packing, since a shard read front to back through a
// bounded shuffle buffer must already mix the classes; val keeps ImageFolder's order. OUT/shards.idx lists
// each shard's sample count (what s3:// and http(s):// sources read instead of the shards themselves);
// `fastloop pack --index-only SHARDDIR` writes it for shards made elsewhere. `fastloop pack parquet:TRAIN[::VAL]
// OUT` packs Parquet files in the Hugging Face Hub's layout the same way, through the Python package
// (python/fastloop/_pack_parquet.py, run with $FASTLOOP_PYTHON: pyarrow reads Parquet, the program links no Arrow).
#include "commands.h"
#include "pack_csv.h"

#include "fastloop/core/errors.h"
#include "fastloop/core/python_path.h"
#include "fastloop/core/shell.h"
#include "fastloop/data/sources/imagefolder.h"
#include "fastloop/data/sources/shard_index_file.h"
#include "fastloop/data/sources/shards.h"
#include "fastloop/data/sources/tar.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <numeric>
#include <random>

#include <sys/wait.h>

namespace fastloop {

namespace {

struct PackFlags {
  std::string dir;
  std::string out;
  int64_t shard_mb = 256;
  uint64_t seed = 0;
  bool index_only = false;
};

constexpr int64_t kMiB = 1 << 20;
constexpr int64_t kBlock = 512;  // bytes per tar block
// Bytes a sample with an image of `size` bytes adds to a shard: two headers, the image padded to whole
// blocks and the .cls block; kEndBlocks close the archive.
int64_t sample_bytes(size_t size) { return 3 * kBlock + (static_cast<int64_t>(size) + kBlock - 1) / kBlock * kBlock; }
constexpr int64_t kEndBlocks = 2 * kBlock;

// The member extension for an image file: its own, lower-cased (the listing took only image extensions).
std::string image_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!ext.empty() && shard_image_extension(ext.substr(1))) return ext.substr(1);
  throw InputError(path + ": not an image extension of torchvision's ImageFolder; rename or remove it before packing");
}

std::string shard_path(const std::string& out, const std::string& split, int64_t shard) {
  char name[32];
  std::snprintf(name, sizeof(name), "%s-%06lld.tar", split.c_str(), static_cast<long long>(shard));
  return out + "/" + name;
}

// Packs `images` in `order` into OUT/SPLIT-NNNNNN.tar shards of at most `shard_bytes` (a larger image
// gets a shard of its own); returns the number of shards.
int64_t pack_split(const ImageFolder& images, const std::vector<int64_t>& order, const std::string& out,
                   const std::string& split, int64_t shard_bytes) {
  std::unique_ptr<TarWriter> shard;
  int64_t shards = 0;
  std::string scratch;
  for (size_t k = 0; k < order.size(); ++k) {
    const int64_t i = order[k];
    const std::string_view bytes = images.bytes(i, scratch);
    const std::string ext = image_extension(images.name(i));
    if (shard && shard->bytes() + sample_bytes(bytes.size()) + kEndBlocks > shard_bytes) {
      shard->close();
      shard.reset();
    }
    if (!shard) {
      shard = std::make_unique<TarWriter>(shard_path(out, split, shards++));
      std::printf("%s\n", shard->path().c_str());
      std::fflush(stdout);
    }
    char key[32];
    std::snprintf(key, sizeof(key), "%08zu", k);
    shard->add(std::string(key) + "." + ext, bytes);
    shard->add(std::string(key) + ".cls", std::to_string(images.label(i)));
    for (const char* sidecar : {"txt", "json"}) {  // a caption or metadata file beside the image: kept
      const std::filesystem::path path = std::filesystem::path(images.name(i)).replace_extension(sidecar);
      std::error_code ec;
      if (!std::filesystem::is_regular_file(path, ec)) continue;
      std::ifstream file(path, std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
      if (!file.good() && !file.eof()) throw InputError(path.string() + ": cannot be read");
      shard->add(std::string(key) + "." + sidecar, text);
    }
  }
  if (shard) shard->close();
  return shards;
}

void refuse_existing_shards(const std::string& out) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(out, ec)) {
    const std::string name = entry.path().filename().string();
    if ((name.rfind("train-", 0) == 0 || name.rfind("val-", 0) == 0) && entry.path().extension() == ".tar")
      throw InputError(out + " already holds shards (" + name + "); pack into an empty folder, or remove them first");
  }
}

// `--index-only SHARDDIR`: shards.idx for the *.tar files of SHARDDIR.
int index_run(const PackFlags& f) {
  std::error_code ec;
  if (!std::filesystem::is_directory(f.dir, ec)) throw InputError("pack --index-only: " + f.dir + " is not a folder");
  const auto entries = shard_index_write(f.dir);
  if (entries.empty()) throw InputError("pack --index-only: " + f.dir + " has no *.tar shards");
  int64_t samples = 0;
  for (const auto& e : entries) samples += e.samples;
  std::printf("indexed %zu shards, %lld samples: %s/%s (upload it beside the shards)\n", entries.size(),
              static_cast<long long>(samples), f.dir.c_str(), kShardIndexName);
  return 0;
}

// `parquet:TRAIN[::VAL] OUT`: the Python package writes the shards and classes.txt, then shards.idx here.
int parquet_run(const PackFlags& f) {
  std::error_code ec;
  std::filesystem::create_directories(f.out, ec);
  if (ec) throw InputError("pack: cannot create " + f.out + " (" + ec.message() + ")");
  refuse_existing_shards(f.out);
  const std::string python = python_interpreter();
  const std::string command = shell_quote(python) + " -m fastloop._pack_parquet " + shell_quote(f.dir) + " " +
                              shell_quote(f.out) + " --shard-mb " + std::to_string(f.shard_mb) + " --seed " +
                              std::to_string(f.seed);
  const int status = std::system(command.c_str());
  const int code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 2) return 2;  // it said what was wrong with the files
  if (code != 0)
    throw InputError("pack: " + python + " -m fastloop._pack_parquet did not run (exit " + std::to_string(code) +
                     "); Parquet is read by the Python package: set FASTLOOP_PYTHON to a Python with fastloop and "
                     "pyarrow installed (pip install pyarrow)");
  shard_index_write(f.out);  // also for captions without classes: remote shards need it
  std::error_code exists;
  if (!std::filesystem::exists(f.out + "/classes.txt", exists)) {
    std::printf("read with fastloop.Loader(\"shards:%s\", fields=(\"jpg;png;webp\", \"txt\", \"json\"))\n",
                f.out.c_str());
    return 0;
  }
  std::printf("train with --data shards:%s\n", f.out.c_str());
  return 0;
}

int pack_run(const PackFlags& f) {
  if (f.index_only) return index_run(f);
  if (f.out.empty()) throw InputError("pack: give the output folder: fastloop pack DIR OUT (or --index-only SHARDDIR)");
  if (f.dir.rfind("parquet:", 0) == 0) return parquet_run(f);
  if (f.dir.rfind("csv:", 0) == 0) {
    refuse_existing_shards(f.out);
    return pack_csv_run(f.dir, f.out, f.shard_mb * kMiB, f.seed);
  }
  std::string dir = f.dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir + "/train", ec))
    throw InputError("pack: no folder " + dir + "/train; an image folder holds train/CLASS/IMAGE (and val/CLASS/IMAGE)");
  const auto train = ImageFolder::list(dir + "/train");
  const auto val = std::filesystem::is_directory(dir + "/val", ec) ? ImageFolder::list(dir + "/val", &train->classes()) : nullptr;
  std::filesystem::create_directories(f.out, ec);
  if (ec) throw InputError("pack: cannot create " + f.out + " (" + ec.message() + ")");
  refuse_existing_shards(f.out);

  std::vector<int64_t> order(static_cast<size_t>(train->size()));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::mt19937_64 rng(f.seed);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[static_cast<size_t>(rng() % i)]);
  const int64_t train_shards = pack_split(*train, order, f.out, "train", f.shard_mb * kMiB);
  int64_t val_shards = 0;
  if (val) {
    order.resize(static_cast<size_t>(val->size()));
    std::iota(order.begin(), order.end(), int64_t{0});
    val_shards = pack_split(*val, order, f.out, "val", f.shard_mb * kMiB);
  }
  std::ofstream classes(f.out + "/classes.txt");
  for (const std::string& c : train->classes()) classes << c << "\n";
  if (!classes.good()) throw InputError("pack: cannot write " + f.out + "/classes.txt");

  shard_index_write(f.out);
  std::printf("packed %lld train images of %zu classes into %lld shards", static_cast<long long>(train->size()),
              train->classes().size(), static_cast<long long>(train_shards));
  if (val) std::printf(", %lld val images into %lld shards", static_cast<long long>(val->size()), static_cast<long long>(val_shards));
  else std::printf(" (no %s/val: no val shards)", dir.c_str());
  std::printf("\ntrain with --data shards:%s\n", f.out.c_str());
  return 0;
}

} // namespace

Subcommand pack_command(CLI::App& root) {
  auto* app = root.add_subcommand("pack", "Write an image folder or Parquet files as WebDataset tar shards (for --data shards:OUT)");
  auto flags = std::make_shared<PackFlags>();
  app->add_option("DIR", flags->dir, "image folder: DIR/train/CLASS/IMAGE (and DIR/val/CLASS/IMAGE); or "
                  "parquet:TRAIN_PATTERN[::VAL_PATTERN], Parquet files in the Hugging Face Hub's layout (read by the "
                  "Python package's pyarrow, with $FASTLOOP_PYTHON); or csv:TRAIN.csv[::VAL.csv], image paths with "
                  "optional label, caption and other columns (kept as KEY.txt and KEY.json); with --index-only the "
                  "folder of shards")->required();
  app->add_option("OUT", flags->out, "folder for train-NNNNNN.tar, val-NNNNNN.tar, classes.txt and shards.idx");
  app->add_option("--shard-mb", flags->shard_mb, "MiB per shard at most")->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  app->add_option("--seed", flags->seed, "seed of the train images' shuffle before packing")->capture_default_str();
  app->add_flag("--index-only", flags->index_only,
                "write DIR/shards.idx (each shard's sample count, which s3:// and http(s):// sources read) for the "
                "*.tar shards already in DIR, e.g. shards made by webdataset");
  return {app, [flags] { return pack_run(*flags); }};
}

} // namespace fastloop
