// Recipe features against their references (tests/golden/recipe/*.json from tests/tools/make_recipe_golden.py:
// PyTorch itself, and timm's definitions copied into that script): one-cycle momentum, gradient clipping,
// timm's weight-decay groups, the weights' EMA, mixup and cutmix; then, on tiny CPU runs, that they train,
// resume bitwise, keep the best checkpoints, export the EMA and fail below --expect-test-acc.
#include "golden_support.h"
#include "test_support.h"
#include "fastloop/core/errors.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/amp.h"
#include "fastloop/train/best_checkpoints.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/ema.h"
#include "fastloop/train/mixup.h"
#include "fastloop/train/optim.h"
#include "fastloop/train/schedule.h"
#include "fastloop/train/step.h"
#include "fastloop/train/trainer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

using namespace fastloop;
using fastloop::test::state_entries;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json golden(const std::string& name) { return test::recipe_golden(name); }

at::Tensor from_json(const json& values, at::IntArrayRef shape) {
  return torch::tensor(values.get<std::vector<double>>(), torch::kFloat64).to(torch::kFloat32).reshape(shape);
}

Classifier small_cnn() { return model_make(ModelOptions("small_cnn").in_channels(1).num_classes(10)); }

}  // namespace

// ---- one-cycle momentum ----

TEST(RecipeMomentum, OneCycleMomentumMatchesTorchOneCycleLRForSgdAndAdamW) {
  const json g = golden("momentum.json");
  ScheduleConfig config;
  config.name = "onecycle";
  config.anneal_strategy = "cos";  // the golden file's (OneCycleLR's default)
  config.pct_start = g["pct_start"].get<double>();
  config.cycle_momentum = true;
  config.base_momentum = g["base_momentum"].get<double>();
  config.max_momentum = g["max_momentum"].get<double>();
  const int64_t total = g["total_steps"].get<int64_t>();
  LrSchedule schedule(config, g["max_lr"].get<double>(), total, 10);
  ASSERT_TRUE(schedule.cycles_momentum());
  auto param = torch::zeros({1}, torch::requires_grad());
  OptimConfig sgd, adamw;
  adamw.name = "adamw";
  auto sgd_opt = optimizer_make(sgd, std::vector<at::Tensor>{param}), adamw_opt = optimizer_make(adamw, std::vector<at::Tensor>{param});
  for (int64_t s = 0; s < total; ++s) {
    for (const char* name : {"sgd", "adamw"}) {
      EXPECT_NEAR(schedule.lr_at(s), g[name]["lr"][s].get<double>(), 1e-9) << name << " step " << s;
      EXPECT_NEAR(schedule.momentum_at(s), g[name]["momentum"][s].get<double>(), 1e-12) << name << " step " << s;
    }
    optimizer_set_momentum(*sgd_opt, schedule.momentum_at(s));  // what the optimizer then uses
    optimizer_set_momentum(*adamw_opt, schedule.momentum_at(s));
    const auto& so = static_cast<torch::optim::SGDOptions&>(sgd_opt->param_groups()[0].options());
    const auto& ao = static_cast<torch::optim::AdamWOptions&>(adamw_opt->param_groups()[0].options());
    EXPECT_NEAR(so.momentum(), g["sgd"]["momentum"][s].get<double>(), 1e-12);
    EXPECT_NEAR(std::get<0>(ao.betas()), g["adamw"]["momentum"][s].get<double>(), 1e-12);
    EXPECT_EQ(std::get<1>(ao.betas()), 0.999);
  }
  config.cycle_momentum = false;
  EXPECT_FALSE(LrSchedule(config, 0.1, total, 10).cycles_momentum());
}

// ---- gradient clipping ----

