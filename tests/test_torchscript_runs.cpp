// TorchScript models in whole runs: DDP over two ranks (hooks, no_sync, averaged gradients against one
// process of twice the batch), `fastloop models`, `bench` (with --twin, the built-in model interleaved)
// and `tune` on a scripted module.
#include "test_support.h"
#include "fastloop/bench/grid.h"
#include "fastloop/bench/report.h"
#include "fastloop/core/errors.h"
#include "fastloop/dist/launch.h"
#include "fastloop/io/safetensors.h"
#include "fastloop/models/torchscript.h"
#include "golden_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <regex>

using namespace fastloop;
using fastloop::test::kTorchScriptDir;

TEST(TorchScript, TwoRanksTrainAScriptedModelWithDdp) {
  const test::TempDir tmp;
  const auto dir = tmp.sub("ts_ddp");
  auto r = test::cli_run("launch --nproc-per-node 2 --master-port " + std::to_string(free_port()) +
                         " -- train --model " + test::quoted("torchscript:" + kTorchScriptDir + "resnet.pt") + " --data synthetic:3x16x16:128 "
                         "--batch-size 8 --max-steps 4 --accumulate 2 --workers 0 --threads 1 --device cpu "
                         "--bucket-mb 0.05 --checkpoint-dir " + dir);
  ASSERT_EQ(r.code, 0) << r.output;
  // Hooks on the script's own parameters: several buckets, each reduced once per optimizer step (no_sync on
  // the first micro-batch of each cycle of 2), on both ranks.
  for (const std::string rank : {"0", "1"}) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.output, m, std::regex("\\[" + rank + "\\] ddp: rank " + rank +
                                                          " of 2, (\\d+) buckets, (\\d+) all-reduces")))
        << r.output;
    EXPECT_GT(std::stoll(m[1]), 1) << r.output;
    EXPECT_EQ(std::stoll(m[2]), std::stoll(m[1]) * 4) << r.output;
  }
}

TEST(TorchScript, TwoRanksOfAScriptedModelTrainAsOneProcessOfTwiceTheBatch) {
  const test::TempDir tmp;
  // The ViT has LayerNorm and no dropout, so without per-rank batch statistics 2 ranks x 8 images per step
  // must end where 1 process x 16 does: the gradients of the script's parameters are really averaged.
  const auto one = tmp.sub("ts_ddp_one"), two = tmp.sub("ts_ddp_two");
  const std::string train = " train --model " + test::quoted("torchscript:" + kTorchScriptDir + "vit.pt") + " --data synthetic:3x16x16:128 "
                            "--max-steps 3 --workers 0 --threads 1 --device cpu --optim sgd --lr 0.5 --bucket-mb 0.01 "
                            "--perf manual --amp off ";  // fp32 as given: the 1e-5 bound is float32's
  auto single = test::cli_run(train + "--batch-size 16 --checkpoint-dir " + one);
  ASSERT_EQ(single.code, 0) << single.output;
  auto ranks = test::cli_run("launch --nproc-per-node 2 --master-port " + std::to_string(free_port()) + " --" + train +
                             "--batch-size 8 --checkpoint-dir " + two);
  ASSERT_EQ(ranks.code, 0) << ranks.output;
  for (const auto& d : {one, two}) {
    auto exported = test::cli_run("export --checkpoint " + d + "/last.ckpt --out " + d + "/w.safetensors");
    ASSERT_EQ(exported.code, 0) << exported.output;
  }
  const SafetensorsFile a = safetensors_read(one + "/w.safetensors"), b = safetensors_read(two + "/w.safetensors");
  ASSERT_EQ(a.header.tensors.size(), b.header.tensors.size());
  double moved = 0.0;  // from the script's own starting weights
  for (const auto& item : torchscript_load(kTorchScriptDir + "vit.pt")->named_parameters()) {
    const std::string& name = item.key();
    const at::Tensor& initial = item.value();
    const SafetensorsTensor* t = a.header.find(name);
    const SafetensorsTensor* u = b.header.find(name);
    ASSERT_TRUE(t && u) << name;
    ASSERT_EQ(t->dtype, "F32") << name;
    const at::Tensor x = at::from_blob(const_cast<uint8_t*>(a.data(*t)), t->shape, at::kFloat);
    const at::Tensor y = at::from_blob(const_cast<uint8_t*>(b.data(*u)), u->shape, at::kFloat);
    EXPECT_LE((x - y).abs().max().item<double>(), 1e-5 * (1.0 + x.abs().max().item<double>())) << name;
    moved = std::max(moved, (x - initial.detach().reshape(x.sizes())).abs().max().item<double>());
  }
  EXPECT_GT(moved, 1e-3) << "the parameters did not train";
}

