// --profile FILE --profile-steps A:B: a tiny training writes a Chrome trace that parses as JSON, holds the
// model's operators with their input shapes, and marks exactly steps A..B-1; bad ranges are input errors
// before any work. The GPU test finds CUDA kernels in the trace.
#include "test_support.h"
#include "fastloop/core/errors.h"
#include "fastloop/train/profile.h"
#include "fastloop/train/trainer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/cuda.h>

#include <fstream>
#include <set>

namespace fastloop {
namespace {

/// The trace's event names, and whether any operator event carries input shapes.
struct Trace {
  std::set<std::string> names;
  bool shapes = false;
  std::set<std::string> categories;
};

Trace trace_read(const std::string& path) {
  std::ifstream in(path);
  const nlohmann::json trace = nlohmann::json::parse(in);  // throws, failing the test, when not JSON
  Trace out;
  for (const auto& event : trace.at("traceEvents")) {
    if (!event.contains("name")) continue;
    out.names.insert(event["name"].get<std::string>());
    if (event.contains("cat")) out.categories.insert(event["cat"].get<std::string>());
    if (event.contains("args") && event["args"].contains("Input Dims")) out.shapes = true;
  }
  return out;
}

TrainSummary profiled_run(const std::string& path, const std::string& steps, const std::string& device = "cpu") {
  TrainConfig config = test::tiny_config(512, 32);  // 16 steps
  config.perf.device = device;
  config.run.profile = path;
  config.run.profile_steps = steps;
  TrainControl control;
  control.progress = false;
  return train(config, control);
}

TEST(Profile, TraceOfStepsIsChromeJsonWithOperatorsShapesAndStepMarks) {
  const test::TempDir tmp;
  const std::string path = tmp.sub("profile") + "/trace.json";
  profiled_run(path, "2:4");
  const Trace trace = trace_read(path);
  for (const char* op : {"aten::convolution", "aten::addmm", "aten::convolution_backward"})
    EXPECT_TRUE(trace.names.count(op)) << op << " missing from the trace";
  EXPECT_TRUE(trace.shapes) << "record_shapes is on: operators carry \"Input Dims\"";
  EXPECT_TRUE(trace.names.count("ProfilerStep#2"));
  EXPECT_TRUE(trace.names.count("ProfilerStep#3"));
  EXPECT_FALSE(trace.names.count("ProfilerStep#1"));
  EXPECT_FALSE(trace.names.count("ProfilerStep#4"));
}

TEST(Profile, StepsParseAndBadRangesAreInputErrorsBeforeAnyWork) {
  const test::TempDir tmp;
  const ProfileSteps steps = profile_steps_parse("3:5");
  EXPECT_EQ(steps.first, 3);
  EXPECT_EQ(steps.end, 5);
  for (const char* bad : {"5:3", "3:3", "-1:2", "3", "a:b", "3:5x", ""})
    EXPECT_THROW(profile_steps_parse(bad), InputError) << bad;
  TrainConfig config = test::tiny_config();
  config.run.profile_steps = "4:2";
  EXPECT_THROW(config_validate(config), InputError);
  // A range past the run's 16 steps is refused up front, and nothing is written.
  const std::string path = tmp.sub("profile_late") + "/trace.json";
  try {
    profiled_run(path, "20:22");
    ADD_FAILURE() << "no InputError for steps past the run";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--profile-steps 20:22"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Profile, ARangePastTheLastStepKeepsWhatWasRecorded) {
  const test::TempDir tmp;
  const std::string path = tmp.sub("profile_end") + "/trace.json";
  profiled_run(path, "15:40");
  const Trace trace = trace_read(path);
  EXPECT_TRUE(trace.names.count("ProfilerStep#15"));
  EXPECT_TRUE(trace.names.count("aten::convolution"));
}

TEST(Profile, CudaTraceHasGpuKernels_CUDA) {
  const test::TempDir tmp;
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible";
  const std::string path = tmp.sub("profile_cuda") + "/trace.json";
  profiled_run(path, "2:4", "cuda");
  const Trace trace = trace_read(path);
  EXPECT_TRUE(trace.names.count("aten::convolution"));
  EXPECT_TRUE(trace.categories.count("kernel")) << "no GPU kernel events in the trace";
}

}  // namespace
}  // namespace fastloop
