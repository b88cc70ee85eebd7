// The bench grid on tiny grids (small models, 16 px synthetic images, 2 steps, 2 repetitions): a cell
// for every model × row in order, the baseline's speedup is 1, rows that need CUDA say so on the CPU,
// the time split adds up to the step it splits, and a bad row or model names the flag. Nothing here
// asserts a speed: only relations within one measurement.
#include "fastloop/bench/grid.h"
#include "fastloop/bench/rows.h"
#include "fastloop/core/errors.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace fastloop {
namespace {

BenchOptions tiny_grid(std::vector<std::string> models, std::vector<std::string> rows) {
  BenchOptions options;
  options.models = std::move(models);
  options.rows = std::move(rows);
  options.repeat = 2;
  options.steps = 2;
  options.eval_steps = 2;
  options.warmup = 1;
  options.batch_size = 4;
  options.data = "synthetic:3x16x16:64";
  options.device = "cpu";
  options.progress = false;
  return options;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(BenchGrid, EveryModelAndRowGetsACellModelMajor) {
  const auto result = bench_run(tiny_grid({"small_cnn", "resnet18"}, {"baseline", "set-to-none"}));
  ASSERT_EQ(result.cells.size(), 4u);
  const std::array<std::pair<const char*, const char*>, 4> expected{
      {{"small_cnn", "baseline"}, {"small_cnn", "set-to-none"}, {"resnet18", "baseline"}, {"resnet18", "set-to-none"}}};
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& cell = result.cells[i];
    EXPECT_EQ(cell.model, expected[i].first);
    EXPECT_EQ(cell.row, expected[i].second);
    ASSERT_EQ(cell.status, "ok");
    EXPECT_GT(cell.train_img_per_s, 0.0);
    EXPECT_LE(cell.train_img_per_s_min, cell.train_img_per_s);
    EXPECT_GE(cell.train_img_per_s_max, cell.train_img_per_s);
    EXPECT_LE(cell.eval_img_per_s_min, cell.eval_img_per_s);
    EXPECT_GE(cell.eval_img_per_s_max, cell.eval_img_per_s);
    EXPECT_DOUBLE_EQ(cell.train_s, static_cast<double>(result.train_images) / cell.train_img_per_s);
    EXPECT_DOUBLE_EQ(cell.test_s, static_cast<double>(result.test_images) / cell.eval_img_per_s);
    EXPECT_GT(cell.forward_flops, 0.0);
    EXPECT_GT(cell.mfu, 0.0);
    EXPECT_EQ(cell.peak_memory_kind, "process_peak_rss");
    EXPECT_GT(cell.peak_memory_bytes, 0.0);
    EXPECT_GT(cell.eval_peak_memory_bytes, 0.0);
  }
  EXPECT_EQ(result.row_descriptions.size(), 2u);
  EXPECT_GT(result.environment.peak_gemm_gflops, 0.0);
  EXPECT_FALSE(result.environment.commit.empty());
  EXPECT_FALSE(result.config_json.empty());
}

TEST(BenchGrid, BaselineSpeedupIsOneAndOthersAreRatiosToIt) {
  const auto result = bench_run(tiny_grid({"small_cnn"}, {"baseline", "workers4"}));
  ASSERT_EQ(result.cells.size(), 2u);
  const auto& base = result.cells[0];
  const auto& workers = result.cells[1];
  EXPECT_DOUBLE_EQ(base.train_speedup, 1.0);
  EXPECT_DOUBLE_EQ(base.eval_speedup, 1.0);
  EXPECT_DOUBLE_EQ(workers.train_speedup, workers.train_img_per_s / base.train_img_per_s);
  EXPECT_DOUBLE_EQ(workers.eval_speedup, workers.eval_img_per_s / base.eval_img_per_s);
}

TEST(BenchGrid, CudaOnlyRowsAreNotApplicableWithAReasonOnCpu) {
  const auto result = bench_run(tiny_grid({"small_cnn"}, {"non-blocking", "cudnn-benchmark", "cuda-graph"}));
  ASSERT_EQ(result.cells.size(), 3u);
  for (const auto& cell : result.cells) {
    EXPECT_TRUE(contains(cell.status, "n/a: CUDA only (")) << cell.row << ": " << cell.status;
    EXPECT_EQ(cell.train_img_per_s, 0.0);
    EXPECT_EQ(cell.train_speedup, 0.0) << "no baseline in this run";
  }
}

TEST(BenchGrid, TimeSplitAddsUpToTheMeasuredStep) {
  // The split is timed at the step's phase boundaries inside the same repetition whose images/s is
  // reported: its parts never add up to more than the step, and they cover most of it (the rest is the
  // loop around them: a few percent when the machine is idle, more when other work preempts it, so the
  // lower bound is loose on purpose).
  const auto options = tiny_grid({"small_cnn"}, {"baseline", "accumulate"});
  const auto result = bench_run(options);
  for (const auto& cell : result.cells) {
    ASSERT_EQ(cell.status, "ok");
    const int64_t batches_per_step = cell.row == "accumulate" ? 2 : 1;  // N batches of B, as train --accumulate
    const double step_s = static_cast<double>(options.batch_size * batches_per_step) / cell.train_img_per_s;
    EXPECT_GT(cell.split.total(), 0.5 * step_s) << cell.row;
    EXPECT_LE(cell.split.total(), step_s * (1 + 1e-9)) << cell.row;
    EXPECT_GT(cell.split.forward, 0.0);
    EXPECT_GT(cell.split.backward, 0.0);
    EXPECT_GT(cell.split.optimizer, 0.0);
    EXPECT_EQ(cell.split.copy, 0.0) << "batches are made where the model runs on the CPU";
    EXPECT_EQ(cell.split.communication, 0.0);
  }
}

TEST(BenchGrid, EvalOnlyRowsLeaveTrainingEmpty) {
  const auto result = bench_run(tiny_grid({"resnet18"}, {"baseline", "no-grad", "fold-bn"}));
  ASSERT_EQ(result.cells.size(), 3u);
  for (size_t i = 1; i < 3; ++i) {
    const auto& cell = result.cells[i];
    ASSERT_EQ(cell.status, "ok") << cell.row;
    EXPECT_TRUE(cell.eval_only);
    EXPECT_EQ(cell.train_img_per_s, 0.0);
    EXPECT_EQ(cell.train_speedup, 0.0);
    EXPECT_GT(cell.eval_img_per_s, 0.0);
    EXPECT_GT(cell.eval_speedup, 0.0);
  }
}

TEST(BenchGrid, RecModelBreaksMultiplesOfEight) {
  // Every width −1 makes the model smaller: fewer FLOPs per image, and the batch is one larger.
  const auto result = bench_run(tiny_grid({"resnet18"}, {"baseline", "rec-model"}));
  ASSERT_EQ(result.cells.size(), 2u);
  EXPECT_LT(result.cells[1].forward_flops, result.cells[0].forward_flops);
  EXPECT_GT(result.cells[1].forward_flops, 0.9 * result.cells[0].forward_flops);
}

TEST(BenchGrid, UnknownRowIsAnInputErrorNamingTheFlagAndTheRows) {
  try {
    bench_run(tiny_grid({"small_cnn"}, {"baseline", "warp-speed"}));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(contains(message, "--rows")) << message;
    EXPECT_TRUE(contains(message, "warp-speed")) << message;
    for (const auto& row : bench_row_names()) EXPECT_TRUE(contains(message, row)) << message;
  }
}

TEST(BenchGrid, UnknownModelAndFullWithoutCifarAreInputErrors) {
  EXPECT_THROW(bench_run(tiny_grid({"vgg16"}, {"baseline"})), InputError);
  auto full = tiny_grid({"small_cnn"}, {"baseline"});
  full.full = true;
  try {
    bench_run(full);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "cifar10:DIR")) << e.what();
  }
}

