// doctor's model audit and --perf auto's decisions.
#include "fastloop/models/audit.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/perf_auto.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

using namespace fastloop;

namespace {
struct BiasBeforeBnImpl : torch::nn::Module {
  BiasBeforeBnImpl() {
    conv = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 12, 3).bias(true)));
    bn = register_module("bn", torch::nn::BatchNorm2d(12));
    fc = register_module("fc", torch::nn::Linear(12, 10));
  }
  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};
  torch::nn::Linear fc{nullptr};
};

bool has(const std::vector<AuditFinding>& findings, const std::string& where, const std::string& what_part) {
  for (const auto& f : findings)
    if (f.where == where && f.what.find(what_part) != std::string::npos && !f.fix.empty()) return true;
  return false;
}
}  // namespace

TEST(Doctor, AuditFlagsConvBiasBeforeBatchNormAndSizesNotMultipleOf8) {
  BiasBeforeBnImpl model;
  auto findings = model_audit(model, 100, 3);
  EXPECT_TRUE(has(findings, "conv", "bias")) << "conv bias before BN";
  EXPECT_TRUE(has(findings, "conv", "output channels 12"));
  EXPECT_TRUE(has(findings, "fc", "in_features 12"));
  EXPECT_FALSE(has(findings, "fc", "out_features")) << "the class count is exempt";
  EXPECT_FALSE(has(findings, "conv", "input channels")) << "the image channels are exempt";
  EXPECT_TRUE(has(findings, "batch", "batch size 100"));
}

TEST(Doctor, OurResNetsHaveNoConvBiasBeforeBatchNorm) {
  for (const char* name : {"resnet18", "resnet50", "mobilenet_v2", "small_cnn"}) {
    auto model = model_make(ModelOptions(name).in_channels(3).num_classes(10));
    for (const auto& f : model_audit(*model, 128, 3)) EXPECT_EQ(f.what.find("bias"), std::string::npos) << name << " " << f.where;
  }
}

TEST(Doctor, PerfAutoOnCpuWithoutNativeBf16KeepsAmpOffAndSaysWhy) {
  TrainConfig config;
  PerfHardware hw;
  hw.cpu.logical_cores = 8;
  auto lines = perf_auto_apply(config, hw);
  EXPECT_EQ(config.perf.amp, "off");
  EXPECT_EQ(config.perf.device, "cpu");
  EXPECT_TRUE(config.perf.fused_optim);
  EXPECT_FALSE(config.perf.channels_last);  // neither AVX2 nor AVX-512: not measured
  EXPECT_EQ(config.data.workers, 0);        // Fashion-MNIST is decoded in memory: the training thread copies it
  bool says_why = false;
  for (const auto& line : lines) says_why |= line.find("30x slower") != std::string::npos;
  EXPECT_TRUE(says_why);
}

TEST(Doctor, PerfAutoOnAnAvx2CpuTrainsChannelsLastAndLoadsFilesWithWorkers) {
  TrainConfig config;
  config.data.source = "imagefolder:/data/pets";
  PerfHardware hw;
  hw.cpu.logical_cores = 8;
  hw.cpu.avx2 = true;
  auto lines = perf_auto_apply(config, hw);
  EXPECT_TRUE(config.perf.channels_last);
  EXPECT_EQ(config.data.workers, 2);  // images to decode: one worker per 4 cores
  bool says_why = false;
  for (const auto& line : lines) says_why |= line.find("1.34x faster in NHWC") != std::string::npos;
  EXPECT_TRUE(says_why);
  TrainConfig transformed;  // in memory, but a user's pipeline per image: workers again
  transformed.data.transform = "RandomRotation(10)";
  perf_auto_apply(transformed, hw);
  EXPECT_EQ(transformed.data.workers, 2);
  TrainConfig resnet;  // NHWC measured to pay for small_cnn on AVX2, not for the ResNets
  resnet.model.name = "resnet50";
  perf_auto_apply(resnet, hw);
  EXPECT_FALSE(resnet.perf.channels_last);
}

TEST(Doctor, PerfAutoOnCpuWithNativeBf16PicksBf16AutocastAndSaysWhy) {
  TrainConfig config;
  PerfHardware hw;
  hw.cpu.logical_cores = 2;
  hw.cpu.avx512 = true;
  hw.cpu.native_bf16 = true;
  auto lines = perf_auto_apply(config, hw);
  EXPECT_EQ(config.perf.amp, "bf16");
  EXPECT_TRUE(config.perf.channels_last);
  EXPECT_FALSE(config.perf.tf32);
  bool says_why = false;
  for (const auto& line : lines) says_why |= line.rfind("amp bf16: this CPU has native bf16", 0) == 0;
  EXPECT_TRUE(says_why);
}

TEST(Doctor, PerfAutoKeepsWhatTheCommandLineGave) {
  TrainConfig config;
  config.perf.amp = "off";
  config.perf.channels_last = false;
  config.data.workers = 0;
  PerfHardware hw;
  hw.cpu.logical_cores = 8;
  hw.cpu.avx512 = true;
  hw.cpu.native_bf16 = true;
  auto lines = perf_auto_apply(config, hw, {"--amp", "--channels-last", "--workers"});
  EXPECT_EQ(config.perf.amp, "off");  // auto would pick bf16 on this CPU
  EXPECT_FALSE(config.perf.channels_last);
  EXPECT_EQ(config.data.workers, 0);
  EXPECT_TRUE(config.perf.fused_optim);  // what was not given is still decided
  int kept = 0;
  for (const auto& line : lines) kept += line.find("kept as given on the command line") != std::string::npos;
  EXPECT_EQ(kept, 3);
}

TEST(Doctor, TrainWithPerfAutoLetsAnExplicitAmpFlagWin) {
  const auto run = test::cli_run("train --perf auto --amp off --no-channels-last --model small_cnn --device cpu "
                                 "--data synthetic:1x12x12:64 --batch-size 16 --max-steps 1 --epochs 1 2>&1");
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("perf auto: --amp kept as given on the command line"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("\"perf.amp\":\"off\""), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("\"perf.channels_last\":false"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("\"perf.fused_optim\":true"), std::string::npos) << "the rest is still decided\n" << run.output;
}

TEST(Doctor, PerfAutoOnAmpereClassCudaPicksBf16ChannelsLastAndCudnnBenchmark) {
  TrainConfig config;
  PerfHardware hw;
  hw.cpu.logical_cores = 16;
  hw.cuda = true;
  hw.cuda_major = 9;
  auto lines = perf_auto_apply(config, hw);
  EXPECT_EQ(config.perf.amp, "bf16");
  EXPECT_TRUE(config.perf.channels_last);
  EXPECT_TRUE(config.perf.cudnn_benchmark);
  EXPECT_TRUE(config.perf.tf32);
  EXPECT_EQ(config.data.workers, 4);
  EXPECT_EQ(config.run.threads, 12);
  EXPECT_GE(lines.size(), 6u);
}
