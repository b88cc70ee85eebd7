// `fastloop export` to TorchScript and ONNX for small_cnn, resnet18 and mobilenet_v2 after a few training steps
// (so BatchNorm statistics are no longer the initial ones): torch::jit::load in C++ and torch.jit.load in Python
// (tests/export_check.py) give fastloop's evaluation logits on the test split within 1e-5, folded and unfolded
// (in Python unfolded on small_cnn only);
// ONNX Runtime gives the same top-1 and logits within 1e-4 with the ModelInfo in metadata_props; bad input exits 2.
#include "test_support.h"
#include "golden_support.h"
#include "fastloop/data/loader/loader.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/io/weights.h"
#include "fastloop/models/fold_bn.h"
#include "fastloop/models/model_info.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/evaluate.h"
#include "fastloop/train/trainer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/script.h>
#include <torch/torch.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <vector>

using namespace fastloop;
namespace fs = std::filesystem;

namespace {

constexpr double kTorchScriptTol = 1e-5;  // max |Δ logit| ÷ max(1, max |logit|)
constexpr double kOnnxTol = 1e-4;
const std::string kData = "synthetic:3x16x16:96";  // 3 steps of 32; the test split: 512 images, 10 classes

/// A trained run and fastloop's evaluation of its test split: the inputs as the eval loader made them, the
/// logits of the checkpoint's model on them, unfolded and with BatchNorm folded.
struct TrainedRun {
  std::string dir;
  ModelInfo info;
  at::Tensor inputs, logits, logits_folded;
  std::vector<std::string> parameter_names, buffer_names;
};

at::Tensor forward_all(ClassifierImpl& model, const std::vector<at::Tensor>& batches) {
  std::vector<at::Tensor> out;
  for (const auto& b : batches) out.push_back(model.forward(b));
  return at::cat(out);
}

/// The folder of the trained runs, which this file's tests share (one training per model and test binary):
/// made with mkdtemp, removed when the binary exits.
const std::string& runs_dir() {
  static const struct Dir {
    std::string path = (std::filesystem::temp_directory_path() / "fastloop_export_XXXXXX").string();
    Dir() {
      if (!::mkdtemp(path.data())) throw std::runtime_error("mkdtemp failed for " + path);
    }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } dir;
  return dir.path;
}

/// `name`: a model, or "MODEL_imagenet" for its ImageNet stem (on 32 px: ResNet's max-pool is in the graph).
const TrainedRun& trained(const std::string& name) {
  static std::map<std::string, TrainedRun> runs;  // one training per model and test binary
  if (auto it = runs.find(name); it != runs.end()) return it->second;
  TrainedRun run;
  run.dir = runs_dir() + "/" + name;
  std::filesystem::create_directories(run.dir);
  const bool imagenet = name.size() > 9 && name.substr(name.size() - 9) == "_imagenet";
  TrainConfig config = test::tiny_config(96, 32);
  config.data.source = imagenet ? "synthetic:3x32x32:96" : kData;
  config.model.name = imagenet ? name.substr(0, name.size() - 9) : name;
  if (imagenet) config.model.stem = "imagenet";
  config.run.checkpoint_dir = run.dir;
  TrainControl quiet;
  quiet.progress = false;
  train(config, quiet);

  Checkpoint checkpoint = Checkpoint::read(run.dir + "/last.ckpt");
  run.info = model_info_from_json(checkpoint.model_info_json(), "last.ckpt");
  Classifier model = model_make_for(config.model, run.info.channels, static_cast<int64_t>(run.info.classes.size()));
  checkpoint.restore(*model, nullptr, /*rng=*/false);
  model->eval();
  for (const auto& p : model->named_parameters()) run.parameter_names.push_back(p.key());
  for (const auto& b : model->named_buffers()) run.buffer_names.push_back(b.key());
  const DatasetSplits data = data_load(config.data);
  Loader loader(data.test, eval_loader_options(128, 1, EvalOptions{}));
  loader.start_epoch(0);
  std::vector<at::Tensor> batches;
  while (auto batch = loader.next()) batches.push_back(batch->images.clone());
  c10::InferenceMode guard;
  run.inputs = at::cat(batches);
  run.logits = forward_all(*model, batches);
  BatchNormFolding folding(*model);
  run.logits_folded = forward_all(*model, batches);
  return runs[name] = run;
}

double scaled_max_diff(const at::Tensor& got, const at::Tensor& want) {
  const double scale = std::max(1.0, want.abs().max().item<double>());
  return (got - want).abs().max().item<double>() / scale;
}

int64_t tensor_constants(const torch::jit::Graph& graph) {
  int64_t n = 0;
  for (const auto* node : graph.nodes())
    if (node->kind() == c10::prim::Constant && node->output()->type()->isSubtypeOf(*c10::TensorType::get())) ++n;
  return n;
}

}  // namespace

// Outside the anonymous namespace: in a unity batch the TEST_P classes deriving from it would otherwise
// have a base of internal linkage in an "included" file (GCC's -Wsubobject-linkage).
class ExportModels : public testing::TestWithParam<std::string> {};

