// fastloop._C: the pybind11 module behind `import fastloop`. It holds no logic of its own: each call maps
// to the C++ entry point the CLI uses (the Loader with train_loader_options, train_run, eval_run).
#pragma once

#include "fastloop/fastloop.h"  // the public API only

#include <torch/python.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fastloop::python {

namespace py = pybind11;

/// A Python bool, int, float or str as the value of the setting `key` (config_set); else an InputError.
ConfigValue config_value_of(const py::handle& value, const std::string& key);

/// A split of fastloop.Loader's Arrow sources (python/fastloop/_arrow.py), read under the GIL: its class
/// names, and what makes its EncodedImages without the GIL (again in a forked child), for a shuffle buffer.
struct ArrowSource {
  std::vector<std::string> classes;
  std::function<std::shared_ptr<const EncodedImages>(int64_t shuffle_buffer)> make;
};
ArrowSource arrow_source_of(const py::handle& split);

/// _C._pattern_expand: brace patterns as shards: sources expand them, for Parquet file sets.
void arrow_bind(py::module_& module);

/// _C.FieldShards (tar shards as samples of named fields) and the field reads of a batch.
void fields_bind(py::module_& module);
/// A source of fastloop.Loader's `fields` or mixtures: a _C.FieldShards, or an Arrow split (arrow_source_of).
std::shared_ptr<const EncodedImages> encoded_source_of(const py::handle& object, int64_t shuffle_buffer);

/// _C.CocoAnnotations: a COCO annotation file read once, the targets of each image; _C._image_decode.
void coco_bind(py::module_& module);
/// The C++ annotations a _C.CocoAnnotations holds (fastloop.CocoDetection's `_C`), for a Loader to share with its
/// CocoImages; a TypeError for any other object.
std::shared_ptr<const CocoAnnotations> coco_annotations_of(const py::handle& object);

/// _C._class_map_decode: a class-map PNG decoded as the loader's workers decode segmentation masks.
void segmentation_bind(py::module_& module);

/// _C._video_info, _video_frames, _video_clip_frames: video files as the loader's workers read them.
void video_bind(py::module_& module);

/// _C.Loader: one split of a --data source, iterated batch by batch.
void loader_bind(py::module_& module);

/// _C.train and _C.evaluate: `fastloop train` and `fastloop eval` as calls.
void run_bind(py::module_& module);

/// _C._transform_apply, _transform_repr, _transform_draws: a transform spec compiled and run on one image.
void transforms_bind(py::module_& module);

} // namespace fastloop::python
