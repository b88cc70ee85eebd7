// `fastloop bench loader` on image files: the loader cells, the assemble table, the training-step rate
// and the keeps-up verdict are filled from an image folder and from tar shards; the PyTorch peer
// (ImageFolder + torchvision transforms) fills its columns; a source the peer cannot read is an InputError;
// --decode-limit times the decode alone beside each cell, and wants image files.
#include "fastloop/bench/loader_bench.h"
#include "fastloop/core/errors.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace fastloop {
namespace {

namespace fs = std::filesystem;

std::string golden_folder(const std::string& dir) {
  const std::string golden = std::string(FASTLOOP_TEST_DIR) + "/golden/images/";
  for (const char* cls : {"a", "b"}) {
    fs::create_directories(fs::path(dir) / "train" / cls);
    for (const char* f : {"rgb.jpg", "gray.jpg", "rgb.png"}) fs::copy_file(golden + f, fs::path(dir) / "train" / cls / f);
  }
  return dir;
}

LoaderBenchOptions tiny(const std::string& data) {
  LoaderBenchOptions o;
  o.data = data;
  o.workers = {0, 2};
  o.batch_size = 2;
  o.batches = 2;
  o.repeats = 1;
  o.warmup = 0;
  o.python_batches = 1;
  o.image_size = 32;
  o.step_model = "resnet18";
  o.step_batch = 2;
  return o;
}

TEST(LoaderBenchImages, MeasuresImageFolderCellsAndSaysWhetherTheLoaderKeepsUp) {
  const test::TempDir tmp;
  const std::string dir = golden_folder(tmp.sub("bench_images"));
  LoaderBenchResult r = loader_bench_run(tiny("imagefolder:" + dir));
  EXPECT_TRUE(r.encoded);
  ASSERT_EQ(r.rows.size(), 4u);  // 2 worker counts x augment off/on
  for (const auto& row : r.rows) {
    EXPECT_GT(row.img_per_s, 0.0);
    EXPECT_GT(row.cpu_us_per_img, 0.0);
  }
  EXPECT_EQ(r.assemble.size(), 3u);  // float32 NCHW, float16 and bfloat16 channels_last
  EXPECT_GT(r.step_img_per_s, 0.0);
  const std::string md = loader_bench_markdown(r);
  EXPECT_NE(md.find("RandomResizedCrop(32)"), std::string::npos) << md;
  EXPECT_NE(md.find("6 train images"), std::string::npos) << md;
  EXPECT_NE(md.find("Keeps up with resnet18 training at 32x32?"), std::string::npos) << md;
  EXPECT_NE(loader_bench_verdict(r).find("keep"), std::string::npos);
  FASTLOOP_SKIP_WITHOUT_VENV();
  loader_bench_compare_python(r, FASTLOOP_PYTHON, FASTLOOP_TEST_DIR "/../bench/peers/loader_peer.py");
  for (const auto& row : r.rows) EXPECT_GT(row.pytorch_img_per_s, 0.0) << row.workers << " workers";
  EXPECT_NE(loader_bench_json(r).find("\"pytorch_cpu_us_per_img\""), std::string::npos);
}

TEST(LoaderBenchImages, MeasuresShardsButThePythonPeerReadsOnlyImageFolders) {
  const test::TempDir tmp;
  const std::string dir = golden_folder(tmp.sub("bench_shards"));
  const auto packed = test::cli_run("pack " + dir + " " + dir + "/shards");
  ASSERT_EQ(packed.code, 0) << packed.output;
  LoaderBenchOptions o = tiny("shards:" + dir + "/shards");
  o.step_model = "";
  o.augment = "on";
  LoaderBenchResult r = loader_bench_run(o);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.step_img_per_s, 0.0);
  EXPECT_EQ(loader_bench_verdict(r), "");
  try {
    loader_bench_compare_python(r, FASTLOOP_PYTHON, FASTLOOP_TEST_DIR "/../bench/peers/loader_peer.py");
    ADD_FAILURE() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("imagefolder:DIR, not 'shards:"), std::string::npos) << e.what();
  }
}

TEST(LoaderBenchImages, DecodeLimitTimesTheDecodeAloneBesideEachCellAndWantsImageFiles) {
  const test::TempDir tmp;
  const std::string dir = golden_folder(tmp.sub("bench_limit"));
  LoaderBenchOptions o = tiny("imagefolder:" + dir);
  o.step_model = "";
  o.decode_limit = true;
  const LoaderBenchResult r = loader_bench_run(o);
  ASSERT_EQ(r.rows.size(), 4u);
  for (const auto& row : r.rows) EXPECT_GT(row.decode_img_per_s, 0.0) << row.workers << " workers";
  EXPECT_NE(loader_bench_json(r).find("\"share_of_decode_limit\""), std::string::npos);
  const std::string md = loader_bench_markdown(r);
  EXPECT_NE(md.find("| decode limit img/s | share of it |"), std::string::npos) << md;
  LoaderBenchOptions synthetic = tiny("");
  synthetic.decode_limit = true;
  synthetic.images = 4;
  EXPECT_THROW(loader_bench_run(synthetic), InputError);
}

} // namespace
} // namespace fastloop
