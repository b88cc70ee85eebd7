// Image folders and tar shards through the CLI (issue 17 part 7): every model with --stem imagenet trains
// and evaluates on them with AMP, channels_last and loader workers; `fastloop pack`ed shards train;
// two launched ranks each train their half and evaluate the whole val split once; the ResNet50 recipe
// runs; `fastloop tune` and `fastloop bench` take image sources (the bench's models get the imagenet stem
// at --image-size, also in its launched ranks). Tiny images (32 px) of the committed goldens, CPU unless
// the name ends in _CUDA.
#include "fastloop/core/config.h"
#include "fastloop/models/flops.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/perf_auto.h"

#include "test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/cuda.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <tuple>

namespace fastloop {
namespace {

namespace fs = std::filesystem;

// DIR/train/{cat,dog}/ with 4 images each (8: batches of 2 or 4 divide them, so a rank's share is exact) and
// DIR/val/ with 3 + 2 (5: two ranks evaluate 2 and 3 of them), copies of the decoder's goldens.
std::string folder_make(const std::string& dir) {
  const std::string golden = std::string(FASTLOOP_TEST_DIR) + "/golden/images/";
  const std::vector<std::tuple<const char*, const char*, std::vector<const char*>>> files = {
      {"train", "cat", {"rgb.jpg", "gray.jpg", "cmyk.jpg", "progressive.jpg"}},
      {"train", "dog", {"rgb.png", "rgba.png", "palette.png", "gray16.png"}},
      {"val", "cat", {"rgb444.jpg", "rgb.jpg", "gray.jpg"}},
      {"val", "dog", {"gray.png", "rgb.png"}}};
  for (const auto& [split, cls, names] : files) {
    fs::create_directories(fs::path(dir) / split / cls);
    for (const char* f : names) fs::copy_file(golden + f, fs::path(dir) / split / cls / f);
  }
  return dir;
}

// The shards of folder_make(dir): DIR/shards/train-000000.tar, val-000000.tar.
std::string shards_make(const std::string& dir) {
  folder_make(dir);
  const auto packed = test::cli_run("pack " + dir + " " + dir + "/shards");
  EXPECT_EQ(packed.code, 0) << packed.output;
  return dir + "/shards";
}

// "test accuracy A% (loss L, N images) after S steps": {N, S}, or {-1, -1} when the line is missing.
std::pair<int64_t, int64_t> images_and_steps(const std::string& output) {
  std::smatch m;
  if (!std::regex_search(output, m, std::regex(R"(test accuracy [0-9.]+% \(loss [0-9.]+, (\d+) images\) after (\d+) steps)")))
    return {-1, -1};
  return {std::stoll(m[1]), std::stoll(m[2])};
}

const std::string kTiny = " --image-size 32 --epochs 1 --device cpu --threads 1";

TEST(ImageTraining, EveryImagenetStemModelTrainsAndEvaluatesWithAmpChannelsLastAndWorkers) {
  const test::TempDir tmp;
  const std::string data = " --data imagefolder:" + folder_make(tmp.sub("image_training_models"));
  for (const auto& model : model_names()) {
    if (!model_is_builtin(model)) continue;  // registered by other tests in this process: unknown to the CLI
    const auto stems = model_stems(model);
    if (std::find(stems.begin(), stems.end(), "imagenet") == stems.end()) continue;  // small_cnn: cifar only
    const auto r = test::cli_run("train" + data + " --model " + model + " --stem imagenet --batch-size 4 --workers 2"
                                 " --amp bf16 --channels-last" + kTiny);
    ASSERT_EQ(r.code, 0) << model << "\n" << r.output;
    EXPECT_EQ(images_and_steps(r.output), std::make_pair(int64_t{5}, int64_t{2})) << model << ": 8 / 4 steps, all of val\n"
                                                                                   << r.output;
  }
}

TEST(ImageTraining, PackedShardsTrainAndEvaluateThroughTheCli) {
  const test::TempDir tmp;
  const std::string shards = shards_make(tmp.sub("image_training_shards"));
  const auto r = test::cli_run("train --data shards:" + shards + " --model mobilenet_v2 --stem imagenet --batch-size 4"
                               " --workers 2 --amp bf16 --channels-last --shuffle-buffer 4" + kTiny);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(images_and_steps(r.output), std::make_pair(int64_t{5}, int64_t{2})) << r.output;
}

// `fastloop eval --init-from` of exported weights needs the image size and normalisation they were trained
// with: given them it equals the checkpoint's own eval (which reads them from the checkpoint's config).
TEST(ImageTraining, EvalOfExportedWeightsWithTheTrainingImageSizeAndNormalisationEqualsTheCheckpoints) {
  const test::TempDir tmp;
  const std::string data = "imagefolder:" + folder_make(tmp.sub("image_training_eval"));
  const std::string dir = tmp.sub("image_training_eval_run");
  const std::string norm = " --mean 0.5,0.4,0.3 --std 0.2,0.25,0.3";
  const auto trained = test::cli_run("train --data " + data + " --model resnet18 --stem imagenet --batch-size 4" + norm +
                                     " --checkpoint-dir " + dir + kTiny);
  ASSERT_EQ(trained.code, 0) << trained.output;
  const auto exported = test::cli_run("export --checkpoint " + dir + "/last.ckpt --out " + dir + "/w.safetensors");
  ASSERT_EQ(exported.code, 0) << exported.output;
  const std::regex figures(R"(test accuracy ([0-9.]+)% \(loss ([0-9.]+), 5 images)");
  auto result = [&](const std::string& args) {  // (accuracy %, loss)
    const auto r = test::cli_run("eval --threads 1 --batch-size 4 " + args);
    EXPECT_EQ(r.code, 0) << args << "\n" << r.output;
    std::smatch m;
    EXPECT_TRUE(std::regex_search(r.output, m, figures)) << r.output;
    return m.empty() ? std::make_pair(-1.0, -1.0) : std::make_pair(std::stod(m[1]), std::stod(m[2]));
  };
  const std::string weights = "--init-from " + dir + "/w.safetensors --model resnet18 --stem imagenet --data " + data;
  const auto [accuracy, loss] = result("--checkpoint " + dir + "/last.ckpt");
  const auto given = result(weights + " --image-size 32" + norm);
  EXPECT_EQ(given.first, accuracy);
  EXPECT_NEAR(given.second, loss, 1e-5 * loss) << "the same images, weights and statistics (the printed loss rounds)";
  const auto imagenet = result(weights + " --image-size 32");  // ImageNet's mean and std by default
  EXPECT_GT(std::abs(imagenet.second - loss), 1e-3 * loss) << "the normalisation changes the logits";
  EXPECT_EQ(test::cli_run("eval " + weights + " --image-size 4").code, 2);
}

// Two ranks on the CPU: each trains on its half (half the steps of one process at the same batch), both
// all-reduce after each of those steps, and rank 0 reports the accuracy over the whole val split, each
// image counted once (5 images, split 2 + 3).
TEST(ImageTraining, TwoRanksTrainTheirHalfOfAFolderAndOfItsShardsAndEvaluateTheWholeValSplit) {
  const test::TempDir tmp;
  const std::string dir = folder_make(tmp.sub("image_training_ddp"));
  const auto packed = test::cli_run("pack " + dir + " " + dir + "/shards");
  ASSERT_EQ(packed.code, 0) << packed.output;
  const std::string run = " --model resnet18 --stem imagenet --batch-size 2 --workers 1" + kTiny;
  for (const std::string& data : {"imagefolder:" + dir, "shards:" + dir + "/shards"}) {
    const auto one = test::cli_run("train --data " + data + run);
    ASSERT_EQ(one.code, 0) << one.output;
    EXPECT_EQ(images_and_steps(one.output), std::make_pair(int64_t{5}, int64_t{4})) << data << "\n" << one.output;

    const auto two = test::cli_run("launch --nproc-per-node 2 --master-port 0 -- train --data " + data + run);
    ASSERT_EQ(two.code, 0) << two.output;
    EXPECT_EQ(images_and_steps(two.output), std::make_pair(int64_t{5}, int64_t{2})) << data << "\n" << two.output;
    for (const std::string rank : {"0", "1"}) {
      std::smatch m;
      ASSERT_TRUE(std::regex_search(two.output, m, std::regex("\\[" + rank + "\\] ddp: rank " + rank +
                                                              " of 2, (\\d+) buckets, (\\d+) all-reduces")))
          << data << "\n" << two.output;
      EXPECT_EQ(std::stoll(m[2]), 2 * std::stoll(m[1])) << "rank " << rank << ": one all-reduce per bucket per step";
    }
  }
}

TEST(ImageTraining, ResNet50RecipeRunsOnAFolder) {
  const test::TempDir tmp;
  const std::string recipe = std::string(FASTLOOP_TEST_DIR) + "/../recipes/imagefolder_resnet50.toml";
  const auto r = test::cli_run("train --config " + test::quoted(recipe) + " --data imagefolder:" + folder_make(tmp.sub("image_training_recipe")) +
                               " --batch-size 4 --workers 2 --max-steps 1" + kTiny);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(images_and_steps(r.output), std::make_pair(int64_t{5}, int64_t{1})) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("config (\\{.*\\})"))) << r.output;
  const auto config = nlohmann::json::parse(m[1].str());
  EXPECT_EQ(config["model.name"], "resnet50");
  EXPECT_EQ(config["model.stem"], "imagenet");
  // --perf auto (the recipe sets no mode) decides the precision and layout for this CPU; on a GPU the
  // recipe's bf16 and channels_last are auto's choices too.
  const PerfHardware hw = perf_hardware_detect();
  EXPECT_EQ(config["perf.amp"], hw.cpu.native_bf16 ? "bf16" : "off") << r.output;
  EXPECT_EQ(config["perf.channels_last"], hw.cpu.avx512) << r.output;
  EXPECT_EQ(config["schedule.name"], "cosine");
}