TEST(RecipeClip, ClipGradNormMatchesTorchClipGradNorm) {
  const json g = golden("clip_grad_norm.json");
  for (const auto& c : g["cases"]) {
    std::vector<at::Tensor> params;
    for (size_t k = 0; k < g["shapes"].size(); ++k) {
      const auto shape = g["shapes"][k].get<std::vector<int64_t>>();
      auto p = torch::zeros(shape, torch::requires_grad());
      const int64_t n = p.numel();
      p.mutable_grad() = torch::sin(torch::arange(n, torch::kFloat64).mul(0.7).add(static_cast<double>(k)))
                             .mul(0.3 + static_cast<double>(k)).to(torch::kFloat32).reshape(shape);
      params.push_back(p);
    }
    const double max_norm = c["max_norm"].get<double>();
    const double total = clip_grad_norm(params, max_norm).item<double>();
    EXPECT_NEAR(total, c["total_norm"].get<double>(), 1e-5 * c["total_norm"].get<double>());
    for (size_t k = 0; k < params.size(); ++k) {
      auto want = from_json(c["grads"][k], params[k].sizes());
      EXPECT_TRUE(torch::allclose(params[k].grad(), want, 1e-6, 1e-7)) << "max_norm " << max_norm << " param " << k;
    }
  }
}

TEST(RecipeClip, ClipsTheUnscaledGradientsUnderTheFp16Scaler) {
  auto w = torch::tensor({3.0f, 4.0f}, torch::requires_grad());  // d(sum(w*x))/dw = x = (3, 4): norm 5
  const auto x = torch::tensor({3.0f, 4.0f});
  auto optimizer = torch::optim::SGD(std::vector<at::Tensor>{w}, torch::optim::SGDOptions(1.0));
  GradScaler scaler(GradScalerOptions().init_scale(1024.0));
  scaler.scale((w * x).sum()).backward();  // scaled gradients (3072, 4096) would clip to the wrong size
  StepOptions options;
  options.clip_grad_norm = 1.0;
  ASSERT_TRUE(train_optimizer_step(optimizer, scaler, options));
  // Unscaled (3, 4) clipped to norm 1 (÷ (5 + 1e-6)), then w -= grad.
  const double coef = 1.0 / (5.0 + 1e-6);
  EXPECT_NEAR(w[0].item<double>(), 3.0 - 3.0 * coef, 1e-6);
  EXPECT_NEAR(w[1].item<double>(), 4.0 - 4.0 * coef, 1e-6);
}

// ---- weight decay groups ----

TEST(RecipeWeightDecay, NoDecayGroupIsTimmsParamGroupsWeightDecay) {
  const json g = golden("weight_decay.json");
  for (const auto& [name, model] : {std::pair<std::string, Classifier>{"small_cnn", small_cnn()},
                                    {"resnet18", model_make(ModelOptions("resnet18").in_channels(3).num_classes(10))}}) {
    std::vector<std::string> no_decay, decay;
    for (const auto& p : model->named_parameters()) (weight_decay_exempt(p.key(), p.value()) ? no_decay : decay).push_back(p.key());
    EXPECT_EQ(json(no_decay), g[name]["no_decay"]) << name;
    EXPECT_EQ(json(decay), g[name]["decay"]) << name;

    OptimConfig config;  // weight_decay 5e-4, wd_all off: [no decay, decay] as timm returns them
    auto optimizer = optimizer_make(config, model->named_parameters());
    ASSERT_EQ(optimizer->param_groups().size(), 2u);
    const auto& groups = optimizer->param_groups();
    EXPECT_EQ(groups[0].params().size(), no_decay.size());
    EXPECT_EQ(static_cast<const torch::optim::SGDOptions&>(groups[0].options()).weight_decay(), 0.0);
    EXPECT_EQ(static_cast<const torch::optim::SGDOptions&>(groups[1].options()).weight_decay(), 5e-4);
    config.wd_all = true;
    EXPECT_EQ(optimizer_make(config, model->named_parameters())->param_groups().size(), 1u) << "--wd-all";
  }
}

TEST(RecipeWeightDecay, BiasesKeepTheirValueWithoutGradientUnlessWdAll) {
  for (bool wd_all : {false, true}) {
    for (bool fused : {false, true}) {
      auto bias = torch::ones({4}, torch::requires_grad()), weight = torch::ones({2, 2}, torch::requires_grad());
      torch::OrderedDict<std::string, at::Tensor> params;
      params.insert("fc.bias", bias);
      params.insert("fc.weight", weight);
      OptimConfig config;
      config.weight_decay = 0.1;
      config.wd_all = wd_all;
      auto optimizer = optimizer_make(config, params, fused);
      bias.mutable_grad() = torch::zeros({4}), weight.mutable_grad() = torch::zeros({2, 2});
      optimizer->step();
      EXPECT_EQ(torch::equal(bias, torch::ones({4})), !wd_all) << "wd_all " << wd_all << " fused " << fused;
      EXPECT_FALSE(torch::equal(weight, torch::ones({2, 2}))) << "the 2-D weight decays either way";
    }
  }
}

