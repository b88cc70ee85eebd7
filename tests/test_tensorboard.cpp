// --tensorboard: the event-file encoding against protobuf's own bytes and the CRC check value, and a tiny
// training whose files TensorBoard's own reader (the venv's tensorboard package) reads back: every tag,
// one point per report, the test accuracy the run returned. The GPU test adds the fp16 loss scale.
#include "test_support.h"
#include "fastloop/core/errors.h"
#include "fastloop/io/tensorboard.h"
#include "fastloop/train/tensorboard_log.h"
#include "fastloop/train/trainer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/cuda.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace fastloop {
namespace {

std::string hex(const std::string& bytes) {
  std::string out;
  char buf[3];
  for (unsigned char c : bytes) std::snprintf(buf, sizeof(buf), "%02x", c), out += buf;
  return out;
}

std::vector<std::string> event_files(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().filename().string().rfind("events.out.tfevents.", 0) == 0) files.push_back(entry.path().string());
  return files;
}

/// {tag: [[step, value], ...]} as TensorBoard's EventAccumulator loads `dir`.
nlohmann::json tensorboard_read(const std::string& dir) {
  const std::string script = dir + "/read.py";
  std::ofstream(script) << "import json, sys\n"
                           "from tensorboard.backend.event_processing import event_accumulator as ea\n"
                           "acc = ea.EventAccumulator(sys.argv[1]); acc.Reload()\n"
                           "print('SCALARS ' + json.dumps({t: [[s.step, s.value] for s in acc.Scalars(t)]"
                           " for t in acc.Tags()['scalars']}))\n";
  const auto result = test::shell_run(test::python_word() + " " + script + " " + dir);
  const size_t at = result.output.find("SCALARS ");
  if (result.code != 0 || at == std::string::npos) ADD_FAILURE() << result.output;
  return at == std::string::npos ? nlohmann::json::object() : nlohmann::json::parse(result.output.substr(at + 8));
}

TEST(TensorBoard, Crc32cIsCastagnoliAndMaskedAsTfRecord) {
  const std::string check = "123456789";  // the CRC catalogue's check input
  EXPECT_EQ(crc32c(check.data(), check.size()), 0xe3069283u);
  // tensorboard.compat.tensorflow_stub.pywrap_tensorflow.masked_crc32c(b"123456789")
  EXPECT_EQ(crc32c_masked(check.data(), check.size()), 0xc78ab0e5u);
}

TEST(TensorBoard, ScalarEventHasProtobufsBytes) {
  // event_pb2.Event(wall_time=1.5, step=3) with summary.value.add(tag='a', simple_value=2.0), serialized.
  EXPECT_EQ(hex(tensorboard_scalar_event(1.5, 3, "a", 2.0f)), "09000000000000f83f10032a0a0a080a01611500000040");
  const std::string framed = tfrecord_frame("abc");
  ASSERT_EQ(framed.size(), 8u + 4u + 3u + 4u);
  EXPECT_EQ(hex(framed.substr(0, 8)), "0300000000000000");
  EXPECT_EQ(framed.substr(12, 3), "abc");
}

TEST(TensorBoard, EachStartWritesANewFileAndABadFolderIsAnInputError) {
  const test::TempDir tmp;
  const std::string dir = tmp.sub("tb_files");
  const std::string first = TensorBoardWriter(dir + "/run", 0).path();
  const std::string second = TensorBoardWriter(dir + "/run", 0).path();
  EXPECT_NE(first, second);
  EXPECT_EQ(event_files(dir + "/run").size(), 2u);
  std::ofstream(dir + "/file") << "x";
  EXPECT_THROW(TensorBoardWriter(dir + "/file/run", 0), InputError);
}

TEST(TensorBoard, TrainingRunIsReadBackByTensorBoardsReader) {
  const test::TempDir tmp;
  FASTLOOP_SKIP_WITHOUT_VENV();
  const std::string dir = tmp.sub("tb_train");
  TrainConfig config = test::tiny_config(512, 32);  // 16 steps an epoch
  config.run.epochs = 2;
  config.run.log_every = 4;
  config.run.tensorboard = dir;
  int64_t reports = 0;
  TrainControl control;
  control.progress = false;
  control.on_report = [&](const StepReport&) { ++reports; };
  const TrainSummary summary = train(config, control);
  ASSERT_EQ(event_files(dir).size(), 1u);
  const nlohmann::json scalars = tensorboard_read(dir);
  for (const char* tag : {"train/loss", "train/lr", "train/img_per_s", "train/data_wait_share"}) {
    ASSERT_TRUE(scalars.contains(tag)) << tag << " in " << scalars.dump();
    EXPECT_EQ(static_cast<int64_t>(scalars[tag].size()), reports) << tag;
  }
  EXPECT_FALSE(scalars.contains("amp/loss_scale")) << "no scaler without --amp fp16";
  ASSERT_EQ(scalars["train/loss"].size(), 8u);  // every 4th of 32 steps
  EXPECT_EQ(scalars["train/loss"][0][0].get<int64_t>(), 4);
  EXPECT_EQ(scalars["train/loss"][7][0].get<int64_t>(), 32);
  for (const auto& point : scalars["train/data_wait_share"]) {
    EXPECT_GE(point[1].get<double>(), 0.0);
    EXPECT_LE(point[1].get<double>(), 1.0);
  }
  ASSERT_EQ(scalars["test/accuracy"].size(), 2u);  // per epoch, at its last step
  EXPECT_EQ(scalars["test/accuracy"][1][0].get<int64_t>(), 32);
  EXPECT_NEAR(scalars["test/accuracy"][1][1].get<double>(), summary.test.accuracy, 1e-6);
  EXPECT_NEAR(scalars["test/loss"][1][1].get<double>(), summary.test.loss, 1e-5 * std::max(1.0, summary.test.loss));
}

TEST(TensorBoard, LossScaleIsLoggedWhenAScalerRuns) {
  const test::TempDir tmp;
  FASTLOOP_SKIP_WITHOUT_VENV();
  const std::string dir = tmp.sub("tb_scale");
  {
    TensorBoardLog log(dir, 0);
    StepReport report;
    report.step = 10;
    log.step(report, 0.25, 65536.0);
    log.step(report, 0.5, 0.0);  // no scaler: no point
  }
  const nlohmann::json scalars = tensorboard_read(dir);
  ASSERT_TRUE(scalars.contains("amp/loss_scale")) << scalars.dump();
  ASSERT_EQ(scalars["amp/loss_scale"].size(), 1u);
  EXPECT_EQ(scalars["amp/loss_scale"][0][1].get<double>(), 65536.0);
  EXPECT_EQ(scalars["train/data_wait_share"][1][1].get<double>(), 0.5);
}

TEST(TensorBoard, Fp16RunLogsItsLossScale_CUDA) {
  const test::TempDir tmp;
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible";
  FASTLOOP_SKIP_WITHOUT_VENV();
  const std::string dir = tmp.sub("tb_fp16");
  TrainConfig config = test::tiny_config(512, 32);
  config.perf.device = "cuda";
  config.perf.amp = "fp16";
  config.run.log_every = 4;
  config.run.tensorboard = dir;
  TrainControl control;
  control.progress = false;
  train(config, control);
  const nlohmann::json scalars = tensorboard_read(dir);
  ASSERT_TRUE(scalars.contains("amp/loss_scale")) << scalars.dump();
  EXPECT_EQ(scalars["amp/loss_scale"].size(), scalars["train/loss"].size());
  EXPECT_GT(scalars["amp/loss_scale"][0][1].get<double>(), 1.0);
}

}  // namespace
}  // namespace fastloop
