// _C.Loader: fastloop's Loader over one split of a --data source, with the loader options `fastloop train`
// (train_loader_options) or evaluation (eval_loader_options) would use for the same settings, so its
// batches are the CLI's, bit for bit. Batches are the loader's own buffers as torch tensors (no copy; a
// CPU buffer returns to the pool when Python frees its tensor). Waits release the GIL and look for
// Ctrl-C every 50 ms; a worker's error is raised in Python as the CLI reports it.
#include "bindings.h"

#include "fastloop/core/config.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/loader.h"
#include "fastloop/data/source.h"
#include "fastloop/train/evaluate.h"
#include "fastloop/train/perf_auto.h"
#include "fastloop/train/setup.h"

#include <memory>
#include <optional>
#include <string>

namespace fastloop::python {
namespace {

/// The keyword arguments of fastloop.Loader, resolved by the Python side (None: -1 or nullopt here).
struct SplitLoaderArgs {
  std::string source, split = "train";
  int64_t batch_size = 128, workers = -1, prefetch = 4, image_size = 224, seed = 0, rank = 0, world_size = 1;
  std::optional<bool> augment, shuffle, drop_last;
  std::string mean, std, dtype = "float32", device = "cpu", bad_image_policy = "stop";
  bool channels_last = false;
};

at::ScalarType dtype_named(const std::string& name) {
  if (name == "float32") return at::kFloat;
  if (name == "float16") return at::kHalf;
  if (name == "bfloat16") return at::kBFloat16;
  throw InputError("fastloop.Loader: dtype must be torch.float32, torch.float16 or torch.bfloat16, got " + name);
}

class SplitLoader {
 public:
  explicit SplitLoader(const SplitLoaderArgs& args) {
    if (args.split != "train" && args.split != "val" && args.split != "test")
      throw InputError("fastloop.Loader: split must be 'train', 'val' or 'test', got '" + args.split + "'");
    if (args.world_size < 1 || args.rank < 0 || args.rank >= args.world_size)
      throw InputError("fastloop.Loader: rank " + std::to_string(args.rank) + " of world_size " +
                       std::to_string(args.world_size) + " is not a rank of the group");
    TrainConfig config = config_of(args);
    data_ = data_load(config.data);
    const bool train = args.split == "train";
    const Dataset& split = train ? data_.train : data_.test;
    if (split.size() == 0)
      throw InputError("fastloop.Loader: " + args.source + " has no " + args.split + " split (an image folder without "
                       "val/, shards without val-*.tar)");
    const c10::Device device(args.device);
    LoaderOptions options;
    if (train) {
      options = train_loader_options(config, args.rank, args.world_size, device, dtype_named(args.dtype));
    } else {
      EvalOptions eval;
      eval.device = device;
      eval.channels_last = args.channels_last;
      eval.amp.dtype = dtype_named(args.dtype);
      options = eval_loader_options(config.data.batch_size, config.data.workers, eval);
      options.sampler = {false, static_cast<uint64_t>(args.seed), args.rank, args.world_size};
      options.prefetch = config.data.prefetch;
      if (args.augment.value_or(false))
        options.augment = {true, config.data.crop_pad, config.data.flip};
    }
    if (args.shuffle) options.sampler.shuffle = *args.shuffle;
    if (args.drop_last) options.drop_last = *args.drop_last;
    loader_ = std::make_unique<Loader>(split, options);
    classes_ = split.classes;
    num_classes_ = split.num_classes;
  }

  int64_t size() const { return loader_->batches_per_epoch(); }
  const std::vector<std::string>& classes() const { return classes_; }
  int64_t num_classes() const { return num_classes_; }

  void start(int64_t epoch) {
    {
      py::gil_scoped_release release;
      loader_->start_epoch(epoch);
    }
    stop_on_interrupt();
  }