// ---- EMA ----

TEST(RecipeEma, MatchesTimmModelEmaV2WithAndWithoutWarmup) {
  const json g = golden("ema.json");
  for (const auto& c : g["cases"]) {
    auto model = small_cnn(), average = small_cnn();
    auto fill = [&](int64_t k) {  // make_recipe_golden.py's fill_state
      torch::NoGradGuard no_grad;
      int64_t j = 0;
      for (auto& [name, t] : state_entries(*model)) {
        const double index = static_cast<double>(j++);
        if (name.size() >= 19 && name.compare(name.size() - 19, 19, "num_batches_tracked") == 0) {
          t.fill_(k + 1);
          continue;
        }
        auto v = torch::sin(torch::arange(t.numel(), torch::kFloat64).mul(0.37).add(index + 0.5 * static_cast<double>(k))).mul(0.05);
        if (name.size() >= 11 && name.compare(name.size() - 11, 11, "running_var") == 0) v = v.mul(v).add(1.0);
        t.copy_(v.to(torch::kFloat32).reshape(t.sizes()));
      }
    };
    fill(0);
    ModelEma ema(average, *model, EmaOptions().decay(c["decay"].get<double>()).warmup(c["warmup"].get<bool>()));
    for (int64_t k = 1; k <= c["updates"].get<int64_t>(); ++k) {
      fill(k);
      EXPECT_NEAR(ema.decay_at(k - 1), c["decays"][k - 1].get<double>(), 1e-15);
      ema.update(*model, k - 1);
    }
    for (auto& [name, t] : state_entries(ema.module())) {
      const auto want = c["state"][name].get<std::vector<double>>();
      auto flat = t.reshape(-1).to(torch::kFloat64);
      const int64_t n = flat.numel();
      for (int64_t j = 0; j < 8; ++j) {
        const double got = flat[(j * (n - 1)) / 7].item<double>();
        EXPECT_NEAR(got, want[j], 1e-6 * std::max(1.0, std::abs(want[j]))) << name << " decay " << c["decay"];
      }
    }
  }
}

// ---- mixup and cutmix ----

TEST(RecipeMixup, MixesInPlaceAsTimmsMixBatchInEitherMemoryFormat) {
  const json g = golden("mixup.json");
  const auto shape = g["shape"].get<std::vector<int64_t>>();
  const int64_t n = shape[0], c = shape[1], h = shape[2], w = shape[3];
  const auto labels = torch::tensor(g["labels"].get<std::vector<int64_t>>(), torch::kInt64);
  Mixup mixup(MixupOptions().mixup_alpha(1.0).label_smoothing(g["smoothing"].get<double>())
                  .num_classes(g["num_classes"].get<int64_t>()));
  for (const auto& k : g["cases"]) {
    for (bool channels_last : {false, true}) {
      auto images = torch::sin(torch::arange(n * c * h * w, torch::kFloat64).mul(0.13).add(0.2))
                        .to(torch::kFloat32).reshape({n, c, h, w});
      if (channels_last) images = images.contiguous(at::MemoryFormat::ChannelsLast);
      const void* buffer = images.data_ptr();
      MixParams params;
      params.lam = k["lam"].get<double>();
      if (k["kind"] == "cutmix" && params.lam != 1.0)
        params = cutmix_box(h, w, params.lam, k["centre"][0].get<int64_t>(), k["centre"][1].get<int64_t>());
      EXPECT_NEAR(params.lam, k["lam_used"].get<double>(), 1e-15);
      if (!k["box"].is_null()) {
        EXPECT_EQ(json({params.y0, params.y1, params.x0, params.x1}), k["box"]) << "cutmix box";
      }
      const at::Tensor targets = mixup.apply(images, labels, params);
      EXPECT_EQ(images.data_ptr(), buffer) << "mixed in the batch's own buffer";
      EXPECT_TRUE(torch::allclose(images, from_json(k["images"], {n, c, h, w}), 1e-6, 1e-7))
          << k["kind"] << " lam " << params.lam << " channels_last " << channels_last;
      EXPECT_TRUE(torch::allclose(targets, from_json(k["targets"], {n, g["num_classes"].get<int64_t>()}), 1e-6, 1e-7));
    }
  }
}

