// fastloop predict from the models and inputs it takes beside a checkpoint and a folder of JPEGs and
// PNGs: bare safetensors weights with flags, a TorchScript export, WebDataset shards, and WebP, BMP,
// PPM/PGM and TIFF files; each labels an image as predicting the checkpoint on the same pixels does.
#include "fastloop/data/sources/shards.h"

#include "cat_dog_folder.h"
#include "data_files.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace fastloop::predict_sources {
namespace {

namespace fs = std::filesystem;

const std::string kGolden = std::string(FASTLOOP_TEST_DIR) + "/golden/images/";

struct Row {
  std::vector<int64_t> index;  // top-2 of 2 classes: the whole softmax, most probable first
  std::vector<std::string> label;
  std::vector<double> prob;
};
using Rows = std::map<std::string, Row>;  // by the row's path

std::string file_read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return {std::istreambuf_iterator<char>(in), {}};
}

// `fastloop predict --topk 2 ARGS` into OUT.jsonl: its rows by path (the exit code and output checked).
Rows predict_rows(const std::string& args, const std::string& out) {
  const auto run = test::cli_run("predict --topk 2 --threads 1 --out " + out + " " + args);
  EXPECT_EQ(run.code, 0) << run.output;
  Rows rows;
  std::ifstream in(out);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    Row row{j.at("index").get<std::vector<int64_t>>(), j.at("label").get<std::vector<std::string>>(),
            j.at("prob").get<std::vector<double>>()};
    EXPECT_TRUE(rows.emplace(j.at("path").get<std::string>(), row).second) << "two rows for " << j.at("path");
  }
  return rows;
}

void expect_same_prediction(const Row& got, const Row& want, double tolerance, const std::string& where) {
  EXPECT_EQ(got.index, want.index) << where;
  ASSERT_EQ(got.prob.size(), want.prob.size()) << where;
  for (size_t k = 0; k < want.prob.size(); ++k) EXPECT_NEAR(got.prob[k], want.prob[k], tolerance) << where;
}

// Each path of `want` has its row in `got` (and no other), with the same top-1 and probabilities.
void expect_same_rows(const Rows& got, const Rows& want, double tolerance) {
  EXPECT_EQ(got.size(), want.size());
  for (const auto& [path, row] : want) {
    const auto it = got.find(path);
    if (it == got.end()) ADD_FAILURE() << "no row for " << path;
    else expect_same_prediction(it->second, row, tolerance, path);
  }
}

// A comparison of predictions is only worth something when the images get different ones.
void expect_distinct_probabilities(const Rows& rows) {
  std::set<double> first;
  for (const auto& [path, row] : rows) first.insert(row.prob.at(0));
  EXPECT_GT(first.size(), 1u) << "every image got the same probabilities: the comparison would prove nothing";
}

// An 8-bit RGB PNG of `rgb` (rows top to bottom) with stored (uncompressed) deflate blocks: a valid PNG
// written without a PNG or zlib library, which the tests do not link (libspng is fastloop's private one).
std::string predict_sources_png(const std::string& rgb, uint32_t width, uint32_t height) {
  using test_data::Bytes, test_data::put_be32, test_data::put_le;
  Bytes raw;  // each row: filter type 0 (None), then its pixels
  for (size_t y = 0; y < height; ++y) {
    raw.push_back(0);
    raw.insert(raw.end(), rgb.begin() + static_cast<std::ptrdiff_t>(y * width * 3),
               rgb.begin() + static_cast<std::ptrdiff_t>((y + 1) * width * 3));
  }
  Bytes zlib = {0x78, 0x01};
  for (size_t pos = 0; pos < raw.size();) {
    const size_t len = std::min<size_t>(65535, raw.size() - pos);
    zlib.push_back(pos + len == raw.size() ? 1 : 0);  // BFINAL, BTYPE = stored
    put_le(zlib, static_cast<uint32_t>(len), 2);
    put_le(zlib, static_cast<uint32_t>(~len & 0xFFFF), 2);
    zlib.insert(zlib.end(), raw.begin() + static_cast<std::ptrdiff_t>(pos), raw.begin() + static_cast<std::ptrdiff_t>(pos + len));
    pos += len;
  }
  uint32_t a = 1, b = 0;  // Adler-32
  for (uint8_t c : raw) a = (a + c) % 65521, b = (b + a) % 65521;
  put_be32(zlib, (b << 16) | a);
  Bytes png = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
  const auto chunk = [&png](const char* type, const Bytes& data) {
    put_be32(png, static_cast<uint32_t>(data.size()));
    Bytes typed(type, type + 4);
    typed.insert(typed.end(), data.begin(), data.end());
    png.insert(png.end(), typed.begin(), typed.end());
    put_be32(png, test_data::crc32_of(typed));
  };
  Bytes ihdr;
  put_be32(ihdr, width);
  put_be32(ihdr, height);
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // 8 bits, RGB, deflate, adaptive filters, no interlace
  chunk("IHDR", ihdr);
  chunk("IDAT", zlib);
  chunk("IEND", {});
  return {png.begin(), png.end()};
}

}  // namespace