  /// The next (images, labels), or None at the end of the epoch.
  std::optional<std::pair<at::Tensor, at::Tensor>> next() {
    for (;;) {
      {
        py::gil_scoped_release release;
        if (loader_->wait_next(std::chrono::milliseconds(50))) break;
      }
      stop_on_interrupt();
    }
    std::optional<Batch> batch;
    {
      py::gil_scoped_release release;
      batch = loader_->next();
    }
    stop_on_interrupt();  // a Ctrl-C that came while the batch was handed over
    if (!batch) return std::nullopt;
    return std::make_pair(std::move(batch->images), std::move(batch->labels));
  }

  void stop() {
    py::gil_scoped_release release;
    loader_->stop();
  }

 private:
  /// Ctrl-C (or another signal whose handler raises): the workers stop, then KeyboardInterrupt is raised.
  void stop_on_interrupt() {
    if (PyErr_CheckSignals() == 0) return;
    stop();
    throw py::error_already_set();
  }

  static TrainConfig config_of(const SplitLoaderArgs& args) {
    TrainConfig config;
    config.data.source = args.source;
    config.data.batch_size = args.batch_size;
    config.data.prefetch = args.prefetch;
    config.data.image_size = args.image_size;
    config.data.mean = args.mean;
    config.data.std = args.std;
    config.data.bad_image_policy = args.bad_image_policy;
    if (args.augment) config.data.augment = *args.augment;
    config.perf.channels_last = args.channels_last;
    config.run.seed = args.seed;
    if (args.workers >= 0) {
      config.data.workers = args.workers;
    } else {  // what --perf auto picks for `fastloop train` on this machine
      TrainConfig automatic = config;
      perf_auto_apply(automatic, perf_hardware_detect());
      config.data.workers = automatic.data.workers;
    }
    config_validate(config);  // the CLI's checks and messages (they name its flags)
    return config;
  }

  DatasetSplits data_;  // the loader reads one of its splits
  std::unique_ptr<Loader> loader_;
  std::vector<std::string> classes_;
  int64_t num_classes_ = 0;
};

}  // namespace

void loader_bind(py::module_& module) {
  py::class_<SplitLoader>(module, "Loader", "fastloop's threaded loader over one split of a --data source")
      .def(py::init([](const std::string& source, const std::string& split, int64_t batch_size, int64_t workers,
                       int64_t prefetch, std::optional<bool> augment, int64_t image_size, const std::string& mean,
                       const std::string& std, const std::string& dtype, bool channels_last, const std::string& device,
                       int64_t seed, std::optional<bool> shuffle, std::optional<bool> drop_last, int64_t rank,
                       int64_t world_size, const std::string& bad_image_policy) {
             SplitLoaderArgs a;
             a.source = source, a.split = split, a.batch_size = batch_size, a.workers = workers;
             a.prefetch = prefetch, a.augment = augment, a.image_size = image_size, a.mean = mean, a.std = std;
             a.dtype = dtype, a.channels_last = channels_last, a.device = device, a.seed = seed;
             a.shuffle = shuffle, a.drop_last = drop_last, a.rank = rank, a.world_size = world_size;
             a.bad_image_policy = bad_image_policy;
             py::gil_scoped_release release;  // listing a folder or mapping shards can take a while
             return std::make_unique<SplitLoader>(a);
           }),
           py::arg("source"), py::arg("split"), py::arg("batch_size"), py::arg("workers"), py::arg("prefetch"),
           py::arg("augment"), py::arg("image_size"), py::arg("mean"), py::arg("std"), py::arg("dtype"),
           py::arg("channels_last"), py::arg("device"), py::arg("seed"), py::arg("shuffle"), py::arg("drop_last"),
           py::arg("rank"), py::arg("world_size"), py::arg("bad_image_policy"))
      .def("__len__", &SplitLoader::size)
      .def_property_readonly("classes", &SplitLoader::classes)
      .def_property_readonly("num_classes", &SplitLoader::num_classes)
      .def("start", &SplitLoader::start, py::arg("epoch"), "begin `epoch` (stops the one before)")
      .def("next", &SplitLoader::next, "the next (images, labels) of the epoch, or None at its end")
      .def("stop", &SplitLoader::stop, "stop and join the workers; batches not taken are dropped");
}

} // namespace fastloop::python