TEST_P(ExportModels, TorchScriptLoadsInLibTorchWithFastloopsLogitsAndItsInfo) {
  const TrainedRun& run = trained(GetParam());
  test::ThreadCount threads(1);
  for (const bool fold : {false, true}) {
    SCOPED_TRACE(fold ? "--fold-bn" : "unfolded");
    const std::string out = run.dir + (fold ? "/folded.pt" : "/model.pt");  // the format from the extension
    const auto exported = test::cli_run("export --checkpoint " + run.dir + "/last.ckpt --out " + out + (fold ? " --fold-bn" : ""));
    ASSERT_EQ(exported.code, 0) << exported.output;
    EXPECT_NE(exported.output.find("wrote torchscript"), std::string::npos) << exported.output;

    torch::jit::ExtraFilesMap extra{{kModelInfoExtraFile, ""}};
    torch::jit::Module module = torch::jit::load(out, c10::kCPU, extra);
    module.eval();
    EXPECT_EQ(extra[kModelInfoExtraFile], model_info_to_json(run.info)) << "the ModelInfo round-trips exactly";
    EXPECT_EQ(model_info_from_json(extra[kModelInfoExtraFile], out).classes, run.info.classes);
    // Weights are attributes of the module (prim::GetAttr), not constants baked into the graph.
    EXPECT_EQ(tensor_constants(*module.get_method("forward").graph()), 0);
    std::vector<std::string> parameters, buffers;
    for (const auto& p : module.named_parameters()) parameters.push_back(p.name);
    for (const auto& b : module.named_buffers()) buffers.push_back(b.name);
    if (!fold) {
      EXPECT_EQ(parameters, run.parameter_names);
      EXPECT_EQ(buffers, run.buffer_names);
    } else {
      EXPECT_TRUE(buffers.empty()) << "every BatchNorm folded away, its running statistics with it";
      EXPECT_LT(parameters.size(), run.parameter_names.size());
    }

    c10::InferenceMode guard;
    const at::Tensor want = fold ? run.logits_folded : run.logits;
    const at::Tensor got = module.forward({run.inputs}).toTensor();
    ASSERT_EQ(got.sizes(), want.sizes());
    EXPECT_LE(scaled_max_diff(got, want), kTorchScriptTol);
    EXPECT_TRUE(got.argmax(1).equal(want.argmax(1)));
    // Any batch size: the trace keeps the batch dimension free (batch 1 is what latency measures).
    const at::Tensor one = module.forward({run.inputs.slice(0, 5, 6)}).toTensor();
    EXPECT_LE(scaled_max_diff(one, want.slice(0, 5, 6)), kTorchScriptTol);
  }
}

