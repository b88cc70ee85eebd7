// _C.Loader: fastloop's Loader over one split of a --data source, with the loader options `fastloop train`
// (train_loader_options) or evaluation (eval_loader_options) would use for the same settings, so its
// batches are the CLI's, bit for bit. Batches are the loader's own buffers as torch tensors (no copy; a
// CPU buffer returns to the pool when Python frees its tensor). Waits release the GIL and look for
// Ctrl-C every 50 ms; a worker's error is raised in Python as the CLI reports it. In a forked child the
// parent's worker threads do not exist (and their locks may be held forever): the parent's loader is
// abandoned without a join, and the next epoch starts afresh from the same arguments.
#include "fork_safe.h"
#include "loader_args.h"

#include "fastloop/fastloop.h"  // the public API only

#include <unistd.h>

#include <memory>
#include <optional>
#include <string>

namespace fastloop::python {
namespace {


at::ScalarType dtype_named(const std::string& name) {
  if (name == "float32") return at::kFloat;
  if (name == "float16") return at::kHalf;
  if (name == "bfloat16") return at::kBFloat16;
  throw InputError("fastloop.Loader: dtype must be torch.float32, torch.float16 or torch.bfloat16, got " + name);
}

class SplitLoader {
 public:
  explicit SplitLoader(SplitLoaderArgs args) : args_(std::move(args)) { build(); }
  ~SplitLoader() {
    if (forked()) {  // the parent's threads are not here to join
      abandon();
      return;
    }
    py::gil_scoped_release release;  // a Parquet split's reader thread may wait for the GIL to finish its read
    loader_.reset();
    data_.reset();
  }
  SplitLoader(const SplitLoader&) = delete;
  SplitLoader& operator=(const SplitLoader&) = delete;

  int64_t size() const {
    if (!loader_) throw std::runtime_error("fastloop.Loader: its rebuild in this process failed; create it again");
    return loader_->batches_per_epoch();
  }
  const std::vector<std::string>& classes() const { return classes_; }
  int64_t num_classes() const { return num_classes_; }

  /// Begins `epoch` at `taken` samples of its global order, made for `order_world_size` ranks (0: this
  /// loader's); returns the numbers of its first batch and of one past its last.
  std::pair<int64_t, int64_t> start(int64_t epoch, int64_t taken, int64_t order_world_size) {
    std::pair<int64_t, int64_t> batches;
    {
      py::gil_scoped_release release;
      if (forked()) rebuild_after_fork();
      loader_->start_epoch(epoch, EpochPosition{taken, order_world_size});
      batches = {loader_->next_batch(), loader_->end_batch()};
    }
    stop_on_interrupt();
    return batches;
  }

  /// (taken, order_world_size): where the epoch stands after the batches handed out (Loader::position).
  std::pair<int64_t, int64_t> position() const {
    const EpochPosition at = loader_->position();
    return {at.taken, at.order_world_size};
  }

  /// Samples in the split (all ranks' together).
  int64_t samples() const { return samples_; }

  /// Images decoded since the epoch began (Loader::images_decoded): once per sample and image field, whatever the
  /// views.
  int64_t images_decoded() const { return loader_->images_decoded(); }

  /// Bad samples skipped and replaced since the epoch began (bad_image_policy="skip"; Loader::bad_images_skipped).
  int64_t samples_skipped() const { return loader_->bad_images_skipped(); }

  /// The next (images, labels), or None at the end of the epoch; with views, images is a list of one batch per view.
  py::object next() {
    if (forked())
      throw std::runtime_error(
          "fastloop.Loader: this iteration was started before the process forked, and its worker threads stayed "
          "in the parent; start a new one in this process (iter(loader), a new for loop), create the Loader in "
          "the child, or use the 'spawn' start method");
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
    if (!batch) return py::none();
    if (!batch->samples.empty()) return targets_batch(*batch);
    if (args_.views) return py::make_tuple(py::cast(std::move(batch->views)), std::move(batch->labels));
    return py::make_tuple(std::move(batch->images), std::move(batch->labels));
  }

  /// A batch with targets: (images stacked or None, [(index, image, boxes, format, labels, kept, masks, keypoints), ...],
  /// class maps stacked or None), made into torchvision's target dicts by the Python package (fastloop/_targets.py).
  static py::tuple targets_batch(const Batch& batch) {
    const auto or_none = [](const at::Tensor& t) { return t.defined() ? py::cast(t) : py::none(); };
    py::list samples;
    for (const TargetSample& s : batch.samples)
      samples.append(py::make_tuple(s.index, s.image, or_none(s.boxes), box_format_name(s.format), or_none(s.labels),
                                    or_none(s.kept), or_none(s.masks), or_none(s.keypoints)));
    return py::make_tuple(or_none(batch.images), samples, or_none(batch.masks));
  }

