// One sample's files decoded as the loader's workers decode them, for a data set's __getitem__ (fastloop.
// CocoDetection, VOCSegmentation): the public face of the decoders in data/codecs, which stay internal.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

namespace fastloop {

/// The image file `path` decoded to RGB: uint8 [3, H, W]. An unreadable or undecodable file is an InputError
/// naming it.
at::Tensor image_file_decode(const std::string& path);

/// The class-map PNG `path` (palette indices or grey values, as PIL reads them): uint8 [1, H, W]. Another kind
/// of file is an InputError naming it and what is accepted.
at::Tensor class_map_file_decode(const std::string& path);

} // namespace fastloop
