// The loader benchmark: each cell is a fresh Loader timed over `batches` batches after a warm-up,
// repeated; wall time gives img/s, std::clock() (process CPU, every thread) the CPU cost per image.
#include "fastloop/bench/loader_bench.h"

#include "fastloop/core/env.h"
#include "fastloop/core/errors.h"
#include "fastloop/core/shell.h"
#include "fastloop/data/augment.h"
#include "fastloop/data/loader.h"
#include "fastloop/data/synthetic.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace fastloop {

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

LoaderBenchRow loader_cell(const Dataset& data, const LoaderBenchOptions& o, int64_t workers, bool augment) {
  LoaderOptions options;
  options.batch_size = o.batch_size;
  options.workers = workers;
  options.augment = {augment, 4, augment};  // CIFAR: RandomCrop(32, padding=4) + RandomHorizontalFlip
  Loader loader(data, options);
  int64_t epoch = 0;
  loader.start_epoch(epoch);
  auto take = [&] {
    auto batch = loader.next();
    if (!batch) {
      loader.start_epoch(++epoch);
      batch = loader.next();
    }
    return batch->labels.size(0);
  };
  for (int64_t i = 0; i < o.warmup; ++i) take();
  std::vector<double> rates, cpu;
  for (int64_t r = 0; r < o.repeats; ++r) {
    int64_t images = 0;
    const std::clock_t cpu_start = std::clock();
    const auto start = Clock::now();
    for (int64_t i = 0; i < o.batches; ++i) images += take();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const double cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    rates.push_back(static_cast<double>(images) / seconds);
    cpu.push_back(1e6 * cpu_seconds / static_cast<double>(images));
  }
  return {workers, augment, median(rates), median(cpu), 0.0};
}

AssembleBenchRow assemble_cell(const Dataset& data, const LoaderBenchOptions& o, at::ScalarType dtype,
                               bool channels_last) {
  const AugmentOptions augment{true, 4, true};
  std::vector<int64_t> indices(static_cast<size_t>(o.batch_size));
  std::iota(indices.begin(), indices.end(), int64_t{0});
  const auto format = channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
  at::Tensor images = at::empty({o.batch_size, 3, 32, 32}, at::TensorOptions(dtype), format);
  at::Tensor labels = at::empty({o.batch_size}, at::kLong);
  std::vector<double> us;
  for (int64_t r = 0; r < o.repeats + 1; ++r) {  // the first repetition warms caches and is dropped
    const auto start = Clock::now();
    for (int64_t i = 0; i < o.batches; ++i) batch_assemble(data, indices.data(), o.batch_size, augment, 0, i, images, labels);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (r > 0) us.push_back(1e6 * seconds / static_cast<double>(o.batches * o.batch_size));
  }
  const char* name = dtype == at::kFloat ? "float32" : dtype == at::kHalf ? "float16" : "bfloat16";
  return {name, channels_last, median(us)};
}

std::vector<bool> augment_values(const std::string& augment) {
  if (augment == "on") return {true};
  if (augment == "off") return {false};
  if (augment == "both") return {false, true};
  throw InputError("--augment: '" + augment + "' is not one of: both, on, off");
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

}  // namespace

LoaderBenchResult loader_bench_run(const LoaderBenchOptions& o) {
  if (o.batch_size < 1 || o.batches < 1 || o.repeats < 1 || o.warmup < 0 || o.images < o.batch_size)
    throw InputError("bench loader: need --batch-size, --batches, --repeats >= 1 and --images >= --batch-size");
  LoaderBenchResult result;
  result.options = o;
  result.machine = cpu_model() + ", " + std::to_string(usable_cores()) + " usable cores";
  result.libtorch_version = TORCH_VERSION;
  const Dataset data = synthetic_make(o.images, 3, 32, 32, 10, 0);
  for (bool augment : augment_values(o.augment))
    for (int64_t workers : o.workers) result.rows.push_back(loader_cell(data, o, workers, augment));
  for (auto dtype : {at::kFloat, at::kHalf, at::kBFloat16})
    for (bool channels_last : {false, true}) result.assemble.push_back(assemble_cell(data, o, dtype, channels_last));
  return result;
}

