// fastloop._C's transform entry points for tests and the Python package: a spec string compiled as a
// Loader compiles it (pipeline.h), run on one image (_transform_apply: the uint8 part; _transform_output: all
// of it, float32), timed (_transform_time), printed (_transform_repr) or asked for its random draws
// (_transform_draws; for a sample's boxes too).
// TransformTypeError is Python's TypeError, InputError its ValueError.
#include "bindings.h"

#include "fastloop/fastloop.h"  // the public API only

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

namespace fastloop::python {
namespace {

ImageU8 image_from_tensor(const at::Tensor& tensor) {
  if (tensor.scalar_type() != at::kByte || tensor.dim() != 3)
    throw InputError("_transform_apply: image must be a uint8 tensor [C, H, W], got " +
                     std::string(c10::toString(tensor.scalar_type())) + " with " + std::to_string(tensor.dim()) + " dims");
  const int64_t channels = tensor.size(0);
  if (channels != 1 && channels != 3 && channels != 4)
    throw InputError("_transform_apply: image must have 1, 3 or 4 channels, got " + std::to_string(channels));
  const at::Tensor hwc = tensor.permute({1, 2, 0}).contiguous();
  ImageU8 image;
  image.reshape(tensor.size(1), tensor.size(2), channels);
  std::memcpy(image.data(), hwc.data_ptr<uint8_t>(), static_cast<size_t>(image.bytes()));
  return image;
}

at::Tensor tensor_from_image(const ImageU8& image) {
  at::Tensor hwc = at::empty({image.height, image.width, image.channels}, at::kByte);
  std::memcpy(hwc.data_ptr<uint8_t>(), image.data(), static_cast<size_t>(image.bytes()));
  return hwc.permute({2, 0, 1}).contiguous();
}

at::Tensor transform_apply(const std::string& spec, const at::Tensor& input, uint64_t seed, int64_t index) {
  const Pipeline pipeline(spec);
  ImageU8 image = image_from_tensor(input);
  {
    py::gil_scoped_release release;
    TransformScratch scratch;
    pipeline.run_u8(image, seed, 0, index, scratch);
  }
  return tensor_from_image(image);
}

// The uint8 part of `spec` on an image and its targets: boxes float64 [N, 4] XYXY (or None), masks uint8 [M, H, W]
// (or None; instance masks when `instance_masks`, one per box), labels int64 [N]. Returns (image, boxes in the
// pipeline's output format or None, the format's name, labels, each kept box's input index, masks or None), and
// with `keypoints` (float32 [..., 2]) a seventh entry: the keypoints moved (float32, the same shape but for
// SanitizeKeyPoints' dropped groups).
py::tuple transform_apply_targets(const std::string& spec, const at::Tensor& input, const std::optional<at::Tensor>& boxes,
                                  const std::optional<at::Tensor>& masks, bool instance_masks, const at::Tensor& labels,
                                  uint64_t seed, int64_t index, const std::optional<at::Tensor>& keypoints) {
  const Pipeline pipeline(spec);
  pipeline.check_targets();
  ImageU8 image = image_from_tensor(input);
  SampleTargets targets;
  if (boxes) {
    const at::Tensor b = boxes->to(at::kDouble).contiguous().view({-1});
    targets.has_boxes = true;
    targets.boxes.assign(b.data_ptr<double>(), b.data_ptr<double>() + b.numel());
    const at::Tensor l = labels.to(at::kLong).contiguous();
    targets.labels.assign(l.data_ptr<int64_t>(), l.data_ptr<int64_t>() + l.numel());
    for (int64_t i = 0; i < targets.box_count(); ++i) targets.kept.push_back(i);
  }
  if (masks) {
    for (int64_t m = 0; m < masks->size(0); ++m) targets.masks.push_back(image_from_tensor((*masks)[m].unsqueeze(0)));
    targets.instance_masks = instance_masks;
  }
  if (keypoints) {
    TORCH_CHECK(keypoints->dim() >= 2 && keypoints->size(-1) == 2, "_transform_apply_targets: keypoints must be [..., 2], "
                "not ", keypoints->sizes());
    const at::Tensor k = keypoints->to(at::kFloat).contiguous().view({-1});
    targets.has_keypoints = true;
    targets.keypoints.assign(k.data_ptr<float>(), k.data_ptr<float>() + k.numel());
    const auto sizes = keypoints->sizes();
    targets.keypoints_shape.assign(sizes.begin(), sizes.end() - 1);
    if (!boxes && labels.numel() > 0) {  // labels alone: what SanitizeKeyPoints' labels_getter finds
      const at::Tensor l = labels.to(at::kLong).contiguous();
      targets.labels.assign(l.data_ptr<int64_t>(), l.data_ptr<int64_t>() + l.numel());
    }
  }
  {
    py::gil_scoped_release release;
    TransformScratch scratch;
    pipeline.run_targets(image, targets, seed, 0, index, scratch);
  }
  py::object out_boxes = py::none(), out_masks = py::none();
  if (targets.has_boxes) {
    std::vector<double> written;
    boxes_to_format(targets.boxes, targets.format, written);
    out_boxes = py::cast(at::tensor(written, at::kDouble).view({-1, 4}));
  }
  if (masks) {
    std::vector<at::Tensor> planes;
    for (const ImageU8& mask : targets.masks) planes.push_back(tensor_from_image(mask)[0]);
    out_masks = py::cast(planes.empty() ? at::empty({0, image.height, image.width}, at::kByte) : at::stack(planes));
  }
  if (!keypoints)
    return py::make_tuple(tensor_from_image(image), out_boxes, box_format_name(targets.format),
                          at::tensor(targets.labels, at::kLong), at::tensor(targets.kept, at::kLong), out_masks);
  std::vector<int64_t> shape = targets.keypoints_shape;
  shape.push_back(2);
  at::Tensor out_keypoints = at::empty(shape, at::kFloat);
  std::copy(targets.keypoints.begin(), targets.keypoints.end(), out_keypoints.data_ptr<float>());
  return py::make_tuple(tensor_from_image(image), out_boxes, box_format_name(targets.format),
                        at::tensor(targets.labels, at::kLong), at::tensor(targets.kept, at::kLong), out_masks,
                        out_keypoints);
}

// The whole pipeline, output stage included, as the loader writes a sample: float32 [C, H, W].
at::Tensor transform_output(const std::string& spec, const at::Tensor& input, uint64_t seed, int64_t index) {
  const Pipeline pipeline(spec);
  ImageU8 image = image_from_tensor(input);
  at::Tensor out;
  {
    py::gil_scoped_release release;
    TransformScratch scratch;
    pipeline.run_u8(image, seed, 0, index, scratch);
    if (pipeline.float_steps()) return pipeline.run_float(image, nullptr, seed, 0, index, scratch).to(at::kFloat);
    const int64_t C = image.channels, H = image.height, W = image.width;
    const std::vector<float> table = pipeline.value_table(C);
    out = at::empty({C, H, W}, at::kFloat);
    float* o = out.data_ptr<float>();
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x) o[(c * H + y) * W + x] = table[static_cast<size_t>(c * 256 + image.row(y)[x * C + c])];
    pipeline.erase_output(o, C, H, W, H * W, W, 1, seed, 0, index, [](float* at, float v) { *at = v; });
  }
  return out;
}

// Seconds per run of the uint8 part of `spec` on `input` (each run on a fresh copy of it, as a worker's decoded
// image), the mean over `runs` runs after one warm-up: the kernels' time without the binding's own costs.
double transform_time(const std::string& spec, const at::Tensor& input, uint64_t seed, int64_t runs) {
  const Pipeline pipeline(spec);
  const ImageU8 original = image_from_tensor(input);
  py::gil_scoped_release release;
  TransformScratch scratch;
  ImageU8 image;
  image = original;
  pipeline.run_u8(image, seed, 0, 0, scratch);
  const auto start = std::chrono::steady_clock::now();
  for (int64_t index = 0; index < runs; ++index) {
    image = original;
    pipeline.run_u8(image, seed, 0, index, scratch);
  }
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / static_cast<double>(std::max<int64_t>(runs, 1));
}

py::list transform_draws(const std::string& spec, int64_t height, int64_t width, uint64_t seed, int64_t count,
                         const std::optional<at::Tensor>& boxes) {
  const auto transforms = pipeline_make(spec_parse(spec));  // every transform, uint8 or output stage
  SampleTargets targets;  // for the transforms whose draws depend on the boxes (TargetDrawTransform)
  if (boxes) {
    const at::Tensor b = boxes->to(at::kDouble).contiguous().view({-1});
    targets.has_boxes = true;
    targets.boxes.assign(b.data_ptr<double>(), b.data_ptr<double>() + b.numel());
  }
  py::list samples;
  for (int64_t index = 0; index < count; ++index) {
    py::list per_transform;
    for (size_t k = 0; k < transforms.size(); ++k) {
      Draws draws = pipeline_draws(seed, 0, index, static_cast<int64_t>(k));
      py::dict params;
      const auto* by_boxes = boxes ? dynamic_cast<const TargetDrawTransform*>(transforms[k].get()) : nullptr;
      const TransformDraw drawn =
          by_boxes ? by_boxes->draw_targets(height, width, targets, draws) : transforms[k]->draw(height, width, draws);
      for (const auto& [name, values] : drawn) params[py::str(name)] = py::cast(values);
      per_transform.append(params);
    }
    samples.append(per_transform);
  }
  return samples;
}

// (canonical spelling, each view's pipeline): one view unless `spec` has a FiveCrop / TenCrop (crop_views.h);
// every view is compiled, so torchvision's checks run on each.
py::tuple transform_views(const std::string& spec) {
  const CropViews expanded = crop_views_expand(spec_parse(spec));
  std::vector<std::string> views;
  for (const auto& view : expanded.views) views.push_back(Pipeline(spec_to_string(view)).repr());
  std::string canonical = views.front();
  if (!expanded.crop_repr.empty()) {
    const size_t at = canonical.find(expanded.view_marker);
    if (at != std::string::npos) canonical.replace(at, expanded.view_marker.size(), expanded.crop_repr);
  }
  return py::make_tuple(canonical, views);
}

}  // namespace