namespace {

/// The scripted resnet on a training and an evaluation-only row, twinned with small_cnn, 2 repetitions.
BenchOptions scripted_twin_options() {
  BenchOptions o;
  o.models = {"torchscript:" + kTorchScriptDir + "resnet.pt"};
  o.twin = "small_cnn";
  o.rows = {"baseline", "no-grad"};
  o.repeat = 2;
  o.steps = o.eval_steps = 1;
  o.warmup = 0;
  o.batch_size = 4;
  o.data = "synthetic:3x16x16:32";
  o.device = "cpu";
  o.threads = 1;
  o.progress = false;
  return o;
}

}  // namespace

TEST(TorchScript, BenchTwinTimesTheBuiltInModelBetweenTheScriptedCellsRepetitions) {
  const BenchOptions o = scripted_twin_options();
  const BenchResult result = bench_run(o);
  ASSERT_EQ(result.cells.size(), 2u);
  const BenchCell& train = result.cells[0];
  ASSERT_EQ(train.status, "ok");
  EXPECT_EQ(train.twin.name, "small_cnn");
  ASSERT_EQ(train.twin.train_img_per_s_reps.size(), 2u);
  ASSERT_EQ(train.twin.eval_img_per_s_reps.size(), 2u);
  std::vector<double> pairs;
  for (size_t i = 0; i < 2; ++i) pairs.push_back(train.train_img_per_s_reps[i] / train.twin.train_img_per_s_reps[i]);
  EXPECT_DOUBLE_EQ(train.twin.train.median, std::min(pairs[0], pairs[1])) << "the lower median of the pairs";
  EXPECT_DOUBLE_EQ(train.twin.train.max, std::max(pairs[0], pairs[1]));
  EXPECT_GT(train.twin.eval.median, 0.0);
  const BenchCell& eval_only = result.cells[1];
  ASSERT_EQ(eval_only.status, "ok");
  EXPECT_TRUE(eval_only.twin.train_img_per_s_reps.empty());
  EXPECT_EQ(eval_only.twin.eval_img_per_s_reps.size(), 2u);
  EXPECT_NE(bench_markdown(result).find("Scripted ÷ built-in (--twin small_cnn)"), std::string::npos);
  EXPECT_NE(bench_csv(result).find("train_vs_twin"), std::string::npos);

  BenchOptions bad = o;
  bad.twin = "torchscript:" + kTorchScriptDir + "resnet.pt";
  EXPECT_THROW(bench_run(bad), InputError);
  bad.twin = "small_cnn";
  bad.models = {"small_cnn"};
  EXPECT_THROW(bench_run(bad), InputError);
}