void loader_bench_compare_python(LoaderBenchResult& result, const std::string& python, const std::string& peer_script) {
  const auto& o = result.options;
  std::string workers;
  for (int64_t w : o.workers) workers += (workers.empty() ? "" : ",") + std::to_string(w);
  const std::string command = shell_quote(python) + " " + shell_quote(peer_script) + " --workers " + workers +
                              " --batch-size " + std::to_string(o.batch_size) + " --augment " + o.augment + " --batches " +
                              std::to_string(o.python_batches) + " --images " + std::to_string(o.images);
  const CommandOutput peer = command_output(command);
  if (!peer.started) throw std::runtime_error("bench loader: cannot start: " + command);
  const std::string& out = peer.out;
  const int status = peer.status;
  if (status != 0 || out.find('{') == std::string::npos)
    throw std::runtime_error("bench loader: the PyTorch peer failed (exit status " + std::to_string(status) +
                             "): " + command + "; set FASTLOOP_PYTHON to a python with torch and torchvision");
  const auto json = nlohmann::json::parse(out.substr(out.find('{')));
  result.pytorch_version = json.at("torch").get<std::string>();
  for (const auto& peer : json.at("rows")) {
    for (auto& row : result.rows) {
      if (row.workers == peer.at("workers").get<int64_t>() && row.augment == peer.at("augment").get<bool>())
        row.pytorch_img_per_s = peer.at("img_per_s").get<double>();
    }
  }
}

std::string loader_bench_json(const LoaderBenchResult& r) {
  nlohmann::ordered_json out;
  out["bench"] = "loader";
  out["machine"] = r.machine;
  out["libtorch"] = r.libtorch_version;
  out["pytorch"] = r.pytorch_version;
  out["batch_size"] = r.options.batch_size;
  out["images"] = r.options.images;
  out["batches"] = r.options.batches;
  out["repeats"] = r.options.repeats;
  out["python_batches"] = r.options.python_batches;
  out["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : r.rows) {
    nlohmann::ordered_json e = {{"workers", row.workers}, {"augment", row.augment}, {"img_per_s", row.img_per_s},
                                {"cpu_us_per_img", row.cpu_us_per_img}};
    if (row.pytorch_img_per_s > 0) {
      e["pytorch_img_per_s"] = row.pytorch_img_per_s;
      e["ratio"] = row.img_per_s / row.pytorch_img_per_s;
    }
    out["rows"].push_back(e);
  }
  out["assemble"] = nlohmann::ordered_json::array();
  for (const auto& a : r.assemble)
    out["assemble"].push_back({{"dtype", a.dtype}, {"channels_last", a.channels_last}, {"us_per_img", a.us_per_img}});
  return out.dump(2) + "\n";
}

std::string loader_bench_markdown(const LoaderBenchResult& r) {
  std::ostringstream md;
  const auto& o = r.options;
  md << "# fastloop bench loader\n\n"
     << "Loader alone (no model), CIFAR-shaped synthetic uint8 data (" << o.images << " images, 3x32x32), batch "
     << o.batch_size << ", shuffled; augment = RandomCrop(32, padding=4) + RandomHorizontalFlip; always "
     << "normalized to float32 NCHW. Median of " << o.repeats << " x " << o.batches << " batches after "
     << o.warmup << " warm-up batches.\n\n"
     << "Machine: " << r.machine << "; LibTorch " << r.libtorch_version;
  if (!r.pytorch_version.empty())
    md << "; PyTorch peer: torch " << r.pytorch_version << " DataLoader + torchvision transforms on PIL images ("
       << o.python_batches << " batches per cell, tools/loader_peer.py)";
  md << ".\n\n| workers | augment | fastloop img/s | CPU µs/img | PyTorch img/s | ratio |\n|---:|:---:|---:|---:|---:|---:|\n";
  for (const auto& row : r.rows) {
    md << "| " << row.workers << " | " << (row.augment ? "on" : "off") << " | " << fixed(row.img_per_s, 0) << " | "
       << fixed(row.cpu_us_per_img, 2) << " | "
       << (row.pytorch_img_per_s > 0 ? fixed(row.pytorch_img_per_s, 0) : "-") << " | "
       << (row.pytorch_img_per_s > 0 ? fixed(row.img_per_s / row.pytorch_img_per_s, 1) + "x" : "-") << " |\n";
  }
  md << "\nbatch_assemble alone, one thread, augmented 32x32x3 images:\n\n| output | layout | µs/img |\n|---|---|---:|\n";
  for (const auto& a : r.assemble)
    md << "| " << a.dtype << " | " << (a.channels_last ? "channels_last" : "NCHW") << " | " << fixed(a.us_per_img, 2)
       << " |\n";
  return md.str();
}

} // namespace fastloop
