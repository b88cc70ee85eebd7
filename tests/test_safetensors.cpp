// safetensors: files round-trip bit for bit; every malformed input is one InputError naming the tensor
// and value; strict/non-strict/skip loading; and weights move both ways with PyTorch's `safetensors`
// package with logits equal to the reference model's (tests/tools/safetensors_roundtrip.py).
#include "fastloop/core/errors.h"
#include "fastloop/io/safetensors.h"
#include "fastloop/io/weights.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/trainer.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include <sys/wait.h>
#include <unistd.h>

using namespace fastloop;
namespace fs = std::filesystem;

namespace {

/// A file image from a header object and data bytes; the length field may be overridden.
std::vector<uint8_t> image(const nlohmann::json& header, size_t data_bytes, int64_t length = -1) {
  const std::string text = header.dump();
  const uint64_t n = length >= 0 ? static_cast<uint64_t>(length) : text.size();
  std::vector<uint8_t> out(8 + text.size() + data_bytes, 0);
  for (size_t i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(n >> (8 * i));
  for (size_t i = 0; i < text.size(); ++i) out[8 + i] = static_cast<uint8_t>(text[i]);
  return out;
}

nlohmann::json entry(const std::string& dtype, std::vector<int64_t> shape, uint64_t begin, uint64_t end) {
  return {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {begin, end}}};
}

std::string parse_error(const std::vector<uint8_t>& bytes) {
  try {
    safetensors_parse(bytes.data(), bytes.size(), "f.safetensors");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(parsed)";
}

Classifier resnet18_cifar() { return model_make(ModelOptions("resnet18").stem("cifar").num_classes(10)); }

/// Runs tests/tools/safetensors_roundtrip.py; returns its JSON line, or null (with the output) on failure.
nlohmann::json python(const std::string& args, std::string& output) {
  const std::string script = std::string(FASTLOOP_TEST_DIR) + "/tools/safetensors_roundtrip.py";
  FILE* pipe = popen((test::python_word() + " " + test::quoted(script) + " " + args + " 2>&1").c_str(), "r");
  char buffer[4096];
  while (pipe && fgets(buffer, sizeof buffer, pipe)) output += buffer;
  const int status = pipe ? pclose(pipe) : -1;
  if (status != 0) return nullptr;
  return nlohmann::json::parse(output.substr(output.rfind('{')));
}

at::Tensor logits_of(Classifier& model, const at::Tensor& input) {
  torch::NoGradGuard no_grad;
  model->eval();
  return model->forward(input);
}

}  // namespace

using test::cli_run;

TEST(Safetensors, WriteThenReadKeepsNamesDtypesShapesBytesAndMetadata) {
  const test::TempDir tmp;
  const NamedTensors tensors = {{"f64", torch::randn({2, 3}, torch::kDouble)},
                                {"f32", torch::randn({4}).t()},
                                {"f16", torch::randn({3, 1}).to(torch::kHalf)},
                                {"bf16", torch::randn({5}).to(torch::kBFloat16)},
                                {"i64", torch::arange(6).reshape({3, 2}).t()},  // non-contiguous
                                {"i32", torch::tensor({-1, 2}, torch::kInt)},
                                {"i16", torch::tensor({7}, torch::kShort)},
                                {"i8", torch::tensor({-8}, torch::kChar)},
                                {"u8", torch::empty({0, 4}, torch::kByte)},
                                {"bool", torch::tensor({true, false})},
                                {"scalar", torch::tensor(3.5)}};
  const std::string path = tmp / "roundtrip.safetensors";
  safetensors_write(path, tensors, {{"fastloop_version", "x"}, {"note", "é"}});
  const SafetensorsFile file = safetensors_read(path);
  const uint64_t header_len = *reinterpret_cast<const uint64_t*>(file.bytes.data());
  EXPECT_EQ(header_len % 8, 0u);
  EXPECT_EQ(file.header.metadata.at("note"), "é");
  const NamedTensors back = safetensors_tensors(file);
  ASSERT_EQ(back.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    SCOPED_TRACE(tensors[i].first);
    EXPECT_EQ(back[i].first, tensors[i].first);
    EXPECT_EQ(back[i].second.scalar_type(), tensors[i].second.scalar_type());
    EXPECT_EQ(back[i].second.sizes(), tensors[i].second.sizes());
    EXPECT_TRUE(torch::equal(back[i].second, tensors[i].second));
  }
  EXPECT_FALSE(fs::exists(path + ".tmp." + std::to_string(::getpid())));
}

TEST(Safetensors, MalformedFilesAreOneErrorNamingTensorAndValue) {
  const nlohmann::json x4 = {{"x", entry("F32", {1}, 0, 4)}};
  struct Case {
    const char* what;
    std::vector<uint8_t> bytes;
    std::vector<std::string> mentions;
  };
  auto with = [](std::vector<uint8_t> b, size_t at, uint8_t v) { b[at] = v; return b; };
  auto truncated = image(x4, 4);
  truncated.resize(truncated.size() - 2);
  const std::vector<Case> cases = {
      {"too short", {1, 2, 3}, {"3 bytes", "too short"}},
      {"bad header length", image(x4, 4, 1'000'000), {"header length 1000000", "larger than"}},
      {"not UTF-8", with(image({{"ab", entry("U8", {1}, 0, 1)}}, 1), 10, 0xFF), {"UTF-8", "byte 10", "0xFF"}},
      {"not JSON", image(nlohmann::json::object(), 0, 1), {"JSON"}},
      {"not an object", image(nlohmann::json::array(), 0), {"'{'"}},
      {"unknown dtype", image({{"w", entry("F8", {1}, 0, 1)}}, 1), {"'w'", "unknown dtype 'F8'"}},
      {"missing field", image({{"w", {{"dtype", "F32"}, {"shape", {1}}}}}, 4), {"'w'", "data_offsets"}},
      {"negative dim", image({{"w", entry("F32", {-1}, 0, 4)}}, 4), {"'w'", "shape[0]", "-1"}},
      {"dim overflow", image({{"w", entry("F32", {1LL << 40, 1LL << 40}, 0, 4)}}, 4), {"'w'", "64 bits"}},
      {"float offset", image({{"w", {{"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {0.5, 4}}}}}, 4),
       {"'w'", "begin", "0.5"}},
      {"offset out of range", image({{"w", entry("F32", {1}, 0, 4)}}, 3), {"'w'", "end = 4", "larger than 3"}},
      {"begin after end", image({{"w", entry("U8", {0}, 2, 1)}}, 2), {"'w'", "[2, 1]", "begin after end"}},
      {"size mismatch", image({{"w", entry("F32", {2}, 0, 4)}}, 4), {"'w'", "[0, 4]", "needs 2 x 4"}},
      {"overlap", image({{"a", entry("F32", {1}, 0, 4)}, {"b", entry("F32", {1}, 2, 6)}}, 6),
       {"'b'", "[2, 6]", "overlap", "'a'"}},
      {"hole", image({{"a", entry("F32", {1}, 4, 8)}}, 8), {"'a'", "[0, 4)", "unused"}},
      {"trailing bytes", image(x4, 6), {"6 bytes", "cover 4"}},
      {"truncated", truncated, {"'x'", "end = 4", "larger than 2"}},
      {"metadata not strings", image({{"__metadata__", {{"k", 1}}}}, 0), {"__metadata__", "'k'"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string message = parse_error(c.bytes);
    EXPECT_EQ(message.rfind("f.safetensors: ", 0), 0u) << message;
    for (const auto& m : c.mentions) EXPECT_NE(message.find(m), std::string::npos) << message << " lacks " << m;
  }
}

TEST(Safetensors, HeaderLongerThanTheMaximumIsRefused) {
  std::vector<uint8_t> bytes(8 + kSafetensorsMaxHeaderBytes + 8, ' ');
  const uint64_t n = kSafetensorsMaxHeaderBytes + 1;
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(n >> (8 * i));
  EXPECT_NE(parse_error(bytes).find("exceeds the 100000000-byte maximum"), std::string::npos);
}

TEST(Safetensors, StrictLoadListsMissingUnexpectedAndMisShapedInOneErrorAndChangesNothing) {
  auto model = resnet18_cifar();
  NamedTensors tensors = model_state_export(*model);
  const at::Tensor before = model->named_parameters()["conv1.weight"].clone();
  const at::Tensor l1_before = model->named_parameters()["layer1.0.conv1.weight"].clone();
  tensors.erase(tensors.begin());                         // conv1.weight missing
  tensors.push_back({"head.weight", torch::zeros({1})});  // unexpected
  for (auto& [name, t] : tensors) {
    if (name == "fc.weight") t = torch::zeros({5, 512});  // mis-shaped
    else t = torch::full_like(t, 0.5);
  }
  try {
    model_state_load(*model, tensors, /*strict=*/true);
    FAIL() << "strict load accepted mismatched weights";
  } catch (const InputError& e) {
    const std::string m = e.what();
    for (const char* part : {"missing: conv1.weight", "unexpected: head.weight", "fc.weight: file [5, 512] vs model [10, 512]"})
      EXPECT_NE(m.find(part), std::string::npos) << m;
  }
  EXPECT_TRUE(torch::equal(model->named_parameters()["layer1.0.conv1.weight"], l1_before));  // untouched
  const StateLoadReport report = model_state_load(*model, tensors, /*strict=*/false);
  EXPECT_EQ(report.missing, std::vector<std::string>{"conv1.weight"});
  EXPECT_EQ(report.unexpected, std::vector<std::string>{"head.weight"});
  EXPECT_EQ(report.mismatched.size(), 1u);
  EXPECT_EQ(report.loaded, tensors.size() - 2);
  EXPECT_TRUE(torch::equal(model->named_parameters()["conv1.weight"], before));
  EXPECT_TRUE((model->named_parameters()["layer1.0.conv1.weight"] == 0.5).all().item<bool>());
}

TEST(Safetensors, SkipPatternLoadsANewClassifierHeadStrictly) {
  auto source = resnet18_cifar();
  auto target = model_make(ModelOptions("resnet18").stem("cifar").num_classes(3));
  const auto head_before = target->named_parameters()["fc.weight"].clone();
  EXPECT_THROW(model_state_load(*target, model_state_export(*source)), InputError);
  const auto report = model_state_load(*target, model_state_export(*source), true, "^fc\\.");
  EXPECT_EQ(report.skipped, (std::vector<std::string>{"fc.weight", "fc.bias"}));
  EXPECT_TRUE(torch::equal(target->named_parameters()["fc.weight"], head_before));
  EXPECT_TRUE(torch::equal(target->named_parameters()["layer4.1.conv2.weight"],
                           source->named_parameters()["layer4.1.conv2.weight"]));
  EXPECT_THROW(model_state_load(*target, {}, true, "(["), InputError);
}

TEST(Safetensors, FoldBnDropsBatchNormsAndGivesConvsBiases) {
  auto model = resnet18_cifar();
  const NamedTensors folded = model_state_export(*model, /*fold_bn=*/true);
  std::set<std::string> names;
  for (const auto& [name, t] : folded) names.insert(name);
  EXPECT_FALSE(names.count("bn1.weight"));
  EXPECT_FALSE(names.count("layer2.0.downsample.1.running_var"));
  EXPECT_TRUE(names.count("conv1.bias"));
  EXPECT_TRUE(names.count("layer2.0.downsample.0.bias"));
  EXPECT_TRUE(names.count("fc.bias"));
}

TEST(Safetensors, CppExportLoadsStrictlyIntoThePyTorchReferenceWithEqualLogits) {
  const test::TempDir tmp;
  FASTLOOP_SKIP_WITHOUT_VENV();
  at::set_num_threads(1);
  torch::manual_seed(3);
  auto model = resnet18_cifar();
  {  // non-trivial BatchNorm statistics, so eval mode and --fold-bn are really tested
    torch::NoGradGuard no_grad;
    for (auto& b : model->named_buffers())
      if (b.key().find("running_mean") != std::string::npos) b.value().uniform_(-0.2, 0.2);
      else if (b.key().find("running_var") != std::string::npos) b.value().uniform_(0.5, 2.0);
  }
  const at::Tensor input = torch::randn({2, 3, 32, 32});
  const at::Tensor logits = logits_of(model, input);
  const std::string io = tmp / "cpp_io.safetensors";
  safetensors_write(io, {{"input", input}, {"logits", logits}}, {});
  for (bool fold : {false, true}) {
    SCOPED_TRACE(fold ? "fold_bn" : "plain");
    const std::string weights = tmp / (fold ? "cpp_folded.safetensors" : "cpp.safetensors");
    safetensors_write(weights, model_state_export(*model, fold), {{"format", "pt"}});
    std::string output;
    const auto result = python("check " + weights + " " + io + (fold ? " --fold-bn" : ""), output);
    ASSERT_FALSE(result.is_null()) << output;
    std::printf("[ C++ -> Python%s ] max |logit diff| %.3g (max |logit| %.3g)\n", fold ? " fold-bn" : "",
                result["max_abs_diff"].get<double>(), result["max_abs_logit"].get<double>());
    EXPECT_LE(result["max_abs_diff"].get<double>(), 1e-5) << output;
  }
}

TEST(Safetensors, PyTorchSavedWeightsLoadStrictlyWithEqualLogits) {
  const test::TempDir tmp;
  FASTLOOP_SKIP_WITHOUT_VENV();
  at::set_num_threads(1);
  const std::string weights = tmp / "py.safetensors", io = tmp / "py_io.safetensors";
  std::string output;
  ASSERT_FALSE(python("make " + weights + " " + io, output).is_null()) << output;
  auto model = resnet18_cifar();
  const StateLoadReport report = model_state_load_file(*model, weights);
  EXPECT_EQ(report.loaded, model_state_export(*model).size());
  const NamedTensors expected = safetensors_tensors(safetensors_read(io));
  const double diff = (logits_of(model, expected[0].second) - expected[1].second).abs().max().item<double>();
  std::printf("[ Python -> C++ ] max |logit diff| %.3g\n", diff);
  EXPECT_LE(diff, 1e-5);
  // The same file through the CLI: `fastloop eval` loads Python's weights strictly.
  auto [code, text] = cli_run("eval --threads 1 --init-from " + weights + " --model resnet18 --data synthetic:3x32x32:64");
  EXPECT_EQ(code, 0) << text;
  EXPECT_NE(text.find("test accuracy"), std::string::npos) << text;
}

TEST(Safetensors, CliExportsACheckpointThatEvalAndTrainStartFrom) {
  const test::TempDir tmp;
  const std::string dir = tmp.path();
  TrainConfig config = test::tiny_config(64, 32);
  config.run.checkpoint_dir = dir;
  TrainControl quiet;
  quiet.progress = false;
  train(config, quiet);
  const std::string out = dir + "/model.safetensors";
  auto [code, text] = cli_run("export --checkpoint " + dir + "/last.ckpt --out " + out);
  ASSERT_EQ(code, 0) << text;
  EXPECT_NE(safetensors_read(out).header.metadata.at("fastloop_config").find("small_cnn"), std::string::npos);
  auto from_checkpoint = cli_run("eval --threads 1 --checkpoint " + dir + "/last.ckpt");
  auto from_weights = cli_run("eval --threads 1 --init-from " + out + " --model small_cnn --data synthetic:1x12x12:64");
  ASSERT_EQ(from_weights.code, 0) << from_weights.output;
  EXPECT_EQ(from_checkpoint.output.substr(0, 22), from_weights.output.substr(0, 22));  // same accuracy
  EXPECT_EQ(cli_run("eval --init-from " + out + " --model resnet18 --data synthetic:1x12x12:64").code, 2);

  config.run.checkpoint_dir.clear();
  config.run.init_from = out;
  config.model.num_classes = 12;  // a new head: strict fails, skipping it works
  EXPECT_THROW(train(config, quiet), InputError);
  config.run.init_skip = "^fc\\.";
  EXPECT_NO_THROW(train(config, quiet));
}