  void stop() {
    if (forked()) return;  // nothing of the parent's runs here; start() rebuilds
    py::gil_scoped_release release;
    loader_->stop();
  }

 private:
  bool forked() const { return getpid() != owner_pid_; }

  /// Builds the data index and the loader from args_ in this process.
  void build() {
    const SplitLoaderArgs& args = args_;
    if (args.split != "train" && args.split != "val" && args.split != "test")
      throw InputError("fastloop.Loader: split must be 'train', 'val' or 'test', got '" + args.split + "'");
    if (args.world_size < 1 || args.rank < 0 || args.rank >= args.world_size)
      throw InputError("fastloop.Loader: rank " + std::to_string(args.rank) + " of world_size " +
                       std::to_string(args.world_size) + " is not a rank of the group");
    TrainConfig config = config_of(args);
    data_ = std::make_unique<DatasetSplits>(loader_data_of(args_, config));
    const bool train = args.split == "train";
    Dataset& split = train ? data_->train : data_->test;
    const bool views = args.views && !args.views->empty();
    const std::string& first = views ? args.views->front() : args.transform;  // the split's size: view 0's
    if (video_clips_of(split))  // the first video's frames stand in for the first image
      video_split_size_resolve(split, first, config.data.image.size, {"fastloop.Loader: transform", "image_size"});
    else if (!split.targets)  // samples with targets keep the sizes the pipeline gives them
      split_size_resolve(split, first, config.data.image.size, {"fastloop.Loader: transform", "image_size"});
    if (split.size() == 0)
      throw InputError("fastloop.Loader: " + config.data.source + " has no " + args.split +
                       " split (an image folder without val/, shards without val-*.tar)");
    loader_ = std::make_unique<Loader>(split, loader_options(config, split, train));
    classes_ = split.classes;
    num_classes_ = split.num_classes;
    samples_ = split.size();
    owner_pid_ = getpid();
  }

  /// A Loader inherited through fork(): its threads start afresh here (built on a new thread: fork_safe.h).
  void rebuild_after_fork() {
    abandon();
    on_new_thread([this] { build(); });
  }

  /// Forgets the parent's loader and data without running their destructors: a join of threads that do
  /// not exist in this process, or a lock a parent thread held at fork(), would never return.
  void abandon() {
    (void)loader_.release();
    (void)data_.release();
  }

  LoaderOptions loader_options(const TrainConfig& config, const Dataset& split, bool train) const {
    const SplitLoaderArgs& args = args_;
    const c10::Device device(args.device);
    LoaderOptions options;
    if (train) {
      options = train_loader_options(config, args.rank, args.world_size, device, dtype_named(args.dtype));
      // --alternate-flip as train_setup resolves it (auto: the built-in flip of in-memory data alternates).
      options.augment.alternate_flip = args.transform.empty() && alternate_flips(config, split);
    } else {
      EvalOptions eval;
      eval.device = device;
      eval.channels_last = config.perf.channels_last;
      eval.amp.dtype = dtype_named(args.dtype);
      eval.fast_decode = config.data.decode == "fast";
      options = eval_loader_options(config.data.batch_size, config.data.workers, eval);
      options.sampler = {false, static_cast<uint64_t>(config.run.seed), args.rank, args.world_size};
      options.prefetch = config.data.prefetch;
      if (args.given.count("--augment") && config.data.augment) {  // None: off for evaluation
        options.augment.crop = true;
        options.augment.pad = config.data.crop_pad;
        options.augment.flip = config.data.flip;
      }
    }
    if (args.shuffle) options.sampler.shuffle = *args.shuffle;
    if (args.drop_last) options.drop_last = *args.drop_last;
    if (!args.transform.empty()) options.augment.pipeline = std::make_shared<const Pipeline>(args.transform);
    if (args.views) options.views = views_of(*args.views, args.view_seeds, config, split);
    return options;
  }

  /// Each view's pipeline, and its size as the split's is resolved (split_size.h) for encoded data.
  static std::vector<LoaderView> views_of(const std::vector<std::string>& specs,
                                          const std::vector<int64_t>& seeds, const TrainConfig& config,
                                          const Dataset& split) {
    if (specs.empty()) throw InputError("fastloop.Loader: no views given (a list of transforms needs one at least)");
    std::vector<LoaderView> views;
    for (size_t v = 0; v < specs.size(); ++v) {
      LoaderView view;
      if (!specs[v].empty()) view.pipeline = std::make_shared<const Pipeline>(specs[v]);
      if (v < seeds.size()) view.seed_view = seeds[v];
      if (split.encoded) {
        const std::string name = "fastloop.Loader: transform[" + std::to_string(v) + "]";
        const ImageSize size = transform_image_size(specs[v], config.data.image.size, {name, "image_size"});
        view.height = size.height, view.width = size.width;
      }
      views.push_back(std::move(view));
    }
    return views;
  }

