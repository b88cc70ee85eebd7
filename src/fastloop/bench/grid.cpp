// The bench grid: what each row switches, and the run over models × rows × repetitions.
//
// Rows follow seed 001's protocol. `baseline` is everything off: no loader workers, no pinning, fp32,
// NCHW, zero_grad without set_to_none, the plain optimizer. `workers4`/`workers8` add loader workers
// (and pinned host batches on CUDA). Every later row is measured on top of the seed's base config,
// workers4 + pinning (on CUDA fastloop's pinned ring with non_blocking copies), plus its own technique;
// `channels-last` adds to AMP, as the seed did. Speedups are against `baseline` of the same run, so a
// later row's speedup includes the workers' share; compare it with workers4 to see the technique alone.
#include "fastloop/bench/grid.h"

#include "fastloop/bench/cell_timer.h"
#include "fastloop/bench/device_probe.h"
#include "fastloop/core/env.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/source.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/perf_auto.h"
#include "fastloop/train/runtime.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <optional>

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
         p.width_delta = -1;
         p.config.data.batch_size += 1;
         return std::nullopt;
       }},
      {"amp", "workers4 + autocast (fp16 with GradScaler on CUDA as in the seed, bf16 on the CPU)",
       [](CellPlan& p) { on_workers4(p); p.config.perf.amp = p.device.is_cuda() ? "fp16" : "bf16"; return std::nullopt; }},
      {"set-to-none", "workers4 + zero_grad(set_to_none): gradients freed instead of zeroed",
       [](CellPlan& p) { on_workers4(p); p.config.perf.set_to_none = true; return std::nullopt; }},
      {"accumulate", "workers4 + gradient accumulation: 2 micro-batches of B/2 per optimizer step (images/s per image)",
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
      {"data-on-device", "the whole uint8 dataset on the device, augmented there by tensor ops, no workers, no copy",
       [](CellPlan& p) { on_workers4(p); p.config.data.on_device = true; return std::nullopt; }},
      {"fold-bn", "workers4, evaluation only, with each conv's BatchNorm folded into it",
       [](CellPlan& p) { on_workers4(p); p.train = false; p.fold_bn = true; return std::nullopt; }},
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

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

/// The lower median: the middle element, or the lower of the two middle ones, so every reported number
/// is one repetition's and the time split belongs to the same repetition as the images/s.
size_t lower_median_index(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  return order[(order.size() - 1) / 2];
}

void options_check(const BenchOptions& o) {
  const auto valid_rows = bench_row_names();
  for (const auto& row : o.rows) {
    if (std::find(valid_rows.begin(), valid_rows.end(), row) == valid_rows.end())
      throw InputError("--rows: unknown row '" + row + "'; rows: " + join(valid_rows) + " (or all)");
  }
  const auto valid_models = model_names();
  if (o.models.empty()) throw InputError("--models: give at least one of " + join(valid_models));
  for (const auto& model : o.models) {
    if (std::find(valid_models.begin(), valid_models.end(), model) == valid_models.end())
      throw InputError("--models: unknown model '" + model + "'; models: " + join(valid_models));
  }
  auto positive = [](int64_t v, const char* flag) {
    if (v < 1) throw InputError(std::string(flag) + " must be at least 1, got " + std::to_string(v));
  };
  positive(o.repeat, "--repeat");
  positive(o.batch_size, "--batch-size");
  if (!o.full) positive(o.steps, "--steps"), positive(o.eval_steps, "--eval-steps");
  if (o.warmup < 0) throw InputError("--warmup must be >= 0, got " + std::to_string(o.warmup));
  if (o.full && o.data.rfind("cifar10:", 0) != 0)
    throw InputError("--full runs seed 001's 5 epochs of CIFAR-10: give --data cifar10:DIR (got '" + o.data + "')");
  for (int64_t n : o.nproc) {
    if (n != 1) throw InputError("--nproc " + std::to_string(n) + ": distributed cells are not implemented yet; use 1");
  }
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

BenchEnvironment environment_detect(c10::Device device) {
  BenchEnvironment env;
  const CpuInfo cpu = cpu_info();
  const BuildInfo build = build_info();
  env.cpu_model = cpu.model;
  env.cores = usable_cores();
  env.threads = at::get_num_threads();
  env.gpu = gpu_name(device);
  env.gpu_driver = gpu_driver(device);
  env.device = device.is_cuda() ? "cuda" : "cpu";
  env.libtorch_version = build.torch_version;
  const auto blas_info = build.settings.find("BLAS_INFO");
  env.blas = blas_info != build.settings.end() ? blas_info->second : "";
  for (const auto& lib : blas_libraries_loaded()) env.blas += (env.blas.empty() ? "" : "; ") + lib;
  env.commit = source_commit();
  const GemmPeak peak = device_gemm_peak(device);
  env.peak_gemm_gflops = peak.gflops;
  env.peak_gemm_method = peak.method;
  env.date = utc_now();
  env.load_average = "start " + load_average();
  return env;
}

/// Base config of every row: the baseline's settings (rows switch their technique on from here).
TrainConfig baseline_config(const BenchOptions& o, const std::string& model, c10::Device device, int64_t threads) {
  TrainConfig c;
  c.data.source = o.data;
  c.data.batch_size = o.batch_size;
  c.data.workers = 0;
  c.data.pin_memory = false;
  c.data.augment = true;           // seed: random crop (pad 4 at 32 px) + flip, as CIFAR training does
  c.model.name = model;
  c.model.stem = "cifar";
  c.perf.device = device.is_cuda() ? "cuda" : "cpu";
  c.perf.channels_last = false;
  c.perf.set_to_none = false;
  c.run.threads = threads;
  return c;
}

}  // namespace

std::vector<std::string> bench_row_names() {
  std::vector<std::string> names;
  for (const auto& row : rows()) names.push_back(row.name);
  return names;
}

BenchResult bench_run(const BenchOptions& options) {
  options_check(options);
  const auto grid_start = std::chrono::steady_clock::now();
  BenchResult result;
  result.options = options;
  if (result.options.rows.empty()) result.options.rows = bench_row_names();
  const c10::Device device = device_resolve(options.device);
  threads_apply(options.threads);
  const int64_t threads = at::get_num_threads();

  const DatasetSplits data = data_load(options.data);
  const bool synthetic = data.name == "synthetic";
  result.train_images = synthetic ? 50000 : data.train.size();
  result.test_images = synthetic ? 10000 : data.test.size();
  result.environment = environment_detect(device);

  for (const auto& name : result.options.rows) {
    for (const auto& row : rows())
      if (name == row.name) result.row_descriptions.push_back(name + ": " + row.description);
  }
  {
    TrainConfig base = baseline_config(options, options.models.front(), device, threads);
    base.data.crop_pad = data.train.height() >= 32 ? 4 : 2;
    result.config_json = config_to_json(base);
  }

  for (const auto& model : options.models) {
    for (const auto& row_name : result.options.rows) {
      const auto& row = *std::find_if(rows().begin(), rows().end(), [&](const RowSpec& r) { return row_name == r.name; });
      CellPlan plan;
      plan.config = baseline_config(options, model, device, threads);
      plan.config.data.crop_pad = data.train.height() >= 32 ? 4 : 2;
      plan.device = device;
      plan.non_blocking = false;
      plan.steps = options.full ? 0 : options.steps;          // 0: whole epochs
      plan.eval_steps = options.full ? 0 : options.eval_steps;
      plan.warmup = options.full ? 1 : options.warmup;        // --full: the first of 5 epochs, as the seed
      plan.repeat = options.full ? 4 : options.repeat;

      BenchCell cell;
      cell.model = model;
      cell.row = row_name;
      cell.peak_memory_kind = memory_peak_kind(device);
      if (auto na = row.apply(plan)) {
        cell.status = *na;
      } else {
        cell.eval_only = !plan.train;
        const auto cell_start = std::chrono::steady_clock::now();
        const CellTimes times = cell_run(plan, data);
        std::vector<double> train_rates, eval_rates;
        for (const auto& rep : times.repetitions) train_rates.push_back(rep.train_img_per_s), eval_rates.push_back(rep.eval_img_per_s);
        const auto& train_rep = times.repetitions[lower_median_index(train_rates)];
        if (plan.train) {
          cell.train_img_per_s = train_rep.train_img_per_s;
          cell.train_img_per_s_min = *std::min_element(train_rates.begin(), train_rates.end());
          cell.train_img_per_s_max = *std::max_element(train_rates.begin(), train_rates.end());
          cell.train_s = static_cast<double>(result.train_images) / cell.train_img_per_s;
          cell.split = train_rep.split;
        }
        cell.eval_img_per_s = times.repetitions[lower_median_index(eval_rates)].eval_img_per_s;
        cell.eval_img_per_s_min = *std::min_element(eval_rates.begin(), eval_rates.end());
        cell.eval_img_per_s_max = *std::max_element(eval_rates.begin(), eval_rates.end());
        cell.test_s = static_cast<double>(result.test_images) / cell.eval_img_per_s;
        cell.peak_memory_bytes = plan.train ? times.train_peak_bytes : times.eval_peak_bytes;
        cell.eval_peak_memory_bytes = times.eval_peak_bytes;
        cell.forward_flops = times.forward_flops;
        const double peak_flops = result.environment.peak_gemm_gflops * 1e9;
        if (peak_flops > 0) cell.mfu = cell.forward_flops * 3.0 * cell.train_img_per_s / peak_flops;
        if (options.progress) {
          char train[48] = "train (eval-only row)";
          if (!cell.eval_only) std::snprintf(train, sizeof train, "train %8.1f img/s", cell.train_img_per_s);
          std::fprintf(stderr, "bench %-12s %-16s %s  eval %.1f img/s  (%.0f s)\n", model.c_str(), row_name.c_str(),
                       train, cell.eval_img_per_s,
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - cell_start).count());
        }
      }
      if (options.progress && cell.status != "ok")
        std::fprintf(stderr, "bench %-12s %-16s %s\n", model.c_str(), row_name.c_str(), cell.status.c_str());
      result.cells.push_back(std::move(cell));
    }
  }

  // Speedups against the baseline row of the same model, measured in this run.
  for (auto& cell : result.cells) {
    const auto base = std::find_if(result.cells.begin(), result.cells.end(), [&](const BenchCell& c) {
      return c.model == cell.model && c.row == "baseline" && c.status == "ok";
    });
    if (base == result.cells.end() || cell.status != "ok") continue;
    if (cell.train_img_per_s > 0 && base->train_img_per_s > 0) cell.train_speedup = cell.train_img_per_s / base->train_img_per_s;
    if (cell.eval_img_per_s > 0 && base->eval_img_per_s > 0) cell.eval_speedup = cell.eval_img_per_s / base->eval_img_per_s;
  }
  result.environment.load_average += ", end " + load_average();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - grid_start).count();
  return result;
}

} // namespace fastloop
