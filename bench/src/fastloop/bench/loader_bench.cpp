// The loader benchmark: each cell is a fresh Loader timed over `batches` batches after a warm-up,
// repeated; wall time gives img/s, std::clock() (process CPU, every thread) the CPU cost per image. With
// --decode-limit, each image cell also times the decode alone (decode_limit_cell): the limit the loader nears.
#include "fastloop/bench/loader_bench.h"

#include "fastloop/bench/report_tables.h"

#include "fastloop/bench/train_step_rate.h"

#include "fastloop/core/clock.h"
#include "fastloop/core/env.h"
#include "fastloop/core/errors.h"
#include "fastloop/core/shell.h"
#include "fastloop/core/stats.h"
#include "fastloop/data/transforms/augment.h"
#include "fastloop/data/transforms/image_augment.h"
#include "fastloop/data/loader/loader.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/data/sources/synthetic.h"

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <torch/cuda.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace fastloop {

namespace {


std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

// CIFAR: RandomCrop(32, padding=4) + RandomHorizontalFlip; image files: RandomResizedCrop + flip (on),
// Resize + CenterCrop (off); JPEGs decoded as --decode says.
AugmentOptions augment_for(const Dataset& data, bool augment, const std::string& decode) {
  AugmentOptions options = augment ? augment_crop_flip(data.encoded ? 0 : 4) : AugmentOptions{};
  options.fast_decode = decode == "fast";
  return options;
}

LoaderBenchRow loader_cell(const Dataset& data, const LoaderBenchOptions& o, int64_t workers, bool augment) {
  LoaderOptions options;
  options.batch_size = o.batch_size;
  options.workers = workers;
  options.augment = augment_for(data, augment, o.decode);
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
    const double seconds = seconds_since(start);
    const double cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    rates.push_back(static_cast<double>(images) / seconds);
    cpu.push_back(1e6 * cpu_seconds / static_cast<double>(images));
  }
  return {workers, augment, median(rates), median(cpu), 0.0, 0.0};
}

// The decode limit of a loader cell: the same JPEGs (read into memory first, untimed), the same regions at the
// same DCT scale as the loader's workers decode them (encoded_decode_only), no transform, `threads` threads each
// taking one batch's samples at a time as the workers do; the median of the repetitions' images/s.
double decode_limit_cell(const Dataset& data, const LoaderBenchOptions& o, int64_t threads, bool augment) {
  const AugmentOptions options = augment_for(data, augment, o.decode);
  const int64_t n = data.size();
  std::vector<std::string> files(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    std::string buffer;
    files[static_cast<size_t>(i)] = std::string(data.encoded->bytes(i, buffer));
  }
  const auto run = [&](int64_t batches, int64_t first) {  // decodes samples [first, first + batches x batch)
    std::atomic<int64_t> next{0};
    const auto work = [&] {
      for (int64_t b; (b = next.fetch_add(1)) < batches;)
        for (int64_t k = first + b * o.batch_size, end = k + o.batch_size; k < end; ++k)
          encoded_decode_only(data, files[static_cast<size_t>(k % n)], k % n, options, 0, k / n);
    };
    std::vector<std::thread> pool;
    const auto start = Clock::now();
    for (int64_t t = 0; t < threads; ++t) pool.emplace_back(work);
    for (auto& thread : pool) thread.join();
    return static_cast<double>(batches * o.batch_size) / seconds_since(start);
  };
  run(std::max<int64_t>(o.warmup, threads), 0);
  std::vector<double> rates;
  for (int64_t r = 0; r < o.repeats; ++r) rates.push_back(run(o.batches, (r + 1) * o.batches * o.batch_size));
  return median(rates);
}

AssembleBenchRow assemble_cell(const Dataset& data, const LoaderBenchOptions& o, at::ScalarType dtype,
                               bool channels_last) {
  const AugmentOptions augment = augment_for(data, true, o.decode);
  const int64_t batches = data.encoded ? 2 : o.batches;  // decoding is ~100x the work of a 32x32 crop
  std::vector<int64_t> indices(static_cast<size_t>(o.batch_size));
  std::iota(indices.begin(), indices.end(), int64_t{0});
  const auto format = channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
  at::Tensor images = at::empty({o.batch_size, data.channels(), data.height(), data.width()}, at::TensorOptions(dtype), format);
  at::Tensor labels = at::empty({o.batch_size}, at::kLong);
  std::vector<double> us;
  for (int64_t r = 0; r < o.repeats + 1; ++r) {  // the first repetition warms caches and is dropped
    const auto start = Clock::now();
    for (int64_t i = 0; i < batches; ++i) batch_assemble(data, indices.data(), o.batch_size, augment, 0, i, images, labels);
    const double seconds = seconds_since(start);
    if (r > 0) us.push_back(1e6 * seconds / static_cast<double>(batches * o.batch_size));
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

}  // namespace

LoaderBenchResult loader_bench_run(const LoaderBenchOptions& options) {
  LoaderBenchOptions o = options;
  if (o.batch_size < 1 || o.batches < 0 || o.repeats < 1 || o.warmup < 0 || o.images < o.batch_size)
    throw InputError("bench loader: need --batch-size, --repeats >= 1, --batches >= 0 and --images >= --batch-size");
  if (o.decode != "exact" && o.decode != "fast")
    throw InputError("bench loader: --decode '" + o.decode + "' is not one of: exact, fast");
  LoaderBenchResult result;
  result.machine = cpu_model() + ", " + std::to_string(usable_cores()) + " usable cores";
  result.cores = usable_cores();
  result.libtorch_version = TORCH_VERSION;
  Dataset data;
  if (o.data.empty()) {
    data = synthetic_make(o.images, 3, 32, 32, 10, 0);
    result.data = "CIFAR-shaped synthetic uint8 data (" + std::to_string(o.images) + " images, 3x32x32)";
  } else {
    DataOptions data_options;
    data_options.image.size = o.image_size;
    data = data_load(o.data, data_options).train;
    result.data = o.data + " (" + std::to_string(data.size()) + " train images" +
                  (data.encoded ? ", decoded to " + std::to_string(o.image_size) + "x" + std::to_string(o.image_size) : "") + ")";
  }
  if (data.size() < o.batch_size) throw InputError("bench loader: " + o.data + " has fewer images than --batch-size");
  result.encoded = data.encoded != nullptr;
  if (o.batches == 0) o.batches = result.encoded ? 20 : 300;
  if (o.python_batches == 0) o.python_batches = result.encoded ? 20 : 40;
  result.options = o;
  if (o.decode_limit && !result.encoded) throw InputError("bench loader: --decode-limit needs image files (--data)");
  for (bool augment : augment_values(o.augment))
    for (int64_t workers : o.workers) {
      result.rows.push_back(loader_cell(data, o, workers, augment));
      if (o.decode_limit) result.rows.back().decode_img_per_s = decode_limit_cell(data, o, std::max<int64_t>(1, workers), augment);
    }
  for (auto dtype : {at::kFloat, at::kHalf, at::kBFloat16})
    for (bool channels_last : {false, true})
      if (!result.encoded || (dtype == at::kFloat) != channels_last)  // images: float32 NCHW and the AMP layouts
        result.assemble.push_back(assemble_cell(data, o, dtype, channels_last));
  if (result.encoded && !o.step_model.empty()) {
    const c10::Device device = torch::cuda::is_available() ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
    const StepRate rate = train_step_rate(o.step_model, o.image_size, o.step_batch, 3, device);
    result.step_img_per_s = rate.img_per_s;
    result.step_device = rate.device;
  }
  return result;
}

void loader_bench_compare_python(LoaderBenchResult& result, const std::string& python, const std::string& peer_script) {
  const auto& o = result.options;
  std::string workers;
  for (int64_t w : o.workers) workers += (workers.empty() ? "" : ",") + std::to_string(w);
  std::string command = shell_quote(python) + " " + shell_quote(peer_script) + " --workers " + workers +
                        " --batch-size " + std::to_string(o.batch_size) + " --augment " + o.augment + " --batches " +
                        std::to_string(o.python_batches) + " --images " + std::to_string(o.images);
  if (!o.data.empty()) {
    if (o.data.rfind("imagefolder:", 0) != 0)
      throw InputError("--compare-python: the PyTorch peer reads synthetic data or imagefolder:DIR, not '" + o.data + "'");
    command += " --imagefolder " + shell_quote(o.data.substr(12)) + " --image-size " + std::to_string(o.image_size);
  }
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
      if (row.workers == peer.at("workers").get<int64_t>() && row.augment == peer.at("augment").get<bool>()) {
        row.pytorch_img_per_s = peer.at("img_per_s").get<double>();
        row.pytorch_cpu_us_per_img = peer.value("cpu_us_per_img", 0.0);
      }
    }
  }
}

