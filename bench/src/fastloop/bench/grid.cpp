// The bench grid: the run over models × rows (× ranks) × repetitions, each cell measured in this process
// or, with several ranks, by launched rank processes (dist_cell.h); speedups and scaling computed after.
#include "fastloop/bench/grid.h"

#include "fastloop/bench/cell_timer.h"
#include "fastloop/bench/device_probe.h"
#include "fastloop/bench/dist_cell.h"
#include "fastloop/bench/python_peer.h"
#include "fastloop/bench/rows.h"
#include "fastloop/bench/twin_peer.h"
#include "fastloop/core/env.h"
#include "fastloop/core/errors.h"
#include "fastloop/core/python_path.h"
#include "fastloop/core/stats.h"
#include "fastloop/core/text.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/models/registry.h"
#include "fastloop/models/torchscript.h"
#include "fastloop/train/runtime.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>

namespace fastloop {

namespace {

constexpr int64_t kCudaMinSteps = 50;  // per repetition on CUDA (issue 16: >= 50 steps or >= 1 s)

void options_check(const BenchOptions& o) {
  const auto valid_rows = bench_row_names();
  for (const auto& row : o.rows) {
    if (std::find(valid_rows.begin(), valid_rows.end(), row) == valid_rows.end())
      throw InputError("--rows: unknown row '" + row + "'; rows: " + join(valid_rows) + " (or all)");
  }
  const auto valid_models = model_names();
  if (o.models.empty()) throw InputError("--models: give at least one of " + join(valid_models));
  for (const auto& model : o.models) {
    if (!is_torchscript_name(model) && std::find(valid_models.begin(), valid_models.end(), model) == valid_models.end())
      throw InputError("--models: unknown model '" + model + "'; models: " + join(valid_models) + ", torchscript:FILE.pt");
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
  if (o.nproc.empty()) throw InputError("--nproc: give at least one rank count, e.g. 1,2");
  for (int64_t n : o.nproc) {
    if (n < 1 || n > 1024) throw InputError("--nproc " + std::to_string(n) + ": rank counts are 1 to 1024");
    if (std::count(o.nproc.begin(), o.nproc.end(), n) > 1) throw InputError("--nproc " + std::to_string(n) + " is given twice");
    if (n > 1 && o.cli.empty())
      throw InputError("--nproc " + std::to_string(n) + ": multi-rank cells are launched as processes of the fastloop "
                       "executable; run them with `fastloop bench --nproc ...` (BenchOptions::cli names it)");
  }
  if (!o.twin.empty()) {
    if (is_torchscript_name(o.twin) || std::find(valid_models.begin(), valid_models.end(), o.twin) == valid_models.end())
      throw InputError("--twin: '" + o.twin + "' is not a built-in model; models: " + join(valid_models));
    if (std::none_of(o.models.begin(), o.models.end(), [](const std::string& m) { return is_torchscript_name(m); }))
      throw InputError("--twin " + o.twin + " pairs torchscript:FILE cells with it: give one in --models");
  }
  if (!(o.bucket_mb > 0.0)) throw InputError("--bucket-mb must be positive, got " + std::to_string(o.bucket_mb));
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
  env.peak_gemm_bf16_gflops = device_gemm_peak(device, at::kBFloat16).gflops;
  if (device.is_cuda()) env.peak_gemm_fp16_gflops = device_gemm_peak(device, at::kHalf).gflops;
  env.date = utc_now();
  env.load_average = "start " + load_average();
  return env;
}

/// A cell's numbers from its measured repetitions (the lower median's, with the spread).
void cell_fill(BenchCell& cell, const CellPlan& plan, const CellTimes& times, const BenchResult& result) {
  cell.eval_only = !plan.train;
  cell.buckets = times.buckets;
  std::vector<double> train_rates, eval_rates;
  for (const auto& rep : times.repetitions) train_rates.push_back(rep.train_img_per_s), eval_rates.push_back(rep.eval_img_per_s);
  cell.eval_img_per_s_reps = eval_rates;  // the raw values beside the median, so a reader can recompute it
  if (plan.train) {
    cell.train_img_per_s_reps = train_rates;
    const auto& rep = times.repetitions[median_index(train_rates)];  // the split is this repetition's too
    const Spread s = spread(train_rates);
    cell.train_img_per_s = rep.train_img_per_s;
    cell.train_img_per_s_min = s.min, cell.train_img_per_s_max = s.max;
    cell.train_s = static_cast<double>(result.train_images) / cell.train_img_per_s;
    cell.split = rep.split;
    cell.allreduces_per_step = rep.allreduces_per_step;
    cell.comm_span_s = rep.comm_span_s;
    if (rep.comm_span_s > 0.0) cell.comm_hidden_fraction = std::clamp(1.0 - rep.comm_exposed_s / rep.comm_span_s, 0.0, 1.0);
  }
  const Spread s = spread(eval_rates);
  cell.eval_img_per_s = times.repetitions[median_index(eval_rates)].eval_img_per_s;
  cell.eval_img_per_s_min = s.min, cell.eval_img_per_s_max = s.max;
  cell.test_s = static_cast<double>(result.test_images) / cell.eval_img_per_s;
  cell.peak_memory_bytes = plan.train ? times.train_peak_bytes : times.eval_peak_bytes;
  cell.eval_peak_memory_bytes = times.eval_peak_bytes;
  cell.forward_flops = times.forward_flops;
  const double peak_flops = peak_gemm_gflops_for(result.environment, plan.config.perf.amp) * 1e9;
  if (peak_flops > 0) cell.mfu = cell.forward_flops * 3.0 * cell.train_img_per_s / peak_flops;
}

/// Speedups against the baseline row (same model, same ranks) and scaling against one rank (same model
/// and row), all measured in this run.
void ratios_fill(std::vector<BenchCell>& cells, c10::Device device) {
  auto find = [&](const std::string& model, const std::string& row, int64_t nproc) -> const BenchCell* {
    for (const auto& c : cells)
      if (c.model == model && c.row == row && c.nproc == nproc && c.status == "ok") return &c;
    return nullptr;
  };
  auto ratio = [](double a, double b) { return a > 0.0 && b > 0.0 ? a / b : 0.0; };
  for (auto& cell : cells) {
    if (cell.status != "ok") continue;
    if (const BenchCell* base = find(cell.model, "baseline", cell.nproc)) {
      cell.train_speedup = ratio(cell.train_img_per_s, base->train_img_per_s);
      cell.eval_speedup = ratio(cell.eval_img_per_s, base->eval_img_per_s);
    }
    const BenchCell* one = cell.nproc > 1 ? find(cell.model, cell.row, 1) : nullptr;
    if (!one) continue;
    cell.nproc_speedup = ratio(cell.train_img_per_s > 0.0 ? cell.train_img_per_s : cell.eval_img_per_s,
                               cell.train_img_per_s > 0.0 ? one->train_img_per_s : one->eval_img_per_s);
    // Per unit of hardware: on CUDA each rank adds a GPU; on the CPU the ranks split the same cores.
    const double devices = device.is_cuda() ? static_cast<double>(cell.nproc) : 1.0;
    cell.scaling_efficiency = cell.nproc_speedup / devices;
  }
}

/// "  ÷ WHAT 1.02× (0.98–1.05, noise)" (training's ratio, or evaluation's on an eval-only row); "  WHAT
/// n/a: why" when it could not run; "" when it did not run.
std::string ratio_text(const Comparison& c, bool eval_only) {
  const PairRatio& r = eval_only ? c.eval : c.train;
  if (r.median <= 0.0) return c.ran() && c.status != "ok" ? "  " + c.name + " " + c.status : "";
  char text[96];
  std::snprintf(text, sizeof text, "  ÷ %s %.2f× (%.2f–%.2f%s)", c.name.c_str(), r.median, r.min, r.max,
                r.noisy ? ", noise" : "");
  return text;
}

/// The cell's line on stderr as soon as it is measured.
void cell_print(const BenchCell& cell, double seconds) {
  std::string name = cell.nproc > 1 ? cell.model + " ×" + std::to_string(cell.nproc) : cell.model;
  name.resize(std::max<size_t>(name.size(), cell.nproc > 1 ? 16 : 15), ' ');  // "×" is 2 bytes, 1 column
  if (cell.status != "ok") {
    std::fprintf(stderr, "bench %s %-16s %s\n", name.c_str(), cell.row.c_str(), cell.status.c_str());
    return;
  }
  char train[48] = "train (eval-only row)";
  if (!cell.eval_only) std::snprintf(train, sizeof train, "train %8.1f img/s", cell.train_img_per_s);
  std::string vs;
  for (const Comparison* c : {&cell.python, &cell.twin, &cell.eager}) vs += ratio_text(*c, cell.eval_only);
  std::fprintf(stderr, "bench %s %-16s %s  eval %.1f img/s%s  (%.0f s)\n", name.c_str(), cell.row.c_str(), train,
               cell.eval_img_per_s, vs.c_str(), seconds);
}

/// One cell: planned, measured (its peer's repetitions interleaved when there is a peer) and filled in; a
/// cell that fails (its ranks, a capture, out of memory) says so in its place and the grid goes on.
BenchCell cell_measure(const BenchResult& result, const std::string& model, const std::string& row, int64_t nproc,
                       c10::Device device, int64_t threads, const DatasetSplits& data, PythonPeer* peer) {
  const BenchOptions& options = result.options;
  // Ranks split the cores of this machine (on CUDA each drives its GPU with the same threads).
  const int64_t rank_threads = device.is_cuda() ? threads : std::max<int64_t>(1, threads / nproc);
  std::optional<std::string> na;
  CellPlan plan = bench_cell_plan(options, model, row, device, rank_threads, nproc, data, na);
  BenchCell cell;
  cell.model = model;
  cell.row = row;
  cell.nproc = nproc;
  cell.threads = rank_threads;
  cell.peak_memory_kind = memory_peak_kind(device);
  const auto cell_start = std::chrono::steady_clock::now();
  std::optional<PythonCellPeer> peer_cell;
  if (peer && nproc == 1 && !na) plan.peers.push_back(&peer_cell.emplace(*peer, model, row));
  std::optional<TwinPeer> twin;
  std::optional<PythonCellPeer> eager_cell;  // the twin in eager PyTorch, in the peer's second slot
  if (!options.twin.empty() && is_torchscript_name(model) && nproc == 1 && !na) {
    std::optional<std::string> twin_na;
    CellPlan twin_plan = bench_cell_plan(options, options.twin, row, device, rank_threads, nproc, data, twin_na);
    if (!twin_na) plan.peers.push_back(&twin.emplace(std::move(twin_plan), data, options.twin));
    if (!twin_na && peer) plan.peers.push_back(&eager_cell.emplace(*peer, options.twin, row, 1));
  }
  if (na) {
    cell.status = *na;
  } else {
    try {
      cell_fill(cell, plan, nproc == 1 ? cell_run(plan, data) : dist_cell_launch(options, model, row, nproc, rank_threads),
                result);
    } catch (const RunError& e) {
      cell.status = std::string("failed: ") + e.what();
    } catch (const c10::Error& e) {
      cell.status = std::string("failed: ") + e.what_without_backtrace();
    } catch (const std::exception& e) {  // any other cause of one cell (a file, a rank) ends only that cell
      cell.status = std::string("failed: ") + e.what();
    }
  }
  if (cell.status == "ok") {
    if (peer_cell) cell.python = comparison_of(cell, "PyTorch", *peer_cell);
    if (twin) cell.twin = comparison_of(cell, options.twin, *twin);
    if (eager_cell) cell.eager = comparison_of(cell, "eager " + options.twin, *eager_cell);
  }
  if (options.progress) cell_print(cell, std::chrono::duration<double>(std::chrono::steady_clock::now() - cell_start).count());
  return cell;
}

}  // namespace

BenchResult bench_run(const BenchOptions& options) {
  options_check(options);
  const auto grid_start = std::chrono::steady_clock::now();
  BenchResult result;
  result.options = options;
  if (result.options.rows.empty()) result.options.rows = bench_row_names();
  const c10::Device device = device_resolve(options.device);
  threads_apply(options.threads);
  const int64_t threads = at::get_num_threads();

  const DatasetSplits data = bench_data_load(options);
  const bool synthetic = data.name == "synthetic";
  result.train_images = synthetic ? 50000 : data.train.size();
  result.test_images = synthetic ? 10000 : data.test.size();
  result.environment = environment_detect(device);
  for (const auto& row : result.options.rows) result.row_descriptions.push_back(bench_row_description(row));
  {
    std::optional<std::string> na;
    result.config_json =
        config_to_json(bench_cell_plan(options, options.models.front(), "baseline", device, threads, 1, data, na).config);
  }

  if (device.is_cuda() && !options.full) {  // launch-bound GPU steps need many per repetition for a stable rate
    result.options.steps = std::max(result.options.steps, kCudaMinSteps);
    result.options.eval_steps = std::max(result.options.eval_steps, kCudaMinSteps);
  }
  std::unique_ptr<PythonPeer> peer;
  std::string peer_failure;
  if (options.compare_python) {
    try {
      peer = std::make_unique<PythonPeer>(python_interpreter(options.python),
                                          options.peer, result.options, device.is_cuda() ? "cuda" : "cpu", threads);
      result.environment.pytorch_version = peer->torch_version();
    } catch (const std::exception& e) {
      peer_failure = std::string("failed: ") + e.what();
      std::fprintf(stderr, "bench: %s; the grid goes on without it\n", e.what());
    }
  }
  for (const auto& model : options.models) {
    for (const auto& row : result.options.rows) {
      for (const int64_t nproc : options.nproc) {
        BenchCell cell = cell_measure(result, model, row, nproc, device, threads, data, peer.get());
        if (options.compare_python && !cell.python.ran() && cell.status == "ok") {  // not the cells fastloop could not run
          cell.python.name = "PyTorch";
          cell.python.status = !peer_failure.empty() ? peer_failure : "n/a: distributed cells are not compared";
        }
        result.cells.push_back(std::move(cell));
        if (options.on_cell) {
          ratios_fill(result.cells, device);
          options.on_cell(result);
        }
      }
    }
  }
  ratios_fill(result.cells, device);
  result.environment.load_average += ", end " + load_average();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - grid_start).count();
  return result;
}

double peak_gemm_gflops_for(const BenchEnvironment& environment, const std::string& amp) {
  if (amp == "bf16") return environment.peak_gemm_bf16_gflops;
  if (amp == "fp16") return environment.peak_gemm_fp16_gflops;
  return environment.peak_gemm_gflops;
}

} // namespace fastloop