// One model for the suite, trained as tests/test_predict.cpp's trained_folder() does: DIR/{train,val}/
// {cat,dog} (the golden JPEGs are cats, the PNGs dogs), a few steps at 32 pixels (at a tenth of train's
// learning rate); and its predictions on val/ through --checkpoint, which every other way must reproduce.
class PredictSources : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    test::cat_dog_folder_write(*dir_ / "data");
    // --lr 0.01: train's 0.1 drives this model's logits so far apart on 10 images that every softmax is
    // 1 and 0 (a test loss near 200), and equal probabilities would prove nothing. --amp off: bare weights
    // (--init-from) are predicted in fp32, so the checkpoint must be too; auto picks bf16 autocast on a
    // CPU with native bf16 or a GPU.
    const auto run = test::cli_run("train --data imagefolder:" + data() + " --image-size 32 --batch-size 5 --epochs 3 "
                                   "--lr 0.01 --amp off --threads 2 --workers 1 --checkpoint-dir " + *dir_ / "ckpt");
    EXPECT_EQ(run.code, 0) << run.output;
    reference_ = new Rows(predict_rows("--checkpoint " + checkpoint() + " " + val(), *dir_ / "reference.jsonl"));
  }
  static void TearDownTestSuite() {
    delete reference_;
    delete dir_;  // removed: each test keeps its own outputs in its own folder when it fails
  }
  void SetUp() override {
    ASSERT_TRUE(fs::exists(checkpoint())) << "training the suite's model failed";
    ASSERT_EQ(reference_->size(), 10u) << "predict --checkpoint on val/ failed";
  }

  static std::string data() { return *dir_ / "data"; }
  static std::string val() { return *dir_ / "data/val"; }
  static std::string checkpoint() { return *dir_ / "ckpt/last.ckpt"; }
  static const Rows& reference() { return *reference_; }

 private:
  static inline test::TempDir* dir_ = nullptr;
  static inline Rows* reference_ = nullptr;
};

TEST_F(PredictSources, ExportedSafetensorsWithTheTransformAsFlagsPredictAsTheCheckpoint) {
  const test::TempDir tmp;
  const std::string weights = tmp / "w.safetensors";
  const auto exported = test::cli_run("export --checkpoint " + checkpoint() + " --out " + weights);
  ASSERT_EQ(exported.code, 0) << exported.output;
  // The flags restate the checkpoint's ModelInfo: train's default small_cnn with the cifar stem, 2 classes,
  // a 32-pixel centre crop (of the shorter side resized to 36, as 224 of 256) and ImageNet's mean and std,
  // which an image folder trains with. Without the checkpoint the classes are named "0" and "1".
  const Rows rows = predict_rows("--init-from " + weights + " --model small_cnn --stem cifar --num-classes 2 "
                                 "--image-size 32 --mean 0.485,0.456,0.406 --std 0.229,0.224,0.225 " + val(),
                                 tmp / "w.jsonl");
  expect_same_rows(rows, reference(), 1e-4);
  for (const auto& [path, row] : rows) EXPECT_EQ(row.label.at(0), std::to_string(row.index.at(0))) << path;
  expect_distinct_probabilities(rows);
}

TEST_F(PredictSources, ATorchScriptExportCarriesItsClassesAndTransformAndPredictsAsTheCheckpoint) {
  const test::TempDir tmp;
  const std::string script = tmp / "r.pt";
  const auto exported = test::cli_run("export --checkpoint " + checkpoint() + " --out " + script);
  ASSERT_EQ(exported.code, 0) << exported.output;
  const Rows rows = predict_rows("--model torchscript:" + script + " " + val(), tmp / "r.jsonl");
  expect_same_rows(rows, reference(), 1e-4);
  for (const auto& [path, row] : rows) EXPECT_EQ(row.label, reference().at(path).label) << path;  // cat/dog, from its info
  expect_distinct_probabilities(rows);
}