TEST(RecipeMixup, DrawsAreDeterministicPerStepAndBetaDistributed) {
  const double alpha = 0.4;
  Mixup both(MixupOptions().mixup_alpha(alpha).cutmix_alpha(alpha).seed(7));
  const MixParams a = both.draw(12, 0, 0, 28, 28), b = both.draw(12, 0, 0, 28, 28);
  EXPECT_EQ(a.lam, b.lam);
  EXPECT_EQ(a.cutmix, b.cutmix);
  double sum = 0, sum_sq = 0;
  int64_t cutmix = 0, changed = 0;
  const int64_t draws = 4000;
  Mixup mix_only(MixupOptions().mixup_alpha(alpha).seed(7));
  for (int64_t s = 0; s < draws; ++s) {
    const MixParams m = mix_only.draw(s, 0, 0, 28, 28);
    sum += m.lam, sum_sq += m.lam * m.lam;
    ASSERT_FALSE(m.cutmix);
    const MixParams p = both.draw(s, 0, 0, 28, 28);
    cutmix += p.cutmix ? 1 : 0;
    changed += p.lam != both.draw(s, 1, 0, 28, 28).lam ? 1 : 0;  // another micro-batch draws anew
    if (p.cutmix) {
      ASSERT_TRUE(p.y0 >= 0 && p.y0 <= p.y1 && p.y1 <= 28 && p.x0 >= 0 && p.x0 <= p.x1 && p.x1 <= 28);
      EXPECT_NEAR(p.lam, 1.0 - static_cast<double>((p.y1 - p.y0) * (p.x1 - p.x0)) / (28.0 * 28.0), 1e-12);
    }
  }
  const double mean = sum / draws, var = sum_sq / draws - mean * mean;
  EXPECT_NEAR(mean, 0.5, 0.02);                              // Beta(a, a): mean 1/2
  EXPECT_NEAR(var, 1.0 / (4.0 * (2.0 * alpha + 1.0)), 0.01);  // variance 1 / (4 (2a + 1)) = 0.139
  EXPECT_NEAR(static_cast<double>(cutmix) / draws, 0.5, 0.03);  // switch_prob 0.5
  EXPECT_GT(changed, draws * 9 / 10);
}

// ---- best-k checkpoints ----

TEST(RecipeBest, KeepsTheKBestAndFindsThemAgainAfterARestart) {
  const test::TempDir tmp;
  const auto dir = tmp.sub("keep_best");
  auto touch = [](const std::string& path) { std::ofstream(path) << "x"; };
  touch(dir + "/best-epoch9-acc99.00.ckpt");  // an earlier run's: a new run replaces it
  {
    BestCheckpoints best(dir, 2, /*resume=*/false);
    EXPECT_TRUE(best.offer(0.80, 0, touch));
    EXPECT_TRUE(best.offer(0.85, 1, touch));
    EXPECT_FALSE(best.offer(0.79, 2, touch));
    EXPECT_TRUE(best.offer(0.90, 3, touch));  // 0.80 falls out
  }
  BestCheckpoints again(dir, 2, /*resume=*/true);
  EXPECT_EQ(again.files(), (std::vector<std::string>{dir + "/best-epoch4-acc90.00.ckpt", dir + "/best-epoch2-acc85.00.ckpt"}));
  EXPECT_TRUE(again.offer(0.87, 4, touch));
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"best-epoch4-acc90.00.ckpt", "best-epoch5-acc87.00.ckpt"}));
}

// ---- tiny runs ----

namespace {
TrainConfig recipe_run(const std::string& dir) {
  TrainConfig config = test::tiny_config(192, 32);
  config.run.epochs = 2;
  config.run.checkpoint_dir = dir;
  config.run.checkpoint_every = 4;
  config.optim.ema_decay = 0.9;
  config.optim.ema_warmup = true;
  config.optim.clip_grad_norm = 1.0;
  config.optim.label_smoothing = 0.1;
  config.data.mixup = 0.2;
  config.data.cutmix = 1.0;
  config.schedule.cycle_momentum = true;
  return config;
}

std::vector<at::Tensor> ema_state(const std::string& checkpoint) {
  auto saved = Checkpoint::read(checkpoint);
  auto model = small_cnn();
  EXPECT_TRUE(saved.has_ema());
  saved.restore_ema(*model);
  return module_state_tensors(*model);
}
}  // namespace

