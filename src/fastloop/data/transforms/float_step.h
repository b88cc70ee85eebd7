// What a step on a float image is (float_ops.h makes them; float_warps.h the warps'): its signature, the
// interface of transforms with a float kernel of their own, and the float image's dtype and its way into a batch.
#pragma once

#include "fastloop/data/transforms/output_stage.h"
#include "fastloop/data/transforms/registry.h"
#include "fastloop/data/transforms/spec.h"
#include "fastloop/data/transforms/transform.h"

#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <vector>

namespace fastloop {

/// One transform on a float image [C, H, W] (contiguous, the pipeline's float dtype) with the sample's draws of
/// that transform; it may replace the tensor (a resize, a crop).
using FloatStep = std::function<void(at::Tensor& image, Draws& draws)>;

/// The values a transform drew under `name` (Transform::draw's result), nullptr where it drew none by that name.
inline const std::vector<double>* float_draw_values(const TransformDraw& drawn, const std::string& name) {
  for (const auto& [key, values] : drawn)
    if (key == name) return &values;
  return nullptr;
}

/// Value `i` of the draw `name`; 0 where there is none (a coin that said no, a factor not drawn).
inline double float_draw(const TransformDraw& drawn, const std::string& name, size_t i = 0) {
  const std::vector<double>* values = float_draw_values(drawn, name);
  return values && values->size() > i ? (*values)[i] : 0.0;
}

/// The transform's arguments as it spells them (its repr, bound to its registered signature).
inline TransformArgs float_transform_args(const Transform& transform) {
  const TransformSpec spec = spec_parse(transform.repr()).at(0);
  return TransformArgs(spec, transform_registry().signature(spec.name));
}

/// A transform with a float kernel of its own (GaussianNoise): what its float step runs.
class FloatKernelTransform : public Transform {
 public:
  virtual void apply_float(at::Tensor& image, Draws& draws) const = 0;
  /// Why it does not run on uint8 images (the pipeline's TypeError where it stands before the conversion to
  /// float); empty where it does (GaussianNoise).
  virtual std::string uint8_refusal() const { return {}; }
};

/// torch's dtype of a stage dtype (float32, float16, bfloat16, float64; uint8).
inline at::ScalarType stage_scalar_type(StageDtype dtype) {
  switch (dtype) {
    case StageDtype::kUInt8: return at::kByte;
    case StageDtype::kFloat16: return at::kHalf;
    case StageDtype::kBFloat16: return at::kBFloat16;
    case StageDtype::kFloat64: return at::kDouble;
    case StageDtype::kFloat32: break;
  }
  return at::kFloat;
}

/// A float image [C, H, W] into `out`, value (c, y, x) at c * channel_stride + y * row_stride + x * pixel_stride,
/// as float32 cast to T (the value table's path casts so too). Plain loops: no ATen op wakes an OpenMP team
/// from a worker thread.
template <typename T>
void float_image_write(const at::Tensor& image, T* out, int64_t channel_stride, int64_t row_stride,
                       int64_t pixel_stride) {
  const at::Tensor f = image.scalar_type() == at::kFloat ? image.contiguous() : image.to(at::kFloat).contiguous();
  const float* in = f.data_ptr<float>();
  const int64_t C = f.size(0), H = f.size(1), W = f.size(2);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x)
        out[c * channel_stride + y * row_stride + x * pixel_stride] = static_cast<T>(in[(c * H + y) * W + x]);
}

} // namespace fastloop