std::string loader_bench_verdict(const LoaderBenchResult& r) {
  if (r.step_img_per_s <= 0) return "";
  const LoaderBenchRow* best = nullptr;  // the fastest training-transform cell
  for (const auto& row : r.rows)
    if (row.augment && (!best || row.img_per_s > best->img_per_s)) best = &row;
  if (!best) return "";
  const auto& o = r.options;
  const double need = r.step_img_per_s;
  const double cores_to_feed = best->cpu_us_per_img * need / 1e6;  // CPU cores busy loading at the training rate
  std::ostringstream v;
  v << "Keeps up with " << o.step_model << " training at " << o.image_size << "x" << o.image_size << "? "
    << o.step_model << "'s training step (fastloop's train_step, fp32, batch " << o.step_batch << ", " << r.step_device
    << ") runs at " << report_fixed(need, 1) << " img/s; the loader's best training-transform cell gives " << report_fixed(best->img_per_s, 0)
    << " img/s with " << best->workers << " workers, " << report_fixed(best->img_per_s / need, 1) << "x that rate: "
    << (best->img_per_s >= need ? "it keeps up" : "it does NOT keep up") << ". Feeding " << report_fixed(need, 1)
    << " img/s costs " << report_fixed(cores_to_feed, 2) << " of the " << r.cores << " cores (" << report_fixed(best->cpu_us_per_img, 0)
    << " µs of CPU per image)";
  if (r.step_device == "cpu") v << ", which the model's step, running on the same cores, then lacks";
  v << ".\n";
  return v.str();
}