TEST_P(ExportModels, PythonTorchJitLoadAndOnnxRuntimeGiveFastloopsLogitsAndMetadata) {
  const std::string python = FASTLOOP_PYTHON;
  if (!fs::exists(python) || test::shell_run(test::python_word() + " -c 'import onnx, onnxruntime'").code != 0)
    GTEST_SKIP() << "needs the project venv's python with onnx and onnxruntime (" << python << ")";
  const TrainedRun& run = trained(GetParam());
  // Folded on every model; unfolded (BatchNorm and its running statistics in the file) on small_cnn alone:
  // each pass starts three Pythons (two exports, one check: ~20 s), and LibTorch's test above loads both.
  std::vector<bool> folds = {true};
  if (GetParam() == "small_cnn") folds.insert(folds.begin(), false);
  for (const bool fold : folds) {
    SCOPED_TRACE(fold ? "--fold-bn" : "unfolded");
    const std::string stem = run.dir + (fold ? "/py_folded" : "/py_model");
    const std::string flags = fold ? " --fold-bn" : "";
    for (const char* format : {"torchscript", "onnx"}) {
      const std::string out = stem + (std::string(format) == "onnx" ? ".onnx" : ".pt");
      const auto exported = test::cli_run("export --format " + std::string(format) + " --checkpoint " + run.dir +
                                          "/last.ckpt --out " + out + flags + " --python " + test::python_word());
      ASSERT_EQ(exported.code, 0) << exported.output;
    }
    const at::Tensor want = fold ? run.logits_folded : run.logits;
    safetensors_write(stem + "_expected.safetensors", {{"inputs", run.inputs}, {"logits", want}}, {{"format", "pt"}});
    const auto checked = test::shell_run(test::python_word() + " " + test::quoted(FASTLOOP_TEST_DIR "/export_check.py") + " --expected " + stem +
                                         "_expected.safetensors --torchscript " + stem + ".pt --onnx " + stem + ".onnx");
    ASSERT_EQ(checked.code, 0) << checked.output;
    const auto r = nlohmann::json::parse(checked.output.substr(checked.output.rfind('{', checked.output.find("\"n\""))));
    const double scale = std::max(1.0, want.abs().max().item<double>());
    const int64_t n = run.inputs.size(0);
    ASSERT_EQ(r["n"].get<int64_t>(), n);
    EXPECT_LE(r["torchscript"]["max_abs"].get<double>() / scale, kTorchScriptTol) << r.dump();
    EXPECT_EQ(r["torchscript"]["top1_agree"].get<int64_t>(), n);
    EXPECT_EQ(r["torchscript"]["info"].dump(), nlohmann::json::parse(model_info_to_json(run.info)).dump());
    EXPECT_LE(r["onnx"]["max_abs"].get<double>() / scale, kOnnxTol) << r.dump();
    EXPECT_EQ(r["onnx"]["top1_agree"].get<int64_t>(), n) << "ONNX Runtime's top-1 differs on the test split";
    const auto& meta = r["onnx"]["metadata"];
    ASSERT_TRUE(meta.contains(kModelInfoMetadataKey)) << meta.dump();
    EXPECT_EQ(model_info_from_json(meta[kModelInfoMetadataKey].get<std::string>(), "onnx").classes, run.info.classes);
    EXPECT_EQ(nlohmann::json::parse(meta["classes"].get<std::string>()).get<std::vector<std::string>>(), run.info.classes);
    EXPECT_EQ(meta["image_size"], std::to_string(run.info.height) + "x" + std::to_string(run.info.width));
    EXPECT_EQ(meta["layout"], "NCHW");
    EXPECT_FALSE(meta["mean"].get<std::string>().empty());
    EXPECT_FALSE(meta["std"].get<std::string>().empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ExportModels, testing::Values("small_cnn", "resnet18", "mobilenet_v2", "resnet18_imagenet"));

TEST(Export, SafetensorsCarryTheModelInfo) {
  const TrainedRun& run = trained("small_cnn");
  const std::string out = run.dir + "/w.safetensors";
  const auto exported = test::cli_run("export --checkpoint " + run.dir + "/last.ckpt --out " + out);
  ASSERT_EQ(exported.code, 0) << exported.output;
  const auto metadata = safetensors_read(out).header.metadata;
  ASSERT_TRUE(metadata.count(kModelInfoMetadataKey));
  EXPECT_EQ(metadata.at(kModelInfoMetadataKey), model_info_to_json(run.info));
}

TEST(Export, TorchScriptModelIsSavedAsItsOwnScriptModuleAndRefusesFoldBn) {
  const test::TempDir tmp;
  const std::string dir = tmp.path();
  TrainConfig config = test::tiny_config(16, 8);
  config.data.source = "synthetic:3x16x16:16";
  config.model.name = "torchscript:" + test::kTorchScriptDir + "resnet.pt";
  config.run.checkpoint_dir = dir;
  TrainControl quiet;
  quiet.progress = false;
  train(config, quiet);
  const auto exported = test::cli_run("export --checkpoint " + dir + "/last.ckpt --out " + dir + "/m.pt");
  ASSERT_EQ(exported.code, 0) << exported.output;
  auto model = model_make(ModelOptions(config.model.name));
  Checkpoint::read(dir + "/last.ckpt").restore(*model, nullptr, false);
  model->eval();
  torch::jit::ExtraFilesMap extra{{kModelInfoExtraFile, ""}};
  auto module = torch::jit::load(dir + "/m.pt", c10::kCPU, extra);
  EXPECT_FALSE(extra[kModelInfoExtraFile].empty());
  c10::InferenceMode guard;
  const auto x = torch::randn({2, 3, 16, 16});
  EXPECT_LE(scaled_max_diff(module.forward({x}).toTensor(), model->forward(x)), kTorchScriptTol);
  const auto fold = test::cli_run("export --fold-bn --checkpoint " + dir + "/last.ckpt --out " + dir + "/f.pt");
  EXPECT_EQ(fold.code, 2) << fold.output;
  EXPECT_NE(fold.output.find("--fold-bn: the TorchScript model"), std::string::npos) << fold.output;
}

TEST(Export, BadInputExitsTwoWithOneClearMessage) {
  const TrainedRun& run = trained("small_cnn");
  const std::string checkpoint = run.dir + "/last.ckpt";
  auto expect_refused = [](const std::string& args, const std::string& says) {
    const auto r = test::cli_run("export " + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << args << "\n" << r.output;
  };
  const std::string corrupt = run.dir + "/corrupt.ckpt";
  std::ofstream(corrupt) << "not a checkpoint at all";
  expect_refused("--checkpoint " + corrupt + " --out " + run.dir + "/c.pt", "corrupt.ckpt");
  for (const char* ext : {".pt", ".onnx", ".safetensors"})
    expect_refused("--checkpoint " + checkpoint + " --out " + run.dir + "/no/such/folder/m" + ext, "cannot write");
  expect_refused("--format onnx --checkpoint " + checkpoint + " --out " + run.dir + "/m.pt", "names another format");
  expect_refused("--format tflite --checkpoint " + checkpoint + " --out " + run.dir + "/m.tflite", "expected safetensors, torchscript or onnx");
  if (test::shell_run("python3 -c 'import torch, onnx'").code != 0)  // Debian's python3: no torch
    expect_refused("--format onnx --python python3 --checkpoint " + checkpoint + " --out " + run.dir + "/m.onnx", "lacks");
  EXPECT_FALSE(fs::exists(run.dir + "/m.onnx"));
  for (const auto& entry : fs::directory_iterator(run.dir))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << "left behind: " << entry.path();
}