TEST_F(PredictSources, PackedShardsArePredictedOnTheirValSplitAsTheFolderIs) {
  const test::TempDir tmp;
  const std::string shards = tmp / "shards";
  const auto packed = test::cli_run("pack " + data() + " " + shards);
  ASSERT_EQ(packed.code, 0) << packed.output;
  const std::string val_shard = shards + "/val-000000.tar";
  ASSERT_TRUE(fs::exists(val_shard)) << packed.output;  // 10 small images: one shard per split
  const std::string spec = "shards:" + shards + "/train-{000000..000000}.tar::" + shards + "/val-{000000..000000}.tar";
  const Rows rows = predict_rows("--checkpoint " + checkpoint() + " '" + spec + "'", tmp / "shards.jsonl");
  EXPECT_EQ(rows.size(), reference().size()) << "one row per val image, none of train's";

  // A shard row's path is SHARD.tar:KEY.EXT, KEY being pack's sequence number, not the file's name; pack
  // stores each file's bytes untouched, so the member's bytes name the val file it came from.
  const std::string archive = file_read(val_shard);
  std::map<std::string, std::string> member_bytes;  // "val-000000.tar:KEY.EXT" -> the image's bytes
  for (const ShardSample& s : shard_index(archive, val_shard))
    member_bytes[val_shard + ":" + s.image] = archive.substr(static_cast<size_t>(s.offset), static_cast<size_t>(s.size));
  std::map<std::string, std::string> file_of_bytes;
  for (const auto& [path, row] : reference()) file_of_bytes[file_read(path)] = path;
  std::set<std::string> files_seen;
  for (const auto& [path, row] : rows) {
    ASSERT_TRUE(member_bytes.count(path)) << path << " is no image member of " << val_shard;
    const auto file = file_of_bytes.find(member_bytes.at(path));
    ASSERT_NE(file, file_of_bytes.end()) << path << " holds no val file's bytes";
    files_seen.insert(file->second);
    expect_same_prediction(row, reference().at(file->second), 1e-5, path + " (" + file->second + ")");
    EXPECT_EQ(row.label, reference().at(file->second).label) << path;  // classes.txt names them
  }
  EXPECT_EQ(files_seen.size(), reference().size()) << "every val image once";
}

TEST_F(PredictSources, WebpBmpPnmAndTiffFilesArePredictedAsTheSamePixelsInAPng) {
  const test::TempDir tmp;
  const std::string dir = tmp.sub("formats");
  const std::set<std::string> formats = {"webp", "bmp", "ppm", "pgm", "tif", "tiff"};
  std::map<std::string, std::string> png_of;  // each format file -> the PNG of PIL's decode of it
  std::set<std::string> covered;
  const auto goldens = nlohmann::json::parse(file_read(kGolden + "goldens.json"));
  for (const auto& [name, g] : goldens.at("decoded").items()) {
    const std::string ext = name.substr(name.rfind('.') + 1);
    if (!formats.count(ext)) continue;
    covered.insert(ext);
    fs::copy_file(kGolden + name, fs::path(dir) / name);
    const std::string png = dir + "/" + name.substr(0, name.rfind('.')) + "_" + ext + ".png";
    std::ofstream(png, std::ios::binary) << predict_sources_png(file_read(kGolden + g.at("pixels").get<std::string>()),
                                                                g.at("width").get<uint32_t>(), g.at("height").get<uint32_t>());
    png_of[dir + "/" + name] = png;
  }
  EXPECT_EQ(covered, formats) << "goldens.json lost a format";
  const Rows rows = predict_rows("--checkpoint " + checkpoint() + " " + dir, tmp / "formats.jsonl");
  EXPECT_EQ(rows.size(), 2 * png_of.size()) << "a row for every file and every PNG";
  for (const auto& [file, png] : png_of) {
    const auto got = rows.find(file), want = rows.find(png);
    if (got == rows.end() || want == rows.end()) {
      ADD_FAILURE() << "no row for " << (got == rows.end() ? file : png);
      continue;
    }
    // The same pixels (fastloop decodes these formats as PIL does, byte for byte) make the same input.
    expect_same_prediction(got->second, want->second, 1e-6, file);
  }
  expect_distinct_probabilities(rows);
}

}  // namespace fastloop::predict_sources
