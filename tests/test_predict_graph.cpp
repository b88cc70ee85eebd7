// fastloop predict's optimized inference graph (models/inference_graph.h: traced, frozen, oneDNN
// convolutions with fused activations) against the same model run eagerly (--no-graph): each built-in
// model kind and layout, a TorchScript export, batches of any size; and a bf16 model, which runs eagerly.
#include "cat_dog_folder.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fastloop::predict_graph {
namespace {

struct GraphRow {
  std::vector<int64_t> index;
  std::vector<double> prob;
};

// `fastloop predict --topk 2 ARGS --out OUT.jsonl` at batch 4 (10 images: the last batch holds 2): its rows
// by path, and what it printed.
std::map<std::string, GraphRow> graph_predict(const std::string& args, const std::string& out, std::string* output) {
  const auto run = test::cli_run("predict --topk 2 --threads 2 --batch-size 4 --out " + out + " " + args);
  EXPECT_EQ(run.code, 0) << run.output;
  if (output) *output = run.output;
  std::map<std::string, GraphRow> rows;
  std::ifstream in(out);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    rows[j.at("path").get<std::string>()] = {j.at("index").get<std::vector<int64_t>>(),
                                             j.at("prob").get<std::vector<double>>()};
  }
  return rows;
}

// The graph's rows against the eager ones: the same images, classes and probabilities within `tolerance`;
// and the images must differ in their probabilities, or the comparison would prove nothing.
void expect_graph_matches_eager(const std::string& args, const test::TempDir& tmp, double tolerance) {
  std::string graph_output;
  const auto graph = graph_predict(args, tmp / "graph.jsonl", &graph_output);
  const auto eager = graph_predict("--no-graph " + args, tmp / "eager.jsonl", nullptr);
  EXPECT_EQ(graph_output.find("ran eagerly"), std::string::npos) << "a float32 model runs as its graph\n" << graph_output;
  ASSERT_EQ(graph.size(), 10u);
  ASSERT_EQ(eager.size(), graph.size());
  std::set<double> first;
  for (const auto& [path, want] : eager) {
    const auto got = graph.find(path);
    ASSERT_NE(got, graph.end()) << path;
    EXPECT_EQ(got->second.index, want.index) << path;
    for (size_t k = 0; k < want.prob.size(); ++k) EXPECT_NEAR(got->second.prob.at(k), want.prob[k], tolerance) << path;
    first.insert(want.prob.at(0));
  }
  EXPECT_GT(first.size(), 1u) << "every image got the same probabilities";
}

// Trains MODEL_FLAGS for a few steps in float32 at 32 px (--lr 0.01 keeps its softmax from saturating)
// and returns the checkpoint.
std::string graph_trained(const std::string& data, const std::string& model_flags, const test::TempDir& tmp) {
  const auto run = test::cli_run("train --data imagefolder:" + data + " --image-size 32 --batch-size 5 --max-steps 4 "
                                 "--lr 0.01 --perf manual --threads 2 --workers 1 " + model_flags +
                                 " --checkpoint-dir " + tmp / "ckpt");
  EXPECT_EQ(run.code, 0) << run.output;
  return tmp / "ckpt/last.ckpt";
}

TEST(PredictGraph, EveryModelKindAndLayoutPredictsAsItsEagerSelf) {
  const test::TempDir tmp;
  const std::string data = test::cat_dog_folder_write(tmp / "data");
  for (const std::string flags : {"--model small_cnn", "--model resnet18 --stem imagenet",
                                  "--model mobilenet_v2 --stem imagenet --channels-last"}) {
    SCOPED_TRACE(flags);
    const test::TempDir run;
    const std::string checkpoint = graph_trained(data, flags, run);
    expect_graph_matches_eager("--checkpoint " + checkpoint + " " + data + "/val", run, 1e-5);
  }
}

TEST(PredictGraph, ATorchScriptExportPredictsAsItsEagerSelf) {
  const test::TempDir tmp;
  const std::string data = test::cat_dog_folder_write(tmp / "data");
  const std::string checkpoint = graph_trained(data, "--model resnet18 --stem imagenet", tmp);
  const auto exported = test::cli_run("export --checkpoint " + checkpoint + " --out " + tmp / "r.pt");
  ASSERT_EQ(exported.code, 0) << exported.output;
  expect_graph_matches_eager("--model torchscript:" + tmp / "r.pt" + " " + data + "/val", tmp, 1e-5);
}

TEST(PredictGraph, ABf16ModelRunsEagerlyAndSaysWhy) {
  const test::TempDir tmp;
  const std::string data = test::cat_dog_folder_write(tmp / "data");
  const std::string checkpoint = graph_trained(data, "--model small_cnn --amp bf16", tmp);
  std::string output;
  const auto graph = graph_predict("--checkpoint " + checkpoint + " " + data + "/val", tmp / "graph.jsonl", &output);
  EXPECT_NE(output.find("predict: the model ran eagerly: it was trained under bf16 autocast"), std::string::npos) << output;
  const auto eager = graph_predict("--no-graph --checkpoint " + checkpoint + " " + data + "/val", tmp / "eager.jsonl", nullptr);
  ASSERT_EQ(graph.size(), 10u);
  for (const auto& [path, want] : eager) {  // the same eager path both times: equal rows
    EXPECT_EQ(graph.at(path).index, want.index) << path;
    EXPECT_EQ(graph.at(path).prob, want.prob) << path;
  }
}

TEST(PredictGraph, BenchLatencySaysWhetherItTimedTheGraph) {
  const test::TempDir tmp;
  const std::string data = test::cat_dog_folder_write(tmp / "data");
  const std::string checkpoint = graph_trained(data, "--model small_cnn", tmp);
  for (const bool graph : {true, false}) {
    const auto run = test::cli_run("bench latency --checkpoint " + checkpoint + " --warmup 1 --iterations 3" +
                                   (graph ? "" : " --no-graph"));
    ASSERT_EQ(run.code, 0) << run.output;
    const auto json = nlohmann::json::parse(run.output.substr(run.output.find('{')));
    EXPECT_EQ(json.at("graph").get<bool>(), graph);
    EXPECT_EQ(json.at("seconds").size(), 3u);
  }
}

}  // namespace
}  // namespace fastloop::predict_graph
