// _C._class_map_decode: a class-map PNG (palette indices, grey values) decoded as the loader's workers decode
// the masks of fastloop.VOCSegmentation and fastloop.SegmentationFiles, for their __getitem__.
#include "bindings.h"

#include "fastloop/fastloop.h"  // the public API only

#include <cstring>

namespace fastloop::python {
namespace {

at::Tensor class_map_decode_file(const std::string& path) {
  py::gil_scoped_release release;
  return class_map_file_decode(path);
}

} // namespace

void segmentation_bind(py::module_& module) {
  module.def("_class_map_decode", &class_map_decode_file, py::arg("path"),
             "uint8 [1, H, W]: a palette or greyscale PNG's class indices as PIL reads them (mode \"P\" or \"L\")");
}

} // namespace fastloop::python