TEST(ImageTraining, PinnedRingFp16AndChannelsLastOnAnImageFolder_CUDA) {
  const test::TempDir tmp;
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible";
  const auto r = test::cli_run("train --data imagefolder:" + folder_make(tmp.sub("image_training_cuda")) +
                               " --model resnet50 --stem imagenet --image-size 32 --batch-size 4 --workers 2 --pin-memory"
                               " --amp fp16 --channels-last --epochs 1 --device cuda");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(images_and_steps(r.output), std::make_pair(int64_t{5}, int64_t{2})) << r.output;
}

TEST(ImageTune, TunesOnAnImageFolderAndWritesARecipeTrainRuns) {
  const test::TempDir tmp;
  const std::string dir = folder_make(tmp.sub("image_tune"));
  const std::string recipe = dir + "/tuned.toml";
  const auto tuned = test::cli_run("tune --data imagefolder:" + dir + " --model resnet18 --stem imagenet --batch-size 4" +
                                   kTiny + " --trials 3 --tune-warmup 1 --tune-steps 1 --out " + recipe);
  ASSERT_EQ(tuned.code, 0) << tuned.output;
  TrainConfig config;
  config_load_toml(config, recipe);
  EXPECT_EQ(config.data.source, "imagefolder:" + dir);
  EXPECT_EQ(config.data.image.size, 32);
  EXPECT_EQ(config.model.stem, "imagenet");
  const auto trained = test::cli_run("train --config " + recipe + " --max-steps 1 --device cpu");
  ASSERT_EQ(trained.code, 0) << trained.output;
  EXPECT_EQ(images_and_steps(trained.output), std::make_pair(int64_t{5}, int64_t{1})) << trained.output;
}