TEST(RecipeResume, EveryFeatureOnStoppedAndResumedRunEndsBitwiseEqualIncludingTheEma) {
  const test::TempDir tmp;
  const auto straight_dir = tmp.sub("recipe_straight"), resumed_dir = tmp.sub("recipe_resumed");
  TrainControl quiet;
  quiet.progress = false;
  const auto straight = train(recipe_run(straight_dir), quiet);
  ASSERT_EQ(straight.position.step, 12);
  EXPECT_TRUE(std::isfinite(straight.test.loss));
  TrainControl stopping = quiet;
  stopping.should_stop = [](const TrainPosition& p) { return p.step == 9; };
  ASSERT_TRUE(train(recipe_run(resumed_dir), stopping).stopped);
  auto config = recipe_run(resumed_dir);
  config.run.resume = "on";
  const auto resumed = train(config, quiet);
  EXPECT_EQ(resumed.test.accuracy, straight.test.accuracy);
  EXPECT_EQ(resumed.test.loss, straight.test.loss);
  const auto a = ema_state(checkpoint_path_in(straight_dir)), b = ema_state(checkpoint_path_in(resumed_dir));
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "EMA entry " << i;
}

TEST(RecipeCli, ExportEmaKeepBestAndExpectTestAcc) {
  const test::TempDir tmp;
  const auto dir = tmp.sub("recipe_cli");
  const std::string common = "train --data synthetic:1x12x12:192 --batch-size 32 --device cpu --threads 1 --epochs 3 "
                             "--checkpoint-dir " + dir + " --keep-best 2 --ema-decay 0.9";
  const auto ok = test::cli_run(common + " --expect-test-acc 0.01");
  ASSERT_EQ(ok.code, 0) << ok.output;
  EXPECT_NE(ok.output.find("ema: test accuracy"), std::string::npos) << ok.output;
  int best = 0;
  for (const auto& e : fs::directory_iterator(dir)) best += e.path().filename().string().rfind("best-epoch", 0) == 0;
  EXPECT_GE(best, 1);
  EXPECT_LE(best, 2);

  const auto plain = test::cli_run("export --checkpoint " + dir + "/last.ckpt --out " + dir + "/w.safetensors");
  const auto ema = test::cli_run("export --ema --checkpoint " + dir + "/last.ckpt --out " + dir + "/ema.safetensors");
  ASSERT_EQ(plain.code, 0) << plain.output;
  ASSERT_EQ(ema.code, 0) << ema.output;
  std::ifstream pa(dir + "/w.safetensors", std::ios::binary), pb(dir + "/ema.safetensors", std::ios::binary);
  EXPECT_NE(std::string(std::istreambuf_iterator<char>(pa), {}), std::string(std::istreambuf_iterator<char>(pb), {}));

  // One step at a tiny learning rate leaves the model near chance (10 classes): below 90%.
  const auto failed = test::cli_run("train --data synthetic:1x12x12:192 --batch-size 32 --device cpu --threads 1 "
                                    "--max-steps 1 --lr 1e-6 --expect-test-acc 0.9");
  EXPECT_EQ(failed.code, 3) << failed.output;
  EXPECT_NE(failed.output.find("below --expect-test-acc 90.00%"), std::string::npos) << failed.output;

  const auto no_ema_dir = tmp.sub("recipe_cli_no_ema");
  ASSERT_EQ(test::cli_run("train --data synthetic:1x12x12:64 --batch-size 32 --device cpu --threads 1 --epochs 1 "
                          "--checkpoint-dir " + no_ema_dir).code, 0);
  const auto missing = test::cli_run("export --ema --checkpoint " + no_ema_dir + "/last.ckpt --out " + no_ema_dir + "/e.safetensors");
  EXPECT_EQ(missing.code, 2) << missing.output;
  EXPECT_NE(missing.output.find("has no EMA weights"), std::string::npos) << missing.output;
}
