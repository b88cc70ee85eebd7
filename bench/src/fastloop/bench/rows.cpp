// The bench grid's rows. They follow seed 001's protocol. `baseline` is everything off: no loader
// workers, no pinning, fp32, NCHW, zero_grad without set_to_none, the plain optimizer. `workers4`/`workers8`
// add loader workers (and pinned host batches on CUDA). Every later row is measured on top of the seed's
// base config, workers4 + pinning (on CUDA fastloop's pinned ring with non_blocking copies), plus its own
// technique; `channels-last` adds to AMP, as the seed did. Speedups are against `baseline` of the same run,
// so a later row's speedup includes the workers' share; compare it with workers4 to see the technique alone.
// On image folders and shards the baseline's augmentation is the loader's RandomResizedCrop + flip at
// --image-size and the models get the imagenet stem (bench_stem).
#include "fastloop/bench/rows.h"


#include "fastloop/core/config.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/models/registry.h"
#include "fastloop/models/torchscript.h"
#include "fastloop/train/perf_auto.h"

#include <torch/cuda.h>

#include <algorithm>
#include <functional>

namespace fastloop {

namespace {

struct RowSpec {
  const char* name;
  const char* description;
  /// Sets the row's technique on a plan that holds the base config; returns "n/a: why" when it cannot run.
  std::function<std::optional<std::string>(CellPlan&)> apply;
};

std::optional<std::string> cuda_only(const CellPlan& plan, const char* why) {
  if (plan.device.is_cuda()) return std::nullopt;
  return std::string("n/a: CUDA only (") + why + ")";
}

/// The seed's base config, from which every row after workers8 starts.
void on_workers4(CellPlan& plan) {
  plan.config.data.workers = 4;
  plan.config.data.pin_memory = true;
  plan.non_blocking = true;
}

const std::vector<RowSpec>& rows() {
  static const std::vector<RowSpec> table = {
      {"baseline", "everything off: 0 loader workers, no pinning, fp32, NCHW, zero_grad without set_to_none, plain optimizer",
       [](CellPlan&) { return std::nullopt; }},
      {"workers4", "baseline + 4 loader workers (+ pinned host batches, copied blocking, on CUDA)",
       [](CellPlan& p) { p.config.data.workers = 4, p.config.data.pin_memory = true; return std::nullopt; }},
      {"workers8", "baseline + 8 loader workers (+ pinned host batches, copied blocking, on CUDA)",
       [](CellPlan& p) { p.config.data.workers = 8, p.config.data.pin_memory = true; return std::nullopt; }},
      {"non-blocking", "workers4 + the pinned ring copied non_blocking on a side stream (CUDA); the base of the rows below",
       [](CellPlan& p) { on_workers4(p); return cuda_only(p, "no host-to-device copy on the CPU"); }},
      {"rec-model", "workers4 + the seed's \"rec model\": every stage's width -1 and batch +1, no multiple of 8 left",
       [](CellPlan& p) {
         on_workers4(p);
         p.config.model.width_delta = -1;
         p.config.data.batch_size += 1;
         return std::nullopt;
       }},
      {"amp", "workers4 + autocast (fp16 with GradScaler on CUDA as in the seed, bf16 on the CPU)",
       [](CellPlan& p) { on_workers4(p); p.config.perf.amp = p.device.is_cuda() ? "fp16" : "bf16"; return std::nullopt; }},
      {"set-to-none", "workers4 + zero_grad(set_to_none): gradients freed instead of zeroed",
       [](CellPlan& p) { on_workers4(p); p.config.perf.set_to_none = true; return std::nullopt; }},
      {"accumulate", "workers4 + gradient accumulation: 2 micro-batches of B per optimizer step, as `train --accumulate 2` (images/s per image)",
       [](CellPlan& p) { on_workers4(p); p.config.perf.accumulate = 2; return std::nullopt; }},
      {"no-grad", "workers4, evaluation only, WITHOUT InferenceMode/no_grad (every other row evaluates under "
                  "InferenceMode): the eval speedup below 1 and the eval memory are what no_grad saves",
       [](CellPlan& p) { on_workers4(p); p.train = false; p.eval_grad_mode = true; return std::nullopt; }},
      {"cudnn-benchmark", "workers4 + cudnn.benchmark (algorithm search on the first step of each shape)",
       [](CellPlan& p) { on_workers4(p); p.config.perf.cudnn_benchmark = true; return cuda_only(p, "cuDNN"); }},
      {"channels-last", "workers4 + amp + channels_last parameters and batches (on top of AMP, as in the seed)",
       [](CellPlan& p) {
         on_workers4(p);
         p.config.perf.amp = p.device.is_cuda() ? "fp16" : "bf16";
         p.config.perf.channels_last = true;
         return std::nullopt;
       }},
      {"fused-optim", "workers4 + the fused optimizer update (_fused_sgd_: one kernel for all parameters)",
       [](CellPlan& p) { on_workers4(p); p.config.perf.fused_optim = true; return std::nullopt; }},
      {"cuda-graph", "workers4 + forward and backward captured once as a CUDA graph and replayed (their time shows under forward)",
       [](CellPlan& p) -> std::optional<std::string> {
         on_workers4(p);
         if (auto na = cuda_only(p, "graphs replay CUDA kernels")) return na;
         p.config.perf.cuda_graph = true;
         return std::nullopt;
       }},
      {"data-on-device", "the whole uint8 dataset on the device, augmented there by tensor ops, no workers, no copy "
                         "(data held in memory; n/a on image folders and shards)",
       [](CellPlan& p) { on_workers4(p); p.config.data.on_device = true; return std::nullopt; }},
      {"fold-bn", "workers4, evaluation only, with each conv's BatchNorm folded into it",
       [](CellPlan& p) { on_workers4(p); p.train = false; p.config.perf.fold_bn = true; return std::nullopt; }},
      {"perf-auto", "workers4, then --perf auto's choices for this hardware (train/perf_auto.h)",
       [](CellPlan& p) {
         on_workers4(p);
         const int64_t threads = p.config.run.threads;
         perf_auto_apply(p.config, perf_hardware_detect());
         p.config.run.threads = threads;                  // --threads of the bench wins
         p.config.perf.device = p.device.is_cuda() ? "cuda" : "cpu";
         return std::nullopt;
       }},
  };
  return table;
}

/// Base config of every row: the baseline's settings (rows switch their technique on from here).
TrainConfig baseline_config(const BenchOptions& o, const std::string& model, const std::string& stem,
                            c10::Device device, int64_t threads) {
  TrainConfig c;
  c.data.source = o.data;
  c.data.batch_size = o.batch_size;
  c.data.workers = 0;
  c.data.pin_memory = false;
  c.data.augment = true;           // seed: random crop (pad 4 at 32 px) + flip, as CIFAR training does
  c.data.image.size = o.image_size;
  c.model.name = model;
  c.model.stem = stem;
  c.perf.device = device.is_cuda() ? "cuda" : "cpu";
  c.perf.channels_last = false;
  c.perf.set_to_none = false;
  c.run.threads = threads;
  return c;
}

}  // namespace

DatasetSplits bench_data_load(const BenchOptions& options) {
  if (options.image_size < 8 || options.image_size > 4096)
    throw InputError("--image-size must be in [8, 4096] pixels, got " + std::to_string(options.image_size));
  DataOptions data;
  data.image.size = options.image_size;
  return data_load(options.data, data);
}

std::string bench_stem(const BenchOptions& options, const std::string& model, const DatasetSplits& data) {
  if (options.stem == "cifar" || options.stem == "imagenet") return options.stem;
  if (options.stem != "auto")
    throw InputError("--stem: unknown stem '" + options.stem + "'; stems: auto, cifar, imagenet");
  if (!data.train.encoded) return "cifar";
  const auto stems = model_stems(model);
  return std::find(stems.begin(), stems.end(), "imagenet") != stems.end() ? "imagenet" : "cifar";
}

std::vector<std::string> bench_row_names() {
  std::vector<std::string> names;
  for (const auto& row : rows()) names.push_back(row.name);
  return names;
}

std::string bench_row_description(const std::string& row) {
  for (const auto& spec : rows())
    if (row == spec.name) return row + ": " + spec.description;
  return row;
}

CellPlan bench_cell_plan(const BenchOptions& options, const std::string& model, const std::string& row,
                         c10::Device device, int64_t threads, int64_t nproc, const DatasetSplits& data,
                         std::optional<std::string>& na) {
  const auto spec = std::find_if(rows().begin(), rows().end(), [&](const RowSpec& r) { return row == r.name; });
  TORCH_CHECK(spec != rows().end(), "bench_cell_plan: unknown row ", row);
  CellPlan plan;
  plan.config = baseline_config(options, model, bench_stem(options, model, data), device, threads);
  plan.config.data.crop_pad = data.train.height() >= 32 ? 4 : 2;
  plan.config.dist.bucket_mb = options.bucket_mb;
  config_validate(plan.config);  // a cell is a run: its config is checked once, here (train_setup relies on it)
  plan.device = device;
  plan.non_blocking = false;
  plan.steps = options.full ? 0 : options.steps;          // 0: whole epochs
  plan.eval_steps = options.full ? 0 : options.eval_steps;
  plan.warmup = options.full ? 1 : options.warmup;        // --full: the first of 5 epochs, as the seed
  plan.repeat = options.full ? 4 : options.repeat;
  na = spec->apply(plan);
  if (!na && plan.config.data.on_device && data.train.encoded)
    na = "n/a: " + data.name + " images are decoded by the loader's workers; no uint8 data set to hold on the device";
  if (!na && is_torchscript_name(model) && plan.config.model.width_delta != 0)
    na = std::string("n/a: a TorchScript model's widths are fixed in its file");
  if (!na && is_torchscript_name(model) && plan.config.perf.fold_bn)
    na = std::string("n/a: fold-bn needs conv -> BatchNorm modules fastloop can see; a TorchScript graph hides them");
  if (!na && nproc > 1 && plan.config.perf.cuda_graph)
    na = "n/a: one rank only (DDP's all-reduce hooks run outside a captured graph)";
  const int64_t gpus = device.is_cuda() ? static_cast<int64_t>(torch::cuda::device_count()) : 0;
  if (!na && device.is_cuda() && nproc > gpus)
    na = "n/a: " + std::to_string(nproc) + " ranks need as many GPUs (NCCL puts one rank on each), " +
         std::to_string(gpus) + " visible";
  return plan;
}

} // namespace fastloop