void transforms_bind(py::module_& module) {
  // Registered after module.cpp's translator, so tried first: the TypeError subclass before InputError's ValueError.
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const TransformTypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    }
  });
  module.def("_transform_time", &transform_time, py::arg("spec"), py::arg("image"), py::arg("seed"),
             py::arg("runs"),
             "Seconds per run of the uint8 part of `spec` on a fresh copy of the uint8 [C, H, W] `image`, the mean "
             "of `runs` runs (bench/transform_ops.py).");
  module.def("_transform_apply", &transform_apply, py::arg("spec"), py::arg("image"), py::arg("seed"),
             py::arg("index") = 0,
             "Runs the uint8 part of the pipeline `spec` on one uint8 [C, H, W] image (C = 1, 3 or 4) with the "
             "draws of (seed, epoch 0, index); returns the uint8 [C, H', W'] result.");
  module.def("_transform_apply_targets", &transform_apply_targets, py::arg("spec"), py::arg("image"), py::arg("boxes"),
             py::arg("masks"), py::arg("instance_masks"), py::arg("labels"), py::arg("seed"), py::arg("index") = 0,
             py::arg("keypoints") = py::none(),
             "Runs the uint8 part of `spec` on an image with its boxes (float64 [N, 4] XYXY or None), masks (uint8 "
             "[M, H, W] or None), labels and keypoints (float32 [..., 2] or None), as a detection loader's worker "
             "does; returns (image, boxes, format, labels, kept, masks), and the keypoints moved as a 7th entry "
             "when given.");
  module.def("_transform_output", &transform_output, py::arg("spec"), py::arg("image"), py::arg("seed"),
             py::arg("index") = 0,
             "Runs all of the pipeline `spec` on one uint8 [C, H, W] image, the output stage (conversion, Normalize, "
             "RandomErasing after them) included, as the loader writes a sample; returns float32 [C, H', W'].");
  module.def("_transform_repr", [](const std::string& spec) { return Pipeline(spec).repr(); },
             py::arg("spec"), "The compiled pipeline of `spec` in its canonical spelling (parses back).");
  module.def("_transform_targets_output",
             [](const std::string& spec) {
               const Pipeline pipeline(spec);
               return py::make_tuple(pipeline.pure_tensors(), pipeline.mask_dtype(), pipeline.boxes_dtype());
             },
             py::arg("spec"),
             "(pure, mask dtype, boxes dtype): whether `spec` has a ToPureTensor (target dicts then hold plain "
             "tensors) and the dtypes a ToDtype dict gives masks and boxes ('' unchanged; 'missing': the dict "
             "names neither the type nor 'others').");
  module.def("_float_step_names", [] { return float_step_names(); },
             "The torchvision class names the pipeline runs on float images (after the conversion to float).");
  module.def("_transform_views", &transform_views, py::arg("spec"),
             "(canonical spec, [each view's spec]): the pipelines a spec with FiveCrop or TenCrop runs as, one per "
             "crop of the tuple (one view without them).");
  module.def("_save_tensors",
             [](const std::string& path, const std::vector<std::pair<std::string, at::Tensor>>& tensors) {
               safetensors_write(path, NamedTensors(tensors.begin(), tensors.end()), {});
             },
             py::arg("path"), py::arg("tensors"),
             "Writes [(name, tensor)] to `path` as safetensors, atomically (a transform's tensor arguments: "
             "LinearTransformation's).");
  module.def("_transform_names", [] { return transform_registry().names(); },
             "The torchvision class names the pipeline compiles.");
  module.def("_transform_draws", &transform_draws, py::arg("spec"), py::arg("height"), py::arg("width"),
             py::arg("seed"), py::arg("count"), py::arg("boxes") = py::none(),
             "For samples 0..count-1: a list, per top-level transform, of the dict of its random draws "
             "(Transform::draw) for a height x width image; with `boxes` (float64 [N, 4] XYXY), the draws of "
             "the transforms that depend on them (RandomIoUCrop) for a sample with those boxes.");
}

}  // namespace fastloop::python