std::string loader_bench_json(const LoaderBenchResult& r) {
  nlohmann::ordered_json out;
  out["bench"] = "loader";
  out["machine"] = r.machine;
  out["libtorch"] = r.libtorch_version;
  out["pytorch"] = r.pytorch_version;
  out["data"] = r.data;
  out["image_size"] = r.encoded ? r.options.image_size : 32;
  out["decode"] = r.options.decode;
  out["batch_size"] = r.options.batch_size;
  out["images"] = r.options.images;
  out["batches"] = r.options.batches;
  out["repeats"] = r.options.repeats;
  out["python_batches"] = r.options.python_batches;
  out["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : r.rows) {
    nlohmann::ordered_json e = {{"workers", row.workers}, {"augment", row.augment}, {"img_per_s", row.img_per_s},
                                {"cpu_us_per_img", row.cpu_us_per_img}, {"img_per_s_per_core", 1e6 / row.cpu_us_per_img}};
    if (row.decode_img_per_s > 0) {
      e["decode_limit_img_per_s"] = row.decode_img_per_s;
      e["share_of_decode_limit"] = row.img_per_s / row.decode_img_per_s;
    }
    if (row.pytorch_img_per_s > 0) {
      e["pytorch_img_per_s"] = row.pytorch_img_per_s;
      e["pytorch_cpu_us_per_img"] = row.pytorch_cpu_us_per_img;
      e["ratio"] = row.img_per_s / row.pytorch_img_per_s;
    }
    out["rows"].push_back(e);
  }
  out["assemble"] = nlohmann::ordered_json::array();
  for (const auto& a : r.assemble)
    out["assemble"].push_back({{"dtype", a.dtype}, {"channels_last", a.channels_last}, {"us_per_img", a.us_per_img}});
  if (r.step_img_per_s > 0) {
    out["train_step"] = {{"model", r.options.step_model}, {"batch", r.options.step_batch}, {"device", r.step_device},
                         {"img_per_s", r.step_img_per_s}};
    out["verdict"] = loader_bench_verdict(r);
  }
  return out.dump(2) + "\n";
}