  /// Ctrl-C (or another signal whose handler raises): the workers stop, then KeyboardInterrupt is raised.
  void stop_on_interrupt() {
    if (PyErr_CheckSignals() == 0) return;
    stop();
    throw py::error_already_set();
  }

  /// The settings given, with --perf auto's workers when none were given; checked as the CLI's are.
  static TrainConfig config_of(const SplitLoaderArgs& args) {
    TrainConfig config = args.config;
    if (!args.given.count("--workers") || config.data.workers < 0) {  // what --perf auto picks on this machine
      TrainConfig automatic = config;
      perf_auto_apply(automatic, perf_hardware_detect());
      config.data.workers = automatic.data.workers;
    }
    config_validate(config);  // the CLI's checks and messages (they name its flags)
    return config;
  }

  SplitLoaderArgs args_;
  pid_t owner_pid_ = 0;               // the process whose threads the loader runs on
  std::unique_ptr<DatasetSplits> data_;  // the loader reads one of its splits
  std::unique_ptr<Loader> loader_;
  std::vector<std::string> classes_;
  int64_t num_classes_ = 0;
  int64_t samples_ = 0;
};

/// _LoaderIterator.__next__ (python/fastloop/_loader.py): calls the iterator's Python `_next`, and when
/// anything but StopIteration comes out of it (Ctrl-C's KeyboardInterrupt, which Python may raise at any
/// call of that frame, even its first line; an error in a batch transform) stops the workers of the
/// iteration it belongs to, then lets it go on. The exception's traceback keeps that frame, and so the
/// iterator, alive: its __del__ would not stop them. Written in C++ because a Python guard's own first line
/// can take the KeyboardInterrupt; this one runs no Python of its own (the stop is SplitLoader::stop).
py::object iterator_next_guarded(const py::object& iterator) {
  try {
    return iterator.attr("_next")();
  } catch (py::error_already_set& error) {
    if (!error.matches(PyExc_StopIteration)) {
      const py::object loader = iterator.attr("_loader");
      if (loader.attr("_iteration").equal(iterator.attr("_iteration")))
        loader.attr("_impl").cast<SplitLoader&>().stop();
    }
    throw;
  }
}

}  // namespace

void loader_bind(py::module_& module) {
  // An instance method (PyInstanceMethod binds `self`), so a Python class can take it as its __next__.
  module.attr("_loader_iterator_next") = py::reinterpret_steal<py::object>(
      PyInstanceMethod_New(py::cpp_function(&iterator_next_guarded, py::name("__next__"), py::arg("self")).ptr()));
  module.def(
      "_view_seed", [](int64_t seed, int64_t view) { return static_cast<int64_t>(view_seed(static_cast<uint64_t>(seed), view)); },
      py::arg("seed"), py::arg("view"), "the seed of view `view`'s draws in a loader with `seed` (views.h)");
  py::class_<SplitLoader>(module, "Loader", "fastloop's threaded loader over one split of a --data source")
      .def(py::init([](const py::dict& args) {
             SplitLoaderArgs parsed = SplitLoaderArgs::from_dict(args);
             py::gil_scoped_release release;  // listing a folder or mapping shards can take a while
             return std::make_unique<SplitLoader>(std::move(parsed));
           }),
           py::arg("args"), "fastloop.Loader's keyword arguments by name, resolved (None: -1 for workers)")
      .def("__len__", &SplitLoader::size)
      .def_property_readonly("classes", &SplitLoader::classes)
      .def_property_readonly("num_classes", &SplitLoader::num_classes)
      .def_property_readonly("samples", &SplitLoader::samples)
      .def_property_readonly("images_decoded", &SplitLoader::images_decoded,
                             "images decoded since the epoch began: one per sample and image field, whatever the "
                             "number of views")
      .def_property_readonly("samples_skipped", &SplitLoader::samples_skipped,
                             "bad samples skipped and replaced since the epoch began (bad_image_policy='skip')")
      .def("start", &SplitLoader::start, py::arg("epoch"), py::arg("taken") = 0, py::arg("order_world_size") = 0,
           "begin `epoch` at `taken` samples of its order (stops the one before); (first batch, end batch)")
      .def("position", &SplitLoader::position, "(taken, order_world_size) after the batches handed out")
      .def("next", &SplitLoader::next, "the next (images, labels) of the epoch, or None at its end")
      .def("stop", &SplitLoader::stop, "stop and join the workers; batches not taken are dropped");
}

} // namespace fastloop::python
