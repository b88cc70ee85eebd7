// The image operations a pipeline runs after its conversion to float (ToDtype(float), ToTensor, ...), as
// torchvision's v2 kernels run them on float tensors: no rounding to uint8 between operations. They call
// ATen's own ops in the order torchvision's Python code calls them (resize's interpolate, the colour blends,
// conv2d for the blur, ...), so a float pipeline gives torchvision's values on the machine that runs it; those
// kernels (and so the last bits) follow the CPU's ATen capability, unlike fastloop's uint8 kernels, which are
// the same bits everywhere (docs/python.md says which is which; the tests compare float pipelines by tolerance).
#pragma once

#include "fastloop/data/transforms/float_step.h"
#include "fastloop/data/transforms/transform.h"

#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace fastloop {

/// The float step of `transform`, its arguments read once; TransformTypeError naming it and listing
/// float_step_names() when fastloop does not run it on float images.
FloatStep float_step_make(const TransformPtr& transform);

/// The torchvision classes float_step_make() runs on float images.
const std::vector<std::string>& float_step_names();

/// The image of a uint8 HWC `image` as a float [C, H, W] tensor of `dtype`, each value through `table`
/// (Pipeline::value_table's c * 256 + v: the conversion and what follows it up to the first float step).
at::Tensor float_image_from_u8(const ImageU8& image, const std::vector<double>& table, at::ScalarType dtype);

} // namespace fastloop