std::string loader_bench_markdown(const LoaderBenchResult& r) {
  std::ostringstream md;
  const auto& o = r.options;
  const std::string transforms = r.encoded ? "augment on = decode + RandomResizedCrop(" + std::to_string(o.image_size) +
                                                 ") + RandomHorizontalFlip, off = decode + Resize(" +
                                                 std::to_string(o.image_size * 256 / 224) + ") + CenterCrop(" +
                                                 std::to_string(o.image_size) + ")"
                                           : "augment = RandomCrop(32, padding=4) + RandomHorizontalFlip";
  const std::string decode = r.encoded ? std::string(o.decode == "fast" ? "; --decode fast (JPEGs at a reduced DCT scale)"
                                                                        : "; --decode exact (JPEGs at full scale)")
                                       : "";
  md << "# fastloop bench loader\n\n"
     << "Loader alone (no model), " << r.data << ", batch " << o.batch_size << ", shuffled; " << transforms << decode
     << "; always normalized to float32 NCHW. Median of " << o.repeats << " x " << o.batches << " batches after "
     << o.warmup << " warm-up batches.\n\n"
     << "Machine: " << r.machine << "; LibTorch " << r.libtorch_version;
  if (!r.pytorch_version.empty())
    md << "; PyTorch peer: torch " << r.pytorch_version << " DataLoader + torchvision transforms on PIL images"
       << (r.encoded ? " (ImageFolder, " : " (") << o.python_batches << " batches per cell, bench/peers/loader_peer.py)";
  ReportTable rates{"", "", {"workers", "augment", "fastloop img/s", "CPU µs/img", "img/s per core", "PyTorch img/s",
                            "PyTorch CPU µs/img", "ratio"}, {}};
  for (const auto& row : r.rows) {
    const bool peer = row.pytorch_img_per_s > 0;
    rates.rows.push_back({std::to_string(row.workers), row.augment ? "on" : "off", report_fixed(row.img_per_s, 0),
                          report_fixed(row.cpu_us_per_img, 1), report_fixed(1e6 / row.cpu_us_per_img, 0),
                          peer ? report_fixed(row.pytorch_img_per_s, 0) : "-",
                          peer && row.pytorch_cpu_us_per_img > 0 ? report_fixed(row.pytorch_cpu_us_per_img, 0) : "-",
                          peer ? report_fixed(row.img_per_s / row.pytorch_img_per_s, 1) + "x" : "-"});
  }
  if (o.decode_limit) {
    rates.header.insert(rates.header.begin() + 4, {"decode limit img/s", "share of it"});
    for (size_t i = 0; i < r.rows.size(); ++i) {
      const double limit = r.rows[i].decode_img_per_s;
      rates.rows[i].insert(rates.rows[i].begin() + 4, {report_fixed(limit, 0), report_fixed(100 * r.rows[i].img_per_s / limit, 0) + "%"});
    }
    md << ". Decode limit: the same JPEGs (in memory), the same regions at the same DCT scale, libjpeg-turbo alone, "
          "one thread per worker (one for 0 workers), no transform";
  }
  md << ".\n\n" << report_markdown(rates);
  const std::string side = r.encoded ? std::to_string(o.image_size) : "32";
  ReportTable assemble{"", "", {"output", "layout", "µs/img"}, {}};
  for (const auto& a : r.assemble)
    assemble.rows.push_back({a.dtype, a.channels_last ? "channels_last" : "NCHW", report_fixed(a.us_per_img, 2)});
  md << "\nbatch_assemble alone, one thread, augmented " << side << "x" << side << "x3 images:\n\n"
     << report_markdown(assemble);
  const std::string verdict = loader_bench_verdict(r);
  if (!verdict.empty()) md << "\n" << verdict;
  return md.str();
}

} // namespace fastloop
