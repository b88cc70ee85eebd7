// Helpers of the tests that compare with golden files written by the venv's PyTorch: where those files
// live, the TorchScript goldens' reader, and one intra-op thread while a comparison runs (the golden
// makers run single-threaded, so reductions add in the same order).
#pragma once

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace fastloop::test {

inline const std::string kImageGoldenDir = FASTLOOP_TEST_DIR "/golden/images/";
/// The folder of the goldens made by the venv's PyTorch (tests/tools/make_test_goldens.py): the build's, or
/// $FASTLOOP_GOLDEN_DIR where set — scripts/test_capabilities.sh makes them again under the ATEN_CPU_CAPABILITY
/// it tests, so fastloop is compared with what PyTorch computes with the same kernels.
inline std::string golden_dir() {
  const char* dir = std::getenv("FASTLOOP_GOLDEN_DIR");
  return dir != nullptr && *dir != '\0' ? std::string(dir) : std::string(FASTLOOP_GOLDEN_DIR);
}
inline const std::string kTorchScriptDir = golden_dir() + "/torchscript/";

/// tests/golden/torchscript/FAMILY.json (tests/tools/make_torchscript_golden.py).
inline nlohmann::json torchscript_golden(const std::string& family) {
  std::ifstream in(kTorchScriptDir + family + ".json");
  EXPECT_TRUE(in) << "missing tests/golden/torchscript/" << family << ".json; run tests/tools/make_torchscript_golden.py";
  return nlohmann::json::parse(in);
}

/// tests/golden/recipe/NAME (tests/tools/make_recipe_golden.py and make_recipe94_golden.py: machine-independent).
inline nlohmann::json recipe_golden(const std::string& name) {
  std::ifstream in(std::string(FASTLOOP_TEST_DIR "/golden/recipe/") + name);
  EXPECT_TRUE(in) << "missing tests/golden/recipe/" << name << "; run tests/tools/make_recipe_golden.py and make_recipe94_golden.py";
  return nlohmann::json::parse(in);
}

/// The state dict in PyTorch's order: modules pre-order, each one's parameters then its buffers.
inline std::vector<std::pair<std::string, at::Tensor>> state_entries(torch::nn::Module& model) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& item : model.named_modules("", /*include_self=*/true)) {
    const std::string prefix = item.key().empty() ? "" : item.key() + ".";
    for (const auto& p : item.value()->named_parameters(/*recurse=*/false)) out.emplace_back(prefix + p.key(), p.value());
    for (const auto& b : item.value()->named_buffers(/*recurse=*/false)) out.emplace_back(prefix + b.key(), b.value());
  }
  return out;
}

/// Sets LibTorch's intra-op threads for a scope and restores them.
class ThreadCount {
 public:
  explicit ThreadCount(int n) : saved_(at::get_num_threads()) { at::set_num_threads(n); }
  ~ThreadCount() { at::set_num_threads(saved_); }

 private:
  int saved_;
};

}  // namespace fastloop::test
