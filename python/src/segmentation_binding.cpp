// _C._class_map_decode: a class-map PNG (palette indices, grey values) decoded as the loader's workers decode
// the masks of fastloop.VOCSegmentation and fastloop.SegmentationFiles, for their __getitem__.
#include "bindings.h"

#include "fastloop/data/codecs/class_map.h"  // internal: the decoder itself, not part of the installed API

#include "fastloop/fastloop.h"  // the public API only

#include <cstring>

namespace fastloop::python {
namespace {

at::Tensor class_map_decode_file(const std::string& path) {
  at::Tensor out;
  {
    py::gil_scoped_release release;
    std::string bytes;
    std::vector<uint8_t> pixels;
    const ClassMapSize size = class_map_read(path, bytes, pixels);
    out = at::empty({1, size.height, size.width}, at::kByte);
    std::memcpy(out.data_ptr<uint8_t>(), pixels.data(), pixels.size());
  }
  return out;
}

} // namespace

void segmentation_bind(py::module_& module) {
  module.def("_class_map_decode", &class_map_decode_file, py::arg("path"),
             "uint8 [1, H, W]: a palette or greyscale PNG's class indices as PIL reads them (mode \"P\" or \"L\")");
}

} // namespace fastloop::python
