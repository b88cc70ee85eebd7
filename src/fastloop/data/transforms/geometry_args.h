// torchvision's argument rules shared by the geometry transforms (_setup_angle, _setup_size,
// _check_sequence_input, _check_padding_arg, fill and interpolation), with its messages, and the pieces
// of their reprs; plus the second half of transforms_register_geometry (warp_transforms.cpp).
#pragma once

#include "fastloop/data/transforms/functional/crop_pad.h"
#include "fastloop/data/transforms/transform.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace fastloop {

/// The canonical spelling of a transform with every argument: "Name(a=..., b=...)" with the bound values
/// in `names`' order (spec.h's value_repr; interpolation as InterpolationMode.X), which spec_parse reads back.
std::string geo_repr(const TransformArgs& args, const std::vector<std::string>& names);

/// TransformArgs::get_interpolation, and for the warps (`warp`) only nearest and bilinear, as torchvision's
/// tensor warps ("Interpolation mode 'bicubic' is unsupported with Tensor input", InputError).
Interpolation geo_interpolation(const TransformArgs& args, const std::string& name, bool warp);

/// _setup_angle: a number x >= 0 -> [-x, x], or a sequence of one of `sizes` lengths.
std::vector<double> geo_angle(const TransformArgs& args, const std::string& name, std::vector<size_t> sizes);

/// _check_sequence_input + the numbers: a sequence of exactly `length` numbers (None: nullopt).
std::optional<std::vector<double>> geo_sequence(const TransformArgs& args, const std::string& name, size_t length);

/// _setup_size: an int -> (n, n), a sequence of 1 -> (s, s), of 2 -> (h, w); else ValueError(`message`).
std::array<int64_t, 2> geo_size(const TransformArgs& args, const std::string& name, const std::string& message);

/// _check_padding_arg + _parse_pad_padding: an int or 1, 2 or 4 ints, as (left, top, right, bottom).
Padding geo_padding(const TransformArgs& args, const std::string& name);

/// The fill of tv_tensor `type` ("Image", "Mask"): None -> nullopt; a number -> {v}; a sequence of numbers -> them;
/// a fill per type, torchvision's dict {tv_tensors.Mask: 255, "others": 0} given as pairs (("Mask", 255),
/// ("others", 0)) (compile_transform writes it so) -> the type's own entry, else "others"'s, else None, as
/// torchvision's _get_fill. Anything else throws TransformTypeError with torchvision's message.
std::optional<std::vector<double>> geo_fill(const TransformArgs& args, const std::string& name,
                                            const std::string& type = "Image");

/// _RandomApplyTransform's p in [0, 1].
double geo_probability(const TransformArgs& args, const std::string& name);

/// RandomRotation, RandomAffine, RandomPerspective, GaussianBlur (warp_transforms.cpp).
void transforms_register_warps(TransformRegistry& registry);

}  // namespace fastloop