TEST(BenchGrid, RowNamesAreTheSeedsThenTheExtras) {
  const std::vector<std::string> expected{"baseline", "workers4", "workers8", "non-blocking", "rec-model", "amp",
                                          "set-to-none", "accumulate", "no-grad", "cudnn-benchmark",
                                          "channels-last", "fused-optim", "cuda-graph", "data-on-device",
                                          "fold-bn", "perf-auto"};
  EXPECT_EQ(bench_row_names(), expected);
}

// A bf16 cell is divided by a bf16 GEMM rate, measured at start as float32's is: against float32's a bf16
// ResNet-18 cell on a CPU with native bf16 read "MFU 198.5%".
TEST(BenchGrid, MfuOfAnAmpCellIsAgainstTheGemmPeakOfItsDtype) {
  const auto result = bench_run(tiny_grid({"small_cnn"}, {"baseline", "amp"}));
  const auto& env = result.environment;
  ASSERT_GT(env.peak_gemm_bf16_gflops, 0.0);
  EXPECT_EQ(env.peak_gemm_fp16_gflops, 0.0) << "fp16 is measured on CUDA only";
  ASSERT_EQ(result.cells.size(), 2u);
  const std::array<double, 2> peaks{env.peak_gemm_gflops, env.peak_gemm_bf16_gflops};  // baseline, amp (bf16 here)
  for (size_t i = 0; i < 2; ++i) {
    const auto& cell = result.cells[i];
    ASSERT_EQ(cell.status, "ok") << cell.row;
    EXPECT_DOUBLE_EQ(cell.mfu, cell.forward_flops * 3.0 * cell.train_img_per_s / (peaks[i] * 1e9)) << cell.row;
  }
  EXPECT_EQ(peak_gemm_gflops_for(env, "off"), env.peak_gemm_gflops);
  EXPECT_EQ(peak_gemm_gflops_for(env, "bf16"), env.peak_gemm_bf16_gflops);
  EXPECT_EQ(peak_gemm_gflops_for(env, "fp16"), 0.0);
}

TEST(BenchCommand, WritesEveryFormatAndPrintsTheMarkdown) {
  const test::TempDir tmp;
  const std::string prefix = tmp / "grid";
  const auto [code, output] = test::cli_run(
      "bench --models small_cnn --rows baseline,cuda-graph --repeat 2 --steps 2 --eval-steps 2 --batch-size 4 "
      "--data synthetic:3x16x16:64 --device cpu --out " + prefix);
  ASSERT_EQ(code, 0) << output;
  EXPECT_TRUE(contains(output, "small_cnn")) << output;
  EXPECT_TRUE(contains(output, "n/a: CUDA only")) << output;
  for (const char* ext : {".md", ".csv", ".json", ".html"})
    EXPECT_TRUE(std::filesystem::exists(prefix + ext)) << prefix + ext;
}

TEST(BenchCommand, BadRowExitsTwoNamingTheFlag) {
  const auto [code, output] = test::cli_run("bench --rows baseline,warp-speed --device cpu");
  EXPECT_EQ(code, 2) << output;
  EXPECT_TRUE(contains(output, "--rows")) << output;
}

}  // namespace
}  // namespace fastloop
