// Golden parity with PyTorch: CIFAR ResNet18, MobileNetV2 and SmallCNN with formula weights and inputs
// (tests/tools/make_golden.py) must give PyTorch's logits, loss, BN running stats, gradients, and parameters
// after one SGD (nesterov) and one AdamW step. Tolerance: 1e-5 relative, where an entry's magnitude is
// floored at 1e-3 x the RMS of its tensor (so near-zero entries are compared at that absolute scale).
#include "fastloop/models/registry.h"
#include "golden_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cmath>
#include <fstream>

namespace {

using nlohmann::json;
using fastloop::test::state_entries;

constexpr double kRelTol = 1e-5;
constexpr double kFloorOfRms = 1e-3;
constexpr int64_t kSamples = 8;  // entries at (j * (n - 1)) / 7, as in make_golden.py

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// sin(0.37 i + k) in float64, op for op as make_golden.py's wave().
at::Tensor wave(int64_t n, int64_t k) {
  return torch::sin(torch::arange(n, torch::kFloat64).mul(0.37).add(static_cast<double>(k)));
}

void fill_state_(torch::nn::Module& model) {
  torch::NoGradGuard no_grad;
  int64_t k = 0;
  for (auto& [name, t] : state_entries(model)) {
    const int64_t index = k++;
    if (ends_with(name, "num_batches_tracked")) continue;
    auto w = wave(t.numel(), index);
    auto v = ends_with(name, "running_var") ? w.mul(0.1).mul(w).add(1.0) : w.mul(0.05);
    t.copy_(v.to(torch::kFloat32).reshape(t.sizes()));
  }
}

std::vector<double> samples(const at::Tensor& t) {
  auto flat = t.detach().reshape(-1).to(torch::kFloat64);
  const int64_t n = flat.numel();
  std::vector<double> out;
  for (int64_t j = 0; j < kSamples; ++j) out.push_back(flat[(j * (n - 1)) / (kSamples - 1)].item<double>());
  return out;
}

double norm64(const at::Tensor& t) { return t.detach().to(torch::kFloat64).norm().item<double>(); }

void expect_close(double actual, double expected, double floor, const std::string& what) {
  const double tol = kRelTol * std::max(std::abs(expected), floor);
  EXPECT_LE(std::abs(actual - expected), tol) << what << ": C++ " << actual << ", PyTorch " << expected;
}

void expect_samples(const std::vector<double>& actual, const json& expected, double rms, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t j = 0; j < actual.size(); ++j) {
    expect_close(actual[j], expected[j].get<double>(), kFloorOfRms * rms, what + "[" + std::to_string(j) + "]");
  }
}

void check_parity(const std::string& file) {
  std::ifstream in(fastloop::test::golden_dir() + "/" + file);  // tests/tools/make_test_goldens.py, at build time
  ASSERT_TRUE(in) << "missing tests/golden/" << file << "; run tests/tools/make_golden.py";
  const json golden = json::parse(in);
  const json& o = golden["model"];
  fastloop::test::ThreadCount threads(1);
  torch::manual_seed(0);

  auto model = fastloop::model_make(fastloop::ModelOptions(o["name"].get<std::string>())
                                        .stem(o["stem"].get<std::string>())
                                        .in_channels(o["in_channels"].get<int64_t>())
                                        .num_classes(o["num_classes"].get<int64_t>())
                                        .dropout(o.value("dropout", 0.2)));
  std::vector<std::string> names;
  for (const auto& [name, t] : state_entries(*model)) names.push_back(name);
  ASSERT_EQ(json(names), golden["state_names"]) << "state dict names or order differ from PyTorch";
  fill_state_(*model);
  model->train();

  const auto shape = golden["input_shape"].get<std::vector<int64_t>>();
  const int64_t numel = shape[0] * shape[1] * shape[2] * shape[3];
  auto x = torch::sin(torch::arange(numel, torch::kFloat64).mul(0.11).add(0.3)).to(torch::kFloat32).reshape(shape);
  auto labels = torch::tensor(golden["labels"].get<std::vector<int64_t>>(), torch::kInt64);

  auto logits = model->forward(x);
  auto loss = torch::nn::functional::cross_entropy(
      logits, labels, torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(0.1));
  loss.backward();

  const auto& want_logits = golden["logits"];
  ASSERT_EQ(static_cast<size_t>(logits.numel()), want_logits.size());
  const double logits_rms = norm64(logits) / std::sqrt(static_cast<double>(logits.numel()));
  auto flat_logits = logits.detach().reshape(-1).to(torch::kFloat64);
  for (int64_t i = 0; i < logits.numel(); ++i) {
    expect_close(flat_logits[i].item<double>(), want_logits[i].get<double>(), kFloorOfRms * logits_rms,
                 "logits[" + std::to_string(i) + "]");
  }
  expect_close(loss.item<double>(), golden["loss"].get<double>(), 0.0, "loss");

  const auto buffers = model->named_buffers();
  for (const auto& r : golden["running_stats"]) {
    const auto name = r["name"].get<std::string>();
    ASSERT_TRUE(buffers.contains(name)) << name;
    expect_close(norm64(buffers[name]), r["norm"].get<double>(), 0.0, name + " norm");
  }

  auto named = model->named_parameters();
  const auto& want = golden["params"];
  ASSERT_EQ(named.size(), want.size());
  std::vector<at::Tensor> params, originals;
  for (size_t i = 0; i < named.size(); ++i) {
    const auto& p = named[i].value();
    const auto& w = want[i];
    const auto name = w["name"].get<std::string>();
    ASSERT_EQ(named[i].key(), name);
    ASSERT_TRUE(p.grad().defined()) << name << " got no gradient";
    const double rms = w["grad_norm"].get<double>() / std::sqrt(static_cast<double>(p.numel()));
    expect_close(norm64(p.grad()), w["grad_norm"].get<double>(), 0.0, name + " grad norm");
    expect_samples(samples(p.grad()), w["grad"], rms, name + " grad");
    params.push_back(p);
    originals.push_back(p.detach().clone());
  }

  auto check_step = [&](torch::optim::Optimizer&& optimizer, const std::string& key) {
    {
      torch::NoGradGuard no_grad;  // each optimizer starts from the same weights and gradients
      for (size_t i = 0; i < params.size(); ++i) params[i].copy_(originals[i]);
    }
    optimizer.step();
    for (size_t i = 0; i < params.size(); ++i) {
      const auto& w = want[i];
      const auto what = w["name"].get<std::string>() + " after " + key;
      const double expected_norm = w[key + "_norm"].get<double>();
      expect_close(norm64(params[i]), expected_norm, 0.0, what + " norm");
      expect_samples(samples(params[i]), w[key], expected_norm / std::sqrt(static_cast<double>(params[i].numel())),
                     what);
    }
  };
  check_step(torch::optim::SGD(params, torch::optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(5e-4)),
             "sgd");
  check_step(torch::optim::AdamW(params, torch::optim::AdamWOptions(1e-3).weight_decay(1e-2)), "adamw");
}

} // namespace

TEST(Parity, CifarResNet18MatchesPyTorchForwardBackwardAndOneOptimizerStep) {
  check_parity("parity_resnet18.json");
}

TEST(Parity, CifarMobileNetV2MatchesPyTorchForwardBackwardAndOneOptimizerStep) {
  check_parity("parity_mobilenet_v2.json");
}

TEST(Parity, SmallCNNMatchesPyTorchForwardBackwardAndOneOptimizerStep) {
  check_parity("parity_small_cnn.json");
}