double forward_flops(const std::string& model, const std::string& stem, int64_t size) {
  ModelConfig config;
  config.name = model;
  config.stem = stem;
  return model_forward_flops(*model_make_for(config, 3, 2), {3, size, size});
}

const nlohmann::json* cell_of(const nlohmann::json& report, const std::string& model, const std::string& row, int64_t nproc) {
  for (const auto& cell : report["cells"])
    if (cell["model"] == model && cell["row"] == row && cell["nproc"] == nproc) return &cell;
  return nullptr;
}

const std::string kBenchGrid = " --image-size 32 --repeat 1 --steps 1 --eval-steps 1 --warmup 0 --batch-size 2 --device cpu";

// The bench on image data: models get the imagenet stem (small_cnn its only one, cifar) at --image-size,
// also in the ranks of a 2-rank cell (their FLOPs are rank 0's model at its data's size); data-on-device
// is n/a with the reason.
TEST(ImageBench, GridRunsImagenetStemModelsAtTheImageSizeOnAFolderAndOnShards) {
  const test::TempDir tmp;
  const std::string dir = folder_make(tmp.sub("image_bench"));
  const auto r = test::cli_run("bench --data imagefolder:" + dir + kBenchGrid + " --models resnet18 --rows baseline,data-on-device"
                               " --nproc 1,2 --threads 2 --out " + dir + "/grid");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto report = nlohmann::json::parse(std::ifstream(dir + "/grid.json"));
  EXPECT_EQ(report["config"]["model.stem"], "imagenet");
  EXPECT_EQ(report["config"]["data.image_size"], 32);
  const double resnet_flops = forward_flops("resnet18", "imagenet", 32);
  EXPECT_LT(resnet_flops, forward_flops("resnet18", "imagenet", 224) / 10);
  for (int64_t nproc : {1, 2}) {
    const auto* base = cell_of(report, "resnet18", "baseline", nproc);
    ASSERT_NE(base, nullptr) << nproc << " ranks";
    ASSERT_EQ(base->at("status"), "ok") << nproc << " ranks";
    EXPECT_GT(base->at("train_img_per_s").get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(base->at("forward_flops").get<double>(), resnet_flops) << nproc << " ranks";
    const std::string device = cell_of(report, "resnet18", "data-on-device", nproc)->at("status");
    EXPECT_EQ(device.rfind("n/a: imagefolder images are decoded by the loader", 0), 0u) << device;
  }

  const std::string shards = shards_make(tmp.sub("image_bench_shards"));
  const auto s = test::cli_run("bench --data shards:" + shards + kBenchGrid + " --models small_cnn,mobilenet_v2 --rows baseline"
                               " --out " + shards + "/grid");
  ASSERT_EQ(s.code, 0) << s.output;
  const auto shard_report = nlohmann::json::parse(std::ifstream(shards + "/grid.json"));
  const std::vector<std::pair<std::string, double>> models = {
      {"small_cnn", forward_flops("small_cnn", "cifar", 32)}, {"mobilenet_v2", forward_flops("mobilenet_v2", "imagenet", 32)}};
  for (const auto& [model, flops] : models) {
    const auto* cell = cell_of(shard_report, model, "baseline", 1);
    ASSERT_NE(cell, nullptr) << model;
    EXPECT_EQ(cell->at("status"), "ok") << model;
    EXPECT_DOUBLE_EQ(cell->at("forward_flops").get<double>(), flops) << model;
  }
}

// The PyTorch peer says n/a for image sources instead of failing the grid.
TEST(ImageBench, PythonPeerIsNotApplicableToAnImageFolderAndTheGridStillRuns) {
  FASTLOOP_SKIP_WITHOUT_VENV();
  const test::TempDir tmp;
  const std::string dir = folder_make(tmp.sub("image_bench_peer"));
  const auto r = test::cli_run("bench --data imagefolder:" + dir + kBenchGrid + " --models resnet18 --rows baseline --out " +
                               dir + "/grid --compare-python --python " + test::python_word() + " --peer " +
                               test::quoted(FASTLOOP_TEST_DIR "/../bench/peers/bench_peer.py"));
  ASSERT_EQ(r.code, 0) << r.output;
  const auto report = nlohmann::json::parse(std::ifstream(dir + "/grid.json"));
  const auto* cell = cell_of(report, "resnet18", "baseline", 1);
  ASSERT_NE(cell, nullptr) << r.output;
  EXPECT_EQ(cell->at("status"), "ok");
  const std::string peer = cell->at("python_status");
  EXPECT_EQ(peer.rfind("n/a: the peer reads in-memory data only", 0), 0u) << peer;
}

}  // namespace
}  // namespace fastloop
