// fastloop._C's COCO side for python/fastloop/_coco.py: _C.CocoAnnotations holds the C++ CocoAnnotations (a
// shared_ptr, what a Loader's CocoImages shares) and gives one image's targets as tensors (boxes XYXY float32,
// labels int64, masks uint8 [N, H, W]) or as the file's own values (bbox, area, iscrowd, category_id,
// segmentation); _C._image_decode decodes an image file as the loader's workers do (RGB, as PIL's convert("RGB")).
#include "bindings.h"

#include "fastloop/fastloop.h"  // the public API only

#include <cstring>
#include <fstream>
#include <iterator>

namespace fastloop::python {
namespace {

struct CocoFile {
  std::shared_ptr<const CocoAnnotations> annotations;

  int64_t checked(int64_t i) const {
    if (i < 0 || i >= annotations->size())
      throw py::index_error("image index " + std::to_string(i) + " out of range for " + std::to_string(annotations->size()) + " images");
    return i;
  }
};

at::Tensor boxes_of(const CocoFile& file, int64_t i) {
  std::vector<float> boxes;
  file.annotations->boxes_xyxy(file.checked(i), boxes);
  at::Tensor out = at::empty({static_cast<int64_t>(boxes.size() / 4), 4}, at::kFloat);
  std::memcpy(out.data_ptr<float>(), boxes.data(), boxes.size() * sizeof(float));
  return out;
}

at::Tensor labels_of(const CocoFile& file, int64_t i) {
  std::vector<int64_t> labels;
  file.annotations->labels(file.checked(i), labels);
  at::Tensor out = at::empty({static_cast<int64_t>(labels.size())}, at::kLong);
  std::memcpy(out.data_ptr<int64_t>(), labels.data(), labels.size() * sizeof(int64_t));
  return out;
}

// (float32 [N, K, 2], int64 [N, K]): the annotations' keypoints and their visibility flags.
py::tuple keypoints_of(const CocoFile& file, int64_t i) {
  std::vector<float> xy;
  std::vector<int64_t> visibility;
  const int64_t index = file.checked(i);
  const int64_t per = file.annotations->keypoints(index, xy, &visibility);
  const int64_t n = file.annotations->annotation_count(index);
  at::Tensor points = at::empty({n, per, 2}, at::kFloat), flags = at::empty({n, per}, at::kLong);
  std::memcpy(points.data_ptr<float>(), xy.data(), xy.size() * sizeof(float));
  std::memcpy(flags.data_ptr<int64_t>(), visibility.data(), visibility.size() * sizeof(int64_t));
  return py::make_tuple(points, flags);
}

at::Tensor masks_of(const CocoFile& file, int64_t i, int64_t height, int64_t width) {
  const int64_t n = file.annotations->annotation_count(file.checked(i));
  at::Tensor out = at::empty({n, height, width}, at::kByte);
  py::gil_scoped_release release;
  file.annotations->masks(i, height, width, out.data_ptr<uint8_t>());
  return out;
}

py::object segmentation_of(const CocoAnnotations& annotations, const CocoAnnotation& a) {
  switch (a.segmentation) {
    case CocoSegmentation::kPolygons: {
      py::list polygons;
      std::vector<double> xy;
      for (int64_t k = 0; k < a.count; ++k) {
        annotations.polygon(a, k, xy);
        py::list numbers(xy.size());
        for (size_t j = 0; j < xy.size(); ++j) numbers[j] = py::float_(xy[j]);
        polygons.append(numbers);
      }
      return polygons;
    }
    case CocoSegmentation::kRleCounts:
    case CocoSegmentation::kRleString: {
      py::dict rle;
      if (a.segmentation == CocoSegmentation::kRleString) {
        rle["counts"] = py::str(std::string(annotations.rle_text(a)));
      } else {
        py::list counts(static_cast<size_t>(a.count));
        for (int64_t j = 0; j < a.count; ++j) counts[static_cast<size_t>(j)] = py::int_(annotations.rle_counts(a)[j]);
        rle["counts"] = counts;
      }
      py::list size;
      size.append(a.rle_height), size.append(a.rle_width);
      rle["size"] = size;
      return rle;
    }
    case CocoSegmentation::kNone:
      break;
  }
  throw py::key_error("segmentation");  // as torchvision's wrapper: the annotation has no such key
}

// The file's own values of `key` for image i's annotations: torchvision's batched_target[key].
py::list native_of(const CocoFile& file, int64_t i, const std::string& key) {
  const CocoAnnotations& annotations = *file.annotations;
  py::list out;
  for (int64_t k = 0, n = annotations.annotation_count(file.checked(i)); k < n; ++k) {
    const CocoAnnotation& a = annotations.annotation(i, k);
    if (key == "bbox") {
      out.append(py::list(py::make_tuple(a.bbox[0], a.bbox[1], a.bbox[2], a.bbox[3])));
    } else if (key == "area") {
      out.append(a.area);
    } else if (key == "iscrowd") {
      out.append(a.iscrowd);
    } else if (key == "category_id") {
      out.append(a.category_id);
    } else if (key == "segmentation") {
      out.append(segmentation_of(annotations, a));
    } else {
      throw py::key_error(key);
    }
  }
  return out;
}

at::Tensor image_decode(const std::string& path) {
  py::gil_scoped_release release;
  return image_file_decode(path);
}

} // namespace

std::shared_ptr<const CocoAnnotations> coco_annotations_of(const py::handle& object) {
  if (!py::isinstance<CocoFile>(object))
    throw py::type_error("expected a fastloop._C.CocoAnnotations (fastloop.CocoDetection's _C), got " +
                         std::string(py::str(py::type::of(object))));
  return object.cast<const CocoFile&>().annotations;
}

void coco_bind(py::module_& module) {
  py::class_<CocoFile>(module, "CocoAnnotations",
                       "A COCO instances annotation file read once (simdjson): images sorted by id, each with its "
                       "annotations in the file's order")
      .def(py::init([](const std::string& path) {
             py::gil_scoped_release release;
             return CocoFile{CocoAnnotations::read(path)};
           }),
           py::arg("path"))
      .def("__len__", [](const CocoFile& f) { return f.annotations->size(); })
      .def_property_readonly("path", [](const CocoFile& f) { return f.annotations->path(); })
      .def_property_readonly("ids", [](const CocoFile& f) { return f.annotations->ids(); }, "image ids, sorted")
      .def_property_readonly("categories", [](const CocoFile& f) { return f.annotations->categories(); },
                             "(id, name) of each category, in the file's order")
      .def(
          "image",
          [](const CocoFile& f, int64_t i) {
            const CocoImageInfo info = f.annotations->image(f.checked(i));
            return py::make_tuple(info.id, info.file_name, info.height, info.width);
          },
          py::arg("index"), "(id, file_name, height, width) of image `index`")
      .def("annotation_count", [](const CocoFile& f, int64_t i) { return f.annotations->annotation_count(f.checked(i)); },
           py::arg("index"))
      .def("boxes_xyxy", &boxes_of, py::arg("index"), "float32 [N, 4]: XYWH as float32, then x + w, y + h")
      .def("labels", &labels_of, py::arg("index"), "int64 [N]: the category ids")
      .def("keypoints", &keypoints_of, py::arg("index"),
           "(float32 [N, K, 2], int64 [N, K]): each annotation's keypoints x, y and visibility v")
      .def("masks", &masks_of, py::arg("index"), py::arg("height"), py::arg("width"),
           "uint8 [N, height, width]: pycocotools' masks on that canvas")
      .def("native", &native_of, py::arg("index"), py::arg("key"),
           "the file's values of `key` (bbox, area, iscrowd, category_id, segmentation) for each annotation");
  module.def("_image_decode", &image_decode, py::arg("path"),
             "uint8 [3, H, W]: the image file decoded as the loader decodes it (RGB, as PIL's convert(\"RGB\"))");
}

} // namespace fastloop::python