TEST(TorchScript, BenchTwinWithThePeerIsAlsoTimedInEagerPyTorch) {
  FASTLOOP_SKIP_WITHOUT_VENV();
  BenchOptions o = scripted_twin_options();
  // A training row after the others: the peer's two open cells must not leave each other's grad mode.
  o.rows = {"baseline", "no-grad", "set-to-none"};
  o.compare_python = true;
  o.python = FASTLOOP_PYTHON;
  o.peer = FASTLOOP_TEST_DIR "/../bench/peers/bench_peer.py";
  const BenchResult result = bench_run(o);
  ASSERT_EQ(result.cells.size(), 3u);
  for (const BenchCell& cell : result.cells) {
    EXPECT_EQ(cell.python.status, "ok") << cell.row << ": the same .pt in PyTorch";
    EXPECT_EQ(cell.eager.status, "ok") << cell.row << ": small_cnn eagerly in PyTorch";
  }
  const BenchCell& train = result.cells[0];
  ASSERT_EQ(train.status, "ok");
  ASSERT_EQ(train.eager.status, "ok") << "small_cnn eagerly in PyTorch, the peer's second slot";
  ASSERT_EQ(train.eager.train_img_per_s_reps.size(), 2u);
  ASSERT_EQ(train.eager.eval_img_per_s_reps.size(), 2u);
  EXPECT_EQ(train.python.train_img_per_s_reps.size(), 2u) << "both peer cells ran every repetition";
  std::vector<double> pairs;
  for (size_t i = 0; i < 2; ++i) pairs.push_back(train.train_img_per_s_reps[i] / train.eager.train_img_per_s_reps[i]);
  EXPECT_DOUBLE_EQ(train.eager.train.median, std::min(pairs[0], pairs[1]));
  EXPECT_DOUBLE_EQ(train.eager.train.max, std::max(pairs[0], pairs[1]));
  const BenchCell& eval_only = result.cells[1];
  ASSERT_EQ(eval_only.eager.status, "ok");
  EXPECT_TRUE(eval_only.eager.train_img_per_s_reps.empty());
  EXPECT_EQ(eval_only.eager.eval_img_per_s_reps.size(), 2u);
  EXPECT_GT(eval_only.eager.eval.median, 0.0);
  EXPECT_NE(bench_markdown(result).find("Scripted ÷ PyTorch eager (--twin small_cnn in Python)"), std::string::npos);
  EXPECT_NE(bench_csv(result).find("train_vs_eager"), std::string::npos);
}

TEST(TorchScript, ModelsBenchAndTuneAcceptAScriptedModel) {
  const test::TempDir tmp;
  const std::string file = test::quoted(kTorchScriptDir + "resnet.pt");  // a shell word in the commands below
  int64_t parameters = 0;
  const nlohmann::json g = test::torchscript_golden("resnet");
  for (const auto& p : g["params"]) {
    int64_t n = 1;
    for (const auto& d : p["shape"]) n *= d.get<int64_t>();
    parameters += n;
  }
  auto models = test::cli_run("models " + file + " --image-size 16");
  ASSERT_EQ(models.code, 0) << models.output;
  EXPECT_NE(models.output.find(std::to_string(parameters) + " parameters"), std::string::npos) << models.output;
  EXPECT_NE(models.output.find("MFLOPs per 3x16x16 image"), std::string::npos) << models.output;
  EXPECT_EQ(test::cli_run("models " + test::quoted(kTorchScriptDir + "bad_two_inputs.pt")).code, 2);

  const auto dir = tmp.sub("ts_bench");
  auto bench = test::cli_run("bench --models small_cnn,torchscript:" + file + " --rows baseline,fold-bn --repeat 1 "
                             "--steps 1 --eval-steps 1 --warmup 0 --batch-size 4 --data synthetic:3x16x16:32 "
                             "--device cpu --threads 1 --out " + dir);
  EXPECT_EQ(bench.code, 0) << bench.output;
  EXPECT_NE(bench.output.find("torchscript:"), std::string::npos) << bench.output;
  EXPECT_NE(bench.output.find("n/a: fold-bn needs conv"), std::string::npos) << bench.output;
  auto tune = test::cli_run("tune --trials 1 --tune-warmup 1 --tune-steps 1 --model torchscript:" + file +
                            " --data synthetic:3x16x16:64 --batch-size 16 --threads 1 --device cpu --out " + dir +
                            "/tuned.toml");
  EXPECT_EQ(tune.code, 0) << tune.output;
}
